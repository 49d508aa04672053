//! The integration tests: golden renders of the bundled scenes, the command line as users run it,
//! hostile input, SIGKILL, property tests and the fuzzers' kept inputs.

mod check;
mod checkpoints;
mod cli;
mod diff;
mod docs;
mod effort;
mod formats;
mod fuzz;
mod golden;
mod hostile;
mod images;
mod impacts;
mod install;
mod kill;
mod layers;
mod live;
mod looks;
mod lossy;
mod newcomer;
mod outputs;
mod parts;
mod properties;
mod release;
mod seamless;
mod serve;
mod shores;
mod starter;
mod streams;
mod support;
mod surfaces;
mod time;
mod truth;
mod water_look;
mod web;
mod wholeness;
