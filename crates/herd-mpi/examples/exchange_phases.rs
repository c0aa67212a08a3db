//! Where the time of a strided block exchange goes: the phases of herd's exchange timed
//! one by one (pack, the contiguous transfer through the communicator thread, unpack), the
//! same contiguous transfer as one blocking `MPI_Sendrecv`, and the whole exchanges
//! (`MPI_Sendrecv_replace` with the vector type, herd's pipelined exchange). Medians of 11
//! rounds after one warm-up, on rank 0; every rank times the same phases at the same time
//! (barriers between phases), so each phase is measured with both ranks doing it.
//!
//! `mpirun -np 2 target/release/examples/exchange_phases [ROWS COLS CHUNK_BYTES]`
//! (default 2048 2048 1048576; the block is the middle half of the columns).

use herd_mpi::copy::exchange::exchange_datatype;
use herd_mpi::copy::pipelined::PipelinedExchange;
use herd_mpi::{pack, unpack, Mpi, Options, Vector};
use mpi::topology::Communicator;
use std::time::Instant;

fn median_ms(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2] * 1e3
}

fn arg(i: usize, default: usize) -> usize {
    std::env::args().nth(i).map_or(default, |a| a.parse().expect("ROWS COLS CHUNK_BYTES are whole numbers"))
}

fn main() -> Result<(), herd_mpi::MpiError> {
    let mpi = Mpi::init(Options::default())?;
    let (r, size) = (mpi.rank(), mpi.size());
    assert_eq!(size, 2, "exchange_phases runs on 2 ranks");
    let peer = r ^ 1;
    let (rows, cols, chunk) = (arg(1, 2048), arg(2, 2048), arg(3, 1 << 20));
    let (off, w) = (cols / 4, (cols / 2).max(1));
    let l = Vector { count: rows, blocklen: w, stride: cols };
    let n = rows * w;
    let mut m: Vec<f64> = (0..rows * cols).map(|i| i as f64).collect();
    let mut packed = vec![0.0f64; n];
    let (mut sbuf, mut rbuf) = (vec![1.0f64; n], vec![0.0f64; n]);
    let mut piped = PipelinedExchange::new(chunk)?;
    let names = [
        "herd pack",
        "contiguous isend + irecv_into (communicator thread)",
        "contiguous MPI_Sendrecv (blocking, in Mpi::run)",
        "herd unpack",
        "MPI_Sendrecv_replace, vector type",
        "herd pipelined exchange",
    ];
    let mut secs: Vec<Vec<f64>> = vec![Vec::new(); names.len()];
    for round in 0..12 {
        for (phase, times) in secs.iter_mut().enumerate() {
            mpi.barrier();
            let t = Instant::now();
            match phase {
                0 => pack(&mut packed, &m[off..], l)?,
                1 => {
                    let rx = mpi.irecv_into(peer, 5, std::mem::take(&mut rbuf))?;
                    let tx = mpi.isend(peer, 5, std::mem::take(&mut sbuf))?;
                    rbuf = rx.wait()?;
                    sbuf = tx.wait()?;
                }
                2 => {
                    let (s, d) = (&sbuf, &mut rbuf);
                    mpi.run(|world| {
                        let p = world.process_at_rank(peer as i32);
                        mpi::point_to_point::send_receive_into(&s[..], &p, &mut d[..], &p);
                    });
                }
                3 => unpack(&mut m[off..], &packed, l)?,
                4 => exchange_datatype(&mpi, peer, &mut m[off..], l)?,
                _ => piped.exchange(&mpi, peer, 6, &mut m[off..], l)?,
            }
            if round > 0 {
                times.push(t.elapsed().as_secs_f64());
            }
        }
    }
    if r == 0 {
        println!(
            "{rows}×{w} f64 of a {rows}×{cols} matrix ({} MiB each way), chunks of {chunk} B",
            (n * 8) >> 20
        );
        for (name, v) in names.iter().zip(secs) {
            println!("{name:52} {:7.3} ms", median_ms(v));
        }
    }
    mpi.barrier();
    Ok(())
}
