//! A command line split into the simple commands permission rules are matched against.
//!
//! Claude Code's rules match each part of a compound command on its own: `Bash(npm test *)`
//! allows `npm test && npm run lint` only if `npm run lint` is allowed too. So [`split`]
//! returns every simple command of the script — the parts of lists and pipelines (`&& || ;
//! | |& &` and newlines), and the commands nested in subshells, groups, `$(…)`, backticks,
//! process substitutions, loops, conditionals and function bodies — each with its own
//! redirections and `NAME=value` prefixes (kept: they change what runs), and with leading
//! wrappers (`timeout`, `time`, `nice`, `nohup`, `stdbuf`, `xargs`) stripped, so
//! `timeout 30 npm test` is matched as `npm test`. A command that holds a substitution
//! appears itself *and* its inner commands appear, so `echo $(rm -rf x)` must have `rm -rf x`
//! allowed too. Statements that change the shell itself (`export`, `unset`, a bare
//! `PATH=…`) are parts too, so a rule has to allow them.
//!
//! A script that does not parse cleanly is one part, the whole text, marked incomplete: only
//! a rule for the whole command (or for the tool) can allow it.

use tree_sitter::Node;

/// The simple commands of a command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split {
    /// Each command's text, whitespace collapsed, wrappers stripped, in source order.
    pub commands: Vec<String>,
    /// Whether the script parsed cleanly (else `commands` is the whole text).
    pub complete: bool,
}

/// Splits a command line into its simple commands. Never fails; see the module docs.
pub fn split(command: &str) -> Split {
    if command.trim().is_empty() || command.len() > 64 * 1024 {
        return Split { commands: vec![collapse(command)], complete: false };
    }
    match crate::tree::parse(command) {
        Ok(tree) => split_tree(&tree, command),
        Err(_) => Split { commands: vec![collapse(command)], complete: false },
    }
}

/// [`split`] of a tree already parsed from `command`.
pub(crate) fn split_tree(tree: &tree_sitter::Tree, command: &str) -> Split {
    let whole = || Split { commands: vec![collapse(command)], complete: false };
    if command.trim().is_empty() {
        return whole();
    }
    let root = tree.root_node();
    if root.has_error() {
        return whole();
    }
    let mut commands = Vec::new();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if let Some(part) = part_of(node, command) {
            let part = strip_wrappers(&collapse(part));
            if !part.is_empty() {
                commands.push(part);
            }
        }
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
        stack.extend(children.into_iter().rev());
    }
    if commands.is_empty() {
        return whole();
    }
    Split { commands, complete: true }
}

/// The text of a node that is a part of its own: a command (with the redirections around it),
/// or a statement that changes the shell.
fn part_of<'s>(node: Node<'_>, src: &'s str) -> Option<&'s str> {
    let parent_kind = node.parent().map(|p| p.kind());
    let text = |n: Node<'_>| src.get(n.byte_range());
    match node.kind() {
        "command" | "declaration_command" | "unset_command" | "test_command" => match node.parent() {
            Some(p) if p.kind() == "redirected_statement" && p.child_by_field_name("body") == Some(node) => text(p),
            _ => text(node),
        },
        "variable_assignment" | "variable_assignments"
            if !matches!(parent_kind, Some("command" | "variable_assignments" | "declaration_command")) =>
        {
            text(node)
        }
        _ => None,
    }
}

fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Removes leading wrapper commands and their options (`timeout 30`, `nice -n 5`, `nohup`,
/// `stdbuf -oL`, `time -p`, `xargs -n1 -I{}`), repeatedly. An unknown option stops the
/// stripping (the text is kept as is from there); a wrapper with nothing after it is kept.
pub fn strip_wrappers(command: &str) -> String {
    let collapsed = collapse(command);
    let words: Vec<&str> = collapsed.split(' ').collect();
    let mut at = 0;
    while let Some(next) = words.get(at).and_then(|w| skip_wrapper(w, &words[at + 1..])) {
        if at + 1 + next >= words.len() {
            break;
        }
        at += 1 + next;
    }
    words[at..].join(" ")
}

/// The wrappers allow rules see through: they change when or how a program runs, never what
/// it may do (`sudo`, `env`, `exec`… are seen through by deny rules only; see `wrappers.rs`).
const HARMLESS: &[&str] = &["nohup", "time", "nice", "stdbuf", "timeout", "xargs"];

/// When `name` is a harmless wrapper, how many of the following words are its options and
/// arguments.
fn skip_wrapper(name: &str, rest: &[&str]) -> Option<usize> {
    if !HARMLESS.contains(&name) {
        return None;
    }
    if name == "time" {
        // Only the shell keyword's `-p`: GNU time's `-o FILE` writes a file.
        return match rest.first() {
            Some(&"-p") => Some(1),
            Some(w) if w.starts_with('-') => None,
            _ => Some(0),
        };
    }
    match crate::wrappers::unwrap(name, rest)? {
        crate::wrappers::Unwrap::Then(n) => Some(n),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(command: &str) -> Vec<String> {
        let s = split(command);
        assert!(s.complete, "{command} should parse");
        s.commands
    }

    #[test]
    fn lists_pipelines_and_newlines() {
        assert_eq!(parts("npm test && npm run lint"), ["npm test", "npm run lint"]);
        assert_eq!(parts("a || b; c | d |& e & f"), ["a", "b", "c", "d", "e", "f"]);
        assert_eq!(parts("make\n  cargo   test\n"), ["make", "cargo test"]);
        assert_eq!(parts("! grep -q x file"), ["grep -q x file"]);
    }

    #[test]
    fn quotes_keep_operators_inside_one_command() {
        assert_eq!(parts(r#"echo "a && b; c" | wc -l"#), [r#"echo "a && b; c""#, "wc -l"]);
        assert_eq!(parts("grep 'x|y' f"), ["grep 'x|y' f"]);
    }

    #[test]
    fn nested_commands_are_parts_too() {
        assert_eq!(parts("echo $(rm -rf x)"), ["echo $(rm -rf x)", "rm -rf x"]);
        assert_eq!(parts("echo `whoami`"), ["echo `whoami`", "whoami"]);
        assert_eq!(parts("(cd sub && make) ; { ls; pwd; }"), ["cd sub", "make", "ls", "pwd"]);
        assert_eq!(parts("diff <(sort a) <(sort b)"), ["diff <(sort a) <(sort b)", "sort a", "sort b"]);
        assert_eq!(parts("if test -f x; then rm x; fi"), ["test -f x", "rm x"]);
        assert_eq!(parts("for f in *.rs; do wc -l \"$f\"; done"), ["wc -l \"$f\""]);
        assert_eq!(parts("ls() { rm -rf /tmp/x; }; ls"), ["rm -rf /tmp/x", "ls"]);
    }

    #[test]
    fn redirections_assignments_and_shell_changes_stay_visible() {
        assert_eq!(parts("npm test > out.txt 2>&1"), ["npm test > out.txt 2>&1"]);
        assert_eq!(parts("FOO=1 npm test"), ["FOO=1 npm test"]);
        assert_eq!(parts("export PATH=/tmp/evil:$PATH; ls"), ["export PATH=/tmp/evil:$PATH", "ls"]);
        assert_eq!(parts("PATH=/tmp/evil; ls"), ["PATH=/tmp/evil", "ls"]);
        assert_eq!(parts("unset HOME && ls"), ["unset HOME", "ls"]);
        assert_eq!(parts("cat <<EOF\nhello\nEOF"), ["cat <<EOF hello EOF"]);
    }

    #[test]
    fn wrappers_are_stripped() {
        assert_eq!(parts("timeout 30 npm test"), ["npm test"]);
        assert_eq!(parts("nice -n 10 nohup cargo build"), ["cargo build"]);
        assert_eq!(parts("find . -name '*.o' | xargs -n1 -I{} rm {}"), ["find . -name '*.o'", "rm {}"]);
        assert_eq!(parts("timeout -s KILL 5s make"), ["make"]);
        assert_eq!(parts("timeout --signal=TERM -k 1 2m make all"), ["make all"]);
        assert_eq!(parts("stdbuf -oL -e 0 tail -f log"), ["tail -f log"]);
        assert_eq!(parts("time -p cargo test"), ["cargo test"]);
        assert_eq!(parts("nice -5 xargs --max-args=2 -0 echo"), ["echo"]);
        // Nothing after the wrapper, or an option it does not have: kept as written.
        assert_eq!(parts("nohup"), ["nohup"]);
        assert_eq!(parts("timeout 5"), ["timeout 5"]);
        assert_eq!(parts("time -o out.txt make"), ["time -o out.txt make"]);
        assert_eq!(parts("timeout notaduration make"), ["timeout notaduration make"]);
        assert_eq!(strip_wrappers("  nohup   nice  ls  "), "ls");
    }

    #[test]
    fn what_does_not_parse_is_one_part() {
        for bad in ["echo 'unclosed", "if then fi (", "", "   "] {
            let s = split(bad);
            assert!(!s.complete, "{bad}");
            assert_eq!(s.commands, [collapse(bad)]);
        }
    }
}
