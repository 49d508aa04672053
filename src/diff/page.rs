//! The report page people open: one self-contained `index.html` (its style and script inline,
//! nothing fetched from the network) beside the pictures it shows, for one `diff` or every
//! scene of a `check`.
//!
//! Failures come first. Each differing pair shows its first differing frame as reference (A) |
//! heat map | new (B) side by side, or as a slider over the two, or blinking between them; a
//! scrubber moves over the pictures kept of the differing stretch (at most [`SHOTS`], evenly
//! chosen, the first differing frame always among them); a plot gives every frame's count of
//! differing pixels, and a click on it moves the scrubber. Passing pairs take one line each.
//!
//! Pictures are named `sNN-fNNNN-a.png`, `-b.png` and `-heat.png` (pair, frame, side), names
//! a report folder may hold ([`crate::output::is_report_name`]).

use std::fmt::Write as _;
use std::path::Path;

use super::report::{Sample, heat};
use crate::base::error::{Error, Result};
use crate::encode::png::write_png;
use crate::encode::reduce::shrink;

/// Pictures kept of a differing stretch at most.
pub const SHOTS: usize = 30;

/// Pictures narrower than this are shown enlarged (pixelated), to a whole multiple.
const SHOW_MIN: u32 = 240;

/// Frames wider than this are shrunk for the page (the diff's panels keep the detail).
pub const PAGE_WIDTH: u32 = 640;

/// One frame's pictures, as PNG bytes.
pub struct Shot {
    /// The frame number.
    pub frame: u64,
    /// Side A (the reference), B (the new render) and the heat map between them.
    pub a: Vec<u8>,
    /// Side B.
    pub b: Vec<u8>,
    /// The heat map.
    pub heat: Vec<u8>,
}

/// Keeps pictures of the differing stretch of a pair as its frames are compared: from the first
/// differing frame on, an even sample of at most [`SHOTS`], none after the last differing.
pub struct Stretch {
    width: u32,
    height: u32,
    /// Frames are shrunk this many times (each pixel the mean of a block) for the pictures.
    scale: u32,
    tolerance: u8,
    sample: Sample<Shot>,
    first: Option<u64>,
    last: Option<u64>,
}

impl Stretch {
    /// Pictures of `width`×`height` frames; the heat map marks channels beyond `tolerance`.
    pub fn new((width, height): (u32, u32), tolerance: u8) -> Stretch {
        Stretch { width, height, scale: 1, tolerance, sample: Sample::new(SHOTS), first: None, last: None }
    }

    /// The same, with frames wider than `most` shrunk (by a whole factor) for the pictures.
    pub fn shrunk_to(mut self, most: u32) -> Stretch {
        self.scale = self.width.div_ceil(most.max(1)).max(1);
        self
    }

    /// The pictures' size.
    pub fn size(&self) -> (u32, u32) {
        (self.width.div_ceil(self.scale), self.height.div_ceil(self.scale))
    }

    /// Takes a compared frame: `a` and `b` are its RGB bytes, `differs` the verdict.
    pub fn observe(&mut self, frame: u64, differs: bool, a: &[u8], b: &[u8]) -> Result<()> {
        let size = self.width as usize * self.height as usize * 3;
        if a.len() != size || b.len() != size {
            return Ok(());
        }
        if differs {
            self.first.get_or_insert(frame);
            self.last = Some(frame);
        }
        if self.first.is_none() {
            return Ok(());
        }
        // The first differing frame is always kept: it is the first the sample is offered.
        if !self.sample.wants_next() {
            self.sample.skip();
            return Ok(());
        }
        let (w, h) = self.size();
        let small = |rgb: &[u8]| -> Vec<u8> {
            let pixels: Vec<[u8; 3]> = rgb.chunks_exact(3).map(|p| [p[0], p[1], p[2]]).collect();
            let mut out = Vec::new();
            shrink(&pixels, self.width as usize, self.scale as usize, &mut out);
            out.into_iter().flatten().collect()
        };
        let (a, b) = if self.scale > 1 { (small(a), small(b)) } else { (a.to_vec(), b.to_vec()) };
        let (a, b) = (a.as_slice(), b.as_slice());
        let picture = |rgb: &[u8]| -> Result<Vec<u8>> {
            let pixels: Vec<[u8; 3]> = rgb.chunks_exact(3).map(|p| [p[0], p[1], p[2]]).collect();
            let mut png = Vec::new();
            write_png(&mut png, w, h, &pixels, None)?;
            Ok(png)
        };
        let heat_map: Vec<u8> = a
            .chunks_exact(3)
            .zip(b.chunks_exact(3))
            .flat_map(|(pa, pb)| {
                let delta = pa[0].abs_diff(pb[0]).max(pa[1].abs_diff(pb[1])).max(pa[2].abs_diff(pb[2]));
                heat(pa, delta, self.tolerance)
            })
            .collect();
        let shot = Shot { frame, a: picture(a)?, b: picture(b)?, heat: picture(&heat_map)? };
        self.sample.offer(|| shot);
        Ok(())
    }

