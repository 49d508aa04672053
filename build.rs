//! Records the commit a build is made from, for `--version` (`unknown` outside a Git checkout,
//! as in a crates.io package). Nothing rendered depends on it: the provenance inside rendered
//! files names the version alone, so bytes do not change between builds.

use std::path::Path;
use std::process::Command;

fn main() {
    let commit = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=RIPPLE_RENDER_COMMIT={commit}");
    // Built again when HEAD moves: the file HEAD names (a branch) or HEAD itself (detached).
    let head = Path::new(".git/HEAD");
    if head.exists() {
        println!("cargo:rerun-if-changed=.git/HEAD");
        if let Some(branch) =
            std::fs::read_to_string(head).ok().and_then(|h| h.strip_prefix("ref: ").map(|r| r.trim().to_string()))
        {
            let path = Path::new(".git").join(branch);
            if path.exists() {
                println!("cargo:rerun-if-changed={}", path.display());
            }
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}
