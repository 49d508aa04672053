//! The classic GameRes water: two i16 buffers, four neighbours, damping by a shift.

use super::{Basin, Water};
use crate::base::threads::{Bands, PARALLEL_STEP_CELLS};
use crate::scene::WaterSpec;
use crate::sim::field::chunk_rows;
use crate::sim::shore::{Finish, Shore};
use crate::sim::timeline::Drop;

/// Two i16 height buffers; `cur` is the height field.
#[derive(Debug, Clone)]
pub struct Classic {
    basin: Basin,
    cur: Vec<i16>,
    prev: Vec<i16>,
}

impl Classic {
    /// Still water in `basin`.
    pub fn new(basin: Basin) -> Self {
        let (width, height) = basin.size();
        let cells = width * height;
        Classic { basin, cur: vec![0; cells], prev: vec![0; cells] }
    }
}

impl Water for Classic {
    type Cell = i16;

    fn still(basin: Basin, spec: &WaterSpec) -> Self {
        Classic::new(basin.pressing(spec.drop))
    }

    /// Presses the drop into `cur` (a flat disc sets its cells to `-weight`); an eased one
    /// also eases `prev` toward rest.
    fn drop(&mut self, drop: &Drop) {
        self.basin.press(drop, &mut self.cur);
        if drop.eased {
            self.basin.ease(drop, &mut self.prev);
        }
    }

    /// One step: `n = (sum of 4 neighbours >> 1) - prev; n -= n >> shift`, clamped to i16,
    /// written into `prev`, then the buffers swap.
    fn step(&mut self, shift: u32, bands: &Bands) {
        let (cur, w) = (&self.cur, self.basin.size().0);
        match self.basin.shore() {
            None => {
                bands.for_bands(&mut self.prev, w, PARALLEL_STEP_CELLS, |band, y0| rows_of(cur, band, y0, w, shift))
            }
            Some(shore) => {
                bands.for_bands(&mut self.prev, w, PARALLEL_STEP_CELLS, |band, y0| {
                    let rows = chunk_rows(w);
                    for (k, chunk) in band.chunks_mut(rows * w).enumerate() {
                        let y = y0 + k * rows;
                        rows_of(cur, chunk, y, w, shift);
                        let lines = y..y + chunk.len() / w;
                        shore.finish_rows(lines, &mut Rows { cur, new: chunk, first: y * w, shift });
                    }
                });
                shore.finish_ends(&mut Rows { cur, new: &mut self.prev, first: 0, shift });
            }
        }
        std::mem::swap(&mut self.cur, &mut self.prev);
    }

    fn heights(&self) -> &[i16] {
        &self.cur
    }

    /// Both buffers hold the field: no motion.
    fn start(&mut self, field: &[i64]) {
        for ((c, p), &v) in self.cur.iter_mut().zip(&mut self.prev).zip(field) {
            *c = v.clamp(i64::from(i16::MIN), i64::from(i16::MAX)) as i16;
            *p = *c;
        }
        if let Some(shore) = self.basin.shore() {
            shore.clear_walls(&mut self.cur, 0);
            shore.clear_walls(&mut self.prev, 0);
        }
    }

    fn buffers(&mut self) -> Vec<&mut [i16]> {
        vec![&mut self.cur, &mut self.prev]
    }
}

/// Rows of a classic step the shore finishes: the heights before the step, and the new heights
/// of the rows from canvas cell `first` on.
struct Rows<'a> {
    cur: &'a [i16],
    new: &'a mut [i16],
    first: usize,
    shift: u32,
}

impl Finish for Rows<'_> {
    fn wrapped(&mut self, i: usize, [n, s, w, e, ..]: [u32; 8]) {
        let [n, s, w, e] = [n, s, w, e].map(|j| i32::from(self.cur[j as usize]));
        let mut v = ((n + s + w + e) >> 1) - i32::from(self.new[i - self.first]);
        if self.shift > 0 {
            v -= v >> self.shift;
        }
        self.new[i - self.first] = v.clamp(i32::from(i16::MIN), i32::from(i16::MAX)) as i16;
    }

    fn walls(&mut self, shore: &Shore) {
        shore.clear_walls(self.new, self.first);
    }

    fn absorbed(&mut self, b: usize, i: usize) {
        let (cur, first) = (self.cur, self.first);
        self.new[b - first] = absorbed(cur[i], self.new[i - first], cur[b]);
    }
}

/// An absorbing border cell's new height from its inward neighbour's heights now and next and
/// its own now: `inward + ((inward_next − border)·−44) / 256`, truncating, clamped to i16.
#[inline]
fn absorbed(inward: i16, inward_next: i16, border: i16) -> i16 {
    let v = i64::from(inward) + (i64::from(inward_next) - i64::from(border)) * -44 / 256;
    v.clamp(i64::from(i16::MIN), i64::from(i16::MAX)) as i16
}

/// Steps the rows of `cur` that `band` (rows from `y0` of `prev`) holds into it, damped by
/// `shift` (0: not damped, the free waves of a `[surface]` preset).
fn rows_of(cur: &[i16], band: &mut [i16], y0: usize, width: usize, shift: u32) {
    if shift == 0 {
        step_rows(cur, band, y0, width, shift, Free)
    } else {
        step_rows(cur, band, y0, width, shift, Damped)
    }
}

/// How a step damps a cell: by its shift, or not at all (a type, so that each way compiles to
/// its own loop).
trait Damp: Copy {
    fn damp(n: i32, shift: u32) -> i32;
}

