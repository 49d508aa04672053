//! The command line as users run it: exit codes, messages, outputs appearing whole or not at all.

use std::path::Path;
use std::process::Command;

use crate::support::{decode_gif, png_claiming, read_png, ripple, root, scene_dir, temporaries};

const SMALL: &str = "[video]\nwidth = 24\nheight = 16\nfps = 30\nframes = 7\n[background]\ncolor = \"#000\"\n[[stone]]\nat = 0\nx = 12\ny = 8\n";

#[test]
fn help_lists_usage_and_exit_codes() {
    let run = ripple(&["--help"], &root());
    assert_eq!(run.code, 0);
    for needle in ["Usage: ripple-render", "plan", "--output", "--force", "--quiet", "--format", "Exit codes:"] {
        assert!(run.stdout.contains(needle), "help lacks {needle}:\n{}", run.stdout);
    }
    assert_eq!(ripple(&[], &root()).code, 2);
    assert_eq!(ripple(&["scene.toml"], &root()).code, 2, "-o is required");
}

/// What `--help` and the man page say of the lossy flags is what the code does: the GIF's bound
/// per channel and both levels taken when the value is left out (a help text once said N/4 where
/// the code took N/10).
#[test]
fn help_states_the_lossy_bounds_the_code_uses() {
    use ripple_render::encode::gif::{DEFAULT_LOSSY, LEVELS_PER_CHANNEL_STEP};
    use ripple_render::encode::webp::vp8::DEFAULT_QUALITY;
    let help = ripple(&["--help"], &root()).stdout;
    let man = ripple(&["man"], &root()).stdout;
    for text in [&help, &man] {
        let said = |needle: String| assert!(text.contains(&needle), "lacks {needle:?}:\n{text}");
        said(format!("(each channel within N/{LEVELS_PER_CHANNEL_STEP})"));
        said(format!("{DEFAULT_LOSSY} when N is left out"));
        said(format!("{DEFAULT_QUALITY} when Q is left out"));
    }
    // The values the flags take when left out are those constants too: the label says so.
    let dir = scene_dir("lossy_defaults", SMALL);
    for (flag, out, word) in [
        ("--lossy", "out.gif", format!("lossy={DEFAULT_LOSSY}")),
        ("--quality", "out.webp", format!("quality={DEFAULT_QUALITY}")),
    ] {
        let run = ripple(&["scene.toml", "-o", out, flag, "-q"], &dir);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let bytes = std::fs::read(dir.join(out)).unwrap();
        assert!(bytes.windows(word.len()).any(|w| w == word.as_bytes()), "{out} does not say {word}");
    }
}

#[test]
fn renders_a_gif_with_exact_delays_and_a_loop() {
    let dir = scene_dir("gif", SMALL);
    let run = ripple(&["scene.toml", "-o", "out.gif"], &dir);
    assert_eq!(run.code, 0, "{}", run.stderr);
    // Piped stderr: no progress bar, just the summary.
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    // The summary gives the output's size: the file's own.
    let size = std::fs::metadata(dir.join("out.gif")).unwrap().len();
    let shown = if size < 1024 { format!("{size} bytes") } else { format!("{:.1} KiB", size as f64 / 1024.0) };
    assert!(run.stderr.starts_with(&format!("wrote out.gif ({shown}): 7 frames, 24×16")), "{}", run.stderr);
    let gif = decode_gif(&std::fs::read(dir.join("out.gif")).unwrap());
    assert_eq!((gif.width, gif.height, gif.frames.len()), (24, 16, 7));
    assert_eq!(gif.delays, vec![3, 4, 3, 3, 4, 3, 3]);
    assert_eq!(gif.loops, Some(gif::Repeat::Infinite));
    assert!(temporaries(&dir).is_empty());
}

#[test]
fn loop_false_writes_no_loop_extension() {
    let dir = scene_dir("noloop", &SMALL.replace("frames = 7", "frames = 2\nloop = false"));
    assert_eq!(ripple(&["scene.toml", "-o", "out.gif", "-q"], &dir).code, 0);
    let bytes = std::fs::read(dir.join("out.gif")).unwrap();
    assert!(!bytes.windows(11).any(|w| w == b"NETSCAPE2.0"));
    assert_eq!(decode_gif(&bytes).loops, Some(gif::Repeat::Finite(0)));
    let dir = scene_dir("loop", &SMALL.replace("frames = 7", "frames = 2"));
    assert_eq!(ripple(&["scene.toml", "-o", "out.gif", "-q"], &dir).code, 0);
    assert!(std::fs::read(dir.join("out.gif")).unwrap().windows(11).any(|w| w == b"NETSCAPE2.0"));
}

