//! MAESTRO's throttling experiment (`maestro-qthreads-scheduling.txt`): an
//! array walk whose working set is swept around the last-level cache, with
//! herd's worker throttling off, automatic, and fixed to one active worker.
//!
//! usage: arraywalk [--size full|small] [--rounds 3] [--seconds 0.75]
//!                  [--factors 0.125,0.25,..] [--max-total-gib 4]
//!                  [--threads 2] [--name NAME] [--out-dir DIR]
//!
//! Each participant owns an array of the point's size (the per-worker
//! working set), whose lines hold `1..=L` per segment of `L` lines (1 MiB).
//! The work is a dynamic loop over a fixed number of chunks; a chunk is one
//! segment of the array of the participant that takes it — the next one
//! after its previous chunk, so each participant walks its own array over
//! and over — read with a stride of one cache line and summed. With both
//! participants active, two arrays compete for the cache; a throttled pool
//! (`Throttle::Fixed(1)`: one active worker per shepherd) walks one array
//! only, which may still fit. `Throttle::Auto` leaves the decision to herd's
//! contention monitor. Sizes: `--factors` × the last-level cache reported by
//! `herd::Topology` (default 1/8 … 4), at most `--max-total-gib` for all the
//! arrays together. The number of chunks is calibrated per point (a warm-up
//! run under `Off`) so that one run takes about `--seconds`. Reported:
//! throughput (GB/s of array walked) per point and mode, medians over
//! rounds (the modes alternate within each round), and the chunks each
//! participant took. Every run checks its sum (each chunk walks exactly one
//! whole segment). Writes `bench/results/<name>.json` and `<name>.svg`.

use herd::{Schedule, Throttle};
use herd_bench::chart::{self, Lines, Panel, PALETTE};
use herd_bench::{fail, fmt, ratio, read_trimmed, wrong, Args, Summary};
use serde_json::json;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

const MANIFEST_DIR: &str = env!("CARGO_MANIFEST_DIR");
const LINE: usize = 64;
const WORDS_PER_LINE: usize = LINE / 8;
/// Lines per segment (1 MiB).
const SEGMENT_LINES: usize = (1 << 20) / LINE;

/// The arrays of one point and the participants' positions in them.
struct Walk {
    arrays: Vec<Vec<u64>>,
    segment_lines: usize,
    segments: usize,
    cursors: Vec<AtomicUsize>,
    sums: Vec<AtomicU64>,
}

