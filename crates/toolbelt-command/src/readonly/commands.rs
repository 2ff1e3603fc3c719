//! The safe list: which programs only read, and with which arguments.

use super::git;
use super::options::{cluster_has, is_long, short_cluster};
use super::quote;
use crate::words::{ComputedKind, Word};

/// Programs none of whose options write files or run other programs.
const ANY_ARGUMENTS: &[&str] = &[
    "cat",
    "cmp",
    "column",
    "comm",
    "cut",
    "df",
    "diff",
    "du",
    "fmt",
    "fold",
    "grep",
    "head",
    "id",
    "ls",
    "nl",
    "paste",
    "pwd",
    "readlink",
    "realpath",
    "rev",
    "shellcheck",
    "stat",
    "tail",
    "tr",
    "uname",
    "wc",
    "which",
    "whoami",
];

/// Programs and builtins that take no file and whose options neither write nor run anything:
/// a value computed when the command runs (`$?`, a variable, a read-only command's output) can
/// do no harm as their argument.
const NO_FILES: &[&str] =
    &["echo", "printf", "test", "[", "true", "false", ":", "exit", "expr", "seq", "basename", "dirname"];

/// Programs that are read-only only with some arguments; see [`check`].
const CHECKED_ARGUMENTS: &[&str] =
    &["cd", "date", "env", "file", "find", "git", "rg", "ruff", "sed", "sort", "tree", "uniq"];

/// Most combinations of variable values one command is checked with.
const MAX_COMBINATIONS: usize = 64;

/// Whether `name` is on the safe list at all.
pub(super) fn known(name: &str) -> Result<(), String> {
    if ANY_ARGUMENTS.contains(&name) || NO_FILES.contains(&name) || CHECKED_ARGUMENTS.contains(&name) {
        Ok(())
    } else {
        Err(format!("{} is not a read-only command", quote(name)))
    }
}

/// Whether `name args…` only reads. `name` has passed [`known`].
pub(super) fn check(name: &str, args: &[Word]) -> Result<(), String> {
    if NO_FILES.contains(&name) {
        return no_files(name, args);
    }
    if let Some(computed) = args.iter().find_map(|a| a.computed.as_ref()) {
        let hint = if computed.kind == ComputedKind::Split { "; quote it" } else { "" };
        return Err(format!(
            "{}, and which file or option `{name}` gets from it cannot be checked before it runs{hint}",
            computed.describe()
        ));
    }
    if let Some(arg) = args.iter().find(|a| a.brace) {
        return Err(format!(
            "{} is a brace expansion, which is not followed to the files `{name}` opens; list the names instead",
            quote(&arg.raw)
        ));
    }
    if ANY_ARGUMENTS.contains(&name) {
        return Ok(());
    }
    if let Some(arg) = args.iter().find(|a| a.may_expand) {
        return Err(format!(
            "{} is expanded by the shell into words that `{name}` could read as options; quote it",
            quote(&arg.raw)
        ));
    }
    let combinations = args
        .iter()
        .map(|a| 1 + a.others.len())
        .try_fold(1usize, |n, k| n.checked_mul(k).filter(|&n| n <= MAX_COMBINATIONS));
    let Some(combinations) = combinations else {
        return Err(format!("the variables of `{name}`'s arguments may hold too many values to check"));
    };
    for i in 0..combinations {
        let mut rest = i;
        let one: Vec<Word> = args
            .iter()
            .map(|a| {
                let count = 1 + a.others.len();
                let pick = rest % count;
                rest /= count;
                let text = a.values().nth(pick).unwrap_or_default().to_string();
                Word { text, others: Vec::new(), ..a.clone() }
            })
            .collect();
        check_one(name, &one)?;
    }
    Ok(())
}

/// Arguments of a program that takes no files: anything but what makes bash assign a
/// variable or evaluate an array subscript (which can run commands: `a[$(rm x)]`).
fn no_files(name: &str, args: &[Word]) -> Result<(), String> {
    match name {
        "printf" => printf(args),
        "test" | "[" => test_words(name, args),
        _ => Ok(()),
    }
}

/// `printf -v NAME` assigns a variable (and evaluates a subscript in NAME): the first
/// argument must be known not to be `-v`.
fn printf(args: &[Word]) -> Result<(), String> {
    let Some(first) = args.first() else { return Ok(()) };
    if first.computed.is_some() || first.may_expand {
        return Err(format!(
            "`printf`'s first argument {} is only known when the command runs, and `printf -v` assigns a shell \
             variable; write the format literally",
            quote(&first.raw)
        ));
    }
    if first.values().any(|t| t.starts_with("-v")) {
        return Err("`printf -v` assigns a shell variable".into());
    }
    Ok(())
}

