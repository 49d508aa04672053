//! The look kernels and nearest refraction on one thread, each timed as the best of 200 runs.
//! On a shared VM whose speed drifts, the minimum is the figure noise disturbs least (the
//! means of `cargo bench --bench kernels` move by tens of percent between runs of the same
//! code). `cargo bench --bench best_of`; the figures are recorded in docs/benchmarks.md.

use std::hint::black_box;
use std::time::{Duration, Instant};

use ripple_render::Scene;
use ripple_render::base::threads::Bands;
use ripple_render::draw::Lens;
use ripple_render::draw::caustics::Caustics;
use ripple_render::draw::look::{Backdrop, Pen, look_band};
use ripple_render::draw::refract::refract;
use ripple_render::scene::{Edge, Glint, Look, Tone};
use ripple_render::sim::seamless::{Crossfade, Seam};
use ripple_render::sim::shore::Shore;
use ripple_render::sim::smooth::Smoothing;
use ripple_render::sim::timeline::Schedule;
use ripple_render::sim::water::{Classic, Water};
use ripple_render::sim::{Simulation, Surface};

mod common;

use common::{LIT_CLASSIC, LIT_CLASSIC_R, LIT_SPRING, LIT_SPRING_R, SIZES, classic, spring};

const RUNS: usize = 200;

/// The shortest of `RUNS` runs of `f`.
fn best_of(mut f: impl FnMut()) -> Duration {
    (0..RUNS)
        .map(|_| {
            let started = Instant::now();
            f();
            started.elapsed()
        })
        .min()
        .unwrap_or_default()
}

/// The shortest of `RUNS` runs of `f` and of `g`, run in turns, so that a drift of the VM's
/// speed meets both alike.
fn best_of_both(mut f: impl FnMut(), mut g: impl FnMut()) -> (Duration, Duration) {
    let mut best = (Duration::MAX, Duration::MAX);
    for _ in 0..RUNS {
        let started = Instant::now();
        f();
        best.0 = best.0.min(started.elapsed());
        let started = Instant::now();
        g();
        best.1 = best.1.min(started.elapsed());
    }
    best
}

fn main() {
    println!("best of {RUNS} runs, one thread");
    for (w, h) in SIZES {
        let report = |name: &str, time: Duration| {
            let ns = time.as_secs_f64() * 1e9 / (w * h) as f64;
            println!("{w}x{h} {name:<44} {:>9.1} µs {ns:>5.2} ns/px", time.as_secs_f64() * 1e6);
        };
        // Steps in open water, and within walls and edges (§8), in turns.
        for (name, edge) in [("absorb", Edge::Absorb), ("wrap", Edge::Wrap)] {
            let shore = common::shore(w, h, edge);
            let (mut open, mut walled) = (classic(w, h), common::classic_in(w, h, &shore));
            let (a, b) = best_of_both(
                || open.step(black_box(5), &Bands::default()),
                || walled.step(black_box(5), &Bands::default()),
            );
            report("classic step", a);
            report(&format!("classic step, walls, edges {name}: {:.2}x", b.as_secs_f64() / a.as_secs_f64()), b);
            let (mut open, mut walled) = (spring(w, h), common::spring_in(w, h, &shore));
            let (a, b) = best_of_both(
                || open.step(black_box(6), &Bands::default()),
                || walled.step(black_box(6), &Bands::default()),
            );
            report("spring step", a);
            report(&format!("spring step, walls, edges {name}: {:.2}x", b.as_secs_f64() / a.as_secs_f64()), b);
        }
        let (water, springs) = (classic(w, h), spring(w, h));
        let (background, rgb) = (common::background(w, h), common::rgb(w, h));
        let backdrop = Backdrop::new(&rgb, w);
        let mut out = vec![0u8; w * h];
        let mut rgb_out = vec![[0u8; 3]; w * h];
        let nearest = best_of(|| refract(water.heights(), w, black_box(256), &background, &mut out));
        report("nearest refraction to palette indices", nearest);
        let (lit_classic, lit_spring) =
            (Pen::new(&LIT_CLASSIC, LIT_CLASSIC_R, w, h), Pen::new(&LIT_SPRING, LIT_SPRING_R, w, h));
        let classic_look = || look_band(water.heights(), w, black_box(&lit_classic), &backdrop, &mut rgb_out, 0);
        report("look, classic (bilinear, shading, highlight)", best_of(classic_look));
        let spring_look = || look_band(springs.heights(), w, black_box(&lit_spring), &backdrop, &mut rgb_out, 0);
        report("look, spring (bilinear, shading, highlight)", best_of(spring_look));
        water_look(w, h, &report);
        gain_look(w, h, &report);
        time_and_loops(w, h, &report);
    }
}

