//! What a diff leaves behind: its JSON summary, and with `--out DIR` pictures to look at, each
//! labelled and of bounded size whatever the render's length:
//!
//! - `frame_NNNN.png` for the first 20 differing frames: A | heat map | B with their names and
//!   the frame number, a legend, and for a small change a zoomed crop around it;
//! - `contact.png`: the heat maps of at most 40 differing frames chosen evenly, each numbered;
//! - `heat.gif`: the heat map of the differing stretch (first to last differing frame), at most
//!   320 pixels wide and 120 frames long (every k-th frame when longer);
//! - `report.json`: the verdict, every frame's figures, and what the pictures left out
//!   (see [`super::json`]).

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use super::draw::{self, CHAR, Canvas, LINE};
use super::json::{Contents, HeatGif, Panel, write_json};
use super::{Compared, Presence, Summary};
use crate::base::error::{Error, Result, Target};
use crate::encode::png::write_png;

/// Differing frames that get a three-panel picture.
pub const PANELS: usize = 20;
/// Differing frames shown on the contact sheet at most.
pub const SHEET_FRAMES: usize = 40;
/// Frames of the heat GIF at most.
pub const HEAT_FRAMES: usize = 120;
/// Widest heat GIF.
const HEAT_WIDTH: usize = 320;
/// Largest thumbnail width on the contact sheet.
const THUMB_WIDTH: usize = 160;
/// Panels narrower than this are enlarged, wider than [`PANEL_MAX`] shrunk.
const PANEL_MIN: usize = 160;
const PANEL_MAX: usize = 640;
/// Grey between panels and thumbnails, and the colour of text.
const GAP: [u8; 3] = [96, 96, 96];
const BACK: [u8; 3] = [32, 32, 32];
const INK: [u8; 3] = [235, 235, 235];
/// The frame drawn around the changed area.
const MARK: [u8; 3] = [0, 220, 255];

