//! A lossless WebP (VP8L) encoder for our frames: a colour table for images of at most 256
//! colours (indices packed several to a pixel when there are at most 16), else subtract green
//! and a predictor chosen per 8×8 tile; back references found through hash chains (the 120
//! short codes for nearby pixels), a colour cache, and canonical prefix codes limited to 15
//! bits. The ways are compared parsed greedily; the one kept is parsed again for fewest bits
//! (`cheapest.rs`). Written from the format's description (RFC 9649). Pixels are opaque, or
//! transparent where a blended frame leaves the canvas as it was: a transparent pixel's colour
//! is free, and is given the prediction's.
//!
//! The files follow the format's stages: `tokens` (the pixel stream as symbols), `predict`
//! (the predictor transform), `cross` (the cross-colour transform, RFC 9649 §4.2), `groups`
//! (tiles sorted into groups of codes), `coding` (an image's codes and symbols, and their size
//! in bits), `prefix` (prefix codes and the bit writer) and `cheapest` (the parse of fewest
//! bits); here, the ways a picture is coded and the choice among them.

mod cheapest;
mod coding;
mod cross;
mod groups;
mod predict;
mod prefix;
mod tokens;

use coding::{Coding, Image, write_image, write_tokens};
use predict::{MODES, Predictable, TILE_BITS, predict, subtract, subtract_green};
use prefix::Bits;
use tokens::CACHE_BITS;

/// A way of coding a picture before its main image is parsed: its header and transforms, and
/// the main image's pixels (`width` wide, with a colour cache of `cache_bits`).
struct Unparsed {
    head: Bits,
    pixels: Vec<u32>,
    width: usize,
    cache_bits: u32,
}

impl Unparsed {
    fn new(head: Bits, pixels: Vec<u32>, width: usize, cache_bits: u32) -> Unparsed {
        Unparsed { head, pixels, width, cache_bits }
    }

    /// The way with its main image parsed greedily, to be compared with other ways.
    fn parsed(self) -> Way {
        let Unparsed { head, pixels, width, cache_bits } = self;
        Way { head, image: Image::new(&pixels, width, cache_bits, true), pixels }
    }

    /// The whole bitstream, its main image parsed quickly and coded with one group of codes
    /// (the `fast` effort).
    fn quick_bytes(self) -> Vec<u8> {
        let Unparsed { mut head, pixels, width, cache_bits } = self;
        let (image, coding) = Image::quick(&pixels, width, cache_bits);
        write_tokens(&mut head, &image, &coding);
        head.finish()
    }
}

/// A way of coding a picture: its header and transforms, then its main image.
struct Way {
    head: Bits,
    image: Image,
    /// The main image's pixels, which `image` parses greedily.
    pixels: Vec<u32>,
}

impl Way {
    /// The way with its main image parsed again, for fewest bits.
    fn cheapest(self) -> Way {
        let Way { head, image, pixels } = self;
        Way { head, image: image.cheapest(&pixels), pixels }
    }

    /// The main image coded with one group of codes.
    fn single(&self) -> Coding {
        Coding::single(&self.image)
    }

    /// The main image's tiles sorted into groups of codes, if that is smaller than `one` (its
    /// coding with one group), else `one`.
    fn grouped(&self, one: Coding) -> Coding {
        Coding::grouped(&self.image, one)
    }

    /// The length in bits of the whole bitstream coded so.
    fn bits(&self, coding: &Coding) -> u64 {
        self.head.len() + coding.bits
    }

    /// The whole bitstream, coded so.
    fn bytes(&self, coding: &Coding) -> Vec<u8> {
        let mut bits = self.head.clone();
        write_tokens(&mut bits, &self.image, coding);
        bits.finish()
    }
}

/// Encodes whichever of `versions`, ARGB pictures that show alike (`width` × `height`), looks
/// smaller by its predictors' residuals (the sizes under each tile's best mode), as [`encode`]
/// does. Ranking them so costs about a tenth of an encode, and the one kept is not weighed again.
pub fn encode_smaller(versions: &[&[u32]], width: usize, height: usize, alpha: bool) -> Vec<u8> {
    let mut best: Option<(usize, Predictable)> = None;
    for (k, pixels) in versions.iter().enumerate() {
        let this = Predictable::new(pixels, width, height);
        if best.as_ref().is_none_or(|(_, b)| this.size() < b.size()) {
            best = Some((k, this));
        }
    }
    let Some((k, predictable)) = best else { return Vec::new() };
    encode_predictable(versions[k], predictable, width, height, alpha)
}

