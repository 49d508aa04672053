//! The raw layer of scene reading: TOML values with their spans and key paths, checked for type
//! and range one key at a time, so every error can name the file, line, column, key and value.

use std::ops::{Range, RangeInclusive};
use std::path::Path;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use crate::base::error::{Diagnostic, Error, Result};

/// A scene document being read: the source text for diagnostics and the parsed tree, and the
/// `--set` overrides spliced into it, whose spans lie past the end of the text.
pub(crate) struct Document<'s> {
    pub file: &'s Path,
    pub src: &'s str,
    pub overrides: &'s [Override],
}

impl<'s> Document<'s> {
    /// The override a span lies in, if it lies past the scene's text.
    fn override_of(&self, span: &Range<usize>) -> Option<&'s Override> {
        if span.start <= self.src.len() {
            return None;
        }
        self.overrides.iter().rev().find(|o| span.start >= o.base)
    }

    /// A diagnostic at `span`, in the file or in an override.
    pub fn diagnostic(&self, span: Range<usize>, message: String) -> Diagnostic {
        match self.override_of(&span) {
            Some(o) => {
                let local = span.start - o.base..span.end.saturating_sub(o.base).max(span.start - o.base);
                Diagnostic::for_override(&o.text, local, message)
            }
            None => Diagnostic::at(self.file, self.src, span, message),
        }
    }

    /// The text at `span`, in the file or in an override.
    pub fn slice(&self, span: Range<usize>) -> &'s str {
        match self.override_of(&span) {
            Some(o) => o.text.get(span.start - o.base..span.end.saturating_sub(o.base)).unwrap_or(""),
            None => self.src.get(span).unwrap_or(""),
        }
    }

    pub fn error(&self, span: Range<usize>, message: String) -> Error {
        Error::Scene(Box::new(self.diagnostic(span, message)))
    }

    pub fn parse(&self) -> Result<Spanned<DeTable<'s>>> {
        DeTable::parse(self.src).map_err(|e| {
            let span = e.span().unwrap_or(0..0);
            let message = format!("invalid TOML: {}", e.message().trim_end());
            self.error(span, message)
        })
    }

    /// Opens a table, refusing any key not in `allowed` (with a "did you mean" where one is close).
    pub fn table<'t>(
        &'t self,
        path: String,
        span: Range<usize>,
        table: &'t DeTable<'s>,
        allowed: &[&str],
    ) -> Result<Table<'t, 's>> {
        for (key, _) in table.iter() {
            if !allowed.contains(&key.get_ref().as_ref()) {
                let name = key.get_ref().as_ref();
                let full = join(&path, name);
                let listed = allowed.join(", ");
                let message = if path.is_empty() {
                    format!("unknown table or key `{full}`: allowed are {listed}")
                } else {
                    // `stone[2]` is written `[[stone]]` in the file.
                    let header = match path.split_once('[') {
                        Some((name, _)) => format!("[[{name}]]"),
                        None => format!("[{path}]"),
                    };
                    format!("unknown key `{full}`: allowed keys in {header} are {listed}")
                };
                let hint = closest(name, allowed).map(|s| format!("did you mean `{s}`?"));
                let diagnostic = self.diagnostic(key.span(), message).with_hint(hint);
                return Err(Error::Scene(Box::new(diagnostic)));
            }
        }
        Ok(Table { doc: self, path, span, table })
    }
}

/// One `--set` as given, and where its text starts among the spans.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Override {
    /// `KEY=VALUE`, as given.
    pub text: String,
    /// The span offset of the text's first byte: past the scene's text and earlier overrides.
    pub base: usize,
}

impl Override {
    /// The overrides of a scene of `src_len` bytes, each given its place among the spans.
    pub fn place(src_len: usize, texts: &[String]) -> Vec<Override> {
        let mut base = src_len + 1;
        texts
            .iter()
            .map(|text| {
                let placed = Override { text: text.clone(), base };
                base += text.len() + 1;
                placed
            })
            .collect()
    }
}

