//! The picture under the water: decoded, fitted to the canvas, flattened to opaque RGB.

use std::path::Path;

use crate::base::error::{Error, Result};
use crate::base::limits::DEFAULT_BUDGET;
use crate::base::picture::{self, Fit, Given, ImageHeader};
use crate::scene::{Pattern, Scene};

/// What lies under the water: the picture after fit and alpha flattening, one opaque RGB pixel
/// per canvas pixel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Background {
    /// Canvas width.
    pub width: usize,
    /// Canvas height.
    pub height: usize,
    /// Row-major RGB pixels.
    pub pixels: Vec<[u8; 3]>,
}

impl Background {
    /// Builds the scene's background: its image fitted and flattened, its pattern, or its colour,
    /// within the default memory budget.
    pub fn for_scene(scene: &Scene) -> Result<Background> {
        Background::for_scene_within(scene, DEFAULT_BUDGET)
    }

    /// [`Background::for_scene`], refusing an image whose decode would take more than a quarter
    /// of `budget` bytes (checked from its header, and enforced by the decoder).
    pub fn for_scene_within(scene: &Scene, budget: u64) -> Result<Background> {
        Background::for_scene_given(scene, budget, &Given::none())
    }

    /// [`Background::for_scene_within`], its image read from `given` where it is there.
    pub fn for_scene_given(scene: &Scene, budget: u64, given: &Given) -> Result<Background> {
        let (width, height) = (scene.width as usize, scene.height as usize);
        let spec = &scene.background;
        let pixels = match (&spec.image, spec.pattern) {
            (Some(path), _) => {
                let image = picture::decode_within_from(path, given.source(path), budget)
                    .map_err(|reason| spec.locate(background_error(path, reason)))?;
                fit(&image, width, height, spec.fit, spec.color)
            }
            (None, Some(pattern)) => draw(pattern, width, height),
            (None, None) => vec![spec.color; width * height],
        };
        Ok(Background { width, height, pixels })
    }
}

fn background_error(path: &Path, reason: impl std::fmt::Display) -> Error {
    Error::Background { path: path.to_path_buf(), reason: reason.to_string() }
}

/// The header of the scene's background image, if it has one (its size upright, and what
/// decoding it takes), read without decoding the pixels; errors point into the scene.
pub fn image_header(scene: &Scene) -> Result<Option<ImageHeader>> {
    let spec = &scene.background;
    let probe = |path: &Path| picture::probe(path).map_err(|reason| background_error(path, reason));
    spec.image.as_deref().map(probe).transpose().map_err(|e| spec.locate(e))
}

/// [`image_header`], also refusing (as the render does before decoding) an image whose decode
/// would take more than a quarter of the memory `budget`.
pub fn image_header_within(scene: &Scene, budget: u64) -> Result<Option<ImageHeader>> {
    let header = image_header(scene)?;
    if let (Some(header), Some(path)) = (&header, &scene.background.image) {
        picture::check_within(header, budget)
            .map_err(|reason| scene.background.locate(background_error(path, reason)))?;
    }
    Ok(header)
}

/// Flattens one RGBA pixel over `color`: `(c·a + color·(255−a) + 127) / 255` per channel.
pub fn flatten(rgba: [u8; 4], color: [u8; 3]) -> [u8; 3] {
    let a = u32::from(rgba[3]);
    let mix = |c: u8, bg: u8| ((u32::from(c) * a + u32::from(bg) * (255 - a) + 127) / 255) as u8;
    [mix(rgba[0], color[0]), mix(rgba[1], color[1]), mix(rgba[2], color[2])]
}

/// Fits the image to the canvas (nearest pixel, so the palette of pixel art survives) and
/// flattens it over `color`; uncovered `contain` bars are `color`.
pub fn fit(image: &image::RgbaImage, width: usize, height: usize, how: Fit, color: [u8; 3]) -> Vec<[u8; 3]> {
    picture::fit(image, (width, height), how, color, |rgba| flatten(rgba, color))
}

