//! The wall cells of a canvas (§8): a bit per cell, from obstacles drawn into it and a
//! mask picture fitted like the background.

use crate::base::error::{Diagnostic, Error, Result};
use crate::base::picture::{self, Fit, Given};
use crate::scene::{MaskSpec, Obstacle};
use crate::sim::timeline::bresenham;

use super::{ByRow, CELLS_PER_LISTED_RUN};

/// A set of canvas cells, one bit per cell, row-major.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Walls {
    pub(super) width: usize,
    pub(super) height: usize,
    bits: Vec<u64>,
    /// Obstacles added so far, and which of them (by that count) covered no cell of the canvas.
    added: usize,
    bare: Vec<usize>,
    /// Whether the obstacle being added has covered a cell yet.
    touched: bool,
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
    pub(super) fn runs_by_row(&self) -> Option<ByRow<(u32, u32)>> {
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
    pub(super) fn fill_row(&mut self, y: i64, x0: i64, x1: i64) {
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
                    bresenham(pair[0], pair[1], &mut points);
                    for &p in &points {
                        stamp(self, p);
                    }
                }
            }
        }
    }

    /// The even-odd rule at cell centres, in doubled integer coordinates (§8), row by row:
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

    /// `background` with every wall cell tinted: half its colour, half a signal magenta, so
    /// the picture under a wall can still be recognized.
    pub fn tinted(&self, background: &[[u8; 3]]) -> Vec<[u8; 3]> {
        const TINT: [u8; 3] = [255, 0, 170];
        let mut out = background.to_vec();
        self.for_each_run(0..out.len(), |run| {
            for p in &mut out[run] {
                *p = std::array::from_fn(|c| ((u16::from(p[c]) + u16::from(TINT[c])) / 2) as u8);
            }
        });
        out
    }

    /// Adds the mask's wall cells: the image fitted like the background (not flattened), and a
    /// wall where `v = (299·r + 587·g + 114·b)·a / 255000` is below the threshold (at or above
    /// it when inverted). `contain` bars count as transparent (v = 0). The image is read from
    /// `given` where it is there.
    pub(super) fn add_mask(&mut self, mask: &MaskSpec, fit: Fit, budget: u64, given: &Given) -> Result<()> {
        let image = picture::decode_within_from(&mask.image, given.source(&mask.image), budget)
            .map_err(|reason| mask_error(mask, &reason))?;
        let values = picture::fit(&image, (self.width, self.height), fit, 0, mask_brightness);
        for (i, v) in values.into_iter().enumerate() {
            if (v < mask.threshold) != mask.invert {
                self.bits[i / 64] |= 1 << (i % 64);
            }
        }
        Ok(())
    }
}

/// A mask pixel's brightness, `(299·r + 587·g + 114·b)·a / 255000`, in 0..=255: a grey pixel
/// of that value, opaque, has the same.
pub fn mask_brightness(p: [u8; 4]) -> i64 {
    let [r, g, b, a] = p.map(i64::from);
    (299 * r + 587 * g + 114 * b) * a / 255_000
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

/// A mask image's error, at the `image` key of `[mask]`.
pub(crate) fn mask_error(mask: &MaskSpec, reason: &str) -> Error {
    let path = &mask.image;
    let missing = std::fs::symlink_metadata(path).is_err().then(|| path.clone());
    let message = if missing.is_some() {
        format!(
            "{}: no such file: {} (a relative path starts at the scene's folder)",
            mask.site.message,
            path.display()
        )
    } else {
        format!("{}: {}: {reason}", mask.site.message, path.display())
    };
    Error::Scene(Box::new(Diagnostic { message, missing, ..mask.site.clone() }))
}
