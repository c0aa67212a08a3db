//! `herd la gemm`: herd's parallel matrix multiply (`herd_la::gemm`) against
//! faer's parallel `matmul` and OpenBLAS's threaded `dgemm` in the same run,
//! each result checked in `O(n²)` (`C·x` against `A·(op(B)·x)`).

use super::contest::{self, Contender, Sample};
use super::report::Measured;
use super::{start_peers, CommonArgs};
use crate::error::{usize_in, CliError};
use crate::CliResult;
use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, MatRef, Par};
use herd_la::{gemm_flops, probe_residual, random_matrix, Blocking, Factor, Gemm, Op};
use serde_json::json;
use std::cell::RefCell;
use std::time::Instant;

/// The residual probe's random vector.
const PROBE_SEED: u64 = 1;

/// `herd la gemm` options.
#[derive(clap::Args, Debug)]
pub struct GemmArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// The ATLAS paper's rank-K update instead of a square product: C ← C − A·Bᵀ
    /// with A and B n×K (2·n²·K flops); without it C ← A·B, all n×n (2·n³ flops).
    #[arg(short = 'k', long = "rank", value_name = "K", value_parser = usize_in(1..=super::MAX_N))]
    rank: Option<usize>,
    /// herd's blocks of C, ROWSxCOLS (e.g. 4000x1000) [default: chosen from the
    /// shape and the pool's participants].
    #[arg(long, value_name = "ROWSxCOLS", value_parser = parse_block)]
    block: Option<(usize, usize)>,
}

/// `--block ROWSxCOLS`, both at least 1.
fn parse_block(s: &str) -> Result<(usize, usize), String> {
    let parse = |x: &str| x.trim().parse::<usize>().ok().filter(|&v| v >= 1);
    match s.split_once(['x', 'X']) {
        Some((r, c)) => match (parse(r), parse(c)) {
            (Some(r), Some(c)) => Ok((r, c)),
            _ => Err(format!("{s}: ROWS and COLS must be integers of at least 1")),
        },
        None => Err(format!("{s}: expected ROWSxCOLS, e.g. 512x1024")),
    }
}

/// The product every contender computes: `C ← α·A·op(B) + β·C`.
struct Form {
    /// Inner dimension.
    k: usize,
    alpha: f64,
    beta: f64,
    /// `op(B) = Bᵀ`.
    b_trans: bool,
}

impl Form {
    fn of(args: &GemmArgs, n: usize) -> Form {
        match args.rank {
            Some(k) => Form { k, alpha: -1.0, beta: 1.0, b_trans: true },
            None => Form { k: n, alpha: 1.0, beta: 0.0, b_trans: false },
        }
    }

    fn op_b<'a>(&self, b: MatRef<'a, f64>) -> MatRef<'a, f64> {
        if self.b_trans {
            b.transpose()
        } else {
            b
        }
    }

    fn describe(&self) -> &'static str {
        if self.b_trans {
            "rank-K update C ← C − A·Bᵀ"
        } else {
            "C ← A·B"
        }
    }
}

/// The matrices of one order and the buffer the contenders write.
struct Operands {
    a: Mat<f64>,
    b: Mat<f64>,
    /// `C` before the product (only read when `β ≠ 0`).
    c_in: Mat<f64>,
    c: RefCell<Mat<f64>>,
}

impl Operands {
    fn new(n: usize, form: &Form) -> Operands {
        let a = random_matrix(n, form.k, 1);
        let b = if form.b_trans { random_matrix(n, form.k, 2) } else { random_matrix(form.k, n, 2) };
        let c_in = if form.beta == 0.0 { Mat::zeros(0, 0) } else { random_matrix(n, n, 3) };
        Operands { a, b, c_in, c: RefCell::new(Mat::zeros(n, n)) }
    }

    /// Sets `C` to its input (touching every page before the timed call) and
    /// returns the seconds of `compute(C)` and the residual of its result.
    fn run(&self, form: &Form, compute: impl FnOnce(&mut Mat<f64>) -> CliResult<f64>) -> CliResult<Sample> {
        let mut c = self.c.borrow_mut();
        if form.beta == 0.0 {
            c.fill(0.0);
        } else {
            c.copy_from(&self.c_in);
        }
        let secs = compute(&mut c)?;
        Ok(Sample { secs, residual: self.residual(form, &c)? })
    }

