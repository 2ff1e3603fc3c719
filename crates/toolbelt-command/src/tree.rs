//! Tree-sitter-bash, shared: one parser per thread, and the small helpers every reading of a
//! command (the read-only classifier, the script model, the word reader) needs.

use std::cell::RefCell;

use tree_sitter::{Node, Parser, Tree};

thread_local! {
    static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

/// Parses with this thread's parser (created on first use).
pub(crate) fn parse(command: &str) -> Result<Tree, String> {
    PARSER.with(|cell| {
        let mut slot = cell.try_borrow_mut().map_err(|_| "the shell parser is busy on this thread".to_string())?;
        if slot.is_none() {
            let mut parser = Parser::new();
            parser
                .set_language(&tree_sitter_bash::LANGUAGE.into())
                .map_err(|e| format!("the shell parser could not load the bash grammar ({e})"))?;
            *slot = Some(parser);
        }
        let Some(parser) = slot.as_mut() else {
            return Err("the shell parser is unavailable".to_string());
        };
        let tree = parser.parse(command, None);
        if tree.is_none() {
            parser.reset();
        }
        tree.ok_or_else(|| "the shell parser gave up on the command".to_string())
    })
}

/// The source text of `node`.
pub(crate) fn text<'s>(node: Node<'_>, src: &'s str) -> &'s str {
    src.get(node.byte_range()).unwrap_or("")
}

/// The children of `node`, named and anonymous, in order.
pub(crate) fn children<'t>(node: Node<'t>) -> Vec<Node<'t>> {
    let mut cursor = node.walk();
    node.children(&mut cursor).collect()
}

/// `s` on one line, cut to about 40 characters.
pub(crate) fn snippet(s: &str) -> String {
    let one_line = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= 40 {
        one_line
    } else {
        let cut: String = one_line.chars().take(37).collect();
        format!("{cut}…")
    }
}

/// `s` in Markdown code quotes (double backticks when `s` holds one).
pub(crate) fn quote(s: &str) -> String {
    if s.contains('`') { format!("`` {s} ``") } else { format!("`{s}`") }
}

/// Why a syntax node that is not a plain word or simple command rejects the command.
pub(crate) fn describe(node: Node<'_>, src: &str) -> String {
    let shown = quote(&snippet(text(node, src)));
    match node.kind() {
        "command_substitution" => format!("command substitution {shown}"),
        "simple_expansion" | "expansion" => format!("variable expansion {shown}"),
        "arithmetic_expansion" => format!("arithmetic expansion {shown}"),
        "process_substitution" => format!("process substitution {shown}"),
        "brace_expression" => format!("brace expansion {shown}"),
        "ansi_c_string" => format!("ANSI-C quoting {shown} is not classified"),
        "translated_string" | "$" => format!("locale translation {shown} is not classified"),
        "subshell" => format!("a subshell {shown}"),
        "compound_statement" => format!("a command group {shown}"),
        "if_statement" | "for_statement" | "c_style_for_statement" | "while_statement" | "case_statement" => {
            format!("control flow {shown}")
        }
        "function_definition" => format!("a function definition {shown}"),
        "variable_assignment" | "variable_assignments" => format!("a variable assignment {shown}"),
        "declaration_command" | "unset_command" => format!("{shown} changes shell variables"),
        "test_command" => format!("a test expression {shown} is not classified"),
        "&" => "`&` runs a command in the background".into(),
        kind if node.is_named() => format!("unsupported shell syntax {shown} ({kind})"),
        _ => format!("unsupported shell syntax {shown}"),
    }
}
