//! The spring water: Hooke's law over eight neighbours with a velocity buffer, wrapping i32.

use super::{Basin, Water};
use crate::base::threads::Bands;
use crate::scene::WaterSpec;
use crate::sim::field::chunk_rows;
use crate::sim::shore::{Finish, Shore};
use crate::sim::timeline::Drop;

/// Position, next position and velocity buffers; `pos` is the height field.
#[derive(Debug, Clone)]
pub struct Spring {
    basin: Basin,
    pos: Vec<i32>,
    next: Vec<i32>,
    vel: Vec<i32>,
    /// Damped values truncate toward zero (`[water] settle`), so the water comes to rest.
    settle: bool,
}

impl Spring {
    /// Still water in `basin`.
    pub fn new(basin: Basin) -> Self {
        let (width, height) = basin.size();
        let cells = width * height;
        Spring { basin, pos: vec![0; cells], next: vec![0; cells], vel: vec![0; cells], settle: false }
    }

    /// Damping that truncates the damped velocity and position toward zero, where §4's
    /// shifts floor them: a positive value then loses at least 1 a step too, as a negative one
    /// always does, and the water comes to rest exactly (`[water] settle = true`).
    pub fn settling(mut self, settle: bool) -> Self {
        self.settle = settle;
        self
    }
}

impl Water for Spring {
    type Cell = i32;

    fn still(basin: Basin, spec: &WaterSpec) -> Self {
        Spring::new(basin.pressing(spec.drop)).settling(spec.settle)
    }

    /// Presses the drop into `pos` (a flat disc sets its cells to `-weight`); velocity is
    /// untouched but where the drop is eased, toward rest.
    fn drop(&mut self, drop: &Drop) {
        self.basin.press(drop, &mut self.pos);
        if drop.eased {
            self.basin.ease(drop, &mut self.vel);
        }
    }

    /// One step of §4 spring, every operation wrapping in i32 and `/ 16` truncating.
    fn step(&mut self, shift: u32, bands: &Bands) {
        let (pos, w) = (&self.pos, self.basin.size().0);
        let (vel, next) = (&mut self.vel, &mut self.next);
        let settle = self.settle;
        let kernel = |pos: &[i32], vel: &mut [i32], next: &mut [i32], y0: usize| match settle {
            false => step_rows(pos, vel, next, y0, w, shift),
            true => step_rows_settled(pos, vel, next, y0, w, shift),
        };
        match self.basin.shore() {
            None => bands.for_band_pairs(vel, next, w, |vel, next, y0| kernel(pos, vel, next, y0)),
            Some(shore) => {
                bands.for_band_pairs(vel, next, w, |vel, next, y0| {
                    let rows = chunk_rows(w);
                    let chunks = vel.chunks_mut(rows * w).zip(next.chunks_mut(rows * w));
                    for (k, (vel, next)) in chunks.enumerate() {
                        let y = y0 + k * rows;
                        kernel(pos, vel, next, y);
                        let lines = y..y + next.len() / w;
                        shore.finish_rows(lines, &mut Rows { pos, vel, next, first: y * w, shift, settle });
                    }
                });
                shore.finish_ends(&mut Rows { pos, vel, next, first: 0, shift, settle });
            }
        }
        std::mem::swap(&mut self.pos, &mut self.next);
    }

    fn heights(&self) -> &[i32] {
        &self.pos
    }

    /// The positions hold the field, the velocities 0.
    fn start(&mut self, field: &[i64]) {
        for (p, &v) in self.pos.iter_mut().zip(field) {
            *p = v.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32;
        }
        self.vel.fill(0);
        if let Some(shore) = self.basin.shore() {
            shore.clear_walls(&mut self.pos, 0);
        }
    }

    fn buffers(&mut self) -> Vec<&mut [i32]> {
        vec![&mut self.pos, &mut self.next, &mut self.vel]
    }
}

