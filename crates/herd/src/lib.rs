//! # herd — a hardware-aware parallel runtime for multicore nodes
//!
//! herd keeps one persistent worker pinned to each place of the machine, runs
//! the calling thread as the last participant of every region (master-last
//! dispatch), and balances task-parallel work between *shepherds* (locality
//! domains sharing a cache): by default one shared LIFO per shepherd with
//! bulk steals between shepherds (MAESTRO's `mts`), or per-worker
//! work-stealing deques (`ws`), one central queue, or round-robin FIFOs.
//! Lightweight threads ([`ult`]) block on full/empty bits ([`Feb`]) and
//! [`Barrier`]s by yielding their worker; a contention monitor
//! ([`throttle`]) can limit the active workers per shepherd.
//!
//! ```
//! let pool = herd::Pool::builder().num_threads(2).build().unwrap();
//! let (a, b) = pool.install(|| herd::join(|| 1 + 1, || 2 + 2));
//! assert_eq!((a, b), (2, 4));
//! let sum = pool.map_reduce(0..1000, herd::Schedule::default(), |i| i as u64, 0, |a, b| a + b);
//! assert_eq!(sum, 499_500);
//! ```
//!
//! Layers, bottom up: [`topology`] (what the machine is), [`placement`] (which
//! participant runs where, wake order), `sync` (futex sleep/wake, latches),
//! [`shepherds`] (locality domains), `sched` (the task-scheduler boundary
//! and the four schedulers), `pool`
//! (workers, dispatch strategies, fork-join regions), then the user-facing
//! [`join`], [`scope`], loops ([`Pool::for_each`], [`Pool::map_reduce`]) and
//! measurement ([`measure`]).

#![warn(missing_docs)]

mod block;
pub mod config;
mod error;
pub mod measure;
/// Memory checks for callers that size their work up front; the thread
/// limits are checked by [`PoolBuilder::build`] itself.
pub mod limits {
    pub use crate::pool::limits::{bytes, check_memory, mem_available, page_size};
}
pub mod partition;
pub mod placement;
mod pool;
pub mod rt;
mod sched;
pub mod shepherds;
mod sync;
pub mod throttle;
pub mod topology;
pub mod trace;
pub mod ult;

pub use block::{Barrier, Feb};
pub use config::{Bind, Config, Dispatch, DisplayEnv, Sched, ShepherdLevel, Throttle, WaitPolicy};
pub use error::{Error, Result};
pub use pool::{
    current_num_threads, current_thread_index, global, global_is_set, join, provide_global, scope,
    BroadcastContext, Pool, PoolBuilder, PoolInfo, RegionTiming, Schedule, Scope, ShepherdInfo, WorkerInfo,
};
pub use sched::WorkerStats;
pub use shepherds::Shepherds;
pub use topology::Topology;
