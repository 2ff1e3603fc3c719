//! Working out every file's new content in memory, before anything is written.
//!
//! Each path the patch names becomes a slot keyed by its real location, holding what is on
//! disk and what the patch has made of it so far, so several operations on one file (an
//! update, then a move; a delete, then an add) see each other's effect. Every problem is
//! collected — a hunk that does not match, a file that is missing or already there, a path
//! outside the roots, a file changed since it was read — and reported together; the plan
//! reaches the disk only when there are none.

use std::collections::HashMap;
use std::io::Read as _;
use std::path::{Component, Path, PathBuf};

use cap_std::fs::Permissions;
use toolbelt_core::{ToolContext, ToolError};

use super::commit::{Action, Change};
use super::doc::{Doc, Placed};
use super::parse::{FileOp, Hunk, Patch};
use super::report;
use super::seek::{self, Level};
use crate::files::support::ledger::{FileLedger, hash};
use crate::files::support::patch::outcome::{FileStatus, PatchedFile};
use crate::formats::encoding::{self, TextFormat};
use crate::fs::error::io_error;
use crate::fs::regular::NotRegular;
use crate::fs::roots::{Located, OpenRoots, absolute};
use crate::fs::shown::shown;

/// Files larger than this are not patched (they would be held in memory several times).
const MAX_BYTES: u64 = 64 * 1024 * 1024;

/// A file's content on disk.
struct Content {
    bytes: Vec<u8>,
    text: Result<(String, TextFormat), &'static str>,
    perms: Permissions,
}

/// What was at a path before the patch.
enum Original {
    Missing,
    /// A symlink, acted on as a link (deleted or moved); its target's content when readable.
    Link(Option<Content>),
    File(Content),
}

/// What the patch has made of a path so far.
enum State {
    Unchanged,
    Text { text: String, format: TextFormat },
    Absent,
}

struct Slot {
    loc: Located,
    shown: String,
    original: Original,
    state: State,
    added: usize,
    removed: usize,
    moved_from: Option<String>,
    moved_away: bool,
    perms_from: Option<Permissions>,
}

impl Slot {
    fn exists(&self) -> bool {
        match self.state {
            State::Unchanged => !matches!(self.original, Original::Missing),
            State::Text { .. } => true,
            State::Absent => false,
        }
    }

    /// The text as the patch has left it so far.
    fn text(&self) -> Result<(&str, TextFormat), String> {
        let content = match (&self.state, &self.original) {
            (State::Text { text, format }, _) => return Ok((text, *format)),
            (State::Absent, _) => return Err(format!("{} was deleted or moved earlier in this patch", self.shown)),
            (State::Unchanged, Original::Missing) => {
                return Err(format!("{} does not exist", self.shown));
            }
            (State::Unchanged, Original::Link(None)) => {
                return Err(format!("{} is a symlink whose target is missing or outside the roots", self.shown));
            }
            (State::Unchanged, Original::File(c) | Original::Link(Some(c))) => c,
        };
        match &content.text {
            Ok((text, format)) => Ok((text, *format)),
            Err(kind) => Err(format!("{} is a binary file ({kind}); only text files can be patched", self.shown)),
        }
    }

    fn perms(&self) -> Option<Permissions> {
        match &self.original {
            Original::File(c) | Original::Link(Some(c)) => Some(c.perms.clone()),
            _ => None,
        }
    }
}

/// Every file's planned content.
pub struct Plan<'a> {
    ws: &'a OpenRoots,
    cx: &'a ToolContext,
    slots: Vec<Slot>,
    keys: HashMap<PathBuf, usize>,
    problems: Vec<String>,
    notes: Vec<String>,
}

/// What the plan asks of the disk, and how to report it.
pub struct Outcome {
    /// The writes and deletes, in patch order.
    pub changes: Vec<Change>,
    /// One entry per changed file, for the summary.
    pub files: Vec<PatchedFile>,
    /// Hunks that needed a tolerant match.
    pub notes: Vec<String>,
}

impl<'a> Plan<'a> {
    /// Plans every operation of `patch`; fails with every problem found.
    pub fn build(ws: &'a OpenRoots, cx: &'a ToolContext, patch: &Patch) -> Result<Outcome, ToolError> {
        let mut plan =
            Plan { ws, cx, slots: Vec::new(), keys: HashMap::new(), problems: Vec::new(), notes: Vec::new() };
        for op in &patch.ops {
            if cx.is_cancelled() {
                return Err(ToolError::Cancelled);
            }
            if let Err(problem) = plan.op(op)
                && !plan.problems.contains(&problem)
            {
                plan.problems.push(problem);
            }
        }
        plan.finish()
    }

