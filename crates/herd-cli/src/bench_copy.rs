//! `herd bench copy`: herd's topology-aware parallel copy against `memcpy` (one thread)
//! and STREAM's copy kernel across sizes, the machine's STREAM copy bandwidth, and herd's
//! strided pack/unpack against `MPI_Type_vector` + `MPI_Pack`/`MPI_Unpack` (MPI started as
//! a singleton). The measurements are shared with `herd mpi copy`.

use crate::error::CliError;
use crate::plot::{self, Panel, Series};
use crate::timing::median;
use crate::CliResult;
use herd_mpi::copy::mpi_pack::{mpi_pack, mpi_unpack, vector_type};
use herd_mpi::copy::stream::{stream_copy, StreamArrays};
use herd_mpi::copy::{global_copier, pack, unpack, Vector};
use herd_mpi::Mpi;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::time::Instant;

/// Options of `herd bench copy`.
#[derive(clap::Args, Debug)]
pub struct CopyArgs {
    /// Copy sizes in bytes, comma-separated, with an optional K, M or G suffix (powers of 1024).
    #[arg(long, value_name = "SIZE,...", value_delimiter = ',', value_parser = parse_size,
          default_value = "64K,256K,1M,4M,16M,64M,256M")]
    pub sizes: Vec<usize>,
    /// Timed samples per method and size (methods alternate within each round; medians reported).
    #[arg(long, default_value_t = 15, value_parser = crate::error::usize_in(1..=100_000))]
    pub reps: usize,
    /// Bytes of each STREAM array (default: four times the last-level cache, at least 256M).
    #[arg(long, value_parser = parse_size)]
    pub stream_size: Option<usize>,
    /// Packed bytes of each pack layout.
    #[arg(long, value_parser = parse_size, default_value = "32M")]
    pub pack_size: usize,
    /// Print one JSON object instead of the tables.
    #[arg(long)]
    pub json: bool,
    /// Draw GB/s against the size to FILE (.svg or .png).
    #[arg(long, value_name = "FILE")]
    pub chart: Option<PathBuf>,
}

/// `64K`, `1M`, `2G` or plain bytes.
pub fn parse_size(s: &str) -> Result<usize, String> {
    let t = s.trim();
    let (num, mul) = match t.chars().last().map(|c| c.to_ascii_uppercase()) {
        Some('K') => (&t[..t.len() - 1], 1usize << 10),
        Some('M') => (&t[..t.len() - 1], 1 << 20),
        Some('G') => (&t[..t.len() - 1], 1 << 30),
        _ => (t, 1),
    };
    num.parse::<usize>().ok().and_then(|n| n.checked_mul(mul)).filter(|&n| n >= 8).ok_or_else(|| {
        format!("{s:?} is not a size: a whole number of bytes ≥ 8 with an optional K, M or G suffix")
    })
}

/// `n` bytes as `64K`, `1M`, ...
pub fn show_size(n: usize) -> String {
    if n >= 1 << 30 && n.is_multiple_of(1 << 30) {
        format!("{}G", n >> 30)
    } else if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
        format!("{}M", n >> 20)
    } else if n >= 1 << 10 && n.is_multiple_of(1 << 10) {
        format!("{}K", n >> 10)
    } else {
        n.to_string()
    }
}

/// GB/s samples of one method.
pub fn summary(samples: &[f64]) -> Value {
    let mut s = samples.to_vec();
    s.sort_by(f64::total_cmp);
    json!({ "median_gbs": median(&s), "best_gbs": s.last().copied().unwrap_or(0.0), "samples_gbs": samples })
}

/// Times `f` run `k` times; returns GB/s counting `2 × bytes` per run (read + write).
fn gbs(bytes: usize, k: usize, mut f: impl FnMut()) -> f64 {
    let t = Instant::now();
    for _ in 0..k {
        f();
    }
    2.0 * bytes as f64 * k as f64 / t.elapsed().as_secs_f64() / 1e9
}

