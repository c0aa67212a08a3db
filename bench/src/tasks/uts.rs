//! UTS, the unbalanced tree search benchmark: count the nodes of an
//! implicitly defined random tree, one task per child. The tree is UTS's
//! geometric shape with a fixed branching factor: a node above depth
//! `depth` has a geometrically distributed number of children with mean
//! `branching` (nodes at `depth` are leaves), so subtrees differ wildly in
//! size. Instead of UTS's SHA-1 a node's state is a 64-bit SplitMix64 hash:
//! a node computes `granularity` rounds of the hash of its state (UTS's
//! per-node work, its `-g`), draws its child count from the result, and
//! child i's state is the hash of (result, i). The tree is therefore the
//! same in every run, but not UTS's sample trees T1.. (which need SHA-1).
//! Nodes from depth `cutoff` on are counted sequentially. Checked: the count
//! equals the sequential run's.

use super::rng::{child, mix, unit};
use super::{Fork, Kernel, Size};

/// A geometric UTS tree.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Uts {
    /// Mean number of children of a node above the last level.
    pub branching: f64,
    /// Depth of the leaves.
    pub depth: u32,
    /// Hash rounds per node.
    pub granularity: u32,
    /// Depth from which subtrees are counted sequentially (0: no cutoff).
    pub cutoff: u32,
}

const ROOT: u64 = 0x5eed_000a;

impl Uts {
    /// The number of children of the node with `state` at `depth`, and the
    /// state its children derive from.
    #[inline]
    fn expand(&self, state: u64, depth: u32) -> (u64, u64) {
        let mut h = state;
        for _ in 0..self.granularity {
            h = mix(h);
        }
        if depth >= self.depth {
            return (0, h);
        }
        // Geometric with mean b: P(k) = p (1 − p)^k, p = 1 / (1 + b).
        let p = 1.0 / (1.0 + self.branching);
        let u = 1.0 - unit(h); // (0, 1]
        ((u.ln() / (1.0 - p).ln()).floor() as u64, h)
    }

    fn count<F: Fork>(&self, f: &F, state: u64, depth: u32) -> u64 {
        let (n, h) = self.expand(state, depth);
        let visit = |i: usize| self.count(f, child(h, i as u64), depth + 1);
        1 + if self.cutoff != 0 && depth >= self.cutoff {
            (0..n as usize).map(visit).sum()
        } else {
            f.sum(0..n as usize, &visit)
        }
    }
}

impl Kernel for Uts {
    type Input = ();
    type Output = u64;
    const NAME: &'static str = "uts";

    fn new(size: Size, grain: Option<usize>) -> Uts {
        let cutoff = grain.unwrap_or(0) as u32;
        match size {
            Size::Small => Uts { branching: 4.0, depth: 6, granularity: 1, cutoff },
            Size::Full => Uts { branching: 4.0, depth: 13, granularity: 4, cutoff },
        }
    }

    fn describe(&self) -> String {
        let cut =
            if self.cutoff == 0 { "no cutoff".into() } else { format!("tasks above depth {}", self.cutoff) };
        format!(
            "geometric tree, mean branching {}, depth {}, {} hash round(s) per node, a task per child, {cut}",
            self.branching, self.depth, self.granularity
        )
    }

    fn input(&self) {}

    fn run<F: Fork>(&self, fork: &F, _: &mut ()) -> u64 {
        self.count(fork, std::hint::black_box(ROOT), 0)
    }

    fn check(&self, _: &(), out: &u64, reference: &u64) -> Result<(), String> {
        if *out < 2 {
            return Err(format!("a tree of {out} node(s): the root has no children"));
        }
        if out != reference {
            return Err(format!("{out} nodes, the sequential run counted {reference}"));
        }
        Ok(())
    }
}
