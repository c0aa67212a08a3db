//! Work throttling driven by a contention monitor (`HERD_THROTTLE=auto`;
//! maestro-qthreads-scheduling.txt §4.3, RCRdaemon).
//!
//! # Protocol
//! A pool built with [`Throttle::Auto`](crate::Throttle::Auto) starts one
//! background thread, `herd-monitor`, holding only a `Weak` reference to the
//! pool's registry. Every epoch (15 ms by default) it
//!
//! 1. reads the per-slot counters (jobs, loop chunks, idle time — relaxed
//!    loads of counters that only their owners write) and, where available,
//!    the process's hardware counters ([`perf::ProcessCounters`]: LLC misses
//!    and cycles of the master and every worker);
//! 2. turns them into one [`model::Sample`] per shepherd: throughput = jobs
//!    plus chunks completed by its participants per second, *busy* when its
//!    active participants were idle for less than a quarter of the epoch;
//! 3. steps that shepherd's [`model::HillClimb`], which returns the next
//!    limit (probe or home);
//! 4. where the `herd monitor` daemon publishes a valid [`blackboard`] and
//!    the topology is the machine's, caps the limit of a shepherd whose
//!    socket is busy with *other* processes: `others` = the socket's
//!    utilisation minus this pool's busy share of the socket's PUs; above
//!    [`MonitorSettings::external_threshold`] at most
//!    `max(1, ⌈members · (1 − others)⌉)` workers stay active;
//! 5. applies the result with `Registry::set_active_limit` — the only thing
//!    the monitor ever changes.
//!
//! Limits take effect at job and chunk boundaries (a running job is never
//! pre-empted, static loop blocks are not throttled), and a re-activated
//! worker is woken by `set_active_limit` itself, so no interleaving of the
//! monitor with the pool can lose work or deadlock: the monitor holds no
//! lock the pool takes, and a pool whose limits never change again still
//! finishes every job with the rank-0 workers. The pool stops and joins the
//! monitor before it shuts its workers down; the thread makes no system call
//! that can block (the blackboard is opened non-blocking, see
//! [`blackboard`]), and the join waits at most 2 s anyway: a thread still
//! running then is left behind with a warning. If the registry is already
//! gone the thread exits by itself.
//!
//! # Sources
//! The hardware source needs `perf_event_open` for the process (cycles and
//! LLC misses with `inherit`, opened by the building thread before it spawns
//! the workers). Where the kernel refuses (`ENOENT` without a PMU, as in most
//! virtual machines; `EACCES` under a strict `perf_event_paranoid`), the
//! monitor silently uses the software model alone: [`Monitor::source`] says
//! which, [`Monitor::fallback_reason`] why, and `HERD_DISPLAY_ENV` prints
//! both (the reason under `verbose`).

pub mod blackboard;
pub mod model;
pub mod perf;

use crate::pool::Registry;
use model::{ClimbSettings, HillClimb, Pce, Sample};
use serde::Serialize;
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Where the in-process monitor's contention signal comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// Throughput only (the software model).
    Software,
    /// Throughput plus LLC misses per kilo-cycle from hardware counters.
    Hardware,
}

impl Source {
    /// `"software"` or `"hardware"`.
    pub fn name(self) -> &'static str {
        match self {
            Source::Software => "software",
            Source::Hardware => "hardware",
        }
    }
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Tuning of the monitor.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MonitorSettings {
    /// Time between two decisions.
    pub epoch: Duration,
    /// The hill-climb's tuning.
    pub climb: ClimbSettings,
    /// Busy fraction of the active participants above which an epoch counts
    /// as busy (0..=1).
    pub busy_threshold: f64,
    /// The blackboard to read (`None`: none).
    pub blackboard: Option<String>,
    /// Utilisation of a socket by other processes (0..=1) above which the
    /// blackboard caps the limits of the shepherds on it.
    pub external_threshold: f64,
}

