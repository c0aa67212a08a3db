#!/usr/bin/env bash
# Checks herd's libgomp.so.1 against libgomp's symbol versions, gcc 12 to 14
# (libgomp-14.symbols, the reference):
#   1. every GOMP_*/omp_* symbol herd exports is a libgomp symbol, exported at
#      libgomp's version for it (a program linked against libgomp binds to it);
#   2. every libgomp function herd's static library defines is exported (an
#      entry point missing from libgomp.map would be silently hidden);
#   3. a program referencing gcc 13 / 14 versions (newer_gcc.c, with .symver)
#      links against herd's library, loads and gets libgomp's answers.
#
#   symbol_versions.sh [DIR]   DIR holds herd's libgomp.so.1 (default target/release/gomp)
# Exit status: 0 all passed, 1 a check failed, 2 usage error.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
dir=${1:-$root/target/release/gomp}
lib=$dir/libgomp.so.1
archive=$root/target/omp/libherd_omp.a
ref=$here/libgomp-14.symbols
[ -f "$lib" ] || { echo "symbol_versions.sh: no $lib (run make omp)" >&2; exit 2; }
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
fail=0

# NAME VERSION of what herd exports (default versions, defined symbols).
objdump -T "$lib" | awk '$4 == ".text" && $NF ~ /^(omp_|GOMP_)/ {print $NF, $(NF-1)}' | sort >"$tmp/herd"
grep -v '^#' "$ref" | sort >"$tmp/ref"
n=$(wc -l <"$tmp/herd")
[ "$n" -gt 100 ] || { echo "FAIL: only $n GOMP_/omp_ symbols exported by $lib"; exit 1; }
bad=$(join -a1 -e MISSING -o 0,1.2,2.2 "$tmp/herd" "$tmp/ref" | awk '$2 != $3')
if [ -n "$bad" ]; then
    echo "FAIL: exported at a version libgomp does not give them (NAME herd libgomp):"
    echo "$bad" | sed 's/^/  /'
    fail=1
else
    echo "ok: $n symbols exported, each at libgomp's version"
fi

# Functions the static library defines but the shared one does not export.
if [ -f "$archive" ]; then
    nm -g --defined-only "$archive" 2>/dev/null | awk '$2 == "T" && $3 ~ /^(omp_|GOMP_)/ {print $3}' | sort -u >"$tmp/defined"
    awk '{print $1}' "$tmp/ref" | sort -u >"$tmp/refnames"
    hidden=$(awk '{print $1}' "$tmp/herd" | comm -23 "$tmp/defined" - | comm -12 - "$tmp/refnames")
    if [ -n "$hidden" ]; then
        echo "FAIL: defined by herd but not exported (add them to libgomp.map):"
        echo "$hidden" | sed 's/^/  /'
        fail=1
    else
        echo "ok: every libgomp function $(basename "$archive") defines is exported"
    fi
else
    echo "FAIL: no $archive to compare with"
    fail=1
fi

# A program built against gcc 13/14's versions loads.
if gcc -O1 -o "$tmp/newer_gcc" "$here/newer_gcc.c" "$lib" 2>"$tmp/cc.log"; then
    if out=$(LD_LIBRARY_PATH=$dir OMP_NUM_THREADS=2 timeout 60 "$tmp/newer_gcc" 2>&1) && ! grep -q '^FAIL' <<<"$out" &&
        grep -q '^summary' <<<"$out"; then
        echo "ok: a program referencing gcc 13/14 symbol versions loads and runs ($(grep -c '^ok' <<<"$out") checks)"
    else
        echo "FAIL: newer_gcc: $out"
        fail=1
    fi
else
    echo "FAIL: newer_gcc.c does not link against $lib: $(cat "$tmp/cc.log")"
    fail=1
fi
exit $fail
