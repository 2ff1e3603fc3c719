//! Walks the syntax tree: only lists and pipelines of simple commands with harmless
//! redirections pass; each simple command goes to the safe list.

use tree_sitter::Node;

use super::{children, commands, describe, quote, snippet, text};
use crate::words::{self, Word};

enum Item<'t> {
    /// A statement to check.
    Statement(Node<'t>),
    /// The redirections of a `redirected_statement`, checked after its body.
    Redirects(Node<'t>),
}

/// Checks every statement under `root` in source order; returns how many simple commands
/// there are, or the first reason the script is not read-only.
pub(super) fn check(root: Node<'_>, src: &str) -> Result<usize, String> {
    let mut commands_seen = 0;
    let mut stack = vec![Item::Statement(root)];
    while let Some(item) = stack.pop() {
        let node = match item {
            Item::Statement(node) => node,
            Item::Redirects(node) => {
                redirects(node, src)?;
                continue;
            }
        };
        match node.kind() {
            "program" | "list" | "pipeline" => {
                let parts = children(node);
                for part in &parts {
                    if !part.is_named() && !matches!(part.kind(), ";" | "&&" | "||" | "|" | "|&") {
                        return Err(describe(*part, src));
                    }
                }
                stack.extend(parts.into_iter().filter(|n| n.is_named()).rev().map(Item::Statement));
            }
            "comment" => {}
            "command" => {
                command(node, src)?;
                commands_seen += 1;
            }
            "negated_command" => {
                let inner: Vec<_> = children(node).into_iter().filter(|n| n.is_named()).collect();
                stack.extend(inner.into_iter().rev().map(Item::Statement));
            }
            "redirected_statement" => {
                let Some(body) = node.child_by_field_name("body") else {
                    return Err(format!("a redirection without a command {}", quote(&snippet(text(node, src)))));
                };
                stack.push(Item::Redirects(node));
                stack.push(Item::Statement(body));
            }
            _ => return Err(describe(node, src)),
        }
    }
    Ok(commands_seen)
}

/// One simple command: its name must be on the safe list, its words literal, its
/// arguments safe for it.
fn command(node: Node<'_>, src: &str) -> Result<(), String> {
    let parts = children(node);
    let Some(name_node) = parts.iter().find(|n| n.kind() == "command_name") else {
        return Err(format!("{} has no command name", quote(&snippet(text(node, src)))));
    };
    let name = command_name(*name_node, src)?;
    commands::known(&name.text)?;
    let mut args: Vec<Word> = Vec::new();
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
            kind if part.is_named() && words::is_word(kind) => args.push(words::word(part, src)?),
            _ => return Err(describe(part, src)),
        }
    }
    commands::check(&name.text, &args)
}

fn command_name(node: Node<'_>, src: &str) -> Result<Word, String> {
    let inner: Vec<_> = children(node).into_iter().filter(|n| n.is_named()).collect();
    match inner.as_slice() {
        [only] if words::is_word(only.kind()) => words::word(*only, src),
        [only] => Err(describe(*only, src)),
        _ => Err(format!("unsupported command name {}", quote(&snippet(text(node, src))))),
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
/// writes a file.
fn redirect(node: Node<'_>, src: &str) -> Result<(), String> {
    let shown = quote(&snippet(text(node, src)));
    let mut operator = None;
    let mut target = None;
    for part in children(node) {
        if !part.is_named() {
            if operator.replace(part.kind()).is_some() {
                return Err(format!("unsupported redirection {shown}"));
            }
        } else if part.kind() != "file_descriptor" && target.replace(part).is_some() {
            return Err(format!("unsupported redirection {shown}"));
        }
    }
    let target = match target {
        Some(t) if words::is_word(t.kind()) => Some(words::word(t, src)?),
        Some(t) => return Err(describe(t, src)),
        None => None,
    };
    let to = target.as_ref().map(|w| w.text.as_str());
    let is_fd = to.is_some_and(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()));
    match (operator, to) {
        (Some(">&-" | "<&-"), None) => Ok(()),
        (Some(">&" | "<&"), Some(_)) if is_fd => Ok(()),
        (Some(">" | ">>" | "&>" | "&>>" | ">|" | ">&"), Some("/dev/null")) => Ok(()),
        (Some(">" | ">>" | "&>" | "&>>" | ">|" | ">&"), Some(_)) => {
            Err(format!("output redirection to a file ({shown})"))
        }
        (Some("<"), Some(path)) if path.starts_with("/dev/tcp/") || path.starts_with("/dev/udp/") => {
            Err(format!("{shown} opens a network connection"))
        }
        (Some("<" | "<<<"), Some(_)) => Ok(()),
        _ => Err(format!("unsupported redirection {shown}")),
    }
}

/// A heredoc passes when it is only `<<DELIM`, a body without expansions, and `DELIM`.
fn heredoc(node: Node<'_>, src: &str) -> Result<(), String> {
    for part in children(node) {
        match part.kind() {
            "<<" | "<<-" if !part.is_named() => {}
            "heredoc_start" | "heredoc_end" => {}
            "heredoc_body" => {
                if let Some(inner) = children(part).into_iter().find(|n| n.kind() != "heredoc_content") {
                    return Err(format!("{} in a heredoc", describe(inner, src)));
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
