//! Empty-step overhead: `cargo run --release -p herd-flow --example overhead [steps] [workers]`.
//!
//! One step collection whose steps do nothing, prescribed by `steps` tags put
//! up front, run on a pool of `workers`; prints the time per step (median of
//! 5 graphs), with and without a `depends` tuner (one declared item each).

use herd_flow::{Deps, Graph, Items, Tuner};
use std::time::Instant;

struct OneItem(Items<u64, ()>);
impl Tuner<u64> for OneItem {
    fn depends(&self, &t: &u64, deps: &mut Deps) {
        deps.item(&self.0, t);
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(200_000);
    let workers: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(2);
    let pool = herd::Pool::builder().num_threads(workers).build().expect("pool");
    for tuned in [false, true] {
        let mut per_step: Vec<f64> = (0..5)
            .map(|_| {
                let g = Graph::new("empty");
                let items = g.items::<u64, ()>("x");
                let tags = g.tags::<u64>("t");
                let steps = if tuned {
                    let it = items.clone();
                    g.steps_tuned("empty", OneItem(items.clone()), move |t: &u64, ctx| {
                        ctx.get(&it, t)?;
                        Ok(())
                    })
                } else {
                    g.steps("empty", |_: &u64, _| Ok(()))
                };
                tags.prescribes(&steps);
                if tuned {
                    for t in 0..n {
                        items.put(t, ()).unwrap();
                    }
                }
                for t in 0..n {
                    tags.put(t);
                }
                let start = Instant::now();
                let stats = pool.install(|| g.wait()).unwrap();
                assert_eq!(stats.executed, n);
                start.elapsed().as_nanos() as f64 / n as f64
            })
            .collect();
        per_step.sort_by(f64::total_cmp);
        let what = if tuned { "with a depends tuner (one item)" } else { "no tuner" };
        println!("{workers} worker(s), {n} empty steps, {what}: {:.0} ns per step", per_step[2]);
    }
}
