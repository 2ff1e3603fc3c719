//! Shell command analysis, shared by the policy (rules about commands) and the shell tool
//! (whether a command may run beside other calls).
//!
//! A leaf crate below both, so neither has to see the other: the policy never sees a
//! concrete tool, and a tool never sees the policy. It parses with tree-sitter-bash and
//! errs on the side of caution — anything it cannot prove read-only is not.

pub mod destructive;
mod follows;
pub mod history;
pub mod operands;
pub mod readonly;
pub mod runs;
pub mod script;
pub mod split;
mod tree;
mod vars;
mod words;
mod wrappers;

pub use readonly::{Classification, classify, is_read_only};

/// What rules need of a command line, from one parse: its simple commands as written
/// ([`split()`]) and the programs it runs ([`runs::runs`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Analysis {
    /// The simple commands as written, for allow rules and the mode.
    pub split: Split,
    /// The programs it runs, for deny and ask rules.
    pub runs: Vec<runs::Run>,
}

/// [`split()`] and [`runs::runs`] of `command`, parsing it once.
pub fn analyze(command: &str) -> Analysis {
    let fallback = || Analysis { split: split::split(command), runs: runs::runs(command) };
    if command.trim().is_empty() || command.len() > script::MAX_LEN {
        return fallback();
    }
    let Ok(tree) = tree::parse(command) else { return fallback() };
    let mut runs = Vec::new();
    runs::runs_of(&script::script_of(&tree, command), command, 0, &mut runs);
    Analysis { split: split::split_tree(&tree, command), runs }
}
pub use split::{Split, split, strip_wrappers};
