//! What a snippet's fields may be, checked and put in their stored form before anything is
//! written: names trimmed, tags and languages lower-cased, every limit enforced with a
//! message that says what to send instead. Never echoes a huge input back.

use super::store::{MAX_CODE_BYTES, MAX_DESCRIPTION_CHARS, MAX_LABEL_CHARS, MAX_NAME_CHARS, MAX_TAGS, SnippetError};

/// A snippet's name, trimmed: 1 to [`MAX_NAME_CHARS`] characters on one line.
pub(crate) fn name(raw: &str) -> Result<String, SnippetError> {
    let name = raw.trim();
    if name.is_empty() {
        return Err(SnippetError::Invalid(format!(
            "the snippet name is empty: give a short name such as `retry-with-backoff` (1 to {MAX_NAME_CHARS} \
             characters, one line)"
        )));
    }
    let chars = name.chars().count();
    if chars > MAX_NAME_CHARS {
        return Err(SnippetError::Invalid(format!(
            "the snippet name is {chars} characters long, over the limit of {MAX_NAME_CHARS}: use a short name \
             and put the rest in `description`"
        )));
    }
    if name.chars().any(char::is_control) {
        return Err(SnippetError::Invalid(
            "the snippet name contains a line break or another control character: use one line of plain text"
                .to_string(),
        ));
    }
    Ok(name.to_string())
}

/// The code: not empty (blank counts as empty) and at most [`MAX_CODE_BYTES`] bytes.
pub(crate) fn code(code: &str) -> Result<(), SnippetError> {
    if code.trim().is_empty() {
        return Err(SnippetError::Invalid("`code` is empty: give the code to save".to_string()));
    }
    if code.len() > MAX_CODE_BYTES {
        return Err(SnippetError::Invalid(format!(
            "`code` is {} bytes, over the limit of {MAX_CODE_BYTES} bytes (1 MiB) per snippet: save the part \
             worth reusing, or keep a file that large in the repository instead",
            code.len()
        )));
    }
    Ok(())
}

/// The description, trimmed (empty when absent): at most [`MAX_DESCRIPTION_CHARS`].
pub(crate) fn description(raw: Option<&str>) -> Result<String, SnippetError> {
    let text = raw.unwrap_or_default().trim();
    let chars = text.chars().count();
    if chars > MAX_DESCRIPTION_CHARS {
        return Err(SnippetError::Invalid(format!(
            "`description` is {chars} characters long, over the limit of {MAX_DESCRIPTION_CHARS}: say in a \
             sentence or two what the snippet does and when to use it"
        )));
    }
    Ok(text.to_string())
}

/// A language as stored and matched: lower-case, one word (`rust`, `python`, `c++`); `None`
/// for an absent or blank one.
pub(crate) fn language(raw: Option<&str>) -> Result<Option<String>, SnippetError> {
    let Some(text) = raw.map(str::trim).filter(|t| !t.is_empty()) else { return Ok(None) };
    label(text, "language", "`rust`, `python`, `sql`").map(Some)
}

/// Tags as stored and matched: lower-case words without a leading `#`, each once, sorted; at
/// most [`MAX_TAGS`].
pub(crate) fn tags(raw: Option<&[String]>) -> Result<Vec<String>, SnippetError> {
    let mut tags = Vec::new();
    for tag in raw.unwrap_or_default() {
        let text = tag.trim().trim_start_matches('#');
        if text.is_empty() {
            continue;
        }
        tags.push(label(text, "tag", "`http`, `retry`, `error-handling`")?);
    }
    tags.sort();
    tags.dedup();
    if tags.len() > MAX_TAGS {
        return Err(SnippetError::Invalid(format!(
            "{} tags given; a snippet may have at most {MAX_TAGS}: keep the ones you would search by",
            tags.len()
        )));
    }
    Ok(tags)
}

/// One lower-cased word of at most [`MAX_LABEL_CHARS`] characters, without spaces, commas or
/// control characters.
fn label(text: &str, what: &str, examples: &str) -> Result<String, SnippetError> {
    let shown: String = text.chars().take(MAX_LABEL_CHARS).collect();
    if text.chars().count() > MAX_LABEL_CHARS {
        return Err(SnippetError::Invalid(format!(
            "the {what} `{shown}…` is too long: at most {MAX_LABEL_CHARS} characters, one word such as {examples}"
        )));
    }
    if text.chars().any(|c| c.is_whitespace() || c.is_control() || c == ',') {
        return Err(SnippetError::Invalid(format!(
            "the {what} `{}` has a space or comma in it: each {what} is one word such as {examples} (use `-` \
             between words; give several tags as a list)",
            shown.escape_debug()
        )));
    }
    Ok(text.to_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_trimmed_and_bounded() {
        assert_eq!(name("  retry loop ").unwrap(), "retry loop");
        for bad in ["", "   ", "two\nlines", &"n".repeat(MAX_NAME_CHARS + 1)] {
            assert!(name(bad).is_err(), "{bad:?}");
        }
        assert!(name(&"é".repeat(MAX_NAME_CHARS)).is_ok(), "characters, not bytes");
        let e = name(&"n".repeat(200)).unwrap_err().to_string();
        assert!(e.starts_with("the snippet name is 200 characters long, over the limit of 128"), "{e}");
    }

    #[test]
    fn code_is_bounded_without_being_echoed() {
        assert!(code("x").is_ok());
        assert!(code(" \n").is_err());
        let huge = "y".repeat(MAX_CODE_BYTES + 1);
        let e = code(&huge).unwrap_err().to_string();
        assert!(e.starts_with("`code` is 1048577 bytes, over the limit of 1048576 bytes"), "{e}");
        assert!(e.len() < 300, "the code is not repeated back");
    }

    #[test]
    fn tags_and_languages_are_words() {
        let given = ["Rust".to_string(), "#http".to_string(), "rust".to_string(), " ".to_string()];
        assert_eq!(tags(Some(&given)).unwrap(), ["http", "rust"]);
        assert!(tags(Some(&["two words".to_string()])).is_err());
        assert!(tags(Some(&["a,b".to_string()])).is_err());
        let many: Vec<String> = (0..=MAX_TAGS).map(|i| format!("t{i}")).collect();
        assert!(tags(Some(&many)).is_err());
        assert_eq!(language(Some(" Python ")).unwrap().as_deref(), Some("python"));
        assert_eq!(language(Some("C++")).unwrap().as_deref(), Some("c++"));
        assert_eq!(language(Some("")).unwrap(), None);
        assert!(language(Some("shell script")).is_err());
        let e = language(Some(&"x".repeat(500))).unwrap_err().to_string();
        assert!(e.len() < 200, "{e}");
    }
}
