#!/usr/bin/env bash
# Task reductions under libgomp, LLVM libomp and herd, in alternating rounds
# (one run of each runtime per round), at OMP_NUM_THREADS (default 2); prints
# each runtime's per-round medians and the median over rounds.
# Usage: bench/omp_taskred.sh [rounds] [N grain depth reps]
# Needs: target/release/gomp/libgomp.so.1 (crates/herd-omp/link.sh) and, for
# libomp, a libomp-as-libgomp shim directory in LIBOMP_DIR (run.sh --libomp
# builds one in target/omp-tests/libomp-as-libgomp).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
shift || true
args=("${@:-10000000 10000 16 11}")
libomp_dir=${LIBOMP_DIR:-target/omp-tests/libomp-as-libgomp}
bin=target/omp-bench/omp_taskred
mkdir -p "$(dirname "$bin")"
gcc -O2 -fopenmp bench/omp_taskred.c -o "$bin"
raw=$(mktemp)
for _ in $(seq "$rounds"); do
    for rt in libgomp libomp herd; do
        case $rt in
        libgomp) env=() ;;
        libomp) [ -e "$libomp_dir/libgomp.so.1" ] || continue; env=(LD_LIBRARY_PATH="$libomp_dir") ;;
        herd) env=(LD_LIBRARY_PATH=target/release/gomp) ;;
        esac
        # shellcheck disable=SC2068
        env ${env[@]+"${env[@]}"} OMP_NUM_THREADS="${OMP_NUM_THREADS:-2}" "$bin" ${args[@]} | sed "s/^/$rt /" >>"$raw"
    done
done
python3 - "$raw" <<'PY'
import re, statistics as st, sys
d = {}
for l in open(sys.argv[1]):
    rt, k = l.split()[:2]
    d.setdefault(k, {}).setdefault(rt, []).append(float(re.search(r'median_ms=([\d.]+)', l).group(1)))
for k, v in d.items():
    med = {rt: st.median(x) for rt, x in v.items()}
    print(f"{k}: " + ", ".join(f"{rt} {med[rt]:.3f} ms (rounds: {' '.join(f'{y:.3f}' for y in v[rt])})" for rt in v))
    for o in ('libgomp', 'libomp'):
        if o in med:
            print(f"  herd / {o} = {med['herd'] / med[o]:.2f}")
PY
rm -f "$raw"
