//! What the file tools share (and the search tools open files through): none of it is a tool.

pub(crate) mod atomic;
pub(crate) mod change;
pub(crate) mod encoding;
pub(crate) mod journal;
pub(crate) mod ledger;
pub(crate) mod links;
pub(crate) mod notebook;
pub(crate) mod patch;
pub(crate) mod pdf;
pub(crate) mod read_media;
pub(crate) mod read_stream;
pub(crate) mod regular;
pub(crate) mod replace;
pub(crate) mod roots;
