//! `herd la sygv`: the generalized symmetric-definite eigensolver
//! (`herd_la::sygv`, `A·x = λ·B·x`, all eigenvalues and eigenvectors)
//! against faer (its parallel Cholesky, triangular solves and self-adjoint
//! EVD with `Par::rayon`) and OpenBLAS's threaded `dsygv` (itype 1, jobz
//! 'V', uplo 'L') in the same run. Each result is checked in `O(n²)`
//! (`A·(Z·x)` against `B·((Z·Λ)·x)` for a random `x`), and herd's and faer's
//! eigenvalues are compared with OpenBLAS's.

use super::contest::{self, Contender, Sample};
use super::report::Measured;
use super::{start_peers, CommonArgs};
use crate::error::{usize_in, CliError};
use crate::CliResult;
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::evd::{self_adjoint_evd, self_adjoint_evd_scratch, ComputeEigenvectors};
use faer::linalg::triangular_solve::{solve_lower_triangular_in_place, solve_upper_triangular_in_place};
use faer::{Mat, Par};
use herd_la::{probe_residual, random_matrix, random_spd, sygv_flops, sygv_with, Factor, Uplo};
use serde_json::json;
use std::cell::RefCell;
use std::time::Instant;

/// The residual probe's random vector.
const PROBE_SEED: u64 = 1;
/// n×n matrices alive at once at the peak of a run: A, B, their working
/// copies, herd's workspace, `Z·Λ` for the probe, and a peer's result kept
/// for the comparison of eigenvalues.
const MATRICES_AT_PEAK: u128 = 8;
/// The largest difference from OpenBLAS's eigenvalues accepted, relative to
/// the largest eigenvalue in magnitude.
const EIGENVALUE_TOLERANCE: f64 = 1e-8;

/// `herd la sygv` options.
#[derive(clap::Args, Debug)]
pub struct SygvArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// Tile size of herd's Cholesky graph [default: chosen from n].
    #[arg(long, value_parser = usize_in(1..=super::MAX_N))]
    nb: Option<usize>,
}

/// The random problem of order `n`: a symmetric `A` (entries in `(-2, 2)`)
/// and the SPD `B` of `herd_la::random_spd`.
fn problem(n: usize) -> (Mat<f64>, Mat<f64>) {
    let r = random_matrix(n, n, 42);
    (Mat::from_fn(n, n, |i, j| r[(i, j)] + r[(j, i)]), random_spd(n, 43))
}

/// The `O(n²)` residual of eigenvectors `z` and eigenvalues `w`:
/// `A·(Z·x)` against `B·((Z·Λ)·x)`.
fn check(a: &Mat<f64>, b: &Mat<f64>, z: &Mat<f64>, w: &[f64]) -> CliResult<f64> {
    let zl = Mat::from_fn(z.nrows(), z.ncols(), |i, j| z[(i, j)] * w[j]);
    probe_residual(
        &[Factor::full(a.as_ref()), Factor::full(z.as_ref())],
        &[Factor::full(b.as_ref()), Factor::full(zl.as_ref())],
        PROBE_SEED,
    )
    .map_err(|e| CliError::Verify(e.to_string()))
}

/// One herd run: eigenvectors, eigenvalues, seconds.
fn herd_run(
    pool: &herd::Pool,
    a: &Mat<f64>,
    b: &Mat<f64>,
    nb: Option<usize>,
) -> CliResult<(Mat<f64>, Vec<f64>, f64)> {
    let (mut z, mut l, mut w) = (a.clone(), b.clone(), vec![0.0; a.nrows()]);
    let start = Instant::now();
    pool.install(|| match nb {
        Some(nb) => sygv_with(Uplo::Lower, z.as_mut(), l.as_mut(), &mut w, nb),
        None => herd_la::sygv(z.as_mut(), l.as_mut(), &mut w),
    })
    .map_err(|e| CliError::Verify(format!("herd sygv: {e}")))?;
    Ok((z, w, start.elapsed().as_secs_f64()))
}

/// The same steps with faer's parallel routines on `threads` Rayon threads:
/// Cholesky, `C = L⁻¹·(L⁻¹·A)ᵀ`, self-adjoint EVD, `X = L⁻ᵀ·Z`.
fn faer_run(a: &Mat<f64>, b: &Mat<f64>, threads: usize) -> CliResult<(Mat<f64>, Vec<f64>, f64)> {
    let n = a.nrows();
    let par = if threads > 1 { Par::rayon(threads) } else { Par::Seq };
    let (mut c, mut l) = (a.clone(), b.clone());
    let mut z = Mat::<f64>::zeros(n, n);
    let mut s = faer::diag::Diag::<f64>::zeros(n);
    let mut mem =
        MemBuffer::new(self_adjoint_evd_scratch::<f64>(n, ComputeEigenvectors::Yes, par, Default::default()));
    let start = Instant::now();
    herd_la::kernels::faer_potrf_par(l.as_mut(), par)
        .map_err(|j| CliError::Verify(format!("faer Cholesky of B failed at column {j}")))?;
    let lower = l.as_ref();
    solve_lower_triangular_in_place(lower, c.as_mut(), par);
    z.copy_from(c.transpose());
    solve_lower_triangular_in_place(lower, z.as_mut(), par);
    self_adjoint_evd(
        z.as_ref(),
        s.as_mut(),
        Some(c.as_mut()),
        par,
        MemStack::new(&mut mem),
        Default::default(),
    )
    .map_err(|e| CliError::Verify(format!("faer self-adjoint EVD: {e:?}")))?;
    solve_upper_triangular_in_place(lower.transpose(), c.as_mut(), par);
    let secs = start.elapsed().as_secs_f64();
    let w = s.column_vector().iter().copied().collect();
    Ok((c, w, secs))
}