#[test]
fn renders_a_png_sequence_that_matches_the_gif() {
    let dir = scene_dir("png", SMALL);
    let run = ripple(&["scene.toml", "-o", "frames/", "--quiet"], &dir);
    assert_eq!((run.code, run.stderr.as_str()), (0, ""));
    let names: Vec<String> = {
        let mut n: Vec<String> = std::fs::read_dir(dir.join("frames"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        n.sort();
        n
    };
    let expected: Vec<String> = (0..7).map(|i| format!("frame_{i:04}.png")).collect();
    assert_eq!(names, expected);
    // A one-colour background has an exact palette, so the GIF must show the same pixels.
    assert_eq!(ripple(&["scene.toml", "-o", "out.gif", "-q"], &dir).code, 0);
    let gif = decode_gif(&std::fs::read(dir.join("out.gif")).unwrap());
    for (i, frame) in gif.frames.iter().enumerate() {
        let (w, h, rgb) = read_png(&dir.join("frames").join(&names[i]));
        assert_eq!((w, h), (24, 16));
        assert_eq!(&rgb, frame, "frame {i}");
    }
    // --format png with a path that does not say so.
    assert_eq!(ripple(&["scene.toml", "-o", "seq", "--format", "png", "-q"], &dir).code, 0);
    assert!(dir.join("seq/frame_0006.png").exists());
}

/// Reads a PNG's colour type and its pixels expanded to RGB (a palette PNG through its palette).
fn read_png_expanded(path: &Path) -> (png::ColorType, Vec<u8>) {
    let mut decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    decoder.set_transformations(png::Transformations::EXPAND);
    let mut reader = decoder.read_info().unwrap();
    let stored = reader.info().color_type;
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!(info.color_type, png::ColorType::Rgb, "{} expands to RGB", path.display());
    buf.truncate(info.buffer_size());
    (stored, buf)
}

#[test]
fn indexed_png_shows_the_same_pixels_where_the_palette_is_exact() {
    // A background of six colours in diagonal stripes, refracted by rain.
    let scene = "[video]\nwidth = 48\nheight = 32\nframes = 6\n[background]\nimage = \"stripes.png\"\n\
                 [rain]\ndrops_per_second = 50\nseed = 4\n";
    let dir = scene_dir("indexed-png", scene);
    let stripes: Vec<u8> = (0..48 * 32).flat_map(|i| [((i % 48 + i / 48) % 6 * 40) as u8, 90, 200]).collect();
    crate::support::write_png(&dir.join("stripes.png"), 48, 32, &stripes);
    assert_eq!(ripple(&["scene.toml", "-o", "rgb/", "-q"], &dir).code, 0);
    let run = ripple(&["scene.toml", "-o", "indexed/", "-q", "--indexed-png"], &dir);
    // A picture under the default look gets a hint toward one that reads as water; nothing else.
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.lines().all(|line| line.starts_with("hint: the look and refraction")), "{}", run.stderr);
    for i in 0..6 {
        let name = format!("frame_{i:04}.png");
        let (rgb_type, rgb) = read_png_expanded(&dir.join("rgb").join(&name));
        let (indexed_type, indexed) = read_png_expanded(&dir.join("indexed").join(&name));
        assert_eq!((rgb_type, indexed_type), (png::ColorType::Rgb, png::ColorType::Indexed));
        assert_eq!(indexed, rgb, "{name}");
    }
    // Too many colours for a palette: RGB frames, and a warning that says so.
    let many = "[video]\nwidth = 20\nheight = 20\nframes = 2\n[background]\nimage = \"many.png\"\n\
                [[stone]]\nat = 0\nx = 10\ny = 10\n";
    let dir = scene_dir("indexed-png-many", many);
    // 400 pixels, 400 colours.
    let pixels: Vec<u8> = (0..20 * 20).flat_map(|i| [(i % 20 * 12) as u8, (i / 20 * 12) as u8, 7]).collect();
    crate::support::write_png(&dir.join("many.png"), 20, 20, &pixels);
    let run = ripple(&["scene.toml", "-o", "frames/", "-q", "--indexed-png"], &dir);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.starts_with("warning: --indexed-png: the background has more than 256 colours"),
        "{}",
        run.stderr
    );
    assert_eq!(read_png_expanded(&dir.join("frames/frame_0001.png")).0, png::ColorType::Rgb);
}

#[test]
fn the_same_scene_gives_the_same_bytes() {
    let dir = scene_dir("same", &std::fs::read_to_string(root().join("tests/golden/scenes/rain.toml")).unwrap());
    std::fs::copy(root().join("tests/golden/scenes/koi.png"), dir.join("koi.png")).unwrap();
    assert_eq!(ripple(&["scene.toml", "-o", "a.gif", "-q"], &dir).code, 0);
    assert_eq!(ripple(&["scene.toml", "-o", "b.gif", "-q"], &dir).code, 0);
    assert_eq!(std::fs::read(dir.join("a.gif")).unwrap(), std::fs::read(dir.join("b.gif")).unwrap());
}

#[test]
fn existing_output_needs_force() {
    let dir = scene_dir("force", SMALL);
    std::fs::write(dir.join("out.gif"), b"precious").unwrap();
    let run = ripple(&["scene.toml", "-o", "out.gif"], &dir);
    assert_eq!(run.code, 2);
    assert_eq!(run.stderr, "error: the output file out.gif already exists\nhint: pass --force (-f) to replace it\n");
    assert_eq!(std::fs::read(dir.join("out.gif")).unwrap(), b"precious");
    assert_eq!(ripple(&["scene.toml", "-o", "out.gif", "--force", "-q"], &dir).code, 0);
    assert_eq!(decode_gif(&std::fs::read(dir.join("out.gif")).unwrap()).frames.len(), 7);

    // A non-empty folder likewise; an empty one is simply used.
    std::fs::create_dir(dir.join("full")).unwrap();
    std::fs::write(dir.join("full/keep.txt"), b"x").unwrap();
    let run = ripple(&["scene.toml", "-o", "full/"], &dir);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("the output folder full already exists"), "{}", run.stderr);
    assert!(dir.join("full/keep.txt").exists());
    // Even with --force, only a folder of frames is replaced (tests/it/outputs.rs).
    assert_eq!(ripple(&["scene.toml", "-o", "full/", "-f", "-q"], &dir).code, 2);
    std::fs::remove_file(dir.join("full/keep.txt")).unwrap();
    std::fs::write(dir.join("full/frame_0099.png"), b"x").unwrap();
    assert_eq!(ripple(&["scene.toml", "-o", "full/", "-f", "-q"], &dir).code, 0);
    assert!(!dir.join("full/frame_0099.png").exists() && dir.join("full/frame_0000.png").exists());
    std::fs::create_dir(dir.join("empty")).unwrap();
    assert_eq!(ripple(&["scene.toml", "-o", "empty", "-q"], &dir).code, 0);
    assert!(dir.join("empty/frame_0006.png").exists());
    assert!(temporaries(&dir).is_empty());
}

