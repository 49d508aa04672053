//! Ground truth (`--ground-truth DIR`): per output frame, what the frame was drawn from, exactly:
//! the heights (as the look sees them, and the water's own buffer), the backward warp every pixel
//! was sampled at, the slopes the light used, and the frame itself; once per sequence the clean
//! picture and `meta.json`. A stage beside the encoder: it plays the scene through the same
//! [`Player`] (timeline, water, heights to draw, look) and writes NumPy files ([`npy`]), optical
//! flow ([`flow`]) and the description (`meta`). docs/research.md is the guide.

pub mod arrays;
pub mod dataset;
pub mod flow;
mod meta;
pub mod npy;

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use npy::{Array, Dtype};
use std::io::Write;

use xxhash_rust::xxh3::{Xxh3, xxh3_64};

use crate::base::error::{Error, Result};
use crate::draw::fields::Fields;
use crate::render::Inputs;
use crate::render::player::{Cells, Player};
use crate::scene::{Sampling, Scene};

/// How a ground truth's files are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Layout {
    /// Ours: `height/`, `height_raw/`, `warp/`, `normal/`, `frame/`, one file a frame each,
    /// numbered from 0, the values' own types.
    #[default]
    Ours,
    /// FSRN's (Thapa et al., CVPR 2020): `depth/N.npy` (heights, float64), `warp/N_warp.npy`
    /// (the backward flow as H×2W float64: x beside y), `RGB/N.png`, numbered from 1.
    Fsrn,
}

impl Layout {
    /// The names `--ground-truth-layout` takes.
    pub const NAMES: [&'static str; 2] = ["ours", "fsrn"];

    /// The layout called `name`.
    pub fn from_name(name: &str) -> Option<Layout> {
        match name {
            "ours" => Some(Layout::Ours),
            "fsrn" => Some(Layout::Fsrn),
            _ => None,
        }
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            Layout::Ours => "ours",
            Layout::Fsrn => "fsrn",
        }
    }
}

/// What a ground truth holds beyond its layout's files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Extras {
    /// `sequence.npz`: the per-frame arrays stacked, one member each.
    pub npz: bool,
    /// `flow/N.flo`: Middlebury optical flow.
    pub flo: bool,
    /// `flow_kitti/N.png`: KITTI optical flow with its valid mask.
    pub kitti: bool,
}

impl Extras {
    /// The names `--ground-truth-extras` takes.
    pub const NAMES: [&'static str; 3] = ["npz", "flo", "kitti"];

    /// Adds the extra called `name`; false if there is none.
    pub fn add(&mut self, name: &str) -> bool {
        match name {
            "npz" => self.npz = true,
            "flo" => self.flo = true,
            "kitti" => self.kitti = true,
            _ => return false,
        }
        true
    }
}

/// What to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Truth {
    /// The layout.
    pub layout: Layout,
    /// The extras.
    pub extras: Extras,
}

/// What was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// Output frames.
    pub frames: u64,
    /// Every file, its path within the folder, size and XXH3-64, in the order written.
    pub files: Vec<(String, u64, u64)>,
}

impl Written {
    /// Bytes in all.
    pub fn bytes(&self) -> u64 {
        self.files.iter().map(|f| f.1).sum()
    }
}

/// Bytes a ground truth of `scene` holds while it is written: its own player (the water, a
/// frame, the backdrop), the fields (slopes, positions), an array being written and a frame's
/// PNG, per pixel.
pub fn bytes_for(scene: &Scene) -> u64 {
    let cells = u64::from(scene.width) * u64::from(scene.height);
    cells * (crate::sim::water::bytes_per_cell(scene.water.model) + 64)
}

/// The list of files and their hashes a ground truth ends with, so that a later run can tell a
/// whole one from a broken one: `SUMS`, one line each, `xxh3 bytes path`.
pub const SUMS: &str = "sums.txt";

