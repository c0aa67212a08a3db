//! The region wake tree: how a post reaches every participant of a region,
//! and how their acknowledgements come back, with no thread issuing more
//! than ⌈log₂ n⌉ posts (or wake-up system calls) per region.
//!
//! The participants of a region of `n` are put in *topology order* (by the
//! PU of each, rotated so that the master's PU comes first; hwloc's logical
//! PU order follows the machine's tree, so contiguous positions share caches
//! and packages). Position 0 is the master. The tree is binomial over
//! positions: the children of position `p` are `p + 2^k` for every `2^k`
//! below `p`'s lowest set bit (below the next power of two ≥ `n` for the
//! master) with `p + 2^k < n`, most distant first; the parent of `p > 0` is `p` minus
//! its lowest set bit. So a subtree is a contiguous block of positions — a
//! locality domain — and the master's first child heads the most distant
//! half of the machine (the affinity paper's distant-first dispatch, kept as
//! the tree's shape), its next child the nearer quarter, and so on. A node of
//! depth `d` has at most ⌈log₂ n⌉ − d children; the depth is at most
//! ⌈log₂ n⌉.
//!
//! Post: a participant forwards the post to its children (most distant
//! subtree first) *before* running its own share. Acknowledgement: a participant
//! acknowledges to its parent only after all its children have; the master
//! waits for its own children only. See `port.rs` for the per-port protocol
//! and `sync/README.md` for the wake rules.

/// The tree of one region size; see the module documentation.
#[derive(Debug)]
pub(crate) struct WakeTree {
    /// Position → slot; position 0 is the master (slot 0).
    order: Box<[u32]>,
    /// Slot → position, for slots `< n`.
    pos: Box<[u32]>,
}

impl WakeTree {
    /// The tree over slots `0..n` (`n >= 1`), with `key(slot)` giving each
    /// slot's place in topology order (smaller first; the master, slot 0,
    /// always comes first).
    pub(crate) fn new(n: usize, key: impl Fn(usize) -> usize) -> WakeTree {
        let mut order: Vec<usize> = (1..n).collect();
        order.sort_by_key(|&s| (key(s), s));
        order.insert(0, 0);
        let mut pos = vec![0u32; n];
        for (p, &s) in order.iter().enumerate() {
            pos[s] = p as u32;
        }
        WakeTree { order: order.into_iter().map(|s| s as u32).collect(), pos: pos.into() }
    }

    /// The slots `slot` posts to, most distant subtree first.
    #[inline]
    pub(crate) fn children(&self, slot: usize) -> impl Iterator<Item = usize> + '_ {
        let n = self.order.len();
        let p = self.pos[slot] as usize;
        let top = if p == 0 { n.next_power_of_two() } else { p & p.wrapping_neg() };
        std::iter::successors(Some(top >> 1), |&k| (k > 1).then_some(k >> 1))
            .take_while(|&k| k > 0)
            .filter(move |&k| p + k < n)
            .map(move |k| self.order[p + k] as usize)
    }

    /// The slot `slot` acknowledges to (`None` for the master).
    #[inline]
    pub(crate) fn parent(&self, slot: usize) -> Option<usize> {
        let p = self.pos[slot] as usize;
        (p > 0).then(|| self.order[p - (p & p.wrapping_neg())] as usize)
    }

    /// The number of hops from the master to `slot`.
    pub(crate) fn depth_of(&self, slot: usize) -> u32 {
        self.pos[slot].count_ones()
    }

    /// The longest chain of posts from the master.
    pub(crate) fn depth(&self) -> u32 {
        (0..self.order.len()).map(|s| self.depth_of(s)).max().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ceil_log2(n: usize) -> u32 {
        n.next_power_of_two().trailing_zeros()
    }

    /// Every participant is reached exactly once, from its parent; no node
    /// has more than ⌈log₂ n⌉ children; the depth is ⌈log₂ n⌉; every
    /// subtree is a contiguous block of topology positions.
    #[test]
    fn binomial_shape_for_every_size() {
        for n in 1..=300 {
            // A scrambled topology order: slot s sits at position (s * 7) % n.
            let t = WakeTree::new(n, |s| (s * 7919) % n.max(1));
            let mut reached = vec![0u32; n];
            reached[0] = 1;
            let mut stack = vec![0usize];
            let mut most_children = 0;
            while let Some(s) = stack.pop() {
                let kids: Vec<usize> = t.children(s).collect();
                most_children = most_children.max(kids.len());
                let mut prev_pos = usize::MAX;
                for &c in &kids {
                    assert_eq!(t.parent(c), Some(s), "n={n}: parent of {c}");
                    reached[c] += 1;
                    stack.push(c);
                    // Most distant subtree first, and subtrees are contiguous.
                    let size = subtree(&t, c);
                    let p = t.pos[c] as usize;
                    assert!(p < prev_pos, "n={n}: children of {s} not most distant first");
                    prev_pos = p;
                    let mut positions: Vec<usize> =
                        subtree_slots(&t, c).iter().map(|&x| t.pos[x] as usize).collect();
                    positions.sort_unstable();
                    assert_eq!(positions, (p..p + size).collect::<Vec<_>>(), "n={n}: subtree of {c}");
                }
            }
            assert!(reached.iter().all(|&r| r == 1), "n={n}: {reached:?}");
            assert_eq!(t.parent(0), None);
            assert!(most_children as u32 <= ceil_log2(n), "n={n}: {most_children} children");
            assert!(t.depth() <= ceil_log2(n), "n={n}: depth {}", t.depth());
            if n.is_power_of_two() {
                assert_eq!(t.depth(), ceil_log2(n), "n={n}");
            }
        }
    }

    fn subtree_slots(t: &WakeTree, s: usize) -> Vec<usize> {
        let mut out = vec![s];
        for c in t.children(s) {
            out.extend(subtree_slots(t, c));
        }
        out
    }

    fn subtree(t: &WakeTree, s: usize) -> usize {
        subtree_slots(t, s).len()
    }

    /// Two packages of four cores, master on the first: the master's first
    /// post goes to the other package, whose head then serves it.
    #[test]
    fn distant_half_first() {
        let t = WakeTree::new(8, |s| s);
        assert_eq!(t.children(0).collect::<Vec<_>>(), vec![4, 2, 1]);
        assert_eq!(t.children(4).collect::<Vec<_>>(), vec![6, 5]);
        assert_eq!(t.parent(7), Some(6));
        assert_eq!(t.depth_of(7), 3);
    }
}