/// One TOML table with its key path (`stone[2]`) and span (for "missing key" errors).
pub(crate) struct Table<'t, 's> {
    doc: &'t Document<'s>,
    pub path: String,
    pub span: Range<usize>,
    table: &'t DeTable<'s>,
}

impl<'t, 's> Table<'t, 's> {
    /// The value of `key`, if present.
    pub fn get(&self, key: &str) -> Option<Value<'t, 's>> {
        self.table.iter().find(|(k, _)| k.get_ref().as_ref() == key).map(|(_, v)| Value {
            doc: self.doc,
            path: join(&self.path, key),
            span: v.span(),
            value: v.get_ref(),
        })
    }

    /// The value of a key that must be present.
    pub fn require(&self, key: &str, what: &str) -> Result<Value<'t, 's>> {
        self.get(key).ok_or_else(|| {
            let full = join(&self.path, key);
            let message = format!("missing key `{full}`: {what} is required here");
            self.doc.error(self.span.clone(), message)
        })
    }
}

/// One TOML value with its key path and span.
#[derive(Clone)]
pub(crate) struct Value<'t, 's> {
    doc: &'t Document<'s>,
    pub path: String,
    pub span: Range<usize>,
    value: &'t DeValue<'s>,
}

impl<'t, 's> Value<'t, 's> {
    /// The value as written in the file (shortened when long), for messages.
    pub fn text(&self) -> String {
        let raw = self.doc.slice(self.span.clone()).trim();
        let one_line = raw.lines().next().unwrap_or("");
        if one_line.chars().count() > 40 || one_line.len() < raw.len() {
            let head: String = one_line.chars().take(40).collect();
            format!("{head}…")
        } else {
            one_line.to_string()
        }
    }

    /// An error at this value: `message` follows "key = value".
    pub fn error(&self, message: impl std::fmt::Display) -> Error {
        let text = format!("{} = {} {message}", self.path, self.text());
        self.doc.error(self.span.clone(), text)
    }

