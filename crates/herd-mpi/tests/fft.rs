//! The distributed 2-D FFT under mpirun (1, 2 and 4 ranks): bulk, overlapped (several chunk
//! counts) and FFTW-MPI against a single-process rustfft reference, a forward + inverse
//! round trip, and the errors for an order the ranks do not divide.

use herd_mpi::fft::fftw::{Fftw2d, Planning};
use herd_mpi::fft::{Algorithm, Fft2d, Slab, C64};
use herd_mpi::{mpi_test, Mpi, Options};
use rustfft::FftPlanner;

/// The deterministic test input, element (i, j) of the whole n × n matrix.
fn input(n: usize, i: usize, j: usize) -> C64 {
    // a pseudo-random hash of (n, i, j): no dominant frequency, entries in [-0.5, 0.5)
    let mut h = (n as u64) << 42 ^ (i as u64) << 21 ^ j as u64;
    h = (h ^ (h >> 33)).wrapping_mul(0xff51_afd7_ed55_8ccd);
    h = (h ^ (h >> 33)).wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^= h >> 33;
    let unit = |bits: u64| (bits & 0xffff_ffff) as f64 / 4_294_967_296.0 - 0.5;
    C64::new(unit(h), unit(h >> 32))
}

fn local_input(slab: Slab) -> Vec<C64> {
    let n = slab.n;
    slab.range().flat_map(|i| (0..n).map(move |j| input(n, i, j))).collect()
}

/// The whole transform on one process, in the transposed layout: row FFTs, transpose,
/// row FFTs (= the column FFTs of the row-FFT'd matrix).
fn reference_transposed(n: usize) -> Vec<C64> {
    let fft = FftPlanner::<f64>::new().plan_fft_forward(n);
    let mut a: Vec<C64> = (0..n * n).map(|k| input(n, k / n, k % n)).collect();
    fft.process(&mut a);
    let mut t = vec![C64::default(); n * n];
    for i in 0..n {
        for j in 0..n {
            t[j * n + i] = a[i * n + j];
        }
    }
    fft.process(&mut t);
    t
}

fn rms(v: &[C64]) -> f64 {
    (v.iter().map(|z| z.norm_sqr()).sum::<f64>() / v.len() as f64).sqrt()
}

/// max |got − want| / (n · log2 n · ε · rms(x)): O(1) for a correct FFT.
fn scaled_error(got: &[C64], want: &[C64], n: usize, x_rms: f64) -> f64 {
    assert_eq!(got.len(), want.len());
    let max = got.iter().zip(want).map(|(a, b)| (a - b).norm()).fold(0.0, f64::max);
    max / (n as f64 * (n as f64).log2().max(1.0) * f64::EPSILON * x_rms)
}

/// The bound on the scaled error.
const TOL: f64 = 10.0;

mpi_test!(fn transforms_match_the_reference() ranks [1, 2, 4] within 300 {
    let mpi = Mpi::init(Options::default()).unwrap();
    let threads = herd::global().num_threads();
    for n in [16usize, 48, 64, 256] {
        let reference = reference_transposed(n);
        let mut fft = Fft2d::new(&mpi, n).unwrap();
        let slab = fft.slab();
        let x = local_input(slab);
        let x_rms = rms(&x);
        let want = slab.of(&reference);

        let bulk = fft.forward_bulk(&mut x.clone()).unwrap();
        let e = scaled_error(&bulk, want, n, x_rms);
        assert!(e < TOL, "bulk n {n} rank {}: scaled error {e}", slab.rank);

        for k in [1usize, 3, herd_mpi::fft::DEFAULT_CHUNKS, slab.m(), 10 * n] {
            let mut f = Fft2d::new(&mpi, n).unwrap().with_chunks(k).unwrap();
            assert!(f.chunks() >= 1 && f.chunks() <= slab.m());
            let over = f.forward_overlapped(&mut x.clone()).unwrap();
            assert!(over == bulk, "overlapped (K = {k}) differs from bulk, n {n} rank {}", slab.rank);
            // a second transform reuses the buffers
            let again = f.forward_overlapped(&mut x.clone()).unwrap();
            assert!(again == bulk, "second overlapped transform differs, n {n} K {k}");
        }

        let mut fftw = Fftw2d::new(&mpi, n, threads, Planning::Estimate).unwrap();
        let got = fftw.forward(&x).unwrap();
        let e = scaled_error(&got, want, n, x_rms);
        assert!(e < TOL, "FFTW n {n} rank {}: scaled error {e}", slab.rank);
        drop(fftw);

        // round trip: the inverse takes the transposed layout back to the normal one
        for alg in [Algorithm::Bulk, Algorithm::Overlapped] {
            let mut y = bulk.clone();
            let back: Vec<C64> =
                fft.inverse(alg, &mut y).unwrap().into_iter().map(|z| z / (n * n) as f64).collect();
            // x is n times smaller than Y: the error is scaled by log2 n · ε · rms(x)
            let e = scaled_error(&back, &x, n, x_rms) * n as f64;
            assert!(e < TOL, "{alg:?} round trip n {n}: scaled error {e}");
        }
        if slab.rank == 0 {
            println!("n {n}: ok on {} ranks", slab.ranks);
        }
    }
    mpi.barrier();
});

mpi_test!(fn bad_orders_are_errors() ranks [1, 2, 4] within 120 {
    let mpi = Mpi::init(Options::default()).unwrap();
    let p = mpi.size();
    if p > 1 {
        let n = 8 * p + 1;
        let e = Fft2d::new(&mpi, n).err().expect("n not divisible by P").to_string();
        assert!(e.contains(&format!("n = {n}")) && e.contains("not divisible"), "{e}");
        assert!(Fftw2d::new(&mpi, n, 1, Planning::Estimate).is_err());
    }
    assert!(Fft2d::new(&mpi, 0).is_err());
    let mut fft = Fft2d::new(&mpi, 8 * p).unwrap();
    assert!(Fft2d::new(&mpi, 8 * p).unwrap().with_chunks(0).is_err());
    // wrong slab length (checked before any communication, so no rank is left waiting)
    let e = fft.forward_bulk(&mut [C64::default(); 3]).unwrap_err().to_string();
    assert!(e.contains("3 elements"), "{e}");
    mpi.barrier();
});
