//! One sequence of a dataset drawn from its spec: the sequence's own generator, keyed by the
//! dataset's seed and the sequence's number, makes every choice in a fixed order, and the
//! choices are written as a scene file. docs/research.md pins the order.

use std::fmt::Write;

use xxhash_rust::xxh3::Xxh3;

use super::spec::{Span, Spec};
use crate::base::rng::RainRng;

/// The index's columns, in order: the sequence's own, then what was drawn for it.
pub const COLUMNS: [&str; 21] = [
    "sequence",
    "split",
    "path",
    "seed",
    "picture",
    "width",
    "height",
    "frames",
    "fps",
    "model",
    "refraction",
    "damping_shift",
    "drop",
    "edges",
    "sampling",
    "smooth",
    "has_light",
    "stones",
    "swipes",
    "rain",
    "start",
];

/// A sequence's scene and what the index records of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Drawn {
    /// The sequence's number, from 0.
    pub index: u64,
    /// The key of its generator.
    pub seed: u64,
    /// The scene file's text.
    pub scene: String,
    /// The picture's file name, if the spec has pictures.
    pub picture: Option<String>,
    /// What the index lists: `(column, value)`, in the index's column order.
    pub columns: Vec<(&'static str, String)>,
}

/// The key of sequence `index`'s generator in a dataset made with `seed`: XXH3-64 of
/// `ripple-render dataset`, the seed and the index (8 little-endian bytes each).
pub fn sequence_seed(seed: u64, index: u64) -> u64 {
    let mut hash = Xxh3::new();
    hash.update(b"ripple-render dataset");
    hash.update(&seed.to_le_bytes());
    hash.update(&index.to_le_bytes());
    hash.digest()
}

/// Draws sequence `index` of a dataset made from `spec` with `seed`.
pub fn draw(spec: &Spec, seed: u64, index: u64) -> Drawn {
    let key = sequence_seed(seed, index);
    let mut rng = RainRng::new(key);
    let mut pick = |s: Span| rng.in_range(s[0], s[1]);
    let picture = spec.pictures.as_ref().map(|(_, names)| names[pick([0, names.len() as i64 - 1]) as usize].clone());
    let (width, height, frames) = (pick(spec.width), pick(spec.height), pick(spec.frames));
    let model = spec.models[pick([0, spec.models.len() as i64 - 1]) as usize];
    let r = pick(spec.refraction_q8);
    let damping = if spec.tian && model == "classic" { 0 } else { pick(spec.damping_shift) };
    let drop = spec.drops[pick([0, spec.drops.len() as i64 - 1]) as usize];
    let edges = spec.edges[pick([0, spec.edges.len() as i64 - 1]) as usize];
    let sampling = spec.sampling[pick([0, spec.sampling.len() as i64 - 1]) as usize];
    let (smooth, shading, highlight, caustics) =
        (pick(spec.smooth), pick(spec.shading), pick(spec.highlight), pick(spec.caustics));
    let fps = spec.fps;
    let mut scene = String::new();
    let _ = writeln!(scene, "# sequence {index} of a dataset (ripple-render dataset), key {key:016x}");
    let _ = writeln!(scene, "[video]\nwidth = {width}\nheight = {height}\nframes = {frames}\nfps = {fps}\n");
    match &picture {
        Some(name) => {
            let _ = writeln!(scene, "[background]\nimage = {}\nfit = \"cover\"\n", toml_string(name));
        }
        None => scene.push_str("[background]\npattern = \"checker\"\n\n"),
    }
    let damping_line = if damping == 0 { "undamped = true".to_string() } else { format!("damping_shift = {damping}") };
    let _ = writeln!(
        scene,
        "[water]\nmodel = \"{model}\"\nrefraction = {}\n{damping_line}\ndrop = \"{drop}\"\n",
        r as f64 / 256.0
    );
    let _ = writeln!(scene, "[edges]\nall = \"{edges}\"\n");
    let mut look = format!("[look]\nsampling = \"{sampling}\"\nsmooth = {smooth}\n");
    for (key, v) in [("shading", shading), ("highlight", highlight), ("caustics", caustics)] {
        if v > 0 {
            let _ = writeln!(look, "{key} = {v}");
        }
    }
    scene.push_str(&look);
    scene.push('\n');
    if spec.tian {
        let (h, b) = (pick(spec.start_height), pick(spec.start_blur));
        let _ = writeln!(scene, "[surface]\nheight = {h}\nblur = {b}\nseed = {}\n", pick([0, i64::MAX]));
    }
    let [stones, swipes, rate] = events(spec, &mut rng, [width, height, frames], &mut scene);
    let columns = vec![
        ("picture", picture.clone().unwrap_or_default()),
        ("width", width.to_string()),
        ("height", height.to_string()),
        ("frames", frames.to_string()),
        ("fps", fps.to_string()),
        ("model", model.to_string()),
        ("refraction", (r as f64 / 256.0).to_string()),
        ("damping_shift", damping.to_string()),
        ("drop", drop.to_string()),
        ("edges", edges.to_string()),
        ("sampling", sampling.to_string()),
        ("smooth", smooth.to_string()),
        ("has_light", (shading + highlight + caustics > 0).to_string()),
        ("stones", stones.to_string()),
        ("swipes", swipes.to_string()),
        ("rain", rate.to_string()),
        ("start", if spec.tian { "tian" } else { "flat" }.to_string()),
    ];
    Drawn { index, seed: key, scene, picture, columns }
}

