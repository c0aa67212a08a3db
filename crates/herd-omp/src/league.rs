//! Host teams (OpenMP 5.0 `teams` outside `target`): gcc outlines the
//! construct's body and calls `GOMP_teams_reg(fn, data, num_teams,
//! thread_limit, flags)` once; every team's *initial thread* runs `fn(data)`
//! and the call returns when all have finished.
//!
//! **League.** libgomp runs the teams one after another on the encountering
//! thread. herd runs them as a *league*: one region of `W = min(num_teams,
//! usable PUs)` participants of a herd pool (the root pool from outside every
//! region, else a pool lent to the encountering thread, as for a nested
//! region), the encountering thread being participant 0. Participant `i`
//! runs the `i`-th of `W` consecutive blocks of the team numbers (sizes
//! differing by at most one, the larger first, as `spread` divides `T > P`
//! threads among places), each team's initial task to completion before the next. The
//! assignment is static so that a team runs in the
//! same place in every `teams` construct of the same width: data a team
//! first touched stays near it the next time (the reason host teams exist
//! on a multi-socket node), and with `num_teams ≤ W` every team has a
//! subpartition of its own, as libomp places them. (A shared counter that
//! participants took teams from balanced uneven teams, but let a
//! participant that finished early take its neighbour's team, on its own
//! place: libomp's testsuite `affinity/teams-affinity.c` caught two teams
//! in one subpartition.) Teams cannot synchronise with each other (the
//! specification has no construct for it), so running some of them one
//! after another on one participant is allowed.
//!
//! **A team's initial thread** runs with a fresh initial task (the
//! encountering task's ICVs, `thread-limit-var` set from the clause or
//! `teams-thread-limit-var`), outside every parallel region: `omp_get_level()`
//! is 0 and `omp_in_parallel()` false in it. Its [`Seat`] (team number, team
//! count, league width, and its contention group's count of busy threads)
//! lives on the participant's stack while the team runs; the thread state
//! points to it and every region nested in the team carries the pointer to
//! its members (`Team::league`), so `omp_get_team_num()` is right inside
//! `parallel` regions too (as libgomp reports it), and `OMP_THREAD_LIMIT`
//! accounting (`parallel::Busy`) is per team: each team is its own
//! contention group.
//!
//! With `OMP_PROC_BIND` / `OMP_PLACES`, the participants are placed as a
//! `spread` team (`placement`): each team's parallel regions run inside its
//! participant's subpartition.
//!
//! `distribute` and `loop bind(teams)` need nothing more: gcc compiles them
//! to `omp_get_team_num()` / `omp_get_num_teams()` and static arithmetic.
//! `GOMP_teams4` is gcc's entry point for `teams` inside `target` regions,
//! which herd refuses with the rest of offloading (`abi.rs`).

use crate::parallel::RegionFn;
use crate::task::Task;
use crate::thread::{self, ThreadState};
use crate::{placement, runtime, task, teams};
use std::ffi::{c_int, c_uint, c_void};
use std::sync::atomic::AtomicU32;

/// libgomp's number of teams when neither the clause nor `nteams-var` gives
/// one.
const DEFAULT_TEAMS: u32 = 3;

/// `omp_proc_bind_spread`: how the league's participants are placed when
/// threads are bound (each team's regions then stay in its subpartition).
const SPREAD: u32 = 4;

/// One team of a running league, as its initial thread and the threads of
/// its nested regions see it.
pub(crate) struct Seat {
    team_num: u32,
    num_teams: u32,
    /// Participants of the league (threads running teams at once).
    width: u32,
    /// Threads of this team's contention group working beyond its initial
    /// thread (see `parallel::Busy`).
    pub(crate) busy: AtomicU32,
}

/// What every participant of a league needs; shared during the league.
struct League {
    f: RegionFn,
    data: *mut c_void,
    num_teams: u32,
    width: u32,
    /// The ICVs of each team's initial task.
    icv: crate::icv::Icv,
    /// Where the participants run when threads are bound: spread over the
    /// encountering thread's partition (`None`: unbound).
    layout: Option<placement::Layout>,
}

/// The seat of the team the calling thread works for, if any.
pub(crate) fn seat(ts: &ThreadState) -> Option<&Seat> {
    // SAFETY: a seat outlives its team's initial task and every region
    // nested in it (the participant returns from `run_team` only after the
    // team's body returned); the pointer is reset when the team ends.
    unsafe { ts.league.get().as_ref() }
}

/// Participants of the league the calling thread works in (1 outside any).
pub(crate) fn width(ts: &ThreadState) -> usize {
    seat(ts).map_or(1, |s| s.width as usize)
}