/// The heat-map colour of one pixel: within tolerance a dimmed grey of A, else a ramp from red
/// (small differences) through yellow to white (large).
pub(super) fn heat(a: &[u8], delta: u8, tolerance: u8) -> [u8; 3] {
    if delta <= tolerance {
        let luma = (u32::from(a[0]) * 3 + u32::from(a[1]) * 6 + u32::from(a[2])) / 10;
        let g = (luma / 4) as u8;
        return [g, g, g];
    }
    let d = u32::from(delta);
    [255, (64 + d * 3 / 2).min(255) as u8, d.saturating_sub(128).saturating_mul(2).min(255) as u8]
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

/// The heat GIF palette index of a pixel of heat colour `h` and difference `delta`.
fn heat_index(h: &[u8], delta: u8, tolerance: u8) -> u8 {
    let (delta, tolerance) = (u32::from(delta), u32::from(tolerance));
    if delta <= tolerance {
        h[0].min(63)
    } else {
        (64 + ((delta - tolerance - 1) * 192 / (255 - tolerance).max(1)).min(191)) as u8
    }
}

/// An even sample of a stream of unknown length: every `stride`-th item is kept, and when twice
/// `cap` are kept the stride doubles and every other one goes. At the end at most `cap` are
/// chosen evenly from those kept.
pub(super) struct Sample<T> {
    cap: usize,
    stride: u64,
    seen: u64,
    kept: Vec<(u64, T)>,
}

impl<T> Sample<T> {
    pub(super) fn new(cap: usize) -> Self {
        Sample { cap, stride: 1, seen: 0, kept: Vec::new() }
    }

    /// Whether the next item offered will be kept (so it is worth making).
    pub(super) fn wants_next(&self) -> bool {
        self.seen.is_multiple_of(self.stride)
    }

    /// Offers the next item; `make` runs only if it is kept.
    pub(super) fn offer(&mut self, make: impl FnOnce() -> T) {
        if self.wants_next() {
            self.kept.push((self.seen, make()));
            if self.kept.len() > 2 * self.cap {
                self.stride *= 2;
                let stride = self.stride;
                self.kept.retain(|(n, _)| n.is_multiple_of(stride));
            }
        }
        self.seen += 1;
    }

    /// Passes over the next item, which the sample does not want.
    pub(super) fn skip(&mut self) {
        debug_assert!(!self.wants_next());
        self.seen += 1;
    }

    /// At most `cap` of the kept items, evenly spread over them.
    pub(super) fn finish(self) -> Vec<T> {
        let n = self.kept.len();
        if n <= self.cap {
            return self.kept.into_iter().map(|(_, t)| t).collect();
        }
        let picks: Vec<usize> = (0..self.cap).map(|i| i * (n - 1) / (self.cap - 1)).collect();
        self.kept.into_iter().enumerate().filter(|(i, _)| picks.contains(i)).map(|(_, (_, t))| t).collect()
    }
}

/// One frame of the heat GIF: its number, delay and reduced palette indices.
struct HeatFrame {
    frame: u64,
    delay: u16,
    indices: Vec<u8>,
}

/// A zoomed crop around a small change.
struct Zoom {
    /// A | heat | B enlarged.
    picture: Canvas,
    caption: String,
    /// The area it shows: x0, y0, x1, y1, inclusive.
    area: [usize; 4],
}

/// Writes the pictures and `report.json` into a folder as frames are compared.
pub struct ReportWriter {
    dir: PathBuf,
    shown_dir: PathBuf,
    names: (String, String),
    width: usize,
    height: usize,
    tolerance: u8,
    panels: Vec<Panel>,
    sheet: Sample<(u64, Canvas)>,
    heat_frames: Sample<HeatFrame>,
    heat_shrink: usize,
    first_differing: Option<u64>,
    last_differing: Option<u64>,
    drawable: u64,
    heat: Vec<u8>,
    deltas: Vec<u8>,
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |source| Error::io(path, source)
}

impl ReportWriter {
    /// A report of `width`×`height` frames written into the existing folder `dir`, which will
    /// be shown to the user as `shown_dir`; `names` are A's and B's paths as given.
    pub fn new(
        dir: &Path,
        shown_dir: &Path,
        names: (String, String),
        (width, height): (u32, u32),
        tolerance: u8,
    ) -> Self {
        let (width, height) = (width as usize, height as usize);
        ReportWriter {
            dir: dir.to_path_buf(),
            shown_dir: shown_dir.to_path_buf(),
            names,
            width,
            height,
            tolerance,
            panels: Vec::new(),
            sheet: Sample::new(SHEET_FRAMES),
            heat_frames: Sample::new(HEAT_FRAMES),
            heat_shrink: width.div_ceil(HEAT_WIDTH).max(1),
            first_differing: None,
            last_differing: None,
            drawable: 0,
            heat: Vec::new(),
            deltas: Vec::new(),
        }
    }

    /// Takes one compared frame: its heat map joins the pictures that want it.
    pub fn observe(&mut self, c: &Compared<'_>) -> Result<()> {
        let (Some(a), Some(b)) = (c.a, c.b) else { return Ok(()) };
        if a.len() != b.len() || a.len() != self.width * self.height * 3 {
            return Ok(());
        }
        let differs = c.result.differs() && c.result.presence == Presence::Both;
        if differs {
            self.first_differing.get_or_insert(c.result.frame);
            self.last_differing = Some(c.result.frame);
        }
        let in_stretch = self.first_differing.is_some();
        let wanted = differs && (self.panels.len() < PANELS || self.sheet.wants_next())
            || in_stretch && self.heat_frames.wants_next();
        if !wanted {
            if differs {
                self.drawable += 1;
                self.sheet.skip();
            }
            if in_stretch {
                self.heat_frames.skip();
            }
            return Ok(());
        }
        self.heat.clear();
        self.deltas.clear();
        for (pa, pb) in a.chunks_exact(3).zip(b.chunks_exact(3)) {
            let delta = pa[0].abs_diff(pb[0]).max(pa[1].abs_diff(pb[1])).max(pa[2].abs_diff(pb[2]));
            self.deltas.push(delta);
            self.heat.extend(heat(pa, delta, self.tolerance));
        }
        if in_stretch {
            let delay = c.result.delays.0.or(c.result.delays.1).map_or(4, |d| d.cs().max(1));
            let frame = c.result.frame;
            let indices = self.heat_indices();
            self.heat_frames.offer(|| HeatFrame { frame, delay, indices });
        }
        if differs {
            self.drawable += 1;
            if self.panels.len() < PANELS {
                let path = self.dir.join(format!("frame_{:04}.png", c.result.frame));
                let (panel, zoom) = self.panel(c, a, b);
                panel.write_png(&path)?;
                self.panels.push(Panel { frame: c.result.frame, zoom });
            }
            let frame = c.result.frame;
            let thumb = self.thumbnail();
            self.sheet.offer(|| (frame, thumb));
        }
        Ok(())
    }

    /// The heat map as a canvas.
    fn heat_canvas(&self) -> Canvas {
        Canvas::from_rgb(self.width, self.height, self.heat.clone())
    }

    /// Picks the most different pixel of a block, so that a single changed pixel still shows.
    fn most_different<'a>(&'a self) -> impl Fn(&[usize]) -> usize + 'a {
        |block: &[usize]| block.iter().copied().max_by_key(|&i| (self.deltas[i], usize::MAX - i)).unwrap_or(0)
    }

    /// The heat map shrunk for the heat GIF, as palette indices.
    fn heat_indices(&self) -> Vec<u8> {
        let step = self.heat_shrink;
        let (w, h) = (self.width, self.height);
        let mut indices = Vec::with_capacity(w.div_ceil(step) * h.div_ceil(step));
        let pick = self.most_different();
        for by in (0..h).step_by(step) {
            for bx in (0..w).step_by(step) {
                let block: Vec<usize> =
                    (by..(by + step).min(h)).flat_map(|y| (bx..(bx + step).min(w)).map(move |x| y * w + x)).collect();
                let i = pick(&block);
                indices.push(heat_index(&self.heat[i * 3..i * 3 + 3], self.deltas[i], self.tolerance));
            }
        }
        indices
    }

    /// The heat map shrunk for the contact sheet.
    fn thumbnail(&self) -> Canvas {
        let step = self.width.div_ceil(THUMB_WIDTH).max(1);
        self.heat_canvas().shrunk(step, self.most_different())
    }

    /// The bounding box of the pixels that differ beyond the tolerance, if any.
    fn changed_box(&self) -> Option<(usize, usize, usize, usize)> {
        let w = self.width;
        let (mut x0, mut y0, mut x1, mut y1) = (usize::MAX, usize::MAX, 0, 0);
        for (i, _) in self.deltas.iter().enumerate().filter(|(_, d)| **d > self.tolerance) {
            let (x, y) = (i % w, i / w);
            (x0, y0, x1, y1) = (x0.min(x), y0.min(y), x1.max(x), y1.max(y));
        }
        (x0 != usize::MAX).then_some((x0, y0, x1, y1))
    }

    /// A | heat map | B with a title, names, a legend and, for a small change, a zoomed crop
    /// (whose area comes back too).
    fn panel(&self, c: &Compared<'_>, a: &[u8], b: &[u8]) -> (Canvas, Option<[usize; 4]>) {
        let (w, h) = (self.width, self.height);
        let (up, down) = if w < PANEL_MIN { (PANEL_MIN.div_ceil(w).min(8), 1) } else { (1, w.div_ceil(PANEL_MAX)) };
        let resize = |canvas: Canvas, most_different: bool| -> Canvas {
            if down > 1 {
                if most_different {
                    canvas.shrunk(down, self.most_different())
                } else {
                    canvas.shrunk(down, |block| block[0])
                }
            } else {
                canvas.scaled_up(up)
            }
        };
        let mut heat = self.heat_canvas();
        let changed = self.changed_box();
        if let Some((x0, y0, x1, y1)) = changed {
            let (x0, y0) = (x0.saturating_sub(3), y0.saturating_sub(3));
            heat.outline(x0, y0, (x1 + 3).min(w - 1), (y1 + 3).min(h - 1), MARK);
        }
        let views = [
            resize(Canvas::from_rgb(w, h, a.to_vec()), false),
            resize(heat, true),
            resize(Canvas::from_rgb(w, h, b.to_vec()), false),
        ];
        let (pw, ph) = (views[0].width, views[0].height);
        let zoom = changed.and_then(|bounds| self.zoom(bounds, a, b));
        let legend = legend(self.tolerance);
        let row = 3 * pw + 2 * 4;
        let title = frame_title(c);
        let zoom_size =
            zoom.as_ref().map_or((0, 0), |z| (z.picture.width.max(draw::text_width(&z.caption)), z.picture.height));
        let width = (row.max(draw::text_width(&title)).max(legend.width).max(zoom_size.0)) + 8;
        let zoom_height = if zoom.is_some() { LINE + zoom_size.1 + 6 } else { 0 };
        let height = 4 + LINE + 2 + LINE + ph + 6 + legend.height + 4 + zoom_height;
        let mut sheet = Canvas::new(width, height, BACK);
        let mut y = 4;
        sheet.text(4, y, &title, INK, None);
        y += LINE + 2;
        let labels = [
            format!("A: {}", self.names.0),
            format!("difference (tolerance {})", self.tolerance),
            format!("B: {}", self.names.1),
        ];
        for (i, (label, view)) in labels.iter().zip(&views).enumerate() {
            let x = 4 + i * (pw + 4);
            sheet.text(x, y, &draw::fit_text(label, pw.max(CHAR * 6)), INK, None);
            sheet.blit(x, y + LINE, view);
        }
        y += LINE + ph + 6;
        sheet.blit(4, y, &legend);
        y += legend.height + 4;
        let area = zoom.map(|zoom| {
            sheet.text(4, y, &zoom.caption, INK, None);
            sheet.blit(4, y + LINE, &zoom.picture);
            zoom.area
        });
        (sheet, area)
    }

    /// A | heat | B cropped around a small change and enlarged, with its caption; `None` when
    /// the change is not small (the panels show it well enough).
    fn zoom(&self, (x0, y0, x1, y1): (usize, usize, usize, usize), a: &[u8], b: &[u8]) -> Option<Zoom> {
        let (w, h) = (self.width, self.height);
        let (bw, bh) = (x1 - x0 + 1, y1 - y0 + 1);
        if bw * 4 > w || bh * 4 > h {
            return None;
        }
        // At least 16 pixels a side, centred on the change, within the frame.
        let side = |lo: usize, len: usize, size: usize| {
            let want = (len + 8).max(16).min(size);
            let start = (lo + len / 2).saturating_sub(want / 2).min(size - want);
            (start, start + want)
        };
        let (cx0, cx1) = side(x0, bw, w);
        let (cy0, cy1) = side(y0, bh, h);
        let factor = (200 / (cx1 - cx0)).clamp(2, 16);
        let crops = [
            Canvas::from_rgb(w, h, a.to_vec()).crop(cx0, cy0, cx1, cy1),
            self.heat_canvas().crop(cx0, cy0, cx1, cy1),
            Canvas::from_rgb(w, h, b.to_vec()).crop(cx0, cy0, cx1, cy1),
        ];
        let views: Vec<Canvas> = crops.iter().map(|c| c.scaled_up(factor)).collect();
        let (vw, vh) = (views[0].width, views[0].height);
        let mut row = Canvas::new(3 * vw + 8, vh, BACK);
        for (i, view) in views.iter().enumerate() {
            row.blit(i * (vw + 4), 0, view);
        }
        let caption = format!("zoom x{factor}: x {cx0}..{}, y {cy0}..{} (A | difference | B)", cx1 - 1, cy1 - 1);
        Some(Zoom { picture: row, caption, area: [cx0, cy0, cx1 - 1, cy1 - 1] })
    }

    /// Writes the contact sheet, the heat GIF and `report.json`; says what they hold.
    pub fn finish(self, summary: &Summary) -> Result<Contents> {
        let mut contents = Contents { panels: self.panels.clone(), drawable: self.drawable, ..Contents::default() };
        contents.files = self.panels.iter().map(|p| self.shown_dir.join(format!("frame_{:04}.png", p.frame))).collect();
        let sheet = self.sheet.finish();
        contents.sheet = sheet.iter().map(|(f, _)| *f).collect();
        if !sheet.is_empty() {
            contact_sheet(&sheet, self.drawable, self.tolerance).write_png(&self.dir.join("contact.png"))?;
            contents.files.push(self.shown_dir.join("contact.png"));
        }
        if let (Some(first), Some(last)) = (self.first_differing, self.last_differing) {
            let mut frames = self.heat_frames.finish();
            frames.retain(|f| f.frame <= last && !f.indices.is_empty());
            if !frames.is_empty() {
                let shrink = self.heat_shrink;
                let size = (self.width.div_ceil(shrink), self.height.div_ceil(shrink));
                write_heat_gif(&self.dir.join("heat.gif"), size, &frames, self.tolerance)?;
                let last_shown = frames.last().map_or(first, |f| f.frame);
                contents.heat = Some(HeatGif { first, last: last_shown, frames: frames.len(), shrink });
                contents.files.push(self.shown_dir.join("heat.gif"));
            }
        }
        write_json(&self.dir, summary, Some(&contents))?;
        contents.files.push(self.shown_dir.join("report.json"));
        Ok(contents)
    }
}

