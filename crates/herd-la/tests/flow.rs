//! The dataflow (herd-flow) tiled Cholesky: same factor as the sequential
//! tiled algorithm for many sizes, LAPACK-like errors, a timeline whose DAG
//! has the expected shape, and no requeues under dependency counting.

use faer::Mat;
use herd_flow::Discipline;
use herd_la::{potrf_flow, potrf_seq_tiled, random_spd, residual, Backend, LaError, TiledMatrix};
use std::sync::Arc;

fn pool(n: usize) -> herd::Pool {
    herd::Pool::builder().num_threads(n).build().unwrap()
}

fn flow_factor(p: &herd::Pool, a: &Mat<f64>, nb: usize) -> Result<Mat<f64>, LaError> {
    let t = Arc::new(TiledMatrix::from_faer(a.as_ref(), nb)?);
    p.install(|| potrf_flow(&t, Backend::Faer, Discipline::default(), false))?;
    Ok(t.to_faer())
}

#[test]
fn matches_the_sequential_tiled_factor() {
    let p = pool(2);
    for (n, nb) in [(0, 4), (1, 1), (1, 8), (5, 2), (17, 4), (33, 8), (50, 64), (64, 16), (97, 32), (130, 24)]
    {
        let a = random_spd(n, n as u64 + 5);
        let l = flow_factor(&p, &a, nb).unwrap();
        let r = residual(a.as_ref(), l.as_ref()).unwrap();
        assert!(r < 10.0, "n={n} nb={nb} residual={r}");
        let mut s = TiledMatrix::from_faer(a.as_ref(), nb).unwrap();
        potrf_seq_tiled(&mut s).unwrap();
        let seq = s.to_faer();
        for j in 0..n {
            for i in j..n {
                let (x, y) = (l[(i, j)], seq[(i, j)]);
                assert!((x - y).abs() <= 1e-12 * (1.0 + y.abs()), "n={n} nb={nb} ({i},{j}): {x} vs {y}");
            }
        }
    }
}

#[test]
fn errors_like_lapack() {
    let p = pool(2);
    // Not positive definite at global column 9 (tile 2 of nb = 4).
    let mut a = random_spd(16, 3);
    a[(9, 9)] = -1.0;
    assert!(matches!(flow_factor(&p, &a, 4), Err(LaError::NotPositiveDefinite { column: 9 })));
    let mut a = random_spd(8, 1);
    a[(5, 2)] = f64::NAN;
    assert!(matches!(flow_factor(&p, &a, 3), Err(LaError::NonFinite { row: 5, col: 2 })));
    let rect = Arc::new(TiledMatrix::zeros(4, 3, 2).unwrap());
    assert!(matches!(
        potrf_flow(&rect, Backend::Faer, Discipline::default(), false),
        Err(LaError::NotSquare { .. })
    ));
    // The pool is still usable.
    let a = random_spd(20, 2);
    assert!(flow_factor(&p, &a, 5).is_ok());
}

#[test]
fn timeline_has_the_cholesky_dag_and_no_requeues() {
    let p = pool(2);
    let nt = 4;
    let a = random_spd(nt * 8, 9);
    let t = Arc::new(TiledMatrix::from_faer(a.as_ref(), 8).unwrap());
    let report = p.install(|| potrf_flow(&t, Backend::Faer, Discipline::default(), true)).unwrap();
    let steps = nt + nt * (nt - 1) / 2 + (1..nt).map(|k| (nt - k) * (nt - k + 1) / 2).sum::<usize>();
    assert_eq!(report.stats.executed as usize, steps);
    assert_eq!(report.stats.requeued, 0);
    let tl = report.timeline.unwrap();
    let events = tl["traceEvents"].as_array().unwrap();
    let steps_ev: Vec<_> = events.iter().filter(|e| e["cat"] == "step").collect();
    assert_eq!(steps_ev.len(), steps);
    // potrf(0) depends only on the initial tokens (no producer); every
    // trsm depends on its potrf.
    let id_of = |name: &str, tag: &str| {
        steps_ev.iter().find(|e| e["name"] == name && e["args"]["tag"] == tag).unwrap()["args"]["id"].clone()
    };
    let p0 = id_of("potrf", "0");
    let trsm_deps = &steps_ev.iter().find(|e| e["name"] == "trsm" && e["args"]["tag"] == "(1, 0)").unwrap()
        ["args"]["deps"];
    assert!(trsm_deps.as_array().unwrap().contains(&p0), "{trsm_deps}");
}

/// The three disciplines give the same factor; only dependency counting
/// avoids requeues (with all tags up front, requeue re-runs many steps).
#[test]
fn every_discipline_gives_the_same_factor() {
    let p = pool(2);
    let a = random_spd(60, 21);
    let mut seq = TiledMatrix::from_faer(a.as_ref(), 10).unwrap();
    potrf_seq_tiled(&mut seq).unwrap();
    let seq = seq.to_faer();
    for d in [Discipline::DependencyCounted, Discipline::Requeue, Discipline::OnTheFly] {
        let t = Arc::new(TiledMatrix::from_faer(a.as_ref(), 10).unwrap());
        let report = p.install(|| potrf_flow(&t, Backend::Faer, d, false)).unwrap();
        assert_eq!(report.stats.executed, 6 + 15 + 35, "{d:?}");
        if d == Discipline::DependencyCounted {
            assert_eq!(report.stats.requeued, 0);
        }
        let l = t.to_faer();
        for j in 0..60 {
            for i in j..60 {
                assert!(
                    (l[(i, j)] - seq[(i, j)]).abs() <= 1e-12 * (1.0 + seq[(i, j)].abs()),
                    "{d:?} ({i},{j})"
                );
            }
        }
    }
}
