//! The outputs of §12 as a user meets them: each format decoded by a decoder that is not
//! ours (the image crate's APNG and WebP readers, ffmpeg) and compared with the exact render,
//! frame by frame, with its timing and loop; standard output; ffmpeg missing, failing or killed.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use image::AnimationDecoder;

use crate::support::render_rgb;
use crate::support::{ripple, scene_dir, temporaries};
use crate::tools::{Tool, needs};

/// An odd canvas at 30 fps (durations of 33 and 34 ms), few colours: palette frames.
pub(crate) const CHECKER: &str = "[video]\nwidth = 61\nheight = 45\nfps = 30\nframes = 14\nloop = false\n\
    [background]\npattern = \"checker\"\n[[stone]]\nat = 0\nx = 30\ny = 22\nradius = 5\n\
    [[stone]]\nat = 0.2\nx = 3\ny = 40\n";
/// Many colours, no look: RGB frames of background colours, a colour they lack transparent.
pub(crate) const TILES: &str = "[video]\nwidth = 64\nheight = 48\nfps = 25\nframes = 12\n[background]\npattern = \"tiles\"\n\
    [rain]\ndrops_per_second = 40\nseed = 3\n";
/// Many colours and a look: RGB frames with colours the background lacks.
pub(crate) const LIT: &str = "[video]\nwidth = 64\nheight = 48\nfps = 25\nframes = 12\n[background]\npattern = \"tiles\"\n\
    [look]\nsampling = \"bilinear\"\nshading = 300\n[rain]\ndrops_per_second = 40\nseed = 3\n";

/// Frames composed by the image crate (RGB) and their delays in seconds as fractions (num, den).
pub(crate) fn decode_animation(path: &Path) -> (Vec<Vec<u8>>, Vec<(u32, u32)>) {
    let file = std::io::BufReader::new(std::fs::File::open(path).unwrap());
    let frames = if path.extension().unwrap() == "apng" {
        image::codecs::png::PngDecoder::new(file).unwrap().apng().unwrap().into_frames().collect_frames().unwrap()
    } else {
        drop(file);
        return decode_webp(path);
    };
    let delays = frames.iter().map(|f| f.delay().numer_denom_ms()).collect();
    let rgb = frames
        .into_iter()
        .map(|f| f.into_buffer().into_raw().chunks_exact(4).flat_map(|p| [p[0], p[1], p[2]]).collect())
        .collect();
    (rgb, delays)
}

/// A WebP's frames as libwebp composes them (our compositor, checked against libwebp itself in
/// `webp_decodes_the_same_through_libwebp`), and their durations as (ms, 1).
fn decode_webp(path: &Path) -> (Vec<Vec<u8>>, Vec<(u32, u32)>) {
    let mut frames =
        ripple_render::decode::webp::WebpFrames::parse(path, std::fs::read(path).unwrap()).expect("a WebP");
    let (mut rgb, mut delays) = (Vec::new(), Vec::new());
    while let Some(frame) = frames.next_frame(path).unwrap() {
        rgb.push(frame.rgba.chunks_exact(4).flat_map(|p| [p[0], p[1], p[2]]).collect());
        delays.push((frame.duration_ms, 1));
    }
    (rgb, delays)
}

/// The `fcTL` delays (num, den) and the `acTL` plays of an APNG, its colour type, and whether
/// it has a `tRNS` chunk.
fn apng_chunks(path: &Path) -> (Vec<(u16, u16)>, u32, png::ColorType, bool) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let plays = reader.info().animation_control.unwrap().num_plays;
    let colour = reader.info().color_type;
    let transparent = reader.info().trns.is_some();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let mut delays = Vec::new();
    while reader.next_frame(&mut buf).is_ok() {
        let control = reader.info().frame_control.unwrap();
        delays.push((control.delay_num, control.delay_den));
    }
    (delays, plays, colour, transparent)
}

/// A WebP's loop count (its `ANIM` chunk).
fn webp_loops(bytes: &[u8]) -> u16 {
    let at = bytes.windows(4).position(|w| w == b"ANIM").unwrap();
    u16::from_le_bytes([bytes[at + 12], bytes[at + 13]])
}

fn render(dir: &Path, args: &[&str]) {
    let mut all = vec!["scene.toml"];
    all.extend(args);
    let run = ripple(&all, dir);
    assert_eq!(run.code, 0, "{}", run.stderr);
}

#[test]
fn apng_frames_delays_and_loop_decode_to_the_exact_render() {
    for (name, body, indexed) in [("checker", CHECKER, true), ("tiles", TILES, false), ("lit", LIT, false)] {
        let dir = scene_dir(&format!("apng-{name}"), body);
        render(&dir, &["-o", "out.apng"]);
        let exact = render_rgb(body);
        let (frames, delays) = decode_animation(&dir.join("out.apng"));
        assert_eq!(frames.len(), exact.len(), "{name}");
        for (i, (got, want)) in frames.iter().zip(&exact).enumerate() {
            assert!(got == want, "{name}: frame {i} differs");
        }
        let (controls, plays, colour, transparent) = apng_chunks(&dir.join("out.apng"));
        // Unchanged pixels are transparent where some pixel value is free: a spare palette
        // index, or a colour the background lacks (no look).
        assert_eq!(transparent, name != "lit", "{name}");
        let fps = if name == "checker" { 30 } else { 25 };
        assert!(controls.iter().all(|&d| d == (1, fps)), "{name}: {controls:?}");
        assert!(delays.iter().all(|&(n, d)| u64::from(n) * u64::from(fps) == u64::from(d) * 1000), "{name}");
        // CHECKER plays once; LIT loops forever.
        assert_eq!(plays, u32::from(name == "checker"), "{name}");
        // Palette frames where the colours allow, RGB where a look makes new ones.
        let expected = if indexed { png::ColorType::Indexed } else { png::ColorType::Rgb };
        assert_eq!(colour, expected, "{name}");
    }
}

