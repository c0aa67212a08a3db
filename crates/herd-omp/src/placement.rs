//! Thread placement by `proc_bind` (OpenMP 5.1 §2.6.2): which place each
//! member of a region runs on, and each member's place partition
//! (`place-partition-var`, the places its own nested regions use).
//!
//! **Arithmetic** ([`assign`]): from the region's policy, the encountering
//! thread's partition (a contiguous range of the place list), the master's
//! place, the team size `T` and the member number `i` — O(1) per member, so
//! each member computes its own place; nobody loops over the team.
//! * `primary`: every member on the master's place; partition unchanged.
//! * `close` (and `true`): with `T <= P` places in the partition, member `i`
//!   on the `i`-th place after the master's (wrapping inside the partition);
//!   with `T > P`, consecutive members share a place: the first `T mod P`
//!   places (from the master's) hold `ceil(T/P)` members, the others
//!   `floor(T/P)`. Partition unchanged.
//! * `spread`: with `T <= P`, the partition is cut into `T` contiguous
//!   subpartitions (the first `P mod T` one place longer); member `i` gets
//!   the `i`-th subpartition after the master's (the one holding its place)
//!   as its partition, and its first place (the master keeps its own place);
//!   with `T > P`, every place is a subpartition of its own, filled as
//!   `close` fills them.
//!
//! **Binding** ([`enter_member`]): each member pins *itself*
//! (`sched_setaffinity` of the calling thread) and only when its place
//! differs from the one it is known to be bound to (a per-thread word); herd's
//! persistent participants keep their place region after region, so repeated
//! regions make no system call. Placement applies when the root pool binds
//! threads (`OMP_PROC_BIND` / `OMP_PLACES` given) and the region's policy is
//! not `false`; a thread never pinned yet whose place is asked for is pinned
//! to the first place of its partition (as libgomp's constructor pins the
//! initial thread to the first place).

use crate::icv::ProcBind;
use std::cell::Cell;
use std::sync::OnceLock;

/// A contiguous range of places: `off .. off + len` of the place list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Partition {
    pub off: u32,
    pub len: u32,
}

/// Where member `i` of a team of `t` runs, and its partition, under `bind`
/// (`False` is not a placement: the caller skips it), given the encountering
/// thread's partition `part` (non-empty) and place `master` (inside it).
pub(crate) fn assign(bind: ProcBind, part: Partition, master: u32, t: usize, i: usize) -> (u32, Partition) {
    debug_assert!(part.len > 0 && master >= part.off && master < part.off + part.len && i < t);
    let p = part.len as usize;
    // The `k`-th place after the master's, wrapping inside the partition.
    let after = |k: usize| part.off + (((master - part.off) as usize + k) % p) as u32;
    // Consecutive members sharing places when there are more than places:
    // which place (counted from the master's) holds member `i`.
    let grouped = |i: usize| herd::partition::block_owner(t as u64, i as u64, p as u64) as usize;
    match bind {
        ProcBind::False | ProcBind::Primary => (master, part),
        ProcBind::True | ProcBind::Close => {
            let k = if t <= p { i } else { grouped(i) };
            (after(k), part)
        }
        ProcBind::Spread if t > p => {
            let place = after(grouped(i));
            (place, Partition { off: place, len: 1 })
        }
        ProcBind::Spread => {
            // Subpartition j: s + 1 places for j < rest, else s.
            let (s, rest) = (p / t, p % t);
            let start = |j: usize| if j < rest { j * (s + 1) } else { rest * (s + 1) + (j - rest) * s };
            let len = |j: usize| if j < rest { s + 1 } else { s };
            let m = (master - part.off) as usize;
            let jm = if m < rest * (s + 1) { m / (s + 1) } else { rest + (m - rest * (s + 1)) / s };
            let j = (jm + i) % t;
            let sub = Partition { off: part.off + start(j) as u32, len: len(j) as u32 };
            let place = if i == 0 { master } else { sub.off };
            (place, sub)
        }
    }
}

/// The place list (OS CPU numbers of each place) when OpenMP binds threads;
/// `None` when binding is off: no `OMP_PROC_BIND` / `OMP_PLACES` (whatever
/// herd's own pinning of its pool, OpenMP then reports no place, as
/// libgomp does), `OMP_PROC_BIND=false`, or a pool herd could not bind.
pub(crate) fn places() -> Option<&'static [Vec<u32>]> {
    static PLACES: OnceLock<Option<Vec<Vec<u32>>>> = OnceLock::new();
    PLACES
        .get_or_init(|| {
            let g = crate::runtime::global();
            if g.bind_list.iter().chain([&g.initial.bind]).all(|&b| b == ProcBind::False) {
                return None;
            }
            let info = crate::runtime::root(0).pool.info();
            (info.bound && !info.places.is_empty()).then_some(info.places)
        })
        .as_deref()
}

