//! Turning file bytes into text and back without losing a byte of meaning.
//!
//! Decoding recognises UTF-8 (with or without BOM), UTF-16 LE/BE with BOM, and — for bytes
//! that are neither UTF-8 nor binary — legacy encodings guessed by `chardetng` (Latin-1 /
//! windows-1252, Shift_JIS, GBK…). Encoding writes text back in the same encoding with the
//! same BOM, and refuses characters the encoding cannot represent instead of mangling them.

use encoding_rs::{Encoding, UTF_8, UTF_16BE, UTF_16LE};

/// How a text file is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextFormat {
    /// The character encoding.
    pub encoding: &'static Encoding,
    /// Whether the file starts with a byte-order mark.
    pub bom: bool,
}

impl TextFormat {
    /// Plain UTF-8 without BOM: what new files get.
    pub const UTF8: TextFormat = TextFormat { encoding: UTF_8, bom: false };

    /// A short description (`UTF-8`, `UTF-16LE with BOM`, `windows-1252`).
    pub fn describe(&self) -> String {
        if self.bom { format!("{} with BOM", self.encoding.name()) } else { self.encoding.name().to_string() }
    }
}

/// Why bytes are not shown as text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binary {
    /// A guess at what the file is (`PNG image`, `ELF executable`, `binary data`).
    pub kind: &'static str,
}

/// Decodes file bytes as text, or says it is binary.
pub fn decode(bytes: &[u8]) -> Result<(String, TextFormat), Binary> {
    if let Some((encoding, bom_len)) = Encoding::for_bom(bytes) {
        let (text, had_errors) = encoding.decode_without_bom_handling(&bytes[bom_len..]);
        if had_errors {
            return Err(Binary { kind: "binary data (a byte-order mark, then bytes that are not valid text)" });
        }
        return Ok((text.into_owned(), TextFormat { encoding, bom: true }));
    }
    if let Ok(text) = std::str::from_utf8(bytes) {
        if !text.contains('\0') {
            return Ok((text.to_string(), TextFormat::UTF8));
        }
        return Err(Binary { kind: sniff(bytes) });
    }
    if content_inspector::inspect(bytes).is_binary() {
        return Err(Binary { kind: sniff(bytes) });
    }
    let mut detector = chardetng::EncodingDetector::new(chardetng::Iso2022JpDetection::Deny);
    detector.feed(bytes, true);
    let encoding = detector.guess(None, chardetng::Utf8Detection::Deny);
    let (text, had_errors) = encoding.decode_without_bom_handling(bytes);
    if had_errors {
        return Err(Binary { kind: "binary data (not valid text in any known encoding)" });
    }
    Ok((text.into_owned(), TextFormat { encoding, bom: false }))
}

/// Encodes text in `format`. Characters the encoding cannot represent are an error naming
/// the first of them.
pub fn encode(text: &str, format: TextFormat) -> Result<Vec<u8>, String> {
    let enc = format.encoding;
    let mut out = Vec::with_capacity(text.len() + 3);
    if enc == UTF_16LE || enc == UTF_16BE {
        if format.bom {
            out.extend_from_slice(if enc == UTF_16LE { &[0xFF, 0xFE] } else { &[0xFE, 0xFF] });
        }
        for unit in text.encode_utf16() {
            out.extend_from_slice(&if enc == UTF_16LE { unit.to_le_bytes() } else { unit.to_be_bytes() });
        }
        return Ok(out);
    }
    if enc == UTF_8 {
        if format.bom {
            out.extend_from_slice(&[0xEF, 0xBB, 0xBF]);
        }
        out.extend_from_slice(text.as_bytes());
        return Ok(out);
    }
    let (bytes, _, had_errors) = enc.encode(text);
    if had_errors {
        let bad = text.chars().find(|c| enc.encode(&c.to_string()).2).unwrap_or('?');
        return Err(format!(
            "the text contains `{bad}`, which {} cannot represent; use characters the file's encoding has, or convert the file to UTF-8 first",
            enc.name()
        ));
    }
    out.extend_from_slice(&bytes);
    Ok(out)
}

