#!/usr/bin/env bash
# Cancellation (bench/omp_cancel.c) under libgomp, LLVM libomp and herd,
# alternately ROUNDS times at THREADS threads, for each OMP_SCHEDULE in
# SCHEDULES (the cancelled loop's schedule): `latency_us` (from `cancel for`
# to the last thread past the loop's barrier) and `search_ms` (a taskgroup
# search cancelled by the finder). Prints every run and the medians.
#
# libgomp and herd run a gcc build; libomp runs a clang-14 build, in its own
# ABI (entered through the GOMP ABI, libomp does not cancel a worksharing
# loop at all). Without clang-14 (`apt-get install clang-14`) libomp is left
# out. A runtime whose run of a schedule fails or takes over 60 s (libomp 14
# aborts on `cancel for` in dynamic and guided loops, kmp_dispatch.cpp(403),
# or spins on forever) is reported and left out of that schedule's rounds.
# Needs target/release/gomp/libgomp.so.1 (make omp).
set -euo pipefail
cd "$(dirname "$0")/.."
THREADS=${THREADS:-2} ROUNDS=${ROUNDS:-5} SCHEDULES=${SCHEDULES:-"dynamic,1 static,1 guided,1"}
out=${TMPDIR:-/tmp}/herd-omp-cancel
. bench/omp_runtimes.sh
omp_runtimes "$out"
gcc -O2 -fopenmp bench/omp_cancel.c -o "$out/omp_cancel"
all_rts="libgomp herd"
if command -v clang-14 >/dev/null; then
    clang-14 -O2 -fopenmp bench/omp_cancel.c -o "$out/omp_cancel_clang"
    all_rts="libgomp libomp herd"
else
    echo "clang-14 not found: libomp left out (apt-get install clang-14)" >&2
fi
# The binary of runtime $rt (omp_rounds' loop variable); libomp's finds
# LLVM's libomp.so.5 itself, whatever LD_LIBRARY_PATH says.
run() {
    local bin=$out/omp_cancel
    [ "$rt" = libomp ] && bin=$out/omp_cancel_clang
    OMP_CANCELLATION=true OMP_NUM_THREADS=$THREADS OMP_SCHEDULE=$sched "$bin"
}
for sched in $SCHEDULES; do
    echo "== OMP_SCHEDULE=$sched, $THREADS threads"
    rts=""
    for rt in $all_rts; do
        if LD_LIBRARY_PATH=$(omp_runtime_dir "$rt") timeout 60 bash -c "$(declare -f run); rt=$rt out=$out THREADS=$THREADS sched=$sched run" >/dev/null 2>"$out/err"; then
            rts="$rts $rt"
        else
            echo "$rt fails at OMP_SCHEDULE=$sched (exit $?): $(grep -m1 -i 'error\|assert' "$out/err" || tail -1 "$out/err")"
        fi
    done
    omp_rounds "$ROUNDS" "" run
done