/// One cell of §4 spring from its eight neighbours (N, S, W, E, NW, NE, SW, SE).
#[inline(always)]
fn spring_cell(centre: i32, around: [i32; 8], vel: &mut i32, shift: u32, settle: bool) -> i32 {
    let [n, s, west, east, nw, ne, sw, se] = around;
    let orthogonal = n.wrapping_add(s).wrapping_add(west).wrapping_add(east);
    let diagonal = nw.wrapping_add(ne).wrapping_add(sw).wrapping_add(se);
    let pull = centre.wrapping_mul(16).wrapping_sub(orthogonal.wrapping_mul(3).wrapping_add(diagonal));
    let v = vel.wrapping_sub(pull.wrapping_div(16));
    let v = if settle { damp_settled(v, shift) } else { v.wrapping_sub(v >> shift) };
    *vel = v;
    let p = centre.wrapping_add(v);
    if settle { damp_settled(p, 8) } else { p.wrapping_sub(p >> 8) }
}

/// `v − v/2^shift`, truncated toward zero: `v − (v >> shift)` for v ≤ 0 (as §4), and
/// `v + ((−v) >> shift)` for v > 0, so a non-zero value always loses at least 1.
#[inline(always)]
fn damp_settled(v: i32, shift: u32) -> i32 {
    let down = if v > 0 { v.wrapping_neg() >> shift } else { (v >> shift).wrapping_neg() };
    v.wrapping_add(down)
}

/// Rows of a spring step the shore finishes: the positions before the step, and the new
/// velocities and positions of the rows from canvas cell `first` on.
struct Rows<'a> {
    pos: &'a [i32],
    vel: &'a mut [i32],
    next: &'a mut [i32],
    first: usize,
    shift: u32,
    settle: bool,
}

impl Finish for Rows<'_> {
    fn wrapped(&mut self, i: usize, around: [u32; 8]) {
        let (pos, first) = (self.pos, self.first);
        let around = around.map(|j| pos[j as usize]);
        self.next[i - first] = spring_cell(pos[i], around, &mut self.vel[i - first], self.shift, self.settle);
    }

    fn walls(&mut self, shore: &Shore) {
        shore.clear_walls(self.next, self.first);
        shore.clear_walls(self.vel, self.first);
    }

    fn absorbed(&mut self, b: usize, i: usize) {
        let (pos, first) = (self.pos, self.first);
        self.next[b - first] = absorbed(pos[i], self.next[i - first], pos[b]);
    }
}

/// An absorbing border cell's next position from its inward neighbour's positions now and next
/// and its own now: `inward + ((inward_next − border)·−72) / 256` in i64, wrapped to i32.
#[inline]
fn absorbed(inward: i32, inward_next: i32, border: i32) -> i32 {
    (i64::from(inward) + (i64::from(inward_next) - i64::from(border)) * -72 / 256) as i32
}

crate::base::simd::dispatch! {
    /// Steps the rows of `pos` that the bands (rows from `y0` of `vel` and `next`) hold.
    fn step_rows(pos: &[i32], vel: &mut [i32], next: &mut [i32], y0: usize, width: usize, shift: u32) => step_rows_portable
}

crate::base::simd::dispatch! {
    /// [`step_rows`] with damping that truncates toward zero (`[water] settle`).
    fn step_rows_settled(pos: &[i32], vel: &mut [i32], next: &mut [i32], y0: usize, width: usize, shift: u32) => step_rows_settled_portable
}

#[inline(always)]
fn step_rows_settled_portable(pos: &[i32], vel: &mut [i32], next: &mut [i32], y0: usize, w: usize, shift: u32) {
    let height = pos.len() / w;
    for ((y, vel), next) in (y0..).zip(vel.chunks_exact_mut(w)).zip(next.chunks_exact_mut(w)) {
        if y == 0 || y == height - 1 {
            continue;
        }
        let row = y * w;
        let (up, mid, down) = (&pos[row - w..row], &pos[row..row + w], &pos[row + w..row + 2 * w]);
        for x in 1..w - 1 {
            let around = [up[x], down[x], mid[x - 1], mid[x + 1], up[x - 1], up[x + 1], down[x - 1], down[x + 1]];
            next[x] = spring_cell(mid[x], around, &mut vel[x], shift, true);
        }
    }
}

