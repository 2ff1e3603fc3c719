//! Git commands that print what git keeps: files' contents from its object store and index.
//!
//! A `Read(./secret.txt)` rule is judged against the paths a command names, and in the
//! sandbox the working file is masked; but once the file was committed (or staged), `git show
//! HEAD:secret.txt`, `git log -p`, `git grep x HEAD`, `git cat-file -p`, `git diff A B` print
//! it from `.git/objects`, where no path rule looks. The permission engine asks before such a
//! command runs whenever a `Read(…)` rule could hide a file of the repository
//! ([`shows_stored_content`] says which git commands do).
//!
//! Sound rather than clever: a subcommand counts when it *can* print a stored file, whatever
//! the pathspec (`git log -p -- src/` could follow a rename, a tag can name a blob). What
//! prints only names, counts or commit messages stays free: `git status`, `git log
//! --oneline`/`--stat`, `git diff --stat`/`--name-only`, `git ls-files`, `git branch`…
//! Git aliases are out of reach (as for deny rules): an alias cannot shadow a built-in
//! command, and any other name is not read-only, so it asks in the default mode anyway.

use crate::script::ShellWord;

/// Global options of `git` that take the next word as their value.
const GLOBAL_VALUES: &[&str] =
    &["-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env", "--attr-source"];

/// Subcommands that print or copy out stored files whatever their options.
const ALWAYS: &[&str] = &[
    "show",
    "grep",
    "archive",
    "format-patch",
    "bundle",
    "fast-export",
    "range-diff",
    "difftool",
    "checkout-index",
    "unpack-file",
    "worktree",
    "clone",
    "instaweb",
];

/// Subcommands of the `log` family: they print stored files only with a patch or a pickaxe.
const LOG_FAMILY: &[&str] = &["log", "whatchanged", "reflog", "diff-tree", "diff-index", "diff-files", "shortlog"];

/// Options of the `log`/`diff` family that print file contents (or search them: `-S`/`-G`
/// answer whether a string is in a file). Short ones exactly or with their value attached;
/// long ones also abbreviated.
const CONTENT_SHORT: &[&str] = &["-p", "-u", "-c", "-m", "-W"];
const CONTENT_SHORT_VALUED: &[&str] = &["-L", "-S", "-G", "-U"];
const CONTENT_LONG: &[&str] = &[
    "--patch",
    "--patch-with-stat",
    "--patch-with-raw",
    "--cc",
    "--dd",
    "--diff-merges",
    "--remerge-diff",
    "--word-diff",
    "--word-diff-regex",
    "--color-words",
    "--function-context",
    "--unified",
    "--binary",
    "--pickaxe-regex",
    "--pickaxe-all",
    "--check",
    "--full-diff",
];

/// Options of `git diff` that print no file content when nothing else asks for a patch.
const NAMES_ONLY: &[&str] = &[
    "--stat",
    "--numstat",
    "--shortstat",
    "--name-only",
    "--name-status",
    "--dirstat",
    "--dirstat-by-file",
    "--summary",
    "--compact-summary",
    "--raw",
    "--quiet",
    "--no-patch",
    "-s",
];

/// Whether `words` (a program and its arguments as the shell passes them, `git` first) is a
/// git command that may print a file's content from git's object store or index. Any word
/// the shell computes counts as one that could (`git log $opts`).
pub fn shows_stored_content(words: &[ShellWord]) -> bool {
    if words.first().and_then(|w| w.value.as_deref()) != Some("git") {
        return false;
    }
    let mut args: Vec<Option<&str>> = words[1..].iter().map(ShellWord::literal).collect();
    // The global options, then the subcommand.
    let mut i = 0;
    let sub = loop {
        match args.get(i).copied() {
            None => return false,
            Some(None) => return true,
            Some(Some(a)) if GLOBAL_VALUES.contains(&a) => i += 2,
            Some(Some(a)) if a.starts_with('-') => i += 1,
            Some(Some(a)) => break a,
        }
    };
    let rest: Vec<Option<&str>> = args.drain(i + 1..).collect();
    if rest.iter().any(Option::is_none) {
        return true;
    }
    let rest: Vec<&str> = rest.into_iter().flatten().collect();
    let options = || rest.iter().copied().take_while(|a| *a != "--").filter(|a| a.starts_with('-'));
    match sub {
        s if ALWAYS.contains(&s) => true,
        s if LOG_FAMILY.contains(&s) => options().any(is_content_option),
        "diff" => diff(&rest),
        "cat-file" => cat_file(&rest),
        "blame" | "annotate" => blame(&rest),
        "stash" => rest.first() == Some(&"show"),
        "status" => options().any(|a| a == "-v" || a == "-vv" || is_long(a, "--verbose")),
        _ => false,
    }
}

/// `-p`, `-U3`, `-S'needle'`, `--patch`, `--pat`, `--word-diff=color`…
fn is_content_option(arg: &str) -> bool {
    if arg.starts_with("--") {
        return CONTENT_LONG.iter().any(|l| is_long(arg, l));
    }
    CONTENT_SHORT.contains(&arg) || CONTENT_SHORT_VALUED.iter().any(|s| arg.starts_with(s))
}

