//! Looks (bilinear sampling, light) and GIF colours: what a GIF shows of frames that hold colours
//! the background lacks, dithering without shimmer, and the same bytes on any thread count.

use crate::support::{decode_gif, read_png};
use crate::support::{ripple, scene_dir};

/// A lit, bilinear scene over the tiles (many colours), small and short.
const LIT: &str = "[video]\nwidth = 64\nheight = 48\nfps = 25\nframes = 12\n[background]\npattern = \"tiles\"\n\
                   [look]\nsampling = \"bilinear\"\nshading = 400\nhighlight = 900\n\
                   [[stone]]\nat = 0\nx = 32\ny = 24\nradius = 5\nweight = 900\n";

/// The GIF's global palette, from its header.
fn global_palette(gif: &[u8]) -> Vec<[u8; 3]> {
    let flags = gif[10];
    assert!(flags & 0x80 != 0, "a global palette");
    let entries = 2usize << (flags & 7);
    gif[13..13 + 3 * entries].chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect()
}

#[test]
fn a_lit_gif_shows_each_pixel_as_its_nearest_palette_colour() {
    let dir = scene_dir("lit-gif", LIT);
    assert_eq!(ripple(&["scene.toml", "-o", "lit.gif", "-q"], &dir).code, 0);
    assert_eq!(ripple(&["scene.toml", "-o", "exact/", "-q"], &dir).code, 0);
    let bytes = std::fs::read(dir.join("lit.gif")).unwrap();
    // The last entry is the transparent slot, whose colour is never shown.
    let palette = global_palette(&bytes);
    let shown = &palette[..palette.len() - 1];
    let gif = decode_gif(&bytes);
    assert_eq!(gif.frames.len(), 12);
    let distance = |a: &[u8], b: &[u8; 3]| (0..3).map(|c| (i32::from(a[c]) - i32::from(b[c])).pow(2)).sum::<i32>();
    for (i, frame) in gif.frames.iter().enumerate() {
        let (_, _, exact) = read_png(&dir.join(format!("exact/frame_{i:04}.png")));
        for (g, e) in frame.chunks_exact(3).zip(exact.chunks_exact(3)) {
            let best = shown.iter().map(|p| distance(e, p)).min().unwrap();
            let got = distance(e, &[g[0], g[1], g[2]]);
            assert_eq!(got, best, "frame {i}: {e:?} shown as {g:?}, not as its nearest palette colour");
        }
    }
}

#[test]
fn looks_and_dither_give_the_same_bytes_on_any_thread_count() {
    let dir = scene_dir("look-threads", LIT);
    for (name, extra) in [("lit", vec![]), ("dither", vec!["--dither"])] {
        let mut outputs = Vec::new();
        for threads in ["1", "3"] {
            let out = format!("{name}-{threads}.gif");
            let mut args = vec!["scene.toml", "-o", &out, "--threads", threads, "-q"];
            args.extend(&extra);
            if name == "dither" {
                // Dithering is for renders without a look.
                std::fs::write(
                    dir.join("scene.toml"),
                    LIT.split("[look]").next().unwrap().to_string()
                        + "[[stone]]\nat = 0\nx = 32\ny = 24\nweight = 900\n",
                )
                .unwrap();
            }
            assert_eq!(ripple(&args, &dir).code, 0);
            outputs.push(std::fs::read(dir.join(&out)).unwrap());
        }
        assert_eq!(outputs[0], outputs[1], "{name}");
    }
}

