//! Pictures for diff reports: an RGB canvas with rectangles, copies, integer scaling and text in
//! an 8×8 bitmap font (font8x8's public-domain glyphs; outside ASCII, `?`).

/// An RGB picture, row-major.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Canvas {
    /// Width in pixels.
    pub width: usize,
    /// Height in pixels.
    pub height: usize,
    /// RGB bytes, `3·width·height`.
    pub rgb: Vec<u8>,
}

/// Height of a line of text at scale 1, with its spacing.
pub const LINE: usize = 10;
/// Width of one character at scale 1.
pub const CHAR: usize = 8;

impl Canvas {
    /// A canvas filled with `color`.
    pub fn new(width: usize, height: usize, color: [u8; 3]) -> Canvas {
        let rgb = color.iter().copied().cycle().take(width * height * 3).collect();
        Canvas { width, height, rgb }
    }

    /// A canvas holding `rgb` (`3·width·height` bytes).
    pub fn from_rgb(width: usize, height: usize, rgb: Vec<u8>) -> Canvas {
        debug_assert_eq!(rgb.len(), width * height * 3);
        Canvas { width, height, rgb }
    }

    /// Sets one pixel, if it is on the canvas.
    pub fn set(&mut self, x: usize, y: usize, color: [u8; 3]) {
        if x < self.width && y < self.height {
            let at = (y * self.width + x) * 3;
            self.rgb[at..at + 3].copy_from_slice(&color);
        }
    }

    /// Fills a rectangle (clipped to the canvas).
    pub fn fill(&mut self, x: usize, y: usize, w: usize, h: usize, color: [u8; 3]) {
        for yy in y..(y + h).min(self.height) {
            for xx in x..(x + w).min(self.width) {
                self.set(xx, yy, color);
            }
        }
    }

    /// Draws a rectangle's one-pixel outline.
    pub fn outline(&mut self, x0: usize, y0: usize, x1: usize, y1: usize, color: [u8; 3]) {
        for x in x0..=x1 {
            self.set(x, y0, color);
            self.set(x, y1, color);
        }
        for y in y0..=y1 {
            self.set(x0, y, color);
            self.set(x1, y, color);
        }
    }

    /// Copies `src` with its top left at (x, y), clipped to the canvas.
    pub fn blit(&mut self, x: usize, y: usize, src: &Canvas) {
        if x >= self.width {
            return;
        }
        let w = src.width.min(self.width - x);
        for row in 0..src.height.min(self.height.saturating_sub(y)) {
            let from = &src.rgb[row * src.width * 3..][..w * 3];
            let at = ((y + row) * self.width + x) * 3;
            self.rgb[at..at + w * 3].copy_from_slice(from);
        }
    }

    /// The picture enlarged `factor` times, each pixel a square.
    pub fn scaled_up(&self, factor: usize) -> Canvas {
        let factor = factor.max(1);
        let (w, h) = (self.width * factor, self.height * factor);
        let mut out = Vec::with_capacity(w * h * 3);
        for y in 0..h {
            let row = &self.rgb[(y / factor) * self.width * 3..][..self.width * 3];
            for p in row.chunks_exact(3) {
                for _ in 0..factor {
                    out.extend_from_slice(p);
                }
            }
        }
        Canvas::from_rgb(w, h, out)
    }

    /// The picture shrunk `step` times: each `step`×`step` block becomes the pixel that `pick`
    /// chooses among the block's pixel indices.
    pub fn shrunk(&self, step: usize, pick: impl Fn(&[usize]) -> usize) -> Canvas {
        let step = step.max(1);
        let (w, h) = (self.width.div_ceil(step), self.height.div_ceil(step));
        let mut out = Vec::with_capacity(w * h * 3);
        let mut block = Vec::with_capacity(step * step);
        for by in (0..self.height).step_by(step) {
            for bx in (0..self.width).step_by(step) {
                block.clear();
                for y in by..(by + step).min(self.height) {
                    block.extend((bx..(bx + step).min(self.width)).map(|x| y * self.width + x));
                }
                let i = pick(&block);
                out.extend_from_slice(&self.rgb[i * 3..i * 3 + 3]);
            }
        }
        Canvas::from_rgb(w, h, out)
    }

