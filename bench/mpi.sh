#!/usr/bin/env bash
# Issue 16's measurements on one machine: copy and pack, the distributed 2-D FFT, the
# distributed Cholesky against ScaLAPACK and the one-process herd-flow Cholesky, and the
# scale model. Build first: cargo build --release -p herd-cli -p herd-mpi --examples
#   OUT=bench/results/i16-<tag> bash bench/mpi.sh
# Each part writes OUT-<part>.txt (and charts); ranks share the machine's cores.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-bench/results/i16-run}
N_FFT=${N_FFT:-4096}
N_POTRF=${N_POTRF:-8000}
REPS=${REPS:-5}
CORES=$(nproc)
. bench/mpi_env.sh
EX=target/release/examples
mkdir -p "$(dirname "$OUT")"
header() { { lscpu | grep "Model name"; echo "cores: $CORES; load: $(cut -d' ' -f1-3 /proc/loadavg); $(date -u)"; } ; }

{ header; echo "== herd bench copy"; $HERD bench copy --reps 11 --chart "$OUT-copy.svg" 2>/dev/null; } | tee "$OUT-copy.txt"

{ header
  for np in 2 4; do
    t=$(( CORES / np )); [ "$t" -ge 1 ] || t=1
    echo "== herd mpi fft -n $N_FFT, $np ranks x $t threads"
    HERD_NUM_THREADS=$t $MPIRUN -np $np $HERD mpi fft -n "$N_FFT" --reps "$REPS" --chart "$OUT-fft-np$np.svg" 2>/dev/null
  done; } | tee "$OUT-fft.txt"

{ header
  echo "== herd mpi potrf -n $N_POTRF, 2 ranks x $(( CORES / 2 )) threads"
  HERD_NUM_THREADS=$(( CORES / 2 )) $MPIRUN -np 2 $HERD mpi potrf -n "$N_POTRF" --reps 3 --chart "$OUT-potrf-np2.svg" 2>/dev/null
  echo "== herd mpi potrf -n $N_POTRF, 1 rank x $CORES threads"
  HERD_NUM_THREADS=$CORES $MPIRUN -np 1 $HERD mpi potrf -n "$N_POTRF" --reps 3 2>/dev/null
  echo "== herd-la potrf_flow (one process, no MPI) x $CORES threads"
  HERD_NUM_THREADS=$CORES $EX/potrf_dist flow "$N_POTRF" 256 3
  echo "== distributed on 2 ranks again (alternating with the one-process run)"
  HERD_NUM_THREADS=$(( CORES / 2 )) $MPIRUN -np 2 $EX/potrf_dist dist "$N_POTRF" 256 3
  HERD_NUM_THREADS=$CORES $EX/potrf_dist flow "$N_POTRF" 256 3; } | tee "$OUT-potrf.txt"

{ header; echo "== scale model (nb 256, 16 cores a node)"; HERD_NUM_THREADS=1 $MPIRUN -np 2 $EX/cholesky_model 256 16; } | tee "$OUT-model.txt"