#[test]
fn bad_scenes_get_one_located_message_and_no_output() {
    let cases: &[(&str, &str)] = &[
        (
            "[video]\nframes = 2\n[[stone]]\nat = 0\nx = 1\ny = 1\nradus = 3\n",
            "error: scene.toml:7:1: unknown key `stone[0].radus`",
        ),
        (
            "[video]\nframes = 2\nfps = \"fast\"\n",
            "error: scene.toml:3:7: video.fps = \"fast\" is a string: expected an integer in 1..=100",
        ),
        ("[video]\nduration = nan\n", "error: scene.toml:2:12: video.duration = nan is not a finite number"),
        (
            "[video]\nframes = 2\n[water]\ndamping_shift = 16\n",
            "error: scene.toml:4:17: water.damping_shift = 16 is out of range: allowed 1..=15",
        ),
        ("[video]\nfps = 10\n", "error: scene.toml:1:1: missing video length"),
        ("[video]\nframes = 2\nduration = 1\n", "error: scene.toml:3:12: video.duration = 1 conflicts"),
        ("[video]\nframes = 2\nfps = 60\n", "error: scene.toml:3:7: video.fps = 60 is too high for GIF output"),
        ("[video\nframes = 2\n", "error: scene.toml:1:7: invalid TOML"),
    ];
    for (i, (body, expected)) in cases.iter().enumerate() {
        let dir = scene_dir(&format!("bad{i}"), body);
        let run = ripple(&["scene.toml", "-o", "out.gif"], &dir);
        assert_eq!(run.code, 2, "case {i}: {}", run.stderr);
        assert!(run.stderr.starts_with(expected), "case {i}: expected {expected:?}, got:\n{}", run.stderr);
        // The offending line is shown with a caret.
        assert!(run.stderr.contains(" | ") && run.stderr.contains('^'), "case {i}:\n{}", run.stderr);
        assert!(!dir.join("out.gif").exists(), "case {i}");
        assert!(temporaries(&dir).is_empty(), "case {i}");
    }
    let dir = scene_dir("hint", cases[0].0);
    assert!(ripple(&["scene.toml", "-o", "out.gif"], &dir).stderr.ends_with("hint: did you mean `radius`?\n"));
    // fps 60 is fine for PNG output.
    let dir = scene_dir("fps60", cases[6].0);
    assert_eq!(ripple(&["scene.toml", "-o", "frames/", "-q"], &dir).code, 0);
}

#[test]
fn missing_or_broken_inputs() {
    let dir = scene_dir("inputs", "[video]\nframes = 2\n[background]\nimage = \"pics/pool.png\"\n");
    let run = ripple(&["scene.toml", "-o", "out.gif"], &dir);
    assert_eq!(run.code, 2);
    // The message points at the key and names the path that was tried, and where it starts.
    assert!(
        run.stderr.starts_with(
            "error: scene.toml:4:9: background.image = \"pics/pool.png\": no such file: pics/pool.png \
             (a relative path starts at the scene's folder, here the current folder)\n"
        ),
        "{}",
        run.stderr
    );
    let run = ripple(&["inputs/scene.toml", "-o", "inputs/out.gif"], dir.parent().unwrap());
    assert!(
        run.stderr.starts_with(
            "error: inputs/scene.toml:4:9: background.image = \"pics/pool.png\": no such file: inputs/pics/pool.png \
             (a relative path starts at the scene's folder, inputs)\n"
        ),
        "{}",
        run.stderr
    );

    std::fs::create_dir(dir.join("pics")).unwrap();
    std::fs::write(dir.join("pics/pool.png"), b"this is not a picture").unwrap();
    let run = ripple(&["scene.toml", "-o", "out.gif"], &dir);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("pics/pool.png: cannot decode it"), "{}", run.stderr);
    // A scene in another folder resolves the image against its own folder.
    let run = ripple(&["inputs/scene.toml", "-o", "inputs/out.gif"], dir.parent().unwrap());
    assert!(run.stderr.contains(": inputs/pics/pool.png: cannot decode it"), "{}", run.stderr);
    std::fs::write(dir.join("pics/pool.png"), b"").unwrap();
    assert_eq!(ripple(&["scene.toml", "-o", "out.gif"], &dir).code, 2);

    let run = ripple(&["nowhere.toml", "-o", "out.gif"], &dir);
    assert_eq!(run.code, 2);
    assert!(run.stderr.starts_with("error: cannot read scene nowhere.toml: "), "{}", run.stderr);
    assert!(!dir.join("out.gif").exists());
}

#[test]
fn a_budget_below_the_program_itself_suggests_only_a_larger_budget() {
    let dir = scene_dir("tiny-budget", SMALL);
    let run = ripple(&["scene.toml", "-o", "out.gif", "--max-memory", "1M"], &dir);
    assert_eq!(run.code, 2);
    // A 24×16 canvas is not what is over: no "make the canvas smaller".
    assert!(
        run.stderr.contains("hint: raise the budget with --max-memory 17M (the program itself takes 16 MiB)\n"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("canvas smaller"), "{}", run.stderr);
    // When the canvas is what is over, it says so.
    let big = SMALL.replace("width = 24\nheight = 16", "width = 8192\nheight = 8192");
    std::fs::write(dir.join("scene.toml"), big).unwrap();
    let run = ripple(&["scene.toml", "-o", "out.gif", "--max-memory", "64M"], &dir);
    assert!(run.stderr.contains(", or make the canvas smaller"), "{}", run.stderr);
}

#[test]
fn bad_output_paths() {
    let dir = scene_dir("outputs", SMALL);
    let run = ripple(&["scene.toml", "-o", "out.mov"], &dir);
    assert_eq!(run.code, 2);
    assert!(run.stderr.starts_with("error: cannot tell the output format of out.mov\nhint: name one of: .gif"));
    let run = ripple(&["scene.toml", "-o", "no/such/dir/out.gif"], &dir);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("the folder no/such/dir does not exist"), "{}", run.stderr);
    let run = ripple(&["scene.toml", "-o", "scene.toml", "--format", "gif", "-f"], &dir);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("is an input of this run"), "{}", run.stderr);
    assert_eq!(std::fs::read_to_string(dir.join("scene.toml")).unwrap(), SMALL);
    let run = ripple(&["scene.toml", "-o", "out.gif", "--format", "mp4"], &dir);
    assert_eq!(run.code, 2);
    // /proc refuses new files even to root: the output path is unusable, exit 2.
    let run = ripple(&["scene.toml", "-o", "/proc/out.gif"], &dir);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.starts_with("error: cannot create /proc/out.gif: the folder /proc does not accept new files\n"),
        "{}",
        run.stderr
    );
}

