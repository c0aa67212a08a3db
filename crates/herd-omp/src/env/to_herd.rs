//! The OpenMP environment onto herd's settings.
//!
//! [`apply`] fills every `None` field of a [`herd::Config`] (normally from
//! [`herd::Config::from_env`]) from the OpenMP value, so a `HERD_*` variable
//! always wins over its OpenMP counterpart:
//!
//! * `num_threads` ← the first (outermost) `OMP_NUM_THREADS` value;
//! * `places` ← `OMP_PLACES`;
//! * `bind` ← the first `OMP_PROC_BIND` value: `true` → [`Bind::True`],
//!   `primary`/`master` and `close` → [`Bind::Close`] (herd has no "all on the
//!   primary's place" mode; close keeps the team nearest to it), `spread` →
//!   [`Bind::Spread`], `false` → [`Bind::False`];
//! * `wait` ← `GOMP_SPINCOUNT` if set (`0` → [`WaitPolicy::Passive`],
//!   infinite → [`WaitPolicy::Active`], `n` → [`WaitPolicy::Spin`] of `n` ×
//!   [`NANOS_PER_SPIN`] ns; libgomp too lets `GOMP_SPINCOUNT` override
//!   `OMP_WAIT_POLICY`), else `OMP_WAIT_POLICY` (`active` →
//!   [`WaitPolicy::Active`], `passive` → [`WaitPolicy::Passive`]);
//! * `display_env` ← `OMP_DISPLAY_ENV`;
//! * `stack_size` ← `OMP_STACKSIZE`, raised to [`MIN_WORKER_STACK`] (herd's
//!   pool refuses smaller worker stacks; libgomp too cannot honour tiny sizes:
//!   it warns below 16 KiB).
//!
//! The other variables are OpenMP ICVs with no herd counterpart; the runtime
//! keeps them itself (including `OMP_THREAD_LIMIT`, which caps team sizes, and
//! the inner levels of the `OMP_NUM_THREADS` and `OMP_PROC_BIND` lists).
//!

use super::*;
use herd::Bind;
use std::time::Duration;

/// Fills every unset field of `herd` (the `HERD_*` settings) from the OpenMP
/// environment; see the module documentation for the mapping. A `HERD_*`
/// value always wins.
pub fn apply(omp: &OmpEnv, mut herd: herd::Config) -> herd::Config {
    if herd.num_threads.is_none() {
        herd.num_threads = omp.num_threads.as_ref().and_then(|levels| levels.first().copied());
    }
    if herd.places.is_none() {
        herd.places = omp.places.clone();
    }
    if herd.bind.is_none() {
        herd.bind = omp.proc_bind.as_ref().and_then(|levels| levels.first()).map(|b| b.to_herd());
    }
    if herd.wait.is_none() {
        herd.wait = omp.herd_wait();
    }
    if herd.display_env.is_none() {
        herd.display_env = omp.display_env;
    }
    if herd.stack_size.is_none() {
        herd.stack_size =
            omp.stacksize.map(|bytes| usize::try_from(bytes.max(MIN_WORKER_STACK)).unwrap_or(usize::MAX));
    }
    herd
}

impl OmpEnv {
    /// The herd wait policy this environment asks for, if any (see the
    /// module documentation): `GOMP_SPINCOUNT` first, then `OMP_WAIT_POLICY`.
    pub fn herd_wait(&self) -> Option<WaitPolicy> {
        match (self.spin_count, self.wait_policy) {
            (Some(0), _) => Some(WaitPolicy::Passive),
            (Some(INFINITE_SPIN), _) => Some(WaitPolicy::Active),
            (Some(n), _) => Some(WaitPolicy::Spin(Duration::from_nanos(n.saturating_mul(NANOS_PER_SPIN)))),
            (None, Some(OmpWaitPolicy::Active)) => Some(WaitPolicy::Active),
            (None, Some(OmpWaitPolicy::Passive)) => Some(WaitPolicy::Passive),
            (None, None) => None,
        }
    }
}