#[test]
fn apng_decodes_the_same_through_ffmpeg() {
    if !needs("apng_decodes_the_same_through_ffmpeg", &[Tool::Ffmpeg]) {
        return;
    }
    for (name, body) in [("checker", CHECKER), ("tiles", TILES), ("lit", LIT)] {
        let dir = scene_dir(&format!("apng-ffmpeg-{name}"), body);
        render(&dir, &["-o", "out.apng"]);
        let raw = Command::new("ffmpeg")
            .args(["-v", "error", "-i", "out.apng", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
            .current_dir(&dir)
            .output()
            .unwrap();
        assert!(raw.status.success(), "{}", String::from_utf8_lossy(&raw.stderr));
        assert!(raw.stdout == render_rgb(body).concat(), "{name}: ffmpeg decodes other frames");
    }
}

#[test]
fn webp_frames_durations_and_loop_decode_to_the_exact_render() {
    for (name, body) in [("checker", CHECKER), ("lit", LIT)] {
        let dir = scene_dir(&format!("webp-{name}"), body);
        render(&dir, &["-o", "out.webp"]);
        let exact = render_rgb(body);
        let (frames, delays) = decode_animation(&dir.join("out.webp"));
        // One frame per output frame, identical ones included.
        assert_eq!(frames.len(), exact.len(), "{name}");
        for (i, (got, want)) in frames.iter().zip(&exact).enumerate() {
            assert!(got == want, "{name}: frame {i} differs");
        }
        let fps: u64 = if name == "checker" { 30 } else { 25 };
        let m = |j: u64| (2000 * j + fps) / (2 * fps);
        let want: Vec<(u32, u32)> = (0..exact.len() as u64).map(|i| ((m(i + 1) - m(i)) as u32, 1)).collect();
        assert_eq!(delays, want, "{name}");
        if name == "checker" {
            // 33, 34, 33 ms: whole milliseconds, a second exactly every 30 frames.
            assert_eq!(&delays[..3], &[(33, 1), (34, 1), (33, 1)]);
        }
        let bytes = std::fs::read(dir.join("out.webp")).unwrap();
        assert_eq!(webp_loops(&bytes), u16::from(name == "checker"), "{name}");
        if needs("webp_frames_durations_and_loop_decode_to_the_exact_render (webpinfo)", &[Tool::Webpinfo]) {
            let info = Command::new("webpinfo").arg("out.webp").current_dir(&dir).output().unwrap();
            assert!(info.status.success(), "{}", String::from_utf8_lossy(&info.stdout));
        }
    }
}

/// Frames of a WebP as libwebp's animation decoder composes them, through Pillow (whose WebP
/// reader is libwebp): the caller has asked for [`Tool::PillowWebp`].
pub(crate) fn libwebp_frames(path: &Path) -> Vec<Vec<u8>> {
    let script = "import sys\nfrom PIL import Image, features\nassert features.check('webp')\n\
                  im = Image.open(sys.argv[1]); out = sys.stdout.buffer; i = 0\n\
                  while True:\n    try: im.seek(i)\n    except EOFError: break\n    \
                  out.write(im.convert('RGBA').tobytes()); i += 1\n";
    let run = Command::new("python3").args(["-c", script]).arg(path).output().expect("python3");
    assert!(run.status.success(), "Pillow on {}: {}", path.display(), String::from_utf8_lossy(&run.stderr));
    let bytes = std::fs::read(path).unwrap();
    let frames = ripple_render::decode::webp::WebpFrames::parse(path, bytes).unwrap();
    let (w, h) = frames.size();
    let canvas = w as usize * h as usize * 4;
    // Transparent pixels show black, as diff shows them.
    run.stdout
        .chunks_exact(canvas)
        .map(|f| f.chunks_exact(4).flat_map(|p| if p[3] == 0 { [0, 0, 0] } else { [p[0], p[1], p[2]] }).collect())
        .collect()
}

#[test]
fn webp_decodes_the_same_through_libwebp() {
    // Our frames blend (unchanged pixels transparent): libwebp, the reference, composes them to
    // exactly the render, and so does diff's compositor, on our files and on img2webp's.
    if !needs("webp_decodes_the_same_through_libwebp", &[Tool::PillowWebp, Tool::Img2webp]) {
        return;
    }
    let dir = scene_dir("webp-libwebp", LIT);
    render(&dir, &["-o", "out.webp"]);
    let theirs = libwebp_frames(&dir.join("out.webp"));
    let exact = render_rgb(LIT);
    assert_eq!(theirs.len(), exact.len());
    for (i, (got, want)) in theirs.iter().zip(&exact).enumerate() {
        assert!(got == want, "libwebp: frame {i} differs from the render");
    }
    let bytes = std::fs::read(dir.join("out.webp")).unwrap();
    assert!(bytes.windows(4).any(|w| w == b"ANMF"));
    render(&dir, &["-o", "frames/"]);
    let mut args: Vec<String> = vec!["-lossless".into(), "-d".into(), "40".into()];
    args.extend((0..exact.len()).map(|i| format!("frames/frame_{i:04}.png")));
    args.extend(["-o".into(), "lib.webp".into()]);
    let made = Command::new("img2webp").args(&args).current_dir(&dir).output().unwrap();
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    let ours = decode_webp(&dir.join("lib.webp")).0;
    let reference = libwebp_frames(&dir.join("lib.webp"));
    assert_eq!(ours.len(), reference.len());
    for (i, (a, b)) in ours.iter().zip(&reference).enumerate() {
        assert!(a == b, "img2webp's frame {i}: diff's compositor differs from libwebp");
    }
}

#[test]
fn a_still_is_the_exact_frame_and_stops_the_render_there() {
    let dir = scene_dir("still", LIT);
    render(&dir, &["-o", "still.png", "--frame", "7"]);
    let (w, h, rgb) = crate::support::read_png(&dir.join("still.png"));
    assert_eq!((w, h), (64, 48));
    assert!(rgb == render_rgb(LIT)[7], "the still is not frame 7");
    // With a manifest, the manifest still holds every frame.
    render(&dir, &["-o", "first.png", "--frame", "0", "--hashes", "still.txt", "-q"]);
    render(&dir, &["--hashes", "all.txt", "-q"]);
    assert_eq!(std::fs::read(dir.join("still.txt")).unwrap(), std::fs::read(dir.join("all.txt")).unwrap());
    let run = ripple(&["scene.toml", "-o", "first.png", "--frame", "0", "-f"], &dir);
    assert!(run.stderr.starts_with("wrote first.png ("), "{}", run.stderr);
    assert!(run.stderr.contains("): frame 0 of 12, 64×48, in "), "{}", run.stderr);
}

/// Runs the render with `args`, standard output captured (a pipe), and returns its bytes.
fn to_stdout(dir: &Path, args: &[&str]) -> Vec<u8> {
    let out = Command::new(env!("CARGO_BIN_EXE_ripple-render"))
        .arg("scene.toml")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("wrote standard output"), "{stderr}");
    out.stdout
}

#[test]
fn standard_output_carries_the_same_bytes_as_a_file() {
    let dir = scene_dir("stdout", CHECKER);
    for format in ["gif", "apng", "webp"] {
        let file = format!("out.{format}");
        render(&dir, &["-o", &file, "-q"]);
        let piped = to_stdout(&dir, &["-o", "-", "--format", format]);
        assert!(piped == std::fs::read(dir.join(&file)).unwrap(), "{format}: stdout differs from the file");
    }
    let piped = to_stdout(&dir, &["-o", "-", "--format", "png", "--frame", "3"]);
    render(&dir, &["-o", "still.png", "--frame", "3", "-q"]);
    assert!(piped == std::fs::read(dir.join("still.png")).unwrap());
    // Nothing was written under the name "-".
    assert!(!dir.join("-").exists());
    let run = ripple(&["scene.toml", "-o", "-"], &dir);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("needs --format"), "{}", run.stderr);
}

