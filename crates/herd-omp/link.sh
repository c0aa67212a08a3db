#!/usr/bin/env bash
# Builds herd's OpenMP runtime as a shared library with libgomp's symbol
# versions: target/release/libherd_omp.so, and the same library as
# target/release/gomp/libgomp.so.1 (soname libgomp.so.1) for replacing
# libgomp through LD_LIBRARY_PATH. rustc's cdylib link applies its own
# anonymous version script, which cannot be combined with libgomp's named
# versions, so the static library is linked here with gcc.
set -euo pipefail
cd "$(dirname "$0")/../.."
CARGO=${CARGO:-cargo}
OUT=${CARGO_TARGET_DIR:-target}/release
# The static library is built with the `omp` profile (release + fat LTO, one
# codegen unit; see Cargo.toml); the shared libraries go to $OUT.
LIB=${CARGO_TARGET_DIR:-target}/omp/libherd_omp.a
mkdir -p "$OUT"
# Compiling the static library also prints the native libraries it needs.
libs=$($CARGO rustc -q -p herd-omp --profile omp --lib --crate-type staticlib -- --print native-static-libs 2>&1 |
  sed -n 's/.*native-static-libs: //p' | tail -1)
if [ -z "$libs" ]; then
  # Already up to date: cargo printed nothing; use the known set.
  libs="-lhwloc -lm -ludev -lpthread -lgcc_s -lutil -lrt -ldl -lc"
fi
map=crates/herd-omp/libgomp.map
link() { # $1 output, $2 soname
  gcc -shared -o "$1" -Wl,-soname,"$2" -Wl,--version-script="$map" -Wl,--gc-sections \
    -Wl,--whole-archive "$LIB" -Wl,--no-whole-archive $libs
}
link "$OUT/libherd_omp.so.tmp" libherd_omp.so && mv "$OUT/libherd_omp.so.tmp" "$OUT/libherd_omp.so"
mkdir -p "$OUT/gomp"
link "$OUT/gomp/libgomp.so.1.tmp" libgomp.so.1 && mv "$OUT/gomp/libgomp.so.1.tmp" "$OUT/gomp/libgomp.so.1"
echo "built $OUT/libherd_omp.so and $OUT/gomp/libgomp.so.1"
