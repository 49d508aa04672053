//! Hostile input to `dataset` and `--ground-truth`: bad counts and slices, merges of damaged or
//! forged shards, pictures no sequence can use, a run killed and run again, two runs into one
//! folder at once, odd pictures (one pixel, 16 bits, CMYK, cut short), a ground truth into the
//! render's own folder or through a symlink. Each gets one clear error with exit code 2, or
//! works, and nothing half-written is left.

use std::path::Path;
use std::process::Command;

use crate::support::{ripple, root, scratch};
use crate::tools::{Tool, needs};

/// A small spec over the bundled pictures (named by full path), in `dir`.
fn spec(dir: &Path) -> String {
    let text = format!(
        "[dataset]\npictures = \"{}\"\nwidth = 32\nheight = 24\nframes = [3, 5]\n[stones]\ncount = [1, 2]\n",
        root().join("scenes").display()
    );
    std::fs::write(dir.join("spec.toml"), text).unwrap();
    "spec.toml".into()
}

/// Runs `dataset` with `args` in `dir`.
fn dataset(dir: &Path, args: &[&str]) -> crate::support::Run {
    ripple(&[&["dataset"], args].concat(), dir)
}

/// Every file under `dir`, relative, with its bytes, sorted.
fn tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let path = e.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let name = path.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
                out.push((name, std::fs::read(&path).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// Names under `dir` that are our temporaries (a leading dot).
fn leftovers(dir: &Path) -> Vec<String> {
    tree(dir).into_iter().map(|(n, _)| n).filter(|n| n.split('/').any(|part| part.starts_with('.'))).collect()
}

#[test]
fn bad_counts_slices_and_ranges_are_refused_and_make_nothing() {
    let dir = scratch("hostile-data-args");
    let spec = spec(&dir);
    for (args, says) in [
        (vec!["--count", "0"], "invalid value '0' for '--count <N>': expected a whole number from 1 up"),
        (vec!["--count", "3", "--shard", "0/3"], "invalid value '0/3' for '--shard <K/N>'"),
        (vec!["--count", "3", "--shard", "4/3"], "invalid value '4/3' for '--shard <K/N>'"),
        (vec!["--count", "3", "--shard", "1/0"], "invalid value '1/0' for '--shard <K/N>'"),
        (vec!["--count", "3", "--shard", "1/3/3"], "expected K/N, the K-th of N slices"),
        (vec!["--count", "-2"], "unexpected argument '-2'"),
    ] {
        let run = dataset(&dir, &[&[spec.as_str(), "-o", "set"], &args[..]].concat());
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains(says), "{args:?}: {}", run.stderr);
        assert!(!dir.join("set").exists(), "{args:?}: a folder was made");
    }
    for (text, says) in [
        (
            "[dataset]\nframes = [9, 3]\n",
            "spec.toml:2:10: dataset.frames = [9, 3] is an empty range: lo must not exceed hi",
        ),
        ("[dataset]\nframes = []\n", "dataset.frames = [] is not a range"),
        ("[water]\nrefraction = [0.6, 0.2]\n", "water.refraction = [0.6, 0.2] is an empty range"),
        ("[water]\nmodel = []\n", "water.model = [] is empty: name at least one of classic, spring"),
        ("[stones]\ncount = [5]\n", "stones.count = [5] is not a range"),
        ("[look]\nsampling = []\n", "look.sampling = [] is empty"),
    ] {
        std::fs::write(dir.join("bad.toml"), text).unwrap();
        let run = dataset(&dir, &["bad.toml", "--count", "2", "-o", "set"]);
        assert_eq!(run.code, 2, "{text}: {}", run.stderr);
        assert!(run.stderr.contains(&says.replace("spec.toml", "bad.toml")), "{text}: {}", run.stderr);
        assert!(!dir.join("set").exists(), "{text}: a folder was made");
    }
}

/// A dataset of 9 in three slices, merged; returns the folder.
fn sliced(dir: &Path, name: &str) -> std::path::PathBuf {
    let spec = spec(dir);
    for k in ["1/3", "2/3", "3/3"] {
        let run = dataset(dir, &[&spec, "--count", "9", "--seed", "4", "--shard", k, "-o", name, "-q"]);
        assert_eq!(run.code, 0, "{}", run.stderr);
    }
    dir.join(name)
}

#[test]
fn a_merge_refuses_a_missing_folder_a_deleted_sequence_an_edited_sums_file_and_a_forged_index() {
    let dir = scratch("hostile-data-merge");
    let merge = |name: &str| dataset(&dir, &["--merge", "-o", name]);
    let set = sliced(&dir, "set");
    let run = merge("set");
    assert_eq!(run.code, 0, "{}", run.stderr);
    let whole = tree(&set);
    // A folder that is not there, or not a dataset's.
    let run = merge("nowhere");
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("error: nowhere is not a dataset's folder: it does not exist"), "{}", run.stderr);
    std::fs::create_dir(dir.join("plain")).unwrap();
    let run = merge("plain");
    assert!(
        run.code == 2 && run.stderr.contains("plain is not a dataset's folder: it has no dataset.json"),
        "{}",
        run.stderr
    );
    // Each damage is refused, naming the sequence and the slice to run again; the index is left.
    let index = std::fs::read(set.join("index.json")).unwrap();
    let sequence = |n: u64| {
        let found = whole.iter().find(|(p, _)| p.ends_with(&format!("{n:06}/meta.json"))).unwrap();
        set.join(Path::new(&found.0).parent().unwrap())
    };
    type Damage<'a> = (&'a str, Box<dyn Fn() + 'a>, &'a str);
    let damages: [Damage; 3] = [
        ("a deleted sequence", Box::new(|| std::fs::remove_dir_all(sequence(4)).unwrap()), "sequence 4 ("),
        (
            "an edited sums.txt",
            Box::new(|| {
                let sums = sequence(7).join("sums.txt");
                let text = std::fs::read_to_string(&sums).unwrap();
                let flipped =
                    if text.starts_with('0') { text.replacen('0', "1", 1) } else { format!("0{}", &text[1..]) };
                std::fs::write(sums, flipped).unwrap();
            }),
            "sequence 7 (",
        ),
        (
            "a forged slice index",
            Box::new(|| {
                let slice = set.join("index.2-of-3.json");
                let text = std::fs::read_to_string(&slice).unwrap();
                let forged = text.replacen("\"frames\": \"", "\"frames\": \"1", 1);
                assert_ne!(forged, text);
                std::fs::write(slice, forged).unwrap();
            }),
            "index.2-of-3.json: the entry of sequence 3 is not the one its spec and seed draw",
        ),
    ];
    for (what, damage, says) in damages {
        let fresh = sliced(&dir, "set");
        assert_eq!(fresh, set);
        damage();
        let run = merge("set");
        assert_eq!(run.code, 2, "{what}: {}", run.stderr);
        assert!(run.stderr.contains(says), "{what}: {}", run.stderr);
        assert!(run.stderr.contains("hint: run --shard 2/3 again into this folder") || what != "a forged slice index");
        assert_eq!(std::fs::read(set.join("index.json")).unwrap(), index, "{what}: the index was rewritten");
        // The slice run again mends it, and the merge is the whole again.
        for k in ["1/3", "2/3", "3/3"] {
            let run = dataset(&dir, &["spec.toml", "--count", "9", "--seed", "4", "--shard", k, "-o", "set", "-q"]);
            assert_eq!(run.code, 0, "{what}: {}", run.stderr);
        }
        assert_eq!(merge("set").code, 0, "{what}");
        assert!(tree(&set) == whole, "{what}: mended, the dataset differs");
    }
    // Slices of two different splits are not merged together.
    std::fs::write(set.join("index.1-of-2.json"), std::fs::read(set.join("index.1-of-3.json")).unwrap()).unwrap();
    let run = merge("set");
    assert!(run.code == 2 && run.stderr.contains("slices of different splits into shards"), "{}", run.stderr);
}

