//! A sequence's ground truth in memory: the arrays a training loop reads, made from the same
//! frames the files are written from (the one frame loop of [`super::write`]), so that the two cannot differ. Each
//! array is the file of ours (or the extras') that holds the same thing, in one type:
//!
//! | array        | element | per pixel | from                                                      |
//! |--------------|---------|-----------|-----------------------------------------------------------|
//! | `frames`     | u8      | 3         | `frame/N.png`                                             |
//! | `flow`       | f32     | 2         | `flow/N.flo`: position − pixel, in pixels ([`super::flow`]) |
//! | `warp`       | f32     | 2         | `warp/N.npy`: the position sampled (whole pixels unless bilinear) |
//! | `height`     | f32     | 1         | `height/N.npy`                                            |
//! | `height_raw` | f32     | 1         | `height_raw/N.npy`                                        |
//! | `normal`     | f32     | 3         | `normal/N.npy`'s `(dx, dy, 2)` divided by its length      |
//! | `valid`      | bool    | 1         | not a wall, and the sample did not leave the canvas       |
//!
//! A normal is worked out in f32, each operation rounded as IEEE 754 single precision rounds it
//! (`s = √(dx·dx + dy·dy + 4)`, then `dx/s`, `dy/s`, `2/s`), so any reader that does the same
//! gets the same bits.

use std::borrow::Cow;
use std::sync::atomic::AtomicBool;

use super::{Truth, play};
use crate::base::error::{Error, Result};
use crate::render::Inputs;
use crate::render::player::Player;
use crate::scene::{Sampling, Scene};

/// An element type of an array.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Element {
    /// One byte, 0..=255.
    U8,
    /// An IEEE 754 single.
    F32,
    /// One byte, 0 or 1.
    Bool,
}

impl Element {
    /// Its size in bytes.
    pub fn size(self) -> usize {
        match self {
            Element::U8 | Element::Bool => 1,
            Element::F32 => 4,
        }
    }

    /// Its NumPy name.
    pub fn name(self) -> &'static str {
        match self {
            Element::U8 => "uint8",
            Element::F32 => "float32",
            Element::Bool => "bool",
        }
    }
}

/// The per-frame arrays, in the order [`Arrays`] holds them: name, element, values per pixel.
pub const KINDS: [(&str, Element, usize); 7] = [
    ("frames", Element::U8, 3),
    ("flow", Element::F32, 2),
    ("warp", Element::F32, 2),
    ("height", Element::F32, 1),
    ("height_raw", Element::F32, 1),
    ("normal", Element::F32, 3),
    ("valid", Element::Bool, 1),
];

/// Bytes the arrays of a `frames` × `height` × `width` sequence hold, all kinds together.
pub fn bytes(frames: u64, height: u64, width: u64) -> u64 {
    let per_pixel: u64 = KINDS.iter().map(|(_, e, n)| (e.size() * n) as u64).sum();
    frames.saturating_mul(height).saturating_mul(width).saturating_mul(per_pixel)
}

/// Where the arrays of one sequence go, each `frames × height × width × values` long, row-major,
/// frame after frame (the kinds of [`KINDS`]).
pub struct Arrays<'a> {
    /// The frames, RGB.
    pub frames: &'a mut [u8],
    /// The backward flow `[u, v]` in pixels (along a wrapped axis, the difference nearest 0).
    pub flow: &'a mut [f32],
    /// The position each pixel was sampled at, `[x, y]` in pixels.
    pub warp: &'a mut [f32],
    /// The heights each frame was drawn from.
    pub height: &'a mut [f32],
    /// The water's own heights.
    pub height_raw: &'a mut [f32],
    /// Unit normals `[x, y, z]`.
    pub normal: &'a mut [f32],
    /// Whether the pixel's flow is known: not a wall, the sample within the canvas.
    pub valid: &'a mut [u8],
}

/// One sequence's arrays, owned.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sequence {
    /// Frames, height and width.
    pub shape: [usize; 3],
    /// The clean picture, `height × width × 3`.
    pub clean: Vec<u8>,
    /// See [`Arrays::frames`].
    pub frames: Vec<u8>,
    /// See [`Arrays::flow`].
    pub flow: Vec<f32>,
    /// See [`Arrays::warp`].
    pub warp: Vec<f32>,
    /// See [`Arrays::height`].
    pub height: Vec<f32>,
    /// See [`Arrays::height_raw`].
    pub height_raw: Vec<f32>,
    /// See [`Arrays::normal`].
    pub normal: Vec<f32>,
    /// See [`Arrays::valid`] (0 or 1).
    pub valid: Vec<u8>,
    /// What `meta.json` would hold.
    pub meta: serde_json::Value,
}

