#!/usr/bin/env bash
# Runs bench/omp_doacross.c under libgomp, LLVM libomp (as libgomp.so.1)
# and herd (target/release/gomp), alternately ROUNDS times at THREADS
# threads; prints each run's median and the median over rounds.
# Needs target/release/gomp/libgomp.so.1 (bash crates/herd-omp/link.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
THREADS=${THREADS:-2} ROUNDS=${ROUNDS:-7}
out=${TMPDIR:-/tmp}/herd-omp-doacross
mkdir -p "$out/libomp"
gcc -O2 -fopenmp bench/omp_doacross.c -o "$out/omp_doacross"
libomp=$(ls /usr/lib/llvm-*/lib/libomp.so.5 2>/dev/null | head -1 || true)
rts="libgomp herd"
[ -n "$libomp" ] && ln -sfn "$libomp" "$out/libomp/libgomp.so.1" && rts="libgomp libomp herd"
declare -A all
for r in $(seq "$ROUNDS"); do
  for rt in $rts; do
    case $rt in libgomp) L= ;; libomp) L=$out/libomp ;; herd) L=$PWD/target/release/gomp ;; esac
    ms=$(OMP_NUM_THREADS=$THREADS LD_LIBRARY_PATH=$L "$out/omp_doacross" | sed -n 's/.*median \([0-9.]*\) ms/\1/p')
    [ -n "$ms" ] || { echo "$rt: no result" >&2; exit 1; }
    all[$rt]+="$ms "
    echo "round $r $rt $ms ms"
  done
done
for rt in $rts; do
  med=$(printf '%s\n' ${all[$rt]} | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}')
  echo "median $rt $med ms"
done
