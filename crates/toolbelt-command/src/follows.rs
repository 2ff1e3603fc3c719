//! Read-only programs that read more than their operands name: those that follow symbolic
//! links below the directories they are given (`rg -L`, `find -L`, `grep -R`, `du -L`, `ls
//! -L`, `tree -l`, and `diff`, which follows them unless told `--no-dereference`), and those
//! that open the files a list names (`sort`, `wc` and `du` with `--files0-from`).
//!
//! A repository can ship `keys -> ~/.ssh`: `cat keys/id_rsa` names a path whose real place
//! is outside the workspace (the shell tool sees that), but `rg -L secret` names none. So
//! [`crate::operands`] reports these programs with the directories they walk, and the shell
//! tool looks below them for links that lead out.
//!
//! Options are read as each program's parser reads them, clusters included (`-lLR`,
//! `-rnR`), stopping at a letter that takes a value (`grep -eR` searches for `R`). What could
//! be either counts as following: a false alarm only costs a walk.

use crate::script::ShellWord;

/// Each program that can follow links: its options that make it follow (short letters,
/// long names), and its short options that take a value (the rest of a cluster is that
/// value).
const FOLLOWING: &[(&str, &str, &[&str], &str)] = &[
    ("rg", "L", &["--follow"], "efgtTmABCjMErd"),
    ("grep", "R", &["--dereference-recursive"], "efmABCdD"),
    ("egrep", "R", &["--dereference-recursive"], "efmABCdD"),
    ("fgrep", "R", &["--dereference-recursive"], "efmABCdD"),
    ("du", "L", &["--dereference"], "BdtX"),
    ("ls", "L", &["--dereference"], "ITw"),
    ("tree", "l", &[], "LPIo"),
    ("find", "L", &["-follow"], "DO"),
];

/// Programs that read the files a list file names, NUL-separated.
const LISTING: &[&str] = &["sort", "wc", "du"];

/// The option that makes `name args…` follow symbolic links below what it walks (`rg -L`,
/// `diff`), and whether it walks below the directories it is given (`ls -L` and `diff`
/// look only at their entries unless told `-R`, `-r`); `None` when it follows none.
pub(crate) fn follows(name: &str, args: &[ShellWord]) -> Option<(String, bool)> {
    let texts = args.iter().filter_map(|a| a.value.as_deref()).take_while(|a| *a != "--");
    // Any cluster holding the letter counts: what could be either counts as walking.
    let recursive = |letter: char| {
        texts.clone().any(|a| {
            is_long(a, "--recursive") || a.strip_prefix('-').is_some_and(|c| !c.starts_with('-') && c.contains(letter))
        })
    };
    if name == "diff" {
        // GNU diff reads through every link of the directories it compares.
        let follows = !texts.clone().any(|a| is_long(a, "--no-dereference"));
        return follows.then(|| ("diff".to_string(), recursive('r')));
    }
    let walks = name != "ls" || recursive('R');
    let (_, short, long, valued) = FOLLOWING.iter().find(|(n, ..)| *n == name)?;
    for arg in texts {
        if long.iter().any(|l| arg == *l || (l.starts_with("--") && is_long(arg, l))) {
            return Some((format!("{name} {arg}"), walks));
        }
        let Some(cluster) = arg.strip_prefix('-').filter(|c| !c.is_empty() && !c.starts_with('-')) else {
            continue;
        };
        if name == "find" && cluster.len() > 1 {
            // An expression test (`-name`), not an option cluster.
            continue;
        }
        for c in cluster.chars() {
            if short.contains(c) {
                return Some((format!("{name} -{c}"), walks));
            }
            if valued.contains(c) {
                break;
            }
        }
    }
    None
}

