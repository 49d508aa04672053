//! The two sides of a `diff`: a GIF, a PNG-sequence folder, a scene (rendered in memory) or a
//! hash manifest, each read frame by frame as a viewer sees it.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use crate::encode::gif::Palette;
use crate::error::{Error, Result, file_kind, os_reason};
use crate::manifest::{self, PixelKind};
use crate::provenance::{self, Provenance};
use crate::{Background, Frames, Scene};

/// What kind of input a side is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// An animated GIF.
    Gif,
    /// An animated PNG.
    Apng,
    /// A WebP, animated or still.
    Webp,
    /// One PNG, a still.
    Png,
    /// A folder of `frame_NNNN.png` files.
    PngSequence,
    /// A scene file, rendered in memory.
    Scene,
    /// A hash manifest.
    Manifest,
}

impl Kind {
    /// A short name for messages.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Gif => "GIF",
            Kind::Apng => "APNG",
            Kind::Webp => "WebP",
            Kind::Png => "PNG",
            Kind::PngSequence => "PNG sequence",
            Kind::Scene => "scene",
            Kind::Manifest => "hash manifest",
        }
    }

    /// How far its frames' start times may be from the true ones, in seconds: half the unit
    /// its delays are rounded to (0 when exact); `None` when it has no timing.
    pub fn timing_error(self) -> Option<f64> {
        match self {
            Kind::Gif | Kind::Manifest => Some(0.005),
            Kind::Webp => Some(0.0005),
            Kind::Apng | Kind::Scene => Some(0.0),
            Kind::Png | Kind::PngSequence => None,
        }
    }
}

/// One frame of an input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pixels {
    /// RGB bytes, row-major.
    Rgb(Vec<u8>),
    /// Only the hash of the RGB bytes (from a manifest).
    Hash(u64),
    /// No frame of this number, although later ones exist (a gap in a PNG sequence); the text
    /// names what is missing.
    Missing(String),
}

/// How long a frame shows: `num/den` seconds, in the unit its input keeps (centiseconds for a
/// GIF, milliseconds for a WebP, a fraction for an APNG or a scene).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Delay {
    /// Numerator.
    pub num: u32,
    /// Denominator (never 0).
    pub den: u32,
}

impl Delay {
    /// A delay of `cs` centiseconds.
    pub fn centiseconds(cs: u16) -> Delay {
        Delay { num: u32::from(cs), den: 100 }
    }

    /// `num/den` seconds, in lowest terms (0 for a zero denominator).
    pub fn fraction(num: u32, den: u32) -> Delay {
        if den == 0 {
            return Delay { num: 0, den: 1 };
        }
        let (mut a, mut b) = (num, den);
        while b != 0 {
            (a, b) = (b, a % b);
        }
        Delay { num: num / a, den: den / a }
    }

    /// The delay in seconds.
    pub fn seconds(self) -> f64 {
        f64::from(self.num) / f64::from(self.den)
    }

    /// The delay in whole centiseconds, rounded half up (exact for a GIF's).
    pub fn cs(self) -> u16 {
        let cs = (200 * u64::from(self.num) + u64::from(self.den)) / (2 * u64::from(self.den));
        cs.min(u64::from(u16::MAX)) as u16
    }

    /// Whether the two are the same length of time.
    pub fn equals(self, other: Delay) -> bool {
        u64::from(self.num) * u64::from(other.den) == u64::from(other.num) * u64::from(self.den)
    }
}

impl std::fmt::Display for Delay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (num, den) = (u64::from(self.num), u64::from(self.den));
        match den {
            100 => write!(f, "{num} cs"),
            _ if (num * 1000) % den == 0 => write!(f, "{} ms", num * 1000 / den),
            _ => write!(f, "{num}/{den} s"),
        }
    }
}

/// One frame: its pixels and, where the input has timing, how long it shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// The pixels, or their hash.
    pub pixels: Pixels,
    /// The delay, for animations, scenes and manifests.
    pub delay: Option<Delay>,
}

/// What is known of an input before its frames are read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Info {
    /// The path as given.
    pub path: PathBuf,
    /// Its kind.
    pub kind: Kind,
    /// Canvas width.
    pub width: u32,
    /// Canvas height.
    pub height: u32,
    /// Who made it, if it says.
    pub provenance: Option<Provenance>,
    /// Whether its frames show the exact render's colours or a GIF's palette colours.
    pub colours: PixelKind,
}

