//! Hash manifests: one line per frame with a hash of the frame's exact RGB pixels, so CI can
//! keep hashes instead of images. Written while rendering (`--hashes FILE`), read by `diff`.
//!
//! ```text
//! # ripple-render frame hashes v1
//! # canvas: 200x150
//! # pixels: rgb
//! # provenance: ripple-render 0.1.0 scene=2e49acaeac151f97
//! 0000 5f0e9c3a81d2b774 4
//! ```
//!
//! Each frame line is the frame index, the XXH3-64 of its RGB bytes (row-major) and its delay in
//! centiseconds. A manifest hashes what the render is, not what one encoder made of it, so one
//! scene gives one manifest whether a GIF, a PNG sequence or nothing else is written beside it:
//! `pixels: rgb`. Manifests written by earlier versions beside a GIF say `pixels: gif`: their
//! hashes are of the GIF's palette colours, and `diff` still reads them.

use std::io::Write;
use std::path::Path;

use super::Stream;
use super::gif::delay_cs;
use super::provenance::Provenance;
use crate::base::error::{Error, Result, os_reason};
use crate::base::files::read_limited;
use crate::base::limits::{MAX_FRAMES, MAX_MANIFEST_BYTES};

const MAGIC: &str = "# ripple-render frame hashes v1";

/// The hash of one frame's RGB bytes.
pub fn frame_hash(rgb: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(rgb)
}

/// What a manifest's hashes were taken of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PixelKind {
    /// The exact render (as in a PNG sequence): what every manifest holds now.
    Rgb,
    /// The colours a GIF of the render shows (its palette may be quantized): what earlier
    /// versions wrote beside a GIF.
    Gif,
}

impl PixelKind {
    /// The word in the manifest header.
    pub fn name(self) -> &'static str {
        match self {
            PixelKind::Rgb => "rgb",
            PixelKind::Gif => "gif",
        }
    }
}

/// A manifest read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Manifest {
    /// Canvas width.
    pub width: u32,
    /// Canvas height.
    pub height: u32,
    /// What was hashed.
    pub pixels: PixelKind,
    /// Who rendered it, from what.
    pub provenance: Option<Provenance>,
    /// (hash, delay in centiseconds) per frame.
    pub frames: Vec<(u64, u16)>,
}

/// Where a render's frame hashes go: each frame's exact RGB bytes, in order.
pub trait Sink {
    /// Takes the next frame's RGB bytes (row-major).
    fn add(&mut self, rgb: &[u8]) -> Result<()>;
    /// Flushes what is buffered.
    fn finish(&mut self) -> Result<()>;
}

/// Writes a manifest: the header, then one line per frame.
pub struct Writer<W: Write> {
    out: W,
    path: std::path::PathBuf,
    fps: u32,
    index: u64,
}

impl<W: Write> Writer<W> {
    /// Writes the header of the manifest of `stream` (its canvas, frame rate and provenance)
    /// to `out`. `path` names the manifest in error messages.
    pub fn new(mut out: W, path: &Path, stream: &Stream) -> Result<Self> {
        let (width, height) = (stream.width, stream.height);
        let header = format!("{MAGIC}\n# canvas: {width}x{height}\n# pixels: rgb\n# provenance: {}\n", stream.comment);
        out.write_all(header.as_bytes()).map_err(|e| io(path, e))?;
        Ok(Writer { out, path: path.to_path_buf(), fps: stream.fps, index: 0 })
    }
}

fn io(path: &Path, source: std::io::Error) -> Error {
    Error::io(path, source)
}

impl<W: Write> Writer<W> {
    /// Writes the next frame's line from its hash (see [`frame_hash`]).
    pub fn add_hash(&mut self, hash: u64) -> Result<()> {
        let delay = delay_cs(self.index, self.fps);
        writeln!(self.out, "{:04} {hash:016x} {delay}", self.index).map_err(|e| io(&self.path, e))?;
        self.index += 1;
        Ok(())
    }
}

impl<W: Write> Sink for Writer<W> {
    fn add(&mut self, rgb: &[u8]) -> Result<()> {
        self.add_hash(frame_hash(rgb))
    }

    fn finish(&mut self) -> Result<()> {
        self.out.flush().map_err(|e| io(&self.path, e))
    }
}

/// True when `bytes` start like a manifest.
pub fn looks_like_manifest(bytes: &[u8]) -> bool {
    bytes.starts_with(MAGIC.as_bytes())
}

