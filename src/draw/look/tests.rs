//! The looks drawn by the fast passes against the formula of §9, pixel by pixel.

use super::*;

fn look(sampling: Sampling, shading: i64, highlight: i64, light: [i64; 2]) -> Look {
    Look { sampling, shading, highlight, light }
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
    assert_eq!(pen.pixel(0, 0, 1, 2, &patch()), [77, 75, 106]);
    // No fractions: the pixel itself, as nearest sampling gives.
    assert_eq!(pen.pixel(1, 1, 0, 0, &patch()), PATCH[3]);
    // Clamped at the far edge: sx = 256 + 256·64 → 256, so (1, ·) with fx = 0.
    assert_eq!(pen.pixel(1, 0, 256, 0, &patch()), PATCH[1]);
    // Clamped at 0 from a negative position.
    assert_eq!(pen.pixel(0, 0, -10, -10, &patch()), PATCH[0]);
}

#[test]
fn nearest_takes_the_pixel_the_position_falls_in() {
    let pen = Pen::new(&look(Sampling::Nearest, 0, 0, [-1, -1]), 64, 2, 2);
    // sx = 64 + 64·5 = 384 → x0 = 1; sy = 0 → row 0.
    assert_eq!(pen.pixel(0, 0, 5, 0, &patch()), PATCH[1]);
    // The floor: sx = 256 − 64 = 192 → x0 = 0.
    assert_eq!(pen.pixel(1, 0, -1, 0, &patch()), PATCH[0]);
}

#[test]
fn shading_and_highlight_on_a_known_slope() {
    // Light toward the upper left, [-1, -1]: s = −dx − dy.
    let lit = look(Sampling::Nearest, 512, 1024, [-1, -1]);
    let pen = Pen::new(&lit, 0, 2, 2);
    // dx = −20, dy = −10: s = 30; shade = (30·512) >> 8 = 60; p = (30·1024) >> 8 = 120,
    // glint = 14400 >> 8 = 56: +116 on every channel, clamped at 255.
    assert_eq!(pen.pixel(0, 0, -20, -10, &patch()), [116, 216, 255]);
    // The other side: s = −30; shade = (−30·512) >> 8 = −60; no glint; clamped at 0.
    assert_eq!(pen.pixel(0, 0, 20, 10, &patch()), [0, 40, 140]);
    // A floor on the way: s = −1: (−512) >> 8 = −2.
    assert_eq!(pen.pixel(0, 0, 1, 0, &patch()), [0, 98, 198]);
    // Steep slopes saturate: shade ±255, p = 255 and glint (255·255) >> 8 = 254.
    assert_eq!(pen.pixel(1, 1, -100_000, 0, &patch()), [255, 255, 255]);
    assert_eq!(pen.pixel(1, 1, 100_000, 0, &patch()), [0, 0, 0]);
    // The light's length scales both terms: [-2, 0] doubles s.
    let pen = Pen::new(&look(Sampling::Nearest, 256, 0, [-2, 0]), 0, 2, 2);
    assert_eq!(pen.pixel(0, 0, -5, 0, &patch()), [10, 110, 210]);
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

/// Draws every pixel with `Pen::pixel` (i64, straight from §9).
fn by_formula(heights: &[i64], w: usize, pen: &Pen, rgbx: &[u32]) -> Vec<[u8; 3]> {
    let h = heights.len() / w;
    let at = |x: i64, y: i64| {
        if (0..w as i64).contains(&x) && (0..h as i64).contains(&y) { heights[y as usize * w + x as usize] } else { 0 }
    };
    (0..(w * h) as i64)
        .map(|i| {
            let (x, y) = (i % w as i64, i / w as i64);
            pen.pixel(x, y, at(x - 1, y) - at(x + 1, y), at(x, y - 1) - at(x, y + 1), rgbx)
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
                    look_band(&spring, w, look, r, &backdrop, &mut out, 0);
                    assert_eq!(out, expected_spring, "spring {w}×{h}, {look:?}, R {r}, baseline {baseline}");
                    look_band(&classic, w, look, r, &backdrop, &mut out, 0);
                    assert_eq!(out, expected_classic, "classic {w}×{h}, {look:?}, R {r}, baseline {baseline}");
                    // A band of rows from the middle draws the same as those rows of the whole.
                    let (y0, y1) = (h / 3, h / 3 + h.div_ceil(2));
                    let mut band = vec![[0u8; 3]; (y1 - y0) * w];
                    look_band(&spring, w, look, r, &backdrop, &mut band, y0);
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
    look_band(&field, 3, &lit, 0, &backdrop, &mut out, 0);
    assert_eq!(out[4], [250; 3]);
    // On a canvas wider than 8192 pixels with R = 1, a slope of 3·2^20 at x = 1 moves the
    // sample past the right edge (256 + 3·2^20 > 256·8499): the last pixel, not x = 8193.
    let w = 8500;
    let mut field = vec![0i32; w * 3];
    field[w] = 3 << 20;
    let background: Vec<[u8; 3]> = (0..w * 3).map(|i| [(i % 251) as u8, 0, 0]).collect();
    let mut out = vec![[0u8; 3]; w * 3];
    look_band(&field, w, &look(Sampling::Nearest, 0, 0, [-1, -1]), 1, &Backdrop::new(&background, w), &mut out, 0);
    assert_eq!(out[w + 1], background[2 * w - 1]);
}
