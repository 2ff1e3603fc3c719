//! What the web tools share: none of it is a tool.

pub(crate) mod cache;
pub(crate) mod channels;
pub(crate) mod client;
pub(crate) mod config;
pub(crate) mod content;
pub(crate) mod decode;
pub(crate) mod dense;
pub(crate) mod email;
pub(crate) mod fetched;
pub(crate) mod guard;
pub(crate) mod html;
pub(crate) mod page;
pub(crate) mod resolver;
pub(crate) mod search;
pub(crate) mod send;
pub(crate) mod triggers;

/// `text` from the web, unable to close the `<web-content …>` block the tools show it in:
/// every `</web-content` (in any case) becomes `<\/web-content`, so a page cannot end the
/// block early and go on as if it were toolbelt's own words.
pub(crate) fn unclosable(text: &str) -> std::borrow::Cow<'_, str> {
    const CLOSE: &[u8] = b"</web-content";
    let bytes = text.as_bytes();
    let at = |i: usize| bytes.get(i..i + CLOSE.len()).is_some_and(|w| w.eq_ignore_ascii_case(CLOSE));
    if !(0..bytes.len()).any(|i| bytes[i] == b'<' && at(i)) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    let mut last = 0;
    for i in 0..bytes.len() {
        if bytes[i] == b'<' && at(i) {
            out.push_str(&text[last..=i]);
            out.push('\\');
            last = i + 1;
        }
    }
    out.push_str(&text[last..]);
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_closing_tag_in_any_case_cannot_close_the_block() {
        assert_eq!(super::unclosable("a </web-content> b"), "a <\\/web-content> b");
        assert_eq!(super::unclosable("</WEB-Content >x</web-contentz"), "<\\/WEB-Content >x<\\/web-contentz");
        assert!(matches!(super::unclosable("no tag <web-content>"), std::borrow::Cow::Borrowed(_)));
        assert_eq!(super::unclosable("é</web-content"), "é<\\/web-content");
    }
}