/// Reads a manifest file.
pub fn read(path: &Path) -> Result<Manifest> {
    let bad = |reason: String| Error::input(path, reason);
    // A line is about 25 bytes, and a render at most a million frames.
    let bytes = read_limited(path, MAX_MANIFEST_BYTES, "manifests")
        .map_err(|e| bad(format!("cannot read it: {}", os_reason(&e))))?;
    let text = String::from_utf8(bytes).map_err(|_| bad("not a hash manifest: it is not UTF-8 text".into()))?;
    parse(&text).map_err(bad)
}

/// Parses manifest text; the error names the line.
pub fn parse(text: &str) -> std::result::Result<Manifest, String> {
    let mut lines = text.lines().enumerate();
    if lines.next().map(|(_, l)| l) != Some(MAGIC) {
        return Err(format!("not a hash manifest: the first line must be `{MAGIC}`"));
    }
    let (mut size, mut pixels, mut provenance) = (None, PixelKind::Rgb, None);
    let mut frames = Vec::new();
    for (n, line) in lines {
        let at = |what: &str| format!("line {}: {what}: `{line}`", n + 1);
        if let Some(header) = line.strip_prefix("# ") {
            let (key, value) = header.split_once(": ").ok_or_else(|| at("expected `# key: value`"))?;
            match key {
                "canvas" => {
                    let (w, h) = value.split_once('x').ok_or_else(|| at("expected WIDTHxHEIGHT"))?;
                    size = Some((w.parse().map_err(|_| at("bad width"))?, h.parse().map_err(|_| at("bad height"))?));
                }
                "pixels" => {
                    pixels = match value {
                        "rgb" => PixelKind::Rgb,
                        "gif" => PixelKind::Gif,
                        _ => return Err(at("expected rgb or gif")),
                    }
                }
                "provenance" => provenance = Provenance::parse(value),
                _ => {}
            }
            continue;
        }
        if line.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [index, hash, delay] = fields[..] else { return Err(at("expected `INDEX HASH DELAY`")) };
        if index.parse::<usize>().ok() != Some(frames.len()) {
            return Err(at(&format!("expected frame {}", frames.len())));
        }
        if frames.len() as u64 == MAX_FRAMES {
            return Err(format!("it has more than {} frames", MAX_FRAMES));
        }
        let hash = u64::from_str_radix(hash, 16).map_err(|_| at("bad hash"))?;
        let delay = delay.parse().map_err(|_| at("bad delay"))?;
        frames.push((hash, delay));
    }
    let (width, height) = size.ok_or("no `# canvas: WIDTHxHEIGHT` line")?;
    Ok(Manifest { width, height, pixels, provenance, frames })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_what_it_documents() {
        let text = "# ripple-render frame hashes v1\n# canvas: 20x10\n# pixels: gif\n\
                    # provenance: ripple-render 0.1.0 scene=00000000000000ff\n0000 00000000000000aa 3\n0001 bb 4\n";
        let m = parse(text).unwrap();
        assert_eq!((m.width, m.height, m.pixels), (20, 10, PixelKind::Gif));
        assert_eq!(m.provenance.unwrap().scene, 255);
        assert_eq!(m.frames, vec![(0xaa, 3), (0xbb, 4)]);
    }

    #[test]
    fn refuses_what_it_cannot_read() {
        assert!(parse("hello\n").unwrap_err().starts_with("not a hash manifest"));
        let head = "# ripple-render frame hashes v1\n# canvas: 20x10\n";
        assert_eq!(parse(&format!("{head}0001 aa 3\n")).unwrap_err(), "line 3: expected frame 0: `0001 aa 3`");
        assert_eq!(parse(&format!("{head}0000 zz 3\n")).unwrap_err(), "line 3: bad hash: `0000 zz 3`");
        assert!(parse("# ripple-render frame hashes v1\n0000 aa 3\n").is_err());
        // No more frames than a render can have.
        let mut long = head.to_string();
        for i in 0..=MAX_FRAMES {
            long += &format!("{i} 0 4\n");
        }
        assert_eq!(parse(&long).unwrap_err(), "it has more than 1000000 frames");
    }

    #[test]
    fn frame_hash_is_xxh3() {
        // XXH3-64 of the empty input, from the reference implementation's test vectors.
        assert_eq!(frame_hash(b""), 0x2D06_8005_38D3_94C2);
    }
}
