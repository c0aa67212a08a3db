//! `herd mpi copy`: the copy and pack measurements of `herd bench copy` on every rank, and
//! a strided block exchanged between ranks 0 and 1 by herd pack + contiguous messages, by
//! herd's pipelined exchange (chunks packed, sent and unpacked in flight), through a shared
//! memory window of the two ranks (packed into it, unpacked from it by the peer) and by
//! MPI's vector datatype.

use crate::bench_copy::{copy_table, layouts, measure_copy, measure_pack, pack_table, parse_size, show_size};
use crate::error::CliError;
use crate::timing::median;
use crate::CliResult;
use herd_mpi::copy::exchange::{exchange_datatype, exchange_packed};
use herd_mpi::copy::pipelined::{PipelinedExchange, DEFAULT_CHUNK_BYTES};
use herd_mpi::copy::shared_window::{SharedWindowExchange, DEFAULT_SLOTS, DEFAULT_WINDOW_CHUNK_BYTES};
use herd_mpi::{Mpi, Vector};
use serde_json::{json, Value};
use std::time::Instant;

/// Options of `herd mpi copy`.
#[derive(clap::Args, Debug)]
pub struct MpiCopyArgs {
    /// Copy size per rank (K, M, G suffixes).
    #[arg(long, value_parser = parse_size, default_value = "64M")]
    size: usize,
    /// Packed bytes of each pack layout.
    #[arg(long, value_parser = parse_size, default_value = "8M")]
    pack_size: usize,
    /// Rows × columns of the exchanged matrix (row-major f64); the block is the middle half of the columns.
    #[arg(long, default_value_t = 2048, value_parser = crate::error::usize_in(2..=1 << 20))]
    rows: usize,
    /// Columns of the matrix.
    #[arg(long, default_value_t = 2048, value_parser = crate::error::usize_in(2..=1 << 20))]
    cols: usize,
    /// Chunk size of the pipelined exchange (K, M, G suffixes; default 1M).
    #[arg(long, value_parser = parse_size, default_value_t = DEFAULT_CHUNK_BYTES)]
    chunk: usize,
    /// Chunk size of the shared-window exchange (K, M, G suffixes; default 1M).
    #[arg(long, value_parser = parse_size, default_value_t = DEFAULT_WINDOW_CHUNK_BYTES)]
    window_chunk: usize,
    /// Chunks in flight per rank in the shared-window exchange (its window's slots).
    #[arg(long, default_value_t = DEFAULT_SLOTS, value_parser = crate::error::usize_in(1..=1 << 16))]
    window_slots: usize,
    /// Timed samples per method.
    #[arg(long, default_value_t = 10, value_parser = crate::error::usize_in(1..=100_000))]
    reps: usize,
    /// Rank 0 prints one JSON object on one line instead of the tables.
    #[arg(long)]
    json: bool,
    /// Draw a bar chart of the block exchange's four medians to FILE (.svg or .png; needs 2 ranks).
    #[arg(long, value_name = "FILE")]
    chart: Option<std::path::PathBuf>,
}

fn matrix(rank: usize, n: usize) -> Vec<f64> {
    (0..n).map(|i| (rank * 1_000_000_000 + i) as f64).collect()
}

/// The block exchange's methods, in the order each round runs them.
const METHODS: [&str; 4] =
    ["herd pack + isend/irecv", "herd pipelined", "herd shared window", "MPI vector datatype"];

/// Ranks 0 and 1 exchange the block both ways, alternating the four methods; returns the
/// seconds of each (rank 0's view) after checking each against the reference. The
/// pipelined exchange keeps its chunk buffers and the shared-window exchange its window
/// from one round to the next (the discarded first round faults them in).
fn exchange(mpi: &Mpi, args: &MpiCopyArgs) -> CliResult<Option<Value>> {
    if mpi.size() < 2 {
        return Ok(None);
    }
    let r = mpi.rank();
    let (rows, cols) = (args.rows, args.cols);
    let (off, w) = (cols / 4, (cols / 2).max(1));
    let l = Vector { count: rows, blocklen: w, stride: cols };
    let mut want = matrix(r, rows * cols);
    if r < 2 {
        let theirs = matrix(r ^ 1, rows * cols);
        for i in 0..rows {
            let s = i * cols + off;
            want[s..s + w].copy_from_slice(&theirs[s..s + w]);
        }
    }
    let mut piped = PipelinedExchange::new(args.chunk).map_err(super::mpi_err)?;
    let chunks = piped.chunks(l).map_err(super::mpi_err)?.len();
    let mut shared =
        SharedWindowExchange::new(args.window_chunk, args.window_slots).map_err(super::mpi_err)?;
    let shared_chunks = shared.chunks(l).map_err(super::mpi_err)?.len();
    let mut route = None;
    let mut secs: [Vec<f64>; 4] = Default::default();
    for rep in 0..args.reps + 1 {
        for (method, name) in METHODS.iter().enumerate() {
            let mut m = matrix(r, rows * cols);
            mpi.barrier();
            let t = Instant::now();
            if r < 2 {
                match method {
                    0 => exchange_packed(mpi, r ^ 1, 4242, &mut m[off..], l),
                    1 => piped.exchange(mpi, r ^ 1, 4243, &mut m[off..], l),
                    2 => shared.exchange(mpi, r ^ 1, 4244, &mut m[off..], l).map(|way| route = Some(way)),
                    _ => exchange_datatype(mpi, r ^ 1, &mut m[off..], l),
                }
                .map_err(super::mpi_err)?;
            }
            let s = t.elapsed().as_secs_f64();
            if m != want {
                return Err(CliError::Verify(format!(
                    "rank {r}: the exchanged matrix ({name}) differs from the reference"
                )));
            }
            if rep > 0 {
                secs[method].push(s);
            }
        }
    }
    let [a, p, sw, b] = secs;
    let bytes = rows * w * 8;
    Ok(Some(json!({
        "rows": rows, "cols": cols, "block_cols": w, "bytes_each_way": bytes,
        "herd_pack_isend": { "median": median(&a), "samples": a },
        "mpi_vector": { "median": median(&b), "samples": b },
        "speedup": median(&b) / median(&a),
        "herd_pipelined": { "median": median(&p), "samples": p, "chunk_bytes": args.chunk, "chunks": chunks },
        "speedup_pipelined": median(&b) / median(&p),
        "herd_shared_window": {
            "median": median(&sw), "samples": sw, "chunk_bytes": args.window_chunk,
            "slots": args.window_slots, "chunks": shared_chunks, "route": route,
        },
        "speedup_shared_window": median(&b) / median(&sw),
    })))
}