/// "frame 12: 340 pixels differ (max delta 255, PSNR 31.2 dB)".
fn frame_title(c: &Compared<'_>) -> String {
    let r = c.result;
    let mut title = format!("frame {}", r.frame);
    if let Some(n) = r.differing_pixels {
        let noun = if n == 1 { "pixel differs" } else { "pixels differ" };
        title += &format!(": {n} {noun} (max delta {}", r.max_delta.unwrap_or(0));
        if let Some(p) = r.psnr {
            title += &format!(", PSNR {p:.1} dB");
        }
        title.push(')');
    }
    if r.delay_differs {
        let shown = |d: Option<crate::decode::frames::Delay>| d.map_or_else(|| "none".to_string(), |d| d.to_string());
        title += &format!("; delay {} in A, {} in B", shown(r.delays.0), shown(r.delays.1));
    }
    title
}

/// The heat map's key: grey for pixels within the tolerance, then the ramp from the smallest
/// difference counted to 255.
fn legend(tolerance: u8) -> Canvas {
    let ramp = 192;
    let lead = "difference per channel:";
    let x_ramp = draw::text_width(lead) + 8 + 14 + draw::text_width(" same ") + 8;
    let mut c = Canvas::new(x_ramp + ramp + 8 * CHAR, 2 * LINE + 2, BACK);
    c.text(0, 2, lead, INK, None);
    let x = draw::text_width(lead) + 8;
    c.fill(x, 1, 12, 10, [40, 40, 40]);
    c.outline(x, 1, x + 11, 10, GAP);
    c.text(x + 14, 2, " same", INK, None);
    for i in 0..ramp {
        let delta = (u32::from(tolerance) + 1 + i as u32 * (255 - u32::from(tolerance)) / ramp as u32).min(255) as u8;
        c.fill(x_ramp + i, 1, 1, 10, heat(&[0, 0, 0], delta, tolerance));
    }
    let low = format!("{}", u32::from(tolerance) + 1);
    c.text(x_ramp, LINE + 2, &low, INK, None);
    c.text(x_ramp + ramp - draw::text_width("255"), LINE + 2, "255", INK, None);
    c
}

