//! Refraction (SPEC §5): each output pixel is the background pixel displaced by the local slope.

use crate::water::Heights;

/// Fills `out` with `background` displaced by the slope of `heights`, nearest-pixel:
/// `ox = ((h(x-1,y) - h(x+1,y))·R) >> 8`, likewise `oy`, the source clamped to the canvas.
///
/// `P` is whatever the encoder works in: palette indices for GIF, RGB for PNG. Every output
/// pixel is a background pixel, so no colour the background lacks can appear.
pub fn refract<P: Copy>(heights: Heights<'_>, width: usize, refraction_q8: i64, background: &[P], out: &mut [P]) {
    match heights {
        Heights::I16(h) => refract_field(h, width, refraction_q8, background, out),
        Heights::I32(h) => refract_field(h, width, refraction_q8, background, out),
    }
}

fn refract_field<H: Copy + Into<i64>, P: Copy>(h: &[H], width: usize, r: i64, background: &[P], out: &mut [P]) {
    let height = h.len() / width;
    let (max_x, max_y) = (width as i64 - 1, height as i64 - 1);
    // Heights outside the canvas read as 0.
    let at = |x: usize, y: usize| -> i64 { h[y * width + x].into() };
    for y in 0..height {
        for x in 0..width {
            let left = if x > 0 { at(x - 1, y) } else { 0 };
            let right = if x < width - 1 { at(x + 1, y) } else { 0 };
            let up = if y > 0 { at(x, y - 1) } else { 0 };
            let down = if y < height - 1 { at(x, y + 1) } else { 0 };
            let ox = ((left - right) * r) >> 8;
            let oy = ((up - down) * r) >> 8;
            let sx = (x as i64 + ox).clamp(0, max_x) as usize;
            let sy = (y as i64 + oy).clamp(0, max_y) as usize;
            out[y * width + x] = background[sy * width + sx];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 4×3 background numbered 0..12, so the output names the source pixel.
    fn numbered() -> Vec<u32> {
        (0..12).collect()
    }

    #[test]
    fn flat_water_shows_the_background() {
        let h = vec![0i16; 12];
        let mut out = vec![99u32; 12];
        refract(Heights::I16(&h), 4, 256, &numbered(), &mut out);
        assert_eq!(out, numbered());
    }

    #[test]
    fn slope_moves_the_sample_and_floors() {
        // One dent of -3 at (1,1) in a 4×3 field.
        let mut h = vec![0i32; 12];
        h[5] = -3;
        let mut out = vec![0u32; 12];
        // R = 128 (refraction 0.5).
        refract(Heights::I32(&h), 4, 128, &numbered(), &mut out);
        // (0,1): dx = h(-1,1) - h(1,1) = 0 - -3 = 3; ox = 384 >> 8 = 1 → source (1,1) = 5.
        assert_eq!(out[4], 5);
        // (2,1): dx = h(1,1) - h(3,1) = -3; ox = -384 >> 8 = -2 (floors) → source (0,1) = 4.
        assert_eq!(out[6], 4);
        // (1,0): dy = h(1,-1) - h(1,1) = 3; oy = 1 → source (1,1) = 5.
        assert_eq!(out[1], 5);
        // (1,2): dy = -3 → oy = -2 → source row clamps to 0: (1,0) = 1.
        assert_eq!(out[9], 1);
        // (1,1) itself has flat neighbours.
        assert_eq!(out[5], 5);
    }

    #[test]
    fn huge_slopes_clamp_to_the_canvas() {
        let mut h = vec![0i32; 12];
        h[5] = i32::MIN;
        h[6] = i32::MAX;
        let mut out = vec![0u32; 12];
        refract(Heights::I32(&h), 4, 4096, &numbered(), &mut out);
        // (2,1): dx = h(1,1) - h(3,1) = MIN → far left, clamped to x = 0.
        assert_eq!(out[6], 4);
        // (1,1): dx = 0 - MAX → far left; (0,1) = 4.
        assert_eq!(out[5], 4);
    }
}
