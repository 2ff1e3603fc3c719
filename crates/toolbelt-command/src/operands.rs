//! The files a command line names: what `Read(…)` and `Edit(…)` rules, the workspace roots and
//! the protected paths are judged against when a shell command runs.
//!
//! A shell command reads what its operands name (`cat secret.txt`, `grep -r x /etc`,
//! `< input`) and writes what its redirections and a few programs' operands name (`> out`,
//! `tee f`, `touch f`, `rm f`, `sed -i … f`, the last operand of `cp`/`mv`/`ln`/`install`).
//! This module lists those words, per program ([`crate::runs`]: wrappers stripped, `bash -c`
//! strings opened), skipping what is not a file: options, the pattern of `grep`/`rg`, the
//! script of `sed`/`awk`/`jq`, the arguments of programs that take no files (`echo`,
//! `printf`, `basename`…), URLs and descriptors. It errs towards listing too much: a word
//! that is not a file only costs a path check. A `cd` is followed: later relative operands
//! are resolved against every directory the script may be in ([`Operands::dirs`]).
//!
//! Out of reach: files a program opens on its own (a config file, a path inside a script),
//! and operands computed at run time (`cat $f`).

use crate::runs::{Run, runs};
use crate::script::{RedirectKind, ShellWord};

/// What a command does with a file it names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Use {
    /// Reads it (or its metadata, or lists it).
    Read,
    /// Creates, changes or removes it.
    Write,
}

/// One file operand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Operand {
    /// The word after quote removal (`~/x`, `../a`, `*.rs`): relative to the command's
    /// directory unless absolute.
    pub path: String,
    /// Whether it is an unquoted glob the shell expands (`sec*.txt`).
    pub glob: bool,
    /// What the command does with it.
    pub usage: Use,
}

/// A program that follows symbolic links below the directories it walks (`rg -L`, `find
/// -L`, `grep -R`, `du -L`, `ls -L`, `tree -l`, `diff`): where a link leads is what it reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Follow {
    /// The program and the option that makes it follow (`rg -L`), for messages.
    pub what: String,
    /// The paths it walks, as [`Operand`]s; empty when it names none (it walks the directory
    /// it runs in).
    pub paths: Vec<Operand>,
    /// Whether it reads below the directories' own entries (`ls -L` without `-R` and `diff`
    /// without `-r` read only the entries of the directories they are given).
    pub recursive: bool,
}

/// A file whose NUL-separated names a program opens (`sort --files0-from=LIST`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileList {
    /// The program and option (`sort --files0-from`), for messages.
    pub what: String,
    /// The list file, relative to the command's directory unless absolute (`-`: standard
    /// input).
    pub list: String,
}

/// The files a command line names, and the directories it may change into.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Operands {
    /// The operands, in source order.
    pub files: Vec<Operand>,
    /// Each literal `cd`/`pushd` target, in order (relative ones relative to the one before).
    pub dirs: Vec<String>,
    /// The programs that follow symbolic links below what they walk.
    pub follows: Vec<Follow>,
    /// The list files programs read names from.
    pub lists: Vec<FileList>,
}

/// Programs none of whose arguments is a file.
const NO_FILES: &[&str] = &[
    "echo", "printf", "true", "false", "pwd", "whoami", "id", "uname", "date", "seq", "expr", "sleep", "kill", "test",
    "[", "exit", "return", "export", "unset", "set", "shift", "read", "wait", "jobs", "type", "hash", "help", "let",
    "local", "declare", "typeset", "readonly", "unalias", "umask", "ulimit", "which", "basename", "dirname", "yes",
    "hostname", "tput", "clear", "history", "nproc", "getconf", "printenv", "locale", "logname", "groups", "arch",
    "alias", "trap", "command", "builtin",
];

/// Programs that change, create or remove every file operand.
const WRITES_ALL: &[&str] = &[
    "tee", "touch", "truncate", "rm", "rmdir", "mkdir", "chmod", "chown", "chgrp", "shred", "unlink", "mkfifo", "mknod",
];

/// Programs whose last operand is the destination they write.
const WRITES_LAST: &[&str] = &["cp", "mv", "install", "ln", "rsync"];

