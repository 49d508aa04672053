//! `--ground-truth`: the files hold what the frames were drawn from, shown independently (NumPy
//! re-derives the warp from the heights and the frames from the warp: tools/rewarp.py), in the
//! layouts and formats docs/research.md names; bad requests are refused whole.

use std::path::Path;
use std::process::Command;

use crate::support::{bundled_copy, read_png, ripple, root, scratch};
use crate::tools::{Tool, needs};

/// Runs `tools/rewarp.py` on a ground truth and returns its report.
fn rewarp(dir: &Path) -> serde_json::Value {
    let out = Command::new("python3").arg(root().join("tools/rewarp.py")).arg(dir).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}: {stdout}{}", dir.display(), String::from_utf8_lossy(&out.stderr));
    serde_json::from_str(stdout.trim()).unwrap()
}

/// The scene's text with its `[look]` table replaced by one without light.
fn without_light(text: &str, sampling: &str) -> String {
    let mut out = String::new();
    let mut in_look = false;
    let mut smooth = String::new();
    for line in text.lines() {
        if line.starts_with('[') {
            in_look = line.trim() == "[look]";
        }
        if in_look {
            if line.starts_with("smooth") {
                smooth = format!("{line}\n");
            }
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    format!("{out}\n[look]\nsampling = \"{sampling}\"\n{smooth}")
}

/// The frame hashes of a manifest, in order.
fn manifest_hashes(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines().filter(|l| !l.starts_with('#')).map(|l| l.split(' ').nth(1).unwrap().to_string()).collect()
}

#[test]
fn every_bundled_scene_is_rewarped_exactly_from_its_ground_truth() {
    if !needs("every_bundled_scene_is_rewarped_exactly_from_its_ground_truth", &[Tool::Numpy]) {
        return;
    }
    let dir = scratch("truth-bundled");
    for name in ["pond", "pool", "rain", "slit", "spring", "swipes", "loop"] {
        let file = bundled_copy(name, &dir, 50);
        let text = std::fs::read_to_string(dir.join(&file)).unwrap();
        // With the scene's own look the warp is still the heights' (its light is not re-derived).
        let lit = dir.join(format!("{name}-lit"));
        let run = ripple(&[&file, "--ground-truth", lit.to_str().unwrap(), "-q"], &dir);
        assert_eq!(run.code, 0, "{name}: {}", run.stderr);
        let report = rewarp(&lit);
        assert_eq!(report["warp_differs"], serde_json::json!([]), "{name}: {report}");
        for sampling in ["nearest", "bilinear"] {
            let plain = format!("{name}-{sampling}.toml");
            std::fs::write(dir.join(&plain), without_light(&text, sampling)).unwrap();
            let truth = dir.join(format!("{name}-{sampling}"));
            let hashes = dir.join(format!("{name}-{sampling}.txt"));
            let args = [&plain, "--ground-truth", truth.to_str().unwrap(), "--hashes", hashes.to_str().unwrap(), "-q"];
            let run = ripple(&args, &dir);
            assert_eq!(run.code, 0, "{name} {sampling}: {}", run.stderr);
            let report = rewarp(&truth);
            assert_eq!(report["frames"], 50, "{name} {sampling}: {report}");
            assert_eq!(report["frames_compared"], 50, "{name} {sampling}: {report}");
            assert_eq!(report["warp_differs"], serde_json::json!([]), "{name} {sampling}: {report}");
            assert_eq!(report["frames_differ"], serde_json::json!([]), "{name} {sampling}: {report}");
            // The ground truth's frames are the render's: its manifest hashes their RGB.
            let rendered = manifest_hashes(&hashes);
            assert_eq!(rendered.len(), 50);
            for (i, expected) in rendered.iter().enumerate() {
                let (_, _, rgb) = read_png(&truth.join(format!("frame/{i:05}.png")));
                let hash = format!("{:016x}", xxhash_rust::xxh3::xxh3_64(&rgb));
                assert_eq!(&hash, expected, "{name} {sampling} frame {i}");
            }
        }
    }
}

/// A small scene over every edge rule and a wall, with rain and a swipe.
const EDGY: &str = "[video]\nwidth = 48\nheight = 32\nframes = 12\n[background]\npattern = \"checker\"\n\
    [water]\nrefraction = 0.6\n[edges]\nleft = \"wrap\"\nright = \"wrap\"\ntop = \"absorb\"\nbottom = \"reflect\"\n\
    [[stone]]\nat = 0.0\nx = 1\ny = 2\nradius = 4\nweight = 3000\n[[obstacle]]\nshape = \"circle\"\nx = 30\ny = 20\nradius = 5\n\
    [rain]\ndrops_per_second = 40\nseed = 3\n[look]\nsampling = \"bilinear\"\n";

/// An `.npy` file's dtype, shape and data.
fn npy(path: &Path) -> (String, Vec<usize>, Vec<u8>) {
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(&bytes[..8], b"\x93NUMPY\x01\x00", "{}", path.display());
    let len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    assert_eq!((10 + len) % 64, 0, "the data is aligned to 64 bytes");
    let dict = std::str::from_utf8(&bytes[10..10 + len]).unwrap();
    let descr = dict.split("'descr': '").nth(1).unwrap().split('\'').next().unwrap().to_string();
    let shape = dict.split("'shape': (").nth(1).unwrap().split(')').next().unwrap();
    let shape = shape.split(',').map(str::trim).filter(|s| !s.is_empty()).map(|s| s.parse().unwrap()).collect();
    (descr, shape, bytes[10 + len..].to_vec())
}

#[test]
fn the_files_are_what_meta_json_says_in_both_layouts_with_every_extra() {
    let dir = scratch("truth-files");
    std::fs::write(dir.join("edgy.toml"), EDGY).unwrap();
    let run = ripple(&["edgy.toml", "--ground-truth", "gt", "--ground-truth-extras", "npz,flo,kitti", "-q"], &dir);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let gt = dir.join("gt");
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(gt.join("meta.json")).unwrap()).unwrap();
    assert_eq!(meta["frames"], 12);
    assert_eq!(meta["water"]["refraction_q8"], 154);
    assert_eq!(meta["edges"]["left"], "wrap");
    assert!(meta["scene"]["text"].as_str().unwrap().contains("[[obstacle]]"));
    assert_eq!(meta["timeline"].as_array().unwrap().len(), 12);
    let events = meta["events"].as_array().unwrap();
    assert!(events.iter().any(|e| e["kind"] == "stone" && e["x"] == 1 && e["frame"] == 0), "{events:?}");
    assert!(events.iter().any(|e| e["kind"] == "rain"));
    for entry in meta["files"].as_array().unwrap() {
        let pattern = entry["path"].as_str().unwrap();
        let path = gt.join(pattern.replace("{frame:05}", "00011"));
        let shape: Vec<usize> =
            entry["shape"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as usize).collect();
        if pattern.ends_with(".npy") {
            let (descr, found, data) = npy(&path);
            assert_eq!(found, shape, "{pattern}");
            let size = match entry["dtype"].as_str().unwrap() {
                "int16" => 2,
                "int32" | "float32" => 4,
                _ => 8,
            };
            assert_eq!(data.len(), shape.iter().product::<usize>() * size, "{pattern} {descr}");
        } else {
            let (w, h, _) = read_png(&path);
            assert_eq!([h, w, 3], shape[..], "{pattern}");
        }
    }
    // The warp against the flow files: .flo exactly, KITTI's to 1/64 with walls not valid.
    let (_, _, warp) = npy(&gt.join("warp/00011.npy"));
    let warp: Vec<f32> = warp.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
    let flo = std::fs::read(gt.join("flow/00011.flo")).unwrap();
    assert_eq!(&flo[..4], b"PIEH");
    assert_eq!(flo.len(), 12 + 48 * 32 * 8);
    let flow: Vec<f32> = flo[12..].chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
    let decoder =
        png::Decoder::new(std::io::BufReader::new(std::fs::File::open(gt.join("flow_kitti/00011.png")).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut kitti = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut kitti).unwrap();
    assert_eq!((info.bit_depth, info.color_type), (png::BitDepth::Sixteen, png::ColorType::Rgb));
    let mut moved = 0;
    for y in 0..32usize {
        for x in 0..48usize {
            let i = y * 48 + x;
            let (u, v) = (flow[2 * i], flow[2 * i + 1]);
            let mut du = warp[2 * i] - x as f32;
            if du > 24.0 {
                du -= 48.0;
            } else if du < -24.0 {
                du += 48.0;
            }
            assert_eq!((u, v), (du, warp[2 * i + 1] - y as f32), "({x}, {y})");
            let sample = |c: usize| u16::from_be_bytes([kitti[6 * i + 2 * c], kitti[6 * i + 2 * c + 1]]);
            let ku = (f32::from(sample(0)) - 32768.0) / 64.0;
            assert!((ku - u).abs() <= 1.0 / 128.0, "({x}, {y}): {ku} against {u}");
            let wall = (x as i32 - 30).pow(2) + (y as i32 - 20).pow(2) < 16;
            if wall {
                assert_eq!(sample(2), 0, "a wall pixel's flow is not valid ({x}, {y})");
            }
            moved += usize::from(u != 0.0 || v != 0.0);
        }
    }
    assert!(moved > 100, "the water moved too little to test: {moved}");
    // The .npz stacks the frames' files.
    let npz = std::fs::read(gt.join("sequence.npz")).unwrap();
    assert_eq!(&npz[..4], b"PK\x03\x04");
    if needs("the_files_are_what_meta_json_says_in_both_layouts_with_every_extra (NumPy's npz)", &[Tool::Numpy]) {
        let script = "import numpy as np, sys\nz = np.load(sys.argv[1] + '/sequence.npz')\n\
            assert sorted(z.files) == ['height', 'height_raw', 'normal', 'warp'], z.files\n\
            for k in z.files:\n    for i in (0, 11):\n        assert np.array_equal(z[k][i], np.load(f'{sys.argv[1]}/{k}/{i:05}.npy')), (k, i)\n\
            print(z['warp'].shape, z['height'].dtype)\n";
        let out = Command::new("python3").args(["-c", script]).arg(&gt).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "(12, 32, 48, 2) int16");
        assert_eq!(rewarp(&gt)["warp_differs"], serde_json::json!([]));
    }
    // FSRN's layout: depth, the flow as H×2W float64, RGB from 1.
    let run = ripple(&["edgy.toml", "--ground-truth", "fsrn", "--ground-truth-layout", "fsrn", "-q"], &dir);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let fsrn = dir.join("fsrn");
    let (descr, shape, depth) = npy(&fsrn.join("depth/00012.npy"));
    assert_eq!((descr.as_str(), shape), ("<f8", vec![32, 48]));
    let (_, _, height) = npy(&gt.join("height/00011.npy"));
    let height: Vec<f64> = height.chunks_exact(2).map(|b| f64::from(i16::from_le_bytes([b[0], b[1]]))).collect();
    let depth: Vec<f64> = depth.chunks_exact(8).map(|b| f64::from_le_bytes(b.try_into().unwrap())).collect();
    assert_eq!(depth, height);
    let (descr, shape, fw) = npy(&fsrn.join("warp/00012_warp.npy"));
    assert_eq!((descr.as_str(), shape), ("<f8", vec![32, 96]));
    let fw: Vec<f64> = fw.chunks_exact(8).map(|b| f64::from_le_bytes(b.try_into().unwrap())).collect();
    for y in 0..32 {
        for x in 0..48 {
            let i = y * 48 + x;
            assert_eq!([fw[y * 96 + x], fw[y * 96 + 48 + x]], [f64::from(flow[2 * i]), f64::from(flow[2 * i + 1])]);
        }
    }
    assert!(fsrn.join("RGB/00001.png").is_file() && !fsrn.join("RGB/00000.png").exists());
}

#[test]
fn the_same_scene_gives_the_same_bytes_on_any_thread_count() {
    let dir = scratch("truth-same");
    std::fs::write(dir.join("edgy.toml"), EDGY).unwrap();
    for (name, threads) in [("a", "1"), ("b", "2"), ("c", "2")] {
        let run = ripple(&["edgy.toml", "--ground-truth", name, "--threads", threads, "-q"], &dir);
        assert_eq!(run.code, 0, "{}", run.stderr);
    }
    let sums = |name: &str| std::fs::read_to_string(dir.join(name).join("sums.txt")).unwrap();
    assert_eq!(sums("a"), sums("b"));
    assert_eq!(sums("b"), sums("c"));
    assert!(sums("a").lines().count() > 12 * 5);
}

#[test]
fn bad_requests_are_refused_whole_and_nothing_is_left() {
    let dir = scratch("truth-refused");
    std::fs::write(dir.join("edgy.toml"), EDGY).unwrap();
    std::fs::create_dir(dir.join("full")).unwrap();
    std::fs::write(dir.join("full/notes.txt"), "mine").unwrap();
    let refused = |args: &[&str], says: &str| {
        let run = ripple(args, &dir);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains(says), "{args:?}: {}", run.stderr);
        assert_eq!(run.stderr.trim().lines().count(), 2, "one error and its hint: {}", run.stderr);
    };
    refused(&["edgy.toml", "--ground-truth", "full"], "not a ground truth ripple-render wrote");
    refused(&["edgy.toml", "--ground-truth", "full", "--force"], "not a ground truth ripple-render wrote");
    refused(&["edgy.toml", "--ground-truth", "gt", "-o", "out.gif", "--frames", "0..4"], "--frames");
    refused(&["edgy.toml", "--ground-truth", "same", "-o", "same/"], "same");
    refused(&["edgy.toml", "--ground-truth", "edgy.toml"], "edgy.toml");
    let run = ripple(&["edgy.toml", "--ground-truth-layout", "fsrn", "-o", "x.gif"], &dir);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(std::fs::read_to_string(dir.join("full/notes.txt")).unwrap(), "mine");
    let left: Vec<String> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    let mut left = left;
    left.sort();
    assert_eq!(left, ["edgy.toml", "full"]);
    // An earlier ground truth is replaced whole with --force.
    assert_eq!(ripple(&["edgy.toml", "--ground-truth", "gt", "-q"], &dir).code, 0);
    std::fs::write(dir.join("gt/stale.npy"), "old").unwrap();
    assert_eq!(ripple(&["edgy.toml", "--ground-truth", "gt", "-q", "--force"], &dir).code, 0);
    assert!(!dir.join("gt/stale.npy").exists());
}

