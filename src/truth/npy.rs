//! NumPy's array files, written by the project: `.npy` (format version 1.0: the magic, a header
//! dictionary padded to a multiple of 64 bytes, then the data, little-endian, C order) and
//! `.npz` (a ZIP of `.npy` files, stored without compression, so that a reader may map them).

use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

use crate::base::error::{Error, Result};

/// An element type NumPy names by a `descr` string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dtype {
    /// `<i2`
    I16,
    /// `<i4`
    I32,
    /// `<i8`
    I64,
    /// `<f4`
    F32,
    /// `<f8`
    F64,
    /// `|u1`
    U8,
}

impl Dtype {
    /// NumPy's name for it.
    pub fn descr(self) -> &'static str {
        match self {
            Dtype::I16 => "<i2",
            Dtype::I32 => "<i4",
            Dtype::I64 => "<i8",
            Dtype::F32 => "<f4",
            Dtype::F64 => "<f8",
            Dtype::U8 => "|u1",
        }
    }

    /// Its size in bytes.
    pub fn size(self) -> usize {
        match self {
            Dtype::U8 => 1,
            Dtype::I16 => 2,
            Dtype::I32 | Dtype::F32 => 4,
            Dtype::I64 | Dtype::F64 => 8,
        }
    }

    /// The name docs and `meta.json` use (NumPy's: `int16`, `float32`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Dtype::I16 => "int16",
            Dtype::I32 => "int32",
            Dtype::I64 => "int64",
            Dtype::F32 => "float32",
            Dtype::F64 => "float64",
            Dtype::U8 => "uint8",
        }
    }
}

/// An array ready to write: its type, shape and little-endian bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct Array {
    /// The element type.
    pub dtype: Dtype,
    /// The shape, outermost axis first.
    pub shape: Vec<usize>,
    /// The elements' bytes, C order.
    pub data: Vec<u8>,
}

impl Array {
    /// The `.npy` file's bytes.
    pub fn to_npy(&self) -> Vec<u8> {
        let mut out = header(self.dtype, &self.shape);
        out.extend_from_slice(&self.data);
        out
    }
}

/// The `.npy` header of an array of `dtype` and `shape`: magic, version 1.0, the header's
/// length, and the dictionary, padded with spaces and a newline so the data starts at a
/// multiple of 64 bytes.
pub fn header(dtype: Dtype, shape: &[usize]) -> Vec<u8> {
    let dims = match shape {
        [n] => format!("({n},)"),
        _ => format!("({})", shape.iter().map(usize::to_string).collect::<Vec<_>>().join(", ")),
    };
    let mut dict = format!("{{'descr': '{}', 'fortran_order': False, 'shape': {dims}, }}", dtype.descr());
    let unpadded = 10 + dict.len() + 1;
    dict.push_str(&" ".repeat(unpadded.next_multiple_of(64) - unpadded));
    dict.push('\n');
    let mut out = Vec::with_capacity(10 + dict.len());
    out.extend_from_slice(b"\x93NUMPY\x01\x00");
    out.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    out.extend_from_slice(dict.as_bytes());
    out
}

/// Writes an `.npz` at `path`: each `(name, header, parts)` is the member `name.npy`, its
/// `.npy` header followed by the files `parts` (each a `.npy` file whose data, after its own
/// header, is appended), stored uncompressed. This stacks per-frame files into one array. The
/// parts are copied through a small buffer, never held whole (a member may pass 4 GiB: every
/// size and offset is written in ZIP64's 64-bit fields), and each member's CRC-32, known only
/// once its data is written, is written back into its local header.
pub fn write_npz(path: &Path, members: &[(String, Vec<u8>, Vec<std::path::PathBuf>)]) -> Result<()> {
    let io = |e| Error::io(path, e);
    let file = std::fs::File::create(path).map_err(io)?;
    let mut out = std::io::BufWriter::with_capacity(COPY_BUFFER, file);
    let mut central = Vec::new();
    let mut offset: u64 = 0;
    let mut buffer = vec![0u8; COPY_BUFFER];
    for (name, head, parts) in members {
        let name = format!("{name}.npy");
        let mut size = head.len() as u64;
        let mut starts = Vec::with_capacity(parts.len());
        for part in parts {
            let (start, len) = npy_data(part)?;
            size += len;
            starts.push(start);
        }
        let local = local_header(&name, 0, size);
        out.write_all(&local).map_err(io)?;
        let mut crc = crc32fast::Hasher::new();
        crc.update(head);
        out.write_all(head).map_err(io)?;
        for (part, start) in parts.iter().zip(starts) {
            let mut input = std::fs::File::open(part).map_err(|e| Error::io(part, e))?;
            input.seek(SeekFrom::Start(start)).map_err(|e| Error::io(part, e))?;
            loop {
                let n = input.read(&mut buffer).map_err(|e| Error::io(part, e))?;
                if n == 0 {
                    break;
                }
                crc.update(&buffer[..n]);
                out.write_all(&buffer[..n]).map_err(io)?;
            }
        }
        let crc = crc.finalize();
        // The CRC's place in the local header, 14 bytes in.
        out.flush().map_err(io)?;
        let file = out.get_mut();
        file.seek(SeekFrom::Start(offset + 14)).map_err(io)?;
        file.write_all(&crc.to_le_bytes()).map_err(io)?;
        file.seek(SeekFrom::End(0)).map_err(io)?;
        central.extend(central_entry(&name, crc, size, offset));
        offset += local.len() as u64 + size;
    }
    let count = members.len() as u16;
    let central_offset = offset;
    out.write_all(&central).map_err(io)?;
    out.write_all(&end_records(count, central_offset, central.len() as u64)).map_err(io)?;
    out.flush().map_err(io)
}

