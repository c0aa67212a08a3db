//! Cancellation (OpenMP 4.0 `cancel` / `cancellation point`, active only
//! with `OMP_CANCELLATION=true`; otherwise every entry point here is a
//! no-op answering false, and nothing else looks at cancellation).
//!
//! **Words.** Each cancellable thing has one word, written once by the
//! canceller and only read by the others, so nothing is written per
//! iteration or per task:
//! * a region: `Team::cancelled`;
//! * a loop or sections the library schedules: its ring entry's `cancelled`
//!   (`ws`), which `loop_next` reads on the line it touches anyway and
//!   then hands out no more chunks; reset by the entry's next initialiser;
//! * a loop the members schedule themselves (gcc's inline static schedule,
//!   which never enters the ring): `Team::ws_cancel` = the canceller's
//!   barrier epoch + 1, so it goes stale at the loop's closing barrier;
//!   which of the two a member uses is told by `ThreadState::ws_open` (it
//!   entered a construct through the library and has not left it);
//! * a taskgroup: `TaskGroup::cancelled`. A task of a cancelled group (or
//!   of a group enclosing its group, or of a cancelled region) is not
//!   created, and one that has not started is *discarded*: completed
//!   without running its body, so counts, dependences and taskgroup waits
//!   stay consistent (tasks whose arguments were copy-constructed run, so
//!   that their body destroys them, as libgomp's).
//!
//! **Cancellable barrier.** `GOMP_barrier_cancel`, `GOMP_loop_end_cancel`
//! and `GOMP_sections_end_cancel` are the team barrier whose waits also stop
//! when the region is cancelled (`Team::barrier_or`); the member then skips
//! to the region's end. A member that stops leaves the barrier's words
//! half-updated; members of a cancelled region meet no barrier again in it,
//! and the master resets the words after every member has returned
//! ([`end_region`]), so the team is reusable.
//!
//! **Waking.** A member that sees the region cancelled — the canceller, or
//! any member at a cancellation point or cancellable barrier — wakes its
//! barrier-tree neighbours (parent and children; with two members, the
//! other) if they sleep, after a `SeqCst` fence; a member woken in a
//! cancellable barrier sees the flag and passes it on. The canceller sets
//! the flag with a `SeqCst` read-modify-write and a sleeper re-checks it
//! with one before sleeping (`wait::until`), so either the sleeper sees it
//! or its waker sees the sleeper's announcement. Every member reaches a
//! cancellation point or cancellable barrier (the program's duty, as with
//! libgomp), so the news crosses the whole tree; nobody issues more than
//! `FANIN + 1` wakes.

use crate::task::{self, TaskGroup};
use crate::team::Team;
use crate::thread::{self, ThreadState};
use crate::wait::{self, Observe};
use crate::ws;
use std::ffi::c_int;
use std::sync::atomic::Ordering;

/// `which` of `GOMP_cancel` / `GOMP_cancellation_point` (libgomp's
/// `gomp-constants.h`).
pub(crate) const PARALLEL: c_int = 1;
pub(crate) const LOOP: c_int = 2;
pub(crate) const SECTIONS: c_int = 4;
pub(crate) const TASKGROUP: c_int = 8;

/// `cancel-var` (`OMP_CANCELLATION`).
#[inline]
pub(crate) fn enabled() -> bool {
    crate::runtime::global().cancellation
}

/// Whether a task of `team` counted in `group` belongs to a cancelled
/// region or taskgroup.
pub(crate) fn task_cancelled(team: Option<&Team>, group: *const TaskGroup) -> bool {
    team.is_some_and(region_cancelled) || task::group_cancelled(group)
}

#[inline]
fn region_cancelled(team: &Team) -> bool {
    team.cancelled.load(Ordering::Relaxed) != 0
}

/// Member `me` cancels its region.
pub(crate) fn cancel_region(team: &Team, me: usize) {
    if team.cancelled.load(Ordering::Relaxed) == 0 {
        // A read-modify-write: see the module documentation (waking).
        team.cancelled.swap(1, Ordering::SeqCst);
    }
    pass_on(team, me);
}

/// Member `me` saw its region cancelled: wakes its sleeping barrier-tree
/// neighbours so that they see it too.
fn pass_on(team: &Team, me: usize) {
    match team.n {
        0 | 1 => {}
        2 => {
            wait::fence(Ordering::SeqCst);
            team.wake(1 - me);
        }
        _ => {
            wait::fence(Ordering::SeqCst);
            if me > 0 {
                team.wake(team.tree_parent(me));
            }
            for c in team.tree_children(me) {
                team.wake(c);
            }
        }
    }
}

/// The cancellable barrier for member `me` at `epoch`: the new epoch (the
/// old one if it stopped) and whether the region is cancelled.
pub(crate) fn barrier(team: &Team, me: usize, epoch: u32) -> (u32, bool) {
    let stop = |last: bool| team.cancelled.observe(last) != 0;
    match team.barrier_or(me, epoch, stop) {
        Some(e) if !region_cancelled(team) => (e, false),
        passed => {
            pass_on(team, me);
            (passed.unwrap_or(epoch), true)
        }
    }
}

/// The cancellable barrier for the calling member (see [`barrier`]); true:
/// the region was cancelled.
fn barrier_in(ts: &ThreadState) -> bool {
    let Some(team) = ts.team() else { return false };
    if team.n <= 1 {
        return region_cancelled(team);
    }
    let (epoch, cancelled) = barrier(team, ts.num.get() as usize, ts.epoch.get());
    ts.epoch.set(epoch);
    task::current(ts).epoch.set(epoch);
    cancelled
}

