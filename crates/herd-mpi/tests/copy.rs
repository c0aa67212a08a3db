//! Tuned copy and pack under mpirun: herd's pack gives the same bytes as MPI_Pack with an
//! MPI_Type_vector (and unpacks what MPI_Unpack does), and a strided block exchanged
//! between ranks by herd pack + contiguous messages equals the exchange with the vector
//! datatype and the sequential reference, as does the pipelined exchange for every chunk size
//! and the shared-window exchange for every chunk size and slot count.

use herd_mpi::copy::exchange::{exchange_datatype, exchange_packed};
use herd_mpi::copy::mpi_pack::{mpi_pack, mpi_unpack, vector_type};
use herd_mpi::copy::pipelined::{exchange_pipelined, PipelinedExchange, DEFAULT_CHUNK_BYTES};
use herd_mpi::copy::shared_window::{Route, SharedWindowExchange, DEFAULT_WINDOW_CHUNK_BYTES};
use herd_mpi::{mpi_test, pack, unpack, Mpi, Options, Vector};

/// The most messages (or window chunks) one exchange of these tests may take. A tenth
/// under ThreadSanitizer (`make tsan` sets `herd_tsan`), where these tests took 269 s of
/// CI's time with the full counts (67 s with a tenth); 2,000 one-element messages an
/// exchange still drive the communicator thread's queue and request progress through
/// every path (TSan sees only races inside a rank; the shared window between ranks is
/// checked by the full counts in the uninstrumented run of `make test`).
const MAX_MESSAGES: usize = if cfg!(herd_tsan) { 2_000 } else { 20_000 };

/// Rounds of the back-to-back shared-window test (a tenth under ThreadSanitizer, as
/// [`MAX_MESSAGES`]).
const BACK_TO_BACK_ROUNDS: usize = if cfg!(herd_tsan) { 150 } else { 1_500 };

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

/// `data` with the elements of `l` (from `off`) replaced by the peer's.
fn exchanged(mine: &[f64], theirs: &[f64], off: usize, l: Vector) -> Vec<f64> {
    let mut want = mine.to_vec();
    for b in 0..l.count {
        let s = off + b * l.stride;
        want[s..s + l.blocklen].copy_from_slice(&theirs[s..s + l.blocklen]);
    }
    want
}

/// Layouts with their offset into the buffer: empty ones, one block (long, cut inside by
/// the chunks), one element, single columns, a contiguous run, and column blocks.
fn exchange_layouts() -> Vec<(Vector, usize)> {
    vec![
        (Vector { count: 0, blocklen: 3, stride: 5 }, 0),
        (Vector { count: 4, blocklen: 0, stride: 5 }, 2),
        (Vector { count: 1, blocklen: 10_000, stride: 0 }, 3),
        (Vector { count: 1, blocklen: 1, stride: 1 }, 0),
        (Vector { count: 10, blocklen: 1, stride: 3 }, 1),
        (Vector { count: 7, blocklen: 4, stride: 4 }, 0),
        (Vector { count: 301, blocklen: 100, stride: 257 }, 50),
        (Vector { count: 3000, blocklen: 200, stride: 333 }, 7),
    ]
}

/// Every layout with every chunk size (1 byte = one element a chunk, sizes that cut
/// blocks, more chunks than blocks, the default, one chunk for all), through one
/// `PipelinedExchange` (whose buffers are reused across sizes of chunk) and through
/// `exchange_pipelined`, against `exchange_datatype` and the reference.
/// Layouts of more than `max_n` packed elements are left out.
fn pipelined_matches_datatype(mpi: &Mpi, peer: usize, tag: i32, max_n: usize) {
    let r = mpi.rank();
    let layouts: Vec<(Vector, usize)> =
        exchange_layouts().into_iter().filter(|(l, _)| l.packed_len().unwrap() <= max_n).collect();
    for &(l, off) in &layouts {
        let len = off + l.extent().unwrap() + 5;
        let mine = matrix(r, 1, len);
        let want = exchanged(&mine, &matrix(peer, 1, len), off, l);
        let mut by_type = mine.clone();
        exchange_datatype(mpi, peer, &mut by_type[off..], l).unwrap();
        assert_eq!(by_type, want, "MPI_Sendrecv_replace, {l:?}, rank {r}");
        let n = l.packed_len().unwrap();
        for chunk in [1usize, 8, 24, 1000, 64 << 10, DEFAULT_CHUNK_BYTES, 1 << 40] {
            if n / (chunk / 8).max(1) > MAX_MESSAGES {
                continue; // too many messages to be quick
            }
            let mut ex = PipelinedExchange::new(chunk).unwrap();
            for round in 0..2 {
                let mut a = mine.clone();
                ex.exchange(mpi, peer, tag, &mut a[off..], l).unwrap();
                assert_eq!(a, by_type, "pipelined, chunk {chunk} B, round {round}, {l:?}, rank {r}");
            }
            let mut b = mine.clone();
            exchange_pipelined(mpi, peer, tag, &mut b[off..], l, chunk).unwrap();
            assert_eq!(b, by_type, "exchange_pipelined, chunk {chunk} B, {l:?}, rank {r}");
        }
    }
    // one exchanger for layouts of different sizes in turn (its buffers change length)
    let mut ex = PipelinedExchange::new(4096).unwrap();
    for &(l, off) in layouts.iter().rev().chain(&layouts) {
        let len = off + l.extent().unwrap();
        let mine = matrix(r, 1, len);
        let mut a = mine.clone();
        ex.exchange(mpi, peer, tag, &mut a[off..], l).unwrap();
        assert_eq!(a, exchanged(&mine, &matrix(peer, 1, len), off, l), "reused exchanger, {l:?}, rank {r}");
    }
}

