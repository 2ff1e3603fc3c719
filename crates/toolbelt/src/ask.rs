//! The person at the terminal, for tools that ask (`AskUserQuestion`, a plan to approve) and
//! tell (`Brief`).
//!
//! Questions go to the controlling terminal (`/dev/tty`), like the permission prompt, so they
//! work inside pipelines: a model's questions as numbered menus — several choices separated
//! by commas, an answer of one's own typed in, `0` to decline —, and toolbelt's own decisions
//! (a plan's approval, a skill's grant) with the permission prompt's letters (`keys.rs`). Messages go to stderr, where the CLI's progress
//! goes. With no terminal, under CI, or in `toolbelt batch` (which runs unattended), nobody is
//! asked: questions fail, saying so.

use std::fs::File;
use std::io::{BufRead as _, BufReader, Write as _};
use std::sync::{Arc, Mutex, PoisonError};

use toolbelt_core::{Answer, AskError, AskRequest, Asker, BoxFuture, Question, SessionState, Tone};

use crate::keys;

/// Tries of a question before it counts as unanswered.
const TRIES: usize = 5;

/// The CLI's person: questions at the terminal when there is one to ask at, messages on
/// stderr.
pub struct CliPeople {
    tty: Option<Arc<Mutex<File>>>,
    /// Why nobody is asked, when `tty` is `None`.
    why_not: String,
}

impl CliPeople {
    /// The terminal, when there is one, this is not a CI run, and `unattended` is false.
    pub fn open(unattended: bool) -> Self {
        let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0");
        let why_not = if unattended {
            "`toolbelt batch` runs unattended".to_string()
        } else if ci {
            "a CI run has no one at the terminal".to_string()
        } else {
            "there is no terminal to ask at".to_string()
        };
        let tty = (!unattended && !ci)
            .then(|| std::fs::OpenOptions::new().read(true).write(true).open("/dev/tty").ok())
            .flatten()
            .map(|f| Arc::new(Mutex::new(f)));
        Self { tty, why_not }
    }
}

impl Asker for CliPeople {
    fn ask<'a>(
        &'a self,
        session: &'a SessionState,
        request: &'a AskRequest,
    ) -> BoxFuture<'a, Result<Vec<Answer>, AskError>> {
        // A sub-agent's question says which agent asks (see `approve.rs`).
        let agent = toolbelt_agent::SubAgent::of(session).map(|a| a.label());
        Box::pin(async move {
            let Some(tty) = &self.tty else { return Err(AskError::Nobody(self.why_not.clone())) };
            let (tty, request) = (Arc::clone(tty), request.clone());
            // Blocking reads, on a thread that may block; the lock keeps questions whole.
            tokio::task::spawn_blocking(move || {
                let mut tty = tty.lock().unwrap_or_else(PoisonError::into_inner);
                if let Some(agent) = &agent {
                    write!(tty, "\n{agent} asks:")
                        .map_err(|e| AskError::Failed(format!("the terminal failed ({e})")))?;
                }
                ask_at(&mut tty, &request)
            })
            .await
            .map_err(|e| AskError::Failed(e.to_string()))?
        })
    }

    fn tell<'a>(&'a self, _: &'a SessionState, message: &'a str, tone: Tone) -> BoxFuture<'a, bool> {
        let mark = match tone {
            Tone::Info => "▸",
            Tone::Warning => "!",
            Tone::Error => "✗",
        };
        let mut err = std::io::stderr().lock();
        let shown = writeln!(err, "{mark} {}", message.trim_end().replace('\n', "\n  ")).is_ok();
        Box::pin(async move { shown })
    }
}

/// Asks `request` on `tty`, question by question.
fn ask_at(tty: &mut File, request: &AskRequest) -> Result<Vec<Answer>, AskError> {
    let io = |e: std::io::Error| AskError::Failed(format!("the terminal failed ({e})"));
    let mut reader = BufReader::new(tty.try_clone().map_err(io)?);
    if let Some(intro) = &request.intro {
        writeln!(tty, "\n{}\n", intro.trim_end()).map_err(io)?;
    }
    let mut answers = Vec::with_capacity(request.questions.len());
    for q in &request.questions {
        answers.push(one(tty, &mut reader, q)?);
    }
    Ok(answers)
}

