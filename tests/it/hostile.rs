//! Hostile input, as one table (issue #5): every case must end with its exit code and one clear
//! message — file, line:column where there is one, the key, the value, what is allowed — and
//! must leave nothing at the output path, an existing output byte-identical, and no temporary.
//!
//! Positions and "allowed" texts below come from the scene text and §2, not from the
//! program's output.

use std::path::Path;

use crate::support::scratch;
use crate::support::{png_claiming, ripple, temporaries};
use crate::tools::{Tool, needs};

/// One hostile run.
struct Case {
    name: String,
    /// `scene.toml`'s bytes.
    scene: Vec<u8>,
    /// Other files in the case's folder.
    files: Vec<(&'static str, Vec<u8>)>,
    /// Arguments; `SCENE` and `OUT` are the scene and the output.
    args: Vec<&'static str>,
    /// The output path the run must not create or damage.
    output: &'static str,
    /// Whether to also run with an existing output (and `--force`, so that only the hostile
    /// input can stop the run).
    prefill: bool,
    code: i32,
    /// Texts stderr must hold, in this order.
    expect: Vec<String>,
}

fn case(name: &str, scene: impl Into<Vec<u8>>, code: i32, expect: &[&str]) -> Case {
    Case {
        name: name.to_string(),
        scene: scene.into(),
        files: Vec::new(),
        args: vec!["SCENE", "-o", "OUT"],
        output: "out.gif",
        prefill: true,
        code,
        expect: expect.iter().map(|s| s.to_string()).collect(),
    }
}

/// A scene error: exit 2, `scene.toml:LINE:COL: KEY = VALUE`, then what is allowed.
fn located(name: &str, scene: &str, at: (u32, u32), key_value: &str, allowed: &str) -> Case {
    let place = format!("error: scene.toml:{}:{}: {key_value}", at.0, at.1);
    case(name, scene, 2, &[&place, allowed])
}

/// A valid scene around one `[video]` line and extra tables (`frames` is on line 2).
fn video(line: &str, rest: &str) -> String {
    format!("[video]\nframes = 2\nwidth = 40\nheight = 30\n{line}\n{rest}")
}

/// A small, valid, many-coloured PNG.
fn picture() -> Vec<u8> {
    let (w, h) = (40u32, 30u32);
    let rgb: Vec<u8> = (0..w * h * 3).map(|i| (i * 37 % 251) as u8).collect();
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, w, h);
    encoder.set_color(png::ColorType::Rgb);
    encoder.write_header().unwrap().write_image_data(&rgb).unwrap();
    out
}

/// A PNG of `width`×`height` 16-bit RGBA zeros: tiny on disk, huge decoded.
fn bomb(width: u32, height: u32) -> Vec<u8> {
    let path = scratch("hostile-bomb").join("bomb.png");
    let file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    let mut encoder = png::Encoder::new(file, width, height);
    encoder.set_color(png::ColorType::Rgba);
    encoder.set_depth(png::BitDepth::Sixteen);
    encoder.set_compression(png::Compression::Fastest);
    let mut writer = encoder.write_header().unwrap().into_stream_writer().unwrap();
    let row = vec![0u8; width as usize * 8];
    for _ in 0..height {
        std::io::Write::write_all(&mut writer, &row).unwrap();
    }
    writer.finish().unwrap();
    std::fs::read(path).unwrap()
}

const IMAGE: &str = "[video]\nframes = 2\nwidth = 40\nheight = 30\n[background]\nimage = \"bg.png\"\n";
/// Where `image = "bg.png"` puts its value in [`IMAGE`].
const IMAGE_AT: &str = "error: scene.toml:6:9: background.image = \"bg.png\": bg.png: ";
const IMAGE_MISSING: &str = "error: scene.toml:6:9: background.image = \"bg.png\": no such file: bg.png (a relative path \
                             starts at the scene's folder, here the current folder)";

fn with_image(name: &str, image: Vec<u8>, expect: &[&str]) -> Case {
    let mut c = case(name, IMAGE, 2, &[IMAGE_AT]);
    c.expect.extend(expect.iter().map(|s| s.to_string()));
    c.files.push(("bg.png", image));
    c
}

