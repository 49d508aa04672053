//! The README's CI script, run exactly as the README prints it, on a fresh project of scenes.

use std::path::Path;
use std::process::Command;

use crate::support::{root, scratch};

/// The shell block of the README's "Regression testing in CI" section that is the script.
fn readme_script() -> String {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let section = &readme[readme.find("## Regression testing in CI").expect("the CI section")..];
    let start = section.find("```sh\n#!/usr/bin/env bash\n").expect("the script's block") + "```sh\n".len();
    let end = start + section[start..].find("```").expect("the block's end");
    section[start..end].to_string()
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run_script(project: &Path, args: &[&str]) -> Run {
    let out = Command::new("bash")
        .arg("ci/renders.sh")
        .args(args)
        .current_dir(project)
        .env("RIPPLE_RENDER", env!("CARGO_BIN_EXE_ripple-render"))
        .output()
        .expect("run bash");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

const CHECKER: &str = "[video]\nwidth = 32\nheight = 24\nframes = 6\n[background]\npattern = \"checker\"\n\
                       [[stone]]\nat = 0\nx = 16\ny = 12\nweight = 500\n";
const TILES: &str = "[video]\nwidth = 40\nheight = 30\nframes = 5\n[background]\npattern = \"tiles\"\n\
                     [[stone]]\nat = 0.04\nx = 20\ny = 15\nweight = 400\n";

#[test]
fn the_readme_ci_script_fails_without_references_blesses_and_catches_a_change() {
    let project = scratch("readme-ci");
    std::fs::create_dir_all(project.join("ci")).unwrap();
    std::fs::create_dir_all(project.join("scenes")).unwrap();
    std::fs::write(project.join("ci/renders.sh"), readme_script()).unwrap();
    std::fs::write(project.join("scenes/checker.toml"), CHECKER).unwrap();
    std::fs::write(project.join("scenes/tiles.toml"), TILES).unwrap();

    // A fresh checkout without references fails loudly, naming each scene.
    let run = run_script(&project, &[]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(run.stderr.contains("error: scenes/checker.toml has no reference refs/checker.hashes"), "{}", run.stderr);
    assert!(run.stderr.contains("error: scenes/tiles.toml has no reference"), "{}", run.stderr);

    // Blessing on purpose makes refs/ and the references; then the check passes.
    let run = run_script(&project, &["--bless"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(project.join("refs/checker.hashes").exists() && project.join("refs/tiles.gif").exists());
    let run = run_script(&project, &[]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);

    // A changed scene fails, with a report to look at; a new scene without a reference fails.
    std::fs::write(project.join("scenes/tiles.toml"), TILES.replace("x = 20", "x = 12")).unwrap();
    let run = run_script(&project, &[]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("different: out/tiles.hashes (A) and refs/tiles.hashes (B)"), "{}", run.stdout);
    assert!(project.join("reports/tiles/report.json").exists());
    assert!(project.join("reports/tiles/contact.png").exists());
    std::fs::write(project.join("scenes/third.toml"), CHECKER).unwrap();
    let run = run_script(&project, &["--bless"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    std::fs::remove_file(project.join("refs/third.hashes")).unwrap();
    let run = run_script(&project, &[]);
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("scenes/third.toml has no reference"), "{}", run.stderr);

    // The next passing run leaves the earlier report replaced, not beside a stale one.
    let run = run_script(&project, &["--bless"]);
    assert_eq!(run.code, 0);
    assert_eq!(run_script(&project, &[]).code, 0);
    assert_eq!(crate::support::names(&project.join("reports/tiles")), ["report.json"]);
}
