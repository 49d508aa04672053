//! The documentation as a user meets it: the CI commands of docs/diff-and-ci.md, run exactly as
//! printed on a fresh project of scenes; every relative link of every page resolving, anchors
//! included; and every scene snippet reading as a scene.

use std::path::{Path, PathBuf};
use std::process::Command;

use ripple_render::Scene;

use crate::support::{root, scratch};
use crate::tools::{Tool, needs};

/// The CI section of docs/diff-and-ci.md.
fn ci_section() -> String {
    let doc = std::fs::read_to_string(root().join("docs/diff-and-ci.md")).unwrap();
    doc[doc.find("## Regression testing in CI").expect("the CI section")..].to_string()
}

/// The lines of the section's fenced blocks in `language` that start with `prefix` (YAML list
/// items and `run:` keys stripped), as printed.
fn commands(section: &str, language: &str, prefix: &str) -> Vec<String> {
    let fence = format!("```{language}\n");
    let mut out = Vec::new();
    let mut rest = section;
    while let Some(start) = rest.find(&fence) {
        let block = &rest[start + fence.len()..];
        let end = block.find("```").expect("the block's end");
        for line in block[..end].lines() {
            let line = line.trim().trim_start_matches("- ").trim_start_matches("run: ");
            if line.starts_with(prefix) {
                out.push(line.split(" #").next().unwrap().trim().to_string());
            }
        }
        rest = &block[end..];
    }
    out
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

/// Runs `script` in bash in `project` with `ripple-render` on the PATH and `env` set. The caller's
/// CI variables are never handed on: the recipes are a person's, run at a desk, unless `env` says
/// otherwise.
fn shell(project: &Path, script: &str, env: &[(&str, String)]) -> std::process::Output {
    let bin = Path::new(env!("CARGO_BIN_EXE_ripple-render")).parent().unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    Command::new("bash")
        .args(["-c", script])
        .current_dir(project)
        .env("PATH", path)
        .env_remove("GITHUB_STEP_SUMMARY")
        .env_remove("GITHUB_ACTIONS")
        .env_remove("CI")
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .output()
        .expect("run bash")
}

/// Runs a command line as printed, in bash, with `ripple-render` on the PATH.
fn run_printed(project: &Path, line: &str) -> Run {
    let out = shell(project, line, &[]);
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
fn the_ci_commands_as_printed_fail_without_references_bless_and_catch_a_change() {
    let section = ci_section();
    let checks = commands(&section, "sh", "ripple-render check");
    let [job, look, bless, accept, accept_one] = &checks[..] else {
        panic!("expected the job, a look, a bless and two accepts: {checks:?}")
    };
    assert!(accept.contains("--accept-from report") && accept_one.starts_with(accept.as_str()), "{checks:?}");
    assert!(bless.ends_with("--bless") && !job.contains("--bless"), "{checks:?}");
    // The GitHub Actions and GitLab CI jobs (two YAML blocks) run the same command as printed.
    assert_eq!(commands(&section, "yaml", "ripple-render check"), [job.clone(), job.clone()]);
    let project = scratch("docs-ci");
    std::fs::create_dir_all(project.join("scenes")).unwrap();
    std::fs::write(project.join("scenes/checker.toml"), CHECKER).unwrap();
    std::fs::write(project.join("scenes/tiles.toml"), TILES).unwrap();

    // A fresh checkout without references fails, naming each scene, and writes none.
    let run = run_printed(&project, job);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("scene scenes/checker.toml ... FAILED: no reference refs/checker.gif"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("scene scenes/tiles.toml ... FAILED: no reference"), "{}", run.stdout);
    assert!(!project.join("refs").exists());
    assert!(project.join("junit.xml").exists() && project.join("report/index.html").exists());

    // Blessing on purpose makes refs/ and the references; then the job passes.
    let run = run_printed(&project, bless);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(project.join("refs/checker.gif").exists() && project.join("refs/tiles.gif").exists());
    let run = run_printed(&project, job);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);

    // A changed scene fails, with a page to look at, which the look before blessing writes too.
    std::fs::write(project.join("scenes/tiles.toml"), TILES.replace("x = 20", "x = 12")).unwrap();
    let run = run_printed(&project, job);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("scene scenes/tiles.toml ... FAILED: 4 of 5 frames differ, the first is frame 1"),
        "{}",
        run.stdout
    );
    let page = std::fs::read_to_string(project.join("report/index.html")).unwrap();
    assert!(page.contains("scenes/tiles.toml") && page.contains("-f0001-heat.png"), "{page}");
    assert_eq!(run_printed(&project, look).code, 1);
    assert_eq!(run_printed(&project, bless).code, 0);
    assert_eq!(run_printed(&project, job).code, 0);

    // Another change, accepted from the job's report as printed: the job then passes.
    std::fs::write(project.join("scenes/tiles.toml"), TILES.replace("x = 20", "x = 26")).unwrap();
    assert_eq!(run_printed(&project, job).code, 1);
    let run = run_printed(&project, accept);
    assert!(
        run.code == 0 && run.stdout.contains("accepted scenes/tiles.toml: refs/tiles.gif replaced"),
        "{}",
        run.stdout
    );
    assert_eq!(run_printed(&project, job).code, 0);
}