/// Writes the ground truth of `scene` (read from `text`) over `inputs` into the folder `dir`,
/// which exists and is empty (the caller stages it), stepping and drawing on `threads`.
/// Stops with [`Error::Interrupted`] once `stop` is set.
pub fn write(
    scene: &Scene,
    text: &str,
    inputs: &Inputs,
    dir: &Path,
    truth: Truth,
    threads: usize,
    stop: &AtomicBool,
) -> Result<Written> {
    let mut out = Folder { dir: dir.to_path_buf(), files: Vec::new(), words: Vec::new() };
    let (w, h) = (scene.width as usize, scene.height as usize);
    let digits = crate::encode::png::digits(scene.frames).max(5);
    let kinds = kinds(truth.layout, digits);
    for kind in &kinds {
        out.folder(kind.folder)?;
    }
    if truth.extras.flo {
        out.folder("flow")?;
    }
    if truth.extras.kitti {
        out.folder("flow_kitti")?;
    }
    let clean = &inputs.background.pixels;
    out.png("clean.png", w, h, clean)?;
    out.array("clean.npy", &Array { dtype: Dtype::U8, shape: vec![h, w, 3], data: clean.as_flattened().to_vec() })?;
    if let Some(walls) = inputs.shore.walls() {
        let data = (0..w * h).map(|i| u8::from(walls.contains(i))).collect();
        out.array("walls.npy", &Array { dtype: Dtype::U8, shape: vec![h, w], data })?;
    }
    let layout = truth.layout;
    let frames = play(scene, inputs, threads, stop, |i, frame| {
        let number = if layout == Layout::Fsrn { i + 1 } else { i };
        let name = format!("{number:0digits$}");
        for kind in &kinds {
            out.frame_file(&kind.path(&name), kind.holds, frame, scene)?;
        }
        out.flows(truth.extras, &name, frame.fields, (w, h), frame.wrap)
    })?;
    if truth.extras.npz {
        out.npz(&kinds, scene, truth.layout, digits)?;
    }
    let doc = meta_of(scene, text, inputs, truth);
    let mut json = serde_json::to_string_pretty(&doc).map_err(|e| Error::Encode(e.to_string()))?;
    json.push('\n');
    out.bytes("meta.json", json.as_bytes())?;
    let sums: String = out.files.iter().map(|(path, size, hash)| format!("{hash:016x} {size} {path}\n")).collect();
    std::fs::write(dir.join(SUMS), sums).map_err(|e| Error::io(dir.join(SUMS), e))?;
    Ok(Written { frames, files: out.files })
}

/// Plays `scene` over `inputs` on `threads`, handing `each` every output frame's number and
/// what it is drawn from; the writers of files and of arrays ([`arrays`]) are both this loop's.
/// Stops with [`Error::Interrupted`] once `stop` is set. Returns the frames played.
fn play(
    scene: &Scene,
    inputs: &Inputs,
    threads: usize,
    stop: &AtomicBool,
    mut each: impl FnMut(u64, &Frame<'_>) -> Result<()>,
) -> Result<u64> {
    let clean = &inputs.background.pixels;
    let (w, h) = (scene.width as usize, scene.height as usize);
    let mut player = Player::new(Cow::Borrowed(scene), inputs, Cow::Borrowed(clean), threads);
    let mut fields = Fields::default();
    let mut pixels = Vec::new();
    let wrap = [scene.shore.edges.wrap_x(), scene.shore.edges.wrap_y()];
    let mut frames = 0;
    while let Some(i) = player.advance() {
        if stop.load(Ordering::Relaxed) {
            return Err(Error::Interrupted);
        }
        player.fields(&mut fields);
        pixels.clear();
        pixels.extend_from_slice(player.draw());
        let [drawn, raw] = player.heights();
        each(i, &Frame { drawn, raw, fields: &fields, pixels: &pixels, w, h, wrap })?;
        frames += 1;
    }
    Ok(frames)
}

/// What `meta.json` holds for the ground truth of `scene` (read from `text`) over `inputs`,
/// written as `truth` says.
pub fn meta_of(scene: &Scene, text: &str, inputs: &Inputs, truth: Truth) -> serde_json::Value {
    let (w, h) = (scene.width as usize, scene.height as usize);
    let kinds = kinds(truth.layout, crate::encode::png::digits(scene.frames).max(5));
    let files =
        meta::Files { entries: kinds.iter().map(|k| k.describe(scene, w, h)).collect(), layout: truth.layout.name() };
    meta::meta(scene, text, inputs, &files)
}

/// A scene's text as `meta.json` records it: the text it was read from, then each `--set`
/// override on a line of its own after a comment that says so (they apply last).
pub fn recorded_text(mut text: String, overrides: &[String]) -> String {
    if !overrides.is_empty() {
        text.push_str("\n# --set, applied after the file:\n");
        for o in overrides {
            text.push_str(&format!("# --set {o}\n"));
        }
    }
    text
}

/// Whether the folder `dir` holds a whole ground truth: its `sums.txt` lists `meta.json`, and
/// every file it lists is there with its size and hash.
pub fn is_whole(dir: &Path) -> bool {
    let Ok(sums) = std::fs::read_to_string(dir.join(SUMS)) else { return false };
    let mut meta = false;
    for line in sums.lines() {
        let mut words = line.splitn(3, ' ');
        let (Some(hash), Some(size), Some(path)) = (words.next(), words.next(), words.next()) else { return false };
        let Ok(bytes) = std::fs::read(dir.join(path)) else { return false };
        if size.parse() != Ok(bytes.len() as u64) || hash != format!("{:016x}", xxh3_64(&bytes)) {
            return false;
        }
        meta |= path == "meta.json";
    }
    meta
}

/// What a kind of per-frame file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Holds {
    Heights,
    RawHeights,
    Warp,
    Normal,
    Frame,
    Depth,
    FsrnWarp,
}

