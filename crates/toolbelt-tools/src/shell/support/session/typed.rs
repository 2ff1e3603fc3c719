//! What typing into a session is judged as.
//!
//! * A line typed into a **shell** is a command line, judged as `Bash` judges one (the deny
//!   lists, `Bash(…)` rules, the read-only classifier, the files it names). A shell runs a
//!   command once it is whole, which may take several lines (an open quote, a trailing `\`,
//!   `if … fi`): each line is judged alone and with the unfinished lines before it, so a
//!   command split across lines or calls is seen whole. Once a line the classifier cannot
//!   prove read-only was sent, the live shell may have been changed by it (an alias, a
//!   function, `PATH`), so no later line of the session counts as read-only.
//! * A line typed into an **interpreter** (`python`, `node`, `psql`…) is judged as that
//!   interpreter running it.
//! * Keys typed into **any other program** (an editor, a pager, a menu) can make it do
//!   anything it can do, so they are judged as running its command again, never as a read.
//! * Keys that end no line run nothing in a shell or an interpreter, so they are kept and
//!   judged with the line they end up in.
//!
//! What text cannot show, refused in a shell rather than guessed: line editing (cursor keys,
//! Tab completion, key bindings) and history expansion (`!!`, `!curl`, `^old^new`) make the
//! shell run a line that is not the text typed.

use toolbelt_core::{Access, ToolContext, ToolError};

use crate::shell::support::judge;

/// How typed text is read by the program receiving it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reader {
    /// A shell: each line is a command line.
    Shell,
    /// An interpreter: each line is code it runs.
    Interpreter,
    /// Any other program: keys whose effect only it knows.
    Program,
}

/// Shells, whose lines are command lines.
const SHELLS: &[&str] = &["bash", "sh", "dash", "zsh", "ksh", "mksh", "ash", "fish", "busybox"];

/// Interpreters, whose lines are code.
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

/// The longest unfinished command kept for judging; past it, typing into the shell is refused
/// until Ctrl-C drops it.
const MAX_UNFINISHED: usize = 64 * 1024;

/// How `program` (a name, a path, `python3.12`, `-bash`) reads its input.
pub fn reader_of(program: &str) -> Reader {
    let name = program.rsplit('/').next().unwrap_or(program).trim_start_matches('-');
    // `python3.12` is `python`, `sqlite3` is `sqlite`.
    let base = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    let base = if base.is_empty() { name } else { base };
    if SHELLS.contains(&name) || SHELLS.contains(&base) {
        Reader::Shell
    } else if INTERPRETERS.contains(&name) || INTERPRETERS.contains(&base) {
        Reader::Interpreter
    } else {
        Reader::Program
    }
}

/// What has been typed into a session and not yet run: the line being typed, and (in a
/// shell) the lines of a command not yet whole.
#[derive(Debug, Clone, Default)]
pub struct Typist {
    /// The line being typed.
    line: String,
    /// Whether it (or the unfinished command) was typed with an editing key.
    edited: bool,
    /// The lines of a shell command not yet whole.
    unfinished: Vec<String>,
    /// Whether a line that is not proven read-only was sent to the shell.
    pub tainted: bool,
}

/// A line that ended, with the unfinished command it continues (empty when none).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Ended {
    line: String,
    before: String,
    edited: bool,
}

impl Typist {
    /// Takes `typed` in; returns the lines it ended.
    fn feed(&mut self, typed: &str, shell: bool) -> Vec<Ended> {
        let mut ended = Vec::new();
        for c in typed.chars() {
            match c {
                '\r' | '\n' => {
                    let line = std::mem::take(&mut self.line);
                    let before = self.unfinished.join("\n");
                    let whole = if before.is_empty() { line.clone() } else { format!("{before}\n{line}") };
                    ended.push(Ended { line: line.clone(), before, edited: self.edited });
                    if !shell || is_whole(&whole) {
                        self.unfinished.clear();
                        self.edited = false;
                    } else {
                        self.unfinished.push(line);
                    }
                }
                // Ctrl-C drops the command being typed, Ctrl-U the line.
                '\u{3}' => {
                    self.line.clear();
                    self.unfinished.clear();
                    self.edited = false;
                }
                '\u{15}' => self.line.clear(),
                '\u{7f}' | '\u{8}' => {
                    self.line.pop();
                }
                // Ctrl-D sends nothing new to run.
                '\u{4}' => {}
                // In an interpreter a tab indents; in a shell it completes.
                '\t' if !shell => self.line.push(c),
                c if c.is_control() => self.edited = true,
                c => self.line.push(c),
            }
        }
        ended
    }

