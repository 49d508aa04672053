//! Encoders: where drawn frames go, one codec per file behind one trait ([`Encoder`]), over
//! plain pixels. Each works in its own pixel type (palette indices for GIF, RGB for PNG) so that
//! refraction is a plain gather from the encoder's copy of the background; what an animation
//! records beside its frames is a [`Stream`]. Nothing here knows of scenes, water or drawing.

pub mod fit;
pub mod gif;
pub mod manifest;
pub mod palette;
pub mod png;
pub mod provenance;
pub mod rect;
pub mod reduce;
pub mod seal;
pub mod video;
pub mod webp;
pub mod workers;

use std::time::Duration;

use crate::base::error::Result;

/// How hard an encoder works for a smaller file: speed against size, the user's choice
/// (`--effort`), as cwebp's `-m` or oxipng's `-o` are. Every level is exact and deterministic;
/// only the bytes and the time differ. What each level does per format is in docs/design.md.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Effort {
    /// The quickest file worth having: a few times the GIF's time at most, a little larger.
    Fast,
    /// The knee of speed against size (the files every earlier version made).
    #[default]
    Default,
    /// The smallest file these encoders make, whatever it takes.
    Max,
}

impl Effort {
    /// Every level, quickest first.
    pub const ALL: [Effort; 3] = [Effort::Fast, Effort::Default, Effort::Max];

    /// Its name on the command line and in a file's comment.
    pub fn name(self) -> &'static str {
        match self {
            Effort::Fast => "fast",
            Effort::Default => "default",
            Effort::Max => "max",
        }
    }

    /// The level named `name`, if any.
    pub fn named(name: &str) -> Option<Effort> {
        Effort::ALL.into_iter().find(|e| e.name() == name)
    }

    /// The level a file's comment records (` effort=NAME`, written only when not the default).
    pub fn recorded_in(comment: &str) -> Effort {
        comment.split(' ').find_map(|word| word.strip_prefix("effort=").and_then(Effort::named)).unwrap_or_default()
    }
}

/// What an animation records besides its frames: the canvas, the timing, the loop and the
/// provenance comment. Made from the scene by the render, or reduced to fit a size budget.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stream {
    /// Canvas width.
    pub width: u32,
    /// Canvas height.
    pub height: u32,
    /// The render's frames per second.
    pub fps: u32,
    /// Render frames per output frame: 1, or 2 when every other frame is kept (each then
    /// shows for two).
    pub step: u32,
    /// The render's frames (output frames are these over `step`, rounded up).
    pub render_frames: u64,
    /// Whether it plays forever (else once).
    pub looping: bool,
    /// The provenance text the file carries.
    pub comment: String,
    /// How hard the encoder works for a smaller file (recorded in `comment` when not the
    /// default, so that `join` re-encodes a part's first frame as the part's encoder did).
    pub effort: Effort,
    /// The output frames this file holds when it is a part of a render split by frame range
    /// (`--frames A..B`), numbered as in the whole render; `None`: every frame.
    pub part: Option<std::ops::Range<u64>>,
    /// A lossy WebP's quality, 1–100 (`--quality`; recorded in `comment`); `None`: exact.
    pub quality: Option<u8>,
    /// A lossy GIF's level (`--lossy N`: how far a pixel may stray; recorded in `comment`);
    /// `None`: every pixel its palette colour.
    pub lossy: Option<u8>,
}

impl Stream {
    /// Every `step`-th frame on a canvas `scale` times smaller (sides rounded up); `note` is
    /// added to the comment.
    pub fn reduced(&self, step: u32, scale: u32, note: &str) -> Stream {
        Stream {
            width: self.width.div_ceil(scale),
            height: self.height.div_ceil(scale),
            step: self.step * step,
            comment: format!("{} fitted=\"{note}\"", self.comment),
            part: None,
            ..self.clone()
        }
    }

    /// This stream encoded at `effort`, which its comment then records (` effort=NAME`, in place
    /// of any level recorded before) unless it is the default.
    pub fn at(&self, effort: Effort) -> Stream {
        // Any level recorded before gives way.
        let base: Vec<&str> = self.comment.split(' ').filter(|w| !w.starts_with("effort=")).collect();
        let base = base.join(" ");
        let comment = match effort {
            Effort::Default => base,
            other => format!("{base} effort={}", other.name()),
        };
        Stream { comment, effort, ..self.clone() }
    }