impl Sequence {
    /// The ground truth of `scene` (read from `text`) over `inputs`, described as `truth`'s
    /// layout would write it, on `threads`.
    pub fn compute(scene: &Scene, text: &str, inputs: &Inputs, truth: Truth, threads: usize) -> Result<Sequence> {
        let shape = shape(scene);
        let n = shape.iter().product::<usize>();
        let mut out = Sequence {
            shape,
            clean: inputs.background.pixels.as_flattened().to_vec(),
            frames: vec![0; 3 * n],
            flow: vec![0.0; 2 * n],
            warp: vec![0.0; 2 * n],
            height: vec![0.0; n],
            height_raw: vec![0.0; n],
            normal: vec![0.0; 3 * n],
            valid: vec![0; n],
            meta: super::meta_of(scene, text, inputs, truth),
        };
        let mut arrays = Arrays {
            frames: &mut out.frames,
            flow: &mut out.flow,
            warp: &mut out.warp,
            height: &mut out.height,
            height_raw: &mut out.height_raw,
            normal: &mut out.normal,
            valid: &mut out.valid,
        };
        fill(scene, inputs, &mut arrays, threads, &AtomicBool::new(false))?;
        Ok(out)
    }
}

/// Frames, height and width of `scene`'s arrays.
pub fn shape(scene: &Scene) -> [usize; 3] {
    [scene.frames as usize, scene.height as usize, scene.width as usize]
}

/// Fills `out` with the ground truth of `scene` over `inputs`, on `threads`; stops with
/// [`Error::Interrupted`] once `stop` is set. Refused (before a frame is made) when an array
/// is not the length `scene` needs.
pub fn fill(scene: &Scene, inputs: &Inputs, out: &mut Arrays<'_>, threads: usize, stop: &AtomicBool) -> Result<()> {
    let n = shape(scene).iter().product::<usize>();
    let lengths = [
        out.frames.len(),
        out.flow.len(),
        out.warp.len(),
        out.height.len(),
        out.height_raw.len(),
        out.normal.len(),
        out.valid.len(),
    ];
    for ((name, _, values), len) in KINDS.iter().zip(lengths) {
        if len != values * n {
            return Err(Error::Encode(format!("the {name} array holds {len} values, not {}", values * n)));
        }
    }
    let bilinear = scene.look.sampling == Sampling::Bilinear;
    play(scene, inputs, threads, stop, |i, frame| {
        let cells = frame.w * frame.h;
        let at = |values: usize| i as usize * cells * values..(i as usize + 1) * cells * values;
        out.frames[at(3)].copy_from_slice(frame.pixels.as_flattened());
        flows(frame, &mut out.flow[at(2)]);
        let positions = frame.fields.positions.as_flattened();
        let warp = &mut out.warp[at(2)];
        if bilinear {
            for (slot, &p) in warp.iter_mut().zip(positions) {
                *slot = p as f32 / 256.0;
            }
        } else {
            for (slot, &p) in warp.iter_mut().zip(positions) {
                *slot = (p >> 8) as f32;
            }
        }
        heights(frame.drawn, &mut out.height[at(1)]);
        heights(frame.raw, &mut out.height_raw[at(1)]);
        normals(&frame.fields.slopes, &mut out.normal[at(3)]);
        for (slot, &held) in out.valid[at(1)].iter_mut().zip(&frame.fields.held) {
            *slot = u8::from(!held);
        }
        Ok(())
    })
    .and_then(|played| every_frame(played, scene))
}

/// Refuses a play that made fewer frames than the arrays hold (every value of every array is
/// written, frame by frame: none is left as it was).
fn every_frame(played: u64, scene: &Scene) -> Result<()> {
    if played == scene.frames {
        return Ok(());
    }
    Err(Error::Encode(format!("the water played {played} frames of {}", scene.frames)))
}

/// Unit normals of `slopes`, into `out`: in f32, `s = √(dx·dx + dy·dy + 4)`, then `dx/s`,
/// `dy/s`, `2/s`, each operation rounded as IEEE 754 single precision rounds it.
fn normals(slopes: &[[i64; 2]], out: &mut [f32]) {
    // In blocks, so that the square roots and divisions run over plain arrays of f32 (four or
    // eight at once) and only the last loop writes the triples.
    const BLOCK: usize = 64;
    for (slopes, out) in slopes.chunks(BLOCK).zip(out.chunks_mut(3 * BLOCK)) {
        let (mut x, mut y, mut inv) = ([0f32; BLOCK], [0f32; BLOCK], [0f32; BLOCK]);
        for (k, &[dx, dy]) in slopes.iter().enumerate() {
            (x[k], y[k]) = (dx as f32, dy as f32);
        }
        for k in 0..BLOCK {
            inv[k] = (x[k] * x[k] + y[k] * y[k] + 4.0).sqrt();
        }
        for (k, n) in out.chunks_exact_mut(3).enumerate() {
            n[0] = x[k] / inv[k];
            n[1] = y[k] / inv[k];
            n[2] = 2.0 / inv[k];
        }
    }
}

