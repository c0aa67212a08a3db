#!/usr/bin/env bash
# Stages what the thread sweeps need on a machine without a Rust toolchain or
# libomp (the 16-core device of BENCHMARKS.md): stripped driver binaries, the
# gcc-built C programs, herd's libgomp.so.1, and the peer runtimes of this
# machine (Debian 12's libgomp 12 and LLVM 14's libomp), into DIR (default
# .dev, which must be ignored by git). Run from the repository root after
# building: make -C bench c-programs; cargo build --release -p herd-bench
# -p herd-cli -p herd-omp; bash crates/herd-omp/link.sh;
# cargo build --release -p herd --example coarse_join;
# cargo build --release -p herd-la --example gemm_bench.
# Then on the other machine: bash bench/device/sweep.sh DIR OUTDIR.
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=${1:-.dev}
t=${CARGO_TARGET_DIR:-target}/release
rm -rf "$dir"
mkdir -p "$dir/bin/gomp" "$dir/c" "$dir/lib" "$dir/omp"
for b in compare omp-compare tasks bench-region bench-fib bench-loops herd; do
    strip -o "$dir/bin/$b" "$t/$b"
done
strip -o "$dir/bin/coarse_join" "$t/examples/coarse_join"
strip -o "$dir/bin/gemm_bench" "$t/examples/gemm_bench"
strip -o "$dir/bin/gomp/libgomp.so.1" "$t/gomp/libgomp.so.1"
strip -o "$dir/bin/libherd_omp.so" "$t/libherd_omp.so"
find bench/build -maxdepth 1 -type f -perm -u+x -exec cp {} "$dir/c/" \;
# The peers, as this machine has them (the device has neither).
cp -L /usr/lib/x86_64-linux-gnu/libgomp.so.1 "$dir/lib/"
cp -L "$(ls /usr/lib/llvm-*/lib/libomp.so.5 | head -1)" "$dir/lib/libomp.so.5"
# Every shared library the staged binaries and the peers load, except the C
# runtime itself (the device's glibc is newer): hwloc, udev, Open MPI (herd
# links herd-mpi; nothing calls MPI_Init outside `herd mpi`), FFTW, ... and
# the pthread OpenBLAS that `herd la` loads as its peer, with its Fortran
# runtime.
ob=/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0
cp -L "$ob" "$dir/lib/"
for f in "$dir"/bin/* "$dir"/bin/gomp/* "$dir"/c/* "$ob"; do
    [ -f "$f" ] && { ldd "$f" 2>/dev/null || true; }
done | awk '$3 ~ /^\// {print $3}' | sort -u | grep -vE '/(libc|libm|libpthread|libdl|librt|ld-linux-x86-64|libgcc_s|libstdc\+\+)\.so' |
    while read -r lib; do cp -Ln "$lib" "$dir/lib/"; done
cp bench/device/la_anchor.py "$dir/"
# The diagnosis preload (crash backtraces, a hang's thread stacks).
gcc -O1 -g -shared -fPIC -o "$dir/lib/libsegv.so" bench/device/segv.c -lpthread
# The issue-14 construct benchmarks (bench/omp_*.c), built here with gcc 12.
for src in bench/omp_*.c; do
    gcc -O2 -fopenmp -o "$dir/omp/$(basename "$src" .c)" "$src" -lm
done
du -sh "$dir"