/// The largest difference between `w` and `reference`, relative to the
/// largest eigenvalue of `reference` in magnitude.
fn eigenvalue_diff(w: &[f64], reference: &[f64]) -> f64 {
    let big = reference.iter().fold(0.0f64, |m, x| m.max(x.abs())).max(f64::MIN_POSITIVE);
    w.iter().zip(reference).fold(0.0f64, |m, (x, y)| m.max((x - y).abs())) / big
}

/// Runs `herd la sygv`.
pub fn sygv(args: &SygvArgs) -> CliResult {
    let plot_format = args.common.check(
        |n| format!("herd la sygv -n {n} ({MATRICES_AT_PEAK} {n}×{n} f64 matrices at once)"),
        |n| MATRICES_AT_PEAK * n * n * 8,
    )?;
    let openblas = start_peers("sygv");
    let pool = herd::PoolBuilder::from_env()?.build()?;
    let threads = pool.num_threads();
    let bar = args.common.bar(args.common.reps * (2 + usize::from(openblas.is_some())));
    let mut results = Vec::new();
    for &n in &args.common.n {
        let (a, b) = problem(n);
        // The eigenvalues of each contender's last run.
        let last: RefCell<[Vec<f64>; 3]> = RefCell::default();
        let keep = |slot: usize, w: Vec<f64>| last.borrow_mut()[slot] = w;
        let nb_label = args.nb.map_or("auto".to_string(), |nb| nb.to_string());
        let mut contenders = vec![
            Contender::new(
                "herd",
                format!("herd sygv (Cholesky nb {nb_label}; blocked tridiagonal reduction on herd)"),
                |_| {
                    let (z, w, secs) = herd_run(&pool, &a, &b, args.nb)?;
                    let residual = check(&a, &b, &z, &w)?;
                    keep(0, w);
                    Ok(Sample { secs, residual })
                },
            ),
            Contender::new(
                "faer",
                format!("faer llt + triangular solves + self-adjoint EVD, Par::rayon({threads})"),
                |_| {
                    let (z, w, secs) = faer_run(&a, &b, threads)?;
                    let residual = check(&a, &b, &z, &w)?;
                    keep(1, w);
                    Ok(Sample { secs, residual })
                },
            ),
        ];
        if let Some(ob) = &openblas {
            contenders.push(
                Contender::new("openblas", format!("OpenBLAS dsygv, {threads} threads"), |_| {
                    let (z, w, secs) = ob.sygv(&a, &b, threads)?;
                    let residual = check(&a, &b, &z, &w)?;
                    keep(2, w);
                    Ok(Sample { secs, residual })
                })
                .info("library", json!(ob.path))
                .info("coretype", json!(ob.core)),
            );
        }
        let mut outcomes = contest::rounds(contenders, args.common.reps, &bar)?;
        let last = last.into_inner();
        let mut note = String::new();
        if openblas.is_some() {
            for (slot, key) in [(0, "herd"), (1, "faer")] {
                let diff = eigenvalue_diff(&last[slot], &last[2]);
                if diff.is_nan() || diff > EIGENVALUE_TOLERANCE {
                    return Err(CliError::Verify(format!(
                        "{key}: eigenvalues differ from OpenBLAS's by {diff:e} (relative, > {EIGENVALUE_TOLERANCE:e})"
                    )));
                }
                note.push_str(&format!(
                    "{key} eigenvalues vs OpenBLAS's: max difference {diff:.1e} (relative)\n"
                ));
                if let Some(o) = outcomes.iter_mut().find(|o| o.key == key) {
                    o.info.insert("eigenvalues_vs_openblas".into(), json!(diff));
                }
            }
        }
        let extra = json!({"nb": args.nb, "itype": 1, "jobz": "V", "uplo": "L"});
        let extra = extra.as_object().cloned().unwrap_or_default();
        results.push(Measured { n, flops: sygv_flops(n), outcomes, extra, note });
    }
    bar.finish_and_clear();
    let describe = |m: &Measured| {
        format!(
            "Generalized symmetric eigensolver A·x = λ·B·x, n = {}, {threads} thread(s), median of {} run(s), 17n³/3 flops, residual: probe of A·(Z·x) − B·((Z·Λ)·x)\n{}",
            m.n,
            args.common.reps,
            m.text()
        )
    };
    args.common.finish(&results, (threads, plot_format), &format!("sygv, {threads} threads"), describe)
}
