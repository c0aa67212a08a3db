//! `HERD_TRACE`: per-participant events written as Chrome trace-event JSON
//! (loads in Perfetto and `chrome://tracing`).
//!
//! Off by default, and then nearly free: `enabled` is one relaxed load, and
//! callers write `if trace::enabled() { trace::begin(Kind::Share, i) }`.
//!
//! When on, each thread appends events to its own log, reached through a
//! thread-local and registered once (on the thread's first event) in a global
//! registry, so that [`flush`] can gather the events of every thread, including
//! threads that have exited. Appending takes no lock: a log is a list of
//! fixed-size chunks written by its thread only, and a slot is published to
//! readers by a release store of the log's length. A log holds at most
//! `MAX_EVENTS_PER_THREAD` events; further events are counted as dropped and
//! the count is written to the trace.
//!
//! Timestamps are nanoseconds since the instant `start` was first called.
//! [`flush`] rewrites the whole file with everything recorded so far; it runs
//! at process exit too (registered with `atexit` by `start`), so a trace is
//! written even if no pool is ever dropped.
//!
//! The file holds, per thread, `B`/`E` duration events (properly nested: an
//! `end` closes the innermost open span of its kind, first closing any span
//! opened inside it; an `end` with no open span of its kind is dropped; spans
//! still open at flush time end at that time), `i` instant events (thread
//! scope), and `M` metadata events naming the thread. Every event carries
//! `args: {"arg": n}`.

use std::cell::UnsafeCell;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Once, OnceLock, PoisonError};
use std::time::Instant;

/// What happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A fork-join region (master side: dispatch to join).
    Region,
    /// One participant's share of a region.
    Share,
    /// A task (join branch, scope spawn) run by a participant.
    Task,
    /// A successful steal (instant).
    Steal,
    /// A participant going to sleep on its futex (span until woken).
    Sleep,
    /// A participant waking another (instant).
    Wake,
}

impl Kind {
    const ALL: [Kind; 6] = [Kind::Region, Kind::Share, Kind::Task, Kind::Steal, Kind::Sleep, Kind::Wake];

    /// The event name in the trace.
    fn name(self) -> &'static str {
        match self {
            Kind::Region => "region",
            Kind::Share => "share",
            Kind::Task => "task",
            Kind::Steal => "steal",
            Kind::Sleep => "sleep",
            Kind::Wake => "wake",
        }
    }

    fn from_name(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == name)
    }
}

/// Most events kept per thread (4 Mi, i.e. 96 MiB); later ones are counted
/// as dropped.
pub(crate) const MAX_EVENTS_PER_THREAD: usize = CHUNK * MAX_CHUNKS;

const CHUNK_BITS: u32 = 16;
const CHUNK: usize = 1 << CHUNK_BITS;
const MAX_CHUNKS: usize = 64;

static ENABLED: AtomicBool = AtomicBool::new(false);
static STATE: OnceLock<State> = OnceLock::new();
static REGISTRY: Mutex<Vec<Arc<ThreadLog>>> = Mutex::new(Vec::new());
static FLUSHING: Mutex<()> = Mutex::new(());
static NEXT_TID: AtomicU64 = AtomicU64::new(1);
static AT_EXIT: Once = Once::new();
/// The latest per-worker counters of each pool (by registry id), written to
/// the trace's `otherData.worker_stats`.
static STATS: Mutex<Vec<(usize, serde_json::Value)>> = Mutex::new(Vec::new());

/// Set once, by the first `start`.
struct State {
    /// Absolute, so that a change of directory does not move the trace.
    path: PathBuf,
    epoch: Instant,
}

thread_local! {
    static LOG: Arc<ThreadLog> = register();
}

