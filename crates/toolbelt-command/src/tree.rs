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
        "command_substitution" => format!("the command substitution {shown} is not classified here"),
        "simple_expansion" | "expansion" => format!("the variable expansion {shown} is not classified here"),
        "arithmetic_expansion" => format!("the arithmetic expansion {shown} can run commands and is not classified"),
        "process_substitution" => format!("the process substitution {shown} is not classified"),
        "brace_expression" => format!("the brace expansion {shown} is not classified here"),
        "ansi_c_string" => format!("the ANSI-C quoting {shown} is not classified"),
        "translated_string" | "$" => format!("the locale translation {shown} is not classified"),
        "subshell" => format!("the subshell {shown} is not classified here"),
        "compound_statement" => format!("the command group {shown} is not classified here"),
        "c_style_for_statement" => format!("the arithmetic `for` loop {shown} is not classified"),
        "while_statement" => format!("the `while` loop {shown} is not classified"),
        "case_statement" => format!("the `case` statement {shown} is not classified"),
        "if_statement" | "for_statement" => format!("the control flow {shown} is not classified here"),
        "function_definition" => format!("the function definition {shown} is not classified"),
        "variable_assignment" | "variable_assignments" => {
            format!("the variable assignment {shown} is not classified here")
        }
        "declaration_command" | "unset_command" => format!("{shown} changes shell variables"),
        "test_command" => format!("the test expression {shown} is not classified here"),
        "&" => "`&` runs a command in the background".into(),
        kind if node.is_named() => format!("the shell syntax {shown} ({kind}) is not classified"),
        _ => format!("the shell syntax {shown} is not classified"),
    }
}

/// `${name}` or `${?}` with nothing else inside.
pub(crate) fn is_plain_expansion(node: Node<'_>) -> bool {
    let parts = children(node);
    matches!(parts.as_slice(), [open, name, close]
        if open.kind() == "${" && close.kind() == "}"
            && matches!(name.kind(), "variable_name" | "special_variable_name"))
}