    /// The probe of `C − β·C_in` against `α·A·(op(B)·x)`, for the forms
    /// `herd la gemm` runs (`α = 1, β = 0` and `α = −1, β = 1`): `C` against
    /// `A·op(B)`, or `C_in − C` against it.
    fn residual(&self, form: &Form, c: &Mat<f64>) -> CliResult<f64> {
        let product = [Factor::full(self.a.as_ref()), Factor::full(form.op_b(self.b.as_ref()))];
        let r = if form.beta == 0.0 {
            probe_residual(&[Factor::full(c.as_ref())], &product, PROBE_SEED)
        } else {
            let d = &self.c_in - c;
            probe_residual(&[Factor::full(d.as_ref())], &product, PROBE_SEED)
        };
        r.map_err(|e| CliError::Verify(e.to_string()))
    }
}

/// Seconds of `f`.
fn timed(f: impl FnOnce() -> CliResult) -> CliResult<f64> {
    let start = Instant::now();
    f()?;
    Ok(start.elapsed().as_secs_f64())
}

/// Runs `herd la gemm`.
pub fn gemm(args: &GemmArgs) -> CliResult {
    let plot_format = args.common.check(
        |n| format!("herd la gemm -n {n} (A, B, C, C's input and the residual's C_in − C, f64)"),
        |n| {
            let k = args.rank.map_or(n, |k| k as u128);
            (3 * n * n + 2 * n * k) * 8
        },
    )?;
    let openblas = start_peers("gemm");
    let pool = herd::PoolBuilder::from_env()?.build()?;
    let threads = pool.num_threads();
    let blocking = args.block.map_or(Blocking::Auto, |(rows, cols)| Blocking::Fixed { rows, cols });
    let bar = args.common.bar(args.common.reps * (2 + usize::from(openblas.is_some())));
    let mut results = Vec::new();
    let mut caption = String::new();
    for &n in &args.common.n {
        let form = Form::of(args, n);
        caption = format!("GEMM {}, {threads} threads", form.describe());
        let ops = Operands::new(n, &form);
        let (a, b) = (ops.a.as_ref(), form.op_b(ops.b.as_ref()));
        let op_b = if form.b_trans { Op::Trans } else { Op::NoTrans };
        let accum = if form.beta == 0.0 { Accum::Replace } else { Accum::Add };
        let herd_gemm = Gemm::new(Op::NoTrans, op_b, form.alpha, form.beta).blocking(blocking);
        let mut contenders = vec![
            Contender::new("herd", format!("herd gemm ({blocking:?}, {})", herd_la::gemm_kernel()), |_| {
                ops.run(&form, |c| {
                    timed(|| {
                        pool.install(|| herd_gemm.run(a, ops.b.as_ref(), c.as_mut()))
                            .map_err(|e| CliError::Verify(format!("herd gemm: {e}")))
                    })
                })
            }),
            Contender::new("faer", format!("faer matmul, Par::rayon({threads})"), |_| {
                ops.run(&form, |c| {
                    timed(|| {
                        matmul(c.as_mut(), accum, a, b, form.alpha, Par::rayon(threads));
                        Ok(())
                    })
                })
            }),
        ];
        if let Some(ob) = &openblas {
            contenders.push(
                Contender::new("openblas", format!("OpenBLAS dgemm, {threads} threads"), |_| {
                    ops.run(&form, |c| {
                        ob.gemm(form.alpha, a, (ops.b.as_ref(), form.b_trans), form.beta, c.as_mut(), threads)
                    })
                })
                .info("library", json!(ob.path))
                .info("coretype", json!(ob.core)),
            );
        }
        let outcomes = contest::rounds(contenders, args.common.reps, &bar)?;
        let extra = json!({"k": form.k, "alpha": form.alpha, "beta": form.beta, "transb": form.b_trans,
                           "blocking": format!("{blocking:?}")});
        let extra = extra.as_object().cloned().unwrap_or_default();
        results.push(Measured { n, flops: gemm_flops(n, n, form.k), outcomes, extra, note: String::new() });
    }
    bar.finish_and_clear();
    let reps = args.common.reps;
    let describe = |m: &Measured| {
        format!(
            "GEMM n = {}, {}, {threads} thread(s), median of {reps} run(s), 2·n²·k flops, \
             residual: probe of C·x − A·(op(B)·x)\n{}",
            m.n,
            m.extra.get("k").map_or(String::new(), |k| format!("k = {k}")),
            m.text()
        )
    };
    args.common.finish(&results, (threads, plot_format), &caption, describe)
}