/// The pages of the documentation: the README, CONTRIBUTING and every page under docs/.
fn pages() -> Vec<PathBuf> {
    let mut pages = vec![root().join("README.md"), root().join("CONTRIBUTING.md"), root().join("fuzz/README.md")];
    let docs = std::fs::read_dir(root().join("docs")).unwrap().flatten().map(|e| e.path());
    let mut docs: Vec<PathBuf> = docs.filter(|p| p.extension().is_some_and(|e| e == "md")).collect();
    docs.sort();
    pages.extend(docs);
    pages
}

/// The anchor GitHub gives a heading: lower case, letters, digits, `-` and `_` kept, spaces as
/// `-`, everything else dropped.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a page's headings (outside code blocks).
fn anchors(text: &str) -> Vec<String> {
    let mut fenced = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
        } else if !fenced && line.starts_with('#') {
            out.push(anchor(line.trim_start_matches('#')));
        }
    }
    out
}

/// The targets of a page's Markdown links and images, `[text](target)`, outside code.
fn links(text: &str) -> Vec<String> {
    let mut fenced = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            out.push(after[..end].to_string());
            rest = &after[end..];
        }
    }
    out
}

#[test]
fn every_relative_link_resolves() {
    let mut broken = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap_or_else(|e| panic!("{}: {e}", page.display()));
        for link in links(&text) {
            if link.starts_with("http://") || link.starts_with("https://") || link.starts_with("mailto:") {
                continue;
            }
            let (file, fragment) = link.split_once('#').unwrap_or((&link, ""));
            let target = if file.is_empty() { page.clone() } else { page.parent().unwrap().join(file) };
            if !target.exists() {
                broken.push(format!("{}: {link} (no {})", page.display(), target.display()));
                continue;
            }
            if !fragment.is_empty() && target.extension().is_some_and(|e| e == "md") {
                let headings = anchors(&std::fs::read_to_string(&target).unwrap());
                if !headings.iter().any(|a| a == fragment) {
                    broken.push(format!("{}: {link} (no heading #{fragment})", page.display()));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn a_broken_link_is_caught() {
    assert_eq!(links("see [a](b.md#c) and ![d](e.png)"), ["b.md#c", "e.png"]);
    assert_eq!(anchor("Walls and edges (§8), one thread"), "walls-and-edges-8-one-thread");
    assert_eq!(anchors("# A\n```\n# not a heading\n```\n## `diff`"), ["a", "diff"]);
}

/// Every ```toml block of every page, with its page.
fn snippets() -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        let mut block: Option<String> = None;
        for line in text.lines() {
            match (&mut block, line.trim_start()) {
                (None, "```toml") => block = Some(String::new()),
                (Some(_), "```") => out.push((page.clone(), block.take().unwrap_or_default())),
                (Some(text), _) => {
                    text.push_str(line);
                    text.push('\n');
                }
                (None, _) => {}
            }
        }
    }
    out
}

#[test]
fn every_scene_snippet_reads_as_a_scene() {
    let snippets = snippets();
    assert!(snippets.len() >= 6, "only {} toml snippets found", snippets.len());
    // Snippets name the bundled pictures, relative to the scenes' folder.
    let file = root().join("scenes/snippet.toml");
    for (page, text) in snippets {
        // A dataset's spec reads as one.
        if text.contains("[dataset]") {
            if let Err(e) = ripple_render::truth::dataset::spec::Spec::read(&text, &file) {
                panic!("{}: a spec snippet does not read as a spec:\n{text}\n{e}", page.display());
            }
            continue;
        }
        // A fragment (a table or two) is read inside a scene of one frame.
        let text = if text.contains("[video]") { text } else { format!("[video]\nframes = 1\n{text}") };
        if let Err(e) = Scene::from_toml_str(&text, &file) {
            panic!("{}: a snippet does not read as a scene:\n{text}\n{e}", page.display());
        }
    }
}

/// The part of `doc` under the heading `heading`, up to the next heading of its level or above.
fn under<'a>(doc: &'a str, heading: &str) -> &'a str {
    let start = doc.find(heading).unwrap_or_else(|| panic!("no {heading:?}")) + heading.len();
    let rest = &doc[start..];
    let end = ["\n### ", "\n## "].iter().filter_map(|h| rest.find(h)).min().unwrap_or(rest.len());
    &rest[..end]
}