/// Every file `command` names. Never fails.
pub fn operands(command: &str) -> Operands {
    let mut out = Operands::default();
    for run in runs(command) {
        let Run::Program { words, redirects } = run else { continue };
        for r in &redirects {
            let usage = match r.kind {
                RedirectKind::Read => Use::Read,
                RedirectKind::Write => Use::Write,
                RedirectKind::ReadWrite => Use::Write,
                RedirectKind::Descriptor => continue,
            };
            push(&mut out, &r.target, usage);
        }
        program_operands(&words, &mut out);
    }
    out
}

fn push(out: &mut Operands, word: &ShellWord, usage: Use) {
    let Some(path) = word.value.as_deref().filter(|p| !p.is_empty()) else { return };
    if is_stream(path) || is_url(path) {
        return;
    }
    let operand = Operand { path: path.to_string(), glob: word.expands, usage };
    if !out.files.contains(&operand) {
        out.files.push(operand);
    }
}

/// `/dev/null`, the standard streams and descriptors: never a file of the workspace.
pub(crate) fn is_stream(path: &str) -> bool {
    matches!(path, "-" | "/dev/null" | "/dev/stdin" | "/dev/stdout" | "/dev/stderr" | "/dev/tty" | "/dev/zero")
        || path.starts_with("/dev/fd/")
        || path.starts_with("/proc/self/fd/")
}

fn is_url(word: &str) -> bool {
    word.split_once("://").is_some_and(|(scheme, _)| {
        !scheme.is_empty() && scheme.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    })
}

fn program_operands(words: &[ShellWord], out: &mut Operands) {
    let Some(name) = words.first().and_then(|w| w.value.as_deref()) else { return };
    let args = &words[1..];
    if NO_FILES.contains(&name) {
        return;
    }
    if matches!(name, "cd" | "pushd") {
        match args.iter().find(|a| a.value.as_deref().is_some_and(|v| !v.starts_with('-') || v == "-")) {
            Some(dir) if dir.value.as_deref() == Some("-") => {}
            Some(dir) => {
                if let Some(v) = dir.literal() {
                    out.dirs.push(v.to_string());
                }
                push(out, dir, Use::Read);
            }
            None if args.is_empty() => out.dirs.push("~".to_string()),
            None => {}
        }
        return;
    }
    let usage = if WRITES_ALL.contains(&name) { Use::Write } else { Use::Read };
    let skip_first = leading_program_text(name, args);
    let in_place = name == "sed"
        && args.iter().any(|a| {
            a.value.as_deref().is_some_and(|v| v == "-i" || v.starts_with("-i") || v.starts_with("--in-place"))
        });
    let mut operands: Vec<&ShellWord> = Vec::new();
    let mut options_done = false;
    let mut skipped = false;
    let mut iter = args.iter().peekable();
    while let Some(arg) = iter.next() {
        let Some(text) = arg.value.as_deref() else { continue };
        if !options_done && text == "--" {
            options_done = true;
            continue;
        }
        if !options_done && text.starts_with('-') && text.len() > 1 {
            option_operands(name, text, &mut iter, out);
            continue;
        }
        if skip_first && !skipped {
            skipped = true;
            continue;
        }
        operands.push(arg);
    }
    if name == "find" {
        // Only the starting points, after find's own options (`-L`, `-D tree`, `-O2`): what
        // follows is the expression.
        operands.truncate(0);
        let mut iter = args.iter();
        let mut leading = true;
        while let Some(arg) = iter.next() {
            match arg.value.as_deref() {
                Some("-H" | "-L" | "-P") if leading => {}
                Some("-D") if leading => {
                    iter.next();
                }
                Some(t) if leading && t.starts_with("-O") => {}
                Some(t) if t.starts_with('-') || t == "(" || t == "!" => break,
                Some(_) => {
                    leading = false;
                    operands.push(arg);
                }
                None => {}
            }
        }
    }
    if let Some((what, recursive)) = crate::follows::follows(name, args) {
        let paths = operands
            .iter()
            .filter_map(|w| {
                let path = w.value.as_deref().filter(|p| !p.is_empty() && !is_stream(p) && !is_url(p))?;
                Some(Operand { path: path.to_string(), glob: w.expands, usage: Use::Read })
            })
            .collect();
        out.follows.push(Follow { what, paths, recursive });
    }
    for list in crate::follows::file_lists(name, args) {
        out.lists.push(FileList { what: format!("{name} --files0-from"), list });
    }
    let last = operands.len().saturating_sub(1);
    for (i, arg) in operands.into_iter().enumerate() {
        let usage = if in_place || (WRITES_LAST.contains(&name) && i == last && last > 0) { Use::Write } else { usage };
        if name == "dd" {
            dd_operand(arg, out);
        } else if !arg.value.as_deref().is_some_and(is_assignment) {
            push(out, arg, usage);
        }
    }
}

