//! What typing into a session is judged as.
//!
//! * A line typed into **bash** is a command line, judged as `Bash` judges one (the deny
//!   lists, `Bash(…)` rules, the read-only classifier, the files it names, from the shell's
//!   own working directory). Bash runs a command once it is whole, which may take several
//!   lines (an open quote, a trailing `\`, `if … fi`): each line is judged alone and with the
//!   unfinished lines before it, so a command split across lines or calls is seen whole.
//!   Keys that end no line run nothing, so they wait to be judged with the line they end up
//!   in. Once a line not proven read-only was sent, the live shell may have been changed by
//!   it (an alias, a function), so no later line of the session is read from its text alone.
//! * A line typed into an **interpreter** (`python`, `node`, `psql`…) is judged as that
//!   interpreter running it.
//! * Keys typed into **any other program** (an editor, a pager, a menu, another shell) can
//!   make it do anything it can do: what runs cannot be read from them, so they are judged as
//!   its command run again, and the rules about commands ask rather than match.
//!
//! Whatever the reader, the lines typed are also judged as shell lines, since keys typed
//! ahead reach whichever program reads next (a shell, once the program ends).
//!
//! What bash would run differently from the text is refused rather than guessed: editing
//! keys of its line editor (any control key but Enter, Ctrl-C and Ctrl-D on an empty line),
//! history expansion (`!!`, `^a^b`, `fc`), and commands that change how later keys are read or
//! what runs at the prompt (`bind`, `stty`, `trap`, `PROMPT_COMMAND`…). Through a pipe, bytes
//! are read as they are: only a line feed ends a line, and nothing edits one.

use toolbelt_core::{Access, ToolContext, ToolError};

use crate::shell::support::judge;

/// How typed text is read by the program receiving it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reader {
    /// Bash: each line is a command line.
    Shell,
    /// An interpreter (by its base name): each line is code it runs.
    Interpreter(&'static str),
    /// Any other program: keys whose effect only it knows.
    Program,
}

/// Interpreters, whose lines are code, by the base name of their executable.
const INTERPRETERS: &[&str] = &[
    "python",
    "ipython",
    "node",
    "deno",
    "bun",
    "irb",
    "ruby",
    "perl",
    "php",
    "lua",
    "luajit",
    "R",
    "julia",
    "ghci",
    "psql",
    "mysql",
    "mariadb",
    "sqlite",
    "redis-cli",
    "mongosh",
    "sqlcmd",
    "bc",
    "scala",
    "clojure",
    "elixir",
    "iex",
    "erl",
    "ocaml",
    "guile",
    "racket",
    "sbcl",
    "jshell",
    "swift",
    "tclsh",
];

/// Words refused in a line typed into bash: they change how later keys are read or what runs
/// at the prompt, or run lines from the history.
const STATE_WORDS: &[&str] =
    &["bind", "stty", "trap", "enable", "fc", "histchars", "PROMPT_COMMAND", "PS0", "PS1", "PS2", "PS4", "INPUTRC"];

/// The most typed in one call, and the most lines.
const MAX_TYPED: usize = 64 * 1024;
const MAX_LINES: usize = 500;

/// The longest unfinished command kept for judging.
const MAX_UNFINISHED: usize = 64 * 1024;

/// How a program whose executable is named `name` (`bash`, `python3.12`, `sqlite3`) reads
/// its input; `system`: whether the executable is one of the system's (under `/usr` or
/// `/bin`), without which nothing counts as bash.
pub fn reader_of(name: &str, system: bool) -> Reader {
    let name = name.rsplit('/').next().unwrap_or(name).trim_start_matches('-');
    // `python3.12` is `python`, `sqlite3` is `sqlite`.
    let base = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    if system && (name == "bash" || base == "bash") {
        return Reader::Shell;
    }
    match INTERPRETERS.iter().find(|i| **i == name || **i == base) {
        Some(interpreter) => Reader::Interpreter(interpreter),
        None => Reader::Program,
    }
}

/// What has been typed into a session and not yet run.
#[derive(Debug, Clone, Default)]
pub struct Typist {
    /// The line being typed.
    line: String,
    /// The lines of a command bash has not run yet.
    unfinished: Vec<String>,
    /// Whether a line not proven read-only reached the shell, which may have changed it.
    pub tainted: bool,
    /// Whether a write was cut short: part of it may have reached the program, so what is
    /// typed there is not known.
    pub poisoned: bool,
}

