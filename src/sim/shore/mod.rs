//! Where the water ends (§8): wall cells inside the canvas, from obstacles and a mask, and
//! what each edge does to a wave (reflect, absorb, wrap).
//!
//! A [`Shore`] is made once per render, before the first frame. An open shore (no walls, every
//! edge reflecting) changes nothing anywhere: the water and the drawing take the same code path
//! as a scene without the keys. Otherwise the water's step runs as always over the interior and
//! the shore then finishes it: the cells of wrapped edges are stepped with their neighbours
//! taken across the canvas, wall cells are set back to 0, and absorbing border cells take their
//! first-order absorbing value. Drawing does the same: walls are drawn unmoved, and pixels whose
//! heights or samples cross an absorbing or wrapped edge are drawn by the exact formulas.

mod walls;

pub(crate) use walls::mask_error;

pub use walls::{Walls, mask_brightness};

use std::sync::Arc;

use super::field::Cell;
use super::timeline::Drop;
use crate::base::error::Result;
use crate::base::limits::DEFAULT_BUDGET;
use crate::base::picture::Given;
use crate::scene::{Edge, Edges, Scene};

/// The walls and the edges of one canvas.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shore {
    width: usize,
    height: usize,
    edges: Edges,
    walls: Option<Arc<Walls>>,
    /// The absorbing cells of the left and right edges, each with its inward neighbour in the
    /// same row, by row.
    absorbing_sides: ByRow<(u32, u32)>,
    /// The absorbing cells of the top and bottom edges, whose inward neighbours lie in the next
    /// row in: they are finished once every row is (see [`Shore::finish_ends`]).
    absorbing_ends: Vec<(u32, u32)>,
    /// Each cell of a wrapped edge with its eight neighbours N, S, W, E, NW, NE, SW, SE taken
    /// across the canvas, by row: the cells the interior step leaves out but that are no border
    /// cells, since their axis wraps.
    wrapped: ByRow<(u32, [u32; 8])>,
    /// The walls' runs within each row (cell ranges), when there are at most one per
    /// [`CELLS_PER_LISTED_RUN`] cells; otherwise the bits are scanned.
    wall_runs: Option<ByRow<(u32, u32)>>,
}

/// What a water model does to the cells the shore finishes after each step (§8), which
/// the shore visits in its order ([`Shore::finish_rows`], [`Shore::finish_ends`]). Indices are
/// cells of the canvas.
pub(crate) trait Finish {
    /// Steps cell `i` of a wrapped edge, with its neighbours N, S, W, E, NW, NE, SW, SE taken
    /// across the canvas.
    fn wrapped(&mut self, i: usize, around: [u32; 8]);
    /// Sets the wall cells among the rows being finished back to 0.
    fn walls(&mut self, shore: &Shore);
    /// Gives absorbing border cell `b` its first-order value from its inward neighbour `i`.
    fn absorbed(&mut self, b: usize, i: usize);
}

/// Wall runs are listed (8 bytes each) only up to one per this many cells, so that the list
/// never takes more memory than the walls' bits (see [`Shore::bytes_for`]): a mask of fine noise
/// is scanned bit by bit instead.
const CELLS_PER_LISTED_RUN: usize = 64;

/// Items of a canvas listed once, grouped by row, so that the part of a water step that runs
/// over a few rows can finish just those rows while they are in the cache.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct ByRow<T> {
    items: Vec<T>,
    /// `starts[y]..starts[y + 1]` are row `y`'s items.
    starts: Vec<u32>,
}

impl<T> ByRow<T> {
    /// `items` (each with its row), stably ordered by row, for a canvas of `height` rows.
    fn new(height: usize, mut items: Vec<(usize, T)>) -> ByRow<T> {
        items.sort_by_key(|&(y, _)| y);
        let mut starts = Vec::with_capacity(height + 1);
        let mut next = 0;
        for y in 0..=height {
            while next < items.len() && items[next].0 < y {
                next += 1;
            }
            starts.push(next as u32);
        }
        ByRow { items: items.into_iter().map(|(_, item)| item).collect(), starts }
    }

    /// The items of `rows`.
    #[inline]
    fn rows(&self, rows: std::ops::Range<usize>) -> &[T] {
        match (self.starts.get(rows.start), self.starts.get(rows.end)) {
            (Some(&a), Some(&b)) => &self.items[a as usize..b as usize],
            _ => &[],
        }
    }
}

