//! [`PoolBuilder`]: the same settings as the `HERD_*` variables.

use super::limits;
use super::registry::Registry;
use super::{Pool, PoolInfo};
use crate::config::{Bind, Config, Dispatch, DisplayEnv, Sched, ShepherdLevel, Throttle, WaitPolicy};
use crate::placement::{plan, PlacementRequest};
use crate::shepherds::Shepherds;
use crate::topology::{PlacesSpec, Topology};
use crate::{trace, Error, Result};
use std::path::PathBuf;
use std::sync::Arc;

/// The smallest worker stack accepted (64 KiB).
const MIN_STACK: usize = 64 << 10;

/// Builds a [`Pool`]. Every setting has an environment-variable twin; see
/// [`Config`].
#[derive(Clone, Debug, Default)]
pub struct PoolBuilder {
    config: Config,
    places: Option<String>,
    topology: Option<Topology>,
    keep_master_binding: bool,
    monitor: Option<crate::throttle::MonitorSettings>,
    /// Test-only fault injection: see [`PoolBuilder::fail_spawn_after`].
    fail_spawn_after: Option<usize>,
}

impl PoolBuilder {
    /// herd's defaults: one participant per usable PU, master-last persistent
    /// workers, bound, spin then sleep.
    pub fn new() -> PoolBuilder {
        PoolBuilder::default()
    }

    /// Starts from the `HERD_*` environment; later calls override it.
    pub fn from_env() -> Result<PoolBuilder> {
        for name in
            crate::config::unknown_herd_vars(std::env::vars_os().filter_map(|(k, _)| k.into_string().ok()))
        {
            match crate::config::suggest(&name) {
                Some(known) => {
                    eprintln!("herd: warning: unknown variable {name} ignored (did you mean {known}?)")
                }
                None => eprintln!("herd: warning: unknown variable {name} ignored"),
            }
        }
        Ok(PoolBuilder::from_config(Config::from_env()?))
    }

    /// Starts from an explicit configuration.
    pub fn from_config(config: Config) -> PoolBuilder {
        PoolBuilder {
            config,
            places: None,
            topology: None,
            keep_master_binding: false,
            monitor: None,
            fail_spawn_after: None,
        }
    }

    /// The configuration so far.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Participants per region, master included (`HERD_NUM_THREADS`).
    pub fn num_threads(mut self, n: usize) -> Self {
        self.config.num_threads = Some(n);
        self
    }

    /// Place list in OpenMP syntax (`HERD_PLACES`), checked by [`build`](Self::build).
    pub fn places(mut self, spec: impl Into<String>) -> Self {
        self.places = Some(spec.into());
        self
    }

    /// Binding policy (`HERD_BIND`).
    pub fn bind(mut self, bind: Bind) -> Self {
        self.config.bind = Some(bind);
        self
    }

    /// Dispatch strategy (`HERD_DISPATCH`).
    pub fn dispatch(mut self, dispatch: Dispatch) -> Self {
        self.config.dispatch = Some(dispatch);
        self
    }

    /// Wait policy (`HERD_WAIT`).
    pub fn wait(mut self, wait: WaitPolicy) -> Self {
        self.config.wait = Some(wait);
        self
    }

    /// Cores left idle for the OS (`HERD_RESERVE`).
    pub fn reserve(mut self, cores: usize) -> Self {
        self.config.reserve = Some(cores);
        self
    }

    /// Print the resolved configuration on stderr when built (`HERD_DISPLAY_ENV`).
    pub fn display_env(mut self, display: DisplayEnv) -> Self {
        self.config.display_env = Some(display);
        self
    }

    /// Lay the pool out on this topology (e.g. a synthetic one) instead of
    /// the machine's (`HERD_TOPOLOGY`).
    pub fn topology(mut self, topology: Topology) -> Self {
        self.topology = Some(topology);
        self
    }

    /// Stack size of each persistent worker, in bytes.
    pub fn stack_size(mut self, bytes: usize) -> Self {
        self.config.stack_size = Some(bytes);
        self
    }

    /// Leave the binding of a thread that enters the pool as its master
    /// alone (by default it is bound to the master's place, or released to
    /// every PU when the pool is unbound). For pools whose master is a
    /// worker of another pool (nested teams), whose binding must stay.
    pub fn keep_master_binding(mut self) -> Self {
        self.keep_master_binding = true;
        self
    }

    /// Task scheduler (`HERD_SCHED`).
    pub fn scheduler(mut self, sched: Sched) -> Self {
        self.config.sched = Some(sched);
        self
    }

