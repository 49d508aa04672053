//! Caustics by rays (the gain tone, docs/scene-format.md): the light that reaches the floor,
//! `E`, 65536 under calm water. Every cell sends a ray of 65536 down through the surface, bent
//! by its slopes; where it lands it is split over the four cells around the landing point by
//! its fractions; two passes of a [1 2 1] blur then smooth the sum. A lens of water gathers
//! the rays of its cells into a line: the bright network of a sunny pool.
//!
//! Every ray adds integers to integers, so the field does not depend on the order the rays are
//! taken in (the same bytes on any thread count).

use super::refract::Height;
use crate::sim::shore::Shore;

/// The light on the floor under each cell, row-major; 65536 where the water is calm.
pub struct Caustics {
    light: Vec<u64>,
}

/// The light one cell sends down.
pub const RAY: u64 = 65536;

impl Caustics {
    /// Bytes the field takes per canvas pixel while it is made (the sums and the blur's copy).
    pub const BYTES_PER_PIXEL: u64 = 16;

    /// The field under `heights` within `shore`, the rays landing `depth_q8` (D, in 1/256 of
    /// refraction's units) below the surface: a cell at (x, y) with slopes dx, dy lands at
    /// `256·x + dx·D`, `256·y + dy·D`, folded back into the canvas at its edges (taken modulo
    /// along a wrapped axis). A wall cell's ray goes straight down.
    pub fn new<H: Height>(heights: &[H], shore: &Shore, depth_q8: i64) -> Caustics {
        let (w, h) = shore.size();
        let mut light = vec![0u64; w * h];
        let wraps = [shore.edges().wrap_x(), shore.edges().wrap_y()];
        let (wi, hi) = (w as i64, h as i64);
        let land = |s: i64, size: i64, wraps: bool| -> (usize, usize, u64) {
            let (at, next) = if wraps {
                let s = s.rem_euclid(256 * size);
                (s, ((s >> 8) + 1) % size)
            } else {
                let s = fold(s, 256 * (size - 1));
                (s, ((s >> 8) + 1).min(size - 1))
            };
            ((at >> 8) as usize, next as usize, (at & 255) as u64)
        };
        let mut splat = |x: usize, y: usize, dx: i64, dy: i64| {
            let (x0, x1, fx) = land(256 * x as i64 + dx * depth_q8, wi, wraps[0]);
            let (y0, y1, fy) = land(256 * y as i64 + dy * depth_q8, hi, wraps[1]);
            light[y0 * w + x0] += (256 - fx) * (256 - fy);
            light[y0 * w + x1] += fx * (256 - fy);
            light[y1 * w + x0] += (256 - fx) * fy;
            light[y1 * w + x1] += fx * fy;
        };
        for y in 0..h {
            let inner_row = y > 0 && y + 1 < h;
            for x in 0..w {
                let index = y * w + x;
                let (dx, dy) = if shore.is_wall(index) {
                    (0, 0)
                } else if inner_row && x > 0 && x + 1 < w {
                    (
                        heights[index - 1].wide() - heights[index + 1].wide(),
                        heights[index - w].wide() - heights[index + w].wide(),
                    )
                } else {
                    shore.slopes_at(heights, x as i64, y as i64)
                };
                splat(x, y, dx, dy);
            }
        }
        let mut copy = vec![0u64; w * h];
        blur(&light, &mut copy, w, wraps);
        blur(&copy, &mut light, w, wraps);
        Caustics { light }
    }

    /// The light under each cell, row-major.
    pub fn light(&self) -> &[u64] {
        &self.light
    }
}

/// A landing place folded back into `0..=m`: mirrored at 0 and at `m`, then clamped.
fn fold(s: i64, m: i64) -> i64 {
    let s = if s < 0 { -s } else { s };
    let s = if s > m { 2 * m - s } else { s };
    s.clamp(0, m)
}

/// One pass of `out(x, y) = (Σ w(i)·w(j)·from(x+i, y+j) + 8) >> 4`, `w = 1 2 1`, reading the
/// nearest cell beyond an edge (the opposite side's across a wrapped axis).
fn blur(from: &[u64], out: &mut [u64], w: usize, wraps: [bool; 2]) {
    let h = from.len() / w;
    let beside = |v: usize, size: usize, wraps: bool| -> [usize; 2] {
        let before = if v > 0 {
            v - 1
        } else if wraps {
            size - 1
        } else {
            0
        };
        let after = if v + 1 < size {
            v + 1
        } else if wraps {
            0
        } else {
            size - 1
        };
        [before, after]
    };
    let mut across = vec![0u64; w];
    let mut rows = [vec![0u64; w], vec![0u64; w], vec![0u64; w]];
    let horizontal = |row: &[u64], into: &mut [u64]| {
        for (x, o) in into.iter_mut().enumerate() {
            let [l, r] = beside(x, w, wraps[0]);
            *o = row[l] + 2 * row[x] + row[r];
        }
    };
    for y in 0..h {
        let [up, down] = beside(y, h, wraps[1]);
        for (slot, row) in rows.iter_mut().zip([up, y, down]) {
            horizontal(&from[row * w..(row + 1) * w], slot);
        }
        for (x, a) in across.iter_mut().enumerate() {
            *a = rows[0][x] + 2 * rows[1][x] + rows[2][x];
        }
        for (o, &a) in out[y * w..(y + 1) * w].iter_mut().zip(&across) {
            *o = (a + 8) >> 4;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::{Edge, Edges};

    #[test]
    fn calm_water_lights_every_cell_alike() {
        for edge in [Edge::Reflect, Edge::Absorb, Edge::Wrap] {
            let shore = Shore::new(9, 7, Edges { left: edge, right: edge, top: edge, bottom: edge }, None);
            let field = Caustics::new(&[0i16; 63], &shore, 512);
            assert!(field.light().iter().all(|&e| e == RAY), "{edge:?}");
        }
    }

    #[test]
    fn rays_are_folded_back_at_an_edge_and_no_light_is_lost() {
        // One tilted cell in the corner sends its ray past the left edge: folded back in, and the
        // sums keep all the light (the blur keeps a sum that is a multiple of 16 exactly).
        let mut heights = [0i16; 25];
        heights[6] = 0;
        heights[5] = 100; // left of (1, 1)
        let shore = Shore::open(5, 5);
        let field = Caustics::new(&heights, &shore, 256);
        assert_eq!(fold(-300, 1024), 300);
        assert_eq!(fold(1100, 1024), 948);
        assert_eq!(fold(-5000, 1024), 0);
        let total: u64 = field.light().iter().sum();
        assert!(total.abs_diff(25 * RAY) <= 25 * 16, "{total}");
        assert!(field.light().iter().any(|&e| e != RAY));
    }
}
