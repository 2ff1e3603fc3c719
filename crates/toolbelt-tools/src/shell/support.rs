//! What the shell tools share: none of it is a tool.

pub(crate) mod background;
pub(crate) mod capture;
pub(crate) mod cgroup;
pub(crate) mod config;
pub(crate) mod confine;
pub(crate) mod cwd;
pub(crate) mod deny;
pub(crate) mod env;
pub(crate) mod foreground;
pub(crate) mod git_config;
pub(crate) mod git_programs;
pub(crate) mod links;
pub(crate) mod made;
pub(crate) mod operands;
pub(crate) mod result;
pub(crate) mod sandbox;
pub(crate) mod secret_values;
pub(crate) mod spawn;
pub(crate) mod spill;
pub(crate) mod tree;