    /// The pictures kept, in frame order, none after the last differing frame.
    pub fn finish(self) -> Vec<Shot> {
        let last = self.last.unwrap_or(0);
        self.sample.finish().into_iter().filter(|s| s.frame <= last).collect()
    }
}

/// How a pair came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// The same within the options.
    Same,
    /// Different.
    Different,
    /// A scene without a reference.
    Missing,
    /// A scene whose reference cannot be used.
    Unreadable,
}

/// One frame of a pair on the page: whether it differs, and how many pixels do where they were
/// counted (in the pictures compared). Kept in a shard's record as the pair `[differs, pixels]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(from = "(bool, Option<u64>)", into = "(bool, Option<u64>)")]
pub struct FrameFigure {
    /// Whether the frame counts as a difference.
    pub differs: bool,
    /// Its differing pixels, where counted.
    pub pixels: Option<u64>,
}

impl From<(bool, Option<u64>)> for FrameFigure {
    fn from((differs, pixels): (bool, Option<u64>)) -> FrameFigure {
        FrameFigure { differs, pixels }
    }
}

impl From<FrameFigure> for (bool, Option<u64>) {
    fn from(f: FrameFigure) -> (bool, Option<u64>) {
        (f.differs, f.pixels)
    }
}

/// One pair on the page.
pub struct Entry {
    /// What was compared: a scene's path, or the two sides'.
    pub name: String,
    /// How it came out.
    pub status: Status,
    /// The verdict in a line.
    pub line: String,
    /// What the two sides are called ("reference", "new"; or A's and B's paths).
    pub labels: (String, String),
    /// The pictures' size.
    pub size: (u32, u32),
    /// Per frame: whether it differs, and its differing pixels where counted.
    pub frames: Vec<FrameFigure>,
    /// Pictures of the differing stretch.
    pub shots: Vec<Shot>,
    /// A command that accepts this pair's change, shown under its verdict.
    pub accept: Option<String>,
}

/// Where the page's pictures are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pictures {
    /// Files beside the page, by [`picture_name`].
    Beside,
    /// Inside the page, as `data:` URIs.
    Inside,
}

/// Escapes text for HTML.
fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Writes `index.html` and the entries' pictures into `dir`: `title` heads the page and
/// `summary` says the verdict over all entries.
pub fn write(dir: &Path, title: &str, summary: &str, failed: bool, entries: &[Entry]) -> Result<()> {
    for (n, entry) in entries.iter().enumerate().filter(|(_, e)| e.status != Status::Same) {
        for shot in &entry.shots {
            for (side, bytes) in [("a", &shot.a), ("b", &shot.b), ("heat", &shot.heat)] {
                let path = dir.join(picture_name(n, shot.frame, side));
                std::fs::write(&path, bytes).map_err(|e| Error::io(&path, e))?;
            }
        }
    }
    let path = dir.join("index.html");
    let html = page(title, summary, failed, entries, Pictures::Beside);
    std::fs::write(&path, html).map_err(|e| Error::io(&path, e))
}

/// The page [`write()`] writes, as one self-contained file: every picture inside it as a
/// `data:` URI, the scripts looking each up by its file name.
pub fn single(title: &str, summary: &str, failed: bool, entries: &[Entry]) -> String {
    page(title, summary, failed, entries, Pictures::Inside)
}