thread_local! {
    /// The place this thread pinned itself to (-1: none yet).
    static BOUND: Cell<i32> = const { Cell::new(-1) };
}

/// The whole place list as a partition.
fn whole(places: &[Vec<u32>]) -> Partition {
    Partition { off: 0, len: places.len() as u32 }
}

/// The calling thread's partition as stored in its state (`len` 0: the
/// whole list).
pub(crate) fn partition_of(stored: Partition, places: &[Vec<u32>]) -> Partition {
    if stored.len == 0 {
        whole(places)
    } else {
        stored
    }
}

/// The place the calling thread runs on: pinned now to the first place of
/// `part` if it never was.
pub(crate) fn current_place(part: Partition, places: &[Vec<u32>]) -> u32 {
    let b = BOUND.with(|b| b.get());
    if b >= 0 && (b as usize) < places.len() {
        return b as u32;
    }
    pin(part.off, places);
    part.off
}

/// Pins the calling thread to `place` (a warning if the system refuses; the
/// thread then runs where it was, and is not counted as bound).
fn pin(place: u32, places: &[Vec<u32>]) {
    // SAFETY: `cpu_set_t` is plain data; all-zero is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &cpu in &places[place as usize] {
        if (cpu as usize) < libc::CPU_SETSIZE as usize {
            // SAFETY: `cpu` is below CPU_SETSIZE, inside `set`.
            unsafe { libc::CPU_SET(cpu as usize, &mut set) };
        }
    }
    // SAFETY: pid 0 is the calling thread; `set` is a valid cpu_set_t of
    // the size given.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if rc == 0 {
        BOUND.with(|b| b.set(place as i32));
    } else {
        static SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
        if !SAID.swap(true, std::sync::atomic::Ordering::Relaxed) {
            eprintln!(
                "herd-omp: warning: cannot bind a thread to place {place} ({}); it runs unbound",
                std::io::Error::last_os_error()
            );
        }
        BOUND.with(|b| b.set(-1));
    }
}

/// What a region's members need to place themselves: the policy, the
/// encountering thread's partition and place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Layout {
    pub bind: ProcBind,
    pub part: Partition,
    pub master: u32,
}

/// The layout of a region the calling thread starts with policy `clause`
/// (`flags & 7` of `GOMP_parallel`; 0: none) under `bind_var` (its task's
/// `bind-var`), its stored partition `stored`; `None` when nothing is placed.
pub(crate) fn layout(clause: u32, bind_var: ProcBind, stored: Partition) -> Option<Layout> {
    if bind_var == ProcBind::False {
        return None;
    }
    let places = places()?;
    let bind = ProcBind::from_raw(clause).unwrap_or(bind_var);
    let part = partition_of(stored, places);
    let master = current_place(part, places);
    // A master outside its partition (bound before by another policy):
    // the partition's first place stands for it.
    let master = if master >= part.off && master < part.off + part.len { master } else { part.off };
    Some(Layout { bind, part, master })
}

/// Member `i` of `t` places itself under `l`; returns its partition.
pub(crate) fn enter_member(l: &Layout, t: usize, i: usize) -> Partition {
    let Some(places) = places() else { return l.part };
    let (place, part) = assign(l.bind, l.part, l.master, t, i);
    if BOUND.with(|b| b.get()) != place as i32 {
        pin(place, places);
    }
    part
}

