//! Task-parallel kernels in the style of the Barcelona OpenMP Tasks Suite
//! (BOTS), as used by the MAESTRO/Qthreads scheduling paper
//! (`maestro-qthreads-scheduling.txt`): fib, nqueens, cilksort, sparselu,
//! strassen, health, floorplan and uts, plus the runtime boundary they are
//! written against ([`fork::Fork`]).
//!
//! Every kernel is one file, written once against [`Fork`] and run
//! sequentially ([`Seq`]), on herd ([`Herd`]) or on Rayon ([`Rayon`]); each
//! has a grain (cutoff) parameter as BOTS has, a `small` and a `full` size
//! ([`Size`]), and checks its own result ([`Kernel::check`]): an exact answer
//! where one is known, else a comparison with the sequential run.
//! [`suite`] gives them as [`Bench`] objects, which build the input
//! (untimed), time one run on a [`Runtime`], and check the result.

pub mod cilksort;
pub mod fib;
pub mod floorplan;
pub mod fork;
pub mod health;
pub mod nqueens;
pub mod rng;
pub mod sparselu;
pub mod strassen;
pub mod uts;

pub use fork::{Fork, Herd, Rayon, Seq};

use std::sync::OnceLock;

/// The problem sizes of a kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Size {
    /// Tiny: milliseconds in a debug build (tests, smoke runs).
    Small,
    /// The benchmark size: the sequential run takes more than a second.
    Full,
}

impl std::str::FromStr for Size {
    type Err = String;
    fn from_str(s: &str) -> Result<Size, String> {
        match s {
            "small" => Ok(Size::Small),
            "full" => Ok(Size::Full),
            _ => Err(format!("unknown size {s:?} (small, full)")),
        }
    }
}

/// One task-parallel kernel at one size.
pub trait Kernel: Sync + serde::Serialize {
    /// What one run works on, built before the clock starts.
    type Input: Send;
    /// What one run produces, checked after the clock stops.
    type Output: Send + Sync;

    /// The kernel's name (`fib`, `nqueens`, ...).
    const NAME: &'static str;

    /// The kernel at `size`; `grain` overrides its default cutoff.
    fn new(size: Size, grain: Option<usize>) -> Self
    where
        Self: Sized;

    /// The problem and the cutoff, in words.
    fn describe(&self) -> String;

    /// A fresh input.
    fn input(&self) -> Self::Input;

    /// The timed computation.
    fn run<F: Fork>(&self, fork: &F, input: &mut Self::Input) -> Self::Output;

    /// Checks `out`, produced from `input`, on its own and against
    /// `reference`, the output of the sequential run (for the sequential
    /// run itself, `reference` is `out`).
    fn check(&self, input: &Self::Input, out: &Self::Output, reference: &Self::Output) -> Result<(), String>;
}

/// Where a kernel runs.
#[derive(Clone, Copy)]
pub enum Runtime<'a> {
    /// The calling thread alone, [`Seq`].
    Seq,
    /// A herd pool, [`Herd`] inside `Pool::install`.
    Herd(&'a herd::Pool),
    /// A Rayon pool, [`Rayon`] inside `ThreadPool::install`.
    Rayon(&'a rayon::ThreadPool),
}

impl Runtime<'_> {
    /// Runs `k` on `input` here.
    pub fn run<K: Kernel>(&self, k: &K, input: &mut K::Input) -> K::Output {
        match self {
            Runtime::Seq => k.run(&Seq, input),
            Runtime::Herd(pool) => pool.install(|| k.run(&Herd, input)),
            Runtime::Rayon(pool) => pool.install(|| k.run(&Rayon, input)),
        }
    }
}

/// A kernel behind a trait object: the driver's and the tests' view.
pub trait Bench: Sync {
    /// The kernel's name.
    fn name(&self) -> &'static str;
    /// The problem and the cutoff, in words.
    fn describe(&self) -> String;
    /// The parameters, for the JSON report.
    fn params(&self) -> serde_json::Value;
    /// Builds an input, runs once on `rt` (timed), checks the result;
    /// returns the seconds of the run, or why the result is wrong.
    fn measure(&self, rt: Runtime) -> Result<f64, String>;
}

/// A kernel and the output of its sequential run (computed, untimed, the
/// first time a parallel run needs it, unless a sequential run came first).
struct Checked<K: Kernel> {
    kernel: K,
    reference: OnceLock<K::Output>,
}

impl<K: Kernel> Checked<K> {
    fn reference(&self) -> Result<&K::Output, String> {
        if let Some(r) = self.reference.get() {
            return Ok(r);
        }
        let mut input = self.kernel.input();
        let out = self.kernel.run(&Seq, &mut input);
        self.kernel.check(&input, &out, &out).map_err(|e| format!("sequential run: {e}"))?;
        Ok(self.reference.get_or_init(|| out))
    }
}

impl<K: Kernel> Bench for Checked<K> {
    fn name(&self) -> &'static str {
        K::NAME
    }

    fn describe(&self) -> String {
        self.kernel.describe()
    }

    fn params(&self) -> serde_json::Value {
        serde_json::to_value(&self.kernel).expect("parameters serialise")
    }

    fn measure(&self, rt: Runtime) -> Result<f64, String> {
        let mut input = self.kernel.input();
        let start = std::time::Instant::now();
        let out = rt.run(&self.kernel, &mut input);
        let secs = start.elapsed().as_secs_f64();
        if matches!(rt, Runtime::Seq) && self.reference.get().is_none() {
            self.kernel.check(&input, &out, &out)?;
            let _ = self.reference.set(out);
        } else {
            self.kernel.check(&input, &out, self.reference()?)?;
        }
        Ok(secs)
    }
}

/// The kernels' names, in the suite's order.
pub const NAMES: [&str; 8] =
    ["fib", "nqueens", "cilksort", "sparselu", "strassen", "health", "floorplan", "uts"];

/// The kernel `name` at `size`, `grain` overriding its cutoff; `None` for
/// an unknown name.
pub fn kernel(name: &str, size: Size, grain: Option<usize>) -> Option<Box<dyn Bench>> {
    fn boxed<K: Kernel + 'static>(size: Size, grain: Option<usize>) -> Option<Box<dyn Bench>> {
        Some(Box::new(Checked { kernel: K::new(size, grain), reference: OnceLock::new() }))
    }
    match name {
        "fib" => boxed::<fib::Fib>(size, grain),
        "nqueens" => boxed::<nqueens::NQueens>(size, grain),
        "cilksort" => boxed::<cilksort::Cilksort>(size, grain),
        "sparselu" => boxed::<sparselu::SparseLu>(size, grain),
        "strassen" => boxed::<strassen::Strassen>(size, grain),
        "health" => boxed::<health::Health>(size, grain),
        "floorplan" => boxed::<floorplan::Floorplan>(size, grain),
        "uts" => boxed::<uts::Uts>(size, grain),
        _ => None,
    }
}

/// Every kernel at `size` with its default cutoff.
pub fn suite(size: Size) -> Vec<Box<dyn Bench>> {
    NAMES.iter().map(|n| kernel(n, size, None).expect("a known kernel")).collect()
}
