//! The safe list: which programs only read, and with which arguments.

use super::git;
use super::quote;
use crate::words::Word;

/// Programs none of whose options write files or run other programs.
const ANY_ARGUMENTS: &[&str] = &[
    "basename", "cat", "cd", "cmp", "column", "comm", "cut", "df", "diff", "dirname", "du", "echo", "expr", "false",
    "fmt", "fold", "grep", "head", "id", "ls", "nl", "paste", "pwd", "readlink", "realpath", "rev", "seq", "stat",
    "tail", "tr", "true", "uname", "wc", "which", "whoami",
];

/// Programs that are read-only only with some arguments; see [`check`].
const CHECKED_ARGUMENTS: &[&str] =
    &["date", "env", "file", "find", "git", "printf", "rg", "sed", "sort", "tree", "uniq"];

/// Whether `name` is on the safe list at all.
pub(super) fn known(name: &str) -> Result<(), String> {
    if ANY_ARGUMENTS.contains(&name) || CHECKED_ARGUMENTS.contains(&name) {
        Ok(())
    } else {
        Err(format!("{} is not a read-only command", quote(name)))
    }
}

/// Whether `name args…` only reads. `name` has passed [`known`].
pub(super) fn check(name: &str, args: &[Word]) -> Result<(), String> {
    if ANY_ARGUMENTS.contains(&name) {
        return Ok(());
    }
    if let Some(arg) = args.iter().find(|a| a.may_expand) {
        return Err(format!(
            "{} is expanded by the shell (a glob or braces) into words that `{name}` could read as options; \
             quote it",
            quote(&arg.raw)
        ));
    }
    match name {
        "date" => denied(name, args, &DATE),
        "env" if args.is_empty() => Ok(()),
        "env" => Err("`env` with arguments runs a program (or changes its environment)".into()),
        "file" => denied(name, args, &FILE),
        "find" => find(args),
        "git" => git::check(args),
        "printf" => match args.first() {
            Some(first) if first.text.starts_with("-v") => Err("`printf -v` assigns a shell variable".into()),
            _ => Ok(()),
        },
        "rg" => denied(name, args, &RG),
        "sed" => sed(args),
        "sort" => denied(name, args, &SORT),
        "tree" => denied(name, args, &TREE),
        "uniq" => uniq(args),
        _ => Err(format!("{} is not a read-only command", quote(name))),
    }
}

/// The options that make an otherwise read-only program write or run something.
struct Denied {
    /// Short options, also inside clusters like `-ro`.
    short: &'static [char],
    /// Short options that take the rest of a cluster as their value (`-k1o` is `-k 1o`).
    short_with_value: &'static [char],
    /// Long options, also abbreviated (getopt reads `--out` as `--output`) or with `=value`.
    long: &'static [&'static str],
    /// What they do.
    what: &'static str,
}

const DATE: Denied =
    Denied { short: &['s'], short_with_value: &['d', 'f', 'r', 'I'], long: &["--set"], what: "sets the system clock" };

const FILE: Denied = Denied {
    short: &['C'],
    short_with_value: &['e', 'f', 'F', 'm', 'P'],
    long: &["--compile"],
    what: "writes a compiled magic file",
};

const RG: Denied = Denied {
    short: &['z'],
    short_with_value: &['A', 'B', 'C', 'E', 'M', 'd', 'e', 'f', 'g', 'j', 'm', 'r', 't', 'T'],
    long: &["--pre", "--pre-glob", "--search-zip", "--hostname-bin"],
    what: "runs other programs",
};

const SORT: Denied = Denied {
    short: &['o'],
    short_with_value: &['k', 't', 'S', 'T'],
    long: &["--output", "--compress-program"],
    what: "writes a file or runs a program",
};

/// tree's short options take their value from the next argument, never from the cluster.
const TREE: Denied = Denied { short: &['o', 'R'], short_with_value: &[], long: &["--output"], what: "writes files" };

