# Sourced by the bench/mpi*.sh scripts: Open MPI on this one machine (as root,
# loopback only, ranks not bound so herd places its own threads), herd's
# executable, and the load average every result line records (the machine is
# shared).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_base_warn_component_unused=0
MPIRUN="mpirun --oversubscribe --bind-to none --mca btl self,vader,tcp --mca btl_tcp_if_include lo"
HERD=target/release/herd
load() { cut -d' ' -f1-3 /proc/loadavg; }