/// After a region (every member has returned): true if it was cancelled;
/// then its barrier words are reset for the next region to start at
/// `epoch`, and the cancellation words are cleared.
pub(crate) fn end_region(team: &Team, epoch: u32) -> bool {
    if team.ws_cancel.load(Ordering::Relaxed) != 0 {
        team.ws_cancel.store(0, Ordering::Relaxed);
    }
    if !region_cancelled(team) {
        return false;
    }
    team.reset_barrier(epoch);
    team.cancelled.store(0, Ordering::Relaxed);
    true
}

fn is_worksharing(which: c_int) -> bool {
    which & (LOOP | SECTIONS) != 0
}

// ------------------------------------------------------ entry points --

#[no_mangle]
pub unsafe extern "C" fn GOMP_cancel(which: c_int, do_cancel: bool) -> bool {
    if !enabled() {
        return false;
    }
    if !do_cancel {
        // `cancel ... if(false)`: a cancellation point.
        // SAFETY: no pointers.
        return unsafe { GOMP_cancellation_point(which) };
    }
    thread::with(|ts| {
        let team = ts.team();
        if is_worksharing(which) {
            match team {
                Some(t) if ts.ws_open.get() => ws::cancel_current(t, ts),
                Some(t) if t.n > 1 => t.ws_cancel.store(ts.epoch.get().wrapping_add(1), Ordering::Relaxed),
                // Orphaned or a team of one: only the canceller leaves.
                _ => {}
            }
        } else if which & TASKGROUP != 0 {
            task::cancel_group(task::current(ts).group.get());
        } else if which & PARALLEL != 0 {
            if let Some(t) = team {
                cancel_region(t, ts.num.get() as usize);
            }
        } else {
            crate::unsupported::fatal(&format!("GOMP_cancel: unknown construct kind {which}"));
        }
        true
    })
}

#[no_mangle]
pub unsafe extern "C" fn GOMP_cancellation_point(which: c_int) -> bool {
    if !enabled() {
        return false;
    }
    thread::with(|ts| {
        let team = ts.team();
        if is_worksharing(which) {
            return match team {
                Some(t) if ts.ws_open.get() => ws::current_cancelled(t, ts),
                Some(t) if t.n > 1 => t.ws_cancel.load(Ordering::Relaxed) == ts.epoch.get().wrapping_add(1),
                _ => false,
            };
        }
        // A task sees its taskgroup's cancellation, and (as every task) its
        // region's.
        if which & TASKGROUP != 0 && task::group_cancelled(task::current(ts).group.get()) {
            return true;
        }
        match team {
            Some(t) if region_cancelled(t) => {
                pass_on(t, ts.num.get() as usize);
                true
            }
            _ => false,
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn GOMP_barrier_cancel() -> bool {
    if !enabled() {
        crate::sync::barrier();
        return false;
    }
    thread::with(barrier_in)
}

/// `GOMP_loop_end_cancel` and `GOMP_sections_end_cancel`: leave the
/// construct, then the cancellable barrier; true: the region was cancelled.
fn end_cancel() -> bool {
    ws::loop_end(!enabled());
    enabled() && thread::with(barrier_in)
}

#[no_mangle]
pub unsafe extern "C" fn GOMP_loop_end_cancel() -> bool {
    end_cancel()
}

#[no_mangle]
pub unsafe extern "C" fn GOMP_sections_end_cancel() -> bool {
    end_cancel()
}

/// loom models of the cancellable barrier (`make test-loom`): members that
/// sleep in it are woken when another member cancels, whether the others
/// are at a cancellation point or in the barrier, and the reset team passes
/// a plain barrier afterwards (a lost wake-up is a loom deadlock).
#[cfg(all(test, loom))]
mod loom_models {
    use super::*;
    use crate::loom_models::members;
    use loom::sync::Arc;

    /// A chain of three (fan-in 2: 0 ← 1 ← 2): the leaf cancels, the root
    /// and the middle member sleep in the cancellable barrier. Both leave
    /// it with the region cancelled; after the master's reset, the team
    /// passes a plain barrier.
    #[test]
    fn cancel_wakes_barrier_sleepers() {
        let mut b = loom::model::Builder::new();
        b.preemption_bound = Some(2);
        b.check(|| {
            let team = Arc::new(Team::with_fanin(3, None, 2));
            let got = members(&team, 3, |team, me| {
                if me == 2 {
                    cancel_region(team, me);
                    true
                } else {
                    barrier(team, me, 0).1
                }
            });
            assert!(got.iter().all(|&c| c), "a member left the barrier without seeing the cancellation");
            assert!(end_region(&team, 0));
            let epochs = members(&team, 3, |team, me| team.barrier(me, 0));
            assert!(epochs.iter().all(|&e| e == 1));
        });
    }

    /// Three members in a chain: the root cancels while the others are
    /// inside the cancellable barrier or arriving at it.
    #[test]
    fn root_cancels_tree() {
        let mut b = loom::model::Builder::new();
        b.preemption_bound = Some(2);
        b.check(|| {
            let team = Arc::new(Team::with_fanin(3, None, 2));
            members(&team, 3, |team, me| {
                if me == 0 {
                    cancel_region(team, me);
                } else {
                    assert!(barrier(team, me, 0).1);
                }
            });
            assert!(end_region(&team, 0));
        });
    }
}