    /// This stream written lossy at `quality` (a WebP's, 1–100), which its comment then records
    /// (` quality=Q`), so that a file says it is not the exact render.
    pub fn with_quality(&self, quality: u8) -> Stream {
        Stream { comment: self.recording("quality", quality), quality: Some(quality), ..self.clone() }
    }

    /// This stream written as a lossy GIF at `level` (`--lossy N`), which its comment then
    /// records (` lossy=N`).
    pub fn with_lossy(&self, level: u8) -> Stream {
        Stream { comment: self.recording("lossy", level), lossy: Some(level), ..self.clone() }
    }

    /// The comment with ` KEY=VALUE` in place of any value of `key` recorded before.
    fn recording(&self, key: &str, value: u8) -> String {
        let prefix = format!("{key}=");
        let base: Vec<&str> = self.comment.split(' ').filter(|w| !w.starts_with(&prefix)).collect();
        format!("{} {key}={value}", base.join(" "))
    }

    /// Output frames `range` of this stream alone, as one part of a render split by frame range.
    pub fn part(&self, range: std::ops::Range<u64>) -> Stream {
        Stream { part: Some(range), ..self.clone() }
    }

    /// The text an animation carries: the provenance comment, and for a part which frames of
    /// how many it holds (` part=A..B/N`), so that parts can be checked and joined. (A PNG
    /// sequence's frames carry the comment alone: a part's files are the whole render's.)
    pub fn label(&self) -> String {
        match &self.part {
            Some(range) => format!("{} part={}..{}/{}", self.comment, range.start, range.end, self.frames()),
            None => self.comment.clone(),
        }
    }

    /// The output frames this file holds, numbered as in the whole render.
    pub fn held(&self) -> std::ops::Range<u64> {
        self.part.clone().unwrap_or(0..self.frames())
    }

    /// Output frames.
    pub fn frames(&self) -> u64 {
        self.render_frames.div_ceil(u64::from(self.step))
    }

    /// The render frames output frame `i` stands for: from the one it shows to the next output
    /// frame's (the last may stand for fewer than `step`).
    pub fn span(&self, i: u64) -> std::ops::Range<u64> {
        let step = u64::from(self.step);
        (i * step).min(self.render_frames)..((i + 1) * step).min(self.render_frames)
    }

    /// Output frame `i`'s delay in centiseconds: `c(end) - c(start)` of its span, with
    /// `c(j) = (200·j + fps) / (2·fps)` (§6.1), so the total is exact.
    pub fn delay_cs(&self, i: u64) -> u16 {
        let fps = u64::from(self.fps);
        let c = |j: u64| (200 * j + fps) / (2 * fps);
        let span = self.span(i);
        (c(span.end) - c(span.start)) as u16
    }

    /// Output frame `i`'s duration in milliseconds by the same rule, `m(j) = (2000·j + fps) /
    /// (2·fps)` (§12).
    pub fn duration_ms(&self, i: u64) -> u32 {
        let fps = u64::from(self.fps);
        let m = |j: u64| (2000 * j + fps) / (2 * fps);
        let span = self.span(i);
        (m(span.end) - m(span.start)) as u32
    }
}

/// Time an encoder spent in its own work, summed over every thread that did it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EncodeTimes {
    /// Compressing frames (LZW, deflate) and preparing them.
    pub encode: Duration,
    /// Writing bytes to the output.
    pub write: Duration,
}

impl std::ops::AddAssign for EncodeTimes {
    fn add_assign(&mut self, other: EncodeTimes) {
        self.encode += other.encode;
        self.write += other.write;
    }
}

/// A map from a frame's RGB pixels to an encoder's, `(rgb, out)`, that any thread may run.
pub type RgbMap<P> = std::sync::Arc<dyn Fn(&[[u8; 3]], &mut [P]) + Send + Sync>;

/// A destination for rendered frames, fed in order.
pub trait Encoder {
    /// The pixel the encoder stores: a palette index, or RGB.
    type Pixel: Copy + Default + Send + Sync + 'static;

    /// The background in this encoder's pixels, row-major; every frame is gathered from it.
    fn background(&self) -> &[Self::Pixel];

    /// Encodes the next frame (full canvas, row-major), a gather of [`Encoder::background`].
    fn write_frame(&mut self, pixels: &[Self::Pixel]) -> Result<()>;

