//! The warp as optical flow, for flow tools: backward flow `(u, v)` = the sample position minus
//! the pixel's own (in pixels; along a wrapped axis the difference nearest 0), in Middlebury's
//! `.flo` (exact: multiples of 1/256 in f32) and KITTI's 16-bit PNG (rounded to 1/64, with its
//! valid mask).

use std::path::Path;

use crate::base::error::{Error, Result};
use crate::draw::fields::Fields;

/// The flow of each pixel in 1/256 pixel: position minus `256·(x, y)`, along a wrapped axis
/// the difference in `−128·size..128·size`.
pub fn flow_q8(fields: &Fields, (w, h): (usize, usize), wrap: [bool; 2]) -> Vec<[i32; 2]> {
    let mut out = Vec::with_capacity(w * h);
    for (i, [sx, sy]) in fields.positions.iter().enumerate() {
        let (x, y) = ((i % w) as i32, (i / w) as i32);
        out.push([nearest(sx - 256 * x, w, wrap[0]), nearest(sy - 256 * y, h, wrap[1])]);
    }
    out
}

/// A difference `d` in 1/256 pixel along an axis of `size` pixels, as the flow holds it: along a
/// wrapped axis the one nearest 0, in `−128·size..128·size`.
pub(crate) fn nearest(d: i32, size: usize, wraps: bool) -> i32 {
    let span = 256 * size as i32;
    if wraps && !(-span / 2..span - span / 2).contains(&d) { (d + span / 2).rem_euclid(span) - span / 2 } else { d }
}

/// Middlebury's `.flo`: `PIEH`, width and height as i32, then `u, v` as f32 per pixel,
/// row-major.
pub fn write_flo(path: &Path, flow: &[[i32; 2]], (w, h): (usize, usize)) -> Result<()> {
    let mut out = Vec::with_capacity(12 + 8 * flow.len());
    out.extend_from_slice(b"PIEH");
    out.extend((w as i32).to_le_bytes());
    out.extend((h as i32).to_le_bytes());
    for [u, v] in flow {
        out.extend((*u as f32 / 256.0).to_le_bytes());
        out.extend((*v as f32 / 256.0).to_le_bytes());
    }
    std::fs::write(path, out).map_err(|e| Error::io(path, e))
}

/// KITTI's flow PNG: 16-bit RGB, `R = u·64 + 2^15`, `G = v·64 + 2^15` (rounded half away from
/// 0), `B` 1 where the flow is valid: not a wall, not clamped at the canvas, and within
/// KITTI's ±511.98 pixels.
pub fn write_kitti(path: &Path, flow: &[[i32; 2]], fields: &Fields, (w, h): (usize, usize)) -> Result<()> {
    let quarter = |d: i32| if d >= 0 { (d + 2) >> 2 } else { -((2 - d) >> 2) };
    let mut samples = Vec::with_capacity(6 * flow.len());
    for (&[u, v], &held) in flow.iter().zip(&fields.held) {
        let (u, v) = (quarter(u) + 32768, quarter(v) + 32768);
        let fits = (0..=65535).contains(&u) && (0..=65535).contains(&v);
        let valid = u16::from(fits && !held);
        for s in [u.clamp(0, 65535) as u16, v.clamp(0, 65535) as u16, valid] {
            samples.extend(s.to_be_bytes());
        }
    }
    let file = std::fs::File::create(path).map_err(|e| Error::io(path, e))?;
    let mut encoder = png::Encoder::new(std::io::BufWriter::new(file), w as u32, h as u32);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Sixteen);
    encoder.set_deflate_compression(png::DeflateCompression::FdeflateUltraFast);
    let fail = |e: png::EncodingError| match e {
        png::EncodingError::IoError(source) => Error::io(path, source),
        other => Error::Encode(other.to_string()),
    };
    let mut writer = encoder.write_header().map_err(fail)?;
    writer.write_image_data(&samples).map_err(fail)?;
    writer.finish().map_err(fail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flow_is_the_position_less_the_pixel_nearest_zero_across_a_wrap() {
        // A 4×1 canvas: pixel 0 samples x = 3 (one pixel to its left, across a wrap), pixel 1
        // x = 1.25, pixel 2 x = 0, pixel 3 itself.
        let fields = Fields {
            slopes: vec![[0; 2]; 4],
            positions: vec![[768, 0], [320, 0], [0, 0], [768, 0]],
            held: vec![false; 4],
        };
        let wrapped = flow_q8(&fields, (4, 1), [true, false]);
        assert_eq!(wrapped, [[-256, 0], [64, 0], [-512, 0], [0, 0]]);
        let clamped = flow_q8(&fields, (4, 1), [false, false]);
        assert_eq!(clamped, [[768, 0], [64, 0], [-512, 0], [0, 0]]);
    }
}
