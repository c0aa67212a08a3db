#!/usr/bin/env bash
# Runs gcc's libgomp testsuite programs (host, run tests) under the system
# libgomp and under herd's libgomp.so.1 replacement, at several OMP_NUM_THREADS.
#
#   gcc-testsuite.sh [--herd DIR] [--out DIR] [--threads "unset 1 2 4"]
#                    [--timeout SECS] [--jobs N] [--c-as-cxx] [--opt FLAGS] SRC...
#
#   SRC        test sources or directories of them (e.g. a gcc source tree's
#              libgomp/testsuite/libgomp.c, libgomp.c-c++-common, libgomp.c++,
#              libgomp.fortran); .c is built with gcc, .C/.cc/.cpp with g++,
#              .f/.F/.f90/.F90/.f03/.f08 with gfortran, each with -fopenmp and
#              the test's dg-options (else -O2) and dg-additional-options
#              (lines without a target selector), dg-additional-sources from
#              the test's directory, and -lm.
#   --herd DIR the directory holding herd's libgomp.so.1 (default
#              target/release/gomp of this checkout)
#   --out DIR  binaries, logs and results (default /tmp/gcc-testsuite)
#   --jobs N   tests run at once (default 1)
#   --c-as-cxx .c files are built with g++ (as gcc's libgomp.c-c++-common is
#              run both ways); their results are named TEST.c+
#   --opt "FLAGS"  the options of tests that give no dg-options (default -O2;
#              gcc's own harness also runs Fortran at -O0, -O1, -O3 …)
#
# Skipped (recorded as SKIP with the reason): dg-do compile/link/preprocess
# tests, tests using offloading or OpenACC (in the test, a local file it includes or
# its additional sources: (omp target / declare target / omp_target_*
# / omp_get_num_devices-style device tests, dg-require offload / target
# offload_*), tests gcc cannot build, files that are only helpers (no main),
# programs that do not link libgomp at all (nothing of the runtime to test).
# dg-set-target-env-var variables are set for every run; dg-shouldfail tests
# pass when they exit non-zero; dg-output patterns (Tcl regexps, concatenated)
# are matched against stdout+stderr.  A run is PASS, FAIL(rc), TIMEOUT,
# OUTPUT (wrong output) or REFUSED (herd's "not supported" message).
#
# results.tsv: test, then one column per runtime x thread setting;
# times.tsv: the same runs' wall-clock milliseconds; slowest.txt: the tests
# herd runs most slowly relative to libgomp (sum over the thread settings).
# Each herd binary is checked with ldd to resolve libgomp.so.1 from --herd.
#
# The tests: gcc's source, e.g. `apt-get source --download-only gcc-12`
# (deb-src of Debian bookworm), whose gcc-12.2.0-dfsg.tar.xz holds
# gcc-12.2.0/libgomp/testsuite; pass also its appendix-a and examples-4
# subdirectories. Tests include their neighbours by relative path, so keep
# the testsuite's layout.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
herd="$root/target/release/gomp" out=/tmp/gcc-testsuite threads="unset 1 2 4" tmo=60 jobs=1 c_as_cxx=0 dflt_opt="-O2"
srcs=()
while [ $# -gt 0 ]; do
  case "$1" in
  --herd) herd=$2; shift ;;
  --out) out=$2; shift ;;
  --threads) threads=$2; shift ;;
  --timeout) tmo=$2; shift ;;
  --jobs) jobs=$2; shift ;;
  --c-as-cxx) c_as_cxx=1 ;;
  --opt) dflt_opt=$2; shift ;;
  -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  *) srcs+=("$1") ;;
  esac
  shift
