//! A command line as the shell will run it: every simple command, with its words after quote
//! removal, its `NAME=value` prefixes, its redirections and what it reads on stdin.
//!
//! This is the model the other analyses work on: [`crate::runs`] finds the programs a
//! command line runs (wrappers stripped, `bash -c` and `eval` strings opened), and
//! [`crate::operands`] finds the files it names. A variable the script itself sets to literal
//! words (`vars.rs`) is replaced by its value, so `f=.env; cat "$f"` reads as `cat .env`;
//! when it may hold several (`for f in a b; do cat "$f"; done`), the command appears once for
//! each (up to [`MAX_VARIANTS`] per command). Other words whose value the shell decides only
//! when it runs (`$HOME`, `$(…)`, `~user`) have no value here; words the shell may turn into
//! several (unquoted globs, `{a,b}`, a loop variable over a glob) are marked. The command name
//! itself is only ever read literally: a variable there stays unknown.

use tree_sitter::Node;

use crate::tree::{children, parse, text};
use crate::vars::Vars;
use crate::words::{self, Scope};

/// Longest script analysed; a longer one is one opaque part.
pub const MAX_LEN: usize = 64 * 1024;

/// Most copies of one command made for the values its variables may hold; beyond, those
/// words have no value.
pub const MAX_VARIANTS: usize = 16;

/// One word of a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellWord {
    /// The word after quote removal, when it is literal; `None` when the shell computes it
    /// (a variable, a substitution, arithmetic, ANSI-C quoting).
    pub value: Option<String>,
    /// The source text.
    pub raw: String,
    /// Whether the shell may turn it into other words (an unquoted glob or brace expansion).
    pub expands: bool,
}

impl ShellWord {
    /// The literal value of a word that stays one word, or `None`.
    pub fn literal(&self) -> Option<&str> {
        if self.expands { None } else { self.value.as_deref() }
    }
}

/// What a redirection does with its target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedirectKind {
    /// `< file`: the command reads the file.
    Read,
    /// `> file`, `>> file`, `&> file`, `>| file`: the command writes the file.
    Write,
    /// `<> file`: both.
    ReadWrite,
    /// `2>&1`, `>&-`: descriptors only.
    Descriptor,
}

/// One redirection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    /// What it does.
    pub kind: RedirectKind,
    /// Its target (a file, or a descriptor number).
    pub target: ShellWord,
}

/// What a command gets on its standard input from the script itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stdin {
    /// Nothing the script spells out (inherited, or a pipe from the command before).
    Unknown,
    /// A heredoc or here-string whose text is literal.
    Literal(String),
    /// A heredoc or here-string with expansions in it.
    Computed,
}

/// One simple command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimpleCommand {
    /// The command name and its arguments, in order (assignments and redirections apart).
    pub words: Vec<ShellWord>,
    /// `NAME=value` prefixes, as written.
    pub assignments: Vec<String>,
    /// Its redirections, and those of any group or subshell around it.
    pub redirects: Vec<Redirect>,
    /// What it reads on stdin from the script.
    pub stdin: Stdin,
    /// Whether it reads the output of a command before it in a pipeline.
    pub piped: bool,
}

/// Every simple command of a script, in source order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Script {
    /// The commands.
    pub commands: Vec<SimpleCommand>,
    /// Whether the whole text parsed cleanly; when not, `commands` holds what could be read
    /// and the rest is unknown.
    pub complete: bool,
}

/// Parses a command line. Never fails: what cannot be read makes the script incomplete.
pub fn parse_script(source: &str) -> Script {
    if source.len() > MAX_LEN {
        return Script { commands: Vec::new(), complete: false };
    }
    match parse(source) {
        Ok(tree) => script_of(&tree, source),
        Err(_) => Script { commands: Vec::new(), complete: false },
    }
}

/// The script of a tree already parsed from `source`.
pub(crate) fn script_of(tree: &tree_sitter::Tree, source: &str) -> Script {
    let root = tree.root_node();
    let vars = Vars::of(root, source);
    let mut commands = Vec::new();
    collect(root, source, &vars, &[], &mut commands);
    Script { commands, complete: !root.has_error() }
}