#[test]
fn a_dithered_background_does_not_shimmer_where_the_water_is_calm() {
    // A smooth gradient (more than 256 colours), and one stone in a corner: the rest is calm.
    let dir = scene_dir(
        "dither",
        "[video]\nwidth = 160\nheight = 120\nframes = 10\n[background]\nimage = \"sky.png\"\n\
         [[stone]]\nat = 0\nx = 20\ny = 20\nradius = 4\nweight = 800\n",
    );
    let sky = image::RgbImage::from_fn(160, 120, |x, y| {
        image::Rgb([(40 + x / 2) as u8, (90 + y) as u8, (170 + x / 3) as u8])
    });
    sky.save(dir.join("sky.png")).unwrap();
    assert_eq!(ripple(&["scene.toml", "-o", "plain.gif", "-q"], &dir).code, 0);
    assert_eq!(ripple(&["scene.toml", "-o", "dithered.gif", "-q", "--dither"], &dir).code, 0);
    assert_eq!(ripple(&["scene.toml", "-o", "exact/", "-q"], &dir).code, 0);
    let dithered = decode_gif(&std::fs::read(dir.join("dithered.gif")).unwrap());
    let exact: Vec<Vec<u8>> = (0..10).map(|i| read_png(&dir.join(format!("exact/frame_{i:04}.png"))).2).collect();
    // Between two frames a pixel of the GIF changes only where the render changes.
    for i in 1..10 {
        for (p, ((g0, g1), (e0, e1))) in dithered.frames[i - 1]
            .chunks_exact(3)
            .zip(dithered.frames[i].chunks_exact(3))
            .zip(exact[i - 1].chunks_exact(3).zip(exact[i].chunks_exact(3)))
            .enumerate()
        {
            assert!(g0 == g1 || e0 != e1, "pixel {p} shimmers between frames {} and {i}", i - 1);
        }
    }
    // Dithering keeps the picture's local means, which bands lose: averaged over 4×4 blocks, the
    // dithered GIF is much closer to the exact frame than the plain one.
    let block_error = |frame: &[u8], exact: &[u8]| {
        let mut squares = 0.0;
        for by in (0..120).step_by(4) {
            for bx in (0..160).step_by(4) {
                for c in 0..3 {
                    let mean = |f: &[u8]| {
                        (0..4)
                            .flat_map(|y| (0..4).map(move |x| f[((by + y) * 160 + bx + x) * 3 + c] as f64))
                            .sum::<f64>()
                            / 16.0
                    };
                    squares += (mean(frame) - mean(exact)).powi(2);
                }
            }
        }
        squares
    };
    let plain = decode_gif(&std::fs::read(dir.join("plain.gif")).unwrap());
    let (banded, smooth) = (block_error(&plain.frames[9], &exact[9]), block_error(&dithered.frames[9], &exact[9]));
    assert!(smooth * 2.0 <= banded, "block error {smooth:.0} dithered, {banded:.0} plain");
}

#[test]
fn an_indexed_png_sequence_falls_back_to_rgb_for_a_look() {
    let dir = scene_dir("look-indexed", &LIT.replace("pattern = \"tiles\"", "pattern = \"checker\""));
    let run = ripple(&["scene.toml", "-o", "frames/", "--indexed-png", "-q"], &dir);
    assert_eq!(run.code, 0);
    assert!(
        run.stderr.contains("--indexed-png: a look makes new colours, so the frames are RGB PNGs"),
        "{}",
        run.stderr
    );
    // RGB frames (read_png asserts the colour type).
    let (w, h, _) = read_png(&dir.join("frames/frame_0000.png"));
    assert_eq!((w, h), (64, 48));
}

#[test]
fn the_gain_tone_gives_the_same_bytes_on_any_thread_count_and_without_simd() {
    // Smooth drops, the whole gain look with caustics, a wall and wrapped edges: the rays'
    // sums and every pass must not depend on the order they are taken in.
    let scene = "[video]\nwidth = 90\nheight = 60\nframes = 12\n[background]\npattern = \"tiles\"\n\
                 [water]\ndrop = \"smooth\"\nrefraction = 0.08\n[edges]\nall = \"wrap\"\n\
                 [look]\nsampling = \"bilinear\"\nsmooth = 1\ntone = \"gain\"\nshading = 64\ncaustics = 200\n\
                 reflection = 2048\nglint = 230\n[[obstacle]]\nshape = \"circle\"\nx = 60\ny = 30\nradius = 6\n\
                 [[stone]]\nat = 0\nx = 3\ny = 4\nradius = 6\nweight = 900\n\
                 [[swipe]]\nfrom = 0.04\nuntil = 0.3\npath = [[10, 50], [80, 40]]\nradius = 2\nweight = 300\n";
    let dir = scene_dir("gain-threads", scene);
    let no_simd = std::path::Path::new("1");
    let runs: [(&str, &[(&str, &std::path::Path)]); 3] =
        [("1", &[]), ("3", &[]), ("3", &[("RIPPLE_RENDER_NO_SIMD", no_simd)])];
    let outputs: Vec<Vec<u8>> = runs
        .iter()
        .enumerate()
        .map(|(i, (threads, env))| {
            let out = format!("gain-{i}.apng");
            let run = crate::support::ripple_with(&["scene.toml", "-o", &out, "--threads", threads, "-q"], &dir, env);
            assert_eq!(run.code, 0, "{}", run.stderr);
            std::fs::read(dir.join(&out)).unwrap()
        })
        .collect();
    assert!(outputs[0] == outputs[1], "1 and 3 threads differ");
    assert!(outputs[0] == outputs[2], "without SIMD the bytes differ");
}