/// `herd mpi copy`.
pub fn run(args: &MpiCopyArgs) -> CliResult {
    let format = args.chart.as_deref().map(crate::plot::Format::of).transpose()?;
    let mpi = Mpi::init(herd_mpi::Options::default()).map_err(super::mpi_err)?;
    let (r, size) = (mpi.rank(), mpi.size());
    let copy = measure_copy(args.size, args.reps, || {})?;
    let mut packs = Vec::new();
    for l in layouts(args.pack_size) {
        packs.push(measure_pack(&mpi, l, args.reps, || {})?);
    }
    let ex = exchange(&mpi, args)?;
    // rank 0 collects every rank's copy and pack figures
    let mine = serde_json::to_vec(&json!({ "rank": r, "copy": copy, "pack": packs }))?;
    let all: Vec<Value> = if r == 0 {
        let mut v = vec![serde_json::from_slice(&mine)?];
        for src in 1..size {
            let len =
                mpi.irecv::<u64>(src, 4300, 1).map_err(super::mpi_err)?.wait().map_err(super::mpi_err)?[0]
                    as usize;
            let bytes =
                mpi.irecv::<u8>(src, 4301, len).map_err(super::mpi_err)?.wait().map_err(super::mpi_err)?;
            v.push(serde_json::from_slice(&bytes)?);
        }
        v
    } else {
        mpi.isend(0, 4300, vec![mine.len() as u64])
            .map_err(super::mpi_err)?
            .wait()
            .map_err(super::mpi_err)?;
        mpi.isend(0, 4301, mine).map_err(super::mpi_err)?.wait().map_err(super::mpi_err)?;
        Vec::new()
    };
    mpi.barrier();
    drop(mpi);
    if r != 0 {
        return Ok(());
    }
    let out = json!({ "ranks": size, "threads_per_rank": herd::global().num_threads(), "per_rank": all, "exchange": ex });
    if let (Some(path), Some(format), Some(e)) = (&args.chart, format, &ex) {
        let m = |k: &str| e[k]["median"].as_f64().unwrap_or(f64::NAN);
        let caption = format!("block exchange ranks 0 ↔ 1, {}×{} f64 each way", e["rows"], e["block_cols"]);
        super::bar_chart(
            path,
            format,
            &caption,
            &["herd pack + isend", "herd pipelined", "herd shared window", "MPI vector type"],
            &[m("herd_pack_isend"), m("herd_pipelined"), m("herd_shared_window"), m("mpi_vector")],
        )?;
    }
    if args.json {
        println!("{}", serde_json::to_string(&out)?);
        return Ok(());
    }
    println!(
        "{size} ranks, {} participants each; medians of {} samples; GB/s count read + write\n",
        herd::global().num_threads(),
        args.reps
    );
    for rank in &all {
        println!("rank {}: copy", rank["rank"]);
        print!("{}", copy_table(std::slice::from_ref(&rank["copy"])));
        println!("rank {}: pack ({} packed)", rank["rank"], show_size(args.pack_size));
        print!("{}", pack_table(rank["pack"].as_array().map(Vec::as_slice).unwrap_or(&[])));
        println!();
    }
    match &ex {
        None => println!("block exchange: needs at least 2 ranks"),
        Some(e) => {
            let ms = |k: &str| e[k]["median"].as_f64().unwrap_or(0.0) * 1e3;
            println!(
                "block exchange ranks 0 ↔ 1: {}×{} of a {}×{} matrix ({} each way)\n  herd pack + isend/irecv + unpack: {:.3} ms\n  herd pipelined ({} chunks of ≤ {}): {:.3} ms\n  herd shared window ({} chunks of ≤ {}, {} slots, route {}): {:.3} ms\n  MPI_Sendrecv_replace, vector type: {:.3} ms\n  herd speedup: {:.2}× (pack + isend), {:.2}× (pipelined), {:.2}× (shared window)",
                e["rows"], e["block_cols"], e["rows"], e["cols"],
                show_size(e["bytes_each_way"].as_u64().unwrap_or(0) as usize),
                ms("herd_pack_isend"), e["herd_pipelined"]["chunks"],
                show_size(args.chunk), ms("herd_pipelined"),
                e["herd_shared_window"]["chunks"], show_size(args.window_chunk), args.window_slots,
                e["herd_shared_window"]["route"], ms("herd_shared_window"), ms("mpi_vector"),
                e["speedup"].as_f64().unwrap_or(0.0), e["speedup_pipelined"].as_f64().unwrap_or(0.0),
                e["speedup_shared_window"].as_f64().unwrap_or(0.0)
            );
        }
    }
    Ok(())
}