/// A small spec over the bundled pictures, its frames few.
fn small_spec(dir: &Path) -> String {
    let text = std::fs::read_to_string(root().join("examples/dataset.toml")).unwrap();
    let text = text
        .replace("pictures = \"../scenes\"", &format!("pictures = {:?}", root().join("scenes").display().to_string()))
        .replace("frames = [24, 40]", "frames = [4, 8]")
        .replace("width = 128", "width = 48")
        .replace("height = 128", "height = 40");
    std::fs::write(dir.join("spec.toml"), &text).unwrap();
    "spec.toml".into()
}

/// Every file under `dir` but the shards' indexes, with its bytes, by path.
fn tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let name = path.strip_prefix(dir).unwrap().display().to_string();
                if !name.contains("-of-") {
                    out.push((name, std::fs::read(&path).unwrap()));
                }
            }
        }
    }
    out.sort();
    out
}

#[test]
fn a_dataset_is_the_same_bytes_on_any_thread_count_in_shards_and_after_an_interruption() {
    let dir = scratch("truth-dataset");
    let spec = small_spec(&dir);
    let make = |out: &str, extra: &[&str]| {
        let mut args = vec!["dataset", spec.as_str(), "--count", "12", "--seed", "5", "-o", out, "-q"];
        args.extend(extra);
        let run = ripple(&args, &dir);
        assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
    };
    make("one", &["--threads", "1"]);
    make("two", &["--threads", "2"]);
    for k in ["1/3", "2/3", "3/3"] {
        make("shards", &["--shard", k, "--threads", "2"]);
    }
    assert_eq!(ripple(&["dataset", "--merge", "-o", "shards"], &dir).code, 0);
    let whole = tree(&dir.join("one"));
    assert!(whole.len() > 12 * 10, "{}", whole.len());
    assert!(whole.iter().any(|(n, _)| n.starts_with("val/")) && whole.iter().any(|(n, _)| n.starts_with("test/")));
    assert!(tree(&dir.join("two")) == whole, "two threads made other bytes");
    assert!(tree(&dir.join("shards")) == whole, "the merged shards differ from the whole");
    let index = std::fs::read_to_string(dir.join("one/index.csv")).unwrap();
    assert_eq!(index.lines().count(), 13);
    assert!(index.starts_with("sequence,split,path,seed,picture,"), "{index}");
    // A merge that misses a slice says which sequence is in no index.
    std::fs::remove_file(dir.join("shards/index.2-of-3.json")).unwrap();
    let run = ripple(&["dataset", "--merge", "-o", "shards"], &dir);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("4 of 12 sequences are in no shard's index (the first: 4)"), "{}", run.stderr);

    // Interrupted: a sequence lost a file and another is half-written; the rest are kept.
    let first = whole.iter().find(|(n, _)| n.ends_with("/meta.json")).unwrap().0.clone();
    let broken = dir.join("two").join(Path::new(&first).parent().unwrap());
    std::fs::remove_file(broken.join("height/00000.npy")).unwrap();
    let run = ripple(&["dataset", &spec, "--count", "12", "--seed", "5", "-o", "two"], &dir);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.contains("wrote 1 sequences") && run.stderr.contains("kept 11"), "{}", run.stderr);
    assert!(tree(&dir.join("two")) == whole);

    // Another seed, count or spec into the folder is refused, and so is a folder of other things.
    let run = ripple(&["dataset", &spec, "--count", "12", "--seed", "6", "-o", "two"], &dir);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("another spec, seed or count"), "{}", run.stderr);
    std::fs::create_dir(dir.join("mine")).unwrap();
    std::fs::write(dir.join("mine/notes.txt"), "x").unwrap();
    let run = ripple(&["dataset", &spec, "--count", "2", "-o", "mine"], &dir);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("holds notes.txt"), "{}", run.stderr);
}

