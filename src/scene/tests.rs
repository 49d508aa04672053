//! Validation of scene files: defaults, every rule, and what the messages say.

use std::path::Path;

use super::*;

fn parse(src: &str) -> Result<Scene> {
    Scene::from_toml_str(src, Path::new("scene.toml"))
}

/// The diagnostic a scene produces, as the user sees it (first line: location and message).
fn error_of(src: &str) -> Diagnostic {
    match parse(src) {
        Err(Error::Scene(d)) => *d,
        Err(other) => panic!("expected a scene error, got {other}"),
        Ok(_) => panic!("expected an error for:\n{src}"),
    }
}

fn first_line(src: &str) -> String {
    let d = error_of(src);
    format!("{}:{}: {}", d.line, d.column, d.message)
}

#[test]
fn a_minimal_scene_takes_every_default() {
    let s = parse("[video]\nduration = 1.0\n").unwrap();
    assert_eq!((s.width, s.height, s.fps), (320, 240, 25));
    assert_eq!((s.first_frame, s.frames, s.looping), (0, 25, true));
    assert_eq!(
        s.water,
        WaterSpec {
            model: Model::Classic,
            damping_shift: 5,
            clock: Clock::Frames { steps_per_frame: 1 },
            settle: false,
            refraction_q8: 256,
            drop: DropShape::Disc
        }
    );
    assert_eq!(
        s.background,
        BackgroundSpec {
            image: None,
            fit: Fit::Cover,
            color: [0, 0, 0],
            pattern: None,
            given: false,
            image_site: None
        }
    );
    assert!(s.stones.is_empty() && s.swipes.is_empty() && s.rain.is_none() && s.damping.is_empty());
}

#[test]
fn spring_has_its_own_defaults() {
    let s = parse("[video]\nframes = 3\n[water]\nmodel = \"spring\"\n").unwrap();
    // R = floor(0.1·256 + 0.5) = floor(26.1) = 26.
    assert_eq!((s.water.damping_shift, s.water.refraction_q8), (6, 26));
}

#[test]
fn times_become_frames() {
    let s = parse(
        "[video]\nfps = 25\nduration = 2\nstart = 0.1\n[[stone]]\nat = 0.5\nx = 0\ny = 239\n\
         [[damping]]\nat = 1\nshift = 2\n[rain]\ndrops_per_second = 3\nfrom = 0.02\nuntil = 1.5\nradius = 3\n",
    )
    .unwrap();
    assert_eq!((s.first_frame, s.frames), (3, 50));
    assert_eq!(s.stones[0], Stone { unit: 13, x: 0, y: 239, radius: 4, weight: 64 });
    assert_eq!(s.damping[0], DampingChange { unit: 25, shift: 2 });
    let rain = s.rain.unwrap();
    assert_eq!((rain.first_unit, rain.end_unit, rain.radius, rain.weight), (1, Some(38), [3, 3], [32, 64]));
}

#[test]
fn colours_take_both_forms_in_any_case() {
    assert_eq!(parse_color("#A0b1C2"), Some([0xa0, 0xb1, 0xc2]));
    assert_eq!(parse_color("#fA0"), Some([0xff, 0xaa, 0x00]));
    assert_eq!(parse_color("fa0"), None);
    assert_eq!(parse_color("#ff00"), None);
    assert_eq!(parse_color("#ggg"), None);
    assert_eq!(parse_color("#+1+"), None);
}

#[test]
fn out_of_range_names_path_value_and_range() {
    let src = "[video]\nframes = 2\n[[stone]]\nat = 0\nx = 1\ny = 1\n[[stone]]\nat = 0\nx = 1\ny = 1\nradius = 300\n";
    assert_eq!(first_line(src), "11:10: stone[1].radius = 300 is out of range: allowed 1..=256");
}

#[test]
fn unknown_keys_suggest_the_near_miss() {
    let d = error_of("[video]\nframes = 2\n[[stone]]\nat = 0\nx = 1\ny = 1\nradus = 3\n");
    assert_eq!((d.line, d.column), (7, 1));
    assert!(
        d.message.starts_with("unknown key `stone[0].radus`: allowed keys in [[stone]] are at, x, y"),
        "{}",
        d.message
    );
    assert_eq!(d.hint.as_deref(), Some("did you mean `radius`?"));
    let d = error_of("[vidoe]\nframes = 2\n");
    assert_eq!(d.hint.as_deref(), Some("did you mean `video`?"));
    let d = error_of("[video]\nframes = 2\nsparkle = true\n");
    assert_eq!(d.hint, None);
}

