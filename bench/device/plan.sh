#!/usr/bin/env bash
# One device lease, prepared here and run there in one call (the device gives
# a session a few minutes): unpacks the staged binaries (bench/device/stage.sh,
# packed as .devpkg/dev.tar.xz), then runs the sweeps in priority order under
# one deadline, each step packed into OUT as soon as it ends.
#   bash bench/device/plan.sh OUT BUDGET_SECONDS
# Steps (bench/device/sweep.sh): the machine; the coarse-leaf join proxy;
# EPCC at 4, 8 and 16 threads (herd, libgomp, libomp); herd la gemm, getrf
# and potrf (tiles of 320 and 256) at all cores against faer, OpenBLAS and
# PyTorch's MKL; herd's GEMM per core at 1..all participants beside faer's,
# with a trace; the region/fib/loops sweep against Rayon, libgomp and
# libomp; the OpenMP task programs; the issue-14 constructs; then, if time
# is left, geqrf, sygv and NumPy's OpenBLAS.
set -uo pipefail
OUT=$1
export DEADLINE=$(( $(date +%s) + ${2:-480} ))
cd "$(dirname "$0")/../.."
[ -d .dev ] || tar xJf .devpkg/dev.tar.xz
n=$(nproc)
S=bench/device/sweep.sh
# The device returns at most 8 files: every step's raw output goes into one
# archive, rewritten after each step.
P=/tmp/plan-steps
mkdir -p "$P"
run() {
    bash $S .dev "$P" "$@"
    tar czf "$OUT/results.tgz.part" -C /tmp/herd-sweep . && mv "$OUT/results.tgz.part" "$OUT/results.tgz"
}
run probe "$n"
run coarse "$n"
run epcc "4,8,$n"
LA_STEPS=${LA_FIRST:-gemm,getrf,potrf,potrf256,mkl} run la "$n"
run gemm-scale "$n"
COMPARE_ROUNDS=${COMPARE_ROUNDS:-3} run compare "1,4,8,$n"
run omp-tasks "$n"
CONSTRUCT_ROUNDS=${CONSTRUCT_ROUNDS:-1} run constructs "$n"
LA_STEPS=${LA_LAST:-geqrf,sygv,numpy} run la "$n"
echo "plan.sh: done with $(( DEADLINE - $(date +%s) )) s to spare"