/// Reads an input's frames in order.
pub trait FrameSource: Send {
    /// The next frame, or `None` after the last.
    fn next_frame(&mut self) -> Result<Option<Frame>>;
}

pub(super) fn bad(path: &Path, reason: impl std::fmt::Display) -> Error {
    Error::Input { path: path.to_path_buf(), reason: reason.to_string() }
}

/// Refuses a canvas larger than a render can be (a header claiming 65535×65535 would otherwise
/// allocate gigabytes before anything is compared).
pub(super) fn check_size(path: &Path, (w, h): (u32, u32)) -> Result<()> {
    let (side, area) = (crate::scene::MAX_SIDE as u64, crate::scene::MAX_AREA as u64);
    let pixels = u64::from(w) * u64::from(h);
    if u64::from(w) > side || u64::from(h) > side || pixels > area {
        return Err(bad(
            path,
            format!("it claims {w}×{h} = {pixels} pixels: renders are at most {side} a side and {area} pixels"),
        ));
    }
    Ok(())
}

/// Guesses a path's kind: a folder, a `.toml` file, a manifest or a GIF by their first bytes.
/// Only files and folders are read: a pipe or a device could be endless, and is not read twice.
pub fn kind_of(path: &Path) -> Result<Kind> {
    let meta = std::fs::metadata(path).map_err(|e| bad(path, format!("cannot read it: {}", os_reason(&e))))?;
    if meta.is_dir() {
        return Ok(Kind::PngSequence);
    }
    if !meta.is_file() {
        return Err(bad(
            path,
            format!("it is {}: diff compares files and folders (save the render to a file first)", file_kind(&meta)),
        ));
    }
    let mut head = [0u8; 64];
    let n = File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .map_err(|e| bad(path, format!("cannot read it: {}", os_reason(&e))))?;
    let head = &head[..n];
    if head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a") {
        Ok(Kind::Gif)
    } else if head.starts_with(b"\x89PNG\r\n\x1a\n") {
        Ok(if super::animated::is_apng(path)? { Kind::Apng } else { Kind::Png })
    } else if head.starts_with(b"RIFF") && head.get(8..12) == Some(b"WEBP") {
        Ok(Kind::Webp)
    } else if manifest::looks_like_manifest(head) {
        Ok(Kind::Manifest)
    } else if path.extension().is_some_and(|e| e.eq_ignore_ascii_case("toml")) {
        Ok(Kind::Scene)
    } else if n == 0 {
        Err(bad(path, "the file is empty"))
    } else {
        Err(bad(path, "not a GIF, APNG, PNG, WebP, a PNG-sequence folder, a .toml scene or a hash manifest"))
    }
}

/// Opens an input. A scene is rendered as a GIF would show it when `gif_pixels` is true (to
/// compare with a GIF or a GIF manifest), else exactly.
pub fn open(path: &Path, kind: Kind, gif_pixels: bool) -> Result<(Info, Box<dyn FrameSource>)> {
    match kind {
        Kind::Gif => open_gif(path),
        Kind::Apng | Kind::Webp | Kind::Png => super::animated::open(path, kind),
        Kind::PngSequence => open_png_folder(path),
        Kind::Scene => open_scene(path, gif_pixels),
        Kind::Manifest => {
            let m = manifest::read(path)?;
            let info = Info {
                path: path.into(),
                kind,
                width: m.width,
                height: m.height,
                provenance: m.provenance,
                colours: m.pixels,
            };
            let frames = m
                .frames
                .into_iter()
                .map(|(hash, cs)| Frame { pixels: Pixels::Hash(hash), delay: Some(Delay::centiseconds(cs)) });
            Ok((info, Box::new(ManifestFrames(frames.collect::<Vec<_>>().into_iter()))))
        }
    }
}

/// Whether a manifest's hashes are of GIF colours (so a scene compared with it should be too).
pub fn manifest_pixels(path: &Path) -> Result<PixelKind> {
    Ok(manifest::read(path)?.pixels)
}

struct ManifestFrames(std::vec::IntoIter<Frame>);

impl FrameSource for ManifestFrames {
    fn next_frame(&mut self) -> Result<Option<Frame>> {
        Ok(self.0.next())
    }
}

