//! Where the water ends (SPEC §8): wall cells inside the canvas, from obstacles and a mask, and
//! what each edge does to a wave (reflect, absorb, wrap).
//!
//! A [`Shore`] is made once per render, before the first frame. An open shore (no walls, every
//! edge reflecting) changes nothing anywhere: the water and the drawing take the same code path
//! as a scene without the keys. Otherwise the water's step runs as always over the interior and
//! the shore then finishes it: the cells of wrapped edges are stepped with their neighbours
//! taken across the canvas, wall cells are set back to 0, and absorbing border cells take their
//! first-order absorbing value. Drawing does the same: walls are drawn unmoved, and pixels whose
//! heights or samples cross an absorbing or wrapped edge are drawn by the exact formulas.

use std::path::Path;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::scene::{Edge, Edges, MaskSpec, Obstacle, Scene};
use crate::timeline::Drop;

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
    /// row in (see [`Shore::absorbing_ends`]).
    absorbing_ends: Vec<(u32, u32)>,
    /// Each cell of a wrapped edge with its eight neighbours across the canvas (see
    /// [`Shore::wrapped_in`]), by row.
    wrapped: ByRow<(u32, [u32; 8])>,
    /// The walls' runs within each row (cell ranges), when there are at most one per
    /// [`CELLS_PER_LISTED_RUN`] cells; otherwise the bits are scanned.
    wall_runs: Option<ByRow<(u32, u32)>>,
}

/// Wall runs are listed (8 bytes each) only up to one per this many cells, so that the list
/// never takes more memory than the walls' bits (see `budget`): a mask of fine noise is
/// scanned bit by bit instead.
pub const CELLS_PER_LISTED_RUN: usize = 64;

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

/// A set of canvas cells, one bit per cell, row-major.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Walls {
    width: usize,
    height: usize,
    bits: Vec<u64>,
    /// Obstacles added so far, and which of them (by that count) covered no cell of the canvas.
    added: usize,
    bare: Vec<usize>,
    /// Whether the obstacle being added has covered a cell yet.
    touched: bool,
}