    fn kind(&self) -> &'static str {
        match self.value {
            DeValue::String(_) => "a string",
            DeValue::Integer(_) => "an integer",
            DeValue::Float(_) => "a float",
            DeValue::Boolean(_) => "a boolean",
            DeValue::Datetime(_) => "a date-time",
            DeValue::Array(_) => "an array",
            DeValue::Table(_) => "a table",
        }
    }

    /// Whether this value is a table header line (`[video]`, `[[stone]]`) rather than a value
    /// after `key =`: nothing but blanks stands before it on its line.
    fn is_header(&self) -> bool {
        if self.span.start > self.doc.src.len() {
            return false;
        }
        let before = &self.doc.src[..self.span.start];
        let line = before.rsplit('\n').next().unwrap_or("");
        matches!(self.value, DeValue::Table(_) | DeValue::Array(_)) && line.trim().is_empty()
    }

    pub fn wrong_type(&self, expected: &str) -> Error {
        if self.is_header() {
            // `[[video]]` is not a value to quote after `video =`: name what the header made.
            let made = match self.value {
                DeValue::Array(_) => "an array of tables",
                _ => "a table",
            };
            let message = format!("{} makes `{}` {made}: expected {expected}", self.text(), self.path);
            return self.doc.error(self.span.clone(), message);
        }
        self.error(format!("is {}: expected {expected}", self.kind()))
    }

    /// An integer within `range`.
    pub fn int(&self, range: RangeInclusive<i64>) -> Result<i64> {
        let DeValue::Integer(i) = self.value else {
            return Err(self.wrong_type(&format!("an integer in {}..={}", range.start(), range.end())));
        };
        let out_of_range = || self.error(format!("is out of range: allowed {}..={}", range.start(), range.end()));
        let v = i64::from_str_radix(i.as_str(), i.radix()).map_err(|_| out_of_range())?;
        if range.contains(&v) { Ok(v) } else { Err(out_of_range()) }
    }

    /// Any integer a 64-bit number holds; `expected` describes what it is for, in messages.
    pub fn integer(&self, expected: &str) -> Result<i64> {
        let DeValue::Integer(i) = self.value else {
            return Err(self.wrong_type(expected));
        };
        i64::from_str_radix(i.as_str(), i.radix()).map_err(|_| self.error(format!("is too large: expected {expected}")))
    }

    /// Any finite number, integer or float; `expected` describes it in messages.
    fn finite(&self, expected: &str) -> Result<f64> {
        let v = match self.value {
            DeValue::Integer(i) => match i64::from_str_radix(i.as_str(), i.radix()) {
                Ok(v) => v as f64,
                Err(_) => return Err(self.error(format!("is too large: expected {expected}"))),
            },
            DeValue::Float(f) => f.as_str().parse::<f64>().map_err(|_| self.wrong_type(expected))?,
            _ => return Err(self.wrong_type(expected)),
        };
        if v.is_finite() { Ok(v) } else { Err(self.error(format!("is not a finite number: expected {expected}"))) }
    }

    /// A number within `lo..=hi`.
    pub fn number_in(&self, lo: f64, hi: f64) -> Result<f64> {
        let range = format!("{}..={}", show_number(lo), show_number(hi));
        let v = self.finite(&format!("a number in {range}"))?;
        if (lo..=hi).contains(&v) { Ok(v) } else { Err(self.error(format!("is out of range: allowed {range}"))) }
    }

    /// A time in seconds: a finite number ≥ 0.
    pub fn time(&self) -> Result<f64> {
        let v = self.finite("a time in seconds (a number ≥ 0)")?;
        if v >= 0.0 { Ok(v) } else { Err(self.error("is negative: a time must be ≥ 0 seconds")) }
    }

    /// A string; `expected` describes it in messages ("the path of an image").
    pub fn string(&self, expected: &str) -> Result<&'t str> {
        match self.value {
            DeValue::String(s) => Ok(s.as_ref()),
            _ => Err(self.wrong_type(&format!("a string, {expected}"))),
        }
    }

    /// One of the `allowed` strings.
    pub fn choice(&self, allowed: &[&'static str]) -> Result<&'static str> {
        let DeValue::String(s) = self.value else {
            return Err(self.wrong_type(&list_choices(allowed)));
        };
        allowed.iter().find(|a| **a == s.as_ref()).copied().ok_or_else(|| self.error(choice_message(s, allowed)))
    }

    pub fn bool(&self) -> Result<bool> {
        match self.value {
            DeValue::Boolean(b) => Ok(*b),
            _ => Err(self.wrong_type("true or false")),
        }
    }

    /// The elements of an array, each with its indexed key path.
    pub fn array(&self, expected: &str) -> Result<Vec<Value<'t, 's>>> {
        let DeValue::Array(items) = self.value else {
            return Err(self.wrong_type(expected));
        };
        Ok(items
            .iter()
            .enumerate()
            .map(|(i, v)| Value {
                doc: self.doc,
                path: format!("{}[{i}]", self.path),
                span: v.span(),
                value: v.get_ref(),
            })
            .collect())
    }

    /// True when the value is an integer (for keys that take an integer or a range).
    pub fn is_integer(&self) -> bool {
        matches!(self.value, DeValue::Integer(_))
    }

    /// True when the value is an array (for keys that take a number or a range).
    pub fn is_array(&self) -> bool {
        matches!(self.value, DeValue::Array(_))
    }

    /// A table, refusing keys outside `allowed`.
    pub fn table(&self, allowed: &[&str], expected: &str) -> Result<Table<'t, 's>> {
        match self.value {
            DeValue::Table(t) => self.doc.table(self.path.clone(), self.span.clone(), t, allowed),
            _ => Err(self.wrong_type(expected)),
        }
    }

    /// The tables of an array of tables (`[[stone]]`).
    pub fn tables(&self, allowed: &[&str]) -> Result<Vec<Table<'t, 's>>> {
        let name = self.path.clone();
        let expected = format!("an array of tables, written [[{name}]]");
        self.array(&expected)?.into_iter().map(|v| v.table(allowed, &format!("a table, written [[{name}]]"))).collect()
    }
}

/// A drop's radius, in cells.
pub(crate) const RADIUS: std::ops::RangeInclusive<i64> = 1..=256;
/// A drop's weight (the depth of its dent).
pub(crate) const WEIGHT: std::ops::RangeInclusive<i64> = 1..=16384;
/// A damping shift.
pub(crate) const SHIFT: std::ops::RangeInclusive<i64> = 1..=15;
/// A coordinate that may lie off the canvas (swipe paths, obstacles).
pub(crate) const COORD: std::ops::RangeInclusive<i64> = -65536..=65536;

/// Reads each of `items` into a list of exactly their number (a scene may hold a great many,
/// and the memory budget counts them at their size).
pub(crate) fn read_all<I, T>(items: &[I], read: impl Fn(&I) -> Result<T>) -> Result<Vec<T>> {
    let mut all = Vec::with_capacity(items.len());
    for item in items {
        all.push(read(item)?);
    }
    Ok(all)
}

/// The value of `key` in a table that may be absent.
pub(crate) fn opt<'t, 's>(table: Option<&Table<'t, 's>>, key: &str) -> Option<Value<'t, 's>> {
    table.and_then(|t| t.get(key))
}

/// "is not allowed: expected \"a\" or \"b\"", with the nearest allowed value when one is close.
pub(crate) fn choice_message(value: &str, allowed: &[&str]) -> String {
    let mut message = format!("is not allowed: expected {}", list_choices(allowed));
    if let Some(near) = closest(value, allowed) {
        message.push_str(&format!(" (did you mean \"{near}\"?)"));
    }
    message
}

/// `"a", "b" or "c"`.
fn list_choices(allowed: &[&str]) -> String {
    let quoted: Vec<String> = allowed.iter().map(|a| format!("\"{a}\"")).collect();
    match quoted.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => quoted.join(""),
    }
}

