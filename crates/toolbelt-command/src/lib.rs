//! Shell command analysis, shared by the policy (rules about commands) and the shell tool
//! (whether a command may run beside other calls).
//!
//! A leaf crate below both, so neither has to see the other: the policy never sees a
//! concrete tool, and a tool never sees the policy. It parses with tree-sitter-bash and
//! errs on the side of caution — anything it cannot prove read-only is not.

pub mod operands;
pub mod readonly;
pub mod runs;
pub mod script;
pub mod split;
mod tree;
mod words;
mod wrappers;

pub use readonly::{Classification, classify, is_read_only};
pub use split::{Split, split, strip_wrappers};
