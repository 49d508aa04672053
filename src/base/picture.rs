//! Image files under the water: their headers read without decoding, their pixels decoded
//! within limits and turned upright (EXIF orientation), and fitted to the canvas.
//!
//! Everything here speaks of one file and returns the reason it cannot be used as plain text;
//! the caller says which key of the scene the file belongs to.

#[cfg(feature = "decode")]
use std::io::{BufRead, BufReader, Cursor, Seek};
use std::path::Path;

use image::RgbaImage;
#[cfg(feature = "decode")]
use image::{ImageDecoder, metadata::Orientation};

#[cfg(feature = "decode")]
use super::error::os_reason;
#[cfg(feature = "decode")]
use super::files::file_kind;
use super::limits::{MAX_IMAGE_PIXELS, MAX_IMAGE_SIDE, decode_budget};
use super::units::{show, suggest};

/// Why an image cannot be used, in words for the user (the caller adds the path).
pub type Reason = String;

/// How an image whose size differs from the canvas is fitted to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fit {
    /// Scale to cover the canvas, keeping the aspect ratio; crop the overflow evenly.
    Cover,
    /// Scale to fit inside the canvas, keeping the aspect ratio; fill bars with `color`.
    Contain,
    /// Scale each axis independently to the canvas size.
    Stretch,
}

impl Fit {
    /// The name used in scene files.
    pub fn name(self) -> &'static str {
        match self {
            Fit::Cover => "cover",
            Fit::Contain => "contain",
            Fit::Stretch => "stretch",
        }
    }
}

/// An image as its header describes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageHeader {
    /// Width in pixels, upright (after the EXIF orientation).
    pub width: u32,
    /// Height in pixels, upright.
    pub height: u32,
    /// Bytes the decoder produces (all pixels in the file's own colour type).
    pub decoded_bytes: u64,
    /// Whether the decoded pixels are already 8-bit RGBA (else a converted copy is made).
    pub rgba8: bool,
    /// Whether turning the image upright takes a rotated copy (a quarter or three-quarter turn).
    pub rotated: bool,
}

impl ImageHeader {
    /// The most bytes decoding the image holds at once: its own pixels beside their 8-bit RGBA
    /// copy, or that copy beside its rotated copy.
    pub fn decode_bytes(&self) -> u64 {
        let rgba = 4 * u64::from(self.width) * u64::from(self.height);
        let converting = self.decoded_bytes + if self.rgba8 { 0 } else { rgba };
        let rotating = if self.rotated { 2 * rgba } else { 0 };
        converting.max(rotating)
    }
}

#[cfg(feature = "decode")]
/// The image file, opened for reading: only a regular file (a pipe or a device could be
/// endless, and could not be read twice, once for the header and once for the pixels).
fn open(path: &Path) -> Result<std::fs::File, Reason> {
    let not_found = || "not found".to_string();
    let meta = std::fs::metadata(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => not_found(),
        _ => format!("cannot read it: {}", os_reason(&e)),
    })?;
    if meta.is_dir() {
        return Err("it is a folder, not an image".into());
    }
    if !meta.is_file() {
        return Err(format!("it is {}, not an image file", file_kind(&meta)));
    }
    if meta.len() == 0 {
        return Err("the file is empty".into());
    }
    std::fs::File::open(path).map_err(|e| format!("cannot read it: {}", os_reason(&e)))
}

/// Where an image's pixels come from: its file, bytes given in its place, or pixels already
/// decoded (a web page fetches a scene's picture, its browser decodes it, and the page hands the
/// pixels over; the path then only names it).
#[derive(Debug, Clone, Copy)]
pub enum Source<'a> {
    /// The file at the path.
    File,
    /// These bytes, the file's.
    Bytes(&'a [u8]),
    /// These pixels, upright 8-bit RGBA.
    Decoded(&'a RgbaImage),
}

/// A decoder for the image at `path` (from `source`), with its format guessed from the
/// content, and limits when decoding.
#[cfg(feature = "decode")]
fn decoder<'a>(
    path: &Path,
    source: Source<'a>,
    decode_budget: Option<u64>,
) -> Result<Box<dyn ImageDecoder + 'a>, Reason> {
    match source {
        Source::File => decoder_of(BufReader::new(open(path)?), path, decode_budget),
        Source::Bytes(bytes) => {
            if bytes.is_empty() {
                return Err("the file is empty".into());
            }
            decoder_of(Cursor::new(bytes), path, decode_budget)
        }
        Source::Decoded(_) => Err("its pixels were handed over: there is nothing to decode".into()),
    }
}

/// Without the decoders (the web player: its browser decodes the pictures), a file cannot be
/// read, only pixels handed over.
#[cfg(not(feature = "decode"))]
fn no_decoder(_: &Path) -> Reason {
    "this build decodes no image file: hand its pixels over decoded".into()
}

