//! `herd la geqrf`: herd's Householder QR (`herd_la::geqrf`, blocked with a
//! look-ahead on the herd pool) against faer's parallel QR and OpenBLAS's
//! threaded `dgeqrf` in the same run, each factorization checked in
//! `O(n²)` (`A·x` against `Q·(R·x)`, `Q` applied from the reflectors).

use super::contest::{self, Contender, Sample};
use super::report::Measured;
use super::{start_peers, CommonArgs};
use crate::error::{usize_in, CliError};
use crate::CliResult;
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::householder::{
    apply_block_householder_sequence_on_the_left_in_place_scratch,
    apply_block_householder_sequence_on_the_left_in_place_with_conj,
};
use faer::linalg::matmul::matmul;
use faer::linalg::qr::no_pivoting::factor::{qr_in_place, qr_in_place_scratch, recommended_block_size};
use faer::{Accum, Conj, Mat, Par};
use herd_la::{geqrf_flops, qr_residual_probe, random_matrix, Qr, DEFAULT_QR_BLOCK};
use serde_json::json;
use std::time::Instant;

/// Block sizes tried by `--tune`.
const TUNE_NB: [usize; 5] = [64, 96, 128, 192, 256];
/// n×n matrices alive at once at the peak of a run: the input and the
/// factored copy (`tau` and faer's block factor are `O(n·nb)`).
const MATRICES_AT_PEAK: u128 = 2;
/// The residual probe's random vector.
const PROBE_SEED: u64 = 1;
/// The input matrix's seed.
const MATRIX_SEED: u64 = 42;

/// `herd la geqrf` options.
#[derive(clap::Args, Debug)]
pub struct GeqrfArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// herd's block size: columns per panel (at least 1).
    #[arg(long, default_value_t = DEFAULT_QR_BLOCK, value_parser = usize_in(1..=super::MAX_N))]
    nb: usize,
    /// Try several block sizes first (one herd run each) and use the fastest.
    #[arg(long)]
    tune: bool,
}

/// One herd factorization of a copy of `a` with block size `nb`: seconds and
/// the residual.
fn herd_run(pool: &herd::Pool, a: &Mat<f64>, nb: usize) -> CliResult<Sample> {
    let mut qr = a.clone();
    let mut tau = vec![0.0; a.nrows().min(a.ncols())];
    let start = Instant::now();
    pool.install(|| Qr::new().block_size(nb).geqrf(qr.as_mut(), &mut tau))
        .map_err(|e| CliError::Verify(format!("herd geqrf: {e}")))?;
    let secs = start.elapsed().as_secs_f64();
    Ok(Sample { secs, residual: check(a, &qr, &tau)? })
}

/// `--tune`: one herd run per candidate block size; the fastest, and the
/// tries as JSON.
fn tune(
    pool: &herd::Pool,
    a: &Mat<f64>,
    fallback: usize,
    bar: &indicatif::ProgressBar,
) -> CliResult<(usize, serde_json::Value)> {
    let n = a.nrows();
    let mut tries = Vec::new();
    for nb in TUNE_NB.into_iter().filter(|&nb| nb <= n.max(1)) {
        let s = herd_run(pool, a, nb)?.secs;
        let gflops = geqrf_flops(n, n) / s / 1e9;
        bar.println(format!("herd la geqrf: n={n} tune nb={nb}: {gflops:.1} GFLOP/s"));
        tries.push((nb, s, gflops));
    }
    let best = tries.iter().min_by(|x, y| x.1.total_cmp(&y.1)).map_or(fallback, |t| t.0);
    let json = tries.iter().map(|&(nb, s, g)| json!({"nb": nb, "seconds": s, "gflops": g})).collect();
    Ok((best, serde_json::Value::Array(json)))
}

/// The `O(n²)` residual of herd's or LAPACK's factorization `qr`, `tau` of `a`.
fn check(a: &Mat<f64>, qr: &Mat<f64>, tau: &[f64]) -> CliResult<f64> {
    qr_residual_probe(a.as_ref(), qr.as_ref(), tau, PROBE_SEED).map_err(|e| CliError::Verify(e.to_string()))
}

