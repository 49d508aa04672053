//! JSON as the tool prints it, made by serde_json from typed values. Where a top-level object
//! holds an array of objects (a plan's events, a diff's frames), each of those objects starts a
//! line of its own, so that long lists can be read, grepped and diffed line by line; everything
//! else is compact.

use std::io;

use serde::Serialize;
use serde_json::ser::{CompactFormatter, Formatter};

/// `value` as JSON with each element object of a top-level array on a line of its own, and a
/// final newline.
pub fn to_lines<T: Serialize>(value: &T) -> String {
    let mut out = Vec::new();
    // Serializing our own types into memory cannot fail: they hold no maps with non-string
    // keys, and writing to a vector does not fail.
    if write_lines(&mut out, value).is_err() {
        out.clear();
    }
    String::from_utf8(out).unwrap_or_default()
}

/// Writes `value` into `out` as [`to_lines`] makes it, as it is serialized (a value that
/// yields its elements one by one is never held whole).
pub fn write_lines<W: io::Write, T: Serialize>(mut out: W, value: &T) -> io::Result<()> {
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, Lines::default());
    value.serialize(&mut serializer).map_err(io::Error::from)?;
    out.write_all(b"\n")
}

/// `value` as one line of compact JSON, without a newline.
pub fn to_line<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// A container being written: an array that has had an object element yet, or an object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Open {
    Array { objects: bool },
    Object,
}

/// Compact JSON, but for the line breaks of [`to_lines`].
#[derive(Debug, Default)]
struct Lines {
    open: Vec<Open>,
}

impl Lines {
    /// Whether the next object is an element of an array inside the top-level object.
    fn element_of_top_array(&self) -> bool {
        self.open.len() == 2 && matches!(self.open[1], Open::Array { .. })
    }
}

impl Formatter for Lines {
    fn begin_array<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.open.push(Open::Array { objects: false });
        CompactFormatter.begin_array(writer)
    }

    fn end_array<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        if self.open.pop() == Some(Open::Array { objects: true }) {
            writer.write_all(b"\n")?;
        }
        CompactFormatter.end_array(writer)
    }

    fn begin_object<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        if self.element_of_top_array() {
            self.open[1] = Open::Array { objects: true };
            writer.write_all(b"\n")?;
        }
        self.open.push(Open::Object);
        CompactFormatter.begin_object(writer)
    }

    fn end_object<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.open.pop();
        CompactFormatter.end_object(writer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Item {
        n: u32,
        pair: [u8; 2],
    }

    #[derive(Serialize)]
    struct Top {
        name: &'static str,
        inner: Option<Item>,
        numbers: Vec<u8>,
        items: Vec<Item>,
        none: Vec<Item>,
    }

    #[test]
    fn objects_in_top_level_arrays_get_a_line_each_and_the_rest_is_compact() {
        let top = Top {
            name: "a\"b",
            inner: Some(Item { n: 1, pair: [2, 3] }),
            numbers: vec![4, 5],
            items: vec![Item { n: 6, pair: [7, 8] }, Item { n: 9, pair: [0, 1] }],
            none: Vec::new(),
        };
        let lines = [
            r#"{"name":"a\"b","inner":{"n":1,"pair":[2,3]},"numbers":[4,5],"items":["#,
            r#"{"n":6,"pair":[7,8]},"#,
            r#"{"n":9,"pair":[0,1]}"#,
            r#"],"none":[]}"#,
        ];
        assert_eq!(to_lines(&top), lines.join("\n") + "\n");
        assert_eq!(to_line(&top.numbers), "[4,5]");
    }
}