fn cases() -> Vec<Case> {
    let stone = |line: &str| video("", &format!("[[stone]]\nat = 0\nx = 5\ny = 5\n{line}\n"));
    let swipe = |line: &str| video("", &format!("[[swipe]]\nfrom = 0\nuntil = 1\n{line}\n"));
    let rain = |line: &str| video("", &format!("[rain]\ndrops_per_second = 5\n{line}\n"));
    let mut cases = vec![
        // The scene file as text.
        case(
            "unterminated string",
            video("[background]\ncolor = \"#fff", ""),
            2,
            &["scene.toml:6:", "invalid TOML", "`\"`"],
        ),
        case("duplicate key", "[video]\nframes = 2\nframes = 3\n", 2, &["scene.toml:3:1", "duplicate key"]),
        case("NUL byte", "[video]\nframes = 2\u{0}\n", 2, &["scene.toml:2:11", "NUL"]),
        case("not UTF-8", b"[video]\n# caf\xe9\nframes = 2\n".to_vec(), 2, &["scene.toml:2:6", "UTF-8"]),
        case("empty file", "", 2, &["scene.toml:1:1", "missing video length", "video.duration", "video.frames"]),
        case(
            "over the size limit",
            format!("[video]\nframes = 2\n#{}\n", " ".repeat(16 << 20)),
            2,
            &["scene.toml", "16777216"],
        ),
        case("deep nesting", format!("[video]\nframes = 1\nx = {}\n", "[".repeat(100_000)), 2, &["scene.toml:3:"]),
        // Types, NaN and infinity.
        located("string for an int", &video("fps = \"fast\"", ""), (5, 7), "video.fps = \"fast\"", "integer"),
        located("float for an int", &video("fps = 25.0", ""), (5, 7), "video.fps = 25.0", "integer"),
        located("not a bool", &video("loop = \"yes\"", ""), (5, 8), "video.loop = \"yes\"", "true or false"),
        located(
            "table for an array",
            format!("stone = 5\n{}", video("", "")).as_str(),
            (1, 9),
            "stone = 5",
            "[[stone]]",
        ),
        located(
            "a swipe point of three",
            &swipe("path = [[1, 2, 3]]"),
            (9, 9),
            "swipe[0].path[0] = [1, 2, 3]",
            "[x, y]",
        ),
        located("NaN", "[video]\nduration = nan\n", (2, 12), "video.duration = nan", "finite"),
        located(
            "infinity",
            &stone("radius = 2\n[water]\nrefraction = inf"),
            (12, 14),
            "water.refraction = inf",
            "finite",
        ),
        located("minus infinity", &stone("").replace("at = 0", "at = -inf"), (7, 6), "stone[0].at = -inf", "finite"),
        // Every range of §2.
        located("width too small", "[video]\nframes = 2\nwidth = 2\n", (3, 9), "video.width = 2", "3..=16384"),
        located(
            "height too large",
            "[video]\nframes = 2\nheight = 16385\n",
            (3, 10),
            "video.height = 16385",
            "3..=16384",
        ),
        located(
            "canvas too large",
            "[video]\nframes = 2\nwidth = 16384\nheight = 8193\n",
            (4, 10),
            "video.height = 8193",
            "width·height ≤ 8192·8192 = 67108864",
        ),
        located("fps zero", &video("fps = 0", ""), (5, 7), "video.fps = 0", "1..=100"),
        located("fps too high", &video("fps = 101", ""), (5, 7), "video.fps = 101", "1..=100"),
        located("GIF fps", &video("fps = 60", ""), (5, 7), "video.fps = 60", "50"),
        located("no frames", "[video]\nframes = 0\n", (2, 10), "video.frames = 0", "1..=1000000"),
        located("too many frames", "[video]\nframes = 1000001\n", (2, 10), "video.frames = 1000001", "1..=1000000"),
        located(
            "duration under a frame",
            "[video]\nduration = 0.01\n",
            (2, 12),
            "video.duration = 0.01",
            "1..=1000000 frames",
        ),
        located("negative start", &video("start = -1", ""), (5, 9), "video.start = -1", "≥ 0"),
        located("start too late", &video("start = 1e9", ""), (5, 9), "video.start = 1e9", "10000000"),
        located(
            "damping shift 0",
            &video("", "[water]\ndamping_shift = 0\n"),
            (7, 17),
            "water.damping_shift = 0",
            "1..=15",
        ),
        located(
            "steps 17",
            &video("", "[water]\nsteps_per_frame = 17\n"),
            (7, 19),
            "water.steps_per_frame = 17",
            "1..=16",
        ),
        located(
            "refraction 16.5",
            &video("", "[water]\nrefraction = 16.5\n"),
            (7, 14),
            "water.refraction = 16.5",
            "0..=16",
        ),
        located("stone off the canvas", &stone("").replace("x = 5", "x = 40"), (8, 5), "stone[0].x = 40", "0..=39"),
        located("stone radius 0", &stone("radius = 0"), (10, 10), "stone[0].radius = 0", "1..=256"),
        located("stone weight", &stone("weight = 16385"), (10, 10), "stone[0].weight = 16385", "1..=16384"),
        located("negative stone time", &stone("").replace("at = 0", "at = -0.5"), (7, 6), "stone[0].at = -0.5", "≥ 0"),
        located(
            "swipe ends before it starts",
            &swipe("path = [[1, 1]]").replace("until = 1", "until = 0.5").replace("from = 0", "from = 2"),
            (8, 9),
            "swipe[0].until = 0.5",
            "from",
        ),
        located("empty swipe path", &swipe("path = []"), (9, 8), "swipe[0].path = []", "at least one [x, y] point"),
        located(
            "swipe point too far",
            &swipe("path = [[65537, 0]]"),
            (9, 10),
            "swipe[0].path[0][0] = 65537",
            "-65536..=65536",
        ),
        located(
            "too much rain",
            &rain("").replace("= 5", "= 100001"),
            (7, 20),
            "rain.drops_per_second = 100001",
            "0..=100000",
        ),
        located(
            "rain range reversed",
            &rain("radius = [3, 1]"),
            (8, 10),
            "rain.radius = [3, 1]",
            "lo must not exceed hi",
        ),
        located("negative seed", &rain("seed = -1"), (8, 8), "rain.seed = -1", "0..=9223372036854775807"),
        located("rain stops before it starts", &rain("from = 3\nuntil = 1"), (9, 9), "rain.until = 1", "from"),
        located(
            "damping shift 16",
            &video("", "[[damping]]\nat = 1\nshift = 16\n"),
            (8, 9),
            "damping[0].shift = 16",
            "1..=15",
        ),
        located(
            "bad colour",
            &video("", "[background]\ncolor = \"#12345\"\n"),
            (7, 9),
            "background.color = \"#12345\"",
            "#rrggbb",
        ),
        located("bad fit", &video("", "[background]\nfit = \"zoom\"\n"), (7, 7), "background.fit = \"zoom\"", "cover"),
        located("bad model", &video("", "[water]\nmodel = \"wave\"\n"), (7, 9), "water.model = \"wave\"", "classic"),
        located(
            "empty image path",
            &video("", "[background]\nimage = \"\"\n"),
            (7, 9),
            "background.image = \"\"",
            "is empty",
        ),
        // The length: both or neither.
        located(
            "duration and frames",
            "[video]\nframes = 2\nduration = 1\n",
            (3, 12),
            "video.duration = 1",
            "not both",
        ),
        case("no length", "[video]\nfps = 10\n", 2, &["scene.toml:1:1", "video.duration", "video.frames"]),
        // Unknown keys.
        case(
            "unknown key, near miss",
            stone("radus = 3"),
            2,
            &["scene.toml:10:1", "stone[0].radus", "did you mean `radius`"],
        ),
        case(
            "unknown key, no near miss",
            video("banana = 1", ""),
            2,
            &["scene.toml:5:1", "video.banana", "allowed keys"],
        ),
        case("unknown table", video("", "[audio]\nvolume = 1\n"), 2, &["scene.toml:6:2", "audio", "allowed"]),
        // The background image.
        case("image missing", IMAGE, 2, &[IMAGE_MISSING]),
        with_image("image empty", Vec::new(), &["empty"]),
        with_image("not an image", b"just some text, not a picture".to_vec(), &["cannot decode it", "PNG signature"]),
        with_image("claims 100000×100000", png_claiming(100_000, 100_000), &["100000×100000", "limited to 67108864"]),
        with_image("decompression bomb", bomb(8000, 8000), &["8000×8000", "decode budget of 256 MiB", "--max-memory"]),
    ];
    // Corrupt: one byte of the pixel data flipped (the chunk checksum no longer matches).
    let mut corrupt = picture();
    let data = corrupt.windows(4).position(|w| w == b"IDAT").unwrap() + 8;
    corrupt[data] ^= 0x55;
    cases.push(with_image("corrupt image data", corrupt, &["cannot decode it"]));
    // Truncated at many lengths: within the signature, the header, the data, before the end.
    let whole = picture();
    for keep in [1, 7, 8, 20, 33, 40, whole.len() / 2, whole.len() - 13] {
        cases.push(with_image(&format!("truncated to {keep} bytes"), whole[..keep].to_vec(), &[""]));
    }
    // Output paths.
    let small = video("", "");
    let output = |name: &str, args: Vec<&'static str>, out: &'static str, prefill: bool, expect: &[&str]| {
        let mut c = case(name, small.clone(), 2, expect);
        (c.args, c.output, c.prefill) = (args, out, prefill);
        c
    };
    cases.extend([
        output(
            "unknown extension",
            vec!["SCENE", "-o", "OUT"],
            "out.mov",
            true,
            &["out.mov", ".gif", ".webm", "--format"],
        ),
        output(
            "unknown --format",
            vec!["SCENE", "-o", "OUT", "--format", "mov"],
            "out.gif",
            true,
            &["mov", "gif, png, apng, webp, mp4, webm"],
        ),
        output(
            "--format against the path",
            vec!["SCENE", "-o", "OUT", "--format", "mp4"],
            "out.gif",
            true,
            &["--format mp4 disagrees with out.gif", "hint: name the file out.mp4"],
        ),
        output(
            "a still without --frame",
            vec!["SCENE", "-o", "OUT"],
            "still.png",
            true,
            &["still.png names one still PNG", "--frame N", "-o still.apng", "-o still/"],
        ),
        output(
            "a frame past the end",
            vec!["SCENE", "-o", "OUT", "--frame", "2"],
            "still.png",
            true,
            &["--frame 2", "0..=1"],
        ),
        output("--frame with a GIF", vec!["SCENE", "-o", "OUT", "--frame", "0"], "out.gif", true, &["--frame", "GIF"]),
        output(
            "output folder missing",
            vec!["SCENE", "-o", "OUT"],
            "no/such/out.gif",
            false,
            &["no/such", "does not exist"],
        ),
        output("output unwritable", vec!["SCENE", "-o", "OUT"], "/proc/out.gif", false, &["/proc/out.gif", "/proc"]),
        output(
            "output is the scene",
            vec!["SCENE", "-o", "scene.toml", "--format", "gif"],
            "scene.toml",
            false,
            &["scene.toml", "input"],
        ),
        output("threads 0", vec!["SCENE", "-o", "OUT", "--threads", "0"], "out.gif", true, &["--threads", "0"]),
        output(
            "bad memory size",
            vec!["SCENE", "-o", "OUT", "--max-memory", "lots"],
            "out.gif",
            true,
            &["lots", "512M"],
        ),
        output(
            "over the memory budget",
            vec!["SCENE", "-o", "OUT", "--max-memory", "1M"],
            "out.gif",
            true,
            &["estimated", "budget of 1.0 MiB", "--max-memory"],
        ),
    ]);
    let mut same = case("output is the background", IMAGE, 2, &["bg.png", "input"]);
    (same.args, same.output, same.prefill) = (vec!["SCENE", "-o", "bg.png", "--frame", "0", "-f"], "bg.png", false);
    same.files.push(("bg.png", picture()));
    cases.push(same);
    cases
}