/// The list files `name args…` opens to read the files they name (`sort --files0-from=F`).
pub(crate) fn file_lists(name: &str, args: &[ShellWord]) -> Vec<String> {
    if !LISTING.contains(&name) {
        return Vec::new();
    }
    let mut lists = Vec::new();
    let mut iter = args.iter().filter_map(|a| a.value.as_deref()).take_while(|a| *a != "--");
    while let Some(arg) = iter.next() {
        let (option, value) = match arg.split_once('=') {
            Some((o, v)) => (o, Some(v)),
            None => (arg, None),
        };
        if option.len() >= 4
            && "--files0-from".starts_with(option)
            && let Some(list) = value.map(str::to_string).or_else(|| iter.next().map(str::to_string))
        {
            lists.push(list);
        }
    }
    lists
}

/// Whether `arg` is `long` or an abbreviation of it, with or without `=value`.
fn is_long(arg: &str, long: &str) -> bool {
    let name = arg.split('=').next().unwrap_or(arg);
    name.len() > 3 && name.starts_with("--") && long.starts_with(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runs::{Run, runs};

    fn program(command: &str) -> (String, Vec<ShellWord>) {
        match runs(command).into_iter().next() {
            Some(Run::Program { words, .. }) => (words[0].value.clone().unwrap_or_default(), words[1..].to_vec()),
            other => panic!("{command}: {other:?}"),
        }
    }

    fn follow(command: &str) -> Option<String> {
        let (name, args) = program(command);
        follows(&name, &args).map(|(what, _)| what)
    }

    #[test]
    fn only_recursive_listings_walk_below_their_directories() {
        for (command, walks) in [
            ("ls -lL", false),
            ("ls -L dir", false),
            ("ls -lLR", true),
            ("ls -L --recursive", true),
            ("diff a b", false),
            ("diff -r a b", true),
            ("diff -Nur a b", true),
            ("diff --recursive a b", true),
            ("rg -L x", true),
            ("du -L", true),
            ("find -L .", true),
        ] {
            let (name, args) = program(command);
            assert_eq!(follows(&name, &args).map(|(_, w)| w), Some(walks), "{command}");
        }
    }

    #[test]
    fn options_that_follow_links() {
        for (command, want) in [
            ("rg -L x", "rg -L"),
            ("rg -iL x", "rg -L"),
            ("rg --follow x .", "rg --follow"),
            ("rg --foll x", "rg --foll"),
            ("grep -R x .", "grep -R"),
            ("grep -rnR x", "grep -R"),
            ("grep --dereference-recursive x", "grep --dereference-recursive"),
            ("du -L -a", "du -L"),
            ("du -aL .", "du -L"),
            ("ls -lLR", "ls -L"),
            ("ls --dereference -R", "ls --dereference"),
            ("tree -l", "tree -l"),
            ("find -L . -type f", "find -L"),
            ("find . -follow -name x", "find -follow"),
            ("diff -r a b", "diff"),
            ("diff a b", "diff"),
            ("sudo rg -L x", "rg -L"),
        ] {
            assert_eq!(follow(command).as_deref(), Some(want), "{command}");
        }
        for command in [
            "rg x",
            "rg -e L x",
            "rg -eL x",
            "grep -r x .",
            "grep -eR x",
            "grep -d recurse x",
            "du -a",
            "ls -lR",
            "ls -IL",
            "tree -L 2",
            "find . -name L",
            "find . -lname x",
            "diff --no-dereference -r a b",
            "cat -L",
            "rg x -- -L",
        ] {
            assert_eq!(follow(command), None, "{command}");
        }
    }

    #[test]
    fn lists_of_files() {
        let lists = |command: &str| {
            let (name, args) = program(command);
            file_lists(&name, &args)
        };
        assert_eq!(lists("sort --files0-from=list"), ["list"]);
        assert_eq!(lists("wc --files0-from list -l"), ["list"]);
        assert_eq!(lists("du --files0=l2"), ["l2"]);
        assert_eq!(lists("cat --files0-from=list"), Vec::<String>::new());
        assert_eq!(lists("sort -- --files0-from=x"), Vec::<String>::new());
    }
}
