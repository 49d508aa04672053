//! The looks drawn by the fast passes against the formula of §9, pixel by pixel.

use super::passes::{RUN, SPAN};
use super::*;
use crate::scene::{Look, Sampling, Tone};

fn look(sampling: Sampling, shading: i64, highlight: i64, light: [i64; 2]) -> Look {
    Look { sampling, shading, highlight, light, ..Look::default() }
}

/// A look with the water terms: the tone, caustics, a sky and its reflection.
fn water(look: Look, soft: bool, caustics: i64, sky: [u8; 3], reflection: i64) -> Look {
    let tone = if soft { Tone::Soft } else { Tone::Clamp };
    Look { tone, caustics, sky, reflection, ..look }
}

/// A slope without curvature.
fn slope(dx: i64, dy: i64) -> Slope {
    Slope { dx, dy, k: 0 }
}

/// A 2×2 background with distinct channels, so a weighted sample can be worked by hand.
const PATCH: [[u8; 3]; 4] = [[0, 100, 200], [255, 100, 0], [40, 60, 80], [240, 20, 10]];

fn patch() -> Vec<u32> {
    Backdrop::new(&PATCH, 2).0
}

#[test]
fn bilinear_weighs_the_four_pixels_by_the_fractions() {
    let pen = Pen::new(&look(Sampling::Bilinear, 0, 0, [-1, -1]), 64, 2, 2);
    // At (0,0) with dx = 1, dy = 2: sx = 0 + 64 = 64 (fx = 64), sy = 128 (fy = 128).
    // Red: top = 0·192 + 255·64 = 16320; bottom = 40·192 + 240·64 = 23040;
    //      (16320·128 + 23040·128 + 32768) >> 16 = 5070848 >> 16 = 77.
    // Green: top = 100·256 = 25600; bottom = 60·192 + 20·64 = 12800;
    //      (25600·128 + 12800·128 + 32768) >> 16 = 4947968 >> 16 = 75.
    // Blue: top = 200·192 = 38400; bottom = 80·192 + 10·64 = 16000;
    //      (38400·128 + 16000·128 + 32768) >> 16 = 6996000 >> 16 = 106.
    assert_eq!(pen.pixel(0, 0, slope(1, 2), &patch()), [77, 75, 106]);
    // No fractions: the pixel itself, as nearest sampling gives.
    assert_eq!(pen.pixel(1, 1, slope(0, 0), &patch()), PATCH[3]);
    // Clamped at the far edge: sx = 256 + 256·64 → 256, so (1, ·) with fx = 0.
    assert_eq!(pen.pixel(1, 0, slope(256, 0), &patch()), PATCH[1]);
    // Clamped at 0 from a negative position.
    assert_eq!(pen.pixel(0, 0, slope(-10, -10), &patch()), PATCH[0]);
}

#[test]
fn nearest_takes_the_pixel_the_position_falls_in() {
    let pen = Pen::new(&look(Sampling::Nearest, 0, 0, [-1, -1]), 64, 2, 2);
    // sx = 64 + 64·5 = 384 → x0 = 1; sy = 0 → row 0.
    assert_eq!(pen.pixel(0, 0, slope(5, 0), &patch()), PATCH[1]);
    // The floor: sx = 256 − 64 = 192 → x0 = 0.
    assert_eq!(pen.pixel(1, 0, slope(-1, 0), &patch()), PATCH[0]);
}

#[test]
fn shading_and_highlight_on_a_known_slope() {
    // Light toward the upper left, [-1, -1]: s = −dx − dy.
    let lit = look(Sampling::Nearest, 512, 1024, [-1, -1]);
    let pen = Pen::new(&lit, 0, 2, 2);
    // dx = −20, dy = −10: s = 30; shade = (30·512) >> 8 = 60; p = (30·1024) >> 8 = 120,
    // glint = 14400 >> 8 = 56: +116 on every channel, clamped at 255.
    assert_eq!(pen.pixel(0, 0, slope(-20, -10), &patch()), [116, 216, 255]);
    // The other side: s = −30; shade = (−30·512) >> 8 = −60; no glint; clamped at 0.
    assert_eq!(pen.pixel(0, 0, slope(20, 10), &patch()), [0, 40, 140]);
    // A floor on the way: s = −1: (−512) >> 8 = −2.
    assert_eq!(pen.pixel(0, 0, slope(1, 0), &patch()), [0, 98, 198]);
    // Steep slopes saturate: shade ±255, p = 255 and glint (255·255) >> 8 = 254.
    assert_eq!(pen.pixel(1, 1, slope(-100_000, 0), &patch()), [255, 255, 255]);
    assert_eq!(pen.pixel(1, 1, slope(100_000, 0), &patch()), [0, 0, 0]);
    // The light's length scales both terms: [-2, 0] doubles s.
    let pen = Pen::new(&look(Sampling::Nearest, 256, 0, [-2, 0]), 0, 2, 2);
    assert_eq!(pen.pixel(0, 0, slope(-5, 0), &patch()), [10, 110, 210]);
}