#[test]
fn standard_output_is_refused_when_it_is_a_terminal() {
    // A pseudo-terminal for standard output, made by python's pty module where there is one.
    let script = "import os, pty, sys\n\
        pid, fd = pty.fork()\n\
        if pid == 0:\n    os.execv(sys.argv[1], sys.argv[1:])\n\
        out = b''\n\
        while True:\n    try:\n        chunk = os.read(fd, 4096)\n    except OSError:\n        break\n    if not chunk:\n        break\n    out += chunk\n\
        _, status = os.waitpid(pid, 0)\n\
        sys.stdout.write(out.decode('utf-8', 'replace'))\n\
        sys.exit(os.waitstatus_to_exitcode(status))\n";
    if !needs("standard_output_is_refused_when_it_is_a_terminal", &[Tool::Python]) {
        return;
    }
    let dir = scene_dir("stdout-tty", CHECKER);
    let out = Command::new("python3")
        .args(["-c", script, env!("CARGO_BIN_EXE_ripple-render"), "scene.toml", "-o", "-", "--format", "gif"])
        .current_dir(&dir)
        .output()
        .expect("python3");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("standard output, which is a terminal"), "{text}");
}

/// A folder holding only `ffmpeg`, a shell script with `body`, for a PATH of its own.
fn fake_ffmpeg(dir: &Path, body: &str) -> PathBuf {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let path = bin.join("ffmpeg");
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    bin
}

