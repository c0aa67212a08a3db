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
mkdir -p "$out/libomp"
gcc -O2 -fopenmp bench/omp_chunks.c -o "$out/omp_chunks"
libomp=$(ls /usr/lib/llvm-*/lib/libomp.so.5 2>/dev/null | head -1 || true)
rts="libgomp herd"
[ -n "$libomp" ] && ln -sfn "$libomp" "$out/libomp/libgomp.so.1" && rts="libgomp libomp herd"
[ -n "${HERD_OLD:-}" ] && rts="$rts herd-old"
declare -A all
for r in $(seq "$ROUNDS"); do
  for rt in $rts; do
    case $rt in libgomp) L= ;; libomp) L=$out/libomp ;; herd) L=$PWD/target/release/gomp ;; herd-old) L=$HERD_OLD ;; esac
    while read -r case ns; do
      all[$rt/$case]+="$ns "
      echo "round $r $rt $case $ns ns"
    done < <(OMP_NUM_THREADS=$THREADS LD_LIBRARY_PATH=$L "$out/omp_chunks")
  done
done
for key in $(printf '%s\n' "${!all[@]}" | sort); do
  med=$(printf '%s\n' ${all[$key]} | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}')
  echo "median $key $med ns"
done
