//! The library's one error type: every way a render can be refused or fail.

use std::fmt;
use std::path::PathBuf;

/// Everything that can stop a scene from being read or rendered.
///
/// The command line maps [`Error::is_input`] errors to exit code 2 and the rest to 3.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The scene file is not valid TOML or breaks a rule of the scene format.
    #[error("{0}")]
    Scene(Box<Diagnostic>),

    /// The scene file could not be read.
    #[error("cannot read scene {}: {}", path.display(), os_reason(source))]
    SceneUnreadable {
        /// The scene path as given.
        path: PathBuf,
        /// Why reading failed.
        source: std::io::Error,
    },

    /// The background image is missing, unreadable or cannot be decoded.
    #[error("background image {}: {reason}", path.display())]
    Background {
        /// The resolved path of the image.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },

    /// A file or folder the tool reads, other than the scene and its pictures, cannot be used:
    /// a render, folder or manifest given to `diff`, a reference, a part given to `join`, a
    /// checkpoint, a shard's report.
    #[error("{}: {reason}", path.display())]
    Input {
        /// The input as given.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },

    /// A request that cannot be carried out as asked: options that do not go together, an output
    /// path or format that cannot be used, parts that do not make a render (a usage error, found
    /// before any work).
    #[error("{message}")]
    Usage {
        /// What is wrong.
        message: String,
        /// How to fix it.
        hint: Option<String>,
    },

    /// Writing the output failed.
    #[error("cannot write {target}: {}", os_reason(source))]
    Io {
        /// What was being written.
        target: Target,
        /// The operating system's reason.
        source: std::io::Error,
    },

    /// The render would need more memory than its budget (found before allocating).
    #[error("{message}")]
    Budget {
        /// The estimate and the budget.
        message: String,
        /// How to raise the budget.
        hint: String,
    },

    /// The render was asked to stop (a signal, through the stop flag) before it finished.
    #[error("interrupted")]
    Interrupted,

    /// The ffmpeg program could not be started, or ended without making the video.
    #[error("encoding failed: {0}")]
    Ffmpeg(String),

    /// The system would not start a thread.
    #[error("cannot start a thread: {0}")]
    Thread(std::io::Error),

    /// An encoder refused its input, or its threads stopped: a bug, not a user error, and never
    /// shown for anything a user can change.
    #[error("encoding failed: {0}")]
    Encode(String),
}

impl Error {
    /// True when the input (scene, background, command line) is at fault rather than the machine.
    pub fn is_input(&self) -> bool {
        matches!(
            self,
            Error::Scene(_)
                | Error::SceneUnreadable { .. }
                | Error::Background { .. }
                | Error::Input { .. }
                | Error::Usage { .. }
                | Error::Budget { .. }
        )
    }

    /// Extra lines that help the user fix the problem (printed as `hint: …`).
    pub fn hints(&self) -> Vec<String> {
        match self {
            Error::Scene(d) => d.hint.iter().cloned().collect(),
            Error::Usage { hint, .. } => hint.iter().cloned().collect(),
            Error::Budget { hint, .. } => vec![hint.clone()],
            Error::Io { target: Target::Stdout, .. } => Vec::new(),
            Error::Io { source, .. } => {
                use std::io::ErrorKind::{FileTooLarge, QuotaExceeded, StorageFull};
                match source.kind() {
                    StorageFull | QuotaExceeded | FileTooLarge => vec![
                        "no space left for the output (a full disk, a quota, or a file size limit such as \
                         `ulimit -f`); an output file appears whole or not at all, so none was left half-written \
                         and an existing one is unchanged"
                            .into(),
                    ],
                    std::io::ErrorKind::BrokenPipe => {
                        vec!["the program reading the output stopped before the end".into()]
                    }
                    _ => Vec::new(),
                }
            }
            _ => Vec::new(),
        }
    }

    /// A request that cannot be carried out as asked: `message` says what and why, `hint` (if
    /// any) how to ask instead.
    pub fn usage(message: impl Into<String>, hint: Option<&str>) -> Self {
        Error::Usage { message: message.into(), hint: hint.map(str::to_string) }
    }

    /// The file or folder `path`, given as input, cannot be used: `reason` says why.
    pub fn input(path: impl Into<PathBuf>, reason: impl fmt::Display) -> Self {
        Error::Input { path: path.into(), reason: reason.to_string() }
    }

    /// Writing the file or folder at `path` failed.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io { target: Target::Path(path.into()), source }
    }

    /// Writing the output an encoder was handed failed; whoever handed it names it
    /// ([`Error::writing`]).
    pub fn output(source: std::io::Error) -> Self {
        Error::Io { target: Target::Output, source }
    }

    /// This error with the output it speaks of, unnamed so far, named `target`.
    pub fn writing(self, target: Target) -> Self {
        match self {
            Error::Io { target: Target::Output, source } => Error::Io { target, source },
            other => other,
        }
    }
}

