//! What Grep and Glob share beyond the walk (which is [`crate::fs::walk`], shared with
//! ListDir and the code tools): the content search itself — how a file's lines are matched,
//! collected and ordered — and how a large result is paged and listed.

mod collect;
pub(crate) mod content;
pub(crate) mod engine;
pub(crate) mod listing;
pub(crate) mod matcher;
mod ordered;
mod pages;
mod whole;