/// Whether the first operand of this command is program text, not a file: the pattern of
/// `grep`/`rg`, the script of `sed`/`awk`, the filter of `jq` — unless an option gave it.
fn leading_program_text(name: &str, args: &[ShellWord]) -> bool {
    let given_by_option = |opts: &[&str]| {
        args.iter().filter_map(|a| a.value.as_deref()).any(|v| {
            opts.iter().any(|o| v == *o || (o.starts_with("--") && v.starts_with(&format!("{o}="))))
                || (v.starts_with('-')
                    && !v.starts_with("--")
                    && opts.iter().any(|o| o.len() == 2 && v.ends_with(&o[1..])))
        })
    };
    match name {
        "grep" | "egrep" | "fgrep" | "rg" | "ag" | "ack" | "git-grep" => {
            !given_by_option(&["-e", "-f", "--regexp", "--file"])
        }
        "sed" => !given_by_option(&["-e", "-f", "--expression", "--file"]),
        "awk" | "gawk" | "mawk" | "nawk" => !given_by_option(&["-f", "--file"]),
        "jq" | "yq" | "gojq" => !given_by_option(&["-f", "--from-file"]),
        _ => false,
    }
}

/// An option's file: `--file=/x` (any program), and the value of a few well-known file
/// options given as the next word (`grep -f FILE`, `git -C DIR`, `tar -f FILE`).
fn option_operands<'a>(
    name: &str,
    option: &str,
    rest: &mut std::iter::Peekable<std::slice::Iter<'a, ShellWord>>,
    out: &mut Operands,
) {
    if let Some((_, value)) = option.split_once('=')
        && looks_like_path(value)
    {
        push(out, &ShellWord { value: Some(value.to_string()), raw: value.to_string(), expands: false }, Use::Read);
        return;
    }
    let takes_file = match name {
        "grep" | "egrep" | "fgrep" | "rg" | "sed" | "awk" | "gawk" | "jq" => matches!(option, "-f" | "--file"),
        "git" => option == "-C",
        "tar" => option.starts_with('-') && !option.starts_with("--") && option.ends_with('f'),
        "make" => matches!(option, "-C" | "-f" | "--directory" | "--file"),
        _ => false,
    };
    let takes_pattern = match name {
        "grep" | "egrep" | "fgrep" | "rg" => matches!(option, "-e" | "--regexp"),
        "sed" => matches!(option, "-e" | "--expression"),
        _ => false,
    };
    if takes_file {
        if let Some(next) = rest.next() {
            push(out, next, Use::Read);
        }
    } else if takes_pattern {
        rest.next();
    }
}

/// `dd if=FILE of=FILE`.
fn dd_operand(arg: &ShellWord, out: &mut Operands) {
    let Some(text) = arg.literal() else { return };
    let (usage, path) = match text.split_once('=') {
        Some(("if", p)) => (Use::Read, p),
        Some(("of", p)) => (Use::Write, p),
        _ => return,
    };
    push(out, &ShellWord { value: Some(path.to_string()), raw: path.to_string(), expands: false }, usage);
}

fn looks_like_path(value: &str) -> bool {
    value.contains('/') || value.starts_with('.') || value.starts_with('~')
}