#[test]
fn plan_prints_the_timeline() {
    let scene = root().join("tests/golden/scenes/swipes.toml");
    let run = ripple(&["plan", "--json", scene.to_str().unwrap()], &root());
    assert_eq!(run.code, 0, "{}", run.stderr);
    let plan: serde_json::Value = serde_json::from_str(&run.stdout).expect("plan --json is JSON");
    assert_eq!(plan["width"], 200);
    assert_eq!(plan["fps"], 25);
    assert_eq!(plan["first_frame"], 0);
    assert_eq!(plan["frames"], 100);
    assert_eq!(plan["model"], "classic");
    assert_eq!(plan["steps_per_frame"], 2);
    assert_eq!(plan["refraction_q8"], 256);
    let events = plan["events"].as_array().unwrap();
    // The first swipe starts at frame 5 with its first corner; the tap is one drop at frame 75.
    assert_eq!(
        events[0],
        serde_json::json!({"frame": 5, "kind": "drop", "x": 20, "y": 130, "radius": 3, "weight": 60, "source": "swipe"})
    );
    let last = events.last().unwrap();
    assert_eq!((last["frame"].as_u64(), last["x"].as_i64(), last["radius"].as_i64()), (Some(75), Some(60), Some(6)));
    let frames: Vec<u64> = events.iter().map(|e| e["frame"].as_u64().unwrap()).collect();
    assert!(frames.windows(2).all(|w| w[0] <= w[1]), "events in frame order");

    let run = ripple(&["plan", scene.to_str().unwrap(), "--events"], &root());
    assert_eq!(run.code, 0);
    assert!(run.stdout.contains("100 frames at 25 fps"), "{}", run.stdout);
    assert!(run.stdout.contains("       5        5    0.20s  swipe[0] drop at (20, 130), radius 3, weight 60\n"));
    assert_eq!(run.stdout.lines().filter(|l| l.contains(" drop at ")).count(), events.len());

    let dir = scene_dir("plan-bad", "[video]\nframes = 0\n");
    let run = ripple(&["plan", "scene.toml"], &dir);
    assert_eq!(run.code, 2);
    assert!(run.stderr.starts_with("error: scene.toml:2:10: video.frames = 0 is out of range"), "{}", run.stderr);
}

#[test]
fn plan_gives_one_line_per_swipe_and_for_the_rain() {
    let scene = root().join("tests/golden/scenes/swipes.toml");
    let run = ripple(&["plan", scene.to_str().unwrap()], &root());
    assert_eq!(run.code, 0, "{}", run.stderr);
    let events: Vec<&str> = run.stdout.lines().skip_while(|l| !l.contains("event")).skip(1).collect();
    // Swipe 0's path [[20,130],[70,30],[120,130],[170,30]]: three segments of 100 Bresenham
    // steps after the first corner, so 301 points, spread over frame_of(0.2)..=frame_of(1.2).
    assert_eq!(
        events[..3],
        [
            "       5        5    0.20s  swipe[0]: 301 drops over frames 5..=30, from (20, 130) to (170, 30), radius 3, weight 60",
            "      38       38    1.52s  swipe[1]: 271 drops over frames 38..=63, from (100, 75) to (150, 140), radius 2, weight 80",
            "      75       75    3.00s  swipe[2]: 1 drop at (60, 90), radius 6, weight 400",
        ],
        "{}",
        run.stdout
    );
    assert!(run.stdout.ends_with("\n573 event(s) (every one: plan --events)\n"), "{}", run.stdout);

    let dir = scene_dir(
        "plan-rain",
        "[video]\nfps = 10\nframes = 20\n[rain]\ndrops_per_second = 10\nradius = [1, 3]\nweight = 50\nuntil = 1\n",
    );
    let run = ripple(&["plan", "scene.toml"], &dir);
    let lines: Vec<&str> = run.stdout.lines().filter(|l| l.contains("rain")).collect();
    // One drop a frame on frames 0..10 (until = 1 s is frame 10, exclusive).
    assert_eq!(lines.len(), 1, "{}", run.stdout);
    assert!(
        lines[0].starts_with("       0        0    0.00s  rain: 10 drops over frames 0..=9, the first at ("),
        "{}",
        lines[0]
    );
    assert!(lines[0].ends_with("), radius 1..=3, weight 50"), "{}", lines[0]);
}

#[test]
fn plan_shows_a_smooth_swipes_second_presses_with_their_share() {
    // Four points over frames 1 and 2 (timeline.rs's own case): frame 3 presses points 2 and 3
    // again by their places in frame 2's batch, 85 and 170 of 256.
    let dir = scene_dir(
        "plan-smooth-swipe",
        "[video]\nwidth = 20\nheight = 10\nfps = 10\nframes = 5\n[background]\ncolor = \"#204060\"\n\
         [water]\ndrop = \"smooth\"\n[[swipe]]\nfrom = 0.1\nuntil = 0.2\npath = [[2, 5], [5, 5]]\n",
    );
    let run = ripple(&["plan", "scene.toml", "--events"], &dir);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains("(1.0000), smooth drops (a swipe's points pressed over two units)\n"),
        "{}",
        run.stdout
    );
    let last: Vec<&str> = run.stdout.lines().filter(|l| l.contains("share")).collect();
    assert_eq!(
        last,
        [
            "       3        3    0.30s  swipe[0] drop at (4, 5), radius 2, weight 40, share 85/256",
            "       3        3    0.30s  swipe[0] drop at (5, 5), radius 2, weight 40, share 170/256",
        ],
        "{}",
        run.stdout
    );
    let run = ripple(&["plan", "scene.toml", "--json"], &dir);
    assert!(run.stdout.contains("\"refraction_q8\":256,\"drop\":\"smooth\","), "{}", run.stdout);
    assert!(run.stdout.contains("{\"frame\":3,\"kind\":\"drop\",\"x\":5,\"y\":5,\"radius\":2,\"weight\":40,\"source\":\"swipe\",\"share\":170}"), "{}", run.stdout);
}

