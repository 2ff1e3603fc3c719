//! Read-only shell command classification.
//!
//! The Bash tool asks [`classify`] whether a command only reads: a read-only command may run
//! alongside other reads (shared access) and may be allowed without asking a person. Both uses
//! make a false "read-only" costly and a false "not read-only" cheap (the command still runs,
//! just alone or after a prompt), so the rule here is: **anything the classifier cannot prove
//! safe is not read-only**.
//!
//! # What passes
//!
//! The command is parsed with tree-sitter-bash. It is read-only only if every command it can
//! run is on the safe list with safe arguments and nothing writes:
//!
//! * **structure**: simple commands joined by `&&`, `||`, `;`, `|`, `|&` and newlines, `!`
//!   negation, comments, `( … )` subshells, `{ …; }` groups, `if`/`elif`/`else`, and `for NAME
//!   in WORDS` loops (`readonly/syntax.rs`). Background `&`, `while`/`until`, `case`, `select`,
//!   C-style `for ((…))`, `((…))` and function definitions are rejected;
//! * **tests**: `[ … ]`, `[[ … ]]`, `test` and `[` (`readonly/test.rs`), except `-v` and
//!   `-R` (they evaluate an array subscript, which can run commands), integer comparisons
//!   inside `[[ … ]]` of anything but literal numbers and `$?`/`$#`/`$$` (arithmetic), and,
//!   for `[ … ]`/`test`/`[`, unquoted words the shell may split or glob into `-v NAME[…]`;
//! * **words**: literal words (quotes, escapes), unquoted globs, and expansions bash performs
//!   without running anything: `$name`, `${name}`, `$?` and the other special parameters,
//!   and `$(…)`/backticks whose own script is read-only (nested at most 4 deep). Where such a
//!   value may go depends on the program: a program that takes no file and whose options
//!   neither write nor run anything (`echo`, `printf`, `test`, `[`, `true`, `false`, `:`,
//!   `exit`, `expr`, `seq`, `basename`, `dirname`) may get any value (but `printf`'s first
//!   argument must be literal: `printf -v` assigns). Any other program only gets values the
//!   script itself gives its variables (`vars.rs`: `f=README.md; wc -l "$f"`, `for f
//!   in *.rs; do wc -l "$f"; done`), checked one by one as if written literally; a variable
//!   the script does not set, a substitution's output or an unquoted value that could split
//!   rejects the command. A variable or substitution in command position always rejects it.
//!   `${x:-…}` and other operators, `$((…))`, `<(…)`/`>(…)`, brace expansion, `$'…'` and
//!   `$"…"` reject the command;
//! * **assignments**: `name=value` statements to lowercase names whose value is literal or a
//!   read-only substitution (bash gives uppercase names meaning, and programs read their
//!   settings from them). A `NAME=value` prefix of a command rejects it (the environment can
//!   change what a program does: `GIT_PAGER`, `LD_PRELOAD`), as do arrays, `+=`,
//!   `export`/`declare`/`unset`;
//! * **redirections** only read or discard: `< file`, `<<< word`, fd duplication (`2>&1`),
//!   closing (`2>&-`), and output to `/dev/null` (`>/dev/null`, `2>/dev/null`,
//!   `&>/dev/null`), with literal targets. Any other output redirection writes a file. A
//!   heredoc passes only when its body has no expansions and nothing follows `<<EOF` on its
//!   line.
//!
//! Also rejected: parse errors (tree-sitter `ERROR`/`MISSING` nodes), control characters (a
//! carriage return is a word character to bash but not to the parser), and a `\`-newline
//! continuation that joins two words (the parser would see two words where bash sees one,
//! e.g. `-del\` + `ete`).
//!
//! # The safe list
//!
//! Any arguments: `cat cmp column comm cut df diff du fmt fold grep head id ls nl paste pwd
//! readlink realpath rev shellcheck stat tail tr uname wc which whoami` — none of them has an
//! option that writes or runs anything. No files (any value, see above): `echo printf test [
//! true false : exit expr seq basename dirname`.
//!
//! Checked arguments: `cd` (any directory), `find` (no `-exec`, `-execdir`, `-ok`, `-okdir`,
//! `-delete`, `-fprint`, `-fprint0`, `-fprintf`, `-fls`), `rg` (no `--pre`, `--pre-glob`,
//! `-z`/`--search-zip`, `--hostname-bin`), `ruff` (only `ruff check` with `--no-cache` and
//! `--no-fix` and `--no-fix-only`, without `--fix`, `--add-noqa`, `--output-file`/`-o`, `--watch`/`-w` or
//! `--config`), `sed` (only `sed -n <N|N,M|$>p [files]`), `sort`
//! (no `-o`/`--output`, `--compress-program`), `uniq` (at most one file: a second one is
//! written), `date` (no `-s`/`--set`), `file` (no `-C`/`--compile`), `tree` (no `-o`, `-R`),
//! `env` (only bare `env`: with arguments it runs a program) and `git`: global options only
//! `-C <dir>`, `--no-pager`/`-P`, `--no-optional-locks` (never `-c`); subcommands `blame
//! branch cat-file describe diff grep log ls-files ls-tree merge-base remote rev-list
//! rev-parse shortlog show show-ref status` without `--output*`, `--ext-diff`,
//! `--textconv`, `--filters` or `git grep -O`; `git branch` only in listing forms, `git
//! remote` only bare, `-v` or `get-url`. For these commands an unquoted glob (`*`, `?`,
//! `[…]`, `{a,b}`) rejects the command: it could expand to a file named like an option
//! (a file called `-delete` turns `find *` into a deletion). GNU-style long options are
//! matched by prefix as well (`--out` is `--output` to getopt).
//!
//! # What this cannot see
//!
//! The classifier judges the text, not the shell it runs in: a shell function or alias
//! named `ls` in a persistent shell, a `PATH` entry that shadows `cat`, or a config file
//! named by the environment (`RIPGREP_CONFIG_PATH`) are outside its view. Git is run so
//! that no repository can make a read-only command start a program (see `readonly/git.rs`
//! and the shell tool's environment), except what the repository's own `.git/config` names
//! for textconv, external diff and filters — a protected file nothing writes without
//! approval, which a clone never carries, and which the shell tool reads before a read-only
//! git command runs in a project nobody trusted (it asks when that file names a program).
//! What a read-only command reads beyond its operands (links it follows out of the roots,
//! the files a `--files0-from` list names) and git's history under a `Read(…)` deny rule are
//! judged by the shell tool and the permission engine, not here. "Read-only" is about the files the user
//! works on: `git status` may still refresh `.git/index`, and `tail -f` reads but never
//! ends. Inputs over 64 KiB are not classified.

