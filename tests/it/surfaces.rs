//! Hostile input on the newer surfaces (issue #49): pipes in place of the files `check`,
//! `--accept-from` and `serve` read, a report that names places outside the project, flags as
//! people type them, lossy outputs at their edges, parts that lie about their frames, signals
//! during a check. Each refusal is one `error:` line naming the file or flag, exit 2, nothing
//! written.

#![cfg(unix)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::{Run, ripple, scratch, small_scenes};

/// `ripple-render ARGS` in `dir`, killed (and the test failed) if it runs past `limit`: a run
/// that blocks on a pipe must not hold the suite.
fn ripple_within(args: &[&str], dir: &Path, limit: Duration) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ripple-render"))
        .args(args)
        .current_dir(dir)
        .env_remove("CI")
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_STEP_SUMMARY")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{args:?} still ran after {limit:?}: it waits on something");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Makes a named pipe at `path`, in place of what was there.
fn fifo(path: &Path) {
    let _ = std::fs::remove_file(path);
    assert!(Command::new("mkfifo").arg(path).status().unwrap().success());
}

/// `check SCENES… REST…`.
fn check<'a>(scenes: &'a [String], rest: &[&'a str]) -> Vec<&'a str> {
    let mut words = vec!["check"];
    words.extend(scenes.iter().map(String::as_str));
    words.extend_from_slice(rest);
    words
}

const LIMIT: Duration = Duration::from_secs(30);

#[test]
fn pipes_in_place_of_references_and_kept_files_are_refused_unread() {
    let dir = scratch("surfaces-fifo");
    let scenes = small_scenes(&dir, "s", 3);
    assert_eq!(ripple(&check(&scenes, &["--refs", "refs", "--bless", "-q"]), &dir).code, 0);
    // A reference that is a pipe: its scene fails, named, and the check ends.
    fifo(&dir.join("refs/s1.gif"));
    let run = ripple_within(&check(&scenes, &["--refs", "refs", "--report", "r1"]), &dir, LIMIT);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let line = run.stdout.lines().find(|l| l.contains("s1.toml")).unwrap();
    assert!(line.contains("refs/s1.gif") && line.contains("named pipe"), "{line}");
    // A report that kept a would-be reference: its kept file, then the reference it would
    // replace, each a pipe in turn, is refused by name before anything is written.
    assert_eq!(ripple(&check(&scenes, &["--refs", "refs", "--bless=all", "-q"]), &dir).code, 1);
    std::fs::remove_file(dir.join("refs/s1.gif")).unwrap();
    assert_eq!(ripple(&check(&scenes, &["--refs", "refs", "--bless", "-q"]), &dir).code, 0);
    let edited = dir.join("s/s2.toml");
    std::fs::write(&edited, std::fs::read_to_string(&edited).unwrap().replace("radius = 3", "radius = 5")).unwrap();
    assert_eq!(ripple(&check(&scenes, &["--refs", "refs", "--report", "r2", "-q"]), &dir).code, 1);
    let kept = std::fs::read(dir.join("r2/pending/s2.gif")).unwrap();
    fifo(&dir.join("r2/pending/s2.gif"));
    let run = ripple_within(&["check", "--accept-from", "r2"], &dir, LIMIT);
    assert!(
        run.code == 2 && run.stderr.contains("r2/pending/s2.gif") && run.stderr.contains("named pipe"),
        "{}",
        run.stderr
    );
    std::fs::remove_file(dir.join("r2/pending/s2.gif")).unwrap();
    std::fs::write(dir.join("r2/pending/s2.gif"), &kept).unwrap();
    let reference = std::fs::read(dir.join("refs/s2.gif")).unwrap();
    fifo(&dir.join("refs/s2.gif"));
    let run = ripple_within(&["check", "--accept-from", "r2"], &dir, LIMIT);
    assert!(run.code == 2 && run.stderr.contains("refs/s2.gif") && run.stderr.contains("named pipe"), "{}", run.stderr);
    // Put back, it is accepted.
    std::fs::remove_file(dir.join("refs/s2.gif")).unwrap();
    std::fs::write(dir.join("refs/s2.gif"), &reference).unwrap();
    let run = ripple_within(&["check", "--accept-from", "r2"], &dir, LIMIT);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(std::fs::read(dir.join("refs/s2.gif")).unwrap() == kept);
}

/// A project of three scenes with references, s2 then edited, and the report of its check
/// (which keeps s2's would-be reference).
fn reported(name: &str) -> (std::path::PathBuf, Vec<String>) {
    let dir = scratch(name);
    let scenes = small_scenes(&dir, "s", 3);
    assert_eq!(ripple(&check(&scenes, &["--refs", "refs", "--bless", "-q"]), &dir).code, 0);
    let edited = dir.join("s/s2.toml");
    std::fs::write(&edited, std::fs::read_to_string(&edited).unwrap().replace("radius = 3", "radius = 5")).unwrap();
    assert_eq!(ripple(&check(&scenes, &["--refs", "refs", "--report", "report", "-q"]), &dir).code, 1);
    (dir, scenes)
}

#[test]
fn a_report_writes_nowhere_outside_the_project_and_keeps_only_what_bless_writes() {
    let (dir, _) = reported("surfaces-accept");
    let record = dir.join("report/check.json");
    let original = std::fs::read_to_string(&record).unwrap();
    let outside = scratch("surfaces-accept-outside");
    for refs in [outside.to_str().unwrap(), "../elsewhere", "refs/../../elsewhere", ""] {
        let edited = original.replace("\"refs\": \"refs\"", &format!("\"refs\": {}", serde_json::json!(refs)));
        assert_ne!(edited, original);
        std::fs::write(&record, edited).unwrap();
        let run = ripple(&["check", "--accept-from", "report"], &dir);
        assert!(run.code == 2 && run.stderr.contains("outside the working folder"), "{refs}: {}", run.stderr);
        assert!(run.stderr.contains("--refs DIR"), "{}", run.stderr);
    }
    assert!(std::fs::read_dir(&outside).unwrap().next().is_none(), "written outside");
    assert!(!dir.join("../elsewhere").exists());
    // Given on the command line, a folder is the user's choice.
    let run = ripple(&["check", "--accept-from", "report", "--refs", "refs"], &dir);
    assert_eq!(run.code, 0, "{}", run.stderr);
    std::fs::write(&record, &original).unwrap();
    // A kept file with bytes after its trailer, or padded to 900 MB (sparse: nothing is read
    // past the bound), is not what --bless writes.
    let kept = dir.join("report/pending/s2.gif");
    let bytes = std::fs::read(&kept).unwrap();
    let mut padded = bytes.clone();
    padded.extend_from_slice(&[0x21; 100]);
    std::fs::write(&kept, &padded).unwrap();
    let run = ripple(&["check", "--accept-from", "report", "--refs", "again"], &dir);
    assert!(run.code == 2 && run.stderr.contains("GIF trailer"), "{}", run.stderr);
    std::fs::write(&kept, &bytes).unwrap();
    std::fs::OpenOptions::new().write(true).open(&kept).unwrap().set_len(900 << 20).unwrap();
    let started = Instant::now();
    let run = ripple(&["check", "--accept-from", "report", "--refs", "again"], &dir);
    assert!(run.code == 2 && run.stderr.contains("s2.gif") && run.stderr.contains("most allowed"), "{}", run.stderr);
    assert!(started.elapsed() < Duration::from_secs(20));
    assert!(!dir.join("again").exists(), "nothing written");
}

#[test]
fn a_scene_whose_name_is_not_utf8_is_accepted_by_the_pages_own_command() {
    use std::os::unix::ffi::OsStrExt;
    let dir = scratch("surfaces-accept-bytes");
    let scenes = small_scenes(&dir, "s", 1);
    let odd = dir.join(std::ffi::OsStr::from_bytes(b"s/caf\xe9.toml"));
    std::fs::rename(dir.join(&scenes[0]), &odd).unwrap();
    let given = std::ffi::OsStr::from_bytes(b"s/caf\xe9.toml");
    let run_with = |extra: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_ripple-render"))
            .arg("check")
            .arg(given)
            .args(extra)
            .current_dir(&dir)
            .env_remove("CI")
            .output()
            .unwrap();
        out.status.code().unwrap()
    };
    assert_eq!(run_with(&["--refs", "refs", "--bless", "-q"]), 0);
    std::fs::write(&odd, std::fs::read_to_string(&odd).unwrap().replace("radius = 3", "radius = 5")).unwrap();
    assert_eq!(run_with(&["--refs", "refs", "--report", "report", "-q"]), 1);
    let page = std::fs::read_to_string(dir.join("report/index.html")).unwrap();
    let command = crate::support::regex_value(&page, "<code>ripple-render check --accept-from ").replace("&#39;", "'");
    let command = command.split('<').next().unwrap().to_string();
    assert!(command.contains("\\xe9"), "{command}");
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!("\"$0\" check --accept-from {command}"))
        .arg(env!("CARGO_BIN_EXE_ripple-render"))
        .current_dir(&dir)
        .env_remove("CI")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("accepted 1 reference"),
        "{command}: {stdout} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A reference is named after its scene as text (the byte that is not UTF-8 as U+FFFD).
    let named = |folder: &str| std::fs::read(dir.join(folder).join("caf\u{fffd}.gif")).unwrap();
    assert!(named("refs") == named("report/pending"));
}

