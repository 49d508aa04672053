//! The water's first heights when a scene starts from a `[surface]` instead of flat water: a
//! smooth random surface, as Tian and Narasimhan's generator starts its waves (Gaussian-blurred
//! noise normalised to a height), in integers.
//!
//! With W×H cells, `[surface] height = A, blur = b, seed = s`:
//!
//! 1. noise: `n(x, y) = in_range(−32768, 32767)` for each cell in row-major order, from the rain's
//!    generator keyed by `s` (ChaCha8, Lemire's ranges: `base::rng`);
//! 2. blur: three passes of the box sum of radius `b` along x, then three along y, each
//!    `v'(x) = Σ_{k=−b..b} v((x + k) mod W)` (likewise y, mod H), in i64 without division: about
//!    a Gaussian of σ = √(b(b+1));
//! 3. scale: with `M = max |v|`, `h = trunc(v·A / M)` (0 everywhere if M = 0).

use crate::base::rng::RainRng;
use crate::scene::StartSurface;

/// Bytes making a scene's `[surface]` takes: the field in i64 and a line (0 without one).
pub fn bytes_for(scene: &crate::scene::Scene) -> u64 {
    let (w, h) = (u64::from(scene.width), u64::from(scene.height));
    if scene.surface.is_some() { 8 * (w * h + 2 * w.max(h)) } else { 0 }
}

/// The first heights of a `width`×`height` field, row-major.
pub fn start_field(surface: &StartSurface, width: usize, height: usize) -> Vec<i64> {
    let mut rng = RainRng::new(surface.seed);
    let mut field: Vec<i64> = (0..width * height).map(|_| rng.in_range(-32768, 32767)).collect();
    let b = surface.blur as usize;
    let mut line = Vec::new();
    for _ in 0..3 {
        for row in field.chunks_exact_mut(width) {
            box_sum(row, b, &mut line);
        }
    }
    let mut column = vec![0; height];
    for x in 0..width {
        for (y, c) in column.iter_mut().enumerate() {
            *c = field[y * width + x];
        }
        for _ in 0..3 {
            box_sum(&mut column, b, &mut line);
        }
        for (y, c) in column.iter().enumerate() {
            field[y * width + x] = *c;
        }
    }
    let peak = field.iter().map(|v| v.unsigned_abs()).max().unwrap_or(0);
    if peak == 0 {
        return field;
    }
    let a = i128::from(surface.height);
    field.iter_mut().for_each(|v| *v = (i128::from(*v) * a / i128::from(peak)) as i64);
    field
}

/// `values[i] = Σ_{k=−b..b} values[(i + k) mod n]`, with `scratch` for the old values.
fn box_sum(values: &mut [i64], b: usize, scratch: &mut Vec<i64>) {
    let n = values.len();
    scratch.clear();
    scratch.extend_from_slice(values);
    let at = |i: isize| scratch[i.rem_euclid(n as isize) as usize];
    let mut sum: i64 = (-(b as isize)..=b as isize).map(at).sum();
    for (i, v) in values.iter_mut().enumerate() {
        *v = sum;
        let i = i as isize;
        sum += at(i + b as isize + 1) - at(i - b as isize);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_box_sum_wraps() {
        let mut v = vec![1, 2, 3, 4, 5];
        box_sum(&mut v, 1, &mut Vec::new());
        assert_eq!(v, [5 + 1 + 2, 1 + 2 + 3, 2 + 3 + 4, 3 + 4 + 5, 4 + 5 + 1]);
        // A radius wider than the line counts cells more than once, as the modulo says.
        let mut v = vec![1, 10];
        box_sum(&mut v, 2, &mut Vec::new());
        assert_eq!(v, [1 + 10 + 1 + 10 + 1, 10 + 1 + 10 + 1 + 10]);
    }

    #[test]
    fn the_surface_peaks_at_its_height_and_is_smooth_and_seeded() {
        let spec = StartSurface { height: 600, blur: 4, seed: 9 };
        let field = start_field(&spec, 64, 48);
        assert_eq!(field.iter().map(|v| v.abs()).max(), Some(600));
        assert!(field.iter().any(|&v| v < -100) && field.iter().any(|&v| v > 100));
        // Neighbours differ by a small part of the range: blurred, not noise.
        let steepest = field.chunks_exact(64).flat_map(|r| r.windows(2).map(|w| (w[0] - w[1]).abs())).max().unwrap();
        assert!(steepest < 120, "{steepest}");
        assert_eq!(start_field(&spec, 64, 48), field);
        assert_ne!(start_field(&StartSurface { seed: 10, ..spec }, 64, 48), field);
    }
}
