//! The message-cost measurement of the scale model under mpirun: a ping-pong fit that every
//! rank receives, consistent with its own samples, and its errors.

use herd_mpi::model::measure_messages;
use herd_mpi::{mpi_test, Mpi, Options};

mpi_test!(fn ping_pong_fit_reaches_every_rank() ranks [2, 4] within 120 {
    let mpi = Mpi::init(Options::default()).unwrap();
    let sizes = [8usize, 1 << 10, 1 << 16, 1 << 20];
    let fit = measure_messages(&mpi, &sizes, 5).unwrap();
    assert_eq!(fit.samples.len(), 4);
    assert!(fit.samples.iter().all(|s| s.1 > 0.0 && s.1.is_finite()), "{fit:?}");
    assert_eq!(fit.samples.iter().map(|s| s.0).collect::<Vec<_>>(), sizes);
    // a megabyte takes longer than 8 bytes, so the fitted bandwidth term is positive
    assert!(fit.beta > 0.0, "{fit:?}");
    // the fit passes through the samples' mean
    let mx = sizes.iter().map(|&s| s as f64).sum::<f64>() / 4.0;
    let my = fit.samples.iter().map(|s| s.1).sum::<f64>() / 4.0;
    assert!((fit.alpha + fit.beta * mx - my).abs() <= 1e-9 + 1e-6 * my, "{fit:?}");
    // every rank got rank 0's numbers
    let (a, b) = (fit.alpha, fit.beta);
    let all = mpi.run(move |w| {
        use mpi::collective::CommunicatorCollectives;
        use mpi::topology::Communicator;
        let mut v = vec![0.0f64; 2 * w.size() as usize];
        w.all_gather_into(&[a, b][..], &mut v[..]);
        v
    });
    assert!(all.chunks(2).all(|c| c[0] == a && c[1] == b), "{all:?}");
    assert!(measure_messages(&mpi, &[64, 64], 3).is_err());
    assert!(measure_messages(&mpi, &[8, 64], 0).is_err());
});

mpi_test!(fn ping_pong_needs_two_ranks() ranks [1] within 60 {
    let mpi = Mpi::init(Options::default()).unwrap();
    let e = measure_messages(&mpi, &[8, 1024], 3).unwrap_err().to_string();
    assert!(e.contains("2 or more ranks (have 1)"), "{e}");
});
