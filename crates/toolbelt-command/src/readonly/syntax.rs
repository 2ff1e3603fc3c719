//! Walks the syntax tree: lists, pipelines, `for` loops, `if`, groups and subshells of simple
//! commands, assignments and tests with harmless redirections pass; each simple command goes
//! to the safe list.

use tree_sitter::Node;

use super::{children, commands, describe, quote, snippet, test, text};
use crate::vars::{Vars, is_private};
use crate::words::{self, Scope, Word};

/// How deep command substitutions inside command substitutions are followed.
const MAX_NESTING: usize = 4;

enum Item<'t> {
    /// A statement to check.
    Statement(Node<'t>),
    /// The redirections of a `redirected_statement`, checked after its body.
    Redirects(Node<'t>),
}

/// The tokens each kind of statement list may hold besides its statements.
fn separators(kind: &str) -> Option<&'static [&'static str]> {
    Some(match kind {
        "program" | "list" | "pipeline" => &[";", "&&", "||", "|", "|&"],
        "do_group" => &["do", "done", ";"],
        "subshell" => &["(", ")", ";"],
        "compound_statement" => &["{", "}", ";"],
        "if_statement" => &["if", "then", "fi", ";"],
        "elif_clause" => &["elif", "then", ";"],
        "else_clause" => &["else", ";"],
        "negated_command" => &["!"],
        _ => return None,
    })
}

/// Checks a script against the safe list, with the variables it sets itself.
pub(super) struct Checker<'s> {
    src: &'s str,
    vars: Vars,
}

impl<'s> Checker<'s> {
    /// A checker for the script under `root`.
    pub(super) fn new(root: Node<'_>, src: &'s str) -> Self {
        Checker { src, vars: Vars::of(root, src) }
    }

    /// Checks every statement under `roots` in source order; returns how many statements
    /// there are, or the first reason the script is not read-only.
    pub(super) fn statements(&self, roots: Vec<Node<'_>>, depth: usize) -> Result<usize, String> {
        let src = self.src;
        let mut seen = 0;
        let mut stack: Vec<Item<'_>> = roots.into_iter().rev().map(Item::Statement).collect();
        while let Some(item) = stack.pop() {
            let node = match item {
                Item::Statement(node) => node,
                Item::Redirects(node) => {
                    redirects(node, src)?;
                    continue;
                }
            };
            let kind = node.kind();
            if let Some(allowed) = separators(kind) {
                if kind == "compound_statement" && text(node, src).starts_with("((") {
                    return Err(format!(
                        "the arithmetic command {} is not classified",
                        quote(&snippet(text(node, src)))
                    ));
                }
                let parts = children(node);
                if let Some(odd) = parts.iter().find(|p| !p.is_named() && !allowed.contains(&p.kind())) {
                    return Err(describe(*odd, src));
                }
                stack.extend(parts.into_iter().filter(|n| n.is_named()).rev().map(Item::Statement));
                continue;
            }
            match kind {
                "comment" => continue,
                "command" => self.command(node, depth)?,
                "variable_assignment" => self.assignment(node, depth)?,
                "variable_assignments" => {
                    for part in children(node).into_iter().filter(|n| n.is_named()) {
                        self.assignment(part, depth)?;
                    }
                }
                "for_statement" => {
                    let body = self.for_loop(node, depth)?;
                    stack.push(Item::Statement(body));
                }
                "test_command" => test::check(node, src, &self.scope(&|n| self.substitution(n, depth + 1)))?,
                "redirected_statement" => {
                    let Some(body) = node.child_by_field_name("body") else {
                        return Err(format!("{} redirects without a command", quote(&snippet(text(node, src)))));
                    };
                    stack.push(Item::Redirects(node));
                    stack.push(Item::Statement(body));
                    continue;
                }
                _ => return Err(describe(node, src)),
            }
            seen += 1;
        }
        Ok(seen)
    }

