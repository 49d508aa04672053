//! A folder of PNG frames (`frame_NNNN.png`, as a render writes them) read as frames, in the
//! order of their numbers; a gap is a frame named as missing.

use std::path::{Path, PathBuf};

use super::frames::{Frame, FrameSource, Info, Kind, Pixels, decode_png};
use crate::base::error::{Error, Result, os_reason};
use crate::base::files::file_kind;
use crate::base::limits::MAX_FRAMES;
use crate::encode::manifest::PixelKind;

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
    let entries = std::fs::read_dir(dir).map_err(|e| Error::input(dir, format!("cannot read the folder: {e}")))?;
    let mut numbered = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| Error::input(dir, e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let digits = name.strip_prefix("frame_").and_then(|n| n.strip_suffix(".png"));
        let number = digits.filter(|d| d.bytes().all(|b| b.is_ascii_digit())).and_then(|d| d.parse::<u64>().ok());
        if let Some(n) = number {
            let meta = std::fs::metadata(entry.path()).map_err(|e| Error::input(entry.path(), os_reason(&e)))?;
            if !meta.is_file() {
                return Err(Error::input(entry.path(), format!("it is {}, not a PNG file", file_kind(&meta))));
            }
            numbered.push((n, entry.path()));
        }
    }
    numbered.sort();
    if let Some(pair) = numbered.windows(2).find(|w| w[0].0 == w[1].0) {
        let names = |p: &PathBuf| p.file_name().unwrap_or_default().to_string_lossy().into_owned();
        return Err(Error::input(
            dir,
            format!("holds two files for frame {}: {} and {}", pair[0].0, names(&pair[0].1), names(&pair[1].1)),
        ));
    }
    if numbered.len() as u64 > MAX_FRAMES {
        return Err(Error::input(dir, format!("holds more than {} frames", MAX_FRAMES)));
    }
    Ok(numbered)
}

/// Opens a folder of PNG frames: the first frame's canvas and provenance, then every frame.
pub fn open(dir: &Path) -> Result<(Info, Box<dyn FrameSource>)> {
    let files = png_files(dir)?;
    let Some((_, first)) = files.first() else {
        return Err(Error::input(dir, "the folder holds no frame_NNNN.png files"));
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
            return Err(Error::input(
                &path,
                format!("is {w}×{h}, but the sequence's first frame is {}×{}", self.size.0, self.size.1),
            ));
        }
        Ok(Some(Frame { pixels: Pixels::Rgb(rgb), delay: None }))
    }
}
