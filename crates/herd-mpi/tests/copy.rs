//! Tuned copy and pack under mpirun: herd's pack gives the same bytes as MPI_Pack with an
//! MPI_Type_vector (and unpacks what MPI_Unpack does), and a strided block exchanged
//! between ranks by herd pack + contiguous messages equals the exchange with the vector
//! datatype and the sequential reference.

use herd_mpi::copy::exchange::{exchange_datatype, exchange_packed};
use herd_mpi::copy::mpi_pack::{mpi_pack, mpi_unpack, vector_type};
use herd_mpi::{mpi_test, pack, unpack, Mpi, Options, Vector};

fn layouts() -> Vec<Vector> {
    vec![
        Vector { count: 0, blocklen: 3, stride: 5 },
        Vector { count: 1, blocklen: 9, stride: 1 },
        Vector { count: 10, blocklen: 1, stride: 3 },
        Vector { count: 7, blocklen: 4, stride: 4 },
        Vector { count: 500, blocklen: 8, stride: 13 },
        Vector { count: 3000, blocklen: 200, stride: 333 },
    ]
}

mpi_test!(fn herd_pack_equals_mpi_pack() ranks [1, 2] within 120 {
    let mpi = Mpi::init(Options::default()).unwrap();
    for l in layouts() {
        let ext = l.extent().unwrap();
        let n = l.packed_len().unwrap();
        let src: Vec<f64> = (0..ext).map(|i| i as f64 * 1.5 - 7.0).collect();
        let mut herd_packed = vec![0.0f64; n];
        pack(&mut herd_packed, &src, l).unwrap();
        let (raw, mpi_back) = mpi.run(|w| {
            let dt = vector_type::<f64>(l).unwrap();
            let mut raw = vec![0u8; n * 8];
            let used = mpi_pack(w, &dt, l, &src, &mut raw).unwrap();
            assert_eq!(used, n * 8, "MPI_Pack wrote {used} bytes for {l:?}");
            let mut back = vec![-1.0f64; ext];
            mpi_unpack(w, &dt, l, &raw, &mut back).unwrap();
            (raw, back)
        });
        let herd_bytes: Vec<u8> = herd_packed.iter().flat_map(|x| x.to_ne_bytes()).collect();
        assert_eq!(herd_bytes, raw, "herd pack vs MPI_Pack for {l:?}");
        let mut herd_back = vec![-1.0f64; ext];
        unpack(&mut herd_back, &herd_packed, l).unwrap();
        assert_eq!(herd_back, mpi_back, "herd unpack vs MPI_Unpack for {l:?}");
    }
    drop(mpi);
});

fn matrix(rank: usize, rows: usize, cols: usize) -> Vec<f64> {
    (0..rows * cols).map(|i| (rank * 1_000_000_000 + i) as f64).collect()
}

mpi_test!(fn strided_block_exchange_both_ways() ranks [2, 4] within 120 {
    let mpi = Mpi::init(Options::default()).unwrap();
    let (r, size) = (mpi.rank(), mpi.size());
    let (rows, cols) = (301, 257);
    // the column block 50..150 of every row
    let l = Vector { count: rows, blocklen: 100, stride: cols };
    let off = 50;
    let pairs = size / 2 * 2;
    if r < pairs {
        let peer = r ^ 1;
        let mut want = matrix(r, rows, cols);
        let theirs = matrix(peer, rows, cols);
        for i in 0..rows {
            let s = i * cols + off;
            want[s..s + 100].copy_from_slice(&theirs[s..s + 100]);
        }
        let mut a = matrix(r, rows, cols);
        exchange_packed(&mpi, peer, 77, &mut a[off..], l).unwrap();
        assert_eq!(a, want, "herd pack + isend/irecv + unpack, rank {r}");
        let mut b = matrix(r, rows, cols);
        exchange_datatype(&mpi, peer, &mut b[off..], l).unwrap();
        assert_eq!(b, want, "MPI_Sendrecv_replace with the vector type, rank {r}");
        // a zero-count layout exchanges nothing and changes nothing
        let empty = Vector { count: 0, blocklen: 4, stride: 9 };
        let mut c = matrix(r, 2, 2);
        exchange_packed(&mpi, peer, 78, &mut c, empty).unwrap();
        exchange_datatype(&mpi, peer, &mut c, empty).unwrap();
        assert_eq!(c, matrix(r, 2, 2));
    }
    // exchanging with oneself is refused by name
    let e = exchange_packed(&mpi, r, 79, &mut [0.0; 4], Vector { count: 1, blocklen: 1, stride: 1 }).unwrap_err().to_string();
    assert!(e.contains(&format!("peer {r}")), "{e}");
    mpi.barrier();
    drop(mpi);
});