/// A range bound as written in messages: `100000`, `0.5`.
fn show_number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 { format!("{}", v as i64) } else { format!("{v}") }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() { key.to_string() } else { format!("{path}.{key}") }
}

/// The allowed name nearest to `name`, if it is plausibly a typo of it.
pub(crate) fn closest<'a>(name: &str, allowed: &[&'a str]) -> Option<&'a str> {
    let lower = name.to_ascii_lowercase();
    allowed
        .iter()
        .map(|&a| (edit_distance(&lower, a), a))
        .filter(|&(d, a)| d <= 2.max(a.len() / 3) && d < a.len())
        .min_by_key(|&(d, _)| d)
        .map(|(_, a)| a)
}

/// Optimal-string-alignment distance: insertions, deletions, substitutions and swaps count 1.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut rows = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in rows.iter_mut().enumerate() {
        row[0] = i;
    }
    rows[0] = (0..=b.len()).collect();
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (rows[i - 1][j] + 1).min(rows[i][j - 1] + 1).min(rows[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(rows[i - 2][j - 2] + 1);
            }
            rows[i][j] = d;
        }
    }
    rows[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_near_misses_only() {
        let keys = ["at", "x", "y", "radius", "weight"];
        assert_eq!(closest("radus", &keys), Some("radius"));
        assert_eq!(closest("wieght", &keys), Some("weight"));
        assert_eq!(closest("Radius", &keys), Some("radius"));
        assert_eq!(closest("colour", &keys), None);
        assert_eq!(closest("z", &keys), None);
        assert_eq!(closest("stones", &["video", "stone", "swipe"]), Some("stone"));
    }

    #[test]
    fn edit_distance_counts_a_swap_as_one() {
        assert_eq!(edit_distance("ab", "ba"), 1);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
    }
}
