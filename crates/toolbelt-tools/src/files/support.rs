//! What the file tools share: none of it is a tool. How any tool opens a file beneath the
//! workspace roots is below every family, in [`crate::fs`].

pub(crate) mod atomic;
pub(crate) mod change;
pub(crate) mod journal;
pub(crate) mod ledger;
pub(crate) mod notebook;
pub(crate) mod patch;
pub(crate) mod read_media;
pub(crate) mod read_output;
pub(crate) mod read_stream;
pub(crate) mod replace;
