//! The pool: persistent workers, fork-join regions, tasks and loops.
//!
//! [`Pool`] is a handle on a [`Registry`](registry::Registry); the global pool
//! is built on first use from the `HERD_*` environment. The calling thread of
//! any pool operation becomes the pool's master (participant 0) for the
//! duration of the call, pinned to the master's place; the pool's persistent
//! workers are participants `1..n`.

mod admit;
mod builder;
mod global;
mod idle;
mod info;
mod join;
mod lazy;
pub(crate) mod limits;
mod loops;
mod master;
mod port;
mod refused;
mod region;
mod registry;
mod report;
mod scope;
mod tree;
mod worker;
mod yields;

pub use builder::PoolBuilder;
pub use global::{global, global_is_set, provide_global};
pub(crate) use global::{global_registry, set_global};
pub use info::{PoolInfo, ShepherdInfo, WorkerInfo};
pub use join::join;
pub use loops::Schedule;
pub use region::{BroadcastContext, RegionTiming};
pub use scope::{scope, Scope};

pub use admit::Admit;
pub(crate) use idle::{wait_current, wait_current_admitting};
pub(crate) use lazy::without_lazy_joins;
pub(crate) use registry::Registry;
use std::ops::Range;
use std::sync::Arc;
pub(crate) use worker::{current_arc, slot_in, with_current};

/// A pool of participants; see the crate documentation.
pub struct Pool {
    registry: Arc<Registry>,
    /// The contention monitor (`HERD_THROTTLE=auto`), stopped before the
    /// workers are shut down.
    monitor: Option<Box<crate::throttle::Monitor>>,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("num_threads", &self.num_threads())
            .field("dispatch", &self.registry.dispatch)
            .finish()
    }
}

impl Pool {
    /// A builder with herd's defaults (the environment is *not* read; see
    /// [`PoolBuilder::from_env`]).
    pub fn builder() -> PoolBuilder {
        PoolBuilder::new()
    }

    /// Participants per region, master included.
    pub fn num_threads(&self) -> usize {
        self.registry.num_threads()
    }

    pub(crate) fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    /// What this pool decided: topology, places, worker→PU map, wake order.
    pub fn info(&self) -> PoolInfo {
        PoolInfo::of(&self.registry)
    }

    /// The task scheduler this pool runs (`HERD_SCHED`).
    pub fn scheduler(&self) -> crate::Sched {
        self.registry.sched_kind()
    }

    /// The pool's shepherds (locality domains).
    pub fn shepherds(&self) -> &crate::Shepherds {
        &self.registry.shepherds
    }

    /// Per-participant scheduling counters since the pool was built or
    /// [`reset_stats`](Self::reset_stats) was last called (exact when the
    /// pool is idle, approximate while it runs).
    pub fn stats(&self) -> Vec<crate::WorkerStats> {
        self.registry.counters.snapshot(&self.registry.shepherds.of)
    }

    /// Zeroes the scheduling counters (call while the pool is idle).
    pub fn reset_stats(&self) {
        self.registry.counters.reset();
    }

    /// The most workers of shepherd `shepherd` that currently take jobs.
    ///
    /// # Panics
    /// If `shepherd` is not a shepherd of this pool.
    pub fn active_limit(&self, shepherd: usize) -> usize {
        self.registry.active_limit(shepherd)
    }

    /// Lets at most `n` workers of shepherd `shepherd` take jobs (clamped to
    /// `1..=` its size; rank 0 always does). Takes effect at job and chunk
    /// boundaries — a running job is never pre-empted — and may be called at
    /// any time, from any thread, also while loops and task trees run.
    ///
    /// # Panics
    /// If `shepherd` is not a shepherd of this pool.
    pub fn set_active_limit(&self, shepherd: usize, n: usize) {
        self.registry.set_active_limit(shepherd, n);
    }

    /// The contention monitor, when the pool was built with
    /// [`Throttle::Auto`](crate::Throttle::Auto).
    pub fn monitor(&self) -> Option<&crate::throttle::Monitor> {
        self.monitor.as_deref()
    }

    /// Runs `f` with the calling thread as this pool's master, so that
    /// [`join`], [`scope`] and loops inside it use this pool.
    pub fn install<F, R>(&self, f: F) -> R
    where
        F: FnOnce() -> R + Send,
        R: Send,
    {
        self.registry.enter(f)
    }