/// `git diff` prints a patch unless only name or count formats are asked for.
fn diff(rest: &[&str]) -> bool {
    let options: Vec<&str> = rest.iter().copied().take_while(|a| *a != "--").filter(|a| a.starts_with('-')).collect();
    if options.iter().any(|a| is_content_option(a)) {
        return true;
    }
    !options.iter().any(|a| NAMES_ONLY.iter().any(|n| *a == *n || (n.starts_with("--") && is_long(a, n))))
}

/// `git cat-file` prints an object unless asked only its type, size or existence.
fn cat_file(rest: &[&str]) -> bool {
    let options: Vec<&str> = rest.iter().copied().filter(|a| a.starts_with('-')).collect();
    let content = |a: &&str| {
        matches!(*a, "-p" | "--textconv" | "--filters" | "--batch-command")
            || *a == "--batch"
            || a.starts_with("--batch=")
    };
    let metadata_only = |a: &&str| matches!(*a, "-t" | "-s" | "-e") || a.starts_with("--batch-check");
    options.iter().any(content) || !options.iter().any(metadata_only)
}

/// `git blame FILE` shows the working file (which the command names, so path rules judge
/// it); with a revision (`git blame REV -- FILE`, `--reverse`, `--contents`) it shows a
/// stored one.
fn blame(rest: &[&str]) -> bool {
    const VALUED: &[&str] = &["-L", "--date", "--ignore-rev", "--ignore-revs-file", "-S", "--contents"];
    let mut positional = 0;
    let mut iter = rest.iter().copied();
    while let Some(arg) = iter.next() {
        if arg == "--" {
            positional += iter.by_ref().count();
            break;
        }
        if matches!(arg, "--reverse" | "-S" | "--contents") || arg.starts_with("--contents=") {
            return true;
        }
        if VALUED.contains(&arg) {
            iter.next();
        } else if !arg.starts_with('-') {
            positional += 1;
        }
    }
    positional > 1
}

/// Long options that are also the beginning of another (`--color`, `--color-words`): given
/// whole, they are themselves, not an abbreviation.
const WHOLE: &[&str] = &["--color", "--no-color", "--stat", "--patch", "--word-diff", "--dirstat"];

/// Whether `arg` is the long option `long` or an abbreviation of it (as git's option parser
/// accepts), with or without `=value`.
fn is_long(arg: &str, long: &str) -> bool {
    let name = arg.split('=').next().unwrap_or(arg);
    name == long || (name.len() > 2 && long.starts_with(name) && !WHOLE.contains(&name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runs::{Run, runs};

    fn shows(command: &str) -> bool {
        runs(command).iter().any(|r| matches!(r, Run::Program { words, .. } if shows_stored_content(words)))
    }

    #[test]
    fn commands_that_print_stored_files() {
        for command in [
            "git show HEAD:secret.txt",
            "git show",
            "git -C sub --no-pager show v1",
            "git log -p",
            "git log --pat",
            "git log -U5",
            "git log -Shunter2 --oneline",
            "git log -G x",
            "git log -L 1,5:f.rs",
            "git log --word-diff=color",
            "git whatchanged -p",
            "git diff-tree -p HEAD",
            "git grep x",
            "git grep x HEAD",
            "git cat-file -p HEAD:x",
            "git cat-file blob abc123",
            "git cat-file --batch",
            "git diff",
            "git diff HEAD~1 HEAD",
            "git diff --cached",
            "git diff --stat -p",
            "git diff --check",
            "git blame HEAD -- f",
            "git blame --reverse A..B f",
            "git stash show -p",
            "git stash show",
            "git status -v",
            "git archive HEAD",
            "git format-patch -1",
            "git checkout-index -a --prefix=copy/",
            "git worktree add ../copy",
            "git log $opts",
            "git $cmd",
            "sudo git show HEAD:x",
            "bash -c 'git log -p'",
        ] {
            assert!(shows(command), "{command}");
        }
    }

    #[test]
    fn commands_that_print_names_counts_or_messages() {
        for command in [
            "git status",
            "git status --short",
            "git log --oneline",
            "git log --stat -5",
            "git log --format=%H%x09%s",
            "git log --color --graph --decorate",
            "git log --oneline -- secret.txt",
            "git diff --stat",
            "git diff --stat --color",
            "git diff --name-only HEAD~1",
            "git diff --quiet",
            "git ls-files",
            "git ls-tree -r HEAD",
            "git branch -a",
            "git rev-parse HEAD",
            "git blame f",
            "git blame -L 1,5 f",
            "git cat-file -t HEAD",
            "git cat-file -s HEAD:x",
            "git stash list",
            "git remote -v",
            "git commit -m x",
            "git",
            "echo git show",
            "cat x",
        ] {
            assert!(!shows(command), "{command}");
        }
    }
}