impl Shore {
    /// The plain rectangle of §4: no walls, every edge reflecting.
    pub fn open(width: usize, height: usize) -> Shore {
        Shore {
            width,
            height,
            edges: Edges::default(),
            walls: None,
            absorbing_sides: ByRow::default(),
            absorbing_ends: Vec::new(),
            wrapped: ByRow::default(),
            wall_runs: None,
        }
    }

    /// The scene's shore within the default memory budget (see [`Shore::for_scene_within`]).
    pub fn for_scene(scene: &Scene) -> Result<Shore> {
        Shore::for_scene_within(scene, DEFAULT_BUDGET)
    }

    /// The scene's walls (its obstacles and its mask, fitted like the background) and edges. A
    /// mask image whose decode would take more than a quarter of `budget` is refused.
    pub fn for_scene_within(scene: &Scene, budget: u64) -> Result<Shore> {
        Shore::for_scene_given(scene, budget, &Given::none())
    }

    /// [`Shore::for_scene_within`], its mask read from `given` where it is there.
    pub fn for_scene_given(scene: &Scene, budget: u64, given: &Given) -> Result<Shore> {
        let (width, height) = (scene.width as usize, scene.height as usize);
        let spec = &scene.shore;
        let walls = if spec.has_walls() {
            let mut walls = Walls::new(width, height);
            for obstacle in &spec.obstacles {
                walls.add(obstacle);
            }
            if let Some(mask) = &spec.mask {
                walls.add_mask(mask, scene.background.fit, budget, given)?;
            }
            Some(Arc::new(walls))
        } else {
            None
        };
        Ok(Shore::new(width, height, spec.edges, walls))
    }

    /// A shore of these edges and walls.
    pub fn new(width: usize, height: usize, edges: Edges, walls: Option<Arc<Walls>>) -> Shore {
        let mut shore = Shore::open(width, height);
        (shore.edges, shore.walls) = (edges, walls);
        let (sides, ends) = shore.absorbing_cells();
        shore.absorbing_sides = ByRow::new(height, sides);
        shore.absorbing_ends = ends;
        shore.wrapped = ByRow::new(height, shore.wrapped_cells());
        shore.wall_runs = shore.walls.as_deref().and_then(|walls| walls.runs_by_row());
        shore
    }

    /// What a scene's walls and edges hold at most, for the memory estimate: the walls' bits,
    /// shared; and in each of two copies of the shore (the drawing's and the water's) the listed
    /// wall runs (at most a byte per 8 cells, see `CELLS_PER_LISTED_RUN`), the cells of
    /// absorbing and wrapped edges with their neighbours (44 bytes per border cell at most) and
    /// three row indexes.
    pub fn bytes_for(scene: &Scene) -> u64 {
        if scene.shore.is_open() {
            return 0;
        }
        let (w, h) = (u64::from(scene.width), u64::from(scene.height));
        let cells = w * h;
        let bits = if scene.shore.has_walls() { cells.div_ceil(8) } else { 0 };
        let runs = if scene.shore.has_walls() { cells / CELLS_PER_LISTED_RUN as u64 * 8 + 8 } else { 0 };
        let copy = runs + 2 * (w + h) * 44 + 3 * 4 * (h + 1);
        bits + 2 * copy
    }

    /// True when nothing differs from §4's rectangle.
    pub fn is_open(&self) -> bool {
        self.walls.is_none() && self.edges == Edges::default()
    }

    /// The canvas size, (width, height).
    pub fn size(&self) -> (usize, usize) {
        (self.width, self.height)
    }

    /// The edges.
    pub fn edges(&self) -> Edges {
        self.edges
    }

    /// The walls, when the scene has obstacles or a mask.
    pub fn walls(&self) -> Option<&Walls> {
        self.walls.as_deref()
    }

    fn wrap_x(&self) -> bool {
        self.edges.wrap_x()
    }

    fn wrap_y(&self) -> bool {
        self.edges.wrap_y()
    }

    /// True when some pixel samples across an edge by other rules than §5's clamp: then
    /// every pixel is drawn by the exact formulas.
    pub(crate) fn wraps(&self) -> bool {
        self.wrap_x() || self.wrap_y()
    }

