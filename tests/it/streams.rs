//! Inputs and standard streams as batch scripts meet them: endless inputs, special files as
//! images, headers that claim huge sizes, and pipes closed on either end.

use std::io::{Read, Write};
use std::process::{Command, Stdio};

use crate::support::{png_claiming, ripple, scene_dir};

const SMALL: &str = "[video]\nwidth = 24\nheight = 16\nfps = 25\nframes = 5\n[[stone]]\nat = 0\nx = 12\ny = 8\n";

fn binary() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ripple-render"));
    command.env_remove("RUST_BACKTRACE");
    command
}

#[test]
fn endless_scenes_are_refused_at_the_size_limit() {
    let dir = scene_dir("endless", SMALL);
    let run = ripple(&["/dev/zero", "-o", "out.gif"], &dir);
    assert_eq!(run.code, 2);
    assert!(run.stderr.starts_with("error: cannot read scene /dev/zero: it holds more than 16777216 bytes"));
    // An endless pipe on standard input: read to the limit, then refused; the writer sees the
    // pipe close.
    let mut child = binary()
        .args(["plan", "/dev/stdin"])
        .current_dir(&dir)
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let block = b"# a comment line, again and again\n".repeat(1000);
        let mut written = 0u64;
        while stdin.write_all(&block).is_ok() {
            written += block.len() as u64;
        }
        written
    });
    let mut stderr = String::new();
    child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(2), "{stderr}");
    assert!(stderr.contains("it holds more than 16777216 bytes"), "{stderr}");
    let written = writer.join().unwrap();
    assert!(written < 64 << 20, "read {written} bytes of an endless pipe");
    // A scene that is a pipe and ends is read like a file.
    let mut child = binary()
        .args(["plan", "/dev/stdin", "--json"])
        .current_dir(&dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(SMALL.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("{\"width\":24,"));
}

#[test]
fn a_background_that_is_not_a_file_is_named_for_what_it_is() {
    let dir = scene_dir("special-background", "");
    assert!(Command::new("mkfifo").arg(dir.join("pipe.png")).status().unwrap().success());
    for (image, says) in [
        ("/dev/zero", "/dev/zero: it is a character device, not an image file"),
        ("pipe.png", "pipe.png: it is a named pipe (FIFO), not an image file"),
        (".", "it is a folder, not an image"),
    ] {
        let scene = format!("{SMALL}[background]\nimage = \"{image}\"\n");
        std::fs::write(dir.join("scene.toml"), scene).unwrap();
        for command in [vec!["scene.toml", "-o", "out.gif"], vec!["plan", "scene.toml"]] {
            let run = ripple(&command, &dir);
            assert_eq!(run.code, 2, "{image}: {}", run.stderr);
            assert!(run.stderr.contains(says), "{image}: {}", run.stderr);
            assert!(!run.stderr.contains("empty"), "{image}: {}", run.stderr);
        }
    }
}

#[test]
fn diff_refuses_huge_claims_from_headers_at_once() {
    let dir = scene_dir("huge-claims", SMALL);
    assert_eq!(ripple(&["scene.toml", "-o", "ok.gif", "-q"], &dir).code, 0);
    // A GIF whose screen claims 65535×65535, with one 1×1 frame.
    let mut gif = b"GIF89a\xff\xff\xff\xff\x80\x00\x00".to_vec();
    gif.extend_from_slice(&[0; 6]);
    gif.extend_from_slice(b"\x2c\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02\x4c\x01\x00\x3b");
    std::fs::write(dir.join("huge.gif"), gif).unwrap();
    let run = ripple(&["diff", "huge.gif", "ok.gif"], &dir);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.starts_with("error: huge.gif: it claims 65535×65535 = 4294836225 pixels"), "{}", run.stderr);
    // A PNG sequence whose frame claims 100000×100000.
    std::fs::create_dir(dir.join("huge")).unwrap();
    std::fs::write(dir.join("huge/frame_0000.png"), png_claiming(100_000, 100_000)).unwrap();
    let run = ripple(&["diff", "huge", "ok.gif"], &dir);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("it claims 100000×100000 = 10000000000 pixels"), "{}", run.stderr);
    // Special files are not read as renders.
    let run = ripple(&["diff", "/dev/zero", "ok.gif"], &dir);
    assert_eq!(run.code, 2);
    assert!(run.stderr.starts_with("error: /dev/zero: it is a character device: diff compares files and folders"));
}