#[test]
fn wrong_types_say_what_was_expected() {
    assert_eq!(
        first_line("[video]\nfps = 25.0\nframes = 2\n"),
        "2:7: video.fps = 25.0 is a float: expected an integer in 1..=100"
    );
    assert_eq!(
        first_line("[video]\nframes = 2\nloop = 1\n"),
        "3:8: video.loop = 1 is an integer: expected true or false"
    );
    assert_eq!(
        first_line("[video]\nframes = 2\n[water]\nmodel = \"sprung\"\n"),
        "4:9: water.model = \"sprung\" is not allowed: expected \"classic\" or \"spring\" (did you mean \"spring\"?)"
    );
    assert_eq!(
        first_line("stone = 3\n[video]\nframes = 2\n"),
        "1:9: stone = 3 is an integer: expected an array of tables, written [[stone]]"
    );
    // Each type error says what the key is for, not a bare type or a 64-bit range.
    let stone = "[video]\nframes = 2\n[[stone]]\nat = 0\ny = 1\n";
    assert_eq!(
        first_line(&format!("{stone}x = 100.5\n")),
        "6:5: stone[0].x = 100.5 is a float: expected an integer pixel coordinate in 0..=319"
    );
    assert_eq!(
        first_line("[video]\nframes = 2\n[water]\nmodel = 3\n"),
        "4:9: water.model = 3 is an integer: expected \"classic\" or \"spring\""
    );
    assert_eq!(
        first_line("[video]\nframes = 2\n[background]\nfit = true\n"),
        "4:7: background.fit = true is a boolean: expected \"cover\", \"contain\" or \"stretch\""
    );
    assert_eq!(
        first_line("[video]\nframes = 2\n[background]\nimage = 5\n"),
        "4:9: background.image = 5 is an integer: expected a string, the path of an image file"
    );
    assert_eq!(
        first_line("[video]\nframes = 2\n[rain]\ndrops_per_second = 1\nradius = \"big\"\n"),
        "5:10: rain.radius = \"big\" is a string: expected an integer in 1..=256 or a [lo, hi] range"
    );
    assert_eq!(
        first_line("[video]\nframes = 2\n[[stone]]\nat = \"now\"\nx = 1\ny = 1\n"),
        "4:6: stone[0].at = \"now\" is a string: expected a time in seconds (a number ≥ 0)"
    );
}

#[test]
fn a_table_header_of_the_wrong_kind_is_named_as_written() {
    // Not "video = [[video]] is an array": a header is no value after `key =`.
    assert_eq!(
        first_line("[[video]]\nframes = 3\n"),
        "1:1: [[video]] makes `video` an array of tables: expected a table, written [video]"
    );
    assert_eq!(
        first_line("[video]\nframes = 3\n[stone]\nat = 1\n"),
        "3:1: [stone] makes `stone` a table: expected an array of tables, written [[stone]]"
    );
    // An inline value is still quoted after its key.
    assert_eq!(first_line("video = [1]\n"), "1:9: video = [1] is an array: expected a table, written [video]");
}

#[test]
fn a_byte_order_mark_does_not_shift_columns() {
    let plain = "[video]\nframes = 2\nfps = 500\n";
    let with_bom = format!("\u{feff}{plain}");
    assert_eq!(first_line(&with_bom), first_line(plain));
    assert_eq!(first_line("\u{feff}fps = 3\n"), first_line("fps = 3\n"));
    assert!(first_line("\u{feff}fps = 3\n").starts_with("1:1: "));
    let scene = Scene::from_bytes(format!("\u{feff}{}", "[video]\nframes = 2\n").into_bytes(), Path::new("s.toml"));
    assert!(scene.is_ok());
}

#[test]
fn nan_and_infinity_are_refused() {
    assert_eq!(
        first_line("[video]\nduration = nan\n"),
        "2:12: video.duration = nan is not a finite number: expected a time in seconds (a number ≥ 0)"
    );
    assert_eq!(
        first_line("[video]\nframes = 2\n[water]\nrefraction = inf\n"),
        "4:14: water.refraction = inf is not a finite number: expected a number in 0..=16"
    );
}

#[test]
fn exactly_one_of_duration_and_frames() {
    let d = error_of("[video]\nfps = 10\n");
    assert_eq!(
        (d.line, d.message.as_str()),
        (1, "missing video length: give video.duration (seconds) or video.frames")
    );
    assert_eq!(
        first_line("[video]\nduration = 1\nframes = 2\n"),
        "3:10: video.frames = 2 conflicts: give either video.duration or video.frames, not both"
    );
    assert_eq!(
        first_line("[video]\nduration = 0.01\n"),
        "2:12: video.duration = 0.01 gives 0 frames at 25 fps: allowed a duration of 1..=1000000 frames"
    );
    assert!(parse("[video]\nduration = 0.02\n").is_ok()); // 0.5 frames rounds up to 1
    assert!(parse("[video]\nframes = 1000001\n").is_err());
}