/// The fenced blocks of `section` in `language`, as printed.
fn blocks(section: &str, language: &str) -> Vec<String> {
    let fence = format!("```{language}\n");
    section.split(&fence).skip(1).map(|b| b[..b.find("```").expect("the block's end")].to_string()).collect()
}

/// [`shell`]'s exit code and what the script said.
fn bash(project: &Path, script: &str, env: &[(&str, String)]) -> (Option<i32>, String) {
    let out = shell(project, script, env);
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.code(), said)
}

/// [`bash`], which must succeed.
fn run_script(project: &Path, script: &str, env: &[(&str, String)]) -> String {
    let (code, said) = bash(project, script, env);
    assert_eq!(code, Some(0), "{script}\n{said}");
    said
}

/// A small scene for the recipes: no look, so that comparing GIFs is quick in a debug build.
const LONG: &str = "[video]\nwidth = 48\nheight = 32\nfps = 25\nframes = 21\n[background]\npattern = \"tiles\"\n\
                    [[stone]]\nat = 0.1\nx = 20\ny = 15\nweight = 400\n[rain]\ndrops_per_second = 20\nseed = 2\n";

/// A project with `scenes/long.toml` and its whole render `whole.gif`.
fn recipe_project(name: &str) -> PathBuf {
    let project = scratch(name);
    std::fs::create_dir_all(project.join("scenes")).unwrap();
    std::fs::write(project.join("scenes/long.toml"), LONG).unwrap();
    run_script(&project, "ripple-render scenes/long.toml -o whole.gif -q", &[]);
    project
}

fn same_as_whole(project: &Path, joined: &str) {
    let said = run_script(project, &format!("ripple-render diff {joined} whole.gif"), &[]);
    assert!(said.contains("same:") && said.contains("21 frames compared"), "{said}");
}

#[test]
fn the_farm_recipes_as_printed_make_the_whole_render() {
    let doc = std::fs::read_to_string(root().join("docs/distributed.md")).unwrap();

    // GNU parallel, on this machine's cores.
    let parallel = blocks(under(&doc, "### GNU parallel"), "sh");
    if needs("the_farm_recipes_as_printed_make_the_whole_render (GNU parallel)", &[Tool::Parallel]) {
        let project = recipe_project("recipe-parallel");
        run_script(&project, &parallel[0], &[]);
        same_as_whole(&project, "long.gif");
    }

    // The Kubernetes Indexed Job: each pod's command with the index the Job sets, the shared
    // volume a folder of the project.
    let section = under(&doc, "### A Kubernetes Indexed Job");
    let yaml = &blocks(section, "yaml")[0];
    let line = yaml.lines().find(|l| l.trim_start().starts_with("command:")).expect("the pod's command");
    let command = line.split("\"-c\", \"").nth(1).and_then(|c| c.strip_suffix("\"]")).expect("sh -c \"…\"");
    let completions: u32 = yaml.lines().find_map(|l| l.trim().strip_prefix("completions: ")).unwrap().parse().unwrap();
    let project = recipe_project("recipe-kubernetes");
    let work = project.join("work");
    std::fs::create_dir_all(work.join("scenes")).unwrap();
    std::fs::write(work.join("scenes/long.toml"), LONG).unwrap();
    let here = |text: &str| text.replace("/work", &work.display().to_string());
    for index in 0..completions {
        run_script(&project, &here(command), &[("JOB_COMPLETION_INDEX", index.to_string())]);
    }
    let join = blocks(section, "sh")[0].lines().find(|l| l.starts_with("ripple-render join")).unwrap().to_string();
    run_script(&project, &here(&join), &[]);
    same_as_whole(&project, "work/long.gif");

    // The Slurm array: the batch script once per task, then the join it depends on.
    let section = under(&doc, "### A Slurm array");
    let sh = blocks(section, "sh");
    let script = sh.iter().find(|b| b.starts_with("#!/bin/sh")).expect("the batch script");
    let tasks = script.lines().find_map(|l| l.strip_prefix("#SBATCH --array=1-")).unwrap().parse::<u32>().unwrap();
    let project = recipe_project("recipe-slurm");
    for task in 1..=tasks {
        run_script(&project, script, &[("SLURM_ARRAY_TASK_ID", task.to_string()), ("SLURM_CPUS_PER_TASK", "2".into())]);
    }
    let wrap = sh.iter().find_map(|b| b.split("--wrap '").nth(1)).and_then(|w| w.split('\'').next()).unwrap();
    run_script(&project, wrap, &[]);
    same_as_whole(&project, "long.gif");
}

