//! Frame differencing, shared by the animated formats: the rectangle of the canvas where a
//! frame differs from the one before, and that rectangle's pixels cut out.

/// A rectangle of the canvas: left, top, width, height.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rect {
    /// Left column.
    pub x: u32,
    /// Top row.
    pub y: u32,
    /// Columns.
    pub width: u32,
    /// Rows.
    pub height: u32,
}

impl Rect {
    /// The whole canvas.
    pub fn whole(width: u32, height: u32) -> Rect {
        Rect { x: 0, y: 0, width, height }
    }

    /// One pixel, top left: what a frame where nothing changed carries (a frame is never
    /// dropped).
    pub const PIXEL: Rect = Rect { x: 0, y: 0, width: 1, height: 1 };
}

/// The smallest rectangle holding every pixel where `pixels` differs from `previous` (frames
/// `width` wide), or `None` when nothing changed: the first and last changed rows, then the
/// columns within them.
pub fn changed<P: PartialEq>(previous: &[P], pixels: &[P], width: usize) -> Option<Rect> {
    let height = pixels.len() / width.max(1);
    let changed_row = |y: usize| pixels[y * width..(y + 1) * width] != previous[y * width..(y + 1) * width];
    let top = (0..height).find(|&y| changed_row(y))?;
    let bottom = (top..height).rev().find(|&y| changed_row(y)).unwrap_or(top);
    let (mut left, mut right) = (width, 0);
    for y in top..=bottom {
        let (a, b) = (&pixels[y * width..(y + 1) * width], &previous[y * width..(y + 1) * width]);
        // Only what lies outside the columns found so far can widen them: compared a slice at a
        // time (which vectorizes), searched pixel by pixel only where it differs.
        if a[..left] != b[..left] {
            left = a.iter().zip(b).position(|(p, q)| p != q).unwrap_or(left);
        }
        let from = (right + 1).max(left).min(width);
        if a[from..] != b[from..] {
            right = width - 1 - a.iter().rev().zip(b.iter().rev()).position(|(p, q)| p != q).unwrap_or(0);
        }
    }
    Some(Rect { x: left as u32, y: top as u32, width: (right - left + 1) as u32, height: (bottom - top + 1) as u32 })
}

/// The pixels of `rect` in `pixels` (`width` wide), row by row; with `unchanged`, each pixel
/// equal to `previous`'s there is replaced by it (a transparent marker).
pub fn cut<P: Copy + PartialEq>(
    pixels: &[P],
    previous: &[P],
    width: usize,
    rect: Rect,
    unchanged: Option<P>,
) -> Vec<P> {
    let mut out = Vec::new();
    cut_into(pixels, previous, width, rect, unchanged, &mut out);
    out
}

/// [`cut`] into `out` (emptied first), whose room is used again.
pub fn cut_into<P: Copy + PartialEq>(
    pixels: &[P],
    previous: &[P],
    width: usize,
    rect: Rect,
    unchanged: Option<P>,
    out: &mut Vec<P>,
) {
    out.clear();
    out.reserve(rect.width as usize * rect.height as usize);
    for y in rect.y as usize..(rect.y + rect.height) as usize {
        let span = y * width + rect.x as usize..y * width + (rect.x + rect.width) as usize;
        match unchanged {
            Some(marker) => {
                let pairs = pixels[span.clone()].iter().zip(&previous[span]);
                out.extend(pairs.map(|(&now, &before)| if now == before { marker } else { now }));
            }
            None => out.extend_from_slice(&pixels[span]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_changed_rectangle_is_the_smallest_that_holds_every_change() {
        let a = vec![0u8; 6 * 4];
        let mut b = a.clone();
        assert_eq!(changed(&a, &b, 6), None);
        b[6 + 4] = 1; // (4, 1)
        b[3 * 6 + 2] = 1; // (2, 3)
        assert_eq!(changed(&a, &b, 6), Some(Rect { x: 2, y: 1, width: 3, height: 3 }));
        b[0] = 1;
        assert_eq!(changed(&a, &b, 6), Some(Rect { x: 0, y: 0, width: 5, height: 4 }));
    }

    #[test]
    fn a_cut_marks_what_did_not_change() {
        let before = [1u8, 2, 3, 4, 5, 6];
        let now = [1u8, 9, 3, 4, 5, 7];
        let rect = Rect { x: 1, y: 0, width: 2, height: 2 };
        assert_eq!(cut(&now, &before, 3, rect, None), [9, 3, 5, 7]);
        assert_eq!(cut(&now, &before, 3, rect, Some(0)), [9, 0, 0, 7]);
    }

    #[test]
    fn the_changed_rectangle_is_the_brute_force_one_on_scattered_changes() {
        // Frames of 37 × 23 with a few changes scattered at random (xorshift), checked against
        // the definition: the smallest rectangle holding every differing pixel.
        let (w, h) = (37usize, 23usize);
        let mut state = 0x2545_f491u32;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            state as usize
        };
        for round in 0..500 {
            let before = vec![5u8; w * h];
            let mut after = before.clone();
            for _ in 0..round % 7 {
                after[next() % (w * h)] = 9;
            }
            let changed_at: Vec<(usize, usize)> =
                (0..w * h).filter(|&i| after[i] != before[i]).map(|i| (i % w, i / w)).collect();
            let expected = (!changed_at.is_empty()).then(|| {
                let (x0, x1) =
                    (changed_at.iter().map(|p| p.0).min().unwrap(), changed_at.iter().map(|p| p.0).max().unwrap());
                let (y0, y1) =
                    (changed_at.iter().map(|p| p.1).min().unwrap(), changed_at.iter().map(|p| p.1).max().unwrap());
                Rect { x: x0 as u32, y: y0 as u32, width: (x1 - x0 + 1) as u32, height: (y1 - y0 + 1) as u32 }
            });
            assert_eq!(changed(&before, &after, w), expected, "round {round}");
        }
    }
}