impl ProcBind {
    /// The closest [`herd::Bind`].
    pub fn to_herd(self) -> Bind {
        match self {
            ProcBind::False => Bind::False,
            ProcBind::True => Bind::True,
            ProcBind::Primary | ProcBind::Close => Bind::Close,
            ProcBind::Spread => Bind::Spread,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::test_support::*;
    use herd::topology::places::AbstractPlace;

    /// `herd::Config` from `HERD_*` pairs, through herd's own parser.
    fn herd_config(vars: &[(&str, &str)]) -> herd::Config {
        herd::Config::from_lookup(env_of(vars)).expect("valid HERD_* settings")
    }

    fn full_omp() -> OmpEnv {
        parse(env_of(&[
            (NUM_THREADS, "4,2"),
            (PLACES, "cores"),
            (PROC_BIND, "spread,close"),
            (WAIT_POLICY, "active"),
            (DISPLAY_ENV, "verbose"),
            (STACKSIZE, "4M"),
        ]))
        .expect("valid")
    }

    #[test]
    fn apply_fills_unset_herd_settings() {
        let c = apply(&full_omp(), herd_config(&[]));
        assert_eq!(c.num_threads, Some(4));
        assert_eq!(c.places, Some(PlacesSpec::Abstract(AbstractPlace::Cores, None)));
        assert_eq!(c.bind, Some(Bind::Spread));
        assert_eq!(c.wait, Some(WaitPolicy::Active));
        assert_eq!(c.display_env, Some(DisplayEnv::Verbose));
        assert_eq!(c.stack_size, Some(4 << 20));
        assert!(c.dispatch.is_none() && c.reserve.is_none() && c.topology.is_none() && c.trace.is_none());
    }

    #[test]
    fn apply_herd_wins() {
        let herd = herd_config(&[
            ("HERD_NUM_THREADS", "3"),
            ("HERD_PLACES", "threads(2)"),
            ("HERD_BIND", "false"),
            ("HERD_WAIT", "spin:50"),
            ("HERD_DISPLAY_ENV", "false"),
            ("HERD_DISPATCH", "lj"),
        ]);
        let c = apply(&full_omp(), herd);
        assert_eq!(c.num_threads, Some(3));
        assert_eq!(c.places, Some(PlacesSpec::Abstract(AbstractPlace::Threads, Some(2))));
        assert_eq!(c.bind, Some(Bind::False));
        assert_eq!(c.wait, Some(WaitPolicy::Spin(Duration::from_micros(50))));
        assert_eq!(c.display_env, Some(DisplayEnv::False));
        assert_eq!(c.dispatch, Some(herd::Dispatch::Lj));
        // No HERD_* twin: a stack size set by the embedder wins.
        let c = apply(&full_omp(), herd::Config { stack_size: Some(1 << 20), ..herd::Config::default() });
        assert_eq!(c.stack_size, Some(1 << 20));
    }

    #[test]
    fn apply_raises_tiny_stacks_to_herds_minimum() {
        let c = apply(&one(STACKSIZE, "1K"), herd::Config::default());
        assert_eq!(c.stack_size, Some(64 << 10));
        let c = apply(&one(STACKSIZE, "64K"), herd::Config::default());
        assert_eq!(c.stack_size, Some(64 << 10));
        let c = apply(&one(STACKSIZE, "65B"), herd::Config::default());
        assert_eq!(c.stack_size, Some(64 << 10));
    }

    #[test]
    fn applied_settings_build_a_pool() {
        let omp = one(STACKSIZE, "1K");
        let config = apply(&omp, herd_config(&[("HERD_NUM_THREADS", "2"), ("HERD_BIND", "false")]));
        let pool = herd::PoolBuilder::from_config(config).build().expect("pool");
        assert_eq!(pool.broadcast(|ctx| ctx.index()), [0, 1]);
    }

    #[test]
    fn apply_with_nothing_set_changes_nothing() {
        let c = apply(&OmpEnv::default(), herd_config(&[("HERD_NUM_THREADS", "2")]));
        assert_eq!(c.num_threads, Some(2));
        assert!(c.places.is_none() && c.bind.is_none() && c.wait.is_none() && c.display_env.is_none());
        assert!(c.stack_size.is_none());
    }

    #[test]
    fn apply_bind_mapping() {
        for (v, bind) in [
            ("true", Bind::True),
            ("false", Bind::False),
            ("master", Bind::Close),
            ("primary", Bind::Close),
            ("close", Bind::Close),
            ("spread", Bind::Spread),
            ("close,spread", Bind::Close),
        ] {
            assert_eq!(apply(&one(PROC_BIND, v), herd::Config::default()).bind, Some(bind), "{v}");
        }
    }

    #[test]
    fn wait_mapping() {
        let w = |vars: &[(&str, &str)]| parse(env_of(vars)).expect("valid").herd_wait();
        assert_eq!(w(&[]), None);
        assert_eq!(w(&[(WAIT_POLICY, "active")]), Some(WaitPolicy::Active));
        assert_eq!(w(&[(WAIT_POLICY, "passive")]), Some(WaitPolicy::Passive));
        assert_eq!(w(&[(SPINCOUNT, "0")]), Some(WaitPolicy::Passive));
        assert_eq!(w(&[(SPINCOUNT, "infinite")]), Some(WaitPolicy::Active));
        assert_eq!(w(&[(SPINCOUNT, "300k")]), Some(WaitPolicy::Spin(Duration::from_micros(300))));
        // GOMP_SPINCOUNT overrides OMP_WAIT_POLICY, as in libgomp.
        assert_eq!(
            w(&[(WAIT_POLICY, "active"), (SPINCOUNT, "1000")]),
            Some(WaitPolicy::Spin(Duration::from_micros(1)))
        );
        assert_eq!(w(&[(WAIT_POLICY, "active"), (SPINCOUNT, "0")]), Some(WaitPolicy::Passive));
    }
}
