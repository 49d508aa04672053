//! Provenance: which version of ripple-render made a render, from which scene. Written into GIF
//! comments and PNG text chunks (no timestamps, no paths, so bytes stay reproducible) and read
//! back by `diff`.

use xxhash_rust::xxh3::Xxh3;

/// The text's prefix: the tool name.
const TOOL: &str = "ripple-render";

/// Who made a render and from what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Provenance {
    /// The ripple-render version, e.g. `0.1.0`.
    pub version: String,
    /// XXH3-64 of the scene text and the fitted background pixels: equal hashes, equal inputs.
    pub scene: u64,
}

impl Provenance {
    /// The provenance of a render, with this build, of the scene whose text hashes to
    /// `scene_hash` over the fitted `background`.
    pub fn of(scene_hash: u64, background: &[[u8; 3]]) -> Provenance {
        let mut hasher = Xxh3::new();
        hasher.update(&scene_hash.to_le_bytes());
        hasher.update(background.as_flattened());
        Provenance { version: env!("CARGO_PKG_VERSION").to_string(), scene: hasher.digest() }
    }

    /// `ripple-render 0.1.0 scene=0123456789abcdef`
    pub fn to_text(&self) -> String {
        format!("{TOOL} {} scene={:016x}", self.version, self.scene)
    }

    /// Reads what [`Provenance::to_text`] wrote; `None` for anything else.
    pub fn parse(text: &str) -> Option<Provenance> {
        let mut words = text.split_whitespace();
        if words.next()? != TOOL {
            return None;
        }
        let version = words.next()?.to_string();
        let scene = u64::from_str_radix(words.next()?.strip_prefix("scene=")?, 16).ok()?;
        Some(Provenance { version, scene })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_round_trips() {
        let p = Provenance { version: "1.2.3".into(), scene: 0xfeed_0000_beef };
        assert_eq!(p.to_text(), "ripple-render 1.2.3 scene=0000feed0000beef");
        assert_eq!(Provenance::parse(&p.to_text()), Some(p));
        assert_eq!(Provenance::parse("gifsicle 1.9"), None);
        assert_eq!(Provenance::parse("ripple-render 1.0 scene=xyz"), None);
    }
}
