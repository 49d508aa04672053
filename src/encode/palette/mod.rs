//! The one global palette of a GIF (§6.1, §9) and the maps into it.
//!
//! - A background of at most 256 colours is its own palette, exactly, sorted.
//! - Otherwise 255 colours are chosen by Wu's cuts refined by k-means (`quantize`), from the
//!   background's colours, and for a look (bilinear sampling, light) also from frames sampled
//!   over the render; index 255 is left free for transparency.
//! - Each background colour maps to its exactly nearest palette colour; with `--dither` the
//!   background is instead dithered to the palette once (Floyd–Steinberg), so frames, which
//!   only move background pixels, do not shimmer.
//! - A frame drawn with a look is mapped colour by colour through a table that remembers each
//!   colour's nearest palette entry once found.

pub mod quantize;

use std::collections::HashMap;
use std::sync::OnceLock;
use std::sync::atomic::AtomicU8;
use std::sync::atomic::Ordering::Relaxed;

use quantize::{ColourMap, Histogram, Nearest, quantize};

/// A palette for the background and each background pixel's index in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Palette {
    /// Up to 256 RGB colours.
    pub colors: Vec<[u8; 3]>,
    /// The palette index of each background pixel.
    pub indices: Vec<u8>,
    /// True when the palette holds every background colour exactly.
    pub exact: bool,
}

/// Colours a quantized palette holds: 255, so that index 255 is free for transparency.
pub const QUANTIZED: usize = 255;

/// Most pixels a palette is chosen from (a 1080p frame has fewer): larger pictures are
/// sampled evenly, which bounds the quantizer's memory.
pub const SAMPLE: usize = 1 << 21;

/// Bytes the quantizer holds per pixel it is given (at most [`SAMPLE`]): the histogram, the
/// sorted colours, the cuts' list and k-means' bounds, per distinct colour.
pub const QUANTIZER_BYTES_PER_PIXEL: u64 = 136;

impl Palette {
    /// The background's own colours when there are at most 256 (sorted, so the file does not
    /// depend on pixel order); otherwise 255 colours chosen from them and each pixel mapped to
    /// its nearest.
    pub fn for_background(pixels: &[[u8; 3]]) -> Palette {
        Palette::for_background_within(pixels, 256)
    }

    /// [`Palette::for_background`] in a palette of at most `entries` (2 to 256): the
    /// background's own colours when they fit, else `entries - 1` chosen, one index left free
    /// for transparency.
    pub fn for_background_within(pixels: &[[u8; 3]], entries: usize) -> Palette {
        let entries = entries.clamp(2, 256);
        let mut seen: ColourMap = HashMap::default();
        for p in pixels {
            if !seen.contains_key(p) {
                if seen.len() == entries {
                    let mut histogram = Histogram::default();
                    histogram.add_sample(pixels, SAMPLE);
                    return Palette::quantized(pixels, &histogram, entries - 1);
                }
                seen.insert(*p, 0);
            }
        }
        let mut colors: Vec<[u8; 3]> = seen.into_keys().collect();
        colors.sort_unstable();
        let index: ColourMap = colors.iter().enumerate().map(|(i, &c)| (c, i as u8)).collect();
        let indices = pixels.iter().map(|p| index[p]).collect();
        Palette { colors, indices, exact: true }
    }

    /// A palette for frames drawn with a look: 255 colours chosen from `histogram`, which holds
    /// the colours of frames sampled over the render; `pixels` (the background) are mapped to it.
    pub fn for_look(histogram: Histogram, pixels: &[[u8; 3]]) -> Palette {
        Palette::quantized(pixels, &histogram, QUANTIZED)
    }

    /// [`Palette::for_look`] with `colours` colours (at most 255).
    pub fn for_look_within(histogram: Histogram, pixels: &[[u8; 3]], colours: usize) -> Palette {
        Palette::quantized(pixels, &histogram, colours.clamp(1, QUANTIZED))
    }