mod commands;
mod git;
mod options;
mod syntax;
mod test;

use tree_sitter::Node;

pub(crate) use crate::tree::{children, describe, parse, quote, snippet, text};

/// Whether a shell command is read-only, and if not, why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Classification {
    /// Every part of the command only reads.
    ReadOnly,
    /// Some part may write, run another program, or could not be proved safe.
    NotReadOnly {
        /// The offending part, e.g. "`rm` is not a read-only command" or "output redirection
        /// to a file (`> out.txt`)".
        reason: String,
    },
}

impl Classification {
    /// Whether this is [`Classification::ReadOnly`].
    pub fn is_read_only(&self) -> bool {
        matches!(self, Classification::ReadOnly)
    }

    /// Why the command is not read-only; `None` when it is.
    pub fn reason(&self) -> Option<&str> {
        match self {
            Classification::ReadOnly => None,
            Classification::NotReadOnly { reason } => Some(reason),
        }
    }
}

/// Classifies a shell command (a whole script: lists, pipelines, several lines).
pub fn classify(command: &str) -> Classification {
    match check(command) {
        Ok(()) => Classification::ReadOnly,
        Err(reason) => Classification::NotReadOnly { reason },
    }
}

/// Whether `command` is read-only; [`classify`] says why not.
pub fn is_read_only(command: &str) -> bool {
    classify(command).is_read_only()
}

/// Longest command classified; longer ones are not read-only.
const MAX_LEN: usize = 64 * 1024;

fn check(command: &str) -> Result<(), String> {
    if command.trim().is_empty() {
        return Err("the command is empty".into());
    }
    if command.len() > MAX_LEN {
        return Err(format!("the command is longer than {} KiB and is not classified", MAX_LEN / 1024));
    }
    if let Some(c) = command.chars().find(|&c| c.is_control() && c != '\n' && c != '\t') {
        return Err(format!("the command contains the control character U+{:04X}", u32::from(c)));
    }
    check_continuations(command)?;
    let tree = parse(command)?;
    let root = tree.root_node();
    if root.has_error() {
        return Err(parse_error(root, command));
    }
    if syntax::Checker::new(root, command).statements(vec![root], 0)? == 0 {
        return Err("there is no command to run (only comments)".into());
    }
    Ok(())
}

/// Rejects a `\`-newline with a non-blank character on both sides: bash joins the two
/// pieces into one word, tree-sitter-bash reads two.
fn check_continuations(command: &str) -> Result<(), String> {
    let bytes = command.as_bytes();
    for (i, pair) in bytes.windows(2).enumerate() {
        if pair != b"\\\n" {
            continue;
        }
        let before = i.checked_sub(1).and_then(|j| bytes.get(j));
        let after = bytes.get(i + 2);
        if let (Some(b), Some(a)) = (before, after)
            && !b.is_ascii_whitespace()
            && !a.is_ascii_whitespace()
        {
            return Err("a line continuation (`\\` + newline) inside a word is not classified; \
                 put a space before the backslash"
                .into());
        }
    }
    Ok(())
}

/// Names the first `ERROR` or `MISSING` node.
fn parse_error(root: Node<'_>, src: &str) -> String {
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if node.is_missing() {
            let before = tail(src.get(..node.start_byte()).unwrap_or(src).trim_end(), 40);
            return format!("the command is incomplete (something is missing after {})", quote(&before));
        }
        if node.is_error() {
            return format!(
                "the command does not parse as shell near {}; check its quotes and brackets",
                quote(&snippet(text(node, src)))
            );
        }
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
        stack.extend(children.into_iter().rev());
    }
    "the command does not parse as shell".into()
}

/// The last `n` characters of `s`, one line.
fn tail(s: &str, n: usize) -> String {
    let one_line = s.split_whitespace().collect::<Vec<_>>().join(" ");
    let count = one_line.chars().count();
    if count <= n { one_line } else { format!("…{}", one_line.chars().skip(count - n).collect::<String>()) }
}
