//! The terminal's letter menus: the decisions toolbelt itself puts to the person — a call's
//! permission (`approve.rs`), a plan's approval and a skill's grant (`ask.rs`) — are shown and
//! read one way, with the same letters ([`toolbelt_core::keys`]): `y` yes, `s` for this
//! session, `a` always, `e` every edit too, `n` no (then, if they like, why, for the model).
//! A model's own questions, whose choices can be anything, are numbered menus instead.

use std::fs::File;
use std::io::{BufRead as _, BufReader, Write as _};

use toolbelt_core::keys;

/// The words taken for a letter besides the letter itself.
const WORDS: [(&str, char); 5] = [
    ("yes", keys::YES),
    ("session", keys::SESSION),
    ("always", keys::ALWAYS),
    ("edits", keys::EDITS),
    ("no", keys::NO),
];

/// What a person may add after answering no.
pub const WHY: &str = "tell the model why (optional): ";

/// The lines of a menu: `  y  Allow once`, one per choice.
pub fn lines(choices: &[(char, String)]) -> String {
    choices.iter().map(|(key, text)| format!("  {key}  {text}\n")).collect()
}

/// Asks for one of `keys` until one comes: the letter, or its word (`yes`, `no`…), in any
/// case. `None` when the terminal closed first.
pub fn read(tty: &mut File, reader: &mut BufReader<File>, keys: &[char]) -> std::io::Result<Option<char>> {
    let choices: Vec<String> = keys.iter().map(char::to_string).collect();
    let choices = choices.join("/");
    loop {
        // One write: a terminal (or a program answering it) sees the whole prompt at once.
        tty.write_all(format!("choice [{choices}]: ").as_bytes())?;
        tty.flush()?;
        let mut answer = String::new();
        if reader.read_line(&mut answer)? == 0 {
            return Ok(None);
        }
        let answer = answer.trim().to_lowercase();
        let key = match answer.chars().collect::<Vec<_>>().as_slice() {
            [one] => Some(*one),
            _ => WORDS.iter().find(|(word, _)| *word == answer).map(|(_, key)| *key),
        };
        match key.filter(|k| keys.contains(k)) {
            Some(key) => return Ok(Some(key)),
            None => tty.write_all(format!("please answer one of {choices}\n").as_bytes())?,
        }
    }
}

/// After a no: the person's reason, if they give one.
pub fn why(tty: &mut File, reader: &mut BufReader<File>) -> std::io::Result<Option<String>> {
    write!(tty, "{WHY}")?;
    tty.flush()?;
    let mut why = String::new();
    reader.read_line(&mut why)?;
    Ok(Some(why.trim().to_string()).filter(|w| !w.is_empty()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_menu_is_a_letter_and_a_label_a_line() {
        let menu = lines(&[('y', "Allow once".into()), ('n', "Deny".into())]);
        assert_eq!(menu, "  y  Allow once\n  n  Deny\n");
    }
}