#[test]
fn plan_marks_pre_roll_and_numbers_output_frames_as_diff_does() {
    let body = "[video]\nfps = 10\nframes = 4\nstart = 0.5\n[[stone]]\nat = 0.2\nx = 5\ny = 5\n\
                [[stone]]\nat = 0.7\nx = 6\ny = 6\n[[swipe]]\nfrom = 0.3\nuntil = 0.6\npath = [[0, 9], [30, 9]]\n";
    let dir = scene_dir("plan-pre-roll", body);
    let run = ripple(&["plan", "scene.toml"], &dir);
    assert!(run.stdout.contains("output frames 0..=3 are frames 5..=8 after 5 pre-roll frames"), "{}", run.stdout);
    assert!(run.stdout.contains("       2 pre-roll    0.20s  stone[0] drop at (5, 5)"), "{}", run.stdout);
    // Frame 7 is the third output frame, index 2 in diff's numbering.
    assert!(run.stdout.contains("       7        2    0.70s  stone[1] drop at (6, 6)"), "{}", run.stdout);
    assert!(run.stdout.contains("swipe[0]: 31 drops over frames 3..=6 (output pre-roll..=1), from (0, 9) to (30, 9)"));
    let run = ripple(&["plan", "scene.toml", "--events"], &dir);
    assert!(run.stdout.contains("       6        1    0.60s  swipe[0] drop at (30, 9)"), "{}", run.stdout);
}

#[test]
fn plan_refuses_what_the_render_refuses() {
    let dir = scene_dir("plan-background", "[video]\nframes = 2\n[background]\nimage = \"bg.png\"\n");
    let render = ripple(&["scene.toml", "-o", "out.gif"], &dir);
    let plan = ripple(&["plan", "scene.toml"], &dir);
    assert_eq!((render.code, plan.code), (2, 2));
    assert_eq!(plan.stderr, render.stderr, "the same message");
    std::fs::write(dir.join("bg.png"), b"not a picture at all").unwrap();
    let render = ripple(&["scene.toml", "-o", "out.gif"], &dir);
    let plan = ripple(&["plan", "scene.toml", "--json"], &dir);
    assert_eq!((render.code, plan.code), (2, 2), "{}", plan.stderr);
    assert_eq!(plan.stderr, render.stderr);
    assert!(plan.stdout.is_empty());
    // An image too large to decode within the budget: the same refusal, from its header.
    std::fs::write(dir.join("bg.png"), png_claiming(8000, 8000)).unwrap();
    let render = ripple(&["scene.toml", "-o", "out.gif"], &dir);
    let plan = ripple(&["plan", "scene.toml"], &dir);
    assert_eq!((render.code, plan.code), (2, 2), "{}", plan.stderr);
    assert!(plan.stderr.contains("over the decode budget of 256 MiB"), "{}", plan.stderr);
    assert_eq!(plan.stderr, render.stderr);
}

#[test]
fn set_overrides_a_key_as_if_the_file_said_so() {
    let dir = scene_dir("set", SMALL);
    // The override renders what an edited file renders.
    let run = ripple(&["scene.toml", "-o", "set.gif", "--set", "stone[0].x=3", "--set", "video.fps=10", "-q"], &dir);
    assert_eq!(run.code, 0, "{}", run.stderr);
    std::fs::write(dir.join("edited.toml"), SMALL.replace("x = 12", "x = 3").replace("fps = 30", "fps = 10")).unwrap();
    assert_eq!(ripple(&["edited.toml", "-o", "edited.gif", "-q"], &dir).code, 0);
    let set = decode_gif(&std::fs::read(dir.join("set.gif")).unwrap());
    let edited = decode_gif(&std::fs::read(dir.join("edited.gif")).unwrap());
    assert_eq!((set.frames, set.delays), (edited.frames, edited.delays));
    // A key the file lacks, in a table it lacks, is added.
    let run = ripple(
        &["plan", "scene.toml", "--json", "--set", "water.model=spring", "--set", "rain.drops_per_second=30"],
        &dir,
    );
    let plan: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(plan["model"], "spring");
    assert!(plan["events"].as_array().unwrap().iter().any(|e| e["source"] == "rain"));
    // Provenance hashes the scene as overridden.
    let comment = |name: &str| {
        let bytes = std::fs::read(dir.join(name)).unwrap();
        ripple_render::decode::gif::Head::read(&bytes[..]).comments.join("")
    };
    assert_ne!(comment("set.gif"), comment("edited.gif"));
    assert_eq!(ripple(&["scene.toml", "-o", "plain.gif", "-q"], &dir).code, 0);
    assert_ne!(comment("set.gif"), comment("plain.gif"));
}