/// True when tracing is on. One relaxed load: callers test this before
/// building any event.
#[inline]
pub(crate) fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// Starts tracing to `path` (idempotent): takes the time origin, registers a
/// flush at process exit, and turns recording on. Only the first path is
/// used: a later call with another path leaves tracing as it is and says so
/// on stderr.
pub(crate) fn start(path: PathBuf) {
    let path = std::path::absolute(&path).unwrap_or(path);
    let state = STATE.get_or_init(|| State { path: path.clone(), epoch: Instant::now() });
    if state.path != path {
        eprintln!("herd: already tracing to {}; not tracing to {}", state.path.display(), path.display());
        return;
    }
    AT_EXIT.call_once(|| {
        // SAFETY: `flush_at_exit` is an `extern "C" fn()` with no arguments that
        // never unwinds (it catches panics), and it only touches statics, which
        // live until the process ends, so it is sound to call it from `exit`.
        let rc = unsafe { libc::atexit(flush_at_exit) };
        if rc != 0 {
            let _ = writeln!(io::stderr(), "herd: cannot flush the trace at exit; call herd::trace::flush()");
        }
    });
    ENABLED.store(true, Ordering::Relaxed);
}

/// Names the calling thread in the trace (e.g. "worker 3 (PU 5)"); without a
/// name a thread is "thread N". Does nothing while tracing is off, so call it
/// after `start`.
pub(crate) fn name_thread(name: &str) {
    if enabled() {
        let _ = LOG.try_with(|log| *lock(&log.name) = Some(name.to_string()));
    }
}

/// Opens a span of `kind` on the calling thread.
pub(crate) fn begin(kind: Kind, arg: u64) {
    if enabled() {
        record(kind, Phase::Begin, arg);
    }
}

/// Closes the innermost span of `kind` on the calling thread.
pub(crate) fn end(kind: Kind, arg: u64) {
    if enabled() {
        record(kind, Phase::End, arg);
    }
}

/// Records an instant event on the calling thread.
pub(crate) fn instant(kind: Kind, arg: u64) {
    if enabled() {
        record(kind, Phase::Instant, arg);
    }
}

/// Writes everything recorded so far, by every thread, to the trace file
/// (replacing it). Does nothing when tracing was never started. Called at
/// process exit as well; calling it earlier is harmless.
pub fn flush() -> io::Result<()> {
    let Some(state) = STATE.get() else {
        return Ok(());
    };
    let _one_at_a_time = lock(&FLUSHING);
    let logs: Vec<Arc<ThreadLog>> = lock(&REGISTRY).clone();
    let mut w = BufWriter::new(File::create(&state.path)?);
    write_trace(&mut w, &logs, std::process::id(), nanos_since(state.epoch))?;
    w.flush()
}

/// Records (replacing an earlier snapshot of the same pool) a pool's
/// per-worker counters for the trace file.
pub(crate) fn record_stats(pool: usize, scheduler: &str, stats: &[crate::WorkerStats]) {
    let v = serde_json::json!({ "pool": pool, "scheduler": scheduler, "workers": stats });
    let mut all = lock(&STATS);
    match all.iter_mut().find(|(id, _)| *id == pool) {
        Some(e) => e.1 = v,
        None => all.push((pool, v)),
    }
}