    fn op(&mut self, op: &FileOp) -> Result<(), String> {
        match op {
            FileOp::Add { path, at, lines } => {
                let ctx = |e: String| format!("`*** Add File: {path}` (patch line {at}): {e}");
                let i = self.slot(path, true).map_err(ctx)?;
                let slot = &mut self.slots[i];
                if slot.exists() {
                    return Err(ctx(format!(
                        "{} already exists; use `*** Update File: {path}` to change it, or `*** Delete File: {path}` \
                         before this to replace it whole",
                        slot.shown
                    )));
                }
                let mut text = lines.join("\n");
                if !lines.is_empty() {
                    text.push('\n');
                }
                slot.state = State::Text { text, format: TextFormat::UTF8 };
                slot.added += lines.len();
            }
            FileOp::Delete { path, at } => {
                let ctx = |e: String| format!("`*** Delete File: {path}` (patch line {at}): {e}");
                let i = self.slot(path, false).map_err(ctx)?;
                let slot = &mut self.slots[i];
                if !slot.exists() {
                    let e = slot.text().err().unwrap_or_default();
                    return Err(ctx(format!("{e}; nothing to delete (check the path; Glob finds files by name)")));
                }
                let lines = slot.text().map(|(t, _)| Doc::count_lines(t)).unwrap_or(0);
                slot.removed += lines;
                slot.state = State::Absent;
            }
            FileOp::Update { path, at, move_to, hunks } => {
                let ctx = |e: String| format!("`*** Update File: {path}` (patch line {at}): {e}");
                let src = self.slot(path, move_to.is_none()).map_err(ctx)?;
                let slot = &self.slots[src];
                let (text, format) = slot.text().map_err(|e| {
                    let hint = if slot.exists() { "" } else { "; use `*** Add File:` to create a file" };
                    ctx(format!("{e}{hint}"))
                })?;
                let new_text = apply_hunks(&slot.shown, text, hunks, &mut self.notes, &mut self.problems)?;
                let shown = slot.shown.clone();
                let (added, removed) = hunks.iter().map(|h| h.counts()).fold((0, 0), |(a, r), (x, y)| (a + x, r + y));
                let dst = match move_to {
                    Some(to) => {
                        let ctx = |e: String| format!("`*** Move to: {to}` (patch line {}): {e}", at + 1);
                        let dst = self.slot(to, false).map_err(ctx)?;
                        if dst != src && self.slots[dst].exists() {
                            return Err(ctx(format!(
                                "{} already exists; move to another path, or `*** Delete File:` it earlier in the patch",
                                self.slots[dst].shown
                            )));
                        }
                        dst
                    }
                    None => src,
                };
                if dst != src {
                    let perms = self.slots[src].perms();
                    let s = &mut self.slots[src];
                    s.state = State::Absent;
                    s.moved_away = true;
                    let d = &mut self.slots[dst];
                    d.moved_from = Some(shown);
                    d.perms_from = perms;
                }
                let d = &mut self.slots[dst];
                d.state = State::Text { text: new_text, format };
                d.added += added;
                d.removed += removed;
            }
        }
        Ok(())
    }

