//! Sizes in bytes as people write and read them: `512M` on the command line, `1.5 GiB` in
//! messages.

/// Bytes as people read them: `1.5 GiB`, `640 MiB`, `12 KiB`.
pub fn show(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["bytes", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} bytes")
    } else if value < 10.0 {
        format!("{value:.1} {}", UNITS[unit])
    } else {
        format!("{value:.0} {}", UNITS[unit])
    }
}

/// A `--max-memory` value that would let `bytes` through: the next whole GiB (or MiB).
pub fn suggest(bytes: u64) -> String {
    let gib = bytes.div_ceil(1 << 30);
    if gib <= 1 { format!("{}M", bytes.div_ceil(1 << 20)) } else { format!("{gib}G") }
}

/// A size exactly, the way it was most likely written: `2 MiB (2,097,152 bytes)`, `2 MB
/// (2,000,000 bytes)`, `1,234,567 bytes`.
pub fn show_exact(bytes: u64) -> String {
    let digits = bytes.to_string();
    let mut grouped = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(c);
    }
    for (unit, base) in [("TiB", 1u64 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)].into_iter().chain([
        ("TB", 1_000_000_000_000),
        ("GB", 1_000_000_000),
        ("MB", 1_000_000),
        ("kB", 1000),
    ]) {
        if bytes >= base && bytes.is_multiple_of(base) {
            return format!("{} {unit} ({grouped} bytes)", bytes / base);
        }
    }
    format!("{grouped} bytes")
}

/// Parses a size: a number with an optional unit. `K`, `M`, `G`, `T` and `KiB`, `MiB`, `GiB`,
/// `TiB` are binary (powers of 1024: `512M`, `1.5G`, `2GiB`); `kB`, `MB`, `GB`, `TB` are
/// decimal (powers of 1000: `2MB` is 2,000,000 bytes), as the SI and IEC write them; `B` or
/// nothing, bytes.
pub fn parse_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let split = text.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let scale: u64 = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 1,
        "K" | "KIB" => 1 << 10,
        "M" | "MIB" => 1 << 20,
        "G" | "GIB" => 1 << 30,
        "T" | "TIB" => 1 << 40,
        "KB" => 1000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        "TB" => 1_000_000_000_000,
        _ => return None,
    };
    if number.is_empty() || number.starts_with('.') || number.ends_with('.') || number.matches('.').count() > 1 {
        return None;
    }
    let value: f64 = number.parse().ok()?;
    let bytes = value * scale as f64;
    (bytes.is_finite() && bytes >= 1.0 && bytes < 2f64.powi(63)).then_some(bytes as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_binary_units() {
        assert_eq!(parse_size("1073741824"), Some(1 << 30));
        assert_eq!(parse_size("512M"), Some(512 << 20));
        assert_eq!(parse_size("2GiB"), Some(2 << 30));
        assert_eq!(parse_size("1.5g"), Some(3 << 29));
        assert_eq!(parse_size("64 KiB"), Some(64 << 10));
        assert_eq!(parse_size("2M"), Some(2 << 20));
        assert_eq!(parse_size("2MiB"), Some(2 << 20));
        assert_eq!(parse_size("2MB"), Some(2_000_000));
        assert_eq!(parse_size("64 kB"), Some(64_000));
        assert_eq!(parse_size("1.5GB"), Some(1_500_000_000));
        for bad in ["", "G", "-1G", "1.2.3M", "1X", ".5G", "5.G", "0", "99999999T"] {
            assert_eq!(parse_size(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn sizes_read_well() {
        assert_eq!(show(1000), "1000 bytes");
        assert_eq!(show(1536), "1.5 KiB");
        assert_eq!(show(640 << 20), "640 MiB");
        assert_eq!(show(3 << 30), "3.0 GiB");
        assert_eq!(suggest((1 << 30) + 1), "2G");
        assert_eq!(suggest(300 << 20), "300M");
        assert_eq!(show_exact(2 << 20), "2 MiB (2,097,152 bytes)");
        assert_eq!(show_exact(2_000_000), "2 MB (2,000,000 bytes)");
        assert_eq!(show_exact(1_234_567), "1,234,567 bytes");
        assert_eq!(show_exact(512), "512 bytes");
    }
}
