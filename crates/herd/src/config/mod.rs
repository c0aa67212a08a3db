//! Run-time settings, named like OpenMP's: each `HERD_*` variable has a
//! builder method of the same meaning (see [`crate::PoolBuilder`]).
//!
//! [`Config::from_env`] reads the environment; every invalid value is an
//! [`Error::InvalidSetting`](crate::Error::InvalidSetting) naming the variable,
//! the value and the accepted forms. Nothing is silently ignored.

mod env;

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