#[test]
fn flags_take_their_values_as_people_type_them() {
    let dir = scratch("surfaces-flags");
    let scenes = small_scenes(&dir, "s", 1);
    let scene = scenes[0].as_str();
    let same = |a: &[&str], b: &[&str], out: &str| {
        let (first, second) = (format!("a-{out}"), format!("b-{out}"));
        let run = ripple(&[&[scene, "-o", &first, "-q"], a].concat(), &dir);
        assert_eq!(run.code, 0, "{a:?}: {}", run.stderr);
        let run = ripple(&[&[scene, "-o", &second, "-q"], b].concat(), &dir);
        assert_eq!(run.code, 0, "{b:?}: {}", run.stderr);
        assert!(std::fs::read(dir.join(first)).unwrap() == std::fs::read(dir.join(second)).unwrap(), "{a:?} {b:?}");
    };
    same(&["--quality", "60"], &["--quality=60"], "q.webp");
    same(&["--lossy", "80"], &["--lossy=80"], "l.gif");
    // Alone, at the end or before another flag, each keeps its default.
    same(&["--quality"], &["--quality=75"], "d.webp");
    same(&["--lossy", "-f"], &["--lossy=20", "-f"], "d.gif");
    // Before the scene, too.
    let run = ripple(&["--quality", "50", scene, "-o", "before.webp", "-q"], &dir);
    assert_eq!(run.code, 0, "{}", run.stderr);
    // Values out of range name the flag and what it takes, in one line, exit 2.
    for (args, flag, allowed) in [
        (vec![scene, "-o", "x.webp", "--quality", "500"], "--quality", "1..=100"),
        (vec![scene, "-o", "x.gif", "--lossy", "-3"], "--lossy", "1..=200"),
        (vec!["serve", scene, "--port", "-1"], "--port", "0..=65535"),
        (vec![scene, "-o", "x.gif", "--max-size", "-5"], "--max-size", "at least one byte"),
        (vec![scene, "-o", "x.gif", "--threads", "-2"], "--threads", "1..=1024"),
        (vec![scene, "-o", "x.png", "--frame", "-3"], "--frame", "from 0"),
    ] {
        let run = ripple(&args, &dir);
        assert_eq!(run.code, 2, "{args:?}");
        let first = run.stderr.lines().next().unwrap_or_default();
        assert!(
            first.starts_with("error:") && first.contains(flag) && first.contains(allowed),
            "{args:?}: {}",
            run.stderr
        );
    }
    assert!(!dir.join("x.webp").exists() && !dir.join("x.gif").exists());
}

