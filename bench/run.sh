#!/usr/bin/env bash
# Builds the benchmark programs, then runs the side-by-side comparison.
# Arguments go to the driver (bench/src/bin/compare.rs), e.g.
#   ./bench/run.sh              # full run: 11 rounds, writes bench/results/full.json
#   ./bench/run.sh --quick      # 3 rounds, fewer samples: bench/results/quick.json
#   ./bench/run.sh --only region --rounds 21 --name region21
#   ./bench/run.sh --quick --threads 1,2,4,8,16 --name sweep   # thread sweep: + sweep-{region,fib,loops}-threads.{svg,png}
set -euo pipefail
cd "$(dirname "$0")/.."
make -s -C bench c-programs
cargo build --release -q -p herd-bench
exec "${CARGO_TARGET_DIR:-target}/release/compare" "$@"
