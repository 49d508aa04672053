//! Web-sized outputs (issue #42): `--quality Q` writes a lossy animated WebP through libwebp's
//! animation encoder, and `--lossy N` a lossy GIF that holds what is shown where it is near: each far
//! smaller than the exact file, close to the exact frames, the same bytes on every run and
//! thread count, and refused where it cannot be what was asked.

use std::path::Path;
use std::process::Command;

use crate::support::{bundled_copy, decode_gif, ripple, scratch};
use crate::tools::{Tool, needs};

/// The PSNR (dB) of the WebP `lossy` against the WebP `exact`, each frame as libwebp's decoder
/// (through Pillow) shows it at each exact frame's time: an encoder may merge equal frames. `None`
/// without python3 and Pillow's WebP support.
fn psnr(exact: &Path, lossy: &Path) -> f64 {
    let script = "import sys, math\nfrom PIL import Image, ImageSequence, features\nassert features.check('webp')\n\
                  def frames(p):\n    out, t = [], 0\n    for f in ImageSequence.Iterator(Image.open(p)):\n        \
                  out.append((t, f.convert('RGB').tobytes())); t += f.info.get('duration', 0)\n    return out\n\
                  a, b = frames(sys.argv[1]), frames(sys.argv[2])\n\
                  def at(t):\n    cur = b[0][1]\n    for s, f in b:\n        if s > t: break\n        cur = f\n    return cur\n\
                  total = n = 0\n\
                  for t, f in a:\n    g = at(t)\n    total += sum((x - y) ** 2 for x, y in zip(f, g)); n += len(f)\n\
                  print(10 * math.log10(255 ** 2 / max(total / n, 1e-12)))\n";
    let out = Command::new("python3").args(["-c", script]).arg(exact).arg(lossy).output().expect("python3");
    assert!(out.status.success(), "Pillow: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

#[test]
fn a_lossy_webp_is_small_close_to_the_render_and_the_same_on_every_thread_count() {
    let dir = scratch("lossy-webp");
    let scene = bundled_copy("pond", &dir, 20);
    for args in [
        &["-o", "exact.webp"][..],
        &["-o", "plain.gif"],
        &["-o", "q.webp", "--quality"],
        &["-o", "q1.webp", "--quality", "--threads", "1"],
    ] {
        let run = ripple(&[&[scene.as_str()][..], args, &["-q"]].concat(), &dir);
        assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
    }
    let lossy = std::fs::read(dir.join("q.webp")).unwrap();
    assert_eq!(lossy, std::fs::read(dir.join("q1.webp")).unwrap(), "the thread count changed the bytes");
    assert_eq!(ripple(&[&scene, "-o", "again.webp", "--quality=75", "-q"], &dir).code, 0);
    assert_eq!(lossy, std::fs::read(dir.join("again.webp")).unwrap(), "a bare --quality is 75, and runs agree");
    // Lossy frames, and a label that says so.
    // (A lossless chunk is only ever a frame that changes nothing: one transparent pixel.)
    assert!(lossy.windows(4).any(|w| w == b"VP8 "));
    for at in (0..lossy.len() - 8).filter(|&i| &lossy[i..i + 4] == b"VP8L") {
        assert!(u32::from_le_bytes(lossy[at + 4..at + 8].try_into().unwrap()) < 16, "a lossless frame at {at}");
    }
    let text = String::from_utf8_lossy(&lossy);
    assert!(text.contains("ripple-render ") && text.contains(" quality=75"), "no label");
    // The aim: at most 0.4 of the GIF on a pond-like scene.
    let gif = std::fs::metadata(dir.join("plain.gif")).unwrap().len();
    assert!((lossy.len() as f64) < 0.4 * gif as f64, "{} bytes against the GIF's {gif}", lossy.len());
    let lower = ripple(&[&scene, "-o", "q30.webp", "--quality=30", "-q"], &dir);
    assert_eq!(lower.code, 0, "{}", lower.stderr);
    assert!(std::fs::metadata(dir.join("q30.webp")).unwrap().len() < lossy.len() as u64);
    // Every frame is there at its time (libwebp merges frames that are alike; they are split
    // again), so diff compares frame by frame and passes it on its PSNR.
    let run = ripple(&["diff", &scene, "q.webp"], &dir);
    assert!(run.code == 1 && run.stdout.contains("20 compared"), "{}{}", run.stdout, run.stderr);
    let run = ripple(&["diff", &scene, "q.webp", "--min-psnr", "30"], &dir);
    assert!(run.code == 0 && run.stdout.contains("(tolerance 0, max pixels 0, min PSNR 30.0 dB)"), "{}", run.stdout);
    let run = ripple(&["diff", &scene, "q.webp", "--min-psnr", "60", "--json"], &dir);
    let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert!(run.code == 1 && json["min_psnr"] == 60.0, "{}", run.stdout);
    if !needs("a_lossy_webp_is_small_close_to_the_render (its PSNR by libwebp)", &[Tool::PillowWebp]) {
        return;
    }
    let db = psnr(&dir.join("exact.webp"), &dir.join("q.webp"));
    // Quality 75 keeps the picture: over 30 dB against the exact frames (pond measures 33.3).
    assert!(db > 30.0, "{db} dB");
    let worse = psnr(&dir.join("exact.webp"), &dir.join("q30.webp"));
    assert!(worse < db, "{worse} dB at 30 against {db} dB at 75");
}

#[test]
fn quality_is_refused_where_the_output_cannot_be_lossy() {
    let dir = scratch("lossy-refused");
    let scene = bundled_copy("pond", &dir, 6);
    let refused = |args: &[&str], says: &str| {
        let run = ripple(&[&[scene.as_str()][..], args].concat(), &dir);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains(says), "{args:?}: {}", run.stderr);
    };
    refused(
        &["-o", "out.gif", "--quality"],
        "--quality=75 makes a lossy WebP (or sets a video's quality), and the output is GIF",
    );
    refused(&["-o", "out.apng", "--quality=50"], "the output is APNG");
    refused(&["-o", "out.webp", "--quality=50", "--frames", "0..3"], "--frames renders a part for `join`");
    refused(&["-o", "out.webp", "--quality=50", "--max-size", "100K"], "--max-size chooses how lossy to be itself");
    refused(&["-o", "out.webp", "--quality=0"], "0 is not in 1..=100");
    refused(&["-o", "out.webp", "--quality=101"], "101 is not in 1..=100");
    refused(&["-o", "out.webp", "--lossy"], "--lossy=20 makes a lossy GIF, and the output is WebP");
    refused(&["-o", "out.gif", "--lossy=80", "--frames", "0..3"], "--frames renders a part for `join`");
    refused(&["-o", "out.gif", "--lossy=80", "--max-size", "100K"], "--max-size chooses how lossy to be itself");
    refused(&["-o", "out.gif", "--lossy=201"], "201 is not in 1..=200");
    assert!(!dir.join("out.webp").exists() && !dir.join("out.gif").exists());
}

#[test]
fn max_size_goes_lossy_before_it_drops_frames_or_the_canvas() {
    let dir = scratch("lossy-max-size");
    let scene = bundled_copy("pond", &dir, 20);
    assert_eq!(ripple(&[&scene, "-o", "exact.webp", "-q"], &dir).code, 0);
    let exact = std::fs::metadata(dir.join("exact.webp")).unwrap().len();
    // Two fifths of the exact WebP: no exact rung fits, a lossy one with every frame does.
    let budget = (exact * 2 / 5).to_string();
    let run = ripple(&[&scene, "-o", "fit.webp", "--max-size", &budget], &dir);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("20 frames, 360×240") && run.stderr.contains(": lossy at --quality="),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("every other frame"), "{}", run.stderr);
    let fitted = std::fs::read(dir.join("fit.webp")).unwrap();
    assert!(fitted.len() as u64 <= exact * 2 / 5 && String::from_utf8_lossy(&fitted).contains(" quality="));
    // A GIF at three fifths of its plain size (of these 20 frames the first, shown exactly even
    // when lossy, is two fifths): a --lossy rung, every frame, the whole canvas.
    assert_eq!(ripple(&[&scene, "-o", "plain.gif", "-q"], &dir).code, 0);
    let plain = std::fs::metadata(dir.join("plain.gif")).unwrap().len();
    let run = ripple(&[&scene, "-o", "fit.gif", "--max-size", &(plain * 3 / 5).to_string()], &dir);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.contains("20 frames, 360×240") && run.stderr.contains(": --lossy="), "{}", run.stderr);
    assert!(!run.stderr.contains("colours") && !run.stderr.contains("frame,"), "{}", run.stderr);
}

