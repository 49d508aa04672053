//! Heights to pixels: the picture under the water ([`background`]), seen through the water's
//! slopes by nearest-pixel refraction (§5, [`refract`]) or with a look (§9, [`look`]),
//! within the shore's walls and edges ([`Lens`]).

pub mod background;
pub mod caustics;
pub mod fields;
pub mod look;
pub mod refract;

use std::sync::Arc;

use caustics::Caustics;
use fields::Fields;
use look::{Backdrop, GainPen, Pen, Pens, Slope};
use refract::Height;

use crate::base::threads::{Bands, PARALLEL_REFRACT_PIXELS};
use crate::scene::{Look, Scene};
use crate::sim::shore::Shore;

/// Draws a frame from the heights of the water: the fast passes over bands of rows, then, for a
/// shore other than §4's rectangle, the pixels its walls and edges change.
#[derive(Clone)]
pub struct Lens {
    shore: Arc<Shore>,
    width: usize,
    /// R, the refraction in 1/256.
    r: i64,
    threads: Bands,
}

impl Lens {
    /// The lens of `scene` within `shore`, drawing bands of rows on `threads`.
    pub fn new(scene: &Scene, shore: &Arc<Shore>, threads: Bands) -> Lens {
        Lens { shore: shore.clone(), width: scene.width as usize, r: scene.water.refraction_q8, threads }
    }

    /// Draws `heights` by nearest-pixel refraction: `background` displaced by the slopes, into
    /// `out`, in whatever pixel type the two share (palette indices, RGB).
    pub fn refract<H: Height, P: Copy + Send + Sync>(&self, heights: &[H], background: &[P], out: &mut [P]) {
        let (width, r, shore) = (self.width, self.r, &*self.shore);
        self.threads.for_bands(out, width, PARALLEL_REFRACT_PIXELS, |band, y0| {
            refract::refract_band(heights, width, r, background, band, y0);
            if !shore.is_open() {
                let pixel = |x, y| {
                    let (dx, dy) = shore.slopes_at(heights, x, y);
                    background[shore.source(x + ((dx * r) >> 8), y + ((dy * r) >> 8))]
                };
                let reach = |y| shore.reach(heights, r, y);
                shore.finish_band(band, y0, reach, pixel, |i| background[i]);
            }
        });
    }

    /// The slopes and sample positions `heights` are drawn with, into `out` (what a ground
    /// truth exports: see [`fields`]).
    pub fn fields<H: Height>(&self, heights: &[H], out: &mut Fields) {
        out.compute(heights, &self.shore, self.r);
    }

    /// `look` resolved for drawing on this lens's canvas, once per render.
    pub fn pens(&self, look: &Look) -> Pens {
        let edges = self.shore.edges();
        Pens::new(look, self.r, self.shore.size(), [edges.wrap_x(), edges.wrap_y()])
    }

    /// Draws `heights` with a look resolved as `pens` (bilinear sampling, light): the
    /// `backdrop` seen through the water, into `out`.
    pub fn look<H: Height>(&self, heights: &[H], pens: &Pens, backdrop: &Backdrop, out: &mut [[u8; 3]]) {
        match pens {
            Pens::Lit { passes, edges } => self.lit(heights, passes, edges, backdrop, out),
            Pens::Gain(pen) => self.gain(heights, pen, backdrop, out),
        }
    }

    /// [`Lens::look`] with a lit tone: the passes, then the pixels the shore changes.
    fn lit<H: Height>(&self, heights: &[H], pen: &Pen, edges: &Pen, backdrop: &Backdrop, out: &mut [[u8; 3]]) {
        let (width, r, shore) = (self.width, self.r, &*self.shore);
        self.threads.for_bands(out, width, PARALLEL_REFRACT_PIXELS, |band, y0| {
            look::look_band(heights, width, pen, backdrop, band, y0);
            if !shore.is_open() {
                let pixel = |x, y| {
                    let (dx, dy) = shore.slopes_at(heights, x, y);
                    edges.draw(x, y, Slope { dx, dy, k: shore.curvature_at(heights, x, y) }, backdrop)
                };
                let reach = |y| shore.reach(heights, r, y);
                shore.finish_band(band, y0, reach, pixel, |i| Pen::unmoved(backdrop, i));
            }
        });
    }