/// A guess at what binary bytes are, from their magic number.
pub fn sniff(bytes: &[u8]) -> &'static str {
    const MAGIC: &[(&[u8], &str)] = &[
        (b"\x89PNG\r\n\x1a\n", "PNG image"),
        (b"\xFF\xD8\xFF", "JPEG image"),
        (b"GIF87a", "GIF image"),
        (b"GIF89a", "GIF image"),
        (b"%PDF-", "PDF document"),
        (b"PK\x03\x04", "ZIP archive (or a format built on it: jar, docx, xlsx)"),
        (b"\x1f\x8b", "gzip archive"),
        (b"\x7fELF", "ELF executable"),
        (b"\xCA\xFE\xBA\xBE", "Mach-O or Java class file"),
        (b"\xCF\xFA\xED\xFE", "Mach-O executable"),
        (b"MZ", "Windows executable"),
        (b"SQLite format 3\0", "SQLite database"),
        (b"\0asm", "WebAssembly module"),
        (b"BZh", "bzip2 archive"),
        (b"\xFD7zXZ\0", "xz archive"),
        (b"7z\xBC\xAF\x27\x1C", "7-Zip archive"),
        (b"\x28\xB5\x2F\xFD", "zstd archive"),
    ];
    if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        return "WebP image";
    }
    MAGIC.iter().find(|(m, _)| bytes.starts_with(m)).map_or("binary data", |(_, k)| k)
}

/// Largest image returned as image content (5 MB once base64-encoded).
pub const MAX_IMAGE_BYTES: u64 = 3_750_000;

/// The image MIME type of bytes the Read tool shows as images.
pub fn image_mime(bytes: &[u8]) -> Option<&'static str> {
    match sniff(bytes) {
        "PNG image" => Some("image/png"),
        "JPEG image" => Some("image/jpeg"),
        "GIF image" => Some("image/gif"),
        "WebP image" => Some("image/webp"),
        _ => None,
    }
}

/// The line ending a text mostly uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineEnding {
    /// `\n`
    Lf,
    /// `\r\n`
    Crlf,
}

impl LineEnding {
    /// The dominant line ending of `text` (LF when there are no line breaks).
    pub fn of(text: &str) -> Self {
        let crlf = text.matches("\r\n").count();
        let lf = text.matches('\n').count() - crlf;
        if crlf > lf { LineEnding::Crlf } else { LineEnding::Lf }
    }

    /// The characters.
    pub fn as_str(self) -> &'static str {
        match self {
            LineEnding::Lf => "\n",
            LineEnding::Crlf => "\r\n",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(bytes: &[u8]) -> TextFormat {
        let (text, format) = decode(bytes).unwrap();
        assert_eq!(encode(&text, format).unwrap(), bytes, "{format:?}");
        format
    }

    #[test]
    fn encodings_round_trip_byte_exact() {
        assert_eq!(round_trip(b"plain\r\ntext\n"), TextFormat::UTF8);
        assert_eq!(round_trip(b"\xEF\xBB\xBFbom"), TextFormat { encoding: UTF_8, bom: true });
        assert_eq!(round_trip(b"\xFF\xFEh\0i\0\n\0"), TextFormat { encoding: UTF_16LE, bom: true });
        assert_eq!(round_trip(b"\xFE\xFF\0h\0i"), TextFormat { encoding: UTF_16BE, bom: true });
        let latin1 = "caf\u{e9} cr\u{e8}me br\u{fb}l\u{e9}e, na\u{ef}ve fa\u{e7}ade\n";
        let bytes: Vec<u8> = latin1.chars().map(|c| c as u8).collect();
        let f = round_trip(&bytes);
        assert_eq!(f.encoding.name(), "windows-1252");
        assert_eq!(decode(&bytes).unwrap().0, latin1);
    }

    #[test]
    fn binary_is_named() {
        assert_eq!(decode(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"), Err(Binary { kind: "PNG image" }));
        assert_eq!(decode(b"\x7fELF\x02\x01\x01\0\0\0"), Err(Binary { kind: "ELF executable" }));
        assert_eq!(decode(b"a\0b"), Err(Binary { kind: "binary data" }));
    }

    #[test]
    fn unrepresentable_characters_are_refused() {
        let f = TextFormat { encoding: encoding_rs::WINDOWS_1252, bom: false };
        let e = encode("arrow \u{2192}", f).unwrap_err();
        assert!(e.starts_with("the text contains `\u{2192}`, which windows-1252 cannot represent"), "{e}");
    }

    #[test]
    fn line_endings() {
        assert_eq!(LineEnding::of("a\r\nb\r\n"), LineEnding::Crlf);
        assert_eq!(LineEnding::of("a\nb\r\nc\n"), LineEnding::Lf);
        assert_eq!(LineEnding::of("none"), LineEnding::Lf);
    }
}
