#!/usr/bin/env bash
# Runs bench/omp_chunks.c (cost per dynamic,1 chunk and per single nowait)
# under libgomp, LLVM libomp (as libgomp.so.1) and herd (target/release/gomp),
# and under an older herd build if HERD_OLD names its gomp directory,
# alternately ROUNDS times at THREADS threads; prints every run and the
# median over rounds per runtime and case (the VM's speed changes between
# rounds: only alternating medians compare).
#   THREADS=2 ROUNDS=15 HERD_OLD=/path/to/old/target/release/gomp bench/omp_chunks.sh
set -euo pipefail
cd "$(dirname "$0")/.."
THREADS=${THREADS:-2} ROUNDS=${ROUNDS:-15}
out=${TMPDIR:-/tmp}/herd-omp-chunks
. bench/omp_runtimes.sh
omp_runtimes "$out"
gcc -O2 -fopenmp bench/omp_chunks.c -o "$out/omp_chunks"
run() { OMP_NUM_THREADS=$THREADS "$out/omp_chunks"; }
omp_rounds "$ROUNDS" ns run
