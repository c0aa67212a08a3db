#!/usr/bin/env bash
# libherd_lapack.so used as C, Fortran and Python programs use LAPACK: a C
# program linked against it with its own xerbla_, an unmodified Fortran program
# built against the system LAPACK and run with herd preloaded, and NumPy/SciPy
# (Debian's python3-numpy, python3-scipy) with and without herd, compared.
# With a second argument, herd's OpenMP runtime (DIR/libgomp.so.1 from `make
# omp`, which carries the same LAPACK names): an OpenMP program calling
# dpotrf_ from its serial code, from every thread of a region and from a
# `single` must run every call on the team's own threads (one set of workers),
# shown beside libgomp + the system LAPACK in the same run.
# Usage: run.sh [path/to/libherd_lapack.so] [path/to/gomp-dir]
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
if [ -n "${2:-}" ]; then
  gomp=$(realpath "$2")/libgomp.so.1
  gcc -O2 -Wall -fopenmp -o "$tmp/omp_workers" "$here/c/omp_workers.c" -llapack -ldl -lm
  for t in 2 4; do
    echo "omp_workers, OMP_NUM_THREADS=$t: libgomp + system LAPACK"
    OMP_NUM_THREADS=$t timeout 300 "$tmp/omp_workers" system 400
    echo "omp_workers, OMP_NUM_THREADS=$t: herd (OpenMP and LAPACK in $gomp)"
    OMP_NUM_THREADS=$t LD_PRELOAD="$gomp" timeout 300 "$tmp/omp_workers" herd 400
  done
fi
echo "herd-lapack C ABI: C, Fortran and NumPy/SciPy programs passed${2:+, and OpenMP programs calling it on one set of workers}"