#[test]
fn a_bad_override_is_refused_like_a_bad_file_naming_the_override() {
    let dir = scene_dir("set-bad", SMALL);
    for (set, first_line) in [
        (
            "water.refraction=40",
            "error: --set water.refraction=40: water.refraction = 40 is out of range: allowed 0..=16",
        ),
        (
            "stone[0].x=100",
            "error: --set stone[0].x=100: stone[0].x = 100 is off the canvas: allowed 0..=23 (canvas 24×16)",
        ),
        ("stone[1].x=1", "error: --set stone[1].x=1: there is no stone[1]: the scene has one, stone[0]"),
        ("stone.x=1", "error: --set stone.x=1: stone is a list of [[stone]] tables: say which, as stone[0]"),
        ("video.fsp=10", "error: --set video.fsp=10: unknown key `video.fsp`: allowed keys in [video] are "),
        (
            "water.model=sprung",
            "error: --set water.model=sprung: water.model = sprung is not allowed: expected \"classic\" or \"spring\"",
        ),
        ("video.fps=fast", "error: --set video.fps=fast: video.fps = fast is a string: expected an integer in 1..=100"),
        ("refraction", "error: --set refraction: is not KEY=VALUE"),
        ("stone[x].y=1", "error: --set stone[x].y=1: `stone[x]` is not a step of a key path"),
    ] {
        for command in [vec!["scene.toml", "-o", "out.gif", "--set", set], vec!["plan", "scene.toml", "--set", set]] {
            let run = ripple(&command, &dir);
            assert_eq!(run.code, 2, "{set}: {}", run.stderr);
            assert!(run.stderr.starts_with(first_line), "{set}:\n{}", run.stderr);
            // The override is shown with a caret under what is wrong.
            assert!(run.stderr.contains(&format!("--set | {set}\n")), "{set}:\n{}", run.stderr);
            assert!(!dir.join("out.gif").exists());
        }
    }
    let run = ripple(&["scene.toml", "-o", "out.gif", "--set", "video.fsp=10"], &dir);
    assert!(run.stderr.contains("hint: did you mean `fps`?"), "{}", run.stderr);
    // A key path tens of thousands of steps deep (it once overflowed the stack): one short error.
    let deep = format!("{}=1", vec!["a"; 60_000].join("."));
    for command in [vec!["scene.toml", "-o", "out.gif", "--set", &deep], vec!["plan", "scene.toml", "--set", &deep]] {
        let run = ripple(&command, &dir);
        assert_eq!(run.code, 2, "{}", &run.stderr[..run.stderr.len().min(300)]);
        assert!(
            run.stderr.starts_with("error: --set a.a.a.") && run.stderr.contains(": is a key path of 60000 steps"),
            "{}",
            &run.stderr[..run.stderr.len().min(300)]
        );
        assert!(run.stderr.len() < 1000, "an error of {} bytes", run.stderr.len());
        assert!(!dir.join("out.gif").exists());
    }
}

#[test]
fn plan_lists_pre_roll_and_damping_in_order() {
    let body = "[video]\nfps = 10\nframes = 3\nstart = 0.5\n[[stone]]\nat = 0.7\nx = 5\ny = 5\n\
                [[stone]]\nat = 0.2\nx = 6\ny = 6\n[[stone]]\nat = 0.8\nx = 7\ny = 7\n\
                [[damping]]\nat = 0.2\nshift = 9\n[[damping]]\nat = 0.2\nshift = 3\n";
    let dir = scene_dir("plan-order", body);
    let run = ripple(&["plan", "--json", "scene.toml"], &dir);
    let plan: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!((plan["first_frame"].as_u64(), plan["frames"].as_u64()), (Some(5), Some(3)));
    let summary: Vec<String> = plan["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| match e["kind"].as_str().unwrap() {
            "damping" => format!("{}:d{}", e["frame"], e["shift"]),
            _ => format!("{}:x{}", e["frame"], e["x"]),
        })
        .collect();
    // Pre-roll events are listed; damping comes before stones on a frame; frame 8 is past the end.
    assert_eq!(summary, vec!["2:d9", "2:d3", "2:x6", "7:x5"]);
}

#[test]
fn canvas_defaults_to_the_image_size_and_keeps_its_shape_from_one_side() {
    let dir = scene_dir("default-size", "[video]\nframes = 1\n[background]\nimage = \"koi.png\"\n");
    std::fs::copy(root().join("tests/golden/scenes/koi.png"), dir.join("koi.png")).unwrap();
    let size = |video: &str| -> (Option<u64>, Option<u64>) {
        let scene = format!("[video]\nframes = 1\n{video}\n[background]\nimage = \"koi.png\"\n");
        std::fs::write(dir.join("scene.toml"), scene).unwrap();
        let run = ripple(&["plan", "--json", "scene.toml"], &dir);
        let p: serde_json::Value = serde_json::from_str(&run.stdout).unwrap_or_default();
        (p["width"].as_u64(), p["height"].as_u64())
    };
    // koi.png is 96×64 (3:2).
    assert_eq!(size(""), (Some(96), Some(64)));
    assert_eq!(size("width = 50\nheight = 70"), (Some(50), Some(70)));
    // One side: the other keeps 3:2, rounded half up (50·64/96 = 33.3 → 33; 41·96/64 = 61.5 → 62).
    assert_eq!(size("width = 50"), (Some(50), Some(33)));
    assert_eq!(size("height = 41"), (Some(62), Some(41)));
    assert_eq!(size("width = 960"), (Some(960), Some(640)));
    // A shape that would make the other side too small is refused at the given key.
    std::fs::write(dir.join("scene.toml"), "[video]\nframes = 1\nwidth = 3\n[background]\nimage = \"koi.png\"\n")
        .unwrap();
    let run = ripple(&["plan", "scene.toml"], &dir);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.starts_with(
            "error: scene.toml:3:9: video.width = 3 gives a height of 2 pixels, keeping the 96×64 image's \
             aspect ratio: allowed 3..=16384; set video.height too"
        ),
        "{}",
        run.stderr
    );
    // Without an image, the default canvas.
    std::fs::write(dir.join("scene.toml"), "[video]\nframes = 1\n").unwrap();
    let run = ripple(&["plan", "--json", "scene.toml"], &dir);
    let p: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!((p["width"].as_u64(), p["height"].as_u64()), (Some(320), Some(240)));
}

