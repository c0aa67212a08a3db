//! BOTS `nqueens`: count the placements of n non-attacking queens on an n×n
//! board, row by row, one task per column tried (as BOTS, each task gets its
//! own copy of the partial board and checks it against every earlier row).
//! Rows from `cutoff` on are searched sequentially. Checked against the
//! known solution counts (OEIS A000170).

use super::{Fork, Kernel, Size};

/// The largest board.
pub const MAX_N: usize = 16;

/// Solutions for n = 0..=16 (OEIS A000170).
pub const SOLUTIONS: [u64; MAX_N + 1] =
    [1, 1, 0, 0, 2, 10, 4, 40, 92, 352, 724, 2680, 14_200, 73_712, 365_596, 2_279_184, 14_772_512];

/// n-queens; from row `cutoff` on, no more tasks (0: tasks at every row).
#[derive(Clone, Debug, serde::Serialize)]
pub struct NQueens {
    /// Board size (at most [`MAX_N`]).
    pub n: usize,
    /// Rows at and below which the search is sequential (0: no cutoff).
    pub cutoff: usize,
}

type Board = [u8; MAX_N];

/// Whether a queen at (`row`, `col`) is safe from the queens of rows `0..row`.
#[inline]
fn safe(board: &Board, row: usize, col: usize) -> bool {
    board[..row].iter().enumerate().all(|(r, &c)| {
        let c = c as usize;
        c != col && c.abs_diff(col) != row - r
    })
}

fn search<F: Fork>(f: &F, n: usize, cutoff: usize, row: usize, board: Board) -> u64 {
    if row == n {
        return 1;
    }
    let place = |col: usize| {
        if !safe(&board, row, col) {
            return 0;
        }
        let mut next = board;
        next[row] = col as u8;
        search(f, n, cutoff, row + 1, next)
    };
    if cutoff != 0 && row >= cutoff {
        (0..n).map(place).sum()
    } else {
        f.sum(0..n, &place)
    }
}

impl Kernel for NQueens {
    type Input = ();
    type Output = u64;
    const NAME: &'static str = "nqueens";

    fn new(size: Size, grain: Option<usize>) -> NQueens {
        let n = match size {
            Size::Small => 7,
            Size::Full => 14,
        };
        NQueens { n, cutoff: grain.unwrap_or(0) }
    }

    fn describe(&self) -> String {
        let cut =
            if self.cutoff == 0 { "no cutoff".into() } else { format!("tasks in rows < {}", self.cutoff) };
        format!("{n}-queens, a task per column tried, {cut}", n = self.n)
    }

    fn input(&self) {}

    fn run<F: Fork>(&self, fork: &F, _: &mut ()) -> u64 {
        assert!(self.n <= MAX_N, "n-queens: n ≤ {MAX_N}");
        search(fork, std::hint::black_box(self.n), self.cutoff, 0, [0; MAX_N])
    }

    fn check(&self, _: &(), out: &u64, _: &u64) -> Result<(), String> {
        let want = SOLUTIONS[self.n];
        if *out == want {
            Ok(())
        } else {
            Err(format!("{}-queens: {out} solutions, expected {want}", self.n))
        }
    }
}
