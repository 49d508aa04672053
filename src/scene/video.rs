//! The `[video]` table's canvas and length: the canvas size (from the keys or the background
//! image) and the rendered frames.

use std::ops::Range;

use super::frame_of;
use super::toml_reader::{Document, Table, Value, opt};
use super::{BackgroundSpec, DEFAULT_SIZE};
use crate::base::error::{Error, Result};
use crate::base::limits::{MAX_AREA, MAX_FRAMES, MAX_SIDE, MAX_START_FRAME};
use crate::base::picture::{probe, scale};

pub(super) fn read_canvas(
    doc: &Document<'_>,
    video: Option<&Table<'_, '_>>,
    bg: &BackgroundSpec,
) -> Result<(u32, u32)> {
    let side = |key: &str| opt(video, key).map(|v| v.int(3..=MAX_SIDE).map(|n| (n, v))).transpose();
    let width = side("width")?;
    let height = side("height")?;
    let image_size = match (&width, &height, &bg.image) {
        (Some(_), Some(_), _) | (_, _, None) => None,
        (_, _, Some(path)) => Some(
            probe(path)
                .map(|h| (h.width, h.height))
                .map_err(|reason| Error::Background { path: path.clone(), reason })?,
        ),
    };
    let pick = |given: &Option<(i64, Value<'_, '_>)>, from_image: Option<u32>, fallback: u32, key: &str| {
        if let Some((n, _)) = given {
            return Ok(*n);
        }
        match from_image {
            Some(n) if (3..=MAX_SIDE).contains(&i64::from(n)) => Ok(i64::from(n)),
            Some(n) => Err(Error::Background {
                path: bg.image.clone().unwrap_or_default(),
                reason: format!(
                    "its {key} of {n} pixel{} cannot be the canvas {key} (allowed 3..={MAX_SIDE}); set video.{key} in the scene",
                    if n == 1 { "" } else { "s" }
                ),
            }),
            None => Ok(i64::from(fallback)),
        }
    };
    let (w, h) = match (&width, &height, image_size) {
        // One side given: the other keeps the image's aspect ratio (rounded half up), so the
        // picture is not distorted.
        (Some((given, v)), None, Some((iw, ih))) | (None, Some((given, v)), Some((ih, iw))) => {
            let other = scale(*given as u64, u64::from(ih), u64::from(iw)) as i64;
            let (key, other_key) = if width.is_some() { ("width", "height") } else { ("height", "width") };
            if !(3..=MAX_SIDE).contains(&other) {
                let (iw, ih) = image_size.unwrap_or_default();
                return Err(v.error(format!(
                    "gives a {other_key} of {other} pixels, keeping the {iw}×{ih} image's aspect ratio: \
                     allowed 3..={MAX_SIDE}; set video.{other_key} too"
                )));
            }
            if key == "width" { (*given, other) } else { (other, *given) }
        }
        _ => (
            pick(&width, image_size.map(|s| s.0), DEFAULT_SIZE.0, "width")?,
            pick(&height, image_size.map(|s| s.1), DEFAULT_SIZE.1, "height")?,
        ),
    };
    if w * h > MAX_AREA {
        let (key, span): (&str, Range<usize>) = match (&width, &height) {
            (_, Some((_, v))) => (&format!("video.height = {h}"), v.span.clone()),
            (Some((_, v)), None) => (&format!("video.width = {w}"), v.span.clone()),
            (None, None) => ("", 0..0),
        };
        let canvas =
            format!("the canvas {w}×{h} = {} pixels, over the limit width·height ≤ 8192·8192 = {MAX_AREA}", w * h);
        let message = format!("{key} makes {canvas}");
        if width.is_none() && height.is_none() {
            return Err(Error::Background {
                path: bg.image.clone().unwrap_or_default(),
                reason: format!("it would make {canvas}; set video.width and video.height in the scene"),
            });
        }
        return Err(doc.error(span, message));
    }
    Ok((w as u32, h as u32))
}

/// The first output frame K0 and the output's length N; and whether K0 comes from
/// `video.preroll` (simulated before time 0, so event times count from the first output frame)
/// rather than `video.start` (event times count from the start of the simulation).
pub(super) fn read_length(doc: &Document<'_>, video: Option<&Table<'_, '_>>, fps: u32) -> Result<(u64, u64, bool)> {
    let (start_key, preroll_key) = (opt(video, "start"), opt(video, "preroll"));
    if let (Some(start), Some(preroll)) = (&start_key, &preroll_key) {
        let later = if start.span.start > preroll.span.start { start } else { preroll };
        return Err(later.error(
            "conflicts: give either video.start (the output starts later; event times count from the start of the \
             simulation) or video.preroll (simulated before time 0; event times count from the first output frame), \
             not both",
        ));
    }
    let preroll = preroll_key.is_some();
    let start = match start_key.or(preroll_key) {
        Some(v) => {
            let k0 = frame_of(v.time()?, fps);
            if k0 > MAX_START_FRAME {
                let msg =
                    format!("starts at frame {k0} at {fps} fps: allowed a start frame of at most {MAX_START_FRAME}");
                return Err(v.error(msg));
            }
            k0
        }
        None => 0,
    };
    let frames = match (opt(video, "duration"), opt(video, "frames")) {
        (Some(d), Some(f)) => {
            let later = if d.span.start > f.span.start { d } else { f };
            return Err(later.error("conflicts: give either video.duration or video.frames, not both"));
        }
        (None, None) => {
            let message = "missing video length: give video.duration (seconds) or video.frames".to_string();
            let span = video.map_or(0..0, |t| t.span.clone());
            let hint = Some("add `duration = 4.0` under [video]".to_string());
            let diagnostic = doc.diagnostic(span, message).with_hint(hint);
            return Err(Error::Scene(Box::new(diagnostic)));
        }
        (Some(d), None) => {
            let n = frame_of(d.time()?, fps);
            if !(1..=MAX_FRAMES).contains(&n) {
                return Err(
                    d.error(format!("gives {n} frames at {fps} fps: allowed a duration of 1..={MAX_FRAMES} frames"))
                );
            }
            n
        }
        (None, Some(f)) => f.int(1..=MAX_FRAMES as i64)? as u64,
    };
    Ok((start, frames, preroll))
}