#[test]
fn canvas_limits() {
    assert!(parse("[video]\nframes = 1\nwidth = 3\nheight = 3\n").is_ok());
    assert_eq!(
        first_line("[video]\nframes = 1\nwidth = 2\n"),
        "3:9: video.width = 2 is out of range: allowed 3..=16384"
    );
    assert_eq!(
        first_line("[video]\nframes = 1\nwidth = 16384\nheight = 4097\n"),
        "4:10: video.height = 4097 makes the canvas 16384×4097 = 67125248 pixels, over the limit width·height ≤ 8192·8192 = 67108864"
    );
    assert!(parse("[video]\nframes = 1\nwidth = 16384\nheight = 4096\n").is_ok());
}

#[test]
fn stones_must_be_on_the_canvas() {
    let base = "[video]\nframes = 1\nwidth = 10\nheight = 8\n[[stone]]\nat = 0\n";
    assert!(parse(&format!("{base}x = 9\ny = 7\n")).is_ok());
    assert_eq!(
        first_line(&format!("{base}x = 10\ny = 0\n")),
        "7:5: stone[0].x = 10 is off the canvas: allowed 0..=9 (canvas 10×8)"
    );
    assert_eq!(
        first_line(&format!("{base}x = 0\ny = -1\n")),
        "8:5: stone[0].y = -1 is off the canvas: allowed 0..=7 (canvas 10×8)"
    );
    assert_eq!(
        first_line(&format!("{base}x = 0\n")),
        "5:1: missing key `stone[0].y`: a pixel coordinate is required here"
    );
}

#[test]
fn swipes_are_checked() {
    let base = "[video]\nframes = 1\n[[swipe]]\n";
    assert_eq!(
        first_line(&format!("{base}from = 2\nuntil = 1\npath = [[0, 0]]\n")),
        "5:9: swipe[0].until = 1 is before swipe[0].from = 2: a swipe must end after it starts"
    );
    assert_eq!(
        first_line(&format!("{base}from = 0\nuntil = 1\npath = []\n")),
        "6:8: swipe[0].path = [] is empty: a swipe needs at least one [x, y] point"
    );
    assert_eq!(
        first_line(&format!("{base}from = 0\nuntil = 1\npath = [[0, 0], [1, 2, 3]]\n")),
        "6:17: swipe[0].path[1] = [1, 2, 3] is not an [x, y] pair of integers"
    );
    assert_eq!(
        first_line(&format!("{base}from = 0\nuntil = 1\npath = [[0, 65537]]\n")),
        "6:13: swipe[0].path[0][1] = 65537 is out of range: allowed -65536..=65536"
    );
    let s = parse(&format!("{base}from = 1\nuntil = 1\npath = [[-65536, 65536]]\n")).unwrap();
    assert_eq!((s.swipes[0].first_unit, s.swipes[0].last_unit), (25, 25));
}

#[test]
fn rain_ranges_and_times() {
    let base = "[video]\nframes = 1\n[rain]\ndrops_per_second = 1\n";
    assert_eq!(
        first_line(&format!("{base}radius = [3, 2]\n")),
        "5:10: rain.radius = [3, 2] is an empty range: lo must not exceed hi"
    );
    assert_eq!(
        first_line(&format!("{base}weight = [0, 2]\n")),
        "5:11: rain.weight[0] = 0 is out of range: allowed 1..=16384"
    );
    assert_eq!(
        first_line(&format!("{base}from = 2\nuntil = 1\n")),
        "6:9: rain.until = 1 is before rain.from = 2: rain must stop after it starts"
    );
    assert_eq!(
        first_line("[video]\nframes = 1\n[rain]\ndrops_per_second = 100001\n"),
        "4:20: rain.drops_per_second = 100001 is out of range: allowed 0..=100000"
    );
    assert_eq!(
        first_line(&format!("{base}seed = -1\n")),
        "5:8: rain.seed = -1 is out of range: allowed 0..=9223372036854775807"
    );
}

#[test]
fn start_may_not_exceed_ten_million_frames() {
    assert!(parse("[video]\nframes = 1\nfps = 100\nstart = 100000\n").is_ok());
    assert_eq!(
        first_line("[video]\nframes = 1\nfps = 100\nstart = 100000.01\n"),
        "4:9: video.start = 100000.01 starts at frame 10000001 at 100 fps: allowed a start frame of at most 10000000"
    );
}

