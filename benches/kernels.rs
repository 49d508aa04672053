//! Single-thread kernel speed: one classic step, one spring step, one refraction, at 640×480
//! and 1920×1080, on water that is busy everywhere. `cargo bench --bench kernels`; the figures
//! are recorded in docs/benchmarks.md.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ripple_render::base::threads::Bands;
use ripple_render::draw::look::{Backdrop, Pen, look_band};
use ripple_render::draw::refract::refract;
use ripple_render::encode::gif::lzw::Lzw;
use ripple_render::scene::{Edge, Look};
use ripple_render::sim::water::Water;

mod common;

use common::{LIT_CLASSIC_R, LIT_SPRING_R, SIZES, classic, spring};

fn kernels(c: &mut Criterion) {
    for (w, h) in SIZES {
        let mut group = c.benchmark_group(format!("{w}x{h}"));
        group.throughput(Throughput::Elements((w * h) as u64));
        group.sample_size(30);

        let mut water = classic(w, h);
        group.bench_function("classic_step", |b| b.iter(|| water.step(black_box(5), &Bands::default())));
        let mut water = spring(w, h);
        group.bench_function("spring_step", |b| b.iter(|| water.step(black_box(6), &Bands::default())));
        // Walls and edges (§8): the same steps, finished by the shore.
        for (name, edge) in [("absorb", Edge::Absorb), ("wrap", Edge::Wrap)] {
            let shore = common::shore(w, h, edge);
            let mut water = common::classic_in(w, h, &shore);
            group.bench_function(format!("classic_step_walls_{name}"), |b| {
                b.iter(|| water.step(black_box(5), &Bands::default()))
            });
            let mut water = common::spring_in(w, h, &shore);
            group.bench_function(format!("spring_step_walls_{name}"), |b| {
                b.iter(|| water.step(black_box(6), &Bands::default()))
            });
        }

        let background = common::background(w, h);
        let mut out = vec![0u8; w * h];
        let water = classic(w, h);
        group.bench_function("refract_classic", |b| {
            b.iter(|| refract(water.heights(), w, black_box(256), &background, &mut out))
        });
        let rgb = common::rgb(w, h);
        let mut rgb_out = vec![[0u8; 3]; w * h];
        group.bench_function("refract_classic_rgb", |b| {
            b.iter(|| refract(water.heights(), w, black_box(256), &rgb, &mut rgb_out))
        });
        // A lit look (§9): bilinear sampling, shading and highlight, from RGB, with the
        // values `ripple-render new` writes (refraction 0.05 → R = 13 classic, 0.03 → R = 8
        // spring), and with R = 256 on the same water (every pixel moved far: a stress case).
        let backdrop = Backdrop::new(&rgb, w);
        let lit = Pen::new(&common::LIT_CLASSIC, LIT_CLASSIC_R, w, h);
        group.bench_function("look_lit_classic", |b| {
            b.iter(|| look_band(water.heights(), w, black_box(&lit), &backdrop, &mut rgb_out, 0))
        });
        let lit = Pen::new(&common::LIT_CLASSIC, 256, w, h);
        group.bench_function("look_lit_classic_r256", |b| {
            b.iter(|| look_band(water.heights(), w, black_box(&lit), &backdrop, &mut rgb_out, 0))
        });
        let plain = Pen::new(&Look::PLAIN, 256, w, h);
        group.bench_function("look_plain_classic", |b| {
            b.iter(|| look_band(water.heights(), w, black_box(&plain), &backdrop, &mut rgb_out, 0))
        });
        let water = spring(w, h);
        let lit = Pen::new(&common::LIT_SPRING, LIT_SPRING_R, w, h);
        group.bench_function("look_lit_spring", |b| {
            b.iter(|| look_band(water.heights(), w, black_box(&lit), &backdrop, &mut rgb_out, 0))
        });
        group.bench_function("refract_spring", |b| {
            b.iter(|| refract(water.heights(), w, black_box(26), &background, &mut out))
        });
        // LZW on what frame differencing makes: runs of the transparent index between changes.
        let mut seed = 7u32;
        let mut random = move || {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            seed
        };
        let mut frame = Vec::with_capacity(w * h);
        while frame.len() < w * h {
            let changed = random() % 3 == 0;
            let len = (random() % 24 + 1) as usize;
            for _ in 0..len.min(w * h - frame.len()) {
                frame.push(if changed { (random() % 255) as u8 } else { 255 });
            }
        }
        let mut lzw = Lzw::default();
        let mut out = Vec::new();
        group.bench_function("lzw_differenced", |b| {
            b.iter(|| {
                out.clear();
                lzw.encode(black_box(&frame), 8, &mut out)
            })
        });
        // The same with the run shortcut the GIF encoder uses for the transparent index.
        group.bench_function("lzw_differenced_runs", |b| {
            b.iter(|| {
                out.clear();
                lzw.encode_runs(black_box(&frame), 8, Some(255), &mut out)
            })
        });
        group.finish();
    }
}

criterion_group!(benches, kernels);
criterion_main!(benches);