/// What an I/O error was writing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A file or a folder.
    Path(PathBuf),
    /// Standard output.
    Stdout,
    /// The output an encoder was handed: a writer it knows by no name.
    Output,
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Path(path) => write!(f, "{}", path.display()),
            Target::Stdout => f.write_str("standard output"),
            Target::Output => f.write_str("the output"),
        }
    }
}

/// The operating system's reason for an I/O error, without Rust's "(os error N)" suffix.
pub fn os_reason(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.rfind(" (os error ") {
        Some(at) if text.ends_with(')') => text[..at].to_string(),
        _ => text,
    }
}

/// A problem at one place in a scene file, shown with its line and a caret under the value.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Diagnostic {
    /// The scene file as given on the command line.
    pub file: PathBuf,
    /// 1-based line of the offending text.
    pub line: usize,
    /// 1-based column (in characters) of the offending text.
    pub column: usize,
    /// What is wrong: the key path, the value and what is allowed.
    pub message: String,
    /// The text of the offending line.
    pub source_line: String,
    /// How many characters to underline, at least 1.
    pub underline: usize,
    /// A suggestion such as "did you mean `radius`?".
    pub hint: Option<String>,
    /// Whether the text is a `--set KEY=VALUE` override from the command line, not a line of
    /// the file.
    pub from_set: bool,
    /// The file the key names, when that file is not there (a background or a mask).
    pub missing: Option<PathBuf>,
}

