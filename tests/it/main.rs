//! The integration tests: golden renders of the bundled scenes and the command line as users run it.

mod cli;
mod golden;
mod support;