/// Encodes ARGB `pixels` (`width` × `height`, at most 16384 a side) as a VP8L bitstream;
/// `alpha` says whether any is not opaque. An image of at most 16 colours is coded through a
/// colour table, its indices packed several to a pixel; any other with subtract-green and
/// predictors, with subtract-green alone, and (up to 256 colours) through the table, the way of
/// fewest bits (parsed greedily, its tiles sorted into groups of codes if that is smaller) kept,
/// then parsed again for fewest bits and grouped again.
pub fn encode(pixels: &[u32], width: usize, height: usize, alpha: bool) -> Vec<u8> {
    encode_predictable(pixels, Predictable::new(pixels, width, height), width, height, alpha)
}

/// Encodes ARGB `pixels` as [`encode`] does, quickly (the `fast` effort): an image of at most
/// 256 colours through the colour table, any other with subtract-green and a predictor chosen
/// per tile; each parsed once, quickly, and coded with one group of codes.
/// The pixels are taken over (turned into residuals in place).
pub fn encode_fast(pixels: Vec<u32>, width: usize, height: usize, alpha: bool) -> Vec<u8> {
    let way = match colour_table(&pixels) {
        Some(table) => indexed_way(&pixels, width, height, alpha, &table),
        None => predicted_way(Predictable::quick(pixels, width, height), width, height, (alpha, false)).0,
    };
    way.quick_bytes()
}

/// Encodes whichever of `versions` (ARGB pictures that show alike) codes smallest, for the
/// `max` effort: every way of each (a colour table where there are at most 256 colours;
/// subtract-green and predictors, with and without the cross-colour transform; subtract-green
/// alone) parsed for fewest bits with one pass more than the default's, its tiles grouped where
/// that pays, the smallest bitstream kept (the first of equals).
pub fn encode_max(versions: &[&[u32]], width: usize, height: usize, alpha: bool) -> Vec<u8> {
    let mut best: Option<Vec<u8>> = None;
    for &pixels in versions {
        let (predicted, crossed) = predicted_way(Predictable::new(pixels, width, height), width, height, (alpha, true));
        let mut ways = vec![predicted, green_way(pixels, width, height, alpha)];
        ways.extend(crossed);
        if let Some(table) = colour_table(pixels) {
            ways.push(indexed_way(pixels, width, height, alpha, &table));
        }
        for way in ways {
            let Way { head, image, pixels } = way.parsed();
            let image = image.cheapest_by(&pixels, cheapest::MAX_PASSES);
            let way = Way { head, image, pixels };
            let bytes = way.bytes(&way.grouped(way.single()));
            if best.as_ref().is_none_or(|b| bytes.len() < b.len()) {
                best = Some(bytes);
            }
        }
    }
    best.unwrap_or_default()
}

/// [`encode`], with `pixels`' predictor residuals weighed already.
fn encode_predictable(pixels: &[u32], predictable: Predictable, width: usize, height: usize, alpha: bool) -> Vec<u8> {
    let table = colour_table(pixels);
    if let Some(table) = table.as_ref().filter(|t| t.len() <= 16) {
        let way = indexed_way(pixels, width, height, alpha, table).parsed().cheapest();
        return way.bytes(&way.grouped(way.single()));
    }
    // The cross-colour transform is for frames drawn whole (a look's light moves every channel
    // of every pixel together); where most pixels are unchanged and transparent, the frame is
    // moved picture, whose copies the transform breaks: there it never came out smaller, and
    // weighing it cost a golden scene of tiles 60% more time.
    let opaque = pixels.iter().filter(|&&p| p >> 24 != 0).count();
    let cross = opaque * 4 >= pixels.len() * 3;
    let (predicted, crossed) = predicted_way(predictable, width, height, (alpha, cross));
    let mut ways = vec![predicted.parsed(), green_way(pixels, width, height, alpha).parsed()];
    // The transformed residuals, if any, are weighed apart (below).
    let crossed = crossed.map(Unparsed::parsed);
    if let Some(table) = &table {
        ways.push(indexed_way(pixels, width, height, alpha, table).parsed());
    }
    // The way of fewest bits is tried grouped. Grouping can turn the order of ways around (a
    // busy blended frame: subtract-green alone 0.3% larger with one group, 12% smaller
    // grouped): where it pays on the first way, the others within a tenth are tried grouped too.
    let singles: Vec<Coding> = ways.iter().map(Way::single).collect();
    let bits: Vec<u64> = ways.iter().zip(&singles).map(|(way, coding)| way.bits(coding)).collect();
    // Each single coding is moved into its grouped try, at most once.
    let mut singles: Vec<Option<Coding>> = singles.into_iter().map(Some).collect();
    let Some(first) = (0..ways.len()).min_by_key(|&w| bits[w]) else {
        return Vec::new();
    };
    let Some(one) = singles[first].take() else { return Vec::new() };
    let mut best = (first, ways[first].grouped(one));
    if best.1.groups.is_some() {
        for w in (0..ways.len()).filter(|&w| w != first && bits[w] <= bits[first] + bits[first] / 10) {
            let Some(one) = singles[w].take() else { continue };
            let coding = ways[w].grouped(one);
            if ways[w].bits(&coding) < ways[best.0].bits(&best.1) {
                best = (w, coding);
            }
        }
    }
    // The way chosen is parsed again, for fewest bits, with the others gone. The cross-colour
    // transform's residuals are parsed so too, and the smaller kept: weighed among the others by
    // their greedy parse, they were chosen where the cheapest parse then made them larger (a
    // golden scene of tiles, 6% larger than without the transform).
    let chosen = best.0;
    drop((singles, best));
    let finished = |way: Way| {
        let way = way.cheapest();
        way.bytes(&way.grouped(way.single()))
    };
    let way = ways.swap_remove(chosen);
    drop(ways);
    let bytes = finished(way);
    match crossed.map(finished) {
        Some(crossed) if crossed.len() < bytes.len() => crossed,
        _ => bytes,
    }
}