impl Default for MonitorSettings {
    fn default() -> Self {
        MonitorSettings {
            epoch: Duration::from_millis(15),
            climb: ClimbSettings::default(),
            busy_threshold: 0.75,
            blackboard: Some(blackboard::default_name()),
            external_threshold: 0.25,
        }
    }
}

/// What the monitor knows about one shepherd.
#[derive(Clone, Debug, Serialize)]
pub struct ShepherdState {
    /// Its members.
    pub members: usize,
    /// The limit the monitor set last.
    pub limit: usize,
    /// The hill-climb's home (best known `k`).
    pub home: usize,
    /// Epochs in which it was busy.
    pub busy_epochs: u64,
    /// Throughput estimates (jobs + chunks per second), index `k − 1`.
    pub throughput: Vec<Option<f64>>,
    /// Per-job cost at each `k` relative to `k = 1` (parallel cost efficiency).
    pub pce: Pce,
    /// The cap from the blackboard, if one applied in the last epoch.
    pub external_cap: Option<usize>,
}

/// A snapshot of the monitor's state.
#[derive(Clone, Debug, Serialize)]
pub struct MonitorState {
    /// The signal source.
    pub source: Source,
    /// Epochs evaluated so far.
    pub epochs: u64,
    /// LLC misses per kilo-cycle of the last epoch (hardware source).
    pub misses_per_kilocycle: Option<f64>,
    /// The blackboard segment in use, if a valid one was read last epoch.
    pub blackboard: Option<String>,
    /// Per shepherd.
    pub shepherds: Vec<ShepherdState>,
}

struct Shared {
    stop: Mutex<bool>,
    wake: Condvar,
    state: Mutex<MonitorState>,
    /// Set (and `exited_cv` notified) when the thread's function returns or
    /// unwinds.
    exited: Mutex<bool>,
    exited_cv: Condvar,
}

/// Marks the monitor thread as gone when dropped, however it ends.
struct Exited<'a>(&'a Shared);

impl Drop for Exited<'_> {
    fn drop(&mut self) {
        *self.0.exited.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.0.exited_cv.notify_all();
    }
}

/// How long dropping a pool waits for its monitor thread to stop.
const STOP_WAIT: Duration = Duration::from_secs(2);

/// The in-process contention monitor of a pool; see the module
/// documentation. Stopped (and its thread joined) when dropped.
pub struct Monitor {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
    tid: i64,
    source: Source,
    fallback: Option<String>,
    settings: MonitorSettings,
}

impl std::fmt::Debug for Monitor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Monitor").field("source", &self.source).field("tid", &self.tid).finish()
    }
}

impl Monitor {
    /// Starts the monitor thread of `reg`. `counters`: the process counters
    /// opened before the workers were spawned, or why they could not be.
    pub(crate) fn start(
        reg: &Arc<Registry>,
        settings: MonitorSettings,
        counters: std::io::Result<perf::ProcessCounters>,
    ) -> std::io::Result<Monitor> {
        let (mut counters, fallback) = match counters {
            Ok(mut c) => match c.read() {
                Ok(_) => (Some(c), None),
                Err(e) => (None, Some(format!("reading hardware counters failed: {e}"))),
            },
            Err(e) => (None, Some(format!("hardware counters unavailable (perf_event_open: {e})"))),
        };
        let source = if counters.is_some() { Source::Hardware } else { Source::Software };
        let climbs: Vec<HillClimb> =
            reg.shepherds.members.iter().map(|m| HillClimb::new(m.len(), settings.climb)).collect();
        let shared = Arc::new(Shared {
            stop: Mutex::new(false),
            wake: Condvar::new(),
            state: Mutex::new(MonitorState {
                source,
                epochs: 0,
                misses_per_kilocycle: None,
                blackboard: None,
                shepherds: state_of(reg, &climbs, &[], &[]),
            }),
            exited: Mutex::new(false),
            exited_cv: Condvar::new(),
        });
        let weak = Arc::downgrade(reg);
        let (tx, rx) = std::sync::mpsc::channel();
        let thread = {
            let shared = shared.clone();
            let settings = settings.clone();
            std::thread::Builder::new().name("herd-monitor".into()).spawn(move || {
                let _exited = Exited(&shared);
                // SAFETY: gettid has no preconditions.
                let _ = tx.send(unsafe { libc::gettid() } as i64);
                drop(tx);
                run(weak, &shared, &settings, climbs, counters.as_mut());
            })?
        };
        let tid = rx.recv().unwrap_or(-1);
        Ok(Monitor { shared, thread: Some(thread), tid, source, fallback, settings })
    }