/// `n − (n >> shift)`.
#[derive(Clone, Copy)]
struct Damped;

impl Damp for Damped {
    #[inline(always)]
    fn damp(n: i32, shift: u32) -> i32 {
        n - (n >> shift)
    }
}

/// `n`.
#[derive(Clone, Copy)]
struct Free;

impl Damp for Free {
    #[inline(always)]
    fn damp(n: i32, _: u32) -> i32 {
        n
    }
}

crate::base::simd::dispatch! {
    /// Steps the rows of `cur` that `band` (rows from `y0` of `prev`) holds into it.
    fn step_rows<D: Damp>(cur: &[i16], band: &mut [i16], y0: usize, width: usize, shift: u32, damp: D) => step_rows_portable
}

#[inline(always)]
fn step_rows_portable<D: Damp>(cur: &[i16], band: &mut [i16], y0: usize, w: usize, shift: u32, _: D) {
    let height = cur.len() / w;
    for (y, out) in (y0..).zip(band.chunks_exact_mut(w)) {
        if y == 0 || y == height - 1 {
            continue;
        }
        let row = y * w;
        // Equal-length slices for the interior of this row and its four neighbours, zipped, so
        // the loop has no bounds checks and vectorizes.
        let left = &cur[row..row + w - 2];
        let right = &cur[row + 2..row + w];
        let up = &cur[row - w + 1..row - 1];
        let down = &cur[row + w + 1..row + 2 * w - 1];
        let out = &mut out[1..w - 1];
        for ((((o, &l), &r), &u), &d) in out.iter_mut().zip(left).zip(right).zip(up).zip(down) {
            let sum = i32::from(l) + i32::from(r) + i32::from(u) + i32::from(d);
            let n = D::damp((sum >> 1) - i32::from(*o), shift);
            *o = n.clamp(i32::from(i16::MIN), i32::from(i16::MAX)) as i16;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::timeline::Source;

    fn stone(x: i64, y: i64, radius: i64, weight: i64) -> Drop {
        Drop { x, y, radius, weight, source: Source::Stone(0), share: 256, eased: false }
    }

    #[test]
    fn shift_floors_negative_numbers() {
        assert_eq!(-50 >> 5, -2);
        assert_eq!(-1 >> 5, -1);
        assert_eq!(50 >> 5, 1);
    }

    /// A 5×5 grid, one drop of weight 100 in the centre, worked by hand with shift 5.
    #[test]
    fn five_by_five_after_one_and_two_steps() {
        let mut water = Classic::new(Basin::open(5, 5));
        water.drop(&stone(2, 2, 1, 100));
        water.step(5, &Bands::default());
        // Step 1 (prev was 0): the centre's neighbours sum to 0 → n = 0.
        // Each orthogonal neighbour sees -100: (-100 >> 1) = -50; -50 - (-50 >> 5) = -50 + 2 = -48.
        // Diagonal cells see nothing in their four neighbours → 0.
        #[rustfmt::skip]
        let one = [
            0, 0,   0,   0, 0,
            0, 0,   -48, 0, 0,
            0, -48, 0,   -48, 0,
            0, 0,   -48, 0, 0,
            0, 0,   0,   0, 0,
        ];
        assert_eq!(water.heights(), &one);
        water.step(5, &Bands::default());
        // Step 2, prev is the drop field (centre -100, rest 0):
        // centre: (4·-48 >> 1) - (-100) = -96 + 100 = 4; 4 - (4 >> 5) = 4.
        // (1,1): neighbours (2,1) and (1,2) are -48: (-96 >> 1) = -48; -48 - (-48 >> 5) = -48 + 2 = -46.
        // (2,1): neighbours (1,1),(3,1),(2,0),(2,2) are all 0 → 0, minus prev 0 → 0.
        #[rustfmt::skip]
        let two = [
            0, 0,   0, 0,   0,
            0, -46, 0, -46, 0,
            0, 0,   4, 0,   0,
            0, -46, 0, -46, 0,
            0, 0,   0, 0,   0,
        ];
        assert_eq!(water.heights(), &two);
    }

    #[test]
    fn heights_clamp_to_i16_in_both_directions() {
        let mut water = Classic::new(Basin::open(5, 5));
        for i in [7, 11, 13, 17] {
            water.cur[i] = -16384;
        }
        water.prev[12] = 32767;
        // centre: (4·-16384 >> 1) - 32767 = -65535; -65535 >> 15 = -2 → -65533 → -32768.
        water.step(15, &Bands::default());
        assert_eq!(water.heights()[12], -32768);

        let mut water = Classic::new(Basin::open(5, 5));
        for i in [7, 11, 13, 17] {
            water.cur[i] = 32767;
        }
        water.prev[12] = -32768;
        // centre: (131068 >> 1) + 32768 = 98302; 98302 >> 1 = 49151 → 49151 → 32767.
        water.step(1, &Bands::default());
        assert_eq!(water.heights()[12], 32767);
    }

    #[test]
    fn border_stays_zero() {
        let mut water = Classic::new(Basin::open(6, 4));
        water.drop(&stone(1, 1, 3, 500));
        for _ in 0..5 {
            water.step(3, &Bands::default());
        }
        let h = water.heights();
        for x in 0..6 {
            assert_eq!((h[x], h[18 + x]), (0, 0));
        }
        for y in 0..4 {
            assert_eq!((h[y * 6], h[y * 6 + 5]), (0, 0));
        }
    }
}
