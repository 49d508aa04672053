//! Where a model's water lies, the same for both models: the canvas, and the shore around it
//! (§8). An open shore (§4's rectangle) leaves each step to the model's interior
//! kernel alone; any other shore finishes every step.

use crate::scene::DropShape;
use crate::sim::field::Cell;
use crate::sim::shore::Shore;
use crate::sim::timeline::Drop;

/// A model's canvas and shore, and how drops are pressed into it.
#[derive(Debug, Clone)]
pub struct Basin {
    shore: Shore,
    shape: DropShape,
}

impl Basin {
    /// §4's plain rectangle: no walls, every edge reflecting, flat-disc drops.
    pub fn open(width: usize, height: usize) -> Basin {
        Basin { shore: Shore::open(width, height), shape: DropShape::Disc }
    }

    /// Water within `shore`'s walls and edges, with flat-disc drops.
    pub fn within(shore: &Shore) -> Basin {
        Basin { shore: shore.clone(), shape: DropShape::Disc }
    }

    /// The same basin, its drops pressed with `shape`.
    pub fn pressing(mut self, shape: DropShape) -> Basin {
        self.shape = shape;
        self
    }

    /// Presses `drop` into `heights`: a flat disc sets every cell it covers to `−weight` (§4);
    /// a smooth drop blends every cell within twice its radius toward `−weight` by its
    /// profile (`smooth_share`) scaled by the drop's share, `p = (smooth_share·share) >> 8`,
    /// `h ← h + (((−weight − h)·p) >> 8)`, offsets in row-major order.
    pub fn press<C: Cell>(&self, drop: &Drop, heights: &mut [C]) {
        match self.shape {
            DropShape::Disc => {
                let depth = C::narrow(-drop.weight);
                self.drop_cells(drop, |i| heights[i] = depth);
            }
            DropShape::Smooth => {
                let support = 4 * drop.radius * drop.radius;
                let (weight, share) = (drop.weight, drop.share);
                self.shore.for_each_cell_within(drop.x, drop.y, 2 * drop.radius, |i, d2| {
                    let h: i64 = heights[i].into();
                    let p = (smooth_share(support, d2) * share) >> 8;
                    // Between h and −weight, so it fits the cell type.
                    heights[i] = C::narrow(h + (((-weight - h) * p) >> 8));
                });
            }
        }
    }

    /// Eases the water's motion under `drop` toward rest (`Drop::eased`): `motion` (the
    /// classic's previous heights, the spring's velocities) blended toward 0 by the smooth
    /// drop's profile and share, `m ← m + ((−m·p) >> 8)`; a flat disc eases nothing.
    pub fn ease<C: Cell>(&self, drop: &Drop, motion: &mut [C]) {
        if self.shape == DropShape::Smooth {
            self.press(&Drop { weight: 0, ..*drop }, motion);
        }
    }

    /// The canvas size, (width, height).
    pub fn size(&self) -> (usize, usize) {
        self.shore.size()
    }

    /// The shore that finishes each step, or `None` when it is open and changes nothing.
    pub fn shore(&self) -> Option<&Shore> {
        (!self.shore.is_open()).then_some(&self.shore)
    }

    /// Calls `set(index)` for every cell a drop covers: strictly inside its circle, clipped at
    /// border cells (never moved), taken across a wrapped axis, and never a wall.
    pub fn drop_cells(&self, drop: &Drop, set: impl FnMut(usize)) {
        self.shore.for_each_drop_cell(drop, set);
    }
}