/// Images handed over in place of the files a scene names: each path's bytes, or its pixels
/// decoded. A path not among them is read from its file.
#[derive(Debug, Clone, Default)]
pub struct Given {
    files: Vec<(std::path::PathBuf, Handed)>,
}

/// What was handed over for one path.
#[derive(Debug, Clone)]
enum Handed {
    Bytes(Vec<u8>),
    Pixels(std::sync::Arc<RgbaImage>),
}

impl Given {
    /// No file handed over: every image is read from its file.
    pub fn none() -> Given {
        Given::default()
    }

    /// Hands `bytes` over for `path` (as the scene names it, relative to its folder).
    pub fn add(&mut self, path: &Path, bytes: Vec<u8>) {
        self.files.retain(|(p, _)| p != path);
        self.files.push((path.to_path_buf(), Handed::Bytes(bytes)));
    }

    /// Hands the decoded `pixels` over for `path`.
    pub fn add_pixels(&mut self, path: &Path, pixels: RgbaImage) {
        self.add_shared(path, std::sync::Arc::new(pixels));
    }

    /// Hands the decoded `pixels` over for `path`, shared with whoever else holds them (a
    /// cache of pictures decoded once for many scenes).
    pub fn add_shared(&mut self, path: &Path, pixels: std::sync::Arc<RgbaImage>) {
        self.files.retain(|(p, _)| p != path);
        self.files.push((path.to_path_buf(), Handed::Pixels(pixels)));
    }

    /// Hands over for `path` `width` × `height` pixels of upright 8-bit RGBA, row after row;
    /// refused (saying why) when `rgba` is not that many bytes.
    pub fn add_rgba(&mut self, path: &Path, (width, height): (u32, u32), rgba: Vec<u8>) -> Result<(), Reason> {
        let len = rgba.len();
        let pixels = RgbaImage::from_raw(width, height, rgba).filter(|p| p.as_raw().len() == len).ok_or_else(|| {
            format!("{width}×{height} pixels are {} bytes of RGBA, not {len}", 4 * u64::from(width) * u64::from(height))
        })?;
        self.add_pixels(path, pixels);
        Ok(())
    }

    /// Where the image at `path` is read from.
    pub fn source(&self, path: &Path) -> Source<'_> {
        match self.files.iter().find(|(p, _)| p == path) {
            None => Source::File,
            Some((_, Handed::Bytes(bytes))) => Source::Bytes(bytes),
            Some((_, Handed::Pixels(pixels))) => Source::Decoded(pixels),
        }
    }
}

/// [`decoder`] over a reader.
#[cfg(feature = "decode")]
fn decoder_of<'a, R: BufRead + Seek + 'a>(
    input: R,
    path: &Path,
    decode_budget: Option<u64>,
) -> Result<Box<dyn ImageDecoder + 'a>, Reason> {
    let mut reader = image::ImageReader::new(input);
    // The name's extension is the first guess; the content overrides it when it tells.
    if let Ok(format) = image::ImageFormat::from_path(path) {
        reader.set_format(format);
    }
    let mut reader = reader.with_guessed_format().map_err(|e| format!("cannot read it: {e}"))?;
    // Reading a header allocates little, and our own checks name the size; decoding gets the
    // decoder's limits too.
    match decode_budget {
        Some(budget) => {
            let mut limits = image::Limits::default();
            limits.max_image_width = Some(MAX_IMAGE_SIDE);
            limits.max_image_height = Some(MAX_IMAGE_SIDE);
            limits.max_alloc = Some(budget);
            reader.limits(limits);
        }
        None => reader.no_limits(),
    }
    reader
        .into_decoder()
        .map(|d| Box::new(d) as Box<dyn ImageDecoder>)
        .map_err(|e| describe(e, decode_budget.unwrap_or(0)))
}

/// Refuses an image whose header promises more pixels than the limit.
fn check_pixels((w, h): (u32, u32)) -> Result<(), Reason> {
    let pixels = u64::from(w) * u64::from(h);
    if pixels > MAX_IMAGE_PIXELS || w > MAX_IMAGE_SIDE || h > MAX_IMAGE_SIDE {
        return Err(format!(
            "it is {w}×{h} = {pixels} pixels; background images are limited to {MAX_IMAGE_PIXELS} \
             (8192·8192), and {MAX_IMAGE_SIDE} a side"
        ));
    }
    if w == 0 || h == 0 {
        return Err("the image has no pixels".into());
    }
    Ok(())
}

/// Whether the orientation turns the image a quarter (so width and height swap).
#[cfg(feature = "decode")]
fn quarter_turn(orientation: Orientation) -> bool {
    matches!(
        orientation,
        Orientation::Rotate90 | Orientation::Rotate270 | Orientation::Rotate90FlipH | Orientation::Rotate270FlipH
    )
}