mpi_test!(fn pipelined_exchange_equals_the_datatype_exchange() ranks [2, 4] within 180 {
    let mpi = Mpi::init(Options::default()).unwrap();
    let (r, size) = (mpi.rank(), mpi.size());
    if r < size / 2 * 2 {
        pipelined_matches_datatype(&mpi, r ^ 1, 81, usize::MAX);
    }
    // bad input is refused by name, before anything is sent
    let one = Vector { count: 1, blocklen: 1, stride: 1 };
    let mut ex = PipelinedExchange::default();
    let e = ex.exchange(&mpi, r, 82, &mut [0.0; 4], one).unwrap_err().to_string();
    assert!(e.contains(&format!("peer {r}")), "{e}");
    let e = ex.exchange(&mpi, size, 82, &mut [0.0; 4], one).unwrap_err().to_string();
    assert!(e.contains(&format!("peer {size}")), "{e}");
    let e = exchange_pipelined(&mpi, (r + 1) % size, 82, &mut [0.0; 4], one, 0).unwrap_err().to_string();
    assert!(e.contains("chunk size"), "{e}");
    let e = ex
        .exchange(&mpi, (r + 1) % size, 82, &mut [0.0; 10], Vector { count: 3, blocklen: 2, stride: 5 })
        .unwrap_err()
        .to_string();
    assert!(e.contains("pipelined block exchange") && e.contains("strided buffer has 10"), "{e}");
    let e = ex
        .exchange(&mpi, (r + 1) % size, 82, &mut [0.0; 10], Vector { count: 2, blocklen: 3, stride: 2 })
        .unwrap_err()
        .to_string();
    assert!(e.contains("blocklen 3 > stride 2"), "{e}");
    let e = ex.exchange(&mpi, (r + 1) % size, -1, &mut [0.0; 4], one).unwrap_err().to_string();
    assert!(e.contains("tag -1"), "{e}");
    mpi.barrier();
    drop(mpi);
});

mpi_test!(fn pipelined_exchange_with_chunks_split_into_several_messages() ranks [2] within 120 {
    // max_count 7: every chunk longer than 7 elements goes as several MPI messages
    let mpi = Mpi::init(Options { max_count: 7, ..Options::default() }).unwrap();
    pipelined_matches_datatype(&mpi, mpi.rank() ^ 1, 83, 40_000);
    mpi.barrier();
    drop(mpi);
});

/// Every layout with chunk sizes from one element to one chunk for the whole block and
/// 1, 2 and 4 slots, through the shared window (the ranks of a test share the node),
/// twice with one exchanger and again with a reused one for all layouts, against
/// `exchange_datatype`.
fn shared_window_matches_datatype(mpi: &Mpi, peer: usize, tag: i32) {
    let r = mpi.rank();
    let layouts = exchange_layouts();
    for &(l, off) in &layouts {
        let len = off + l.extent().unwrap() + 5;
        let mine = matrix(r, 1, len);
        let mut by_type = mine.clone();
        exchange_datatype(mpi, peer, &mut by_type[off..], l).unwrap();
        assert_eq!(by_type, exchanged(&mine, &matrix(peer, 1, len), off, l), "datatype, {l:?}");
        let n = l.packed_len().unwrap();
        for chunk in [8usize, 24, 1000, 64 << 10, DEFAULT_WINDOW_CHUNK_BYTES, 1 << 40] {
            if n / (chunk / 8).max(1) > MAX_MESSAGES {
                continue; // too many chunks to be quick when 4 ranks share 2 cores
            }
            for slots in [1usize, 2, 4] {
                let mut ex = SharedWindowExchange::new(chunk, slots).unwrap();
                for round in 0..2 {
                    let mut a = mine.clone();
                    let route = ex.exchange(mpi, peer, tag, &mut a[off..], l).unwrap();
                    assert_eq!(route, Route::SharedWindow, "chunk {chunk} B, {slots} slots, {l:?}");
                    assert_eq!(
                        a, by_type,
                        "shared window, chunk {chunk} B, {slots} slots, round {round}, {l:?}, rank {r}"
                    );
                }
            }
        }
    }
    let mut ex = SharedWindowExchange::new(4096, 3).unwrap();
    for &(l, off) in layouts.iter().rev().chain(&layouts) {
        let len = off + l.extent().unwrap();
        let mine = matrix(r, 1, len);
        let mut a = mine.clone();
        assert_eq!(ex.exchange(mpi, peer, tag, &mut a[off..], l).unwrap(), Route::SharedWindow);
        assert_eq!(a, exchanged(&mine, &matrix(peer, 1, len), off, l), "reused exchanger, {l:?}, rank {r}");
    }
}