#[test]
fn a_bad_spec_is_named_by_line_column_key_and_value() {
    let dir = scratch("truth-spec");
    for (text, says) in [
        ("[dataset]\nwidth = [64, 32]\n", "spec.toml:2:9: dataset.width = [64, 32] is an empty range"),
        ("[water]\nmodel = [\"classic\", \"wave\"]\n", "spec.toml:2:21: water.model[1] = \"wave\""),
        ("[dataset]\nsplit = [0.5, 0.2, 0.2]\n", "sums to 0.9: the fractions must sum to 1"),
        ("[stones]\ncolour = 1\n", "unknown key `stones.colour`"),
        ("[dataset]\npictures = \"nowhere\"\n", "dataset.pictures = \"nowhere\" cannot be read as a folder"),
    ] {
        std::fs::write(dir.join("spec.toml"), text).unwrap();
        let run = ripple(&["dataset", "spec.toml", "--count", "2", "-o", "set"], &dir);
        assert_eq!(run.code, 2, "{text}: {}", run.stderr);
        assert!(run.stderr.contains(says), "{text}: {}", run.stderr);
        assert!(!dir.join("set").exists(), "{text}: a folder was made for a bad spec");
    }
}

#[test]
fn the_tian_preset_starts_from_a_smooth_surface_with_free_wrapped_waves() {
    let dir = scratch("truth-tian");
    std::fs::write(
        dir.join("tian.toml"),
        "[dataset]\npreset = \"tian\"\nwidth = 64\nheight = 48\nframes = 6\n[start]\nheight = 500\nblur = 5\n",
    )
    .unwrap();
    let run = ripple(&["dataset", "tian.toml", "--count", "2", "--seed", "3", "-o", "set", "-q"], &dir);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let meta = tree(&dir.join("set")).into_iter().find(|(n, _)| n.ends_with("meta.json")).unwrap();
    let meta: serde_json::Value = serde_json::from_slice(&meta.1).unwrap();
    let text = meta["scene"]["text"].as_str().unwrap();
    assert!(text.contains("[surface]\nheight = 500\nblur = 5\n") && text.contains("undamped = true"), "{text}");
    assert!(text.contains("all = \"wrap\"") && !text.contains("[[stone]]"), "{text}");
    assert_eq!(meta["water"]["damping_shift"], 0);
    // Frame 0 already moves: the surface, not a stone.
    let first = tree(&dir.join("set")).into_iter().find(|(n, _)| n.ends_with("/height/00000.npy")).unwrap().0;
    let (descr, shape, heights) = npy(&dir.join("set").join(first));
    assert_eq!((descr.as_str(), shape), ("<i2", vec![48, 64]));
    let peak = heights.chunks_exact(2).map(|b| i16::from_le_bytes([b[0], b[1]]).unsigned_abs()).max().unwrap();
    assert!((300..=520).contains(&peak), "peak {peak}");
    // A spring scene cannot be undamped, and a surface needs its height.
    let bad = [
        ("[water]\nmodel = \"spring\"\nundamped = true\n", "water.undamped = true applies to the classic model only"),
        (
            "[water]\nundamped = true\ndamping_shift = 4\n",
            "water.damping_shift = 4 conflicts with water.undamped = true",
        ),
        ("[surface]\nblur = 3\n", "missing key `surface.height`"),
    ];
    for (scene, says) in bad {
        std::fs::write(dir.join("bad.toml"), format!("[video]\nwidth = 16\nheight = 16\nframes = 2\n{scene}")).unwrap();
        let run = ripple(&["bad.toml", "-o", "bad.gif"], &dir);
        assert_eq!(run.code, 2, "{scene}: {}", run.stderr);
        assert!(run.stderr.contains(says), "{scene}: {}", run.stderr);
    }
}

