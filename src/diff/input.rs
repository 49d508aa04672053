//! The sides of a `diff` by kind: which kind a path is, and a reader for each (a manifest and
//! a PNG-sequence folder here; GIFs, APNGs and WebPs, and scenes, in their own files).

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use super::frames::{Delay, Frame, FrameSource, Info, Kind, Pixels, bad, decode_png};
use super::scene::Through;
use crate::base::error::{Result, os_reason};
use crate::base::files::file_kind;
use crate::base::limits::MAX_FRAMES;
use crate::encode::manifest::{self, PixelKind};

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

/// Opens an input; a scene is shown as `through` says.
pub fn open(path: &Path, kind: Kind, through: Through) -> Result<(Info, Box<dyn FrameSource>)> {
    match kind {
        Kind::Gif => super::gif::open(path),
        Kind::Apng | Kind::Webp | Kind::Png => super::animated::open(path, kind),
        Kind::PngSequence => open_png_folder(path),
        Kind::Scene => super::scene::open(path, through),
        Kind::Manifest => {
            let m = manifest::read(path)?;
            let info = Info {
                path: path.into(),
                kind,
                width: m.width,
                height: m.height,
                provenance: m.provenance,
                colours: m.pixels,
                palette: None,
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
    if numbered.len() as u64 > MAX_FRAMES {
        return Err(bad(dir, format!("holds more than {} frames", MAX_FRAMES)));
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
    let info =
        Info { path: dir.into(), kind: Kind::PngSequence, width: w, height: h, provenance, colours, palette: None };
    Ok((info, Box::new(PngFrames { files: files.into_iter().peekable(), next: 0, size: (w, h) })))
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
