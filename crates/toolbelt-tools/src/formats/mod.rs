//! What bytes are, below every tool family: the file tools and `WebFetch` both turn bytes
//! into what the model reads through here, so a file on disk and a page from the web are
//! decoded, sniffed and cut the same way.
//!
//! * [`encoding`]: text decoding that round-trips every encoding byte-exact, what binary
//!   bytes are (`sniff`), which images are shown as images and how large they may be;
//! * [`pdf`]: a PDF's text, page by page, on a thread of its own with a deadline.

pub(crate) mod encoding;
pub(crate) mod pdf;
