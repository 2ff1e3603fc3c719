//! `ApplyPatch`'s parts: the patch grammar ([`parse`]), finding each hunk in its file
//! ([`seek`], [`doc`]), working every change out in memory ([`plan`]) and what it did to each file ([`outcome`]), committing them all or
//! none through the journal ([`commit`]), and explaining a hunk that did not match ([`report`]).

pub(crate) mod commit;
pub(crate) mod doc;
pub(crate) mod outcome;
pub(crate) mod parse;
pub(crate) mod plan;
pub(crate) mod report;
pub(crate) mod seek;