/// A frame's heights as f32, into `out`.
fn heights(cells: super::Cells<'_>, out: &mut [f32]) {
    if cells.wide {
        for (slot, b) in out.iter_mut().zip(cells.bytes.chunks_exact(4)) {
            *slot = i32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f32;
        }
    } else {
        for (slot, b) in out.iter_mut().zip(cells.bytes.chunks_exact(2)) {
            *slot = f32::from(i16::from_le_bytes([b[0], b[1]]));
        }
    }
}

/// A frame's backward flow in pixels, into `out`: [`flow::flow_q8`] over 256, row by row.
fn flows(frame: &super::Frame<'_>, out: &mut [f32]) {
    let (w, h) = (frame.w, frame.h);
    let nearest = super::flow::nearest;
    // The pixel's own position, row by row, as [x, y] pairs in 1/256: what the flow subtracts.
    let own: Vec<i32> = (0..w).flat_map(|x| [256 * x as i32, 0]).collect();
    for y in 0..h {
        let row = frame.fields.positions[y * w..(y + 1) * w].as_flattened();
        let flow = &mut out[2 * y * w..2 * (y + 1) * w];
        let oy = 256 * y as i32;
        if frame.wrap == [false, false] {
            // A plain loop over flat slices of one length, which the compiler vectorizes.
            for ((slot, &p), &o) in flow.iter_mut().zip(row).zip(&own) {
                *slot = (p - o) as f32 / 256.0;
            }
            for slot in flow.iter_mut().skip(1).step_by(2) {
                *slot -= y as f32;
            }
            continue;
        }
        for (x, (slot, s)) in flow.chunks_exact_mut(2).zip(row.chunks_exact(2)).enumerate() {
            slot[0] = nearest(s[0] - 256 * x as i32, w, frame.wrap[0]) as f32 / 256.0;
            slot[1] = nearest(s[1] - oy, h, frame.wrap[1]) as f32 / 256.0;
        }
    }
}

/// Fills `frames` (`frames × height × width × 3`) with the frames of `scene` over `inputs`, as
/// a PNG sequence of it holds them, on `threads`.
pub fn frames(scene: &Scene, inputs: &Inputs, out: &mut [u8], threads: usize, stop: &AtomicBool) -> Result<()> {
    let n = shape(scene).iter().product::<usize>();
    if out.len() != 3 * n {
        return Err(Error::Encode(format!("the frames array holds {} values, not {}", out.len(), 3 * n)));
    }
    let background = &inputs.background.pixels;
    let mut player = Player::new(Cow::Borrowed(scene), inputs, Cow::Borrowed(background), threads);
    let cells = background.len() * 3;
    let mut played = 0;
    while let Some(i) = player.advance() {
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(Error::Interrupted);
        }
        let i = i as usize;
        out[i * cells..(i + 1) * cells].copy_from_slice(player.draw().as_flattened());
        played += 1;
    }
    every_frame(played, scene)
}

/// Refuses, before anything is allocated, arrays of `scene` over `budget` bytes (all
/// [`KINDS`], or the frames alone), with the water and the picture they are made from, or a
/// picture whose decode alone takes more than a quarter of it. `raise` says how to raise the
/// budget where the arrays are asked for (`--max-memory 2G`, `max_memory=...`).
pub fn check_memory(scene: &Scene, all: bool, budget: u64, raise: &dyn Fn(u64) -> String) -> Result<()> {
    use crate::base::units::show;
    // A picture over its decode budget, refused as a render refuses it (the scene's key, line
    // and column), from its header alone.
    let over = |path: &std::path::Path| {
        let header = crate::base::picture::probe(path).ok()?;
        let reason = crate::base::picture::check_within(&header, budget).err()?;
        Some((reason, header.decode_bytes()))
    };
    let refused = |located: Error, bytes: u64| Error::Budget {
        message: located.to_string(),
        hint: format!("{}, or use a smaller picture", raise(bytes.saturating_mul(4))),
    };
    if let Some(path) = &scene.background.image
        && let Some((reason, bytes)) = over(path)
    {
        return Err(refused(scene.background.locate(Error::Background { path: path.clone(), reason }), bytes));
    }
    if let Some(mask) = &scene.shore.mask
        && let Some((reason, bytes)) = over(&mask.image)
    {
        return Err(refused(crate::sim::shore::mask_error(mask, &reason), bytes));
    }
    let [t, h, w] = shape(scene).map(|n| n as u64);
    let arrays = if all { bytes(t, h, w) } else { t.saturating_mul(h).saturating_mul(w).saturating_mul(3) };
    let total = arrays.saturating_add(super::bytes_for(scene));
    if total <= budget {
        return Ok(());
    }
    Err(Error::Budget {
        message: format!(
            "the arrays of {t} frames of {w}×{h} take {} ({} with the water that makes them), over the memory budget of {}",
            show(arrays),
            show(total),
            show(budget)
        ),
        hint: format!("{}, or ask for fewer frames or a smaller canvas", raise(total)),
    })
}
