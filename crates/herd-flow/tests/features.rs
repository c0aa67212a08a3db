//! Get-counts, memoization, priorities, the timeline, tuner hooks.

mod common;

use herd_flow::{Deps, Graph, Items, StepError, Tuner};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

struct Counted(Arc<AtomicUsize>);
impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn get_count_frees_items_after_last_get() {
    let drops = Arc::new(AtomicUsize::new(0));
    let g = Graph::new("gc");
    // Item k is got by steps k and k+1 (two consumers), except the last one (one consumer).
    let n = 10u32;
    let src = g.items::<u32, Counted>("src").with_get_count(move |&k| if k == n - 1 { 1 } else { 2 });
    let kept = g.items::<u32, Counted>("kept");
    let out = g.items::<u32, u32>("out");
    let t = g.tags::<u32>("t");
    let (s2, o2) = (src.clone(), out.clone());
    let step = g.steps("use", move |&k: &u32, ctx| -> Result<(), StepError> {
        let _a = ctx.get(&s2, &k)?;
        if k > 0 {
            let _b = ctx.get(&s2, &(k - 1))?;
        }
        ctx.put(&o2, k, k)?;
        Ok(())
    });
    t.prescribes(&step);
    for k in 0..n {
        src.put(k, Counted(drops.clone())).unwrap();
        kept.put(k, Counted(drops.clone())).unwrap();
        t.put(k);
    }
    assert_eq!(src.len(), n as usize);
    common::pool2().install(|| g.wait()).unwrap();
    assert_eq!(out.len(), n as usize);
    assert_eq!(src.len(), 0, "every src item was freed after its last get");
    assert!(src.contains(&3) && src.get(&3).is_none());
    assert_eq!(kept.len(), n as usize, "no get-count: kept");
    assert_eq!(drops.load(Ordering::SeqCst), n as usize, "the freed values were dropped");
}

#[test]
fn get_after_last_get_is_an_error() {
    let g = Graph::new("gc2");
    let src = g.items::<u32, u32>("src").with_get_count(|_| 1);
    let t = g.tags::<u32>("t");
    let s2 = src.clone();
    t.prescribes(&g.steps("use", move |_: &u32, ctx| -> Result<(), StepError> {
        ctx.get(&s2, &0)?;
        Ok(())
    }));
    src.put(0, 5).unwrap();
    t.put(1);
    common::pool1().install(|| g.wait()).unwrap();
    t.put(2);
    let e = common::pool1().install(|| g.wait()).unwrap_err();
    assert!(
        matches!(&e, herd_flow::FlowError::Freed { collection, key } if collection == "src" && key == "0")
    );
}

#[test]
fn memoized_tags_run_once() {
    let g = Graph::new("memo");
    let t = g.tags::<u32>("t");
    t.memoize();
    let runs = Arc::new(AtomicUsize::new(0));
    let r2 = runs.clone();
    t.prescribes(&g.steps("s", move |_: &u32, _ctx| -> Result<(), StepError> {
        r2.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }));
    for k in [1, 2, 1, 3, 2, 1] {
        t.put(k);
    }
    let s = common::pool2().install(|| g.wait()).unwrap();
    assert_eq!((runs.load(Ordering::SeqCst), s.prescribed, s.duplicate_tags), (3, 3, 3));
}

struct Prio;
impl Tuner<u32> for Prio {
    fn priority(&self, &k: &u32) -> i64 {
        // Even tags first, then by tag descending.
        i64::from(k % 2 == 0) * 1000 + i64::from(k)
    }
    fn compute_on(&self, &k: &u32) -> usize {
        (k % 3) as usize
    }
}

#[test]
fn priorities_are_honoured_on_one_worker() {
    let g = Graph::new("prio");
    let t = g.tags::<u32>("t");
    let order = Arc::new(Mutex::new(Vec::new()));
    let o2 = order.clone();
    t.prescribes(&g.steps_tuned("s", Prio, move |&k: &u32, _ctx| -> Result<(), StepError> {
        o2.lock().unwrap().push(k);
        Ok(())
    }));
    for k in 0..10 {
        t.put(k);
    }
    let s = common::pool1().install(|| g.wait()).unwrap();
    assert_eq!(*order.lock().unwrap(), vec![8, 6, 4, 2, 0, 9, 7, 5, 3, 1]);
    assert_eq!(s.compute_on.into_iter().collect::<Vec<_>>(), vec![(0, 4), (1, 3), (2, 3)]);
}

struct Diamond(Items<&'static str, u64>);
impl Tuner<&'static str> for Diamond {
    fn depends(&self, tag: &&'static str, deps: &mut Deps) {
        let ins: &[&'static str] = match *tag {
            "b" | "c" => &["a"],
            "d" => &["b", "c"],
            _ => &[],
        };
        for i in ins {
            deps.item(&self.0, i);
        }
    }
}