/// One size of the copy comparison: herd parallel copy, memcpy, STREAM kernel on all
/// participants, each checked.
pub fn measure_copy(bytes: usize, reps: usize, mut tick: impl FnMut()) -> CliResult<Value> {
    let n = bytes / 8;
    let bytes = n * 8;
    let pool = herd::global();
    let copier = global_copier();
    let mut arrays = StreamArrays::new(pool, n);
    let src: Vec<f64> = (0..n).map(|i| i as f64 * 0.25 + 1.0).collect();
    let mut dst = vec![-1.0f64; n];
    let k = ((4 << 20) / bytes.max(1)).max(1);
    let (mut h, mut m, mut s) = (Vec::new(), Vec::new(), Vec::new());
    for rep in 0..reps + 1 {
        let a = gbs(bytes, k, || {
            copier.copy(&mut dst, &src).expect("equal lengths");
        });
        let b = gbs(bytes, k, || dst.copy_from_slice(&src));
        let c = gbs(bytes, k, || arrays.copy(pool));
        if rep > 0 {
            h.push(a);
            m.push(b);
            s.push(c);
        }
        tick();
    }
    dst.fill(-1.0);
    let plan = copier.copy(&mut dst, &src).expect("equal lengths");
    if dst != src {
        return Err(CliError::Verify(format!("herd parallel copy of {bytes} bytes differs from the source")));
    }
    if !arrays.verify() {
        return Err(CliError::Verify(format!("STREAM kernel copy of {bytes} bytes differs from the source")));
    }
    Ok(json!({
        "bytes": bytes, "threads": plan.threads(), "regime": plan.regime,
        "pus": plan.chunks.iter().map(|c| c.pu).collect::<Vec<_>>(),
        "herd": summary(&h), "memcpy": summary(&m), "stream_kernel": summary(&s),
    }))
}

/// The layouts of the pack comparison for `packed` bytes of f64.
pub fn layouts(packed: usize) -> Vec<Vector> {
    let n = (packed / 8).max(1);
    [1usize, 8, 64, 1024]
        .iter()
        .map(|&bl| Vector { count: (n / bl).max(1), blocklen: bl, stride: 2 * bl })
        .chain(std::iter::once(Vector { count: (256 << 10) / 8 / 64, blocklen: 64, stride: 128 }))
        .collect()
}

/// One layout of the pack comparison: herd pack/unpack against MPI_Pack/MPI_Unpack with the
/// vector datatype (on the communicator thread, timed inside it), each checked.
pub fn measure_pack(mpi: &Mpi, l: Vector, reps: usize, mut tick: impl FnMut()) -> CliResult<Value> {
    let fail = |e: herd_mpi::MpiError| CliError::Failed(e.to_string());
    let n = l.packed_len().map_err(fail)?;
    let ext = l.extent().map_err(fail)?;
    let bytes = n * 8;
    let src: Vec<f64> = (0..ext).map(|i| i as f64 + 0.5).collect();
    let mut packed = vec![0.0f64; n];
    let mut raw = vec![0u8; bytes];
    let mut back = vec![0.0f64; ext];
    let mut mback = vec![0.0f64; ext];
    let k = ((4 << 20) / bytes.max(1)).max(1);
    let (mut hp, mut hu, mut mp, mut mu) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for rep in 0..reps + 1 {
        let a = gbs(bytes, k, || pack(&mut packed, &src, l).expect("checked layout"));
        let b = gbs(bytes, k, || unpack(&mut back, &packed, l).expect("checked layout"));
        let (c, d) = mpi
            .run(|w| -> herd_mpi::Result<(f64, f64)> {
                let dt = vector_type::<f64>(l)?;
                let t = Instant::now();
                for _ in 0..k {
                    mpi_pack(w, &dt, l, &src, &mut raw)?;
                }
                let c = 2.0 * (bytes * k) as f64 / t.elapsed().as_secs_f64() / 1e9;
                let t = Instant::now();
                for _ in 0..k {
                    mpi_unpack(w, &dt, l, &raw, &mut mback)?;
                }
                Ok((c, 2.0 * (bytes * k) as f64 / t.elapsed().as_secs_f64() / 1e9))
            })
            .map_err(fail)?;
        if rep > 0 {
            hp.push(a);
            hu.push(b);
            mp.push(c);
            mu.push(d);
        }
        tick();
    }
    let same = packed.iter().zip(raw.chunks_exact(8)).all(|(x, b)| x.to_ne_bytes() == b);
    if !same {
        return Err(CliError::Verify(format!("herd pack and MPI_Pack differ for {l:?}")));
    }
    let want: Vec<f64> =
        (0..l.count).flat_map(|k| src[k * l.stride..k * l.stride + l.blocklen].iter().copied()).collect();
    if packed != want {
        return Err(CliError::Verify(format!("herd pack differs from the reference for {l:?}")));
    }
    if back != mback {
        return Err(CliError::Verify(format!("herd unpack and MPI_Unpack differ for {l:?}")));
    }
    Ok(json!({
        "count": l.count, "blocklen": l.blocklen, "stride": l.stride, "bytes": bytes,
        "herd_pack": summary(&hp), "herd_unpack": summary(&hu),
        "mpi_pack": summary(&mp), "mpi_unpack": summary(&mu),
        "pack_speedup": median(&hp) / median(&mp), "unpack_speedup": median(&hu) / median(&mu),
    }))
}