struct GifFrames {
    path: PathBuf,
    decoder: gif::Decoder<BufReader<File>>,
    /// The composed canvas, RGBA.
    canvas: Vec<u8>,
    /// What `DisposalMethod::Previous` restores.
    saved: Vec<u8>,
    /// The previous frame's rectangle and disposal, applied before the next frame.
    pending: Option<(usize, usize, usize, usize, gif::DisposalMethod)>,
    width: usize,
    /// Frames read so far.
    frames: u64,
}

fn open_gif(path: &Path) -> Result<(Info, Box<dyn FrameSource>)> {
    let file = File::open(path).map_err(|e| bad(path, format!("cannot read it: {e}")))?;
    let mut head = vec![0u8; 4096];
    let n = (&file).read(&mut head).map_err(|e| bad(path, e))?;
    let provenance = provenance::gif_comments(&head[..n]).iter().find_map(|c| Provenance::parse(c));
    let file = File::open(path).map_err(|e| bad(path, format!("cannot read it: {e}")))?;
    let mut options = gif::DecodeOptions::new();
    options.set_color_output(gif::ColorOutput::RGBA);
    // A frame's buffer may hold at most a whole canvas of the largest render.
    let most = std::num::NonZeroU64::new(4 * crate::scene::MAX_AREA as u64).unwrap_or(std::num::NonZeroU64::MIN);
    options.set_memory_limit(gif::MemoryLimit::Bytes(most));
    let decoder = options.read_info(BufReader::new(file)).map_err(|e| bad(path, format!("cannot decode it: {e}")))?;
    let (width, height) = (u32::from(decoder.width()), u32::from(decoder.height()));
    check_size(path, (width, height))?;
    let info = Info { path: path.into(), kind: Kind::Gif, width, height, provenance, colours: PixelKind::Gif };
    let pixels = width as usize * height as usize * 4;
    let frames = GifFrames {
        path: path.into(),
        decoder,
        canvas: vec![0; pixels],
        saved: Vec::new(),
        pending: None,
        width: width as usize,
        frames: 0,
    };
    Ok((info, Box::new(frames)))
}

impl FrameSource for GifFrames {
    fn next_frame(&mut self) -> Result<Option<Frame>> {
        // Dispose of the previous frame as a viewer would before drawing this one.
        if let Some((left, top, w, h, dispose)) = self.pending.take() {
            match dispose {
                gif::DisposalMethod::Background => {
                    for y in top..top + h {
                        let row = (y * self.width + left) * 4;
                        if let Some(r) = self.canvas.get_mut(row..row + w * 4) {
                            r.fill(0);
                        }
                    }
                }
                gif::DisposalMethod::Previous if !self.saved.is_empty() => self.canvas.copy_from_slice(&self.saved),
                _ => {}
            }
        }
        if self.frames == crate::scene::MAX_FRAMES {
            return Err(bad(&self.path, format!("it has more than {} frames", crate::scene::MAX_FRAMES)));
        }
        let frame = match self.decoder.read_next_frame() {
            Ok(Some(frame)) => frame,
            Ok(None) => return Ok(None),
            Err(e) => return Err(bad(&self.path, format!("cannot decode it: {e}"))),
        };
        self.frames += 1;
        let (left, top) = (usize::from(frame.left), usize::from(frame.top));
        let (w, h) = (usize::from(frame.width), usize::from(frame.height));
        if frame.dispose == gif::DisposalMethod::Previous {
            self.saved.clone_from(&self.canvas);
        }
        let height = self.canvas.len() / 4 / self.width.max(1);
        let visible = w.min(self.width.saturating_sub(left));
        for y in 0..h.min(height.saturating_sub(top)) {
            let src = &frame.buffer[y * w * 4..][..visible * 4];
            let at = ((top + y) * self.width + left) * 4;
            let dst = &mut self.canvas[at..at + visible * 4];
            if frame.transparent.is_none() {
                dst.copy_from_slice(src);
                continue;
            }
            // Transparent pixels leave what was there.
            for (d, s) in dst.chunks_exact_mut(4).zip(src.chunks_exact(4)) {
                if s[3] != 0 {
                    d.copy_from_slice(s);
                }
            }
        }
        self.pending =
            Some((left, top, w.min(self.width.saturating_sub(left)), h.min(height.saturating_sub(top)), frame.dispose));
        let delay = frame.delay;
        // What shows where nothing was ever drawn is black.
        let mut rgb = vec![0u8; self.canvas.len() / 4 * 3];
        for (d, p) in rgb.chunks_exact_mut(3).zip(self.canvas.chunks_exact(4)) {
            if p[3] != 0 {
                d.copy_from_slice(&p[..3]);
            }
        }
        Ok(Some(Frame { pixels: Pixels::Rgb(rgb), delay: Some(Delay::centiseconds(delay)) }))
    }
}

