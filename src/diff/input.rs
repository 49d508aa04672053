//! The sides of a `diff` by kind: which kind a path is, and its reader (a render's, from
//! `decode`; a scene's, rendered in memory).

use std::path::Path;

use super::scene::Through;
use crate::base::error::{Error, Result, os_reason};
use crate::base::files::file_kind;
use crate::decode::frames::{FrameSource, Info, Kind};
use crate::decode::{Magic, animated, folder, gif, manifest, read_head, sniff};
use crate::encode::manifest::PixelKind;

/// Guesses a path's kind: a folder, a GIF, a PNG, a WebP or a manifest by their first bytes
/// ([`sniff`]), a `.toml` file. Only files and folders are read: a pipe or a device could be
/// endless, and is not read twice.
pub fn kind_of(path: &Path) -> Result<Kind> {
    let meta = std::fs::metadata(path).map_err(|e| Error::input(path, format!("cannot read it: {}", os_reason(&e))))?;
    if meta.is_dir() {
        return Ok(Kind::PngSequence);
    }
    if !meta.is_file() {
        return Err(Error::input(
            path,
            format!("it is {}: diff compares files and folders (save the render to a file first)", file_kind(&meta)),
        ));
    }
    let head = std::fs::File::open(path)
        .and_then(|mut file| read_head(&mut file))
        .map_err(|e| Error::input(path, format!("cannot read it: {}", os_reason(&e))))?;
    match sniff(&head) {
        Some(Magic::Gif) => Ok(Kind::Gif),
        Some(Magic::Png) => Ok(if animated::is_apng(path)? { Kind::Apng } else { Kind::Png }),
        Some(Magic::Webp) => Ok(Kind::Webp),
        Some(Magic::Manifest) => Ok(Kind::Manifest),
        _ if path.extension().is_some_and(|e| e.eq_ignore_ascii_case("toml")) => Ok(Kind::Scene),
        _ if head.is_empty() => Err(Error::input(path, "the file is empty")),
        _ => Err(Error::input(
            path,
            "not a GIF, APNG, PNG, WebP, a PNG-sequence folder, a .toml scene or a hash manifest",
        )),
    }
}

/// Opens an input; a scene is shown as `through` says.
pub fn open(path: &Path, kind: Kind, through: Through) -> Result<(Info, Box<dyn FrameSource>)> {
    match kind {
        Kind::Gif => gif::open(path),
        Kind::Apng | Kind::Webp | Kind::Png => animated::open(path, kind),
        Kind::PngSequence => folder::open(path),
        Kind::Scene => super::scene::open(path, through),
        Kind::Manifest => manifest::open(path),
    }
}

/// Whether a manifest's hashes are of GIF colours (so a scene compared with it should be too).
pub fn manifest_pixels(path: &Path) -> Result<PixelKind> {
    Ok(crate::encode::manifest::read(path)?.pixels)
}