    /// Whether a cell is a wall.
    pub fn is_wall(&self, index: usize) -> bool {
        self.walls.as_ref().is_some_and(|w| w.contains(index))
    }

    /// The absorbing border cells (not walls, not corners) and their inward neighbours: those
    /// of the left and right edges with their rows, and those of the top and bottom edges.
    #[allow(clippy::type_complexity)]
    fn absorbing_cells(&self) -> (Vec<(usize, (u32, u32))>, Vec<(u32, u32)>) {
        let (w, h) = (self.width, self.height);
        let at = |x: usize, y: usize| (y * w + x) as u32;
        let open = |&(b, _): &(u32, u32)| !self.is_wall(b as usize);
        // Along an edge, the cells that are border cells of that edge only: a corner (on two
        // edges, neither axis wrapping) stays 0.
        let rows = if self.wrap_y() { 0..h } else { 1..h - 1 };
        let columns = if self.wrap_x() { 0..w } else { 1..w - 1 };
        let mut sides = Vec::new();
        if self.edges.left == Edge::Absorb {
            sides.extend(rows.clone().map(|y| (y, (at(0, y), at(1, y)))));
        }
        if self.edges.right == Edge::Absorb {
            sides.extend(rows.map(|y| (y, (at(w - 1, y), at(w - 2, y)))));
        }
        sides.retain(|(_, cell)| open(cell));
        let mut ends = Vec::new();
        if self.edges.top == Edge::Absorb {
            ends.extend(columns.clone().map(|x| (at(x, 0), at(x, 1))));
        }
        if self.edges.bottom == Edge::Absorb {
            ends.extend(columns.map(|x| (at(x, h - 1), at(x, h - 2))));
        }
        ends.retain(open);
        (sides, ends)
    }

    /// The cells of wrapped edges (see [`Shore::finish_rows`]) with their neighbours, and their rows.
    fn wrapped_cells(&self) -> Vec<(usize, (u32, [u32; 8]))> {
        let (w, h) = (self.width as i64, self.height as i64);
        let at = |x: i64, y: i64| (y.rem_euclid(h) * w + x.rem_euclid(w)) as u32;
        let mut cells = Vec::new();
        let mut visit = |x: i64, y: i64| {
            let neighbours = [
                at(x, y - 1),
                at(x, y + 1),
                at(x - 1, y),
                at(x + 1, y),
                at(x - 1, y - 1),
                at(x + 1, y - 1),
                at(x - 1, y + 1),
                at(x + 1, y + 1),
            ];
            cells.push((y as usize, (at(x, y), neighbours)));
        };
        if self.wrap_x() {
            let rows = if self.wrap_y() { 0..h } else { 1..h - 1 };
            for y in rows {
                visit(0, y);
                visit(w - 1, y);
            }
        }
        if self.wrap_y() {
            for x in 1..w - 1 {
                visit(x, 0);
                visit(x, h - 1);
            }
        }
        cells
    }

    /// Finishes what the interior step leaves to the shore in `rows` (just stepped, while they
    /// are in the cache): the cells of wrapped edges, stepped with their neighbours across the
    /// canvas; the walls, back to 0; then the absorbing cells of the left and right edges. The
    /// top and bottom edges' absorbing cells wait for the rows next to them: see
    /// [`Shore::finish_ends`].
    pub(crate) fn finish_rows(&self, rows: std::ops::Range<usize>, model: &mut impl Finish) {
        for &(i, around) in self.wrapped.rows(rows.clone()) {
            model.wrapped(i as usize, around);
        }
        model.walls(self);
        for &(b, i) in self.absorbing_sides.rows(rows) {
            model.absorbed(b as usize, i as usize);
        }
    }

    /// Finishes the absorbing cells of the top and bottom edges, once every row of the step is
    /// done.
    pub(crate) fn finish_ends(&self, model: &mut impl Finish) {
        for &(b, i) in &self.absorbing_ends {
            model.absorbed(b as usize, i as usize);
        }
    }

    /// Sets every wall cell of `band` to 0: the band holds whole rows of a field from cell
    /// `first` on.
    #[inline]
    pub(crate) fn clear_walls<T: Copy + Default>(&self, band: &mut [T], first: usize) {
        let cells = first..first + band.len();
        self.for_each_wall_run(cells, |run| band[run.start - first..run.end - first].fill(T::default()));
    }

