#!/usr/bin/env bash
# Builds and runs the herd-omp conformance programs (crates/herd-omp/tests/c: C, C++
# and Fortran, built with gcc, g++ and gfortran -fopenmp)
# under one or more OpenMP runtimes, several environment configurations each.
#
#   run.sh [--lib PATH] [--gomp-dir DIR] [--reference] [--libomp[=PATH]]
#          [--build DIR] [--only PROG[,PROG..]] [--timeout SECS]
#
#   --reference      the system libgomp (the default when no runtime is named)
#   --libomp[=PATH]  LLVM libomp substituted as libgomp.so.1 (a directory of
#                    symlinks + LD_LIBRARY_PATH); PATH defaults to the first of
#                    /usr/lib/llvm-*/lib/libomp.so.5, /usr/lib/<triple>/libomp.so.5
#   --lib PATH       herd's library through LD_PRELOAD=PATH; when the `herd`
#                    executable is next to PATH, also the runtime herd-run:
#                    `herd run -- PROG` with HERD_OMP_LIB=PATH, for the programs
#                    where the way herd is loaded matters (herd_run_progs: api,
#                    bind, fortran; the others would test the object --gomp-dir
#                    tests)
#   --gomp-dir DIR   a replacement libgomp.so.1 in DIR, through LD_LIBRARY_PATH=DIR
#   --build DIR      build/log directory (default target/omp-tests, relative to
#                    the repository root; the script cds there itself)
#   --only LIST      run only these programs (e.g. --only loops,tasks)
#
# Every run is under `timeout` (120 s by default): a hang shows as TIMEOUT for
# that program and configuration.  A run passes only if the program exits 0,
# prints its `summary` line, prints no `FAIL` line, and really ran on the
# runtime under test (the program reports which object defines
# omp_get_thread_num).  `xfail` lines (documented deviations of libomp, and
# of the system libgomp from a few named OpenMP 5.1 requirements; never
# applied to herd) are counted but do not fail.
#
# With --lib / --gomp-dir (and --libomp, as a self-test of the check) every
# program is also run once with LD_BIND_NOW=1 LD_DEBUG=bindings: every GOMP_* /
# omp_* symbol the program references must bind to the library under test, and
# at least one must (so the check cannot pass vacuously).
#
# Exit status: 0 all passed, 1 some run failed, 2 usage/build error.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../../.." && pwd)
cd "$root" || exit 2

usage() { sed -n '2,/^# Exit status/p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 2; }
die() { echo "run.sh: $*" >&2; exit 2; }

build=target/omp-tests
timeout_s=120
only=""
want_ref=0 want_libomp=0 libomp_path="" herd_lib="" gomp_dir=""
while [ $# -gt 0 ]; do
    case "$1" in
    --reference) want_ref=1 ;;
    --libomp) want_libomp=1 ;;
    --libomp=*) want_libomp=1; libomp_path=${1#--libomp=} ;;
    --lib) [ $# -ge 2 ] || usage; herd_lib=$2; shift ;;
    --lib=*) herd_lib=${1#--lib=} ;;
    --gomp-dir) [ $# -ge 2 ] || usage; gomp_dir=$2; shift ;;
    --gomp-dir=*) gomp_dir=${1#--gomp-dir=} ;;
    --build) [ $# -ge 2 ] || usage; build=$2; shift ;;
    --build=*) build=${1#--build=} ;;
    --only) [ $# -ge 2 ] || usage; only=$2; shift ;;
    --only=*) only=${1#--only=} ;;
    --timeout) [ $# -ge 2 ] || usage; timeout_s=$2; shift ;;
    -h | --help) usage ;;
    *) echo "run.sh: unknown argument $1" >&2; usage ;;
    esac
    shift
done
if [ $want_ref = 0 ] && [ $want_libomp = 0 ] && [ -z "$herd_lib" ] && [ -z "$gomp_dir" ]; then
    want_ref=1
fi

