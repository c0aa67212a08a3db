//! Distributed herd-flow (Intel CnC's distributed model, cnc-dense-linear-algebra.txt): every
//! rank builds the same graph ([`DistGraph`], SPMD); a tag goes to the rank its step
//! collection's [`Tuner::compute_on`](herd_flow::Tuner::compute_on) names and is prescribed
//! there only; an item is stored where it is put and forwarded to each rank that
//! [`Items::with_consumers`](herd_flow::Items::with_consumers) (or `with_consumed_on`) names,
//! through the communicator thread; received items and tags are put into the local
//! collections by compute participants. [`DistGraph::wait`] returns when no step is runnable
//! or running anywhere and no message is in flight (termination detection in
//! `quiescence.rs`), with every rank's blocked steps or the first failing rank's error.
//! Protocols: `README.md` beside this file.

mod quiescence;
mod route;
pub mod wire;

use crate::error::MpiError;
use crate::Mpi;
use herd_flow::{Blocked, Ctx, DefaultTuner, Graph, Items, StepError, Steps, Tags, Tuner};
use mpi::datatype::PartitionMut;
use quiescence::Detector;
use route::{lock, Events, Handler, State};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::fmt::{self, Debug};
use std::hash::Hash;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// The MPI tags of distributed graphs: graph number `g` (in creation order, the same on
/// every rank) uses `TAG_BASE + g % TAG_COUNT`.
pub const TAG_BASE: i32 = 32_000;
/// How many graph tags there are (graphs alive at once must be fewer).
pub const TAG_COUNT: i32 = 600;

static GRAPHS: AtomicUsize = AtomicUsize::new(0);

/// A blocked step and the rank it is on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankBlocked {
    /// The rank the step was prescribed on.
    pub rank: usize,
    /// The step and the items it lacks.
    pub blocked: Blocked,
}

impl fmt::Display for RankBlocked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "rank {}: {}", self.rank, self.blocked)
    }
}

fn list(b: &[RankBlocked]) -> String {
    b.iter().map(|b| b.to_string()).collect::<Vec<_>>().join("; ")
}

/// What [`DistGraph::wait`] reports (the same on every rank, except [`DistError::Stalled`]).
#[derive(Debug, thiserror::Error)]
pub enum DistError {
    /// A step failed or panicked, or a put or a message was wrong, on `rank` (the lowest
    /// failing rank); the graph was stopped on every rank.
    #[error("rank {rank} failed: {message}")]
    Failed {
        /// The failing rank.
        rank: usize,
        /// Its error.
        message: String,
    },
    /// Quiescent everywhere, but steps can never run: each with its rank and missing items.
    #[error("graph quiescent on every rank with {} step(s) that can never run: {}", .0.len(), list(.0))]
    Unsatisfied(Vec<RankBlocked>),
    /// This rank waited longer than the stall timeout with nothing happening (no message,
    /// no completed termination round): another rank hangs or died.
    #[error("rank {rank}: nothing arrived for {seconds} s while waiting for the graph to end (sent {sent}, received {received}, {rounds} termination rounds)")]
    Stalled {
        /// The waiting rank.
        rank: usize,
        /// The timeout.
        seconds: f64,
        /// Messages it sent.
        sent: u64,
        /// Messages it received.
        received: u64,
        /// Termination rounds completed.
        rounds: u64,
    },
    /// MPI failed.
    #[error(transparent)]
    Mpi(#[from] MpiError),
}

impl From<DistError> for MpiError {
    fn from(e: DistError) -> MpiError {
        match e {
            DistError::Failed { rank, message } => MpiError::Remote { rank, message },
            DistError::Mpi(e) => e,
            DistError::Stalled { rank, seconds, .. } => {
                MpiError::Timeout { rank, what: "the distributed graph".into(), seconds }
            }
            e @ DistError::Unsatisfied(_) => {
                let rank = match &e {
                    DistError::Unsatisfied(b) => b.first().map_or(0, |b| b.rank),
                    _ => 0,
                };
                MpiError::Remote { rank, message: e.to_string() }
            }
        }
    }
}

/// Counters of one rank's part of a [`DistGraph::wait`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DistStats {
    /// This rank's herd-flow counters (steps prescribed and executed here).
    pub local: herd_flow::Stats,
    /// Steps executed on all ranks together.
    pub executed_total: u64,
    /// Messages (items, tags, aborts) this rank sent.
    pub sent: u64,
    /// Messages this rank received.
    pub received: u64,
    /// Bytes this rank sent.
    pub bytes_sent: u64,
    /// Termination rounds (all-reduces) this wait took.
    pub rounds: u64,
}

