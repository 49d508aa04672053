//! `diff`: compares two renders frame by frame as a viewer sees them, the frame count, canvas
//! size, per-frame delays (where both sides have timing) and pixels.

pub mod draw;
pub mod input;
pub mod json;
pub mod page;
pub mod palettes;
pub mod report;
pub mod scene;

use std::path::Path;
use std::sync::mpsc;

use crate::base::error::Result;
use crate::base::threads::spawn_scoped;
use crate::decode::frames::{Delay, Frame, FrameSource, Info, Kind, Pixels};
use crate::encode::manifest::{self, PixelKind};
use scene::Through;

/// How strict the comparison is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Options {
    /// A pixel differs when a channel differs by more than this.
    pub tolerance: u8,
    /// A frame passes with up to this many differing pixels.
    pub max_pixels: u64,
    /// A frame also passes when its PSNR is at least this, in tenths of a dB (`--min-psnr`: a
    /// lossy file against its render).
    pub min_psnr_tenths: Option<u32>,
}

/// Which sides have a frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Presence {
    /// Both sides.
    Both,
    /// Only A (B has fewer frames).
    OnlyA,
    /// Only B.
    OnlyB,
    /// A lacks this frame although it has later ones (a gap in a PNG sequence), named here.
    MissingInA(String),
    /// B lacks this frame although it has later ones.
    MissingInB(String),
}

/// The comparison of one frame.
#[derive(Debug, Clone, PartialEq)]
pub struct FrameResult {
    /// The frame index, from 0.
    pub frame: u64,
    /// Which sides have it.
    pub presence: Presence,
    /// Pixels whose largest channel difference exceeds the tolerance (`None` when compared by
    /// hash or the canvases differ).
    pub differing_pixels: Option<u64>,
    /// The largest channel difference (`None` as above).
    pub max_delta: Option<u8>,
    /// Peak signal-to-noise ratio in dB over all channels; `None` when identical or unknown.
    pub psnr: Option<f64>,
    /// For hash comparisons: whether the hashes match.
    pub hash_equal: Option<bool>,
    /// The delays on each side, where known.
    pub delays: (Option<Delay>, Option<Delay>),
    /// Whether the pixels pass (within tolerance and max pixels, or equal hashes).
    pub pixels_pass: bool,
    /// Whether timing was compared and differs.
    pub delay_differs: bool,
}

impl FrameResult {
    /// True when this frame counts as a difference.
    pub fn differs(&self) -> bool {
        self.presence != Presence::Both || !self.pixels_pass || self.delay_differs
    }
}

/// The outcome of a diff.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// Side A.
    pub a: Info,
    /// Side B.
    pub b: Info,
    /// The options used.
    pub options: Options,
    /// Frames in A.
    pub frames_a: u64,
    /// Frames in B.
    pub frames_b: u64,
    /// Whether the canvases have the same size (pixels are compared only then).
    pub same_canvas: bool,
    /// Whether per-frame delays were compared (both sides have timing).
    pub timing_compared: bool,
    /// Whether pixels were compared by hash (a manifest on either side): exact, whatever the
    /// tolerance.
    pub by_hash: bool,
    /// Every frame, in order (up to the longer side's count).
    pub results: Vec<FrameResult>,
    /// When one side shows a GIF's palette colours and the other the exact render's, pixel by
    /// pixel: how many colours the exact side's first frame has (counted up to 257). Over 256,
    /// a GIF cannot show it exactly.
    pub exact_colours: Option<usize>,
    /// Whether two GIFs with different palettes were compared past them: a pixel counts as
    /// changed only where no one colour could show as both sides' colours.
    pub past_palettes: bool,
}

impl Summary {
    /// True when the renders are the same within the options.
    pub fn same(&self) -> bool {
        self.same_canvas && self.frames_a == self.frames_b && self.results.iter().all(|r| !r.differs())
    }

    /// The frames that differ.
    pub fn differing(&self) -> impl Iterator<Item = &FrameResult> {
        self.results.iter().filter(|r| r.differs())
    }

    /// Frames present on both sides.
    pub fn compared(&self) -> u64 {
        self.frames_a.min(self.frames_b)
    }
}

/// One compared frame with its pixels, for pictures of the difference.
pub struct Compared<'a> {
    /// The comparison.
    pub result: &'a FrameResult,
    /// The canvas size of A (pixels are given only when B's is the same).
    pub size: (u32, u32),
    /// A's RGB pixels, when A has this frame as pixels.
    pub a: Option<&'a [u8]>,
    /// B's RGB pixels.
    pub b: Option<&'a [u8]>,
}