#[test]
fn timeline_records_the_executed_dag() {
    // a -> {b, c} -> d; plus e which gets an item put by the environment (no producer).
    let g = Graph::builder().name("diamond").timeline(true).build();
    let v = g.items::<&'static str, u64>("v").with_consumed_on(|_| 0);
    let t = g.tags::<&'static str>("t");
    let v2 = v.clone();
    let step =
        g.steps_tuned("node", Diamond(v.clone()), move |tag: &&'static str, ctx| -> Result<(), StepError> {
            let x = match *tag {
                "a" => 1,
                "b" | "c" => *ctx.get(&v2, &"a")? + 1,
                "d" => *ctx.get(&v2, &"b")? + *ctx.get(&v2, &"c")?,
                _ => *ctx.get(&v2, &"env")?,
            };
            ctx.put(&v2, tag, x)?;
            Ok(())
        });
    t.prescribes(&step);
    for tag in ["d", "c", "b", "a", "e"] {
        t.put(tag);
    }
    v.put("env", 9).unwrap();
    let s = common::pool2().install(|| g.wait()).unwrap();
    assert_eq!((*v.get(&"d").unwrap(), *v.get(&"e").unwrap()), (4, 9));
    assert_eq!(s.consumed_on.get(&0), Some(&6));
    let dir = std::env::temp_dir().join(format!("herd-flow-timeline-{}.json", std::process::id()));
    g.write_timeline(&dir).unwrap();
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&dir).unwrap()).unwrap();
    std::fs::remove_file(&dir).unwrap();
    assert_eq!(json["otherData"]["producer"], "herd-flow");
    assert_eq!(json["otherData"]["graph"], "diamond");
    assert_eq!(json["otherData"]["workers"], 2);
    let evs = json["traceEvents"].as_array().unwrap();
    assert_eq!(evs.len(), 5);
    let mut id_of = HashMap::new();
    let mut deps_of = HashMap::new();
    for e in evs {
        assert_eq!(
            (e["name"].as_str(), e["cat"].as_str(), e["ph"].as_str()),
            (Some("node"), Some("step"), Some("X"))
        );
        assert!(e["ts"].is_f64() && e["dur"].as_f64().unwrap() >= 0.0 && e["pid"] == 1);
        assert!(e["tid"].as_u64().unwrap() < 2);
        assert_eq!(e["args"]["requeues"], 0);
        let tag = e["args"]["tag"].as_str().unwrap().to_string();
        id_of.insert(tag.clone(), e["args"]["id"].as_u64().unwrap());
        let deps: Vec<u64> =
            e["args"]["deps"].as_array().unwrap().iter().map(|d| d.as_u64().unwrap()).collect();
        deps_of.insert(tag, deps);
    }
    let id = |t: &str| id_of[&format!("{t:?}")];
    assert_eq!(deps_of["\"a\""], Vec::<u64>::new());
    assert_eq!(deps_of["\"b\""], vec![id("a")]);
    assert_eq!(deps_of["\"c\""], vec![id("a")]);
    let mut bc = vec![id("b"), id("c")];
    bc.sort();
    assert_eq!(deps_of["\"d\""], bc);
    assert_eq!(deps_of["\"e\""], Vec::<u64>::new(), "environment items have no producer");
    // Timeline records agree with the JSON and d started after b and c ended.
    let recs = g.timeline();
    let end = |t: &str| recs.iter().find(|r| r.tag == format!("{t:?}")).unwrap().end_ns;
    let start_d = recs.iter().find(|r| r.tag == "\"d\"").unwrap().start_ns;
    assert!(start_d >= end("b") && start_d >= end("c"));
}

#[test]
fn requeues_are_counted_in_the_timeline() {
    let g = Graph::builder().name("rq").discipline(herd_flow::Discipline::Requeue).timeline(true).build();
    let v = g.items::<u32, u32>("v");
    let t = g.tags::<u32>("t");
    let v2 = v.clone();
    t.prescribes(&g.steps("s", move |&k: &u32, ctx| -> Result<(), StepError> {
        if k == 1 {
            ctx.get(&v2, &0)?;
        } else {
            ctx.put(&v2, 0, 5)?;
        }
        Ok(())
    }));
    t.put(1);
    t.put(0);
    // One worker, FIFO among equal priorities: 1 runs first and is requeued.
    let s = common::pool1().install(|| g.wait()).unwrap();
    assert_eq!((s.executed, s.requeued), (2, 1));
    let recs = g.timeline();
    let r1 = recs.iter().find(|r| r.tag == "1").unwrap();
    let r0 = recs.iter().find(|r| r.tag == "0").unwrap();
    assert_eq!((r1.requeues, r1.deps.clone()), (1, vec![r0.id]));
}

struct SameKey(Items<u64, u64>);
impl Tuner<u64> for SameKey {
    fn depends(&self, &t: &u64, deps: &mut Deps) {
        deps.item(&self.0, t);
    }
}

/// The environment puts items from another thread while `wait` runs: whatever the first
/// `wait` found, the next one (after the producer is done) runs every step exactly once.
#[test]
fn environment_puts_from_another_thread_during_wait() {
    for round in 0..20 {
        let g = Graph::new("env");
        let x = g.items::<u64, u64>("x");
        let y = g.items::<u64, u64>("y");
        let t = g.tags::<u64>("t");
        let (x2, y2) = (x.clone(), y.clone());
        let step = g.steps_tuned("inc", SameKey(x.clone()), move |&k: &u64, ctx| -> Result<(), StepError> {
            let v = *ctx.get(&x2, &k)?;
            ctx.put(&y2, k, v + 1)?;
            Ok(())
        });
        t.prescribes(&step);
        let n = 2000u64;
        for k in 0..n {
            t.put(k);
        }
        // Half the items before, half from another thread during the first wait.
        for k in 0..n / 2 {
            x.put(k, k).unwrap();
        }
        let producer = {
            let x = x.clone();
            std::thread::spawn(move || {
                for k in n / 2..n {
                    x.put(k, k).unwrap();
                }
            })
        };
        let first = common::pool2().install(|| g.wait());
        producer.join().unwrap();
        let stats = common::pool2().install(|| g.wait()).unwrap_or_else(|e| panic!("round {round}: {e}"));
        assert_eq!(stats.executed, n, "round {round} (first wait: {:?})", first.map(|s| s.executed));
        for k in 0..n {
            assert_eq!(y.get(&k).as_deref(), Some(&(k + 1)), "round {round}, key {k}");
        }
    }
}