/// Numbered heat-map thumbnails of the chosen frames, with a heading that says how many of the
/// differing frames they are.
fn contact_sheet(thumbs: &[(u64, Canvas)], drawable: u64, tolerance: u8) -> Canvas {
    let (tw, th) = (thumbs[0].1.width, thumbs[0].1.height);
    let label_width = thumbs.iter().map(|(f, _)| draw::text_width(&format!("frame {f}"))).max().unwrap_or(0);
    let cell = tw.max(label_width) + 4;
    let columns = thumbs.len().min(8);
    let rows = thumbs.len().div_ceil(columns);
    let heading = if thumbs.len() as u64 == drawable {
        format!("heat maps of all {drawable} differing frames")
    } else {
        format!("heat maps of {} of {drawable} differing frames, chosen evenly", thumbs.len())
    };
    let legend = legend(tolerance);
    let width = (columns * cell + 4).max(draw::text_width(&heading) + 8).max(legend.width + 8);
    let top = 4 + LINE + 2;
    let height = top + rows * (th + LINE + 4) + legend.height + 8;
    let mut sheet = Canvas::new(width, height, BACK);
    sheet.text(4, 4, &heading, INK, None);
    for (n, (frame, thumb)) in thumbs.iter().enumerate() {
        let (x, y) = (4 + (n % columns) * cell, top + (n / columns) * (th + LINE + 4));
        sheet.blit(x, y, thumb);
        sheet.text(x, y + th + 2, &format!("frame {frame}"), INK, None);
    }
    sheet.blit(4, top + rows * (th + LINE + 4) + 4, &legend);
    sheet
}

