//! BOTS `sparselu`: LU factorisation (no pivoting) of a sparse matrix of
//! nb×nb blocks of bs×bs `f32`, where only non-null blocks are allocated.
//! For each diagonal block kk: `lu0` factors it; then one task per non-null
//! block of row kk (`fwd`, forward substitution) and of column kk (`bdiv`,
//! division by the upper triangle); then one task per block (i, j) below and
//! right of it whose two factors (i, kk) and (kk, j) are non-null (`bmod`,
//! allocating the block on fill-in). Tasks are `Fork::for_each_mut` over the
//! blocks; the grain is the block size (BOTS's cutoff is the block).
//!
//! The null pattern and the values come from a hash of the block's position
//! (the diagonal is made dominant, so that no pivoting is needed). Checked:
//! the fill-in pattern and every element equal the sequential run's within
//! a tolerance, and sampled entries of L·U equal the input matrix within a
//! rounding bound.

use super::rng::{child, unit, Rng};
use super::{Fork, Kernel, Size};

/// Sparse LU of `nb`×`nb` blocks of `bs`×`bs`.
#[derive(Clone, Debug, serde::Serialize)]
pub struct SparseLu {
    /// Blocks per row and column.
    pub nb: usize,
    /// Rows and columns of a block.
    pub bs: usize,
}

/// Blocks in row-major order; `None` is a null block.
pub type Blocks = Vec<Option<Box<[f32]>>>;

/// The matrix to factor (taken by the run).
pub struct Input {
    blocks: Blocks,
}

const SEED: u64 = 0x5eed_0004;
/// Fraction of off-diagonal blocks present at the start (before fill-in).
const DENSITY: f64 = 0.2;

impl SparseLu {
    /// Whether block (i, j) is non-null in the input.
    fn present(&self, i: usize, j: usize) -> bool {
        i == j || i.abs_diff(j) == 1 || unit(child(SEED, (i * self.nb + j) as u64)) < DENSITY
    }

    /// Block (i, j) of the input.
    fn block(&self, i: usize, j: usize) -> Box<[f32]> {
        let bs = self.bs;
        let mut rng = Rng::new(child(SEED ^ 1, (i * self.nb + j) as u64));
        let mut b: Box<[f32]> = (0..bs * bs).map(|_| (rng.next_f64() * 2.0 - 1.0) as f32).collect();
        if i == j {
            for k in 0..bs {
                b[k * bs + k] += (self.nb * self.bs) as f32;
            }
        }
        b
    }

    /// Element (r, c) of the input matrix.
    fn input_at(&self, r: usize, c: usize) -> f32 {
        let (i, j) = (r / self.bs, c / self.bs);
        if self.present(i, j) {
            self.block(i, j)[(r % self.bs) * self.bs + c % self.bs]
        } else {
            0.0
        }
    }
}

/// Element (r, c) of a block matrix (0 in a null block).
fn at(blocks: &Blocks, nb: usize, bs: usize, r: usize, c: usize) -> f32 {
    blocks[(r / bs) * nb + c / bs].as_ref().map_or(0.0, |b| b[(r % bs) * bs + c % bs])
}

/// Factors the diagonal block in place: unit lower L below, U on and above the diagonal.
fn lu0(d: &mut [f32], bs: usize) {
    for k in 0..bs {
        let pivot = d[k * bs + k];
        for i in k + 1..bs {
            let l = d[i * bs + k] / pivot;
            d[i * bs + k] = l;
            let (upper, lower) = d.split_at_mut(i * bs);
            let row_k = &upper[k * bs + k + 1..k * bs + bs];
            for (x, u) in lower[k + 1..bs].iter_mut().zip(row_k) {
                *x -= l * u;
            }
        }
    }
}

/// Block (kk, j): solves L·X = B with the unit lower triangle of `diag`.
fn fwd(diag: &[f32], b: &mut [f32], bs: usize) {
    for k in 0..bs {
        for i in k + 1..bs {
            let l = diag[i * bs + k];
            let (upper, lower) = b.split_at_mut(i * bs);
            for (x, y) in lower[..bs].iter_mut().zip(&upper[k * bs..k * bs + bs]) {
                *x -= l * y;
            }
        }
    }
}

/// Block (i, kk): solves X·U = B with the upper triangle of `diag`.
fn bdiv(diag: &[f32], b: &mut [f32], bs: usize) {
    for row in b.chunks_exact_mut(bs) {
        for k in 0..bs {
            row[k] /= diag[k * bs + k];
            let x = row[k];
            for (y, u) in row[k + 1..].iter_mut().zip(&diag[k * bs + k + 1..k * bs + bs]) {
                *y -= x * u;
            }
        }
    }
}

/// Block (i, j) −= block (i, kk) · block (kk, j).
fn bmod(a: &[f32], b: &[f32], c: &mut [f32], bs: usize) {
    for (c_row, a_row) in c.chunks_exact_mut(bs).zip(a.chunks_exact(bs)) {
        for (&x, b_row) in a_row.iter().zip(b.chunks_exact(bs)) {
            for (y, z) in c_row.iter_mut().zip(b_row) {
                *y -= x * z;
            }
        }
    }
}

