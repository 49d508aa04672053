//! The picture under the water as a look reads it ([`Backdrop`]: packed, padded pixels) and the
//! one sample every pass and pen takes of it: a channel of the pixel a position falls in, or of
//! the four around it weighed by the position's fractions (bilinear).

/// The background as a look reads it: one `u32` per pixel, `r | g << 8 | b << 16`, followed by
/// a row and a pixel of padding, so that a pixel and its right neighbour are one 8-byte load,
/// and so are the two below them, wherever the pixel is. (Where a neighbour lies outside the
/// canvas its weight is 0: a position clamped to the last column or row has no fraction.)
pub struct Backdrop(pub(super) Vec<u32>);

impl Backdrop {
    /// Packs an RGB background `width` pixels wide.
    pub fn new(background: &[[u8; 3]], width: usize) -> Backdrop {
        let packed = background.iter().map(|p| u32::from(p[0]) | u32::from(p[1]) << 8 | u32::from(p[2]) << 16);
        Backdrop(packed.chain(std::iter::repeat_n(0, width + 1)).collect())
    }

    /// Bytes a backdrop takes per pixel.
    pub const BYTES_PER_PIXEL: u64 = 4;
}

/// A packed pixel's channels.
#[inline(always)]
pub(super) fn unpack(p: u32) -> [u8; 3] {
    [p as u8, (p >> 8) as u8, (p >> 16) as u8]
}

/// One channel (at bit `shift`) of a sample: with `BILINEAR`, of the four `taps` (upper left,
/// upper right, lower left, lower right, packed as [`Backdrop`] packs them) weighed by the
/// fractions `fx`, `fy` (0..=255) and rounded; else of the first tap alone.
#[inline(always)]
pub(super) fn sample<const BILINEAR: bool>(taps: [u32; 4], fx: u32, fy: u32, shift: u32) -> u32 {
    let at = |c: u32| (c >> shift) & 255;
    if !BILINEAR {
        return at(taps[0]);
    }
    let top = at(taps[0]) * (256 - fx) + at(taps[1]) * fx;
    let bottom = at(taps[2]) * (256 - fx) + at(taps[3]) * fx;
    (top * (256 - fy) + bottom * fy + 32768) >> 16
}
