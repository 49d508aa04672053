//! Installing without compiling (issue #41): the release archives `.ci/package` makes for the
//! release workflow, the `cargo binstall` metadata that finds them, the workflows' and the
//! Action's files, and the Action's steps run here as GitHub runs them (against a release
//! folder on disk instead of github.com).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::support::{root, scratch, small_scenes};
use crate::tools::{Tool, needs};

/// Whether `program` can be run.
fn have(program: &str) -> bool {
    Command::new("sh").args(["-c", &format!("command -v {program}")]).output().is_ok_and(|o| o.status.success())
}

/// Runs `program` with `args` in `dir` and `env`, the caller's CI variables left out.
fn run(program: &Path, args: &[&str], dir: &Path, env: &[(&str, String)]) -> Output {
    Command::new(program)
        .args(args)
        .current_dir(dir)
        .env_remove("CI")
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_STEP_SUMMARY")
        .env_remove("GITHUB_OUTPUT")
        .env_remove("GITHUB_PATH")
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", program.display()))
}

fn said(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// The program, stripped of its debug information when `strip` is there (a debug build is
/// over 100 MB), in `dir`.
fn small_program(dir: &Path) -> PathBuf {
    let program = dir.join("ripple-render");
    let bin = env!("CARGO_BIN_EXE_ripple-render");
    let stripped =
        have("strip") && Command::new("strip").arg("-o").arg(&program).arg(bin).status().is_ok_and(|s| s.success());
    if !stripped {
        std::fs::copy(bin, &program).unwrap();
    }
    program
}

/// `.ci/package TARGET BINARY OUT RUNNABLE`: the archive's path.
fn package(target: &str, binary: &Path, out: &Path) -> PathBuf {
    let script = root().join(".ci/package");
    let made = run(
        &script,
        &[target, binary.to_str().unwrap(), out.to_str().unwrap(), env!("CARGO_BIN_EXE_ripple-render")],
        &root(),
        &[],
    );
    assert!(made.status.success(), "{}", said(&made));
    PathBuf::from(String::from_utf8_lossy(&made.stdout).trim())
}

/// The entries of a `.tar.gz` or `.zip` archive, folders ending in `/`.
fn entries(archive: &Path) -> BTreeSet<String> {
    let script = "import sys, tarfile, zipfile\n\
                  p = sys.argv[1]\n\
                  names = zipfile.ZipFile(p).namelist() if p.endswith('.zip') else \
                  [m.name + ('/' if m.isdir() else '') for m in tarfile.open(p)]\n\
                  print('\\n'.join(names))";
    let out = Command::new("python3").args(["-c", script]).arg(archive).output().expect("python3");
    assert!(out.status.success(), "{}", said(&out));
    String::from_utf8_lossy(&out.stdout).lines().map(|l| l.trim_end_matches('/').to_string()).collect()
}

/// What every archive holds, under its folder `top`, the program named `program`.
fn expected(top: &str, program: &str) -> BTreeSet<String> {
    let mut all: BTreeSet<String> = [
        "",
        "/README.md",
        "/LICENSE",
        "/completions",
        "/completions/ripple-render.bash",
        "/completions/_ripple-render",
        "/completions/ripple-render.fish",
        "/completions/_ripple-render.ps1",
        "/completions/ripple-render.elv",
        "/man",
        "/man/ripple-render.1",
    ]
    .iter()
    .map(|e| format!("{top}{e}"))
    .collect();
    all.insert(format!("{top}/{program}"));
    all
}

/// The targets the release workflow builds, from its matrix.
fn release_targets() -> Vec<String> {
    let workflow = std::fs::read_to_string(root().join(".github/workflows/release.yml")).unwrap();
    workflow.lines().filter_map(|l| l.trim().strip_prefix("- target: ")).map(str::to_string).collect()
}

#[test]
fn the_release_archive_holds_the_program_its_completions_and_man_page() {
    let dir = scratch("release-archive");
    let program = small_program(&dir);
    let out = dir.join("dist");
    let version = env!("CARGO_PKG_VERSION");
    let archive = package("x86_64-unknown-linux-musl", &program, &out);
    let top = format!("ripple-render-{version}-x86_64-unknown-linux-musl");
    assert_eq!(archive, out.join(format!("{top}.tar.gz")));
    assert_eq!(entries(&archive), expected(&top, "ripple-render"));
    // The sum is what sha256sum checks.
    let checked = run(Path::new("sha256sum"), &["-c", &format!("{top}.tar.gz.sha256")], &out, &[]);
    assert!(checked.status.success(), "{}", said(&checked));
    // Unpacked, the program runs and its completions and man page are the command line's.
    let unpacked = dir.join("unpacked");
    std::fs::create_dir_all(&unpacked).unwrap();
    assert!(Command::new("tar").arg("-xzf").arg(&archive).arg("-C").arg(&unpacked).status().unwrap().success());
    let folder = unpacked.join(&top);
    let version_line = run(&folder.join("ripple-render"), &["--version"], &dir, &[]);
    assert!(String::from_utf8_lossy(&version_line.stdout).starts_with(&format!("ripple-render {version} (")));
    let bash =
        run(Path::new("bash"), &["-n", folder.join("completions/ripple-render.bash").to_str().unwrap()], &dir, &[]);
    assert!(bash.status.success(), "{}", said(&bash));
    let man = std::fs::read_to_string(folder.join("man/ripple-render.1")).unwrap();
    assert!(man.contains(".TH ripple-render 1") && man.contains(".SH COMMANDS"), "{}", &man[..200]);
    // A Windows archive is a zip, the program an .exe.
    if needs("the_release_archive_holds_the_program_its_completions_and_man_page (the Windows zip)", &[Tool::Zip]) {
        let archive = package("x86_64-pc-windows-msvc", &program, &out);
        let top = format!("ripple-render-{version}-x86_64-pc-windows-msvc");
        assert_eq!(archive, out.join(format!("{top}.zip")));
        assert_eq!(entries(&archive), expected(&top, "ripple-render.exe"));
    }
}

/// Expands a cargo-binstall template with `values`.
fn expand(template: &str, values: &[(&str, &str)]) -> String {
    let mut text = template.to_string();
    for (key, value) in values {
        text = text.replace(&format!("{{ {key} }}"), value);
    }
    assert!(!text.contains('{'), "a key of {template} is not known here: {text}");
    text
}

#[test]
fn binstall_metadata_names_the_archives_the_release_publishes() {
    let manifest: toml::Value = toml::from_str(&std::fs::read_to_string(root().join("Cargo.toml")).unwrap()).unwrap();
    let crate_ = &manifest["package"];
    let binstall = &crate_["metadata"]["binstall"];
    let (name, version) = (crate_["name"].as_str().unwrap(), crate_["version"].as_str().unwrap());
    let repo = crate_["repository"].as_str().unwrap();
    let targets = release_targets();
    assert!(targets.len() >= 5, "{targets:?}");
    for os in ["linux", "apple-darwin", "windows"] {
        assert!(targets.iter().any(|t| t.contains(os)), "no {os} build in {targets:?}");
    }
    let dir = scratch("release-binstall");
    // The archives' layout does not depend on the program's bytes: a stand-in is packed.
    let stand_in = dir.join("stand-in");
    std::fs::write(&stand_in, b"stand-in").unwrap();
    let out = dir.join("dist");
    for target in &targets {
        if target.contains("windows")
            && !needs("binstall_metadata_names_the_archives_the_release_publishes (the Windows zip)", &[Tool::Zip])
        {
            continue;
        }
        let meta = binstall.get("overrides").and_then(|o| o.get(target.as_str()));
        let key = |k: &str| meta.and_then(|m| m.get(k)).unwrap_or_else(|| &binstall[k]).as_str().unwrap().to_string();
        let ext = if target.contains("windows") { ".exe" } else { "" };
        let values = [("repo", repo), ("name", name), ("version", version), ("target", target), ("bin", name)];
        let url = expand(&key("pkg-url"), &values);
        let mut with_ext = values.to_vec();
        with_ext.push(("binary-ext", ext));
        let bin_dir = expand(&key("bin-dir"), &with_ext);
        let archive = package(target, &stand_in, &out);
        let file = archive.file_name().unwrap().to_str().unwrap();
        assert_eq!(url, format!("{repo}/releases/download/v{version}/{file}"), "{target}");
        assert_eq!(key("pkg-fmt"), if file.ends_with(".zip") { "zip" } else { "tgz" }, "{target}");
        assert!(entries(&archive).contains(&bin_dir), "{target}: {bin_dir} is not in {file}");
    }
}

/// The `run:` scripts of a workflow or action file, with `${{ … }}` expressions replaced by a
/// word, as the runner hands them to bash.
fn run_scripts(yaml_path: &Path) -> Vec<String> {
    let script = "import json, sys, yaml\n\
                  doc = yaml.safe_load(open(sys.argv[1]))\n\
                  found = []\n\
                  def walk(v):\n\
                  \x20   if isinstance(v, dict):\n\
                  \x20       if isinstance(v.get('run'), str): found.append(v['run'])\n\
                  \x20       for x in v.values(): walk(x)\n\
                  \x20   elif isinstance(v, list):\n\
                  \x20       for x in v: walk(x)\n\
                  walk(doc)\n\
                  print(json.dumps(found))";
    let out = Command::new("python3").args(["-c", script]).arg(yaml_path).output().expect("python3");
    assert!(out.status.success(), "{} does not parse as YAML: {}", yaml_path.display(), said(&out));
    let found: Vec<String> = serde_json::from_slice(&out.stdout).unwrap();
    let mut scripts = Vec::new();
    for text in found {
        let mut plain = String::new();
        let mut rest = text.as_str();
        while let Some(start) = rest.find("${{") {
            plain += &rest[..start];
            let end = rest[start..].find("}}").expect("an expression's end") + start + 2;
            plain += "EXPRESSION";
            rest = &rest[end..];
        }
        plain += rest;
        scripts.push(plain);
    }
    scripts
}

#[test]
fn the_workflows_and_the_action_parse_and_name_what_exists() {
    if !needs("the_workflows_and_the_action_parse_and_name_what_exists", &[Tool::PyYaml, Tool::Shellcheck]) {
        return;
    }
    let dir = scratch("release-workflows");
    let files = [
        root().join("action.yml"),
        root().join(".github/workflows/release.yml"),
        root().join(".github/workflows/ci.yml"),
    ];
    // Programs the scripts may call: on every GitHub runner, or installed by a step before.
    let known = [
        "cargo",
        "sudo",
        "apt-get",
        "test",
        "sed",
        "head",
        "case",
        "exe=\"\"",
        "echo",
        "exit",
        "cat",
        "sha256sum",
        "gh",
        "esac",
        "dist/*.tar.gz",
        "--generate-notes",
        "--notes",
        // The wheels' jobs: actions/setup-python puts it on the PATH first.
        "python",
    ];
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        // Every action used is pinned to a major version (the toolchain action's versions are
        // the toolchains' names).
        for line in text.lines().filter_map(|l| l.trim().trim_start_matches("- ").strip_prefix("uses: ")) {
            let (action, version) = line.split_once('@').unwrap_or_else(|| panic!("{line} is not pinned"));
            let pinned = version.starts_with('v') || (action == "dtolnay/rust-toolchain" && version == "stable");
            assert!(action.contains('/') && pinned, "{}: {line}", file.display());
        }
        for (n, script) in run_scripts(file).iter().enumerate() {
            let path = dir.join(format!("{}-{n}.sh", file.file_name().unwrap().to_string_lossy()));
            std::fs::write(&path, format!("#!/usr/bin/env bash\n{script}")).unwrap();
            let parsed = run(Path::new("bash"), &["-n", path.to_str().unwrap()], &dir, &[]);
            assert!(parsed.status.success(), "{}: {script}\n{}", file.display(), said(&parsed));
            let linted = run(Path::new("shellcheck"), &["-S", "warning", path.to_str().unwrap()], &dir, &[]);
            assert!(linted.status.success(), "{}: {script}\n{}", file.display(), said(&linted));
            // Every script the project ships that a step runs exists and can be run.
            for word in script.split(['"', ' ', '\n', '\'']).filter(|w| w.contains(".ci/")) {
                let relative = &word[word.find(".ci/").unwrap()..];
                let meta = std::fs::metadata(root().join(relative))
                    .unwrap_or_else(|_| panic!("{}: {relative} does not exist", file.display()));
                assert!(std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o111 != 0, "{relative}");
            }
            // The first word of every command is a program the runner has.
            for line in script.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
                let first = line.split_whitespace().next().unwrap();
                let ok = known.contains(&first) || first.contains(".ci/") || first.starts_with("dist/");
                assert!(
                    ok || first.ends_with(')') || first.ends_with(";;"),
                    "{}: unknown command {first:?}",
                    file.display()
                );
            }
        }
    }
    // The scripts the steps run pass ShellCheck too.
    for script in [".ci/package", ".ci/action/install.sh", ".ci/action/check.sh", ".ci/run", "tools/test"] {
        let linted = run(Path::new("shellcheck"), &[script], &root(), &[]);
        assert!(linted.status.success(), "{script}\n{}", said(&linted));
    }
    // Every input and output of the Action says what it is.
    let action = std::fs::read_to_string(root().join("action.yml")).unwrap();
    for key in ["scenes:", "refs:", "version:", "args:", "report:", "upload-report:", "result:", "junit:"] {
        let at = action.find(&format!("  {key}\n")).unwrap_or_else(|| panic!("action.yml has no {key}"));
        assert!(action[at..].lines().nth(1).unwrap().trim().starts_with("description:"), "{key}");
    }
}