/// A `sequence.npz` whose member passes 4 GiB is written with ZIP64's sizes and offsets, its
/// parts copied through a small buffer (not held whole), and Python's own zipfile reads it back
/// with the right size and CRC. The parts are sparse files, in /dev/shm where there is one (the
/// 4 GiB written is then memory, not disk).
#[test]
fn an_npz_member_past_4_gib_is_written_as_zip64_and_reads_back() {
    if !needs("an_npz_member_past_4_gib_is_written_as_zip64_and_reads_back", &[Tool::Python]) {
        return;
    }
    let shm = Path::new("/dev/shm");
    let base =
        if shm.is_dir() { shm.join(format!("ripple-render-npz-{}", std::process::id())) } else { scratch("npz-4gib") };
    std::fs::create_dir_all(&base).unwrap();
    let head = ripple_render::truth::npy::header(ripple_render::truth::npy::Dtype::F32, &[2, 1 << 29]);
    // Two frames of 2^29 float32 zeros, but for a last value of 1.0 in the second.
    let part = (1u64 << 29) * 4;
    let mut parts = Vec::new();
    for k in 0..2 {
        let path = base.join(format!("{k}.npy"));
        let mut file = std::fs::File::create(&path).unwrap();
        std::io::Write::write_all(
            &mut file,
            &ripple_render::truth::npy::header(ripple_render::truth::npy::Dtype::F32, &[1 << 29]),
        )
        .unwrap();
        let data_start = std::io::Seek::stream_position(&mut file).unwrap();
        file.set_len(data_start + part).unwrap();
        if k == 1 {
            std::io::Seek::seek(&mut file, std::io::SeekFrom::Start(data_start + part - 4)).unwrap();
            std::io::Write::write_all(&mut file, &1.0f32.to_le_bytes()).unwrap();
        }
        parts.push(path);
    }
    let npz = base.join("sequence.npz");
    let written = ripple_render::truth::npy::write_npz(&npz, &[("warp".to_string(), head.clone(), parts)]);
    let check = "import sys, zipfile, zlib\n\
        z = zipfile.ZipFile(sys.argv[1])\n\
        i = z.getinfo('warp.npy')\n\
        print(i.file_size, i.compress_size, i.header_offset)\n\
        r = z.open(i); head = r.read(int(sys.argv[2])); last = b''\n\
        while True:\n    b = r.read(1 << 22)\n    if not b: break\n    last = (last + b)[-4:]\n\
        print(head[:6] == b'\\x93NUMPY', last.hex())\n";
    let out = written
        .map(|()| Command::new("python3").args(["-c", check]).arg(&npz).arg(head.len().to_string()).output().unwrap());
    let _ = std::fs::remove_dir_all(&base);
    let out = out.expect("the npz is written");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{said}{}", String::from_utf8_lossy(&out.stderr));
    let size = head.len() as u64 + 2 * part;
    assert!(size > 1 << 32);
    // zipfile checks the CRC as it reads the last byte; the last value is the 1.0 written.
    assert_eq!(said, format!("{size} {size} 0\nTrue 0000803f\n"));
}

