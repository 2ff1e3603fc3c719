//! Commands that destroy or overwrite what they touch: what an approval must name exactly.
//!
//! When a command needs approval, the permission engine offers an allow rule for it. For most
//! commands a prefix is what a person means (`cargo test *` for `cargo test --workspace`);
//! for one that deletes, overwrites, moves, changes permissions, kills processes or rewrites
//! git history, a prefix would allow far more than was asked (`rm *` for `rm -rf build`), so
//! the rule names the command exactly. [`destructive`] says whether a command is one of
//! those, looking at what the shell runs ([`crate::runs`]: wrappers such as `sudo` and `env`
//! stripped, `bash -c` strings opened) and at its redirections.
//!
//! This is a judgement about which rule to *offer*, not a safety check: anything it misses
//! is still asked about. It errs towards "destructive": a command whose program is not known
//! from the text counts.

use crate::operands::is_stream;
use crate::runs::{Run, runs};
use crate::script::{RedirectKind, ShellWord};

/// Programs whose every use deletes, overwrites, moves or changes what they name, or stops
/// processes or the machine.
const PROGRAMS: &[(&str, &str)] = &[
    ("rm", "deletes files"),
    ("rmdir", "deletes directories"),
    ("unlink", "deletes files"),
    ("shred", "destroys file contents"),
    ("truncate", "cuts files short"),
    ("dd", "overwrites what it writes to"),
    ("mv", "moves and may overwrite files"),
    ("cp", "may overwrite files"),
    ("install", "may overwrite files"),
    ("tee", "overwrites files"),
    ("chmod", "changes permissions"),
    ("chown", "changes ownership"),
    ("chgrp", "changes ownership"),
    ("chattr", "changes file attributes"),
    ("setfacl", "changes permissions"),
    ("wipefs", "erases file systems"),
    ("fdisk", "changes partitions"),
    ("sfdisk", "changes partitions"),
    ("parted", "changes partitions"),
    ("mkswap", "overwrites a device"),
    ("kill", "stops processes"),
    ("pkill", "stops processes"),
    ("killall", "stops processes"),
    ("reboot", "restarts the machine"),
    ("shutdown", "stops the machine"),
    ("poweroff", "stops the machine"),
    ("halt", "stops the machine"),
];

/// Git subcommands that push, discard work or rewrite history, in every form or in their
/// common ones (`git checkout -- file`, `git mv` over a file).
const GIT: &[&str] = &[
    "push",
    "reset",
    "clean",
    "checkout",
    "restore",
    "rm",
    "mv",
    "rebase",
    "filter-branch",
    "filter-repo",
    "update-ref",
    "gc",
    "prune",
    "replace",
];

/// Git subcommands that are destructive (or run programs) in some forms (`git stash drop`,
/// `git branch -D`, `git tag -d`, `git config core.pager …`): a prefix rule for them would
/// allow those forms too.
pub const GIT_SOMETIMES: &[&str] =
    &["stash", "branch", "tag", "worktree", "reflog", "switch", "remote", "submodule", "notes", "config"];

/// Why `command` destroys or overwrites something, or `None` when it does not as far as its
/// text tells. See the module docs.
pub fn destructive(command: &str) -> Option<String> {
    for run in runs(command) {
        let (words, redirects) = match run {
            Run::Opaque { text, .. } => return Some(format!("what `{text}` runs is known only when it runs")),
            Run::Program { words, redirects } => (words, redirects),
        };
        for r in &redirects {
            let to_file = r.target.value.as_deref().is_none_or(|t| !is_stream(t));
            if matches!(r.kind, RedirectKind::Write | RedirectKind::ReadWrite) && to_file {
                return Some(format!("`{}` overwrites a file", r.target.raw));
            }
        }
        if let Some(why) = program(&words) {
            return Some(why);
        }
    }
    None
}