    /// The signal source in use.
    pub fn source(&self) -> Source {
        self.source
    }

    /// Why the hardware source is not used, if it is not.
    pub fn fallback_reason(&self) -> Option<&str> {
        self.fallback.as_deref()
    }

    /// The monitor's tuning.
    pub fn settings(&self) -> &MonitorSettings {
        &self.settings
    }

    /// The monitor thread's kernel thread id (`gettid`).
    pub fn thread_id(&self) -> i64 {
        self.tid
    }

    /// A copy of the monitor's current state.
    pub fn state(&self) -> MonitorState {
        self.shared.state.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// One line for `HERD_DISPLAY_ENV`; `verbose` adds the fallback reason.
    pub fn describe(&self, verbose: bool) -> String {
        let mut s = format!(
            "herd: throttle auto: contention monitor every {} ms, source {}",
            self.settings.epoch.as_millis(),
            self.source
        );
        if let (true, Some(r)) = (verbose, &self.fallback) {
            s.push_str(&format!(" ({r})"));
        }
        if let Some(b) = &self.settings.blackboard {
            s.push_str(&format!(", blackboard {b}"));
        }
        s.push('\n');
        s
    }

    /// Stops the monitor thread and waits for it — at most [`STOP_WAIT`].
    ///
    /// The thread sleeps on `wake` between epochs and makes no system call
    /// that can block (the blackboard is opened non-blocking, after an
    /// `lstat`), so it normally ends at once. Should it still be stuck, the
    /// pool does not wait for it: it is left behind (detached) with a
    /// warning. That is safe: between epochs it holds the registry only
    /// through a `Weak` reference (during one, an `Arc` that keeps it
    /// alive; its only action, `set_active_limit`, is harmless on a pool
    /// that has shut down), and it ends after its current epoch.
    fn stop(&mut self) {
        *self.shared.stop.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.shared.wake.notify_all();
        let Some(t) = self.thread.take() else { return };
        let exited = self.shared.exited.lock().unwrap_or_else(|e| e.into_inner());
        let (exited, _) = self
            .shared
            .exited_cv
            .wait_timeout_while(exited, STOP_WAIT, |e| !*e)
            .unwrap_or_else(|e| e.into_inner());
        if *exited {
            drop(exited);
            let _ = t.join();
        } else {
            eprintln!(
                "herd: warning: the contention monitor (thread {}) did not stop within {} s; \
                 the pool shuts down without waiting for it",
                self.tid,
                STOP_WAIT.as_secs()
            );
        }
    }
}

impl Drop for Monitor {
    fn drop(&mut self) {
        self.stop();
    }
}

fn state_of(
    reg: &Registry,
    climbs: &[HillClimb],
    busy: &[u64],
    caps: &[Option<usize>],
) -> Vec<ShepherdState> {
    climbs
        .iter()
        .enumerate()
        .map(|(h, c)| ShepherdState {
            members: reg.shepherds.members[h].len(),
            limit: reg.active_limit(h),
            home: c.home(),
            busy_epochs: busy.get(h).copied().unwrap_or(0),
            throughput: c.throughputs().to_vec(),
            pce: c.pce(),
            external_cap: caps.get(h).copied().flatten(),
        })
        .collect()
}

/// Per-slot counter values at the start of an epoch.
#[derive(Clone, Copy, Default)]
struct SlotSample {
    work: u64,
    idle_ns: u64,
}

fn sample_slots(reg: &Registry) -> Vec<SlotSample> {
    use std::sync::atomic::Ordering::Relaxed;
    (0..reg.num_threads())
        .map(|s| {
            let c = reg.counters.of(s);
            SlotSample {
                work: c.tasks.load(Relaxed).wrapping_add(c.chunks.load(Relaxed)),
                idle_ns: c.idle_ns.load(Relaxed),
            }
        })
        .collect()
}

/// The blackboard side of the monitor: the open reader, reopened now and
/// then when missing or stale.
struct Board {
    name: String,
    reader: Option<blackboard::Reader>,
    retry_in: u32,
}

impl Board {
    const RETRY_EPOCHS: u32 = 64;

