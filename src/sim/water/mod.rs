//! The water surface (§4): an integer height field stepped by one of two models, within its
//! basin (the canvas, and the shore around it: §8).

mod basin;
mod classic;
mod spring;
pub mod start;

pub use basin::Basin;
pub use classic::Classic;
pub use spring::Spring;

use crate::base::threads::Bands;

use super::field::Cell;
use super::timeline::Drop;
use crate::scene::{Model, WaterSpec};

/// A model of the water: a height field of [`Water::Cell`]s, pressed by drops and stepped with a
/// damping shift.
pub trait Water: Sized + Send {
    /// The height field's cell: i16 (classic) or i32 (spring).
    type Cell: Cell;

    /// Still water in `basin`, set up as `spec` says (the spring model's `settle`).
    fn still(basin: Basin, spec: &WaterSpec) -> Self;

    /// Presses a drop into the current heights as the basin's drop shape says ([`Basin::press`]):
    /// a flat disc sets every cell it covers (clipped at the border, never a wall) to `-weight`.
    fn drop(&mut self, drop: &Drop);

    /// One step with the damping `shift`, on the `bands`' threads (row bands are independent,
    /// so the result is the same).
    fn step(&mut self, shift: u32, bands: &Bands);

    /// The current heights, row-major.
    fn heights(&self) -> &[Self::Cell];

    /// Sets the heights to `field` (row-major, clamped to the cell's range), at rest: the
    /// start of a `[surface]`. Walls stay 0.
    fn start(&mut self, field: &[i64]);

    /// Every buffer the model steps with, in a fixed order: its whole state, for a checkpoint.
    fn buffers(&mut self) -> Vec<&mut [Self::Cell]>;
}

/// Bytes a model's water holds per cell: two i16 buffers (classic), or three i32 buffers
/// (spring).
pub fn bytes_per_cell(model: Model) -> u64 {
    match model {
        Model::Classic => 2 * 2,
        Model::Spring => 3 * 4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::timeline::Source;

    fn stirred<W: Water>(baseline: bool) -> Vec<i64> {
        crate::base::simd::set_baseline_only(baseline);
        // The AVX2 path also runs on three threads, in bands (the canvas is large enough).
        let bands = if baseline { Bands::default() } else { Bands::new(3) };
        let spec =
            crate::scene::Scene::from_toml_str("[video]\nframes = 1\n", std::path::Path::new("s.toml")).unwrap().water;
        let mut water = W::still(Basin::open(1100, 960), &spec);
        for (i, (x, y)) in [(3, 4), (1000, 214), (1099, 959), (10, 425), (700, 300)].into_iter().enumerate() {
            water.drop(&Drop {
                x,
                y,
                radius: 5,
                weight: 16384 - i as i64,
                source: Source::Rain,
                share: 256,
                eased: false,
            });
        }
        for step in 0..12 {
            water.step(1 + step % 15, &bands);
        }
        crate::base::simd::set_baseline_only(false);
        water.heights().iter().map(|&v| v.into()).collect()
    }

    #[test]
    fn the_avx2_and_baseline_steps_agree() {
        assert_eq!(stirred::<Classic>(true), stirred::<Classic>(false), "classic");
        assert_eq!(stirred::<Spring>(true), stirred::<Spring>(false), "spring");
    }
}