/// Writes every case that is a scene alone (rendered with `-o OUT`, refused with exit 2) into a
/// folder of its own under `dir`: `scene.toml`, its files, and `expect.json` (its name and the
/// texts its message must hold, in order, without the command line's `error: `). The Python
/// package's tests give each to the package (tests/it/python.rs). Returns how many.
pub fn export(dir: &Path) -> usize {
    // A GIF's own limit (its frame rate) is the output's, not the scene's: arrays have none.
    let scene_alone =
        |c: &Case| c.code == 2 && c.args == ["SCENE", "-o", "OUT"] && c.output == "out.gif" && c.name != "GIF fps";
    let scenes: Vec<Case> = cases().into_iter().filter(scene_alone).collect();
    for (index, case) in scenes.iter().enumerate() {
        let folder = dir.join(format!("{index:03}"));
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("scene.toml"), &case.scene).unwrap();
        for (name, bytes) in &case.files {
            std::fs::write(folder.join(name), bytes).unwrap();
        }
        let texts: Vec<&str> = case.expect.iter().map(|t| t.strip_prefix("error: ").unwrap_or(t)).collect();
        let expect = serde_json::json!({ "name": case.name, "texts": texts });
        std::fs::write(folder.join("expect.json"), expect.to_string()).unwrap();
    }
    scenes.len()
}