impl Walk {
    /// One array of `bytes` (rounded down to whole segments) per participant.
    fn new(threads: usize, bytes: usize) -> Walk {
        let segment_lines = SEGMENT_LINES.min((bytes / LINE).max(1));
        let segments = (bytes / LINE / segment_lines).max(1);
        let lines = segments * segment_lines;
        let arrays = (0..threads)
            .map(|_| {
                let mut a = vec![0u64; lines * WORDS_PER_LINE];
                for (l, line) in a.chunks_exact_mut(WORDS_PER_LINE).enumerate() {
                    line[0] = (l % segment_lines) as u64 + 1;
                }
                a
            })
            .collect();
        Walk {
            arrays,
            segment_lines,
            segments,
            cursors: (0..threads).map(|_| AtomicUsize::new(0)).collect(),
            sums: (0..threads).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    /// Bytes per participant.
    fn bytes(&self) -> usize {
        self.segments * self.segment_lines * LINE
    }

    /// Walks the caller's next segment.
    fn chunk(&self) {
        let w = herd::current_thread_index().expect("runs on a pool participant");
        // Only participant w touches cursors[w] and sums[w].
        let seg = self.cursors[w].load(Ordering::Relaxed);
        self.cursors[w].store((seg + 1) % self.segments, Ordering::Relaxed);
        let words = self.segment_lines * WORDS_PER_LINE;
        let sum: u64 = self.arrays[w][seg * words..(seg + 1) * words].iter().step_by(WORDS_PER_LINE).sum();
        self.sums[w].store(self.sums[w].load(Ordering::Relaxed) + sum, Ordering::Relaxed);
    }

    /// Runs `chunks` chunks on `pool`; returns the seconds taken, after
    /// checking the sum.
    fn run(&self, pool: &herd::Pool, chunks: usize) -> Result<f64, String> {
        self.sums.iter().for_each(|s| s.store(0, Ordering::Relaxed));
        let start = std::time::Instant::now();
        pool.for_each_chunk(0..chunks, Schedule::Dynamic { chunk: 1 }, |r| r.for_each(|_| self.chunk()));
        let secs = start.elapsed().as_secs_f64();
        let l = self.segment_lines as u64;
        let want = chunks as u64 * l * (l + 1) / 2;
        let got: u64 = self.sums.iter().map(|s| s.load(Ordering::Relaxed)).sum();
        if got != want {
            return Err(format!("sum {got}, expected {want} ({chunks} chunks of {l} lines)"));
        }
        Ok(secs)
    }
}

fn mode_name(t: Throttle) -> String {
    match t {
        Throttle::Off => "off".into(),
        Throttle::Auto => "auto".into(),
        Throttle::Fixed(n) => format!("fixed({n})"),
    }
}

fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let mut args = Args::from_env();
    let small = args.get("size", "full".to_string()) == "small";
    let rounds: usize = args.get("rounds", if small { 1 } else { 3 });
    let seconds: f64 = args.get("seconds", if small { 0.02 } else { 0.75 });
    let factors: String = args.get("factors", "0.125,0.25,0.5,0.75,1,1.5,2,3,4".to_string());
    let max_total: f64 = args.get("max-total-gib", 4.0);
    let threads: usize = args.get("threads", 2);
    let name: String = args.get("name", format!("arraywalk-{}", if small { "small" } else { "full" }));
    let out_dir: PathBuf = args.get("out-dir", Path::new(MANIFEST_DIR).join("results"));
    args.finish();
    if rounds == 0 || threads < 2 || seconds <= 0.0 {
        fail("--rounds and --seconds must be positive and --threads at least 2");
    }
    let topo = herd::Topology::detect().unwrap_or_else(|e| fail(&format!("cannot detect the topology: {e}")));
    let llc = topo.last_level_cache().unwrap_or_else(|| {
        eprintln!("arraywalk: the topology reports no cache; assuming a 32 MiB last-level cache");
        32 << 20
    }) as usize;
    // Small: a fixed tiny sweep (tests, smoke runs), whatever the cache.
    let sizes: Vec<usize> = if small {
        vec![256 << 10, 1 << 20, 4 << 20]
    } else {
        factors
            .split(',')
            .map(|f| {
                f.trim().parse::<f64>().unwrap_or_else(|_| fail(&format!("--factors: bad number {f:?}")))
            })
            .map(|f| (f * llc as f64) as usize)
            .filter(|&b| (b * threads) as f64 <= max_total * (1u64 << 30) as f64)
            .collect()
    };
    if sizes.is_empty() {
        fail("no point fits --max-total-gib");
    }
    let modes = [Throttle::Off, Throttle::Auto, Throttle::Fixed(1)];
    let pools: Vec<herd::Pool> = modes
        .iter()
        .map(|&t| {
            herd::Pool::builder()
                .num_threads(threads)
                .throttle(t)
                .build()
                .unwrap_or_else(|e| fail(&format!("cannot build the herd pool ({}): {e}", mode_name(t))))
        })
        .collect();
    let loadavg_start = read_trimmed("/proc/loadavg");
    eprintln!(
        "arraywalk: {} point(s) × {} modes × {rounds} round(s), {threads} workers, last-level cache {} MiB, load average {loadavg_start}",
        sizes.len(),
        modes.len(),
        llc >> 20,
    );

    let mut points = Vec::new();
    for &bytes in &sizes {
        let walk = Walk::new(threads, bytes);
        // Calibration, which also warms the caches: one pass over both arrays.
        let probe = walk.segments * threads;
        let t = walk.run(&pools[0], probe).unwrap_or_else(|e| wrong("arraywalk", &e));
        let chunks = ((seconds / (t / probe as f64)).ceil() as usize).max(threads);
        let mut gbs: Vec<Vec<f64>> = vec![Vec::new(); modes.len()];
        let mut per_worker: Vec<Vec<u64>> = vec![Vec::new(); modes.len()];
        for round in 0..rounds {
            for mi in (0..modes.len()).map(|i| (i + round) % modes.len()) {
                pools[mi].reset_stats();
                let secs = walk.run(&pools[mi], chunks).unwrap_or_else(|e| wrong("arraywalk", &e));
                let rate = (chunks * walk.segment_lines * LINE) as f64 / secs / 1e9;
                per_worker[mi] = pools[mi].stats().iter().map(|s| s.chunks).collect();
                eprintln!(
                    "arraywalk: {:>7.1} MiB/worker round {}/{rounds} {:<8} {chunks} chunks {:.3} s {:.2} GB/s",
                    walk.bytes() as f64 / (1 << 20) as f64,
                    round + 1,
                    mode_name(modes[mi]),
                    secs,
                    rate
                );
                gbs[mi].push(rate);
            }
        }
        points.push(json!({
            "bytes_per_worker": walk.bytes(),
            "llc_fraction": walk.bytes() as f64 / llc as f64,
            "chunks": chunks,
            "segment_bytes": walk.segment_lines * LINE,
            "modes": modes.iter().enumerate().map(|(mi, &m)| json!({
                "mode": mode_name(m),
                "gbs": gbs[mi],
                "summary": Summary::of(&gbs[mi]),
                "chunks_per_participant_last_round": per_worker[mi],
            })).collect::<Vec<_>>(),
        }));
    }

    let loadavg_end = read_trimmed("/proc/loadavg");
    let reproduce = format!("./bench/tasks.sh arraywalk {}", argv.join(" ")).trim_end().to_string();
    let gb = |p: &serde_json::Value, mi: usize| p["modes"][mi]["summary"]["median"].as_f64();
    let mut md = format!(
        "### Array walk, {threads} workers, last-level cache {} MiB (GB/s walked, median of {rounds} round(s))\n\n\
         | MiB per worker | × LLC | off | auto | fixed(1) | auto ÷ off | fixed(1) ÷ off | chunks per participant (off / auto / fixed(1)) |\n|---|---|---|---|---|---|---|---|\n",
        llc >> 20
    );
    for p in &points {
        let per = |mi: usize| {
            p["modes"][mi]["chunks_per_participant_last_round"]
                .as_array()
                .map_or(String::new(), |v| v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join("+"))
        };
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {} | {} / {} / {} |",
            fmt(p["bytes_per_worker"].as_f64().unwrap_or(0.0) / (1 << 20) as f64),
            fmt(p["llc_fraction"].as_f64().unwrap_or(0.0)),
            fmt(gb(p, 0).unwrap_or(f64::NAN)),
            fmt(gb(p, 1).unwrap_or(f64::NAN)),
            fmt(gb(p, 2).unwrap_or(f64::NAN)),
            fmt(ratio(gb(p, 1), gb(p, 0)).unwrap_or(f64::NAN)),
            fmt(ratio(gb(p, 2), gb(p, 0)).unwrap_or(f64::NAN)),
            per(0),
            per(1),
            per(2)
        );
    }
    let _ = writeln!(
        md,
        "\nEvery run's sum verified. Load average {loadavg_start} at start, {loadavg_end} at end.\n\nReproduce: `{reproduce}`"
    );
    println!("{md}");

