#!/usr/bin/env bash
# Session 29's distributed Cholesky measurements: a baseline herd binary (BASE, built from
# the commit before the change) and this tree's, alternated round by round, each run of
# `herd mpi potrf` alternating herd and ScaLAPACK inside; then a tile-size sweep of both.
#   BASE=/tmp/base/herd OUT=bench/results/i16-s29-potrf bash bench/mpi_potrf_ab.sh
# Build first: cargo build --release -p herd-cli -p herd-mpi --examples
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-bench/results/i16-s29-potrf}
N=${N:-8000}
ROUNDS=${ROUNDS:-2}
NBS=${NBS:-128 192 256 384 512}
. bench/mpi_env.sh
NEW=target/release/herd
header() { lscpu | grep "Model name"; echo "cores: $(nproc); load: $(cut -d' ' -f1-3 /proc/loadavg); $(date -u)"; }
run() { # label binary ranks threads nb
  echo "== $1: $2 mpi potrf -n $N --nb $5 --reps 3, $3 ranks x $4 threads; load $(cut -d' ' -f1-3 /proc/loadavg)"
  HERD_NUM_THREADS=$4 $MPIRUN -np "$3" "$2" mpi potrf -n "$N" --nb "$5" --reps 3 2>/dev/null
}
if [ -n "${BASE:-}" ]; then
  { header
    for r in $(seq "$ROUNDS"); do
      run base "$BASE" 2 1 256; run new "$NEW" 2 1 256
      run base "$BASE" 1 2 256; run new "$NEW" 1 2 256
    done; } | tee "$OUT-ab.txt"
fi
{ header; for nb in $NBS; do run sweep "$NEW" 2 1 "$nb"; done; } | tee "$OUT-nb.txt"
