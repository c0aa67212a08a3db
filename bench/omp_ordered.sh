#!/usr/bin/env bash
# Runs bench/omp_ordered.c (an `ordered` loop, schedule(dynamic, 1)) under
# libgomp, LLVM libomp (as libgomp.so.1), herd (target/release/gomp) and
# herd-old (if HERD_OLD names an older build's gomp directory), alternately
# ROUNDS times, at THREADS threads with OMP_WAIT_POLICY=$WAIT (unset when
# empty); prints each run's median microseconds per iteration and the median
# over rounds. Needs target/release/gomp/libgomp.so.1 (`make omp`).
set -euo pipefail
cd "$(dirname "$0")/.."
THREADS=${THREADS:-2} ROUNDS=${ROUNDS:-5} WAIT=${WAIT:-} ITERS=${ITERS:-5000} WORK=${WORK:-200}
out=${TMPDIR:-/tmp}/herd-omp-ordered
. bench/omp_runtimes.sh
omp_runtimes "$out"
gcc -O2 -fopenmp bench/omp_ordered.c -o "$out/omp_ordered"
run() {
  env ${WAIT:+OMP_WAIT_POLICY=$WAIT} OMP_NUM_THREADS=$THREADS "$out/omp_ordered" "$ITERS" "$WORK" 5 |
    sed -n 's/.*median \([0-9.]*\) us\/iter/turn \1/p'
}
omp_rounds "$ROUNDS" us run