fn g(v: &Value, k: &str) -> f64 {
    v[k]["median_gbs"].as_f64().unwrap_or(0.0)
}

/// The copy table.
pub fn copy_table(rows: &[Value]) -> String {
    let mut t = crate::table::Table::new(&[
        "size",
        "threads",
        "regime",
        "herd GB/s",
        "memcpy GB/s",
        "STREAM-kernel GB/s",
        "herd/memcpy",
    ]);
    for r in rows {
        t.row(vec![
            show_size(r["bytes"].as_u64().unwrap_or(0) as usize),
            r["threads"].to_string(),
            r["regime"].as_str().unwrap_or("").to_string(),
            format!("{:.2}", g(r, "herd")),
            format!("{:.2}", g(r, "memcpy")),
            format!("{:.2}", g(r, "stream_kernel")),
            format!("{:.2}", g(r, "herd") / g(r, "memcpy")),
        ]);
    }
    t.render()
}

/// The pack table.
pub fn pack_table(rows: &[Value]) -> String {
    let mut t = crate::table::Table::new(&[
        "layout (count×blocklen/stride)",
        "bytes",
        "herd pack",
        "MPI_Pack",
        "×",
        "herd unpack",
        "MPI_Unpack",
        "×",
    ]);
    for r in rows {
        t.row(vec![
            format!("{}×{}/{}", r["count"], r["blocklen"], r["stride"]),
            show_size(r["bytes"].as_u64().unwrap_or(0) as usize),
            format!("{:.2}", g(r, "herd_pack")),
            format!("{:.2}", g(r, "mpi_pack")),
            format!("{:.2}", r["pack_speedup"].as_f64().unwrap_or(0.0)),
            format!("{:.2}", g(r, "herd_unpack")),
            format!("{:.2}", g(r, "mpi_unpack")),
            format!("{:.2}", r["unpack_speedup"].as_f64().unwrap_or(0.0)),
        ]);
    }
    t.render()
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_default()
}

