//! Bytes of a page to text: the charset the headers name, else the one an HTML page declares
//! in its first bytes, else a byte-order mark, else a guess from the bytes.

use encoding_rs::Encoding;

/// How far into an HTML page a `<meta charset>` is looked for (the HTML standard's 1024,
/// with room for pages that put it late).
const META_SCAN: usize = 4096;

/// `bytes` decoded, and the name of the encoding used.
pub fn decode(bytes: &[u8], content_type: Option<&str>, html: bool) -> (String, &'static str) {
    let declared = content_type.and_then(charset_param).and_then(|label| Encoding::for_label(label.as_bytes()));
    let encoding = Encoding::for_bom(bytes)
        .map(|(e, _)| e)
        .or(declared)
        .or_else(|| html.then(|| meta_charset(&bytes[..bytes.len().min(META_SCAN)])).flatten())
        .unwrap_or_else(|| guess(bytes));
    let (text, used, _) = encoding.decode(bytes);
    (text.into_owned(), used.name())
}

/// The `charset` parameter of a `Content-Type`.
fn charset_param(content_type: &str) -> Option<String> {
    content_type.split(';').skip(1).find_map(|param| {
        let (key, value) = param.split_once('=')?;
        key.trim().eq_ignore_ascii_case("charset").then(|| value.trim().trim_matches(['"', '\'']).to_string())
    })
}

/// The encoding an HTML page declares: `<meta charset="…">` or
/// `<meta http-equiv="Content-Type" content="…; charset=…">`.
fn meta_charset(head: &[u8]) -> Option<&'static Encoding> {
    let text = String::from_utf8_lossy(head).to_ascii_lowercase();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("<meta") {
        rest = &rest[at + 5..];
        let tag = &rest[..rest.find('>').unwrap_or(rest.len())];
        if let Some(pos) = tag.find("charset") {
            let value = tag[pos + 7..].trim_start().strip_prefix('=')?.trim_start();
            let value = value.trim_start_matches(['"', '\'']);
            let end = value.find(|c: char| c == '"' || c == '\'' || c == ';' || c == '/' || c.is_whitespace());
            let label = &value[..end.unwrap_or(value.len())];
            if let Some(encoding) = Encoding::for_label(label.as_bytes()) {
                // A page that says UTF-16 in ASCII bytes is not UTF-16 (the HTML standard).
                return Some(if encoding == encoding_rs::UTF_16LE || encoding == encoding_rs::UTF_16BE {
                    encoding_rs::UTF_8
                } else {
                    encoding
                });
            }
        }
    }
    None
}

/// UTF-8 when the bytes are valid UTF-8, else what `chardetng` makes of them.
fn guess(bytes: &[u8]) -> &'static Encoding {
    if std::str::from_utf8(bytes).is_ok() {
        return encoding_rs::UTF_8;
    }
    let mut detector = chardetng::EncodingDetector::new(chardetng::Iso2022JpDetection::Allow);
    detector.feed(bytes, true);
    detector.guess(None, chardetng::Utf8Detection::Allow)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_then_the_meta_then_a_guess() {
        let latin1 = b"caf\xe9";
        assert_eq!(decode(latin1, Some("text/plain; charset=ISO-8859-1"), false).0, "café");
        let page = b"<html><head><meta charset=\"shift_jis\"></head><body>\x93\xfa\x96\x7b</body></html>";
        let (text, name) = decode(page, Some("text/html"), true);
        assert!(text.contains("日本"), "{text}");
        assert_eq!(name, "Shift_JIS");
        let equiv = b"<meta http-equiv='Content-Type' content='text/html; charset=iso-8859-1'>caf\xe9";
        assert!(decode(equiv, None, true).0.ends_with("café"));
        assert_eq!(decode("naïve".as_bytes(), None, false), ("naïve".to_string(), "UTF-8"));
        assert_eq!(decode(b"\xef\xbb\xbfhi", Some("text/plain; charset=latin1"), false).0, "hi", "a BOM wins");
    }
}
