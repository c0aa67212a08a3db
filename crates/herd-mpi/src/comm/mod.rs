//! The communicator thread (copy-pack-overlap-blue-horizon.txt §8): one thread per process
//! owns MPI. Compute participants hand it sends, receives, collectives and closures through
//! a lock-free queue and go on computing; it progresses the requests with `MPI_Testsome`
//! and completes their [`Pending`] results. It initializes MPI itself, so
//! `MPI_THREAD_FUNNELED` suffices. Protocol: `README.md` beside this file.

mod engine;
mod node_window;
mod ops;
mod pending;
mod shared;

pub(crate) use engine::Engine;
pub(crate) use node_window::{PeerLink, Segments};
pub(crate) use ops::check_tag;
pub use ops::RESERVED_TAGS;
pub use pending::Pending;
pub(crate) use pending::{pending, Completer};
pub use shared::CommStats;
use shared::{Command, Counters, Shared};

use crate::error::{MpiError, Result};
use crate::node::{claim_share, NodeShare};
use mpi::topology::SimpleCommunicator;
use mpi::traits::Communicator;
use mpi::Threading;
use std::collections::BTreeMap;
use std::panic::{self, AssertUnwindSafe};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// The CPU time `thread` has used, in nanoseconds (0 if its clock cannot be read).
fn thread_cpu_ns(thread: &JoinHandle<()>) -> u64 {
    use std::os::unix::thread::JoinHandleExt;
    let mut clock: libc::clockid_t = 0;
    // SAFETY: the handle has not been joined, so its pthread_t names a live or finished but
    // unjoined thread, whose ID stays valid until the join; `clock` is a valid out-pointer.
    if unsafe { libc::pthread_getcpuclockid(thread.as_pthread_t(), &mut clock) } != 0 {
        return 0;
    }
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `clock` was just obtained for that thread; `ts` is a valid out-pointer.
    if unsafe { libc::clock_gettime(clock, &mut ts) } != 0 {
        return 0;
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Where the communicator thread runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CommPlace {
    /// On the first core `HERD_RESERVE` sets aside when there is one (the paper's reserved
    /// core), otherwise unbound.
    #[default]
    Reserved,
    /// Bound to this PU (an index into [`herd::Topology::pus`]).
    Pu(usize),
    /// Not bound.
    Unbound,
}

/// How to start herd-mpi ([`Mpi::init`]).
#[derive(Clone, Debug)]
pub struct Options {
    /// The thread level to ask MPI for. `Funneled` (the default) is enough: only the
    /// communicator thread calls MPI.
    pub threading: Threading,
    /// Where the communicator thread runs.
    pub place: CommPlace,
    /// The largest element count passed to one MPI call; larger messages are split into
    /// several (MPI counts are `int`). Default `i32::MAX`; tests lower it.
    pub max_count: usize,
    /// Ranks on one node split its cores when the launcher left them unbound (default
    /// `true`; see [`crate::node`]).
    pub share_node: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            threading: Threading::Funneled,
            place: CommPlace::Reserved,
            max_count: i32::MAX as usize,
            share_node: true,
        }
    }
}

/// herd-mpi's handle: this process's rank in `MPI_COMM_WORLD` and its communicator thread.
/// Dropping it finishes the requests in flight and finalizes MPI (collectively: every rank
/// must drop its handle).
pub struct Mpi {
    shared: Arc<Shared>,
    join: Option<JoinHandle<()>>,
    rank: usize,
    size: usize,
    threading: Threading,
    pu: Option<usize>,
    local: (usize, usize),
    node: NodeShare,
    /// This rank's links to the peers it exchanged through shared memory with (windows
    /// freed when the handle drops; `copy::shared_window`).
    links: Mutex<BTreeMap<usize, Arc<Mutex<PeerLink>>>>,
}

struct Started {
    rank: usize,
    size: usize,
    threading: Threading,
    pu: Option<usize>,
    local: (usize, usize),
}