    /// Topology level of one shepherd (`HERD_SHEPHERD`).
    pub fn shepherd_level(mut self, level: ShepherdLevel) -> Self {
        self.config.shepherd = Some(level);
        self
    }

    /// Most workers per shepherd (`HERD_WORKERS_PER_SHEPHERD`).
    pub fn workers_per_shepherd(mut self, n: usize) -> Self {
        self.config.workers_per_shepherd = Some(n);
        self
    }

    /// Jobs taken by one remote steal under `mts` (`HERD_STEAL_CHUNK`).
    pub fn steal_chunk(mut self, n: usize) -> Self {
        self.config.steal_chunk = Some(n);
        self
    }

    /// Active-worker throttling (`HERD_THROTTLE`).
    pub fn throttle(mut self, throttle: Throttle) -> Self {
        self.config.throttle = Some(throttle);
        self
    }

    /// Tuning of the contention monitor of [`Throttle::Auto`] (epoch,
    /// hill-climb, blackboard); the defaults of
    /// [`MonitorSettings`](crate::throttle::MonitorSettings) otherwise.
    pub fn monitor_settings(mut self, settings: crate::throttle::MonitorSettings) -> Self {
        self.monitor = Some(settings);
        self
    }

    /// Record a Chrome trace-event file (`HERD_TRACE`).
    pub fn trace(mut self, path: impl Into<PathBuf>) -> Self {
        self.config.trace = Some(path.into());
        self
    }

    /// For tests of the failure path of [`build`](Self::build): starting the
    /// persistent thread of index `k` (0-based; `k` threads are started
    /// first) fails as if the OS had refused it. Only persistent dispatches
    /// start threads in `build`.
    #[doc(hidden)]
    pub fn fail_spawn_after(mut self, k: usize) -> Self {
        self.fail_spawn_after = Some(k);
        self
    }

