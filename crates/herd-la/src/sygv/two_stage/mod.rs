//! The two-stage reduction of a symmetric matrix to tridiagonal form,
//! `A = Q·T·Qᵀ` with `Q = Q₁·Q₂` (LAPACK 3.7's `dsytrd_2stage`, after
//! PLASMA and ELPA), and its back-transformation `Z ← Q·Z`:
//!
//! 1. `band.rs` — dense to symmetric band of half-bandwidth `nb`,
//!    `A = Q₁·B·Q₁ᵀ` (`dsytrd_sy2sb`): a QR panel below the band, then the
//!    trailing matrix's two-sided update as a symmetric matrix product and
//!    a rank-`2·nb` [`syr2k`](crate::syr2k()), all matrix products on herd —
//!    none of the one-stage `dsytrd`'s memory-bound matrix–vector products;
//! 2. `chase.rs` — band to tridiagonal, `B = Q₂·T·Q₂ᵀ` (`dsytrd_sb2st`):
//!    Householder bulge chasing on a compact copy of the band, `O(n²·nb)`,
//!    sequential;
//! 3. `back.rs` — `Z ← Q₂·Z` with the chase's reflectors grouped into
//!    block reflectors (`dormtr_hb2st`; `nb/2` sweeps × one step), the column blocks of `Z` spread
//!    over the pool; then `Z ← Q₁·Z` by [`ormqr`](crate::ormqr()) with
//!    stage 1's reflectors, which lie below the band in `geqrf`'s layout.
//!
//! The price of the matrix products: the second back-transformation,
//! `2n³` more flops than the one-stage path's single `ormqr` (and the
//! blocks of step 3 multiply the zeros of their parallelograms too). `sygv`
//! takes this path from [`two_stage_from`] on (`evd.rs`; by default never with
//! eigenvectors; `values.rs`, eigenvalues only, has no back-transformation and
//! takes it from a crossover order).
//!
//! `tests.rs` checks each stage; `timing.rs` is the ignored harness that
//! times the phases (BENCHMARKS.md "(session 27)").

mod back;
mod band;
mod chase;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod timing;

use std::sync::OnceLock;

use faer::{MatMut, MatRef};

use crate::{ormqr, Op, Side};

/// The half-bandwidth of stage 1's band (32, 48, 64 and 96 measured).
pub(super) const BAND: usize = 64;
/// The order from which `sygv` reduces with the two stages by default when
/// it computes eigenvectors: never. On the 2-vCPU host where it was
/// measured the two stages were slower with all eigenvectors at every order
/// tried (0.88× the one stage at n = 2000, 0.78× at 4000: BENCHMARKS.md
/// "(session 27)") — the reduction is 1.5× faster, the second
/// back-transformation costs more.
const TWO_STAGE_FROM: usize = usize::MAX;
/// The order from which the eigenvalues-only `sygv` (`values.rs`, no
/// back-transformation at all) reduces with the two stages by default. On
/// the 2-vCPU host (BENCHMARKS.md "sygv eigenvalues only (session 28)",
/// alternating rounds): two stages faster in every round from n = 1100
/// (1.2–2× at 1100–2000, 1.7–1.8× at 4000), a tie within the load's noise
/// at 1000 (0.86–1.48×, median 1.05×) and below.
const TWO_STAGE_FROM_VALUES: usize = 1000;
/// The environment variable that overrides both defaults (an order; `0`
/// takes the two stages always), read once per process: the crossover
/// depends on the machine (memory bandwidth per core against matrix
/// products), so it can be measured elsewhere without a rebuild.
const TWO_STAGE_FROM_VAR: &str = "HERD_SYGV_TWO_STAGE_FROM";

/// The order from which `sygv` takes the two stages: [`TWO_STAGE_FROM_VAR`]
/// when set to a number, else [`TWO_STAGE_FROM`] with eigenvectors
/// (`vectors`) and [`TWO_STAGE_FROM_VALUES`] without (with a warning on
/// stderr for a value that is not a number).
pub(super) fn two_stage_from(vectors: bool) -> usize {
    static FROM: OnceLock<Option<usize>> = OnceLock::new();
    let set = *FROM.get_or_init(|| match std::env::var(TWO_STAGE_FROM_VAR) {
        Ok(v) if !v.trim().is_empty() => v.trim().parse().map_or_else(
            |_| {
                eprintln!(
                    "herd-la: warning: {TWO_STAGE_FROM_VAR}={v:?} is not an order (a non-negative integer); ignored"
                );
                None
            },
            Some,
        ),
        _ => None,
    });
    set.unwrap_or(if vectors { TWO_STAGE_FROM } else { TWO_STAGE_FROM_VALUES })
}

/// The reflectors of both stages: stage 1's `τ` (its vectors stay in the
/// reduced matrix) and the chase's.
pub(super) struct Reflectors {
    nb: usize,
    tau1: Vec<f64>,
    sweeps: chase::Sweeps,
}

/// Reduces the symmetric, column-major `a` (`n × n`, lower triangle read;
/// its strict lower triangle overwritten, the upper not touched) to
/// tridiagonal `T` with half-bandwidth `nb ≥ 1` for the band (clamped to
/// `n − 1`): `T`'s diagonal into `d` (`n`), its subdiagonal into `e`
/// (`n − 1`). Returns the reflectors for [`back_transform`], which also
/// reads `a`.
pub(super) fn reduce(a: MatMut<'_, f64>, nb: usize, d: &mut [f64], e: &mut [f64]) -> Reflectors {
    let (nb, tau1, band) = stage_one(a, nb, d, e);
    let sweeps = chase::chase(band, d, e);
    Reflectors { nb, tau1, sweeps }
}

/// [`reduce`] for the eigenvalues only: the chase keeps no reflector
/// (nothing is back-transformed).
pub(super) fn reduce_values(a: MatMut<'_, f64>, nb: usize, d: &mut [f64], e: &mut [f64]) {
    let (_, _, band) = stage_one(a, nb, d, e);
    chase::chase_values(band, d, e);
}

/// Stage 1 of [`reduce`]: the checked, clamped half-bandwidth, stage 1's
/// `τ`, and the band for the chase.
fn stage_one(a: MatMut<'_, f64>, nb: usize, d: &[f64], e: &[f64]) -> (usize, Vec<f64>, chase::Band) {
    let n = a.nrows();
    assert!(nb >= 1 && a.ncols() == n && d.len() == n && e.len() == n.saturating_sub(1));
    let nb = nb.min(n.saturating_sub(1)).max(1);
    let mut a = a;
    let mut tau1 = vec![0.0; n.saturating_sub(nb)];
    band::reduce(a.as_mut(), nb, &mut tau1);
    let band = chase::Band::from_lower(a.as_ref(), nb);
    (nb, tau1, band)
}

/// `z ← Q·z = Q₁·(Q₂·z)` for the `n × m` column-major `z`, with `a` as
/// [`reduce`] left it.
pub(super) fn back_transform(a: MatRef<'_, f64>, refl: &Reflectors, mut z: MatMut<'_, f64>) {
    let n = a.nrows();
    back::apply_q2(&refl.sweeps, z.as_mut());
    let (nb, k) = (refl.nb, refl.tau1.len());
    if k > 0 {
        ormqr(Side::Left, Op::NoTrans, a.submatrix(nb, 0, n - nb, k), &refl.tau1, z.subrows_mut(nb, n - nb))
            .expect("shapes agree by construction");
    }
}
