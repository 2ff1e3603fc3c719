//! Positions: editors (and the model) count lines and characters from 1; LSP counts from 0,
//! with characters in UTF-16 code units.

use lsp_types::Position;

/// The LSP position of 1-based `line` and `character` (Unicode characters) in `text`. A
/// line past the end is an error naming how many lines there are; a character past the end
/// of its line is the line's end.
pub fn to_lsp(text: &str, line: u32, character: u32) -> Result<Position, String> {
    let lines = text.split('\n').count();
    let index = line.checked_sub(1).ok_or("`line` starts at 1")? as usize;
    let Some(content) = text.split('\n').nth(index) else {
        return Err(format!("line {line} is past the end of the file ({lines} lines)"));
    };
    let content = content.strip_suffix('\r').unwrap_or(content);
    let units: usize = content.chars().take(character.saturating_sub(1) as usize).map(char::len_utf16).sum();
    Ok(Position::new(index as u32, u32::try_from(units).unwrap_or(u32::MAX)))
}

/// The 1-based line and character of an LSP position in `text` (None when unknown: the
/// position's line is given, the character counted in UTF-16 units as is).
pub fn from_lsp(text: Option<&str>, position: Position) -> (u32, u32) {
    let line = position.line.saturating_add(1);
    let Some(content) = text.and_then(|t| t.split('\n').nth(position.line as usize)) else {
        return (line, position.character.saturating_add(1));
    };
    let mut units = 0;
    let mut chars = 0;
    for c in content.chars() {
        if units >= position.character as usize {
            break;
        }
        units += c.len_utf16();
        chars += 1;
    }
    (line, chars + 1)
}

/// Line `line` (0-based) of `text`, trimmed, shortened to `max` characters.
pub fn line_text(text: &str, line: u32, max: usize) -> Option<String> {
    let content = text.split('\n').nth(line as usize)?.trim();
    Some(if content.chars().count() > max {
        format!("{}…", content.chars().take(max).collect::<String>())
    } else {
        content.to_owned()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn characters_beyond_the_basic_plane_count_twice_for_lsp() {
        let text = "first\nlet s = \"😀\"; x\r\nlast";
        let p = to_lsp(text, 2, 15).unwrap();
        // "let s = \"😀\"; " is 14 characters, 15 UTF-16 units.
        assert_eq!(p, Position::new(1, 15));
        assert_eq!(from_lsp(Some(text), p), (2, 15));
        assert!(to_lsp(text, 9, 1).unwrap_err().contains("3 lines"));
        assert_eq!(to_lsp(text, 1, 100).unwrap(), Position::new(0, 5));
        assert_eq!(line_text(text, 1, 5).as_deref(), Some("let s…"));
    }
}