#[test]
fn syntax_errors_point_into_the_file() {
    let d = error_of("[video]\nframes = 2\nname = \"open\n");
    assert_eq!(d.line, 3);
    assert!(d.message.starts_with("invalid TOML"), "{}", d.message);
    let d = error_of("[video]\nframes = 2\nframes = 3\n");
    assert_eq!(d.line, 3);
    let d = error_of("[video]\nframes = 2\0\n");
    assert_eq!((d.line, d.message.as_str()), (2, "the scene contains a NUL byte"));
}

#[test]
fn gif_refuses_high_frame_rates_at_the_fps_key() {
    let s = parse("[video]\nframes = 2\nfps = 60\n").unwrap();
    match s.check_gif_fps() {
        Err(Error::Scene(d)) => {
            assert_eq!((d.line, d.column), (3, 7));
            assert!(d.message.starts_with("video.fps = 60 is too high for GIF output: allowed 1..=50"));
            // Every format that plays 60 fps is named, not only a PNG sequence.
            let hint = d.hint.unwrap_or_default();
            assert!(["out.apng", "out.webp", "out.mp4", "frames/"].iter().all(|f| hint.contains(f)), "{hint}");
        }
        other => panic!("{other:?}"),
    }
    assert!(parse("[video]\nframes = 2\nfps = 50\n").unwrap().check_gif_fps().is_ok());
}

#[test]
fn background_keys() {
    let s = parse("[video]\nframes = 1\n[background]\ncolor = \"#FFF\"\nfit = \"contain\"\n").unwrap();
    assert_eq!((s.background.color, s.background.fit), ([255, 255, 255], Fit::Contain));
    assert_eq!(
        first_line("[video]\nframes = 1\n[background]\nimage = \"\"\n"),
        "4:9: background.image = \"\" is empty: expected the path of a PNG, JPEG, GIF, BMP or WebP image"
    );
    assert_eq!(
        first_line("[video]\nframes = 1\n[background]\ncolor = \"blue\"\n"),
        "4:9: background.color = \"blue\" is not a colour: expected \"#rrggbb\" or \"#rgb\""
    );
    let s = Scene::from_toml_str(
        "[video]\nframes = 1\nwidth = 9\nheight = 9\n[background]\nimage = \"pics/a.png\"\n",
        Path::new("dir/scene.toml"),
    )
    .unwrap();
    assert_eq!(s.background.image, Some(PathBuf::from("dir/pics/a.png")));
}

fn with_set(src: &str, overrides: &[&str]) -> Result<Scene> {
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    Scene::from_toml_str_with(src, Path::new("scene.toml"), &overrides)
}

#[test]
fn overrides_replace_add_and_point_into_themselves() {
    let src = "[video]\nframes = 2\n[[swipe]]\nfrom = 0\nuntil = 1\npath = [[0, 0]]\n";
    let s = with_set(src, &["swipe[0].path = [[1, 2], [3, 4]]", "water.refraction= 0.5", "video.loop=false"]).unwrap();
    assert_eq!(s.swipes[0].path, vec![[1, 2], [3, 4]]);
    assert_eq!((s.water.refraction_q8, s.looping), (128, false));
    // The last of two overrides of one key wins.
    assert_eq!(with_set(src, &["video.frames=3", "video.frames=4"]).unwrap().frames, 4);
    // An error deep inside an override's value points at it, column by column.
    let Err(Error::Scene(d)) = with_set(src, &["swipe[0].path=[[1, \"a\"]]"]) else { panic!() };
    assert!(d.from_set);
    assert_eq!(d.source_line, "swipe[0].path=[[1, \"a\"]]");
    assert_eq!((d.column, d.underline), (20, 3));
    assert_eq!(d.message, "swipe[0].path[0][1] = \"a\" is a string: expected an integer in -65536..=65536");
    // Overrides change the scene's hash; none leave it as the text's own.
    let plain = parse(src).unwrap();
    assert_eq!(plain.source_hash, xxhash_rust::xxh3::xxh3_64(src.as_bytes()));
    assert_eq!(with_set(src, &[]).unwrap().source_hash, plain.source_hash);
    assert_ne!(with_set(src, &["video.frames=2"]).unwrap().source_hash, plain.source_hash);
}