/// A release folder as GitHub serves one (`download/vVERSION/ARCHIVE`), with the Linux x86_64
/// archive of this build.
fn release_folder(dir: &Path) -> PathBuf {
    let releases = dir.join("releases");
    let version = env!("CARGO_PKG_VERSION");
    let out = releases.join(format!("download/v{version}"));
    package("x86_64-unknown-linux-musl", &small_program(dir), &out);
    releases
}

#[test]
fn the_actions_steps_install_the_release_then_check_and_keep_the_report() {
    if !needs("the_actions_steps_install_the_release_then_check_and_keep_the_report", &[Tool::Curl]) {
        return;
    }
    let dir = scratch("release-action");
    let releases = release_folder(&dir);
    let temp = dir.join("runner-temp");
    std::fs::create_dir_all(&temp).unwrap();
    // A `cargo` that only says how it was called: a fallback never compiles here.
    let fake = dir.join("fake-bin");
    std::fs::create_dir_all(&fake).unwrap();
    std::fs::write(fake.join("cargo"), "#!/bin/sh\necho \"$@\" > \"$(dirname \"$0\")/cargo-called\"\n").unwrap();
    std::fs::set_permissions(fake.join("cargo"), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path_file = dir.join("github-path");
    let base_path = format!("{}:{}", fake.display(), std::env::var("PATH").unwrap());
    let install = |version: &str| {
        let _ = std::fs::remove_file(&path_file);
        let _ = std::fs::remove_file(fake.join("cargo-called"));
        let env = [
            ("RELEASES", format!("file://{}", releases.display())),
            ("VERSION", version.to_string()),
            ("RUNNER_OS", "Linux".to_string()),
            ("RUNNER_ARCH", "X64".to_string()),
            ("RUNNER_TEMP", temp.display().to_string()),
            ("GITHUB_PATH", path_file.display().to_string()),
            ("PATH", base_path.clone()),
        ];
        run(&root().join(".ci/action/install.sh"), &[], &dir, &env)
    };
    // The release's archive, its sum checked, unpacked and put on the PATH.
    let installed = install(env!("CARGO_PKG_VERSION"));
    assert!(installed.status.success(), "{}", said(&installed));
    let bin = PathBuf::from(std::fs::read_to_string(&path_file).unwrap().trim());
    assert!(bin.join("ripple-render").is_file() && !fake.join("cargo-called").exists());
    // A version without a release falls back to cargo install.
    let fallback = install("9.9.9");
    assert!(fallback.status.success(), "{}", said(&fallback));
    assert_eq!(
        std::fs::read_to_string(fake.join("cargo-called")).unwrap().trim(),
        "install --locked ripple-render@9.9.9"
    );
    assert!(said(&fallback).contains("::notice"), "{}", said(&fallback));
    // A sum that does not match stops the job: nothing installed, nothing built.
    let sum = std::fs::read_dir(releases.join(format!("download/v{}", env!("CARGO_PKG_VERSION"))))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "sha256"))
        .unwrap();
    let text = std::fs::read_to_string(&sum).unwrap();
    std::fs::write(&sum, format!("{}{}", "0".repeat(64), &text[64..])).unwrap();
    let refused = install(env!("CARGO_PKG_VERSION"));
    assert_eq!(refused.status.code(), Some(1), "{}", said(&refused));
    assert!(said(&refused).contains("::error title=ripple-render::the SHA-256"), "{}", said(&refused));
    assert!(!path_file.exists() && !fake.join("cargo-called").exists());

    // The check step, with the installed program on the PATH, in a project whose s1 changed.
    let project = dir.join("project");
    std::fs::create_dir_all(&project).unwrap();
    let scenes = small_scenes(&project, "s", 3);
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let mut bless = vec!["check"];
    bless.extend(scenes.iter().map(String::as_str));
    bless.extend(["--refs", "refs", "--bless", "-q"]);
    assert!(run(&bin.join("ripple-render"), &bless, &project, &[]).status.success());
    let edited = project.join("s/s1.toml");
    std::fs::write(&edited, std::fs::read_to_string(&edited).unwrap().replace("radius = 3", "radius = 5")).unwrap();
    let (outputs, summary) = (dir.join("github-output"), dir.join("step-summary"));
    let check = |scenes: &str, args: &str| {
        let _ = std::fs::remove_file(&outputs);
        let _ = std::fs::remove_file(&summary);
        let env = [
            ("SCENES", scenes.to_string()),
            ("REFS", "refs".to_string()),
            ("REPORT", "rendered".to_string()),
            ("ARGS", args.to_string()),
            ("GITHUB_OUTPUT", outputs.display().to_string()),
            ("GITHUB_STEP_SUMMARY", summary.display().to_string()),
            ("GITHUB_ACTIONS", "true".to_string()),
            ("CI", "true".to_string()),
            ("PATH", path.clone()),
        ];
        run(&root().join(".ci/action/check.sh"), &[], &project, &env)
    };
    let failed = check("s/*.toml", "--threads 1");
    assert!(failed.status.success(), "the step passes so that the report is uploaded: {}", said(&failed));
    let out = std::fs::read_to_string(&outputs).unwrap();
    assert!(out.contains("result=failed\n") && out.contains("report=rendered\n"), "{out}");
    assert!(said(&failed).contains("::error file=s/s1.toml"), "{}", said(&failed));
    let text = std::fs::read_to_string(&summary).unwrap();
    assert!(text.contains("s1.toml") && text.contains("ripple-render check --accept-from rendered"), "{text}");
    assert!(project.join("rendered/index.html").is_file() && project.join("rendered/pending/s1.gif").is_file());
    assert!(project.join("rendered.junit.xml").is_file());
    // Patterns split at spaces, `**` reaching into folders: the unchanged scenes pass.
    let passed = check("s/s0.toml   **/s2.toml", "");
    assert!(passed.status.success(), "{}", said(&passed));
    assert!(std::fs::read_to_string(&outputs).unwrap().contains("result=passed\n"));
    // A pattern that matches nothing is named by check, and the step fails at once.
    let bad = check("nothing/*.toml", "");
    assert_eq!(bad.status.code(), Some(2), "{}", said(&bad));
    assert!(said(&bad).contains("nothing/*.toml"), "{}", said(&bad));
    assert!(std::fs::read_to_string(&outputs).unwrap().contains("result=error\n"));
}
