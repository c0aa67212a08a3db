//! BOTS `strassen`: C = A·B for n×n `f64` matrices (n a power of two times
//! the cutoff) by Strassen's seven products, computed as seven tasks, each
//! forming its operand sums into fresh temporaries and recursing; at or
//! below `cutoff` rows a product is a plain i-k-j multiply. Checked: the
//! result equals the sequential run's within a tolerance, and sampled
//! entries equal the dot products of A's row and B's column within a
//! rounding bound.

use super::rng::Rng;
use super::{Fork, Kernel, Size};

/// C = A·B, n×n, plain multiply at or below `cutoff` rows.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Strassen {
    /// Rows and columns (`cutoff` times a power of two).
    pub n: usize,
    /// Plain multiply at or below this size.
    pub cutoff: usize,
}

/// A dense row-major square matrix.
#[derive(Clone, Debug, PartialEq)]
pub struct Mat {
    n: usize,
    data: Vec<f64>,
}

/// A square window of a row-major matrix.
#[derive(Clone, Copy)]
struct View<'a> {
    data: &'a [f64],
    stride: usize,
    n: usize,
}

impl Mat {
    fn zeros(n: usize) -> Mat {
        Mat { n, data: vec![0.0; n * n] }
    }
    fn view(&self) -> View<'_> {
        View { data: &self.data, stride: self.n, n: self.n }
    }
}

impl<'a> View<'a> {
    #[inline]
    fn row(&self, i: usize) -> &'a [f64] {
        &self.data[i * self.stride..i * self.stride + self.n]
    }
    /// Quadrant (r, c), r and c in {0, 1}.
    fn quad(&self, r: usize, c: usize) -> View<'a> {
        let h = self.n / 2;
        View { data: &self.data[r * h * self.stride + c * h..], stride: self.stride, n: h }
    }
}

/// x + sign·y into a new matrix.
fn add(x: View, y: View, sign: f64) -> Mat {
    let mut m = Mat::zeros(x.n);
    for (i, out) in m.data.chunks_exact_mut(x.n).enumerate() {
        for ((o, a), b) in out.iter_mut().zip(x.row(i)).zip(y.row(i)) {
            *o = a + sign * b;
        }
    }
    m
}

/// The plain i-k-j product.
fn multiply(a: View, b: View) -> Mat {
    let mut c = Mat::zeros(a.n);
    for (i, c_row) in c.data.chunks_exact_mut(a.n).enumerate() {
        for (k, &x) in a.row(i).iter().enumerate() {
            for (y, z) in c_row.iter_mut().zip(b.row(k)) {
                *y += x * z;
            }
        }
    }
    c
}

fn strassen<F: Fork>(f: &F, a: View, b: View, cutoff: usize) -> Mat {
    let n = a.n;
    if n <= cutoff || n % 2 == 1 {
        return multiply(a, b);
    }
    let (a11, a12, a21, a22) = (a.quad(0, 0), a.quad(0, 1), a.quad(1, 0), a.quad(1, 1));
    let (b11, b12, b21, b22) = (b.quad(0, 0), b.quad(0, 1), b.quad(1, 0), b.quad(1, 1));
    let rec = |x: View, y: View| strassen(f, x, y, cutoff);
    let p1 = || rec(add(a11, a22, 1.0).view(), add(b11, b22, 1.0).view());
    let p2 = || rec(add(a21, a22, 1.0).view(), b11);
    let p3 = || rec(a11, add(b12, b22, -1.0).view());
    let p4 = || rec(a22, add(b21, b11, -1.0).view());
    let p5 = || rec(add(a11, a12, 1.0).view(), b22);
    let p6 = || rec(add(a21, a11, -1.0).view(), add(b11, b12, 1.0).view());
    let p7 = || rec(add(a12, a22, -1.0).view(), add(b21, b22, 1.0).view());
    let (((m1, m2), (m3, m4)), ((m5, m6), m7)) =
        f.join(|| f.join(|| f.join(p1, p2), || f.join(p3, p4)), || f.join(|| f.join(p5, p6), p7));
    let h = n / 2;
    let mut c = Mat::zeros(n);
    for (i, row) in c.data.chunks_exact_mut(n).enumerate() {
        let r = (i % h) * h..(i % h + 1) * h;
        let [x1, x2, x3, x4, x5, x6, x7] = [&m1, &m2, &m3, &m4, &m5, &m6, &m7].map(|m| &m.data[r.clone()]);
        let (left, right) = row.split_at_mut(h);
        for (j, (l, r)) in left.iter_mut().zip(right).enumerate() {
            if i < h {
                *l = x1[j] + x4[j] - x5[j] + x7[j];
                *r = x3[j] + x5[j];
            } else {
                *l = x2[j] + x4[j];
                *r = x1[j] - x2[j] + x3[j] + x6[j];
            }
        }
    }
    c
}

/// The factors.
pub struct Input {
    a: Mat,
    b: Mat,
}

fn random(n: usize, seed: u64) -> Mat {
    let mut rng = Rng::new(seed);
    Mat { n, data: (0..n * n).map(|_| rng.next_f64() * 2.0 - 1.0).collect() }
}

impl Kernel for Strassen {
    type Input = Input;
    type Output = Mat;
    const NAME: &'static str = "strassen";

    fn new(size: Size, grain: Option<usize>) -> Strassen {
        match size {
            Size::Small => Strassen { n: 64, cutoff: grain.unwrap_or(16) },
            Size::Full => Strassen { n: 2048, cutoff: grain.unwrap_or(64) },
        }
    }

    fn describe(&self) -> String {
        format!("{n}×{n} f64, Strassen down to {c}×{c} blocks (plain multiply)", n = self.n, c = self.cutoff)
    }

    fn input(&self) -> Input {
        Input { a: random(self.n, 0x5eed_0005), b: random(self.n, 0x5eed_0006) }
    }

    fn run<F: Fork>(&self, fork: &F, input: &mut Input) -> Mat {
        strassen(fork, input.a.view(), input.b.view(), self.cutoff.max(1))
    }

    fn check(&self, input: &Input, out: &Mat, reference: &Mat) -> Result<(), String> {
        let n = self.n;
        if out.n != n || out.data.len() != n * n {
            return Err(format!("result is {}×{}, expected {n}×{n}", out.n, out.n));
        }
        if let Some((k, (x, y))) = out
            .data
            .iter()
            .zip(&reference.data)
            .enumerate()
            .find(|(_, (x, y))| (*x - *y).abs() > 1e-9 * n as f64)
        {
            return Err(format!("C[{}][{}] = {x}, sequential run {y}", k / n, k % n));
        }
        let mut rng = Rng::new(0x5eed_0007);
        for _ in 0..64 {
            let (i, j) = (rng.below(n as u64) as usize, rng.below(n as u64) as usize);
            let dot: f64 = (0..n).map(|k| input.a.data[i * n + k] * input.b.data[k * n + j]).sum();
            let got = out.data[i * n + j];
            // Entries are in [-1, 1): Strassen's rounding error stays far below n·1e-9.
            if (got - dot).abs() > 1e-9 * n as f64 {
                return Err(format!("C[{i}][{j}] = {got}, dot product {dot}"));
            }
        }
        Ok(())
    }
}