#[test]
fn the_look_table_is_checked_and_defaults_to_a_gather() {
    let s = parse("[video]\nframes = 2\n").unwrap();
    assert_eq!(
        s.look,
        Look { sampling: Sampling::Nearest, shading: 0, highlight: 0, light: [-1, -1], ..Look::default() }
    );
    assert!(s.look.is_gather());
    let s = parse(
        "[video]\nframes = 2\n[look]\nsampling = \"bilinear\"\nshading = 4096\nhighlight = 7\nlight = [256, -256]\n",
    )
    .unwrap();
    assert_eq!(
        s.look,
        Look { sampling: Sampling::Bilinear, shading: 4096, highlight: 7, light: [256, -256], ..Look::default() }
    );
    assert!(!s.look.is_gather());
    // A light alone changes nothing drawn: still a gather.
    assert!(parse("[video]\nframes = 2\n[look]\nlight = [1, 0]\n").unwrap().look.is_gather());
    let look = |body: &str| first_line(&format!("[video]\nframes = 2\n[look]\n{body}\n"));
    assert_eq!(
        look("sampling = \"cubic\""),
        "4:12: look.sampling = \"cubic\" is not allowed: expected \"nearest\" or \"bilinear\""
    );
    assert_eq!(look("shading = 5000"), "4:11: look.shading = 5000 is out of range: allowed 0..=4096");
    assert_eq!(look("highlight = -1"), "4:13: look.highlight = -1 is out of range: allowed 0..=4096");
    assert_eq!(
        look("light = [0, 0]"),
        "4:9: look.light = [0, 0] points nowhere: at least one of x and y must be non-zero"
    );
    assert_eq!(look("light = [300, 0]"), "4:10: look.light[0] = 300 is out of range: allowed -256..=256");
    assert!(look("light = [1]").starts_with("4:9: look.light = [1] is not an [x, y] pair"));
    assert!(look("glow = 1").starts_with("4:1: unknown key `look.glow`: allowed keys in [look] are sampling, shading"));
    // The water look's keys.
    assert_eq!(look("smooth = 5"), "4:10: look.smooth = 5 is out of range: allowed 0..=4");
    assert_eq!(
        look("tone = \"hard\""),
        "4:8: look.tone = \"hard\" is not allowed: expected \"clamp\", \"soft\" or \"gain\""
    );
    assert_eq!(look("caustics = 4097"), "4:12: look.caustics = 4097 is out of range: allowed 0..=4096");
    assert_eq!(look("sky = \"blue\""), "4:7: look.sky = \"blue\" is not a colour: expected \"#rrggbb\" or \"#rgb\"");
    let with = |body: &str| parse(&format!("[video]\nframes = 2\n[look]\n{body}\n")).unwrap().look;
    // A sky named alone is mirrored at the default strength; a reflection alone mirrors the
    // default sky; smoothing alone still gathers background pixels.
    assert_eq!((with("sky = \"#102030\"").sky, with("sky = \"#102030\"").reflection), ([16, 32, 48], 256));
    assert_eq!((with("reflection = 9").sky, with("reflection = 9").reflection), ([0xc8, 0xdc, 0xf0], 9));
    assert!(with("smooth = 2").is_gather());
    assert!(!with("caustics = 1").is_gather() && !with("tone = \"soft\"").is_gather());
    // The gain tone's keys: read under it, refused without it, checked against each other.
    let gain = with(
        "tone = \"gain\"\nglint = 230\nglint_at = 60\nglint_size = 32\nsun = \"#fff\"\nsky_max = 100\ncaustics_depth = 0.16",
    );
    assert_eq!((gain.glint.peak, gain.glint.at, gain.glint.size, gain.glint.sun), (230, 60, 32, [255; 3]));
    assert_eq!((gain.sky_max, gain.caustics_depth_q8, gain.glint.spread), (100, Some(41), 4096));
    assert_eq!(with("tone = \"gain\"").caustics_depth_q8, None);
    assert_eq!(look("glint = 9"), "4:9: look.glint = 9 is drawn by the gain tone only: add tone = \"gain\" to [look]");
    assert_eq!(
        look("tone = \"gain\"\nhighlight = 5"),
        "5:13: look.highlight = 5 is not drawn by tone = \"gain\": its sun glint is `glint` (with glint_at, glint_size)"
    );
    assert_eq!(
        look("tone = \"gain\"\nglint = 200\nglint_at = 40\nglint_size = 40"),
        "7:14: look.glint_size = 40 lets calm water glint: with glint_at = 40 along light = [-1, -1], glint_size = 40 \
         must be at most 39"
    );
    // With no glint the lobe may lie anywhere.
    assert_eq!(with("tone = \"gain\"\nglint = 0\nglint_at = 40\nglint_size = 40").glint.size, 40);
    assert_eq!(look("tone = \"gain\"\nsky_max = 257"), "5:11: look.sky_max = 257 is out of range: allowed 0..=256");
}
