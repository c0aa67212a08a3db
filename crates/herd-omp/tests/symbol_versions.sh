#!/usr/bin/env bash
# Checks herd's libgomp.so.1 against libgomp's symbol versions, gcc 12 to 16
# (libgomp.symbols, the reference, read from Debian's libgomp.so.1 builds):
#   1. every GOMP_*/omp_* symbol herd exports is a libgomp symbol, exported at
#      libgomp's version for it (a program linked against libgomp binds to it);
#   2. every GOMP_*/omp_* symbol and version libgomp exports, compatibility
#      versions included, and OpenACC's (GOACC_*, acc_*: refused with a
#      message), herd exports too (a program built by any of those gcc
#      releases loads); GOMP_PLUGIN_* (the offload plugins' interface, not
#      called by programs) is left out;
#   3. every libgomp function herd's static library defines is exported (an
#      entry point missing from libgomp.map would be silently hidden);
#   4. a program referencing gcc 13 to 16 versions (newer_gcc.c, with
#      .symver) links against herd's library, loads and gets libgomp's
#      answers;
#   5. an OpenACC program (gcc -fopenacc) loads and is stopped by herd's
#      message naming the OpenACC entry point.
#
#   symbol_versions.sh [DIR]   DIR holds herd's libgomp.so.1 (default target/release/gomp)
# Exit status: 0 all passed, 1 a check failed, 2 usage error.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
dir=${1:-$root/target/release/gomp}
lib=$dir/libgomp.so.1
archive=$root/target/omp/libherd_omp.a
ref=$here/libgomp.symbols
[ -f "$lib" ] || { echo "symbol_versions.sh: no $lib (run make omp)" >&2; exit 2; }
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
fail=0

# NAME VERSION of what herd exports (defined symbols; a version in
# parentheses is a compatibility version, as objdump prints it).
objdump -T "$lib" | awk '$4 == ".text" && $NF ~ /^(omp_|GOMP_|GOACC_|acc_)/ {print $NF, $(NF-1)}' | sort >"$tmp/herd"
grep -v '^#' "$ref" | sort >"$tmp/ref"
n=$(wc -l <"$tmp/herd")
[ "$n" -gt 100 ] || { echo "FAIL: only $n GOMP_/omp_ symbols exported by $lib"; exit 1; }
bad=$(comm -23 "$tmp/herd" "$tmp/ref")
if [ -n "$bad" ]; then
    echo "FAIL: exported at a version libgomp does not give them (NAME VERSION):"
    echo "$bad" | sed 's/^/  /'
    fail=1
else
    echo "ok: $n symbols exported, each at libgomp's version"
fi
missing=$(awk '$1 !~ /^GOMP_PLUGIN_/' "$tmp/ref" | comm -23 - "$tmp/herd")
if [ -n "$missing" ]; then
    echo "FAIL: libgomp (gcc 12 to 16) exports these and herd does not (NAME VERSION):"
    echo "$missing" | sed 's/^/  /'
    fail=1
else
    echo "ok: every GOMP_/omp_/OpenACC symbol and version of libgomp 12, 14 and 16 is exported"
fi

# Functions the static library defines but the shared one does not export.
if [ -f "$archive" ]; then
    nm -g --defined-only "$archive" 2>/dev/null | awk '$2 == "T" && $3 ~ /^(omp_|GOMP_|GOACC_|acc_)/ {print $3}' | sort -u >"$tmp/defined"
    awk '{print $1}' "$tmp/ref" | sort -u >"$tmp/refnames"
    hidden=$(awk '{print $1}' "$tmp/herd" | sort -u | comm -23 "$tmp/defined" - | comm -12 - "$tmp/refnames")
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

# A program built against gcc 13 to 16's versions loads.
if gcc -O1 -o "$tmp/newer_gcc" "$here/newer_gcc.c" "$lib" 2>"$tmp/cc.log"; then
    if out=$(LD_LIBRARY_PATH=$dir OMP_NUM_THREADS=2 timeout 60 "$tmp/newer_gcc" 2>&1) && ! grep -q '^FAIL' <<<"$out" &&
        grep -q '^summary' <<<"$out"; then
        echo "ok: a program referencing gcc 13 to 16 symbol versions loads and runs ($(grep -c '^ok' <<<"$out") checks)"
    else
        echo "FAIL: newer_gcc: $out"
        fail=1
    fi
else
    echo "FAIL: newer_gcc.c does not link against $lib: $(cat "$tmp/cc.log")"
    fail=1
fi
# An OpenACC program loads and is refused with the message.
printf '#include <openacc.h>\n#include <stdio.h>\nint main(void) { int x[64];\n#pragma acc parallel loop copyout(x)\nfor (int i = 0; i < 64; i++) x[i] = i;\nprintf("%%d %%d\\n", x[63], acc_get_num_devices(acc_device_host)); return 0; }\n' >"$tmp/acc.c"
if gcc -fopenacc -O1 -o "$tmp/acc" "$tmp/acc.c" 2>"$tmp/cc.log"; then
    out=$(LD_LIBRARY_PATH=$dir timeout 60 "$tmp/acc" 2>&1)
    if [ $? -ne 0 ] && grep -q 'fatal: OpenACC (' <<<"$out"; then
        echo "ok: an OpenACC program loads and is refused: $(grep -m1 -o 'OpenACC ([A-Za-z_0-9]*)' <<<"$out")"
    else
        echo "FAIL: the OpenACC program was not refused with herd's message: $out"
        fail=1
    fi
else
    echo "FAIL: gcc -fopenacc could not build the OpenACC program: $(cat "$tmp/cc.log")"
    fail=1
fi
exit $fail