impl Shore {
    /// The plain rectangle of SPEC §4: no walls, every edge reflecting.
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
        Shore::for_scene_within(scene, crate::budget::DEFAULT_BUDGET)
    }

    /// The scene's walls (its obstacles and its mask, fitted like the background) and edges. A
    /// mask image whose decode would take more than a quarter of `budget` is refused.
    pub fn for_scene_within(scene: &Scene, budget: u64) -> Result<Shore> {
        let (width, height) = (scene.width as usize, scene.height as usize);
        let spec = &scene.shore;
        let walls = if spec.has_walls() {
            let mut walls = Walls::new(width, height);
            for obstacle in &spec.obstacles {
                walls.add(obstacle);
            }
            if let Some(mask) = &spec.mask {
                walls.add_mask(mask, scene.background.fit, budget)?;
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

    /// True when nothing differs from SPEC §4's rectangle.
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

    /// True when some pixel samples across an edge by other rules than SPEC §5's clamp: then
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

    /// The absorbing cells (`b`, not walls) of the left and right edges in `rows`, each with
    /// its inward neighbour (`i`) in the same row.
    #[inline]
    pub(crate) fn absorbing_sides(&self, rows: std::ops::Range<usize>) -> &[(u32, u32)] {
        self.absorbing_sides.rows(rows)
    }

    /// The absorbing cells (`b`, not walls) of the top and bottom edges, each with its inward
    /// neighbour (`i`) in the next row in: they are finished once every row is.
    pub(crate) fn absorbing_ends(&self) -> &[(u32, u32)] {
        &self.absorbing_ends
    }

    /// The cells of wrapped edges in `rows`, each with its neighbours N, S, W, E, NW, NE, SW,
    /// SE taken across the canvas: the cells the interior step leaves out but that are no
    /// border cells, since their axis wraps.
    #[inline]
    pub(crate) fn wrapped_in(&self, rows: std::ops::Range<usize>) -> &[(u32, [u32; 8])] {
        self.wrapped.rows(rows)
    }

    /// The cells behind [`Shore::wrapped_in`], with their rows.
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
        let (w, h) = (self.width as i64, self.height as i64);
        let r = drop.radius;
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
        let (y_lo, y_hi) = span(drop.y, h, self.wrap_y());
        let (x_lo, x_hi) = span(drop.x, w, self.wrap_x());
        for py in y_lo..=y_hi {
            let dy = py - drop.y;
            let row = py.rem_euclid(h) * w;
            for px in x_lo..=x_hi {
                let dx = px - drop.x;
                if dx * dx + dy * dy < r2 {
                    let index = (row + px.rem_euclid(w)) as usize;
                    if !self.is_wall(index) {
                        set(index);
                    }
                }
            }
        }
    }

    /// The height at (x, y) for drawing, where (x, y) may be one cell outside the canvas: 0
    /// across a reflecting edge, the nearest border cell's across an absorbing one, the
    /// opposite side's across a wrapped one.
    #[inline]
    pub(crate) fn height_at(&self, heights: crate::water::Heights<'_>, x: i64, y: i64) -> i64 {
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
        let i = (y * w + x) as usize;
        match heights {
            crate::water::Heights::I16(v) => i64::from(v[i]),
            crate::water::Heights::I32(v) => i64::from(v[i]),
        }
    }

    /// The slopes `dx = h(x−1, y) − h(x+1, y)`, `dy = h(x, y−1) − h(x, y+1)` at a pixel.
    #[inline]
    pub(crate) fn slopes_at(&self, heights: crate::water::Heights<'_>, x: i64, y: i64) -> (i64, i64) {
        let h = |x, y| self.height_at(heights, x, y);
        (h(x - 1, y) - h(x + 1, y), h(x, y - 1) - h(x, y + 1))
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

    /// Finishes a band of a drawn frame (rows from `y0` of the canvas), drawn by SPEC §5's or
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
    pub(crate) fn reach(&self, heights: crate::water::Heights<'_>, r: i64, y: usize) -> [usize; 2] {
        if !self.wraps() {
            return [0; 2];
        }
        let slopes = match heights {
            crate::water::Heights::I16(v) => self.steepest(v, y),
            crate::water::Heights::I32(v) => self.steepest(v, y),
        };
        slopes.map(|d| usize::try_from(d.saturating_mul(r) / 256 + 2).unwrap_or(usize::MAX))
    }

    /// The largest |h(x−1, y) − h(x+1, y)| and |h(x, y−1) − h(x, y+1)| over the pixels of row `y`
    /// off the border columns (the border ring is drawn exactly anyway), rows taken modulo.
    fn steepest<T: Copy + Into<i64>>(&self, heights: &[T], y: usize) -> [i64; 2] {
        let (w, h) = (self.width, self.height);
        let row = |y: usize| &heights[y * w..(y + 1) * w];
        let (up, mid, down) = (row((y + h - 1) % h), row(y), row((y + 1) % h));
        let across = mid.iter().zip(&mid[2..]).map(|(&a, &b)| (a.into() - b.into()).abs()).max().unwrap_or(0);
        let along = up.iter().zip(down).map(|(&a, &b)| (a.into() - b.into()).abs()).max().unwrap_or(0);
        [across, along]
    }
}

impl Walls {
    /// No walls on a `width`×`height` canvas.
    pub fn new(width: usize, height: usize) -> Walls {
        Walls {
            width,
            height,
            bits: vec![0; (width * height).div_ceil(64)],
            added: 0,
            bare: Vec::new(),
            touched: false,
        }
    }

    /// The obstacles, numbered in the order they were added (file order), that cover no cell
    /// of the canvas.
    pub fn bare_obstacles(&self) -> &[usize] {
        &self.bare
    }

    /// Whether a cell is a wall.
    #[inline]
    pub fn contains(&self, index: usize) -> bool {
        self.bits[index / 64] >> (index % 64) & 1 == 1
    }

    /// How many cells are walls.
    pub fn count(&self) -> u64 {
        self.bits.iter().map(|w| u64::from(w.count_ones())).sum()
    }

    /// Calls `run(a..b)` for each maximal run of wall cells within `cells`, in order. The
    /// words are read one after another (a run may span several), so that the many words
    /// without walls cost a test each.
    pub fn for_each_run(&self, cells: std::ops::Range<usize>, mut run: impl FnMut(std::ops::Range<usize>)) {
        if cells.is_empty() {
            return;
        }
        let (first, last) = (cells.start / 64, (cells.end - 1) / 64);
        // Where the run that reaches the end of the previous word began.
        let mut open: Option<usize> = None;
        for (k, &bits) in (first..=last).zip(&self.bits[first..=last]) {
            let mut word = bits;
            if k == first {
                word &= !0u64 << (cells.start % 64);
            }
            if k == last {
                word &= !0u64 >> (63 - (cells.end - 1) % 64);
            }
            if word == 0 && open.is_none() {
                continue;
            }
            let base = k * 64;
            // `from`: the bits below it are done.
            let mut from = 0;
            if let Some(start) = open {
                let ones = (!word).trailing_zeros() as usize;
                if ones == 64 {
                    continue;
                }
                run(start..base + ones);
                open = None;
                from = ones;
            }
            while from < 64 {
                let rest = word >> from;
                if rest == 0 {
                    break;
                }
                let start = from + rest.trailing_zeros() as usize;
                let end = start + (!(word >> start)).trailing_zeros() as usize;
                if end == 64 {
                    open = Some(base + start);
                    break;
                }
                run(base + start..base + end);
                from = end;
            }
        }
        if let Some(start) = open {
            run(start..cells.end);
        }
    }

    /// The runs of each row, or nothing when there are more than one per
    /// [`CELLS_PER_LISTED_RUN`] cells. Counted first, so the list is allocated once, exactly.
    fn runs_by_row(&self) -> Option<ByRow<(u32, u32)>> {
        let row = |y: usize| y * self.width..(y + 1) * self.width;
        let mut count = 0;
        for y in 0..self.height {
            self.for_each_run(row(y), |_| count += 1);
        }
        if count > (self.width * self.height) / CELLS_PER_LISTED_RUN {
            return None;
        }
        let mut runs = ByRow { items: Vec::with_capacity(count), starts: Vec::with_capacity(self.height + 1) };
        for y in 0..self.height {
            runs.starts.push(runs.items.len() as u32);
            self.for_each_run(row(y), |run| runs.items.push((run.start as u32, run.end as u32)));
        }
        runs.starts.push(runs.items.len() as u32);
        Some(runs)
    }

    /// Makes the cells `x0..x1` of row `y` walls (clipped to the canvas).
    fn fill_row(&mut self, y: i64, x0: i64, x1: i64) {
        if y < 0 || y >= self.height as i64 {
            return;
        }
        let (x0, x1) = (x0.max(0), x1.min(self.width as i64));
        if x0 >= x1 {
            return;
        }
        self.touched = true;
        let row = y as usize * self.width;
        let (mut i, end) = (row + x0 as usize, row + x1 as usize);
        while i < end {
            let bit = i % 64;
            let n = (64 - bit).min(end - i);
            let mask = if n == 64 { u64::MAX } else { ((1u64 << n) - 1) << bit };
            self.bits[i / 64] |= mask;
            i += n;
        }
    }

    /// Makes the cells strictly inside a circle walls: `(px−x)² + (py−y)² < r²`.
    fn fill_disc(&mut self, x: i64, y: i64, r: i64) {
        let (w, h) = (self.width as i64, self.height as i64);
        if x + r <= 0 || x - r >= w || y + r <= 0 || y - r >= h {
            return;
        }
        for py in (y - r + 1).max(0)..=(y + r - 1).min(h - 1) {
            let left = r * r - (py - y) * (py - y);
            // The widest reach k with k² < left.
            let k = (left - 1).max(0).isqrt();
            self.fill_row(py, x - k, x + k + 1);
        }
    }

    /// Adds an obstacle's cells, noting whether it covered any (see [`Walls::bare_obstacles`]).
    pub fn add(&mut self, obstacle: &Obstacle) {
        self.touched = false;
        self.rasterize(obstacle);
        if !self.touched {
            self.bare.push(self.added);
        }
        self.added += 1;
    }

    fn rasterize(&mut self, obstacle: &Obstacle) {
        match obstacle {
            Obstacle::Circle { x, y, radius } => self.fill_disc(*x, *y, *radius),
            Obstacle::Rect { x, y, width, height } => {
                for py in (*y).max(0)..(y + height).min(self.height as i64) {
                    self.fill_row(py, *x, x + width);
                }
            }
            Obstacle::Polygon { points } => self.fill_polygon(points),
            Obstacle::Line { path, radius } => {
                let mut last = None;
                let mut stamp = |walls: &mut Walls, p: [i64; 2]| {
                    if last != Some(p) {
                        walls.fill_disc(p[0], p[1], *radius);
                        last = Some(p);
                    }
                };
                let mut points = Vec::new();
                if let Some(&first) = path.first() {
                    stamp(self, first);
                }
                for pair in path.windows(2) {
                    points.clear();
                    crate::timeline::bresenham(pair[0], pair[1], &mut points);
                    for &p in &points {
                        stamp(self, p);
                    }
                }
            }
        }
    }

    /// The even-odd rule at cell centres, in doubled integer coordinates (SPEC §8), row by row:
    /// along a row the edges a centre's rightward ray crosses are those to its right, so each
    /// crossing edge contributes a threshold column below which it counts, and the walls are
    /// the columns below an odd number of thresholds.
    fn fill_polygon(&mut self, points: &[[i64; 2]]) {
        let (w, h) = (self.width as i64, self.height as i64);
        let edges: Vec<([i64; 2], [i64; 2])> = (0..points.len())
            .map(|k| (points[k].map(|v| 2 * v), points[(k + 1) % points.len()].map(|v| 2 * v)))
            .collect();
        let mut thresholds = Vec::new();
        for py in 0..h {
            let cy = 2 * py + 1;
            thresholds.clear();
            for &(a, b) in &edges {
                if (a[1] > cy) == (b[1] > cy) {
                    continue;
                }
                thresholds.push(threshold(a, b, cy).clamp(0, w));
            }
            thresholds.sort_unstable();
            // Columns below the k-th largest threshold are below k thresholds.
            for pair in thresholds.rchunks(2) {
                if let [low, high] = pair {
                    self.fill_row(py, *low, *high);
                } else {
                    self.fill_row(py, 0, pair[0]);
                }
            }
        }
    }

    /// Adds the mask's wall cells: the image fitted like the background (not flattened), and a
    /// wall where `v = (299·r + 587·g + 114·b)·a / 255000` is below the threshold (at or above
    /// it when inverted). `contain` bars count as transparent (v = 0).
    fn add_mask(&mut self, mask: &MaskSpec, fit: crate::picture::Fit, budget: u64) -> Result<()> {
        let image = decode_mask(&mask.image, budget).map_err(|reason| mask_error(mask, &reason))?;
        let brightness = |p: [u8; 4]| {
            let [r, g, b, a] = p.map(i64::from);
            (299 * r + 587 * g + 114 * b) * a / 255_000
        };
        let values = crate::picture::fit(&image, (self.width, self.height), fit, 0, brightness);
        for (i, v) in values.into_iter().enumerate() {
            if (v < mask.threshold) != mask.invert {
                self.bits[i / 64] |= 1 << (i % 64);
            }
        }
        Ok(())
    }
}

/// The background with every wall cell tinted: half its colour, half a signal magenta, so the
/// picture under a wall can still be recognized.
pub fn tinted(background: &[[u8; 3]], shore: &Shore) -> Vec<[u8; 3]> {
    const TINT: [u8; 3] = [255, 0, 170];
    let mut out = background.to_vec();
    if let Some(walls) = shore.walls() {
        walls.for_each_run(0..out.len(), |run| {
            for p in &mut out[run] {
                *p = std::array::from_fn(|c| ((u16::from(p[c]) + u16::from(TINT[c])) / 2) as u8);
            }
        });
    }
    out
}

/// The column threshold of the polygon edge a→b (doubled coordinates) on the row whose doubled
/// centre is `cy`: the edge counts for the cells `px` below it, where
/// `((B.x−A.x)·(C.y−A.y) − (C.x−A.x)·d)·sign(d) > 0` with `C.x = 2px + 1`, `d = B.y − A.y`.
fn threshold(a: [i64; 2], b: [i64; 2], cy: i64) -> i64 {
    let d = b[1] - a[1];
    // (C.x − A.x)·|d| < n, with n = (B.x − A.x)·(C.y − A.y)·sign(d): so C.x − A.x ≤ k, the
    // largest integer with k·|d| < n.
    let n = (b[0] - a[0]) * (cy - a[1]) * d.signum();
    let k = n.div_euclid(d.abs()) - i64::from(n.rem_euclid(d.abs()) == 0);
    // 2px + 1 ≤ A.x + k  ⇔  px ≤ (A.x + k − 1) / 2, floored.
    (a[0] + k - 1).div_euclid(2) + 1
}

/// Decodes a mask image within a quarter of the memory budget, checked from its header first.
fn decode_mask(path: &Path, budget: u64) -> std::result::Result<image::RgbaImage, String> {
    let header = crate::picture::probe(path)?;
    crate::budget::check_image(&header, budget)?;
    crate::picture::decode(path, crate::budget::decode_budget(budget))
}

/// A mask image's error, at the `image` key of `[mask]`.
fn mask_error(mask: &MaskSpec, reason: &str) -> Error {
    let path = &mask.image;
    let message = if std::fs::symlink_metadata(path).is_err() {
        format!(
            "{}: no such file: {} (a relative path starts at the scene's folder)",
            mask.site.message,
            path.display()
        )
    } else {
        format!("{}: {}: {reason}", mask.site.message, path.display())
    };
    Error::Scene(Box::new(crate::error::Diagnostic { message, ..mask.site.clone() }))
}

#[cfg(test)]
mod tests;
