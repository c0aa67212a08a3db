//! BOTS `floorplan`: branch and bound over cell placements. Cells are
//! placed one after another on a 64×64 grid; each cell has a few alternative
//! shapes (w×h) and goes next to the previous cell, to its right (top- or
//! bottom-aligned) or below it (left- or right-aligned), without overlapping
//! any placed cell. The cost is the area of the bounding box; a partial
//! placement whose bounding box is already no smaller than the best complete
//! one known (shared by all tasks, updated with `fetch_min`) is pruned. One
//! task per (shape, position) tried, each with its own copy of the grid (a
//! bit mask per row); placements of cells from `cutoff` on are searched
//! sequentially.
//!
//! The cells come from a fixed random stream. Checked: the optimal area
//! equals the sequential run's, and the best placement found is valid (shapes
//! of the cells, adjacency, no overlap, bounding box = the area reported).

use super::rng::Rng;
use super::{Fork, Kernel, Size};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Grid rows and columns (a row is a `u64` bit mask).
const GRID: usize = 64;
/// At most this many cells.
pub const MAX_CELLS: usize = 32;

/// Branch and bound over `cells` cells; sequential from cell `cutoff` on.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Floorplan {
    /// Cells to place (at most [`MAX_CELLS`]).
    pub cells: usize,
    /// Cells placed from which the search is sequential (0: no cutoff).
    pub cutoff: usize,
}

/// A placed cell.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rect {
    x: u8,
    y: u8,
    w: u8,
    h: u8,
}

impl Rect {
    fn mask(&self) -> u64 {
        (u64::MAX >> (64 - self.w as u32)) << self.x
    }
}

/// The cells' alternative shapes (w, h).
pub struct Input {
    shapes: Vec<Vec<(u8, u8)>>,
}

/// The best area, the placement achieving it, and the placements visited.
#[derive(Debug)]
pub struct Solution {
    /// Area of the bounding box.
    pub area: u64,
    /// One placement of that area.
    pub placement: Vec<Rect>,
    /// Partial placements visited (varies with the runtime: pruning depends on timing).
    pub visited: u64,
}

/// The search's shared state.
struct Search<'a> {
    shapes: &'a [Vec<(u8, u8)>],
    cutoff: usize,
    best: AtomicU64,
    best_placement: Mutex<Vec<Rect>>,
}

/// A partial placement: occupied grid, bounding box, cells placed so far.
#[derive(Clone, Copy)]
struct State {
    grid: [u64; GRID],
    max_x: u8,
    max_y: u8,
    placed: [Rect; MAX_CELLS],
}

impl State {
    fn fits(&self, r: Rect) -> bool {
        let (x, y, w, h) = (r.x as usize, r.y as usize, r.w as usize, r.h as usize);
        x + w <= GRID && y + h <= GRID && self.grid[y..y + h].iter().all(|row| row & r.mask() == 0)
    }

    fn with(&self, k: usize, r: Rect) -> State {
        let mut s = *self;
        for row in &mut s.grid[r.y as usize..(r.y + r.h) as usize] {
            *row |= r.mask();
        }
        s.max_x = s.max_x.max(r.x + r.w);
        s.max_y = s.max_y.max(r.y + r.h);
        s.placed[k] = r;
        s
    }

    fn area(&self) -> u64 {
        self.max_x as u64 * self.max_y as u64
    }
}

/// The positions of a `w`×`h` cell next to `prev`: right of it (top- or
/// bottom-aligned) or below it (left- or right-aligned).
fn positions(prev: Rect, (w, h): (u8, u8)) -> impl Iterator<Item = Rect> {
    let (px, py, pw, ph) = (prev.x as i32, prev.y as i32, prev.w as i32, prev.h as i32);
    let (wi, hi) = (w as i32, h as i32);
    let all = [(px + pw, py), (px + pw, py + ph - hi), (px, py + ph), (px + pw - wi, py + ph)];
    all.into_iter().enumerate().filter_map(move |(i, (x, y))| {
        let dup = all[..i].contains(&(x, y));
        (x >= 0 && y >= 0 && !dup).then_some(Rect { x: x as u8, y: y as u8, w, h })
    })
}

impl Search<'_> {
    /// Places cells `k..`, given `state`; returns the placements visited.
    fn place<F: Fork>(&self, f: &F, k: usize, state: &State) -> u64 {
        if state.area() >= self.best.load(Ordering::Relaxed) {
            return 1;
        }
        if k == self.shapes.len() {
            let area = state.area();
            if self.best.fetch_min(area, Ordering::Relaxed) > area {
                let mut best = self.best_placement.lock().expect("no panic while holding it");
                // Another task may have stored a better one in between.
                if best.is_empty() || bbox_area(&best) > area {
                    *best = state.placed[..k].to_vec();
                }
            }
            return 1;
        }
        let prev = state.placed[k - 1];
        let candidates: Vec<Rect> =
            self.shapes[k].iter().flat_map(|&s| positions(prev, s)).filter(|r| state.fits(*r)).collect();
        let try_one = |i: usize| self.place(f, k + 1, &state.with(k, candidates[i]));
        1 + if self.cutoff != 0 && k >= self.cutoff {
            (0..candidates.len()).map(try_one).sum()
        } else {
            f.sum(0..candidates.len(), &try_one)
        }
    }
}