/// A blocked step as reported between ranks: (step collection, tag, the
/// missing (item collection, key) pairs).
type BlockedStep = (String, String, Vec<(String, String)>);

/// What each rank reports to every other at the end of a wait.
#[derive(Serialize, Deserialize)]
struct Report {
    error: Option<String>,
    executed: u64,
    blocked: Vec<BlockedStep>,
}

/// A herd-flow graph spread over the ranks of `MPI_COMM_WORLD`. Every rank builds the same
/// graph, with its collections created in the same order, and calls [`wait`](Self::wait).
pub struct DistGraph {
    graph: Graph,
    state: Arc<State>,
    next_index: AtomicU64,
    stall: Mutex<Duration>,
}

impl DistGraph {
    /// An empty distributed graph (the default herd-flow discipline, dependency-counted, is
    /// the one under which remote items schedule their consumers; see [`graph`](Self::graph)
    /// for the others). Graphs must be created in the same order on every rank (their
    /// number picks their MPI tag).
    pub fn new(mpi: &Arc<Mpi>, name: &str) -> DistGraph {
        let g = GRAPHS.fetch_add(1, Ordering::Relaxed);
        let tag = TAG_BASE + (g % TAG_COUNT as usize) as i32;
        let state = Arc::new(State {
            mpi: mpi.clone(),
            tag,
            rank: mpi.rank(),
            size: mpi.size(),
            sent: AtomicU64::new(0),
            received: AtomicU64::new(0),
            bytes_sent: AtomicU64::new(0),
            failed: AtomicBool::new(false),
            local_error: Mutex::new(None),
            events: Mutex::new(Events::default()),
            wake: Condvar::new(),
            handlers: Mutex::new(Vec::new()),
        });
        let graph = Graph::new(name);
        {
            let st = state.clone();
            graph.set_poll(move |inj| {
                st.poll(inj);
            });
        }
        {
            let st = state.clone();
            mpi.listen(tag, move |src, bytes| st.deliver(src, bytes));
        }
        DistGraph { graph, state, next_index: AtomicU64::new(0), stall: Mutex::new(Duration::from_secs(600)) }
    }

    /// The local herd-flow graph (its discipline, timeline, stats).
    pub fn graph(&self) -> &Graph {
        &self.graph
    }

    /// This rank.
    pub fn rank(&self) -> usize {
        self.state.rank
    }

    /// The number of ranks.
    pub fn size(&self) -> usize {
        self.state.size
    }

    /// How long [`wait`](Self::wait) waits with nothing arriving before it gives up with
    /// [`DistError::Stalled`] (default 600 s).
    pub fn set_stall_timeout(&self, d: Duration) {
        *lock(&self.stall) = d;
    }

    fn register(&self, h: Arc<Handler>) -> u32 {
        let i = self.next_index.fetch_add(1, Ordering::Relaxed) as u32;
        let mut hs = lock(&self.state.handlers);
        debug_assert_eq!(hs.len(), i as usize);
        hs.push(h);
        i
    }

    /// An item collection whose items are forwarded, when put on this rank, to the other
    /// ranks its consumer function names (set it with `with_consumers` or
    /// `with_consumed_on` on the result, before the first put).
    pub fn items<K, V>(&self, name: &str) -> Items<K, V>
    where
        K: Eq + Hash + Clone + Debug + Send + Sync + Serialize + DeserializeOwned + 'static,
        V: Send + Sync + Serialize + DeserializeOwned + 'static,
    {
        let items = self.graph.items::<K, V>(name);
        let target = items.clone();
        let index = self.register(Arc::new(move |inj, k: &[u8], v: &[u8]| {
            let key: K = wire::decode(k)?;
            let value: V = wire::decode(v)?;
            inj.put(&target, key, value).map_err(|e| e.to_string())
        }));
        let st = self.state.clone();
        let coll: Arc<str> = name.into();
        items.on_put(move |k, v, nodes| st.forward_item(&coll, index, k, &**v, nodes));
        items
    }

