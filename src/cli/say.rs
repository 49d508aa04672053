//! What the command line says, and where: results on standard output, and `error:`, `warning:`
//! and `hint:` lines on standard error, none of which may turn a run into a crash.

use std::io::Write;

use ripple_render::Error;
use ripple_render::base::error::Target;

/// Writes `text` to standard output. A reader that stopped early (`| head`) ends the output
/// quietly; any other failure (`> /dev/full`) is an I/O error.
pub(crate) fn print_out(text: &str) -> Result<(), Error> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(source) => Err(Error::Io { target: Target::Stdout, source }),
        Ok(()) => Ok(()),
    }
}

/// Writes a line to stderr. A stderr that cannot be written (a closed pipe, a full disk) never
/// turns a run into a crash: the line is dropped.
pub(crate) fn tell(line: &str) {
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr, "{line}");
}

/// Prints a warning line on stderr.
pub(crate) fn warn(message: &str) {
    tell(&format!("warning: {message}"));
}

/// Prints a hint line on stderr: a suggestion, not a problem.
pub(crate) fn hint(message: &str) {
    tell(&format!("hint: {message}"));
}

/// An error as the command line prints it: `error: …`, then a `hint: …` line for each hint
/// (`serve` shows the same text on its page).
pub(crate) fn error_text(e: &Error) -> String {
    let mut text = format!("error: {e}");
    for hint in e.hints() {
        text += &format!("\nhint: {hint}");
    }
    text
}