/// Draws a procedural background.
pub fn draw(pattern: Pattern, width: usize, height: usize) -> Vec<[u8; 3]> {
    let side = width.min(height);
    let mut out = Vec::with_capacity(width * height);
    match pattern {
        Pattern::Checker => {
            let cell = (side / 8).max(2);
            for y in 0..height {
                for x in 0..width {
                    let dark = (x / cell + y / cell).is_multiple_of(2);
                    out.push(if dark { [38, 52, 74] } else { [222, 206, 160] });
                }
            }
        }
        Pattern::Tiles => {
            let cell = (side / 10).max(4);
            let grout = (cell / 10).max(1);
            let span = (width + height).max(1) as u32;
            for y in 0..height {
                for x in 0..width {
                    let (tx, ty) = (x / cell, y / cell);
                    // Light falls from the top left: a gradient across the whole pool.
                    let light = 255 - (160 * (x + y) as u32 / span);
                    if x % cell < grout || y % cell < grout {
                        let g = (150 + light * 90 / 255) as u8;
                        out.push([g, g, g.saturating_add(8)]);
                    } else {
                        // Each tile a slightly different glaze, from a small integer hash.
                        let hash = (tx as u32).wrapping_mul(73_856_093) ^ (ty as u32).wrapping_mul(19_349_663);
                        let tint = (hash >> 7) % 40;
                        let r = (10 + tint / 2) * light / 255;
                        let g = (110 + tint) * light / 255;
                        let b = (160 + tint * 2) * light / 255;
                        out.push([r as u8, g as u8, b.min(255) as u8]);
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flatten_rounds_and_keeps_opaque_and_clear_exact() {
        assert_eq!(flatten([10, 20, 30, 255], [200, 200, 200]), [10, 20, 30]);
        assert_eq!(flatten([10, 20, 30, 0], [200, 100, 0]), [200, 100, 0]);
        // (255·128 + 0·127 + 127) / 255 = 32767 / 255 = 128.
        assert_eq!(flatten([255, 0, 0, 128], [0, 0, 0]), [128, 0, 0]);
        // (0·1 + 255·254 + 127) / 255 = 64897 / 255 = 254.
        assert_eq!(flatten([0, 0, 0, 1], [255, 255, 255]), [254, 254, 254]);
    }

    fn numbered(w: u32, h: u32) -> image::RgbaImage {
        image::RgbaImage::from_fn(w, h, |x, y| image::Rgba([x as u8, y as u8, 0, 255]))
    }

    #[test]
    fn same_size_is_identity_for_every_fit() {
        let img = numbered(5, 3);
        for how in [Fit::Cover, Fit::Contain, Fit::Stretch] {
            let out = fit(&img, 5, 3, how, [9, 9, 9]);
            assert_eq!(out[7], [2, 1, 0]);
            assert_eq!(out[14], [4, 2, 0]);
        }
    }

    #[test]
    fn cover_crops_evenly_and_contain_leaves_bars() {
        // A 4×2 image onto a 2×2 canvas.
        let img = numbered(4, 2);
        // Cover: scaled to 4×2, offset 1 → columns 1 and 2.
        let out = fit(&img, 2, 2, Fit::Cover, [9, 9, 9]);
        assert_eq!(out, vec![[1, 0, 0], [2, 0, 0], [1, 1, 0], [2, 1, 0]]);
        // Contain: scaled to 2×1, row offset (2-1)/2 = 0, so row 1 is a bar.
        let out = fit(&img, 2, 2, Fit::Contain, [9, 9, 9]);
        // source x = ((2x+1)·4)/4 → 1, 3; source y = (1·2)/2 = 1.
        assert_eq!(out, vec![[1, 1, 0], [3, 1, 0], [9, 9, 9], [9, 9, 9]]);
        // Stretch: x → 1, 3; y → 0, 1.
        let out = fit(&img, 2, 2, Fit::Stretch, [9, 9, 9]);
        assert_eq!(out, vec![[1, 0, 0], [3, 0, 0], [1, 1, 0], [3, 1, 0]]);
    }

    #[test]
    fn upscaling_repeats_pixels() {
        let img = numbered(2, 1);
        let out = fit(&img, 4, 2, Fit::Stretch, [0, 0, 0]);
        let xs: Vec<u8> = out.iter().map(|p| p[0]).collect();
        assert_eq!(xs, vec![0, 0, 1, 1, 0, 0, 1, 1]);
    }

    #[test]
    fn patterns_fill_the_canvas() {
        assert_eq!(draw(Pattern::Tiles, 7, 5).len(), 35);
        let checker = draw(Pattern::Checker, 16, 16);
        let mut colours = checker.clone();
        colours.sort();
        colours.dedup();
        assert_eq!(colours.len(), 2);
    }
}