/// Codes `pixels` with subtract-green alone: where neighbours predict a pixel poorly (a frame
/// of displaced, lit water), back references and the colour cache do better on the colours
/// themselves than on residuals.
fn green_way(pixels: &[u32], width: usize, height: usize, alpha: bool) -> Unparsed {
    let mut head = header(width, height, alpha);
    head.put(1, 1);
    head.put(2, 2);
    head.put(0, 1);
    let argb: Vec<u32> = pixels.iter().map(|&p| subtract_green(p)).collect();
    Unparsed::new(head, argb, width, CACHE_BITS)
}

/// The header every image starts with: the signature, size, alpha hint and version 0.
fn header(width: usize, height: usize, alpha: bool) -> Bits {
    let mut bits = Bits::new();
    bits.put(0x2f, 8);
    bits.put(width as u32 - 1, 14);
    bits.put(height as u32 - 1, 14);
    bits.put(u32::from(alpha), 1);
    bits.put(0, 3);
    bits
}

/// The distinct colours of `pixels`, sorted, if there are at most 256.
fn colour_table(pixels: &[u32]) -> Option<Vec<u32>> {
    let mut seen: Vec<u32> = Vec::with_capacity(257);
    let mut last = None;
    for &p in pixels {
        if last == Some(p) {
            continue;
        }
        last = Some(p);
        if let Err(at) = seen.binary_search(&p) {
            if seen.len() == 256 {
                return None;
            }
            seen.insert(at, p);
        }
    }
    Some(seen)
}

/// Codes `pixels` through the colour-indexing transform: the table (each entry as its
/// difference from the one before), then the indices, bundled 8, 4 or 2 to a pixel's green
/// when the table has at most 2, 4 or 16 colours.
fn indexed_way(pixels: &[u32], width: usize, height: usize, alpha: bool, table: &[u32]) -> Unparsed {
    let mut bits = header(width, height, alpha);
    bits.put(1, 1);
    bits.put(3, 2);
    bits.put(table.len() as u32 - 1, 8);
    let deltas: Vec<u32> =
        table.iter().enumerate().map(|(i, &c)| if i == 0 { c } else { subtract(c, table[i - 1]) }).collect();
    write_image(&mut bits, &deltas, table.len());
    // No more transforms.
    bits.put(0, 1);
    let width_bits = match table.len() {
        0..=2 => 3,
        3..=4 => 2,
        5..=16 => 1,
        _ => 0,
    };
    let (per, index_bits) = (1usize << width_bits, 8 >> width_bits);
    let packed_width = width.div_ceil(per);
    let mut packed = Vec::with_capacity(packed_width * height);
    for row in pixels.chunks_exact(width) {
        for group in row.chunks(per) {
            let mut code = 0u32;
            for (k, p) in group.iter().enumerate() {
                let index = table.binary_search(p).unwrap_or(0) as u32;
                code |= index << (k * index_bits);
            }
            packed.push(0xff00_0000 | code << 8);
        }
    }
    // Indices repeat as whole runs, not as scattered colours: no cache.
    Unparsed::new(bits, packed, packed_width, 0)
}

