//! BOTS `health`: a health-system simulation over a tree of villages (a
//! root, `branching` children per village, `levels` levels), each with a
//! hospital. Every time step, each village first simulates its children
//! (one task per child village, joined), then its own hospital: patients
//! inside recover and are discharged; assessed patients are either admitted
//! or, with probability `P_UP`, sent to the parent village's hospital;
//! patients sent up by its children arrive; each inhabitant falls ill with
//! probability `P_SICK`; waiting patients are assessed while staff is free.
//!
//! Every village and every patient has its own random stream, and patients
//! sent up are handed over through the child's outbox, drained by the parent
//! in child order after the join, so the simulation is deterministic (BOTS
//! appends them to the parent's list under a lock, whose order varies).
//! Villages at depth `cutoff` or deeper simulate their subtree sequentially.
//! Checked: every patient is accounted for (falls ill = discharged + still in
//! a hospital), and the statistics equal the sequential run's exactly.

use super::rng::{child, Rng};
use super::{Fork, Kernel, Size};
use std::collections::VecDeque;

/// Probability that an inhabitant falls ill in a time step.
const P_SICK: f64 = 0.01;
/// Probability that an assessed patient is sent to the parent's hospital.
const P_UP: f64 = 0.1;
/// Time steps of an assessment.
const ASSESS_TIME: u32 = 3;
/// Time steps of a stay in hospital.
const STAY_TIME: u32 = 10;

/// The simulation's size; villages below depth `cutoff` make no tasks.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Health {
    /// Levels of the village tree.
    pub levels: usize,
    /// Children per village.
    pub branching: usize,
    /// Inhabitants per village.
    pub population: u32,
    /// Time steps simulated.
    pub steps: usize,
    /// Depth from which subtrees are simulated sequentially (0: no cutoff).
    pub cutoff: usize,
}

/// The simulation's totals over every village.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Patients who fell ill.
    pub ill: u64,
    /// Patients discharged.
    pub discharged: u64,
    /// Sum over discharged patients of the steps from falling ill to discharge.
    pub total_time: u64,
    /// Sum over discharged patients of the hospitals they went through.
    pub total_hospitals: u64,
    /// Patients still in a hospital at the end.
    pub in_hospital: u64,
}

impl std::ops::AddAssign for Stats {
    fn add_assign(&mut self, o: Stats) {
        self.ill += o.ill;
        self.discharged += o.discharged;
        self.total_time += o.total_time;
        self.total_hospitals += o.total_hospitals;
        self.in_hospital += o.in_hospital;
    }
}

struct Patient {
    rng: Rng,
    /// Steps since falling ill.
    time: u32,
    /// Steps left in the current stage (assessment or stay).
    left: u32,
    /// Hospitals visited.
    hospitals: u32,
}

/// One village and its subtree.
pub struct Village {
    depth: usize,
    rng: Rng,
    free_staff: u32,
    waiting: VecDeque<Patient>,
    assess: Vec<Patient>,
    inside: Vec<Patient>,
    /// Patients sent to the parent this step.
    outbox: Vec<Patient>,
    children: Vec<Village>,
    stats: Stats,
}

impl Village {
    fn new(h: &Health, depth: usize, seed: u64) -> Village {
        let children = if depth + 1 < h.levels {
            (0..h.branching).map(|i| Village::new(h, depth + 1, child(seed, i as u64))).collect()
        } else {
            Vec::new()
        };
        Village {
            depth,
            rng: Rng::new(seed),
            // Larger hospitals higher up, where patients from below arrive.
            free_staff: 4 + 2 * (h.levels - 1 - depth) as u32,
            waiting: VecDeque::new(),
            assess: Vec::new(),
            inside: Vec::new(),
            outbox: Vec::new(),
            children,
            stats: Stats::default(),
        }
    }

    /// One time step of this village's subtree.
    fn step<F: Fork>(&mut self, f: &F, h: &Health) {
        if h.cutoff == 0 || self.depth < h.cutoff {
            f.for_each_mut(&mut self.children, &|c| c.step(f, h));
        } else {
            self.children.iter_mut().for_each(|c| c.step(f, h));
        }
        let stats = &mut self.stats;
        self.inside.retain_mut(|p| {
            p.left -= 1;
            if p.left == 0 {
                stats.discharged += 1;
                stats.total_time += p.time as u64;
                stats.total_hospitals += p.hospitals as u64;
            }
            p.left > 0
        });
        for mut p in std::mem::take(&mut self.assess) {
            p.left -= 1;
            if p.left > 0 {
                self.assess.push(p);
                continue;
            }
            self.free_staff += 1;
            if self.depth > 0 && p.rng.next_f64() < P_UP {
                self.outbox.push(p);
            } else {
                p.left = STAY_TIME;
                self.inside.push(p);
            }
        }
        for c in &mut self.children {
            self.waiting.extend(c.outbox.drain(..).map(|mut p| {
                p.hospitals += 1;
                p
            }));
        }
        for _ in 0..h.population {
            if self.rng.next_f64() < P_SICK {
                self.stats.ill += 1;
                let rng = Rng::new(self.rng.next_u64());
                self.waiting.push_back(Patient { rng, time: 0, left: 0, hospitals: 1 });
            }
        }
        while self.free_staff > 0 {
            let Some(mut p) = self.waiting.pop_front() else { break };
            self.free_staff -= 1;
            p.left = ASSESS_TIME;
            self.assess.push(p);
        }
        for p in self.waiting.iter_mut().chain(&mut self.assess).chain(&mut self.inside) {
            p.time += 1;
        }
    }

    /// The totals of the subtree.
    fn totals(&self) -> Stats {
        let mut s = self.stats;
        s.in_hospital +=
            (self.waiting.len() + self.assess.len() + self.inside.len() + self.outbox.len()) as u64;
        for c in &self.children {
            s += c.totals();
        }
        s
    }
}

impl Kernel for Health {
    type Input = Village;
    type Output = Stats;
    const NAME: &'static str = "health";

    fn new(size: Size, grain: Option<usize>) -> Health {
        let cutoff = grain.unwrap_or(0);
        match size {
            Size::Small => Health { levels: 3, branching: 4, population: 50, steps: 30, cutoff },
            Size::Full => Health { levels: 7, branching: 4, population: 200, steps: 400, cutoff },
        }
    }

    fn describe(&self) -> String {
        let cut =
            if self.cutoff == 0 { "no cutoff".into() } else { format!("tasks above depth {}", self.cutoff) };
        format!(
            "{} levels × {} children, {} inhabitants each, {} steps, a task per village per step, {cut}",
            self.levels, self.branching, self.population, self.steps
        )
    }

    fn input(&self) -> Village {
        Village::new(self, 0, 0x5eed_0008)
    }

    fn run<F: Fork>(&self, fork: &F, root: &mut Village) -> Stats {
        for _ in 0..self.steps {
            root.step(fork, self);
        }
        root.totals()
    }

    fn check(&self, _: &Village, out: &Stats, reference: &Stats) -> Result<(), String> {
        if out.ill != out.discharged + out.in_hospital {
            return Err(format!("patients lost: {out:?}"));
        }
        if out.discharged == 0 {
            return Err("nobody was discharged".into());
        }
        if out != reference {
            return Err(format!("{out:?} differs from the sequential run's {reference:?}"));
        }
        Ok(())
    }
}
