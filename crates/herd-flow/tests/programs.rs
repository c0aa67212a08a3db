//! fib, outer product, pipeline; the three disciplines give the same results.

mod common;

use herd_flow::{Deps, Discipline, Graph, Items, StepError, Tags, Tuner};

fn fib_iter(n: u64) -> u64 {
    let (mut a, mut b) = (0u64, 1u64);
    for _ in 0..n {
        (a, b) = (b, a + b);
    }
    a
}

struct FibTuner(Items<u64, u64>);

impl Tuner<u64> for FibTuner {
    fn depends(&self, &n: &u64, deps: &mut Deps) {
        if n >= 2 {
            deps.item(&self.0, n - 1);
            deps.item(&self.0, n - 2);
        }
    }
}

/// fib(0..=n) as a graph. `on_the_fly`: step k puts tag k+1 (after its item); otherwise the
/// environment puts every tag first. Returns fib(n) and the stats.
fn fib_graph(n: u64, d: Discipline, on_the_fly: bool) -> (u64, herd_flow::Stats) {
    let g = Graph::builder().name("fib").discipline(d).build();
    let fib = g.items::<u64, u64>("fib");
    let tags: Tags<u64> = g.tags("n");
    let (f2, t2) = (fib.clone(), tags.clone());
    let step =
        g.steps_tuned("fib_step", FibTuner(fib.clone()), move |&k: &u64, ctx| -> Result<(), StepError> {
            let v = if k < 2 { k } else { *ctx.get(&f2, &(k - 1))? + *ctx.get(&f2, &(k - 2))? };
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
        // Consumers first: under Requeue most steps find their inputs missing.
        for k in (0..=n).rev() {
            tags.put(k);
        }
    }
    let stats = common::pool2().install(|| g.wait()).unwrap();
    (*fib.get(&n).unwrap(), stats)
}

#[test]
fn fib_matches_iterative_under_every_discipline() {
    let n = 60;
    let want = fib_iter(n);
    let (r, s) = fib_graph(n, Discipline::Requeue, false);
    assert_eq!(r, want);
    assert_eq!(s.executed, n + 1);
    assert!(s.requeued > 0, "consumers put first must requeue: {s:?}");
    let (d, s) = fib_graph(n, Discipline::DependencyCounted, false);
    assert_eq!(d, want);
    assert_eq!((s.executed, s.requeued), (n + 1, 0));
    let (o, s) = fib_graph(n, Discipline::OnTheFly, true);
    assert_eq!(o, want);
    assert_eq!((s.executed, s.prescribed, s.requeued), (n + 1, n + 1, 0));
}

#[test]
fn outer_product_under_every_discipline() {
    for d in [Discipline::Requeue, Discipline::DependencyCounted, Discipline::OnTheFly] {
        let g = Graph::builder().name("outer").discipline(d).build();
        let a = g.items::<usize, f64>("a");
        let b = g.items::<usize, f64>("b");
        let c = g.items::<(usize, usize), f64>("c");
        let ij = g.tags::<(usize, usize)>("ij");
        let (a2, b2, c2) = (a.clone(), b.clone(), c.clone());
        let step = g.steps("mul", move |&(i, j): &(usize, usize), ctx| -> Result<(), StepError> {
            let v = *ctx.get(&a2, &i)? * *ctx.get(&b2, &j)?;
            ctx.put(&c2, (i, j), v)?;
            Ok(())
        });
        ij.prescribes(&step);
        let n = 12;
        for i in 0..n {
            for j in 0..n {
                ij.put((i, j));
            }
        }
        // Inputs after the tags: every step requeues once under Requeue.
        for i in 0..n {
            a.put(i, i as f64 + 1.0).unwrap();
            b.put(i, 2.0 * i as f64).unwrap();
        }
        let s = common::pool2().install(|| g.wait()).unwrap();
        assert_eq!(s.executed, (n * n) as u64);
        assert_eq!(c.len(), n * n);
        for i in 0..n {
            for j in 0..n {
                assert_eq!(*c.get(&(i, j)).unwrap(), (i as f64 + 1.0) * (2.0 * j as f64), "{d:?} ({i},{j})");
            }
        }
    }
}

#[test]
fn producer_consumer_pipeline() {
    // produce(i) puts raw[i] and tag i of the consumer; consume(i) puts out[i] = raw[i]² + 1.
    let g = Graph::builder().name("pipeline").discipline(Discipline::OnTheFly).build();
    let raw = g.items::<u32, u64>("raw").with_get_count(|_| 1);
    let out = g.items::<u32, u64>("out");
    let prod_tags = g.tags::<u32>("produce");
    let cons_tags = g.tags::<u32>("consume");
    let (r1, c1) = (raw.clone(), cons_tags.clone());
    let producer = g.steps("produce", move |&i: &u32, ctx| -> Result<(), StepError> {
        ctx.put(&r1, i, u64::from(i) * 3)?;
        ctx.put_tag(&c1, i);
        Ok(())
    });
    let (r2, o2) = (raw.clone(), out.clone());
    let consumer = g.steps("consume", move |&i: &u32, ctx| -> Result<(), StepError> {
        let v = *ctx.get(&r2, &i)?;
        ctx.put(&o2, i, v * v + 1)?;
        Ok(())
    });
    prod_tags.prescribes(&producer);
    cons_tags.prescribes(&consumer);
    for i in 0..500 {
        prod_tags.put(i);
    }
    let s = common::pool2().install(|| g.wait()).unwrap();
    assert_eq!((s.executed, s.requeued), (1000, 0));
    assert_eq!(out.len(), 500);
    assert!(raw.is_empty(), "raw items are freed after their single get");
    for i in 0..500u32 {
        let v = u64::from(i) * 3;
        assert_eq!(*out.get(&i).unwrap(), v * v + 1);
    }
}
