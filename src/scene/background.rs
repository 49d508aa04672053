//! The `[background]` table: an image (resolved against the scene's folder), a pattern or a
//! colour, and how an image is fitted to the canvas.

use std::path::Path;

use super::toml_reader::{Document, Table, Value, opt};
use super::{BackgroundSpec, Pattern};
use crate::base::error::Result;
use crate::base::picture::Fit;

pub(super) fn read_background(doc: &Document<'_>, t: Option<&Table<'_, '_>>, base: &Path) -> Result<BackgroundSpec> {
    let image_site = opt(t, "image").map(|v| doc.diagnostic(v.span.clone(), format!("{} = {}", v.path, v.text())));
    let image = match opt(t, "image") {
        Some(v) => {
            let s = v.string("the path of an image file")?;
            if s.is_empty() {
                return Err(v.error("is empty: expected the path of a PNG, JPEG, GIF, BMP or WebP image"));
            }
            Some(base.join(s))
        }
        None => None,
    };
    let fit = match opt(t, "fit") {
        Some(v) => match v.choice(&["cover", "contain", "stretch"])? {
            "cover" => Fit::Cover,
            "contain" => Fit::Contain,
            _ => Fit::Stretch,
        },
        None => Fit::Cover,
    };
    let color = opt(t, "color").map(|v| color_value(&v)).transpose()?.unwrap_or([0, 0, 0]);
    let pattern = match opt(t, "pattern") {
        Some(v) => {
            let p = match v.choice(&["tiles", "checker"])? {
                "tiles" => Pattern::Tiles,
                _ => Pattern::Checker,
            };
            if image.is_some() {
                return Err(v.error("cannot be combined with background.image: choose one"));
            }
            Some(p)
        }
        None => None,
    };
    let given = ["image", "color", "pattern"].iter().any(|key| opt(t, key).is_some());
    Ok(BackgroundSpec { image, fit, color, pattern, given, image_site })
}

/// A colour key's value, `#rrggbb` or `#rgb`.
pub(super) fn color_value(v: &Value<'_, '_>) -> Result<[u8; 3]> {
    let text = v.string("a colour, \"#rrggbb\" or \"#rgb\"")?;
    parse_color(text).ok_or_else(|| v.error("is not a colour: expected \"#rrggbb\" or \"#rgb\""))
}

/// Parses `#rrggbb` or `#rgb` in any case.
pub fn parse_color(s: &str) -> Option<[u8; 3]> {
    let hex = s.strip_prefix('#')?;
    if !hex.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let digit = |i: usize| u8::from_str_radix(&hex[i..=i], 16).ok();
    match hex.len() {
        6 => Some([
            u8::from_str_radix(&hex[0..2], 16).ok()?,
            u8::from_str_radix(&hex[2..4], 16).ok()?,
            u8::from_str_radix(&hex[4..6], 16).ok()?,
        ]),
        3 => Some([digit(0)? * 17, digit(1)? * 17, digit(2)? * 17]),
        _ => None,
    }
}