/// Walks `node`, adding each simple command with the redirections that apply to it from
/// enclosing statements (`outer`).
fn collect(node: Node<'_>, src: &str, vars: &Vars, outer: &[(Redirect, Option<Stdin>)], out: &mut Vec<SimpleCommand>) {
    match node.kind() {
        "command" => {
            out.extend(command(node, src, vars, outer));
            // Substitutions inside the command's words are commands too.
            for child in children(node) {
                nested(child, src, vars, out);
            }
        }
        "redirected_statement" => {
            let body = node.child_by_field_name("body");
            let mut mine: Vec<(Redirect, Option<Stdin>)> = outer.to_vec();
            for child in children(node) {
                if Some(child.id()) != body.map(|b| b.id()) {
                    mine.extend(redirect(child, src, vars));
                    nested(child, src, vars, out);
                }
            }
            match body {
                Some(body) => collect(body, src, vars, &mine, out),
                None => out.push(bare_redirects(&mine)),
            }
            // A group or subshell whose redirections name files: keep them visible even if
            // the body holds no simple command.
            if body.is_some_and(|b| b.kind() != "command") && mine.len() > outer.len() {
                out.push(bare_redirects(&mine[outer.len()..]));
            }
        }
        "pipeline" => {
            let mut first = true;
            for child in children(node) {
                if child.is_named() {
                    let start = out.len();
                    collect(child, src, vars, outer, out);
                    if !first {
                        // The first command of this part reads the pipe, in every copy made
                        // for its variables' values (copies differ in values only).
                        let raws = |c: &SimpleCommand| c.words.iter().map(|w| w.raw.clone()).collect::<Vec<_>>();
                        let head = out.get(start).map(raws);
                        for cmd in out.iter_mut().skip(start) {
                            if Some(raws(cmd)) != head {
                                break;
                            }
                            cmd.piped = true;
                        }
                    }
                    first = false;
                }
            }
        }
        _ => {
            for child in children(node) {
                collect(child, src, vars, outer, out);
            }
        }
    }
}

/// Commands inside a word (`$(…)`, backticks, `<(…)`), found anywhere below `node`, and
/// groups the parser hangs under a command it does not know as a keyword (`coproc (rm x)`).
fn nested(node: Node<'_>, src: &str, vars: &Vars, out: &mut Vec<SimpleCommand>) {
    if matches!(node.kind(), "subshell" | "compound_statement") {
        collect(node, src, vars, &[], out);
        return;
    }
    if matches!(node.kind(), "command_substitution" | "process_substitution") {
        for child in children(node) {
            collect(child, src, vars, &[], out);
        }
        return;
    }
    for child in children(node) {
        nested(child, src, vars, out);
    }
}

/// One simple command, once for each combination of the values its variables may hold.
fn command(node: Node<'_>, src: &str, vars: &Vars, outer: &[(Redirect, Option<Stdin>)]) -> Vec<SimpleCommand> {
    let mut cmd = SimpleCommand {
        words: Vec::new(),
        assignments: Vec::new(),
        redirects: Vec::new(),
        stdin: Stdin::Unknown,
        piped: false,
    };
    for (r, stdin) in outer {
        cmd.redirects.push(r.clone());
        if let Some(stdin) = stdin {
            cmd.stdin = stdin.clone();
        }
    }
    // The other values of each word, by position.
    let mut others: Vec<Vec<String>> = Vec::new();
    for part in children(node) {
        match part.kind() {
            "command_name" => {
                if let Some(inner) = children(part).into_iter().find(|n| n.is_named()) {
                    cmd.words.push(literal(inner, src));
                    others.push(Vec::new());
                }
            }
            "variable_assignment" => cmd.assignments.push(text(part, src).to_string()),
            "file_redirect" | "herestring_redirect" | "heredoc_redirect" => {
                if let Some((r, stdin)) = redirect(part, src, vars) {
                    if r.kind != RedirectKind::Descriptor || r.target.value.is_some() {
                        cmd.redirects.push(r);
                    }
                    if let Some(stdin) = stdin {
                        cmd.stdin = stdin;
                    }
                }
            }
            kind if part.is_named() && words::is_argument(kind) => {
                let (w, more) = word(part, src, vars);
                cmd.words.push(w);
                others.push(more);
            }
            _ => {}
        }
    }
    variants(cmd, &others)
}

/// `cmd` once for each combination of its words' values (`others`: each word's values
/// besides its own), or once with those words unknown when there are too many.
fn variants(mut cmd: SimpleCommand, others: &[Vec<String>]) -> Vec<SimpleCommand> {
    let count = others.iter().try_fold(1usize, |n, o| n.checked_mul(1 + o.len()).filter(|&n| n <= MAX_VARIANTS));
    let Some(count) = count.filter(|&n| n > 1) else {
        if count.is_none() {
            for (w, o) in cmd.words.iter_mut().zip(others) {
                if !o.is_empty() {
                    w.value = None;
                }
            }
        }
        return vec![cmd];
    };
    (0..count)
        .map(|i| {
            let mut rest = i;
            let mut one = cmd.clone();
            for (w, o) in one.words.iter_mut().zip(others) {
                let pick = rest % (1 + o.len());
                rest /= 1 + o.len();
                if let Some(value) = pick.checked_sub(1).and_then(|k| o.get(k)) {
                    w.value = Some(value.clone());
                }
            }
            one
        })
        .collect()
}

