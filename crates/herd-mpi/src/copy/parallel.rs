//! Topology-aware parallel copy: how many participants a copy of a given size gets, which
//! ones (by the machine's topology) and which cache-line-aligned byte range each copies.
//!
//! The rule (hardware-aware-thread-affinity.txt §3.4/§4; the numbers are in `README.md`):
//! * below [`SEQUENTIAL_BYTES`] the caller copies alone (a fork-join region costs more
//!   than it saves);
//! * otherwise one participant per [`MIN_BYTES_PER_THREAD`] bytes, at most one per L2
//!   cache (a memory-bound copy gains nothing from a second thread on a core or L2 that
//!   already streams);
//! * **in cache** (source and destination together fit the caller's last-level cache):
//!   only participants sharing the caller's last-level cache, nearest first — they find
//!   the data hot;
//! * **out of cache**: participants on distinct L2s, **distant first**: after the caller,
//!   the packages farthest from it, taking one L2 from each package in turn, the
//!   caller's own package last, so that every memory controller is used before any one
//!   gets a second stream;
//! * chunk boundaries fall on 64-byte cache lines of the destination, so no two
//!   participants write one line.

use crate::{MpiError, Result};
use herd::topology::{distance, Distance, Pu};
use herd::{Pool, Topology};
use serde::Serialize;
use std::ops::Range;
use std::sync::OnceLock;

/// A cache line, the unit of every chunk boundary.
pub const LINE: usize = 64;
/// Copies smaller than this run on the caller alone.
pub const SEQUENTIAL_BYTES: usize = 256 << 10;
/// Each participant of a parallel copy gets at least this many bytes.
pub const MIN_BYTES_PER_THREAD: usize = 128 << 10;

/// Which case of the rule a plan falls in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Regime {
    /// The caller copies alone.
    Sequential,
    /// Source and destination fit the caller's last-level cache: nearest participants.
    InCache,
    /// Larger than the cache: participants on distinct L2s, distant first.
    OutOfCache,
}

/// One participant's share of a copy.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Chunk {
    /// The pool participant (0 is the caller).
    pub participant: usize,
    /// The topology PU ([`Pu::index`]) it runs on.
    pub pu: usize,
    /// The bytes it copies, as offsets into the buffers.
    pub bytes: Range<usize>,
}

/// Who copies what.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CopyPlan {
    /// Total bytes.
    pub bytes: usize,
    /// The case of the rule.
    pub regime: Regime,
    /// The shares, in byte order; they partition `0..bytes`.
    pub chunks: Vec<Chunk>,
}

impl CopyPlan {
    /// The number of participants that copy.
    pub fn threads(&self) -> usize {
        self.chunks.len()
    }
}

/// The plan for `bytes` on `topo` with one participant per PU, participant `i` on PU `i`
/// (the caller on PU 0) and a cache-line-aligned destination.
pub fn plan(bytes: usize, topo: &Topology) -> CopyPlan {
    let participants: Vec<usize> = (0..topo.pus().len()).collect();
    plan_for(bytes, 0, topo, &participants)
}

/// The plan for `bytes` on `topo` where participant `i` runs on PU `participant_pus[i]`
/// (participant 0 is the caller) and the destination reaches a cache-line boundary after
/// `head` bytes (`head < 64`).
///
/// # Panics
/// If `participant_pus` is empty or names a PU `topo` does not have.
pub fn plan_for(bytes: usize, head: usize, topo: &Topology, participant_pus: &[usize]) -> CopyPlan {
    let llc = topo.cache_size(3).or_else(|| topo.cache_size(2));
    plan_on(bytes, head, topo.pus(), llc, participant_pus)
}

fn plan_on(bytes: usize, head: usize, pus: &[Pu], llc: Option<u64>, participant_pus: &[usize]) -> CopyPlan {
    assert!(!participant_pus.is_empty(), "a copy plan needs at least the caller");
    let master = &pus[participant_pus[0]];
    let sequential = || CopyPlan {
        bytes,
        regime: Regime::Sequential,
        chunks: vec![Chunk { participant: 0, pu: master.index, bytes: 0..bytes }],
    };
    let wanted = (bytes / MIN_BYTES_PER_THREAD).max(1);
    if bytes < SEQUENTIAL_BYTES || wanted == 1 || participant_pus.len() == 1 || head >= bytes {
        return sequential();
    }
    let in_cache = llc.is_some_and(|c| 2 * bytes as u128 <= c as u128);
    let order = if in_cache {
        nearest_sharing_llc(pus, participant_pus)
    } else {
        distant_first(pus, participant_pus)
    };
    let n = wanted.min(order.len());
    if n <= 1 {
        return sequential();
    }
    let body = bytes - head;
    let cut = |t: usize| -> usize {
        if t == 0 {
            0
        } else if t == n {
            bytes
        } else {
            let off = (body as u128 * t as u128 / n as u128) as usize;
            head + off / LINE * LINE
        }
    };
    let chunks = (0..n)
        .map(|t| Chunk { participant: order[t], pu: participant_pus[order[t]], bytes: cut(t)..cut(t + 1) })
        .collect();
    CopyPlan { bytes, regime: if in_cache { Regime::InCache } else { Regime::OutOfCache }, chunks }
}