    fn scope<'a>(&'a self, substitution: &'a dyn Fn(Node<'_>) -> Result<(), String>) -> Scope<'a> {
        Scope { vars: &self.vars, substitution }
    }

    /// `$(…)` (or backticks without backslashes) whose script is read-only.
    fn substitution(&self, node: Node<'_>, depth: usize) -> Result<(), String> {
        let shown = quote(&snippet(text(node, self.src)));
        if depth > MAX_NESTING {
            return Err(format!("{shown} nests command substitutions more than {MAX_NESTING} deep"));
        }
        let body = text(node, self.src);
        if body.starts_with('`') && body.contains('\\') {
            return Err(format!("{shown} uses backslashes inside backticks, which is not classified; use `$(…)`"));
        }
        let inner: Vec<Node<'_>> = children(node).into_iter().filter(|n| n.is_named()).collect();
        self.statements(inner, depth).map(|_| ())
    }

    /// One simple command: its name must be on the safe list and literal, its arguments
    /// safe for it.
    fn command(&self, node: Node<'_>, depth: usize) -> Result<(), String> {
        let src = self.src;
        let parts = children(node);
        let Some(name_node) = parts.iter().copied().find(|n| n.kind() == "command_name") else {
            return Err(format!("{} has no command name", quote(&snippet(text(node, src)))));
        };
        let name = command_name(name_node, src)?;
        commands::known(&name.text)?;
        let substitution = |n: Node<'_>| self.substitution(n, depth + 1);
        let scope = self.scope(&substitution);
        let mut args: Vec<Word> = Vec::new();
        let mut previous_end = name_node.end_byte();
        for part in parts {
            match part.kind() {
                "command_name" => {}
                "variable_assignment" => {
                    return Err(format!(
                        "the environment assignment {} can change what `{}` does",
                        quote(&snippet(text(part, src))),
                        name.text
                    ));
                }
                "file_redirect" | "herestring_redirect" => redirect(part, src)?,
                kind if part.is_named() && words::is_argument(kind) => {
                    if part.start_byte() == previous_end {
                        return Err(format!(
                            "{} is read as two words by the parser but as one by bash; add quotes",
                            quote(&snippet(src.get(name_node.start_byte()..part.end_byte()).unwrap_or_default()))
                        ));
                    }
                    previous_end = part.end_byte();
                    args.push(words::expand(part, src, &scope)?);
                }
                _ => return Err(describe(part, src)),
            }
        }
        commands::check(&name.text, &args)
    }

    /// `name=value` as a statement: a lowercase name (programs do not read it from the
    /// environment), a value that is literal or read-only to compute.
    fn assignment(&self, node: Node<'_>, depth: usize) -> Result<(), String> {
        let src = self.src;
        let shown = quote(&snippet(text(node, src)));
        let Some(name) = node.child_by_field_name("name").filter(|n| n.kind() == "variable_name") else {
            return Err(format!("{shown} assigns an array element, which is not classified"));
        };
        let name = text(name, src);
        if !is_private(name) {
            return Err(format!(
                "{shown} sets `{name}`, which programs may read from the environment; only variables with \
                 lowercase names are treated as the command's own"
            ));
        }
        if children(node).iter().any(|c| !c.is_named() && c.kind() == "+=") {
            return Err(format!("{shown} appends to a variable, which is not classified"));
        }
        match node.child_by_field_name("value") {
            None => Ok(()),
            Some(v) if v.kind() == "array" => Err(format!("{shown} assigns an array, which is not classified")),
            Some(value) => {
                let substitution = |n: Node<'_>| self.substitution(n, depth + 1);
                words::expand(value, src, &self.scope(&substitution)).map(|_| ())
            }
        }
    }

    /// `for name in words; do …; done`: the loop's words may be computed (the body's commands
    /// decide where its variable may go); returns the body.
    fn for_loop<'t>(&self, node: Node<'t>, depth: usize) -> Result<Node<'t>, String> {
        let src = self.src;
        if children(node).first().is_none_or(|k| k.kind() != "for") {
            return Err("a `select` loop reads from the terminal and is not classified".into());
        }
        let name = node.child_by_field_name("variable").map_or("", |n| text(n, src));
        if !is_private(name) {
            return Err(format!(
                "the loop sets `{name}`, which programs may read from the environment; only variables with \
                 lowercase names are treated as the command's own"
            ));
        }
        let mut cursor = node.walk();
        let items: Vec<Node<'_>> = node.children_by_field_name("value", &mut cursor).collect();
        if items.is_empty() {
            return Err(format!(
                "`for {name}` without `in` loops over the shell's parameters, which is not classified"
            ));
        }
        let substitution = |n: Node<'_>| self.substitution(n, depth + 1);
        let scope = self.scope(&substitution);
        for item in items {
            words::expand(item, src, &scope)?;
        }
        node.child_by_field_name("body").ok_or_else(|| format!("`for {name}` has no body"))
    }
}

