//! What an installed tool is expected to bring (issue #41): shell completions and a man page
//! made from the command line's own definition, `--version` with the commit and the SIMD path,
//! `plan` over several scenes quietly (the pre-commit hook), and a package that is complete.

use std::process::Command;

use crate::support::{ripple, root, scene_dir};
use crate::tools::{Tool, needs};

#[test]
fn completions_for_every_shell_name_every_subcommand() {
    let dir = scene_dir("install-completions", "");
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let run = ripple(&["completions", shell], &dir);
        assert_eq!(run.code, 0, "{shell}: {}", run.stderr);
        for word in ["serve", "check", "join", "plan", "max-size", "effort"] {
            assert!(run.stdout.contains(word), "{shell}: no {word}");
        }
    }
    // The bash script is bash.
    let script = ripple(&["completions", "bash"], &dir).stdout;
    std::fs::write(dir.join("ripple-render.bash"), script).unwrap();
    let parsed = Command::new("bash").arg("-n").arg(dir.join("ripple-render.bash")).status().unwrap();
    assert!(parsed.success());
    let run = ripple(&["completions", "tcsh"], &dir);
    assert!(run.code == 2 && run.stderr.contains("possible values: bash"), "{}", run.stderr);
}

/// What each shell completes for a subcommand's flag typed in part, with the script the program
/// writes for it: bash by sourcing it and calling its function as bash would, fish by asking
/// `complete -C`, zsh by loading it under compinit (the shells that are installed; `.ci/run`
/// installs them).
#[test]
fn completions_complete_a_subcommands_flags_in_each_shell() {
    let dir = scene_dir("install-complete", "");
    let script = |shell: &str| {
        let path = dir.join(format!("ripple-render.{shell}"));
        std::fs::write(&path, ripple(&["completions", shell], &dir).stdout).unwrap();
        path
    };
    let bash = script("bash");
    let complete = |words: &str| {
        let body = format!(
            "source {}; COMP_WORDS=({words}); COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 )); COMP_LINE='{words}'; \
             COMP_POINT=${{#COMP_LINE}}; _ripple__render ripple-render \"${{COMP_WORDS[$COMP_CWORD]}}\" \
             \"${{COMP_WORDS[$COMP_CWORD-1]}}\"; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            bash.display()
        );
        let out = Command::new("bash").arg("-c").arg(body).output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    for (words, wanted) in [
        ("ripple-render serve --po", "--port"),
        ("ripple-render check --bl", "--bless"),
        ("ripple-render join --fo", "--force"),
        ("ripple-render --qual", "--quality"),
    ] {
        let offered = complete(words);
        assert!(offered.lines().any(|l| l.trim() == wanted), "bash, {words}: {offered:?}");
    }
    if needs("completions_complete_a_subcommands_flags_in_each_shell (fish)", &[Tool::Fish]) {
        let fish = script("fish");
        let out = Command::new("fish")
            .arg("-c")
            .arg(format!("source {}; complete -C 'ripple-render serve --po'", fish.display()))
            .output()
            .unwrap();
        assert!(String::from_utf8_lossy(&out.stdout).starts_with("--port"), "fish: {out:?}");
    }
    if needs("completions_complete_a_subcommands_flags_in_each_shell (zsh)", &[Tool::Zsh]) {
        let zsh = script("zsh");
        std::fs::create_dir_all(dir.join("zfunc")).unwrap();
        std::fs::copy(&zsh, dir.join("zfunc/_ripple-render")).unwrap();
        let body = format!(
            "fpath=({} $fpath); autoload -Uz compinit; compinit -u -D; autoload -Uz +X _ripple-render; \
             print -r -- ${{_comps[ripple-render]}}; functions _ripple-render | grep -c -- '--port'",
            dir.join("zfunc").display()
        );
        let out = Command::new("zsh").arg("-f").arg("-c").arg(body).output().unwrap();
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success() && said.starts_with("_ripple-render\n"), "zsh: {said} {out:?}");
    }
}

