//! Single assignment, quiescence diagnosis, step errors and panics.

mod common;

use herd_flow::{Blocked, Deps, Discipline, FlowError, Graph, Items, StepError, Tuner};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

#[test]
fn double_put_names_collection_and_key() {
    let g = Graph::new("dp");
    let x = g.items::<u32, i32>("x");
    x.put(7, 1).unwrap();
    match x.put(7, 2) {
        Err(FlowError::DoublePut { collection, key }) => {
            assert_eq!((collection.as_str(), key.as_str()), ("x", "7"))
        }
        other => panic!("expected DoublePut, got {other:?}"),
    }
    assert_eq!(*x.get(&7).unwrap(), 1, "the first value stays");

    // From a step: the step's error stops the graph and wait() returns it.
    let t = g.tags::<u32>("t");
    let x2 = x.clone();
    let s = g.steps("writer", move |&k: &u32, ctx| -> Result<(), StepError> {
        ctx.put(&x2, k, 0)?;
        Ok(())
    });
    t.prescribes(&s);
    t.put(7);
    let e = common::pool2().install(|| g.wait()).unwrap_err();
    assert!(
        matches!(&e, FlowError::DoublePut { collection, key } if collection == "x" && key == "7"),
        "{e:?}"
    );
    assert!(e.to_string().contains("`x`") && e.to_string().contains('7'), "{e}");
}

#[test]
fn two_steps_putting_one_key_is_caught_at_commit() {
    let g = Graph::new("dp2");
    let x = g.items::<u32, u32>("x");
    let t = g.tags::<u32>("t");
    let x2 = x.clone();
    let s = g.steps("w", move |&k: &u32, ctx| -> Result<(), StepError> {
        ctx.put(&x2, 0, k)?;
        Ok(())
    });
    t.prescribes(&s);
    t.put(1);
    t.put(2);
    let e = common::pool2().install(|| g.wait()).unwrap_err();
    assert!(
        matches!(&e, FlowError::DoublePut { collection, key } if collection == "x" && key == "0"),
        "{e:?}"
    );
}

struct NeedsA(Items<u32, u32>);
impl Tuner<u32> for NeedsA {
    fn depends(&self, &k: &u32, deps: &mut Deps) {
        deps.item(&self.0, k);
        deps.item(&self.0, k + 100);
    }
}

#[test]
fn missing_items_are_diagnosed_not_hung() {
    for d in [Discipline::Requeue, Discipline::DependencyCounted] {
        let g = Graph::builder().name("miss").discipline(d).build();
        let a = g.items::<u32, u32>("a");
        let out = g.items::<u32, u32>("out");
        let t = g.tags::<u32>("k");
        let (a2, o2) = (a.clone(), out.clone());
        let s = g.steps_tuned("sum", NeedsA(a.clone()), move |&k: &u32, ctx| -> Result<(), StepError> {
            let v = *ctx.get(&a2, &k)? + *ctx.get(&a2, &(k + 100))?;
            ctx.put(&o2, k, v)?;
            Ok(())
        });
        t.prescribes(&s);
        for k in 0..3 {
            t.put(k);
        }
        a.put(0, 1).unwrap();
        a.put(100, 2).unwrap();
        a.put(1, 3).unwrap(); // step 1 lacks a[101]; step 2 lacks a[2] (and a[102])
        let e = common::pool2().install(|| g.wait()).unwrap_err();
        let FlowError::Unsatisfied(blocked) = &e else { panic!("{d:?}: expected Unsatisfied, got {e:?}") };
        assert_eq!(blocked.len(), 2, "{d:?}: {blocked:?}");
        assert_eq!(
            blocked[0],
            Blocked {
                step_collection: "sum".into(),
                tag: "1".into(),
                missing: vec![("a".into(), "101".into())]
            }
        );
        assert_eq!((blocked[1].step_collection.as_str(), blocked[1].tag.as_str()), ("sum", "2"));
        assert!(blocked[1].missing.contains(&("a".into(), "2".into())), "{d:?}: {blocked:?}");
        if d == Discipline::DependencyCounted {
            // Both declared items are listed up front.
            assert_eq!(blocked[1].missing, vec![("a".into(), "102".into()), ("a".into(), "2".into())]);
        }
        assert!(e.to_string().contains("sum(1) waits for a[101]"), "{e}");
        assert_eq!(*out.get(&0).unwrap(), 3);
        // The blocked steps stay prescribed: supplying the items completes the graph.
        for (k, v) in [(101, 4), (2, 5), (102, 6)] {
            a.put(k, v).unwrap();
        }
        common::pool2().install(|| g.wait()).unwrap();
        assert_eq!((*out.get(&1).unwrap(), *out.get(&2).unwrap()), (7, 11));
    }
}

/// A graph of `n` independent steps on one worker, priorities so that the failing tag runs
/// first; counts the steps that ran.
fn stopping_graph(fail: fn(u32) -> Result<(), StepError>) -> (FlowError, usize) {
    struct ByTag;
    impl Tuner<u32> for ByTag {
        fn priority(&self, &k: &u32) -> i64 {
            -(k as i64)
        }
    }
    let g = Graph::new("stop");
    let t = g.tags::<u32>("t");
    let ran = Arc::new(AtomicUsize::new(0));
    let r2 = ran.clone();
    let s = g.steps_tuned("work", ByTag, move |&k: &u32, _ctx| -> Result<(), StepError> {
        r2.fetch_add(1, Ordering::SeqCst);
        if k == 3 {
            fail(k)?;
        }
        Ok(())
    });
    t.prescribes(&s);
    for k in 0..20 {
        t.put(k);
    }
    let e = common::pool1().install(|| g.wait()).unwrap_err();
    // After the error the graph accepts new work.
    let t2 = g.tags::<u32>("again");
    let ok = Arc::new(AtomicUsize::new(0));
    let ok2 = ok.clone();
    t2.prescribes(&g.steps("fine", move |_: &u32, _ctx| -> Result<(), StepError> {
        ok2.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }));
    t2.put(1);
    common::pool2().install(|| g.wait()).unwrap();
    assert_eq!(ok.load(Ordering::SeqCst), 1);
    (e, ran.load(Ordering::SeqCst))
}

#[test]
fn step_error_stops_the_graph() {
    let (e, ran) = stopping_graph(|k| Err(StepError::msg(format!("bad input {k}"))));
    match &e {
        FlowError::Step { collection, tag, error } => {
            assert_eq!((collection.as_str(), tag.as_str(), error.as_str()), ("work", "3", "bad input 3"))
        }
        other => panic!("expected Step, got {other:?}"),
    }
    assert_eq!(ran, 4, "one worker, priority order: tags 0..=3 ran, nothing after the failure");
    let io: Result<(), StepError> = Err(std::io::Error::other("disk").into());
    assert!(matches!(io, Err(StepError::Failed(_))));
}

#[test]
fn step_panic_stops_the_graph_and_the_pool_stays_usable() {
    let (e, ran) = stopping_graph(|k| panic!("boom at {k}"));
    match &e {
        FlowError::Panic { collection, tag, message } => {
            assert_eq!((collection.as_str(), tag.as_str(), message.as_str()), ("work", "3", "boom at 3"))
        }
        other => panic!("expected Panic, got {other:?}"),
    }
    assert_eq!(ran, 4);
    let (a, b) = common::pool1().install(|| herd::join(|| 1, || 2));
    assert_eq!(a + b, 3);
    let (a, b) = common::pool2().install(|| herd::join(|| 3, || 4));
    assert_eq!(a + b, 7);
}
