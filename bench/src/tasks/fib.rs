//! BOTS `fib`: the doubly recursive Fibonacci function with a join at every
//! level above a cutoff. Both results go through `black_box`, so every one
//! of the fib(n) calls is made on every runtime, the sequential one included
//! (otherwise LLVM turns one of the two calls into a loop, a transformation
//! no runtime with an opaque `join` can get; see BENCHMARKS.md). Checked
//! against the iterative fib.

use super::{Fork, Kernel, Size};
use std::hint::black_box;

/// fib(n); below `cutoff` the recursion is sequential (0: a join at every level).
#[derive(Clone, Debug, serde::Serialize)]
pub struct Fib {
    /// The argument.
    pub n: u64,
    /// Arguments up to this are computed without joins (0: no cutoff).
    pub cutoff: u64,
}

fn fib_seq(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    black_box(fib_seq(n - 1)) + black_box(fib_seq(n - 2))
}

fn fib<F: Fork>(f: &F, n: u64, cutoff: u64) -> u64 {
    if n < 2 {
        return n;
    }
    if n <= cutoff {
        return fib_seq(n);
    }
    let (a, b) = f.join(|| fib(f, n - 1, cutoff), || fib(f, n - 2, cutoff));
    black_box(a) + black_box(b)
}

impl Kernel for Fib {
    type Input = ();
    type Output = u64;
    const NAME: &'static str = "fib";

    fn new(size: Size, grain: Option<usize>) -> Fib {
        let n = match size {
            Size::Small => 20,
            Size::Full => 42,
        };
        Fib { n, cutoff: grain.unwrap_or(0) as u64 }
    }

    fn describe(&self) -> String {
        let cut = if self.cutoff == 0 { "no cutoff".into() } else { format!("cutoff n ≤ {}", self.cutoff) };
        format!("fib({}), join at every level, {cut}", self.n)
    }

    fn input(&self) {}

    fn run<F: Fork>(&self, fork: &F, _: &mut ()) -> u64 {
        fib(fork, black_box(self.n), self.cutoff)
    }

    fn check(&self, _: &(), out: &u64, _: &u64) -> Result<(), String> {
        let want = crate::fib_iter(self.n);
        if *out == want {
            Ok(())
        } else {
            Err(format!("fib({}) = {out}, expected {want}", self.n))
        }
    }
}