fn command_name(node: Node<'_>, src: &str) -> Result<Word, String> {
    let inner: Vec<_> = children(node).into_iter().filter(|n| n.is_named()).collect();
    let shown = quote(&snippet(text(node, src)));
    let mut stack = inner.clone();
    while let Some(n) = stack.pop() {
        if matches!(n.kind(), "simple_expansion" | "expansion" | "command_substitution" | "arithmetic_expansion") {
            return Err(format!("{shown} in command position decides the program only when the command runs"));
        }
        stack.extend(children(n));
    }
    match inner.as_slice() {
        [only] if words::is_word(only.kind()) => words::word(*only, src),
        [only] => Err(describe(*only, src)),
        _ => Err(format!("the command name {shown} is not a plain word")),
    }
}

/// The redirections of a `redirected_statement` (its body is checked on its own).
fn redirects(node: Node<'_>, src: &str) -> Result<(), String> {
    let body = node.child_by_field_name("body").map(|b| b.id());
    for part in children(node) {
        if Some(part.id()) == body {
            continue;
        }
        match part.kind() {
            "file_redirect" | "herestring_redirect" => redirect(part, src)?,
            "heredoc_redirect" => heredoc(part, src)?,
            _ => return Err(describe(part, src)),
        }
    }
    Ok(())
}

/// `<`, `<<<`, fd duplication and closing, and output to `/dev/null` pass; other output
/// writes a file. Targets must be literal.
fn redirect(node: Node<'_>, src: &str) -> Result<(), String> {
    let shown = quote(&snippet(text(node, src)));
    let mut operator = None;
    let mut target = None;
    for part in children(node) {
        if !part.is_named() {
            if operator.replace(part.kind()).is_some() {
                return Err(format!("the redirection {shown} is not classified"));
            }
        } else if part.kind() != "file_descriptor" && target.replace(part).is_some() {
            return Err(format!("the redirection {shown} is not classified"));
        }
    }
    let target = match target {
        Some(t) if words::is_word(t.kind()) => Some(words::word(t, src).map_err(|_| computed_target(&shown))?),
        Some(t) if words::is_argument(t.kind()) => return Err(computed_target(&shown)),
        Some(t) => return Err(describe(t, src)),
        None => None,
    };
    let to = target.as_ref().map(|w| w.text.as_str());
    let is_fd = to.is_some_and(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()));
    match (operator, to) {
        (Some(">&-" | "<&-"), None) => Ok(()),
        (Some(">&" | "<&"), Some(_)) if is_fd => Ok(()),
        (Some(">" | ">>" | "&>" | "&>>" | ">|" | ">&"), Some("/dev/null")) => Ok(()),
        (Some(">" | ">>" | "&>" | "&>>" | ">|" | ">&"), Some(_)) => Err(format!("{shown} writes to a file")),
        (Some("<"), Some(path)) if path.starts_with("/dev/tcp/") || path.starts_with("/dev/udp/") => {
            Err(format!("{shown} opens a network connection"))
        }
        (Some("<" | "<<<"), Some(_)) => Ok(()),
        _ => Err(format!("the redirection {shown} is not classified")),
    }
}

fn computed_target(shown: &str) -> String {
    format!("the redirection {shown} names its target with an expansion, so which file it opens is not known")
}

/// A heredoc passes when it is only `<<DELIM`, a body without expansions, and `DELIM`.
fn heredoc(node: Node<'_>, src: &str) -> Result<(), String> {
    for part in children(node) {
        match part.kind() {
            "<<" | "<<-" if !part.is_named() => {}
            "heredoc_start" | "heredoc_end" => {}
            "heredoc_body" => {
                if let Some(inner) = children(part).into_iter().find(|n| n.kind() != "heredoc_content") {
                    return Err(format!(
                        "the heredoc expands {}, which is not classified",
                        quote(&snippet(text(inner, src)))
                    ));
                }
            }
            _ => {
                return Err(format!(
                    "a heredoc with more on its first line ({}) is not classified",
                    quote(&snippet(text(part, src)))
                ));
            }
        }
    }
    Ok(())
}
