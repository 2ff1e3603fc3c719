//! Grep's engine: ripgrep's searcher over ripgrep's parallel walker, the results in path order
//! (`rg --sort path`) without giving up the parallelism: the walk lists the files, which are
//! put in path order and then searched in parallel a run at a time, the runs joined in order
//! as they complete ([`ordered`](super::ordered)). Output lines are formatted by the thread
//! that searched the file, and copied once, into the text of the whole search.

use ignore::WalkBuilder;
use toolbelt_core::{CancellationToken, ToolError};

use super::collect::{Collect, search_file};
use super::content::{Found, Outcome, Output, Plan};
use super::ordered;
use crate::fs::error::io_error;
use crate::fs::walk::{Shown, Start};

/// Searches every file under `start` that `walk` yields; returns the files with matches in
/// path order, and what could not be read. Stops early when `cancel` fires.
pub fn search_tree(plan: &Plan, start: &Start, shown: &Shown, walk: &WalkBuilder, cancel: &CancellationToken) -> Found {
    let mut found = Found::new(plan);
    ordered::search(plan, start, shown, walk, cancel, &mut found);
    found
}

/// Searches the start when it is a single file (a regular one: anything else is refused).
pub fn search_start_file(
    plan: &Plan,
    start: &Start,
    shown: &Shown,
    cancel: &CancellationToken,
) -> Result<(Outcome, Found), ToolError> {
    let abs = &start.loc.abs;
    let file = start.ws.open_file(&start.loc)?;
    let mut out = Output::default();
    let mut sink = Collect::new(plan, &plan.matcher, shown, abs, cancel, &mut out);
    let outcome = search_file(&mut plan.searcher(), &file, &mut sink).map_err(|e| io_error(abs, &e))?;
    let mut found = Found::new(plan);
    if let Outcome::Hits = outcome {
        let (count, shown) = (sink.count, sink.shown());
        let (lines, text) = (0..out.kinds.len(), 0..out.text.len());
        found.push(&out, shown, count, lines, text);
    }
    Ok((outcome, found))
}