/// The image's upright size and what decoding it takes, from its header, without decoding the
/// pixels.
pub fn probe(path: &Path) -> Result<ImageHeader, Reason> {
    probe_from(path, Source::File)
}

/// [`probe`] of the image at `path` read from `source`.
pub fn probe_from(path: &Path, source: Source<'_>) -> Result<ImageHeader, Reason> {
    if let Source::Decoded(pixels) = source {
        let (width, height) = pixels.dimensions();
        check_pixels((width, height))?;
        let decoded_bytes = 4 * u64::from(width) * u64::from(height);
        return Ok(ImageHeader { width, height, decoded_bytes, rgba8: true, rotated: false });
    }
    probe_file(path, source)
}

#[cfg(not(feature = "decode"))]
fn probe_file(path: &Path, _: Source<'_>) -> Result<ImageHeader, Reason> {
    Err(no_decoder(path))
}

#[cfg(feature = "decode")]
fn probe_file(path: &Path, source: Source<'_>) -> Result<ImageHeader, Reason> {
    let mut decoder = decoder(path, source, None)?;
    let (width, height) = decoder.dimensions();
    check_pixels((width, height))?;
    let orientation = decoder.orientation().unwrap_or(Orientation::NoTransforms);
    let rotated = quarter_turn(orientation);
    let (width, height) = if rotated { (height, width) } else { (width, height) };
    let rgba8 = decoder.color_type() == image::ColorType::Rgba8;
    Ok(ImageHeader { width, height, decoded_bytes: decoder.total_bytes(), rgba8, rotated })
}

#[cfg(feature = "decode")]
fn describe(e: image::ImageError, decode_budget: u64) -> Reason {
    match e {
        image::ImageError::Limits(l) if matches!(l.kind(), image::error::LimitErrorKind::DimensionError) => {
            format!("it is wider or taller than {MAX_IMAGE_SIDE} pixels, the limit for images")
        }
        image::ImageError::Limits(_) => {
            format!("it needs more memory to decode than the decode budget of {}", show(decode_budget))
        }
        image::ImageError::Unsupported(_) => {
            format!("{e} (supported: PNG, JPEG, GIF, BMP, WebP)")
        }
        image::ImageError::IoError(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
            "cannot decode it: the file is truncated (it ends too early)".to_string()
        }
        other => format!("cannot decode it: {other}"),
    }
}

/// Decodes the image to upright 8-bit RGBA. The decoder may allocate at most `decode_budget`
/// bytes; check [`ImageHeader::decode_bytes`] first to refuse an image before decoding it.
pub fn decode(path: &Path, decode_budget: u64) -> Result<RgbaImage, Reason> {
    decode_from(path, Source::File, decode_budget)
}

/// [`decode`] of the image at `path` read from `source`.
fn decode_from(path: &Path, source: Source<'_>, decode_budget: u64) -> Result<RgbaImage, Reason> {
    match source {
        Source::Decoded(pixels) => Ok(pixels.clone()),
        _ => decode_file(path, source, decode_budget),
    }
}

#[cfg(not(feature = "decode"))]
fn decode_file(path: &Path, _: Source<'_>, _: u64) -> Result<RgbaImage, Reason> {
    Err(no_decoder(path))
}

#[cfg(feature = "decode")]
fn decode_file(path: &Path, source: Source<'_>, decode_budget: u64) -> Result<RgbaImage, Reason> {
    refuse_cut_jpeg(path, source)?;
    let mut decoder = decoder(path, source, Some(decode_budget))?;
    let orientation = decoder.orientation().unwrap_or(Orientation::NoTransforms);
    let image = image::DynamicImage::from_decoder(decoder).map_err(|e| describe(e, decode_budget))?;
    // Converted first, so that a rotation copies 8-bit RGBA, whatever the file held.
    let mut upright = image::DynamicImage::ImageRgba8(image.into_rgba8());
    upright.apply_orientation(orientation);
    Ok(upright.into_rgba8())
}

/// Refuses a JPEG that ends before its end marker. The JPEG decoder fills the rows a cut file
/// lacks with grey and reports nothing, so a half-copied picture would render as if whole.
#[cfg(feature = "decode")]
fn refuse_cut_jpeg(path: &Path, source: Source<'_>) -> Result<(), Reason> {
    let read;
    let bytes = match source {
        Source::Bytes(bytes) => bytes,
        Source::Decoded(_) => return Ok(()),
        Source::File => {
            let mut head = [0u8; 3];
            let is_jpeg = std::io::Read::read_exact(&mut open(path)?, &mut head).is_ok() && head == JPEG_START;
            if !is_jpeg {
                return Ok(());
            }
            read = std::fs::read(path).map_err(|e| format!("cannot read it: {e}"))?;
            &read
        }
    };
    if bytes.starts_with(&JPEG_START) && !jpeg_has_end(bytes) {
        return Err("cannot decode it: the file is truncated (a JPEG without its end marker)".into());
    }
    Ok(())
}

