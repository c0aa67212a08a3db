//! Run-time settings, named like OpenMP's: each `HERD_*` variable has a
//! builder method of the same meaning (see [`crate::PoolBuilder`]).
//!
//! [`Config::from_env`] reads the environment; every invalid value is an
//! [`Error::InvalidSetting`](crate::Error::InvalidSetting) naming the variable,
//! the value and the accepted forms. Nothing is silently ignored.

mod env;
pub mod parse;

pub(crate) use env::{suggest, unknown_herd_vars};

use crate::topology::PlacesSpec;
use std::path::PathBuf;
use std::time::Duration;

/// `HERD_BIND`: whether and how participants are bound to places.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Bind {
    /// No binding at all.
    False,
    /// Bind (same as `close`).
    #[default]
    True,
    /// Consecutive places, starting at the master's.
    Close,
    /// Participants spread evenly over the places.
    Spread,
}

/// `HERD_DISPATCH`: how a fork-join region reaches its participants — the six
/// strategies of the ATLAS thread-management paper.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Dispatch {
    /// Launch and join: threads created and joined for every region.
    Lj,
    /// Launch and join with affinity.
    Lja,
    /// Launch and join with affinity, master last.
    Ljaml,
    /// Persistent workers.
    Pw,
    /// Persistent workers with affinity.
    Pwa,
    /// Persistent workers with affinity, master last (the default).
    #[default]
    Pwaml,
}

impl Dispatch {
    /// All six, in the paper's order.
    pub const ALL: [Dispatch; 6] =
        [Dispatch::Lj, Dispatch::Lja, Dispatch::Ljaml, Dispatch::Pw, Dispatch::Pwa, Dispatch::Pwaml];

    /// Workers persist between regions.
    pub fn persistent(self) -> bool {
        matches!(self, Dispatch::Pw | Dispatch::Pwa | Dispatch::Pwaml)
    }

    /// Threads are bound to places.
    pub fn affinity(self) -> bool {
        !matches!(self, Dispatch::Lj | Dispatch::Pw)
    }

    /// The master computes the last share itself, after every other participant
    /// has been signalled.
    pub fn master_last(self) -> bool {
        matches!(self, Dispatch::Ljaml | Dispatch::Pwaml)
    }

    /// The name used by `HERD_DISPATCH` and in reports (`pwaml`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Dispatch::Lj => "lj",
            Dispatch::Lja => "lja",
            Dispatch::Ljaml => "ljaml",
            Dispatch::Pw => "pw",
            Dispatch::Pwa => "pwa",
            Dispatch::Pwaml => "pwaml",
        }
    }
}

impl std::fmt::Display for Dispatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name().to_uppercase())
    }
}

/// `HERD_WAIT`: what an idle participant does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WaitPolicy {
    /// Spin without ever sleeping.
    Active,
    /// Sleep at once.
    Passive,
    /// Spin for this long, then sleep on a futex.
    Spin(Duration),
}

impl Default for WaitPolicy {
    fn default() -> Self {
        WaitPolicy::Spin(Duration::from_micros(DEFAULT_SPIN_MICROS))
    }
}

/// Default spin time before sleeping, in microseconds.
pub const DEFAULT_SPIN_MICROS: u64 = 200;

/// `HERD_DISPLAY_ENV`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DisplayEnv {
    /// Print nothing.
    #[default]
    False,
    /// Print the resolved configuration, topology summary and worker→PU map.
    True,
    /// As `True`, plus the full topology tree.
    Verbose,
}

/// `HERD_SCHED`: how tasks are queued and balanced (see `sched`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Sched {
    /// MAESTRO/Qthreads' multi-threaded shepherds on per-worker deques: a
    /// worker pushes and pops its own deque (no lock, no shared line); an
    /// idle one steals one job from a sibling of its shepherd first; when
    /// the shepherd runs dry, one worker of it (a ticket) steals a chunk of
    /// the oldest jobs of the nearest non-empty shepherd into its own deque,
    /// where its siblings find them.
    #[default]
    Mts,
    /// One deque per worker, LIFO locally, FIFO steals from random victims
    /// (flat, Cilk style).
    Ws,
    /// One queue shared by every worker.
    Central,
    /// One FIFO queue per shepherd, tasks placed round-robin, no stealing
    /// (Qthreads' original scheduler).
    Fifo,
    /// One shared LIFO queue per shepherd under a lock, with the same
    /// one-stealer-per-shepherd bulk remote steals (MAESTRO's MTS as the
    /// paper builds it; pays only for small shepherds).
    Lifo,
}

