#!/usr/bin/env bash
# Runs bench/omp_doacross.c under libgomp, LLVM libomp (as libgomp.so.1)
# and herd (target/release/gomp), alternately ROUNDS times at THREADS
# threads; prints each run's median and the median over rounds.
# Needs target/release/gomp/libgomp.so.1 (bash crates/herd-omp/link.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
THREADS=${THREADS:-2} ROUNDS=${ROUNDS:-7}
out=${TMPDIR:-/tmp}/herd-omp-doacross
. bench/omp_runtimes.sh
omp_runtimes "$out"
gcc -O2 -fopenmp bench/omp_doacross.c -o "$out/omp_doacross"
run() { OMP_NUM_THREADS=$THREADS "$out/omp_doacross" | sed -n 's/.*median \([0-9.]*\) ms/wavefront \1/p'; }
omp_rounds "$ROUNDS" ms run
