//! `herd topo`: the topology and the placement of a pool built from the
//! environment.

use crate::CliResult;

/// Builds a pool from the `HERD_*` environment and prints what it decided.
pub fn run(json: bool) -> CliResult {
    let pool = herd::PoolBuilder::from_env()?.build()?;
    let info = pool.info();
    if json {
        println!("{}", serde_json::to_string_pretty(&info)?);
    } else {
        print!("{}", info.render(true));
    }
    Ok(())
}