    /// A tag collection (tags are routed per step collection, see [`steps_tuned`](Self::steps_tuned)).
    pub fn tags<K>(&self, name: &str) -> Tags<K>
    where
        K: Eq + Hash + Clone + Debug + Send + Sync + 'static,
    {
        self.graph.tags(name)
    }

    /// A step collection with `tuner`: a tag put on any rank is sent to the rank
    /// `tuner.compute_on(tag)` and its step prescribed there.
    pub fn steps_tuned<K, T, F>(&self, name: &str, tuner: T, f: F) -> Steps<K>
    where
        K: Eq + Hash + Clone + Debug + Send + Sync + Serialize + DeserializeOwned + 'static,
        T: Tuner<K> + 'static,
        F: Fn(&K, &Ctx<'_>) -> Result<(), StepError> + Send + Sync + 'static,
    {
        let steps = self.graph.steps_tuned(name, tuner, f);
        let target = steps.clone();
        let index = self.register(Arc::new(move |inj, t: &[u8], _: &[u8]| {
            let (memo, tag): (Option<u32>, K) = wire::decode(t)?;
            inj.prescribe_from(&target, tag, memo);
            Ok(())
        }));
        let st = self.state.clone();
        let coll: Arc<str> = name.into();
        steps.route(self.state.rank, move |dest, tag, memo| st.forward_tag(&coll, index, dest, tag, memo));
        steps
    }

    /// A step collection with the default tuner (every step on rank 0).
    pub fn steps<K, F>(&self, name: &str, f: F) -> Steps<K>
    where
        K: Eq + Hash + Clone + Debug + Send + Sync + Serialize + DeserializeOwned + 'static,
        F: Fn(&K, &Ctx<'_>) -> Result<(), StepError> + Send + Sync + 'static,
    {
        self.steps_tuned(name, DefaultTuner, f)
    }

    /// Runs the local steps and the ones received work enables until the whole graph is
    /// quiescent (termination detection over all ranks); collective: every rank calls it.
    ///
    /// Returns this rank's [`DistStats`], or on every rank: [`DistError::Failed`] naming the
    /// lowest rank where a step failed or panicked (every rank stops running steps once it
    /// learns of a failure), or [`DistError::Unsatisfied`] listing every blocked step with its
    /// rank. [`DistError::Stalled`] when nothing arrives for the stall timeout (a rank hangs
    /// or died; the communicator's state is then undefined).
    pub fn wait(&self) -> Result<DistStats, DistError> {
        let st = &self.state;
        let stall = *lock(&self.stall);
        let mut det = Detector::default();
        let mut backoff = Duration::from_micros(20);
        loop {
            self.run_local();
            quiescence::post_round(&st.mpi, self.counts(), st.clone());
            // Wait for the round, running whatever arrives meanwhile.
            let mut last = Instant::now();
            let totals = loop {
                let (round, msgs) = {
                    let mut ev = lock(&st.events);
                    if ev.round.is_none() && ev.messages.is_empty() {
                        ev = st
                            .wake
                            .wait_timeout(ev, Duration::from_millis(5))
                            .unwrap_or_else(|e| e.into_inner())
                            .0;
                    }
                    (ev.round.take(), !ev.messages.is_empty())
                };
                if msgs {
                    self.run_local();
                    last = Instant::now();
                }
                if let Some(t) = round {
                    break t;
                }
                if last.elapsed() > stall {
                    return Err(self.stalled(stall, det.rounds));
                }
            };
            if det.observe(totals) {
                break;
            }
            // Not over: wait a little for activity before the next round, so idle ranks do
            // not spin rounds while messages are on their way.
            let quiet = {
                let ev = lock(&st.events);
                if ev.messages.is_empty() {
                    let (ev, _) = st.wake.wait_timeout(ev, backoff).unwrap_or_else(|e| e.into_inner());
                    ev.messages.is_empty()
                } else {
                    false
                }
            };
            backoff =
                if quiet { (backoff * 2).min(Duration::from_millis(2)) } else { Duration::from_micros(20) };
        }
        self.finish(det.rounds)
    }

    fn counts(&self) -> [u64; 2] {
        [self.state.sent.load(Ordering::SeqCst), self.state.received.load(Ordering::SeqCst)]
    }

    /// Runs local steps and injects received messages until neither has anything left.
    fn run_local(&self) {
        let st = &self.state;
        loop {
            let n = self.graph.inject(|inj| st.poll(inj));
            if !st.failed.load(Ordering::Acquire) && self.graph.has_ready() {
                if let Err(e) = self.graph.run() {
                    st.fail(e.to_string());
                }
                continue;
            }
            if n == 0 {
                break;
            }
        }
    }

    fn stalled(&self, timeout: Duration, rounds: u64) -> DistError {
        let [sent, received] = self.counts();
        DistError::Stalled { rank: self.state.rank, seconds: timeout.as_secs_f64(), sent, received, rounds }
    }

    /// After termination: every rank learns every rank's error and blocked steps.
    fn finish(&self, rounds: u64) -> Result<DistStats, DistError> {
        let st = &self.state;
        let local = self.graph.stats();
        let blocked = self.graph.blocked();
        let report = Report {
            error: lock(&st.local_error).clone(),
            executed: local.executed,
            blocked: blocked.into_iter().map(|b| (b.step_collection, b.tag, b.missing)).collect(),
        };
        let bytes = serde_json::to_vec(&report).map_err(|e| MpiError::Invalid(e.to_string()))?;
        let all = allgather_bytes(&st.mpi, bytes)?;
        let mut reports = Vec::with_capacity(all.len());
        for (r, b) in all.iter().enumerate() {
            let rep: Report = serde_json::from_slice(b)
                .map_err(|e| MpiError::Invalid(format!("rank {r}'s end-of-graph report: {e}")))?;
            reports.push(rep);
        }
        if let Some((rank, rep)) = reports.iter().enumerate().find(|(_, r)| r.error.is_some()) {
            return Err(DistError::Failed { rank, message: rep.error.clone().unwrap_or_default() });
        }
        let mut blocked = Vec::new();
        for (rank, rep) in reports.iter().enumerate() {
            for (c, t, m) in &rep.blocked {
                blocked.push(RankBlocked {
                    rank,
                    blocked: Blocked { step_collection: c.clone(), tag: t.clone(), missing: m.clone() },
                });
            }
        }
        if !blocked.is_empty() {
            return Err(DistError::Unsatisfied(blocked));
        }
        let [sent, received] = self.counts();
        Ok(DistStats {
            local,
            executed_total: reports.iter().map(|r| r.executed).sum(),
            sent,
            received,
            bytes_sent: st.bytes_sent.load(Ordering::Relaxed),
            rounds,
        })
    }
}

impl Drop for DistGraph {
    /// Stops listening and breaks the reference cycles through the hooks (collections →
    /// hooks → state → injectors → collections).
    fn drop(&mut self) {
        self.state.mpi.unlisten(self.state.tag);
        lock(&self.state.handlers).clear();
    }
}

/// Every rank's bytes, on every rank (`MPI_Allgather` of the lengths, then
/// `MPI_Allgatherv`), on the communicator thread.
pub(crate) fn allgather_bytes(mpi: &Mpi, bytes: Vec<u8>) -> Result<Vec<Vec<u8>>, MpiError> {
    use mpi::collective::CommunicatorCollectives;
    let size = mpi.size();
    let len = i32::try_from(bytes.len())
        .map_err(|_| MpiError::Invalid(format!("{} bytes do not fit one all-gather", bytes.len())))?;
    let (counts, buf) = mpi.run(move |w| {
        let mut counts = vec![0i32; size];
        w.all_gather_into(&len, &mut counts[..]);
        let displs: Vec<i32> = counts
            .iter()
            .scan(0i32, |acc, &c| {
                let d = *acc;
                *acc += c;
                Some(d)
            })
            .collect();
        let total: i32 = counts.iter().sum();
        let mut buf = vec![0u8; total as usize];
        // (Open MPI refuses an all-gather of nothing at all.)
        if total > 0 {
            let mut part = PartitionMut::new(&mut buf[..], &counts[..], &displs[..]);
            w.all_gather_varcount_into(&bytes[..], &mut part);
        }
        (counts, buf)
    });
    let mut out = Vec::with_capacity(size);
    let mut at = 0usize;
    for c in counts {
        out.push(buf[at..at + c as usize].to_vec());
        at += c as usize;
    }
    Ok(out)
}
