//! The `ripple-render` binary: all talking to the user lives in `cli/`.

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