#[test]
fn any_thread_count_gives_the_same_bytes() {
    let dir = scene_dir("threads", &std::fs::read_to_string(root().join("tests/golden/scenes/pond.toml")).unwrap());
    std::fs::copy(root().join("tests/golden/scenes/pool.png"), dir.join("pool.png")).unwrap();
    for t in ["1", "3"] {
        let run = ripple(&["scene.toml", "-o", &format!("t{t}.gif"), "--threads", t, "-q"], &dir);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let run = ripple(&["scene.toml", "-o", &format!("t{t}/"), "--threads", t, "-q"], &dir);
        assert_eq!(run.code, 0, "{}", run.stderr);
    }
    assert_eq!(std::fs::read(dir.join("t1.gif")).unwrap(), std::fs::read(dir.join("t3.gif")).unwrap());
    for i in 0..100 {
        let name = format!("frame_{i:04}.png");
        assert_eq!(
            std::fs::read(dir.join("t1").join(&name)).unwrap(),
            std::fs::read(dir.join("t3").join(&name)).unwrap()
        );
    }
    assert_eq!(ripple(&["scene.toml", "-o", "x.gif", "--threads", "0"], &dir).code, 2);
}

#[test]
fn stats_are_one_json_line() {
    let dir = scene_dir("stats", SMALL);
    let run = ripple(&["scene.toml", "-o", "out.gif", "--stats", "-q"], &dir);
    assert_eq!(run.code, 0);
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{}", run.stderr);
    let stats: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
    assert_eq!(stats["frames"], 7);
    for key in ["simulate_s", "refract_s", "encode_s", "write_s", "total_s"] {
        assert!(stats[key].as_f64().is_some_and(|s| s >= 0.0), "{key} in {}", lines[0]);
    }
}

/// Whether process `pid` has its temporary output in `dir`: a named one, or (Linux) an unnamed
/// `O_TMPFILE` file, which `/proc/PID/fd` shows as `DIR/#INODE (deleted)`.
pub fn writing(dir: &Path, pid: u32) -> bool {
    let unnamed = std::fs::read_dir(format!("/proc/{pid}/fd")).into_iter().flatten().flatten().any(|fd| {
        std::fs::read_link(fd.path())
            .is_ok_and(|to| to.starts_with(dir.canonicalize().unwrap()) && to.to_string_lossy().ends_with(" (deleted)"))
    });
    unnamed || !temporaries(dir).is_empty()
}

/// Starts a long render, waits until its temporary output exists, sends `signal`, and returns
/// how the process ended.
#[cfg(unix)]
fn interrupt(dir: &Path, output: &str, signal: &str) -> std::process::ExitStatus {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ripple-render"))
        .args(["scene.toml", "-o", output, "-q", "-f"])
        .current_dir(dir)
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while !writing(dir, child.id()) && started.elapsed() < std::time::Duration::from_secs(20) {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert!(writing(dir, child.id()), "the render never started writing");
    let killed = Command::new("kill").args([&format!("-{signal}"), &child.id().to_string()]).status().unwrap();
    assert!(killed.success());
    child.wait().unwrap()
}

#[cfg(unix)]
#[test]
fn signals_stop_the_render_and_leave_no_trace() {
    use std::os::unix::process::ExitStatusExt;
    let long = "[video]\nwidth = 320\nheight = 240\nframes = 100000\n[rain]\ndrops_per_second = 30\n";
    let dir = scene_dir("signals", long);
    for (signal, number) in [("INT", 2), ("TERM", 15), ("HUP", 1)] {
        let status = interrupt(&dir, "out.gif", signal);
        assert_eq!(status.signal(), Some(number), "{signal}: {status:?}");
        assert!(!dir.join("out.gif").exists(), "{signal}");
        assert!(temporaries(&dir).is_empty(), "{signal}: {:?}", temporaries(&dir));
    }
    // An existing output stays as it was, file or folder.
    std::fs::write(dir.join("out.gif"), b"precious").unwrap();
    interrupt(&dir, "out.gif", "INT");
    assert_eq!(std::fs::read(dir.join("out.gif")).unwrap(), b"precious");
    interrupt(&dir, "frames/", "TERM");
    assert!(!dir.join("frames").exists());
    assert!(temporaries(&dir).is_empty());
}

/// Waits for `child` to end, at most `limit`; a child still running then is killed and counts as
/// not ended (so a test of a hang fails instead of hanging).
#[cfg(unix)]
fn ended_within(child: &mut std::process::Child, limit: std::time::Duration) -> Option<std::process::ExitStatus> {
    let started = std::time::Instant::now();
    while started.elapsed() < limit {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

#[cfg(unix)]
#[test]
fn signals_are_honoured_while_blocked_on_a_pipe_and_inside_a_long_frame() {
    use std::os::unix::process::ExitStatusExt;
    let dir = scene_dir("signals-stuck", SMALL);
    // A scene read from a pipe nobody writes: the open blocks.
    assert!(Command::new("mkfifo").arg(dir.join("pipe.toml")).status().unwrap().success());
    for args in [vec!["pipe.toml", "-o", "out.gif"], vec!["plan", "pipe.toml"]] {
        let mut child =
            Command::new(env!("CARGO_BIN_EXE_ripple-render")).args(&args).current_dir(&dir).spawn().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(200));
        assert!(Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap().success());
        let status = ended_within(&mut child, std::time::Duration::from_secs(5));
        assert_eq!(status.and_then(|s| s.signal()), Some(15), "{args:?}: SIGTERM while reading a pipe");
    }
    // One frame that takes many seconds: 100,000 large raindrops at 1 fps.
    let heavy = "[video]\nwidth = 1024\nheight = 768\nfps = 1\nframes = 3\n[rain]\ndrops_per_second = 100000\n\
                 radius = [200, 256]\n";
    std::fs::write(dir.join("scene.toml"), heavy).unwrap();
    for output in ["heavy.gif", "heavy/"] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_ripple-render"))
            .args(["scene.toml", "-o", output, "-q"])
            .current_dir(&dir)
            .spawn()
            .unwrap();
        let started = std::time::Instant::now();
        while !writing(&dir, child.id()) && started.elapsed() < std::time::Duration::from_secs(20) {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert!(Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap().success());
        let status = ended_within(&mut child, std::time::Duration::from_secs(5));
        assert_eq!(status.and_then(|s| s.signal()), Some(15), "{output}: SIGTERM inside a long frame");
        assert!(temporaries(&dir).is_empty(), "{output}: {:?}", temporaries(&dir));
        assert!(!dir.join("heavy.gif").exists() && !dir.join("heavy").exists());
    }
}

#[test]
fn oversized_images_are_refused_from_their_header() {
    let dir = scene_dir("budget", "[video]\nframes = 1\nwidth = 8\nheight = 8\n[background]\nimage = \"big.png\"\n");
    for (w, h) in [(100_000, 100_000), (20_000, 20_000), (8193, 8192)] {
        std::fs::write(dir.join("big.png"), png_claiming(w, h)).unwrap();
        let started = std::time::Instant::now();
        let run = ripple(&["scene.toml", "-o", "out.gif"], &dir);
        assert_eq!(run.code, 2, "{w}×{h}: {}", run.stderr);
        let pixels = u64::from(w) * u64::from(h);
        let expected = format!("big.png: it is {w}×{h} = {pixels} pixels; background images are limited to 67108864");
        assert!(run.stderr.contains(&expected), "{}", run.stderr);
        // Refused before decoding: no time, no memory to speak of.
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
    }
    // The same check when the canvas size comes from the image.
    std::fs::write(dir.join("scene.toml"), "[video]\nframes = 1\n[background]\nimage = \"big.png\"\n").unwrap();
    assert_eq!(ripple(&["plan", "scene.toml"], &dir).code, 2);
}

#[test]
fn deep_nesting_and_long_lines_give_a_short_message() {
    let deep = format!("[video]\nframes = 1\nx = {}{}\n", "[".repeat(100_000), "]".repeat(100_000));
    let dir = scene_dir("deep", &deep);
    let run = ripple(&["plan", "scene.toml"], &dir);
    assert_eq!(run.code, 2);
    assert!(run.stderr.starts_with("error: scene.toml:3:"), "{}", &run.stderr[..200.min(run.stderr.len())]);
    assert!(run.stderr.len() < 1000, "the message quotes a window of the line, not all of it");
}

#[test]
fn a_scene_of_the_largest_size_is_read_and_its_errors_placed() {
    let tail = "[video]\nwidth = 24\nheight = 16\nframes = 3\n";
    // Exactly the 16 MiB a scene may have, nearly all of it one comment: parsing it costs
    // little, so the memory estimate lets it through.
    let size = 16 << 20;
    let comment = format!("#{}\n", "x".repeat(size - tail.len() - 2));
    let dir = scene_dir("scene-16mib", &format!("{comment}{tail}"));
    assert_eq!(std::fs::metadata(dir.join("scene.toml")).unwrap().len(), size as u64);
    let run = ripple(&["scene.toml", "-o", "out.gif", "-q"], &dir);
    assert_eq!(run.code, 0, "{}", run.stderr);
    // A syntax error after ten megabytes of comment is placed, not taken for a memory problem.
    let bad = format!("#{}\n[video\nframes = 3\n", "x".repeat(10 << 20));
    std::fs::write(dir.join("bad.toml"), bad).unwrap();
    let run = ripple(&["bad.toml", "-o", "bad.gif"], &dir);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.starts_with("error: bad.toml:2:7: invalid TOML: unclosed table"), "{}", run.stderr);
    // Dense text (a long array, every byte a token) is still weighed as such: 8 MiB of it is
    // refused before it is parsed, with the estimate.
    let dense = format!("{tail}[[stone]]\nat = 0\nx = 1\ny = 1\nweight = [{}1]\n", "1,".repeat(4 << 20));
    std::fs::write(dir.join("dense.toml"), dense).unwrap();
    let run = ripple(&["dense.toml", "-o", "dense.gif"], &dir);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("(reading the scene: scene text 1.3 GiB)"), "{}", run.stderr);
    assert!(!dir.join("dense.gif").exists() && !dir.join("bad.gif").exists());
}