/// `herd bench copy`.
pub fn run(args: &CopyArgs) -> CliResult {
    let format = args.chart.as_deref().map(plot::Format::of).transpose()?;
    let pool = herd::global();
    let llc = pool.info().cache_sizes.iter().rev().flatten().next().copied().unwrap_or(32 << 20) as usize;
    let stream_bytes = args.stream_size.unwrap_or((4 * llc).max(256 << 20));
    let largest = args.sizes.iter().copied().max().unwrap_or(0);
    herd::limits::check_memory(
        "herd bench copy (source, destination and STREAM arrays)",
        (4 * largest).max(2 * stream_bytes).max(3 * args.pack_size) as u128,
    )?;
    let mpi = Mpi::init(herd_mpi::Options::default()).map_err(|e| CliError::Failed(e.to_string()))?;
    let layouts = layouts(args.pack_size);
    let bar = crate::progress::bar(((args.sizes.len() + layouts.len()) * (args.reps + 1) + 1) as u64);
    bar.set_message("STREAM copy");
    let stream = stream_copy(pool, stream_bytes / 8, args.reps)
        .ok_or_else(|| CliError::Verify("the STREAM copy kernel's result differs from its source".into()))?;
    bar.inc(1);
    let mut copies = Vec::new();
    for &b in &args.sizes {
        bar.set_message(format!("copy {}", show_size(b)));
        copies.push(measure_copy(b, args.reps, || bar.inc(1))?);
    }
    let mut packs = Vec::new();
    for &l in &layouts {
        bar.set_message(format!("pack {}×{}", l.count, l.blocklen));
        packs.push(measure_pack(&mpi, l, args.reps, || bar.inc(1))?);
    }
    bar.finish_and_clear();
    drop(mpi);
    let out = json!({
        "cpu": cpu_model(), "threads": pool.num_threads(), "reps": args.reps,
        "stream": stream, "copy": copies, "pack": packs,
    });
    if args.json {
        println!("{}", serde_json::to_string(&out)?);
    } else {
        println!(
            "CPU: {}   participants: {}   samples per method: {} (medians; GB/s count read + write)",
            out["cpu"].as_str().unwrap_or(""),
            pool.num_threads(),
            args.reps
        );
        println!(
            "STREAM copy (Rust kernel c[i] = a[i] on all {} participants, 2 × {} arrays): best {:.2} GB/s, median {:.2} GB/s\n",
            stream.threads,
            show_size(stream.n * 8),
            stream.best_gbs,
            stream.median_gbs
        );
        print!("{}", copy_table(&copies));
        if let Some(last) = copies.iter().find(|r| r["bytes"].as_u64() == Some(largest as u64 / 8 * 8)) {
            println!(
                "\nherd copy of {} = {:.0} % of STREAM copy's best ({:.0} % of its median)",
                show_size(largest),
                100.0 * g(last, "herd") / stream.best_gbs,
                100.0 * g(last, "herd") / stream.median_gbs
            );
        }
        println!();
        print!("{}", pack_table(&packs));
    }
    if let (Some(path), Some(format)) = (&args.chart, format) {
        let x = |r: &Value| (r["bytes"].as_f64().unwrap_or(1.0)).log2();
        let line = |name: &str, key: &str| Series {
            name: name.to_string(),
            points: copies.iter().map(|r| (x(r), g(r, key))).collect(),
        };
        let mut series = vec![
            line("herd parallel copy", "herd"),
            line("memcpy (1 thread)", "memcpy"),
            line("STREAM kernel (all threads)", "stream_kernel"),
        ];
        series.push(Series {
            name: format!("STREAM copy, {} arrays (best)", show_size(stream.n * 8)),
            points: copies.iter().map(|r| (x(r), stream.best_gbs)).collect(),
        });
        let packs_panel = Panel {
            title: format!("pack {} of f64, herd vs MPI_Pack", show_size(args.pack_size)),
            y_desc: "GB/s".into(),
            log_y: false,
            series: ["herd_pack", "mpi_pack", "herd_unpack", "mpi_unpack"]
                .iter()
                .map(|k| Series {
                    name: k.replace('_', " "),
                    points: packs
                        .iter()
                        .take(4)
                        .map(|r| ((r["blocklen"].as_f64().unwrap_or(1.0)).log2(), g(r, k)))
                        .collect(),
                })
                .collect(),
        };
        plot::draw(
            path,
            format,
            &format!("herd copy and pack — {}", out["cpu"].as_str().unwrap_or("")),
            "log2 of bytes (copy) / log2 of blocklen (pack)",
            &[
                Panel {
                    title: "copy, GB/s (read + write)".into(),
                    y_desc: "GB/s".into(),
                    log_y: false,
                    series,
                },
                packs_panel,
            ],
        )?;
    }
    Ok(())
}