#[test]
fn the_sharded_check_recipe_as_printed_merges_into_the_whole_verdict() {
    let doc = std::fs::read_to_string(root().join("docs/distributed.md")).unwrap();
    let yaml = &blocks(under(&doc, "### A sharded `check` on GitHub Actions"), "yaml")[0];
    let runs: Vec<&str> = yaml
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- run: "))
        .filter(|l| l.starts_with("ripple-render"))
        .collect();
    let [shard, merge] = runs[..] else { panic!("expected a shard's check and the merge: {runs:?}") };
    let shards: Vec<String> = yaml
        .lines()
        .find_map(|l| l.trim().strip_prefix("shard: ["))
        .and_then(|l| l.strip_suffix(']'))
        .unwrap()
        .split(", ")
        .map(str::to_string)
        .collect();
    let project = scratch("recipe-github");
    std::fs::create_dir_all(project.join("scenes")).unwrap();
    for (name, body) in [("checker", CHECKER), ("tiles", TILES), ("long", LONG)] {
        std::fs::write(project.join(format!("scenes/{name}.toml")), body).unwrap();
    }
    run_script(&project, "ripple-render check scenes/*.toml --refs refs --bless -q", &[]);
    // A scene changed after blessing: one shard fails, and so must the merge.
    std::fs::write(project.join("scenes/tiles.toml"), TILES.replace("x = 20", "x = 12")).unwrap();
    let mut failed = 0;
    for k in &shards {
        let (code, _) = bash(&project, &shard.replace("${{ matrix.shard }}", k), &[]);
        failed += usize::from(code == Some(1));
        // upload-artifact, then download-artifact with a pattern: reports/NAME/.
        std::fs::create_dir_all(project.join("reports")).unwrap();
        std::fs::rename(project.join(format!("report-{k}")), project.join(format!("reports/check-report-{k}")))
            .unwrap();
    }
    assert_eq!(failed, 1, "the shard that holds the changed scene fails");
    let (code, said) = bash(&project, merge, &[]);
    assert_eq!(code, Some(1), "{said}");
    assert!(said.contains("scene scenes/tiles.toml ... FAILED") && said.contains("2 same; 1 different"), "{said}");
    assert!(project.join("report/index.html").exists() && project.join("junit.xml").exists());
}

#[test]
fn the_dataset_recipe_as_printed_makes_the_whole_dataset() {
    let doc = std::fs::read_to_string(root().join("docs/distributed.md")).unwrap();
    let recipe = &blocks(under(&doc, "## A dataset on many machines"), "sh")[0];
    if !needs("the_dataset_recipe_as_printed_makes_the_whole_dataset", &[Tool::Parallel]) {
        return;
    }
    // The project as the recipe finds it: the example spec and the pictures it names.
    let project = scratch("recipe-dataset");
    std::fs::create_dir_all(project.join("examples")).unwrap();
    std::fs::create_dir_all(project.join("scenes")).unwrap();
    std::fs::copy(root().join("examples/dataset.toml"), project.join("examples/dataset.toml")).unwrap();
    for entry in std::fs::read_dir(root().join("scenes")).unwrap().flatten() {
        if entry.path().extension().is_some_and(|e| e == "png") {
            std::fs::copy(entry.path(), project.join("scenes").join(entry.file_name())).unwrap();
        }
    }
    run_script(&project, recipe, &[]);
    let whole = recipe.lines().next().unwrap().split("-o set").next().unwrap().replace("parallel ", "");
    run_script(&project, &format!("{whole} -o whole -q"), &[]);
    for file in ["index.json", "index.csv", "dataset.json"] {
        let (a, b) = (std::fs::read(project.join("set").join(file)), std::fs::read(project.join("whole").join(file)));
        assert!(a.unwrap() == b.unwrap(), "{file} differs");
    }
    let sums = |dir: &str| {
        let index: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(project.join(dir).join("index.json")).unwrap()).unwrap();
        let rows = index["sequences"].as_array().unwrap().clone();
        rows.iter()
            .map(|r| std::fs::read(project.join(dir).join(r["path"].as_str().unwrap()).join("sums.txt")).unwrap())
            .collect::<Vec<_>>()
    };
    assert_eq!(sums("set").len(), 24);
    assert!(sums("set") == sums("whole"));
}
