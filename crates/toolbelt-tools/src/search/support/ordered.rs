//! A search of a tree in path order, in parallel. ripgrep's parallel walker visits files in
//! no particular order; `rg --sort path` gives up parallelism to print in order. Here the
//! walk (in parallel) only lists the files; they are put in path order, then searched in
//! parallel a run of consecutive files at a time, and each run's output is appended to the
//! search's text as soon as the runs before it are in: the output is written once, straight
//! in order, beside the searching, with no per-thread buffer to keep and reorder afterwards.

use std::collections::VecDeque;
use std::ffi::OsStr;
use std::io;
use std::ops::Range;
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use cap_std::fs::Dir;
use ignore::{WalkBuilder, WalkState};
use toolbelt_core::CancellationToken;

use super::collect::{Collect, search_bytes, search_file};
use super::content::{CANCEL_EVERY, Found, Mode, Outcome, Output, Plan};
use super::whole::{WHOLE, WholeFile};
use crate::fs::error::escapes;
use crate::fs::regular::NotRegular;
use crate::fs::walk::open::open_searched_sized;
use crate::fs::walk::{Shown, Start, WalkErrors};

/// Files searched as one run: enough that handing a run over costs little, few enough that
/// the threads share the work evenly and the runs come in nearly in order.
const RUN: usize = 32;

/// Bytes of output a run's text starts with room for.
const RUN_TEXT: usize = 64 << 10;

/// The files a walk listed, as sort keys (see [`push_key`]) in one buffer.
#[derive(Default)]
struct Listed {
    keys: Vec<u8>,
    files: Vec<File>,
    errors: WalkErrors,
}

/// A listed file: where its key is, and the key's first 8 bytes as a number (big-endian,
/// zero-padded), which order most pairs of files without looking further.
#[derive(Debug, Clone, Copy)]
struct File {
    head: u64,
    start: usize,
    end: usize,
    /// The inode the walk listed it with (0: not known).
    ino: u64,
}

impl File {
    fn new(keys: &[u8], start: usize) -> Self {
        let key = keys.get(start..).unwrap_or_default();
        let mut head = [0u8; 8];
        for (to, from) in head.iter_mut().zip(key) {
            *to = *from;
        }
        Self { head: u64::from_be_bytes(head), start, end: keys.len(), ino: 0 }
    }

    fn key<'k>(&self, keys: &'k [u8]) -> &'k [u8] {
        keys.get(self.start..self.end).unwrap_or_default()
    }

    /// Path order. Heads that differ order as the keys do (a key's end reads as 0, which
    /// sorts it before any longer key it starts, as the comparison of whole keys does).
    fn cmp(&self, other: &File, keys: &[u8]) -> std::cmp::Ordering {
        self.head.cmp(&other.head).then_with(|| self.key(keys).cmp(other.key(keys)))
    }
}

/// One walker thread's list, handed over when the thread is done.
struct Lister<'a> {
    mine: Listed,
    done: &'a Mutex<Vec<Listed>>,
}

impl Drop for Lister<'_> {
    /// Hands the thread's list over in path order: the threads sort in parallel, what is left
    /// is merging their runs.
    fn drop(&mut self) {
        let mut mine = std::mem::take(&mut self.mine);
        // By the keys' heads, then the few with the same head by their whole keys.
        mine.files.sort_unstable_by_key(|file| file.head);
        let keys = &mine.keys;
        for same in mine.files.chunk_by_mut(|a, b| a.head == b.head).filter(|same| same.len() > 1) {
            same.sort_unstable_by(|a, b| a.key(keys).cmp(b.key(keys)));
        }
        self.done.lock().unwrap_or_else(PoisonError::into_inner).push(mine);
    }
}

