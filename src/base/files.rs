//! Files as inputs: what kind a path is, for messages, and reading one within a size limit
//! whatever it is (a regular file, a pipe, a device).

use std::path::Path;

use super::units::show;

/// What kind of file this is, for messages: "a named pipe", "a character device", ….
pub fn file_kind(meta: &std::fs::Metadata) -> &'static str {
    let kind = meta.file_type();
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a named pipe (FIFO)";
        }
        if kind.is_char_device() {
            return "a character device";
        }
        if kind.is_block_device() {
            return "a block device";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    if kind.is_dir() {
        "a folder"
    } else if kind.is_symlink() {
        "a symbolic link"
    } else if kind.is_file() {
        "a regular file"
    } else {
        "a special file"
    }
}

/// Reads a file of at most `limit` bytes, whatever it is: a regular file, or a pipe or device
/// (`/dev/stdin`, `<(…)`), of which at most `limit + 1` bytes are read, so an endless one is
/// refused without filling memory. A folder is refused. `what` names such files in the message
/// ("scene files").
pub fn read_limited(path: &Path, limit: u64, what: &str) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let meta = std::fs::metadata(path)?;
    if meta.is_dir() {
        return Err(std::io::Error::other("it is a folder, not a file"));
    }
    let too_large = |size: String| {
        let shown = show(limit);
        std::io::Error::other(format!("it holds {size} bytes: {what} are limited to {limit} bytes ({shown})"))
    };
    if meta.is_file() && meta.len() > limit {
        return Err(too_large(meta.len().to_string()));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)?.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(too_large(format!("more than {limit}")));
    }
    Ok(bytes)
}

/// Opens a regular file for reading, and its length: anything else (a pipe, a device, a
/// folder) is refused before it is opened, by what it is, so that reading never waits on a
/// pipe nobody writes. On Unix the file is opened without blocking and looked at again once
/// open, in case another kind of file took its name in between.
pub fn open_regular(path: &Path) -> std::io::Result<(std::fs::File, u64)> {
    let not_regular = |meta: &std::fs::Metadata| std::io::Error::other(format!("it is {}", file_kind(meta)));
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(not_regular(&meta));
    }
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32);
    }
    let file = options.open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(not_regular(&meta));
    }
    Ok((file, meta.len()))
}

/// Reads a regular file (see [`open_regular`]) of at most `limit` bytes; a longer one is
/// refused after `limit + 1` bytes, whatever its length claims.
pub fn read_regular_within(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let (file, len) = open_regular(path)?;
    let too_large =
        || std::io::Error::other(format!("it holds more than {limit} bytes ({}), the most allowed", show(limit)));
    if len > limit {
        return Err(too_large());
    }
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(too_large());
    }
    Ok(bytes)
}

/// The XXH3-64 of a regular file's bytes (see [`open_regular`]: a pipe or device is refused
/// unread), read in 64 KiB pieces.
pub fn hash_regular(path: &Path) -> std::io::Result<u64> {
    let (file, _) = open_regular(path)?;
    let mut hash = xxhash_rust::xxh3::Xxh3::new();
    hash_into(&mut hash, file)?;
    Ok(hash.digest())
}

/// Feeds what `reader` holds, to its end, into `hash` (XXH3-64, in 64 KiB reads), and says how
/// many bytes that was. A caller that needs exactly `n` bytes hands `reader.take(n)` and checks
/// the count.
pub fn hash_into(hash: &mut xxhash_rust::xxh3::Xxh3, mut reader: impl std::io::Read) -> std::io::Result<u64> {
    let mut buffer = vec![0u8; 1 << 16];
    let mut count = 0;
    loop {
        match reader.read(&mut buffer) {
            Ok(0) => return Ok(count),
            Ok(n) => {
                hash.update(&buffer[..n]);
                count += n as u64;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// The bytes of the files in `dir`, all the way down.
pub fn folder_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir).into_iter().flatten().flatten().fold(0, |sum, entry| match entry.file_type() {
        Ok(t) if t.is_dir() => sum + folder_bytes(&entry.path()),
        _ => sum + entry.metadata().map_or(0, |m| m.len()),
    })
}