    /// `colours` colours from `histogram`; each pixel of `pixels` mapped to its nearest.
    fn quantized(pixels: &[[u8; 3]], histogram: &Histogram, colours: usize) -> Palette {
        let quantized = quantize(histogram, colours);
        let mut map = ColourIndex::new(&quantized.colours);
        map.learn(&quantized.keys, &quantized.nearest);
        let indices = pixels.iter().map(|&p| map.index(p)).collect();
        Palette { colors: quantized.colours, indices, exact: false }
    }

    /// A free index for transparent pixels, if the palette leaves one.
    pub fn transparent_index(&self) -> Option<u8> {
        u8::try_from(self.colors.len()).ok()
    }

    /// Dithers `pixels` (the background, `width` wide) to this palette with Floyd–Steinberg
    /// error diffusion, left to right, top to bottom (integer errors, 7/16, 3/16, 5/16, 1/16),
    /// replacing the nearest-colour indices. An exact palette has nothing to dither.
    pub fn dither(&mut self, pixels: &[[u8; 3]], width: usize) {
        if self.exact || width == 0 {
            return;
        }
        let mut map = ColourIndex::new(&self.colors);
        // Errors carried to the current and the next row, in 1/16 units.
        let mut this_row = vec![[0i32; 3]; width + 2];
        let mut next_row = vec![[0i32; 3]; width + 2];
        for (y, row) in pixels.chunks_exact(width).enumerate() {
            for (x, p) in row.iter().enumerate() {
                let carried = this_row[x + 1];
                let want: [i32; 3] = std::array::from_fn(|c| (i32::from(p[c]) + carried[c] / 16).clamp(0, 255));
                let index = map.index(want.map(|v| v as u8));
                self.indices[y * width + x] = index;
                let got = self.colors[usize::from(index)];
                for c in 0..3 {
                    let error = want[c] - i32::from(got[c]);
                    this_row[x + 2][c] += error * 7;
                    next_row[x][c] += error * 3;
                    next_row[x + 1][c] += error * 5;
                    next_row[x + 2][c] += error;
                }
            }
            std::mem::swap(&mut this_row, &mut next_row);
            next_row.iter_mut().for_each(|e| *e = [0; 3]);
        }
    }
}

/// Each colour's exactly nearest palette entry (squared RGB distance; the lowest index among
/// equals), remembered once found, in a table over all 2^24 colours whose pages are made only
/// where colours occur. A page holds a block of 4 reds × 4 greens × 16 blues, so that the
/// colours of a frame (a lit one has thousands, most a few levels from one another) fall on few
/// pages, which stay in cache: 20 frames of a lit 640×480 render touch 2,007 such pages against
/// 8,938 pages of the 256 blues of one red and green.
///
/// One table serves every thread that maps colours ([`ColourIndex::map`] takes `&self`): a page
/// is made once by whichever thread first needs it, and an entry is a byte that a thread writes
/// only with the one nearest index, so threads that find a colour at once write the same value.
/// What any thread reads is an entry's final value or 0 (unknown: it searches), whatever the
/// order, so the indices do not depend on the threads.
pub struct ColourIndex {
    centres: Vec<[f64; 3]>,
    search: Nearest,
    /// Per page: index + 1 per colour, 0 while unknown.
    pages: Vec<OnceLock<Box<[AtomicU8; PAGE]>>>,
    /// The last index found, the next search's first guess (neighbouring pixels are alike), for
    /// [`ColourIndex::index`].
    last: usize,
}

/// Colours a page of the table holds.
const PAGE: usize = 256;

/// Most bytes the table holds for a picture of `pixels` pixels: its page list, and a page per
/// pixel at most (each distinct colour makes at most one), every page at most.
pub fn index_bytes(pixels: u64) -> u64 {
    let pages = (1u64 << 24) / PAGE as u64;
    pages * std::mem::size_of::<OnceLock<Box<[AtomicU8; PAGE]>>>() as u64 + (PAGE as u64 * pixels).min(1 << 24)
}

