//! The fields a frame is drawn with, worked out from its heights by the drawing stage's own
//! formulas, for a ground truth to export (§5, §9, §8's edges and walls): per pixel the slopes the light uses and the
//! position the picture is sampled at.
//!
//! With `dx = h(x−1, y) − h(x+1, y)`, `dy = h(x, y−1) − h(x, y+1)` (a height beyond the canvas
//! read as the edge says: 0 across a reflecting edge, the border cell's across an absorbing
//! one, the far side's across a wrapped one) and R the refraction in 1/256:
//!
//! - the sample position in 1/256 pixel is `sx = 256·x + dx·R`, `sy = 256·y + dy·R`, clamped to
//!   `0..=256·(W−1)` (`0..=256·(H−1)`), or taken modulo `256·W` (`256·H`) along a wrapped axis;
//! - a wall pixel is its own: `sx = 256·x`, `sy = 256·y`, and its slopes are 0.

use crate::sim::field::Cell;
use crate::sim::shore::Shore;

/// One frame's fields: per pixel, row-major, the slopes and the sample position.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fields {
    /// `[dx, dy]`.
    pub slopes: Vec<[i64; 2]>,
    /// `[sx, sy]` in 1/256 pixel.
    pub positions: Vec<[i32; 2]>,
    /// Whether the position was clamped to the canvas along an axis that does not wrap (or the
    /// pixel is a wall): where a flow of the water's own displacement is not known.
    pub held: Vec<bool>,
}

impl Fields {
    /// Works out the fields of `heights` (a `shore`-sized field) with R = `r`, in place.
    pub fn compute<C: Cell>(&mut self, heights: &[C], shore: &Shore, r: i64) {
        let (w, h) = shore.size();
        self.slopes.resize(w * h, [0; 2]);
        self.positions.resize(w * h, [0; 2]);
        self.held.resize(w * h, false);
        let wrap = [shore.edges().wrap_x(), shore.edges().wrap_y()];
        let at = Placing { r, size: [w, h], wrap };
        // The border ring reads across the edges; the interior reads its own rows.
        let ring = (0..w)
            .flat_map(|x| [x, (h - 1) * w + x])
            .chain((1..h.saturating_sub(1)).flat_map(|y| [y * w, y * w + w - 1]));
        for i in ring {
            let (x, y) = (i % w, i / w);
            let (dx, dy) = shore.slopes_at(heights, x as i64, y as i64);
            (self.slopes[i], self.positions[i], self.held[i]) = at.pixel(x, y, dx, dy);
        }
        for y in 1..h.saturating_sub(1) {
            let row = |y: usize| &heights[y * w..(y + 1) * w];
            let (up, mid, down) = (row(y - 1), row(y), row(y + 1));
            let inner = y * w + 1..y * w + w - 1;
            let n = inner.len();
            // Slices of one length, so that the loop below has no bounds to check (a chain of
            // zips took a ground truth's fields 3 ms longer a 100-frame sequence).
            let (slopes, positions, held) =
                (&mut self.slopes[inner.clone()], &mut self.positions[inner.clone()], &mut self.held[inner]);
            let (left, right, up, down) = (&mid[..n], &mid[2..2 + n], &up[1..1 + n], &down[1..1 + n]);
            let wide = |c: C| -> i64 { c.into() };
            for k in 0..n {
                let (dx, dy) = (wide(left[k]) - wide(right[k]), wide(up[k]) - wide(down[k]));
                (slopes[k], positions[k], held[k]) = at.pixel(k + 1, y, dx, dy);
            }
        }
        if let Some(walls) = shore.walls() {
            walls.for_each_run(0..w * h, |run| {
                for i in run {
                    self.slopes[i] = [0; 2];
                    self.positions[i] = [256 * (i % w) as i32, 256 * (i / w) as i32];
                    self.held[i] = true;
                }
            });
        }
    }
}

/// What a pixel's fields are worked out with: R, the canvas, which axes wrap.
#[derive(Clone, Copy)]
struct Placing {
    r: i64,
    size: [usize; 2],
    wrap: [bool; 2],
}

impl Placing {
    /// The slopes, sample position and whether it was held at the canvas, of pixel (x, y) with
    /// slopes `dx`, `dy`.
    #[inline(always)]
    fn pixel(self, x: usize, y: usize, dx: i64, dy: i64) -> ([i64; 2], [i32; 2], bool) {
        let (px, py) = (256 * x as i64 + dx * self.r, 256 * y as i64 + dy * self.r);
        let (sx, sy) = (place(px, self.size[0], self.wrap[0]), place(py, self.size[1], self.wrap[1]));
        let held = (!self.wrap[0] && sx != px) || (!self.wrap[1] && sy != py);
        ([dx, dy], [sx as i32, sy as i32], held)
    }
}

/// A position in 1/256 pixel along an axis of `size` pixels: clamped to the canvas, or taken
/// modulo along a wrapped axis.
fn place(p: i64, size: usize, wraps: bool) -> i64 {
    let size = size as i64;
    if wraps { p.rem_euclid(256 * size) } else { p.clamp(0, 256 * (size - 1)) }
}
