//! `herd monitor`: the contention daemon. Publishes per-socket meters on the
//! user's blackboard (`herd::throttle::blackboard`) for the in-process
//! monitors of pools built with `HERD_THROTTLE=auto`.
//!
//! Every interval it measures, per CPU, the busy fraction from `/proc/stat`
//! and — where the kernel allows system-wide counting
//! (`perf_event_paranoid` ≤ 0 or `CAP_PERFMON`) — cycles and LLC misses, and
//! aggregates them per package of the machine's topology (the usable PUs
//! hwloc reports). It publishes them under the blackboard's seqlock and
//! prints what it published.
//!
//! The blackboard is `$XDG_RUNTIME_DIR/herd-blackboard` when that directory
//! is private to the user, else `/dev/shm/herd-blackboard-<uid>`
//! ([`blackboard::default_location`]). When something that is not a valid
//! blackboard of this user is already at the path — another user's FIFO, a
//! symbolic link, ... — the daemon refuses to start and says what is there,
//! who owns it and what to do; it suggests `--remove` only for a file of
//! this user, the only kind `--remove` removes.

use crate::error::CliError;
use crate::CliResult;
use herd::throttle::blackboard::{self, Meter, MeterSource, Problem, Writer};
use herd::throttle::perf::{CpuCounters, Reading};
use serde::Serialize;
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// Options of `herd monitor`.
#[derive(clap::Args, Debug)]
pub struct MonitorArgs {
    /// Sampling interval in milliseconds.
    #[arg(long, default_value_t = 500, value_parser = clap::value_parser!(u64).range(1..=3_600_000))]
    pub interval_ms: u64,
    /// Publish one sample (measured over one interval), print it and exit.
    #[arg(long)]
    pub once: bool,
    /// Print each sample as one line of JSON.
    #[arg(long)]
    pub json: bool,
    /// Remove the blackboard (a file of this user only) and exit.
    #[arg(long)]
    pub remove: bool,
    /// The blackboard: an absolute path, or a shared-memory name /NAME
    /// (/dev/shm/NAME). Default: $XDG_RUNTIME_DIR/herd-blackboard when that
    /// directory is private (owned by the user, mode 0700), else
    /// /herd-blackboard-<uid>.
    #[arg(long, hide = true)]
    pub name: Option<String>,
}

/// What one sample published, as printed.
#[derive(Serialize, Debug)]
struct Published<'a> {
    blackboard: &'a str,
    source: MeterSource,
    interval_ms: u64,
    sockets: &'a [Meter],
}

/// Busy and total jiffies of one CPU.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuTimes {
    /// user + nice + system + irq + softirq + steal.
    pub busy: u64,
    /// busy + idle + iowait.
    pub total: u64,
}

/// Parses the per-CPU lines (`cpuN ...`) of `/proc/stat`.
pub fn parse_proc_stat(text: &str) -> HashMap<u32, CpuTimes> {
    text.lines()
        .filter_map(|line| {
            let mut f = line.split_whitespace();
            let cpu: u32 = f.next()?.strip_prefix("cpu")?.parse().ok()?;
            let v: Vec<u64> = f.map_while(|x| x.parse().ok()).collect();
            if v.len() < 4 {
                return None;
            }
            let get = |i: usize| v.get(i).copied().unwrap_or(0);
            // user nice system idle iowait irq softirq steal (guest is in user).
            let busy = get(0) + get(1) + get(2) + get(5) + get(6) + get(7);
            Some((cpu, CpuTimes { busy, total: busy + get(3) + get(4) }))
        })
        .collect()
}

fn read_proc_stat() -> CliResult<HashMap<u32, CpuTimes>> {
    let text = std::fs::read_to_string("/proc/stat")
        .map_err(|e| CliError::Failed(format!("cannot read /proc/stat: {e}")))?;
    Ok(parse_proc_stat(&text))
}

/// Busy fraction of one CPU between two readings (`None`: no time passed).
fn busy_fraction(before: CpuTimes, after: CpuTimes) -> Option<f64> {
    let total = after.total.saturating_sub(before.total);
    (total > 0).then(|| (after.busy.saturating_sub(before.busy) as f64 / total as f64).clamp(0.0, 1.0))
}