impl ColourIndex {
    /// The map for `colors` (at most 255 of them).
    pub fn new(colors: &[[u8; 3]]) -> ColourIndex {
        let centres: Vec<[f64; 3]> = colors.iter().map(|c| c.map(f64::from)).collect();
        let pages = std::iter::repeat_with(OnceLock::new).take((1 << 24) / PAGE).collect();
        ColourIndex { search: Nearest::new(&centres), centres, pages, last: 0 }
    }

    /// Remembers the nearest entries already known (from the quantizer) for these colours.
    pub fn learn(&mut self, keys: &[u32], nearest: &[u8]) {
        for (&key, &index) in keys.iter().zip(nearest) {
            let (page, at) = slot(quantize::unkey(key));
            self.page(page)[at].store(index + 1, Relaxed);
        }
    }

    /// The palette index nearest each colour of `rgb`, into `out`: on any number of threads at
    /// once.
    pub fn map(&self, rgb: &[[u8; 3]], out: &mut [u8]) {
        let mut last = 0;
        for (o, &p) in out.iter_mut().zip(rgb) {
            *o = self.nearest(p, &mut last);
        }
    }

    /// The palette index nearest `colour`.
    pub fn index(&mut self, colour: [u8; 3]) -> u8 {
        let mut last = self.last;
        let found = self.nearest(colour, &mut last);
        self.last = last;
        found
    }

    /// The palette index nearest `colour`, searched from `last` where not known yet (and `last`
    /// then the index found).
    #[inline(always)]
    fn nearest(&self, colour: [u8; 3], last: &mut usize) -> u8 {
        let (page, at) = slot(colour);
        let entry = &self.page(page)[at];
        match entry.load(Relaxed) {
            0 => {
                let (found, ..) = self.search.find(&self.centres, &colour.map(f64::from), *last);
                entry.store(found as u8 + 1, Relaxed);
                *last = found;
                found as u8
            }
            known => known - 1,
        }
    }

    /// Page `page` of the table, made (all unknown) the first time it is asked for.
    #[inline(always)]
    fn page(&self, page: usize) -> &[AtomicU8; PAGE] {
        self.pages[page].get_or_init(|| Box::new([const { AtomicU8::new(0) }; PAGE]))
    }
}