    fn snapshot(&mut self) -> Option<blackboard::Snapshot> {
        if self.reader.is_none() {
            if self.retry_in > 0 {
                self.retry_in -= 1;
                return None;
            }
            self.retry_in = Self::RETRY_EPOCHS;
            self.reader = blackboard::open_or_warn(&self.name);
        }
        let snap = self.reader.as_ref()?.read().filter(|s| !s.is_stale());
        if snap.is_none() {
            // Stale or stuck: the daemon may have been restarted with a new
            // segment; look again later.
            self.reader = None;
        }
        snap
    }
}

/// The monitor thread's loop.
fn run(
    weak: Weak<Registry>,
    shared: &Shared,
    settings: &MonitorSettings,
    mut climbs: Vec<HillClimb>,
    mut counters: Option<&mut perf::ProcessCounters>,
) {
    let mut board = settings.blackboard.clone().map(|name| Board { name, reader: None, retry_in: 0 });
    let (mut prev, sockets) = match weak.upgrade() {
        Some(reg) => (sample_slots(&reg), socket_of_shepherds(&reg)),
        None => return,
    };
    let mut prev_hw = counters.as_mut().and_then(|c| c.read().ok());
    let mut busy_epochs = vec![0u64; climbs.len()];
    let mut prev_cpu = process_cpu_seconds();
    let mut last = Instant::now();
    loop {
        {
            let stop = shared.stop.lock().unwrap_or_else(|e| e.into_inner());
            let (stop, _) = shared
                .wake
                .wait_timeout_while(stop, settings.epoch, |s| !*s)
                .unwrap_or_else(|e| e.into_inner());
            if *stop {
                return;
            }
        }
        let Some(reg) = weak.upgrade() else { return };
        let now = Instant::now();
        let dt = now.duration_since(last).as_secs_f64().max(1e-6);
        last = now;
        let cur = sample_slots(&reg);
        let mpkc = match (counters.as_mut().and_then(|c| c.read().ok()), prev_hw) {
            (Some(r), Some(p)) => {
                prev_hw = Some(r);
                r.since(p).misses_per_kilocycle()
            }
            (r, _) => {
                prev_hw = r;
                None
            }
        };
        let snap = board.as_mut().filter(|_| !reg.topology.is_synthetic()).and_then(Board::snapshot);
        let epoch_ns = dt * 1e9;
        // Per shepherd: the limit in force, busy participants (threads).
        let mut busy_threads = vec![0.0f64; climbs.len()];
        let mut samples = Vec::with_capacity(climbs.len());
        for (h, members) in reg.shepherds.members.iter().enumerate() {
            let k = reg.active_limit(h);
            let mut work = 0u64;
            let mut idle = 0.0f64;
            for (r, &slot) in members.iter().enumerate() {
                work = work.saturating_add(since(cur[slot].work, prev[slot].work));
                if r < k {
                    let d = since(cur[slot].idle_ns, prev[slot].idle_ns) as f64;
                    idle += d.min(epoch_ns);
                }
            }
            let busy_frac = 1.0 - idle / (k as f64 * epoch_ns);
            // A sleeping participant adds its idle time only when it wakes:
            // a shepherd that completed nothing counts as not busy at all.
            busy_threads[h] = if work == 0 { 0.0 } else { (k as f64 * busy_frac).max(0.0) };
            let busy = work > 0 && busy_frac >= settings.busy_threshold;
            samples.push(Sample {
                active: k,
                throughput: work as f64 / dt,
                busy,
                misses_per_kilocycle: mpkc,
            });
        }
        prev = cur;
        // The pool cannot keep more PUs busy than the process used CPU time.
        let cpu_now = process_cpu_seconds();
        let used = (cpu_now - prev_cpu).max(0.0) / dt;
        prev_cpu = cpu_now;
        let claimed: f64 = busy_threads.iter().sum();
        if claimed > used {
            busy_threads.iter_mut().for_each(|b| *b *= used / claimed);
        }
        let caps = external_caps(&reg, &sockets, &busy_threads, snap.as_ref(), settings.external_threshold);
        for (h, (climb, sample)) in climbs.iter_mut().zip(samples).enumerate() {
            if sample.busy {
                busy_epochs[h] += 1;
            }
            let mut limit = climb.step(sample);
            if let Some(cap) = caps[h] {
                limit = limit.min(cap);
            }
            if limit != reg.active_limit(h) {
                reg.set_active_limit(h, limit);
            }
        }
        let mut st = shared.state.lock().unwrap_or_else(|e| e.into_inner());
        st.epochs += 1;
        st.misses_per_kilocycle = mpkc;
        st.blackboard = snap.as_ref().and(board.as_ref()).map(|b| b.name.clone());
        st.shepherds = state_of(&reg, &climbs, &busy_epochs, &caps);
    }
}

/// CPU time of the whole process so far, in seconds.
fn process_cpu_seconds() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid out-pointer; the clock id is a constant.
    if unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) } != 0 {
        return 0.0;
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// The package (socket) of each shepherd's first participant.
fn socket_of_shepherds(reg: &Registry) -> Vec<usize> {
    let pus = reg.topology.pus();
    reg.shepherds.members.iter().map(|m| pus[reg.placement.pu_of(m[0])].package).collect()
}

/// The blackboard's cap per shepherd (module documentation, step 4).
fn external_caps(
    reg: &Registry,
    sockets: &[usize],
    busy_threads: &[f64],
    snap: Option<&blackboard::Snapshot>,
    threshold: f64,
) -> Vec<Option<usize>> {
    let n = sockets.len();
    let Some(snap) = snap else { return vec![None; n] };
    let pus = reg.topology.pus();
    (0..n)
        .map(|h| {
            let s = sockets[h];
            let meter = snap.meters.get(s)?;
            let socket_pus = pus.iter().filter(|p| p.package == s).count().max(1) as f64;
            let ours: f64 = (0..n).filter(|&g| sockets[g] == s).map(|g| busy_threads[g]).sum();
            let others = (meter.utilisation - ours / socket_pus).clamp(0.0, 1.0);
            external_cap(reg.shepherds.members[h].len(), others, threshold)
        })
        .collect()
}

/// The cap for a shepherd of `members` when other processes keep a fraction
/// `others` of its socket busy: `None` at or below `threshold`.
pub fn external_cap(members: usize, others: f64, threshold: f64) -> Option<usize> {
    (others > threshold).then(|| ((members as f64 * (1.0 - others)).ceil() as usize).clamp(1, members.max(1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn external_cap_rule() {
        assert_eq!(external_cap(8, 0.1, 0.25), None);
        assert_eq!(external_cap(8, 0.5, 0.25), Some(4));
        assert_eq!(external_cap(8, 0.6, 0.25), Some(4));
        assert_eq!(external_cap(8, 1.0, 0.25), Some(1));
        assert_eq!(external_cap(1, 0.9, 0.25), Some(1));
    }
}

/// A counter's growth since `prev`; after `Pool::reset_stats` (the counter
/// went down) its whole value, the growth since the reset — never the
/// wrapped difference (which once made a reset epoch look like 10^19 jobs per
/// second and pinned the limit to whatever `k` was in force).
fn since(cur: u64, prev: u64) -> u64 {
    cur.checked_sub(prev).unwrap_or(cur)
}

#[cfg(test)]
mod since_tests {
    #[test]
    fn a_reset_counts_from_zero() {
        assert_eq!(super::since(10, 4), 6);
        assert_eq!(super::since(3, 1000), 3);
    }
}