#[test]
fn closed_pipes_end_quietly_and_full_streams_are_errors() {
    let dir = scene_dir("closed-pipes", SMALL);
    // A render whose stderr nobody reads still succeeds and writes its output.
    let mut child =
        binary().args(["scene.toml", "-o", "out.gif"]).current_dir(&dir).stderr(Stdio::piped()).spawn().unwrap();
    drop(child.stderr.take());
    assert_eq!(child.wait().unwrap().code(), Some(0));
    assert_eq!(crate::support::decode_gif(&std::fs::read(dir.join("out.gif")).unwrap()).frames.len(), 5);
    // A failing render with nobody reading stderr: its exit code alone says so.
    let mut child =
        binary().args(["nowhere.toml", "-o", "x.gif"]).current_dir(&dir).stderr(Stdio::piped()).spawn().unwrap();
    drop(child.stderr.take());
    assert_eq!(child.wait().unwrap().code(), Some(2));
    // `diff --json | head -c 100`: the verdict stays the exit code, with nothing on stderr.
    let checker = "[background]\npattern = \"checker\"\n";
    std::fs::write(dir.join("scene.toml"), format!("{SMALL}{checker}")).unwrap();
    assert_eq!(ripple(&["scene.toml", "-o", "out.gif", "-q", "-f"], &dir).code, 0);
    std::fs::write(dir.join("scene.toml"), format!("{}{checker}", SMALL.replace("x = 12", "x = 6"))).unwrap();
    assert_eq!(ripple(&["scene.toml", "-o", "other.gif", "-q"], &dir).code, 0);
    for (args, code) in [
        (vec!["diff", "out.gif", "other.gif", "--json"], 1),
        (vec!["plan", "scene.toml", "--events"], 0),
        (vec!["--help"], 0),
    ] {
        let mut child =
            binary().args(&args).current_dir(&dir).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        let mut head = [0u8; 100];
        child.stdout.take().unwrap().read_exact(&mut head).unwrap();
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(code), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        assert!(out.stderr.is_empty(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
    // A standard output that cannot be written is a plain error.
    for args in [vec!["plan", "scene.toml"], vec!["diff", "out.gif", "other.gif"]] {
        let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
        let out = binary().args(&args).current_dir(&dir).stdout(full).output().unwrap();
        assert_eq!(out.status.code(), Some(3), "{args:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            "error: cannot write standard output: No space left on device\n",
            "{args:?}"
        );
    }
}

#[test]
fn a_webp_on_standard_output_is_staged_on_disk_not_in_memory() {
    // A WebP puts its size first, so it is finished before it is streamed; held in memory it
    // grew with the output, outside the memory budget. It is made in a scratch file instead:
    // one with no name in the temporary folder, holding the whole WebP when it is copied out.
    let body = "[background]\npattern = \"tiles\"\n[video]\nwidth = 160\nheight = 120\nfps = 25\nframes = 30\n\
                [rain]\ndrops_per_second = 200\nradius = 3\n";
    let dir = scene_dir("webp-stdout-scratch", body);
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let mut child = binary()
        .args(["scene.toml", "-o", "-", "--format", "webp", "-q"])
        .current_dir(&dir)
        .env("TMPDIR", &tmp)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    // Nothing is read until the render blocks writing into the full pipe: by then the WebP is
    // finished. Its open files then include the scratch file, in the temporary folder.
    let (wchan, fds) = (format!("/proc/{}/wchan", child.id()), format!("/proc/{}/fd", child.id()));
    let mut scratch = None;
    for _ in 0..6000 {
        if std::fs::read_to_string(&wchan).is_ok_and(|w| w.contains("pipe_write")) {
            scratch = std::fs::read_dir(&fds).unwrap().flatten().find_map(|fd| {
                let target = std::fs::read_link(fd.path()).ok()?;
                target.starts_with(&tmp).then(|| std::fs::metadata(fd.path()).map(|m| m.len()).unwrap_or(0))
            });
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let mut out = Vec::new();
    std::io::Read::read_to_end(child.stdout.as_mut().unwrap(), &mut out).unwrap();
    assert!(child.wait().unwrap().success());
    assert!(out.len() > 256 << 10, "the output is only {} bytes: the pipe never filled", out.len());
    let scratch = scratch.expect("no scratch file in the temporary folder while the WebP was copied out");
    assert_eq!(scratch, out.len() as u64, "the scratch file holds the whole WebP");
    // It had no name (or lost it at once): nothing is left behind.
    assert!(std::fs::read_dir(&tmp).unwrap().next().is_none(), "a scratch file was left in {}", tmp.display());
}

#[test]
fn a_scene_from_standard_input_finds_its_pictures_from_the_working_folder() {
    let dir = scene_dir("stdin-relative", "");
    let rgb: Vec<u8> = (0..16 * 12 * 3).map(|i| (i * 7 % 256) as u8).collect();
    crate::support::write_png(&dir.join("picture.png"), 16, 12, &rgb);
    let scene = "[background]\nimage = \"picture.png\"\n[video]\nframes = 3\n";
    let run = |picture_dir: &std::path::Path| {
        let mut child = binary()
            .args(["/dev/stdin", "-o", "out.gif", "-f", "-q"])
            .current_dir(picture_dir)
            .stdin(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(scene.as_bytes()).unwrap();
        let out = child.wait_with_output().unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (code, stderr) = run(&dir);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(dir.join("out.gif").exists());
    // Elsewhere, the error names the path as given and where it was looked for.
    let elsewhere = dir.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let (code, stderr) = run(&elsewhere);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains(
            "no such file: picture.png (the scene was read from a stream: a relative path starts at the current folder)"
        ),
        "{stderr}"
    );
}