/// How much of a part is copied at a time.
const COPY_BUFFER: usize = 1 << 20;

/// Where the data of the `.npy` file at `path` starts, and how long it is (read from its
/// preamble, the file's length known from the system).
fn npy_data(path: &Path) -> Result<(u64, u64)> {
    let mut file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut preamble = [0u8; 10];
    let not_npy = || Error::Encode(format!("{} is not a .npy file", path.display()));
    file.read_exact(&mut preamble).map_err(|_| not_npy())?;
    let start = data_start(&preamble).ok_or_else(not_npy)? as u64;
    let len = file.metadata().map_err(|e| Error::io(path, e))?.len();
    if start > len {
        return Err(not_npy());
    }
    Ok((start, len - start))
}

/// The ZIP64 end records, so that sizes and offsets past 4 GiB are read, then the classic end
/// record, every field of which points at them.
fn end_records(count: u16, central_offset: u64, central_len: u64) -> Vec<u8> {
    let zip64_end = central_offset + central_len;
    let mut end = Vec::new();
    end.extend(0x0606_4b50u32.to_le_bytes());
    end.extend(44u64.to_le_bytes());
    end.extend([45, 0, 45, 0]);
    end.extend([0u8; 8]);
    end.extend(u64::from(count).to_le_bytes());
    end.extend(u64::from(count).to_le_bytes());
    end.extend(central_len.to_le_bytes());
    end.extend(central_offset.to_le_bytes());
    end.extend(0x0706_4b50u32.to_le_bytes());
    end.extend(0u32.to_le_bytes());
    end.extend(zip64_end.to_le_bytes());
    end.extend(1u32.to_le_bytes());
    end.extend(0x0605_4b50u32.to_le_bytes());
    end.extend([0u8; 4]);
    end.extend(count.to_le_bytes());
    end.extend(count.to_le_bytes());
    end.extend(u32::MAX.to_le_bytes());
    end.extend(u32::MAX.to_le_bytes());
    end.extend(0u16.to_le_bytes());
    end
}

/// Where a `.npy` file's data starts: after the 10-byte preamble and the header it measures.
fn data_start(preamble: &[u8]) -> Option<usize> {
    if preamble.len() < 10 || &preamble[..8] != b"\x93NUMPY\x01\x00" {
        return None;
    }
    Some(10 + usize::from(u16::from_le_bytes([preamble[8], preamble[9]])))
}

/// A stored member's local header, sizes in its ZIP64 extra field.
fn local_header(name: &str, crc: u32, size: u64) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend(0x0403_4b50u32.to_le_bytes());
    out.extend([45, 0, 0, 0, 0, 0]); // version 4.5 (ZIP64), no flags, stored
    out.extend([0, 0, 0x21, 0]); // 1980-01-01 00:00: no clock in the bytes
    out.extend(crc.to_le_bytes());
    out.extend(u32::MAX.to_le_bytes());
    out.extend(u32::MAX.to_le_bytes());
    out.extend((name.len() as u16).to_le_bytes());
    out.extend(20u16.to_le_bytes());
    out.extend(name.as_bytes());
    out.extend(1u16.to_le_bytes());
    out.extend(16u16.to_le_bytes());
    out.extend(size.to_le_bytes());
    out.extend(size.to_le_bytes());
    out
}

/// A stored member's central directory entry, sizes and offset in its ZIP64 extra field.
fn central_entry(name: &str, crc: u32, size: u64, offset: u64) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend(0x0201_4b50u32.to_le_bytes());
    out.extend([45, 0, 45, 0, 0, 0, 0, 0]);
    out.extend([0, 0, 0x21, 0]);
    out.extend(crc.to_le_bytes());
    out.extend(u32::MAX.to_le_bytes());
    out.extend(u32::MAX.to_le_bytes());
    out.extend((name.len() as u16).to_le_bytes());
    out.extend(28u16.to_le_bytes());
    out.extend([0u8; 6]); // comment length, disk, internal attributes
    out.extend(0u32.to_le_bytes()); // external attributes
    out.extend(u32::MAX.to_le_bytes());
    out.extend(name.as_bytes());
    out.extend(1u16.to_le_bytes());
    out.extend(24u16.to_le_bytes());
    out.extend(size.to_le_bytes());
    out.extend(size.to_le_bytes());
    out.extend(offset.to_le_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_is_numpys() {
        let head = header(Dtype::I16, &[3, 4]);
        // The 60-byte dictionary, padded: the data starts at 128.
        assert_eq!(head.len(), 128);
        assert_eq!(&head[..8], b"\x93NUMPY\x01\x00");
        assert_eq!(u16::from_le_bytes([head[8], head[9]]), 118);
        let dict = std::str::from_utf8(&head[10..]).unwrap();
        assert!(dict.starts_with("{'descr': '<i2', 'fortran_order': False, 'shape': (3, 4), }"), "{dict}");
        assert!(dict.ends_with(" \n"));
        assert_eq!(&header(Dtype::F32, &[5])[10..58], b"{'descr': '<f4', 'fortran_order': False, 'shape'");
        assert!(std::str::from_utf8(&header(Dtype::F32, &[5])[10..]).unwrap().contains("'shape': (5,), }"));
    }
}
