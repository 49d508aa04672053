//! The simulation's whole state at the start of an output frame, written out and read back
//! (`--checkpoint-every`), so that a part of a long render (`--frames A..B`) can start from the
//! nearest checkpoint instead of simulating every frame before A.
//!
//! A checkpoint holds what the water cannot be told again: its buffers, the damping in force,
//! how far the timeline and the clock have got, and a seamless loop's kept pre-roll fields. The
//! timeline itself is not stored: it is played again, events unapplied, to the same unit (its
//! events are cheap to make; only stepping the water is not). The format, little-endian:
//!
//! ```text
//! u64 units  u64 steps  u64 next_frame  u32 damping_shift
//! u32 buffers, then each: u64 cells, cells × cell
//! u32 kept fields, then each: u64 cells, cells × cell
//! ```

use std::io::{self, Read, Write};

use super::field::Cell;

/// Writes `cells` as a count and their bytes.
pub(super) fn write_cells<C: Cell>(out: &mut impl Write, cells: &[C]) -> io::Result<()> {
    out.write_all(&(cells.len() as u64).to_le_bytes())?;
    out.write_all(bytemuck::cast_slice(cells))
}

/// Reads a count and that many cells into `cells`, which must be as long.
pub(super) fn read_cells<C: Cell>(input: &mut impl Read, cells: &mut [C]) -> io::Result<()> {
    if read_u64(input)? != cells.len() as u64 {
        return Err(invalid("a field of another size"));
    }
    input.read_exact(bytemuck::cast_slice_mut(cells))
}

/// Reads a count and that many cells into a new field.
pub(super) fn read_field<C: Cell>(input: &mut impl Read, most: u64) -> io::Result<Vec<C>> {
    let cells = read_u64(input)?;
    if cells > most {
        return Err(invalid("a field larger than the canvas"));
    }
    let mut field = vec![C::default(); cells as usize];
    input.read_exact(bytemuck::cast_slice_mut(&mut field))?;
    Ok(field)
}

pub(super) fn read_u64(input: &mut impl Read) -> io::Result<u64> {
    let mut bytes = [0u8; 8];
    input.read_exact(&mut bytes)?;
    Ok(u64::from_le_bytes(bytes))
}

pub(super) fn read_u32(input: &mut impl Read) -> io::Result<u32> {
    let mut bytes = [0u8; 4];
    input.read_exact(&mut bytes)?;
    Ok(u32::from_le_bytes(bytes))
}

/// An error for a checkpoint that is not what this render would have written.
pub(super) fn invalid(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, format!("the checkpoint holds {what}"))
}
