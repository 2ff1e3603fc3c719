//! The shell variables a script sets itself, and to what: what lets `f=README.md; wc -l "$f"`
//! be read as `wc -l README.md`, and `for f in *.rs; do wc -l "$f"; done` as `wc -l` of each
//! `.rs` file.
//!
//! A variable is *bound* at a use when its name is lowercase (bash gives uppercase ones
//! values of its own), the text proves the script set it before that use, and nothing the
//! text cannot follow may set it:
//!
//! * a `NAME=value` statement that always runs — at the top level of the script, or first in
//!   an `&&`/`||` list there, never in a condition, loop, group, subshell, pipeline or
//!   background job — binds `NAME` from the end of that statement on;
//! * `for NAME in WORDS` binds `NAME` inside the loop's body.
//!
//! A bound variable may hold any value *any* assignment in the script gives it (a loop may
//! run an assignment below a use before that use runs again), so its values are the union of
//! all of them: literal words ([`Value`]), or, when one of them is computed (`n=$(pwd)`,
//! `rc=$?`), unknown ([`Binding::Computed`]).
//!
//! The script's own variables are only followed when nothing in it may set variables in ways
//! the text does not show: `read`, `mapfile`, `printf -v`, `declare`/`local`/`export`,
//! `unset`, `let`, `eval`, `source`, `getopts`, `wait -p`, `coproc`, `trap`, `alias`, `time`,
//! `command`/`builtin`/`exec` before another command, a command whose name is computed,
//! function definitions, arithmetic (`$((…))`, `((…))`, `for ((…))`, `-eq` inside `[[ … ]]`,
//! array subscripts), `${x:=…}` and other operators, `{fd}>` redirections, `select`, and an
//! assignment to `IFS`. A `NAME=value` prefix of a command, `+=`, an array value or `for NAME`
//! without `in` leave that one name unbound.

use std::collections::HashMap;
use std::ops::Range;

use tree_sitter::Node;

use crate::tree::{children, is_plain_expansion, text};
use crate::words::{self, Binding, Lookup, Value};

/// Commands that may set shell variables the text does not name as assignments.
const SETTERS: &[&str] = &[
    "read",
    "mapfile",
    "readarray",
    "declare",
    "typeset",
    "local",
    "export",
    "readonly",
    "let",
    "getopts",
    "unset",
    "eval",
    "source",
    ".",
    "builtin",
    "command",
    "exec",
    "enable",
    "trap",
    "alias",
    "wait",
    "time",
    "coproc",
    "fc",
    "select",
];

#[derive(Debug, Default)]
struct Var {
    values: Vec<Value>,
    computed: bool,
    /// Set in a way that is not followed.
    lost: bool,
    /// Byte ranges of the script where every run has set it.
    scopes: Vec<Range<usize>>,
}

/// The variables a script sets itself; see the module docs.
#[derive(Debug, Default)]
pub(crate) struct Vars {
    vars: HashMap<String, Var>,
    /// Something may set any variable: none is bound.
    opaque: bool,
}

impl Vars {
    /// No variable bound (a script read without its assignments).
    pub(crate) fn none() -> Vars {
        Vars { vars: HashMap::new(), opaque: true }
    }

    /// The variables the script under `root` sets.
    pub(crate) fn of(root: Node<'_>, src: &str) -> Vars {
        let mut vars = Vars::default();
        if has_fd_variable(src) {
            return Vars::none();
        }
        let mut stack = vec![root];
        while let Some(node) = stack.pop() {
            if vars.visit(node, src).is_err() {
                return Vars::none();
            }
            stack.extend(children(node).into_iter().rev());
        }
        vars
    }

