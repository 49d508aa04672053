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
    /// Bytes the field takes per canvas pixel while it is made (the sums and the blur's
    /// buffer).
    pub const BYTES_PER_PIXEL: u64 = 16;

    /// The field under `heights` within `shore`, the rays landing `depth_q8` (D, in 1/256 of
    /// refraction's units) below the surface: a cell at (x, y) with slopes dx, dy lands at
    /// `256·x + dx·D`, `256·y + dy·D`, folded back into the canvas at its edges (taken modulo
    /// along a wrapped axis). A wall cell's ray goes straight down.
    pub fn new<H: Height>(heights: &[H], shore: &Shore, depth_q8: i64) -> Caustics {
        let (w, h) = shore.size();
        let mut light = buffer(w * h, true);
        let wraps = [shore.edges().wrap_x(), shore.edges().wrap_y()];
        let walls = shore.walls().is_some();
        let (mut dx, mut dy) = (vec![0i64; w], vec![0i64; w]);
        for y in 0..h {
            let row = &heights[y * w..(y + 1) * w];
            if y > 0 && y + 1 < h && w > 2 {
                // Off the border ring the slopes read the heights themselves.
                let (up, down) = (&heights[(y - 1) * w..y * w], &heights[(y + 1) * w..(y + 2) * w]);
                for (d, (&u, &b)) in dy.iter_mut().zip(up.iter().zip(down)) {
                    *d = u.wide() - b.wide();
                }
                for (d, (&l, &r)) in dx[1..w - 1].iter_mut().zip(row.iter().zip(&row[2..])) {
                    *d = l.wide() - r.wide();
                }
                for x in [0, w - 1] {
                    (dx[x], dy[x]) = shore.slopes_at(heights, x as i64, y as i64);
                }
            } else {
                for x in 0..w {
                    (dx[x], dy[x]) = shore.slopes_at(heights, x as i64, y as i64);
                }
            }
            if walls {
                for x in 0..w {
                    if shore.is_wall(y * w + x) {
                        (dx[x], dy[x]) = (0, 0);
                    }
                }
            }
            splat(&mut light, w, h, y, &dx, &dy, depth_q8, wraps);
        }
        // The first pass writes every cell of `once`: no need to clear it.
        let mut once = buffer(w * h, false);
        let mut rows = [vec![0u64; w], vec![0u64; w], vec![0u64; w]];
        blur(&light, &mut rows, &mut once, w, wraps);
        blur(&once, &mut rows, &mut light, w, wraps);
        SPARE.with_borrow_mut(|spare| spare.push(once));
        Caustics { light }
    }

    /// The light under each cell, row-major.
    pub fn light(&self) -> &[u64] {
        &self.light
    }
}

impl Drop for Caustics {
    fn drop(&mut self) {
        let light = std::mem::take(&mut self.light);
        SPARE.with_borrow_mut(|spare| spare.push(light));
    }
}

thread_local! {
    /// Buffers of fields this thread has made, kept for its next frame: a frame's field is
    /// two canvases of u64, and fresh ones cost their pages' faults every frame.
    static SPARE: std::cell::RefCell<Vec<Vec<u64>>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// A buffer of `cells`, reusing one this thread kept where it can (at most three are kept, each
/// the size of the last canvas): zeros when `cleared`, else whatever the last frame left.
fn buffer(cells: usize, cleared: bool) -> Vec<u64> {
    let kept = SPARE.with_borrow_mut(|spare| {
        spare.retain(|b| b.len() == cells);
        spare.truncate(3);
        spare.pop()
    });
    match kept {
        Some(mut b) => {
            if cleared {
                b.fill(0);
            }
            b
        }
        None => vec![0; cells],
    }
}

/// A landing place folded back into `0..=m`: mirrored at 0 and at `m`, then clamped.
#[inline(always)]
fn fold(s: i64, m: i64) -> i64 {
    let s = if s < 0 { -s } else { s };
    let s = if s > m { 2 * m - s } else { s };
    s.clamp(0, m)
}

/// Where a ray lands along one axis, in 1/256 of a cell: the cell, the next one and the
/// fraction toward it; folded back at the edges, or taken modulo along a wrapped axis.
#[inline(always)]
fn land(s: i64, size: usize, wraps: bool) -> (usize, usize, u64) {
    let size = size as i64;
    let (at, next) = if wraps {
        let s = s.rem_euclid(256 * size);
        (s, ((s >> 8) + 1) % size)
    } else {
        let s = fold(s, 256 * (size - 1));
        (s, ((s >> 8) + 1).min(size - 1))
    };
    ((at >> 8) as usize, next as usize, (at & 255) as u64)
}

crate::base::simd::dispatch! {
    /// The rays of a row ([`splat_row`]).
    #[allow(clippy::too_many_arguments)]
    fn splat(light: &mut [u64], w: usize, h: usize, y: usize, dx: &[i64], dy: &[i64], depth: i64, wraps: [bool; 2]) => splat_row
}

/// The rays of row `y`, its cells' slopes `dx`, `dy`, added to `light`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn splat_row(light: &mut [u64], w: usize, h: usize, y: usize, dx: &[i64], dy: &[i64], depth: i64, wraps: [bool; 2]) {
    let y256 = 256 * y as i64;
    for (x, (&dx, &dy)) in dx.iter().zip(dy).enumerate() {
        if dx == 0 && dy == 0 {
            // Straight down, no fraction: all of it on the cell itself.
            light[y * w + x] += RAY;
            continue;
        }
        let (x0, x1, fx) = land(256 * x as i64 + dx * depth, w, wraps[0]);
        let (y0, y1, fy) = land(y256 + dy * depth, h, wraps[1]);
        light[y0 * w + x0] += (256 - fx) * (256 - fy);
        light[y0 * w + x1] += fx * (256 - fy);
        light[y1 * w + x0] += (256 - fx) * fy;
        light[y1 * w + x1] += fx * fy;
    }
}