/// One task of the update phase: block (i, kk), block (kk, j), block (i, j).
type Update<'a> = (&'a [f32], &'a [f32], &'a mut Option<Box<[f32]>>);

/// One task of the row/column phase.
enum Edge<'a> {
    Fwd(&'a mut [f32]),
    Bdiv(&'a mut [f32]),
}

fn factor<F: Fork>(f: &F, blocks: &mut Blocks, nb: usize, bs: usize) {
    for kk in 0..nb {
        lu0(blocks[kk * nb + kk].as_deref_mut().expect("diagonal blocks are non-null"), bs);
        let (upper, lower) = blocks.split_at_mut((kk + 1) * nb);
        let (head, right) = upper[kk * nb..].split_at_mut(kk + 1);
        let diag = head[kk].as_deref().expect("diagonal blocks are non-null");
        let mut edges: Vec<Edge> = right
            .iter_mut()
            .filter_map(|b| b.as_deref_mut().map(Edge::Fwd))
            .chain(lower.chunks_exact_mut(nb).filter_map(|row| row[kk].as_deref_mut().map(Edge::Bdiv)))
            .collect();
        f.for_each_mut(&mut edges, &|e| match e {
            Edge::Fwd(b) => fwd(diag, b, bs),
            Edge::Bdiv(b) => bdiv(diag, b, bs),
        });
        drop(edges);
        let right = &*right;
        let mut updates: Vec<Update> = Vec::new();
        for row in lower.chunks_exact_mut(nb) {
            let (left, rest) = row.split_at_mut(kk + 1);
            let Some(a) = left[kk].as_deref() else { continue };
            for (c, b) in rest.iter_mut().zip(right) {
                if let Some(b) = b.as_deref() {
                    updates.push((a, b, c));
                }
            }
        }
        f.for_each_mut(&mut updates, &|(a, b, c)| {
            let c = c.get_or_insert_with(|| vec![0.0; bs * bs].into_boxed_slice());
            bmod(a, b, c, bs);
        });
    }
}

impl Kernel for SparseLu {
    type Input = Input;
    type Output = Blocks;
    const NAME: &'static str = "sparselu";

    fn new(size: Size, grain: Option<usize>) -> SparseLu {
        match size {
            Size::Small => SparseLu { nb: 8, bs: grain.unwrap_or(8) },
            Size::Full => SparseLu { nb: 40, bs: grain.unwrap_or(100) },
        }
    }

    fn describe(&self) -> String {
        format!("{nb}×{nb} blocks of {bs}×{bs} f32, a task per block operation", nb = self.nb, bs = self.bs)
    }

    fn input(&self) -> Input {
        let nb = self.nb;
        let blocks = (0..nb * nb)
            .map(|k| {
                let (i, j) = (k / nb, k % nb);
                self.present(i, j).then(|| self.block(i, j))
            })
            .collect();
        Input { blocks }
    }

    fn run<F: Fork>(&self, fork: &F, input: &mut Input) -> Blocks {
        factor(fork, &mut input.blocks, self.nb, self.bs);
        std::mem::take(&mut input.blocks)
    }

    fn check(&self, _: &Input, out: &Blocks, reference: &Blocks) -> Result<(), String> {
        let (nb, bs) = (self.nb, self.bs);
        for (k, (o, r)) in out.iter().zip(reference).enumerate() {
            match (o, r) {
                (None, None) => {}
                (Some(o), Some(r)) => {
                    if let Some((e, (x, y))) = o
                        .iter()
                        .zip(r.iter())
                        .enumerate()
                        .find(|(_, (x, y))| (*x - *y).abs() > 1e-5 * (1.0 + y.abs()))
                    {
                        return Err(format!(
                            "block ({}, {}) element {e}: {x} vs sequential {y}",
                            k / nb,
                            k % nb
                        ));
                    }
                }
                _ => {
                    return Err(format!(
                        "block ({}, {}): fill-in differs from the sequential run",
                        k / nb,
                        k % nb
                    ))
                }
            }
        }
        // Sampled entries of L·U against the input matrix.
        let n = nb * bs;
        let mut rng = Rng::new(SEED ^ 2);
        for _ in 0..64 {
            let (r, c) = (rng.below(n as u64) as usize, rng.below(n as u64) as usize);
            let (mut sum, mut mag) = (0.0f64, 0.0f64);
            for k in 0..=r.min(c) {
                let l = if k == r { 1.0 } else { at(out, nb, bs, r, k) as f64 };
                let u = at(out, nb, bs, k, c) as f64;
                sum += l * u;
                mag += (l * u).abs();
            }
            let a = self.input_at(r, c) as f64;
            if (sum - a).abs() > 1e-5 * mag + 1e-6 {
                return Err(format!("(L·U)[{r}][{c}] = {sum}, input {a}"));
            }
        }
        Ok(())
    }
}