    /// The slot of a path, created on first use. `follow` resolves a symlink to its target
    /// (updates); otherwise the link itself is the slot (deletes, moves).
    fn slot(&mut self, raw: &str, follow: bool) -> Result<usize, String> {
        let abs = absolute(self.cx, raw);
        let err = |e: ToolError| e.to_string();
        let loc = self.ws.locate(&abs).map_err(err)?;
        let entry = entry(self.ws, &loc)?;
        let dir = self.ws.dir(&entry);
        let kind = match dir.symlink_metadata(&entry.rel) {
            Ok(m) if m.is_symlink() => Some(true),
            Ok(m) if m.is_dir() => {
                return Err(format!("{} is a directory; ApplyPatch changes files", abs.display()));
            }
            // A FIFO, a device or a socket is neither read nor replaced nor deleted.
            Ok(m) => match NotRegular::of_cap(m.file_type()) {
                Some(kind) => return Err(kind.sentence(&abs)),
                None => Some(false),
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(err(io_error(&abs, &e))),
        };
        let (key, original) = match kind {
            None => (entry, None),
            Some(false) => (entry, Some(false)),
            Some(true) if follow => match self.ws.real(&entry) {
                Ok(real) if self.ws.metadata(&real).is_ok_and(|m| m.is_dir()) => {
                    return Err(format!("{} is a symlink to a directory; ApplyPatch changes files", abs.display()));
                }
                Ok(real) => (real, Some(false)),
                Err(e) => return Err(format!("{} is a symlink that cannot be followed: {e}", abs.display())),
            },
            Some(true) => (entry, Some(true)),
        };
        if let Some(&i) = self.keys.get(&key.abs) {
            return Ok(i);
        }
        let original = match original {
            None => Original::Missing,
            Some(false) => Original::File(self.load(&key, &abs)?),
            Some(true) => Original::Link(self.ws.real(&key).ok().and_then(|real| self.load(&real, &abs).ok())),
        };
        let i = self.slots.len();
        self.keys.insert(key.abs.clone(), i);
        self.slots.push(Slot {
            shown: shown(self.cx, &abs),
            loc: key,
            original,
            state: State::Unchanged,
            added: 0,
            removed: 0,
            moved_from: None,
            moved_away: false,
            perms_from: None,
        });
        Ok(i)
    }

    /// Reads a file for the plan, refusing one changed since the session read it.
    fn load(&self, real: &Located, abs: &Path) -> Result<Content, String> {
        let meta = self.ws.metadata(real).map_err(|e| e.to_string())?;
        if meta.len() > MAX_BYTES {
            return Err(format!(
                "{} is {} MB, larger than the {} MB ApplyPatch handles; change it with Edit instead",
                abs.display(),
                meta.len() / (1024 * 1024),
                MAX_BYTES / (1024 * 1024)
            ));
        }
        let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
        let mut file = self.ws.open_file(real).map_err(|e| e.to_string())?;
        file.read_to_end(&mut bytes).map_err(|e| io_error(abs, &e).to_string())?;
        if let Some(seen) = FileLedger::get(self.cx, &real.abs)
            && seen.hash != hash(&bytes)
        {
            return Err(format!(
                "{} has changed since you read it (by the user, a formatter or another tool); Read it again, \
                 then send the patch again against its current content",
                shown(self.cx, abs)
            ));
        }
        let text = encoding::decode(&bytes).map_err(|b| b.kind);
        Ok(Content { bytes, text, perms: meta.permissions() })
    }

    /// Turns the slots into disk changes and summary entries, or reports every problem.
    fn finish(mut self) -> Result<Outcome, ToolError> {
        let mut changes = Vec::new();
        let mut files = Vec::new();
        for slot in std::mem::take(&mut self.slots) {
            let existed = !matches!(slot.original, Original::Missing);
            let (action, status) = match slot.state {
                State::Unchanged => continue,
                State::Absent if !existed => continue,
                State::Absent => (Action::Delete, FileStatus::Deleted),
                State::Text { text, format } => {
                    let bytes = match encoding::encode(&text, format) {
                        Ok(b) => b,
                        Err(e) => {
                            self.problems.push(format!("{}: {e}", slot.shown));
                            continue;
                        }
                    };
                    let (restore, aside) = match slot.original {
                        Original::Missing => (None, false),
                        Original::File(c) => (Some(c.bytes), false),
                        Original::Link(_) => (None, true),
                    };
                    let status =
                        if existed || slot.moved_from.is_some() { FileStatus::Modified } else { FileStatus::Added };
                    (Action::Write { bytes, restore, aside, perms: slot.perms_from }, status)
                }
            };
            if !(status == FileStatus::Deleted && slot.moved_away) {
                files.push(PatchedFile {
                    path: slot.shown,
                    status,
                    moved_from: slot.moved_from,
                    added: slot.added,
                    removed: slot.removed,
                });
            }
            changes.push(Change { loc: slot.loc, action });
        }
        if !self.problems.is_empty() {
            return Err(ToolError::failed(problem_report(&self.problems)));
        }
        Ok(Outcome { changes, files, notes: self.notes })
    }
}

/// Places every hunk, each after the previous, and rebuilds the text; a hunk that does not
/// place is a problem (the others are still tried, to report them all).
fn apply_hunks(
    shown: &str,
    text: &str,
    hunks: &[Hunk],
    notes: &mut Vec<String>,
    problems: &mut Vec<String>,
) -> Result<String, String> {
    let doc = Doc::new(text);
    let mut placed = Vec::with_capacity(hunks.len());
    let mut from = 0;
    let mut failed = Vec::new();
    let mut tolerant: Vec<(Level, usize)> = Vec::new();
    for (k, hunk) in hunks.iter().enumerate() {
        match seek::place(&doc, hunk, from) {
            Ok(p) => {
                if p.level > Level::Exact {
                    tolerant.push((p.level, k + 1));
                }
                placed.push(Placed { start: p.start, hunk });
                from = p.start + p.len;
            }
            Err(miss) => {
                let anchors =
                    if hunk.headers.is_empty() { String::new() } else { format!(", `{}`", hunk.describe_headers()) };
                failed.push(format!(
                    "{shown}, hunk {} of {} (patch line {}{anchors}): {}",
                    k + 1,
                    hunks.len(),
                    hunk.at,
                    report::explain(&doc, &miss, &hunk.old(), hunk.end_of_file)
                ));
            }
        }
    }
    tolerant.sort();
    for group in tolerant.chunk_by(|a, b| a.0 == b.0) {
        const LISTED: usize = 10;
        let mut numbers: Vec<String> = group.iter().take(LISTED).map(|(_, k)| k.to_string()).collect();
        if group.len() > LISTED {
            numbers.push(format!("… ({} in all)", group.len()));
        }
        let noun = if group.len() == 1 { "hunk" } else { "hunks" };
        notes.push(format!("{shown}: {noun} {} matched {}", numbers.join(", "), group[0].0.describe()));
    }
    match failed.pop() {
        None => Ok(doc.apply(&placed)),
        Some(last) => {
            problems.extend(failed);
            Err(last)
        }
    }
}

/// The error text for a patch that was not applied.
fn problem_report(problems: &[String]) -> String {
    const SHOWN: usize = 8;
    let mut out = String::from("The patch was not applied; nothing was changed (a patch applies all-or-nothing).");
    if let [one] = problems {
        out.push('\n');
        out.push_str(one);
    } else {
        out.push_str(&format!(" {} problems:", problems.len()));
        for (i, p) in problems.iter().take(SHOWN).enumerate() {
            out.push_str(&format!("\n{}. {p}", i + 1));
        }
        if problems.len() > SHOWN {
            out.push_str(&format!("\n… and {} more", problems.len() - SHOWN));
        }
    }
    out.push_str(
        "\nFix the patch to match the files as they are now (Read them around the lines named above) and send the whole \
         patch again.",
    );
    out
}

/// Where a path's directory entry is: its parent resolved (confined, symlinks followed) as
/// far as it exists, then the rest of the path as written. The entry itself is not followed.
fn entry(ws: &OpenRoots, loc: &Located) -> Result<Located, String> {
    let abs = &loc.abs;
    let Some(name) = loc.rel.file_name() else {
        return Err(format!("{} does not name a file; give the path of a file", abs.display()));
    };
    let parent: Vec<Component> = loc.rel.parent().map(|p| p.components().collect()).unwrap_or_default();
    let dir = ws.dir(loc);
    let mut known = parent.len();
    let base = loop {
        if known == 0 {
            break PathBuf::new();
        }
        let prefix: PathBuf = parent[..known].iter().collect();
        match dir.canonicalize(&prefix) {
            Ok(real) => break real,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => known -= 1,
            Err(e) => return Err(io_error(abs, &e).to_string()),
        }
    };
    if !base.as_os_str().is_empty() && !dir.metadata(&base).is_ok_and(|m| m.is_dir()) {
        return Err(format!("{}: a component of the path is a file, not a directory", abs.display()));
    }
    let mut rel = base;
    for c in &parent[known..] {
        match c {
            Component::Normal(part) => rel.push(part),
            _ => {
                return Err(format!(
                    "{}: `..` after a directory that does not exist cannot be resolved; write the path without it",
                    abs.display()
                ));
            }
        }
    }
    rel.push(name);
    let mut out = loc.clone();
    out.abs = ws.root_path(loc).join(&rel);
    out.rel = rel;
    Ok(out)
}