mpi_test!(fn shared_window_exchange_equals_the_datatype_exchange() ranks [2, 4] within 240 {
    let mpi = Mpi::init(Options::default()).unwrap();
    let (r, size) = (mpi.rank(), mpi.size());
    // pairs 0-1, 2-3; then with 4 ranks also 0-2, 1-3: a rank keeps a window per peer,
    // and all of them are freed (pair by pair, in one order) when `mpi` drops
    shared_window_matches_datatype(&mpi, r ^ 1, 84);
    if size == 4 {
        shared_window_matches_datatype(&mpi, r ^ 2, 85);
    }
    // a window over the limit goes as messages, with the same result
    let l = Vector { count: 301, blocklen: 100, stride: 257 };
    let mine = matrix(r, 1, l.extent().unwrap());
    let mut want = mine.clone();
    exchange_datatype(&mpi, r ^ 1, &mut want, l).unwrap();
    let mut small = SharedWindowExchange::new(64 << 10, 2).unwrap().with_max_window_bytes(4096);
    let mut a = mine.clone();
    assert_eq!(small.exchange(&mpi, r ^ 1, 86, &mut a, l).unwrap(), Route::NoWindow);
    assert_eq!(a, want, "fallback to messages, rank {r}");
    // bad input is refused by name, before anything is shared or sent
    let one = Vector { count: 1, blocklen: 1, stride: 1 };
    let mut ex = SharedWindowExchange::default();
    let e = ex.exchange(&mpi, r, 87, &mut [0.0; 4], one).unwrap_err().to_string();
    assert!(e.contains(&format!("peer {r}")), "{e}");
    let e = ex.exchange(&mpi, size, 87, &mut [0.0; 4], one).unwrap_err().to_string();
    assert!(e.contains(&format!("peer {size}")), "{e}");
    let e = ex.exchange(&mpi, r ^ 1, -1, &mut [0.0; 4], one).unwrap_err().to_string();
    assert!(e.contains("tag -1"), "{e}");
    let e = ex
        .exchange(&mpi, r ^ 1, 87, &mut [0.0; 10], Vector { count: 3, blocklen: 2, stride: 5 })
        .unwrap_err()
        .to_string();
    assert!(e.contains("shared-window block exchange") && e.contains("strided buffer has 10"), "{e}");
    let e = SharedWindowExchange::new(1024, 0).unwrap_err().to_string();
    assert!(e.contains("slot count"), "{e}");
    mpi.barrier();
    drop(mpi);
});

mpi_test!(fn shared_window_exchange_back_to_back_with_changing_data() ranks [2, 4] within 240 {
    // Many exchanges in a row, each with data that names its round: a rank that wrote a
    // slot before the peer had read it, or read one before the peer had written it, would
    // see another round's or another chunk's values. 1 slot: every chunk is a hand-off;
    // 2 slots: the writer runs a slot ahead.
    let mpi = Mpi::init(Options::default()).unwrap();
    let r = mpi.rank();
    let peer = r ^ 1;
    let (rows, cols) = (64, 37);
    let l = Vector { count: rows, blocklen: 21, stride: cols };
    let off = 5;
    let round_data = |rank: usize, round: usize| -> Vec<f64> {
        (0..off + l.extent().unwrap()).map(|i| (rank * 1_000_000_000 + round * 100_000 + i) as f64).collect()
    };
    for (chunk, slots) in [(8 * 100, 1usize), (8 * 100, 2), (8 * 333, 4), (1 << 20, 1)] {
        let mut ex = SharedWindowExchange::new(chunk, slots).unwrap();
        for round in 0..BACK_TO_BACK_ROUNDS {
            let mut a = round_data(r, round);
            let route = ex.exchange(&mpi, peer, 88, &mut a[off..], l).unwrap();
            assert_eq!(route, Route::SharedWindow);
            let want = exchanged(&round_data(r, round), &round_data(peer, round), off, l);
            if a != want {
                let bad = a.iter().zip(&want).position(|(x, y)| x != y).unwrap();
                panic!(
                    "rank {r}, chunk {chunk} B, {slots} slots, round {round}: element {bad} is {} instead of {}",
                    a[bad], want[bad]
                );
            }
        }
    }
    mpi.barrier();
    drop(mpi);
});