/// The heat GIF: each frame numbered in its corner, lasting as long as the frames it stands for.
fn write_heat_gif(path: &Path, (width, height): (usize, usize), frames: &[HeatFrame], tolerance: u8) -> Result<()> {
    let file = File::create(path).map_err(io(path))?;
    let encode = |e: gif::EncodingError| match e {
        gif::EncodingError::Io(source) => Error::io(path, source),
        other => Error::Encode(other.to_string()),
    };
    let mut encoder = gif::Encoder::new(BufWriter::new(file), width as u16, height as u16, &heat_palette(tolerance))
        .map_err(encode)?;
    encoder.set_repeat(gif::Repeat::Infinite).map_err(encode)?;
    for (i, f) in frames.iter().enumerate() {
        let mut indices = f.indices.clone();
        let label = format!("frame {}", f.frame);
        let (lw, lh) = (draw::text_width(&label) + 2, CHAR + 2);
        for y in 0..lh.min(height) {
            for x in 0..lw.min(width) {
                indices[y * width + x] = 0;
            }
        }
        for (dx, dy) in draw::text_pixels(&label) {
            if 1 + dx < width && 1 + dy < height {
                indices[(1 + dy) * width + 1 + dx] = 255;
            }
        }
        // A frame stands for every frame up to the next one shown.
        let span = frames.get(i + 1).map_or(1, |next| next.frame - f.frame);
        let delay = (u64::from(f.delay) * span).min(u64::from(u16::MAX)) as u16;
        let frame = gif::Frame {
            width: width as u16,
            height: height as u16,
            delay,
            buffer: std::borrow::Cow::Owned(indices),
            ..gif::Frame::default()
        };
        encoder.write_frame(&frame).map_err(encode)?;
    }
    encoder.into_inner().map_err(encode)?;
    Ok(())
}

