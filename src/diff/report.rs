//! What a diff leaves behind: its JSON summary, and with `--out DIR` pictures to look at — for
//! each differing frame (the first 20) A | heat map | B, a contact sheet of the heat maps of all
//! differing frames, an animated heat-map GIF of every frame, and `report.json`.

use std::fmt::Write as _;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use super::{Compared, Presence, Summary};
use crate::error::{Error, Result};

/// Differing frames that get a three-panel picture.
pub const PANELS: usize = 20;
/// Differing frames shown on the contact sheet at most.
const SHEET_LIMIT: usize = 1000;
/// Largest thumbnail width on the contact sheet.
const THUMB_WIDTH: usize = 160;
/// Grey between panels and thumbnails.
const GAP: [u8; 3] = [96, 96, 96];

/// The heat-map colour of one pixel: within tolerance a dimmed grey of A, else a ramp from red
/// (small differences) through yellow to white (large).
fn heat(a: &[u8], delta: u8, tolerance: u8) -> [u8; 3] {
    if delta <= tolerance {
        let luma = (u32::from(a[0]) * 3 + u32::from(a[1]) * 6 + u32::from(a[2])) / 10;
        let g = (luma / 4) as u8;
        return [g, g, g];
    }
    let d = u32::from(delta);
    [255, (64 + d * 3 / 2).min(255) as u8, d.saturating_sub(128).saturating_mul(2).min(255) as u8]
}

/// Writes the pictures and `report.json` into a folder as frames are compared.
pub struct ReportWriter {
    dir: PathBuf,
    width: usize,
    height: usize,
    tolerance: u8,
    panels: Vec<PathBuf>,
    thumbs: Vec<(u64, Vec<u8>)>,
    thumb_size: (usize, usize),
    heat_gif: Option<gif::Encoder<BufWriter<File>>>,
    heat: Vec<u8>,
    deltas: Vec<u8>,
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |source| Error::Io { path: path.to_path_buf(), source }
}

/// The heat GIF's palette: 64 greys, then 192 steps of the heat ramp.
fn heat_palette(tolerance: u8) -> Vec<u8> {
    let mut palette: Vec<u8> = (0..64u32).flat_map(|g| [g as u8, g as u8, g as u8]).collect();
    for i in 0..192u32 {
        let delta = (u32::from(tolerance) + 1 + i * (255 - u32::from(tolerance)) / 192).min(255) as u8;
        palette.extend(heat(&[0, 0, 0], delta, tolerance));
    }
    palette
}

impl ReportWriter {
    /// Creates `dir` (if needed) for a comparison of `width`×`height` frames.
    pub fn new(dir: &Path, width: u32, height: u32, tolerance: u8) -> Result<Self> {
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let (width, height) = (width as usize, height as usize);
        let step = width.div_ceil(THUMB_WIDTH).max(1);
        let heat_gif = if width > 0 && width <= 65535 && height <= 65535 {
            let path = dir.join("heat.gif");
            let file = File::create(&path).map_err(io(&path))?;
            let mut encoder =
                gif::Encoder::new(BufWriter::new(file), width as u16, height as u16, &heat_palette(tolerance))
                    .map_err(|e| Error::Encode(e.to_string()))?;
            encoder.set_repeat(gif::Repeat::Infinite).map_err(|e| Error::Encode(e.to_string()))?;
            Some(encoder)
        } else {
            None
        };
        Ok(ReportWriter {
            dir: dir.to_path_buf(),
            width,
            height,
            tolerance,
            panels: Vec::new(),
            thumbs: Vec::new(),
            thumb_size: (width.div_ceil(step), height.div_ceil(step)),
            heat_gif,
            heat: Vec::new(),
            deltas: Vec::new(),
        })
    }