done
[ -f "$herd/libgomp.so.1" ] || { echo "no $herd/libgomp.so.1 (bash crates/herd-omp/link.sh)" >&2; exit 2; }
herd=$(cd "$herd" && pwd)
mkdir -p "$out/bin" "$out/log" "$out/res" "$out/inc" "$out/times"
# libgomp's build-time config.h, which a few tests include: what they test for.
printf '#define HAVE_PTHREAD_AFFINITY_NP 1\n#define HAVE_SYNC_BUILTINS 1\n' > "$out/inc/config.h"
for v in $(env | sed -n 's/^\(\(OMP\|GOMP\|HERD\)_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
unset LD_PRELOAD LD_LIBRARY_PATH

# Matches OUT (a file) against the concatenated dg-output patterns of SRC.
cat > "$out/dgoutput.py" <<'PY'
import re, sys
src, outf = sys.argv[1], sys.argv[2]
pats = []
for line in open(src, errors="replace"):
    m = re.search(r'dg-output\s+"((?:[^"\\]|\\.)*)"', line) or re.search(r'dg-output\s+\{((?:[^{}]|\{[^{}]*\})*)\}', line)
    if m:
        p = m.group(1)
        # Tcl "..." strings: \\ -> \, \" -> "; then Tcl ARE ~ Python re
        if '"' in line[m.start():m.start() + 12]:
            p = p.replace('\\\\', '\x00').replace('\\"', '"').replace('\x00', '\\')
        pats.append(p)
text = open(outf, errors="replace").read()
sys.exit(0 if re.search("".join(pats), text, re.S) else 1)
PY

one() {  # one test source
  local f=$1 d n lang cc opts addopts sf dgout extra skip=""
  f=$(cd "$(dirname "$f")" && pwd)/$(basename "$f")
  d=$(dirname "$f"); n=$(basename "$d")/$(basename "$f"); n=${n//\//:}
  case "$f" in
  *.c) cc=gcc; [ "$c_as_cxx" = 1 ] && { cc=g++; n="$n+"; } ;;
  *.C|*.cc|*.cpp) cc=g++ ;;
  *.f|*.F|*.f90|*.F90|*.f03|*.F03|*.f08|*.F08) cc=gfortran ;;
  *) return ;;
  esac
  local res="$out/res/$n"
  grep -Eq 'dg-do +(compile|link|preprocess|assemble)' "$f" && skip="dg-do compile"
  # the test and the local files it includes
  local incs=("$f") inc
  for inc in $(sed -n "s/^ *include *'\\([^']*\\)'.*/\\1/p" "$f") $(sed -n 's/^ *# *include *"\([^"]*\)".*/\1/p; s/.*dg-additional-sources *"\{0,1\}\([^"}]*\)"\{0,1\}.*/\1/p' "$f"); do [ -f "$d/$inc" ] && incs+=("$d/$inc"); done
  # main may be in a local header the test includes (gcc 15's matrix-*.c)
  [ -z "$skip" ] && [ "$cc" != gfortran ] && ! cat "${incs[@]}" | grep -Eq '(^|[^A-Za-z_])main *\(|#include +"[^"]+\.(c|C|cc)"' && skip="no main"
  [ -z "$skip" ] && cat "${incs[@]}" | grep -Eqi '(pragma +omp|_Pragma *\( *"omp|\$omp)( +end)?( +declare)? +target|omp_target_|omp_get_(initial|default)_device|omp_get_num_devices|omp_is_initial_device|dg-do +run +\{ *target +offload|effective-target +offload' && skip="offloading"
  if [ -n "$skip" ]; then echo -e "$n\tSKIP($skip)" > "$res"; return; fi
  # option lines without a target selector, or with one this host matches
  local sel='\{ *target *(\{ *)?(\*-\*-linux\*|x86_64-\*-\*|i\?86-\*-\*|x86_64-\*-\* i\?86-\*-\*|i\?86-\*-\* x86_64-\*-\*|i\?86-\*-linux\* x86_64-\*-linux\*|x86_64-\*-linux\* i\?86-\*-linux\*) *(\} *)?\}'
  local optlines
  optlines=$(grep -E 'dg-(additional-)?options' "$f" | grep -Ev '\{ *target' ; grep -E 'dg-(additional-)?options' "$f" | grep -E "$sel")
  opts=$(echo "$optlines" | sed -n 's/.*dg-options "\([^"]*\)".*/\1/p' | head -1)
  [ -z "$opts" ] && opts="$dflt_opt"
  addopts=$(echo "$optlines" | sed -n 's/.*dg-additional-options "\([^"]*\)".*/\1/p' | tr '\n' ' ')
  extra=""
  for s in $(sed -n 's/.*dg-additional-sources *"\?\([^"}]*\)"\?.*/\1/p' "$f"); do
    [ -f "$d/$s" ] && extra="$extra $d/$s" || { echo -e "$n\tSKIP(missing source $s)" > "$res"; return; }
  done
  local -a envs
  mapfile -t envs < <(sed -n 's/.*dg-set-target-env-var *"\{0,1\}\([A-Za-z_0-9]*\)"\{0,1\} *"\([^"]*\)".*/\1=\2/p; t; s/.*dg-set-target-env-var *\([A-Za-z_0-9]*\) *\([^" }]*\).*/\1=\2/p' "$f")
  sf=0; grep -q 'dg-shouldfail' "$f" && sf=1
  dgout=0; grep -q 'dg-output' "$f" && dgout=1
  local bin="$out/bin/$n"
  # shellcheck disable=SC2086
  if ! (cd "$out/bin" && timeout 300 $cc -fopenmp $opts $addopts -I"$d" -I"$d/../.." -I"$out/inc" "$f" $extra -o "$bin" -lm) > "$out/log/$n.build" 2>&1; then
    echo -e "$n\tSKIP(build)" > "$res"; return
  fi
  if ! ldd "$bin" | grep -q 'libgomp\.so\.1'; then
    echo -e "$n\tSKIP(libgomp not linked)" > "$res"; return
  fi
  if ! LD_LIBRARY_PATH="$herd" ldd "$bin" | grep -q "$herd/libgomp.so.1"; then
    echo -e "$n\tSKIP(herd not resolved)" > "$res"; return
  fi
  local line="$n" times="$n" rt t rc st log t0
  for rt in gomp herd; do for t in $threads; do
    log="$out/log/$n.$rt.$t"
    local -a e=(env)
    [ "$rt" = herd ] && e+=(LD_LIBRARY_PATH="$herd")
    [ "$t" != unset ] && e+=(OMP_NUM_THREADS="$t")
    e+=("${envs[@]}")
    t0=$(date +%s%N)
    (cd "$out/bin" && timeout -k 5 "$tmo" "${e[@]}" "$bin") > "$log" 2>&1; rc=$?
    times="$times\t$rt.$t=$(( ($(date +%s%N) - t0) / 1000000 ))"
    if [ $rc = 124 ] || [ $rc = 137 ]; then st=TIMEOUT
    elif grep -q 'herd-omp: fatal: .*not supported' "$log"; then st=REFUSED
    elif [ $sf = 1 ]; then [ $rc != 0 ] && st=PASS || st="FAIL($rc)"
    elif [ $rc != 0 ]; then st="FAIL($rc)"
    elif [ $dgout = 1 ] && ! python3 "$out/dgoutput.py" "$f" "$log"; then st=OUTPUT
    else st=PASS; fi
    line="$line\t$rt.$t=$st"
  done; done
  echo -e "$line" > "$res"
  echo -e "$times" > "$out/times/$n"
}
export -f one
export out herd threads tmo c_as_cxx dflt_opt