/// The library's in-memory ground truth (what the Python package hands over) is the files a
/// dataset writes, read here by their own formats: the heights and warp of `height/`,
/// `height_raw/` and `warp/` as f32, the frames of `frame/`, the clean picture, `meta.json`.
#[test]
fn a_dataset_sequence_in_memory_is_its_folders_files() {
    use ripple_render::truth::dataset::{self, Pictures, spec::Spec};
    let dir = scratch("truth-in-memory");
    let spec = small_spec(&dir);
    let made = ripple(&["dataset", &spec, "--count", "4", "--seed", "9", "-o", "set", "--quiet"], &dir);
    assert_eq!(made.code, 0, "{}", made.stderr);
    let spec = Spec::load(&dir.join(spec)).unwrap();
    let kept = Pictures::new(64 << 20);
    let splits = dataset::splits(4, 9, spec.split);
    for i in 0..4 {
        let (drawn, seq) = dataset::sequence(&spec, 9, i, &kept, 1).unwrap();
        assert_eq!(drawn.index, i);
        let folder = dir.join("set").join(splits[i as usize]).join(format!("{i:06}"));
        let meta: serde_json::Value =
            serde_json::from_slice(&std::fs::read(folder.join("meta.json")).unwrap()).unwrap();
        assert_eq!(seq.meta, meta, "sequence {i}");
        let [t, h, w] = seq.shape;
        assert_eq!((t as u64, h, w), (meta["frames"].as_u64().unwrap(), 40, 48));
        assert_eq!(npy(&folder.join("clean.npy")).2, seq.clean);
        let as_f32 = |(descr, _, data): (String, Vec<usize>, Vec<u8>)| -> Vec<f32> {
            match descr.as_str() {
                "<i2" => data.chunks_exact(2).map(|b| f32::from(i16::from_le_bytes([b[0], b[1]]))).collect(),
                "<i4" => data.chunks_exact(4).map(|b| i32::from_le_bytes(b.try_into().unwrap()) as f32).collect(),
                "<f4" => data.chunks_exact(4).map(|b| f32::from_le_bytes(b.try_into().unwrap())).collect(),
                other => panic!("{other}"),
            }
        };
        for k in 0..t {
            let name = format!("{k:05}");
            let cells = h * w;
            assert_eq!(as_f32(npy(&folder.join(format!("height/{name}.npy")))), seq.height[k * cells..][..cells]);
            assert_eq!(
                as_f32(npy(&folder.join(format!("height_raw/{name}.npy")))),
                seq.height_raw[k * cells..][..cells]
            );
            assert_eq!(as_f32(npy(&folder.join(format!("warp/{name}.npy")))), seq.warp[2 * k * cells..][..2 * cells]);
            let (_, _, pixels) = read_png(&folder.join(format!("frame/{name}.png")));
            assert_eq!(pixels, seq.frames[3 * k * cells..][..3 * cells], "sequence {i} frame {k}");
            // A normal is a unit vector, upright where the water is flat.
            for n in seq.normal[3 * k * cells..][..3 * cells].chunks_exact(3) {
                assert!((n[0] * n[0] + n[1] * n[1] + n[2] * n[2] - 1.0).abs() < 1e-5 && n[2] > 0.0);
            }
        }
    }
}