    /// What `name` holds at byte `at` of the script. Only [private](is_private) names are
    /// ever bound: bash gives many uppercase ones values of its own (`RANDOM`, `PWD`,
    /// `BASH_REMATCH`, read-only `UID`…).
    pub(crate) fn lookup(&self, name: &str, at: usize) -> Binding<'_> {
        if !is_private(name) {
            return Binding::Unbound;
        }
        let Some(var) = self.vars.get(name).filter(|_| !self.opaque) else { return Binding::Unbound };
        if var.lost || !var.scopes.iter().any(|r| r.contains(&at)) {
            Binding::Unbound
        } else if var.computed {
            Binding::Computed
        } else {
            Binding::Values(&var.values)
        }
    }

    /// Records what `node` sets; `Err` when it may set variables the text does not show.
    fn visit(&mut self, node: Node<'_>, src: &str) -> Result<(), ()> {
        match node.kind() {
            "variable_assignment" => self.assignment(node, src),
            "for_statement" => self.for_loop(node, src),
            "c_style_for_statement"
            | "function_definition"
            | "declaration_command"
            | "unset_command"
            | "arithmetic_expansion"
            | "subscript" => Err(()),
            "compound_statement" if text(node, src).starts_with("((") => Err(()),
            "expansion" if !is_plain_expansion(node) => Err(()),
            "test_command" if text(node, src).starts_with("[[") && has_arithmetic(node, src) => Err(()),
            "command" => match node.child_by_field_name("name").map(|n| command_name(n, src)) {
                Some(Some(name)) if SETTERS.contains(&name.as_str()) => Err(()),
                Some(Some(name)) if name == "printf" && assigns_with_printf(node, src) => Err(()),
                Some(Some(name)) if matches!(name.as_str(), "cd" | "pushd" | "popd") => {
                    for lost in ["PWD", "OLDPWD", "DIRSTACK"] {
                        self.var(lost).lost = true;
                    }
                    Ok(())
                }
                Some(Some(_)) => Ok(()),
                _ => Err(()),
            },
            _ => Ok(()),
        }
    }

    fn var(&mut self, name: &str) -> &mut Var {
        self.vars.entry(name.to_string()).or_default()
    }

    fn assignment(&mut self, node: Node<'_>, src: &str) -> Result<(), ()> {
        let Some(name_node) = node.child_by_field_name("name").filter(|n| n.kind() == "variable_name") else {
            return Err(());
        };
        let name = text(name_node, src);
        if name == "IFS" {
            return Err(());
        }
        let prefix = node.parent().is_some_and(|p| p.kind() == "command");
        let appends = children(node).iter().any(|c| !c.is_named() && c.kind() == "+=");
        let value = node.child_by_field_name("value");
        let definite = always_runs(node);
        let var = self.var(name);
        if prefix || appends || value.is_some_and(|v| v.kind() == "array") {
            var.lost = true;
            return Ok(());
        }
        match value.map(|v| words::word(v, src)) {
            None => var.values.push(Value { text: String::new(), glob: false }),
            Some(Ok(word)) => var.values.push(Value { text: word.text, glob: false }),
            Some(Err(_)) => var.computed = true,
        }
        if definite {
            var.scopes.push(node.end_byte()..usize::MAX);
        }
        Ok(())
    }

    fn for_loop(&mut self, node: Node<'_>, src: &str) -> Result<(), ()> {
        if children(node).first().is_none_or(|k| k.kind() != "for") {
            return Err(());
        }
        let Some(name_node) = node.child_by_field_name("variable") else { return Err(()) };
        let name = text(name_node, src);
        if name == "IFS" {
            return Err(());
        }
        let mut cursor = node.walk();
        let items: Vec<Node<'_>> = node.children_by_field_name("value", &mut cursor).collect();
        let body = node.child_by_field_name("body");
        let var = self.var(name);
        if items.is_empty() {
            var.lost = true;
            return Ok(());
        }
        for item in items {
            match words::word(item, src) {
                Ok(word) if !word.brace => var.values.push(Value { text: word.text, glob: word.may_expand }),
                _ => var.computed = true,
            }
        }
        if let Some(body) = body {
            var.scopes.push(body.byte_range());
        }
        Ok(())
    }
}

impl Lookup for Vars {
    fn lookup(&self, name: &str, at: usize) -> Binding<'_> {
        Vars::lookup(self, name, at)
    }
}

/// A lowercase name: bash sets none of its own variables so (`histchars` and `auto_resume`
/// only matter to an interactive shell), and programs read their settings from uppercase ones.
pub(crate) fn is_private(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_lowercase())
        && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// Whether an assignment statement runs whenever the script gets past it: at the top level
/// (or first in an `&&`/`||` list there), not in the background.
fn always_runs(node: Node<'_>) -> bool {
    let mut current = node;
    if let Some(parent) = node.parent().filter(|p| p.kind() == "variable_assignments") {
        current = parent;
    }
    loop {
        let Some(parent) = current.parent() else { return false };
        match parent.kind() {
            "program" => return current.next_sibling().is_none_or(|s| s.kind() != "&"),
            "list" if parent.named_child(0).is_some_and(|first| first.id() == current.id()) => current = parent,
            _ => return false,
        }
    }
}

/// Whether a `[[ … ]]` test compares numbers (`-eq`, `-lt`…): bash evaluates those operands
/// as arithmetic, which can assign variables.
fn has_arithmetic(node: Node<'_>, src: &str) -> bool {
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        if n.kind() == "test_operator" && is_arithmetic_operator(text(n, src)) {
            return true;
        }
        stack.extend(children(n));
    }
    false
}

/// The operators of `test` and `[[ … ]]` that compare integers.
pub(crate) fn is_arithmetic_operator(op: &str) -> bool {
    matches!(op, "-eq" | "-ne" | "-lt" | "-le" | "-gt" | "-ge")
}