/// Runs one case, with no output present or with one (which must stay as it was).
fn run(case: &Case, existing: Option<&[u8]>, index: usize) -> Result<(), String> {
    std::panic::catch_unwind(|| check(case, existing, index)).map_err(|e| {
        e.downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default()
    })
}

fn check(case: &Case, existing: Option<&[u8]>, index: usize) {
    let dir = scratch(&format!("hostile-{index}-{}", existing.is_some()));
    std::fs::write(dir.join("scene.toml"), &case.scene).unwrap();
    for (name, bytes) in &case.files {
        std::fs::write(dir.join(name), bytes).unwrap();
    }
    let target = dir.join(case.output);
    let before = target.exists().then(|| std::fs::read(&target).unwrap());
    if let Some(bytes) = existing {
        std::fs::write(&target, bytes).unwrap();
    }
    let mut args: Vec<&str> = case.args.iter().map(|a| if *a == "SCENE" { "scene.toml" } else { a }).collect();
    for a in &mut args {
        if *a == "OUT" {
            *a = case.output;
        }
    }
    if existing.is_some() && !args.contains(&"-f") {
        args.push("-f");
    }
    let result = ripple(&args, &dir);
    let what = format!("case {index} \"{}\"{}", case.name, if existing.is_some() { " (existing output)" } else { "" });
    assert_eq!(result.code, case.code, "{what}: {}", result.stderr);
    // One message: a single error line (the scene line, caret and hints may follow).
    assert_eq!(result.stderr.matches("error:").count(), 1, "{what}:\n{}", result.stderr);
    assert!(result.stderr.starts_with("error: "), "{what}:\n{}", result.stderr);
    assert!(result.stderr.lines().count() <= 8, "{what}: too long:\n{}", result.stderr);
    let mut rest = result.stderr.as_str();
    for expected in &case.expect {
        let at = rest.find(expected.as_str());
        assert!(at.is_some(), "{what}: expected {expected:?} in:\n{}", result.stderr);
        rest = &rest[at.unwrap() + expected.len()..];
    }
    match (existing, before) {
        (Some(bytes), _) => assert_eq!(std::fs::read(&target).unwrap(), bytes, "{what}: the output changed"),
        (None, Some(bytes)) => assert_eq!(std::fs::read(&target).unwrap(), bytes, "{what}: an input changed"),
        (None, None) => assert!(!target.exists(), "{what}: {} appeared", target.display()),
    }
    let parent = target.parent().filter(|p| p.is_dir()).unwrap_or(&dir);
    assert!(temporaries(parent).is_empty() && temporaries(&dir).is_empty(), "{what}: a temporary was left");
}

