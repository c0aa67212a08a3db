//! # herd-flow — Concurrent Collections on herd
//!
//! The CnC model (cnc-dense-linear-algebra.txt): a program is a graph of
//! * **item collections** ([`Items`]): single-assignment maps from keys to values — a
//!   second put of a key is [`FlowError::DoublePut`]; a get shares the value (`Arc`);
//!   optional get-counts free an item after its last declared get;
//! * **tag collections** ([`Tags`]): putting a tag prescribes one step of every step
//!   collection attached with [`Tags::prescribes`]; optional memoization of duplicates;
//! * **step collections** ([`Steps`]): sequential functions `(tag, ctx) -> Result<(), StepError>`
//!   that get and put items and put tags through their [`Ctx`];
//! * **tuners** ([`Tuner`]): `depends` (declare the items a step will get), `priority`,
//!   `preschedule`, `compute_on` (and [`Items::with_consumed_on`] / [`Items::with_consumers`])
//!   — the last two are only counted on one node; a multi-node layer (herd-mpi's distributed
//!   graph) routes tags with [`Steps::route`], forwards items with [`Items::on_put`], brings
//!   received ones in with an [`Injector`] ([`Graph::set_poll`], [`Graph::inject`]) and
//!   detects quiescence across nodes around [`Graph::run`] and [`Graph::blocked`].
//!
//! Steps run as herd jobs on the current pool; [`Graph::wait`] returns when no step is running
//! or enabled, with [`Stats`], the first step error or panic, or
//! [`FlowError::Unsatisfied`] naming every step that can never run and the items it lacks.
//! Three [`Discipline`]s: requeue on a missing item, dependency-counted from `depends`
//! (default), and tags put on the fly by the steps producing the data.
//! With [`Graph::record_timeline`] each step execution is recorded ([`timeline`]).
//!
//! ```
//! use herd_flow::{Graph, StepError};
//!
//! // fib(n) = fib(n-1) + fib(n-2) with one step per n.
//! let g = Graph::new("fib");
//! let fib = g.items::<u64, u64>("fib");
//! let tags = g.tags::<u64>("n");
//! let f2 = fib.clone();
//! let step = g.steps("fib_step", move |&n: &u64, ctx| -> Result<(), StepError> {
//!     let v = if n < 2 { n } else { *ctx.get(&f2, &(n - 1))? + *ctx.get(&f2, &(n - 2))? };
//!     ctx.put(&f2, n, v)?;
//!     Ok(())
//! });
//! tags.prescribes(&step);
//! for n in 0..=20 {
//!     tags.put(n);
//! }
//! let stats = g.wait().unwrap();
//! assert_eq!(*fib.get(&20).unwrap(), 6765);
//! assert_eq!(stats.executed, 21);
//! ```

#![warn(missing_docs)]

mod error;
mod graph;
mod items;
#[cfg(all(test, loom))]
mod models;
mod ready;
mod step;
mod sync;
mod tags;
pub mod timeline;
mod tuner;

pub use error::{Blocked, FlowError, Missing, StepError};
pub use graph::{Discipline, Graph, GraphBuilder, Injector, Stats};
pub use items::Items;
pub use step::{Ctx, Steps};
pub use tags::Tags;
pub use tuner::{DefaultTuner, Deps, Tuner};
