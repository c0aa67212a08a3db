//! Adaptive yielding before a sleep, for pools with more participants than
//! CPUs.
//!
//! There a wait never spins (a spinning waiter would hold the CPU that the
//! participant it waits for needs), so without yields every barrier or
//! ordered turn is a chain of futex sleeps and wake-ups. Yielding the CPU
//! a few times first usually lets the participant that makes the condition
//! true run on this CPU and finish the wait without any sleep (EPCC barrier
//! at 4 threads on 2 CPUs: 69 µs with sleeps alone, 1.4 µs with yields);
//! libomp's waits yield there too.
//!
//! But yields only pay while the thread that ends the wait is runnable and
//! needs this CPU. When it is not (an idle worker waiting for work that
//! nobody is about to push, or the machine loaded by other processes),
//! every yield is a system call that only delays the sleep and hands the
//! CPU to other yielders. A fixed count of 16 measured well in barriers but
//! cut herd's ThreadSanitizer stress test (`tests/stress.rs`) from 11
//! rounds to 3 in its time budget. So the number of yields **adapts per thread**, like an AIMD
//! window:
//!
//! * a wait that yielded and ended (or found a job) within [`SHORT`] of its
//!   first yield *paid*: the budget grows to `2·b + 1`, at most
//!   [`MAX_YIELDS`]. That holds even if it ran out of yields and slept
//!   briefly: the participant it waited for was running, so more yields
//!   would have paid (judging by whether the yields alone sufficed made a
//!   small budget fail more often and collapse to 0: EPCC barrier back at
//!   48 µs);
//! * a longer wait *failed*: the budget halves;
//! * a yield that returned only after [`WINDOW`] handed the CPU to a thread
//!   that ran a whole time slice — on a machine shared with other
//!   processes, usually one that is not ours: the budget drops to 0 and the
//!   gap between probes doubles (see below), so that a loaded machine costs
//!   at most one slice per [`MAX_PROBE_GAP`] waits;
//! * at a budget of 0 the thread sleeps at once, except that one wait in
//!   the probe gap (from [`PROBE_EVERY`] up to [`MAX_PROBE_GAP`]) tries a
//!   single yield, so that a phase in which yields pay again is noticed; a
//!   probe that pays resets the gap.
//!
//! This is per thread (a thread-local), not shared: each participant learns
//! from its own waits and no line is written by every core.

use std::cell::Cell;
use std::time::{Duration, Instant};

/// The most yields of one wait (and the budget a thread starts with).
pub(crate) const MAX_YIELDS: u32 = 16;
/// The longest a wait yields. A yield that hands the CPU to a thread that
/// runs a whole time slice returns milliseconds later, far later than a
/// futex wake-up would have come (30–70 µs on a VM), and the waiter gives
/// up its sleeper's claim on the CPU meanwhile: past this, a wait sleeps
/// and its yields count as failed even if the condition came true. With 4
/// to 8 members per CPU a round of the CPU's run queue takes longer than
/// 50 µs: EPCC task-barrier at 16 threads on 2 CPUs, window 50 → 200 µs:
/// 200 → 59 µs (libgomp 56); 500 and 1000 µs measured no better.
const WINDOW: Duration = Duration::from_micros(200);
/// A wait that yielded and ended within this of its first yield was short:
/// the participant it waited for was running, so yields pay (even if this
/// one ran out of them and slept briefly). A longer wait waited for
/// something nobody was about to do (new work, a descheduled thread).
const SHORT: Duration = Duration::from_micros(400);
/// A thread whose budget is 0 tries one yield in this many waits at first.
const PROBE_EVERY: u32 = 16;
/// The widest gap between probes (after yields that lost time slices).
const MAX_PROBE_GAP: u32 = 1024;

/// One thread's learning state.
#[derive(Clone, Copy, Debug, PartialEq)]
struct State {
    /// Yields the next wait may take.
    budget: u32,
    /// Waits between probes while the budget is 0.
    gap: u32,
    /// Waits since the last probe.
    since_probe: u32,
}

const START: State = State { budget: MAX_YIELDS, gap: PROBE_EVERY, since_probe: 0 };

thread_local! {
    static STATE: Cell<State> = const { Cell::new(START) };
}

#[cfg(test)]
thread_local! {
    /// Yields taken by this thread (tests only).
    static TAKEN: Cell<u64> = const { Cell::new(0) };
}

/// The yields the calling thread has taken in waits so far (tests only).
#[cfg(test)]
pub(crate) fn taken() -> u64 {
    TAKEN.get()
}

/// The yields of one wait: taken one at a time, then settled once.
#[derive(Debug)]
pub(crate) struct Yields {
    left: u32,
    /// When the first yield was taken.
    first: Option<Instant>,
    /// A yield came back only after [`WINDOW`].
    lost_slice: bool,
    settled: bool,
}

impl Yields {
    /// No yields at all (pools that are not oversubscribed).
    pub(crate) const NONE: Yields = Yields { left: 0, first: None, lost_slice: false, settled: false };