#[test]
fn a_lossy_webp_of_one_frame_or_of_alike_frames_is_an_animation_diff_reads() {
    let dir = scratch("surfaces-lossy-still");
    for frames in [1, 5] {
        let body = format!("[video]\nwidth = 40\nheight = 30\nframes = {frames}\n[background]\npattern = \"tiles\"\n");
        let scene = format!("s{frames}.toml");
        std::fs::write(dir.join(&scene), body).unwrap();
        let out = format!("s{frames}.webp");
        assert_eq!(ripple(&[&scene, "-o", &out, "--quality", "90", "-q"], &dir).code, 0);
        let bytes = std::fs::read(dir.join(&out)).unwrap();
        assert!(bytes.windows(4).any(|w| w == b"ANIM") && bytes.windows(4).any(|w| w == b"ANMF"), "not an animation");
        assert_eq!(bytes.windows(4).filter(|w| *w == b"ANMF").count(), frames, "one frame for each of the render's");
        let run = ripple(&["diff", &out, &scene, "--min-psnr", "15", "--json"], &dir);
        assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
        let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
        assert_eq!(json["a"]["frames"], frames, "{json}");
    }
}

#[test]
fn a_canvas_past_libwebps_lossy_limit_is_refused_up_front_and_skipped_by_the_ladder() {
    let dir = scratch("surfaces-lossy-wide");
    let body = "[video]\nwidth = 16384\nheight = 8\nframes = 2\n[background]\npattern = \"tiles\"\n\
                [[stone]]\nat = 0\nx = 5\ny = 4\n";
    std::fs::write(dir.join("wide.toml"), body).unwrap();
    let run = ripple(&["wide.toml", "-o", "w.webp", "--quality"], &dir);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.starts_with("error: --quality=75") && run.stderr.contains("16383"), "{}", run.stderr);
    assert!(!dir.join("w.webp").exists());
    let run = ripple(&["wide.toml", "-o", "w.webp", "--max-size", "10K"], &dir);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.contains("half the canvas"), "{}", run.stderr);
}