#[test]
fn the_water_terms_on_known_slopes() {
    let lit = look(Sampling::Nearest, 512, 1024, [-1, -1]);
    let soft = Pen::new(&water(lit, true, 0, [0; 3], 0), 0, 2, 2);
    // dx = −20, dy = −10: a = 116 as above; the knee: t = (116·(512 − 116)) >> 8 = 179.
    // Each channel moves 179/256 of its way to 245: 0 + (245·179) >> 8 = 171,
    // 100 + (145·179) >> 8 = 201, 200 + (45·179) >> 8 = 231 (where clamping gave 255).
    assert_eq!(soft.pixel(0, 0, slope(-20, -10), &patch()), [171, 201, 231]);
    // a = −60: t = (60·452) >> 8 = 105, toward 10: 0 stays, 100 − (90·105) >> 8 = 64,
    // 200 − (190·105) >> 8 = 123.
    assert_eq!(soft.pixel(0, 0, slope(20, 10), &patch()), [0, 64, 123]);
    // However steep, never past 245 or 10: a = 509 gives t = 256, all the way up; a = −255
    // gives t = (255·257) >> 8 = 255: 255 − (245·255) >> 8 = 11, 100 − (90·255) >> 8 = 11,
    // and 0 stays.
    assert_eq!(soft.pixel(1, 1, slope(-100_000, 0), &patch()), [245, 245, 245]);
    assert_eq!(soft.pixel(1, 0, slope(100_000, 0), &patch()), [11, 11, 0]);
    // Caustics join the light: k = 10 at strength 512 adds (10·512) >> 8 = 20; a trough
    // (k < 0) adds nothing.
    let caustic = Pen::new(&water(look(Sampling::Nearest, 0, 0, [-1, -1]), false, 512, [0; 3], 0), 0, 2, 2);
    assert_eq!(caustic.pixel(0, 0, Slope { dx: 0, dy: 0, k: 10 }, &patch()), [20, 120, 220]);
    assert_eq!(caustic.pixel(0, 0, Slope { dx: 0, dy: 0, k: -10 }, &patch()), PATCH[0]);
    // The sky: tilt m = 30 at reflection 256, q = 30, share (30·30) >> 8 = 3:
    // 0 + (255·3) >> 8 = 2, 100 + (−100·3) >> 8 = 98, 200 + (−200·3) >> 8 = 197 (floors).
    let sky = Pen::new(&water(look(Sampling::Nearest, 0, 0, [-1, -1]), false, 0, [255, 0, 0], 256), 0, 2, 2);
    assert_eq!(sky.pixel(0, 0, slope(-20, -10), &patch()), [2, 98, 197]);
    // Steep enough, all sky: q = (30·4096) >> 8 = 480 → 256.
    let mirror = Pen::new(&water(look(Sampling::Nearest, 0, 0, [-1, -1]), false, 0, [255, 0, 0], 4096), 0, 2, 2);
    assert_eq!(mirror.pixel(0, 0, slope(-20, -10), &patch()), [255, 0, 0]);
    // Calm water is the background, whatever the terms.
    assert_eq!(mirror.pixel(0, 0, slope(0, 0), &patch()), PATCH[0]);
}

