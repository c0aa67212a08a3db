//! BOTS `sort` (Cilk's cilksort): a parallel merge sort. A slice is split
//! in four quarters, sorted in parallel, then merged pairwise in parallel
//! into the scratch slice and merged back; each merge is itself parallel:
//! the middle element of the longer run is located in the shorter one by
//! binary search, and the two halves are merged as two tasks. Below `grain`
//! elements, sorting is a sequential quicksort (`sort_unstable`) and merging
//! a sequential merge. Checked: the output is sorted and is a permutation of
//! the input (an order-independent checksum of hashed elements).

use super::rng::{mix, Rng};
use super::{Fork, Kernel, Size};

/// Sorts `len` random 32-bit keys.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Cilksort {
    /// Keys.
    pub len: usize,
    /// Sequential sort and merge below this many elements.
    pub grain: usize,
}

/// The keys to sort, scratch space, and the checksum of the keys.
pub struct Input {
    data: Vec<u32>,
    tmp: Vec<u32>,
    checksum: u64,
}

/// An order-independent checksum: the wrapping sum of the hashed keys.
fn checksum(v: &[u32]) -> u64 {
    v.iter().fold(0u64, |s, &x| s.wrapping_add(mix(x as u64)))
}

/// Sorts `data`, using `tmp` (same length) as scratch.
fn sort<F: Fork>(f: &F, data: &mut [u32], tmp: &mut [u32], grain: usize) {
    let n = data.len();
    if n <= grain.max(4) {
        data.sort_unstable();
        return;
    }
    let (q1, q2, q3) = (n / 4, n / 2, n / 2 + n / 4);
    {
        let (d01, d23) = data.split_at_mut(q2);
        let (d0, d1) = d01.split_at_mut(q1);
        let (d2, d3) = d23.split_at_mut(q3 - q2);
        let (t01, t23) = tmp.split_at_mut(q2);
        let (t0, t1) = t01.split_at_mut(q1);
        let (t2, t3) = t23.split_at_mut(q3 - q2);
        f.join(
            || f.join(|| sort(f, d0, t0, grain), || sort(f, d1, t1, grain)),
            || f.join(|| sort(f, d2, t2, grain), || sort(f, d3, t3, grain)),
        );
    }
    {
        let (d01, d23) = data.split_at(q2);
        let (t01, t23) = tmp.split_at_mut(q2);
        f.join(
            || merge(f, &d01[..q1], &d01[q1..], t01, grain),
            || merge(f, &d23[..q3 - q2], &d23[q3 - q2..], t23, grain),
        );
    }
    let (t01, t23) = tmp.split_at(q2);
    merge(f, t01, t23, data, grain);
}

/// Merges the sorted runs `a` and `b` into `dst` (of their total length).
fn merge<F: Fork>(f: &F, a: &[u32], b: &[u32], dst: &mut [u32], grain: usize) {
    debug_assert_eq!(a.len() + b.len(), dst.len());
    if a.len() < b.len() {
        return merge(f, b, a, dst, grain);
    }
    if dst.len() <= grain.max(4) || b.is_empty() {
        merge_seq(a, b, dst);
        return;
    }
    let mid = a.len() / 2;
    let pos = b.partition_point(|&x| x < a[mid]);
    let (left, right) = dst.split_at_mut(mid + pos);
    f.join(|| merge(f, &a[..mid], &b[..pos], left, grain), || merge(f, &a[mid..], &b[pos..], right, grain));
}

fn merge_seq(a: &[u32], b: &[u32], dst: &mut [u32]) {
    let (mut i, mut j) = (0, 0);
    for d in dst.iter_mut() {
        if j == b.len() || (i < a.len() && a[i] <= b[j]) {
            *d = a[i];
            i += 1;
        } else {
            *d = b[j];
            j += 1;
        }
    }
}

impl Kernel for Cilksort {
    type Input = Input;
    type Output = ();
    const NAME: &'static str = "cilksort";

    fn new(size: Size, grain: Option<usize>) -> Cilksort {
        let len = match size {
            Size::Small => 20_000,
            Size::Full => 16 << 20,
        };
        let default = if size == Size::Small { 256 } else { 2048 };
        Cilksort { len, grain: grain.unwrap_or(default) }
    }

    fn describe(&self) -> String {
        format!("sort {} random u32 keys, sequential below {} elements", self.len, self.grain)
    }

    fn input(&self) -> Input {
        let mut rng = Rng::new(0x5eed_0001);
        let data: Vec<u32> = (0..self.len).map(|_| rng.next_u64() as u32).collect();
        let checksum = checksum(&data);
        Input { data, tmp: vec![0; self.len], checksum }
    }

    fn run<F: Fork>(&self, fork: &F, input: &mut Input) {
        sort(fork, &mut input.data, &mut input.tmp, self.grain);
    }

    fn check(&self, input: &Input, _: &(), _: &()) -> Result<(), String> {
        if let Some(i) = input.data.windows(2).position(|w| w[0] > w[1]) {
            return Err(format!("not sorted at index {i}: {} > {}", input.data[i], input.data[i + 1]));
        }
        if checksum(&input.data) != input.checksum {
            return Err("the output is not a permutation of the input (checksum differs)".into());
        }
        Ok(())
    }
}