#[test]
fn a_lossy_gif_is_a_quarter_smaller_at_80_never_flickers_and_is_the_same_on_every_thread_count() {
    let dir = scratch("lossy-gif");
    let scene = bundled_copy("pond", &dir, 24);
    for args in [
        &["-o", "plain.gif"][..],
        &["-o", "l80.gif", "--lossy=80"],
        &["-o", "l80-1.gif", "--lossy=80", "--threads", "1"],
    ] {
        let run = ripple(&[&[scene.as_str()][..], args, &["-q"]].concat(), &dir);
        assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
    }
    let (plain, lossy) = (std::fs::read(dir.join("plain.gif")).unwrap(), std::fs::read(dir.join("l80.gif")).unwrap());
    assert_eq!(lossy, std::fs::read(dir.join("l80-1.gif")).unwrap(), "the thread count changed the bytes");
    // The aim: at least a quarter smaller at 80.
    assert!((lossy.len() as f64) < 0.75 * plain.len() as f64, "{} against {}", lossy.len(), plain.len());
    assert!(String::from_utf8_lossy(&lossy).contains(" lossy=80"), "the comment does not say lossy");
    let run = ripple(&["diff", &scene, "l80.gif", "--min-psnr", "35"], &dir);
    assert_eq!(run.code, 0, "{}", run.stdout);
    let (plain, lossy) = (decode_gif(&plain), decode_gif(&lossy));
    assert_eq!((lossy.frames.len(), lossy.delays.clone()), (plain.frames.len(), plain.delays.clone()));
    // The plain GIF is each frame exactly in its palette: a pixel that stays the same there
    // stays the same in the lossy one (calm water does not flicker), and none strays further
    // than 80 / 4 on a channel from its palette colour (the documented step).
    for k in 0..plain.frames.len() {
        for (p, (now, was)) in plain.frames[k].chunks(3).zip(lossy.frames[k].chunks(3)).enumerate() {
            let most = now.iter().zip(was).map(|(a, b)| a.abs_diff(*b)).max().unwrap();
            assert!(most <= 20, "frame {k} pixel {p}: {now:?} shown as {was:?}");
            if k > 0 && plain.frames[k][p * 3..p * 3 + 3] == plain.frames[k - 1][p * 3..p * 3 + 3] {
                assert_eq!(
                    lossy.frames[k][p * 3..p * 3 + 3],
                    lossy.frames[k - 1][p * 3..p * 3 + 3],
                    "frame {k} pixel {p}: unchanged, yet it changed"
                );
            }
        }
    }
}

