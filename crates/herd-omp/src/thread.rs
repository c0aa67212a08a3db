//! What each OS thread knows about the OpenMP construct it is in: its team
//! and number, the task it runs, and its progress through the team's
//! worksharing constructs and barriers. Only the owning thread touches it.

use crate::league::Seat;
use crate::placement::Partition;
use crate::task::Task;
use crate::team::Team;
use std::cell::Cell;

/// Per-thread state; see the module documentation.
pub(crate) struct ThreadState {
    /// The team of the innermost region (null: none, the initial task).
    pub team: Cell<*const Team>,
    /// Thread number in `team`.
    pub num: Cell<u32>,
    /// The task being executed (null: this thread's initial task).
    pub task: Cell<*const Task>,
    /// Number of the next worksharing construct this implicit task meets.
    pub ws_next: Cell<u64>,
    /// The number of the next `single` (without `copyprivate`) it meets;
    /// see `ws::single_start`.
    pub single_next: Cell<u64>,
    /// Number of the worksharing construct it is in.
    pub ws_cur: Cell<u64>,
    /// Inside construct `ws_cur` (entered through the library, not yet
    /// left): a `cancel for`/`sections` then cancels its ring entry.
    pub ws_open: Cell<bool>,
    /// Barriers passed by this implicit task (the team's epoch).
    pub epoch: Cell<u32>,
    /// Library-scheduled static loops: how many chunks this thread took.
    pub static_trip: Cell<u64>,
    /// Ordered loops: the index range of the chunk this thread holds.
    pub ordered_chunk: Cell<Option<(u64, u64)>>,
    /// The host team this thread works for (null: none; see `league`).
    pub league: Cell<*const Seat>,
    /// `place-partition-var` of its implicit task (`len` 0: the whole place
    /// list; see `placement`).
    pub partition: Cell<Partition>,
}

impl ThreadState {
    /// The state of a thread outside any region.
    pub(crate) const fn new() -> ThreadState {
        ThreadState {
            team: Cell::new(std::ptr::null()),
            num: Cell::new(0),
            task: Cell::new(std::ptr::null()),
            ws_next: Cell::new(0),
            single_next: Cell::new(0),
            ws_cur: Cell::new(0),
            ws_open: Cell::new(false),
            epoch: Cell::new(0),
            static_trip: Cell::new(0),
            ordered_chunk: Cell::new(None),
            league: Cell::new(std::ptr::null()),
            partition: Cell::new(Partition { off: 0, len: 0 }),
        }
    }
}

thread_local! {
    static STATE: ThreadState = const { ThreadState::new() };
}

/// Runs `f` with the calling thread's state.
#[inline]
pub(crate) fn with<R>(f: impl FnOnce(&ThreadState) -> R) -> R {
    fast::with(f)
}

/// The calling thread's state through one `%fs`-relative load. A Rust
/// `thread_local!` in a shared library is reached through
/// `__tls_get_addr` (the general-dynamic model: a call and a generation
/// check), which every `GOMP_*` entry point would pay — half of what a
/// `schedule(dynamic, 1)` chunk costs (9 ns under herd against 3.3 under
/// libgomp, whose own TLS is initial-exec). So a pointer to the state sits
/// in an 8-byte initial-exec TLS slot defined here in assembly (stable Rust
/// has no `#[thread_local]`), set on the thread's first call.
#[cfg(all(target_arch = "x86_64", target_os = "linux", not(loom)))]
mod fast {
    use super::{ThreadState, STATE};

    std::arch::global_asm!(
        ".pushsection .tbss,\"awT\",@nobits",
        ".p2align 3",
        // Global (code inlined into other codegen units and crates refers
        // to it) but hidden: not exported from the shared library.
        ".globl herd_omp_thread_state",
        ".hidden herd_omp_thread_state",
        ".type herd_omp_thread_state, @tls_object",
        ".size herd_omp_thread_state, 8",
        "herd_omp_thread_state:",
        ".zero 8",
        ".popsection",
    );

    /// The slot's value: null until the thread's first [`with`].
    #[inline(always)]
    fn slot() -> *const ThreadState {
        let p: *const ThreadState;
        // SAFETY: reads the calling thread's own 8-byte TLS slot (its offset
        // from the thread pointer, from the GOT, as the initial-exec model
        // does); no memory other than that slot is read.
        unsafe {
            std::arch::asm!(
                "mov {p}, qword ptr [rip + herd_omp_thread_state@GOTTPOFF]",
                "mov {p}, qword ptr fs:[{p}]",
                p = out(reg) p,
                options(nostack, readonly, preserves_flags, pure),
            );
        }
        p
    }

    #[cold]
    fn set() -> *const ThreadState {
        let p = STATE.with(|s| s as *const ThreadState);
        // SAFETY: writes the calling thread's own TLS slot (as `slot`).
        unsafe {
            std::arch::asm!(
                "mov {t}, qword ptr [rip + herd_omp_thread_state@GOTTPOFF]",
                "mov qword ptr fs:[{t}], {p}",
                t = out(reg) _,
                p = in(reg) p,
                options(nostack, preserves_flags),
            );
        }
        p
    }

    #[inline(always)]
    pub(super) fn with<R>(f: impl FnOnce(&ThreadState) -> R) -> R {
        let mut p = slot();
        if p.is_null() {
            p = set();
        }
        // SAFETY: the slot points to this thread's `STATE`, which has no
        // destructor and lives as long as the thread (and the slot).
        f(unsafe { &*p })
    }
}

#[cfg(not(all(target_arch = "x86_64", target_os = "linux", not(loom))))]
mod fast {
    use super::{ThreadState, STATE};

    #[inline]
    pub(super) fn with<R>(f: impl FnOnce(&ThreadState) -> R) -> R {
        STATE.with(f)
    }
}

/// A saved copy of the state, restored by [`Saved::restore`].
pub(crate) struct Saved {
    team: *const Team,
    num: u32,
    task: *const Task,
    ws_next: u64,
    single_next: u64,
    ws_cur: u64,
    ws_open: bool,
    epoch: u32,
    static_trip: u64,
    ordered_chunk: Option<(u64, u64)>,
    league: *const Seat,
    partition: Partition,
}

impl ThreadState {
    pub(crate) fn save(&self) -> Saved {
        Saved {
            team: self.team.get(),
            num: self.num.get(),
            task: self.task.get(),
            ws_next: self.ws_next.get(),
            single_next: self.single_next.get(),
            ws_cur: self.ws_cur.get(),
            ws_open: self.ws_open.get(),
            epoch: self.epoch.get(),
            static_trip: self.static_trip.get(),
            ordered_chunk: self.ordered_chunk.get(),
            league: self.league.get(),
            partition: self.partition.get(),
        }
    }

    pub(crate) fn restore(&self, s: Saved) {
        self.team.set(s.team);
        self.num.set(s.num);
        self.task.set(s.task);
        self.ws_next.set(s.ws_next);
        self.single_next.set(s.single_next);
        self.ws_cur.set(s.ws_cur);
        self.ws_open.set(s.ws_open);
        self.epoch.set(s.epoch);
        self.static_trip.set(s.static_trip);
        self.ordered_chunk.set(s.ordered_chunk);
        self.league.set(s.league);
        self.partition.set(s.partition);
    }

    /// The team, if in a parallel region.
    #[inline]
    pub(crate) fn team(&self) -> Option<&Team> {
        // SAFETY: a team outlives every thread state that points to it (the
        // region ends only after each member restored its state).
        unsafe { self.team.get().as_ref() }
    }
}
