//! Replay of a task graph on `P` simulated nodes of `c` cores each: list scheduling with
//! priorities, and messages with cost `α + β · bytes` for every edge that crosses nodes.
//!
//! * A [`Dag`] is built in topological order: each task names its cost (seconds), the node
//!   that runs it, the bytes of its output, and its predecessors (earlier tasks).
//! * [`simulate`] runs it as an event simulation. A node runs at most `c` tasks at once; when
//!   a core is free it starts the ready task of highest priority — the **bottom level** (the
//!   longest compute-only path from the task to the end, itself included), ties to the
//!   earlier task. When a task finishes, its output goes **once to each other node** that runs
//!   a successor (as a distributed runtime forwards an item once per consuming rank), in
//!   successor order; a node's outgoing messages **serialize on its communicator**: a message
//!   starts when the task is done and the communicator is free, occupies it `α + β · bytes`,
//!   and arrives at its end. Receiving costs nothing more (full-duplex links, no contention in
//!   the network), and the communicator is not one of the `c` compute cores.
//! * The result is exact for that model: with `α = β = 0` and at least as many cores as the
//!   graph's parallelism, the makespan is the critical path; on one core it is the total work.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

/// A task graph in topological order (compressed predecessor and successor lists).
#[derive(Clone, Debug, Default)]
pub struct Dag {
    cost: Vec<f64>,
    node: Vec<u32>,
    bytes: Vec<f64>,
    pred_start: Vec<usize>,
    preds: Vec<u32>,
}

impl Dag {
    /// An empty graph.
    pub fn new() -> Dag {
        Dag { pred_start: vec![0], ..Dag::default() }
    }

    /// Adds a task costing `cost` seconds on `node`, whose output is `bytes` long, after
    /// `preds` (ids of earlier tasks); returns its id.
    ///
    /// # Panics
    /// If a predecessor is not an earlier task (the graph would not be in topological order).
    pub fn add(&mut self, cost: f64, node: usize, bytes: f64, preds: &[u32]) -> u32 {
        let id = self.cost.len() as u32;
        for &p in preds {
            assert!(p < id, "task {id}: predecessor {p} is not an earlier task");
        }
        self.cost.push(cost);
        self.node.push(node as u32);
        self.bytes.push(bytes);
        self.preds.extend_from_slice(preds);
        self.pred_start.push(self.preds.len());
        id
    }

    /// Number of tasks.
    pub fn len(&self) -> usize {
        self.cost.len()
    }

    /// Whether it has no task.
    pub fn is_empty(&self) -> bool {
        self.cost.is_empty()
    }

    /// Number of edges.
    pub fn edges(&self) -> usize {
        self.preds.len()
    }

    /// Sum of the task costs (seconds on one core).
    pub fn work(&self) -> f64 {
        self.cost.iter().sum()
    }

    /// The highest node index used, plus one.
    pub fn nodes(&self) -> usize {
        self.node.iter().map(|&n| n as usize + 1).max().unwrap_or(0)
    }

    fn preds_of(&self, t: usize) -> &[u32] {
        &self.preds[self.pred_start[t]..self.pred_start[t + 1]]
    }

    /// Successor lists (compressed): `(start, succ)` with task `t`'s in `succ[start[t]..start[t+1]]`.
    fn successors(&self) -> (Vec<usize>, Vec<u32>) {
        let n = self.len();
        let mut start = vec![0usize; n + 1];
        for &p in &self.preds {
            start[p as usize + 1] += 1;
        }
        for t in 0..n {
            start[t + 1] += start[t];
        }
        let mut fill = start.clone();
        let mut succ = vec![0u32; self.preds.len()];
        for t in 0..n {
            for &p in self.preds_of(t) {
                succ[fill[p as usize]] = t as u32;
                fill[p as usize] += 1;
            }
        }
        (start, succ)
    }

    /// Each task's bottom level (its cost plus the longest compute-only path after it) and
    /// the critical path (the largest bottom level).
    pub fn bottom_levels(&self) -> (Vec<f64>, f64) {
        let mut bl = self.cost.clone();
        let mut best_after = vec![0.0f64; self.len()];
        for t in (0..self.len()).rev() {
            bl[t] = self.cost[t] + best_after[t];
            for &p in self.preds_of(t) {
                let p = p as usize;
                if bl[t] > best_after[p] {
                    best_after[p] = bl[t];
                }
            }
        }
        let cp = bl.iter().cloned().fold(0.0, f64::max);
        (bl, cp)
    }
}

/// The simulated machine.
#[derive(Clone, Copy, Debug)]
pub struct Machine {
    /// Nodes (at least the graph's [`Dag::nodes`]).
    pub nodes: usize,
    /// Compute cores per node.
    pub cores: usize,
    /// Message latency, seconds.
    pub alpha: f64,
    /// Seconds per byte.
    pub beta: f64,
}

