//! `join`: the parts of a render split by frame range (`--frames A..B`) put back together into
//! the whole render's file. Each part says in its label which frames of how many it holds, of
//! which scene ([`Label`]); the parts must be of one scene and format, in order, without gaps or
//! overlaps. GIF, APNG and WebP parts are joined here, chunk by chunk, a later part's first
//! frame encoded again as the whole render has it, so the joined file is the whole render's;
//! MP4 and WebM through ffmpeg's concat demuxer, without re-encoding.

mod apng;
mod gif;
mod video;
mod webp;

use std::io::Write;
use std::ops::Range;
use std::path::{Path, PathBuf};

use crate::base::error::{Error, Result};
use crate::base::files::open_regular;
use crate::decode::{Magic, read_head, sniff};
use crate::encode::Effort;
use crate::encode::provenance::Provenance;
use crate::encode::seal;
use crate::output::Format;

/// What a part says of itself: the render it belongs to and the frames it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Label {
    /// The whole render's provenance comment (without the part's frames).
    pub comment: String,
    /// Who rendered it, from what.
    pub provenance: Provenance,
    /// The output frames it holds, numbered as in the whole render.
    pub frames: Range<u64>,
    /// The whole render's output frames.
    pub total: u64,
}

impl Label {
    /// Reads `ripple-render VERSION scene=HASH … part=A..B/N`, as [`crate::encode::Stream::label`]
    /// writes it; `None` for any other text.
    pub fn parse(text: &str) -> Option<Label> {
        let provenance = Provenance::parse(text)?;
        let (comment, part) = text.trim_end().rsplit_once(" part=")?;
        let (range, total) = part.split_once('/')?;
        let (start, end) = range.split_once("..")?;
        let number = |s: &str| s.parse::<u64>().ok();
        let frames = number(start)?..number(end)?;
        Some(Label { comment: comment.to_string(), provenance, frames, total: number(total)? })
    }
}

/// One part as given: where it is and what it says.
#[derive(Debug, Clone)]
pub struct Part {
    /// The file, as given.
    pub path: PathBuf,
    /// Its label.
    pub label: Label,
}

/// What a join made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Joined {
    /// Output frames in the joined file.
    pub frames: u64,
    /// Its canvas.
    pub size: (u32, u32),
}

/// The format a part's first bytes show: GIF, APNG, WebP, MP4 or WebM; `None` for another.
fn format_of(head: &[u8]) -> Option<Format> {
    match sniff(head)? {
        Magic::Gif => Some(Format::Gif),
        Magic::Png => Some(Format::Apng),
        Magic::Webp => Some(Format::Webp),
        Magic::Mp4 => Some(Format::Mp4),
        Magic::Webm => Some(Format::Webm),
        Magic::Manifest => None,
    }
}

/// The pictures of a part a join needs, read in one pass over it: its first (which the part's
/// own first frame shows, whole) and, when asked, its last (which the next part's first frame
/// follows).
pub(super) struct Pictures<T> {
    first: T,
    last: Option<T>,
}

/// A part whose `what` (its canvas, palette, loop…) is not the first part's.
fn unlike(part: &Path, first: &Path, what: &str) -> Error {
    Error::usage(
        format!("{} has another {what} than {}: the parts of a render share them", part.display(), first.display()),
        Some("render every part from the same scene with the same options"),
    )
}

/// A part that cannot be read, and the system's reason.
fn unreadable(path: &Path, e: &std::io::Error) -> Error {
    Error::input(path, format!("cannot read it: {}", crate::base::error::os_reason(e)))
}

/// A part read block by block: only the block at hand (a frame's data at most) is held.
struct Source<'a> {
    path: &'a Path,
    reader: std::io::BufReader<std::fs::File>,
    /// Bytes read so far, for messages.
    at: u64,
    /// The file's length: a block said to run past it is refused before anything is allocated.
    len: u64,
}

