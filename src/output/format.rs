//! Which format an output is written in (§6, §12): named by `--format`, by the path's
//! extension, or by a folder; and the agreement between the two when both name one.

use std::path::Path;

use crate::base::error::{Error, Result};
use crate::encode::seal::Container;

/// The kind of output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// An animated GIF file.
    Gif,
    /// A folder of PNG files, `frame_0000.png`, ….
    PngSequence,
    /// One PNG of one output frame (`--frame N`).
    Still,
    /// An animated PNG.
    Apng,
    /// An animated lossless WebP.
    Webp,
    /// H.264 video in an MP4 container, made by ffmpeg.
    Mp4,
    /// VP9 video in a WebM container, made by ffmpeg.
    Webm,
}

/// A format as `--format` names it: `png` is a still with `--frame`, else a folder of frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Named {
    /// `gif`
    Gif,
    /// `png`
    Png,
    /// `apng`
    Apng,
    /// `webp`
    Webp,
    /// `mp4`
    Mp4,
    /// `webm`
    Webm,
}

/// Every extension an output path may end in, what it names, and what that is.
const EXTENSIONS: [(&str, Named, &str); 6] = [
    ("gif", Named::Gif, "an animated GIF (256 colours)"),
    ("apng", Named::Apng, "an animated PNG (exact colours)"),
    ("webp", Named::Webp, "an animated lossless WebP (exact colours)"),
    ("mp4", Named::Mp4, "an H.264 video (made by ffmpeg)"),
    ("webm", Named::Webm, "a VP9 video (made by ffmpeg)"),
    ("png", Named::Png, "one still frame (with --frame N)"),
];

/// Every output a path can name, for messages: `.gif` (…), …, and a folder.
pub fn every_format() -> String {
    let files = EXTENSIONS.iter().map(|(e, _, what)| format!(".{e} ({what})"));
    let mut all: Vec<String> = files.collect();
    all.push("a folder ending in / (a PNG sequence)".into());
    all.join(", ")
}

impl Named {
    /// Every format `--format` names, in the order help lists them.
    pub const ALL: [Named; 6] = [Named::Gif, Named::Png, Named::Apng, Named::Webp, Named::Mp4, Named::Webm];

    /// The format `--format` names `flag`, if any.
    pub fn from_flag(flag: &str) -> Option<Named> {
        Named::ALL.into_iter().find(|named| named.flag() == flag)
    }

    /// What `--format`'s help says of it.
    pub fn help(self) -> &'static str {
        match self {
            Named::Gif => "An animated GIF file",
            Named::Png => "One still PNG with --frame N; else a folder of PNG files, frame_0000.png, …",
            Named::Apng => "An animated PNG (exact colours)",
            Named::Webp => "An animated lossless WebP (exact colours)",
            Named::Mp4 => "H.264 video in MP4 (made by ffmpeg)",
            Named::Webm => "VP9 video in WebM (made by ffmpeg)",
        }
    }

    /// The name `--format` takes.
    pub fn flag(self) -> &'static str {
        EXTENSIONS.iter().find(|(_, n, _)| *n == self).map_or("png", |(e, ..)| e)
    }

    fn what(self) -> &'static str {
        EXTENSIONS.iter().find(|(_, n, _)| *n == self).map_or("", |(_, _, w)| w)
    }

    /// The format this name gives: a still or a folder for `png`, depending on `--frame`.
    fn format(self, still: bool) -> Format {
        match self {
            Named::Gif => Format::Gif,
            Named::Png if still => Format::Still,
            Named::Png => Format::PngSequence,
            Named::Apng => Format::Apng,
            Named::Webp => Format::Webp,
            Named::Mp4 => Format::Mp4,
            Named::Webm => Format::Webm,
        }
    }
}

impl Format {
    /// The container a part of this format is sealed in (see [`crate::encode::seal`]); `None`
    /// for PNG frames and stills, which are not sealed.
    pub fn container(self) -> Option<Container> {
        match self {
            Format::Gif => Some(Container::Gif),
            Format::Apng => Some(Container::Png),
            Format::Webp => Some(Container::Webp),
            Format::Mp4 => Some(Container::Mp4),
            Format::Webm => Some(Container::Webm),
            Format::PngSequence | Format::Still => None,
        }
    }

