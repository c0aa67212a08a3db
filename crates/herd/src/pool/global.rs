//! The process's global pool: the one [`join`](super::join),
//! [`scope`](super::scope) and library routines use outside any pool, built
//! on first use from the `HERD_*` environment or provided by a host runtime
//! (herd's OpenMP runtime provides its root pool).

use super::{Pool, PoolBuilder, Registry};
use std::sync::{Arc, OnceLock};

/// The process's global pool: built here, or provided by a host runtime.
/// One `OnceLock` holds either, so that building and providing go through a
/// single initialisation and can never both happen (a check of one cell
/// followed by a set of another could let a `global()` on another thread
/// build a second pool in between).
enum Global {
    /// Built from the `HERD_*` environment (or by
    /// [`PoolBuilder::build_global`]).
    Built(Pool),
    /// Where the pool comes from when a host runtime owns the process's
    /// workers (see [`provide_global`]).
    Provided(fn() -> &'static Pool),
}

static GLOBAL: OnceLock<Global> = OnceLock::new();

/// The global pool: the one a host runtime provides ([`provide_global`]),
/// else built on first use from the `HERD_*` environment.
///
/// # Panics
/// If the environment holds an invalid setting; the message names the
/// variable, the value and the accepted forms. Use
/// [`PoolBuilder::build_global`] to handle that as an error instead.
pub fn global() -> &'static Pool {
    let global = GLOBAL.get_or_init(|| match PoolBuilder::from_env().and_then(|b| b.build()) {
        Ok(pool) => Global::Built(pool),
        Err(e) => panic!("herd: cannot build the global pool: {e}"),
    });
    match global {
        Global::Built(pool) => pool,
        Global::Provided(source) => source(),
    }
}

/// Makes `source` the global pool's provider: from now on [`global`] — and
/// so [`join`], [`scope`] and every library routine called from a thread
/// outside any pool — runs on the pool `source()` returns, instead of a pool
/// of its own. This is how one process keeps **one set of workers**: herd's
/// OpenMP runtime provides its root pool (the threads its parallel regions
/// run on), so that herd-la's routines called from the program's serial
/// code run on those threads and not on a second team
/// (`thread-management-overhead-atlas.txt` §IV-A). `source` may return a
/// different (larger) pool over time; each call uses the one it returns.
///
/// # Errors
/// When the global pool was already built, or a provider already set: two
/// pools would then serve one process.
pub fn provide_global(source: fn() -> &'static Pool) -> crate::Result<()> {
    GLOBAL.set(Global::Provided(source)).map_err(|_| {
        crate::Error::Placement(match GLOBAL.get() {
            Some(Global::Provided(_)) => "the global pool already has a provider".into(),
            _ => "the global pool was already built; a provider must be set before its first use".into(),
        })
    })
}

/// True once the global pool exists or has a provider: [`global`] will not
/// build one from the environment.
pub fn global_is_set() -> bool {
    GLOBAL.get().is_some()
}

pub(crate) fn global_registry() -> &'static Arc<Registry> {
    &global().registry
}

/// Makes `pool` the global pool, unless one was built or provided already
/// (then `pool` comes back).
pub(crate) fn set_global(pool: Pool) -> Result<(), Pool> {
    GLOBAL.set(Global::Built(pool)).map_err(|g| match g {
        Global::Built(pool) => pool,
        Global::Provided(_) => unreachable!("set_global hands in a built pool"),
    })
}