fn bare_redirects(redirects: &[(Redirect, Option<Stdin>)]) -> SimpleCommand {
    SimpleCommand {
        words: Vec::new(),
        assignments: Vec::new(),
        redirects: redirects.iter().map(|(r, _)| r.clone()).collect(),
        stdin: Stdin::Unknown,
        piped: false,
    }
}

/// A word, with a value when [`words::word`] can read it literally.
fn literal(node: Node<'_>, src: &str) -> ShellWord {
    let raw = text(node, src).to_string();
    match words::word(node, src) {
        Ok(w) => ShellWord { value: Some(w.text), raw, expands: w.may_expand },
        Err(_) => ShellWord { value: None, expands: node.kind() == "brace_expression", raw },
    }
}

/// A word with the script's variables replaced by their values: the word with its first
/// value, and its other values (when a variable may hold several). No value when a part of
/// it is computed when the command runs.
fn word(node: Node<'_>, src: &str, vars: &Vars) -> (ShellWord, Vec<String>) {
    let raw = text(node, src).to_string();
    let scope = Scope { vars, substitution: &|_| Ok(()) };
    match words::expand(node, src, &scope) {
        Ok(w) if w.computed.is_none() => (ShellWord { value: Some(w.text), raw, expands: w.may_expand }, w.others),
        Ok(w) => (ShellWord { value: None, raw, expands: w.may_expand || w.splits }, Vec::new()),
        Err(_) => (ShellWord { value: None, expands: node.kind() == "brace_expression", raw }, Vec::new()),
    }
}

/// A redirection target or here-string: replaced by its variable's value only when it has
/// one.
fn single(node: Node<'_>, src: &str, vars: &Vars) -> ShellWord {
    match word(node, src, vars) {
        (w, others) if others.is_empty() => w,
        (w, _) => ShellWord { value: None, ..w },
    }
}

