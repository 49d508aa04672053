//! `report.json` and `diff --json`: the verdict, both sides, what the report's pictures hold, and
//! every frame's figures, as one JSON object (one frame a line).

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::{FrameResult, Presence, Summary};
use crate::base::error::{Error, Result};
use crate::base::json;
use crate::decode::frames::Info;

/// What the pictures show and leave out, for `report.json` and the summary.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Contents {
    /// The files written, in the report folder as it will be named.
    pub files: Vec<PathBuf>,
    /// Frames with a panel picture.
    pub panels: Vec<Panel>,
    /// Frames on the contact sheet.
    pub sheet: Vec<u64>,
    /// Differing frames with pixels to draw.
    pub drawable: u64,
    /// What the heat GIF covers, if one was made.
    pub heat: Option<HeatGif>,
}

/// A frame's panel picture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Panel {
    /// The frame.
    pub frame: u64,
    /// The area its zoomed crop shows (x0, y0, x1, y1, inclusive), if it has one.
    pub zoom: Option<[usize; 4]>,
}

/// What `heat.gif` covers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HeatGif {
    /// First frame shown (the first differing frame).
    #[serde(rename = "first_frame")]
    pub first: u64,
    /// Last frame shown (at most the last differing frame).
    #[serde(rename = "last_frame")]
    pub last: u64,
    /// Frames in the GIF.
    pub frames: usize,
    /// Render pixels per heat-map pixel along each axis.
    pub shrink: usize,
}

/// The report as JSON sees it.
#[derive(Serialize)]
struct Report<'a> {
    same: bool,
    frames_compared: u64,
    differing_frames: usize,
    first_differing_frame: Option<u64>,
    tolerance: u8,
    max_pixels: u64,
    /// `--min-psnr`, in dB, when given.
    #[serde(skip_serializing_if = "Option::is_none")]
    min_psnr: Option<f64>,
    same_canvas: bool,
    timing_compared: bool,
    compared_by_hash: bool,
    a: Side<'a>,
    b: Side<'a>,
    panels: &'a [Panel],
    contact_sheet: &'a [u64],
    contact_sheet_left_out: u64,
    heat_gif: Option<&'a HeatGif>,
    frames: Vec<Frame<'a>>,
}

/// One side of the diff.
#[derive(Serialize)]
struct Side<'a> {
    path: String,
    kind: &'static str,
    width: u32,
    height: u32,
    frames: u64,
    pixels: &'static str,
    provenance: Option<Provenance<'a>>,
}

/// Who made a side, and from what (the scene's hash in hexadecimal).
#[derive(Serialize)]
struct Provenance<'a> {
    version: &'a str,
    scene: String,
}

/// One frame's figures.
#[derive(Serialize)]
struct Frame<'a> {
    frame: u64,
    differs: bool,
    present: &'static str,
    missing: Option<&'a str>,
    differing_pixels: Option<u64>,
    max_delta: Option<u8>,
    psnr: Option<f64>,
    hash_equal: Option<bool>,
    /// Delays in centiseconds, rounded half up.
    delay_a: Option<u16>,
    delay_b: Option<u16>,
}

impl<'a> Side<'a> {
    fn of(info: &'a Info, frames: u64) -> Side<'a> {
        Side {
            path: info.path.to_string_lossy().into_owned(),
            kind: info.kind.name(),
            width: info.width,
            height: info.height,
            frames,
            pixels: info.colours.name(),
            provenance: info
                .provenance
                .as_ref()
                .map(|p| Provenance { version: &p.version, scene: format!("{:016x}", p.scene) }),
        }
    }
}

impl<'a> Frame<'a> {
    fn of(r: &'a FrameResult) -> Frame<'a> {
        let (present, missing) = match &r.presence {
            Presence::Both => ("both", None),
            Presence::OnlyA => ("only_a", None),
            Presence::OnlyB => ("only_b", None),
            Presence::MissingInA(name) => ("missing_in_a", Some(name.as_str())),
            Presence::MissingInB(name) => ("missing_in_b", Some(name.as_str())),
        };
        Frame {
            frame: r.frame,
            differs: r.differs(),
            present,
            missing,
            differing_pixels: r.differing_pixels,
            max_delta: r.max_delta,
            // Thousandths of a decibel are as fine as PSNR is worth reading.
            psnr: r.psnr.map(|p| (p * 1000.0).round() / 1000.0),
            hash_equal: r.hash_equal,
            delay_a: r.delays.0.map(|d| d.cs()),
            delay_b: r.delays.1.map(|d| d.cs()),
        }
    }
}

/// The summary as one JSON object: the verdict, both sides, what the pictures hold (with
/// `--out`) and every frame's figures.
pub fn to_json(s: &Summary, contents: Option<&Contents>) -> String {
    let none = Contents::default();
    let c = contents.unwrap_or(&none);
    json::to_lines(&Report {
        same: s.same(),
        frames_compared: s.compared(),
        differing_frames: s.differing().count(),
        first_differing_frame: s.differing().next().map(|r| r.frame),
        tolerance: s.options.tolerance,
        max_pixels: s.options.max_pixels,
        min_psnr: s.options.min_psnr_tenths.map(|t| f64::from(t) / 10.0),
        same_canvas: s.same_canvas,
        timing_compared: s.timing_compared,
        compared_by_hash: s.by_hash,
        a: Side::of(&s.a, s.frames_a),
        b: Side::of(&s.b, s.frames_b),
        panels: &c.panels,
        contact_sheet: &c.sheet,
        contact_sheet_left_out: c.drawable.saturating_sub(c.sheet.len() as u64),
        heat_gif: c.heat.as_ref(),
        frames: s.results.iter().map(Frame::of).collect(),
    })
}

/// Writes `report.json` into `dir`.
pub fn write_json(dir: &Path, summary: &Summary, contents: Option<&Contents>) -> Result<()> {
    let path = dir.join("report.json");
    std::fs::write(&path, to_json(summary, contents)).map_err(|source| Error::io(path, source))
}