/// The water look's terms against the lit look on the same busy water, in turns; and the
/// smoothing filter's pass over the heights, for each model.
fn water_look(w: usize, h: usize, report: &dyn Fn(&str, Duration)) {
    let (water, springs) = (classic(w, h), spring(w, h));
    let backdrop = Backdrop::new(&common::rgb(w, h), w);
    let (mut lit_out, mut water_out) = (vec![[0u8; 3]; w * h], vec![[0u8; 3]; w * h]);
    let terms = Look { tone: Tone::Soft, caustics: 256, reflection: 128, ..LIT_CLASSIC };
    let (lit, terms) = (Pen::new(&LIT_CLASSIC, LIT_CLASSIC_R, w, h), Pen::new(&terms, LIT_CLASSIC_R, w, h));
    let (lit, with_terms) = best_of_both(
        || look_band(water.heights(), w, black_box(&lit), &backdrop, &mut lit_out, 0),
        || look_band(water.heights(), w, black_box(&terms), &backdrop, &mut water_out, 0),
    );
    let extra = (with_terms.as_secs_f64() - lit.as_secs_f64()) * 1e9 / (w * h) as f64;
    report("look, classic, lit (paired with the next)", lit);
    report(&format!("look, classic, + soft, caustics, sky: {extra:+.2} ns/px"), with_terms);
    let scene = format!("[video]\nwidth = {w}\nheight = {h}\nframes = 1\n[look]\nsmooth = 1\n");
    let scene = Scene::from_toml_str(&scene, std::path::Path::new("smooth.toml")).expect("scene");
    let shore = Shore::open(w, h);
    let mut smoothing = Smoothing::<i16>::new(&scene, &shore, Bands::default()).expect("smoothing");
    report(
        "smoothing, one pass, classic",
        best_of(|| {
            black_box(smoothing.run(water.heights()));
        }),
    );
    let mut smoothing = Smoothing::<i32>::new(&scene, &shore, Bands::default()).expect("smoothing");
    report(
        "smoothing, one pass, spring",
        best_of(|| {
            black_box(smoothing.run(springs.heights()));
        }),
    );
}

/// The gain tone (docs/scene-format.md, "The gain tone") against the lit look on the same busy
/// water, in turns, each drawn through the lens as a render draws it: without caustics, and
/// with them (the floor's light made from the heights, then the pixels); and the caustics'
/// field alone.
fn gain_look(w: usize, h: usize, report: &dyn Fn(&str, Duration)) {
    let water = classic(w, h);
    let backdrop = Backdrop::new(&common::rgb(w, h), w);
    let (mut lit_out, mut gain_out) = (vec![[0u8; 3]; w * h], vec![[0u8; 3]; w * h]);
    let source = format!("[video]\nwidth = {w}\nheight = {h}\nframes = 1\n[water]\nrefraction = 0.05\n");
    let scene = Scene::from_toml_str(&source, std::path::Path::new("gain.toml")).expect("scene");
    let shore = std::sync::Arc::new(Shore::open(w, h));
    let lens = Lens::new(&scene, &shore, Bands::new(1));
    let glint = Glint { peak: 200, ..Glint::NONE };
    let gain = Look { tone: Tone::Gain, shading: 64, highlight: 0, reflection: 1024, glint, ..LIT_CLASSIC };
    let caustics = Look { caustics: 96, caustics_depth_q8: Some(26), ..gain };
    let lit = lens.pens(&LIT_CLASSIC);
    for (name, look) in [("gain tone, sky, glint", gain), ("gain tone, sky, glint, caustics", caustics)] {
        let pens = lens.pens(&look);
        let (lit, with) = best_of_both(
            || lens.look(water.heights(), black_box(&lit), &backdrop, &mut lit_out),
            || lens.look(water.heights(), black_box(&pens), &backdrop, &mut gain_out),
        );
        let extra = (with.as_secs_f64() - lit.as_secs_f64()) * 1e9 / (w * h) as f64;
        report("look, classic, lit, through the lens (paired)", lit);
        report(&format!("look, classic, {name}: {extra:+.2} ns/px"), with);
    }
    report(
        "caustics' field alone (splat and blur)",
        best_of(|| drop(black_box(Caustics::new(water.heights(), &shore, 26)))),
    );
}

/// §10 and §11: a frame of 4 steps in frame mode and in step mode (S = 4·fps), in turns;
/// a crossfade's blend of one frame; the seam's pass over one frame.
fn time_and_loops(w: usize, h: usize, report: &dyn Fn(&str, Duration)) {
    let scene = |water: &str| {
        let mut src = format!(
            "[video]\nwidth = {w}\nheight = {h}\nframes = 1000000\nstart = 0.4\n[water]\n{water}\n\
             [seamless]\ncrossfade = 1\n[rain]\ndrops_per_second = 2000\nradius = [2, 6]\nweight = [200, 900]\n"
        );
        src.push_str("[[stone]]\nat = 0\nx = 100\ny = 100\n");
        Scene::from_toml_str(&src, std::path::Path::new("bench.toml")).expect("bench scene")
    };
    let (frames, steps) = (scene("steps_per_frame = 4"), scene("steps_per_second = 100"));
    let shore = Shore::open(w, h);
    let surface = |scene: &Scene| {
        let water = Simulation::<Classic>::new(scene, Schedule::new(scene), &shore, Bands::default());
        Surface::new(scene, water, &shore)
    };
    let (mut a, mut b) = (surface(&frames), surface(&steps));
    let (frame_mode, step_mode) = best_of_both(
        || {
            black_box(a.advance());
        },
        || {
            black_box(b.advance());
        },
    );
    report("4 steps and a frame's rain, frame mode", frame_mode);
    report(&format!("the same in step mode: {:.2}x", step_mode.as_secs_f64() / frame_mode.as_secs_f64()), step_mode);
    // A crossfade of one frame: keep pre-roll frame K0 − 1 (9), blend the last frame.
    let water = classic(w, h);
    let mut fade = Crossfade::new(&frames).expect("a crossfade");
    fade.take(9, water.heights());
    let last = frames.end_frame() - 1;
    report("crossfade blend of a frame (classic)", best_of(|| fade.take(black_box(last), water.heights())));
    let mut seam = Seam::new((w * h) as u64, 2 * RUNS as u64 + 1);
    seam.add(water.heights(), &Bands::default());
    report("seam pass over a frame (classic)", best_of(|| seam.add(black_box(water.heights()), &Bands::default())));
}
