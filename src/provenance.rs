//! Provenance: which version of ripple-render made a render, from which scene. Written into GIF
//! comments and PNG text chunks (no timestamps, no paths, so bytes stay reproducible) and read
//! back by `diff`.

use xxhash_rust::xxh3::Xxh3;

use crate::background::Background;
use crate::scene::Scene;

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
    /// The provenance of rendering `scene` over `background` with this build.
    pub fn of(scene: &Scene, background: &Background) -> Provenance {
        let mut hasher = Xxh3::new();
        hasher.update(&scene.source_hash.to_le_bytes());
        hasher.update(background.pixels.as_flattened());
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

/// The comment extensions of a GIF that come before its first image, read from its first
/// bytes without decoding anything.
pub fn gif_comments(bytes: &[u8]) -> Vec<String> {
    let mut comments = Vec::new();
    if bytes.len() < 13 || !bytes.starts_with(b"GIF8") {
        return comments;
    }
    let flags = bytes[10];
    let mut at = 13;
    if flags & 0x80 != 0 {
        at += 3 * (2usize << (flags & 7));
    }
    // Extensions (0x21 label sub-blocks…) until an image (0x2C) or the trailer.
    while bytes.get(at) == Some(&0x21) {
        let Some(&label) = bytes.get(at + 1) else { break };
        at += 2;
        let mut data = Vec::new();
        loop {
            // A missing terminator means the file is cut short: keep only complete comments.
            let Some(&len) = bytes.get(at) else { return comments };
            at += 1;
            if len == 0 {
                break;
            }
            let Some(block) = bytes.get(at..at + usize::from(len)) else { return comments };
            data.extend_from_slice(block);
            at += usize::from(len);
        }
        if label == 0xFE {
            comments.push(String::from_utf8_lossy(&data).into_owned());
        }
    }
    comments
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

    #[test]
    fn finds_a_comment_before_the_first_image() {
        // Header, a 2-entry global palette, a comment in two sub-blocks, then an image.
        let mut gif = b"GIF89a\x01\x00\x01\x00\x80\x00\x00".to_vec();
        gif.extend_from_slice(&[0, 0, 0, 255, 255, 255]);
        gif.extend_from_slice(b"\x21\xFE\x03abc\x02de\x00");
        gif.extend_from_slice(b"\x21\xF9\x04\x00\x00\x00\x00\x00");
        gif.extend_from_slice(b"\x2C");
        assert_eq!(gif_comments(&gif), vec!["abcde".to_string()]);
        assert!(gif_comments(b"GIF8").is_empty());
        assert!(gif_comments(b"\x89PNG\r\n\x1a\n").is_empty());
        // Truncated inside a sub-block: no panic, nothing read.
        assert!(gif_comments(&gif[..25]).is_empty());
    }
}
