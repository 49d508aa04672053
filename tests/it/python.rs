//! The Python package (python/, docs/python.md) as a user installs it: `pip install ./python`
//! into a fresh virtual environment (maturin builds the wheel), then its own tests (pytest)
//! there, against this build's `ripple-render` and the hostile scenes of tests/it/hostile.rs.

use std::process::Command;

use crate::support::{root, scratch};
use crate::tools::{Tool, needs};

#[test]
fn the_python_package_installs_into_a_fresh_environment_and_its_tests_pass() {
    if !needs("the Python package's tests", &[Tool::Python, Tool::Venv]) {
        return;
    }
    let dir = scratch("python-package");
    let venv = dir.join("venv");
    let made = Command::new("python3").args(["-m", "venv"]).arg(&venv).status().unwrap();
    assert!(made.success(), "python3 -m venv {}", venv.display());
    let python = venv.join("bin/python");
    // The wheel's build is kept between runs (the environment is always new).
    let build = root().join("target/python-wheel");
    let install = Command::new(&python)
        .args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "./python[test]"])
        .current_dir(root())
        .env("CARGO_TARGET_DIR", &build)
        .output()
        .unwrap();
    assert!(
        install.status.success(),
        "pip install ./python[test] failed:\n{}{}",
        String::from_utf8_lossy(&install.stdout),
        String::from_utf8_lossy(&install.stderr)
    );
    let hostile = dir.join("hostile");
    assert!(crate::hostile::export(&hostile) > 20);
    let run = Command::new(&python)
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider", "python/tests"])
        .current_dir(root())
        .env("RIPPLE_RENDER_BIN", env!("CARGO_BIN_EXE_ripple-render"))
        .env("RIPPLE_HOSTILE", &hostile)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .unwrap();
    let said = format!("{}{}", String::from_utf8_lossy(&run.stdout), String::from_utf8_lossy(&run.stderr));
    assert!(run.status.success(), "the Python package's tests failed:\n{said}");
    assert!(said.contains(" passed"), "{said}");
    // Inside, a test skips only for what its own conftest.py names, and never under CI.
    assert!(!crate::tools::in_ci() || !said.contains(" skipped"), "{said}");
}

/// The package is the library's version: pyproject.toml, its crate and the library agree (the
/// module's `__version__` is its crate's).
#[test]
fn the_python_package_has_the_librarys_version() {
    let version = |path: &str| {
        let text = std::fs::read_to_string(root().join(path)).unwrap();
        let line = text.lines().find(|l| l.starts_with("version = ")).unwrap().to_string();
        line.trim_start_matches("version = ").trim_matches('"').to_string()
    };
    let library = version("Cargo.toml");
    assert_eq!(version("python/Cargo.toml"), library);
    assert_eq!(version("python/pyproject.toml"), library);
    let changelog = std::fs::read_to_string(root().join("python/CHANGELOG.md")).unwrap();
    assert!(changelog.contains(&format!("## {library}\n")), "python/CHANGELOG.md has no entry for {library}");
}