    /// The yields this thread may spend on a wait: its budget, or a probe's
    /// single yield.
    pub(crate) fn start() -> Yields {
        let mut st = STATE.get();
        let left = if st.budget > 0 {
            st.budget
        } else if st.since_probe + 1 >= st.gap {
            st.since_probe = 0;
            1
        } else {
            st.since_probe += 1;
            0
        };
        STATE.set(st);
        Yields { left, ..Yields::NONE }
    }

    /// Yields the CPU if any yield is left and the yields have not lasted
    /// longer than [`WINDOW`]: `true` when it did.
    pub(crate) fn take(&mut self) -> bool {
        if self.left == 0 || self.lost_slice {
            return false;
        }
        let first = *self.first.get_or_insert_with(Instant::now);
        if first.elapsed() > WINDOW {
            return false;
        }
        self.left -= 1;
        let t = Instant::now();
        #[cfg(test)]
        TAKEN.set(TAKEN.get() + 1);
        std::thread::yield_now();
        self.lost_slice = t.elapsed() > WINDOW;
        true
    }

    /// The wait is over (its condition holds, or it found a job): updates
    /// this thread's state if any yield was used. Only the first call
    /// counts.
    pub(crate) fn settle(&mut self) {
        let Some(first) = self.first else { return };
        if self.settled {
            return;
        }
        self.settled = true;
        STATE.set(next(STATE.get(), first.elapsed() <= SHORT, self.lost_slice));
    }
}

/// The state after a wait that yielded: `paid` (it was short), or not;
/// `lost_slice` when a yield came back only after the window.
fn next(st: State, paid: bool, lost_slice: bool) -> State {
    if lost_slice {
        State { budget: 0, gap: (st.gap * 2).min(MAX_PROBE_GAP), since_probe: 0 }
    } else if paid {
        State { budget: (2 * st.budget + 1).min(MAX_YIELDS), gap: PROBE_EVERY, since_probe: 0 }
    } else {
        State { budget: st.budget / 2, ..st }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(budget: u32, gap: u32, since_probe: u32) {
        STATE.set(State { budget, gap, since_probe });
    }

    /// Yields one wait takes.
    fn spend(y: &mut Yields) -> u32 {
        let mut n = 0;
        while y.take() {
            n += 1;
        }
        n
    }

    #[test]
    fn failures_halve_the_budget_and_successes_regrow_it() {
        let st = START;
        let halved = next(st, false, false);
        assert_eq!(halved.budget, MAX_YIELDS / 2);
        let mut s = halved;
        for _ in 0..8 {
            s = next(s, false, false);
        }
        assert_eq!(s.budget, 0);
        let mut s = State { budget: 1, ..START };
        for want in [3, 7, 15, MAX_YIELDS, MAX_YIELDS] {
            s = next(s, true, false);
            assert_eq!(s.budget, want);
        }
    }

    #[test]
    fn a_lost_slice_closes_the_window_and_widens_the_probe_gap() {
        let mut s = START;
        for want in [32, 64, 128, 256, 512, 1024, 1024] {
            s = next(s, true, true);
            assert_eq!((s.budget, s.gap), (0, want));
        }
        // A probe that pays reopens the window and resets the gap.
        s = next(s, true, false);
        assert_eq!((s.budget, s.gap), (1, PROBE_EVERY));
    }

    #[test]
    fn a_wait_takes_its_budget_and_settles_once() {
        std::thread::spawn(|| {
            set(4, PROBE_EVERY, 0);
            let mut y = Yields::start();
            let n = spend(&mut y);
            // All of them, unless the machine is so loaded that a yield
            // lost a time slice or the window closed.
            assert!(n == 4 || y.lost_slice || y.first.unwrap().elapsed() > WINDOW);
            // Pretend the wait lasted long: a failure halves the budget.
            y.first = Some(Instant::now() - 2 * SHORT);
            y.lost_slice = false;
            y.settle();
            assert_eq!(STATE.get().budget, 2);
            y.settle();
            assert_eq!(STATE.get().budget, 2);
            // A short wait that yielded grows it.
            let mut y = Yields::start();
            assert!(y.take());
            // However long the yield took on a loaded machine.
            y.first = Some(Instant::now());
            y.lost_slice = false;
            y.settle();
            assert_eq!(STATE.get().budget, 5);
            // A wait that used no yield leaves the state alone.
            let mut y = Yields::start();
            y.settle();
            assert_eq!(STATE.get(), State { budget: 5, gap: PROBE_EVERY, since_probe: 0 });
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_zero_budget_probes_once_per_gap() {
        std::thread::spawn(|| {
            set(0, 64, 0);
            let mut probes = 0;
            for _ in 0..4 * 64 {
                let mut y = Yields::start();
                let n = spend(&mut y);
                assert!(n <= 1);
                probes += n;
                // Settled as a long wait without a lost slice: the budget
                // stays 0.
                if let Some(t) = y.first.as_mut() {
                    *t = Instant::now() - 2 * SHORT;
                }
                y.lost_slice = false;
                y.settle();
            }
            assert_eq!(probes, 4);
        })
        .join()
        .unwrap();
    }
}
