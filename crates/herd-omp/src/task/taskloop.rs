//! `taskloop`: the iteration space cut into tasks (`grainsize`,
//! `num_tasks`, `strict`), inside an implicit taskgroup unless `nogroup`,
//! where a `reduction` clause is registered (see `reduction`).

use super::group::{taskgroup_end, taskgroup_start};
use super::reduction;
use super::{
    spawn, CopyFn, Spawn, TaskFn, FLAG_FINAL, FLAG_GRAINSIZE, FLAG_IF, FLAG_NOGROUP, FLAG_REDUCTION,
    FLAG_STRICT, FLAG_UNTIED,
};
use crate::thread;
use std::ffi::c_void;

/// `GOMP_taskloop` / `GOMP_taskloop_ull` after normalisation: `count`
/// iterations whose `[a, b)` index ranges map to original bounds by `bounds`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn taskloop(
    func: TaskFn,
    data: *mut c_void,
    cpyfn: Option<CopyFn>,
    arg_size: usize,
    arg_align: usize,
    flags: u32,
    num_tasks: u64,
    count: u64,
    bounds: impl Fn(u64, u64) -> (u64, u64),
) {
    // `reduction` on the taskloop: registered in its taskgroup (with
    // `nogroup` the tasks' `in_reduction` refers to an enclosing one).
    let reduce = flags & (FLAG_REDUCTION | FLAG_NOGROUP) == FLAG_REDUCTION;
    if count == 0 {
        if reduce {
            // SAFETY: gcc's taskloop argument block carries the descriptor.
            unsafe { reduction::taskloop_register(data, false) };
        }
        return;
    }
    let nthreads = thread::with(|ts| ts.team().map_or(1, |t| t.n)) as u64;
    let ntasks = if flags & FLAG_GRAINSIZE != 0 {
        let g = num_tasks.max(1);
        if flags & FLAG_STRICT != 0 {
            count.div_ceil(g)
        } else {
            (count / g).max(1)
        }
    } else if num_tasks > 0 {
        num_tasks.min(count)
    } else {
        nthreads.min(count)
    };
    let strict_grain =
        (flags & (FLAG_GRAINSIZE | FLAG_STRICT) == FLAG_GRAINSIZE | FLAG_STRICT).then_some(num_tasks.max(1));
    let group = flags & FLAG_NOGROUP == 0;
    if group {
        taskgroup_start();
        if reduce {
            // SAFETY: as above.
            unsafe { reduction::taskloop_register(data, true) };
        }
    }
    let (q, r) = (count / ntasks, count % ntasks);
    let mut a = 0u64;
    for i in 0..ntasks {
        let len = match strict_grain {
            Some(g) => g.min(count - a),
            None => q + u64::from(i < r),
        };
        let b = a + len;
        spawn(Spawn {
            func,
            data,
            cpyfn,
            arg_size,
            arg_align,
            if_clause: flags & FLAG_IF != 0,
            flags: flags & (FLAG_FINAL | FLAG_UNTIED),
            depend: std::ptr::null_mut(),
            patch: Some(bounds(a, b)),
            detach: std::ptr::null_mut(),
        });
        a = b;
    }
    if group {
        taskgroup_end();
    }
}