#[test]
fn setting_one_side_of_a_pictures_canvas_says_how_to_keep_its_shape() {
    let dir = scene_dir("one-side", "[background]\nimage = \"p.png\"\n[video]\nwidth = 60\nheight = 40\nframes = 2\n");
    let rgb: Vec<u8> = (0..60 * 40 * 3).map(|i| (i * 13 % 251) as u8).collect();
    crate::support::write_png(&dir.join("p.png"), 60, 40, &rgb);
    let run = ripple(&["scene.toml", "-o", "out.gif", "--set", "video.width=120", "-q"], &dir);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "warning: the canvas is 120×40 and the picture 60×40: the canvas keeps the picture's height, so the \
             picture is fitted (cover) to another shape; if only video.width was meant, set video.height = 80"
        ),
        "{}",
        run.stderr
    );
    // Both sides set to keep the shape, or the picture's own: nothing to say.
    for set in [&["--set", "video.width=120", "--set", "video.height=80"][..], &[]] {
        let run = ripple(&[&["scene.toml", "-o", "out.gif", "-q"][..], set].concat(), &dir);
        assert!(!run.stderr.contains("the canvas is"), "{}", run.stderr);
    }
}

#[test]
fn dither_says_when_it_does_nothing() {
    let plain = "[background]\npattern = \"tiles\"\n[video]\nwidth = 24\nheight = 16\nframes = 2\n";
    let dir = scene_dir("dither-ignored", plain);
    std::fs::write(dir.join("lit.toml"), format!("{plain}[look]\nshading = 96\n")).unwrap();
    for (scene, out, said) in [
        ("scene.toml", "out.gif", None),
        ("lit.toml", "out.gif", Some("--dither is ignored: the scene's [look] draws new colours every frame")),
        (
            "scene.toml",
            "out.webp",
            Some("--dither is ignored: it dithers a GIF's background, and the output is not a GIF"),
        ),
    ] {
        let run = ripple(&[scene, "-o", out, "-f", "--dither", "-q"], &dir);
        assert_eq!(run.code, 0, "{}", run.stderr);
        match said {
            Some(said) => assert!(run.stderr.contains(&format!("warning: {said}")), "{scene} {out}: {}", run.stderr),
            None => assert!(!run.stderr.contains("--dither"), "{scene} {out}: {}", run.stderr),
        }
    }
}