/// Draws the events (after the scene's other draws, in the order docs/research.md gives) and
/// writes them into `scene`: the stones, the swipes, the rain. Returns how many stones and
/// swipes, and the rain's rate.
fn events(spec: &Spec, rng: &mut RainRng, [width, height, frames]: [i64; 3], scene: &mut String) -> [i64; 3] {
    let mut pick = |s: Span| rng.in_range(s[0], s[1]);
    let fps = spec.fps;
    let time = |frame: i64| format!("{:.9}", frame as f64 / f64::from(fps));
    let stones = pick(spec.stones.count);
    for _ in 0..stones {
        let (at, x, y) = (pick([0, frames - 1]), pick([0, width - 1]), pick([0, height - 1]));
        let (radius, weight) = (pick(spec.stones.radius), pick(spec.stones.weight));
        let _ =
            writeln!(*scene, "[[stone]]\nat = {}\nx = {x}\ny = {y}\nradius = {radius}\nweight = {weight}\n", time(at));
    }
    let swipes = pick(spec.swipes.count);
    for _ in 0..swipes {
        let from = pick([0, frames - 1]);
        let until = pick([from, frames - 1]);
        let points = pick(spec.swipes.points);
        let path: Vec<String> =
            (0..points).map(|_| format!("[{}, {}]", pick([0, width - 1]), pick([0, height - 1]))).collect();
        let (radius, weight) = (pick(spec.swipes.radius), pick(spec.swipes.weight));
        let _ = writeln!(
            scene,
            "[[swipe]]\nfrom = {}\nuntil = {}\npath = [{}]\nradius = {radius}\nweight = {weight}\ntiming = \"spread\"\n",
            time(from),
            time(until),
            path.join(", ")
        );
    }
    let rate = pick(spec.rain.count);
    if rate > 0 {
        let (r, w) = (spec.rain.radius, spec.rain.weight);
        let _ = writeln!(
            scene,
            "[rain]\ndrops_per_second = {rate}\nradius = [{}, {}]\nweight = [{}, {}]\nseed = {}\n",
            r[0],
            r[1],
            w[0],
            w[1],
            pick([0, i64::MAX])
        );
    }
    [stones, swipes, rate]
}

/// A TOML basic string.
fn toml_string(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