    /// Builds the pool: reads the topology, plans the placement, starts the
    /// persistent workers.
    ///
    /// # Errors
    /// Besides invalid settings: [`Error::Limit`] when the pool's threads
    /// would exceed a limit of the process or the system (checked before
    /// any thread is started), and [`Error::WorkerSpawn`] when the OS still
    /// refuses one — the threads already started are then stopped and
    /// joined; nothing of the pool is left.
    pub fn build(self) -> Result<Pool> {
        let PoolBuilder { mut config, places, topology, keep_master_binding, monitor, fail_spawn_after } =
            self;
        if let Some(settings) = &monitor {
            if settings.epoch.is_zero() {
                return Err(Error::invalid("monitor epoch", "0", "a positive duration"));
            }
            for (name, v) in [
                ("monitor busy_threshold", settings.busy_threshold),
                ("monitor external_threshold", settings.external_threshold),
                ("monitor alpha", settings.climb.alpha),
            ] {
                if !(0.0..=1.0).contains(&v) {
                    return Err(Error::invalid(name, &v.to_string(), "a fraction between 0 and 1"));
                }
            }
        }
        if let Some(spec) = places {
            config.places = Some(PlacesSpec::parse("places", &spec)?);
        }
        if config.num_threads == Some(0) {
            return Err(Error::invalid("num_threads", "0", "a positive integer"));
        }
        for (name, v) in [
            ("workers_per_shepherd", config.workers_per_shepherd),
            ("steal_chunk", config.steal_chunk),
            (
                "throttle",
                match config.throttle {
                    Some(Throttle::Fixed(n)) => Some(n),
                    _ => None,
                },
            ),
        ] {
            if v == Some(0) {
                return Err(Error::invalid(name, "0", "a positive integer"));
            }
        }
        if let Some(s) = config.stack_size {
            if s < MIN_STACK {
                return Err(Error::invalid(
                    "stack_size",
                    &s.to_string(),
                    format!("a size of at least {MIN_STACK} bytes"),
                ));
            }
        }
        let topology = match (topology, &config.topology) {
            (Some(t), _) => t,
            (None, Some(desc)) => Topology::synthetic(desc).map_err(|e| {
                Error::invalid(
                    "HERD_TOPOLOGY",
                    desc,
                    format!("an hwloc synthetic description such as \"pack:2 l3:1 core:4 pu:2\" ({e})"),
                )
            })?,
            (None, None) => Topology::detect()?,
        };
        let dispatch = config.dispatch.unwrap_or_default();
        let throttle = config.throttle.unwrap_or_default();
        // Threads the pool runs besides the master: persistent workers (and
        // the proxy of non-master-last dispatch), or as many fresh threads
        // per launch-and-join region; and the contention monitor.
        let threads =
            |n: usize| n - usize::from(dispatch.master_last()) + usize::from(throttle == Throttle::Auto);
        // Before planning: a huge request must not get as far as allocating
        // per-participant state.
        if let Some(n) = config.num_threads {
            limits::check(&limits::Request::new(n, threads(n), config.stack_size))?;
        }
        let placement = plan(
            &topology,
            &PlacementRequest {
                num_threads: config.num_threads,
                places: config.places.as_ref(),
                bind: config.bind.unwrap_or_default(),
                dispatch,
                reserve: config.reserve.unwrap_or(0),
            },
        )?;
        if config.num_threads.is_none() {
            let n = placement.num_threads;
            limits::check(&limits::Request::new(n, threads(n), config.stack_size))?;
        }
        if let Some(path) = &config.trace {
            trace::start(path.clone());
        }
        let shepherds = Shepherds::plan(&topology, &placement, config.shepherd, config.workers_per_shepherd);
        let mut registry = Registry::new(
            topology,
            placement,
            dispatch,
            config.wait.unwrap_or_default(),
            config.sched.unwrap_or_default(),
            shepherds,
            config.steal_chunk,
        );
        registry.keep_master_binding = keep_master_binding;
        registry.report_stats = config.display_env == Some(DisplayEnv::Verbose);
        if let Throttle::Fixed(n) = throttle {
            for h in 0..registry.shepherds.len() {
                registry.set_active_limit(h, n);
            }
        }
        // Inherited hardware counters must be opened before the workers exist.
        let counters = (throttle == Throttle::Auto).then(crate::throttle::perf::ProcessCounters::open);
        let registry = Arc::new(registry);
        if registry.report_stats || config.trace.is_some() {
            super::report::watch(&registry);
        }
        if dispatch.persistent() {
            let n = registry.num_threads();
            let mut slots: Vec<Option<usize>> = (1..n).map(Some).collect();
            if !dispatch.master_last() {
                slots.push(None);
            }
            let total = slots.len();
            for (started, slot) in slots.into_iter().enumerate() {
                let reg = registry.clone();
                let name = match slot {
                    Some(i) => format!("herd-worker-{i}"),
                    None => "herd-proxy-0".to_string(),
                };
                let mut builder = std::thread::Builder::new().name(name);
                if let Some(bytes) = config.stack_size {
                    builder = builder.stack_size(bytes);
                }
                let spawned = if fail_spawn_after == Some(started) {
                    Err(std::io::Error::other("refused by PoolBuilder::fail_spawn_after"))
                } else {
                    builder.spawn(move || reg.worker_main(slot))
                };
                match spawned {
                    Ok(handle) => registry.threads.lock().unwrap_or_else(|e| e.into_inner()).push(handle),
                    Err(source) => {
                        // The pool's own shutdown: every started worker is
                        // told to leave and joined (a worker still starting
                        // finds the message when it first looks).
                        registry.shut_down();
                        let hint = if fail_spawn_after == Some(started) {
                            "a failure injected for a test".to_string()
                        } else {
                            limits::spawn_hint(&source)
                        };
                        return Err(Error::WorkerSpawn { started, total, source, hint });
                    }
                }
            }
        }
        let mut pool = Pool { registry: registry.clone(), monitor: None };
        if let Some(counters) = counters {
            let settings = monitor.unwrap_or_default();
            pool.monitor = Some(Box::new(crate::throttle::Monitor::start(&registry, settings, counters)?));
        }
        let display = config.display_env.unwrap_or_default();
        if display != DisplayEnv::False {
            let verbose = display == DisplayEnv::Verbose;
            let mut text = PoolInfo::of(&registry).render(verbose);
            match (throttle, &pool.monitor) {
                (Throttle::Fixed(n), _) => {
                    text.push_str(&format!("herd: throttle: at most {n} active per shepherd\n"))
                }
                (_, Some(m)) => text.push_str(&m.describe(verbose)),
                _ => {}
            }
            eprint!("{text}");
        }
        Ok(pool)
    }

    /// Builds the pool and makes it the global one. Fails if the global pool
    /// already exists.
    pub fn build_global(self) -> Result<()> {
        let pool = self.clone().build()?;
        super::set_global(self, pool)
            .map_err(|_| Error::Placement("the global pool was already initialised, or is provided by a host runtime (herd::provide_global)".into()))
    }
}