/// The smooth drop's share of the way toward `−weight`, in 1/256, at squared distance `d2` from
/// its centre, `support = 4·radius²` (`d2 < support`): `q = support − d2`,
/// `(256·q³ + support³/2) / support³`, a triweight profile (1 − d²/4r²)³ rounded, 256 only at the
/// centre. (With radius ≤ 256, `256·q³ < 2^63`.)
pub fn smooth_share(support: i64, d2: i64) -> i64 {
    let q = support - d2;
    let cube = support * support * support;
    (256 * q * q * q + cube / 2) / cube
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::timeline::Source;

    fn cells(w: usize, h: usize, x: i64, y: i64, radius: i64) -> Vec<usize> {
        let mut out = Vec::new();
        let drop = Drop { x, y, radius, weight: 1, source: Source::Stone(0), share: 256, eased: false };
        Basin::open(w, h).drop_cells(&drop, |i| out.push(i));
        out
    }

    #[test]
    fn radius_one_is_one_cell_and_radius_two_a_square() {
        assert_eq!(cells(5, 5, 2, 2, 1), vec![12]);
        // Diagonal neighbours are at squared distance 2 < 4.
        assert_eq!(cells(5, 5, 2, 2, 2), vec![6, 7, 8, 11, 12, 13, 16, 17, 18]);
        // Radius 3: (±2, ±2) is at 8 < 9, so a full 5×5 square; radius 4 adds (±3, 0) and (±3, ±1)
        // and (±3, ±2) (13 < 16) but not (±3, ±3) (18): 49 - 4 = 45 cells in a 9×9 grid.
        assert_eq!(cells(7, 7, 3, 3, 3).len(), 25);
        assert_eq!(cells(9, 9, 4, 4, 4).len(), 45);
    }

    #[test]
    fn drops_are_clipped_at_the_border_not_moved() {
        // A stone on the corner cell: radius 1 covers only the border cell itself, so nothing;
        // radius 2 reaches (1,1) (1+1 < 4); radius 3 reaches (1..=2, 1..=2) (8 < 9).
        assert_eq!(cells(5, 5, 0, 0, 1), Vec::<usize>::new());
        assert_eq!(cells(5, 5, 0, 0, 2), vec![6]);
        assert_eq!(cells(5, 5, 0, 0, 3), vec![6, 7, 11, 12]);
        // Far off the canvas: nothing, and no panic.
        assert_eq!(cells(5, 5, -65536, 65536, 256), Vec::<usize>::new());
    }

    #[test]
    fn the_smooth_share_is_the_designs_table() {
        // WATER2.md's vectors: radius 1's 3×3, radius 2's and 9's centre rows, radius 9's sum.
        let row = |r: i64| (0..2 * r).map(|x| smooth_share(4 * r * r, x * x)).collect::<Vec<_>>();
        assert_eq!(row(1), [256, 108]);
        assert_eq!(smooth_share(4, 2), 32);
        assert_eq!(row(2), [256, 211, 108, 21]);
        assert_eq!(row(9), [256, 254, 247, 235, 220, 201, 180, 157, 132, 108, 85, 63, 44, 28, 16, 7, 2, 0]);
        let (mut sum, mut cells) = (0, 0);
        Basin::open(64, 64).pressing(DropShape::Smooth).shore.for_each_cell_within(32, 32, 18, |_, d2| {
            let p = smooth_share(324, d2);
            sum += p;
            cells += usize::from(p > 0);
        });
        assert_eq!((sum, cells), (65112, 885));
    }

    #[test]
    fn a_smooth_drop_blends_toward_its_weight_and_a_disc_sets_it() {
        let drop = Drop { x: 4, y: 4, radius: 1, weight: 100, source: Source::Stone(0), share: 256, eased: false };
        let mut heights = vec![50i16; 81];
        Basin::open(9, 9).pressing(DropShape::Smooth).press(&drop, &mut heights);
        // Centre: all the way to −100; a side (p = 108): 50 + ((−150·108) >> 8) = 50 − 64;
        // a corner (p = 32): 50 + ((−150·32) >> 8) = 50 − 19 (floored); beyond: untouched.
        assert_eq!([heights[40], heights[39], heights[30], heights[38]], [-100, -14, 31, 50]);
        // Half a press: the centre goes half the way, (−150·128) >> 8 = −75.
        let mut half = vec![50i16; 81];
        Basin::open(9, 9).pressing(DropShape::Smooth).press(&Drop { share: 128, ..drop }, &mut half);
        assert_eq!(half[40], -25);
        let mut disc = vec![50i16; 81];
        Basin::open(9, 9).press(&Drop { radius: 2, ..drop }, &mut disc);
        assert_eq!([disc[40], disc[39], disc[30], disc[38]], [-100, -100, -100, 50]);
    }
}