/// faer's QR of a copy of `a` with `threads` threads (its recommended block
/// size): seconds and the residual `‖A·x − Q·(R·x)‖` scaled as
/// [`qr_residual_probe`] scales it, `Q` applied by faer from its own
/// block-Householder factor.
fn faer_run(a: &Mat<f64>, threads: usize) -> CliResult<Sample> {
    let (m, n) = (a.nrows(), a.ncols());
    let k = m.min(n);
    let par = if threads > 1 { Par::rayon(threads) } else { Par::Seq };
    let bs = recommended_block_size::<f64>(m, n);
    let mut qr = a.clone();
    let mut coeff = Mat::<f64>::zeros(bs, k);
    let mut mem = MemBuffer::new(qr_in_place_scratch::<f64>(m, n, bs, par, Default::default()));
    let start = Instant::now();
    qr_in_place(qr.as_mut(), coeff.as_mut(), par, MemStack::new(&mut mem), Default::default());
    let secs = start.elapsed().as_secs_f64();

    // The vector qr_residual_probe draws: the same SplitMix64 stream.
    let x = random_matrix(n, 1, PROBE_SEED).col(0).to_owned();
    let mut ax = Mat::zeros(m, 1);
    matmul(ax.as_mut(), Accum::Replace, a.as_ref(), x.as_mat(), 1.0, Par::Seq);
    let mut qrx =
        Mat::from_fn(m, 1, |i, _| if i < k { (i..n).map(|j| qr[(i, j)] * x[j]).sum() } else { 0.0 });
    let mut mem =
        MemBuffer::new(apply_block_householder_sequence_on_the_left_in_place_scratch::<f64>(m, bs, 1));
    apply_block_householder_sequence_on_the_left_in_place_with_conj(
        qr.as_ref().subcols(0, k),
        coeff.as_ref(),
        Conj::No,
        qrx.as_mut(),
        Par::Seq,
        MemStack::new(&mut mem),
    );
    let num = (ax - qrx).norm_l2();
    let den = a.norm_l2() * x.norm_l2() * m.max(n) as f64 * f64::EPSILON;
    Ok(Sample { secs, residual: if num == 0.0 { 0.0 } else { num / den } })
}

/// Runs `herd la geqrf`.
pub fn geqrf(args: &GeqrfArgs) -> CliResult {
    let plot_format = args.common.check(
        |n| format!("herd la geqrf -n {n} ({MATRICES_AT_PEAK} {n}×{n} f64 matrices at once: input, factored copy)"),
        |n| MATRICES_AT_PEAK * n * n * 8,
    )?;
    let openblas = start_peers("geqrf");
    let pool = herd::PoolBuilder::from_env()?.build()?;
    let threads = pool.num_threads();
    let tuning_runs = if args.tune { TUNE_NB.len() } else { 0 };
    let bar = args.common.bar(args.common.reps * (2 + usize::from(openblas.is_some())) + tuning_runs);
    let mut results = Vec::new();
    for &n in &args.common.n {
        let a = random_matrix(n, n, MATRIX_SEED);
        let (nb, tuning) = if args.tune { tune(&pool, &a, args.nb, &bar)? } else { (args.nb, json!([])) };
        let mut contenders = vec![
            Contender::new("herd", format!("herd geqrf, nb = {nb}, look-ahead 1"), |_| {
                herd_run(&pool, &a, nb)
            }),
            Contender::new("faer", format!("faer qr_in_place, Par::rayon({threads})"), |_| {
                faer_run(&a, threads)
            }),
        ];
        if let Some(ob) = &openblas {
            contenders.push(
                Contender::new("openblas", format!("OpenBLAS dgeqrf, {threads} threads"), |_| {
                    let (qr, tau, secs) = ob.geqrf(&a, threads)?;
                    Ok(Sample { secs, residual: check(&a, &qr, &tau)? })
                })
                .info("library", json!(ob.path))
                .info("coretype", json!(ob.core)),
            );
        }
        let outcomes = contest::rounds(contenders, args.common.reps, &bar)?;
        let extra = json!({"nb": nb, "tuning": tuning}).as_object().cloned().unwrap_or_default();
        results.push(Measured { n, flops: geqrf_flops(n, n), outcomes, extra, note: String::new() });
    }
    bar.finish_and_clear();
    let reps = args.common.reps;
    let describe = |m: &Measured| {
        format!(
            "QR n = {}, {threads} thread(s), median of {reps} run(s), 4n³/3 flops, \
             residual: probe of A·x − Q·(R·x)\n{}",
            m.n,
            m.text()
        )
    };
    args.common.finish(&results, (threads, plot_format), &format!("QR (geqrf), {threads} threads"), describe)
}
