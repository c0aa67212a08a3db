//! The runtime boundary of the task kernels: [`Fork`], a two-way fork-join,
//! implemented sequentially ([`Seq`]), on herd ([`Herd`]) and on Rayon
//! ([`Rayon`]). Every kernel is written once, generic over `Fork`; the
//! sequential version of a kernel is that code with [`Seq`], whose `join`
//! is two plain calls (nothing is left of it after inlining).
//!
//! The loops of the kernels ([`Fork::sum`], [`Fork::for_each_mut`]) split
//! their range in halves with `join` down to single items, as a task per
//! item would, so the runtime decides what runs where.

use std::ops::Range;

/// A fork-join runtime: `join` runs both closures, possibly in parallel,
/// and returns when both have finished.
pub trait Fork: Sync {
    /// Runs `a` and `b`, possibly in parallel; returns both results.
    fn join<A, B, RA, RB>(&self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send;

    /// The sum of `f(i)` over `range`, one task per index (binary splitting).
    fn sum<F>(&self, range: Range<usize>, f: &F) -> u64
    where
        F: Fn(usize) -> u64 + Sync,
    {
        match range.len() {
            0 => 0,
            1 => f(range.start),
            n => {
                let mid = range.start + n / 2;
                let (a, b) = self.join(|| self.sum(range.start..mid, f), || self.sum(mid..range.end, f));
                a + b
            }
        }
    }

    /// Runs `f` on every item, one task per item (binary splitting).
    fn for_each_mut<T, F>(&self, items: &mut [T], f: &F)
    where
        T: Send,
        F: Fn(&mut T) + Sync,
    {
        match items.len() {
            0 => {}
            1 => f(&mut items[0]),
            n => {
                let (a, b) = items.split_at_mut(n / 2);
                self.join(|| self.for_each_mut(a, f), || self.for_each_mut(b, f));
            }
        }
    }
}

/// No runtime: `join` calls `a`, then `b`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Seq;

impl Fork for Seq {
    #[inline(always)]
    fn join<A, B, RA, RB>(&self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        (a(), b())
    }
}

/// herd's [`herd::join`] (on the pool the caller runs in, see `Pool::install`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Herd;

impl Fork for Herd {
    #[inline(always)]
    fn join<A, B, RA, RB>(&self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        herd::join(a, b)
    }
}

/// Rayon's [`rayon::join`] (on the pool the caller runs in, see `ThreadPool::install`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Rayon;

impl Fork for Rayon {
    #[inline(always)]
    fn join<A, B, RA, RB>(&self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        rayon::join(a, b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check<F: Fork>(f: &F) {
        assert_eq!(f.sum(0..1000, &|i| i as u64), 499_500);
        assert_eq!(f.sum(5..5, &|_| 1), 0);
        let mut v: Vec<u64> = (0..100).collect();
        f.for_each_mut(&mut v, &|x| *x *= 2);
        assert!(v.iter().enumerate().all(|(i, x)| *x == 2 * i as u64));
    }

    #[test]
    fn loops_on_every_runtime() {
        check(&Seq);
        let pool = herd::Pool::builder().num_threads(2).build().unwrap();
        pool.install(|| check(&Herd));
        rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap().install(|| check(&Rayon));
    }
}
