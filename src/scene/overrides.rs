//! `--set KEY=VALUE`: a scene key overridden from the command line (`water.refraction=0.4`,
//! `stone[0].x=10`), spliced into the parsed scene before it is validated, so an override is
//! checked exactly like the file and every message points into the override itself.
//!
//! The override's text is placed, for spans, after the scene's text: a span past the end of
//! the file is in an override (see [`Override`]).

use std::borrow::Cow;
use std::ops::Range;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::toml_reader::{Document, Override};
use crate::base::error::Result;

/// One step of a key path: a name, and for an array of tables the index of one of them.
struct Step<'a> {
    name: &'a str,
    index: Option<usize>,
    /// The step's text in the override, as a span.
    span: Range<usize>,
}

/// Splits `KEY` (the text before `=`) into steps, refusing what is not a key path.
fn steps<'a>(doc: &Document<'_>, o: &'a Override, key: &'a str) -> Result<Vec<Step<'a>>> {
    // A scene's keys are two steps deep (water.refraction, stone[0].x); a path far deeper would
    // build tables nested as deep, which nothing reads and whose handling runs out of stack.
    let parts = key.split('.').count();
    if parts > MAX_STEPS {
        let message = format!(
            "is a key path of {parts} steps; a scene's keys have at most {MAX_STEPS} (water.refraction, stone[0].x)"
        );
        return Err(doc.error(o.base..o.base + key.len().max(1), message));
    }
    let mut steps = Vec::new();
    let mut at = 0;
    for part in key.split('.') {
        let span = o.base + at..o.base + at + part.len().max(1);
        at += part.len() + 1;
        let (name, index) = match part.split_once('[') {
            Some((name, rest)) => {
                let index = rest.strip_suffix(']').and_then(|n| n.parse::<usize>().ok());
                (name, Some(index))
            }
            None => (part, None),
        };
        let bare = !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if !bare || index == Some(None) {
            let message = format!(
                "`{part}` is not a step of a key path: write keys as in the scene, joined by dots, with [N] for \
                 one of the [[tables]] of a name (water.refraction, stone[0].x)"
            );
            return Err(doc.error(span, message));
        }
        steps.push(Step { name, index: index.flatten(), span });
    }
    Ok(steps)
}

/// The most steps a `--set` key path may have.
const MAX_STEPS: usize = 8;

/// The value after `=`: a TOML value, or else the text itself as a string (`spring`,
/// `#336699`, `photo.jpg`), shifted to its place among the spans.
fn value<'i>(o: &'i Override, at: usize) -> Spanned<DeValue<'i>> {
    let text = &o.text[at..];
    let base = o.base + at;
    match DeValue::parse(text) {
        Ok(v) => shifted(v, base),
        Err(_) => Spanned::new(base..base + text.len().max(1), DeValue::String(Cow::Borrowed(text))),
    }
}

/// `v` with every span moved by `by`.
fn shifted(v: Spanned<DeValue<'_>>, by: usize) -> Spanned<DeValue<'_>> {
    let span = v.span();
    let value = match v.into_inner() {
        DeValue::Array(items) => DeValue::Array(items.into_iter().map(|item| shifted(item, by)).collect()),
        DeValue::Table(table) => DeValue::Table(
            table
                .into_iter()
                .map(|(k, item)| {
                    let key_span = k.span();
                    (Spanned::new(key_span.start + by..key_span.end + by, k.into_inner()), shifted(item, by))
                })
                .collect(),
        ),
        other => other,
    };
    Spanned::new(span.start + by..span.end + by, value)
}

/// Applies one override to the parsed scene.
pub(crate) fn apply<'i>(doc: &Document<'_>, root: &mut DeTable<'i>, o: &'i Override) -> Result<()> {
    let Some((key, _)) = o.text.split_once('=') else {
        let span = o.base..o.base + o.text.len().max(1);
        return Err(doc.error(span, "is not KEY=VALUE: write --set water.refraction=0.4".to_string()));
    };
    let steps = steps(doc, o, key.trim_end())?;
    let after = key.len() + 1;
    let value = value(o, after + (o.text[after..].len() - o.text[after..].trim_start().len()));
    let mut table = root;
    let mut path = String::new();
    for (i, step) in steps.iter().enumerate() {
        let last = i + 1 == steps.len();
        let here = if path.is_empty() { step.name.to_string() } else { format!("{path}.{}", step.name) };
        if last && step.index.is_none() {
            table.insert(Spanned::new(step.span.clone(), Cow::Borrowed(step.name)), value);
            return Ok(());
        }
        table = descend(doc, table, step, &here, last)?;
        path = match step.index {
            Some(n) => format!("{here}[{n}]"),
            None => here,
        };
    }
    Ok(())
}

/// The table `step` (named `here` in messages) leads to from `table`: a table of that name,
/// made if the scene has none, or one of the `[[tables]]` of that name. `last` says the key
/// path ends there, where a table cannot be overridden whole.
fn descend<'t, 'i>(
    doc: &Document<'_>,
    table: &'t mut DeTable<'i>,
    step: &Step<'i>,
    here: &str,
    last: bool,
) -> Result<&'t mut DeTable<'i>> {
    let fail = |message: String| Err(doc.error(step.span.clone(), message));
    if !table.contains_key(step.name) {
        if step.index.is_some() {
            return fail(format!("the scene has no [[{here}]] tables to override"));
        }
        // A table the scene does not have yet: the override makes it.
        let made = Spanned::new(step.span.clone(), DeValue::Table(DeTable::new()));
        table.insert(Spanned::new(step.span.clone(), Cow::Borrowed(step.name)), made);
    }
    let Some(entry) = table.get_mut(step.name) else {
        return fail(format!("{here} could not be made"));
    };
    match (entry.get_mut(), step.index) {
        (DeValue::Table(t), None) => Ok(t),
        (DeValue::Array(items), Some(n)) => {
            let count = items.len();
            match items.get_mut(n).map(Spanned::get_mut) {
                Some(DeValue::Table(t)) if !last => Ok(t),
                Some(DeValue::Table(_)) => {
                    fail(format!("{here}[{n}] is a table: override one of its keys, such as {here}[{n}].at"))
                }
                Some(_) => fail(format!("{here}[{n}] is not a table")),
                None => {
                    let have = match count {
                        0 => "none".to_string(),
                        1 => format!("one, {here}[0]"),
                        _ => format!("{count}, {here}[0] to {here}[{}]", count - 1),
                    };
                    fail(format!("there is no {here}[{n}]: the scene has {have}"))
                }
            }
        }
        (DeValue::Array(_), None) => fail(format!("{here} is a list of [[{here}]] tables: say which, as {here}[0]")),
        (_, _) => fail(format!("{here} is not a table of the scene")),
    }
}
