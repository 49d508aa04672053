//! A hash manifest (`--hashes`) read as frames: each frame's hash of its RGB pixels and its
//! delay, without pixels.

use std::path::Path;

use super::frames::{Delay, Frame, FrameSource, Info, Kind, Pixels};
use crate::base::error::Result;
use crate::encode::manifest;

/// Opens a manifest: its canvas and provenance, then a frame per hash.
pub fn open(path: &Path) -> Result<(Info, Box<dyn FrameSource>)> {
    let m = manifest::read(path)?;
    let info = Info {
        path: path.into(),
        kind: Kind::Manifest,
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

struct ManifestFrames(std::vec::IntoIter<Frame>);

impl FrameSource for ManifestFrames {
    fn next_frame(&mut self) -> Result<Option<Frame>> {
        Ok(self.0.next())
    }
}