    /// The length of what is kept.
    fn kept(&self) -> usize {
        self.line.len() + self.unfinished.iter().map(|l| l.len() + 1).sum::<usize>()
    }
}

/// Whether a shell would run `text` now: it parses whole and does not end in a line
/// continuation. (A line with a syntax error runs nothing either; it is judged alone and
/// again with the lines after it.)
fn is_whole(text: &str) -> bool {
    let continued = text.ends_with('\\') && !text.ends_with("\\\\");
    !continued && toolbelt_command::script::parse_script(text).complete
}

/// Whether `line` asks the shell for history expansion (`!!`, `!-2`, `!curl`, `^a^b`), outside
/// single quotes: the shell would run a line that is not this text.
fn expands_history(line: &str) -> bool {
    if line.trim_start().starts_with('^') {
        return true;
    }
    let mut quoted = false;
    let chars: Vec<char> = line.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        match c {
            '\'' => quoted = !quoted,
            '!' if !quoted => match chars.get(i + 1) {
                None => {}
                Some(next) if next.is_whitespace() || matches!(next, '=' | '(') => {}
                Some(_) => return true,
            },
            _ => {}
        }
    }
    false
}

/// What typing `typed` into a session whose reader is `reader` touches (`program` being what
/// runs there, `command` the session's command line, `typist` what was typed before), and
/// what is typed but not yet run after it.
pub fn judge(
    reader: Reader,
    program: &str,
    command: &str,
    typist: &Typist,
    typed: &str,
    cx: &ToolContext,
) -> Result<(Access, Typist), ToolError> {
    let mut after = typist.clone();
    if typed.is_empty() {
        return Ok((Access::shared(), after));
    }
    if reader == Reader::Program {
        let why = format!("keys typed into `{program}` can make it do more than its command line says");
        let (access, _, _) = judge::bash_command(command, cx)?;
        return Ok((access.unproven(why), Typist::default()));
    }
    let shell = reader == Reader::Shell;
    let ended: Vec<Ended> =
        after.feed(typed, shell).into_iter().filter(|e| !e.line.trim().is_empty() || !e.before.is_empty()).collect();
    if after.kept() > MAX_UNFINISHED {
        return Err(ToolError::failed(format!(
            "the command typed into `{program}` and not yet run is over {} KiB, too long to judge; send \"\\u0003\" \
             (Ctrl-C) to drop it and type a shorter one",
            MAX_UNFINISHED / 1024
        )));
    }
    if ended.is_empty() {
        // Nothing runs until a line ends.
        return Ok((Access::shared(), after));
    }
    let mut access: Option<Access> = None;
    for e in &ended {
        if shell && e.edited {
            return Err(ToolError::failed(format!(
                "refused: this line was typed into `{program}` with editing keys (arrows, Tab, Escape, Ctrl \
                 combinations), so the line the shell runs cannot be read from the text. Type the whole line \
                 as text, ending with \"\\n\" (\"\\u0003\" first drops what is typed so far)."
            )));
        }
        if shell && expands_history(&e.line) {
            return Err(ToolError::failed(format!(
                "refused: `{}` asks `{program}` for history expansion (`!…` or `^…^`), which runs a line that is not \
                 the text typed. Type the command itself; put a literal `!` in single quotes.",
                crate::process::capture::one_line(&e.line, 120)
            )));
        }
        let mut texts = vec![e.line.clone()];
        if !e.before.is_empty() {
            texts.push(format!("{}\n{}", e.before, e.line));
        }
        for text in texts.iter().filter(|t| !t.trim().is_empty()) {
            let judged = match reader {
                Reader::Shell => text.clone(),
                _ => format!("{program} <<'TOOLBELT_TYPED'\n{text}\nTOOLBELT_TYPED"),
            };
            let (one, _, _) = judge::bash_command(&judged, cx)?;
            access = Some(match access {
                None => one,
                Some(so_far) => merge(so_far, one),
            });
        }
    }
    let Some(mut access) = access else { return Ok((Access::shared(), after)) };
    if shell && typist.tainted {
        access = access.unproven(format!(
            "`{program}` was given a line earlier in this session that is not proven read-only, which may have \
             changed what later lines run"
        ));
    }
    if shell && !access.is_shared() {
        after.tainted = true;
    }
    Ok((access, after))
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
    a
}

#[cfg(test)]
mod tests;