    /// Runs `f` once on every participant (a fork-join region) and returns the
    /// results by participant index. From inside a running region this is a
    /// nested region and runs serialized on the caller alone.
    pub fn broadcast<F, R>(&self, f: F) -> Vec<R>
    where
        F: Fn(BroadcastContext) -> R + Sync,
        R: Send,
    {
        self.registry.enter_local(|| self.registry.broadcast(f, false).0)
    }

    /// As [`Pool::broadcast`], also returning the region's times (FPT and
    /// each participant's PCT) for [`crate::measure`].
    pub fn broadcast_timed<F, R>(&self, f: F) -> (Vec<R>, RegionTiming)
    where
        F: Fn(BroadcastContext) -> R + Sync,
        R: Send,
    {
        self.registry.enter_local(|| {
            let (r, t) = self.registry.broadcast(f, true);
            (r, t.expect("timing requested"))
        })
    }

    /// [`join`] on this pool.
    pub fn join<A, B, RA, RB>(&self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        self.install(|| join(a, b))
    }

    /// [`scope`] on this pool.
    pub fn scope<'scope, OP, R>(&self, body: OP) -> R
    where
        OP: FnOnce(&Scope<'scope>) -> R + Send,
        R: Send,
    {
        self.install(|| scope(body))
    }

    /// Calls `f(i)` for every `i` in `range`, divided among the participants by
    /// `schedule`. A panic in any iteration reaches the caller after the loop
    /// has completed.
    pub fn for_each<F>(&self, range: Range<usize>, schedule: Schedule, f: F)
    where
        F: Fn(usize) + Sync,
    {
        self.registry.enter_local(|| {
            self.registry.run_loop(range, schedule, &|_, chunk: Range<usize>| {
                for i in chunk {
                    f(i)
                }
            });
        })
    }

    /// Like [`Pool::for_each`], but hands each participant whole chunks
    /// (`f(start..end)`), so that the body can run its own tight (e.g.
    /// vectorised) inner loop over the chunk.
    pub fn for_each_chunk<F>(&self, range: Range<usize>, schedule: Schedule, f: F)
    where
        F: Fn(Range<usize>) + Sync,
    {
        self.registry.enter_local(|| {
            self.registry.run_loop(range, schedule, &|_, chunk: Range<usize>| f(chunk));
        })
    }

    /// Maps every index of `range` with `map` and combines the values with
    /// `reduce`, starting each participant from `identity`. Participants'
    /// partial results are combined in participant order.
    pub fn map_reduce<T, M, Red>(
        &self,
        range: Range<usize>,
        schedule: Schedule,
        map: M,
        identity: T,
        reduce: Red,
    ) -> T
    where
        T: Clone + Send + Sync,
        M: Fn(usize) -> T + Sync,
        Red: Fn(T, T) -> T + Sync,
    {
        self.registry.enter_local(|| map_reduce_in(&self.registry, range, schedule, &map, identity, &reduce))
    }
}

fn map_reduce_in<T, M, Red>(
    reg: &Registry,
    range: Range<usize>,
    schedule: Schedule,
    map: &M,
    identity: T,
    reduce: &Red,
) -> T
where
    T: Clone + Send + Sync,
    M: Fn(usize) -> T + Sync,
    Red: Fn(T, T) -> T + Sync,
{
    use std::sync::Mutex;
    // One accumulator per participant slot (nested loops split with `join`
    // and may touch any slot's accumulator, hence the mutex; it is taken once
    // per chunk, not per iteration).
    let partial: Vec<Mutex<Option<T>>> = (0..reg.num_threads()).map(|_| Mutex::new(None)).collect();
    reg.run_loop(range, schedule, &|slot, chunk: Range<usize>| {
        let mut acc = identity.clone();
        for i in chunk {
            acc = reduce(acc, map(i));
        }
        let mut p = partial[slot].lock().unwrap_or_else(|e| e.into_inner());
        *p = Some(match p.take() {
            None => acc,
            Some(prev) => reduce(prev, acc),
        });
    });
    partial
        .into_iter()
        .filter_map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()))
        .fold(identity, reduce)
}

impl Drop for Pool {
    fn drop(&mut self) {
        // The monitor only changes limits; stop it before the workers go.
        drop(self.monitor.take());
        report::report(&self.registry);
        self.registry.shut_down();
    }
}

/// The number of participants of the pool the calling thread works in (the
/// global pool's, outside any pool).
pub fn current_num_threads() -> usize {
    with_current(|cur| cur.map_or_else(|| global().num_threads(), |(reg, _)| reg.num_threads()))
}

/// The participant index of the calling thread in its pool, if it is one.
pub fn current_thread_index() -> Option<usize> {
    with_current(|cur| cur.map(|(_, slot)| slot))
}