fn denied(name: &str, args: &[Word], denied: &Denied) -> Result<(), String> {
    for arg in args {
        let short = short_cluster(&arg.text).and_then(|c| cluster_has(c, denied.short, denied.short_with_value));
        if let Some(letter) = short {
            return Err(format!("`{name} -{letter}` {} (in {})", denied.what, quote(&arg.raw)));
        }
        if let Some(option) = denied.long.iter().find(|l| is_long(&arg.text, l)) {
            return Err(format!("`{name} {option}` {} (in {})", denied.what, quote(&arg.raw)));
        }
    }
    Ok(())
}

/// The letters of a short-option cluster (`-abc` → `abc`); `None` for `-`, `--x` and words.
pub(super) fn short_cluster(arg: &str) -> Option<&str> {
    arg.strip_prefix('-').filter(|rest| !rest.is_empty() && !rest.starts_with('-'))
}

/// The first letter of `cluster` in `forbidden`, scanning up to a letter that takes a value.
pub(super) fn cluster_has(cluster: &str, forbidden: &[char], takes_value: &[char]) -> Option<char> {
    for c in cluster.chars() {
        if forbidden.contains(&c) {
            return Some(c);
        }
        if takes_value.contains(&c) {
            return None;
        }
    }
    None
}

/// Whether `arg` is the long option `long` (`--output`), possibly abbreviated or with
/// `=value`.
pub(super) fn is_long(arg: &str, long: &str) -> bool {
    let name = arg.split('=').next().unwrap_or(arg);
    name.len() > 2 && name.starts_with("--") && long.starts_with(name)
}

const FIND_ACTIONS: &[(&str, &str)] = &[
    ("-exec", "runs a program"),
    ("-execdir", "runs a program"),
    ("-ok", "runs a program"),
    ("-okdir", "runs a program"),
    ("-delete", "deletes files"),
    ("-fprint", "writes a file"),
    ("-fprint0", "writes a file"),
    ("-fprintf", "writes a file"),
    ("-fls", "writes a file"),
];

fn find(args: &[Word]) -> Result<(), String> {
    for arg in args {
        if let Some((action, what)) = FIND_ACTIONS.iter().find(|(a, _)| *a == arg.text) {
            return Err(format!("`find {action}` {what}"));
        }
    }
    Ok(())
}

/// Only `sed -n SCRIPT [FILE…]` where SCRIPT prints a line or a range: `5p`, `1,20p`, `$p`.
fn sed(args: &[Word]) -> Result<(), String> {
    match args {
        [flag, script, files @ ..]
            if flag.text == "-n" && is_print_script(&script.text) && files.iter().all(|f| !f.text.starts_with('-')) =>
        {
            Ok(())
        }
        _ => Err("only `sed -n` with a line or range print script (e.g. `sed -n 1,20p file`) is read-only".into()),
    }
}

fn is_print_script(script: &str) -> bool {
    let Some(range) = script.strip_suffix('p') else {
        return false;
    };
    let address = |a: &str| a == "$" || (!a.is_empty() && a.bytes().all(|b| b.is_ascii_digit()));
    match range.split_once(',') {
        Some((from, to)) => address(from) && address(to),
        None => address(range),
    }
}

/// `uniq [OPTION]… [INPUT [OUTPUT]]` writes OUTPUT: allow at most one file.
fn uniq(args: &[Word]) -> Result<(), String> {
    let mut files = 0;
    let mut options_done = false;
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        let t = arg.text.as_str();
        if options_done || t == "-" || !t.starts_with('-') {
            files += 1;
        } else if t == "--" {
            options_done = true;
        } else if matches!(t, "-f" | "-s" | "-w" | "--skip-fields" | "--skip-chars" | "--check-chars") {
            iter.next();
        }
    }
    if files > 1 { Err("`uniq` with two file arguments writes the second one".into()) } else { Ok(()) }
}
