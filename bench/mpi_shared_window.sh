#!/usr/bin/env bash
# The strided block exchange of `herd mpi copy` with the shared-window path (issue 16,
# session 30): herd pack + isend/irecv + unpack, herd pipelined (messages), herd shared
# window (packed into an MPI-3 shared-memory window, unpacked by the peer from it) and
# MPI_Sendrecv_replace with the vector type, alternated inside each run, 2 ranks × 1 thread.
# Build first:  cargo build --release -p herd-cli
#   OUT=bench/results/i16-s30 bash bench/mpi_shared_window.sh
# Writes OUT-window-sweep.txt (window chunk sizes and slots at 16 MiB, 2 rounds) and
# OUT-sizes.{txt,jsonl} (1 MiB, 16 MiB and 256 MiB each way, 5 rounds alternating the sizes;
# each run's medians of --reps samples). The load average is printed with every run: the
# machine is shared.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-bench/results/i16-shared-window}
. bench/mpi_env.sh
mkdir -p "$(dirname "$OUT")"
summary() { # $1: label; reads herd mpi copy's JSON line
  python3 -c "
import json,sys
v=json.loads([l for l in sys.stdin if l.startswith('{')][0])['exchange']
m=lambda k: v[k]['median']*1e3
print('$1  packed %8.3f  pipelined %8.3f  shared %8.3f  mpi %8.3f ms  (%d chunks, %s)' % (m('herd_pack_isend'), m('herd_pipelined'), m('herd_shared_window'), m('mpi_vector'), v['herd_shared_window']['chunks'], v['herd_shared_window']['route']))"
}

if [ "${SWEEP:-1}" = 1 ]; then
{ lscpu | grep "Model name"; echo "cores: $(nproc); $(date -u)"
  for round in 1 2; do
    for c in 64K 256K 1M 4M 16M; do
      for s in 2 4; do
        l=$(load)
        HERD_NUM_THREADS=1 $MPIRUN -np 2 $HERD mpi copy --size 1M --pack-size 256K --reps 11 \
          --window-chunk $c --window-slots $s --json 2>/dev/null \
          | summary "round $round window chunk $c slots $s (load $l)"
      done
    done
  done; } | tee "$OUT-window-sweep.txt"
fi

{ lscpu | grep "Model name"; echo "cores: $(nproc); $(date -u)"
  : > "$OUT-sizes.jsonl"
  for round in 1 2 3 4 5; do
    for shape in "512 512 11" "2048 2048 11" "8192 8192 7"; do
      set -- $shape
      l=$(load)
      line=$(HERD_NUM_THREADS=1 $MPIRUN -np 2 $HERD mpi copy --size 1M --pack-size 256K --rows $1 --cols $2 \
        --reps $3 ${WINDOW_ARGS:-} --json 2>/dev/null | grep '^{')
      echo "$line" | python3 -c "
import json,sys
r=json.loads(sys.stdin.read())
print(json.dumps({'round': $round, 'load': '$l', 'ranks': r['ranks'], 'threads_per_rank': r['threads_per_rank'], 'exchange': r['exchange'], 'pack_rank0': r['per_rank'][0]['pack']}))" >> "$OUT-sizes.jsonl"
      echo "$line" | summary "round $round  ${1}x${2} (load $l)"
    done
  done; } | tee "$OUT-sizes.txt"

# The table of BENCHMARKS.md: per size, the median of the per-run medians (range), and the
# median over runs of each run's ratio to MPI_Sendrecv_replace (the methods alternate inside a run).
python3 - "$OUT-sizes.jsonl" <<'PY' | tee "$OUT-table.txt"
import json, statistics as st, sys
from collections import defaultdict
runs = defaultdict(list)
for line in open(sys.argv[1]):
    r = json.loads(line)
    runs[r['exchange']['bytes_each_way']].append(r['exchange'])
ms = ['herd_pack_isend', 'herd_pipelined', 'herd_shared_window', 'mpi_vector']
print('| each way | herd pack + isend/irecv + unpack | herd pipelined (1 MiB chunks) | **herd shared window** (1 MiB × 4 slots) | `MPI_Sendrecv_replace`, vector type | MPI ÷ shared | pipelined ÷ shared |')
print('|---' * (len(ms) + 3) + '|')
for b, es in sorted(runs.items()):
    cells = []
    for m in ms:
        x = [e[m]['median'] * 1e3 for e in es]
        cells.append('%.3f ms (%.3f–%.3f)' % (st.median(x), min(x), max(x)))
    vs = lambda o: st.median([e[o]['median'] / e['herd_shared_window']['median'] for e in es])
    print('| %g MiB | %s | %.2f× | %.2f× |' % (b / 2**20, ' | '.join(cells), vs('mpi_vector'), vs('herd_pipelined')))
PY
