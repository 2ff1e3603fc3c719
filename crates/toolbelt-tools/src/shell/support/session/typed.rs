//! What typing into a session is judged as. A line typed into a shell is a command line,
//! judged as `Bash` judges one (the deny lists, `Bash(…)` rules, the read-only classifier,
//! the files it names); a line typed into an interpreter (`python`, `node`, `psql`…) is judged
//! as that interpreter running it; keys typed into any other program (an editor, a pager, a
//! menu) can make it do anything it can do, so they are judged as running its command again,
//! never as a read. Keys that end no line run nothing in a shell or an interpreter (a line
//! runs when it ends), so they are kept and judged with the line they end up in.
//!
//! What text cannot show: line editing with cursor keys, history recall and key bindings
//! rewrite a line in ways only the program knows, so a line typed with any such key is judged
//! as the program's command, not as its text.

use toolbelt_core::{Access, ToolContext, ToolError};

use crate::shell::support::judge;

/// How typed text is read by the program receiving it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reader {
    /// A shell: each line is a command line.
    Shell,
    /// An interpreter: each line is code it runs (`python3`, as its name).
    Interpreter,
    /// Any other program: keys whose effect only it knows.
    Program,
}

/// Shells, whose lines are command lines.
const SHELLS: &[&str] = &["bash", "sh", "dash", "zsh", "ksh", "mksh", "ash", "fish", "busybox"];

/// Interpreters, whose lines are code.
const INTERPRETERS: &[&str] = &[
    "python",
    "python2",
    "python3",
    "ipython",
    "ipython3",
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
    "sqlite3",
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

/// How `program` (a name, a path, `python3.12`) reads its input.
pub fn reader_of(program: &str) -> Reader {
    let name = program.rsplit('/').next().unwrap_or(program).trim_start_matches('-');
    // `python3.12` is `python3`.
    let base = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    let base = if base.is_empty() { name } else { base };
    if SHELLS.contains(&name) || SHELLS.contains(&base) {
        Reader::Shell
    } else if INTERPRETERS.iter().any(|i| *i == name || *i == base || i.trim_end_matches(char::is_numeric) == base) {
        Reader::Interpreter
    } else {
        Reader::Program
    }
}

/// The lines `typed` ends (after what was pending), each with whether it was typed with an
/// editing key its text cannot show; and what stays pending.
pub fn lines(pending: &str, typed: &str) -> (Vec<(String, bool)>, String) {
    let mut done = Vec::new();
    let mut line = pending.to_string();
    // A pending line that was itself edited carries a marker.
    let mut edited = line.contains('\u{1b}');
    for c in typed.chars() {
        match c {
            '\r' | '\n' => {
                let text = line.replace('\u{1b}', "");
                done.push((text, edited));
                line.clear();
                edited = false;
            }
            // Ctrl-C and Ctrl-U drop the line being typed.
            '\u{3}' | '\u{15}' => {
                line.clear();
                edited = false;
            }
            '\u{7f}' | '\u{8}' => {
                line.pop();
            }
            '\t' => line.push(c),
            // Ctrl-D sends nothing new to run.
            '\u{4}' => {}
            c if c.is_control() => {
                edited = true;
                line.push('\u{1b}');
            }
            c => line.push(c),
        }
    }
    if edited && !line.contains('\u{1b}') {
        line.push('\u{1b}');
    }
    (done, line)
}

/// What typing `typed` into a session whose reader is `reader` (`program` being what runs
/// there, `command` the session's command line) touches, and what stays pending.
pub fn judge(
    reader: Reader,
    program: &str,
    command: &str,
    pending: &str,
    typed: &str,
    cx: &ToolContext,
) -> Result<(Access, String), ToolError> {
    if typed.is_empty() {
        return Ok((Access::shared(), pending.to_string()));
    }
    if reader == Reader::Program {
        let why = format!("keys typed into `{program}` can make it do more than its command line says");
        let (access, _, _) = judge::bash_command(command, cx)?;
        return Ok((access.unproven(why), String::new()));
    }
    let (done, rest) = lines(pending, typed);
    let lines: Vec<&(String, bool)> = done.iter().filter(|(l, _)| !l.trim().is_empty()).collect();
    if lines.is_empty() {
        // Nothing runs until a line ends.
        return Ok((Access::shared(), rest));
    }
    if lines.iter().any(|(_, edited)| *edited) {
        let why = format!("a line typed into `{program}` with editing keys reads differently from its text");
        let (access, _, _) = judge::bash_command(command, cx)?;
        return Ok((access.unproven(why), rest));
    }
    let text: Vec<&str> = lines.iter().map(|(l, _)| l.as_str()).collect();
    let judged = match reader {
        Reader::Shell => text.join("\n"),
        _ => format!("{program} <<'TOOLBELT_TYPED'\n{}\nTOOLBELT_TYPED", text.join("\n")),
    };
    let (access, _, _) = judge::bash_command(&judged, cx)?;
    Ok((access, rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_are_told_apart_by_name() {
        assert_eq!(reader_of("/bin/bash"), Reader::Shell);
        assert_eq!(reader_of("-bash"), Reader::Shell);
        assert_eq!(reader_of("python3.12"), Reader::Interpreter);
        assert_eq!(reader_of("python3"), Reader::Interpreter);
        assert_eq!(reader_of("psql"), Reader::Interpreter);
        assert_eq!(reader_of("vim"), Reader::Program);
        assert_eq!(reader_of("git"), Reader::Program);
    }

    #[test]
    fn lines_end_with_enter_and_editing_is_seen() {
        let (done, rest) = lines("rm -rf ", "/tmp/x\rls");
        assert_eq!(done, vec![("rm -rf /tmp/x".to_string(), false)]);
        assert_eq!(rest, "ls");
        let (done, rest) = lines("", "echo hi\u{3}ls -la\u{7f}\u{7f}\n");
        assert_eq!(done, vec![("ls -".to_string(), false)]);
        assert_eq!(rest, "");
        // Up-arrow then Enter: the line run is not the text.
        let (done, _) = lines("", "\u{1b}[A\r");
        assert_eq!(done, vec![("[A".to_string(), true)]);
        let (_, rest) = lines("", "echo \u{1}x");
        let (done, _) = lines(&rest, "\r");
        assert!(done[0].1, "an edit in an earlier write is remembered");
    }

    #[test]
    fn typed_lines_are_judged_as_commands_and_denied_ones_refused() {
        let cx = ToolContext::detached(std::env::temp_dir());
        let (access, rest) = judge(Reader::Shell, "bash", "bash", "", "ls -la\r", &cx).unwrap();
        assert!(access.is_shared(), "a read-only line reads");
        assert_eq!(rest, "");
        let err = judge(Reader::Shell, "bash", "bash", "rm -rf ", "/\r", &cx).unwrap_err();
        assert!(err.to_string().starts_with("Refused"), "{err}");
        let (access, _) = judge(Reader::Shell, "bash", "bash", "", "touch x\n", &cx).unwrap();
        assert!(!access.is_shared());
        let (access, rest) = judge(Reader::Shell, "bash", "bash", "", "rm -rf /", &cx).unwrap();
        assert!(access.is_shared() && rest == "rm -rf /", "nothing runs before Enter");
        let (access, _) = judge(Reader::Interpreter, "python3", "python3", "", "x = 41\n", &cx).unwrap();
        assert!(!access.is_shared());
        let (access, _) = judge(Reader::Program, "vim", "vim notes.txt", "", "ZZ", &cx).unwrap();
        assert!(!access.is_shared(), "keys into an editor are never a read");
    }
}
