//! Frames made smaller to fit a size budget (`--max-size`): every `step`-th frame kept, and the
//! canvas shrunk by `scale` (each output pixel the mean of a `scale`×`scale` block, rounded half
//! up; the last row and column take what is left). The frames reach the inner encoder in RGB.

use super::{EncodeTimes, Encoder};
use crate::base::error::Result;

/// Wraps an encoder of the reduced stream: takes the render's full-size RGB frames.
pub struct Reduced<E: Encoder> {
    inner: E,
    background: Vec<[u8; 3]>,
    width: usize,
    step: u64,
    scale: usize,
    seen: u64,
    small: Vec<[u8; 3]>,
}

impl<E: Encoder> Reduced<E> {
    /// Feeds `inner` every `step`-th frame of a render over `background` (`width` wide), shrunk
    /// `scale` times.
    pub fn new(inner: E, background: &[[u8; 3]], width: usize, step: u32, scale: u32) -> Self {
        Reduced {
            inner,
            background: background.to_vec(),
            width,
            step: u64::from(step.max(1)),
            scale: scale.max(1) as usize,
            seen: 0,
            small: Vec::new(),
        }
    }
}

/// `pixels` (`width` wide) shrunk `scale` times into `out`.
pub fn shrink(pixels: &[[u8; 3]], width: usize, scale: usize, out: &mut Vec<[u8; 3]>) {
    out.clear();
    let height = pixels.len() / width.max(1);
    for by in (0..height).step_by(scale) {
        for bx in (0..width).step_by(scale) {
            let (mut sum, mut n) = ([0u32; 3], 0u32);
            for y in by..(by + scale).min(height) {
                for p in &pixels[y * width + bx..y * width + (bx + scale).min(width)] {
                    (0..3).for_each(|c| sum[c] += u32::from(p[c]));
                    n += 1;
                }
            }
            out.push(sum.map(|s| ((2 * s + n) / (2 * n)) as u8));
        }
    }
}

impl<E: Encoder> Encoder for Reduced<E> {
    type Pixel = [u8; 3];

    fn background(&self) -> &[[u8; 3]] {
        &self.background
    }

    fn write_frame(&mut self, pixels: &[[u8; 3]]) -> Result<()> {
        let keep = self.seen.is_multiple_of(self.step);
        self.seen += 1;
        if !keep {
            return Ok(());
        }
        if self.scale == 1 {
            return self.inner.write_rgb(pixels);
        }
        let mut small = std::mem::take(&mut self.small);
        shrink(pixels, self.width, self.scale, &mut small);
        let written = self.inner.write_rgb(&small);
        self.small = small;
        written
    }

    fn write_rgb(&mut self, rgb: &[[u8; 3]]) -> Result<()> {
        self.write_frame(rgb)
    }

    fn compresses_apart(&self) -> bool {
        self.inner.compresses_apart()
    }

    fn compress_on(&mut self, pool: &crate::base::pool::Pool) {
        self.inner.compress_on(pool);
    }

    fn finish(self) -> Result<EncodeTimes> {
        self.inner.finish()
    }

    fn exact_rgb<'a>(&self, pixels: &'a [[u8; 3]], _scratch: &'a mut Vec<u8>) -> Option<&'a [u8]> {
        Some(pixels.as_flattened())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shrinking_averages_blocks_and_keeps_the_odd_edge() {
        // 3×3: a 2×2 block, the right column's 2×1, the bottom row's 1×2, the corner alone.
        let p = |v: u8| [v, v, v];
        let pixels = [p(0), p(1), p(10), p(2), p(4), p(20), p(100), p(200), p(7)];
        let mut out = Vec::new();
        shrink(&pixels, 3, 2, &mut out);
        // (0+1+2+4)/4 = 1.75 → 2; (10+20)/2 = 15; (100+200)/2 = 150; 7.
        assert_eq!(out, [p(2), p(15), p(150), p(7)]);
    }
}