impl<'a> Source<'a> {
    fn open(path: &'a Path) -> Result<Source<'a>> {
        let (file, len) = open_part(path)?;
        Ok(Source { path, reader: std::io::BufReader::with_capacity(1 << 20, file), at: 0, len })
    }

    /// Refuses `n` more bytes past the end of the file.
    fn within(&self, n: u64) -> Result<()> {
        if self.at.saturating_add(n) > self.len {
            return Err(Error::input(
                self.path,
                format!("is cut short: a block at byte {} runs past its end", self.at),
            ));
        }
        Ok(())
    }

    /// The next `n` bytes.
    fn take(&mut self, n: usize) -> Result<Vec<u8>> {
        self.within(n as u64)?;
        let mut bytes = vec![0u8; n];
        self.fill(&mut bytes)?;
        Ok(bytes)
    }

    /// Fills `bytes` from the part.
    fn fill(&mut self, bytes: &mut [u8]) -> Result<()> {
        std::io::Read::read_exact(&mut self.reader, bytes)
            .map_err(|_| Error::input(self.path, format!("is cut short at byte {}", self.at)))?;
        self.at += bytes.len() as u64;
        Ok(())
    }

    /// The next byte, or `None` at the end of the file.
    fn next_byte(&mut self) -> Result<Option<u8>> {
        let mut byte = [0u8];
        match std::io::Read::read(&mut self.reader, &mut byte) {
            Ok(0) => Ok(None),
            Ok(_) => {
                self.at += 1;
                Ok(Some(byte[0]))
            }
            Err(e) => Err(unreadable(self.path, &e)),
        }
    }

    /// Passes over `n` bytes without reading them.
    fn skip(&mut self, n: u64) -> Result<()> {
        self.within(n)?;
        let by = i64::try_from(n).map_err(|_| Error::input(self.path, "has a block longer than a file can be"))?;
        std::io::Seek::seek_relative(&mut self.reader, by).map_err(|e| unreadable(self.path, &e))?;
        self.at += n;
        Ok(())
    }
}

/// Opens a part: a regular file (a pipe or device is refused unopened, so nothing waits).
fn open_part(path: &Path) -> Result<(std::fs::File, u64)> {
    open_regular(path)
        .map_err(|e| Error::input(path, format!("cannot be a part: {}", crate::base::error::os_reason(&e))))
}

/// Refuses a part that is not of the output's `format`, by its first bytes.
pub fn check_format(paths: &[PathBuf], format: Format) -> Result<()> {
    for path in paths {
        let (mut file, _) = open_part(path)?;
        let head = read_head(&mut file).unwrap_or_default();
        let Some(found) = format_of(&head) else {
            return Err(Error::input(
                path,
                "is not a GIF, APNG, WebP, MP4 or WebM, so it cannot be a part of a render",
            ));
        };
        if found != format {
            return Err(Error::input(
                path,
                format!(
                    "is {} and the output is {}: parts join into a file of their own format",
                    found.name(),
                    format.name()
                ),
            ));
        }
    }
    Ok(())
}

/// Checks that `parts` make one whole render, in order: one scene, one build, no gap, no
/// overlap, from the first frame to the last. Says which parts and frames when they do not.
pub fn check_parts(parts: &[Part]) -> Result<()> {
    let Some(first) = parts.first() else {
        return Err(Error::usage("join needs at least one part", None));
    };
    for part in &parts[1..] {
        same_render(first, part)?;
    }
    in_order_without_gaps(parts)
}

/// Refuses `part` unless it is of the render `first` is of: the same build, scene and frames.
fn same_render(first: &Part, part: &Part) -> Result<()> {
    let (a, b) = (&first.label, &part.label);
    let (first_path, path) = (first.path.display(), part.path.display());
    if a.provenance.version != b.provenance.version {
        return Err(Error::usage(
            format!(
                "{first_path} was rendered by ripple-render {} and {path} by {}: parts must come from one build",
                a.provenance.version, b.provenance.version
            ),
            Some("render every part with the same version"),
        ));
    }
    if a.provenance.scene != b.provenance.scene || a.comment != b.comment {
        return Err(Error::usage(
            format!(
                "{first_path} and {path} are parts of different renders (scene={:016x} and scene={:016x}): a scene's \
                 text, --set overrides and background must be the same for every part",
                a.provenance.scene, b.provenance.scene
            ),
            Some("render every part from the same scene file with the same --set options"),
        ));
    }
    if a.total != b.total {
        return Err(Error::usage(
            format!("{first_path} is a part of {} frames and {path} of {}", a.total, b.total),
            Some("render every part from the same scene"),
        ));
    }
    Ok(())
}

/// Refuses parts (of one render) out of frame order, or that leave frames out or hold some
/// twice.
fn in_order_without_gaps(parts: &[Part]) -> Result<()> {
    let show = |p: &Part| format!("{} (frames {}..{})", p.path.display(), p.label.frames.start, p.label.frames.end);
    let order = Some("give the parts in frame order, each starting where the one before ends (A..B renders A to B-1)");
    if let Some(pair) = parts.windows(2).find(|w| w[1].label.frames.start < w[0].label.frames.start) {
        let mut sorted: Vec<&Part> = parts.iter().collect();
        sorted.sort_by_key(|p| (p.label.frames.start, p.label.frames.end));
        let names: Vec<String> = sorted.iter().map(|p| p.path.display().to_string()).collect();
        return Err(Error::usage(
            format!("the parts are out of order: {} is given before {}", show(&pair[0]), show(&pair[1])),
            Some(&format!("give them in frame order: {}", names.join(" "))),
        ));
    }
    let (Some(first), Some(last)) = (parts.first(), parts.last()) else { return Ok(()) };
    if first.label.frames.start > 0 {
        return Err(Error::usage(
            format!("frames 0..{} are in no part: the first part is {}", first.label.frames.start, show(first)),
            order,
        ));
    }
    for pair in parts.windows(2) {
        let (before, after) = (&pair[0], &pair[1]);
        let (end, start) = (before.label.frames.end, after.label.frames.start);
        if start > end {
            return Err(Error::usage(
                format!("frames {end}..{start} are in no part: a gap between {} and {}", show(before), show(after)),
                order,
            ));
        }
        if start < end {
            return Err(Error::usage(
                format!("{} and {} overlap: frames {start}..{end} are in both", show(before), show(after)),
                order,
            ));
        }
    }
    if last.label.frames.end < last.label.total {
        return Err(Error::usage(
            format!(
                "frames {}..{} are in no part: the last part is {}",
                last.label.frames.end,
                last.label.total,
                show(last)
            ),
            order,
        ));
    }
    Ok(())
}

/// Reads every part's label (a part without one is refused: it is not a part, or a whole
/// render).
pub fn parts(paths: &[PathBuf], format: Format, ffmpeg: Option<&Path>) -> Result<Vec<Part>> {
    paths
        .iter()
        .map(|path| {
            let text = match format {
                Format::Gif => gif::label(&mut Source::open(path)?)?,
                Format::Apng => apng::label(&mut Source::open(path)?)?,
                Format::Webp => webp::label(&mut Source::open(path)?)?,
                _ => video::label(path, ffmpeg)?,
            };
            let label = text.as_deref().and_then(Label::parse).ok_or_else(|| {
                let what = match text.as_deref().and_then(Provenance::parse) {
                    Some(_) => "is a whole render, not a part of one (it has no part= label)",
                    None => "is not a part of a ripple-render render (it carries no part= label)",
                };
                Error::usage(
                    format!("{} {what}", path.display()),
                    Some("render the parts with --frames A..B, then join them"),
                )
            })?;
            if let Some(container) = format.container() {
                seal::check(&mut open_part(path)?.0, container).map_err(|why| Error::input(path, why))?;
            }
            Ok(Part { path: path.clone(), label })
        })
        .collect()
}

/// Joins `parts` (checked by [`check_parts`]) of `format` into `out`, a seekable file. A video
/// is joined by the ffmpeg at `ffmpeg`.
pub fn join(parts: &[Part], format: Format, out: std::fs::File, ffmpeg: Option<&Path>) -> Result<Joined> {
    let total = parts.first().map_or(0, |p| p.label.total);
    let comment = parts.first().map_or_else(String::new, |p| p.label.comment.clone());
    let mut writer = Out::with_capacity(1 << 20, out);
    let size = match format {
        Format::Gif => join_parts(parts, gif::Gif::new(comment), &mut writer)?,
        Format::Apng => join_parts(parts, apng::Apng::new(comment, total), &mut writer)?,
        Format::Webp => join_parts(parts, webp::Webp::at(Effort::recorded_in(&comment)), &mut writer)?,
        _ => {
            let program = ffmpeg.ok_or_else(|| Error::Ffmpeg("joining videos needs the ffmpeg program".into()))?;
            let file = writer.into_inner().map_err(|e| Error::output(e.into_error()))?;
            return video::join(parts, format, file, program).map(|size| Joined { frames: total, size });
        }
    };
    writer.flush().map_err(Error::output)?;
    Ok(Joined { frames: total, size })
}

/// Where a joined file is written.
type Out = std::io::BufWriter<std::fs::File>;

/// For a later part, the previous part's last picture and this part's first: its first frame,
/// whole in the part, is encoded again as the frame after the one before.
type Again<'p, T> = Option<(T, &'p T)>;

