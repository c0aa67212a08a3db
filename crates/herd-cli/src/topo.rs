//! `herd topo`: the topology and the placement of a pool built from the
//! environment, and (as text) the micro-kernel herd-la's GEMM uses on this
//! CPU.

use crate::CliResult;

/// Builds a pool from the `HERD_*` environment and prints what it decided.
pub fn run(json: bool) -> CliResult {
    let pool = herd::PoolBuilder::from_env()?.build()?;
    let info = pool.info();
    if json {
        println!("{}", serde_json::to_string_pretty(&info)?);
    } else {
        print!("{}", info.render(true));
        println!("herd: dense kernels (herd-la GEMM): {}", herd_la::gemm_kernel());
    }
    Ok(())
}