/// The caller, then participants sharing its last-level cache (its L3, else its L2, else
/// its package), one per core, nearest first.
fn nearest_sharing_llc(pus: &[Pu], participant_pus: &[usize]) -> Vec<usize> {
    let m = &pus[participant_pus[0]];
    let shares = |p: &Pu| match (m.l3, p.l3) {
        (Some(a), Some(b)) => a == b,
        _ => match (m.l2, p.l2) {
            (Some(a), Some(b)) if m.l3.is_none() => a == b,
            _ => m.package == p.package,
        },
    };
    let mut cand: Vec<(Distance, usize)> = (1..participant_pus.len())
        .filter(|&i| shares(&pus[participant_pus[i]]))
        .map(|i| (distance(m, &pus[participant_pus[i]]), i))
        .collect();
    cand.sort();
    let mut cores = vec![m.core];
    let mut order = vec![0];
    for (_, i) in cand {
        let c = pus[participant_pus[i]].core;
        if !cores.contains(&c) {
            cores.push(c);
            order.push(i);
        }
    }
    order
}

/// The caller, then one participant per L2 (per core where the topology has no L2),
/// packages farthest from the caller first, one L2 from each package in turn.
fn distant_first(pus: &[Pu], participant_pus: &[usize]) -> Vec<usize> {
    let m = &pus[participant_pus[0]];
    let domain = |p: &Pu| p.l2.map_or((1usize, p.core), |l| (0, l));
    let mut taken = vec![domain(m)];
    // (package distance from the caller, package) -> its participants, one per domain
    let mut packages: Vec<(Distance, usize, Vec<usize>)> = Vec::new();
    for i in 1..participant_pus.len() {
        let p = &pus[participant_pus[i]];
        if taken.contains(&domain(p)) {
            continue;
        }
        taken.push(domain(p));
        let d = distance(m, p);
        match packages.iter_mut().find(|(_, pk, _)| *pk == p.package) {
            Some((dist, _, v)) => {
                *dist = (*dist).max(d);
                v.push(i)
            }
            None => packages.push((d, p.package, vec![i])),
        }
    }
    // farthest package first; within a package, farthest participant first
    packages.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    for (_, _, v) in packages.iter_mut() {
        v.sort_by_key(|&i| (std::cmp::Reverse(distance(m, &pus[participant_pus[i]])), i));
    }
    let mut order = vec![0];
    let mut round = 0;
    loop {
        let mut any = false;
        for (_, _, v) in &packages {
            if let Some(&i) = v.get(round) {
                order.push(i);
                any = true;
            }
        }
        if !any {
            break order;
        }
        round += 1;
    }
}

/// Runs planned copies on a pool.
pub struct Copier<'p> {
    pool: &'p Pool,
    pus: Vec<Pu>,
    llc: Option<u64>,
    participant_pus: Vec<usize>,
    max_threads: usize,
}

impl<'p> Copier<'p> {
    /// A copier for `pool`'s participants, placed by the pool's own layout.
    pub fn new(pool: &'p Pool) -> Copier<'p> {
        let info = pool.info();
        let participant_pus = info
            .workers
            .iter()
            .map(|w| info.pus.iter().position(|p| p.os_index == w.pu).unwrap_or(w.index % info.pus.len()))
            .collect();
        let llc = info.cache_sizes[2].or(info.cache_sizes[1]);
        Copier { pool, pus: info.pus, llc, participant_pus, max_threads: usize::MAX }
    }

    /// Caps the participants of every copy (for measurements of the rule itself).
    pub fn with_max_threads(mut self, n: usize) -> Copier<'p> {
        self.max_threads = n.max(1);
        self
    }

    /// The plan for `bytes` with a destination `head` bytes before a cache-line boundary.
    pub fn plan(&self, bytes: usize, head: usize) -> CopyPlan {
        let k = self.participant_pus.len().min(self.max_threads);
        plan_on(bytes, head, &self.pus, self.llc, &self.participant_pus[..k])
    }