#[inline(always)]
fn step_rows_portable(pos: &[i32], vel: &mut [i32], next: &mut [i32], y0: usize, w: usize, shift: u32) {
    let height = pos.len() / w;
    for ((y, vel), next) in (y0..).zip(vel.chunks_exact_mut(w)).zip(next.chunks_exact_mut(w)) {
        if y == 0 || y == height - 1 {
            continue;
        }
        let row = y * w;
        let up = &pos[row - w..row];
        let mid = &pos[row..row + w];
        let down = &pos[row + w..row + 2 * w];
        let vel = &mut vel[1..w - 1];
        let next = &mut next[1..w - 1];
        // Neighbours as equal-length slices over the interior columns.
        let (n, s) = (&up[1..w - 1], &down[1..w - 1]);
        let (west, east, centre) = (&mid[..w - 2], &mid[2..], &mid[1..w - 1]);
        let (nw, ne, sw, se) = (&up[..w - 2], &up[2..], &down[..w - 2], &down[2..]);
        for i in 0..w - 2 {
            let orthogonal = n[i].wrapping_add(s[i]).wrapping_add(west[i]).wrapping_add(east[i]);
            let diagonal = nw[i].wrapping_add(ne[i]).wrapping_add(sw[i]).wrapping_add(se[i]);
            let pull = centre[i].wrapping_mul(16).wrapping_sub(orthogonal.wrapping_mul(3).wrapping_add(diagonal));
            let a = pull.wrapping_div(16);
            let mut v = vel[i].wrapping_sub(a);
            v = v.wrapping_sub(v >> shift);
            vel[i] = v;
            let p = centre[i].wrapping_add(v);
            next[i] = p.wrapping_sub(p >> 8);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::timeline::Source;

    #[test]
    fn division_truncates_toward_zero() {
        assert_eq!((-17i32).wrapping_div(16), -1);
        assert_eq!((-15i32).wrapping_div(16), 0);
        assert_eq!(i32::MIN.wrapping_div(16), -134_217_728);
    }

    /// A 5×5 grid, one drop of weight 100 in the centre, worked by hand with shift 6.
    #[test]
    fn five_by_five_after_one_and_two_steps() {
        let mut water = Spring::new(Basin::open(5, 5));
        water.drop(&Drop { x: 2, y: 2, radius: 1, weight: 100, source: Source::Stone(0), share: 256, eased: false });
        water.step(6, &Bands::default());
        // Centre: a = 16·-100 / 16 = -100; vel = 100; 100 - (100 >> 6 = 1) = 99;
        //   next = -100 + 99 = -1; -1 - (-1 >> 8 = -1) = 0.
        // Orthogonal neighbour: a = (0 - 3·-100) / 16 = 300 / 16 = 18; vel = -18;
        //   -18 - (-18 >> 6 = -1) = -17; next = -17; -17 - (-17 >> 8 = -1) = -16.
        // Diagonal neighbour: a = 100 / 16 = 6; vel = -6 - (-1) = -5; next = -5 - (-1) = -4.
        #[rustfmt::skip]
        let one = [
            0, 0,   0,   0,   0,
            0, -4,  -16, -4,  0,
            0, -16, 0,   -16, 0,
            0, -4,  -16, -4,  0,
            0, 0,   0,   0,   0,
        ];
        assert_eq!(water.heights(), &one);
        assert_eq!(water.vel[12], 99);
        assert_eq!(water.vel[7], -17);
        assert_eq!(water.vel[6], -5);
        water.step(6, &Bands::default());
        // Centre: a = (0 - (3·-64 + -16)) / 16 = 208 / 16 = 13; vel = 99 - 13 = 86;
        //   86 - (86 >> 6 = 1) = 85; next = 0 + 85 = 85; 85 - (85 >> 8 = 0) = 85.
        // (2,1): N=(2,0)=0, S=centre 0, W=(1,1)=-4, E=(3,1)=-4 → 3·-8 = -24;
        //   diagonals (1,0),(3,0)=0, (1,2),(3,2)=-16 → -32; pull = 16·-16 - (-24 - 32) = -256 + 56 = -200;
        //   a = -200 / 16 = -12 (truncated, not -13); vel = -17 + 12 = -5; -5 - (-1) = -4;
        //   next = -16 - 4 = -20; -20 - (-20 >> 8 = -1) = -19.
        // (1,1): N=(1,0)=0, S=(1,2)=-16, W=(0,1)=0, E=(2,1)=-16 → 3·-32 = -96;
        //   diagonals: (0,0),(2,0),(0,2)=0, (2,2)=0 → 0; pull = 16·-4 - (-96) = -64 + 96 = 32;
        //   a = 2; vel = -5 - 2 = -7; -7 - (-1) = -6; next = -4 - 6 = -10; -10 - (-1) = -9.
        #[rustfmt::skip]
        let two = [
            0, 0,   0,   0,   0,
            0, -9,  -19, -9,  0,
            0, -19, 85,  -19, 0,
            0, -9,  -19, -9,  0,
            0, 0,   0,   0,   0,
        ];
        assert_eq!(water.heights(), &two);
    }

    #[test]
    fn arithmetic_wraps_instead_of_panicking() {
        let mut water = Spring::new(Basin::open(3, 3));
        water.pos[4] = i32::MAX;
        water.vel[4] = i32::MIN;
        water.step(1, &Bands::default());
        // a = (16·MAX wrapping = -16) / 16 = -1; vel = MIN + 1; vel - (vel >> 1) wraps;
        // the exact value matters less than that it is defined: compute it the same way.
        let mut v = i32::MIN.wrapping_add(1);
        v = v.wrapping_sub(v >> 1);
        let n = i32::MAX.wrapping_add(v);
        assert_eq!(water.heights()[4], n.wrapping_sub(n >> 8));
    }
}

#[cfg(test)]
mod settle_tests {
    use super::*;
    use crate::sim::timeline::Source;

    fn stirred(settle: bool, steps: usize) -> Spring {
        let mut water = Spring::new(Basin::open(64, 48)).settling(settle);
        for (i, (x, y)) in [(20, 20), (40, 30), (10, 40), (60, 5)].into_iter().enumerate() {
            water.drop(&Drop {
                x,
                y,
                radius: 4 + i as i64,
                weight: 900 + 300 * i as i64,
                source: Source::Rain,
                share: 256,
                eased: false,
            });
        }
        for step in 0..steps {
            water.step(4 + (step % 4) as u32, &Bands::default());
        }
        water
    }

    /// §4's shifts floor, so small positive velocities and heights are never damped and the
    /// spring water never comes to rest; with `settle`, every non-zero value loses at least 1 a
    /// step and the water is exactly flat (and still) after a while.
    #[test]
    fn settled_spring_water_comes_to_rest_exactly() {
        let settled = stirred(true, 3000);
        assert!(settled.pos.iter().chain(&settled.vel).all(|&v| v == 0), "settled water still moves");
        let plain = stirred(false, 3000);
        assert!(plain.pos.iter().any(|&v| v != 0), "the format's spring water came to rest too");
        // Early on the two differ by the rounding of small values: 15% of the heights' sum after
        // 20 steps of this strong damping (shifts 4 to 7).
        let (a, b) = (stirred(true, 20), stirred(false, 20));
        let apart: i64 = a.pos.iter().zip(&b.pos).map(|(a, b)| i64::from(a - b).abs()).sum();
        let size: i64 = b.pos.iter().map(|&v| i64::from(v).abs()).sum();
        assert!(apart * 5 < size, "after 20 steps the settled water is {apart} away from the format's {size}");
    }

    #[test]
    fn damping_that_settles_truncates_toward_zero() {
        // v − v/64 truncated: 100 → 98 (98.4), −100 → −98 (as the format: −100 − (−2)), 5 → 4, −5 → −4.
        for (v, expected) in [(100, 98), (-100, -98), (5, 4), (-5, -4), (1, 0), (-1, 0), (0, 0), (64, 63)] {
            assert_eq!(damp_settled(v, 6), expected, "{v}");
        }
        assert_eq!(damp_settled(i32::MAX, 8), i32::MAX - (i32::MAX >> 8) - 1);
        assert_eq!(damp_settled(i32::MIN, 8), i32::MIN - (i32::MIN >> 8));
    }
}
