//! What the knowledge tools share.

pub mod rank;
