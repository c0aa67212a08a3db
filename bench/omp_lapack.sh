#!/usr/bin/env bash
# One set of workers: crates/herd-lapack/tests/c/omp_workers.c (an OpenMP
# program calling dpotrf_ from its serial code, from every thread of a region,
# from a `single` and from 8 tasks) under three setups, alternately ROUNDS
# times at THREADS threads, order N:
#   system     libgomp + the system LAPACK (OpenBLAS, its own thread pool)
#   two-pools  libgomp + libherd_lapack.so preloaded (herd's LAPACK on a pool of its own)
#   herd       herd's OpenMP runtime, which carries herd's LAPACK (one set of workers)
# Prints each run's phase times and CPU used outside the team, then the medians.
# Needs `make omp` and `cargo build --release -p herd-lapack`.
set -euo pipefail
cd "$(dirname "$0")/.."
THREADS=${THREADS:-2} ROUNDS=${ROUNDS:-5} N=${N:-2000}
out=${TMPDIR:-/tmp}/herd-omp-lapack
mkdir -p "$out"
gcc -O2 -fopenmp -o "$out/omp_workers" crates/herd-lapack/tests/c/omp_workers.c -llapack -ldl -lm
gomp=$PWD/target/release/gomp/libgomp.so.1
lapack=$PWD/target/release/libherd_lapack.so
declare -A all
for r in $(seq "$ROUNDS"); do
  for setup in system two-pools herd; do
    case $setup in
      system) pre= ; mode=system ;;
      two-pools) pre=$lapack ; mode=system ;;
      herd) pre=$gomp ; mode=herd ;;
    esac
    res=$(OMP_NUM_THREADS=$THREADS LD_PRELOAD=$pre "$out/omp_workers" $mode "$N")
    echo "round $r $setup:"; echo "$res" | sed 's/^/  /'
    for phase in "serial call" "call from every thread" "call from a single" "8 tasks"; do
      t=$(echo "$res" | grep "^$phase" | sed -n 's/.*: \([0-9.]*\) s.*/\1/p')
      all["$setup|$phase"]+="$t "
    done
  done
done
median() { sort -g | awk '{a[NR]=$1} END{print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
echo "medians over $ROUNDS rounds, $THREADS threads, n = $N (seconds):"
for phase in "serial call" "call from every thread" "call from a single" "8 tasks"; do
  line="  $phase:"
  for setup in system two-pools herd; do
    line+=" $setup $(printf '%s\n' ${all["$setup|$phase"]} | median)"
  done
  echo "$line"
done
