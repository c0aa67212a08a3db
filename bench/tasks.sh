#!/usr/bin/env bash
# Builds and runs the task-parallel suite (bench/src/bin/tasks.rs: BOTS-style
# kernels, sequential vs herd's schedulers vs Rayon) or MAESTRO's array walk
# (bench/src/bin/arraywalk.rs: throttling off / auto / fixed(1)).
#   ./bench/tasks.sh                         # full suite: 5 rounds → bench/results/tasks-full.{json,svg}
#   ./bench/tasks.sh --only fib,uts --rounds 3 --grain fib=20 --name fib-uts
#   ./bench/tasks.sh --threads 1,2,4,8,16 --rounds 3 --name sweep   # thread sweep: + sweep-<kernel>-threads.{svg,png}
#   ./bench/tasks.sh arraywalk               # full sweep → bench/results/arraywalk-full.{json,svg}
#   ./bench/tasks.sh small                   # smoke run of both at tiny sizes (1 round; results in $TMPDIR)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p herd-bench --bin tasks --bin arraywalk
bin="${CARGO_TARGET_DIR:-target}/release"
case "${1:-}" in
arraywalk)
    shift
    exec "$bin/arraywalk" "$@"
    ;;
small)
    shift
    out="$(mktemp -d "${TMPDIR:-/tmp}/herd-tasks-small.XXXXXX")"
    "$bin/tasks" --size small --out-dir "$out" "$@"
    "$bin/arraywalk" --size small --out-dir "$out"
    echo "tasks.sh: smoke run passed; results in $out" >&2
    ;;
*)
    exec "$bin/tasks" "$@"
    ;;
esac
