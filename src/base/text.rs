//! Names from outside (scene paths, reference paths) made inert where they are shown: in a
//! terminal, a job summary's Markdown, a JUnit file's XML. A name may hold anything a file
//! system allows: newlines, escape sequences, backticks, HTML, bytes that are not UTF-8.

use std::fmt::Write;
use std::path::Path;

/// `text` with every control character (C0, DEL, C1) and every bidirectional override shown as
/// an escape (`\n`, `\t`, `\r`, `\u{1b}`), so it cannot break a line, move a cursor, colour a
/// terminal or reorder what is read.
pub fn inert(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}') => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out
}

/// A path as shown: its bytes read as UTF-8 (others as U+FFFD), made [`inert`].
pub fn path(path: &Path) -> String {
    inert(&path.to_string_lossy())
}

/// `text` (already [`inert`]) as a Markdown code span inside a table cell: fenced by one more
/// backtick than its longest run of them, padded when it starts or ends with one, and with
/// `|` escaped (a table splits its cells before it reads code spans).
pub fn markdown_code(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') { " " } else { "" };
    format!("{fence}{pad}{}{pad}{fence}", text.replace('|', "\\|"))
}

/// `text` (already [`inert`]) as plain Markdown text inside a table cell: every character
/// that could start emphasis, code, a link, an autolink, HTML or an entity, or end the cell,
/// escaped.
pub fn markdown_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if "\\`*_[]()<>#!|~&:".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// `text` as one word of a POSIX shell command to copy: as it is when it holds only
/// characters no shell reads specially, else in single quotes (each `'` as `'\''`).
pub fn shell_word(text: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./,:=+@%".contains(c);
    if !text.is_empty() && text.chars().all(plain) {
        return text.to_string();
    }
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// A path as one word of a shell command to copy: [`shell_word`] of its text, or where its
/// bytes are not UTF-8 (a Unix file name may hold any byte but `/` and NUL), bash's and zsh's
/// `$'…'` with each byte outside printable ASCII as `\xNN`, so the command names the very
/// file.
pub fn shell_path(path: &Path) -> String {
    if let Some(text) = path.to_str() {
        return shell_word(text);
    }
    let mut out = String::from("$'");
    for &b in path.as_os_str().as_encoded_bytes() {
        match b {
            b'\\' | b'\'' => {
                out.push('\\');
                out.push(char::from(b));
            }
            0x20..=0x7e => out.push(char::from(b)),
            _ => {
                let _ = write!(out, "\\x{b:02x}");
            }
        }
    }
    out.push('\'');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_path_of_any_bytes_is_one_word_that_names_it() {
        use std::os::unix::ffi::OsStrExt;
        assert_eq!(shell_path(Path::new("s/pond.toml")), "s/pond.toml");
        let odd = Path::new(std::ffi::OsStr::from_bytes(b"s/caf\xe9 it's\\.toml"));
        assert_eq!(shell_path(odd), "$'s/caf\\xe9 it\\'s\\\\.toml'");
    }

    #[test]
    fn shell_words_are_quoted_only_when_needed() {
        assert_eq!(shell_word("scenes/pond.toml"), "scenes/pond.toml");
        assert_eq!(shell_word("my scene.toml"), "'my scene.toml'");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
        assert_eq!(shell_word(""), "''");
        assert_eq!(shell_word("$(rm)"), "'$(rm)'");
    }

    #[test]
    fn control_characters_are_shown_not_obeyed() {
        assert_eq!(inert("a\nb\tc\u{7}\u{1b}[31m\u{9b}\u{202e}d"), "a\\nb\\tc\\u{7}\\u{1b}[31m\\u{9b}\\u{202e}d");
        assert_eq!(inert("<img src=x>"), "<img src=x>");
    }

    #[test]
    fn code_spans_outlast_the_backticks_inside() {
        assert_eq!(markdown_code("plain"), "`plain`");
        assert_eq!(markdown_code("a`b``c"), "```a`b``c```");
        assert_eq!(markdown_code("`x`"), "`` `x` ``");
        assert_eq!(markdown_code("| cell |"), "`\\| cell \\|`");
    }

    #[test]
    fn text_has_no_markup_left() {
        assert_eq!(markdown_text("**b** [l](u) <i>"), "\\*\\*b\\*\\* \\[l\\]\\(u\\) \\<i\\>");
    }
}