/// Heights of every kind a kernel meets: calm stretches longer and shorter than a run,
/// ordinary waves, and (for spring) wrapped extremes, steep runs beside gentle ones.
fn field(w: usize, h: usize, extreme: bool) -> Vec<i32> {
    (0..w * h)
        .map(|i| {
            let hash = (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40;
            match hash % 16 {
                0..=5 => 0,
                6 if extreme => [i32::MIN, i32::MAX, 1 << 21, -(1 << 21) - 1, 3 << 28][(hash >> 8) as usize % 5],
                _ => (hash % 60_001) as i32 - 30_000,
            }
        })
        .map(|v| if (1000..1200).contains(&(v as usize % 1400)) { 0 } else { v })
        .collect()
}

/// Draws every pixel with `Pen::pixel` (i64, straight from §9 and the water terms).
fn by_formula(heights: &[i64], w: usize, pen: &Pen, rgbx: &[u32]) -> Vec<[u8; 3]> {
    let h = heights.len() / w;
    let at = |x: i64, y: i64| {
        if (0..w as i64).contains(&x) && (0..h as i64).contains(&y) { heights[y as usize * w + x as usize] } else { 0 }
    };
    (0..(w * h) as i64)
        .map(|i| {
            let (x, y) = (i % w as i64, i / w as i64);
            let (left, right, up, down) = (at(x - 1, y), at(x + 1, y), at(x, y - 1), at(x, y + 1));
            let k = left + right + up + down - 4 * at(x, y);
            pen.pixel(x, y, Slope { dx: left - right, dy: up - down, k }, rgbx)
        })
        .collect()
}

#[test]
fn the_fast_passes_match_the_formula_pixel_by_pixel_on_both_paths() {
    let looks = [
        look(Sampling::Bilinear, 400, 900, [-1, -1]),
        look(Sampling::Bilinear, 4096, 4096, [256, -256]),
        look(Sampling::Bilinear, 1, 0, [0, 1]),
        look(Sampling::Nearest, 300, 2000, [-3, 7]),
        look(Sampling::Bilinear, 0, 0, [-1, -1]),
        water(look(Sampling::Bilinear, 96, 320, [-1, -1]), true, 200, [200, 220, 240], 64),
        water(look(Sampling::Bilinear, 4096, 4096, [256, -256]), true, 4096, [0, 255, 9], 4096),
        water(look(Sampling::Bilinear, 300, 700, [-2, 1]), false, 30, [255, 255, 255], 1),
        water(look(Sampling::Nearest, 96, 320, [-1, -1]), true, 1, [10, 20, 30], 0),
        water(look(Sampling::Nearest, 0, 0, [-1, -1]), false, 0, [90, 0, 250], 700),
    ];
    for (w, h) in [(1, 5), (2, 2), (3 * RUN + 37, 9), (61, 40), (SPAN + 3 * RUN + 11, 4)] {
        let background: Vec<[u8; 3]> =
            (0..w * h).map(|i| [(i * 7) as u8, ((i * 13) >> 2) as u8, (i >> 3) as u8]).collect();
        let backdrop = Backdrop::new(&background, w);
        let spring = field(w, h, true);
        let classic: Vec<i16> = field(w, h, false).iter().map(|&v| v as i16).collect();
        for look in &looks {
            for r in [0, 1, 2, 26, 256, 4096] {
                let pen = Pen::new(look, r, w, h);
                let wide: Vec<i64> = spring.iter().map(|&v| i64::from(v)).collect();
                let expected_spring = by_formula(&wide, w, &pen, &backdrop.0);
                let wide: Vec<i64> = classic.iter().map(|&v| i64::from(v)).collect();
                let expected_classic = by_formula(&wide, w, &pen, &backdrop.0);
                for baseline in [true, false] {
                    crate::base::simd::set_baseline_only(baseline);
                    let mut out = vec![[0u8; 3]; w * h];
                    look_band(&spring, w, &pen, &backdrop, &mut out, 0);
                    assert_eq!(out, expected_spring, "spring {w}×{h}, {look:?}, R {r}, baseline {baseline}");
                    look_band(&classic, w, &pen, &backdrop, &mut out, 0);
                    assert_eq!(out, expected_classic, "classic {w}×{h}, {look:?}, R {r}, baseline {baseline}");
                    // A band of rows from the middle draws the same as those rows of the whole.
                    let (y0, y1) = (h / 3, h / 3 + h.div_ceil(2));
                    let mut band = vec![[0u8; 3]; (y1 - y0) * w];
                    look_band(&spring, w, &pen, &backdrop, &mut band, y0);
                    assert_eq!(band, expected_spring[y0 * w..y1 * w]);
                }
                crate::base::simd::set_baseline_only(false);
            }
        }
    }
}

#[test]
fn slopes_past_steep_are_drawn_exactly() {
    // Wrapped spring heights whose slopes pass i32 but cancel in the light sum: at the
    // centre of a 3×3, dx = MAX − MIN = 2^32 − 1 and dy = (MIN + 1000) − MAX = 1001 − 2^32,
    // so with light [1, 1], s = 1000 exactly: shade (1000·64) >> 8 = 250.
    let max = i32::MAX;
    let field = [0, i32::MIN + 1000, 0, max, 0, i32::MIN, 0, max, 0];
    let backdrop = Backdrop::new(&[[0, 0, 0]; 9], 3);
    let mut out = [[0u8; 3]; 9];
    let lit = look(Sampling::Nearest, 64, 0, [1, 1]);
    look_band(&field, 3, &Pen::new(&lit, 0, 3, 3), &backdrop, &mut out, 0);
    assert_eq!(out[4], [250; 3]);
    // On a canvas wider than 8192 pixels with R = 1, a slope of 3·2^20 at x = 1 moves the
    // sample past the right edge (256 + 3·2^20 > 256·8499): the last pixel, not x = 8193.
    let w = 8500;
    let mut field = vec![0i32; w * 3];
    field[w] = 3 << 20;
    let background: Vec<[u8; 3]> = (0..w * 3).map(|i| [(i % 251) as u8, 0, 0]).collect();
    let mut out = vec![[0u8; 3]; w * 3];
    let pen = Pen::new(&look(Sampling::Nearest, 0, 0, [-1, -1]), 1, w, 3);
    look_band(&field, w, &pen, &Backdrop::new(&background, w), &mut out, 0);
    assert_eq!(out[w + 1], background[2 * w - 1]);
}