/// The outcome of a replay.
#[derive(Clone, Debug)]
pub struct Schedule {
    /// Simulated time from the first task's start to the last task's end, seconds.
    pub makespan: f64,
    /// Sum of task costs, core-seconds.
    pub work: f64,
    /// The compute-only critical path, seconds.
    pub critical_path: f64,
    /// Messages sent between nodes.
    pub messages: u64,
    /// Bytes sent between nodes.
    pub bytes: f64,
    /// The busiest communicator's total occupancy, seconds.
    pub max_comm_busy: f64,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Event {
    /// Task finished.
    Done(u32),
    /// Task's output reached a node.
    Arrive(u32, u32),
}

#[derive(Debug)]
struct Timed(f64, u64, Event);

impl PartialEq for Timed {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Timed {}
impl PartialOrd for Timed {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Timed {
    fn cmp(&self, o: &Self) -> Ordering {
        self.0.total_cmp(&o.0).then(self.1.cmp(&o.1))
    }
}

/// A ready task's rank in its node's queue: higher bottom level first, then lower id.
#[derive(Debug)]
struct Ready(f64, u32);

impl PartialEq for Ready {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Ready {}
impl PartialOrd for Ready {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Ready {
    fn cmp(&self, o: &Self) -> Ordering {
        self.0.total_cmp(&o.0).then(o.1.cmp(&self.1))
    }
}

/// Replays `dag` on `machine` (see the module docs).
///
/// # Panics
/// If the machine has no core or fewer nodes than the graph uses.
pub fn simulate(dag: &Dag, machine: &Machine) -> Schedule {
    assert!(machine.cores > 0, "a simulated node needs at least one core");
    assert!(
        machine.nodes >= dag.nodes(),
        "the graph uses {} nodes, the machine has {}",
        dag.nodes(),
        machine.nodes
    );
    let n = dag.len();
    let (bl, cp) = dag.bottom_levels();
    let (sstart, succ) = dag.successors();
    let mut missing: Vec<u32> = (0..n).map(|t| dag.preds_of(t).len() as u32).collect();
    let mut ready: Vec<BinaryHeap<Ready>> = (0..machine.nodes).map(|_| BinaryHeap::new()).collect();
    let mut idle = vec![machine.cores; machine.nodes];
    let mut comm_free = vec![0.0f64; machine.nodes];
    let mut comm_busy = vec![0.0f64; machine.nodes];
    let mut events: BinaryHeap<Reverse<Timed>> = BinaryHeap::new();
    let mut seq = 0u64;
    let (mut messages, mut bytes, mut end) = (0u64, 0.0f64, 0.0f64);
    for t in 0..n {
        if missing[t] == 0 {
            ready[dag.node[t] as usize].push(Ready(bl[t], t as u32));
        }
    }
    let mut dirty: Vec<usize> = (0..machine.nodes).collect();
    let mut dests: Vec<u32> = Vec::new();
    let mut now = 0.0f64;
    loop {
        // start what the touched nodes can start at `now`
        for &v in &dirty {
            while idle[v] > 0 {
                let Some(Ready(_, t)) = ready[v].pop() else { break };
                idle[v] -= 1;
                seq += 1;
                events.push(Reverse(Timed(now + dag.cost[t as usize], seq, Event::Done(t))));
            }
        }
        dirty.clear();
        let Some(Reverse(Timed(t0, _, _))) = events.peek() else { break };
        now = *t0;
        // every event at `now`, then dispatch
        while let Some(Reverse(Timed(t, _, ev))) = events.peek() {
            if *t != now {
                break;
            }
            let ev = *ev;
            events.pop();
            match ev {
                Event::Done(task) => {
                    let task = task as usize;
                    let home = dag.node[task];
                    end = end.max(now);
                    idle[home as usize] += 1;
                    dirty.push(home as usize);
                    dests.clear();
                    for &s in &succ[sstart[task]..sstart[task + 1]] {
                        let d = dag.node[s as usize];
                        if d == home {
                            missing[s as usize] -= 1;
                            if missing[s as usize] == 0 {
                                ready[d as usize].push(Ready(bl[s as usize], s));
                            }
                        } else if !dests.contains(&d) {
                            dests.push(d);
                        }
                    }
                    for &d in &dests {
                        let h = home as usize;
                        let cost = machine.alpha + machine.beta * dag.bytes[task];
                        let start = comm_free[h].max(now);
                        comm_free[h] = start + cost;
                        comm_busy[h] += cost;
                        messages += 1;
                        bytes += dag.bytes[task];
                        seq += 1;
                        events.push(Reverse(Timed(comm_free[h], seq, Event::Arrive(task as u32, d))));
                    }
                }
                Event::Arrive(task, d) => {
                    let task = task as usize;
                    for &s in &succ[sstart[task]..sstart[task + 1]] {
                        if dag.node[s as usize] == d {
                            missing[s as usize] -= 1;
                            if missing[s as usize] == 0 {
                                ready[d as usize].push(Ready(bl[s as usize], s));
                            }
                        }
                    }
                    dirty.push(d as usize);
                }
            }
        }
        dirty.sort_unstable();
        dirty.dedup();
    }
    debug_assert!(missing.iter().all(|&m| m == 0), "every task ran");
    Schedule {
        makespan: end,
        work: dag.work(),
        critical_path: cp,
        messages,
        bytes,
        max_comm_busy: comm_busy.iter().cloned().fold(0.0, f64::max),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn machine(nodes: usize, cores: usize, alpha: f64, beta: f64) -> Machine {
        Machine { nodes, cores, alpha, beta }
    }

    #[test]
    fn chain_adds_up() {
        let mut d = Dag::new();
        let a = d.add(1.0, 0, 8.0, &[]);
        let b = d.add(2.0, 0, 8.0, &[a]);
        d.add(3.0, 0, 8.0, &[b]);
        let s = simulate(&d, &machine(1, 4, 1.0, 1.0));
        assert_eq!(s.makespan, 6.0);
        assert_eq!(s.critical_path, 6.0);
        assert_eq!(s.messages, 0);
    }

    #[test]
    fn fork_join_on_two_cores() {
        // root 1, four children 1, 1, 1, 3, join 1: on 2 cores the long child starts first
        // (highest bottom level), the three short ones share the other core: 1 + 3 + 1.
        let mut d = Dag::new();
        let r = d.add(1.0, 0, 0.0, &[]);
        let kids: Vec<u32> = [1.0, 1.0, 1.0, 3.0].iter().map(|&c| d.add(c, 0, 0.0, &[r])).collect();
        d.add(1.0, 0, 0.0, &kids);
        let s = simulate(&d, &machine(1, 2, 0.0, 0.0));
        assert_eq!(s.makespan, 5.0);
        // on one core: the work
        assert_eq!(simulate(&d, &machine(1, 1, 0.0, 0.0)).makespan, 8.0);
        // plenty of cores: the critical path
        assert_eq!(simulate(&d, &machine(1, 8, 0.0, 0.0)).makespan, 5.0);
    }

    #[test]
    fn priority_by_bottom_level_beats_fifo() {
        // On two cores: a (1) → c (4); b1, b2 (2 each) independent. The critical task a
        // goes first: {a, b1} at 0, c at 1 on a's core, b2 at 2 on the other: done at 5.
        let mut d = Dag::new();
        let b1 = d.add(2.0, 0, 0.0, &[]);
        let b2 = d.add(2.0, 0, 0.0, &[]);
        let a = d.add(1.0, 0, 0.0, &[]);
        d.add(4.0, 0, 0.0, &[a]);
        let _ = (b1, b2);
        assert_eq!(simulate(&d, &machine(1, 2, 0.0, 0.0)).makespan, 5.0);
    }

    #[test]
    fn a_message_costs_alpha_plus_beta_bytes() {
        let mut d = Dag::new();
        let a = d.add(1.0, 0, 100.0, &[]);
        d.add(2.0, 1, 0.0, &[a]);
        let s = simulate(&d, &machine(2, 1, 0.5, 0.01));
        assert!((s.makespan - (1.0 + 0.5 + 1.0 + 2.0)).abs() < 1e-12, "{}", s.makespan);
        assert_eq!(s.messages, 1);
        assert_eq!(s.bytes, 100.0);
    }

    #[test]
    fn outgoing_messages_serialize_and_go_once_per_node() {
        // a on node 0 feeds two tasks on node 1 and one on node 2: two messages, the second
        // leaves when the first is through.
        let mut d = Dag::new();
        let a = d.add(1.0, 0, 10.0, &[]);
        d.add(1.0, 1, 0.0, &[a]);
        d.add(1.0, 1, 0.0, &[a]);
        let last = d.add(1.0, 2, 0.0, &[a]);
        assert_eq!(last, 3);
        let s = simulate(&d, &machine(3, 2, 1.0, 0.1));
        // node 1's data at 1 + 2 = 3, node 2's at 3 + 2 = 5, then 1 s of work
        assert!((s.makespan - 6.0).abs() < 1e-12, "{}", s.makespan);
        assert_eq!(s.messages, 2);
        assert!((s.max_comm_busy - 4.0).abs() < 1e-12);
    }
}