impl Diagnostic {
    /// Builds a diagnostic for the byte range `span` of `source`.
    pub fn at(file: &std::path::Path, source: &str, span: std::ops::Range<usize>, message: String) -> Self {
        let start = floor_char_boundary(source, span.start.min(source.len()));
        let end = floor_char_boundary(source, span.end.clamp(start, source.len()));
        let line_start = source[..start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = source[start..].find('\n').map_or(source.len(), |i| start + i);
        let line = source[..start].matches('\n').count() + 1;
        let column = source[line_start..start].chars().count() + 1;
        let source_line = source[line_start..line_end].trim_end_matches('\r').to_string();
        let underline = source[start..end.min(line_end).max(start)].chars().count().max(1);
        Diagnostic {
            file: file.to_path_buf(),
            line,
            column,
            message,
            source_line,
            underline,
            hint: None,
            from_set: false,
            missing: None,
        }
    }

    /// Builds a diagnostic for the byte range `span` of a `--set` override's text.
    pub fn for_override(text: &str, span: std::ops::Range<usize>, message: String) -> Self {
        let diagnostic = Diagnostic::at(std::path::Path::new("--set"), text, span, message);
        Diagnostic { from_set: true, ..diagnostic }
    }

    /// The bytes of `source` (the text it was made from) it underlines, when it lies on one
    /// line of that text (`None` for an override, or another text).
    pub fn byte_range(&self, source: &str) -> Option<std::ops::Range<usize>> {
        if self.from_set {
            return None;
        }
        let line_start = if self.line == 1 { 0 } else { source.match_indices('\n').nth(self.line - 2)?.0 + 1 };
        let line = source[line_start..].split('\n').next()?.trim_end_matches('\r');
        if line != self.source_line {
            return None;
        }
        let byte_at = |chars: usize| line.char_indices().map(|(i, _)| i).chain([line.len()]).nth(chars);
        let start = byte_at(self.column - 1)?;
        let end = byte_at(self.column - 1 + self.underline)?;
        Some(line_start + start..line_start + end)
    }

    pub(crate) fn with_hint(mut self, hint: Option<String>) -> Self {
        self.hint = hint;
        self
    }
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.from_set {
            // The argument itself, cut short when long: the window below shows where.
            let text = &self.source_line;
            let shown = if text.chars().count() > 80 {
                format!("{}…", text.chars().take(60).collect::<String>())
            } else {
                text.clone()
            };
            writeln!(f, "--set {shown}: {}", self.message)?;
        } else {
            writeln!(f, "{}:{}:{}: {}", self.file.display(), self.line, self.column, self.message)?;
        }
        let number = if self.from_set { "--set".to_string() } else { self.line.to_string() };
        let pad = " ".repeat(number.len());
        // Control characters (a NUL byte, say) would garble a terminal: show them as `?`.
        let shown: String =
            self.source_line.chars().map(|c| if c.is_control() && c != '\t' { '?' } else { c }).collect();
        // A very long line is shown as a window around the column.
        let chars: Vec<char> = shown.chars().collect();
        let first = (self.column - 1).saturating_sub(40).min(chars.len());
        let last = (self.column - 1 + self.underline.min(80) + 40).min(chars.len()).max(first);
        let mut window: String = chars[first..last].iter().collect();
        let mut column = self.column - 1 - first;
        if first > 0 {
            window.insert(0, '…');
            column += 1;
        }
        if last < chars.len() {
            window.push('…');
        }
        writeln!(f, "{pad} |")?;
        writeln!(f, "{number} | {window}")?;
        let lead: String = window.chars().take(column).map(|c| if c == '\t' { '\t' } else { ' ' }).collect();
        write!(f, "{pad} | {lead}{}", "^".repeat(self.underline.min(80)))
    }
}

/// The library's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn diagnostic_finds_line_and_column_in_characters() {
        let src = "[video]\nfps = \"é\"  \nwidth = 0\n";
        let start = src.find("0\n").unwrap();
        let d = Diagnostic::at(Path::new("s.toml"), src, start..start + 1, "bad".into());
        assert_eq!((d.line, d.column), (3, 9));
        assert_eq!(d.source_line, "width = 0");
        let text = d.to_string();
        assert_eq!(text, "s.toml:3:9: bad\n  |\n3 | width = 0\n  |         ^");
    }

    #[test]
    fn long_lines_are_shown_as_a_window_around_the_column() {
        let src = format!("x = {}1{}", "[".repeat(5000), "]".repeat(5000));
        let at = src.find('1').unwrap();
        let text = Diagnostic::at(Path::new("s.toml"), &src, at..at + 1, "bad".into()).to_string();
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[2].chars().count() < 140, "{}", lines[2]);
        assert!(lines[2].starts_with("1 | …[[[") && lines[2].ends_with("]]]…"), "{}", lines[2]);
        // The caret still sits under the `1`.
        let caret = lines[3].chars().position(|c| c == '^').unwrap();
        assert_eq!(lines[2].chars().nth(caret), Some('1'));
    }

    #[test]
    fn diagnostic_underline_stops_at_line_end() {
        let src = "a = [\n1,\n2]\n";
        let d = Diagnostic::at(Path::new("s.toml"), src, 4..src.len(), "x".into());
        assert_eq!((d.line, d.column, d.underline), (1, 5, 1));
    }
}