    let mut machine = herd_bench::host_info();
    machine.insert("loadavg_start".into(), loadavg_start.into());
    let json = json!({
        "name": name,
        "reproduce": reproduce,
        "machine": machine,
        "loadavg_end": loadavg_end,
        "settings": {"rounds": rounds, "seconds": seconds, "threads": threads, "llc_bytes": llc, "small": small},
        "points": points,
    });
    if let Err(e) = std::fs::create_dir_all(&out_dir) {
        fail(&format!("cannot create {}: {e}", out_dir.display()));
    }
    let json_path = out_dir.join(format!("{name}.json"));
    if let Err(e) =
        std::fs::write(&json_path, serde_json::to_string_pretty(&json).expect("serialises") + "\n")
    {
        fail(&format!("cannot write {}: {e}", json_path.display()));
    }
    let mib = |p: &serde_json::Value| p["bytes_per_worker"].as_f64().unwrap_or(0.0) / (1 << 20) as f64;
    let lines = Lines {
        title: format!(
            "Array walk, {threads} workers: throughput vs working set per worker (higher is better)"
        ),
        x_desc: "MiB per worker (log scale)",
        y_desc: "GB/s",
        log_x: true,
        log_y: false,
        series: modes
            .iter()
            .enumerate()
            .map(|(mi, &m)| {
                let pts = points.iter().filter_map(|p| gb(p, mi).map(|g| (mib(p), g))).collect();
                (format!("throttle {}", mode_name(m)), PALETTE[mi], pts)
            })
            .collect(),
        marks: vec![
            ((llc >> 20) as f64 / threads as f64, format!("LLC / {threads} (all arrays fit)")),
            ((llc >> 20) as f64, "LLC (one array fits)".into()),
        ],
    };
    let svg_path = out_dir.join(format!("{name}.svg"));
    if let Err(e) =
        chart::draw(&svg_path, &format!("MAESTRO array walk ({name})"), 1000, 520, &[Panel::Lines(lines)])
    {
        fail(&format!("cannot draw the chart: {e}"));
    }
    eprintln!("arraywalk: wrote {} and {}", json_path.display(), svg_path.display());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walks_verify_and_throttling_keeps_one_walker() {
        let walk = Walk::new(2, 256 << 10);
        assert_eq!(walk.bytes(), 256 << 10);
        let pool = herd::Pool::builder().num_threads(2).build().unwrap();
        walk.run(&pool, 37).unwrap();
        (0..pool.shepherds().len()).for_each(|h| pool.set_active_limit(h, 1));
        pool.reset_stats();
        walk.run(&pool, 20).unwrap();
        let busy = pool.stats().iter().filter(|s| s.chunks > 0).count();
        assert!(busy <= pool.shepherds().len(), "{:?}", pool.stats());
    }
}