    /// Copies `src` into `dst` by the plan for their size; returns the plan.
    pub fn copy<T: Copy + Send + Sync>(&self, dst: &mut [T], src: &[T]) -> Result<CopyPlan> {
        if dst.len() != src.len() {
            return Err(MpiError::Invalid(format!(
                "parallel_copy: the destination has {} elements and the source {}; they must be equal",
                dst.len(),
                src.len()
            )));
        }
        let size = std::mem::size_of::<T>();
        let head = (LINE - dst.as_ptr() as usize % LINE) % LINE;
        let plan = self.plan(std::mem::size_of_val(dst), head);
        let (d, s) = (dst.as_mut_ptr() as usize, src.as_ptr() as usize);
        self.run_ranges(&plan, dst.len(), size, |r| dst_src_copy(d, s, size, r));
        Ok(plan)
    }

    /// Calls `work(elements)` for every chunk of `plan` (bytes turned into element ranges
    /// of `len` elements of `size` bytes) on the chunk's participant; the ranges are
    /// disjoint and cover `0..len`.
    pub(crate) fn run_ranges(
        &self,
        plan: &CopyPlan,
        len: usize,
        size: usize,
        work: impl Fn(Range<usize>) + Sync,
    ) {
        let to_elem = |b: usize| b.checked_div(size).unwrap_or(0).min(len);
        let range = |c: &Chunk| {
            let end = if c.bytes.end == plan.bytes { len } else { to_elem(c.bytes.end) };
            to_elem(c.bytes.start)..end
        };
        if plan.chunks.len() <= 1 {
            work(0..len);
            return;
        }
        self.pool.broadcast(|ctx| {
            for c in plan.chunks.iter().filter(|c| c.participant == ctx.index()) {
                work(range(c));
            }
        });
    }
}

/// Copies elements `r` from the source at address `src` to the destination at `dst`.
fn dst_src_copy(dst: usize, src: usize, size: usize, r: Range<usize>) {
    // SAFETY: `dst` and `src` are the addresses of a `&mut [T]` and a `&[T]` of equal
    // length (checked by `Copier::copy`), alive for the whole region; `r` lies within that
    // length and the plan's ranges are disjoint, so each byte is written by one participant
    // and the two buffers (one `&mut`, one `&`) cannot overlap.
    unsafe {
        std::ptr::copy_nonoverlapping(
            (src as *const u8).add(r.start * size),
            (dst as *mut u8).add(r.start * size),
            (r.end - r.start) * size,
        )
    }
}

/// The copier of herd's global pool.
pub fn global_copier() -> &'static Copier<'static> {
    static COPIER: OnceLock<Copier<'static>> = OnceLock::new();
    COPIER.get_or_init(|| Copier::new(herd::global()))
}

