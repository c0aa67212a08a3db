use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::evd::{self_adjoint_evd, self_adjoint_evd_scratch, ComputeEigenvectors};
use faer::{Mat, Par};
use herd_la::trsm::{trsm, Side};
use herd_la::*;
use std::time::Instant;
fn main() {
    let n: usize = std::env::args().nth(1).unwrap().parse().unwrap();
    let pool = herd::Pool::builder().num_threads(2).build().unwrap();
    let r = random_matrix(n, n, 1);
    let a = Mat::from_fn(n, n, |i, j| r[(i, j)] + r[(j, i)]);
    let b = random_spd(n, 2);
    let (mut z, mut l, mut w) = (a.clone(), b.clone(), vec![0.0; n]);
    let t = Instant::now();
    pool.install(|| sygv(z.as_mut(), l.as_mut(), &mut w)).unwrap();
    println!("sygv total {:.3}", t.elapsed().as_secs_f64());
    let mut x = a.clone();
    let t = Instant::now();
    pool.install(|| trsm(Side::Left, Uplo::Lower, Op::NoTrans, Diag::NonUnit, 1.0, l.as_ref(), x.as_mut()))
        .unwrap();
    println!("one trsm {:.3}", t.elapsed().as_secs_f64());
    let mut x = a.clone();
    let t = Instant::now();
    faer::linalg::triangular_solve::solve_lower_triangular_in_place(l.as_ref(), x.as_mut(), Par::rayon(2));
    println!("faer trsm rayon2 {:.3}", t.elapsed().as_secs_f64());
    let mut bb = b.clone();
    let tl = std::sync::Arc::new(TiledMatrix::from_faer(b.as_ref(), 256).unwrap());
    let t = Instant::now();
    pool.install(|| potrf_flow(&tl, Backend::Faer, herd_flow::Discipline::DependencyCounted, false)).unwrap();
    println!("potrf_flow {:.3}", t.elapsed().as_secs_f64());
    let _ = &mut bb;
    for par in [Par::Seq, Par::rayon(2)] {
        let mut zz = Mat::<f64>::zeros(n, n);
        let mut s = faer::diag::Diag::<f64>::zeros(n);
        let mut mem = MemBuffer::new(self_adjoint_evd_scratch::<f64>(
            n,
            ComputeEigenvectors::Yes,
            par,
            Default::default(),
        ));
        let t = Instant::now();
        self_adjoint_evd(
            a.as_ref(),
            s.as_mut(),
            Some(zz.as_mut()),
            par,
            MemStack::new(&mut mem),
            Default::default(),
        )
        .unwrap();
        println!("evd {par:?} {:.3}", t.elapsed().as_secs_f64());
        let mut tri = a.clone();
        let mut h = Mat::<f64>::zeros(
            faer::linalg::qr::no_pivoting::factor::recommended_block_size::<f64>(n, n),
            n - 1,
        );
        let mut mem = MemBuffer::new(faer::linalg::evd::tridiag::tridiag_in_place_scratch::<f64>(
            n,
            par,
            Default::default(),
        ));
        let t = Instant::now();
        faer::linalg::evd::tridiag::tridiag_in_place(
            tri.as_mut(),
            h.as_mut(),
            par,
            MemStack::new(&mut mem),
            Default::default(),
        );
        println!("tridiag {par:?} {:.3}", t.elapsed().as_secs_f64());
    }
}
