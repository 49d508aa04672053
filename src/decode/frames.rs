//! A rendered file read back, whatever it is (a GIF, an APNG or WebP, a folder of PNGs, a
//! manifest): its frames as RGB pixels (or a manifest's hashes) with their delays, what is known
//! of it before its frames ([`Info`]), and the checks and decoding every reader shares.

use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use crate::base::error::{Error, Result, os_reason};
use crate::base::limits::{MAX_AREA, MAX_SIDE};
use crate::encode::manifest::PixelKind;
use crate::encode::provenance::Provenance;

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
    /// A GIF's colours as its encoder chose among them: the global palette before the
    /// transparent index (which only marks unchanged pixels).
    pub palette: Option<Vec<[u8; 3]>>,
}

/// Reads an input's frames in order.
pub trait FrameSource: Send {
    /// The next frame, or `None` after the last.
    fn next_frame(&mut self) -> Result<Option<Frame>>;
}

/// Refuses a canvas larger than a render can be (a header claiming 65535×65535 would otherwise
/// allocate gigabytes before anything is compared).
pub(super) fn check_size(path: &Path, (w, h): (u32, u32)) -> Result<()> {
    let (side, area) = (MAX_SIDE as u64, MAX_AREA as u64);
    let pixels = u64::from(w) * u64::from(h);
    if u64::from(w) > side || u64::from(h) > side || pixels > area {
        return Err(Error::input(
            path,
            format!("it claims {w}×{h} = {pixels} pixels: renders are at most {side} a side and {area} pixels"),
        ));
    }
    Ok(())
}

/// Decodes any PNG to 8-bit RGB (alpha dropped), with its provenance text if asked.
pub(super) fn decode_png(path: &Path, want_text: bool) -> Result<(u32, u32, Vec<u8>, Option<Provenance>)> {
    let file = File::open(path).map_err(|e| Error::input(path, format!("cannot read it: {}", os_reason(&e))))?;
    // The decoder may hold a whole frame of the largest render, 16-bit RGBA.
    let limits = png::Limits { bytes: 8 * MAX_AREA as usize };
    let mut decoder = png::Decoder::new_with_limits(BufReader::new(file), limits);
    decoder.set_transformations(png::Transformations::normalize_to_color8());
    let mut reader = decoder.read_info().map_err(|e| Error::input(path, format!("cannot decode it: {e}")))?;
    check_size(path, (reader.info().width, reader.info().height))?;
    let provenance = if want_text {
        reader.info().uncompressed_latin1_text.iter().find_map(|t| Provenance::parse(&t.text))
    } else {
        None
    };
    let size = reader.output_buffer_size().ok_or_else(|| Error::input(path, "the image is too large"))?;
    let mut buf = vec![0; size];
    let out = reader.next_frame(&mut buf).map_err(|e| Error::input(path, format!("cannot decode it: {e}")))?;
    buf.truncate(out.buffer_size());
    let rgb = match out.color_type {
        png::ColorType::Rgb => buf,
        png::ColorType::Rgba => buf.chunks_exact(4).flat_map(|p| [p[0], p[1], p[2]]).collect(),
        png::ColorType::Grayscale => buf.iter().flat_map(|&g| [g, g, g]).collect(),
        png::ColorType::GrayscaleAlpha => buf.chunks_exact(2).flat_map(|p| [p[0], p[0], p[0]]).collect(),
        png::ColorType::Indexed => return Err(Error::input(path, "indexed PNG was not expanded")),
    };
    Ok((out.width, out.height, rgb, provenance))
}
