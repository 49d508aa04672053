//! Replays the fuzzers' committed inputs through the same entry points as `cargo fuzz`: the
//! seeds (`fuzz/seeds/`), the corpus each run kept, minimized (`fuzz/corpus-min/`), and every
//! crash it found (`fuzz/regressions/`), which must now pass. No input may panic.

use std::path::{Path, PathBuf};

fn inputs(target: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut files: Vec<PathBuf> = ["seeds", "corpus-min", "regressions"]
        .iter()
        .filter_map(|kind| std::fs::read_dir(root.join(kind).join(target)).ok())
        .flat_map(|dir| dir.map(|e| e.expect("a fuzz input").path()))
        .collect();
    files.sort();
    files
}

fn replay(target: &str, run: impl Fn(&[u8])) {
    let files = inputs(target);
    assert!(!files.is_empty(), "no inputs for the {target} target: run `cargo run --example fuzz_seeds`");
    for file in files {
        let data = std::fs::read(&file).expect("read a fuzz input");
        // A panic names the input that caused it.
        eprintln!("{}", file.display());
        run(&data);
    }
}

#[test]
fn scene_inputs() {
    replay("scene", ripple_render::fuzzing::scene);
}

#[test]
fn background_inputs() {
    let scratch = std::env::temp_dir().join(format!("ripple-render-fuzz-replay-{}.img", std::process::id()));
    replay("background", |data| ripple_render::fuzzing::background(data, &scratch));
    let _ = std::fs::remove_file(scratch);
}

#[test]
fn render_inputs() {
    replay("render", ripple_render::fuzzing::render);
}