impl Mpi {
    /// Starts the communicator thread, which initializes MPI. Errors: MPI already
    /// initialized in this process, or a thread level below `opts.threading`.
    pub fn init(opts: Options) -> Result<Mpi> {
        if opts.max_count == 0 || opts.max_count > i32::MAX as usize {
            return Err(MpiError::Invalid(format!(
                "Options::max_count = {} is outside 1..={}",
                opts.max_count,
                i32::MAX
            )));
        }
        let pu = comm_pu(opts.place)?;
        let (tx, rx) = mpsc::channel::<Result<Started>>();
        let (shared_tx, shared_rx) = mpsc::channel::<Arc<Shared>>();
        let needed = opts.threading;
        let max_count = opts.max_count;
        let join = std::thread::Builder::new()
            .name("herd-mpi-comm".into())
            .spawn(move || {
                let bound = match pu {
                    Some(p) => {
                        herd::Topology::from_env().and_then(|t| t.bind_current_thread(&[p])).unwrap_or(false)
                    }
                    None => false,
                };
                let Some((universe, provided)) = mpi::initialize_with_threading(needed) else {
                    let _ = tx.send(Err(MpiError::AlreadyInitialized));
                    return;
                };
                let world = universe.world();
                let rank = world.rank() as usize;
                let size = world.size() as usize;
                let local = {
                    let node = world.split_shared(rank as i32);
                    (node.rank() as usize, node.size() as usize)
                };
                if level(provided) < level(needed) {
                    let _ = tx.send(Err(MpiError::ThreadLevel { provided, needed }));
                    return;
                }
                let shared = Arc::new(Shared {
                    queue: Default::default(),
                    thread: std::thread::current(),
                    max_count,
                    stats: Counters::default(),
                });
                let _ = shared_tx.send(shared.clone());
                let _ =
                    tx.send(Ok(Started { rank, size, threading: provided, pu: pu.filter(|_| bound), local }));
                let eng = Engine::new(world, rank, shared.clone());
                engine::run(shared, eng);
                // `universe` drops here, after the engine: MPI_Finalize on this thread.
                drop(universe);
            })
            .map_err(|e| MpiError::Invalid(format!("cannot start the communicator thread: {e}")))?;
        let started = match rx.recv() {
            Ok(r) => r,
            Err(_) => {
                let why = match join.join() {
                    Err(p) => crate::panic_message(&p),
                    Ok(()) => "it exited during MPI initialization".into(),
                };
                return Err(MpiError::Stopped { rank: 0, why });
            }
        };
        let started = match started {
            Ok(s) => s,
            Err(e) => {
                let _ = join.join();
                return Err(e);
            }
        };
        let shared = shared_rx.recv().expect("sent before Started");
        install_panic_hook(started.rank, started.size);
        let mut mpi = Mpi {
            shared,
            join: Some(join),
            rank: started.rank,
            size: started.size,
            threading: started.threading,
            pu: started.pu,
            local: started.local,
            node: NodeShare::Given,
            links: Mutex::default(),
        };
        // On an error here `mpi` drops: the thread finalizes MPI.
        mpi.node =
            if opts.share_node { claim_share(started.local.0, started.local.1)? } else { NodeShare::Given };
        Ok(mpi)
    }

    /// This process's rank in `MPI_COMM_WORLD`.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// The number of ranks.
    pub fn size(&self) -> usize {
        self.size
    }

    /// The thread level MPI provides.
    pub fn threading(&self) -> Threading {
        self.threading
    }

    /// The PU the communicator thread is bound to, if it is.
    pub fn comm_pu(&self) -> Option<usize> {
        self.pu
    }

    /// This rank's index among the ranks on its node, and their number
    /// (`MPI_COMM_TYPE_SHARED`).
    pub fn local(&self) -> (usize, usize) {
        self.local
    }

    /// How this rank's herd pool shares the node with the other ranks on it.
    pub fn node_share(&self) -> &NodeShare {
        &self.node
    }

    /// The communicator thread's counters, with the CPU time it has used (read from its
    /// thread CPU clock: no cost on the thread itself).
    pub fn stats(&self) -> CommStats {
        let mut s = self.shared.snapshot();
        s.cpu_ns = self.join.as_ref().map_or(0, thread_cpu_ns);
        s
    }