    /// Calls `run(a..b)` for each run of wall cells within `cells` (whole rows), in order, a
    /// run that crosses rows split at each row's end.
    #[inline]
    pub(crate) fn for_each_wall_run(&self, cells: std::ops::Range<usize>, mut run: impl FnMut(std::ops::Range<usize>)) {
        let Some(walls) = &self.walls else { return };
        match &self.wall_runs {
            Some(runs) => {
                let w = self.width.max(1);
                for &(a, b) in runs.rows(cells.start / w..cells.end / w) {
                    run(a as usize..b as usize);
                }
            }
            None => {
                for y in cells.start / self.width.max(1)..cells.end / self.width.max(1) {
                    walls.for_each_run(y * self.width..(y + 1) * self.width, &mut run);
                }
            }
        }
    }

    /// Calls `set(index)` for every cell a drop covers: strictly inside its circle, clipped at
    /// border cells (never moved), taken across a wrapped axis, and never a wall.
    pub fn for_each_drop_cell(&self, drop: &Drop, mut set: impl FnMut(usize)) {
        self.for_each_cell_within(drop.x, drop.y, drop.radius, |index, _| set(index));
    }

    /// Calls `set(index, d2)` for every cell at a squared distance `d2 < r²` from (x, y), as
    /// [`Shore::for_each_drop_cell`] takes them: clipped at border cells, taken across a wrapped
    /// axis, never a wall.
    pub fn for_each_cell_within(&self, x: i64, y: i64, r: i64, mut set: impl FnMut(usize, i64)) {
        let (w, h) = (self.width as i64, self.height as i64);
        let r2 = r * r;
        // The disc's cells along an axis: all of them when it wraps (taken modulo), else those
        // off the border.
        let span = |centre: i64, size: i64, wraps: bool| {
            if wraps {
                (centre - r + 1, centre + r - 1)
            } else {
                ((centre - r + 1).max(1), (centre + r - 1).min(size - 2))
            }
        };
        let (y_lo, y_hi) = span(y, h, self.wrap_y());
        let (x_lo, x_hi) = span(x, w, self.wrap_x());
        for py in y_lo..=y_hi {
            let dy = py - y;
            let row = py.rem_euclid(h) * w;
            for px in x_lo..=x_hi {
                let dx = px - x;
                let d2 = dx * dx + dy * dy;
                if d2 < r2 {
                    let index = (row + px.rem_euclid(w)) as usize;
                    if !self.is_wall(index) {
                        set(index, d2);
                    }
                }
            }
        }
    }

    /// The height at (x, y) for drawing, where (x, y) may be one cell outside the canvas: 0
    /// across a reflecting edge, the nearest border cell's across an absorbing one, the
    /// opposite side's across a wrapped one.
    #[inline]
    pub(crate) fn height_at<C: Cell>(&self, heights: &[C], x: i64, y: i64) -> i64 {
        let (w, h) = (self.width as i64, self.height as i64);
        let across = |v: i64, size: i64, low: Edge, high: Edge| -> Option<i64> {
            let edge = if v < 0 {
                low
            } else if v >= size {
                high
            } else {
                return Some(v);
            };
            match edge {
                Edge::Reflect => None,
                Edge::Absorb => Some(v.clamp(0, size - 1)),
                Edge::Wrap => Some(v.rem_euclid(size)),
            }
        };
        let (Some(x), Some(y)) =
            (across(x, w, self.edges.left, self.edges.right), across(y, h, self.edges.top, self.edges.bottom))
        else {
            return 0;
        };
        heights[(y * w + x) as usize].into()
    }

    /// The slopes `dx = h(x−1, y) − h(x+1, y)`, `dy = h(x, y−1) − h(x, y+1)` at a pixel.
    #[inline]
    pub(crate) fn slopes_at<C: Cell>(&self, heights: &[C], x: i64, y: i64) -> (i64, i64) {
        let h = |x, y| self.height_at(heights, x, y);
        (h(x - 1, y) - h(x + 1, y), h(x, y - 1) - h(x, y + 1))
    }