/// Searches every file under `start` that `walk` yields, into `found`, in path order; stops
/// early when `cancel` fires.
pub fn search(
    plan: &Plan,
    start: &Start,
    shown: &Shown,
    walk: &WalkBuilder,
    cancel: &CancellationToken,
    found: &mut Found,
) {
    let listed = list(start, walk, cancel);
    found.errors.merge(listed.errors);
    if cancel.is_cancelled() || listed.files.is_empty() {
        return;
    }
    // Room for a hit in every file (up to a point), and for their names: these are not moved
    // as they grow.
    found.reserve(listed.files.len().min(1 << 16), listed.keys.len().min(4 << 20));
    let work = Work {
        plan,
        start,
        shown,
        cancel,
        keys: &listed.keys,
        files: &listed.files,
        next: AtomicUsize::new(0),
        joined: Mutex::new(Joined { found, waiting: VecDeque::new(), next: 0, spare: Vec::new() }),
    };
    // As many threads as the walk had (one per processor), this one among them.
    let runs = listed.files.len().div_ceil(RUN);
    let threads = crate::blocking::processors().clamp(1, 12).min(runs);
    std::thread::scope(|scope| {
        for _ in 1..threads {
            let work = &work;
            // A thread that cannot be started leaves its share to the others.
            let _ = std::thread::Builder::new().spawn_scoped(scope, move || work.search());
        }
        work.search();
    });
}

/// What the searching threads share.
struct Work<'a> {
    plan: &'a Plan,
    start: &'a Start,
    shown: &'a Shown,
    cancel: &'a CancellationToken,
    /// The files, in path order, as keys in `keys`.
    keys: &'a [u8],
    files: &'a [File],
    /// The next run to search.
    next: AtomicUsize,
    /// The results so far.
    joined: Mutex<Joined<'a>>,
}

/// The results of the runs searched so far: those of the first runs joined in order, the
/// others waiting for the runs before them.
struct Joined<'a> {
    found: &'a mut Found,
    /// The runs from the first not joined yet on (`None` for those not done yet).
    waiting: VecDeque<Option<Run>>,
    /// The first run not joined yet.
    next: usize,
    /// Buffers of runs already joined, for the next runs: their pages are the same few,
    /// never handed back to the system and faulted in again.
    spare: Vec<Output>,
}

impl Joined<'_> {
    /// Takes in what run `run` found, and joins every run it completes the sequence of;
    /// returns a buffer for the next run.
    fn add(&mut self, run: usize, done: Run) -> Option<Output> {
        let at = run.saturating_sub(self.next);
        if self.waiting.len() <= at {
            self.waiting.resize_with(at + 1, || None);
        }
        if let Some(slot) = self.waiting.get_mut(at) {
            *slot = Some(done);
        }
        while let Some(Some(done)) = self.waiting.front_mut().map(Option::take) {
            self.waiting.pop_front();
            let out = done.append_to(self.found);
            self.spare.push(out);
            self.next += 1;
        }
        self.spare.pop()
    }
}

impl Work<'_> {
    /// Searches runs, the next not yet taken each time, and joins what each found, until
    /// none is left or the search is cancelled. The thread that completes the sequence of
    /// runs joined so far joins it, under the lock: no thread waits for another to hand it
    /// results.
    fn search(&self) {
        let mut searcher = Searcher::new(self.plan, self.start, self.shown, self.cancel);
        let mut out = None;
        loop {
            let run = self.next.fetch_add(1, Ordering::Relaxed);
            let first = run.saturating_mul(RUN);
            let files = self.files.get(first..self.files.len().min(first.saturating_add(RUN))).unwrap_or_default();
            if files.is_empty() || self.cancel.is_cancelled() {
                return;
            }
            let done = searcher.run(self.keys, files, out.take());
            out = self.joined.lock().unwrap_or_else(PoisonError::into_inner).add(run, done);
        }
    }
}

