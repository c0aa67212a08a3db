#!/usr/bin/env bash
# Builds the OpenMP programs (bench/c/omp_*.c, with -fopenmp and as serial
# builds) and the driver, then runs the side-by-side comparison of libgomp,
# LLVM libomp, herd's libgomp.so.1 and the serial builds
# (bench/src/bin/omp-compare.rs). Arguments go to the driver, e.g.
#   ./bench/omp.sh                    # full: 7 rounds → bench/results/omp-full.{json,md,svg}
#   ./bench/omp.sh --quick            # 3 rounds, fewer samples → bench/results/omp-quick.*
#   ./bench/omp.sh --only epcc --rounds 11 --name epcc11
#   ./bench/omp.sh --runtimes libgomp,herd,serial --herd-preload target/release/libherd_omp.so
#   ./bench/omp.sh --quick --threads 1,2,4,8,16 --name sweep   # thread sweep: + omp-sweep-<program>-threads.{svg,png}
#   ./bench/omp.sh --only epcc --condition warm,idle --idle-ms 50 --epcc-delay-us 0.1   # EPCC warm and after idle
# herd is measured when <target>/release/gomp/libgomp.so.1 exists (or with
# --herd-gomp-dir DIR / --herd-preload LIB); otherwise it is skipped with a
# message. When the workspace has crates/herd-omp it is built first.
set -euo pipefail
cd "$(dirname "$0")/.."
make -s -C bench c-programs
cargo build --release -q -p herd-bench --bin omp-compare
if [ -f crates/herd-omp/Cargo.toml ]; then
    cargo build --release -q -p herd-omp ||
        echo "omp.sh: warning: crates/herd-omp did not build; an older herd library, if any, will be measured" >&2
fi
exec "${CARGO_TARGET_DIR:-target}/release/omp-compare" "$@"