    /// The curvature `h(x−1, y) + h(x+1, y) + h(x, y−1) + h(x, y+1) − 4·h(x, y)` at a pixel.
    #[inline]
    pub(crate) fn curvature_at<C: Cell>(&self, heights: &[C], x: i64, y: i64) -> i64 {
        let h = |x, y| self.height_at(heights, x, y);
        h(x - 1, y) + h(x + 1, y) + h(x, y - 1) + h(x, y + 1) - 4 * h(x, y)
    }

    /// The background pixel a nearest-pixel sample at `(x + ox, y + oy)` reads: clamped to the
    /// canvas, or taken modulo along a wrapped axis.
    #[inline]
    pub(crate) fn source(&self, x: i64, y: i64) -> usize {
        let (w, h) = (self.width as i64, self.height as i64);
        let x = if self.wrap_x() { x.rem_euclid(w) } else { x.clamp(0, w - 1) };
        let y = if self.wrap_y() { y.rem_euclid(h) } else { y.clamp(0, h - 1) };
        (y * w + x) as usize
    }

    /// Finishes a band of a drawn frame (rows from `y0` of the canvas), drawn by §5's or
    /// §9's fast path, which clamps. Pixels whose result the edges change are drawn again by
    /// `pixel(x, y)`, the exact formulas: the border ring (its heights cross an edge), and
    /// where an axis wraps, every pixel whose sample might cross it: within `reach` of that
    /// edge, `reach` bounding how far the row's slopes move a sample (see [`Shore::reach`]).
    /// Wall pixels are their own background pixel, `unmoved(index)`.
    pub(crate) fn finish_band<P>(
        &self,
        out: &mut [P],
        y0: usize,
        reach: impl Fn(usize) -> [usize; 2],
        pixel: impl Fn(i64, i64) -> P,
        unmoved: impl Fn(usize) -> P,
    ) {
        let (w, h) = (self.width, self.height);
        let rows = out.len() / w;
        let redraw = |out: &mut [P], x: usize, y: usize| out[(y - y0) * w + x] = pixel(x as i64, y as i64);
        if self.edges != Edges::default() {
            for y in y0..y0 + rows {
                let [across, along] = reach(y).map(|d| d.saturating_add(1));
                let whole_row =
                    if self.wrap_y() { y < along || y.saturating_add(along) >= h } else { y == 0 || y == h - 1 };
                let ends = if self.wrap_x() { across.min(w) } else { 1 };
                if whole_row || 2 * ends >= w {
                    (0..w).for_each(|x| redraw(out, x, y));
                } else {
                    (0..ends).chain(w - ends..w).for_each(|x| redraw(out, x, y));
                }
            }
        }
        let first = y0 * w;
        self.for_each_wall_run(first..first + rows * w, |run| {
            for i in run {
                out[i - first] = unmoved(i);
            }
        });
    }

    /// How far, in whole pixels, the slopes of row `y` can move a sample along x and along y
    /// at most (with a pixel to spare for a bilinear neighbour): the largest slope of the row
    /// times R / 256. 0 when no axis wraps (the fast path's clamp is exact then).
    pub(crate) fn reach<C: Cell>(&self, heights: &[C], r: i64, y: usize) -> [usize; 2] {
        if !self.wraps() {
            return [0; 2];
        }
        self.steepest(heights, y).map(|d| usize::try_from(d.saturating_mul(r) / 256 + 2).unwrap_or(usize::MAX))
    }

    /// The largest |h(x−1, y) − h(x+1, y)| and |h(x, y−1) − h(x, y+1)| over the pixels of row `y`
    /// off the border columns (the border ring is drawn exactly anyway), rows taken modulo.
    fn steepest<C: Cell>(&self, heights: &[C], y: usize) -> [i64; 2] {
        let (w, h) = (self.width, self.height);
        let row = |y: usize| &heights[y * w..(y + 1) * w];
        let (up, mid, down) = (row((y + h - 1) % h), row(y), row((y + 1) % h));
        let across = mid.iter().zip(&mid[2..]).map(|(&a, &b)| (a.into() - b.into()).abs()).max().unwrap_or(0);
        let along = up.iter().zip(down).map(|(&a, &b)| (a.into() - b.into()).abs()).max().unwrap_or(0);
        [across, along]
    }
}

#[cfg(test)]
mod tests;