/// The page's HTML, its pictures where `pictures` says.
fn page(title: &str, summary: &str, failed: bool, entries: &[Entry], pictures: Pictures) -> String {
    let mut html = String::new();
    let _ = write!(
        html,
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{}</title>\n\
         <style>{STYLE}</style>\n</head>\n<body>\n<h1>{}</h1>\n<p id=\"summary\" class=\"{}\">{}</p>\n",
        esc(title),
        esc(title),
        if failed { "failed" } else { "passed" },
        esc(summary)
    );
    let (failing, passing): (Vec<_>, Vec<_>) = entries.iter().enumerate().partition(|(_, e)| e.status != Status::Same);
    let mut inside = Vec::new();
    for (n, entry) in &failing {
        let src = |frame: u64, side: &str| match pictures {
            Pictures::Beside => picture_name(*n, frame, side),
            Pictures::Inside => data_uri(shot_bytes(entry, frame, side)),
        };
        section(&mut html, *n, entry, &src);
        if pictures == Pictures::Inside {
            for shot in &entry.shots {
                for side in ["a", "b", "heat"] {
                    inside.push(format!("\"{}\":\"{}\"", picture_name(*n, shot.frame, side), src(shot.frame, side)));
                }
            }
        }
    }
    if !passing.is_empty() {
        let _ = write!(html, "<section id=\"passed\">\n<h2>Passed ({})</h2>\n<ul>\n", passing.len());
        for (_, entry) in &passing {
            let _ = writeln!(html, "<li><code>{}</code>: {}</li>", esc(&entry.name), esc(&entry.line));
        }
        html.push_str("</ul>\n</section>\n");
    }
    if pictures == Pictures::Inside {
        // Names and base64 only: nothing in it can end the script element.
        let _ = writeln!(html, "<script type=\"application/json\" id=\"pictures\">{{{}}}</script>", inside.join(","));
    }
    let _ = write!(html, "<script>{SCRIPT}</script>\n</body>\n</html>\n");
    html
}

/// The PNG of `entry`'s picture of `frame` on `side`.
fn shot_bytes<'a>(entry: &'a Entry, frame: u64, side: &str) -> &'a [u8] {
    let Some(shot) = entry.shots.iter().find(|s| s.frame == frame) else { return &[] };
    match side {
        "a" => &shot.a,
        "b" => &shot.b,
        _ => &shot.heat,
    }
}