/// Copies `src` into `dst` (equal lengths) with herd's global pool by the rule of this
/// module.
pub fn parallel_copy<T: Copy + Send + Sync>(dst: &mut [T], src: &[T]) -> Result<()> {
    global_copier().copy(dst, src).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn topo(desc: &str) -> Topology {
        Topology::synthetic(desc).unwrap()
    }

    fn check_partition(p: &CopyPlan, head: usize) {
        assert_eq!(p.chunks.first().unwrap().bytes.start, 0);
        assert_eq!(p.chunks.last().unwrap().bytes.end, p.bytes);
        for w in p.chunks.windows(2) {
            assert_eq!(w[0].bytes.end, w[1].bytes.start);
            assert!(w[0].bytes.start < w[0].bytes.end, "{p:?}");
            assert_eq!((w[0].bytes.end - head) % LINE, 0, "boundary off the cache line: {p:?}");
        }
        let mut parts: Vec<usize> = p.chunks.iter().map(|c| c.participant).collect();
        parts.sort();
        parts.dedup();
        assert_eq!(parts.len(), p.chunks.len(), "a participant twice: {p:?}");
    }

    #[test]
    fn small_copies_stay_on_the_caller() {
        let t = topo("pack:2 l3:1 core:4 pu:1");
        for bytes in [0, 1, 4096, SEQUENTIAL_BYTES - 1] {
            let p = plan(bytes, &t);
            assert_eq!(p.regime, Regime::Sequential);
            assert_eq!(p.chunks, vec![Chunk { participant: 0, pu: 0, bytes: 0..bytes }]);
        }
    }

    #[test]
    fn in_cache_copies_use_the_callers_l3_nearest_first() {
        let t = topo("pack:2 l3:1 core:4 pu:1");
        let l3 = t.cache_size(3).unwrap() as usize;
        let bytes = (l3 / 2).min(16 * MIN_BYTES_PER_THREAD);
        let p = plan(bytes, &t);
        assert_eq!(p.regime, Regime::InCache);
        assert!(p.threads() > 1 && p.threads() <= 4, "{p:?}");
        for c in &p.chunks {
            assert_eq!(t.pus()[c.pu].package, 0, "in-cache copy left the caller's L3: {p:?}");
        }
        check_partition(&p, 0);
        // thread count grows with the size
        let q = plan(2 * MIN_BYTES_PER_THREAD + SEQUENTIAL_BYTES, &t);
        assert!(q.threads() <= p.threads());
    }

    #[test]
    fn out_of_cache_copies_go_distant_first_alternating_packages() {
        let t = topo("pack:2 l3:1 core:4 pu:1");
        let l3 = t.cache_size(3).unwrap() as usize;
        let bytes = 4 * l3 + 8 * MIN_BYTES_PER_THREAD;
        let p = plan(bytes, &t);
        assert_eq!(p.regime, Regime::OutOfCache);
        let pk: Vec<usize> = p.chunks.iter().map(|c| t.pus()[c.pu].package).collect();
        assert_eq!(pk, vec![0, 1, 0, 1, 0, 1, 0, 1], "{p:?}");
        // the first helper is in the other package
        assert_eq!(p.chunks[1].pu, 4);
        check_partition(&p, 0);
    }

    #[test]
    fn one_thread_per_l2_never_two_on_a_core() {
        let t = topo("pack:1 l3:1 l2:2 core:2 pu:2");
        let bytes = 1 << 34; // far out of any cache
        let p = plan(bytes, &t);
        assert_eq!(p.regime, Regime::OutOfCache);
        assert_eq!(p.threads(), 2, "one per L2: {p:?}");
        let l2: Vec<Option<usize>> = p.chunks.iter().map(|c| t.pus()[c.pu].l2).collect();
        assert_ne!(l2[0], l2[1]);
        // in cache: one per core of the shared L3 (4 cores, 8 PUs)
        let q = plan(t.cache_size(3).unwrap() as usize / 2, &t);
        assert_eq!(q.regime, Regime::InCache);
        let mut cores: Vec<usize> = q.chunks.iter().map(|c| t.pus()[c.pu].core).collect();
        cores.sort();
        cores.dedup();
        assert_eq!(cores.len(), q.threads());
        assert_eq!(q.threads(), 4, "{q:?}");
    }

    #[test]
    fn boundaries_follow_the_destination_lines() {
        let t = topo("pack:1 core:4 pu:1");
        for head in [0, 1, 8, 63] {
            let p = plan_for(64 << 20, head, &t, &[0, 1, 2, 3]);
            assert!(p.threads() > 1);
            check_partition(&p, head);
        }
    }

    #[test]
    fn participants_on_other_pus_and_a_single_participant() {
        let t = topo("pack:2 core:2 pu:1");
        // the caller on PU 3 (package 1): the far package is 0
        let p = plan_for(1 << 34, 0, &t, &[3, 2, 1, 0]);
        assert_eq!(p.chunks[0].pu, 3);
        assert_eq!(t.pus()[p.chunks[1].pu].package, 0);
        let one = plan_for(1 << 34, 0, &t, &[2]);
        assert_eq!(one.regime, Regime::Sequential);
    }

    #[test]
    fn parallel_copy_copies() {
        let pool = herd::Pool::builder().num_threads(2).build().unwrap();
        let c = Copier::new(&pool);
        for len in [0usize, 1, 7, 1000, 100_003, 3 << 20] {
            let src: Vec<u32> = (0..len as u32).map(|i| i.wrapping_mul(2_654_435_761)).collect();
            let mut dst = vec![0u32; len];
            c.copy(&mut dst, &src).unwrap();
            assert_eq!(dst, src);
            // misaligned destination and an odd element size
            let src3: Vec<[u8; 3]> = (0..len).map(|i| [i as u8, (i >> 8) as u8, 7]).collect();
            let mut d3 = vec![[0u8; 3]; len + 1];
            c.copy(&mut d3[1..], &src3).unwrap();
            assert_eq!(&d3[1..], &src3[..]);
        }
        let mut short = vec![0u8; 3];
        let err = c.copy(&mut short, &[1u8, 2]).unwrap_err().to_string();
        assert!(err.contains("3 elements") && err.contains("2"), "{err}");
    }
}