/// A kind of per-frame file: its folder, and what comes after the frame's number.
struct Kind {
    folder: &'static str,
    suffix: &'static str,
    holds: Holds,
    digits: usize,
}

impl Kind {
    fn path(&self, name: &str) -> String {
        format!("{}/{name}{}", self.folder, self.suffix)
    }

    /// Its entry in `meta.json`: kind, path pattern, dtype, shape, what it holds.
    fn describe(
        &self,
        scene: &Scene,
        w: usize,
        h: usize,
    ) -> (&'static str, String, &'static str, Vec<serde_json::Value>, &'static str) {
        let pattern = format!("{}/{{frame:0{}}}{}", self.folder, self.digits, self.suffix);
        let holds = match self.holds {
            Holds::Heights => "the heights the frame was drawn from (after the look's smoothing)",
            Holds::RawHeights => "the water's own buffer (before the seam's crossfade and smoothing)",
            Holds::Warp => "the backward warp: where each pixel sampled the clean picture, [x, y] in pixels",
            Holds::Normal => "the slopes [dx, dy] the light used: the normal is (dx, dy, 2)",
            Holds::Frame => "the rendered frame, RGB PNG",
            Holds::Depth => "the heights the frame was drawn from, as float64 (FSRN's depth)",
            Holds::FsrnWarp => "the backward flow [u | v] side by side, in pixels (FSRN's warp)",
        };
        let (dtype, shape) = self.array(scene, w, h);
        (self.name(), pattern, dtype.name(), shape.into_iter().map(serde_json::Value::from).collect(), holds)
    }

    /// The type and shape of each file of this kind (a frame's PNG: its pixels').
    fn array(&self, scene: &Scene, w: usize, h: usize) -> (Dtype, Vec<usize>) {
        let wide = scene.water.model == crate::scene::Model::Spring;
        match self.holds {
            Holds::Heights | Holds::RawHeights => (if wide { Dtype::I32 } else { Dtype::I16 }, vec![h, w]),
            Holds::Warp if scene.look.sampling == Sampling::Bilinear => (Dtype::F32, vec![h, w, 2]),
            Holds::Warp => (Dtype::I32, vec![h, w, 2]),
            Holds::Normal => (if wide { Dtype::I64 } else { Dtype::I32 }, vec![h, w, 2]),
            Holds::Frame => (Dtype::U8, vec![h, w, 3]),
            Holds::Depth => (Dtype::F64, vec![h, w]),
            Holds::FsrnWarp => (Dtype::F64, vec![h, 2 * w]),
        }
    }

    /// What it holds, by name: `meta.json`'s kind and the member name in `sequence.npz`.
    fn name(&self) -> &'static str {
        match self.holds {
            Holds::Heights | Holds::Depth => "height",
            Holds::RawHeights => "height_raw",
            Holds::Warp | Holds::FsrnWarp => "warp",
            Holds::Normal => "normal",
            Holds::Frame => "frame",
        }
    }
}

/// The per-frame files of `layout`.
fn kinds(layout: Layout, digits: usize) -> Vec<Kind> {
    let kind = |folder, suffix, holds| Kind { folder, suffix, holds, digits };
    match layout {
        Layout::Ours => vec![
            kind("height", ".npy", Holds::Heights),
            kind("height_raw", ".npy", Holds::RawHeights),
            kind("warp", ".npy", Holds::Warp),
            kind("normal", ".npy", Holds::Normal),
            kind("frame", ".png", Holds::Frame),
        ],
        Layout::Fsrn => vec![
            kind("depth", ".npy", Holds::Depth),
            kind("warp", "_warp.npy", Holds::FsrnWarp),
            kind("RGB", ".png", Holds::Frame),
        ],
    }
}