crate::base::simd::dispatch! {
    /// One pass of the blur ([`blur_pass`]).
    fn blur(from: &[u64], rows: &mut [Vec<u64>; 3], out: &mut [u64], w: usize, wraps: [bool; 2]) => blur_pass
}

/// One pass of `out(x, y) = (Σ w(i)·w(j)·from(x+i, y+j) + 8) >> 4`, `w = 1 2 1`, reading the
/// nearest cell beyond an edge (the opposite side's across a wrapped axis): for each row, the
/// horizontal sums of the rows above, at and below it into `rows` (three rows, in the cache),
/// then the vertical ones, so that the canvas is read once and written once.
#[inline(always)]
fn blur_pass(from: &[u64], rows: &mut [Vec<u64>; 3], out: &mut [u64], w: usize, wraps: [bool; 2]) {
    let h = from.len() / w;
    let (before, after) = ends(w, wraps[0]);
    let (above_first, below_last) = ends(h, wraps[1]);
    for (y, o) in out.chunks_exact_mut(w).enumerate() {
        let up = if y == 0 { above_first } else { y - 1 };
        let down = if y + 1 == h { below_last } else { y + 1 };
        for (into, r) in rows.iter_mut().zip([up, y, down]) {
            horizontal(&from[r * w..(r + 1) * w], &mut into[..w], before, after);
        }
        let [u, m, d] = &*rows;
        for (o, ((&u, &m), &d)) in o.iter_mut().zip(u.iter().zip(m).zip(d)) {
            *o = (u + 2 * m + d + 8) >> 4;
        }
    }
}

/// The horizontal sums `row[x−1] + 2·row[x] + row[x+1]` of a row into `into`, the cells beyond
/// its ends read at `before` and `after` (inlined into the AVX2 copy of the pass).
#[inline(always)]
fn horizontal(row: &[u64], into: &mut [u64], before: usize, after: usize) {
    let w = row.len();
    if w == 1 {
        into[0] = 4 * row[0];
        return;
    }
    into[0] = row[before] + 2 * row[0] + row[1];
    for (o, t) in into[1..w - 1].iter_mut().zip(row.windows(3)) {
        *o = t[0] + 2 * t[1] + t[2];
    }
    into[w - 1] = row[w - 2] + 2 * row[w - 1] + row[after];
}

/// The cells read beyond the first and the last of `size` cells: the nearest, or across a
/// wrapped axis the opposite end.
fn ends(size: usize, wraps: bool) -> (usize, usize) {
    if wraps { (size - 1, 0) } else { (0, size - 1) }
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
    fn calm_water_beside_a_wall_is_not_darkened() {
        // A wall cell's ray goes straight down: were walls to send none, the blur would take
        // light from the calm cells beside them.
        let source = "[video]\nwidth = 24\nheight = 16\nframes = 1\n\
                      [[obstacle]]\nshape = \"rect\"\nx = 8\ny = 4\nwidth = 5\nheight = 6\n";
        let scene = crate::scene::Scene::from_toml_str(source, std::path::Path::new("wall.toml")).unwrap();
        let shore = Shore::for_scene(&scene).unwrap();
        assert!(shore.walls().is_some_and(|walls| walls.count() == 30));
        let field = Caustics::new(&[0i16; 24 * 16], &shore, 512);
        assert!(field.light().iter().all(|&e| e == RAY));
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