/// The meters of one socket of `n_pus` PUs whose busy fractions are `busy`
/// (CPUs without data left out), with summed hardware counts `hw` over
/// `seconds`.
pub fn socket_meter(n_pus: usize, busy: &[f64], hw: Option<Reading>, seconds: f64) -> Meter {
    let utilisation = if busy.is_empty() { 0.0 } else { busy.iter().sum::<f64>() / busy.len() as f64 };
    let idle = (n_pus as f64 * (1.0 - utilisation)).round() as u32;
    let rate = |x: u64| if seconds > 0.0 { x as f64 / seconds } else { 0.0 };
    Meter {
        llc_miss_rate: hw.map_or(0.0, |r| rate(r.llc_misses)),
        cycles_rate: hw.map_or(0.0, |r| rate(r.cycles)),
        utilisation,
        suggested_active: idle.max(1),
        source: Some(if hw.is_some() { MeterSource::Hardware } else { MeterSource::Software }),
    }
}

/// The error for blackboard `name` that could not be created, used or
/// removed because of `p`: what is at the path, whose it is, and what the
/// user can do about it. `explicit`: the name came from `--name`.
pub fn blackboard_error(name: &str, explicit: bool, p: &Problem) -> String {
    let path = blackboard::display_path(name);
    let mut msg = format!("blackboard {path}: {p}");
    let occupant = p.occupant().cloned().or_else(|| blackboard::inspect(name).ok().flatten());
    let Some(occ) = occupant else { return msg };
    if p.occupant().is_none() {
        msg.push_str(&format!(" (it is {occ})"));
    }
    if occ.is_ours() {
        let name_arg = if explicit { format!(" --name {name}") } else { String::new() };
        msg.push_str(&format!(
            "; it is yours: remove it with `herd monitor --remove{name_arg}` and start again"
        ));
    } else {
        msg.push_str(&format!(
            ". It is not yours, so `herd monitor --remove` cannot remove it: ask its owner ({}) or an \
             administrator to remove {path}",
            occ.owner()
        ));
        if !explicit {
            // SAFETY: getuid cannot fail and has no preconditions.
            let uid = unsafe { libc::getuid() };
            msg.push_str(&format!(
                ", or set XDG_RUNTIME_DIR to a private directory of yours (owned by you, mode 0700, \
                 such as /run/user/{uid}) for both `herd monitor` and the programs it serves, so that \
                 the blackboard lives there"
            ));
        }
    }
    msg
}

