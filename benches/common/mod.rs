//! The water the benchmarks run on: busy everywhere, at the sizes they measure.

use ripple_render::scene::{Look, Sampling};
use ripple_render::timeline::{Drop, Source};
use ripple_render::water::{Classic, Spring};

/// The canvases measured.
pub const SIZES: [(usize, usize); 2] = [(640, 480), (1920, 1080)];

/// Drops on a grid, so that the whole surface moves.
fn drops(w: usize, h: usize) -> impl Iterator<Item = Drop> {
    (0..h as i64).step_by(37).flat_map(move |y| {
        (0..w as i64).step_by(41).map(move |x| Drop { x, y, radius: 3, weight: 900, source: Source::Rain })
    })
}

pub fn classic(w: usize, h: usize) -> Classic {
    let mut water = Classic::new(w, h);
    drops(w, h).for_each(|d| water.drop(&d));
    (0..20).for_each(|_| water.step(5, None));
    water
}

pub fn spring(w: usize, h: usize) -> Spring {
    let mut water = Spring::new(w, h);
    drops(w, h).for_each(|d| water.drop(&d));
    (0..20).for_each(|_| water.step(6, None));
    water
}

/// A grey background of many values, for refraction to palette indices.
pub fn background(w: usize, h: usize) -> Vec<u8> {
    (0..w * h).map(|i| (i * 7 % 251) as u8).collect()
}

/// An RGB background, for refraction to RGB and for looks.
pub fn rgb(w: usize, h: usize) -> Vec<[u8; 3]> {
    (0..w * h).map(|i| [(i * 7 % 251) as u8, (i % 13) as u8, 9]).collect()
}

/// The lit looks `ripple-render new` writes, and their R (refraction 0.05 classic, 0.03
/// spring).
pub const LIT_CLASSIC: Look = Look { sampling: Sampling::Bilinear, shading: 96, highlight: 320, light: [-1, -1] };
pub const LIT_CLASSIC_R: i64 = 13;
pub const LIT_SPRING: Look = Look { sampling: Sampling::Bilinear, shading: 64, highlight: 240, light: [-1, -1] };
pub const LIT_SPRING_R: i64 = 8;