    /// [`Encoder::write_frame`] of a frame the caller is done with: an encoder that keeps its
    /// frames takes this one without a copy, and gives back a buffer for a later frame (empty
    /// when it has none to spare). The default writes it and gives it back.
    fn write_owned(&mut self, pixels: Vec<Self::Pixel>) -> Result<Vec<Self::Pixel>> {
        self.write_frame(&pixels)?;
        Ok(pixels)
    }

    /// Encodes the next frame given in RGB: a frame drawn with a look, whose colours need not
    /// be the background's (the encoder maps them to its own pixels).
    fn write_rgb(&mut self, rgb: &[[u8; 3]]) -> Result<()>;

    /// How a frame drawn in RGB becomes this encoder's pixels on any thread, beside the
    /// encoder's own work (a GIF's palette indices): frames drawn with a look are put through
    /// it where they are drawn and handed over with [`Encoder::write_frame`]. `None` (the
    /// default) when the encoder takes RGB as it is, through [`Encoder::write_rgb`].
    fn colour_map(&self) -> Option<RgbMap<Self::Pixel>> {
        None
    }

    /// Compresses frames on `pool`'s threads from now on, beside whatever else runs there (a
    /// render draws its frames there); an encoder without worker threads has nothing to move.
    fn compress_on(&mut self, _pool: &crate::base::pool::Pool) {}

    /// Whether the encoder compresses its frames on worker threads (the render's pool, when it is
    /// given one): most of a render's work, beside which a frame cheap to draw is best drawn on
    /// the caller's thread. `false` (the default): the render's threads are the drawing's.
    fn compresses_apart(&self) -> bool {
        false
    }

    /// The output frames this encoder takes (a still takes one): the render draws no frame
    /// before the range that nothing else needs, and stops after it.
    fn wanted(&self) -> std::ops::Range<u64> {
        0..u64::MAX
    }

    /// Completes the output (trailer, flush) and says where the time went.
    fn finish(self) -> Result<EncodeTimes>;

    /// The exact render's RGB bytes for `pixels`, when this encoder's pixels hold it: the pixels
    /// themselves when they are RGB, or their palette colours (converted into `scratch`) when
    /// the palette holds every colour exactly. `None` when they do not (a quantized palette):
    /// the frame must then be drawn in RGB to know it.
    fn exact_rgb<'a>(&self, pixels: &'a [Self::Pixel], scratch: &'a mut Vec<u8>) -> Option<&'a [u8]>;
}

/// Expands palette indices to their colours' RGB bytes.
pub(crate) fn expand<'a>(indices: &[u8], colors: &[[u8; 3]], scratch: &'a mut Vec<u8>) -> &'a [u8] {
    scratch.clear();
    scratch.extend(indices.iter().flat_map(|&i| colors[usize::from(i)]));
    scratch
}

/// An encoder that writes nothing: renders RGB frames for a hash manifest alone. It holds a copy
/// of the background, 3 bytes a pixel.
pub struct Discard {
    background: Vec<[u8; 3]>,
    /// Whether it takes frames at all (a run that only simulates takes none).
    taking: bool,
}

impl Discard {
    /// Renders over the RGB `background`.
    pub fn new(background: &[[u8; 3]]) -> Self {
        Discard { background: background.to_vec(), taking: true }
    }

    /// Takes no frame: the render only simulates (to write checkpoints).
    pub fn taking_none(self) -> Self {
        Discard { taking: false, ..self }
    }
}

impl Encoder for Discard {
    type Pixel = [u8; 3];

    fn background(&self) -> &[[u8; 3]] {
        &self.background
    }

    fn write_frame(&mut self, _pixels: &[[u8; 3]]) -> Result<()> {
        Ok(())
    }

    fn write_rgb(&mut self, _rgb: &[[u8; 3]]) -> Result<()> {
        Ok(())
    }

    fn wanted(&self) -> std::ops::Range<u64> {
        if self.taking { 0..u64::MAX } else { 0..0 }
    }

    fn finish(self) -> Result<EncodeTimes> {
        Ok(EncodeTimes::default())
    }

    fn exact_rgb<'a>(&self, pixels: &'a [[u8; 3]], _scratch: &'a mut Vec<u8>) -> Option<&'a [u8]> {
        Some(pixels.as_flattened())
    }
}