/// Runs `herd monitor`.
pub fn run(args: &MonitorArgs) -> CliResult {
    let location = match &args.name {
        Some(name) => blackboard::Location { name: name.clone(), note: None },
        None => blackboard::default_location(),
    };
    let name = location.name;
    if let Some(note) = &location.note {
        eprintln!("herd monitor: {note}; using {}", blackboard::display_path(&name));
    }
    let bb_err = |p: Problem| CliError::Failed(blackboard_error(&name, args.name.is_some(), &p));
    if args.remove {
        blackboard::unlink(&name).map_err(bb_err)?;
        println!("removed the blackboard {}", blackboard::display_path(&name));
        return Ok(());
    }
    let topo = herd::Topology::detect()?;
    let n_sockets = topo.pus().iter().map(|p| p.package + 1).max().unwrap_or(1);
    // OS index -> package.
    let package: HashMap<u32, usize> = topo.pus().iter().map(|p| (p.os_index, p.package)).collect();
    let pus_of = |s: usize| topo.pus().iter().filter(|p| p.package == s).count();
    let os: Vec<u32> = topo.pus().iter().map(|p| p.os_index).collect();
    let (mut counters, note) = match CpuCounters::open(&os) {
        Ok(c) => (Some(c), String::new()),
        Err(e) => (None, format!(" (hardware counters unavailable: perf_event_open: {e})")),
    };
    let source = if counters.is_some() { MeterSource::Hardware } else { MeterSource::Software };
    let interval = Duration::from_millis(args.interval_ms);
    let writer = Writer::create(&name, n_sockets as u32, interval).map_err(bb_err)?;
    if !args.json {
        println!(
            "herd monitor: publishing {n_sockets} socket(s) to {} every {} ms, source {}{note}",
            blackboard::display_path(writer.name()),
            args.interval_ms,
            match source {
                MeterSource::Hardware => "hardware counters + /proc/stat",
                MeterSource::Software => "software (/proc/stat)",
            }
        );
    }
    let mut before = read_proc_stat()?;
    let mut hw_before = counters.as_mut().and_then(|c| c.read().ok());
    let mut t_before = Instant::now();
    loop {
        std::thread::sleep(interval);
        let after = read_proc_stat()?;
        let hw_after = counters.as_mut().and_then(|c| c.read().ok());
        let seconds = t_before.elapsed().as_secs_f64();
        t_before = Instant::now();
        let mut busy: Vec<Vec<f64>> = vec![Vec::new(); n_sockets];
        for (cpu, &pkg) in &package {
            if let (Some(&b), Some(&a)) = (before.get(cpu), after.get(cpu)) {
                if let Some(f) = busy_fraction(b, a) {
                    busy[pkg].push(f);
                }
            }
        }
        let mut hw: Vec<Option<Reading>> = vec![None; n_sockets];
        if let (Some(a), Some(b)) = (&hw_after, &hw_before) {
            for ((cpu, ra), (_, rb)) in a.iter().zip(b) {
                let d = ra.since(*rb);
                let slot = hw[package[cpu]].get_or_insert_with(Reading::default);
                slot.cycles += d.cycles;
                slot.llc_misses += d.llc_misses;
            }
        }
        let meters: Vec<Meter> =
            (0..n_sockets).map(|s| socket_meter(pus_of(s), &busy[s], hw[s], seconds)).collect();
        writer.publish(&meters);
        print_sample(&name, source, args, &meters)?;
        before = after;
        hw_before = hw_after;
        if args.once {
            return Ok(());
        }
    }
}

