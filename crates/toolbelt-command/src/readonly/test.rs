//! `[ … ]` and `[[ … ]]` tests. A test reads at most a file's metadata and writes nothing, so
//! any word may appear in one — a variable, `$?`, a read-only command's output — except where
//! bash does more than compare:
//!
//! * `-v NAME` and `-R NAME` look a variable up by a name that may hold an array subscript,
//!   which bash evaluates (`-v 'a[$(rm x)]'` runs `rm`);
//! * inside `[[ … ]]`, `-eq`, `-lt` and the other integer comparisons evaluate their operands
//!   as arithmetic, with the same effect: only literal numbers and `$?`, `$#`, `$$` are
//!   accepted there;
//! * inside `[ … ]`, `<` and `>` are redirections (`[ a > b ]` creates `b`), and `(`, `)`,
//!   `&&`, `||` are not test syntax: the parser and bash would disagree;
//! * inside `[ … ]`, an unquoted variable or substitution may split into several words and an
//!   unquoted glob expands to file names, which could spell `-v NAME[…]` (a hostile checkout
//!   can hold files named `-v` and `a[$(rm x)]`): such words must be quoted. (`[[ … ]]` neither
//!   splits nor globs.)

use tree_sitter::Node;

use super::{children, describe, quote, snippet, text};
use crate::vars::is_arithmetic_operator;
use crate::words::{self, Scope};

/// Checks a `test_command` node.
pub(super) fn check(node: Node<'_>, src: &str, scope: &Scope<'_>) -> Result<(), String> {
    let double = text(node, src).starts_with("[[");
    let mut stack = children(node);
    while let Some(n) = stack.pop() {
        let kind = n.kind();
        if !n.is_named() {
            let allowed: &[&str] = if double {
                &["[[", "]]", "!", "(", ")", "=", "==", "!=", "=~", "<", ">", "&&", "||"]
            } else {
                &["[", "]", "!", "=", "==", "!="]
            };
            if !allowed.contains(&kind) {
                return Err(format!(
                    "{} inside {} is not classified",
                    quote(kind),
                    if double { "`[[ … ]]`" } else { "`[ … ]`" }
                ));
            }
            continue;
        }
        match kind {
            "binary_expression" => {
                let op = children(n).into_iter().find(|c| c.kind() == "test_operator").map(|c| text(c, src));
                if double && op.is_some_and(is_arithmetic_operator) {
                    for side in ["left", "right"] {
                        if let Some(operand) = n.child_by_field_name(side) {
                            numeric(operand, op.unwrap_or_default(), src, scope)?;
                        }
                    }
                }
                stack.extend(children(n));
            }
            "unary_expression" | "parenthesized_expression" => stack.extend(children(n)),
            "test_operator" => {
                let op = text(n, src);
                if matches!(op, "-v" | "-R") {
                    return Err(format!(
                        "`{op}` in a test looks a variable up by a name that may run commands (`a[$(…)]`), \
                         which is not classified"
                    ));
                }
            }
            "regex" | "extglob_pattern" => {
                if text(n, src).contains(['$', '`']) {
                    return Err(format!(
                        "the pattern {} holds an expansion, which is not classified",
                        quote(&snippet(text(n, src)))
                    ));
                }
            }
            kind if words::is_argument(kind) => {
                let word = words::expand(n, src, scope)?;
                if !double && (word.may_expand || (word.splits && !word.is_number())) {
                    return Err(format!(
                        "{} is not quoted inside `[ … ]`, so the shell may turn it into several words, which the \
                         test could read as `-v NAME` (evaluating a subscript that runs commands); quote it",
                        quote(&snippet(&word.raw))
                    ));
                }
            }
            _ => return Err(describe(n, src)),
        }
    }
    Ok(())
}

/// An operand of an integer comparison in `[[ … ]]`: a literal number, or `$?`, `$#`, `$$`,
/// `$!`.
fn numeric(node: Node<'_>, op: &str, src: &str, scope: &Scope<'_>) -> Result<(), String> {
    let word = words::expand(node, src, scope)?;
    let integer = |t: &str| {
        let digits = t.strip_prefix('-').unwrap_or(t);
        !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
    };
    let ok = if word.computed.is_some() { word.is_number() } else { word.values().all(integer) };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "`{op}` inside `[[ … ]]` evaluates {} as arithmetic, which can run commands; compare literal numbers \
             or use `[ … ]`",
            quote(&snippet(&word.raw))
        ))
    }
}