/// How two frames' pixels differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PixelDiff {
    /// Pixels whose largest channel difference exceeds the tolerance.
    pub differing: u64,
    /// The largest channel difference.
    pub max_delta: u8,
    /// The sum of squared channel differences (for PSNR).
    pub squares: u64,
}

/// Counts differing pixels of two frames' RGB bytes, the largest channel difference and the sum
/// of squared differences.
pub fn compare_pixels(a: &[u8], b: &[u8], tolerance: u8) -> PixelDiff {
    let (mut differing, mut max, mut squares) = (0u64, 0u8, 0u64);
    for (pa, pb) in a.chunks_exact(3).zip(b.chunks_exact(3)) {
        let d0 = pa[0].abs_diff(pb[0]);
        let d1 = pa[1].abs_diff(pb[1]);
        let d2 = pa[2].abs_diff(pb[2]);
        let d = d0.max(d1).max(d2);
        differing += u64::from(d > tolerance);
        max = max.max(d);
        squares += u64::from(d0) * u64::from(d0) + u64::from(d1) * u64::from(d1) + u64::from(d2) * u64::from(d2);
    }
    PixelDiff { differing, max_delta: max, squares }
}

/// How many distinct colours `rgb` holds, counting no further than `limit`.
fn count_colours(rgb: &[u8], limit: usize) -> usize {
    let mut seen = std::collections::HashSet::new();
    for p in rgb.chunks_exact(3) {
        seen.insert([p[0], p[1], p[2]]);
        if seen.len() >= limit {
            break;
        }
    }
    seen.len()
}

/// PSNR in dB for `channels` samples with the given sum of squared differences.
fn psnr(squares: u64, channels: u64) -> Option<f64> {
    (squares > 0).then(|| 10.0 * ((255.0f64 * 255.0 * channels as f64) / squares as f64).log10())
}

/// A frame's RGB bytes, if it has pixels rather than a hash.
fn rgb_of(frame: &Option<Frame>) -> Option<&[u8]> {
    match frame {
        Some(Frame { pixels: Pixels::Rgb(p), .. }) => Some(p),
        _ => None,
    }
}

/// Reads a source to its end on this thread, handing frames over a small queue.
fn pump(mut source: Box<dyn FrameSource>, out: mpsc::SyncSender<Result<Frame>>) {
    loop {
        match source.next_frame() {
            Ok(Some(frame)) => {
                if out.send(Ok(frame)).is_err() {
                    return;
                }
            }
            Ok(None) => return,
            Err(e) => {
                let _ = out.send(Err(e));
                return;
            }
        }
    }
}

/// Compares the timing of two sides frame by frame. Sides whose delays are rounded alike (two
/// GIFs) must have equal delays. Sides rounded differently (a GIF's centiseconds, a WebP's
/// milliseconds, an APNG's exact fractions) may differ by their rounding: each frame's delay by
/// at most twice the sum of their errors, and each frame's end, summed from the start, by at
/// most the sum, so a drift (a GIF of 3 cs frames for 30 fps) is caught however small a step.
struct Clock {
    /// The sum of the two sides' timing errors; `None` for sides rounded alike.
    allowed: Option<f64>,
    /// Each side's time at the end of the last frame, in seconds.
    ends: (f64, f64),
}

impl Clock {
    fn new(a: Kind, b: Kind) -> Clock {
        let (ea, eb) = (a.timing_error().unwrap_or(0.0), b.timing_error().unwrap_or(0.0));
        Clock { allowed: (ea != eb).then_some(ea + eb), ends: (0.0, 0.0) }
    }

    /// Whether this frame's delays differ (and the ends move on by them).
    fn differs(&mut self, (a, b): (Option<Delay>, Option<Delay>)) -> bool {
        let (Some(a), Some(b)) = (a, b) else { return a.is_some() != b.is_some() };
        self.ends = (self.ends.0 + a.seconds(), self.ends.1 + b.seconds());
        let Some(allowed) = self.allowed else { return !a.equals(b) };
        // A hair more, for sums of fractions in floating point; rounding half up reaches the
        // bound itself.
        let allowed = allowed + 1e-9;
        (a.seconds() - b.seconds()).abs() > 2.0 * allowed || (self.ends.0 - self.ends.1).abs() > allowed
    }
}