impl Typist {
    /// This state, marked as not known once a write starts (until it is whole).
    pub fn writing(&self) -> Typist {
        Typist { poisoned: true, ..self.clone() }
    }

    /// A session's first state: tainted unless its command is a plain shell (`bash`,
    /// `bash --norc`) or proven read-only.
    pub fn for_command(command: &str) -> Typist {
        let mut words = command.split_whitespace();
        let plain = words.next().is_some_and(|w| w == "bash" || w == "/bin/bash" || w == "/usr/bin/bash")
            && words.all(|w| matches!(w, "--norc" | "--noprofile" | "-i" | "-l" | "--login" | "--posix"));
        Typist { tainted: !plain && !toolbelt_command::is_read_only(command), ..Typist::default() }
    }
}

/// How bytes reach the reader: through a terminal to bash's line editor, or raw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Keys {
    /// Bash in a terminal: Enter ends a line, Ctrl-C drops the command, other keys edit.
    LineEditor,
    /// A pipe: a line feed ends a line, every other byte is part of it.
    Raw,
    /// A terminal to another program: what lines its keys make, approximately (for the shell
    /// reading of keys typed ahead).
    Loose,
}

/// Takes `typed` in; returns the commands it ended (each line, with the unfinished lines
/// before it), or the key bash would not read as text.
fn feed(typist: &mut Typist, typed: &str, keys: Keys) -> Result<Vec<(String, String)>, char> {
    let mut ended = Vec::new();
    for c in typed.chars() {
        match (c, keys) {
            ('\n', _) | ('\r', Keys::LineEditor | Keys::Loose) => {
                let line = std::mem::take(&mut typist.line);
                let before = typist.unfinished.join("\n");
                let whole = if before.is_empty() { line.clone() } else { format!("{before}\n{line}") };
                if keys != Keys::LineEditor || is_whole(&whole) {
                    typist.unfinished.clear();
                } else {
                    typist.unfinished.push(line.clone());
                }
                ended.push((line, before));
            }
            ('\u{3}', Keys::LineEditor | Keys::Loose) => {
                typist.line.clear();
                typist.unfinished.clear();
            }
            ('\u{4}', Keys::LineEditor) if typist.line.is_empty() && typist.unfinished.is_empty() => {}
            (c, Keys::LineEditor) if c.is_control() => return Err(c),
            (c, Keys::Loose) if c.is_control() => {}
            (c, _) => typist.line.push(c),
        }
        if typist.line.len() + typist.unfinished.iter().map(String::len).sum::<usize>() > MAX_UNFINISHED {
            return Err('\u{0}');
        }
    }
    Ok(ended)
}

/// Whether bash would run `text` now: it parses whole and does not end in a line
/// continuation. (A line with a syntax error runs nothing either; it is judged alone and
/// again with the lines after it.)
fn is_whole(text: &str) -> bool {
    let continued = text.ends_with('\\') && !text.ends_with("\\\\");
    !continued && toolbelt_command::script::parse_script(text).complete
}

/// Why bash would run something other than `line`, if it would: history expansion, or a
/// word that changes how later keys are read or what runs at the prompt.
fn runs_other_text(line: &str) -> Option<String> {
    let chars: Vec<char> = line.chars().collect();
    let bang = chars
        .iter()
        .enumerate()
        .any(|(i, &c)| c == '!' && chars.get(i + 1).is_some_and(|n| !(n.is_whitespace() || matches!(n, '=' | '('))));
    if bang || line.trim_start().starts_with('^') {
        return Some("asks for history expansion (`!…`, `^…^`), which runs a line that is not the text typed".into());
    }
    let word = line
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .find(|w| STATE_WORDS.contains(w) || w.starts_with("HIST"))?;
    Some(format!(
        "uses `{word}`, which changes how bash reads later keys or what it runs at its prompt; run it as a Bash call \
         of its own"
    ))
}

/// Everything a judgement of typing needs to know of the session.
#[derive(Debug, Clone, Copy)]
pub struct Typing<'a> {
    /// How the program reading it reads input.
    pub reader: Reader,
    /// That program, as shown.
    pub program: &'a str,
    /// The session's command line.
    pub command: &'a str,
    /// Whether the session has a terminal.
    pub terminal: bool,
    /// Whether the input is closed after the keys (a pipe's end of file ends the line).
    pub closing: bool,
}

