#!/usr/bin/env bash
# Thread sweeps on a machine where only staged binaries exist (see
# bench/device/stage.sh): herd vs Rayon vs libgomp vs libomp. Each step runs
# under `timeout` and its results are packed into OUT/<step>.tgz as soon as
# it ends, so a step cut short loses only itself.
#   bash bench/device/sweep.sh DIR OUT STEP[,STEP..] [THREADS]
# Steps: probe, compare (region/fib/loops), epcc, omp-tasks (fib, nqueens,
# msort, sparselu under the OpenMP runtimes), tasks (herd's task suite vs
# Rayon), constructs (bench/omp_*.c: task reductions, teams, cancel,
# doacross when staged), la (herd la at the largest count against faer and
# OpenBLAS, with PyTorch's MKL and NumPy's OpenBLAS as anchors when python3
# has them; LA_STEPS picks among gemm,getrf,potrf,potrf256,mkl,numpy,geqrf,sygv),
# coarse (the coarse_join example: 16 and 64 leaves of 50 ms on all cores).
# THREADS defaults to 1,2,4,8,16. BUDGET (seconds, default
# unlimited) or DEADLINE (epoch seconds) bounds the whole sweep: each step's timeout is cut to what is
# left, and steps that would get under 10 s are skipped.
set -uo pipefail
D=$(cd "$1" && pwd) OUT=$2 steps=$3 T=${4:-1,2,4,8,16}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=$D/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
R=/tmp/herd-sweep
mkdir -p "$R"
max=${T##*,}
pack() { (cd "$R" && tar czf "$OUT/$1.tgz" "$1") 2>/dev/null; }
start=$(date +%s)
# DEADLINE (epoch seconds) or BUDGET (seconds from now) bound the sweep.
[ -n "${BUDGET:-}" ] && [ -z "${DEADLINE:-}" ] && DEADLINE=$((start + BUDGET))
left() { if [ -n "${DEADLINE:-}" ]; then echo $((DEADLINE - $(date +%s))); else echo 999999; fi; }
step() { # name timeout command...
    local name=$1 secs=$2; shift 2
    local l; l=$(left)
    [ "$l" -lt "$secs" ] && secs=$l
    if [ "$secs" -lt 10 ]; then echo "=== $name skipped (budget)"; return; fi
    mkdir -p "$R/$name"
    echo "=== $name ($(date +%T))"
    timeout "$secs" "$@" >"$R/$name/log.txt" 2>&1
    echo "=== $name rc=$? ($(date +%T))"
    pack "$name"
}
for s in ${steps//,/ }; do
    case $s in
    probe)
        mkdir -p "$R/probe"
        { lscpu; echo; uname -a; nproc; echo; "$D/bin/herd" topo; echo; gcc --version 2>&1 | head -1;
          ldconfig -p | grep -E 'libgomp|libomp|hwloc' ; } >"$R/probe/log.txt" 2>&1
        grep -E 'Model name|^CPU\(s\)|NUMA node|L3' "$R/probe/log.txt"; pack probe ;;
    compare)
        step compare 300 "$D/bin/compare" --rounds "${COMPARE_ROUNDS:-5}" --threads "$T" --c-dir "$D/c" \
            --libomp "$D/lib/libomp.so.5" --out-dir "$R/compare" --name dev ;;
    epcc)
        step epcc 420 "$D/bin/omp-compare" --only epcc --quick --threads "$T" --c-dir "$D/c" \
            --libomp "$D/lib/libomp.so.5" --out-dir "$R/epcc" --name dev-epcc ;;
    omp-tasks)
        step omp-tasks 420 "$D/bin/omp-compare" --only fib,nqueens,msort,sparselu --quick --threads "$T" \
            --c-dir "$D/c" --libomp "$D/lib/libomp.so.5" --out-dir "$R/omp-tasks" --name dev-tasks ;;
    tasks)
        step tasks 420 "$D/bin/tasks" --rounds 1 --threads "$T" --out-dir "$R/tasks" --name dev-suite ;;
    constructs)
        mkdir -p "$R/constructs/libomp"; ln -sfn "$D/lib/libomp.so.5" "$R/constructs/libomp/libgomp.so.1"
        constructs() {
            for r in $(seq "${CONSTRUCT_ROUNDS:-3}"); do
                for rt in libgomp libomp herd; do
                    case $rt in libgomp) L=$D/lib ;; libomp) L=$R/constructs/libomp ;; herd) L=$D/bin/gomp ;; esac
                    for p in "$D"/omp/*; do
                        c=OMP_CANCELLATION=false; [ "$(basename "$p")" = omp_cancel ] && c=OMP_CANCELLATION=true
                        env $c OMP_NUM_THREADS=$max LD_LIBRARY_PATH=$L:$D/lib timeout 60 "$p" 2>&1 | sed "s/^/round=$r rt=$rt prog=$(basename "$p") /"
                    done
                done
            done
        }
        export -f constructs; export D R max
        step constructs 180 bash -c constructs
        cat "$R/constructs/log.txt" ;;
    la)
        # One process per contender family; herd la alternates herd, faer
        # and OpenBLAS itself. LA_* override the orders.
        la() { "$D/bin/herd" la "$@" --reps "${LA_REPS:-3}" --json; }
        anchor() { python3 "$D/la_anchor.py" --threads "$max" --reps "${LA_REPS:-3}" \
            --gemm "${LA_GEMM:-4000,8000}" --potrf "${LA_POTRF:-8000}" --getrf "${LA_GETRF:-8000}" \
            --geqrf "${LA_GEQRF:-4000}" --sygv "${LA_SYGV:-2000}" --lib "$1"; }
        export -f la anchor; export D max
        want() { case ",${LA_STEPS:-gemm,getrf,potrf,mkl,numpy,geqrf,sygv}," in *",$1,"*) return 0 ;; esac; return 1; }
        want gemm && step la-gemm 120 bash -c 'la gemm -n ${LA_GEMM:-4000,8000}'
        want getrf && step la-getrf 90 bash -c 'la getrf -n ${LA_GETRF:-8000}'
        want potrf && step la-potrf 90 bash -c 'la potrf -n ${LA_POTRF:-8000}'
        want potrf256 && step la-potrf256 90 bash -c 'la potrf -n ${LA_POTRF:-8000} --nb 256'
        want mkl && step la-mkl 150 bash -c 'anchor torch'
        want numpy && step la-numpy 150 bash -c 'anchor numpy'
        want geqrf && step la-geqrf 90 bash -c 'la geqrf -n ${LA_GEQRF:-4000}'
        want sygv && step la-sygv 90 bash -c 'la sygv -n ${LA_SYGV:-2000}'
        python3 "$D/la_anchor.py" --summary "$R"/la-*/log.txt ;;
    gemm-scale)
        # herd's GEMM per core from 1 participant to all (its 16-core
        # efficiency was half its 2-core one, undiagnosed), faer's parallel
        # matmul beside it in the same process, then one traced run at all
        # cores (Perfetto: each block's start and length per participant).
        # The 4000 x 250 shape: 16 column blocks that share no packed B.
        gscale() {
            for t in 1 2 4 8 "$max"; do
                HERD_NUM_THREADS=$t "$D/bin/gemm_bench" "${GEMM_N:-4000}" 3 0 "${GEMM_N:-4000}x250"
            done
            HERD_NUM_THREADS=$max HERD_TRACE=$R/gemm-scale/trace.json "$D/bin/gemm_bench" "${GEMM_N:-4000}" 1
        }
        export -f gscale; export D max R
        step gemm-scale 150 bash -c gscale
        cat "$R/gemm-scale/log.txt" ;;
    coarse)
        coarse() { for l in 16 64; do HERD_NUM_THREADS=$max "$D/bin/coarse_join" $l 50 5; done; }
        export -f coarse; export D max
        step coarse 60 bash -c coarse
        cat "$R/coarse/log.txt" ;;
    *) echo "sweep.sh: unknown step $s" >&2 ;;
    esac
done