/// `GOMP_teams_reg`: runs `fn(data)` once per team of a host `teams`
/// construct (`num_teams` 0: `nteams-var`, else 3 as libgomp; `thread_limit`
/// 0: `teams-thread-limit-var`, else unchanged). `flags` is reserved.
///
/// # Safety
/// `f` and `data` are gcc's outlined body and its argument block.
#[no_mangle]
pub unsafe extern "C" fn GOMP_teams_reg(
    f: RegionFn,
    data: *mut c_void,
    num_teams: c_uint,
    thread_limit: c_uint,
    _flags: c_uint,
) {
    let num_teams = match num_teams {
        0 => match teams::omp_get_max_teams() {
            n if n > 0 => n as u32,
            _ => DEFAULT_TEAMS,
        },
        n => n,
    };
    let thread_limit = match thread_limit {
        0 => teams::omp_get_teams_thread_limit().max(0) as u32,
        n => n,
    };
    thread::with(|ts| {
        let mut icv = task::current(ts).icv.get();
        if thread_limit > 0 {
            // libgomp's rule: beyond INT_MAX is unlimited.
            icv.thread_limit = if thread_limit > i32::MAX as u32 { u32::MAX } else { thread_limit };
        }
        let width = (num_teams as usize).min(runtime::runtime().pus()).max(1);
        let layout = placement::layout(SPREAD, icv.bind, ts.partition.get());
        let mut league = League { f, data, num_teams, width: 1, icv, layout };
        if width > 1 && lead(&mut league, width) {
            return;
        }
        league.width = 1;
        run_teams(ts, &league, 0);
    })
}

/// Runs the league on `width` participants of a pool; false when no pool
/// could be had (the caller runs the teams itself).
fn lead(league: &mut League, width: usize) -> bool {
    fn broadcast(pool: &herd::Pool, league: &League) {
        // SAFETY: `share` only reads the league (which outlives the call)
        // and its atomic counter; each team's state is the participant's.
        unsafe {
            herd::rt::broadcast_raw(
                pool,
                league.width as usize,
                share,
                league as *const League as *const (),
                &|_| true,
            )
        }
    }
    if herd::current_thread_index().is_none() {
        let root = runtime::root(width);
        let w = width.min(root.pool.num_threads());
        if w > 1 {
            league.width = w as u32;
            let league: &League = league;
            if herd::rt::try_enter(&root.pool, || broadcast(&root.pool, league)).is_ok() {
                return true;
            }
        }
    }
    match runtime::nested_root(width, runtime::nested_passive(width)) {
        Some(pool) => {
            league.width = width as u32;
            let league: &League = league;
            herd::rt::enter(&pool.pool, || broadcast(&pool.pool, league));
            true
        }
        None => false,
    }
}

/// A participant's share of the league: `data` is the league.
///
/// # Safety
/// `data` points to a league that outlives the call.
unsafe fn share(data: *const (), ctx: herd::BroadcastContext) {
    // SAFETY: the caller's contract.
    let league = unsafe { &*(data as *const League) };
    thread::with(|ts| run_teams(ts, league, ctx.index()))
}

/// Runs the teams of `league` that are participant `i`'s (the `i`-th of
/// `W` consecutive blocks) on the calling thread.
fn run_teams(ts: &ThreadState, league: &League, i: usize) {
    let saved = ts.save();
    if let Some(l) = &league.layout {
        ts.partition.set(placement::enter_member(l, league.width as usize, i));
    }
    let (teams, width) = (u64::from(league.num_teams), u64::from(league.width));
    let block = |i: u64| (i * teams).div_ceil(width) as u32;
    for k in block(i as u64)..block(i as u64 + 1) {
        let seat =
            Seat { team_num: k, num_teams: league.num_teams, width: league.width, busy: AtomicU32::new(0) };
        let initial = Task::implicit_blank();
        initial.icv.set(league.icv);
        ts.team.set(std::ptr::null());
        ts.num.set(0);
        ts.task.set(&initial);
        ts.league.set(&seat);
        // SAFETY: gcc's outlined body with its argument block.
        unsafe { (league.f)(league.data) };
        // Outside every region its tasks were included: none is left.
        initial.wait_children();
    }
    ts.restore(saved);
}

#[no_mangle]
pub extern "C" fn omp_get_num_teams() -> c_int {
    thread::with(|ts| seat(ts).map_or(1, |s| s.num_teams as c_int))
}

#[no_mangle]
pub extern "C" fn omp_get_team_num() -> c_int {
    thread::with(|ts| seat(ts).map_or(0, |s| s.team_num as c_int))
}