    /// Whether this format is written as a folder.
    pub fn is_folder(self) -> bool {
        self == Format::PngSequence
    }

    /// Whether this format is made by the `ffmpeg` program.
    pub fn is_video(self) -> bool {
        matches!(self, Format::Mp4 | Format::Webm)
    }

    /// The format's name, for messages.
    pub fn name(self) -> &'static str {
        match self {
            Format::Gif => "GIF",
            Format::PngSequence => "PNG sequence",
            Format::Still => "PNG",
            Format::Apng => "APNG",
            Format::Webp => "WebP",
            Format::Mp4 => "MP4",
            Format::Webm => "WebM",
        }
    }
}

/// Whether `path` is `-`, standard output.
pub fn is_stdout(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// Whether `path` names a folder: an existing one, or a name ending in `/`.
fn names_folder(path: &Path) -> bool {
    let text = path.as_os_str().to_string_lossy();
    text.ends_with('/') || text.ends_with(std::path::MAIN_SEPARATOR) || path.is_dir()
}

/// The output format of `path`: from `named` (`--format`) when given, which must agree with a
/// path that names a format; else from the path. `still` says `--frame N` was given: only a
/// still PNG takes it, and a `.png` path needs it. `-` (standard output) takes its format from
/// `named` alone.
pub fn resolve(path: &Path, named: Option<Named>, still: bool) -> Result<Format> {
    let shown = path.display();
    let format = if is_stdout(path) {
        let Some(named) = named else {
            return Err(Error::usage(
                "-o - writes to standard output, and needs --format to say in which format",
                Some("pass --format gif, apng, webp, mp4 or webm (or png with --frame N for one still)"),
            ));
        };
        if named == Named::Png && !still {
            return Err(Error::usage(
                "a PNG sequence is a folder of files and cannot be written to standard output",
                Some("pass --frame N for one still PNG of frame N, or --format apng for an animated PNG"),
            ));
        }
        named.format(still)
    } else if names_folder(path) {
        if still {
            return Err(Error::usage(
                format!("--frame writes one still PNG, but {shown} is a folder"),
                Some("name a file such as still.png, or drop --frame to write every frame into the folder"),
            ));
        }
        if let Some(named) = named.filter(|n| *n != Named::Png) {
            return Err(Error::usage(
                format!("--format {} disagrees with {shown}, a folder (which holds a PNG sequence)", named.flag()),
                Some(&format!("name a file such as out.{}, or drop --format", named.flag())),
            ));
        }
        Format::PngSequence
    } else {
        let extension = path.extension().map(|e| e.to_string_lossy().to_ascii_lowercase());
        let by_path = EXTENSIONS.iter().find(|(e, ..)| Some(*e) == extension.as_deref()).map(|(_, n, _)| *n);
        match (by_path, named) {
            (Some(by_path), Some(named)) if by_path != named => {
                return Err(Error::usage(
                    format!("--format {} disagrees with {shown}, which names {}", named.flag(), by_path.what()),
                    Some(&format!("name the file out.{}, or drop --format", named.flag())),
                ));
            }
            (Some(Named::Png), _) if !still => {
                return Err(Error::usage(
                    format!("{shown} names one still PNG, which needs --frame N (the output frame to write, from 0)"),
                    Some(&format!(
                        "pass --frame N for a still; or -o {} for an animated PNG; or -o {}/ for a folder of PNG frames",
                        path.with_extension("apng").display(),
                        path.with_extension("").display()
                    )),
                ));
            }
            (Some(named), _) | (None, Some(named)) => named.format(still),
            (None, None) => {
                return Err(Error::usage(
                    format!("cannot tell the output format of {shown}"),
                    Some(&format!("name one of: {}; or pass --format", every_format())),
                ));
            }
        }
    };
    if still && format != Format::Still {
        return Err(Error::usage(
            format!("--frame writes one still PNG, but {shown} is {}", a_name(format)),
            Some("name a .png file for a still, or drop --frame"),
        ));
    }
    Ok(format)
}

fn a_name(format: Format) -> String {
    let name = format.name();
    let article = if matches!(format, Format::Apng | Format::Mp4) { "an" } else { "a" };
    format!("{article} {name} output")
}

/// When `path` is a folder (an existing one, or one named with a final `/`) written as a PNG
/// sequence although its name says another format (`anim.gif/`), that format's name, for a
/// warning.
pub fn folder_named_as_file(path: &Path, format: Format) -> Option<&'static str> {
    let ends_in_separator = path.as_os_str().to_string_lossy().ends_with(std::path::MAIN_SEPARATOR);
    if format != Format::PngSequence || !(path.is_dir() || ends_in_separator) {
        return None;
    }
    let extension = path.extension()?.to_string_lossy().to_ascii_lowercase();
    [("gif", "GIF"), ("png", "PNG"), ("apng", "APNG"), ("webp", "WebP"), ("mp4", "MP4"), ("webm", "WebM")]
        .iter()
        .find(|(e, _)| *e == extension)
        .map(|(_, name)| *name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(result: Result<Format>) -> String {
        match result {
            Err(Error::Usage { message, hint }) => format!("{message} | {}", hint.unwrap_or_default()),
            other => panic!("expected an output error, got {other:?}"),
        }
    }

    #[test]
    fn extensions_name_their_formats_in_any_case() {
        let cases = [
            ("a.gif", Format::Gif),
            ("a.GIF", Format::Gif),
            ("a.apng", Format::Apng),
            ("a.webp", Format::Webp),
            ("a.mp4", Format::Mp4),
            ("a.WebM", Format::Webm),
        ];
        for (path, format) in cases {
            assert_eq!(resolve(Path::new(path), None, false).unwrap(), format, "{path}");
        }
        assert_eq!(resolve(Path::new("a.png"), None, true).unwrap(), Format::Still);
        assert_eq!(resolve(Path::new("frames/"), None, false).unwrap(), Format::PngSequence);
        assert_eq!(resolve(Path::new("."), None, false).unwrap(), Format::PngSequence);
    }

    #[test]
    fn format_and_path_must_agree() {
        let m = message(resolve(Path::new("out.mp4"), Some(Named::Gif), false));
        assert!(m.starts_with("--format gif disagrees with out.mp4, which names an H.264 video"), "{m}");
        let m = message(resolve(Path::new("frames/"), Some(Named::Webp), false));
        assert!(m.contains("a folder (which holds a PNG sequence)"), "{m}");
        // A path without a known extension takes the named format; png without --frame is a folder.
        assert_eq!(resolve(Path::new("out"), Some(Named::Png), false).unwrap(), Format::PngSequence);
        assert_eq!(resolve(Path::new("out.tmp"), Some(Named::Apng), false).unwrap(), Format::Apng);
        assert_eq!(resolve(Path::new("a.png"), Some(Named::Png), true).unwrap(), Format::Still);
    }

    #[test]
    fn a_png_path_without_a_frame_lists_the_three_choices() {
        let m = message(resolve(Path::new("out.png"), None, false));
        assert!(m.contains("--frame N"), "{m}");
        assert!(m.contains("-o out.apng"), "{m}");
        assert!(m.contains("-o out/"), "{m}");
        let m = message(resolve(Path::new("out.png"), Some(Named::Png), false));
        assert!(m.contains("needs --frame N"), "{m}");
    }

    #[test]
    fn frame_goes_only_with_a_still() {
        let m = message(resolve(Path::new("out.gif"), None, true));
        assert!(m.starts_with("--frame writes one still PNG, but out.gif is a GIF output"), "{m}");
        let m = message(resolve(Path::new("dir/"), None, true));
        assert!(m.contains("is a folder"), "{m}");
    }

    #[test]
    fn an_unknown_extension_lists_every_format() {
        let m = message(resolve(Path::new("out.mov"), None, false));
        for e in [".gif", ".apng", ".webp", ".mp4", ".webm", ".png", "folder"] {
            assert!(m.contains(e), "{e} missing: {m}");
        }
    }

    #[test]
    fn standard_output_needs_a_format_and_not_a_folder() {
        let m = message(resolve(Path::new("-"), None, false));
        assert!(m.contains("needs --format"), "{m}");
        let m = message(resolve(Path::new("-"), Some(Named::Png), false));
        assert!(m.contains("cannot be written to standard output"), "{m}");
        assert_eq!(resolve(Path::new("-"), Some(Named::Webm), false).unwrap(), Format::Webm);
        assert_eq!(resolve(Path::new("-"), Some(Named::Png), true).unwrap(), Format::Still);
    }
}