# A clean, reproducible OpenMP environment: nothing inherited from the caller.
for v in $(env | sed -n 's/^\(\(OMP\|GOMP\|KMP\|EXPECT\)_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
unset LD_PRELOAD LD_DEBUG LD_DEBUG_OUTPUT LD_BIND_NOW

command -v gcc >/dev/null || die "gcc not found"
command -v timeout >/dev/null || die "timeout (coreutils) not found"
mkdir -p "$build/bin" "$build/logs" || die "cannot create $build"
build=$(cd "$build" && pwd)

# ---- runtimes ---------------------------------------------------------------
# Each runtime: a label, the environment that selects it, and the real path of
# the object that must define omp_get_thread_num ("" = check by name only).
# rt_prefix: a command the program is run through ("" = none); rt_progs: the
# programs run under it (",a,b," = only those; "" = all).
rt_labels=() rt_envs=() rt_expect=() rt_bindcheck=() rt_prefix=() rt_progs=()
herd_run_progs=api,bind,fortran

if [ $want_ref = 1 ]; then
    rt_labels+=(libgomp) rt_envs+=("") rt_expect+=("libgomp") rt_bindcheck+=("") rt_prefix+=("") rt_progs+=("")
fi
if [ $want_libomp = 1 ]; then
    if [ -z "$libomp_path" ]; then
        for c in /usr/lib/llvm-*/lib/libomp.so.5 /usr/lib/*-linux-gnu/libomp.so.5 /usr/lib64/libomp.so /usr/local/lib/libomp.so; do
            [ -f "$c" ] && { libomp_path=$c; break; }
        done
    fi
    [ -n "$libomp_path" ] && [ -f "$libomp_path" ] || die "LLVM libomp not found (apt-get install libomp-dev, or --libomp=PATH)"
    shim="$build/libomp-as-libgomp"
    mkdir -p "$shim" && ln -sfn "$(readlink -f "$libomp_path")" "$shim/libgomp.so.1" || die "cannot create $shim"
    rt_labels+=(libomp) rt_envs+=("LD_LIBRARY_PATH=$shim") rt_expect+=("libomp")
    rt_bindcheck+=("$shim/libgomp.so.1|0") rt_prefix+=("") rt_progs+=("")
fi
if [ -n "$herd_lib" ]; then
    [ -f "$herd_lib" ] || die "--lib $herd_lib: no such file"
    herd_lib=$(cd "$(dirname "$herd_lib")" && pwd)/$(basename "$herd_lib")
    rt_labels+=(herd-preload) rt_envs+=("LD_PRELOAD=$herd_lib") rt_expect+=("=$(readlink -f "$herd_lib")")
    # Preloaded: nothing may bind to an object named libgomp.so.1 (even if
    # --lib itself names one, which is how the check is validated).
    rt_bindcheck+=("$herd_lib|1") rt_prefix+=("") rt_progs+=("")
    # `herd run` preloads gomp/libgomp.so.1 next to the library when it exists.
    herd_exe=$(dirname "$herd_lib")/herd herd_run_obj=$(dirname "$herd_lib")/gomp/libgomp.so.1
    [ -e "$herd_run_obj" ] || herd_run_obj=$herd_lib
    if [ -x "$herd_exe" ]; then
        rt_labels+=(herd-run) rt_envs+=("HERD_OMP_LIB=$herd_lib") rt_expect+=("=$(readlink -f "$herd_run_obj")")
        rt_bindcheck+=("$herd_run_obj|0") rt_prefix+=("$herd_exe run --") rt_progs+=(",$herd_run_progs,")
    fi
fi
if [ -n "$gomp_dir" ]; then
    [ -e "$gomp_dir/libgomp.so.1" ] || die "--gomp-dir $gomp_dir: no libgomp.so.1 there"
    gomp_dir=$(cd "$gomp_dir" && pwd)
    rt_labels+=(herd-gomp-dir) rt_envs+=("LD_LIBRARY_PATH=$gomp_dir")
    rt_expect+=("=$(readlink -f "$gomp_dir/libgomp.so.1")") rt_bindcheck+=("$gomp_dir/libgomp.so.1|0")
    rt_prefix+=("") rt_progs+=("")
fi

# ---- build --------------------------------------------------------------------
progs=()
for src in "$here"/*.c "$here"/*.cpp "$here"/*.f90; do
    [ -e "$src" ] || continue
    name=$(basename "$src"); name=${name%.*}
    if [ -n "$only" ] && ! printf ',%s,' "$only" | grep -q ",$name,"; then continue; fi
    progs+=("$name")
    bin="$build/bin/$name"
    if [ -x "$bin" ] && [ "$bin" -nt "$src" ] && [ "$bin" -nt "$here/check.h" ] && [ "$bin" -nt "${BASH_SOURCE[0]}" ]; then
        continue
    fi
    case "$src" in
    *.cpp) cc=(g++ -fopenmp -O2 -Wall) ;;
    *.f90)
        command -v gfortran >/dev/null || die "gfortran not found (make deps installs it)"
        cc=(gfortran -fopenmp -O2 -Wall -J "$build/bin") ;;
    *) cc=(gcc -fopenmp -O2 -Wall) ;;
    esac
    echo "compile: ${cc[*]} -o ${bin#"$root"/} ${src#"$root"/} -ldl"
    "${cc[@]}" -o "$bin.tmp" "$src" -ldl || die "compilation of $src failed"
    mv -f "$bin.tmp" "$bin"
done
[ ${#progs[@]} -gt 0 ] || die "no programs selected"

# ---- configurations -----------------------------------------------------------
# CPUs this script may use (nproc counts the affinity mask; OMP_* are unset).
ncpu=$(nproc)
# Lines "name<TAB>VAR=value VAR=value" for one program.
configs() {
    local k
    [ "$1" = bind ] || [ "$1" = proc_bind ] || for k in 1 2 3 4; do printf 'T%s\tOMP_NUM_THREADS=%s EXPECT_THREADS=%s\n' $k $k $k; done
    # Tasking at a team of more than 8 (herd's barrier drain marks drained
    # epochs and staggers its sums there; see crates/herd-omp/src/team.rs).
    case "$1" in
    tasks|task_reduction|final_tasks|detach|taskwait_depend|task_constraint)
        printf 'T12\tOMP_NUM_THREADS=12 EXPECT_THREADS=12\n' ;;
    cancel) printf 'T12/cancellation\tOMP_NUM_THREADS=12 OMP_CANCELLATION=true\n' ;;
    esac
    case "$1" in
    bind)
        printf 'T2/proc_bind=true\tOMP_NUM_THREADS=2 OMP_PROC_BIND=true EXPECT_CPUS=%s EXPECT_BOUND=1\n' "$ncpu"
        printf 'T2/proc_bind=spread\tOMP_NUM_THREADS=2 OMP_PROC_BIND=spread EXPECT_CPUS=%s EXPECT_BOUND=1\n' "$ncpu"
        printf 'T2/places=threads\tOMP_NUM_THREADS=2 OMP_PLACES=threads EXPECT_CPUS=%s EXPECT_BOUND=1\n' "$ncpu"
        printf 'T2/unbound\tOMP_NUM_THREADS=2 EXPECT_CPUS=%s\n' "$ncpu"
        printf 'T2/proc_bind=true/one_cpu\tOMP_NUM_THREADS=2 OMP_PROC_BIND=true BIND_ONE_CPU=1\n'
        ;;
    loops)
        printf 'T4/sched=static,1\tOMP_NUM_THREADS=4 OMP_SCHEDULE=static,1\n'
        printf 'T3/sched=dynamic,3\tOMP_NUM_THREADS=3 OMP_SCHEDULE=dynamic,3\n'
        printf 'T2/sched=guided\tOMP_NUM_THREADS=2 OMP_SCHEDULE=guided\n'
        printf 'T4/sched=auto\tOMP_NUM_THREADS=4 OMP_SCHEDULE=auto\n'
        ;;
    parallel)
        printf 'T2/max_active_levels=2\tOMP_NUM_THREADS=2 EXPECT_THREADS=2 OMP_MAX_ACTIVE_LEVELS=2 EXPECT_MAX_ACTIVE_LEVELS=2\n'
        printf 'T3/max_active_levels=1\tOMP_NUM_THREADS=3 EXPECT_THREADS=3 OMP_MAX_ACTIVE_LEVELS=1 EXPECT_MAX_ACTIVE_LEVELS=1\n'
        ;;
    fortran)
        printf 'T2/places=threads/close\tOMP_NUM_THREADS=2 EXPECT_THREADS=2 OMP_PLACES=threads OMP_PROC_BIND=close EXPECT_PROC_BIND=3 EXPECT_MIN_PLACES=1\n'
        ;;
    cancel)
        for k in 1 2 3 4; do printf 'T%s/cancellation\tOMP_NUM_THREADS=%s OMP_CANCELLATION=true\n' $k $k; done
        ;;
    teams_icv)
        printf 'teams=4/ttl=6\tOMP_NUM_TEAMS=4 EXPECT_NUM_TEAMS=4 OMP_TEAMS_THREAD_LIMIT=6 EXPECT_TEAMS_THREAD_LIMIT=6\n'
        ;;
    allocators)
        printf 'allocator=cgroup\tOMP_ALLOCATOR=omp_cgroup_mem_alloc EXPECT_DEFAULT_ALLOCATOR=6\n'
        printf 'allocator=pool/null_fb\tOMP_ALLOCATOR=omp_default_mem_space:pool_size=65536,fallback=null_fb EXPECT_ENV_POOL=65536 EXPECT_ENV_OVERSIZE=null\n'
        printf 'allocator=pool/allocator_fb\tOMP_ALLOCATOR=omp_default_mem_space:pool_size=65536,fallback=allocator_fb,fb_data=omp_low_lat_mem_alloc EXPECT_ENV_POOL=65536 EXPECT_ENV_OVERSIZE=served\n'
        ;;
    task_reduction)
        printf 'T4/thread_limit=3\tOMP_NUM_THREADS=4 OMP_THREAD_LIMIT=3\n'
        printf 'T3,2/nested\tOMP_NUM_THREADS=3,2 OMP_MAX_ACTIVE_LEVELS=2\n'
        ;;
    kmp_env)
        # Two usable CPUs, the last first (the proclist's order must be kept).
        local cpus first last
        cpus=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status | tr ',' '\n' | awk -F- '{ b = NF > 1 ? $2 : $1; for (c = $1; c <= b; c++) print c }')
        first=$(printf '%s\n' "$cpus" | head -1) last=$(printf '%s\n' "$cpus" | tail -1)
        printf 'affinity=explicit\tKMP_AFFINITY=granularity=fine,explicit,proclist=[%s,%s] KMP_EXPLICIT=%s,%s\n' "$last" "$first" "$last" "$first"
        printf 'affinity=none/over_omp\tKMP_AFFINITY=none OMP_PLACES=threads OMP_PROC_BIND=close KMP_EXPECT_UNBOUND=1\n'
        printf 'limits\tKMP_TEAMS_THREAD_LIMIT=1 EXPECT_TEAMS_THREAD_LIMIT=1 KMP_DEVICE_THREAD_LIMIT=3 EXPECT_THREAD_LIMIT=3\n'
        printf 'stacksize=32M\tKMP_STACKSIZE=32M EXPECT_STACK_MB=32\n'
        ;;
    stack)
        printf 'T2/omp_stacksize=32M\tOMP_NUM_THREADS=2 OMP_STACKSIZE=32M EXPECT_STACK_MB=32\n'
        printf 'T2/gomp_stacksize=32M\tOMP_NUM_THREADS=2 GOMP_STACKSIZE=32M EXPECT_STACK_MB=32\n'
        ;;
    proc_bind)
        local allowed
        allowed=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
        printf 'unbound\t\n'
        # libgomp's GOMP_CPU_AFFINITY: one place per CPU, bound; OMP_PROC_BIND=false turns it off.
        printf 'cpu_affinity=usable\tGOMP_CPU_AFFINITY=%s EXPECT_BOUND=1 EXPECT_PLACES=%s\n' "$allowed" "$ncpu"
        printf 'cpu_affinity/proc_bind=false\tGOMP_CPU_AFFINITY=%s OMP_PROC_BIND=false\n' "$allowed"
        printf 'places={0},{1}\tOMP_PLACES={0},{1} EXPECT_BOUND=1\n'
        printf 'places={0}:%s\tOMP_PLACES={0}:%s EXPECT_BOUND=1 EXPECT_PLACES=%s\n' "$ncpu" "$ncpu" "$ncpu"
        printf 'places=threads/close\tOMP_PLACES=threads OMP_PROC_BIND=close EXPECT_BOUND=1\n'
        printf 'places=cores/spread\tOMP_PLACES=cores OMP_PROC_BIND=spread EXPECT_BOUND=1\n'
        printf 'one_place\tOMP_PLACES={0:%s} EXPECT_BOUND=1 EXPECT_PLACES=1\n' "$ncpu"
        printf 'proc_bind=true\tOMP_PROC_BIND=true EXPECT_BOUND=1\n'
        printf 'proc_bind=spread,close\tOMP_PROC_BIND=spread,close OMP_PLACES=threads EXPECT_BOUND=1 EXPECT_NESTED_CLOSE_IN_SPREAD=1\n'
        printf 'proc_bind=close,spread,primary\tOMP_PROC_BIND=close,spread,primary EXPECT_BOUND=1\n'
        ;;
    teams)
        printf 'teams=4\tOMP_NUM_TEAMS=4 EXPECT_NUM_TEAMS=4\n'
        printf 'T2/teams_thread_limit=1\tOMP_NUM_THREADS=2 OMP_TEAMS_THREAD_LIMIT=1 EXPECT_TEAMS_THREAD_LIMIT=1\n'
        printf 'T4/thread_limit=3\tOMP_NUM_THREADS=4 OMP_THREAD_LIMIT=3\n'
        ;;
    doacross)
        # libgomp's doacross wait only spins: keep the cross-thread
        # static,1 schedule within the cores (2 on the test VM).
        printf 'T2/sched=static,1\tOMP_NUM_THREADS=2 OMP_SCHEDULE=static,1\n'
        printf 'T3/sched=guided,2\tOMP_NUM_THREADS=3 OMP_SCHEDULE=guided,2\n'
        printf 'T2/sched=dynamic\tOMP_NUM_THREADS=2 OMP_SCHEDULE=dynamic\n'
        ;;
    nesting)
        printf 'thread_limit=3\tOMP_THREAD_LIMIT=3\n'
        printf 'thread_limit=5\tOMP_THREAD_LIMIT=5\n'
        ;;
    affinity_format)
        printf 'format=env\tOMP_NUM_THREADS=3 OMP_AFFINITY_FORMAT=T%%n/%%N EXPECT_FORMAT=T%%n/%%N\n'
        printf 'display=true\tOMP_NUM_THREADS=2 OMP_DISPLAY_AFFINITY=true\n'
        ;;
    places_usable)
        # One place per CPU of this process's set, e.g. {0}:4:1,{8}: every place is usable.
        local allowed one_each
        allowed=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
        one_each=$(printf '%s' "$allowed" | tr ',' '\n' | awk -F- '{ b = NF > 1 ? $2 : $1; printf "%s{%d}:%d:1", (NR > 1 ? "," : ""), $1, b - $1 + 1 }')
        printf 'places=one_per_usable_cpu\tOMP_PLACES=%s EXPECT_MIN_PLACES=%s EXPECT_MAX_PLACES=%s ALLOWED_CPUS=%s\n' "$one_each" "$ncpu" "$ncpu" "$allowed"
        printf 'places={0},{1000}\tOMP_PLACES={0},{1000} EXPECT_MAX_PLACES=1 ALLOWED_CPUS=%s\n' "$allowed"
        printf 'places={0,1000}:2:1\tOMP_PLACES={0,1000}:2:1 EXPECT_MAX_PLACES=2 ALLOWED_CPUS=%s\n' "$allowed"
        printf 'places={1000}\tOMP_PLACES={1000} ALLOWED_CPUS=%s\n' "$allowed"
        printf 'places={1000}/bind=close\tOMP_PLACES={1000} OMP_PROC_BIND=close ALLOWED_CPUS=%s\n' "$allowed"
        printf 'places=cores(1000)\tOMP_PLACES=cores(1000) ALLOWED_CPUS=%s\n' "$allowed"
        printf 'places=threads(1000)/bind=spread\tOMP_PLACES=threads(1000) OMP_PROC_BIND=spread EXPECT_MAX_PLACES=%s ALLOWED_CPUS=%s\n' "$ncpu" "$allowed"
        ;;
    api)
        printf 'default\t\n'
        printf 'T4/places=threads/close\tOMP_NUM_THREADS=4 EXPECT_THREADS=4 OMP_PLACES=threads EXPECT_PLACES=threads OMP_PROC_BIND=close EXPECT_PROC_BIND=close\n'
        printf 'T3/places=cores/spread\tOMP_NUM_THREADS=3 EXPECT_THREADS=3 OMP_PLACES=cores EXPECT_PLACES=cores OMP_PROC_BIND=spread EXPECT_PROC_BIND=spread\n'
        printf 'thread_limit=3\tOMP_THREAD_LIMIT=3 EXPECT_THREAD_LIMIT=3\n'
        # A CPU past the usable ones: libgomp drops it and the place it empties
        # (a multiple of 64 would be past libgomp's CPU set, which rejects the list).
        [ $((ncpu % 64)) = 0 ] || printf 'places=unusable_cpu\tOMP_PLACES={0},{%s} EXPECT_NUM_PLACES=1\n' "$ncpu"
        ;;
    esac
}

# ---- running --------------------------------------------------------------------
declare -A result  # result[rt|prog|cfg] = pass / FAIL / TIMEOUT
rows=()            # "prog|cfg" in order
declare -A have_row
failures=()
total=0 failed=0 xfails=0

# judge LOG RC EXPECT -> sets verdict and why
judge() {
    local log=$1 rc=$2 expect=$3 line path
    verdict=pass why=""
    if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then verdict=TIMEOUT why="no result within ${timeout_s}s"; return; fi
    if grep -q '^FAIL ' "$log"; then
        verdict=FAIL why="$(grep -c '^FAIL ' "$log") check(s) failed, first: $(grep -m1 '^FAIL ' "$log")"
        return
    fi
    if ! grep -q '^summary ' "$log"; then verdict=FAIL why="exit $rc without a summary line: $(tail -n 2 "$log" | tr '\n' ' ')"; return; fi
    if [ "$rc" != 0 ]; then verdict=FAIL why="exit status $rc"; return; fi
    line=$(grep -m1 '^# .*omp_get_thread_num from ' "$log")
    path=${line#*omp_get_thread_num from }; path=${path%%;*}; path=${path% (libomp)}
    case "$expect" in
    libgomp) case "$path" in */libgomp.so*) ;; *) verdict=FAIL why="ran on $path, not libgomp" ;; esac ;;
    libomp) case "$line" in *"(libomp)"*) ;; *) verdict=FAIL why="ran on $path, not libomp" ;; esac ;;
    =*) [ "$path" = "${expect#=}" ] || { verdict=FAIL why="ran on $path, not ${expect#=}"; } ;;
    esac
}

