//! fib(n) as a CnC graph under each discipline: `cargo run -p herd-flow --example flow_fib [n] [timeline.json]`.

use herd_flow::{Deps, Discipline, Graph, Items, StepError, Tuner};

struct FibTuner(Items<u64, u64>);

impl Tuner<u64> for FibTuner {
    fn depends(&self, &n: &u64, deps: &mut Deps) {
        if n >= 2 {
            deps.item(&self.0, n - 1);
            deps.item(&self.0, n - 2);
        }
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let n: u64 = args.next().map_or(Ok(40), |a| a.parse())?;
    let timeline = args.next();
    for d in [Discipline::Requeue, Discipline::DependencyCounted, Discipline::OnTheFly] {
        let on_the_fly = d == Discipline::OnTheFly;
        let g = Graph::builder().name("fib").discipline(d).timeline(timeline.is_some()).build();
        let fib = g.items::<u64, u64>("fib");
        let tags = g.tags::<u64>("n");
        let (f2, t2) = (fib.clone(), tags.clone());
        let step =
            g.steps_tuned("fib", FibTuner(fib.clone()), move |&k: &u64, ctx| -> Result<(), StepError> {
                let v =
                    if k < 2 { k } else { ctx.get(&f2, &(k - 1))?.wrapping_add(*ctx.get(&f2, &(k - 2))?) };
                ctx.put(&f2, k, v)?;
                if on_the_fly && k >= 1 && k < n {
                    ctx.put_tag(&t2, k + 1);
                }
                Ok(())
            });
        tags.prescribes(&step);
        if on_the_fly {
            tags.put(0);
            tags.put(1);
        } else {
            (0..=n).rev().for_each(|k| tags.put(k));
        }
        let t = std::time::Instant::now();
        let s = g.wait()?;
        println!(
            "{d:?}: fib({n}) = {} in {:?}; prescribed {}, executed {}, requeued {} ({:?} lost)",
            fib.get(&n).map_or(0, |v| *v),
            t.elapsed(),
            s.prescribed,
            s.executed,
            s.requeued,
            s.requeue_time
        );
        if let Some(path) = &timeline {
            let path = format!("{path}.{d:?}.json");
            g.write_timeline(&path)?;
            println!("  timeline: {path}");
        }
    }
    Ok(())
}
