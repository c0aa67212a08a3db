# Sourced by the bench/omp_*.sh scripts that run one program under each
# OpenMP runtime in alternating rounds. After `omp_runtimes DIR`:
#   $rts                 libgomp, libomp (if LLVM's libomp.so.5 is installed,
#                        linked as DIR/libomp/libgomp.so.1), herd
#                        (target/release/gomp), and herd-old if HERD_OLD names
#                        an older build's gomp directory
#   omp_runtime_dir RT   the LD_LIBRARY_PATH that selects RT (empty: libgomp)
#   median               the median of the numbers on standard input
omp_runtimes() {
    mkdir -p "$1/libomp"
    omp_libomp_dir=$1/libomp
    local libomp
    libomp=$(ls /usr/lib/llvm-*/lib/libomp.so.5 2>/dev/null | head -1 || true)
    rts="libgomp herd"
    [ -n "$libomp" ] && ln -sfn "$libomp" "$1/libomp/libgomp.so.1" && rts="libgomp libomp herd"
    [ -n "${HERD_OLD:-}" ] && rts="$rts herd-old"
    return 0
}

omp_runtime_dir() {
    case $1 in
    libgomp) echo "" ;;
    libomp) echo "$omp_libomp_dir" ;;
    herd) echo "$PWD/target/release/gomp" ;;
    herd-old) echo "$HERD_OLD" ;;
    esac
}

median() {
    sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'
}

# omp_rounds ROUNDS UNIT CMD...: runs CMD (a command or shell function that
# prints "CASE VALUE" lines) under each runtime of $rts, alternately ROUNDS
# times, LD_LIBRARY_PATH selecting the runtime; prints every run's values and
# the median over rounds per runtime and case (the VM's speed drifts between
# rounds: only alternating medians compare).
omp_rounds() {
    local rounds=$1 unit=$2 r rt case v got key
    shift 2
    declare -A all
    for r in $(seq "$rounds"); do
        for rt in $rts; do
            got=0
            while read -r case v; do
                all[$rt/$case]+="$v "
                got=1
                echo "round $r $rt $case $v $unit"
            done < <(LD_LIBRARY_PATH=$(omp_runtime_dir "$rt") "$@")
            [ "$got" = 1 ] || { echo "$rt: no result" >&2; return 1; }
        done
    done
    for key in $(printf '%s\n' "${!all[@]}" | sort); do
        echo "median $key $(printf '%s\n' ${all[$key]} | median) $unit"
    done
}