/// The residual of the pixel `p` against `prediction`; a transparent pixel shows nothing, so
/// its colour becomes the prediction's (its residual is zero but for alpha), and later pixels
/// are predicted from it as the decoder rebuilds it.
fn settle(p: &mut u32, prediction: u32) -> u32 {
    if *p >> 24 == 0 {
        *p = prediction & 0x00ff_ffff;
    }
    subtract(*p, prediction)
}

/// The residuals of the pixels `run` of a row (none in the first column), into `residuals`, each
/// predicted by `predictor` from its left, top, top-left and top-right neighbours, in `row` (the
/// pixels settled so far) and `up` (the row above, settled). The top-right of the last column is
/// the row's first pixel, as the format has it: the pixel after the top one in memory.
#[inline(always)]
fn predict_run(
    (up, row, residuals): (&[u32], &mut [u32], &mut [u32]),
    run: std::ops::Range<usize>,
    predictor: impl Fn(u32, u32, u32, u32) -> u32,
) {
    let width = row.len();
    for x in run {
        let top_right = if x + 1 < width { up[x + 1] } else { row[0] };
        let prediction = predictor(row[x - 1], up[x], up[x - 1], top_right);
        residuals[x] = settle(&mut row[x], prediction);
    }
}

/// Codes `pixels` with subtract-green and a predictor chosen per tile; and with `cross`, also
/// with the cross-colour transform over the residuals after, where it takes anything out (which
/// way is smaller is found by parsing both: the tiles' entropies that choose the multipliers do
/// not see back references, which the transform can break).
fn predicted_way(
    predictable: Predictable,
    width: usize,
    height: usize,
    (alpha, cross): (bool, bool),
) -> (Unparsed, Option<Unparsed>) {
    let Predictable { mut argb, totals } = predictable;
    let mut bits = header(width, height, alpha);
    // Subtract green.
    bits.put(1, 1);
    bits.put(2, 2);
    // The predictor: each tile's mode is the one with the smallest residuals.
    let tile = 1usize << TILE_BITS;
    let tiles_x = width.div_ceil(tile);
    // The first of the cheapest modes.
    let modes: Vec<u32> =
        totals.iter().map(|t| (0..MODES).fold(0, |best, m| if t[m] < t[best] { m } else { best }) as u32).collect();
    // Each pixel's residual replaces it in place; the row being settled and the one above, as
    // the decoder rebuilds them, are kept apart.
    let (mut up, mut row) = (vec![0u32; width], vec![0u32; width]);
    for (y, line) in argb.chunks_exact_mut(width).enumerate() {
        row.copy_from_slice(line);
        if y == 0 {
            // The first row: black, then each pixel from its left.
            for x in 0..width {
                let prediction = if x == 0 { 0xff00_0000 } else { row[x - 1] };
                line[x] = settle(&mut row[x], prediction);
            }
        } else {
            line[0] = settle(&mut row[0], up[0]);
            // Each tile's run of this row under its mode.
            for x0 in (0..width).step_by(tile) {
                let run = x0.max(1)..(x0 + tile).min(width);
                let mode = modes[(y >> TILE_BITS) * tiles_x + (x0 >> TILE_BITS)];
                let rows = (&up[..], &mut row[..], &mut line[..]);
                match mode {
                    1 => predict_run(rows, run, |l, _, _, _| l),
                    2 => predict_run(rows, run, |_, t, _, _| t),
                    _ => predict_run(rows, run, |l, t, tl, tr| predict(mode, l, t, tl, tr)),
                }
            }
        }
        std::mem::swap(&mut up, &mut row);
    }
    let residuals = argb;
    bits.put(1, 1);
    bits.put(0, 2);
    bits.put(TILE_BITS - 2, 3);
    let mode_image: Vec<u32> = modes.iter().map(|&m| 0xff00_0000 | m << 8).collect();
    write_image(&mut bits, &mode_image, tiles_x);
    let plain = |mut bits: Bits, residuals| {
        // No more transforms.
        bits.put(0, 1);
        Unparsed::new(bits, residuals, width, CACHE_BITS)
    };
    if !cross {
        return (plain(bits, residuals), None);
    }
    // The cross-colour transform over the residuals, if it takes anything out.
    let mut crossed = residuals.clone();
    let Some(multipliers) = cross::transform(&mut crossed, width, height) else {
        return (plain(bits, residuals), None);
    };
    let mut with = bits.clone();
    with.put(1, 1);
    with.put(1, 2);
    with.put(cross::CROSS_BITS - 2, 3);
    let image: Vec<u32> = multipliers.iter().map(|m| m.pixel()).collect();
    write_image(&mut with, &image, width.div_ceil(1 << cross::CROSS_BITS));
    (plain(bits, residuals), Some(plain(with, crossed)))
}

#[cfg(test)]
mod tests;