#[test]
fn the_man_page_and_the_version_say_what_this_build_is() {
    let dir = scene_dir("install-man", "");
    let man = ripple(&["man"], &dir);
    assert_eq!(man.code, 0, "{}", man.stderr);
    assert!(man.stdout.starts_with(".ie") || man.stdout.contains(".TH ripple-render 1"), "{}", &man.stdout[..200]);
    for section in [".SH NAME", ".SH SYNOPSIS", ".SH OPTIONS", ".SH COMMANDS", ".SS \"ripple\\-render serve\""] {
        assert!(man.stdout.contains(section), "no {section}");
    }
    // One page holds every subcommand's options, and names no page that is not shipped.
    for option in ["\\-\\-port", "\\-\\-accept\\-from", "\\-\\-merge\\-reports", "\\-\\-min\\-psnr", "\\-\\-walls"] {
        assert!(man.stdout.contains(option), "no {option}");
    }
    assert!(!man.stdout.contains("(1)"), "names another page");
    // `ripple-render 0.1.0 (COMMIT, PATH)`: the commit this was built from (or `unknown` outside
    // Git), and the kernels' path on this machine.
    let version = ripple(&["--version"], &dir).stdout;
    let inside = version.trim().strip_prefix(&format!("ripple-render {} (", env!("CARGO_PKG_VERSION")));
    let (commit, path) = inside.and_then(|v| v.strip_suffix(')')).and_then(|v| v.split_once(", ")).expect(&version);
    assert!(commit == "unknown" || (commit.len() == 12 && commit.bytes().all(|b| b.is_ascii_hexdigit())), "{version}");
    assert!(path == "avx2" || path == "portable", "{version}");
    let portable = Command::new(env!("CARGO_BIN_EXE_ripple-render"))
        .arg("--version")
        .env("RIPPLE_RENDER_NO_SIMD", "1")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&portable.stdout).contains(", portable)"));
}

#[test]
fn plan_validates_several_scenes_quietly_as_the_pre_commit_hook_runs_it() {
    let dir = scene_dir(
        "install-plan",
        "[video]\nframes = 3\n[background]\npattern = \"tiles\"\n[[stone]]\nat = 0\nx = 5\ny = 5\n",
    );
    std::fs::write(
        dir.join("b.toml"),
        "[video]\nframes = 2\n[[stone]]\nat = 0\nx = 5\ny = 5\n[background]\ncolor = \"#203040\"\n",
    )
    .unwrap();
    let run = ripple(&["plan", "--quiet", "scene.toml", "b.toml"], &dir);
    assert!(run.code == 0 && run.stdout.is_empty(), "{}{}", run.stdout, run.stderr);
    std::fs::write(dir.join("bad.toml"), "[video]\nfps = 0\n").unwrap();
    let run = ripple(&["plan", "-q", "scene.toml", "bad.toml", "b.toml"], &dir);
    assert_eq!(run.code, 2);
    assert!(run.stderr.starts_with("error: bad.toml:2:7"), "{}", run.stderr);
    // The hook runs exactly that.
    let hooks = std::fs::read_to_string(root().join(".pre-commit-hooks.yaml")).unwrap();
    assert!(hooks.contains("entry: ripple-render plan --quiet") && hooks.contains("language: rust"));
}

#[test]
fn the_package_names_its_licence_and_keeps_test_assets_out() {
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    for key in [
        "description = ",
        "license = \"MIT\"",
        "repository = ",
        "readme = ",
        "keywords = ",
        "categories = ",
        "rust-version = ",
    ] {
        assert!(manifest.contains(key), "Cargo.toml has no {key}");
    }
    let licence = std::fs::read_to_string(root().join("LICENSE")).unwrap();
    assert!(licence.starts_with("MIT License"));
    // What `cargo package` would put in the crate (no network, no build).
    let listed = Command::new(env!("CARGO"))
        .args(["package", "--list", "--allow-dirty", "--offline"])
        .current_dir(root())
        .output()
        .unwrap();
    let files = String::from_utf8_lossy(&listed.stdout);
    assert!(listed.status.success(), "{}", String::from_utf8_lossy(&listed.stderr));
    for wanted in ["src/main.rs", "src/cli/serve/page.html", "scenes/pond.toml", "LICENSE", "README.md", "build.rs"] {
        assert!(files.lines().any(|l| l == wanted), "the package lacks {wanted}");
    }
    for unwanted in ["tests/golden", "bench/", "fuzz/", "target/", ".ci/"] {
        assert!(!files.lines().any(|l| l.starts_with(unwanted)), "the package holds {unwanted}");
    }
}