    /// [`Lens::look`] with the gain tone: the caustics' light on the floor first, when the
    /// look has caustics, then the pixels.
    fn gain<H: Height>(&self, heights: &[H], pen: &GainPen, backdrop: &Backdrop, out: &mut [[u8; 3]]) {
        let (width, r, shore) = (self.width, self.r, &*self.shore);
        let floor = pen.floor_depth().map(|depth| Caustics::new(heights, shore, depth));
        let floor = floor.as_ref();
        self.threads.for_bands(out, width, PARALLEL_REFRACT_PIXELS, |band, y0| {
            look::gain_band(heights, width, pen, floor, backdrop, band, y0);
            if !shore.is_open() {
                let pixel = |x: i64, y: i64| {
                    let (dx, dy) = shore.slopes_at(heights, x, y);
                    let e = floor.map_or(caustics::RAY, |f| f.light()[y as usize * width + x as usize]);
                    pen.draw(x, y, Slope { dx, dy, k: shore.curvature_at(heights, x, y) }, e, backdrop)
                };
                let reach = |y| shore.reach(heights, r, y);
                shore.finish_band(band, y0, reach, pixel, |i| Pen::unmoved(backdrop, i));
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::{Edge, Edges, Sampling, Tone};

    #[test]
    fn the_water_terms_across_edges_match_the_formula() {
        let (w, h) = (40, 12);
        let heights: Vec<i16> = (0..w * h).map(|i| ((i * 7919 % 4001) as i64 - 2000) as i16).collect();
        let background: Vec<[u8; 3]> = (0..w * h).map(|i| [(i * 5) as u8, (i * 3) as u8, 200]).collect();
        let backdrop = Backdrop::new(&background, w);
        let look = Look {
            sampling: Sampling::Bilinear,
            shading: 96,
            highlight: 320,
            tone: Tone::Soft,
            caustics: 300,
            reflection: 200,
            ..Look::PLAIN
        };
        let source = format!("[video]\nwidth = {w}\nheight = {h}\nframes = 1\n[water]\nrefraction = 0.05\n");
        let scene = Scene::from_toml_str(&source, std::path::Path::new("edges.toml")).unwrap();
        for edge in [Edge::Absorb, Edge::Wrap] {
            let shore = Arc::new(Shore::new(w, h, Edges { left: edge, right: edge, top: edge, bottom: edge }, None));
            let lens = Lens::new(&scene, &shore, Bands::new(1));
            let mut out = vec![[0u8; 3]; w * h];
            lens.look(&heights, &lens.pens(&look), &backdrop, &mut out);
            let pen = Pen::new(&look, 13, w, h).wrapping(edge == Edge::Wrap, edge == Edge::Wrap);
            for y in 0..h as i64 {
                for x in 0..w as i64 {
                    let (dx, dy) = shore.slopes_at(&heights, x, y);
                    let slope = Slope { dx, dy, k: shore.curvature_at(&heights, x, y) };
                    let expected = pen.draw(x, y, slope, &backdrop);
                    assert_eq!(out[y as usize * w + x as usize], expected, "{edge:?} ({x}, {y})");
                }
            }
        }
    }

    #[test]
    fn the_gain_tone_across_edges_and_walls_matches_the_formula() {
        let (w, h) = (40, 12);
        let background: Vec<[u8; 3]> = (0..w * h).map(|i| [(i * 5) as u8, (i * 3) as u8, 200]).collect();
        let backdrop = Backdrop::new(&background, w);
        let look = Look {
            sampling: Sampling::Bilinear,
            shading: 64,
            tone: Tone::Gain,
            caustics: 200,
            reflection: 1024,
            glint: crate::scene::Glint { peak: 230, ..crate::scene::Glint::NONE },
            ..Look::PLAIN
        };
        for edge in ["reflect", "absorb", "wrap"] {
            // A round wall in the middle, as a scene makes it; its cells stay 0, as the water
            // keeps them.
            let source = format!(
                "[video]\nwidth = {w}\nheight = {h}\nframes = 1\n[water]\nrefraction = 0.05\n[edges]\nall = \"{edge}\"\n\
                 [[obstacle]]\nshape = \"circle\"\nx = 20\ny = 6\nradius = 3\n"
            );
            let scene = Scene::from_toml_str(&source, std::path::Path::new("edges.toml")).unwrap();
            let shore = Arc::new(Shore::for_scene(&scene).unwrap());
            assert!(shore.walls().is_some_and(|walls| walls.count() > 0));
            let heights: Vec<i16> =
                (0..w * h).map(|i| if shore.is_wall(i) { 0 } else { ((i * 7919 % 401) as i64 - 200) as i16 }).collect();
            let lens = Lens::new(&scene, &shore, Bands::new(2));
            let mut out = vec![[0u8; 3]; w * h];
            lens.look(&heights, &lens.pens(&look), &backdrop, &mut out);
            let pen = GainPen::new(&look, 13, w, h, [edge == "wrap"; 2]);
            let floor = Caustics::new(&heights, &shore, 26);
            for y in 0..h as i64 {
                for x in 0..w as i64 {
                    let i = y as usize * w + x as usize;
                    let expected = if shore.is_wall(i) {
                        background[i]
                    } else {
                        let (dx, dy) = shore.slopes_at(&heights, x, y);
                        let slope = Slope { dx, dy, k: shore.curvature_at(&heights, x, y) };
                        pen.draw(x, y, slope, floor.light()[i], &backdrop)
                    };
                    assert_eq!(out[i], expected, "{edge} ({x}, {y})");
                }
            }
            assert!(out.iter().zip(&background).filter(|(a, b)| a != b).count() > w * h / 2);
        }
    }
}
