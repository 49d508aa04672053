//! The water the benchmarks run on: busy everywhere, at the sizes they measure.

use ripple_render::base::threads::Bands;
use ripple_render::scene::{Edge, Edges, Look, Obstacle, Sampling};
use ripple_render::sim::shore::{Shore, Walls};
use ripple_render::sim::timeline::{Drop, Source};
use ripple_render::sim::water::{Basin, Classic, Spring, Water};

/// The canvases measured.
pub const SIZES: [(usize, usize); 2] = [(640, 480), (1920, 1080)];

/// Drops on a grid, so that the whole surface moves.
fn drops(w: usize, h: usize) -> impl Iterator<Item = Drop> {
    (0..h as i64).step_by(37).flat_map(move |y| {
        (0..w as i64).step_by(41).map(move |x| Drop {
            x,
            y,
            radius: 3,
            weight: 900,
            source: Source::Rain,
            share: 256,
            eased: false,
        })
    })
}

pub fn classic(w: usize, h: usize) -> Classic {
    let mut water = Classic::new(Basin::open(w, h));
    drops(w, h).for_each(|d| water.drop(&d));
    (0..20).for_each(|_| water.step(5, &Bands::default()));
    water
}

/// A shore with walls and edges of every kind: a rock (a circle), a jetty (a polygon) and a
/// breakwater with a gap (two rects), about 5% of the canvas; `edges` all round.
pub fn shore(w: usize, h: usize, edges: Edge) -> Shore {
    let (wi, hi) = (w as i64, h as i64);
    let mut walls = Walls::new(w, h);
    walls.add(&Obstacle::Circle { x: wi / 4, y: hi / 3, radius: hi / 10 });
    walls.add(&Obstacle::Polygon { points: vec![[wi / 2, hi], [wi / 2 + wi / 20, hi / 2], [wi / 2 + wi / 10, hi]] });
    walls.add(&Obstacle::Rect { x: 3 * wi / 4, y: 0, width: 8, height: hi / 2 - 10 });
    walls.add(&Obstacle::Rect { x: 3 * wi / 4, y: hi / 2 + 10, width: 8, height: hi / 2 });
    let all = Edges { left: edges, right: edges, top: edges, bottom: edges };
    Shore::new(w, h, all, Some(std::sync::Arc::new(walls)))
}

/// [`classic`] within a shore.
pub fn classic_in(w: usize, h: usize, shore: &Shore) -> Classic {
    let mut water = Classic::new(Basin::within(shore));
    drops(w, h).for_each(|d| water.drop(&d));
    (0..20).for_each(|_| water.step(5, &Bands::default()));
    water
}

/// [`spring`] within a shore.
pub fn spring_in(w: usize, h: usize, shore: &Shore) -> Spring {
    let mut water = Spring::new(Basin::within(shore));
    drops(w, h).for_each(|d| water.drop(&d));
    (0..20).for_each(|_| water.step(6, &Bands::default()));
    water
}

pub fn spring(w: usize, h: usize) -> Spring {
    let mut water = Spring::new(Basin::open(w, h));
    drops(w, h).for_each(|d| water.drop(&d));
    (0..20).for_each(|_| water.step(6, &Bands::default()));
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

/// The lit looks `ripple-render new` wrote before the water look's keys (§9 alone), and their
/// R (refraction 0.05 classic, 0.03 spring).
pub const LIT_CLASSIC: Look =
    Look { sampling: Sampling::Bilinear, shading: 96, highlight: 320, light: [-1, -1], ..Look::PLAIN };
pub const LIT_CLASSIC_R: i64 = 13;
pub const LIT_SPRING: Look =
    Look { sampling: Sampling::Bilinear, shading: 64, highlight: 240, light: [-1, -1], ..Look::PLAIN };
pub const LIT_SPRING_R: i64 = 8;