/// What a frame's files are made from.
struct Frame<'a> {
    drawn: Cells<'a>,
    raw: Cells<'a>,
    fields: &'a Fields,
    pixels: &'a [[u8; 3]],
    w: usize,
    h: usize,
    wrap: [bool; 2],
}

/// A height field's cells, widened to i64.
fn widened(cells: Cells<'_>) -> Box<dyn ExactSizeIterator<Item = i64> + '_> {
    if cells.wide {
        Box::new(cells.bytes.chunks_exact(4).map(|b| i64::from(i32::from_le_bytes([b[0], b[1], b[2], b[3]]))))
    } else {
        Box::new(cells.bytes.chunks_exact(2).map(|b| i64::from(i16::from_le_bytes([b[0], b[1]]))))
    }
}

/// The folder being written and what is in it.
struct Folder {
    dir: PathBuf,
    files: Vec<(String, u64, u64)>,
    /// An array's elements are made here (8-byte aligned, for any element type), frame after frame.
    words: Vec<u64>,
}

impl Folder {
    fn folder(&self, name: &str) -> Result<()> {
        let path = self.dir.join(name);
        std::fs::create_dir_all(&path).map_err(|e| Error::io(&path, e))
    }

    /// Notes a file written at `path` (within the folder).
    fn record(&mut self, path: &str) -> Result<()> {
        let full = self.dir.join(path);
        let bytes = std::fs::read(&full).map_err(|e| Error::io(&full, e))?;
        self.files.push((path.to_string(), bytes.len() as u64, xxh3_64(&bytes)));
        Ok(())
    }

    fn bytes(&mut self, path: &str, bytes: &[u8]) -> Result<()> {
        let full = self.dir.join(path);
        std::fs::write(&full, bytes).map_err(|e| Error::io(&full, e))?;
        self.files.push((path.to_string(), bytes.len() as u64, xxh3_64(bytes)));
        Ok(())
    }

    fn array(&mut self, path: &str, array: &Array) -> Result<()> {
        self.bytes(path, &array.to_npy())
    }

    /// A `.npy` of `dtype` (the type `T` is) and `shape`, its elements `values`.
    fn typed<T: bytemuck::Pod>(
        &mut self,
        path: &str,
        dtype: Dtype,
        shape: &[usize],
        values: impl Iterator<Item = T>,
    ) -> Result<()> {
        let n: usize = shape.iter().product();
        self.words.resize((n * std::mem::size_of::<T>()).div_ceil(8), 0);
        let body = &mut bytemuck::cast_slice_mut::<u64, T>(&mut self.words)[..n];
        for (slot, v) in body.iter_mut().zip(values) {
            *slot = v;
        }
        let body: &[u8] = bytemuck::cast_slice(body);
        let (dir, files) = (&self.dir, &mut self.files);
        write_npy(dir, files, path, dtype, shape, body)
    }

    /// A `.npy` of `dtype` and `shape` whose elements' bytes are `body`.
    fn write_npy(&mut self, path: &str, dtype: Dtype, shape: &[usize], body: &[u8]) -> Result<()> {
        write_npy(&self.dir, &mut self.files, path, dtype, shape, body)
    }

    /// A frame's flow files, as `extras` asks: `flow/NAME.flo`, `flow_kitti/NAME.png`.
    fn flows(
        &mut self,
        extras: Extras,
        name: &str,
        fields: &Fields,
        size: (usize, usize),
        wrap: [bool; 2],
    ) -> Result<()> {
        if !extras.flo && !extras.kitti {
            return Ok(());
        }
        let flow = flow::flow_q8(fields, size, wrap);
        if extras.flo {
            let path = format!("flow/{name}.flo");
            flow::write_flo(&self.dir.join(&path), &flow, size)?;
            self.record(&path)?;
        }
        if extras.kitti {
            let path = format!("flow_kitti/{name}.png");
            flow::write_kitti(&self.dir.join(&path), &flow, fields, size)?;
            self.record(&path)?;
        }
        Ok(())
    }

    /// One frame's file of the kind that `holds`.
    fn frame_file(&mut self, path: &str, holds: Holds, f: &Frame<'_>, scene: &Scene) -> Result<()> {
        let (w, h) = (f.w, f.h);
        // Flat slices, so that each conversion below is one simple loop.
        let positions = || f.fields.positions.as_flattened().iter().copied();
        let slopes = || f.fields.slopes.as_flattened().iter().copied();
        match holds {
            Holds::Heights | Holds::RawHeights => {
                let cells = if holds == Holds::Heights { f.drawn } else { f.raw };
                self.write_npy(path, if cells.wide { Dtype::I32 } else { Dtype::I16 }, &[h, w], cells.bytes)
            }
            Holds::Warp if scene.look.sampling == Sampling::Bilinear => {
                self.typed(path, Dtype::F32, &[h, w, 2], positions().map(|v| v as f32 / 256.0))
            }
            Holds::Warp => self.typed(path, Dtype::I32, &[h, w, 2], positions().map(|v| v >> 8)),
            Holds::Normal if f.drawn.wide => self.typed(path, Dtype::I64, &[h, w, 2], slopes()),
            Holds::Normal => self.typed(path, Dtype::I32, &[h, w, 2], slopes().map(|v| v as i32)),
            Holds::Frame => self.png(path, w, h, f.pixels),
            Holds::Depth => self.typed(path, Dtype::F64, &[h, w], widened(f.drawn).map(|v| v as f64)),
            Holds::FsrnWarp => {
                let flow = flow::flow_q8(f.fields, (w, h), f.wrap);
                let rows = flow.chunks_exact(w).flat_map(|row| {
                    row.iter().map(|v| f64::from(v[0]) / 256.0).chain(row.iter().map(|v| f64::from(v[1]) / 256.0))
                });
                self.typed(path, Dtype::F64, &[h, 2 * w], rows)
            }
        }
    }

    /// An RGB PNG, every row filtered by `Up` (a reader of a few lines decodes it), fast deflate.
    fn png(&mut self, path: &str, w: usize, h: usize, pixels: &[[u8; 3]]) -> Result<()> {
        let mut bytes = Vec::new();
        let mut encoder = png::Encoder::new(&mut bytes, w as u32, h as u32);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        encoder.set_deflate_compression(png::DeflateCompression::FdeflateUltraFast);
        encoder.set_filter(png::Filter::Up);
        let fail = |e: png::EncodingError| Error::Encode(e.to_string());
        let mut writer = encoder.write_header().map_err(fail)?;
        writer.write_image_data(pixels.as_flattened()).map_err(fail)?;
        writer.finish().map_err(fail)?;
        self.bytes(path, &bytes)
    }

    /// `sequence.npz`: each per-frame array kind stacked along a first axis of `frames`.
    fn npz(&mut self, kinds: &[Kind], scene: &Scene, layout: Layout, digits: usize) -> Result<()> {
        let (frames, w, h) = (scene.frames, scene.width as usize, scene.height as usize);
        let mut members = Vec::new();
        for kind in kinds.iter().filter(|k| k.holds != Holds::Frame) {
            let first = if layout == Layout::Fsrn { 1 } else { 0 };
            let parts: Vec<PathBuf> =
                (first..first + frames).map(|i| self.dir.join(kind.path(&format!("{i:0digits$}")))).collect();
            let (dtype, shape) = kind.array(scene, w, h);
            let mut stacked = vec![frames as usize];
            stacked.extend(shape);
            members.push((kind.name().to_string(), npy::header(dtype, &stacked), parts));
        }
        let path = self.dir.join("sequence.npz");
        npy::write_npz(&path, &members)?;
        self.record("sequence.npz")
    }
}

/// Writes `path` within `dir` as a `.npy` of `dtype` and `shape` whose elements' bytes are
/// `body`, and records it in `files`.
fn write_npy(
    dir: &Path,
    files: &mut Vec<(String, u64, u64)>,
    path: &str,
    dtype: Dtype,
    shape: &[usize],
    body: &[u8],
) -> Result<()> {
    let head = npy::header(dtype, shape);
    let full = dir.join(path);
    let mut file = std::fs::File::create(&full).map_err(|e| Error::io(&full, e))?;
    file.write_all(&head).and_then(|()| file.write_all(body)).map_err(|e| Error::io(&full, e))?;
    let mut hash = Xxh3::new();
    hash.update(&head);
    hash.update(body);
    files.push((path.to_string(), (head.len() + body.len()) as u64, hash.digest()));
    Ok(())
}