struct PngFrames {
    /// The frames' files by number, in order.
    files: std::iter::Peekable<std::vec::IntoIter<(u64, PathBuf)>>,
    /// The number of the next frame to yield.
    next: u64,
    size: (u32, u32),
}

/// The `frame_N.png` files of a folder, by frame number, in order. Two files for one number
/// (`frame_1.png` and `frame_0001.png`) are refused: which one is the frame?
fn png_files(dir: &Path) -> Result<Vec<(u64, PathBuf)>> {
    let entries = std::fs::read_dir(dir).map_err(|e| bad(dir, format!("cannot read the folder: {e}")))?;
    let mut numbered = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| bad(dir, e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let digits = name.strip_prefix("frame_").and_then(|n| n.strip_suffix(".png"));
        let number = digits.filter(|d| d.bytes().all(|b| b.is_ascii_digit())).and_then(|d| d.parse::<u64>().ok());
        if let Some(n) = number {
            let meta = std::fs::metadata(entry.path()).map_err(|e| bad(&entry.path(), os_reason(&e)))?;
            if !meta.is_file() {
                return Err(bad(&entry.path(), format!("it is {}, not a PNG file", file_kind(&meta))));
            }
            numbered.push((n, entry.path()));
        }
    }
    numbered.sort();
    if let Some(pair) = numbered.windows(2).find(|w| w[0].0 == w[1].0) {
        let names = |p: &PathBuf| p.file_name().unwrap_or_default().to_string_lossy().into_owned();
        return Err(bad(
            dir,
            format!("holds two files for frame {}: {} and {}", pair[0].0, names(&pair[0].1), names(&pair[1].1)),
        ));
    }
    if numbered.len() as u64 > crate::scene::MAX_FRAMES {
        return Err(bad(dir, format!("holds more than {} frames", crate::scene::MAX_FRAMES)));
    }
    Ok(numbered)
}

fn open_png_folder(dir: &Path) -> Result<(Info, Box<dyn FrameSource>)> {
    let files = png_files(dir)?;
    let Some((_, first)) = files.first() else {
        return Err(bad(dir, "the folder holds no frame_NNNN.png files"));
    };
    let (w, h, _, provenance) = decode_png(first, true)?;
    let colours = PixelKind::Rgb;
    let info = Info { path: dir.into(), kind: Kind::PngSequence, width: w, height: h, provenance, colours };
    Ok((info, Box::new(PngFrames { files: files.into_iter().peekable(), next: 0, size: (w, h) })))
}

/// Decodes any PNG to 8-bit RGB (alpha dropped), with its provenance text if asked.
pub(super) fn decode_png(path: &Path, want_text: bool) -> Result<(u32, u32, Vec<u8>, Option<Provenance>)> {
    let file = File::open(path).map_err(|e| bad(path, format!("cannot read it: {}", os_reason(&e))))?;
    // The decoder may hold a whole frame of the largest render, 16-bit RGBA.
    let limits = png::Limits { bytes: 8 * crate::scene::MAX_AREA as usize };
    let mut decoder = png::Decoder::new_with_limits(BufReader::new(file), limits);
    decoder.set_transformations(png::Transformations::normalize_to_color8());
    let mut reader = decoder.read_info().map_err(|e| bad(path, format!("cannot decode it: {e}")))?;
    check_size(path, (reader.info().width, reader.info().height))?;
    let provenance = if want_text {
        reader.info().uncompressed_latin1_text.iter().find_map(|t| Provenance::parse(&t.text))
    } else {
        None
    };
    let size = reader.output_buffer_size().ok_or_else(|| bad(path, "the image is too large"))?;
    let mut buf = vec![0; size];
    let out = reader.next_frame(&mut buf).map_err(|e| bad(path, format!("cannot decode it: {e}")))?;
    buf.truncate(out.buffer_size());
    let rgb = match out.color_type {
        png::ColorType::Rgb => buf,
        png::ColorType::Rgba => buf.chunks_exact(4).flat_map(|p| [p[0], p[1], p[2]]).collect(),
        png::ColorType::Grayscale => buf.iter().flat_map(|&g| [g, g, g]).collect(),
        png::ColorType::GrayscaleAlpha => buf.chunks_exact(2).flat_map(|p| [p[0], p[0], p[0]]).collect(),
        png::ColorType::Indexed => return Err(bad(path, "indexed PNG was not expanded")),
    };
    Ok((out.width, out.height, rgb, provenance))
}

