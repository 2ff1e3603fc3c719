//! Read-only `git` commands.
//!
//! Global options: only `-C <dir>`, `--no-pager`/`-P` and `--no-optional-locks` (`-c` and
//! `--config-env` can set a pager, an editor or a hook to run). Subcommands: `blame branch
//! cat-file describe diff grep log ls-files ls-tree merge-base remote rev-list rev-parse
//! shortlog show show-ref status`, without `--output` (writes a file), `--ext-diff`,
//! `--textconv`, `--filters`, `--show-signature` (run configured programs) or `git grep -O`
//! (`--open-files-in-pager`). `git branch` only lists; `git remote` only as `git remote`,
//! `git remote -v` or `git remote get-url`.
//!
//! Options that point git at another repository or configuration (`--git-dir`,
//! `--work-tree`, `--exec-path`, `-c`, `--config-env`) are never accepted, and the shell tool
//! runs every command with `core.fsmonitor=false` and `safe.bareRepository=explicit`, so a
//! read-only git command cannot start a program named by a bare repository committed inside
//! the workspace, nor a file-system monitor.

use super::options::{cluster_has, is_long, short_cluster};
use super::quote;
use crate::words::Word;

const SUBCOMMANDS: &[&str] = &[
    "blame",
    "branch",
    "cat-file",
    "describe",
    "diff",
    "grep",
    "log",
    "ls-files",
    "ls-tree",
    "merge-base",
    "remote",
    "rev-list",
    "rev-parse",
    "shortlog",
    "show",
    "show-ref",
    "status",
];

/// Long options no read-only subcommand may take, also abbreviated (`--text` itself is
/// fine: an exact name is never an abbreviation).
const DENIED_LONG: &[&str] =
    &["--output", "--ext-diff", "--textconv", "--filters", "--open-files-in-pager", "--show-signature"];

/// Checks the arguments after `git`.
pub(super) fn check(args: &[Word]) -> Result<(), String> {
    let mut i = 0;
    let sub = loop {
        let Some(arg) = args.get(i) else {
            return Err("`git` without a subcommand is not classified".into());
        };
        match arg.text.as_str() {
            "-C" if args.get(i + 1).is_some() => i += 2,
            "--no-pager" | "-P" | "--no-optional-locks" => i += 1,
            "-c" | "--config-env" => {
                return Err(format!(
                    "`git {}` can set configuration such as a pager or a hook to run",
                    arg.text.split('=').next().unwrap_or("-c")
                ));
            }
            t if t.starts_with('-') => return Err(format!("the git option {} is not classified", quote(&arg.raw))),
            _ => break arg.text.as_str(),
        }
    };
    if !SUBCOMMANDS.contains(&sub) {
        return Err(format!("`git {sub}` is not a read-only git command"));
    }
    let rest = args.get(i + 1..).unwrap_or_default();
    for arg in rest {
        let t = arg.text.as_str();
        let exact_allowed = t == "--text";
        if t.starts_with("--output") || (!exact_allowed && DENIED_LONG.iter().any(|l| is_long(t, l))) {
            return Err(format!("`git {sub} {}` can write files or run programs", t.split('=').next().unwrap_or(t)));
        }
        if sub == "grep"
            && short_cluster(t).and_then(|c| cluster_has(c, &['O'], &['A', 'B', 'C', 'e', 'f', 'm'])).is_some()
        {
            return Err("`git grep -O` opens the matches in a pager or editor".into());
        }
        if sub != "grep" && t == "-o" {
            return Err(format!("`git {sub} -o` is not classified"));
        }
    }
    match sub {
        "branch" => branch(rest),
        "remote" => remote(rest),
        _ => Ok(()),
    }
}

/// Flags that keep `git branch` listing.
const BRANCH_FLAGS: &[&str] = &[
    "--all",
    "--remotes",
    "--verbose",
    "--list",
    "--show-current",
    "--color",
    "--no-color",
    "--column",
    "--no-column",
    "--ignore-case",
    "--omit-empty",
];

/// Options that filter the listing (and put `git branch` in list mode); the value is optional.
const BRANCH_FILTERS: &[&str] = &["--contains", "--no-contains", "--merged", "--no-merged", "--points-at"];

/// `git branch` lists when it has no names, or when a list option makes names patterns.
fn branch(args: &[Word]) -> Result<(), String> {
    let mut listing = false;
    let mut names = Vec::new();
    let mut iter = args.iter().peekable();
    while let Some(arg) = iter.next() {
        let t = arg.text.as_str();
        let name = t.split('=').next().unwrap_or(t);
        if let Some(cluster) = short_cluster(t)
            && cluster.chars().all(|c| "arvli".contains(c))
        {
            listing |= cluster.contains('l');
        } else if BRANCH_FLAGS.contains(&t) {
            listing |= t == "--list";
        } else if BRANCH_FILTERS.contains(&name) {
            listing = true;
            if name == t && iter.peek().is_some_and(|next| !next.text.starts_with('-')) {
                iter.next();
            }
        } else if matches!(name, "--sort" | "--format" | "--color" | "--column") {
            if name == t {
                iter.next();
            }
        } else if t.starts_with('-') {
            return Err(format!("`git branch {name}` is not a listing form of `git branch`"));
        } else {
            names.push(t);
        }
    }
    match names.first() {
        Some(name) if !listing => {
            Err(format!("`git branch {name}` creates a branch; only listing forms of `git branch` are read-only"))
        }
        _ => Ok(()),
    }
}

/// `git remote`, `git remote -v`, `git remote get-url NAME`.
fn remote(args: &[Word]) -> Result<(), String> {
    let texts: Vec<&str> = args.iter().map(|a| a.text.as_str()).collect();
    match texts.as_slice() {
        [] | ["-v" | "--verbose"] => Ok(()),
        ["get-url", rest @ ..] if rest.iter().all(|t| !t.starts_with('-') || matches!(*t, "--push" | "--all")) => {
            Ok(())
        }
        _ => {
            Err("only `git remote`, `git remote -v` and `git remote get-url` are read-only forms of `git remote`"
                .into())
        }
    }
}
