//! Heights smoothed for drawing (`[look] smooth`): the water is stepped as it is, and what is
//! drawn is its heights after `smooth` passes of the [1 2 1] × [1 2 1] filter,
//!
//! ```text
//! g(x, y) = (Σ_{i,j ∈ {−1,0,1}} w_i·w_j·h(x+i, y+j) + 8) >> 4,   w = (1, 2, 1)
//! ```
//!
//! h read one cell past the canvas as drawing reads it (§8: 0 across a reflecting edge, the
//! nearest border cell across an absorbing one, the opposite side across a wrapped one), and
//! g then 0 on wall cells. The filter has no response at the grid's own frequency, so the
//! checkerboard the classic scheme's odd/even mode leaves in the heights is not drawn, and the
//! spring model's finest rings are softened before they can alias.

use super::field::{Beyond, Cell, cell_bytes};
use super::shore::Shore;
use crate::base::threads::{Bands, PARALLEL_REFRACT_PIXELS};
use crate::scene::{Edge, Scene};

/// The smoothing of a render's heights: its passes, the shore whose edges and walls it keeps,
/// and two buffers it alternates between.
pub struct Smoothing<C: Cell> {
    passes: u32,
    shore: Shore,
    threads: Bands,
    latest: Vec<C>,
    spare: Vec<C>,
}

impl<C: Cell> Smoothing<C> {
    /// The smoothing `scene` asks for within `shore`, if any.
    pub fn new(scene: &Scene, shore: &Shore, threads: Bands) -> Option<Smoothing<C>> {
        let passes = scene.look.smooth;
        let (w, h) = shore.size();
        let spare = if passes > 1 { vec![C::default(); w * h] } else { Vec::new() };
        (passes > 0).then(|| Smoothing {
            passes,
            shore: shore.clone(),
            threads,
            latest: vec![C::default(); w * h],
            spare,
        })
    }

    /// Smooths `heights` and returns the result (kept until the next call).
    pub fn run(&mut self, heights: &[C]) -> &[C] {
        pass(&self.shore, &self.threads, heights, &mut self.latest);
        for _ in 1..self.passes {
            std::mem::swap(&mut self.latest, &mut self.spare);
            pass(&self.shore, &self.threads, &self.spare, &mut self.latest);
        }
        &self.latest
    }

    /// The last result of [`Smoothing::run`].
    pub fn heights(&self) -> &[C] {
        &self.latest
    }
}

/// Bytes the smoothing of `scene` holds: one field, two from two passes on.
pub fn smoothing_bytes(scene: &Scene) -> u64 {
    let cells = u64::from(scene.width) * u64::from(scene.height);
    u64::from(scene.look.smooth.min(2)) * cell_bytes(scene.water.model) * cells
}

crate::base::simd::dispatch! {
    /// One row of the filter ([`Cell::smooth_row`]), compiled for AVX2 where the CPU has it.
    fn smooth_row<C: Cell>(up: &[C], mid: &[C], down: &[C], beyond: [Beyond; 2], out: &mut [C]) => C::smooth_row
}

/// One pass of the filter from `from` into `to`, in bands of rows.
fn pass<C: Cell>(shore: &Shore, threads: &Bands, from: &[C], to: &mut [C]) {
    let (w, h) = shore.size();
    let edges = shore.edges();
    let beyond = |edge: Edge| match edge {
        Edge::Reflect => Beyond::Zero,
        Edge::Absorb => Beyond::Nearest,
        Edge::Wrap => Beyond::Opposite,
    };
    let across = [beyond(edges.left), beyond(edges.right)];
    let zeros = vec![C::default(); w];
    let row = |y: usize| &from[y * w..(y + 1) * w];
    // The row above the first and below the last, by the top and bottom edges.
    let outside = |edge: Edge, near: usize, far: usize| match beyond(edge) {
        Beyond::Zero => &zeros[..],
        Beyond::Nearest => row(near),
        Beyond::Opposite => row(far),
    };
    threads.for_bands(to, w, PARALLEL_REFRACT_PIXELS, |band, y0| {
        for (y, out) in (y0..).zip(band.chunks_exact_mut(w)) {
            let up = if y == 0 { outside(edges.top, 0, h - 1) } else { row(y - 1) };
            let down = if y + 1 == h { outside(edges.bottom, h - 1, 0) } else { row(y + 1) };
            smooth_row(up, row(y), down, across, out);
        }
        shore.clear_walls(band, y0 * w);
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::Edges;

    /// The filter straight from its formula, in i64, h read past the canvas by `shore`.
    fn by_formula(shore: &Shore, h: &[i16]) -> Vec<i16> {
        let (w, hh) = shore.size();
        let mut out = vec![0i16; w * hh];
        for y in 0..hh as i64 {
            for x in 0..w as i64 {
                let mut sum = 0i64;
                for j in -1..=1i64 {
                    for i in -1..=1i64 {
                        let weight = (2 - i.abs()) * (2 - j.abs());
                        sum += weight * shore.height_at(h, x + i, y + j);
                    }
                }
                let index = (y * w as i64 + x) as usize;
                out[index] = if shore.is_wall(index) { 0 } else { ((sum + 8) >> 4) as i16 };
            }
        }
        out
    }

    #[test]
    fn the_passes_match_the_formula_on_every_edge() {
        let (w, h) = (300, 7);
        let field: Vec<i16> = (0..w * h).map(|i| ((i * 7919 % 65536) as i64 - 32768) as i16).collect();
        for edge in [Edge::Reflect, Edge::Absorb, Edge::Wrap] {
            for (left_right, top_bottom) in [(edge, Edge::Reflect), (Edge::Reflect, edge), (edge, edge)] {
                let edges = Edges { left: left_right, right: left_right, top: top_bottom, bottom: top_bottom };
                let shore = Shore::new(w, h, edges, None);
                let mut out = vec![0i16; w * h];
                pass(&shore, &Bands::new(1), &field, &mut out);
                assert_eq!(out, by_formula(&shore, &field), "{edges:?}");
            }
        }
    }

    #[test]
    fn the_grid_mode_is_not_drawn() {
        // The checkerboard (−1)^(x+y), inside a reflecting frame, is flat after one pass
        // away from the border.
        let (w, h) = (16, 16);
        let field: Vec<i16> = (0..w * h).map(|i| if (i % w + i / w) % 2 == 0 { 1000 } else { -1000 }).collect();
        let mut out = vec![0i16; w * h];
        pass(&Shore::open(w, h), &Bands::new(1), &field, &mut out);
        for y in 1..h - 1 {
            for x in 1..w - 1 {
                assert_eq!(out[y * w + x], 0, "({x}, {y})");
            }
        }
    }
}