fn one(tty: &mut File, reader: &mut BufReader<File>, q: &Question) -> Result<Answer, AskError> {
    let io = |e: std::io::Error| AskError::Failed(format!("the terminal failed ({e})"));
    let letters: Option<Vec<char>> = q.options.iter().map(|o| o.key).collect();
    if let Some(letters) = letters.filter(|l| !l.is_empty() && !q.multi_select) {
        return keyed(tty, reader, q, &letters).map_err(io)?.ok_or(AskError::Cancelled);
    }
    let other = q.options.len() + 1;
    let mut menu = format!("\n[{}] {}\n", q.header, q.question);
    for (i, o) in q.options.iter().enumerate() {
        menu.push_str(&format!("  {}. {} — {}\n", i + 1, o.label, o.description));
    }
    menu.push_str(&format!("  {other}. Other: type your own answer\n"));
    let ask = if q.multi_select {
        format!("Pick one or more, separated by commas (1-{other}), or 0 to decline: ")
    } else {
        format!("Pick one (1-{other}), or 0 to decline: ")
    };
    write!(tty, "{menu}").map_err(io)?;
    for _ in 0..TRIES {
        write!(tty, "{ask}").map_err(io)?;
        tty.flush().map_err(io)?;
        let line = read_line(reader)?;
        let line = line.trim();
        if line == "0" {
            return Err(AskError::Declined);
        }
        if line.is_empty() {
            continue;
        }
        match picks(line, other, q.multi_select) {
            Some(numbers) => {
                let selected: Vec<String> =
                    numbers.iter().filter(|n| **n < other).map(|n| q.options[n - 1].label.clone()).collect();
                let own = if numbers.contains(&other) {
                    write!(tty, "Your answer: ").map_err(io)?;
                    tty.flush().map_err(io)?;
                    Some(read_line(reader)?.trim().to_string()).filter(|s| !s.is_empty())
                } else {
                    None
                };
                if selected.is_empty() && own.is_none() {
                    continue;
                }
                return Ok(Answer { question: q.question.clone(), selected, other: own });
            }
            // Words, not numbers: the person's own answer.
            None if !line.chars().all(|c| c.is_ascii_digit() || c == ',' || c.is_whitespace()) => {
                return Ok(Answer {
                    question: q.question.clone(),
                    selected: Vec::new(),
                    other: Some(line.to_string()),
                });
            }
            None => writeln!(tty, "  (not a choice: pick from 1 to {other})").map_err(io)?,
        }
    }
    Err(AskError::Failed(format!("no valid answer to \"{}\" after {TRIES} tries", q.question)))
}

/// A decision of toolbelt's own (a plan's approval), asked with letters as a permission is
/// (`keys.rs`); the letter `n` lets the person say why, which becomes their own words.
/// `None` when the terminal closed before an answer.
fn keyed(
    tty: &mut File,
    reader: &mut BufReader<File>,
    q: &Question,
    letters: &[char],
) -> std::io::Result<Option<Answer>> {
    let choices: Vec<(char, String)> =
        q.options.iter().filter_map(|o| o.key.map(|key| (key, format!("{} — {}", o.label, o.description)))).collect();
    write!(tty, "\n[{}] {}\n{}", q.header, q.question, keys::lines(&choices))?;
    let Some(key) = keys::read(tty, reader, letters)? else { return Ok(None) };
    let other = if key == toolbelt_core::keys::NO { keys::why(tty, reader)? } else { None };
    let selected = q.options.iter().filter(|o| o.key == Some(key)).map(|o| o.label.clone()).collect();
    Ok(Some(Answer { question: q.question.clone(), selected, other }))
}

/// The choice numbers in `line`, in order and without repeats, when every one is a choice
/// (and only one, unless `multi`).
fn picks(line: &str, choices: usize, multi: bool) -> Option<Vec<usize>> {
    let mut numbers: Vec<usize> = Vec::new();
    for word in line.split(|c: char| c == ',' || c.is_whitespace()).filter(|w| !w.is_empty()) {
        let n: usize = word.parse().ok()?;
        if n == 0 || n > choices {
            return None;
        }
        if !numbers.contains(&n) {
            numbers.push(n);
        }
    }
    if numbers.is_empty() || (!multi && numbers.len() > 1) {
        return None;
    }
    numbers.sort_unstable();
    Some(numbers)
}

fn read_line(reader: &mut BufReader<File>) -> Result<String, AskError> {
    let mut line = String::new();
    match reader.read_line(&mut line) {
        Ok(0) => Err(AskError::Cancelled),
        Ok(_) => Ok(line),
        Err(e) => Err(AskError::Failed(format!("the terminal failed ({e})"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_are_choices_only() {
        assert_eq!(picks("2", 3, false), Some(vec![2]));
        assert_eq!(picks("3, 1 3", 3, true), Some(vec![1, 3]));
        assert_eq!(picks("1,2", 3, false), None, "one choice where only one may be picked");
        assert_eq!(picks("4", 3, true), None);
        assert_eq!(picks("yes", 3, true), None);
    }
}
