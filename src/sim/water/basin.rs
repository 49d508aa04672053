//! Where a model's water lies, the same for both models: the canvas, and the shore around it
//! (§8). An open shore (§4's rectangle) leaves each step to the model's interior
//! kernel alone; any other shore finishes every step.

use crate::sim::shore::Shore;
use crate::sim::timeline::Drop;

/// A model's canvas and shore.
#[derive(Debug, Clone)]
pub struct Basin {
    shore: Shore,
}

impl Basin {
    /// §4's plain rectangle: no walls, every edge reflecting.
    pub fn open(width: usize, height: usize) -> Basin {
        Basin { shore: Shore::open(width, height) }
    }

    /// Water within `shore`'s walls and edges.
    pub fn within(shore: &Shore) -> Basin {
        Basin { shore: shore.clone() }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::timeline::Source;

    fn cells(w: usize, h: usize, x: i64, y: i64, radius: i64) -> Vec<usize> {
        let mut out = Vec::new();
        let drop = Drop { x, y, radius, weight: 1, source: Source::Stone(0) };
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
}