files=()
for s in "${srcs[@]}"; do
  if [ -d "$s" ]; then while IFS= read -r f; do files+=("$f"); done < <(find "$s" -maxdepth 1 -type f | sort)
  else files+=("$s"); fi
done
printf '%s\n' "${files[@]}" | xargs -P "$jobs" -I{} bash -c 'one "$1"' _ {}

# Summary over every result recorded in $out (this and earlier invocations).
cat "$out"/res/* | sort > "$out/results.tsv"
cat "$out"/times/* 2>/dev/null | sort > "$out/times.tsv"
awk -F'\t' '{ g = 0; h = 0; for (i = 2; i <= NF; i++) { split($i, a, "="); if (a[1] ~ /^gomp/) g += a[2]; else h += a[2] }
  printf "%8.1fx %8d ms herd %8d ms libgomp  %s\n", (h + 1) / (g + 1), h, g, $1 }' "$out/times.tsv" | sort -rn | head -25 > "$out/slowest.txt"
awk -F'\t' '
  $2 ~ /^SKIP/ { skip++; next }
  { built++; delete g; delete h; bad = 0
    for (i = 2; i <= NF; i++) { split($i, a, "="); split(a[1], b, "."); runs++
      if (b[1] == "gomp") g[b[2]] = a[2]; else h[b[2]] = a[2] }
    for (t in g) { if (g[t] == "PASS") { gpass++; if (h[t] == "PASS") hpass++; else bad = 1 } else if (h[t] == "PASS") hextra++ }
    if (bad) list = list "\n  " $0 }
  END { printf "files %d, skipped %d, built and run %d (%d runs)\n", skip + built, skip, built, runs
        printf "runs libgomp passes: %d; herd passes %d of those (and %d runs libgomp fails)\n", gpass, hpass, hextra
        if (list != "") printf "herd fails where libgomp passes:%s\n", list }' "$out/results.tsv" | tee "$out/summary.txt"