/// What one program does, by its name and arguments.
fn program(words: &[ShellWord]) -> Option<String> {
    let name = words.first()?.value.as_deref()?;
    let args: Vec<&str> = words[1..].iter().map(|w| w.value.as_deref().unwrap_or("")).collect();
    if let Some((_, what)) = PROGRAMS.iter().find(|(p, _)| *p == name) {
        return Some(format!("`{name}` {what}"));
    }
    if name.starts_with("mkfs") {
        return Some(format!("`{name}` creates a file system over what was there"));
    }
    let has = |flags: &[&str]| {
        args.iter().any(|a| flags.contains(a) || flags.iter().any(|f| a.starts_with(&format!("{f}="))))
    };
    match name {
        "ln" if args
            .iter()
            .any(|a| *a == "--force" || (a.starts_with('-') && !a.starts_with("--") && a.contains('f'))) =>
        {
            Some("`ln -f` replaces files".into())
        }
        "find" if has(&["-delete"]) => Some("`find -delete` deletes files".into()),
        "sed" | "perl" if args.iter().any(|a| a.starts_with("-i") || a.starts_with("--in-place")) => {
            Some(format!("`{name} -i` rewrites files in place"))
        }
        "rsync" if args.iter().any(|a| a.starts_with("--delete") || a.starts_with("--remove-source")) => {
            Some("`rsync --delete` deletes files".into())
        }
        "git" => git(&args),
        "docker" | "podman" if args.iter().any(|a| matches!(*a, "rm" | "rmi" | "prune" | "kill")) => {
            Some(format!("`{name}` removes containers, images or data"))
        }
        "kubectl" if args.contains(&"delete") => Some("`kubectl delete` deletes resources".into()),
        _ => None,
    }
}

fn git(args: &[&str]) -> Option<String> {
    let sub = git_subcommand(args)?;
    let rest: Vec<&str> = args.iter().skip_while(|a| **a != sub).skip(1).copied().collect();
    let any = |flags: &[&str]| rest.iter().any(|a| flags.contains(a));
    let destroys = GIT.contains(&sub)
        || match sub {
            "stash" => rest.first().is_some_and(|a| matches!(*a, "drop" | "clear" | "pop")),
            "branch" => any(&["-d", "-D", "--delete", "-f", "--force", "-m", "-M", "--move", "-c", "-C"]),
            "tag" => any(&["-d", "--delete", "-f", "--force"]),
            "worktree" => rest.first().is_some_and(|a| matches!(*a, "remove" | "prune")),
            "reflog" => rest.first().is_some_and(|a| matches!(*a, "expire" | "delete")),
            "switch" => any(&["-f", "--force", "--discard-changes", "-C", "--force-create"]),
            "remote" => rest.first().is_some_and(|a| matches!(*a, "remove" | "rm" | "prune" | "set-url")),
            "submodule" => rest.first().is_some_and(|a| *a == "deinit"),
            "commit" => any(&["--amend"]),
            _ => false,
        };
    destroys.then(|| format!("`git {sub}` can discard work, rewrite history or change a remote"))
}

/// The subcommand of `git ARGS`, past the global options.
pub fn git_subcommand<'a>(args: &[&'a str]) -> Option<&'a str> {
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        match *arg {
            "-C" | "-c" | "--git-dir" | "--work-tree" | "--namespace" | "--exec-path" | "--config-env" => i += 2,
            a if a.starts_with('-') => i += 1,
            a => return Some(a),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_destroys_and_what_does_not() {
        for command in [
            "rm -rf build",
            "sudo rm x",
            "bash -c 'rm x'",
            "find . -name '*.o' -delete",
            "find . -exec rm {} +",
            "mv a b",
            "chmod -R 777 .",
            "dd if=/dev/zero of=disk.img",
            "git push origin main",
            "git -C sub reset --hard",
            "git clean -fdx",
            "git branch -D old",
            "git stash drop",
            "git commit --amend",
            "sed -i s/a/b/ f",
            "echo hi > notes.txt",
            "cargo test > log.txt 2>&1",
            "pkill -f server",
            "$cmd x",
            "ln -sf a b",
        ] {
            assert!(destructive(command).is_some(), "{command}");
        }
        for command in [
            "cargo test --workspace",
            "npm run build",
            "touch x",
            "mkdir -p d",
            "git commit -m x",
            "git stash list",
            "git branch new",
            "ls > /dev/null 2>&1",
            "cat a | grep b",
            "python3 script.py",
            "ln -s a b",
        ] {
            assert_eq!(destructive(command), None, "{command}");
        }
        assert_eq!(destructive("rm -rf build").as_deref(), Some("`rm` deletes files"));
        assert_eq!(git_subcommand(&["-C", "x", "--no-pager", "log"]), Some("log"));
    }
}
