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
    STATE.with(f)
}

/// A saved copy of the state, restored by [`Saved::restore`].
pub(crate) struct Saved {
    team: *const Team,
    num: u32,
    task: *const Task,
    ws_next: u64,
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