/// `NAME=value` (an argument to `make`, say), not a file.
fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && !name.contains('/')
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(command: &str) -> Vec<(String, Use)> {
        operands(command).files.into_iter().map(|o| (o.path, o.usage)).collect()
    }

    fn reads(paths: &[&str]) -> Vec<(String, Use)> {
        paths.iter().map(|p| (p.to_string(), Use::Read)).collect()
    }

    #[test]
    fn reads_what_commands_name() {
        assert_eq!(files("cat secret.txt"), reads(&["secret.txt"]));
        assert_eq!(files("cat -n /etc/shadow ~/.ssh/id_rsa"), reads(&["/etc/shadow", "~/.ssh/id_rsa"]));
        assert_eq!(files("grep -rn foo /etc"), reads(&["/etc"]));
        assert_eq!(files("grep -e /x -f pats.txt src"), reads(&["pats.txt", "src"]));
        assert_eq!(files("rg foo /"), reads(&["/"]));
        assert_eq!(files("sed -n 1,5p a.txt"), reads(&["a.txt"]));
        assert_eq!(files("awk '{print $1}' data"), reads(&["data"]));
        assert_eq!(files("jq .name package.json"), reads(&["package.json"]));
        assert_eq!(files("find /etc -name '*.conf' -newer x"), reads(&["/etc"]));
        assert_eq!(files("find -L /etc -type f"), reads(&["/etc"]));
        assert_eq!(files("find -H -D tree ~/.ssh /tmp -name x"), reads(&["~/.ssh", "/tmp"]));
        assert_eq!(files("git -C ../other log -p"), reads(&["../other", "log"]));
        assert_eq!(files("wc -l < /etc/passwd"), reads(&["/etc/passwd"]));
        assert_eq!(files("sudo cat /etc/shadow"), reads(&["/etc/shadow"]));
        assert_eq!(files("bash -c 'cat ../x'"), reads(&["../x"]));
        assert_eq!(files("ls --color=auto --ignore-file=../ig"), reads(&["../ig"]));
        let glob = &operands("cat sec*.txt").files[0];
        assert!(glob.glob && glob.path == "sec*.txt");
    }

    #[test]
    fn skips_what_is_not_a_file() {
        for command in
            ["echo /etc/shadow", "printf '%s' /x", "basename /a/b", "cmd 2>/dev/null", "curl https://x.test/a"]
        {
            let names: Vec<String> = files(command).into_iter().map(|(p, _)| p).collect();
            assert!(
                !names.iter().any(|p| p.contains("/etc")
                    || p.contains("/x")
                    || p.contains("/a")
                    || p.contains("dev")
                    || p.contains("x.test")),
                "{command}: {names:?}"
            );
        }
        assert_eq!(files("make -j4 CC=gcc"), reads(&[]));
        assert_eq!(files("cat \"$f\" $(ls)"), reads(&[]), "computed operands are out of reach");
    }

    #[test]
    fn writes_are_told_apart() {
        let w = |p: &str| (p.to_string(), Use::Write);
        assert_eq!(files("echo x > .git/config"), [w(".git/config")]);
        assert_eq!(files("tee -a .mcp.json"), [w(".mcp.json")]);
        assert_eq!(files("cp evil .git/hooks/pre-commit"), [("evil".into(), Use::Read), w(".git/hooks/pre-commit")]);
        assert_eq!(files("sed -i s/a/b/ f"), [w("f")]);
        assert_eq!(files("rm -rf .git"), [w(".git")]);
        assert_eq!(files("dd if=/dev/sda of=disk.img"), [("/dev/sda".into(), Use::Read), w("disk.img")]);
    }

    #[test]
    fn programs_that_follow_links_and_read_lists() {
        let ops = operands("rg -L needle src ../lib; find -L . -type f; grep -R x; ls -l; sort --files0-from=names");
        let follows: Vec<(&str, Vec<&str>)> =
            ops.follows.iter().map(|f| (f.what.as_str(), f.paths.iter().map(|p| p.path.as_str()).collect())).collect();
        assert_eq!(follows, [("rg -L", vec!["src", "../lib"]), ("find -L", vec!["."]), ("grep -R", vec![])]);
        assert_eq!(ops.lists, [FileList { what: "sort --files0-from".into(), list: "names".into() }]);
    }

    #[test]
    fn cd_is_followed() {
        let ops = operands("cd /etc && cat shadow; cd sub; pushd deeper");
        assert_eq!(ops.dirs, ["/etc", "sub", "deeper"]);
        assert!(ops.files.iter().any(|o| o.path == "shadow"));
        assert_eq!(operands("cd").dirs, ["~"]);
        assert!(operands("cd -").dirs.is_empty());
    }
}
