//! Internal control variables (OpenMP 4.5 §2.3): the per-task data
//! environment ([`Icv`], copied into every task) and the process-wide ones
//! ([`Global`], read once from the environment).

/// `omp_sched_t` kinds: the `OMP_SCHEDULE` kinds, one definition.
pub(crate) use crate::env::ScheduleKind as SchedKind;

/// The `omp_sched_monotonic` modifier bit of `omp_sched_t` and of gcc's
/// `GOMP_loop_start` schedule argument.
pub(crate) const MONOTONIC: u32 = 0x8000_0000;

/// A run-time schedule (`run-sched-var`, `def-sched-var`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Sched {
    pub kind: SchedKind,
    /// 0: the kind's default chunk.
    pub chunk: i64,
    pub monotonic: bool,
}

/// `proc_bind` values (`omp_proc_bind_t`): the `OMP_PROC_BIND` values, one definition.
pub(crate) use crate::env::ProcBind;

/// The ICVs of one task's data environment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Icv {
    /// `nthreads-var` (for regions this task encounters).
    pub nthreads: u32,
    /// `dyn-var`.
    pub dynamic: bool,
    /// `run-sched-var`.
    pub run_sched: Sched,
    /// `bind-var` (for regions this task encounters).
    pub bind: ProcBind,
    /// `max-active-levels-var`.
    pub max_active_levels: u32,
    /// `thread-limit-var`.
    pub thread_limit: u32,
    /// `default-device-var`.
    pub default_device: i32,
    /// `def-allocator-var` (an `omp_allocator_handle_t`; see `allocator`).
    pub def_allocator: usize,
}

/// Process-wide settings, read once.
#[derive(Clone, Debug)]
pub(crate) struct Global {
    /// The initial task's ICVs.
    pub initial: Icv,
    /// `OMP_NUM_THREADS` per nesting level (entry `i` applies to the tasks of
    /// level `i`; the last one holds beyond).
    pub nthreads_list: Vec<u32>,
    /// `OMP_PROC_BIND` per nesting level.
    pub bind_list: Vec<ProcBind>,
    /// `cancel-var`.
    pub cancellation: bool,
    /// `max-task-priority-var`.
    pub max_task_priority: i32,
}

/// The most levels of active parallelism herd supports.
pub(crate) const SUPPORTED_ACTIVE_LEVELS: u32 = 255;

impl Global {
    /// `nthreads-var` of an implicit task at nesting `level` (≥ 1), given its
    /// parent's value.
    pub(crate) fn nthreads_at(&self, level: u32, inherited: u32) -> u32 {
        self.nthreads_list.get(level as usize).copied().unwrap_or(inherited)
    }

    /// `bind-var` of an implicit task at nesting `level`.
    pub(crate) fn bind_at(&self, level: u32, inherited: ProcBind) -> ProcBind {
        self.bind_list.get(level as usize).copied().unwrap_or(inherited)
    }
}
