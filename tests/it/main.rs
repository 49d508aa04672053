//! The integration tests: golden renders of the bundled scenes and the command line as users run it.

mod cli;
mod diff;
mod golden;
mod hostile;
mod kill;
mod support;

/// The command-line helpers, shared with the diff tests.
mod cli_support {
    pub use crate::cli::{ripple, scene_dir};
}
