//! Ranks that share a node share its cores. herd pins each participant, and every rank's
//! pool would otherwise start on the same first places: with `mpirun --bind-to none` (or a
//! launcher that binds nothing), two ranks of one thread each both pin to PU 0 and run at
//! the speed of one core. When the launcher left the process unbound (its affinity mask is
//! every usable PU of the machine) and several ranks run on the node, rank ℓ of L (its index
//! in `MPI_COMM_TYPE_SHARED`) builds herd's global pool on the ℓ-th of L contiguous shares of
//! the node's cores, in topology order (so a share stays within a package when it can);
//! with more ranks than cores, rank ℓ gets core ℓ mod C.
//! A launcher that binds (`--bind-to core/socket`, Slurm's `--cpu-bind`) or an explicit
//! `HERD_PLACES` is left alone.

use crate::error::Result;
use herd::Topology;

/// What [`claim_share`] decided, for reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NodeShare {
    /// One rank on this node: the pool uses the whole node.
    Alone,
    /// The launcher bound this process, or `HERD_PLACES` is set: left as it is.
    Given,
    /// The global pool was built on this share of the node's cores (OS PU indices).
    Claimed(Vec<u32>),
    /// Not applied, and why (the global pool already existed, a synthetic topology).
    Skipped(String),
}

/// The OpenMP place list of `cores` (one place per core, its PUs by OS index).
fn places(topo: &Topology, cores: &[usize]) -> String {
    cores
        .iter()
        .map(|&c| {
            let pus: Vec<String> =
                topo.pus().iter().filter(|p| p.core == c).map(|p| p.os_index.to_string()).collect();
            format!("{{{}}}", pus.join(","))
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// The cores (topology order) of share `local` out of `ranks` on a node of `cores`.
pub(crate) fn share(cores: &[usize], local: usize, ranks: usize) -> &[usize] {
    let c = cores.len();
    &cores[local * c / ranks..(local + 1) * c / ranks]
}

/// The number of PUs in the calling thread's affinity mask.
fn affinity_count() -> Option<usize> {
    // SAFETY: cpu_set_t is plain data; sched_getaffinity fills it for the calling thread.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: the size passed is the size of `set`.
    let rc = unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    // SAFETY: `set` was filled by the successful call.
    (rc == 0).then(|| unsafe { libc::CPU_COUNT(&set) } as usize)
}

/// Builds herd's global pool on this rank's share of the node (see the module docs).
pub(crate) fn claim_share(local: usize, ranks: usize) -> Result<NodeShare> {
    if ranks <= 1 {
        return Ok(NodeShare::Alone);
    }
    if std::env::var_os("HERD_PLACES").is_some() {
        return Ok(NodeShare::Given);
    }
    let topo = Topology::from_env()?;
    if topo.is_synthetic() {
        return Ok(NodeShare::Skipped("synthetic topology".into()));
    }
    if topo.pus().len() < topo.total_pus() || affinity_count().is_some_and(|n| n < topo.total_pus()) {
        return Ok(NodeShare::Given);
    }
    let mut cores: Vec<usize> = topo.pus().iter().map(|p| p.core).collect();
    cores.dedup();
    // More ranks than cores (oversubscribed): rank l gets core l mod C, so the ranks at
    // least spread evenly instead of all starting on the first core.
    let one;
    let mine = if cores.len() < ranks {
        one = [cores[local % cores.len()]];
        &one[..]
    } else {
        share(&cores, local, ranks)
    };
    let spec = places(&topo, mine);
    let pus: Vec<u32> = topo.pus().iter().filter(|p| mine.contains(&p.core)).map(|p| p.os_index).collect();
    match herd::PoolBuilder::from_env()?.places(spec).build_global() {
        Ok(()) => Ok(NodeShare::Claimed(pus)),
        Err(e) => Ok(NodeShare::Skipped(format!("herd's global pool: {e}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_cover_the_cores_once() {
        let cores: Vec<usize> = (0..10).collect();
        for ranks in 1..=10 {
            let all: Vec<usize> = (0..ranks).flat_map(|l| share(&cores, l, ranks).to_vec()).collect();
            assert_eq!(all, cores, "{ranks} ranks");
            for l in 0..ranks {
                let n = share(&cores, l, ranks).len();
                assert!(n == 10 / ranks || n == 10 / ranks + 1);
            }
        }
    }

    #[test]
    fn places_name_each_cores_pus() {
        let topo = Topology::synthetic("pack:1 core:4 pu:2").unwrap();
        let s = places(&topo, &[1, 2]);
        assert_eq!(s.matches('{').count(), 2, "{s}");
        assert_eq!(s.split(',').count(), 4, "{s}");
    }
}