impl Canvas {
    /// Writes the canvas as an 8-bit RGB PNG.
    fn write_png(&self, path: &Path) -> Result<()> {
        let file = File::create(path).map_err(io(path))?;
        let pixels: Vec<[u8; 3]> = self.rgb.chunks_exact(3).map(|p| [p[0], p[1], p[2]]).collect();
        write_png(BufWriter::new(file), self.width as u32, self.height as u32, &pixels, None)
            .map_err(|e| e.writing(Target::Path(path.to_path_buf())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heat_marks_only_differences_beyond_tolerance() {
        assert_eq!(heat(&[200, 200, 200], 3, 3), [50, 50, 50]);
        assert_eq!(heat(&[200, 200, 200], 4, 3)[0], 255);
        assert_eq!(heat(&[0, 0, 0], 255, 0), [255, 255, 254]);
        assert_eq!(heat_palette(0).len(), 256 * 3);
    }

    #[test]
    fn a_sample_is_even_and_bounded() {
        let mut sample = Sample::new(40);
        for i in 0..1998u64 {
            sample.offer(|| i);
        }
        let kept = sample.finish();
        assert_eq!(kept.len(), 40);
        assert_eq!(kept[0], 0);
        // Evenly spread: the gaps differ by at most a factor of two, and the sample reaches the
        // last quarter of the stream.
        let gaps: Vec<u64> = kept.windows(2).map(|w| w[1] - w[0]).collect();
        let (lo, hi) = (gaps.iter().min().unwrap(), gaps.iter().max().unwrap());
        assert!(hi <= &(2 * lo), "{gaps:?}");
        assert!(*kept.last().unwrap() >= 1500, "{kept:?}");
        let mut few = Sample::new(40);
        for i in 0..7u64 {
            few.offer(|| i);
        }
        assert_eq!(few.finish(), (0..7).collect::<Vec<_>>());
    }
}