/// `test` and `[`: `-v NAME` and `-R NAME` evaluate an array subscript in NAME, so neither may
/// appear, and no word known only when the command runs may turn into them: such a word must
/// be quoted (unquoted, the shell may split it into `-v` and a name, or expand a glob into
/// file names that are) and must not be followed by another such word or one holding `[`.
fn test_words(name: &str, args: &[Word]) -> Result<(), String> {
    if let Some(arg) = args.iter().find(|a| a.values().any(|t| matches!(t, "-v" | "-R"))) {
        return Err(format!(
            "`{}` in a test looks a variable up by a name that may run commands (`a[$(…)]`), which is not \
             classified",
            arg.text
        ));
    }
    if let Some(arg) = args.iter().find(|a| a.may_expand || (a.splits && !a.is_number())) {
        return Err(format!(
            "{} is not quoted, so the shell may turn it into several words, which `{name}` could read as \
             `-v NAME` (evaluating a subscript that runs commands); quote it",
            quote(&arg.raw)
        ));
    }
    let open = |a: &Word| a.computed.is_some() && !a.is_number();
    for pair in args.windows(2) {
        if let [first, second] = pair
            && open(first)
            && (open(second) || second.values().any(|t| t.contains('[')))
        {
            return Err(format!(
                "{} is only known when the command runs, and `{name}` could read it as `-v` applied to {} \
                 (evaluating a subscript that runs commands)",
                quote(&first.raw),
                quote(&second.raw)
            ));
        }
    }
    Ok(())
}

/// One combination of argument values of a checked program.
fn check_one(name: &str, args: &[Word]) -> Result<(), String> {
    match name {
        "cd" => Ok(()),
        "date" => denied(name, args, &DATE),
        "env" if args.is_empty() => Ok(()),
        "env" => Err("`env` with arguments runs a program (or changes its environment)".into()),
        "file" => denied(name, args, &FILE),
        "find" => find(args),
        "git" => git::check(args),
        "rg" => denied(name, args, &RG),
        "ruff" => ruff(args),
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

/// Only `ruff check` told to write nothing: `--no-cache` (else it keeps a cache in the
/// project), `--no-fix` and `--no-fix-only` (else a project's `fix = true` or `fix-only = true`
/// edits files: `--no-fix` alone leaves `fix-only` on), and none of the
/// options that write (`--fix`, `--add-noqa`, `--output-file`), watch, or take settings from
/// the command line (`--config`, which could turn fixing back on).
fn ruff(args: &[Word]) -> Result<(), String> {
    const WRITES: &[&str] =
        &["--fix", "--fix-only", "--unsafe-fixes", "--add-noqa", "--output-file", "--watch", "--config"];
    let Some((sub, rest)) = args.split_first() else {
        return Err("`ruff` without `check` is not read-only".into());
    };
    if sub.text != "check" {
        return Err(format!(
            "`ruff {}` is not read-only (only `ruff check --no-cache --no-fix --no-fix-only` is)",
            sub.text
        ));
    }
    let options = rest.iter().take_while(|a| a.text != "--");
    let mut no_cache = false;
    let (mut no_fix, mut no_fix_only) = (false, false);
    for arg in options {
        let name = arg.text.split('=').next().unwrap_or(&arg.text);
        if let Some(option) = WRITES.iter().find(|w| **w == name) {
            return Err(format!("`ruff check {option}` writes files or reads settings that may"));
        }
        if let Some(cluster) = short_cluster(&arg.text) {
            if let Some(letter) = cluster_has(cluster, &['w', 'o'], &[]) {
                return Err(format!("`ruff check -{letter}` watches or writes a file"));
            }
            no_cache |= cluster.contains('n');
        }
        no_cache |= name == "--no-cache";
        no_fix |= name == "--no-fix";
        no_fix_only |= name == "--no-fix-only";
    }
    if !no_cache {
        return Err("`ruff check` without `--no-cache` writes its cache into the project".into());
    }
    match (no_fix, no_fix_only) {
        (true, true) => Ok(()),
        (false, _) => {
            Err("`ruff check` without `--no-fix` edits files when the project's settings say `fix = true`".into())
        }
        (true, false) => {
            Err("`ruff check` without `--no-fix-only` edits files when the project's settings say `fix-only = true`"
                .into())
        }
    }
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
