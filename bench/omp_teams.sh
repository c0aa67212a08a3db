#!/usr/bin/env bash
# Host teams benchmark (bench/omp_teams.c) under libgomp, LLVM libomp (as
# libgomp.so.1 through a symlink directory, as tests/c/run.sh --libomp does)
# and herd (target/release/gomp/libgomp.so.1), the runtimes alternating,
# ROUNDS rounds; prints each round's medians and the median over rounds.
#   bench/omp_teams.sh [ROUNDS [WORK_US...]]      (default 7 rounds; 20000 and 20 µs)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-7}
shift || true
works=("${@:-20000}")
[ $# -gt 0 ] || works=(20000 20)
out=target/omp-teams-bench
mkdir -p "$out/libomp"
gcc -O2 -fopenmp bench/omp_teams.c -o "$out/omp_teams"
libomp=$(ls /usr/lib/llvm-*/lib/libomp.so.5 /usr/lib/*/libomp.so.5 2>/dev/null | head -1 || true)
[ -n "$libomp" ] && ln -sfn "$(readlink -f "$libomp")" "$out/libomp/libgomp.so.1"
[ -f target/release/gomp/libgomp.so.1 ] || { echo "build herd first: bash crates/herd-omp/link.sh" >&2; exit 2; }
for v in $(env | sed -n 's/^\(\(OMP\|GOMP\|KMP\)_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
export OMP_NUM_THREADS=2
run() { # runtime work -> median µs
    case "$1" in
    libgomp) "$out/omp_teams" "$2" ;;
    libomp) LD_LIBRARY_PATH="$out/libomp" "$out/omp_teams" "$2" ;;
    herd) LD_LIBRARY_PATH=target/release/gomp "$out/omp_teams" "$2" ;;
    esac | awk '{print $3}'
}
rts=(libgomp herd)
[ -n "$libomp" ] && rts=(libgomp libomp herd)
for w in "${works[@]}"; do
    declare -A all=()
    for ((r = 0; r < rounds; r++)); do
        line="work ${w}us round $r:"
        for rt in "${rts[@]}"; do
            m=$(run "$rt" "$w")
            all[$rt]+="$m "
            line+=" $rt $m"
        done
        echo "$line"
    done
    for rt in "${rts[@]}"; do
        med=$(echo "${all[$rt]}" | tr ' ' '\n' | sed '/^$/d' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
        echo "median work ${w}us $rt ${med} us"
    done
    unset all
done