/// The redirection a node stands for, and what it feeds to stdin when it is a heredoc or a
/// here-string.
fn redirect(node: Node<'_>, src: &str, vars: &Vars) -> Option<(Redirect, Option<Stdin>)> {
    match node.kind() {
        "file_redirect" => {
            let mut operator = "";
            let mut target = None;
            for part in children(node) {
                if !part.is_named() {
                    operator = part.kind();
                } else if part.kind() != "file_descriptor" {
                    target = Some(single(part, src, vars));
                }
            }
            let target = target?;
            let is_fd = target.value.as_deref().is_some_and(|t| t.bytes().all(|b| b.is_ascii_digit() || b == b'-'));
            let kind = match operator {
                "<" => RedirectKind::Read,
                "<>" => RedirectKind::ReadWrite,
                ">&" | "<&" | "&>" if is_fd => RedirectKind::Descriptor,
                ">&-" | "<&-" => RedirectKind::Descriptor,
                _ => RedirectKind::Write,
            };
            Some((Redirect { kind, target }, None))
        }
        "herestring_redirect" => {
            let inner = children(node).into_iter().find(|n| n.is_named())?;
            let w = single(inner, src, vars);
            let stdin = match &w.value {
                Some(v) => Stdin::Literal(format!("{v}\n")),
                None => Stdin::Computed,
            };
            Some((Redirect { kind: RedirectKind::Descriptor, target: ShellWord { value: None, ..w } }, Some(stdin)))
        }
        "heredoc_redirect" => {
            let parts = children(node);
            let quoted = parts.iter().any(|p| p.kind() == "heredoc_start" && text(*p, src).contains(['\'', '"', '\\']));
            let body = parts.iter().find(|p| p.kind() == "heredoc_body");
            let stdin = match body {
                None => Stdin::Literal(String::new()),
                Some(b) if quoted || children(*b).iter().all(|c| c.kind() == "heredoc_content") => {
                    Stdin::Literal(text(*b, src).to_string())
                }
                Some(_) => Stdin::Computed,
            };
            let none = ShellWord { value: None, raw: String::new(), expands: false };
            Some((Redirect { kind: RedirectKind::Descriptor, target: none }, Some(stdin)))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(cmd: &SimpleCommand) -> Vec<Option<&str>> {
        cmd.words.iter().map(|w| w.value.as_deref()).collect()
    }

    #[test]
    fn words_lose_their_quotes_and_keep_what_is_computed() {
        let s = parse_script(r#"FOO=1 \rm 'a b' "c" $x "$(whoami)" *.rs"#);
        assert!(s.complete);
        let cmd = &s.commands[0];
        assert_eq!(cmd.assignments, ["FOO=1"]);
        assert_eq!(values(cmd), [Some("rm"), Some("a b"), Some("c"), None, None, Some("*.rs")]);
        assert!(cmd.words[5].expands && cmd.words[5].literal().is_none());
        assert_eq!(values(&s.commands[1]), [Some("whoami")], "the substitution's command comes after");
    }

    #[test]
    fn redirections_apply_to_the_commands_they_wrap() {
        let s = parse_script("cat < in > out 2>&1; (ls; pwd) > list");
        let cat = &s.commands[0];
        let kinds: Vec<(RedirectKind, Option<&str>)> =
            cat.redirects.iter().map(|r| (r.kind, r.target.value.as_deref())).collect();
        assert_eq!(
            kinds,
            [
                (RedirectKind::Read, Some("in")),
                (RedirectKind::Write, Some("out")),
                (RedirectKind::Descriptor, Some("1"))
            ]
        );
        assert_eq!(s.commands[1].redirects[0].target.value.as_deref(), Some("list"));
        assert_eq!(s.commands[2].redirects[0].kind, RedirectKind::Write);
    }

    #[test]
    fn heredocs_and_pipes_feed_stdin() {
        let s = parse_script("bash <<'EOF'\nrm $x\nEOF\necho rm | sh\nsh <<EOF\nrm $y\nEOF\ncat <<< 'rm z'");
        assert_eq!(s.commands[0].stdin, Stdin::Literal("rm $x\n".into()));
        assert!(!s.commands[1].piped && s.commands[2].piped);
        assert_eq!(s.commands[3].stdin, Stdin::Computed);
        assert_eq!(s.commands[4].stdin, Stdin::Literal("rm z\n".into()));
    }

    #[test]
    fn the_script_s_own_variables_are_replaced_by_their_values() {
        let s = parse_script("f=.env; cat \"$f\" < \"$f\"; for d in a 'b c'; do ls \"$d\"/x; done");
        assert_eq!(values(&s.commands[0]), [Some("cat"), Some(".env")]);
        assert_eq!(s.commands[0].redirects[0].target.value.as_deref(), Some(".env"));
        assert_eq!(values(&s.commands[1]), [Some("ls"), Some("a/x")]);
        assert_eq!(values(&s.commands[2]), [Some("ls"), Some("b c/x")], "one copy per value");
        let s = parse_script("for f in *.rs; do cat \"$f\"; done");
        assert!(s.commands[0].words[1].expands, "a loop over a glob's matches");
        // Unknown: the environment's variables, unquoted values that split, computed ones,
        // uppercase names, and the command name.
        for script in [
            "cat \"$HOME\"",
            "f='a b'; cat $f",
            "f=$(pwd); cat \"$f\"",
            "RANDOM=1; cat \"$RANDOM\"",
            "f=a; read f; cat \"$f\"",
        ] {
            let s = parse_script(script);
            let cat = s.commands.iter().find(|c| values(c).first() == Some(&Some("cat")));
            assert_eq!(cat.map(|c| c.words[1].value.clone()), Some(None), "{script}");
        }
        let s = parse_script("c=rm; $c x");
        assert_eq!(values(&s.commands[0]), [None, Some("x")]);
        // Too many combinations: the words that vary have no value.
        let s = parse_script("for a in 1 2 3 4 5; do for b in 1 2 3 4; do echo \"$a\" \"$b\" z; done; done");
        assert_eq!(s.commands.len(), 1);
        assert_eq!(values(&s.commands[0]), [Some("echo"), None, None, Some("z")]);
        let s = parse_script("for a in 1 2; do echo x | cat \"$a\"; done");
        assert_eq!(s.commands.iter().map(|c| c.piped).collect::<Vec<_>>(), [false, true, true]);
    }

    #[test]
    fn what_does_not_parse_is_incomplete() {
        assert!(!parse_script("echo 'unclosed").complete);
        assert!(!parse_script("{rm,x} y").complete);
        assert!(!parse_script(&"a".repeat(MAX_LEN + 1)).complete);
    }
}
