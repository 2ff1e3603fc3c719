//! What the web tools share: none of it is a tool.

pub(crate) mod cache;
pub(crate) mod client;
pub(crate) mod config;
pub(crate) mod content;
pub(crate) mod decode;
pub(crate) mod dense;
pub(crate) mod fetched;
pub(crate) mod guard;
pub(crate) mod html;
pub(crate) mod page;
pub(crate) mod resolver;
pub(crate) mod search;