    /// The rectangle `x0..x1` × `y0..y1` as a canvas of its own.
    pub fn crop(&self, x0: usize, y0: usize, x1: usize, y1: usize) -> Canvas {
        let (x1, y1) = (x1.min(self.width), y1.min(self.height));
        let mut out = Vec::with_capacity((x1 - x0) * (y1 - y0) * 3);
        for y in y0..y1 {
            out.extend_from_slice(&self.rgb[(y * self.width + x0) * 3..(y * self.width + x1) * 3]);
        }
        Canvas::from_rgb(x1 - x0, y1 - y0, out)
    }

    /// Writes `text` with its top left at (x, y), on a `back` box one pixel wider all round if
    /// given, so that it reads over any picture. Returns the width used.
    pub fn text(&mut self, x: usize, y: usize, text: &str, color: [u8; 3], back: Option<[u8; 3]>) -> usize {
        if let Some(back) = back {
            self.fill(x.saturating_sub(1), y.saturating_sub(1), text_width(text) + 2, CHAR + 2, back);
        }
        for (dx, dy) in text_pixels(text) {
            self.set(x + dx, y + dy, color);
        }
        text_width(text)
    }
}

/// The lit pixels of `text` in the 8×8 font, as offsets from its top left.
pub fn text_pixels(text: &str) -> Vec<(usize, usize)> {
    let mut lit = Vec::new();
    for (i, c) in text.chars().enumerate() {
        let glyph = font8x8::legacy::BASIC_LEGACY[if c.is_ascii() { c as usize } else { '?' as usize }];
        for (row, bits) in glyph.iter().enumerate() {
            lit.extend((0..8).filter(|col| bits >> col & 1 == 1).map(|col| (i * CHAR + col, row)));
        }
    }
    lit
}

/// The width of `text` in pixels.
pub fn text_width(text: &str) -> usize {
    text.chars().count() * CHAR
}

/// `text` shortened to at most `width` pixels, its start replaced by `..` (a path keeps its end,
/// the file's name).
pub fn fit_text(text: &str, width: usize) -> String {
    let room = width / CHAR;
    let chars: Vec<char> = text.chars().collect();
    if chars.len() <= room {
        return text.to_string();
    }
    let keep = room.saturating_sub(2);
    format!("..{}", chars[chars.len() - keep..].iter().collect::<String>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_sets_the_glyphs_pixels() {
        let mut c = Canvas::new(20, 10, [0, 0, 0]);
        assert_eq!(c.text(1, 1, "I", [255, 255, 255], None), 8);
        let lit = c.rgb.chunks_exact(3).filter(|p| p[0] == 255).count();
        let glyph = font8x8::legacy::BASIC_LEGACY['I' as usize];
        assert_eq!(lit, glyph.iter().map(|b| b.count_ones() as usize).sum::<usize>());
    }

    #[test]
    fn scaling_and_cropping() {
        let c = Canvas::from_rgb(2, 1, vec![1, 1, 1, 2, 2, 2]);
        let up = c.scaled_up(2);
        assert_eq!((up.width, up.height), (4, 2));
        assert_eq!(up.rgb[..12], [1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2]);
        let down = up.shrunk(2, |block| *block.last().unwrap());
        assert_eq!(down, Canvas::from_rgb(2, 1, vec![1, 1, 1, 2, 2, 2]));
        assert_eq!(up.crop(2, 1, 4, 2).rgb, vec![2, 2, 2, 2, 2, 2]);
    }

    #[test]
    fn long_text_keeps_its_end() {
        assert_eq!(fit_text("refs/pond.gif", 200), "refs/pond.gif");
        assert_eq!(fit_text("some/long/path/pond.gif", 80), "..pond.gif");
    }
}