fn print_sample(name: &str, source: MeterSource, args: &MonitorArgs, meters: &[Meter]) -> CliResult {
    if args.json {
        let p = Published { blackboard: name, source, interval_ms: args.interval_ms, sockets: meters };
        println!("{}", serde_json::to_string(&p)?);
        return Ok(());
    }
    for (s, m) in meters.iter().enumerate() {
        let hw = if m.source == Some(MeterSource::Hardware) {
            format!(", {:.3e} LLC misses/s, {:.3e} cycles/s", m.llc_miss_rate, m.cycles_rate)
        } else {
            String::new()
        };
        println!(
            "socket {s}: utilisation {:5.1} %, suggested active {}{hw}",
            m.utilisation * 100.0,
            m.suggested_active
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &str = "cpu  100 0 50 800 10 0 5 0 0 0\n\
cpu0 60 0 30 400 5 0 5 0 0 0\n\
cpu1 40 0 20 400 5 0 0 0 0 0\n\
intr 12345\n\
ctxt 99\n";

    #[test]
    fn parses_per_cpu_lines_only() {
        let m = parse_proc_stat(STAT);
        assert_eq!(m.len(), 2);
        assert_eq!(m[&0], CpuTimes { busy: 95, total: 500 });
        assert_eq!(m[&1], CpuTimes { busy: 60, total: 465 });
    }

    #[test]
    fn busy_fraction_between_readings() {
        let a = CpuTimes { busy: 100, total: 200 };
        let b = CpuTimes { busy: 175, total: 300 };
        assert_eq!(busy_fraction(a, b), Some(0.75));
        assert_eq!(busy_fraction(a, a), None);
    }

    #[test]
    fn socket_meters() {
        let m = socket_meter(4, &[1.0, 1.0, 0.0, 0.0], None, 1.0);
        assert_eq!(m.utilisation, 0.5);
        assert_eq!(m.suggested_active, 2);
        assert_eq!(m.source, Some(MeterSource::Software));
        let m = socket_meter(2, &[1.0, 1.0], Some(Reading { cycles: 4000, llc_misses: 20 }), 2.0);
        assert_eq!(m.suggested_active, 1);
        assert_eq!((m.cycles_rate, m.llc_miss_rate), (2000.0, 10.0));
        assert_eq!(m.source, Some(MeterSource::Hardware));
    }

    #[test]
    fn once_publishes_a_readable_sample() {
        let name = format!("/herd-test-monitor-{}", std::process::id());
        let _ = blackboard::unlink(&name);
        let args =
            MonitorArgs { interval_ms: 20, once: true, json: true, remove: false, name: Some(name.clone()) };
        run(&args).unwrap();
        let r = blackboard::Reader::open(&name).unwrap();
        let snap = r.read().unwrap();
        assert_eq!(snap.writer_pid, std::process::id());
        assert!(!snap.meters.is_empty());
        assert!(snap.meters.iter().all(|m| (0.0..=1.0).contains(&m.utilisation) && m.suggested_active >= 1));
        let remove = MonitorArgs { remove: true, once: false, ..args };
        run(&remove).unwrap();
        assert_eq!(blackboard::Reader::open(&name).unwrap_err(), Problem::Missing);
        // Removing again names the problem.
        let e = run(&remove).unwrap_err();
        assert!(e.to_string().contains(&name) && e.to_string().contains("does not exist"), "{e}");
    }

    fn is_root() -> bool {
        // SAFETY: getuid cannot fail and has no preconditions.
        unsafe { libc::getuid() == 0 }
    }

    fn mkfifo(p: &std::path::Path) {
        let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
        // SAFETY: `c` is a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    }

    /// Another user's FIFO at the name: the daemon does not block, says what
    /// is there and whose it is, and does not suggest `--remove` (which
    /// leaves it alone and says so too).
    #[test]
    fn a_squatted_name_is_explained_not_removed() {
        let name = format!("/herd-test-monitor-squat-{}", std::process::id());
        let path = blackboard::path(&name).unwrap();
        let _ = std::fs::remove_file(&path);
        mkfifo(&path);
        let foreign = is_root();
        if foreign {
            std::os::unix::fs::lchown(&path, Some(65534), Some(65534)).unwrap();
        } else {
            eprintln!("note: not root: the FIFO is this user's own (the foreign-owner case needs root)");
        }
        let args =
            MonitorArgs { interval_ms: 20, once: true, json: true, remove: false, name: Some(name.clone()) };
        let (tx, rx) = std::sync::mpsc::channel();
        let args2 = MonitorArgs { name: Some(name.clone()), ..args };
        std::thread::spawn(move || tx.send(run(&args2).map_err(|e| e.to_string())));
        let e = rx.recv_timeout(Duration::from_secs(30)).expect("herd monitor blocked").unwrap_err();
        assert!(e.contains(&path.display().to_string()) && e.contains("FIFO"), "{e}");
        let remove =
            MonitorArgs { interval_ms: 20, once: false, json: true, remove: true, name: Some(name.clone()) };
        if foreign {
            assert!(
                e.contains("uid 65534")
                    && e.contains("ask its owner (uid 65534")
                    && e.contains("or an administrator"),
                "{e}"
            );
            assert!(e.contains("cannot remove it") && !e.contains("--remove --name"), "{e}");
            let e = run(&remove).unwrap_err().to_string();
            assert!(e.contains("uid 65534") && e.contains("ask its owner"), "{e}");
            assert!(path.exists(), "--remove removed another user's file");
            std::fs::remove_file(&path).unwrap();
        } else {
            assert!(e.contains(&format!("herd monitor --remove --name {name}")), "{e}");
            run(&remove).unwrap();
            assert!(!path.exists());
        }
    }

    #[test]
    fn the_advice_for_the_default_name_mentions_xdg_runtime_dir() {
        let found = blackboard::Occupant {
            kind: blackboard::FileKind::Fifo,
            uid: 4242,
            user: Some("mallory".into()),
            mode: 0o644,
        };
        let p = Problem::NotRegular { found };
        let e = blackboard_error("/herd-blackboard-1000", false, &p);
        assert!(e.starts_with("blackboard /dev/shm/herd-blackboard-1000: it is a FIFO"), "{e}");
        assert!(e.contains("uid 4242 (mallory)") && e.contains("XDG_RUNTIME_DIR"), "{e}");
        assert!(!e.contains("`herd monitor --remove`;") && e.contains("cannot remove it"), "{e}");
    }
}