fn bbox_area(p: &[Rect]) -> u64 {
    let x = p.iter().map(|r| r.x as u64 + r.w as u64).max().unwrap_or(0);
    let y = p.iter().map(|r| r.y as u64 + r.h as u64).max().unwrap_or(0);
    x * y
}

/// Whether `p` is a valid complete placement of cells with `shapes`.
fn valid(p: &[Rect], shapes: &[Vec<(u8, u8)>]) -> Result<(), String> {
    if p.len() != shapes.len() {
        return Err(format!("{} cells placed, {} expected", p.len(), shapes.len()));
    }
    for (k, r) in p.iter().enumerate() {
        if !shapes[k].contains(&(r.w, r.h)) {
            return Err(format!("cell {k} has shape {}×{}, not one of its own", r.w, r.h));
        }
        if k == 0 && (r.x, r.y) != (0, 0) {
            return Err("cell 0 is not at the origin".into());
        }
        if k > 0 && !positions(p[k - 1], (r.w, r.h)).any(|q| q == *r) {
            return Err(format!("cell {k} is not next to cell {}", k - 1));
        }
        let overlaps = |q: &Rect| r.x < q.x + q.w && q.x < r.x + r.w && r.y < q.y + q.h && q.y < r.y + r.h;
        if let Some(j) = p[..k].iter().position(overlaps) {
            return Err(format!("cells {j} and {k} overlap"));
        }
    }
    Ok(())
}

impl Kernel for Floorplan {
    type Input = Input;
    type Output = Solution;
    const NAME: &'static str = "floorplan";

    fn new(size: Size, grain: Option<usize>) -> Floorplan {
        let cells = match size {
            Size::Small => 8,
            Size::Full => 11,
        };
        Floorplan { cells, cutoff: grain.unwrap_or(0) }
    }

    fn describe(&self) -> String {
        let cut =
            if self.cutoff == 0 { "no cutoff".into() } else { format!("tasks for cells < {}", self.cutoff) };
        format!("{} cells, 2–4 shapes each, a task per (shape, position) tried, {cut}", self.cells)
    }

    /// Each cell: a random area of 3–20 units; its shapes are the most
    /// nearly square w×h (w, h ≤ 8) of that area or one more.
    fn input(&self) -> Input {
        assert!((1..=MAX_CELLS).contains(&self.cells), "floorplan: 1 to {MAX_CELLS} cells");
        let mut rng = Rng::new(0x5eed_0009);
        let shapes = (0..self.cells)
            .map(|_| loop {
                let area = 3 + rng.below(18) as u8;
                let mut s: Vec<(u8, u8)> = (1..=8u8)
                    .flat_map(|w| (1..=8u8).map(move |h| (w, h)))
                    .filter(|(w, h)| (area..=area + 1).contains(&(w * h)))
                    .collect();
                s.sort_by_key(|(w, h)| (w.abs_diff(*h), *w));
                s.truncate(4);
                if s.len() >= 2 {
                    break s;
                }
            })
            .collect();
        Input { shapes }
    }

    fn run<F: Fork>(&self, fork: &F, input: &mut Input) -> Solution {
        let search = Search {
            shapes: &input.shapes,
            cutoff: self.cutoff,
            best: AtomicU64::new(u64::MAX),
            best_placement: Mutex::new(Vec::new()),
        };
        let empty = State { grid: [0; GRID], max_x: 0, max_y: 0, placed: [Rect::default(); MAX_CELLS] };
        let firsts: Vec<Rect> = input.shapes[0].iter().map(|&(w, h)| Rect { x: 0, y: 0, w, h }).collect();
        let visited = fork.sum(0..firsts.len(), &|i| search.place(fork, 1, &empty.with(0, firsts[i])));
        let area = search.best.load(Ordering::Relaxed);
        Solution { area, placement: search.best_placement.into_inner().expect("no panic"), visited }
    }

    fn check(&self, input: &Input, out: &Solution, reference: &Solution) -> Result<(), String> {
        valid(&out.placement, &input.shapes)?;
        if bbox_area(&out.placement) != out.area {
            return Err(format!(
                "best placement has area {}, reported {}",
                bbox_area(&out.placement),
                out.area
            ));
        }
        if out.area != reference.area {
            return Err(format!(
                "optimal area {} differs from the sequential run's {}",
                out.area, reference.area
            ));
        }
        Ok(())
    }
}
