//! The host device's teams ICVs (OpenMP 5.1 §2.4.1): `nteams-var`, the
//! number of teams a `teams` construct without `num_teams` asks for, and
//! `teams-thread-limit-var`, the threads of each of its teams. Both are
//! device-wide, not per task: set inside a parallel region they hold for the
//! whole program afterwards (as in libgomp). 0 means "not set", as libgomp
//! reports it; `OMP_NUM_TEAMS` / `OMP_TEAMS_THREAD_LIMIT` give the initial
//! values, and the setters take any non-negative value (libgomp's rule: a
//! negative one is ignored).
//!
//! The `teams` construct itself, which reads them, is in `league.rs`.

use std::ffi::c_int;
use std::sync::atomic::{AtomicI32, Ordering};

/// Not yet read from the environment.
const UNREAD: i32 = i32::MIN;

static NTEAMS: AtomicI32 = AtomicI32::new(UNREAD);
static TEAMS_THREAD_LIMIT: AtomicI32 = AtomicI32::new(UNREAD);

/// The value of `icv`, read from the environment (`initial`) on first use.
fn get(icv: &AtomicI32, initial: fn(&crate::env::OmpEnv) -> Option<usize>) -> i32 {
    let v = icv.load(Ordering::Relaxed);
    if v != UNREAD {
        return v;
    }
    let from_env = initial(&crate::runtime::runtime().omp).map_or(0, |n| n.min(i32::MAX as usize) as i32);
    // A setter may have run meanwhile: its value wins.
    match icv.compare_exchange(UNREAD, from_env, Ordering::Relaxed, Ordering::Relaxed) {
        Ok(_) => from_env,
        Err(set) => set,
    }
}

fn set(icv: &AtomicI32, n: c_int) {
    if n >= 0 {
        icv.store(n, Ordering::Relaxed);
    }
}

#[no_mangle]
pub extern "C" fn omp_get_max_teams() -> c_int {
    get(&NTEAMS, |e| e.num_teams)
}

#[no_mangle]
pub extern "C" fn omp_set_num_teams(n: c_int) {
    set(&NTEAMS, n)
}

#[no_mangle]
pub extern "C" fn omp_get_teams_thread_limit() -> c_int {
    get(&TEAMS_THREAD_LIMIT, |e| e.teams_thread_limit)
}

#[no_mangle]
pub extern "C" fn omp_set_teams_thread_limit(n: c_int) {
    set(&TEAMS_THREAD_LIMIT, n)
}