/// A colour's page in the table (its block of 4 reds, 4 greens and 16 blues) and its place there.
#[inline]
fn slot(colour: [u8; 3]) -> (usize, usize) {
    let [r, g, b] = colour.map(usize::from);
    ((r >> 2) << 10 | (g >> 2) << 4 | b >> 4, (r & 3) << 6 | (g & 3) << 4 | (b & 15))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exactly_256_colours_stay_exact() {
        let pixels: Vec<[u8; 3]> = (0..512).map(|i| [(i % 256) as u8, 7, 0]).collect();
        let p = Palette::for_background(&pixels);
        assert!(p.exact);
        assert_eq!(p.colors.len(), 256);
        assert_eq!(p.transparent_index(), None);
        assert!(pixels.iter().zip(&p.indices).all(|(px, &i)| p.colors[usize::from(i)] == *px));
    }

    #[test]
    fn more_than_256_colours_are_quantized_to_at_most_255_leaving_a_transparent_slot() {
        let pixels: Vec<[u8; 3]> = (0..4096).map(|i| [(i % 64 * 4) as u8, (i / 64 * 4) as u8, 128]).collect();
        let p = Palette::for_background(&pixels);
        assert!(!p.exact);
        assert!(p.colors.len() <= 255 && p.colors.len() > 200, "{}", p.colors.len());
        assert_eq!(p.transparent_index(), Some(p.colors.len() as u8));
        assert_eq!(p.indices.len(), pixels.len());
        // Each pixel's index is the nearest colour (brute force agrees).
        for (px, &i) in pixels.iter().zip(&p.indices) {
            let d = |c: &[u8; 3]| (0..3).map(|k| (i32::from(c[k]) - i32::from(px[k])).pow(2)).sum::<i32>();
            let best = p.colors.iter().map(d).min().unwrap();
            assert_eq!(d(&p.colors[usize::from(i)]), best);
        }
    }

    /// PSNR of the palette's picture of `pixels` against the pixels themselves.
    fn psnr(p: &Palette, pixels: &[[u8; 3]]) -> f64 {
        let squares: f64 = pixels
            .iter()
            .zip(&p.indices)
            .flat_map(|(px, &i)| {
                (0..3).map(move |c| (f64::from(px[c]) - f64::from(p.colors[usize::from(i)][c])).powi(2))
            })
            .sum();
        10.0 * (255.0f64.powi(2) / (squares / (pixels.len() * 3) as f64)).log10()
    }

    #[test]
    fn a_gradient_keeps_its_detail() {
        // 256×128: red along x, green along y, blue between; 32,768 colours.
        let pixels: Vec<[u8; 3]> = (0..128u32)
            .flat_map(|y| (0..256u32).map(move |x| [x as u8, (2 * y) as u8, ((x + 2 * y) / 3) as u8]))
            .collect();
        let p = Palette::for_background(&pixels);
        // The floor: a uniform 6×7×6 palette gives 25.2 dB on this picture, and the NeuQuant
        // palette of earlier versions 31.8 dB; a palette that spends its colours where the
        // picture needs them must clear 35 dB (bench/palette.py compares with ffmpeg on renders).
        let got = psnr(&p, &pixels);
        assert!(got >= 35.0, "{got:.2} dB");
    }

    #[test]
    fn the_colour_index_remembers_exact_nearest_entries() {
        let colors = [[0, 0, 0], [255, 255, 255], [255, 0, 0]];
        let mut map = ColourIndex::new(&colors);
        assert_eq!(map.index([10, 10, 10]), 0);
        assert_eq!(map.index([200, 20, 20]), 2);
        assert_eq!(map.index([200, 200, 210]), 1);
        assert_eq!(map.index([10, 10, 10]), 0);
    }

    #[test]
    fn dithering_spreads_the_error_to_the_neighbours() {
        // A flat grey of 100 over a black-and-white palette dithers to about 100/255 white.
        let mut pixels: Vec<[u8; 3]> = vec![[100, 100, 100]; 64 * 64];
        pixels[0] = [1, 2, 3];
        let mut p = Palette { colors: vec![[0, 0, 0], [255, 255, 255]], indices: vec![0; 64 * 64], exact: false };
        p.dither(&pixels, 64);
        let white = p.indices.iter().filter(|&&i| i == 1).count() as f64 / pixels.len() as f64;
        assert!((white - 100.0 / 255.0).abs() < 0.02, "{white}");
    }

    #[test]
    fn one_colour_table_mapped_by_several_threads_gives_each_colour_its_nearest_entry() {
        // A palette of 200 colours, and 60,000 colours mapped by four threads at once through one
        // table, each thread its own stretch, the stretches overlapping in colour: every index
        // is the brute-force nearest (lowest index among equals), whoever found it first.
        let palette: Vec<[u8; 3]> =
            (0..200u32).map(|i| [(i * 37 % 256) as u8, (i * 91 % 256) as u8, (i * 13 % 256) as u8]).collect();
        let colours: Vec<[u8; 3]> =
            (0..60_000u32).map(|i| [(i * 7 % 256) as u8, (i / 7 % 256) as u8, ((i * 3) / 11 % 256) as u8]).collect();
        let table = ColourIndex::new(&palette);
        let mut out = vec![0u8; colours.len()];
        std::thread::scope(|scope| {
            for (rgb, out) in colours.chunks(15_000).zip(out.chunks_mut(15_000)) {
                let table = &table;
                scope.spawn(move || table.map(rgb, out));
            }
        });
        let distance = |a: [u8; 3], b: [u8; 3]| (0..3).map(|k| (i32::from(a[k]) - i32::from(b[k])).pow(2)).sum::<i32>();
        for (c, &i) in colours.iter().zip(&out) {
            let best = (0..palette.len()).min_by_key(|&j| (distance(*c, palette[j]), j)).unwrap();
            assert_eq!(usize::from(i), best, "{c:?}");
        }
    }
}