extern "C" fn flush_at_exit() {
    if let Ok(Err(e)) = std::panic::catch_unwind(flush) {
        let path = STATE.get().map(|s| s.path.display().to_string()).unwrap_or_default();
        let _ = writeln!(io::stderr(), "herd: writing trace {path}: {e}");
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

fn nanos_since(epoch: Instant) -> u64 {
    u64::try_from(epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

fn register() -> Arc<ThreadLog> {
    let log = Arc::new(ThreadLog::new(NEXT_TID.fetch_add(1, Ordering::Relaxed), MAX_EVENTS_PER_THREAD));
    lock(&REGISTRY).push(Arc::clone(&log));
    log
}

fn record(kind: Kind, phase: Phase, arg: u64) {
    let Some(state) = STATE.get() else { return };
    let ev = Event { ts: nanos_since(state.epoch), arg, kind, phase };
    // `try_with` fails only while this thread's thread-locals are being
    // destroyed; events from that late are not recorded.
    let _ = LOG.try_with(|log| {
        // SAFETY: this log is pushed to only through the `LOG` thread-local of
        // the thread that registered it, i.e. only by the calling thread.
        unsafe { log.push(ev) }
    });
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Begin,
    End,
    Instant,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Event {
    /// Nanoseconds since the epoch.
    ts: u64,
    arg: u64,
    kind: Kind,
    phase: Phase,
}

impl Event {
    const ZERO: Event = Event { ts: 0, arg: 0, kind: Kind::Region, phase: Phase::Instant };
}

type Chunk = Box<[UnsafeCell<Event>]>;

/// One thread's events: a single-writer, append-only list that other threads
/// may read while it grows.
struct ThreadLog {
    tid: u64,
    /// Most events kept (at most `CHUNK * MAX_CHUNKS`).
    cap: usize,
    name: Mutex<Option<String>>,
    /// Events published so far: slots `0..len` are written and never change.
    len: AtomicUsize,
    dropped: AtomicU64,
    /// Allocated on demand, never freed or moved while the log lives.
    chunks: [OnceLock<Chunk>; MAX_CHUNKS],
}

// SAFETY: the only unsynchronised state is the slots inside `chunks`. A slot is
// written only by the single writer (see `push`), only while its index is
// `>= len`, i.e. before any reader may look at it; it is published by the
// release store of `len`, and readers only read slots below a `len` they
// loaded with acquire, which are never written again. Everything else is
// atomics, `Mutex` and `OnceLock`.
unsafe impl Sync for ThreadLog {}

impl ThreadLog {
    fn new(tid: u64, cap: usize) -> ThreadLog {
        ThreadLog {
            tid,
            cap: cap.min(CHUNK * MAX_CHUNKS),
            name: Mutex::new(None),
            len: AtomicUsize::new(0),
            dropped: AtomicU64::new(0),
            chunks: std::array::from_fn(|_| OnceLock::new()),
        }
    }

    /// Appends `ev`, or counts it as dropped when the log is full.
    ///
    /// # Safety
    ///
    /// No other thread may call `push` on this log, ever (one writer).
    unsafe fn push(&self, ev: Event) {
        let i = self.len.load(Ordering::Relaxed);
        if i >= self.cap {
            self.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        let chunk = self.chunks[i >> CHUNK_BITS]
            .get_or_init(|| (0..CHUNK).map(|_| UnsafeCell::new(Event::ZERO)).collect());
        // SAFETY: we are the only writer (caller's contract) and `i >= len`, so
        // no reader accesses slot `i` until the store below publishes it.
        unsafe { *chunk[i & (CHUNK - 1)].get() = ev };
        self.len.store(i + 1, Ordering::Release);
    }

    /// The events published so far, in order.
    fn events(&self) -> impl Iterator<Item = Event> + '_ {
        let len = self.len.load(Ordering::Acquire);
        (0..len).map(move |i| {
            // The chunk was initialised before `len` was published past `i`.
            let chunk = self.chunks[i >> CHUNK_BITS].get().expect("published slot has a chunk");
            // SAFETY: `i < len` (loaded with acquire): slot `i` was fully
            // written before that release store and is never written again.
            unsafe { *chunk[i & (CHUNK - 1)].get() }
        })
    }

    fn display_name(&self) -> String {
        let name = lock(&self.name).clone().unwrap_or_else(|| format!("thread {}", self.tid));
        match self.dropped.load(Ordering::Relaxed) {
            0 => name,
            n => format!("{name} [{n} events dropped]"),
        }
    }
}

/// Passes `events` on with `B`/`E` properly nested: an end closes the
/// innermost open span of its kind (closing first, at the same time, any span
/// opened inside it); an end with no open span of its kind is dropped; spans
/// still open at the end are closed at `close_at` (or the last timestamp, if
/// later).
fn balanced(
    events: impl Iterator<Item = Event>,
    close_at: u64,
    mut emit: impl FnMut(Event) -> io::Result<()>,
) -> io::Result<()> {
    let mut open: Vec<Event> = Vec::new();
    let mut last = 0;
    for ev in events {
        last = last.max(ev.ts);
        match ev.phase {
            Phase::Begin => {
                open.push(ev);
                emit(ev)?;
            }
            Phase::Instant => emit(ev)?,
            Phase::End => {
                let Some(at) = open.iter().rposition(|b| b.kind == ev.kind) else {
                    continue;
                };
                for inner in open.drain(at + 1..).rev() {
                    emit(Event { phase: Phase::End, ts: ev.ts, ..inner })?;
                }
                open.pop();
                emit(ev)?;
            }
        }
    }
    let close_at = close_at.max(last);
    while let Some(b) = open.pop() {
        emit(Event { phase: Phase::End, ts: close_at, ..b })?;
    }
    Ok(())
}

#[derive(serde::Serialize)]
struct JsonEvent<'a> {
    name: &'a str,
    ph: &'static str,
    /// Microseconds.
    ts: f64,
    pid: u32,
    tid: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    s: Option<&'static str>,
    args: JsonArgs<'a>,
}

#[derive(serde::Serialize)]
#[serde(untagged)]
enum JsonArgs<'a> {
    Arg { arg: u64 },
    Name { name: &'a str },
    SortIndex { sort_index: u64 },
    Dropped { dropped: u64 },
}

/// A JSON array of events, written one at a time.
struct JsonArray<'w, W: Write> {
    w: &'w mut W,
    first: bool,
}

impl<W: Write> JsonArray<'_, W> {
    fn push(&mut self, ev: &JsonEvent<'_>) -> io::Result<()> {
        if !self.first {
            self.w.write_all(b",\n")?;
        }
        self.first = false;
        serde_json::to_writer(&mut *self.w, ev).map_err(io::Error::from)
    }
}

/// The whole trace file: `{"traceEvents":[...],"displayTimeUnit":"ns","otherData":{...}}`.
fn write_trace(w: &mut impl Write, logs: &[Arc<ThreadLog>], pid: u32, now: u64) -> io::Result<()> {
    w.write_all(b"{\"traceEvents\":[\n")?;
    let mut out = JsonArray { w: &mut *w, first: true };
    fn meta<'a>(name: &'a str, pid: u32, tid: u64, args: JsonArgs<'a>) -> JsonEvent<'a> {
        JsonEvent { name, ph: "M", ts: 0.0, pid, tid, s: None, args }
    }
    out.push(&meta("process_name", pid, 0, JsonArgs::Name { name: "herd" }))?;
    let mut dropped_total = 0;
    for log in logs {
        let tid = log.tid;
        let name = log.display_name();
        out.push(&meta("thread_name", pid, tid, JsonArgs::Name { name: &name }))?;
        out.push(&meta("thread_sort_index", pid, tid, JsonArgs::SortIndex { sort_index: tid }))?;
        let dropped = log.dropped.load(Ordering::Relaxed);
        if dropped > 0 {
            dropped_total += dropped;
            out.push(&meta("dropped_events", pid, tid, JsonArgs::Dropped { dropped }))?;
        }
        balanced(log.events(), now, |ev| {
            let (ph, s) = match ev.phase {
                Phase::Begin => ("B", None),
                Phase::End => ("E", None),
                Phase::Instant => ("i", Some("t")),
            };
            out.push(&JsonEvent {
                name: ev.kind.name(),
                ph,
                ts: ev.ts as f64 / 1000.0,
                pid,
                tid,
                s,
                args: JsonArgs::Arg { arg: ev.arg },
            })
        })?;
    }
    w.write_all(b"\n],\"displayTimeUnit\":\"ns\",\"otherData\":")?;
    let other = serde_json::json!({
        "producer": concat!("herd ", env!("CARGO_PKG_VERSION")),
        "dropped_events": dropped_total,
        "max_events_per_thread": MAX_EVENTS_PER_THREAD,
        "worker_stats": lock(&STATS).iter().map(|(_, v)| v.clone()).collect::<Vec<_>>(),
    });
    serde_json::to_writer(&mut *w, &other).map_err(io::Error::from)?;
    w.write_all(b"}\n")
}

/// Entry points for herd's integration tests (`tests/trace.rs`), which cannot
/// reach the crate-internal API. Not part of herd's interface.
#[doc(hidden)]
pub mod testing {
    use super::Kind;
    use std::path::PathBuf;

    fn kind(name: &str) -> Kind {
        Kind::from_name(name).unwrap_or_else(|| panic!("no trace event kind {name:?}"))
    }

    /// `trace::enabled`.
    pub fn enabled() -> bool {
        super::enabled()
    }

    /// `trace::start`.
    pub fn start(path: PathBuf) {
        super::start(path)
    }

    /// `trace::name_thread`.
    pub fn name_thread(name: &str) {
        super::name_thread(name)
    }

    /// `trace::begin`, the kind named as in the trace (`"region"`, ...).
    pub fn begin(kind_name: &str, arg: u64) {
        super::begin(kind(kind_name), arg)
    }

    /// `trace::end`, the kind named as in the trace.
    pub fn end(kind_name: &str, arg: u64) {
        super::end(kind(kind_name), arg)
    }

    /// `trace::instant`, the kind named as in the trace.
    pub fn instant(kind_name: &str, arg: u64) {
        super::instant(kind(kind_name), arg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn ev(ts: u64, kind: Kind, phase: Phase, arg: u64) -> Event {
        Event { ts, arg, kind, phase }
    }

    fn run_balanced(events: &[Event], close_at: u64) -> Vec<Event> {
        let mut out = Vec::new();
        balanced(events.iter().copied(), close_at, |e| {
            out.push(e);
            Ok(())
        })
        .unwrap();
        out
    }

    #[test]
    fn kind_names_round_trip() {
        for k in Kind::ALL {
            assert_eq!(Kind::from_name(k.name()), Some(k));
        }
        assert_eq!(Kind::from_name("nope"), None);
    }

    #[test]
    fn log_keeps_order_across_chunks_and_counts_dropped() {
        let log = ThreadLog::new(7, CHUNK + 10);
        for i in 0..(CHUNK + 25) as u64 {
            // SAFETY: only this thread pushes to `log`.
            unsafe { log.push(ev(i, Kind::Task, Phase::Instant, i)) };
        }
        let got: Vec<u64> = log.events().map(|e| e.arg).collect();
        assert_eq!(got, (0..(CHUNK + 10) as u64).collect::<Vec<_>>());
        assert_eq!(log.dropped.load(Ordering::Relaxed), 15);
        assert_eq!(log.display_name(), "thread 7 [15 events dropped]");
        *lock(&log.name) = Some("worker 1".into());
        assert_eq!(log.display_name(), "worker 1 [15 events dropped]");
        assert!(ThreadLog::new(1, usize::MAX).cap == MAX_EVENTS_PER_THREAD);
    }

    #[test]
    fn log_can_be_read_while_written() {
        let log = Arc::new(ThreadLog::new(1, MAX_EVENTS_PER_THREAD));
        let writer = {
            let log = Arc::clone(&log);
            std::thread::spawn(move || {
                for i in 0..200_000u64 {
                    // SAFETY: only this thread pushes to `log`.
                    unsafe { log.push(ev(i, Kind::Share, Phase::Instant, i)) };
                }
            })
        };
        let mut seen = 0;
        while seen < 200_000 {
            let args: Vec<u64> = log.events().map(|e| e.arg).collect();
            assert!(args.iter().enumerate().all(|(i, &a)| a == i as u64));
            assert!(args.len() >= seen);
            seen = args.len();
        }
        writer.join().unwrap();
    }

    #[test]
    fn balanced_drops_unmatched_ends_and_closes_inner_spans() {
        use Kind::*;
        use Phase::*;
        let input = [
            ev(1, Task, End, 0), // unmatched: dropped
            ev(2, Region, Begin, 1),
            ev(3, Share, Begin, 2),
            ev(4, Task, Begin, 3),
            ev(5, Steal, Instant, 4),
            ev(6, Share, End, 2), // closes task first
            ev(7, Task, End, 3),  // already closed: dropped
            ev(8, Sleep, Begin, 5),
        ];
        let out = run_balanced(&input, 100);
        let expect = [
            ev(2, Region, Begin, 1),
            ev(3, Share, Begin, 2),
            ev(4, Task, Begin, 3),
            ev(5, Steal, Instant, 4),
            ev(6, Task, End, 3),
            ev(6, Share, End, 2),
            ev(8, Sleep, Begin, 5),
            ev(100, Sleep, End, 5),
            ev(100, Region, End, 1),
        ];
        assert_eq!(out, expect);
        // Never closes before the last event.
        let out = run_balanced(&[ev(50, Sleep, Begin, 0)], 10);
        assert_eq!(out[1], ev(50, Sleep, End, 0));
    }

    #[test]
    fn json_has_metadata_events_and_dropped_note() {
        let a = Arc::new(ThreadLog::new(1, 2));
        let b = Arc::new(ThreadLog::new(2, 100));
        *lock(&b.name) = Some("worker \"1\"".into());
        // SAFETY: only this thread pushes to `a` and `b`.
        unsafe {
            a.push(ev(1500, Kind::Region, Phase::Begin, 9));
            a.push(ev(2500, Kind::Wake, Phase::Instant, 3));
            a.push(ev(3000, Kind::Region, Phase::End, 9)); // dropped (cap 2)
            b.push(ev(10, Kind::Steal, Phase::Instant, 1));
        }
        let mut buf = Vec::new();
        write_trace(&mut buf, &[a, b], 42, 4000).unwrap();
        let v: Value = serde_json::from_slice(&buf).unwrap();
        assert_eq!(v["displayTimeUnit"], "ns");
        assert_eq!(v["otherData"]["dropped_events"], 1);
        let evs = v["traceEvents"].as_array().unwrap();
        assert!(evs.iter().all(|e| e["pid"] == 42));
        let find = |name: &str, tid: u64| {
            evs.iter()
                .find(|e| e["name"] == name && e["tid"] == tid)
                .unwrap_or_else(|| panic!("{name} {tid}"))
        };
        assert_eq!(find("process_name", 0)["args"]["name"], "herd");
        assert_eq!(find("thread_name", 1)["args"]["name"], "thread 1 [1 events dropped]");
        assert_eq!(find("thread_name", 2)["args"]["name"], "worker \"1\"");
        assert_eq!(find("dropped_events", 1)["args"]["dropped"], 1);
        let region: Vec<&Value> = evs.iter().filter(|e| e["name"] == "region").collect();
        assert_eq!(region.len(), 2);
        assert_eq!((region[0]["ph"].as_str(), region[0]["ts"].as_f64()), (Some("B"), Some(1.5)));
        // The dropped end is replaced by one at flush time.
        assert_eq!((region[1]["ph"].as_str(), region[1]["ts"].as_f64()), (Some("E"), Some(4.0)));
        assert_eq!(region[1]["args"]["arg"], 9);
        let wake = find("wake", 1);
        assert_eq!((wake["ph"].as_str(), wake["s"].as_str()), (Some("i"), Some("t")));
        assert_eq!(wake["args"]["arg"], 3);
        assert_eq!(find("steal", 2)["ts"].as_f64(), Some(0.01));
    }
}