/// Lists the regular files `walk` yields below `start` (in parallel, in no order).
fn list(start: &Start, walk: &WalkBuilder, cancel: &CancellationToken) -> Listed {
    let done = Mutex::new(Vec::new());
    walk.build_parallel().run(|| {
        let mut lister = Lister { mine: Listed::default(), done: &done };
        // The token is checked every few entries: a check takes a lock every thread shares.
        let mut entries = 0u32;
        Box::new(move |entry| {
            entries = entries.wrapping_add(1);
            if entries.is_multiple_of(CANCEL_EVERY) && cancel.is_cancelled() {
                return WalkState::Quit;
            }
            let mine = &mut lister.mine;
            let entry = match entry {
                Ok(entry) => entry,
                Err(e) => {
                    mine.errors.push(&e);
                    return WalkState::Continue;
                }
            };
            // Like rg: regular files only; symlinks are not followed. A FIFO, a device or a
            // socket is never opened, and named in the note.
            match entry.file_type().map(NotRegular::of) {
                Some(None) if entry.file_type().is_some_and(|t| t.is_file()) => {}
                Some(Some(kind)) if kind != NotRegular::Directory => {
                    let path = entry.path().display();
                    mine.errors.push_message(format!("{path} is {}, not a regular file", kind.describe()));
                    return WalkState::Continue;
                }
                _ => return WalkState::Continue,
            }
            if let Some(rel) = start.rel_in_root(entry.path()) {
                let at = mine.keys.len();
                push_key(&mut mine.keys, rel.as_os_str().as_encoded_bytes());
                mine.files.push(File { ino: entry.ino().unwrap_or(0), ..File::new(&mine.keys, at) });
            }
            WalkState::Continue
        })
    });
    let mut all = Listed::default();
    for mut listed in done.into_inner().unwrap_or_else(PoisonError::into_inner) {
        let at = all.keys.len();
        all.keys.append(&mut listed.keys);
        all.files.extend(listed.files.into_iter().map(|f| File { start: f.start + at, end: f.end + at, ..f }));
        all.errors.merge(listed.errors);
    }
    // One sorted run per thread: the stable sort finds the runs and merges them.
    let keys = &all.keys;
    all.files.sort_by(|a, b| a.cmp(b, keys));
    all
}

/// Appends the sort key of `path`. Path order (`rg --sort path`: component by component, so
/// `a/b` comes before `a.txt`) is the byte order of paths with `/` ranked below every other
/// byte: the key is the path with each `/` made 0 (no name holds a NUL), compared as bytes.
fn push_key(keys: &mut Vec<u8>, path: &[u8]) {
    keys.extend(path.iter().map(|&b| if b == b'/' { 0 } else { b }));
}

/// The path below the root a key stands for, into `path`.
fn key_path(key: &[u8], path: &mut Vec<u8>) {
    path.clear();
    path.extend(key.iter().map(|&b| if b == 0 { b'/' } else { b }));
}

/// What one run of files found, in the files' order.
struct Run {
    out: Output,
    files: Vec<RunFile>,
    errors: WalkErrors,
}

/// One file of a run with matches: where its output is in the run's.
struct RunFile {
    shown: Range<usize>,
    count: u64,
    lines: Range<usize>,
    text: Range<usize>,
}

impl Run {
    /// Appends the run's results to `found`; returns its emptied buffer.
    fn append_to(self, found: &mut Found) -> Output {
        let Run { mut out, files, errors } = self;
        for file in files {
            found.push(&out, file.shown, file.count, file.lines, file.text);
        }
        found.errors.merge(errors);
        out.clear();
        out
    }
}

/// One searching thread's state.
struct Searcher<'a> {
    searcher: grep_searcher::Searcher,
    /// The thread's own copy of the pattern: a copy has its own pool of search caches, which
    /// its thread takes without contention.
    matcher: grep_regex::RegexMatcher,
    plan: &'a Plan,
    start: &'a Start,
    shown: &'a Shown,
    cancel: &'a CancellationToken,
    /// The file below the root, and its absolute path (reused from file to file).
    rel: Vec<u8>,
    abs: PathBuf,
    /// Small files, read whole.
    whole: WholeFile,
    /// The directory the last file was in, below the root, and its handle.
    parent: Option<(Vec<u8>, Dir)>,
}

impl<'a> Searcher<'a> {
    fn new(plan: &'a Plan, start: &'a Start, shown: &'a Shown, cancel: &'a CancellationToken) -> Self {
        Self {
            searcher: plan.searcher(),
            matcher: plan.matcher.clone(),
            plan,
            start,
            shown,
            cancel,
            rel: Vec::new(),
            abs: PathBuf::new(),
            whole: WholeFile::default(),
            parent: None,
        }
    }