/// A photo-like picture drawn here: a colour field that drifts slowly (`blobs`), sensor-like
/// noise on each pixel (within ±12 levels, as a camera's at low light), and (for a `city`)
/// blocks of other colours with hard edges.
fn photo_like(width: u32, height: u32, city: bool) -> image::RgbImage {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut noise = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % 25) as i32 - 12
    };
    image::RgbImage::from_fn(width, height, |x, y| {
        let (u, v) = (f64::from(x) / f64::from(width), f64::from(y) / f64::from(height));
        let blob = ((u * 9.0).sin() * (v * 7.0).cos() * 40.0) as i32;
        let mut base = [70 + blob / 2, 140 + blob, 40 + blob / 3];
        if city && (x / 37 + y / 23) % 3 == 0 {
            base = [150 + blob / 4, 120 + blob / 4, 110];
        }
        let n = noise();
        image::Rgb(base.map(|c| (c + n + noise() / 3).clamp(0, 255) as u8))
    })
}

#[test]
fn a_lossy_gif_is_a_quarter_smaller_at_80_on_photo_like_pictures() {
    let dir = scratch("lossy-photos");
    for (name, city) in [("meadow", false), ("city", true)] {
        photo_like(240, 160, city).save(dir.join(format!("{name}.png"))).unwrap();
        let scene = format!(
            "[video]\nwidth = 240\nheight = 160\nframes = 30\n[background]\nimage = \"{name}.png\"\n\
             [[stone]]\nat = 0.1\nx = 120\ny = 80\nradius = 6\nweight = 500\n\
             [[swipe]]\nfrom = 0.2\nuntil = 1.0\npath = [[20, 30], [220, 140], [220, 30]]\n\
             [rain]\ndrops_per_second = 6\nseed = 2\n"
        );
        std::fs::write(dir.join(format!("{name}.toml")), scene).unwrap();
        let size = |args: &[&str], out: &str| {
            let run = ripple(&[&[format!("{name}.toml").as_str(), "-o", out, "-q", "-f"][..], args].concat(), &dir);
            assert_eq!(run.code, 0, "{name} {args:?}: {}", run.stderr);
            std::fs::metadata(dir.join(out)).unwrap().len() as f64
        };
        let (plain, lossy) = (size(&[], "plain.gif"), size(&["--lossy=80"], "l80.gif"));
        assert!(lossy <= 0.75 * plain, "{name}: {lossy} bytes at 80 against {plain} plain ({:.2})", lossy / plain);
    }
}
