//! The layers of `src/` import one way, as docs/design.md draws them: a folder may name only the
//! folders below it (`crate::x`), never one above or beside it.

use std::path::Path;

use crate::support::root;

/// Each layer and the layers it may import, lowest first: a layer may import only layers listed
/// before it (checked below), so the order is the one-way rule itself.
const LAYERS: &[(&str, &[&str])] = &[
    ("base", &[]),
    ("scene", &["base"]),
    ("sim", &["scene", "base"]),
    ("encode", &["base"]),
    ("output", &["encode", "base"]),
    ("decode", &["encode", "base"]),
    ("draw", &["sim", "scene", "base"]),
    ("join", &["decode", "encode", "output", "base"]),
    ("render", &["draw", "encode", "output", "sim", "scene", "base"]),
    ("inspect", &["draw", "sim", "scene", "base"]),
    ("diff", &["render", "decode", "draw", "encode", "output", "sim", "scene", "base"]),
    ("check", &["diff", "render", "decode", "draw", "encode", "output", "sim", "scene", "base"]),
    ("live", &["render", "encode", "sim", "scene", "base"]),
    ("truth", &["render", "draw", "encode", "output", "sim", "scene", "base"]),
];

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The modules of the crate's root that `text` names as `crate::NAME`.
fn named(text: &str) -> Vec<String> {
    text.match_indices("crate::")
        .filter(|&(at, _)| !text[..at].ends_with('$'))
        .map(|(at, m)| text[at + m.len()..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect())
        .collect()
}

#[test]
fn each_layer_imports_only_the_layers_below_it() {
    let src = root().join("src");
    let mut wrong = Vec::new();
    for (layer, allowed) in LAYERS {
        let mut files = Vec::new();
        sources(&src.join(layer), &mut files);
        assert!(!files.is_empty(), "src/{layer} is missing");
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            for name in named(&text) {
                if name != *layer && !allowed.contains(&name.as_str()) {
                    wrong.push(format!("{} names crate::{name}", file.strip_prefix(&src).unwrap().display()));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "imports against the layers:\n{}", wrong.join("\n"));
}

#[test]
fn each_layer_imports_only_layers_listed_before_it() {
    let wrong = listed_before_each_other(LAYERS);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The imports a list of layers allows of a layer listed after (or not before) the one that
/// imports it.
fn listed_before_each_other(layers: &[(&str, &[&str])]) -> Vec<String> {
    let mut wrong = Vec::new();
    for (i, (layer, allowed)) in layers.iter().enumerate() {
        for a in *allowed {
            if !layers[..i].iter().any(|(l, _)| l == a) {
                wrong.push(format!("{layer} may import {a}, which is not listed before it"));
            }
        }
    }
    wrong
}

#[test]
fn the_crate_root_holds_no_code_and_every_layer_is_listed() {
    let lib = std::fs::read_to_string(root().join("src/lib.rs")).unwrap();
    let code: Vec<&str> = lib
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("//") && !l.starts_with("#"))
        .filter(|l| !(l.starts_with("pub mod ") || l.starts_with("pub use ")))
        .collect();
    assert!(code.is_empty(), "src/lib.rs should hold only docs, `mod` and `pub use` lines: {code:?}");
    for (layer, _) in LAYERS {
        assert!(lib.contains(&format!("pub mod {layer};")), "src/lib.rs does not declare {layer}");
    }
}

#[test]
fn a_wrong_import_is_caught() {
    // The check itself: an encoder naming the water is found, a macro's `$crate::` is not.
    assert_eq!(named("use crate::sim::field::Cell;\nlet x = crate::base::simd::avx2();"), ["sim", "base"]);
    assert!(named("$crate::base::simd::avx2_enabled()").is_empty());
    // And the order's check: join over diff, as the layers stood before `decode`, is caught.
    let upside_down: &[(&str, &[&str])] = &[("base", &[]), ("join", &["diff", "base"]), ("diff", &["base"])];
    assert_eq!(listed_before_each_other(upside_down), ["join may import diff, which is not listed before it"]);
}
