//! Tuned copy and pack (copy-pack-overlap-blue-horizon.txt §§3–4,
//! hardware-aware-thread-affinity.txt §3.4/§4): a topology-aware parallel copy whose
//! participants are chosen by the size of the data ([`parallel`]), pack/unpack of
//! strided blocks on the same rule ([`pack`]), and the baselines they are measured
//! against — MPI's derived datatypes ([`mpi_pack`]) and STREAM's copy kernel
//! ([`stream`]) — and a strided block exchanged with a peer rank whole ([`exchange`]) or
//! as a pipeline of chunks ([`pipelined`]), or through a shared-memory window when the peer
//! shares the node ([`shared_window`]). The rules and the measured numbers are in this
//! folder's `README.md`.

pub mod exchange;
pub mod mpi_pack;
pub mod pack;
pub mod parallel;
pub mod pipelined;
pub mod shared_window;
pub mod stream;

pub use pack::{pack, pack_part_with, pack_with, unpack, unpack_part_with, unpack_with, Vector};
pub use parallel::{global_copier, parallel_copy, plan, plan_for, Chunk, Copier, CopyPlan, Regime};
