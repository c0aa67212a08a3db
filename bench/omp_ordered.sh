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
declare -A all
for r in $(seq "$ROUNDS"); do
  for rt in $rts; do
    us=$(env ${WAIT:+OMP_WAIT_POLICY=$WAIT} OMP_NUM_THREADS=$THREADS LD_LIBRARY_PATH=$(omp_runtime_dir "$rt") \
      "$out/omp_ordered" "$ITERS" "$WORK" 5 | sed -n 's/.*median \([0-9.]*\) us\/iter/\1/p')
    [ -n "$us" ] || { echo "$rt: no result" >&2; exit 1; }
    all[$rt]+="$us "
    echo "round $r $rt $us us/iter"
  done
done
for rt in $rts; do
  echo "median $rt $(printf '%s\n' ${all[$rt]} | median) us/iter"
done