impl FrameSource for PngFrames {
    fn next_frame(&mut self) -> Result<Option<Frame>> {
        let number = self.next;
        let Some((n, _)) = self.files.peek() else { return Ok(None) };
        self.next += 1;
        if *n > number {
            // A gap: later frames exist, this one does not.
            let width = self.files.peek().map_or(4, |(_, p)| p.file_stem().map_or(10, |s| s.len()) - 6);
            let name = format!("frame_{number:0width$}.png");
            return Ok(Some(Frame { pixels: Pixels::Missing(name), delay: None }));
        }
        let Some((_, path)) = self.files.next() else { return Ok(None) };
        let (w, h, rgb, _) = decode_png(&path, false)?;
        if (w, h) != self.size {
            return Err(bad(
                &path,
                format!("is {w}×{h}, but the sequence's first frame is {}×{}", self.size.0, self.size.1),
            ));
        }
        Ok(Some(Frame { pixels: Pixels::Rgb(rgb), delay: None }))
    }
}

/// A scene rendered in memory, frame by frame.
struct SceneFrames {
    fps: u32,
    frames: Frames,
    first_frame: u64,
    background: Vec<[u8; 3]>,
    /// A scene with a `[look]` draws from this, in RGB.
    look: Option<(crate::scene::Look, crate::look::Backdrop)>,
    frame: Vec<[u8; 3]>,
}

fn open_scene(path: &Path, gif_pixels: bool) -> Result<(Info, Box<dyn FrameSource>)> {
    let budget = crate::budget::DEFAULT_BUDGET;
    let bytes = Scene::read_file(path)?;
    crate::budget::Estimate::for_scene_text(bytes.len() as u64).check(budget)?;
    let scene = Scene::from_bytes(bytes, path)?;
    let header = crate::background::image_header(&scene)?;
    crate::budget::Estimate::for_render(&scene, header.as_ref(), crate::budget::Output::Nothing, 1).check(budget)?;
    let background = Background::for_scene_within(&scene, budget)?;
    let provenance = Some(Provenance::of(&scene, &background));
    // As a GIF shows it: each background pixel replaced by its palette colour. A look's frames
    // are its exact colours (a GIF of them differs by its palette's error).
    let frames = Frames::new(&scene, &background.shore);
    let look = (!scene.look.is_gather())
        .then(|| (scene.look, crate::look::Backdrop::new(&background.pixels, scene.width as usize)));
    let pixels = if gif_pixels && look.is_none() {
        let palette = Palette::for_background(&background.pixels);
        palette.indices.iter().map(|&i| palette.colors[usize::from(i)]).collect()
    } else {
        background.pixels
    };
    let colours = if gif_pixels && look.is_none() { PixelKind::Gif } else { PixelKind::Rgb };
    let (width, height) = (scene.width, scene.height);
    let info = Info { path: path.into(), kind: Kind::Scene, width, height, provenance, colours };
    let first_frame = scene.first_frame;
    let frames = SceneFrames { fps: scene.fps, frames, first_frame, look, frame: pixels.clone(), background: pixels };
    Ok((info, Box::new(frames)))
}

impl FrameSource for SceneFrames {
    fn next_frame(&mut self) -> Result<Option<Frame>> {
        loop {
            match self.frames.advance() {
                None => return Ok(None),
                Some(k) if k >= self.first_frame => break,
                Some(_) => {}
            }
        }
        match &self.look {
            Some((look, backdrop)) => self.frames.draw_look(look, backdrop, &mut self.frame),
            None => self.frames.draw(&self.background, &mut self.frame),
        }
        // Exactly 1/fps: each format's rounding is allowed for when compared.
        let delay = Delay { num: 1, den: self.fps };
        Ok(Some(Frame { pixels: Pixels::Rgb(self.frame.as_flattened().to_vec()), delay: Some(delay) }))
    }
}