impl Sched {
    /// All five, in the order of the documentation.
    pub const ALL: [Sched; 5] = [Sched::Mts, Sched::Ws, Sched::Central, Sched::Fifo, Sched::Lifo];

    /// The name used by `HERD_SCHED` and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Sched::Mts => "mts",
            Sched::Ws => "ws",
            Sched::Central => "central",
            Sched::Fifo => "fifo",
            Sched::Lifo => "lifo",
        }
    }
}

impl std::fmt::Display for Sched {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// `HERD_SHEPHERD`: the topology level that makes one shepherd (locality
/// domain). Default: the level sharing the last-level cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ShepherdLevel {
    /// One shepherd per NUMA node.
    Numa,
    /// One shepherd per package (socket).
    Package,
    /// One shepherd per L3 cache.
    L3,
    /// One shepherd per L2 cache.
    L2,
    /// One shepherd per core.
    Core,
}

impl ShepherdLevel {
    /// The name used by `HERD_SHEPHERD` and in reports.
    pub fn name(self) -> &'static str {
        match self {
            ShepherdLevel::Numa => "numa",
            ShepherdLevel::Package => "package",
            ShepherdLevel::L3 => "l3",
            ShepherdLevel::L2 => "l2",
            ShepherdLevel::Core => "core",
        }
    }
}

/// `HERD_THROTTLE`: the limit on active workers per shepherd.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Throttle {
    /// Every worker is active (the default).
    #[default]
    Off,
    /// A contention monitor sets the limit (hardware counters where the
    /// kernel allows, else the software model; see `throttle`).
    Auto,
    /// At most this many active workers per shepherd (at least 1).
    Fixed(usize),
}

/// Default stack of a lightweight thread (`HERD_STACK_SIZE`): 64 KiB.
pub const DEFAULT_ULT_STACK: usize = 64 << 10;

/// Settings as given (by the environment or the builder); `None` means "herd
/// decides". Resolution against the topology happens when a pool is built.
#[derive(Clone, Debug, Default)]
pub struct Config {
    /// `HERD_NUM_THREADS`: participants in a region, master included.
    pub num_threads: Option<usize>,
    /// `HERD_PLACES`.
    pub places: Option<PlacesSpec>,
    /// `HERD_BIND`.
    pub bind: Option<Bind>,
    /// `HERD_DISPATCH`.
    pub dispatch: Option<Dispatch>,
    /// `HERD_WAIT`.
    pub wait: Option<WaitPolicy>,
    /// `HERD_RESERVE`: cores left idle for the OS (taken from the end of the machine).
    pub reserve: Option<usize>,
    /// `HERD_DISPLAY_ENV`.
    pub display_env: Option<DisplayEnv>,
    /// `HERD_TOPOLOGY`: an hwloc synthetic description.
    pub topology: Option<String>,
    /// `HERD_TRACE`: where to write a Chrome trace-event JSON file.
    pub trace: Option<PathBuf>,
    /// Stack size of each persistent worker, in bytes (no `HERD_*` twin;
    /// set by the builder or by an embedding runtime, e.g. from
    /// `OMP_STACKSIZE`). `None`: the Rust default (2 MiB).
    pub stack_size: Option<usize>,
    /// `HERD_SCHED`.
    pub sched: Option<Sched>,
    /// `HERD_SHEPHERD`.
    pub shepherd: Option<ShepherdLevel>,
    /// `HERD_WORKERS_PER_SHEPHERD`: split each shepherd into groups of at
    /// most this many workers.
    pub workers_per_shepherd: Option<usize>,
    /// `HERD_STEAL_CHUNK`: tasks taken by one remote steal under `mts`
    /// (default: the workers of the stealing shepherd).
    pub steal_chunk: Option<usize>,
    /// `HERD_THROTTLE`.
    pub throttle: Option<Throttle>,
    /// `HERD_STACK_SIZE`: stack of each lightweight thread, in bytes. The
    /// stacks are pooled for the whole process, so this is read once from
    /// the environment by the first lightweight thread (`herd::ult`), not
    /// per pool; it has no builder method.
    pub ult_stack_size: Option<usize>,
}

impl Config {
    /// Reads every `HERD_*` variable from the process environment.
    pub fn from_env() -> crate::Result<Config> {
        Config::from_lookup(|name| std::env::var(name).ok())
    }

    /// Reads settings through `lookup` (a variable name to its value), so that
    /// tests and embedders need not touch the process environment.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> crate::Result<Config> {
        env::parse(&lookup)
    }
}