#[test]
fn hostile_inputs_are_refused_cleanly() {
    let cases = cases();
    assert!(cases.len() >= 40, "only {} cases", cases.len());
    let mut failures = Vec::new();
    for (index, case) in cases.iter().enumerate() {
        failures.extend(run(case, None, index).err());
        if case.prefill {
            failures.extend(run(case, Some(b"precious bytes".as_slice()), index).err());
        }
    }
    assert!(failures.is_empty(), "{} of {} runs failed:\n\n{}", failures.len(), cases.len(), failures.join("\n\n"));
    // And an existing output without --force: refused, untouched.
    let dir = scratch("hostile-existing");
    std::fs::write(dir.join("scene.toml"), video("", "")).unwrap();
    std::fs::write(dir.join("out.gif"), b"precious").unwrap();
    let result = ripple(&["scene.toml", "-o", "out.gif"], &dir);
    assert_eq!(result.code, 2);
    assert!(result.stderr.contains("already exists"), "{}", result.stderr);
    assert_eq!(std::fs::read(dir.join("out.gif")).unwrap(), b"precious");
    assert!(temporaries(&dir).is_empty());
}

/// A full disk, or a file size limit, mid-write: one clear error, exit 3, the old output intact,
/// no temporary left. `ulimit -f` works anywhere; a tiny tmpfs needs root (else it is skipped).
#[cfg(unix)]
#[test]
fn a_full_disk_is_a_clear_error() {
    let dir = scratch("disk-full");
    let scene = "[video]\nwidth = 160\nheight = 120\nframes = 40\n[background]\npattern = \"tiles\"\n\
                 [rain]\ndrops_per_second = 30\n";
    std::fs::write(dir.join("scene.toml"), scene).unwrap();
    let check = |dir: &Path, run: std::process::Output, output: &str, what: &str| {
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(3), "{what}: {stderr}");
        assert!(stderr.starts_with(&format!("error: cannot write {output}: ")), "{what}: {stderr}");
        assert!(stderr.contains("hint: no space left for the output"), "{what}: {stderr}");
        assert_eq!(std::fs::read(dir.join(output)).unwrap(), b"precious", "{what}");
        assert!(temporaries(dir).is_empty(), "{what}: {:?}", temporaries(dir));
    };
    // One block (512 bytes in POSIX sh, 1 KiB in bash): less than either file needs.
    for (output, flag) in [("out.gif", "-o"), ("hashes.txt", "--hashes")] {
        std::fs::write(dir.join(output), b"precious").unwrap();
        let script = format!("ulimit -f 1 && exec \"$0\" scene.toml {flag} {output} -f -q");
        let run = std::process::Command::new("sh")
            .args(["-c", &script, env!("CARGO_BIN_EXE_ripple-render")])
            .current_dir(&dir)
            .output()
            .unwrap();
        check(&dir, run, output, &format!("ulimit -f, {output}"));
    }
    // A real full disk: a 64 KiB tmpfs.
    if !needs("a_full_disk_is_a_clear_error (a real full disk)", &[Tool::Tmpfs]) {
        return;
    }
    let disk = dir.join("disk");
    std::fs::create_dir_all(&disk).unwrap();
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
        .arg(&disk)
        .status()
        .is_ok_and(|s| s.success());
    assert!(mounted, "mounting a tmpfs worked once but not here");
    std::fs::copy(dir.join("scene.toml"), disk.join("scene.toml")).unwrap();
    for output in ["out.gif", "frames"] {
        std::fs::write(disk.join(output), b"precious").unwrap();
        let run = std::process::Command::new(env!("CARGO_BIN_EXE_ripple-render"))
            .args(["scene.toml", "-o", output, "--format", if output == "frames" { "png" } else { "gif" }, "-f", "-q"])
            .current_dir(&disk)
            .output()
            .unwrap();
        let outcome = std::panic::catch_unwind(|| check(&disk, run, output, &format!("tmpfs, {output}")));
        let _ = std::fs::remove_file(disk.join(output));
        if let Err(panic) = outcome {
            let _ = std::process::Command::new("umount").arg(&disk).status();
            std::panic::resume_unwind(panic);
        }
    }
    let _ = std::process::Command::new("umount").arg(&disk).status();
}