/// What typing `typed` touches, and what is typed and not yet run after it.
pub fn judge(at: Typing<'_>, typist: &Typist, typed: &str, cx: &ToolContext) -> Result<(Access, Typist), ToolError> {
    let mut after = typist.clone();
    if typed.is_empty() && !at.closing {
        return Ok((Access::shared(), after));
    }
    if typed.len() > MAX_TYPED || typed.matches(['\n', '\r']).count() > MAX_LINES {
        return Err(ToolError::failed(format!(
            "too much to type at once (at most {} KiB and {MAX_LINES} lines a call): type it in parts, or write it \
             to a file with Write and run that",
            MAX_TYPED / 1024
        )));
    }
    if after.poisoned {
        if !(at.terminal && at.reader == Reader::Shell && typed.starts_with('\u{3}')) {
            return Err(ToolError::failed(
                "an earlier write to this session was cut short, so what the program has been typed is not known; \
                 in a terminal, start with \"\\u0003\" (Ctrl-C) to drop it, or end the session with TaskStop",
            ));
        }
        after = Typist { tainted: true, ..Typist::default() };
    }
    let keys = match (at.terminal, at.reader) {
        (false, _) => Keys::Raw,
        (true, Reader::Shell) => Keys::LineEditor,
        (true, _) => Keys::Loose,
    };
    let mut ended = feed(&mut after, typed, keys).map_err(|key| refused_key(at.program, key))?;
    if at.closing && !at.terminal && !after.line.is_empty() {
        // End of file hands the last line over as it is.
        ended.push((std::mem::take(&mut after.line), after.unfinished.join("\n")));
        after.unfinished.clear();
    }
    let mut access = match at.reader {
        Reader::Shell => None,
        Reader::Interpreter(name) => {
            let code: Vec<&str> = ended.iter().map(|(l, _)| l.as_str()).chain([after.line.as_str()]).collect();
            let judged = format!("{name} <<'TOOLBELT_TYPED'\n{}\nTOOLBELT_TYPED", code.join("\n"));
            Some(judge::bash_command(&judged, cx)?.0)
        }
        Reader::Program => {
            let why = format!("keys typed into `{}` do what that program makes of them", at.program);
            Some(judge::bash_command(at.command, cx)?.0.opaque(why))
        }
    };
    for (line, before) in &ended {
        if at.reader == Reader::Shell
            && let Some(why) = runs_other_text(line)
        {
            return Err(ToolError::failed(format!(
                "refused: `{}` {why}. Type the command itself.",
                crate::process::capture::one_line(line, 120)
            )));
        }
        let mut texts = vec![line.clone()];
        if !before.is_empty() {
            texts.push(format!("{before}\n{line}"));
        }
        for text in texts.iter().filter(|t| !t.trim().is_empty()) {
            let one = judge::bash_command(text, cx)?.0;
            access = Some(match access {
                None => one,
                Some(so_far) => merge(so_far, one),
            });
        }
    }
    let Some(mut access) = access else {
        // Nothing runs until a line ends.
        return Ok((Access::shared(), after));
    };
    if at.reader == Reader::Shell && typist.tainted {
        access = access.opaque(format!(
            "`{}` was given a line earlier in this session that is not proven read-only, which may have changed \
             what later lines run (an alias, a function)",
            at.program
        ));
    }
    if !access.is_shared() {
        after.tainted = true;
    }
    Ok((access, after))
}

/// The refusal of a key bash's line editor would not read as text.
fn refused_key(program: &str, key: char) -> ToolError {
    if key == '\u{0}' {
        return ToolError::failed(format!(
            "the command typed into `{program}` and not yet run is over {} KiB, too long to judge; send \"\\u0003\" \
             (Ctrl-C) to drop it and type a shorter one",
            MAX_UNFINISHED / 1024
        ));
    }
    ToolError::failed(format!(
        "refused: {:?} is an editing key of `{program}`'s line editor (arrows, Tab, Escape, Backspace, Ctrl \
         combinations other than Ctrl-C), so the line it runs cannot be read from the text. Type the whole line \
         as text, ending with \"\\n\" (\"\\u0003\" first drops what is typed so far).",
        key
    ))
}

/// One access for two judgements: every touch of both, exclusive when either is.
fn merge(mut a: Access, b: Access) -> Access {
    if !b.is_shared() {
        a.concurrency = b.concurrency;
    }
    a.touches.extend(b.touches);
    a.approval = a.approval.or(b.approval);
    a.reaches = a.reaches.or(b.reaches);
    a.context = a.context.or(b.context);
    a.unproven = a.unproven.or(b.unproven);
    a.opaque = a.opaque.or(b.opaque);
    a
}

#[cfg(test)]
mod tests;
