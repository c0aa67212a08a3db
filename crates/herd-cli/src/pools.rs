//! Building several pools in one process.
//!
//! `Topology::detect` sees only the PUs in the calling thread's affinity
//! mask, and the first region of a bound pool pins the calling thread (the
//! master) to one PU. A pool built after that from the environment would
//! therefore see a single PU. Every command that builds more than one pool
//! detects the topology once, up front, and hands it to each builder.

use crate::CliResult;
use herd::PoolBuilder;

/// The `HERD_*` settings with the topology read once, now.
pub fn base_builder() -> CliResult<PoolBuilder> {
    Ok(base_builder_and_llc()?.0)
}

/// As [`base_builder`], also returning the size of the last-level cache.
pub fn base_builder_and_llc() -> CliResult<(PoolBuilder, Option<u64>)> {
    // Settings first, so that an invalid variable is reported as such.
    let builder = PoolBuilder::from_env()?;
    let topology = herd::Topology::from_env()?;
    let llc = topology.last_level_cache();
    Ok((builder.topology(topology), llc))
}