/// A PNG as a `data:` URI (standard base64, padded).
fn data_uri(png: &[u8]) -> String {
    const DIGITS: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(22 + png.len().div_ceil(3) * 4);
    out.push_str("data:image/png;base64,");
    for chunk in png.chunks(3) {
        let bits = chunk.iter().enumerate().fold(0u32, |acc, (i, &b)| acc | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(DIGITS[(bits >> (18 - 6 * i) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The file name of a picture of pair `n`, frame `frame`, side `side` (`a`, `b`, `heat`).
pub fn picture_name(n: usize, frame: u64, side: &str) -> String {
    format!("s{n:02}-f{frame:04}-{side}.png")
}

/// One differing pair: its verdict, the viewer over its pictures (each picture's address from
/// `src`), the scrubber and the plot.
fn section(html: &mut String, n: usize, entry: &Entry, src: &dyn Fn(u64, &str) -> String) {
    let badge = match entry.status {
        Status::Missing => "no reference",
        Status::Unreadable => "reference unusable",
        _ => "different",
    };
    let (w, h) = entry.size;
    let zoom = if w == 0 { 1 } else { SHOW_MIN.div_ceil(w).max(1) };
    let (show_w, show_h) = (w * zoom, h * zoom);
    let _ = write!(
        html,
        "<section class=\"pair failed\" id=\"pair{n}\" data-n=\"{n:02}\" data-total=\"{}\" data-la=\"{}\" \
         data-lb=\"{}\">\n<h2><span class=\"badge\">{badge}</span> <code>{}</code></h2>\n<p class=\"verdict\">{}</p>\n",
        entry.frames.len(),
        esc(&entry.labels.0),
        esc(&entry.labels.1),
        esc(&entry.name),
        esc(&entry.line)
    );
    if let Some(command) = &entry.accept {
        let _ = writeln!(html, "<p class=\"accept\">accept this change: <code>{}</code></p>", esc(command));
    }
    let Some(first) = entry.shots.first() else {
        html.push_str("</section>\n");
        return;
    };
    let (la, lb) = (esc(&entry.labels.0), esc(&entry.labels.1));
    let img = |class: &str, side: &str| {
        format!(
            "<img class=\"{class}\" src=\"{}\" width=\"{show_w}\" height=\"{show_h}\" alt=\"{side} of frame {}\">",
            src(first.frame, side),
            first.frame
        )
    };
    let _ = write!(
        html,
        "<div class=\"modes\" role=\"group\" aria-label=\"how to compare\">\
         <button type=\"button\" data-mode=\"side\" class=\"on\">side by side</button>\
         <button type=\"button\" data-mode=\"slider\">slider</button>\
         <button type=\"button\" data-mode=\"blink\">blink</button></div>\n\
         <div class=\"view\" data-mode=\"side\">\n\
         <div class=\"side\"><figure><figcaption>{la}</figcaption>{}</figure>\
         <figure><figcaption>difference</figcaption>{}</figure>\
         <figure><figcaption>{lb}</figcaption>{}</figure></div>\n\
         <div class=\"slider\"><div class=\"stack\" style=\"width:{show_w}px;height:{show_h}px\">{}\
         <div class=\"clip\" style=\"width:50%\">{}</div></div>\
         <label>{la} | {lb} <input type=\"range\" class=\"split\" min=\"0\" max=\"100\" value=\"50\"></label></div>\n\
         <div class=\"blink\"><figure><figcaption class=\"showing\">{la}</figcaption>{}</figure></div>\n</div>\n",
        img("a", "a"),
        img("heat", "heat"),
        img("b", "b"),
        img("b", "b"),
        img("a", "a"),
        img("blinking", "a"),
    );
    let last = entry.shots.last().map_or(first.frame, |s| s.frame);
    let _ = writeln!(
        html,
        "<div class=\"scrub\"><label>frame <input type=\"range\" class=\"frame\" min=\"0\" max=\"{}\" value=\"0\"></label> \
         <output class=\"at\">frame {} (the first that differs)</output> <span class=\"span\">{} pictures of frames \
         {}–{}</span></div>",
        entry.shots.len() - 1,
        first.frame,
        entry.shots.len(),
        first.frame,
        last
    );
    plot(html, entry);
    let frames: Vec<String> = entry.shots.iter().map(|s| s.frame.to_string()).collect();
    let _ =
        write!(html, "<script type=\"application/json\" class=\"shots\">[{}]</script>\n</section>\n", frames.join(","));
}

/// The per-frame difference plot: a bar per frame, its height the share of differing pixels
/// (at least a sliver when the frame differs), the kept frames clickable.
fn plot(html: &mut String, entry: &Entry) {
    let count = entry.frames.len().max(1);
    let most = entry.frames.iter().filter_map(|f| f.pixels).max().unwrap_or(0).max(1);
    let (width, height) = (640.0, 80.0);
    let bar = width / count as f64;
    let _ = write!(
        html,
        "<figure class=\"plot\"><figcaption>differing pixels per frame (most: {most})</figcaption>\
         <svg viewBox=\"0 0 {width} {height}\" width=\"{width}\" height=\"{height}\" role=\"img\" \
         aria-label=\"differing pixels per frame\">"
    );
    for (i, &FrameFigure { differs, pixels }) in entry.frames.iter().enumerate() {
        if !differs {
            continue;
        }
        let share = pixels.map_or(1.0, |p| p as f64 / most as f64);
        let h = (share * (height - 4.0)).max(3.0);
        let _ = write!(
            html,
            "<rect class=\"bar\" data-frame=\"{i}\" x=\"{:.2}\" y=\"{:.2}\" width=\"{:.2}\" height=\"{h:.2}\">\
             <title>frame {i}: {}</title></rect>",
            i as f64 * bar,
            height - h,
            bar.max(1.0),
            pixels.map_or("differs".to_string(), |p| format!("{p} pixels differ"))
        );
    }
    html.push_str("<rect class=\"now\" x=\"0\" y=\"0\" width=\"1\" height=\"80\"></rect></svg></figure>\n");
}

const STYLE: &str = r#"
body { font: 15px/1.4 system-ui, sans-serif; margin: 1.5em; background: #1c1c1e; color: #eee; }
h1 { font-size: 1.4em; margin: 0 0 .3em; }
#summary.failed { color: #ff8a80; } #summary.passed { color: #9be79b; }
section.pair { border-top: 1px solid #444; padding: .6em 0 1.2em; }
h2 { font-size: 1.1em; margin: .3em 0; } code { font-size: .95em; }
.badge { background: #b3261e; color: #fff; border-radius: 4px; padding: 0 .4em; font-size: .85em; }
.modes button { background: #333; color: #eee; border: 1px solid #555; padding: .2em .7em; cursor: pointer; }
.modes button.on { background: #4a6fa5; }
.view > div { display: none; margin: .6em 0; } .view[data-mode=side] .side,
.view[data-mode=slider] .slider, .view[data-mode=blink] .blink { display: block; }
.side { white-space: nowrap; overflow-x: auto; } figure { display: inline-block; margin: 0 .6em .4em 0; vertical-align: top; }
figcaption { color: #bbb; font-size: .85em; } img { image-rendering: pixelated; background: #000; }
.stack { position: relative; } .stack > img, .clip { position: absolute; left: 0; top: 0; }
.clip { overflow: hidden; height: 100%; border-right: 2px solid #4fc3f7; } .clip img { display: block; }
.slider label { display: block; margin-top: .3em; } .split { width: 240px; vertical-align: middle; }
.scrub input { width: 320px; vertical-align: middle; } .span { color: #999; margin-left: .6em; }
.plot svg { background: #262628; max-width: 100%; height: auto; } .bar { fill: #ff7043; cursor: pointer; }
.now { fill: #4fc3f7; } .accept { color: #bbb; } .accept code { user-select: all; } #passed li { color: #9be79b; } #passed code { color: #eee; }
"#;

const SCRIPT: &str = r#"
(function () {
  function pad(v, n) { v = String(v); while (v.length < n) v = "0" + v; return v; }
  // A one-file page holds its pictures by name; a folder's page names its files.
  var held = document.getElementById("pictures"), inside = held ? JSON.parse(held.textContent) : null;
  document.querySelectorAll("section.pair").forEach(function (sec) {
    var data = sec.querySelector("script.shots");
    if (!data) return;
    var frames = JSON.parse(data.textContent), n = sec.dataset.n, at = 0, showingB = false;
    var view = sec.querySelector(".view"), scrub = sec.querySelector("input.frame");
    var out = sec.querySelector("output.at"), now = sec.querySelector("rect.now");
    function src(side) {
      var name = "s" + n + "-f" + pad(frames[at], 4) + "-" + side + ".png";
      return inside ? inside[name] : name;
    }
    function show(i) {
      at = Math.max(0, Math.min(frames.length - 1, i));
      scrub.value = at;
      sec.querySelectorAll("img.a").forEach(function (im) { im.src = src("a"); });
      sec.querySelectorAll("img.b").forEach(function (im) { im.src = src("b"); });
      sec.querySelectorAll("img.heat").forEach(function (im) { im.src = src("heat"); });
      sec.querySelector("img.blinking").src = src(showingB ? "b" : "a");
      out.textContent = "frame " + frames[at] + (at === 0 ? " (the first that differs)" : "");
      sec.dataset.frame = frames[at];
      var w = 640 / Math.max(1, Number(sec.dataset.total || 1));
      now.setAttribute("x", (frames[at] * w).toFixed(2));
      now.setAttribute("width", Math.max(1, w).toFixed(2));
    }
    sec.querySelectorAll(".modes button").forEach(function (b) {
      b.addEventListener("click", function () {
        sec.querySelectorAll(".modes button").forEach(function (o) { o.classList.toggle("on", o === b); });
        view.dataset.mode = b.dataset.mode;
      });
    });
    sec.querySelector("input.split").addEventListener("input", function (e) {
      sec.querySelector(".clip").style.width = e.target.value + "%";
    });
    setInterval(function () {
      if (view.dataset.mode !== "blink") return;
      showingB = !showingB;
      sec.querySelector("img.blinking").src = src(showingB ? "b" : "a");
      sec.querySelector(".blink .showing").textContent = showingB ? sec.dataset.lb : sec.dataset.la;
    }, 600);
    scrub.addEventListener("input", function () { show(Number(scrub.value)); });
    sec.querySelectorAll("rect.bar").forEach(function (r) {
      r.addEventListener("click", function () {
        var f = Number(r.dataset.frame), best = 0;
        frames.forEach(function (g, i) { if (Math.abs(g - f) < Math.abs(frames[best] - f)) best = i; });
        show(best);
      });
    });
    // A link may open a given picture of every pair, in a given mode:
    // index.html#picture=3&mode=slider.
    var asked = /picture=(\d+)/.exec(location.hash), mode = /mode=(side|slider|blink)/.exec(location.hash);
    if (mode) sec.querySelector('.modes button[data-mode="' + mode[1] + '"]').click();
    show(asked ? Number(asked[1]) : 0);
  });
  document.body.dataset.ready = "yes";
  window.addEventListener("load", function () {
    var all = document.querySelectorAll("img"), loaded = 0;
    all.forEach(function (im) { if (im.complete && im.naturalWidth > 0) loaded++; });
    document.body.dataset.images = loaded + "/" + all.length;
  });
})();
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pictures_are_named_as_a_report_folder_allows() {
        for side in ["a", "b", "heat"] {
            assert!(crate::output::is_report_name(&picture_name(3, 30, side)));
        }
        assert!(crate::output::is_report_name("index.html"));
    }

    #[test]
    fn pictures_inside_are_base64_as_rfc_4648_gives_it() {
        // RFC 4648 section 10's vectors.
        for (raw, coded) in
            [("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("foobar", "Zm9vYmFy")]
        {
            assert_eq!(data_uri(raw.as_bytes()), format!("data:image/png;base64,{coded}"));
        }
        assert_eq!(data_uri(&[0xfb, 0xff]), "data:image/png;base64,+/8=");
    }

    #[test]
    fn text_is_escaped() {
        assert_eq!(esc("<a href=\"x\">&'"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
    }
}
