//! Coarse independent pieces of work (blocks of a product, column tiles of
//! an update, pieces of a solve) run on the participants of the current
//! herd pool, every piece stealable as soon as it can be.
//!
//! Not `herd::join` trees: join exposes its continuations lazily — one per
//! join call, and only when none of the caller's jobs is still queued — so
//! that fine-grained recursion runs at serial speed. With coarse leaves that
//! spreads in waves: a participant inside a leaf of tens of milliseconds
//! exposes nothing, so the pieces it still holds wait for it (on 16 cores
//! the 16 blocks of an n = 4000 GEMM ran at about the speed of 2; 16 leaves
//! of 50 ms on a synthetic 16-PU pool took 201 ms as a join tree and 52 ms
//! as here). Here the pieces are handed out in a [`herd::scope`] as halves
//! spawned at once, the larger first, each half spread the same way by
//! whoever takes it: every piece is stealable once the spawners have run
//! their few steps, and no participant pushes (and wakes a sleeper for)
//! more than about log₂ of the pieces — one spawn per piece from the caller
//! would be a sequence of P wake-ups by one thread.
//!
//! Fine-grained splits (a `symv` of the tridiagonal reduction, the
//! pairwise sums of QR's `apply_left_par`) stay on `herd::join`: there a
//! spawn's allocation would cost more than the waves.

use faer::MatMut;

/// Runs `f(item)` for every item of `items` on the current herd pool (the
/// global pool when the caller is in none), as the module documentation
/// says; the first item runs on the caller. Returns when all have run; a
/// panic in `f` reaches the caller after every item has run or panicked.
pub(crate) fn for_each<T, F>(mut items: Vec<T>, f: &F)
where
    T: Send,
    F: Fn(T) + Sync,
{
    match items.len() {
        0 => {}
        1 => f(items.pop().expect("one item")),
        _ => herd::scope(|s| halves(s, items, f)),
    }
}

/// Spawns the second halves of `items` (each spread again by its taker)
/// and runs the first item here.
fn halves<'s, T, F>(s: &herd::Scope<'s>, mut items: Vec<T>, f: &'s F)
where
    T: Send + 's,
    F: Fn(T) + Sync,
{
    while items.len() > 1 {
        let rest = items.split_off(items.len().div_ceil(2));
        s.spawn(move |s| halves(s, rest, f));
    }
    if let Some(item) = items.pop() {
        f(item);
    }
}

/// The blocks of `c` cut at the columns `cuts` (increasing, inside
/// `0..=ncols`), with the column each starts at: `[0, cuts[0])`,
/// `[cuts[0], cuts[1])`, …, `[last cut, ncols)`; empty blocks left out.
pub(crate) fn col_blocks_at<'a>(
    c: MatMut<'a, f64>,
    cuts: impl IntoIterator<Item = usize>,
) -> Vec<(MatMut<'a, f64>, usize)> {
    let mut out = Vec::new();
    let mut rest = c;
    let mut col0 = 0;
    for cut in cuts {
        debug_assert!(cut >= col0 && cut - col0 <= rest.ncols(), "cuts increase inside the matrix");
        let (l, r) = rest.split_at_col_mut(cut - col0);
        if l.ncols() > 0 {
            out.push((l, col0));
        }
        rest = r;
        col0 = cut;
    }
    if rest.ncols() > 0 {
        out.push((rest, col0));
    }
    out
}

/// The blocks of `width` columns of `c` (the last narrower), with the
/// column each starts at.
pub(crate) fn col_blocks(c: MatMut<'_, f64>, width: usize) -> Vec<(MatMut<'_, f64>, usize)> {
    let (n, width) = (c.ncols(), width.max(1));
    col_blocks_at(c, (1..n.div_ceil(width)).map(|k| k * width))
}

/// `c` cut into `parts` column blocks of nearly equal width (block `k`
/// starts at column `⌊k·n / parts⌋`), with the column each starts at.
pub(crate) fn col_parts(c: MatMut<'_, f64>, parts: usize) -> Vec<(MatMut<'_, f64>, usize)> {
    let (n, parts) = (c.ncols(), parts.max(1));
    col_blocks_at(c, (1..parts).map(|k| n * k / parts))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Barrier, Mutex};

    /// Every block covers its own columns once, in order.
    #[test]
    fn blocks_partition_the_columns() {
        let mut m = faer::Mat::<f64>::zeros(3, 10);
        let starts =
            |v: Vec<(MatMut<'_, f64>, usize)>| v.iter().map(|(b, c0)| (*c0, b.ncols())).collect::<Vec<_>>();
        assert_eq!(starts(col_blocks(m.as_mut(), 4)), vec![(0, 4), (4, 4), (8, 2)]);
        assert_eq!(starts(col_parts(m.as_mut(), 3)), vec![(0, 3), (3, 3), (6, 4)]);
        assert_eq!(starts(col_parts(m.as_mut(), 20)).len(), 10, "no empty blocks");
        assert_eq!(starts(col_blocks_at(m.as_mut(), [0, 5, 5, 10])), vec![(0, 5), (5, 5)]);
        assert!(col_blocks(faer::Mat::<f64>::zeros(3, 0).as_mut(), 4).is_empty());
    }

    /// Every item runs exactly once, and all of them can run at once: 8
    /// items that each wait for all 8 to have started finish on a pool of
    /// 8 (a join tree with lazy continuations hangs here, or runs them in
    /// waves when the wait is bounded).
    #[test]
    fn every_item_can_run_at_once() {
        let pool = herd::Pool::builder().num_threads(8).build().unwrap();
        let started = Barrier::new(8);
        let ran = Mutex::new(Vec::new());
        pool.install(|| {
            for_each((0..8).collect(), &|i: usize| {
                started.wait();
                ran.lock().unwrap().push(i);
            })
        });
        let mut ran = ran.into_inner().unwrap();
        ran.sort();
        assert_eq!(ran, (0..8).collect::<Vec<_>>());
    }

    /// A panic in one item reaches the caller after the others ran, and
    /// the pool stays usable.
    #[test]
    fn a_panic_reaches_the_caller() {
        let pool = herd::Pool::builder().num_threads(3).build().unwrap();
        let ran = AtomicUsize::new(0);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            pool.install(|| {
                for_each((0..6).collect(), &|i: usize| {
                    assert!(i != 3, "item 3 fails");
                    ran.fetch_add(1, Ordering::SeqCst);
                })
            })
        }));
        assert!(r.is_err());
        assert_eq!(ran.load(Ordering::SeqCst), 5);
        let after = AtomicUsize::new(0);
        pool.install(|| for_each((0..4).collect(), &|_: usize| _ = after.fetch_add(1, Ordering::SeqCst)));
        assert_eq!(after.load(Ordering::SeqCst), 4);
    }
}