/// A JPEG's first bytes: start of image, then a marker.
#[cfg(feature = "decode")]
const JPEG_START: [u8; 3] = [0xFF, 0xD8, 0xFF];

#[cfg(feature = "decode")]
/// Whether a JPEG's end-of-image marker follows its first scan: inside entropy-coded data a
/// 0xFF byte is always followed by 0x00 or a restart marker, so FF D9 there is the real end.
fn jpeg_has_end(bytes: &[u8]) -> bool {
    let Some(scan) = bytes.windows(2).position(|w| w == [0xFF, 0xDA]) else { return false };
    bytes[scan..].windows(2).any(|w| w == [0xFF, 0xD9])
}

/// Refuses an image whose decode would take more than a quarter of the memory `budget` (its
/// decode budget), from its header.
pub fn check_within(image: &ImageHeader, budget: u64) -> Result<(), Reason> {
    let bytes = image.decode_bytes();
    if bytes <= decode_budget(budget) {
        return Ok(());
    }
    Err(format!(
        "it is {}×{} and would take {} to decode, over the decode budget of {} (a quarter of the memory budget, {}); \
         raise it with --max-memory {}",
        image.width,
        image.height,
        show(bytes),
        show(decode_budget(budget)),
        show(budget),
        suggest(bytes.saturating_mul(4))
    ))
}

/// Decodes the image within a quarter of the memory `budget`, checked from its header first.
pub fn decode_within(path: &Path, budget: u64) -> Result<RgbaImage, Reason> {
    decode_within_from(path, Source::File, budget)
}

/// [`decode_within`] of the image at `path` read from `source`.
pub fn decode_within_from(path: &Path, source: Source<'_>, budget: u64) -> Result<RgbaImage, Reason> {
    let header = probe_from(path, source)?;
    check_within(&header, budget)?;
    decode_from(path, source, decode_budget(budget))
}

/// Where a canvas covered by an image scaled to `scaled` (and shifted by `offset`) samples it.
/// Nearest pixel centre, in integers: source = ((2·(x + offset) + 1)·size) / (2·scaled).
struct Axis {
    size: u64,
    scaled: u64,
    offset: i64,
}

impl Axis {
    fn source(&self, x: usize) -> Option<u32> {
        let p = x as i64 - self.offset;
        if p < 0 || p as u64 >= self.scaled {
            return None;
        }
        Some((((2 * p as u64 + 1) * self.size) / (2 * self.scaled)) as u32)
    }
}

/// `a·b/c` rounded half up, at least 1.
pub(crate) fn scale(a: u64, b: u64, c: u64) -> u64 {
    ((2 * a * b + c) / (2 * c)).max(1)
}

/// Fits the image to a `width`×`height` canvas, nearest pixel (so the palette of pixel art
/// survives): each canvas pixel is `pixel(source RGBA)`, or `outside` where a `contain` bar
/// leaves it uncovered.
pub fn fit<T: Copy>(
    image: &RgbaImage,
    (width, height): (usize, usize),
    how: Fit,
    outside: T,
    pixel: impl Fn([u8; 4]) -> T,
) -> Vec<T> {
    let (sw, sh) = (u64::from(image.width()), u64::from(image.height()));
    let (w, h) = (width as u64, height as u64);
    // Is the canvas wider than the image, relative to their heights?
    let canvas_wider = w * sh >= h * sw;
    let (scaled_w, scaled_h) = match how {
        Fit::Stretch => (w, h),
        Fit::Cover if canvas_wider => (w, scale(sh, w, sw)),
        Fit::Cover => (scale(sw, h, sh), h),
        Fit::Contain if canvas_wider => (scale(sw, h, sh), h),
        Fit::Contain => (w, scale(sh, w, sw)),
    };
    // (canvas - scaled) / 2, floored: negative for cover (the overflow is cropped evenly),
    // positive for contain (the image is centred between bars).
    let offset = |canvas: u64, scaled: u64| (canvas as i64 - scaled as i64).div_euclid(2);
    let xs = Axis { size: sw, scaled: scaled_w, offset: offset(w, scaled_w) };
    let ys = Axis { size: sh, scaled: scaled_h, offset: offset(h, scaled_h) };
    let columns: Vec<Option<u32>> = (0..width).map(|x| xs.source(x)).collect();
    let mut out = Vec::with_capacity(width * height);
    for y in 0..height {
        let row = ys.source(y);
        for &column in &columns {
            out.push(match (column, row) {
                (Some(sx), Some(sy)) => pixel(image.get_pixel(sx, sy).0),
                _ => outside,
            });
        }
    }
    out
}