/// A format whose parts `join` puts together block by block: what the parts share, read from
/// each one's head; its frames, copied but for a later part's first, which is whole in the part
/// and is encoded again from the previous part's last picture.
trait Container {
    /// What every part must share (canvas, palette, loop…): the first part's is written, and
    /// every other part's must equal it.
    type Header: PartialEq;
    /// The canvas after a frame, in the samples this format's frames hold.
    type Picture;
    /// What differs when a part's header is not the first's, for the message.
    const SHARED: &'static str;

    /// Reads a part's head up to its first frame.
    fn header(&mut self, source: &mut Source<'_>) -> Result<Self::Header>;

    /// Writes the joined file's head from the first part's `header`.
    fn write_header(&mut self, header: &Self::Header, out: &mut Out) -> Result<()>;

    /// The part's picture after its first frame and, with `last`, after its last (one pass
    /// over the part); `None` where frames of its kind are not encoded again.
    fn pictures(&self, path: &Path, last: bool) -> Result<Option<Pictures<Self::Picture>>>;

    /// Copies the frames of the part `index` from `source` into `out`; with `again`, the
    /// previous part's last picture and this part's first, its first frame is encoded again.
    /// Returns how many frames it copied.
    fn copy_frames(
        &mut self,
        index: usize,
        source: &mut Source,
        out: &mut Out,
        again: Again<Self::Picture>,
    ) -> Result<u64>;

    /// Ends the joined file; returns its canvas.
    fn finish(self, out: &mut Out) -> Result<(u32, u32)>;
}

/// Writes each part's frames after the first part's head into `out`, a later part's first frame
/// made again from the previous part's last picture. Returns the canvas.
fn join_parts<C: Container>(parts: &[Part], mut container: C, out: &mut Out) -> Result<(u32, u32)> {
    let mut first: Option<(C::Header, &Path)> = None;
    // The previous part's last picture, for the next part's first frame.
    let mut previous: Option<C::Picture> = None;
    for (index, part) in parts.iter().enumerate() {
        let source = &mut Source::open(&part.path)?;
        let header = container.header(source)?;
        match &first {
            Some((first_header, first_path)) if *first_header != header => {
                return Err(unlike(&part.path, first_path, C::SHARED));
            }
            Some(_) => {}
            None => {
                container.write_header(&header, out)?;
                first = Some((header, &part.path));
            }
        }
        let later = index + 1 < parts.len();
        let pictures = if index > 0 || later { container.pictures(&part.path, later)? } else { None };
        let again = previous.take().zip(pictures.as_ref()).map(|(before, now)| (before, &now.first));
        let copied = container.copy_frames(index, source, out, again)?;
        // A part resealed after a frame was taken out (or put in) still says its frames: its
        // count is what it holds.
        let said = part.label.frames.end - part.label.frames.start;
        if copied != said {
            return Err(Error::input(
                &part.path,
                format!(
                    "holds {copied} frames, and its label says frames {}..{} ({said}): it was changed after it was \
                     rendered",
                    part.label.frames.start, part.label.frames.end
                ),
            ));
        }
        previous = pictures.and_then(|p| p.last);
    }
    container.finish(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(name: &str, frames: Range<u64>, total: u64) -> Part {
        let text = format!("ripple-render 0.1.0 scene=00000000000000ab part={}..{}/{total}", frames.start, frames.end);
        Part { path: name.into(), label: Label::parse(&text).unwrap() }
    }

    #[test]
    fn labels_round_trip() {
        let label = Label::parse("ripple-render 0.1.0 scene=00000000000000ab part=3..9/10").unwrap();
        assert_eq!((label.frames, label.total), (3..9, 10));
        assert_eq!(label.comment, "ripple-render 0.1.0 scene=00000000000000ab");
        assert_eq!(Label::parse("ripple-render 0.1.0 scene=00000000000000ab"), None);
    }

    #[test]
    fn parts_must_cover_the_render_in_order() {
        assert!(check_parts(&[part("a", 0..4, 10), part("b", 4..10, 10)]).is_ok());
        let message = |parts: &[Part]| check_parts(parts).unwrap_err().to_string();
        assert!(message(&[part("a", 0..4, 10), part("b", 5..10, 10)]).contains("frames 4..5 are in no part"));
        assert!(message(&[part("a", 0..5, 10), part("b", 4..10, 10)]).contains("frames 4..5 are in both"));
        assert!(message(&[part("b", 4..10, 10), part("a", 0..4, 10)]).contains("out of order"));
        assert!(message(&[part("b", 4..10, 10)]).contains("frames 0..4 are in no part"));
        assert!(message(&[part("a", 0..4, 10), part("c", 8..10, 10), part("b", 4..8, 10)]).contains("out of order"));
        assert!(message(&[part("a", 0..4, 10), part("c", 8..10, 10)]).contains("a gap"));
        assert!(message(&[part("a", 0..4, 10), part("b", 4..9, 10)]).contains("frames 9..10 are in no part"));
        assert!(message(&[part("a", 0..4, 10), part("b", 4..12, 12)]).contains("a part of 10 frames"));
    }
}
