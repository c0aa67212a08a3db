#!/usr/bin/env bash
# EPCC overheads of two herd builds side by side with libgomp and libomp, in
# alternating rounds (libgomp, libomp, herd-old, herd-new per round), medians.
#
#   bench/epcc-ab.sh OLD_GOMP_DIR NEW_GOMP_DIR THREADS ROUNDS CONSTRUCTS OUT.jsonl > OUT.md
#
# OLD_GOMP_DIR / NEW_GOMP_DIR hold a herd libgomp.so.1 each (e.g. a worktree of
# an older commit after `make omp`, and target/release/gomp). Needs
# `make -C bench c-programs` (omp_epcc, libomp-as-libgomp).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 6 ] || { sed -n '2,9p' "$0"; exit 2; }
old=$1 new=$2 T=$3 R=$4 C=$5 out=$6
# libomp under the name gcc's programs load (as crates/herd-omp/tests/c/run.sh
# does); without it the "libomp" column would silently be libgomp.
shim=bench/build/libomp-as-libgomp
if [ ! -e "$shim/libgomp.so.1" ]; then
    lib=$(ls /usr/lib/llvm-*/lib/libomp.so.5 /usr/lib/*-linux-gnu/libomp.so.5 2>/dev/null | head -1)
    [ -n "$lib" ] || { echo "epcc-ab.sh: LLVM libomp not found (make deps installs libomp-dev)" >&2; exit 1; }
    mkdir -p "$shim" && ln -sfn "$(readlink -f "$lib")" "$shim/libgomp.so.1"
fi
: >"$out"
for r in $(seq 1 "$R"); do
    for rt in libgomp libomp herd-old herd-new; do
        case $rt in
        libgomp) env=() ;;
        libomp) env=(LD_LIBRARY_PATH=bench/build/libomp-as-libgomp) ;;
        herd-old) env=(LD_LIBRARY_PATH="$old") ;;
        herd-new) env=(LD_LIBRARY_PATH="$new") ;;
        esac
        env "${env[@]}" OMP_NUM_THREADS="$T" timeout 300 bench/build/omp_epcc --only "$C" 2>/dev/null |
            sed "s/^{/{\"rt\":\"$rt\",\"round\":$r,/" >>"$out"
    done
done
python3 - "$out" <<'PY'
import json, sys, statistics as st
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith('{')]
cases = []
for r in rows:
    if r['case'] not in cases:
        cases.append(r['case'])
rts = ['libgomp', 'libomp', 'herd-old', 'herd-new']
print('| construct (µs) | ' + ' | '.join(rts) + ' | new ÷ old | new ÷ libgomp | new ÷ libomp |')
print('|---|' + '---|' * (len(rts) + 3))
for c in cases:
    m = {rt: st.median([r['value'] for r in rows if r['case'] == c and r['rt'] == rt] or [float('nan')]) for rt in rts}
    ok = all(r['ok'] for r in rows if r['case'] == c)
    f = lambda a, b: f"{a / b:.2f}" if b > 0.005 else "–"
    print(f"| {c} | " + ' | '.join(f"{m[rt]:.3f}" for rt in rts)
          + f" | {f(m['herd-new'], m['herd-old'])} | {f(m['herd-new'], m['libgomp'])} | {f(m['herd-new'], m['libomp'])} |"
          + ("" if ok else " (check failed)"))
PY
