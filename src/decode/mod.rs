//! Readers of rendered files, the mirror of `encode/`: what kind a file is by its first bytes
//! ([`sniff`]), and each kind read as frames of RGB pixels with their delays ([`frames`]): GIFs
//! composed as a viewer shows them ([`gif`], with the head a reference is read from), APNGs,
//! WebPs as libwebp composes them and PNG stills ([`animated`], [`webp`]), folders of PNG frames
//! ([`folder`]) and hash manifests ([`manifest`]). `diff`, `check` and `join` read renders
//! through here.

pub mod animated;
pub mod folder;
pub mod frames;
pub mod gif;
pub mod manifest;
pub mod webp;

/// What a file's first bytes say it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Magic {
    /// A GIF (87a or 89a).
    Gif,
    /// A PNG, animated or still (which one, its chunks tell: [`animated::is_apng`]).
    Png,
    /// A WebP (a RIFF file of the WEBP form).
    Webp,
    /// An MP4 (an ISO media file: its first box is `ftyp`).
    Mp4,
    /// A WebM (a Matroska file: the EBML signature).
    Webm,
    /// A hash manifest (`--hashes`).
    Manifest,
}

/// The kind of file whose first bytes are `head` (at least 12 of them where the file has them),
/// or `None` when they are of no kind a render is written in.
pub fn sniff(head: &[u8]) -> Option<Magic> {
    if head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a") {
        Some(Magic::Gif)
    } else if head.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some(Magic::Png)
    } else if head.len() >= 12 && &head[..4] == b"RIFF" && &head[8..12] == b"WEBP" {
        Some(Magic::Webp)
    } else if head.len() >= 8 && &head[4..8] == b"ftyp" {
        Some(Magic::Mp4)
    } else if head.starts_with(&[0x1a, 0x45, 0xdf, 0xa3]) {
        Some(Magic::Webm)
    } else if crate::encode::manifest::looks_like_manifest(head) {
        Some(Magic::Manifest)
    } else {
        None
    }
}

/// The first bytes of a file (up to 64, as one read gives them), for [`sniff`].
pub fn read_head(file: &mut impl std::io::Read) -> std::io::Result<Vec<u8>> {
    let mut head = vec![0u8; 64];
    let n = file.read(&mut head)?;
    head.truncate(n);
    Ok(head)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_is_known_by_its_first_bytes() {
        assert_eq!(sniff(b"GIF89a\x01\x00"), Some(Magic::Gif));
        assert_eq!(sniff(b"GIF87a"), Some(Magic::Gif));
        assert_eq!(sniff(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"), Some(Magic::Png));
        assert_eq!(sniff(b"RIFF\x10\0\0\0WEBPVP8L"), Some(Magic::Webp));
        assert_eq!(sniff(b"RIFF\x10\0\0\0WAVEfmt "), None);
        assert_eq!(sniff(b"\0\0\0\x20ftypisom"), Some(Magic::Mp4));
        assert_eq!(sniff(&[0x1a, 0x45, 0xdf, 0xa3, 1, 0, 0, 0]), Some(Magic::Webm));
        assert_eq!(sniff(b"GIF8"), None);
        assert_eq!(sniff(b""), None);
        assert_eq!(sniff(b"[video]\nwidth = 3\n"), None);
    }
}