/// The place the calling thread is bound to, if binding is on.
pub(crate) fn place_num(stored: Partition) -> Option<u32> {
    let places = places()?;
    Some(current_place(partition_of(stored, places), places))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ProcBind::*;

    fn whole(n: u32) -> Partition {
        Partition { off: 0, len: n }
    }

    /// Members per place of a team under `bind` on `part`.
    fn per_place(bind: ProcBind, part: Partition, master: u32, t: usize, places: usize) -> Vec<usize> {
        let mut c = vec![0; places];
        for i in 0..t {
            let (p, sub) = assign(bind, part, master, t, i);
            assert!(
                p >= part.off && p < part.off + part.len,
                "{bind:?} t={t} i={i}: place {p} outside {part:?}"
            );
            assert!(
                p >= sub.off && p < sub.off + sub.len,
                "{bind:?} t={t} i={i}: place {p} outside its {sub:?}"
            );
            c[p as usize] += 1;
        }
        c
    }

    #[test]
    fn primary_puts_everyone_on_the_master_place() {
        for t in 1..=130 {
            for i in 0..t {
                assert_eq!(assign(Primary, whole(8), 3, t, i), (3, whole(8)));
            }
        }
    }

    #[test]
    fn close_fills_places_in_order_from_the_master() {
        for p in [1u32, 2, 3, 8, 64] {
            for t in 1..=130usize {
                for master in [0, p - 1, p / 2] {
                    let c = per_place(Close, whole(p), master, t, p as usize);
                    let (lo, hi) = (t / p as usize, t.div_ceil(p as usize));
                    assert!(c.iter().all(|&n| n == lo || n == hi), "p={p} t={t}: {c:?}");
                    assert_eq!(assign(Close, whole(p), master, t, 0).0, master);
                    if t <= p as usize {
                        for i in 0..t {
                            assert_eq!(assign(Close, whole(p), master, t, i).0, (master + i as u32) % p);
                        }
                    } else {
                        // Consecutive members share places, in order.
                        let mut prev = 0;
                        for i in 0..t {
                            let k = (assign(Close, whole(p), master, t, i).0 + p - master) % p;
                            assert!(k == prev || k == prev + 1, "p={p} t={t} i={i}");
                            prev = k;
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn spread_cuts_the_partition() {
        for p in [1u32, 2, 3, 8, 64] {
            for t in 1..=130usize {
                for master in [0, p - 1, p / 3] {
                    let c = per_place(Spread, whole(p), master, t, p as usize);
                    let mut covered = vec![0; p as usize];
                    for i in 0..t {
                        let (place, sub) = assign(Spread, whole(p), master, t, i);
                        if t <= p as usize {
                            // Subpartitions tile the partition, sizes floor/ceil(P/T).
                            let len = sub.len as usize;
                            assert!(len == p as usize / t || len == (p as usize).div_ceil(t));
                            for q in sub.off..sub.off + sub.len {
                                covered[q as usize] += 1;
                            }
                            if i > 0 {
                                assert_eq!(place, sub.off);
                            }
                        } else {
                            assert_eq!(sub, Partition { off: place, len: 1 });
                        }
                    }
                    assert_eq!(assign(Spread, whole(p), master, t, 0).0, master);
                    if t <= p as usize {
                        assert!(covered.iter().all(|&n| n == 1), "p={p} t={t}: {covered:?}");
                        assert!(c.iter().all(|&n| n <= 1));
                    } else {
                        let (lo, hi) = (t / p as usize, t.div_ceil(p as usize));
                        assert!(c.iter().all(|&n| n == lo || n == hi), "p={p} t={t}: {c:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn spread_examples() {
        // 8 places, 4 threads: subpartitions {0,1} {2,3} {4,5} {6,7}.
        let got: Vec<_> = (0..4).map(|i| assign(Spread, whole(8), 0, 4, i)).collect();
        assert_eq!(
            got,
            vec![
                (0, Partition { off: 0, len: 2 }),
                (2, Partition { off: 2, len: 2 }),
                (4, Partition { off: 4, len: 2 }),
                (6, Partition { off: 6, len: 2 }),
            ]
        );
        // The master on place 5: its subpartition {4,5} comes first.
        let got: Vec<_> = (0..4).map(|i| assign(Spread, whole(8), 5, 4, i).0).collect();
        assert_eq!(got, vec![5, 6, 0, 2]);
    }

    #[test]
    fn nested_spread_narrows_and_close_stays_inside() {
        // 64 places; spread 4 then spread 4 inside: 16 distinct places, each
        // inner team inside its outer member's 16 places.
        let mut seen = std::collections::BTreeSet::new();
        for i in 0..4 {
            let (place, part) = assign(Spread, whole(64), 0, 4, i);
            assert_eq!(part, Partition { off: 16 * i as u32, len: 16 });
            for j in 0..4 {
                let (q, inner) = assign(Spread, part, place, 4, j);
                assert_eq!(inner.len, 4);
                assert!(q >= part.off && q < part.off + 16);
                assert!(seen.insert(q));
                // Close inside the innermost partition stays inside it.
                for k in 0..6 {
                    let (r, _) = assign(Close, inner, q, 6, k);
                    assert!(r >= inner.off && r < inner.off + inner.len);
                }
            }
        }
        assert_eq!(seen.len(), 16);
        // 130 threads over a 3-place partition in the middle of 8.
        let part = Partition { off: 4, len: 3 };
        let c = per_place(Close, part, 5, 130, 8);
        assert_eq!(c.iter().sum::<usize>(), 130);
        assert!(c[4..7].iter().all(|&n| n == 43 || n == 44) && c[..4].iter().all(|&n| n == 0));
    }
}