    /// Takes one compared frame: adds it to the heat GIF and, if it differs, to the pictures.
    pub fn observe(&mut self, c: &Compared<'_>) -> Result<()> {
        let (Some(a), Some(b)) = (c.a, c.b) else { return Ok(()) };
        if a.len() != b.len() || a.len() != self.width * self.height * 3 {
            return Ok(());
        }
        self.heat.clear();
        self.deltas.clear();
        for (pa, pb) in a.chunks_exact(3).zip(b.chunks_exact(3)) {
            let delta = pa[0].abs_diff(pb[0]).max(pa[1].abs_diff(pb[1])).max(pa[2].abs_diff(pb[2]));
            self.deltas.push(delta);
            self.heat.extend(heat(pa, delta, self.tolerance));
        }
        if let Some(encoder) = &mut self.heat_gif {
            let tolerance = u32::from(self.tolerance);
            let indices: Vec<u8> = self
                .heat
                .chunks_exact(3)
                .zip(&self.deltas)
                .map(|(h, &delta)| {
                    let delta = u32::from(delta);
                    if delta <= tolerance {
                        h[0].min(63)
                    } else {
                        (64 + ((delta - tolerance - 1) * 192 / (255 - tolerance).max(1)).min(191)) as u8
                    }
                })
                .collect();
            let delay = c.result.delays.0.or(c.result.delays.1).unwrap_or(4);
            let frame = gif::Frame {
                width: self.width as u16,
                height: self.height as u16,
                delay,
                buffer: std::borrow::Cow::Owned(indices),
                ..gif::Frame::default()
            };
            encoder.write_frame(&frame).map_err(|e| Error::Encode(e.to_string()))?;
        }
        if !c.result.differs() || c.result.presence != Presence::Both {
            return Ok(());
        }
        if self.panels.len() < PANELS {
            let path = self.dir.join(format!("frame_{:04}.png", c.result.frame));
            self.write_panels(&path, a, b)?;
            self.panels.push(path);
        }
        if self.thumbs.len() < SHEET_LIMIT {
            let thumb = self.thumbnail();
            self.thumbs.push((c.result.frame, thumb));
        }
        Ok(())
    }

    /// The heat map shrunk for the contact sheet: each thumbnail pixel shows the most different
    /// pixel of its block, so a single changed pixel still shows.
    fn thumbnail(&self) -> Vec<u8> {
        let step = self.width.div_ceil(THUMB_WIDTH).max(1);
        let mut thumb = Vec::with_capacity(self.thumb_size.0 * self.thumb_size.1 * 3);
        for by in (0..self.height).step_by(step) {
            for bx in (0..self.width).step_by(step) {
                let mut pick = by * self.width + bx;
                for y in by..(by + step).min(self.height) {
                    for x in bx..(bx + step).min(self.width) {
                        if self.deltas[y * self.width + x] > self.deltas[pick] {
                            pick = y * self.width + x;
                        }
                    }
                }
                thumb.extend_from_slice(&self.heat[pick * 3..pick * 3 + 3]);
            }
        }
        thumb
    }

    /// The heat map with a frame drawn around the differing pixels, so that a few changed
    /// pixels are easy to find.
    fn marked_heat(&self) -> Vec<u8> {
        let mut heat = self.heat.clone();
        let (w, h) = (self.width, self.height);
        let differing = |i: usize| self.deltas[i] > self.tolerance;
        let (mut x0, mut y0, mut x1, mut y1) = (w, h, 0, 0);
        for i in (0..w * h).filter(|&i| differing(i)) {
            let (x, y) = (i % w, i / w);
            (x0, y0, x1, y1) = (x0.min(x), y0.min(y), x1.max(x), y1.max(y));
        }
        if x0 > x1 {
            return heat;
        }
        let (x0, y0) = (x0.saturating_sub(3), y0.saturating_sub(3));
        let (x1, y1) = ((x1 + 3).min(w - 1), (y1 + 3).min(h - 1));
        let mut mark = |x: usize, y: usize| heat[(y * w + x) * 3..][..3].copy_from_slice(&[0, 220, 255]);
        for x in x0..=x1 {
            mark(x, y0);
            mark(x, y1);
        }
        for y in y0..=y1 {
            mark(x0, y);
            mark(x1, y);
        }
        heat
    }

    fn write_panels(&self, path: &Path, a: &[u8], b: &[u8]) -> Result<()> {
        let (w, h) = (self.width, self.height);
        let total = w * 3 + 4;
        let heat = self.marked_heat();
        let mut sheet = Vec::with_capacity(total * h * 3);
        for y in 0..h {
            let row = y * w * 3..(y + 1) * w * 3;
            sheet.extend_from_slice(&a[row.clone()]);
            sheet.extend(GAP.iter().chain(&GAP));
            sheet.extend_from_slice(&heat[row.clone()]);
            sheet.extend(GAP.iter().chain(&GAP));
            sheet.extend_from_slice(&b[row]);
        }
        write_rgb_png(path, total, h, &sheet)
    }

    /// Writes the contact sheet and `report.json`, and closes the heat GIF.
    pub fn finish(mut self, summary: &Summary) -> Result<Vec<PathBuf>> {
        let mut written = std::mem::take(&mut self.panels);
        if let Some(encoder) = self.heat_gif.take() {
            encoder.into_inner().map_err(|e| Error::Encode(e.to_string()))?;
            written.push(self.dir.join("heat.gif"));
        }
        if !self.thumbs.is_empty() {
            let path = self.dir.join("contact.png");
            let (tw, th) = self.thumb_size;
            let columns = self.thumbs.len().min(8);
            let rows = self.thumbs.len().div_ceil(columns);
            let (sw, sh) = (columns * (tw + 2) + 2, rows * (th + 2) + 2);
            let mut sheet: Vec<u8> = GAP.iter().copied().cycle().take(sw * sh * 3).collect();
            for (n, (_, thumb)) in self.thumbs.iter().enumerate() {
                let (ox, oy) = (2 + (n % columns) * (tw + 2), 2 + (n / columns) * (th + 2));
                for y in 0..th {
                    let src = &thumb[y * tw * 3..(y + 1) * tw * 3];
                    let at = ((oy + y) * sw + ox) * 3;
                    sheet[at..at + tw * 3].copy_from_slice(src);
                }
            }
            write_rgb_png(&path, sw, sh, &sheet)?;
            written.push(path);
        }
        let path = self.dir.join("report.json");
        let sheet_frames: Vec<u64> = self.thumbs.iter().map(|t| t.0).collect();
        std::fs::write(&path, to_json(summary, &sheet_frames)).map_err(io(&path))?;
        written.push(path);
        Ok(written)
    }
}