/// Runs the render with `path` first on PATH (then the system's folders, for the fake's tools).
fn ripple_with_path(dir: &Path, path: &Path, args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ripple-render"))
        .arg("scene.toml")
        .args(args)
        .current_dir(dir)
        .env("PATH", format!("{}:/usr/bin:/bin", path.display()))
        .env_remove("RUST_BACKTRACE")
        .output()
        .unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn without_ffmpeg_a_video_is_refused_with_how_to_get_it() {
    let dir = scene_dir("no-ffmpeg", CHECKER);
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let without = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_ripple-render"))
            .arg("scene.toml")
            .args(args)
            .current_dir(&dir)
            .env("PATH", &empty)
            .output()
            .unwrap();
        (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    for name in ["out.mp4", "out.webm"] {
        let (code, stderr) = without(&["-o", name]);
        assert_eq!(code, 2, "{stderr}");
        let container = if name.ends_with("mp4") { "MP4" } else { "WebM" };
        assert!(
            stderr.starts_with(&format!(
                "error: writing {container} needs the ffmpeg program, and there is none on PATH"
            )),
            "{stderr}"
        );
        assert!(stderr.contains("hint: install ffmpeg (Debian/Ubuntu: apt-get install ffmpeg"), "{stderr}");
        assert!(!dir.join(name).exists());
    }
    // Everything else needs nothing.
    let (code, stderr) = without(&["-o", "out.webp"]);
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn a_failing_or_killed_ffmpeg_leaves_nothing_and_says_why() {
    let dir = scene_dir("bad-ffmpeg", &CHECKER.replace("frames = 14", "frames = 200"));
    std::fs::write(dir.join("keep.mp4"), b"precious").unwrap();
    let cases = [
        // Dies by a signal after reading a little.
        ("head -c 5000 > /dev/null\nkill -9 $$", "it was killed by signal 9"),
        // Refuses, as an ffmpeg without libx264 does.
        ("echo \"Unknown encoder 'libx264'\" >&2\nexit 1", "it exited with code 1): Unknown encoder 'libx264'"),
        // Reads everything, then fails.
        ("cat > /dev/null\necho 'Conversion failed!' >&2\nexit 69", "it exited with code 69): Conversion failed!"),
    ];
    for (body, said) in cases {
        let bin = fake_ffmpeg(&dir, body);
        for (target, force) in [("new.mp4", false), ("keep.mp4", true)] {
            let mut args = vec!["-o", target];
            if force {
                args.push("-f");
            }
            let (code, stderr) = ripple_with_path(&dir, &bin, &args);
            assert_eq!(code, 3, "{body}: {stderr}");
            assert!(stderr.starts_with("error: encoding failed: ffmpeg could not make the MP4 ("), "{stderr}");
            assert!(stderr.contains(said), "{body}: {stderr}");
            assert_eq!(stderr.matches("error:").count(), 1, "{stderr}");
        }
        assert!(!dir.join("new.mp4").exists(), "{body}: a half-written video appeared");
        assert_eq!(std::fs::read(dir.join("keep.mp4")).unwrap(), b"precious", "{body}: the old video changed");
        assert!(temporaries(&dir).is_empty(), "{body}: a temporary was left");
    }
}

#[test]
fn an_ffmpeg_that_writes_nothing_or_says_megabytes_fails_in_one_short_line() {
    let dir = scene_dir("empty-ffmpeg", CHECKER);
    std::fs::write(dir.join("keep.mp4"), b"precious").unwrap();
    // Reads every frame, says nothing, writes nothing, and claims success.
    let bin = fake_ffmpeg(&dir, "cat > /dev/null\nexit 0");
    for args in [&["-o", "new.mp4"][..], &["-o", "keep.mp4", "-f"], &["-o", "new.webm"]] {
        let (code, stderr) = ripple_with_path(&dir, &bin, args);
        assert_eq!(code, 3, "{args:?}: {stderr}");
        assert!(stderr.starts_with("error: encoding failed: ffmpeg could not make the "), "{stderr}");
        assert!(stderr.contains("(it exited with code 0 but wrote nothing)"), "{stderr}");
    }
    assert!(!dir.join("new.mp4").exists() && !dir.join("new.webm").exists());
    assert_eq!(std::fs::read(dir.join("keep.mp4")).unwrap(), b"precious");
    // The same on standard output, which cannot be measured but is counted.
    let out = Command::new(env!("CARGO_BIN_EXE_ripple-render"))
        .args(["scene.toml", "-o", "-", "--format", "mp4"])
        .current_dir(&dir)
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("(it exited with code 0 but wrote nothing)"), "{stderr}");
    // A stream that does get bytes is a success.
    let bin = fake_ffmpeg(&dir, "cat > /dev/null\necho video");
    let out = Command::new(env!("CARGO_BIN_EXE_ripple-render"))
        .args(["scene.toml", "-o", "-", "--format", "mp4", "-q"])
        .current_dir(&dir)
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.stdout, b"video\n");
    // Eight megabytes of messages, one line of them: the error keeps their end, briefly.
    let bin =
        fake_ffmpeg(&dir, "cat > /dev/null\nhead -c 8000000 /dev/zero | tr '\\0' x >&2\necho ' the end' >&2\nexit 1");
    let (code, stderr) = ripple_with_path(&dir, &bin, &["-o", "new.mp4"]);
    assert_eq!(code, 3, "{}", &stderr[..stderr.len().min(300)]);
    assert!(stderr.len() < 2000, "an error of {} bytes", stderr.len());
    assert!(stderr.trim_end().ends_with("xx the end"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

#[test]
fn a_wrapper_scripts_encoder_goes_with_the_render() {
    // An `ffmpeg` that runs the encoder as a child, as wrapper scripts do; the child's command
    // line carries a mark to find it by.
    let body = "[video]\nwidth = 97\nheight = 61\nfps = 25\nduration = 600\n[rain]\ndrops_per_second = 20\n";
    let dir = scene_dir("video-wrapper", body);
    let bin = fake_ffmpeg(&dir, "sh -c 'cat > /dev/null; sleep 30' ffmpeg-encoder-97x61\nexit 0");
    let alive = terminated_video_render(&dir, &bin, "long.mp4", "encoder-97x61");
    assert!(alive.is_empty(), "the wrapper's encoder is still running: {alive:?}");
}

/// ffprobe's `key=value` lines for the first video stream of `path`.
fn probe(path: &Path) -> String {
    let out = Command::new("ffprobe")
        .args(["-v", "error", "-count_frames", "-select_streams", "v:0"])
        .args(["-show_entries", "stream=codec_name,width,height,pix_fmt,r_frame_rate,nb_read_frames"])
        .args(["-of", "default=noprint_wrappers=1"])
        .arg(path)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// PSNR in dB of `got` against `want` (RGB bytes).
fn psnr(got: &[u8], want: &[u8]) -> f64 {
    let squares: f64 = got.iter().zip(want).map(|(&a, &b)| (f64::from(a) - f64::from(b)).powi(2)).sum();
    10.0 * (255.0f64.powi(2) * want.len() as f64 / squares.max(1e-9)).log10()
}

/// `frames` (RGB, `size`) converted to yuv420p and back by ffmpeg, uncompressed: the closest a
/// yuv420p video can come.
fn through_yuv420p(frames: &[Vec<u8>], (w, h): (u32, u32)) -> Vec<Vec<u8>> {
    let mut child = Command::new("ffmpeg")
        .args(["-v", "error", "-f", "rawvideo", "-pix_fmt", "rgb24", "-video_size", &format!("{w}x{h}")])
        .args(["-i", "-", "-vf", "format=yuv420p", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = frames.concat();
    let feeder = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().unwrap();
    feeder.join().unwrap().unwrap();
    out.stdout.chunks_exact((w * h * 3) as usize).map(<[u8]>::to_vec).collect()
}

#[test]
fn videos_have_every_frame_at_the_exact_rate_and_look_like_the_render() {
    if !needs("videos_have_every_frame_at_the_exact_rate_and_look_like_the_render", &[Tool::Ffmpeg, Tool::Ffprobe]) {
        return;
    }
    // A picture, as videos are made of (a checker's sharp colour edges are what yuv420p's
    // halved colour resolution cannot keep, at any quality).
    let picture = crate::support::root().join("scenes/lagoon.png");
    let body = CHECKER.replace("pattern = \"checker\"", &format!("image = {:?}", picture.display().to_string()));
    let dir = scene_dir("video", &body);
    let exact = render_rgb(&body);
    let ceiling = through_yuv420p(&exact, (61, 45));
    for (name, codec, coded) in [("out.mp4", "h264", (62, 46)), ("out.webm", "vp9", (61, 45))] {
        render(&dir, &["-o", name]);
        let info = probe(&dir.join(name));
        let want = format!(
            "codec_name={codec}\nwidth={}\nheight={}\npix_fmt=yuv420p\nr_frame_rate=30/1\nnb_read_frames=14\n",
            coded.0, coded.1
        );
        assert_eq!(info, want, "{name}");
        // Decoded, H.264's repeated column and row cut off, each frame close to the render.
        let raw = Command::new("ffmpeg")
            .args(["-v", "error", "-i", name, "-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
            .current_dir(&dir)
            .output()
            .unwrap();
        let (w, h) = (coded.0 as usize, coded.1 as usize);
        let frames: Vec<Vec<u8>> = raw
            .stdout
            .chunks_exact(w * h * 3)
            .map(|f| f.chunks_exact(w * 3).take(45).flat_map(|row| &row[..61 * 3]).copied().collect())
            .collect();
        assert_eq!(frames.len(), exact.len(), "{name}");
        for (i, ((got, want), best)) in frames.iter().zip(&exact).zip(&ceiling).enumerate() {
            // yuv420p keeps colour at half resolution: no encoder gets closer than that, and
            // ours must come within a dB or two of it.
            let (db, limit) = (psnr(got, want), psnr(best, want));
            assert!(db > limit - 2.0, "{name}: frame {i} at {db:.1} dB, yuv420p alone {limit:.1} dB");
        }
    }
    // Standard output: a fragmented MP4 and a WebM, both whole.
    for format in ["mp4", "webm"] {
        let bytes = to_stdout(&dir, &["-o", "-", "--format", format]);
        let path = dir.join(format!("piped.{format}"));
        std::fs::write(&path, bytes).unwrap();
        assert!(probe(&path).contains("nb_read_frames=14\n"), "{format}: {}", probe(&path));
    }
}

/// The process ids of running ffmpeg programs whose arguments hold `size` (`97x59`: a canvas no
/// other test uses, to tell this test's ffmpeg from the others').
fn ffmpeg_with_size(size: &str) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .flatten()
        .filter_map(|e| {
            let cmdline = String::from_utf8_lossy(&std::fs::read(e.path().join("cmdline")).ok()?).replace('\0', " ");
            let ours = cmdline.contains("ffmpeg") && cmdline.contains(size);
            ours.then(|| e.file_name().to_string_lossy().parse().ok()).flatten()
        })
        .collect()
}

/// Waits (up to 4 s) for an ffmpeg with `size` to run, and returns its process id.
fn wait_for_ffmpeg(size: &str) -> i32 {
    for _ in 0..200 {
        if let Some(&pid) = ffmpeg_with_size(size).first() {
            return pid;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    panic!("ffmpeg never started");
}

/// Renders `dir`'s scene into `out` with the ffmpeg in `bin` and, once an ffmpeg process whose
/// arguments hold `mark` runs, stops the render as a batch job would (SIGTERM); checks that the
/// render ended by that signal and left nothing, and returns the processes with `mark` still
/// running a moment later (killed, so that none outlives the test).
fn terminated_video_render(dir: &Path, bin: &Path, out: &str, mark: &str) -> Vec<i32> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ripple-render"))
        .args(["scene.toml", "-o", out, "-q"])
        .current_dir(dir)
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .spawn()
        .unwrap();
    wait_for_ffmpeg(mark);
    std::thread::sleep(std::time::Duration::from_millis(300));
    let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(std::os::unix::process::ExitStatusExt::signal(&status), Some(15));
    assert!(!dir.join(out).exists());
    assert!(temporaries(dir).is_empty());
    std::thread::sleep(std::time::Duration::from_millis(200));
    let alive = ffmpeg_with_size(mark);
    for &pid in &alive {
        let _ =
            rustix::process::kill_process(rustix::process::Pid::from_raw(pid).unwrap(), rustix::process::Signal::KILL);
    }
    alive
}

#[test]
fn an_interrupted_video_render_stops_ffmpeg_and_leaves_nothing() {
    // A size no other test uses, to find this render's ffmpeg among the processes.
    let body = "[video]\nwidth = 97\nheight = 59\nfps = 25\nduration = 600\n[rain]\ndrops_per_second = 20\n";
    let dir = scene_dir("video-interrupted", body);
    // An ffmpeg that would outlive the render if nobody stopped it: it reads the frames to the
    // end, then lingers (a real one finishes on its own soon after its input closes, which
    // would hide whether the render stops it).
    let bin = fake_ffmpeg(&dir, "cat > /dev/null\nsleep 30");
    // ffmpeg goes with it (a zombie awaiting its reaper has no arguments left, so does not count).
    let alive = terminated_video_render(&dir, &bin, "long.webm", "97x59");
    assert!(alive.is_empty(), "ffmpeg still running: {alive:?}");
}

#[test]
fn diff_reads_apng_and_webp_with_their_timing() {
    let dir = scene_dir("diff-formats", CHECKER);
    for name in ["out.gif", "out.apng", "out.webp"] {
        render(&dir, &["-o", name, "-q"]);
    }
    // 30 fps: the GIF's 3 and 4 cs, the WebP's 33 and 34 ms and the APNG's 1/30 s are the same
    // timing, each rounded its own way.
    for (a, b) in
        [("out.apng", "scene.toml"), ("out.webp", "scene.toml"), ("out.apng", "out.webp"), ("out.webp", "out.gif")]
    {
        let run = ripple(&["diff", a, b], &dir);
        assert_eq!(run.code, 0, "{a} vs {b}: {}", run.stdout);
        assert!(run.stdout.starts_with(&format!("same: {a} (A) and {b} (B): 14 frames compared")), "{}", run.stdout);
    }
    // The same frames at another rate differ in timing only.
    std::fs::write(dir.join("scene.toml"), CHECKER.replace("fps = 30", "fps = 25")).unwrap();
    render(&dir, &["-o", "slow.webp", "-q"]);
    let run = ripple(&["diff", "out.apng", "slow.webp"], &dir);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(run.stdout.contains("delay 1/30 s in A, 40 ms in B"), "{}", run.stdout);
    // A WebP that drifts: 33 ms every frame instead of 33, 34, 33.
    let mut bytes = std::fs::read(dir.join("out.webp")).unwrap();
    let mut at = 0;
    while let Some(found) = bytes[at..].windows(4).position(|w| w == b"ANMF") {
        let duration = at + found + 8 + 12;
        bytes[duration] = 33;
        at += found + 4;
    }
    std::fs::write(dir.join("drift.webp"), bytes).unwrap();
    let run = ripple(&["diff", "drift.webp", "out.apng"], &dir);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(run.stdout.contains("delay 33 ms in A, 1/30 s in B"), "{}", run.stdout);
}

/// A scene whose every rung of the size ladder is smaller than the one before.
const BUDGETED: &str = "[video]\nwidth = 96\nheight = 64\nfps = 20\nframes = 16\n[background]\npattern = \"tiles\"\n\
    [rain]\ndrops_per_second = 60\nseed = 2\n";

/// `frames` (RGB, `width` wide): every `step`-th, each side shrunk `scale` times by the mean of
/// each block, rounded half up (the rule docs/cli.md gives, computed here on its own).
fn reduce(frames: &[Vec<u8>], width: usize, step: usize, scale: usize) -> Vec<Vec<u8>> {
    let height = frames[0].len() / 3 / width;
    let kept = frames.iter().step_by(step);
    kept.map(|f| {
        let mut out = Vec::new();
        for by in (0..height).step_by(scale) {
            for bx in (0..width).step_by(scale) {
                for c in 0..3 {
                    let mut values = Vec::new();
                    for y in by..(by + scale).min(height) {
                        for x in bx..(bx + scale).min(width) {
                            values.push(u32::from(f[(y * width + x) * 3 + c]));
                        }
                    }
                    let (sum, n) = (values.iter().sum::<u32>(), values.len() as u32);
                    out.push(((2 * sum + n) / (2 * n)) as u8);
                }
            }
        }
        out
    })
    .collect()
}

/// The APNG and WebP ladder below the render as asked.
const EXACT_LADDER: &[&str] = &[
    "--effort max",
    "every other frame",
    "every third frame",
    "every other frame, half the canvas",
    "every third frame, half the canvas",
];

#[test]
fn a_size_budget_walks_down_the_ladder_one_rung_at_a_time() {
    let dir = scene_dir("max-size", BUDGETED);
    let exact = render_rgb(BUDGETED);
    let ladders: [(&str, &[&str]); 3] = [
        (
            "gif",
            &[
                "--effort max",
                "--lossy=40",
                "--lossy=80",
                "--lossy=120",
                "--lossy=200",
                "--lossy=200, 64 colours",
                "--lossy=200, 32 colours",
                "--lossy=200, 32 colours, every other frame",
                "--lossy=200, 16 colours, every other frame",
                "--lossy=200, 16 colours, every third frame",
                "--lossy=200, 32 colours, every other frame, half the canvas",
                "--lossy=200, 16 colours, every third frame, half the canvas",
            ],
        ),
        ("apng", EXACT_LADDER),
        (
            "webp",
            &[
                "--effort max",
                "lossy at --quality=90",
                "lossy at --quality=75",
                "lossy at --quality=50",
                "lossy at --quality=30",
                "lossy at --quality=20",
                "lossy at --quality=10",
                "lossy at --quality=10, every other frame",
                "lossy at --quality=10, every third frame",
                "lossy at --quality=10, every other frame, half the canvas",
                "lossy at --quality=10, every third frame, half the canvas",
            ],
        ),
    ];
    for (format, ladder) in ladders {
        let name = format!("out.{format}");
        render(&dir, &["-o", &name, "-q"]);
        let mut size = std::fs::metadata(dir.join(&name)).unwrap().len();
        // A budget of the file's own size is met as asked.
        let run = ripple(&["scene.toml", "-o", &name, "-f", "--max-size", &size.to_string()], &dir);
        assert!(run.stderr.contains(": as asked\n"), "{}", run.stderr);
        // Then one byte less each time: the next rung down.
        for rung in ladder {
            let budget = (size - 1).to_string();
            let run = ripple(&["scene.toml", "-o", &name, "-f", "--max-size", &budget], &dir);
            assert_eq!(run.code, 0, "{format} {rung}: {}", run.stderr);
            assert!(run.stderr.ends_with(&format!(": {rung}\n")), "{format}: expected {rung}: {}", run.stderr);
            let bytes = std::fs::read(dir.join(&name)).unwrap();
            assert!((bytes.len() as u64) < size, "{format} {rung}: {} bytes", bytes.len());
            size = bytes.len() as u64;
            // The same budget, the same bytes.
            let again = ripple(&["scene.toml", "-o", "again", "--format", format, "-f", "--max-size", &budget], &dir);
            assert_eq!(again.code, 0);
            assert!(std::fs::read(dir.join("again")).unwrap() == bytes, "{format} {rung}: not deterministic");
            let step = if rung.contains("every other") {
                2
            } else if rung.contains("every third") {
                3
            } else {
                1
            };
            let scale = if rung.contains("half") { 2 } else { 1 };
            let want = reduce(&exact, 96, step, scale);
            if format == "gif" {
                let gif = crate::support::decode_gif(&bytes);
                assert_eq!((gif.width, gif.height), (96 / scale, 64 / scale), "{rung}");
                assert_eq!(gif.frames.len(), want.len(), "{rung}");
                // 20 fps: 5 cs a frame, 10 for every other, 15 for every third (the last frame
                // standing for what is left); 80 cs in all either way.
                let (last, rest) = gif.delays.split_last().unwrap();
                assert!(rest.iter().all(|&d| usize::from(d) == 5 * step), "{rung}: {:?}", gif.delays);
                assert_eq!(gif.delays.iter().map(|&d| u32::from(d)).sum::<u32>(), 80, "{rung}: {:?}", gif.delays);
                assert!(usize::from(*last) <= 5 * step, "{rung}: {:?}", gif.delays);
                let colours: std::collections::HashSet<&[u8]> = gif.frames.iter().flat_map(|f| f.chunks(3)).collect();
                // A rung of fewer colours has fewer (the max effort keeps them all).
                if let Some(most) = rung.split(", ").find_map(|p| p.strip_suffix(" colours")?.parse::<usize>().ok()) {
                    assert!(colours.len() < most, "{rung}: {} colours", colours.len());
                }
            } else if rung.starts_with("lossy") {
                // A lossy WebP says so, and shows the reduced canvas (libwebp may merge frames
                // that came out alike, and its pixels are near the render's, not the same).
                assert!(String::from_utf8_lossy(&bytes).contains(" quality="), "{rung}: no label");
                std::fs::write(dir.join(format!("rung.{format}")), &bytes).unwrap();
                let (frames, _) = decode_animation(&dir.join(format!("rung.{format}")));
                assert!(!frames.is_empty() && frames.len() <= want.len(), "{rung}: {} frames", frames.len());
                assert_eq!(frames[0].len(), want[0].len(), "{rung}: another canvas");
            } else {
                std::fs::write(dir.join(format!("rung.{format}")), &bytes).unwrap();
                let (frames, delays) = decode_animation(&dir.join(format!("rung.{format}")));
                assert_eq!(frames.len(), want.len(), "{format} {rung}");
                assert!(frames == want, "{format} {rung}: frames differ from the reduced render");
                let ms = (50 * step) as u32;
                let (_, rest) = delays.split_last().unwrap();
                assert!(rest.iter().all(|&(n, d)| n == ms * d), "{format} {rung}: {delays:?}");
                let total: f64 = delays.iter().map(|&(n, d)| f64::from(n) / f64::from(d)).sum();
                assert!((total - 800.0).abs() < 1.0, "{format} {rung}: {delays:?}");
            }
        }
        // Below the last rung: nothing fits, nothing is written, the smallest size is named.
        let _ = std::fs::remove_file(dir.join(&name));
        let run = ripple(&["scene.toml", "-o", &name, "--max-size", &(size - 1).to_string()], &dir);
        assert_eq!(run.code, 2, "{}", run.stderr);
        let smallest = format!("the smallest reached is {} ({})", show(size), ladder.last().unwrap());
        assert!(run.stderr.contains(&smallest), "{smallest}: {}", run.stderr);
        assert!(!dir.join(&name).exists() && temporaries(&dir).is_empty());
    }
}

/// Sizes as the summary shows them: bytes, KiB, MiB with two significant decimals.
fn show(bytes: u64) -> String {
    ripple_render::base::units::show(bytes)
}

#[test]
fn a_size_budget_is_refused_where_it_does_not_apply() {
    let dir = scene_dir("max-size-refused", BUDGETED);
    for (args, said) in [
        (&["-o", "frames/", "--max-size", "1M"][..], "the output is PNG sequence"),
        (&["-o", "out.mp4", "--max-size", "1M"][..], "the output is MP4"),
        (&["-o", "out.gif", "--max-size", "1M", "--hashes", "h.txt"][..], "write the manifest in a run of its own"),
        (&["-o", "out.gif", "--max-size", "lots"][..], "expected a size of at least one byte, such as"),
    ] {
        let mut all = vec!["scene.toml"];
        all.extend(args);
        let run = ripple(&all, &dir);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains(said), "{args:?}: {}", run.stderr);
    }
}

#[test]
fn a_real_ffmpeg_killed_mid_render_leaves_nothing() {
    if !needs("a_real_ffmpeg_killed_mid_render_leaves_nothing", &[Tool::Ffmpeg]) {
        return;
    }
    // A size no other test uses, to find this render's ffmpeg among the processes.
    let body = "[video]\nwidth = 93\nheight = 57\nfps = 25\nduration = 600\n[rain]\ndrops_per_second = 20\n";
    let dir = scene_dir("video-ffmpeg-killed", body);
    let child = Command::new(env!("CARGO_BIN_EXE_ripple-render"))
        .args(["scene.toml", "-o", "long.mp4"])
        .current_dir(&dir)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = rustix::process::Pid::from_raw(wait_for_ffmpeg("94x58")).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    rustix::process::kill_process(pid, rustix::process::Signal::KILL).unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("ffmpeg could not make the MP4 (it was killed by signal 9)"), "{stderr}");
    assert!(!dir.join("long.mp4").exists() && temporaries(&dir).is_empty());
}

#[test]
fn apng_and_webp_take_up_to_100_fps_where_gif_stops_at_50() {
    let body = CHECKER.replace("fps = 30", "fps = 100");
    let dir = scene_dir("fps-100", &body);
    let run = ripple(&["scene.toml", "-o", "out.gif"], &dir);
    assert_eq!(run.code, 2, "{}", run.stderr);
    render(&dir, &["-o", "out.apng", "-q"]);
    render(&dir, &["-o", "out.webp", "-q"]);
    let (controls, ..) = apng_chunks(&dir.join("out.apng"));
    assert!(controls.iter().all(|&d| d == (1, 100)), "{controls:?}");
    let (frames, delays) = decode_animation(&dir.join("out.webp"));
    assert!(frames == render_rgb(&body));
    assert!(delays.iter().all(|&d| d == (10, 1)), "{delays:?}");
}

#[test]
fn output_options_without_an_output_are_refused() {
    let dir = scene_dir("no-output", CHECKER);
    for flag in [&["--frame", "0"][..], &["--format", "gif"][..]] {
        let mut args = vec!["scene.toml", "--hashes", "h.txt"];
        args.extend(flag);
        let run = ripple(&args, &dir);
        assert_eq!(run.code, 2, "{}", run.stderr);
        assert!(run.stderr.starts_with("error: --frame and --format describe the output, and there is no -o"));
        assert!(!dir.join("h.txt").exists());
    }
}

#[test]
fn apng_and_webp_bytes_do_not_depend_on_the_thread_count() {
    let dir = scene_dir("formats-threads", TILES);
    for name in ["out.apng", "out.webp"] {
        let bytes: Vec<Vec<u8>> = ["1", "3"]
            .iter()
            .map(|threads| {
                render(&dir, &["-o", name, "-f", "-q", "--threads", threads]);
                std::fs::read(dir.join(name)).unwrap()
            })
            .collect();
        assert!(bytes[0] == bytes[1], "{name}: other bytes on 3 threads");
    }
}
