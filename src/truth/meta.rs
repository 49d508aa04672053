//! `meta.json`: a sequence's ground truth described so that it reads without the docs and can be
//! made again: the scene (text and hash), the build, the water and its stencil, every event with
//! its time, the look, the picture's hash, the files and their conventions, and the frame ↔ time
//! table.

use serde_json::{Value, json};

use crate::render::Inputs;
use crate::scene::{Clock, DropShape, Look, Model, Scene, Tone};
use crate::sim::timeline::{Event, Source, for_each_event};

/// What `meta.json` says about the files, beside the scene: each kind's path pattern, type and
/// shape.
pub struct Files {
    /// `(kind, path pattern, dtype, shape, what it holds)`.
    pub entries: Vec<(&'static str, String, &'static str, Vec<Value>, &'static str)>,
    /// The layout's name.
    pub layout: &'static str,
}

/// The document.
pub fn meta(scene: &Scene, text: &str, inputs: &Inputs, files: &Files) -> Value {
    let water = &scene.water;
    let r = water.refraction_q8;
    json!({
        "format": "ripple-render ground truth 1",
        "program": {
            "name": "ripple-render",
            "version": env!("CARGO_PKG_VERSION"),
            "commit": env!("RIPPLE_RENDER_COMMIT"),
        },
        "scene": {
            "file": scene.file.file_name().map(|n| n.to_string_lossy().into_owned()),
            "xxh3": format!("{:016x}", scene.source_hash),
            "text": text,
        },
        "picture": {
            "xxh3": format!("{:016x}", crate::encode::manifest::frame_hash(inputs.background.pixels.as_flattened())),
            "of": "the clean picture's RGB bytes as fitted to the canvas (clean.png), row-major",
        },
        "canvas": { "width": scene.width, "height": scene.height },
        "frames": scene.frames,
        "fps": scene.fps,
        "pre_roll_frames": scene.first_frame,
        "water": water_json(scene),
        "edges": {
            "left": scene.shore.edges.left.name(),
            "right": scene.shore.edges.right.name(),
            "top": scene.shore.edges.top.name(),
            "bottom": scene.shore.edges.bottom.name(),
        },
        "walls": inputs.shore.walls().map(|w| w.count()),
        "look": look_json(&scene.look),
        "events": events_json(scene),
        "rain": scene.rain.as_ref().map(|rain| json!({
            "drops_per_second": rain.drops_per_second,
            "radius": rain.radius,
            "weight": rain.weight,
            "first_unit": rain.first_unit,
            "end_unit": rain.end_unit,
            "seed": rain.seed,
            "generator": "ChaCha8 keyed by the seed's 8 little-endian bytes then zeros; ranges by Lemire's multiply-and-reject",
        })),
        "layout": files.layout,
        "files": files.entries.iter().map(|(kind, path, dtype, shape, what)| json!({
            "kind": kind, "path": path, "dtype": dtype, "shape": shape, "holds": what,
        })).collect::<Vec<_>>(),
        "conventions": {
            "axes": "arrays are row-major [y][x] (C order); a last axis of 2 is [x, y]; x grows right, y grows down; units are pixels and the model's integer height units",
            "slopes": "dx = h(x-1, y) - h(x+1, y), dy = h(x, y-1) - h(x, y+1), h the drawn heights; beyond the canvas h is 0 across a reflecting edge, the border cell's across an absorbing one, the far side's across a wrapped one",
            "normal": "the unnormalised surface normal is (dx, dy, 2): the light's s = dx*lx + dy*ly",
            "warp": format!(
                "backward: frame pixel (x, y) shows the clean picture at (warp_x, warp_y); in 1/256 pixel sx = 256x + dx*R, sy = 256y + dy*R with R = {r}, clamped to [0, 256(W-1)] x [0, 256(H-1)] or taken modulo 256W (256H) along a wrapped axis; a wall pixel samples itself; warp = s/256 (bilinear) or floor(s/256) (nearest)"
            ),
            "sampling": match scene.look.sampling {
                crate::scene::Sampling::Nearest => "nearest: the pixel (warp_x, warp_y)",
                crate::scene::Sampling::Bilinear => "bilinear: with x0 = floor(warp_x), fx = 256*(warp_x - x0) (likewise y), x1 = x0 + 1 clamped to W-1 (modulo W on a wrapped axis); per channel top = c(x0,y0)*(256-fx) + c(x1,y0)*fx, bottom likewise on y1, value = (top*(256-fy) + bottom*fy + 32768) >> 16",
            },
            "flow": "backward flow (u, v) = warp - (x, y), along a wrapped axis the difference nearest 0",
        },
        "timeline": timeline_json(scene),
    })
}

/// The water: model, stencil, damping, clock, refraction.
fn water_json(scene: &Scene) -> Value {
    let water = &scene.water;
    let stencil = match water.model {
        Model::Classic => {
            "classic: h_next = ((h(x-1,y) + h(x+1,y) + h(x,y-1) + h(x,y+1)) >> 1) - h_prev, then h_next -= h_next >> damping_shift (not when undamped: damping_shift 0), clamped to i16"
        }
        Model::Spring => {
            "spring: Hooke's law over 8 neighbours with a velocity buffer: a = (16h - 3*sum(orthogonal) - sum(diagonal)) / 16 (truncated), v -= a, v -= v >> damping_shift, h_next = h + v, h_next -= h_next >> 8; wrapping i32"
        }
    };
    let (clock, per) = match water.clock {
        Clock::Frames { steps_per_frame } => ("steps_per_frame", steps_per_frame),
        Clock::Steps { per_second } => ("steps_per_second", per_second),
    };
    json!({
        "model": water.model.name(),
        "stencil": stencil,
        "damping_shift": water.damping_shift,
        "undamped": water.damping_shift == 0,
        "damping_changes": scene.damping.iter().map(|d| json!({ "unit": d.unit, "shift": d.shift })).collect::<Vec<_>>(),
        "settle": water.settle,
        clock: per,
        "unit": water.clock.unit_name(),
        "units_per_second": water.clock.per_second(scene.fps),
        "refraction": water.refraction_q8 as f64 / 256.0,
        "refraction_q8": water.refraction_q8,
        "drop": match water.drop { DropShape::Disc => "disc", DropShape::Smooth => "smooth" },
    })
}

/// The look's keys as a scene writes them.
fn look_json(look: &Look) -> Value {
    json!({
        "sampling": match look.sampling { crate::scene::Sampling::Nearest => "nearest", crate::scene::Sampling::Bilinear => "bilinear" },
        "gather": look.is_gather(),
        "shading": look.shading,
        "highlight": look.highlight,
        "light": look.light,
        "smooth": look.smooth,
        "tone": match look.tone { Tone::Clamp => "clamp", Tone::Soft => "soft", Tone::Gain => "gain" },
        "caustics": look.caustics,
        "sky": look.sky,
        "reflection": look.reflection,
        "sky_max": look.sky_max,
        "glint": look.glint.peak,
        "glint_at": look.glint.at,
        "glint_size": look.glint.size,
        "glint_spread": look.glint.spread,
        "sun": look.glint.sun,
        "caustics_depth_q8": look.caustics_depth_q8,
        "has_light": look.shading != 0 || look.highlight != 0 || look.has_water_terms() || look.tone == Tone::Gain,
    })
}

/// Every drop and damping change, in the order applied, with its unit, time and the first
/// output frame that shows it (`null` within the pre-roll).
fn events_json(scene: &Scene) -> Vec<Value> {
    let (clock, fps) = (scene.water.clock, scene.fps);
    let per_second = f64::from(clock.per_second(fps));
    let frame = |unit: u64| clock.frame_showing(unit, fps).checked_sub(scene.first_frame);
    let mut out = Vec::new();
    for_each_event(scene, |unit, event| {
        let when = json!({ "unit": unit, "time": unit as f64 / per_second, "frame": frame(unit) });
        let mut entry = match event {
            Event::Damping { shift } => json!({ "kind": "damping", "shift": shift }),
            Event::Drop(drop) => {
                let (kind, index) = match drop.source {
                    Source::Stone(i) => ("stone", Some(i)),
                    Source::Swipe(i) => ("swipe", Some(i)),
                    Source::Rain => ("rain", None),
                };
                json!({
                    "kind": kind, "index": index, "x": drop.x, "y": drop.y, "radius": drop.radius,
                    "weight": drop.weight, "share": drop.share, "eased": drop.eased,
                })
            }
        };
        if let (Value::Object(entry), Value::Object(when)) = (&mut entry, when) {
            entry.extend(when);
        }
        out.push(entry);
    });
    out
}

/// Each output frame: its time and the water steps done when it is drawn.
fn timeline_json(scene: &Scene) -> Vec<Value> {
    let (clock, fps) = (scene.water.clock, scene.fps);
    (0..scene.frames)
        .map(|i| {
            json!({
                "frame": i,
                "time": i as f64 / f64::from(fps),
                "steps": clock.steps_before_drawing(scene.first_frame + i, fps),
            })
        })
        .collect()
}