#[test]
fn every_picture_is_checked_before_the_first_sequence_is_written() {
    let dir = scratch("hostile-data-pictures");
    std::fs::create_dir(dir.join("pics")).unwrap();
    std::fs::copy(root().join("scenes/koi.png"), dir.join("pics/a.png")).unwrap();
    let lagoon = std::fs::read(root().join("scenes/lagoon.png")).unwrap();
    std::fs::write(dir.join("pics/z.png"), &lagoon[..lagoon.len() / 3]).unwrap();
    std::fs::write(dir.join("spec.toml"), "[dataset]\npictures = \"pics\"\nwidth = 16\nheight = 16\nframes = 2\n")
        .unwrap();
    let run = dataset(&dir, &["spec.toml", "--count", "20", "-o", "set"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("spec.toml:2:12: dataset.pictures = \"pics\" holds z.png, which cannot be a sequence's picture: cannot decode it: the file is truncated"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains(".toml:9"), "it names a scene file that does not exist: {}", run.stderr);
    assert!(!dir.join("set").exists(), "a partial dataset was written");
}

#[cfg(unix)]
#[test]
fn a_run_killed_and_run_again_is_completed_and_two_runs_at_once_both_work() {
    let dir = scratch("hostile-data-kill");
    let spec = spec(&dir);
    let args = [spec.as_str(), "--count", "300", "--seed", "8"];
    let run = dataset(&dir, &[&args[..], &["-o", "whole"]].concat());
    assert_eq!(run.code, 0, "{}", run.stderr);
    let whole = tree(&dir.join("whole"));
    // Killed at several moments (SIGKILL: nothing is cleaned up), then run again.
    let mut mended = 0;
    for (k, delay) in [20u64, 120, 250].into_iter().enumerate() {
        let out = format!("killed-{k}");
        let mut child = Command::new(env!("CARGO_BIN_EXE_ripple-render"))
            .args(["dataset"])
            .args(args)
            .args(["-o", &out, "--threads", "2"])
            .current_dir(&dir)
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(delay));
        child.kill().unwrap();
        child.wait().unwrap();
        let run = dataset(&dir, &[&args[..], &["-o", &out]].concat());
        assert_eq!(run.code, 0, "killed after {delay} ms: {}", run.stderr);
        let again = tree(&dir.join(&out));
        assert!(again == whole, "killed after {delay} ms and run again: not the whole dataset");
        assert!(leftovers(&dir.join(&out)).is_empty(), "{:?}", leftovers(&dir.join(&out)));
        mended += usize::from(!run.stderr.contains("wrote 0 sequences"));
    }
    assert!(mended > 0, "no kill landed before the run was done: nothing was tested");
    // Two runs into one folder at once: both succeed, and the folder is the whole.
    let start = |threads: &str| {
        Command::new(env!("CARGO_BIN_EXE_ripple-render"))
            .args(["dataset"])
            .args(args)
            .args(["-o", "both", "--threads", threads, "-q"])
            .current_dir(&dir)
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (start("1"), start("2"));
    for child in [a, b] {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    assert!(tree(&dir.join("both")) == whole, "two runs at once: not the whole dataset");
    assert!(leftovers(&dir.join("both")).is_empty());
}

/// Pictures made here with Pillow: one pixel, 16-bit grey and RGB, CMYK JPEG; and cut short.
fn odd_pictures(dir: &Path) {
    let script = "import sys\nfrom PIL import Image\nimport numpy as np\n\
        im = Image.open(sys.argv[1]).convert('RGB')\n\
        Image.new('RGB', (1, 1), (10, 200, 30)).save('one.png')\n\
        im.convert('CMYK').save('cmyk.jpg', quality=95)\n\
        a = np.asarray(im).astype(np.uint16) * 257\n\
        Image.fromarray(a[:, :, 0]).save('grey16.png')\n\
        im.save('rgb.jpg', quality=95)\n";
    let out = Command::new("python3")
        .args(["-c", script])
        .arg(root().join("scenes/lagoon.png"))
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // 16 bits a channel, RGB, by the image crate.
    let lagoon = image::open(root().join("scenes/lagoon.png")).unwrap();
    lagoon.to_rgb16().save(dir.join("rgb16.png")).unwrap();
    let cut = |from: &str, to: &str| {
        let bytes = std::fs::read(dir.join(from)).unwrap();
        std::fs::write(dir.join(to), &bytes[..bytes.len() * 2 / 3]).unwrap();
    };
    cut("rgb.jpg", "cut.jpg");
    cut("rgb16.png", "cut.png");
}

#[test]
fn odd_pictures_render_and_give_a_ground_truth_or_are_refused_named() {
    if !needs("odd_pictures_render_and_give_a_ground_truth_or_are_refused_named", &[Tool::Numpy, Tool::PillowWebp]) {
        return;
    }
    let dir = scratch("hostile-data-odd");
    odd_pictures(&dir);
    for (picture, works) in [
        ("one.png", true),
        ("grey16.png", true),
        ("rgb16.png", true),
        ("cmyk.jpg", true),
        ("cut.jpg", false),
        ("cut.png", false),
    ] {
        let scene = format!(
            "[video]\nwidth = 40\nheight = 30\nframes = 3\n[background]\nimage = \"{picture}\"\n\
             [[stone]]\nat = 0\nx = 9\ny = 9\n"
        );
        std::fs::write(dir.join("scene.toml"), scene).unwrap();
        let render = ripple(&["scene.toml", "-o", "out.gif", "-f", "-q"], &dir);
        let truth = ripple(&["scene.toml", "--ground-truth", "truth", "-f", "-q"], &dir);
        if works {
            assert_eq!(render.code, 0, "{picture}: {}", render.stderr);
            assert_eq!(truth.code, 0, "{picture}: {}", truth.stderr);
        } else {
            for run in [&render, &truth] {
                assert_eq!(run.code, 2, "{picture}: {}", run.stderr);
                assert!(
                    run.stderr.contains(&format!(
                        "background.image = \"{picture}\": {picture}: cannot decode it: the file is truncated"
                    )),
                    "{picture}: {}",
                    run.stderr
                );
            }
        }
        let _ = std::fs::remove_dir_all(dir.join("truth"));
    }
    // The CMYK picture is the RGB one, as a viewer shows it (within the JPEG's loss).
    std::fs::write(dir.join("cmyk.toml"), "[video]\nframes = 1\n[background]\nimage = \"cmyk.jpg\"\n").unwrap();
    assert_eq!(ripple(&["cmyk.toml", "-o", "cmyk-frames/", "-q"], &dir).code, 0);
    let drawn = image::open(dir.join("cmyk-frames/frame_0000.png")).unwrap().to_rgb8().into_raw();
    let picture = image::open(root().join("scenes/lagoon.png")).unwrap().to_rgb8().into_raw();
    assert_eq!(drawn.len(), picture.len());
    let off: u64 = drawn.iter().zip(&picture).map(|(x, y)| u64::from(x.abs_diff(*y))).sum();
    let mean = off as f64 / drawn.len() as f64;
    assert!(mean < 8.0, "the CMYK picture is {mean:.1} levels from the picture on average");
    // In a dataset, a cut picture is refused up front; the others make sequences.
    std::fs::create_dir(dir.join("pics")).unwrap();
    for name in ["one.png", "grey16.png", "rgb16.png", "cmyk.jpg"] {
        std::fs::copy(dir.join(name), dir.join("pics").join(name)).unwrap();
    }
    std::fs::write(dir.join("spec.toml"), "[dataset]\npictures = \"pics\"\nwidth = 24\nheight = 24\nframes = 2\n")
        .unwrap();
    let run = dataset(&dir, &["spec.toml", "--count", "8", "-o", "set", "-q"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    std::fs::copy(dir.join("cut.jpg"), dir.join("pics/cut.jpg")).unwrap();
    let run = dataset(&dir, &["spec.toml", "--count", "8", "-o", "set2"]);
    assert!(
        run.code == 2 && run.stderr.contains("holds cut.jpg, which cannot be a sequence's picture"),
        "{}",
        run.stderr
    );
    assert!(!dir.join("set2").exists());
}

#[test]
fn a_ground_truth_is_never_the_renders_own_folder_and_goes_through_a_symlink() {
    let dir = scratch("hostile-data-truth-paths");
    std::fs::copy(root().join("scenes/koi.png"), dir.join("koi.png")).unwrap();
    std::fs::write(
        dir.join("scene.toml"),
        "[video]\nwidth = 40\nheight = 30\nframes = 3\n[background]\nimage = \"koi.png\"\n[[stone]]\nat = 0\nx = 9\ny = 9\n",
    )
    .unwrap();
    std::fs::create_dir(dir.join("frames")).unwrap();
    std::fs::create_dir(dir.join("gt")).unwrap();
    for (args, says) in [
        (
            vec!["-o", "frames/", "--ground-truth", "frames"],
            "the output frames/ and the ground truth frames are the same",
        ),
        (vec!["-o", "frames/", "--ground-truth", "frames/gt"], "are one inside the other"),
        (vec!["-o", "gt/frames/", "--ground-truth", "gt"], "are one inside the other"),
        (vec!["-o", "gt/out.gif", "--ground-truth", "gt"], "are one inside the other"),
    ] {
        let run = ripple(&[&["scene.toml"], &args[..]].concat(), &dir);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains(says), "{args:?}: {}", run.stderr);
        assert!(crate::support::names(&dir.join("frames")).is_empty(), "{args:?}");
        assert!(crate::support::names(&dir.join("gt")).is_empty(), "{args:?}");
    }
    // Through a symlink to a folder (and to -o's own folder: refused, the same place).
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink("gt", dir.join("link")).unwrap();
        let run = ripple(&["scene.toml", "--ground-truth", "link", "-q"], &dir);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert!(dir.join("gt/meta.json").is_file() && dir.join("link").is_symlink());
        std::os::unix::fs::symlink("frames", dir.join("to-frames")).unwrap();
        let run = ripple(&["scene.toml", "-o", "frames/", "--ground-truth", "to-frames"], &dir);
        assert!(run.code == 2 && run.stderr.contains("are the same"), "{}", run.stderr);
    }
}
