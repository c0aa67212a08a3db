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