fn command_name(node: Node<'_>, src: &str) -> Option<String> {
    let inner = children(node).into_iter().find(|n| n.is_named())?;
    words::word(inner, src).ok().filter(|w| !w.may_expand).map(|w| w.text)
}

/// `printf -v NAME …`.
fn assigns_with_printf(node: Node<'_>, src: &str) -> bool {
    let mut cursor = node.walk();
    let mut args = node.children_by_field_name("argument", &mut cursor);
    args.next().is_none_or(|first| words::word(first, src).map_or(true, |w| w.text.starts_with("-v")))
}

/// `{name}>file` and `{name}<file` store a descriptor in `name`.
fn has_fd_variable(src: &str) -> bool {
    let bytes = src.as_bytes();
    let mut i = 0;
    while let Some(open) = bytes.get(i..).and_then(|rest| rest.iter().position(|&b| b == b'{')) {
        let start = i + open + 1;
        let len = bytes
            .get(start..)
            .map_or(0, |rest| rest.iter().take_while(|b| b.is_ascii_alphanumeric() || **b == b'_').count());
        if len > 0 && bytes.get(start + len) == Some(&b'}') && matches!(bytes.get(start + len + 1), Some(b'<' | b'>')) {
            return true;
        }
        i = start;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(src: &str) -> (Vars, tree_sitter::Tree) {
        let tree = crate::tree::parse(src).unwrap();
        (Vars::of(tree.root_node(), src), tree)
    }

    fn at(src: &str, marker: &str) -> usize {
        src.rfind(marker).unwrap()
    }

    fn values(b: Binding<'_>) -> Option<Vec<String>> {
        match b {
            Binding::Values(v) => Some(v.iter().map(|v| v.text.clone()).collect()),
            _ => None,
        }
    }

    #[test]
    fn bound_after_a_statement_that_always_runs() {
        let src = "cat \"$f\"; f=a.txt; wc -l \"$f\"; f=b.txt";
        let (v, _) = vars(src);
        assert_eq!(v.lookup("f", at(src, "cat")), Binding::Unbound, "before the assignment");
        assert_eq!(values(v.lookup("f", at(src, "wc"))), Some(vec!["a.txt".into(), "b.txt".into()]));
        for src in [
            "true && f=a; cat \"$f\"",
            "if x; then f=a; fi; cat \"$f\"",
            "(f=a); cat \"$f\"",
            "f=a | x; cat \"$f\"",
            "f=a & cat \"$f\"",
            "{ f=a; }; cat \"$f\"",
        ] {
            let (v, _) = vars(src);
            assert_eq!(v.lookup("f", at(src, "cat")), Binding::Unbound, "{src}");
        }
        let src = "f=a && cat \"$f\"";
        assert!(values(vars(src).0.lookup("f", at(src, "cat"))).is_some());
    }

    #[test]
    fn loop_variables_inside_their_body() {
        let src = "for f in *.rs b; do wc -l \"$f\"; done; cat \"$f\"";
        let (v, _) = vars(src);
        let Binding::Values(values) = v.lookup("f", at(src, "wc")) else { panic!() };
        assert_eq!(values, [Value { text: "*.rs".into(), glob: true }, Value { text: "b".into(), glob: false }]);
        assert_eq!(v.lookup("f", at(src, "cat")), Binding::Unbound);
        let src = "for f in $(ls); do echo \"$f\"; done";
        assert_eq!(vars(src).0.lookup("f", at(src, "echo")), Binding::Computed);
    }

    #[test]
    fn what_the_text_cannot_follow_unbinds() {
        for src in [
            "f=a; read f; cat \"$f\"",
            "f=a; eval x; cat \"$f\"",
            "f=a; g() { :; }; cat \"$f\"",
            "f=a; export g=1; cat \"$f\"",
            "f=a; echo $((g=1)); cat \"$f\"",
            "f=a; ((g++)); cat \"$f\"",
            "f=a; $x; cat \"$f\"",
            "f=a; printf -v f x; cat \"$f\"",
            "f=a; : ${f:=b}; cat \"$f\"",
            "f=a; exec {f}<x; cat \"$f\"",
            "f=a; [[ 1 -eq g ]]; cat \"$f\"",
            "f=a; IFS=/; cat \"$f\"",
            "f=a; f+=b; cat \"$f\"",
            "f=a; f=b true; cat \"$f\"",
            "f=a; f=(b); cat \"$f\"",
            "f=a; time read f; cat \"$f\"",
        ] {
            let (v, _) = vars(src);
            assert_eq!(v.lookup("f", at(src, "cat")), Binding::Unbound, "{src}");
        }
        let src = "n=$(git rev-parse HEAD); rc=$?; echo \"$n $rc\"";
        let (v, _) = vars(src);
        assert_eq!(v.lookup("n", at(src, "echo")), Binding::Computed);
        assert_eq!(v.lookup("rc", at(src, "echo")), Binding::Computed);
    }
}
