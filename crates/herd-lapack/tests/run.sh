#!/usr/bin/env bash
# libherd_lapack.so used as C, Fortran and Python programs use LAPACK: a C
# program linked against it with its own xerbla_, an unmodified Fortran program
# built against the system LAPACK and run with herd preloaded, and NumPy/SciPy
# (Debian's python3-numpy, python3-scipy) with and without herd, compared.
# Usage: run.sh [path/to/libherd_lapack.so]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
lib=$(realpath "${1:-$here/../../../target/release/libherd_lapack.so}")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A stray libgomp/herd preload or HERD_* setting of the caller's shell would change what is tested.
unset LD_PRELOAD
libdir=$(dirname "$lib")

gcc -O2 -Wall -o "$tmp/xerbla" "$here/c/xerbla.c" -L"$libdir" -lherd_lapack -Wl,-rpath,"$libdir"
timeout 120 "$tmp/xerbla"

gfortran -O2 -o "$tmp/solve" "$here/fortran/solve.f90" "$here/fortran/calls.c" -llapack -lblas -ldl
LD_PRELOAD="$lib" timeout 120 "$tmp/solve"

py=/usr/bin/python3 # Debian's, with python3-numpy and python3-scipy
timeout 600 "$py" "$here/numpy_scipy.py" save "$tmp/ref.npz"
LD_PRELOAD="$lib" timeout 600 "$py" "$here/numpy_scipy.py" check "$tmp/ref.npz"
echo "herd-lapack C ABI: C, Fortran and NumPy/SciPy programs passed"