    /// Searches a run of files, given by their keys in `keys`, into `out` (an emptied buffer)
    /// or a new one.
    fn run(&mut self, keys: &[u8], files: &[File], out: Option<Output>) -> Run {
        let capacity = if self.plan.mode == Mode::Content { RUN_TEXT } else { 0 };
        let mut out = out.unwrap_or_else(|| Output { text: String::with_capacity(capacity), ..Output::default() });
        let (mut hits, mut errors) = (Vec::new(), WalkErrors::default());
        let root = self.start.ws.root_path(&self.start.loc);
        let root_dir = self.start.ws.dir(&self.start.loc);
        for file in files {
            key_path(file.key(keys), &mut self.rel);
            let rel = Path::new(OsStr::from_bytes(&self.rel));
            self.abs.clear();
            self.abs.push(root);
            self.abs.push(rel);
            // Opened beneath its directory's handle, itself opened beneath the root's: confined
            // at open time; without blocking, and only if the handle is a regular file (the
            // entry may have been swapped since the walk). A second name of a file outside the
            // roots, or of a hidden one, is skipped.
            let (dir, name) = match parent_of(&mut self.parent, root_dir, &self.rel) {
                Ok(found) => found,
                Err(e) if gone(&e) => continue,
                Err(e) => {
                    errors.push_message(format!("{}: {e}", self.abs.display()));
                    continue;
                }
            };
            let listed = file.ino;
            let result = open_searched_sized(&self.start.ws, dir, name, &self.abs).and_then(|(mut file, meta)| {
                // Not the file the walk listed: a directory on its path was swapped since, and
                // the walk may have listed another place.
                if listed != 0 && meta.ino() != listed {
                    return Ok(None);
                }
                let len = meta.len();
                let mut sink = Collect::new(self.plan, &self.matcher, self.shown, &self.abs, self.cancel, &mut out);
                let bytes = if len <= WHOLE { self.whole.read(&mut file, len)? } else { None };
                let outcome = match bytes {
                    Some(bytes) => search_bytes(&mut self.searcher, bytes, &mut sink)?,
                    None => search_file(&mut self.searcher, &file, &mut sink)?,
                };
                Ok(match outcome {
                    Outcome::Hits => Some(RunFile {
                        count: sink.count,
                        lines: sink.lines_start..sink.out.kinds.len(),
                        text: sink.text_start..sink.out.text.len(),
                        shown: sink.shown(),
                    }),
                    Outcome::NoMatch | Outcome::Binary => None,
                })
            });
            match result {
                Ok(Some(hit)) => hits.push(hit),
                Ok(None) => {}
                Err(e) if gone(&e) => {}
                Err(e) => errors.push_message(format!("{}: {e}", self.abs.display())),
            }
        }
        Run { out, files: hits, errors }
    }
}

/// Whether a listed file is no longer beneath the root where the walk saw it: removed since,
/// or a directory on its path swapped for a file or for a symlink leading out. The walk lists
/// directories by path, so such a swap can make it list another place's names; these files
/// are skipped without a word, so no name from elsewhere reaches the result.
fn gone(e: &io::Error) -> bool {
    matches!(e.kind(), io::ErrorKind::NotFound | io::ErrorKind::NotADirectory) || escapes(e)
}

/// The handle of the directory `rel` (a file's path below `root`) is in, from `open` (the
/// directory the last file was in) or opened beneath `root` into it, and the file's
/// name in it. Files in path order come a directory at a time, so each directory is opened
/// once per run of its files: a file's open then looks up one name (not every component of
/// its path again), and the threads do not all take and drop references to the root's
/// directory entry, which they would contend for.
fn parent_of<'a, 'p>(
    open: &'a mut Option<(Vec<u8>, Dir)>,
    root: &'a Dir,
    rel: &'p [u8],
) -> io::Result<(&'a Dir, &'p Path)> {
    let Some(slash) = rel.iter().rposition(|&b| b == b'/') else {
        return Ok((root, Path::new(OsStr::from_bytes(rel))));
    };
    let (parent, name) = (&rel[..slash], &rel[slash + 1..]);
    let name = Path::new(OsStr::from_bytes(name));
    if open.as_ref().is_none_or(|(open, _)| open != parent) {
        *open = None;
        let dir = root.open_dir(Path::new(OsStr::from_bytes(parent)))?;
        *open = Some((parent.to_vec(), dir));
    }
    match open {
        Some((_, dir)) => Ok((dir, name)),
        None => Ok((root, Path::new(OsStr::from_bytes(rel)))),
    }
}

#[cfg(test)]
mod tests;
