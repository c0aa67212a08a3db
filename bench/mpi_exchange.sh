#!/usr/bin/env bash
# The strided block exchange of `herd mpi copy` (issue 16, session 29): herd pack +
# isend/irecv + unpack, herd's pipelined exchange and MPI_Sendrecv_replace with the vector
# type, 2048 × 1024 f64 of a 2048 × 2048 matrix each way between 2 ranks. Build first:
#   cargo build --release -p herd-cli -p herd-mpi --examples
#   OUT=bench/results/i16-s29 bash bench/mpi_exchange.sh
# Writes OUT-chunk-sweep.txt (pipelined chunk sizes, rounds alternating the sizes),
# OUT-exchange.{txt,jsonl} (5 rounds alternating 2 ranks × 1 thread, 2 ranks × 2 threads and
# 2 ranks × 1 thread with HERD_RESERVE=1; per-run medians of 11 samples, the three methods
# alternated inside each run), OUT-phases.txt (examples/exchange_phases, 3 runs) and
# OUT-exchange-chart.txt/.svg (one run as bench/mpi.sh makes it). Load averages are printed
# with every run: the machine is shared.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-bench/results/i16-exchange}
. bench/mpi_env.sh
mkdir -p "$(dirname "$OUT")"
summary() { # $1: label; reads herd mpi copy's JSON line
  python3 -c "
import json,sys
v=json.loads([l for l in sys.stdin if l.startswith('{')][0])['exchange']
print('$1  packed %6.3f  pipelined %6.3f  mpi %6.3f ms  pipelined/mpi %.2fx  chunks %d' % (v['herd_pack_isend']['median']*1e3, v['herd_pipelined']['median']*1e3, v['mpi_vector']['median']*1e3, v['speedup_pipelined'], v['herd_pipelined']['chunks']))"
}

{ lscpu | grep "Model name"
  for round in 1 2 3; do
    for c in 64K 256K 512K 1M 2M 4M 16M; do
      l=$(load)
      HERD_NUM_THREADS=1 $MPIRUN -np 2 $HERD mpi copy --size 1M --pack-size 256K --reps 11 --chunk $c --json 2>/dev/null \
        | summary "round $round chunk $c (load $l)"
    done
  done; } | tee "$OUT-chunk-sweep.txt"

{ lscpu | grep "Model name"; echo "cores: $(nproc); $(date -u)"
  : > "$OUT-exchange.jsonl"
  for round in 1 2 3 4 5; do
    for cfg in "HERD_NUM_THREADS=1" "HERD_NUM_THREADS=2" "HERD_NUM_THREADS=1 HERD_RESERVE=1"; do
      l=$(load)
      line=$(env $cfg $MPIRUN -np 2 $HERD mpi copy --reps 11 --json 2>/dev/null | grep '^{')
      echo "$line" | python3 -c "
import json,sys
r=json.loads(sys.stdin.read())
print(json.dumps({'env': '$cfg', 'ranks': r['ranks'], 'threads_per_rank': r['threads_per_rank'], 'exchange': r['exchange']}))" >> "$OUT-exchange.jsonl"
      echo "$line" | summary "round $round  $cfg (load $l)"
    done
  done; } | tee "$OUT-exchange.txt"

{ lscpu | grep "Model name"
  for i in 1 2 3; do
    echo "load $(load); $(date -u)"
    HERD_NUM_THREADS=1 $MPIRUN -np 2 target/release/examples/exchange_phases 2>/dev/null
  done; } | tee "$OUT-phases.txt"

{ lscpu | grep "Model name"; echo "load: $(load); $(date -u)"
  HERD_NUM_THREADS=1 $MPIRUN -np 2 $HERD mpi copy --reps 11 --chart "$OUT-exchange.svg" 2>/dev/null | sed -n '/block exchange/,$p'; } \
  | tee "$OUT-exchange-chart.txt"