#[test]
fn a_part_resealed_without_a_frame_is_refused_by_its_count() {
    let dir = scratch("surfaces-join-count");
    let scenes = small_scenes(&dir, "s", 1);
    let scene = scenes[0].as_str();
    for k in ["1/2", "2/2"] {
        let out = format!("p{}.gif", &k[..1]);
        assert_eq!(ripple(&[scene, "-o", &out, "--frames", k, "-q"], &dir).code, 0);
    }
    // The second part without its last frame, sealed again as a part is sealed: its seal holds,
    // its label still says every frame.
    let path = dir.join("p2.gif");
    let bytes = std::fs::read(&path).unwrap();
    let seal = bytes.windows(19).rposition(|w| w == b"ripple-render seal=").unwrap() - 3;
    let last_frame = bytes[..seal].windows(2).rposition(|w| w == [0x21, 0xf9]).unwrap();
    let mut cut = bytes[..last_frame].to_vec();
    cut.push(0x3b);
    std::fs::write(&path, &cut).unwrap();
    let mut file = std::fs::OpenOptions::new().read(true).write(true).open(&path).unwrap();
    ripple_render::encode::seal::seal(&mut file, ripple_render::encode::seal::Container::Gif).unwrap();
    drop(file);
    let run = ripple(&["join", "p1.gif", "p2.gif", "-o", "whole.gif"], &dir);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("p2.gif") && run.stderr.contains("holds"), "{}", run.stderr);
    assert!(!dir.join("whole.gif").exists(), "a joined file of the wrong length was written");
}

#[test]
fn ctrl_c_early_in_a_short_check_ends_it_by_the_signal() {
    let dir = scratch("surfaces-check-signal");
    std::fs::create_dir_all(dir.join("s")).unwrap();
    let scenes: Vec<String> = (0..2).map(|k| format!("s/c{k}.toml")).collect();
    for (k, s) in scenes.iter().enumerate() {
        let body = format!(
            "[video]\nwidth = 320\nheight = 240\nframes = 120\n[background]\npattern = \"tiles\"\n\
             [rain]\ndrops_per_second = 40\nseed = {k}\n"
        );
        std::fs::write(dir.join(s), body).unwrap();
    }
    // How long the whole check takes, to send the signal within its first tenth.
    let started = Instant::now();
    assert_eq!(ripple(&check(&scenes, &["--refs", "timing", "--bless", "-q"]), &dir).code, 0);
    let whole = started.elapsed();
    let mut child = Command::new(env!("CARGO_BIN_EXE_ripple-render"))
        .args(check(&scenes, &["--refs", "refs", "--report", "report", "--junit", "j.xml", "-q"]))
        .env_remove("CI")
        .current_dir(&dir)
        .spawn()
        .unwrap();
    std::thread::sleep((whole / 10).max(Duration::from_millis(30)));
    assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
    let status = child.wait().unwrap();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(2),
        "{status:?} (the check took {whole:?})"
    );
    assert!(!dir.join("report").exists() && !dir.join("j.xml").exists());
}