/// Compares `a` with `b`, calling `observe` for every frame (with pixels where there are any).
/// Both sides are decoded on their own threads, a few frames ahead.
pub fn diff(
    a: &Path,
    b: &Path,
    options: Options,
    observe: &mut dyn FnMut(&Compared<'_>) -> Result<()>,
) -> Result<Summary> {
    let ((info_a, source_a), (info_b, source_b)) = open_sides(a, b)?;
    let mut comparison = Comparison::new(&info_a, &info_b, options);
    std::thread::scope(|scope| {
        let (tx_a, rx_a) = mpsc::sync_channel(4);
        let (tx_b, rx_b) = mpsc::sync_channel(4);
        spawn_scoped(scope, "diff-a", move || pump(source_a, tx_a))?;
        spawn_scoped(scope, "diff-b", move || pump(source_b, tx_b))?;
        let (mut results, mut exact_colours) = (Vec::new(), None);
        let (mut frames_a, mut frames_b) = (0, 0);
        loop {
            let fa = rx_a.recv().ok().transpose()?;
            let mut fb = rx_b.recv().ok().transpose()?;
            if fa.is_none() && fb.is_none() {
                break;
            }
            frames_a += u64::from(fa.is_some());
            frames_b += u64::from(fb.is_some());
            let result = comparison.compare_frame(results.len() as u64, &fa, &mut fb);
            let (a, b) = if comparison.same_canvas { (rgb_of(&fa), rgb_of(&fb)) } else { (None, None) };
            if exact_colours.is_none() && info_a.colours != info_b.colours {
                let exact = if info_a.colours == PixelKind::Rgb { a } else { b };
                exact_colours = exact.map(|rgb| count_colours(rgb, 257));
            }
            observe(&Compared { result: &result, size: (info_a.width, info_a.height), a, b })?;
            results.push(result);
        }
        let Comparison { same_canvas, timing_compared, by_hash, shared, .. } = comparison;
        Ok(Summary {
            a: info_a,
            b: info_b,
            options,
            frames_a,
            frames_b,
            same_canvas,
            timing_compared,
            by_hash,
            results,
            exact_colours,
            past_palettes: shared.is_some(),
        })
    })
}

/// A side as opened: what is known of it, and its frames.
type Side = (Info, Box<dyn FrameSource>);

/// Opens both sides. A scene compared with a GIF is shown through that GIF's palette, as the
/// GIF encoder maps colours to it; compared with a manifest of GIF colours, through its own
/// GIF's palette. The other side is opened first so that its palette is known.
fn open_sides(a: &Path, b: &Path) -> Result<(Side, Side)> {
    let (kind_a, kind_b) = (input::kind_of(a)?, input::kind_of(b)?);
    let through = |other: &Info, other_path: &Path| -> Result<Through> {
        Ok(match (other.kind, &other.palette) {
            (Kind::Gif, Some(palette)) => Through::Palette(palette.clone()),
            (Kind::Manifest, _) if input::manifest_pixels(other_path)? == PixelKind::Gif => Through::OwnGif,
            _ => Through::Exact,
        })
    };
    if kind_a == Kind::Scene {
        let side_b = input::open(b, kind_b, Through::Exact)?;
        let side_a = input::open(a, kind_a, through(&side_b.0, b)?)?;
        Ok((side_a, side_b))
    } else {
        let side_a = input::open(a, kind_a, Through::Exact)?;
        let side_b = input::open(b, kind_b, through(&side_a.0, a)?)?;
        Ok((side_a, side_b))
    }
}

/// How two sides are compared frame by frame, settled once their heads are read.
struct Comparison {
    options: Options,
    /// Whether the canvases have the same size (pixels are compared only then).
    same_canvas: bool,
    /// Whether both sides have timing.
    timing_compared: bool,
    /// Whether pixels are compared by hash (a manifest on either side).
    by_hash: bool,
    clock: Clock,
    /// Two GIFs with different palettes are compared past them (see `palettes`).
    shared: Option<palettes::Shared>,
    /// B's frame as seen past the palettes (scratch).
    seen_b: Vec<u8>,
    /// Channels in a frame.
    channels: u64,
}

impl Comparison {
    fn new(a: &Info, b: &Info, options: Options) -> Comparison {
        let shared = match (&a.palette, &b.palette) {
            (Some(pa), Some(pb)) if a.kind == Kind::Gif && b.kind == Kind::Gif && pa != pb => {
                Some(palettes::Shared::new(pa, pb))
            }
            _ => None,
        };
        Comparison {
            options,
            same_canvas: (a.width, a.height) == (b.width, b.height),
            timing_compared: a.kind.timing_error().is_some() && b.kind.timing_error().is_some(),
            by_hash: a.kind == Kind::Manifest || b.kind == Kind::Manifest,
            clock: Clock::new(a.kind, b.kind),
            shared,
            seen_b: Vec::new(),
            channels: u64::from(a.width) * u64::from(a.height) * 3,
        }
    }

    /// Compares frame `frame` of the two sides (`fb` seen past the palettes, when they are).
    fn compare_frame(&mut self, frame: u64, fa: &Option<Frame>, fb: &mut Option<Frame>) -> FrameResult {
        let missing = |f: &Option<Frame>| match f {
            Some(Frame { pixels: Pixels::Missing(name), .. }) => Some(name.clone()),
            _ => None,
        };
        let presence = match (fa, &*fb) {
            _ if missing(fa).is_some() => Presence::MissingInA(missing(fa).unwrap_or_default()),
            _ if missing(fb).is_some() => Presence::MissingInB(missing(fb).unwrap_or_default()),
            (Some(_), Some(_)) => Presence::Both,
            (Some(_), None) => Presence::OnlyA,
            _ => Presence::OnlyB,
        };
        let delays = (fa.as_ref().and_then(|f| f.delay), fb.as_ref().and_then(|f| f.delay));
        let delay_differs = self.timing_compared && presence == Presence::Both && self.clock.differs(delays);
        let mut result = FrameResult {
            frame,
            presence,
            differing_pixels: None,
            max_delta: None,
            psnr: None,
            hash_equal: None,
            delays,
            pixels_pass: false,
            delay_differs,
        };
        if let (Some(shared), Some(Frame { pixels: Pixels::Rgb(x), .. }), Some(Frame { pixels: Pixels::Rgb(y), .. })) =
            (&self.shared, fa, &mut *fb)
        {
            shared.see_past(x, y, &mut self.seen_b);
            std::mem::swap(y, &mut self.seen_b);
        }
        let (Some(fa), Some(fb), true, Presence::Both) = (fa, &*fb, self.same_canvas, &result.presence) else {
            return result;
        };
        match (&fa.pixels, &fb.pixels) {
            (Pixels::Rgb(x), Pixels::Rgb(y)) => {
                let d = compare_pixels(x, y, self.options.tolerance);
                result.differing_pixels = Some(d.differing);
                result.max_delta = Some(d.max_delta);
                result.psnr = psnr(d.squares, self.channels);
                let near_enough = self
                    .options
                    .min_psnr_tenths
                    .is_some_and(|least| result.psnr.is_none_or(|p| p * 10.0 >= f64::from(least)));
                result.pixels_pass = d.differing <= self.options.max_pixels || near_enough;
            }
            (x, y) => {
                let hash = |p: &Pixels| match p {
                    Pixels::Rgb(rgb) => manifest::frame_hash(rgb),
                    Pixels::Hash(h) => *h,
                    // Not reached: a missing frame is not compared.
                    Pixels::Missing(_) => 0,
                };
                let equal = hash(x) == hash(y);
                result.hash_equal = Some(equal);
                result.pixels_pass = equal;
            }
        }
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pixel_comparison_counts_against_the_tolerance() {
        let a = [10, 20, 30, 0, 0, 0, 255, 255, 255];
        let b = [12, 20, 30, 0, 0, 5, 250, 255, 255];
        let figures = |d: PixelDiff| (d.differing, d.max_delta, d.squares);
        assert_eq!(figures(compare_pixels(&a, &b, 0)), (3, 5, 4 + 25 + 25));
        assert_eq!(figures(compare_pixels(&a, &b, 2)), (2, 5, 54));
        assert_eq!(figures(compare_pixels(&a, &b, 5)), (0, 5, 54));
        assert_eq!(figures(compare_pixels(&a, &a, 0)), (0, 0, 0));
    }

    #[test]
    fn psnr_is_none_when_identical() {
        assert_eq!(psnr(0, 300), None);
        // One channel off by 255 in 3 samples: 10·log10(3) ≈ 4.771 dB.
        let p = psnr(255 * 255, 3).unwrap();
        assert!((p - 4.771).abs() < 1e-3, "{p}");
    }
}