    /// Runs `f` on the communicator thread with `MPI_COMM_WORLD` and waits for its result:
    /// the way to make blocking MPI calls (a barrier, a reduction, ScaLAPACK) under
    /// `MPI_THREAD_FUNNELED`. A panic in `f` is resumed in the caller.
    pub fn run<R, F>(&self, f: F) -> R
    where
        R: Send,
        F: FnOnce(&SimpleCommunicator) -> R + Send,
    {
        let (p, c) = pending::<std::thread::Result<R>>(self.rank);
        let job: Box<dyn FnOnce(&mut Engine) + Send + '_> = Box::new(move |eng: &mut Engine| {
            let r = panic::catch_unwind(AssertUnwindSafe(|| f(&eng.world)));
            c.complete(Ok(r));
        });
        // SAFETY: the closure borrows from the caller's frame ('_), and this function does
        // not return before the closure has run and completed `p` (wait below blocks until
        // then; if the thread stops first, the closure is dropped unrun, dropping its
        // borrows, before `wait` returns the error). So no borrow outlives its referent.
        let job: Box<dyn FnOnce(&mut Engine) + Send + 'static> = unsafe { std::mem::transmute(job) };
        self.shared.submit(Command::Run(job));
        match p.wait() {
            Ok(Ok(r)) => r,
            Ok(Err(payload)) => panic::resume_unwind(payload),
            Err(e) => panic!("{e}"),
        }
    }

    /// Queues `f` to run on the communicator thread and returns at once.
    pub fn spawn<R, F>(&self, f: F) -> Pending<R>
    where
        R: Send + 'static,
        F: FnOnce(&SimpleCommunicator) -> R + Send + 'static,
    {
        let (p, c) = pending::<R>(self.rank);
        let rank = self.rank;
        self.submit(move |eng| match panic::catch_unwind(AssertUnwindSafe(|| f(&eng.world))) {
            Ok(r) => c.complete(Ok(r)),
            Err(payload) => {
                c.complete(Err(MpiError::Remote { rank, message: crate::panic_message(&payload) }))
            }
        });
        p
    }

    /// Blocks until every rank has called it.
    pub fn barrier(&self) {
        use mpi::collective::CommunicatorCollectives;
        self.run(|w| w.barrier());
    }

    pub(crate) fn submit(&self, f: impl FnOnce(&mut Engine) + Send + 'static) {
        self.shared.submit(Command::Run(Box::new(f)));
    }

    /// This rank's link to `peer` (made on first use; kept until the handle drops). Hold
    /// its lock for the whole of an operation that uses its window.
    pub(crate) fn peer_link(&self, peer: usize) -> Arc<Mutex<PeerLink>> {
        let mut links = self.links.lock().unwrap_or_else(|e| e.into_inner());
        links.entry(peer).or_default().clone()
    }

    /// Frees every link's window and communicator on the communicator thread, pair by pair
    /// in the order of (lower rank, higher rank) on every rank, so that these collectives
    /// over two ranks cannot wait for each other in a cycle: the least pair still to free
    /// has both its ranks at it.
    fn free_links(&mut self) {
        let links = std::mem::take(self.links.get_mut().unwrap_or_else(|e| e.into_inner()));
        let rank = self.rank;
        let mut links: Vec<(usize, Arc<Mutex<PeerLink>>)> = links.into_iter().collect();
        links.sort_by_key(|&(peer, _)| (rank.min(peer), rank.max(peer)));
        for (peer, link) in links {
            let mut link = std::mem::take(&mut *link.lock().unwrap_or_else(|e| e.into_inner()));
            let (p, c) = pending::<Result<()>>(rank);
            self.submit(move |_eng| c.complete(Ok(link.free(rank))));
            match p.wait() {
                Ok(Ok(())) => {}
                Ok(Err(e)) | Err(e) => {
                    eprintln!("herd-mpi: rank {rank}: freeing the shared window with rank {peer}: {e}")
                }
            }
        }
    }

    pub(crate) fn max_count(&self) -> usize {
        self.shared.max_count
    }

    pub(crate) fn check_rank(&self, what: &str, r: usize) -> Result<()> {
        if r >= self.size {
            return Err(MpiError::Invalid(format!(
                "{what} {r} is not a rank (there are {} ranks)",
                self.size
            )));
        }
        Ok(())
    }
}

impl Drop for Mpi {
    fn drop(&mut self) {
        if std::thread::panicking() {
            // This rank is failing: finalizing would wait for ranks that may be waiting for
            // it. Abort the job instead (MPI_Abort on the communicator thread, which makes
            // mpirun end every rank and report this one); if the thread does not get to it
            // within 5 s (it is stuck in a blocking call), exit without finalizing, which
            // mpirun also reports as this rank's failure.
            let rank = self.rank;
            eprintln!("herd-mpi: rank {rank} of {} is failing (panic): aborting the job", self.size);
            self.shared.submit(Command::Run(Box::new(move |eng: &mut Engine| {
                // SAFETY: called on the thread that initialized MPI, with its world.
                unsafe { mpi::ffi::MPI_Abort(eng.comm(), 101) };
            })));
            let start = std::time::Instant::now();
            while start.elapsed() < std::time::Duration::from_secs(5) {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            // SAFETY: _exit ends the process at once; nothing of this process runs after it.
            unsafe { libc::_exit(101) };
        }
        self.free_links();
        self.shared.submit(Command::Stop);
        if let Some(j) = self.join.take() {
            if j.join().is_err() {
                eprintln!("herd-mpi: rank {}: the communicator thread panicked", self.rank);
            }
        }
    }
}

fn level(t: Threading) -> u8 {
    match t {
        Threading::Single => 0,
        Threading::Funneled => 1,
        Threading::Serialized => 2,
        Threading::Multiple => 3,
    }
}

/// The PU the communicator thread is bound to.
fn comm_pu(place: CommPlace) -> Result<Option<usize>> {
    match place {
        CommPlace::Unbound => Ok(None),
        CommPlace::Pu(p) => {
            let topo = herd::Topology::from_env()?;
            if p >= topo.pus().len() {
                return Err(MpiError::Invalid(format!(
                    "CommPlace::Pu({p}): this machine has {} usable PUs",
                    topo.pus().len()
                )));
            }
            Ok(Some(p))
        }
        CommPlace::Reserved => {
            let cfg = herd::Config::from_env()?;
            let reserve = cfg.reserve.unwrap_or(0);
            if reserve == 0 {
                return Ok(None);
            }
            let topo = herd::Topology::from_env()?;
            let mut cores: Vec<usize> = topo.pus().iter().map(|p| p.core).collect();
            cores.dedup();
            if reserve >= cores.len() {
                return Ok(None);
            }
            let first = cores[cores.len() - reserve];
            Ok(topo.pus().iter().find(|p| p.core == first).map(|p| p.index))
        }
    }
}

/// A panic on any thread of a rank names the rank before the default report, so that the
/// mpirun output of a failed run says which rank failed and why.
fn install_panic_hook(rank: usize, size: usize) {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let prev = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            eprintln!("herd-mpi: rank {rank} of {size} panicked");
            prev(info);
        }));
    });
}