for ri in "${!rt_labels[@]}"; do
    rt=${rt_labels[$ri]} rtenv=${rt_envs[$ri]} expect=${rt_expect[$ri]} prefix=${rt_prefix[$ri]}
    rtprogs=()
    for prog in "${progs[@]}"; do
        case "${rt_progs[$ri]}" in "" | *",$prog,"*) rtprogs+=("$prog") ;; esac
    done
    [ ${#rtprogs[@]} -gt 0 ] || continue
    mkdir -p "$build/logs/$rt"
    echo "== runtime $rt ${rtenv:+($rtenv)}${prefix:+ through: $prefix}"
    t_rt=$SECONDS
    for prog in "${rtprogs[@]}"; do
        while IFS=$'\t' read -r cfg cfgenv; do
            [ -n "$cfg" ] || continue
            key="$prog|$cfg"
            [ -n "${have_row[$key]:-}" ] || { rows+=("$key"); have_row[$key]=1; }
            log="$build/logs/$rt/$prog.${cfg//\//_}.log"
            start=$(date +%s%N)
            # shellcheck disable=SC2086  # the env strings are word lists on purpose
            env $cfgenv $rtenv timeout -k 5 "$timeout_s" $prefix "$build/bin/$prog" >"$log" 2>&1
            rc=$?
            secs=$(awk -v a="$start" -v b="$(date +%s%N)" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
            judge "$log" "$rc" "$expect"
            total=$((total + 1))
            nx=$(grep -c '^xfail ' "$log")
            xfails=$((xfails + nx))
            result["$rt|$key"]=$verdict
            note=""
            [ "$nx" -gt 0 ] && note=" ($nx xfail)"
            if [ "$verdict" != pass ]; then
                failed=$((failed + 1))
                failures+=("$rt $prog [$cfg]: $verdict: $why (log: ${log#"$root"/})")
                printf '  %-10s %-26s %-8s %6ss  %s\n' "$prog" "$cfg" "$verdict" "$secs" "$why"
            else
                printf '  %-10s %-26s %-8s %6ss%s\n' "$prog" "$cfg" "$verdict" "$secs" "$note"
            fi
        done < <(configs "$prog")
    done

    # ---- symbol binding check ----
    target=${rt_bindcheck[$ri]%|*} forbid=${rt_bindcheck[$ri]##*|}
    if [ -n "$target" ]; then
        echo "-- binding check for $rt: GOMP_*/omp_* must bind to $target"
        for prog in "${rtprogs[@]}"; do
            key="$prog|bindings"
            [ -n "${have_row[$key]:-}" ] || { rows+=("$key"); have_row[$key]=1; }
            dbg="$build/logs/$rt/$prog.bindings"
            rm -f "$dbg".*
            bin="$build/bin/$prog"
            # shellcheck disable=SC2086
            env OMP_NUM_THREADS=2 $rtenv LD_BIND_NOW=1 LD_DEBUG=bindings LD_DEBUG_OUTPUT="$dbg" \
                timeout -k 5 "$timeout_s" $prefix "$bin" >"$dbg.out" 2>&1
            rc=$?
            # "binding file <referrer> [0] to <definer> [0]: normal symbol `NAME' [VERSION]"
            cat "$dbg".[0-9]* 2>/dev/null |
                sed -n "s/.*binding file \(.*\) \[[0-9]*\] to \(.*\) \[[0-9]*\]: normal symbol \`\(\(GOMP_\|omp_\)[^']*\)'\(.*\)/\1|\2|\3\5/p" |
                awk -F'|' -v b="$bin" '$1 == b' | sort -u >"$dbg.table"
            # bad: bound to another object, or (preload mode) to any libgomp.so.1
            isbad='$2 != t || (f == 1 && $2 ~ /(^|\/)libgomp\.so\.1$/)'
            good=$(awk -F'|' -v t="$target" -v f="$forbid" "!($isbad)" "$dbg.table" | wc -l)
            bad=$(awk -F'|' -v t="$target" -v f="$forbid" "$isbad" "$dbg.table" | wc -l)
            total=$((total + 1))
            if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
                verdict=TIMEOUT why="binding run did not finish"
            elif [ "$bad" -gt 0 ]; then
                verdict=FAIL
                why="$bad of $((good + bad)) symbol(s) bound to the wrong object, e.g. $(awk -F'|' -v t="$target" -v f="$forbid" "$isbad"' {printf "%s -> %s; ", $3, $2}' "$dbg.table" | head -c 300)"
            elif [ "$good" -eq 0 ]; then
                verdict=FAIL why="no GOMP_/omp_ symbol bound to $target (exit $rc: $(head -c 300 "$dbg.out" | tr '\n' ' '))"
            else
                verdict=pass why="$good symbols"
            fi
            result["$rt|$key"]=$verdict
            if [ "$verdict" != pass ]; then
                failed=$((failed + 1))
                failures+=("$rt $prog [bindings]: $verdict: $why (table: ${dbg#"$root"/}.table)")
            fi
            printf '  %-10s %-26s %-8s %s\n' "$prog" "bindings" "$verdict" "$why"
        done
    fi
    # ---- invalid environment values (herd only): the program must stop
    # before main with a message naming the variable and the value ----
    # (not under herd-run: `herd run` checks HERD_* itself, before the program)
    if [[ $rt == herd* ]] && [ "$rt" != herd-run ]; then
        echo "-- invalid OMP_*/HERD_* values under $rt"
        for bad in "OMP_SCHEDULE=bogus" "OMP_NUM_THREADS=0" "OMP_PROC_BIND=sideways" "OMP_STACKSIZE=12Q" \
            "OMP_MAX_ACTIVE_LEVELS=-1" "OMP_WAIT_POLICY=busy" "OMP_ALLOCATOR=omp_bogus_mem_alloc" "HERD_NUM_THREADS=x" "HERD_WAIT=spin:abc"; do
            var=${bad%%=*} val=${bad#*=}
            key="env|$var"
            [ -n "${have_row[$key]:-}" ] || { rows+=("$key"); have_row[$key]=1; }
            out="$build/logs/$rt/env.$var.log"
            # shellcheck disable=SC2086
            env "$bad" $rtenv timeout -k 5 "$timeout_s" "$build/bin/api" >"$out" 2>&1
            rc=$?
            total=$((total + 1))
            if [ "$rc" = 1 ] && grep -q "$var" "$out" && grep -qF "\"$val\"" "$out" && ! grep -q '^ok ' "$out"; then
                verdict=pass why="rejected"
            else
                verdict=FAIL why="exit $rc, expected 1 and a message naming $var and \"$val\" before main: $(head -c 200 "$out" | tr '\n' ' ')"
                failed=$((failed + 1))
                failures+=("$rt env $var: $why")
            fi
            result["$rt|$key"]=$verdict
            printf '  %-10s %-26s %-8s %s\n' "env" "$var" "$verdict" "$why"
        done
    fi
    echo "   ($rt: $((SECONDS - t_rt)) s)"
done

# ---- summary -----------------------------------------------------------------------
echo
echo "== summary (logs in ${build#"$root"/}/logs/<runtime>/)"
printf '%-10s %-26s' program configuration
for rt in "${rt_labels[@]}"; do printf ' %-13s' "$rt"; done
echo
for key in "${rows[@]}"; do
    prog=${key%%|*} cfg=${key#*|}
    printf '%-10s %-26s' "$prog" "$cfg"
    for rt in "${rt_labels[@]}"; do printf ' %-13s' "${result["$rt|$key"]:--}"; done
    echo
done
echo
echo "$total runs, $failed failed, $xfails xfail checks (documented deviations of libomp and the system libgomp)"
if [ $failed -gt 0 ]; then
    echo "failures:"
    for f in "${failures[@]}"; do echo "  $f"; done
    exit 1
fi
exit 0