fn write_rgb_png(path: &Path, width: usize, height: usize, rgb: &[u8]) -> Result<()> {
    let file = File::create(path).map_err(io(path))?;
    let pixels: Vec<[u8; 3]> = rgb.chunks_exact(3).map(|p| [p[0], p[1], p[2]]).collect();
    crate::encode::png::write_png(BufWriter::new(file), width as u32, height as u32, &pixels, None).map_err(|e| match e
    {
        png::EncodingError::IoError(source) => Error::Io { path: path.to_path_buf(), source },
        other => Error::Encode(other.to_string()),
    })
}

/// A JSON string literal.
fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if u32::from(c) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or_else(|| "null".to_string(), |v| v.to_string())
}

fn side(info: &super::input::Info, frames: u64) -> String {
    let provenance = info.provenance.as_ref().map_or_else(
        || "null".to_string(),
        |p| format!("{{\"version\":{},\"scene\":\"{:016x}\"}}", quote(&p.version), p.scene),
    );
    format!(
        "{{\"path\":{},\"kind\":{},\"width\":{},\"height\":{},\"frames\":{frames},\"pixels\":{},\"provenance\":{provenance}}}",
        quote(&info.path.to_string_lossy()),
        quote(info.kind.name()),
        info.width,
        info.height,
        quote(info.colours.name()),
    )
}

/// The summary as one JSON object: the verdict, both sides, and every frame's figures.
/// `contact_sheet` lists the frames on the contact sheet, in order (empty without `--out`).
pub fn to_json(s: &Summary, contact_sheet: &[u64]) -> String {
    let first = s.differing().next().map(|r| r.frame);
    let mut out = format!(
        "{{\"same\":{},\"frames_compared\":{},\"differing_frames\":{},\"first_differing_frame\":{},\
         \"tolerance\":{},\"max_pixels\":{},\"same_canvas\":{},\"timing_compared\":{},\"compared_by_hash\":{},\
         \"a\":{},\"b\":{},\"contact_sheet\":{:?},\"frames\":[",
        s.same(),
        s.compared(),
        s.differing().count(),
        opt(first),
        s.options.tolerance,
        s.options.max_pixels,
        s.same_canvas,
        s.timing_compared,
        s.by_hash,
        side(&s.a, s.frames_a),
        side(&s.b, s.frames_b),
        contact_sheet,
    );
    for (i, r) in s.results.iter().enumerate() {
        let presence = match r.presence {
            Presence::Both => "both",
            Presence::OnlyA => "only_a",
            Presence::OnlyB => "only_b",
            Presence::MissingInA(_) => "missing_in_a",
            Presence::MissingInB(_) => "missing_in_b",
        };
        let _ = write!(
            out,
            "{}\n{{\"frame\":{},\"differs\":{},\"present\":\"{presence}\",\"differing_pixels\":{},\"max_delta\":{},\
             \"psnr\":{},\"hash_equal\":{},\"delay_a\":{},\"delay_b\":{}}}",
            if i == 0 { "" } else { "," },
            r.frame,
            r.differs(),
            opt(r.differing_pixels),
            opt(r.max_delta),
            r.psnr.map_or_else(|| "null".to_string(), |p| format!("{p:.3}")),
            opt(r.hash_equal),
            opt(r.delays.0),
            opt(r.delays.1),
        );
    }
    out.push_str("\n]}\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_strings_are_escaped() {
        assert_eq!(quote("a\"b\\c\nd\u{1}"), "\"a\\\"b\\\\c\\nd\\u0001\"");
    }

    #[test]
    fn heat_marks_only_differences_beyond_tolerance() {
        assert_eq!(heat(&[200, 200, 200], 3, 3), [50, 50, 50]);
        assert_eq!(heat(&[200, 200, 200], 4, 3)[0], 255);
        assert_eq!(heat(&[0, 0, 0], 255, 0), [255, 255, 254]);
        assert_eq!(heat_palette(0).len(), 256 * 3);
    }
}
