//! Bringing the index up to date with the tree: a walk (`.gitignore` respected, hidden and
//! denied paths skipped, as Grep walks), each file compared by size and modification time,
//! then by content hash; new and changed files tagged on every core; gone files dropped.

use std::collections::HashMap;
use std::io::Read as _;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use tree_sitter_tags::TagsContext;

use super::langs::{kind_of, lang_of};
use super::store::{Changes, Replaced, Seen, Symbol};

/// Files larger than this are listed but not tagged (generated or vendored code).
pub const MAX_TAGGED_BYTES: u64 = 2 * 1024 * 1024;

/// The longest first line kept for a symbol.
const MAX_TEXT_CHARS: usize = 200;

/// A file the walk found: its path below the root, size and modification time.
#[derive(Debug, Clone)]
pub struct Found {
    /// Below the root, with `/`.
    pub rel: String,
    /// Its size.
    pub size: i64,
    /// Its modification time, in nanoseconds.
    pub mtime_ns: i64,
}

/// What one file's tagging gave.
pub struct Tagged {
    /// Its content's hash (64-bit xxh3, as SQLite stores integers).
    pub hash: i64,
    /// `ok`, `error` (did not parse cleanly: tags kept where the parser recovered, or none),
    /// or `skipped` (too large, or no language).
    pub state: &'static str,
    /// Its symbols.
    pub symbols: Vec<Symbol>,
}

/// The symbols of `source` in language `lang`, and whether it parsed without error.
pub fn tag(cx: &mut TagsContext, lang: &super::langs::Lang, source: &[u8]) -> Result<(Vec<Symbol>, bool), String> {
    let config = lang.config().map_err(str::to_string)?;
    let (tags, has_error) = cx.generate_tags(config, source, None).map_err(|e| e.to_string())?;
    // Where each line starts, to place a name by its byte offset.
    let starts: Vec<usize> =
        std::iter::once(0).chain(source.iter().enumerate().filter(|(_, b)| **b == b'\n').map(|(i, _)| i + 1)).collect();
    let mut defs = Vec::new();
    for tag in tags {
        let tag = tag.map_err(|e| e.to_string())?;
        if !tag.is_definition {
            continue;
        }
        let Some(kind) = kind_of(config.syntax_type_name(tag.syntax_type_id)) else { continue };
        let name = String::from_utf8_lossy(&source[tag.name_range.clone()]).into_owned();
        if name.is_empty() {
            continue;
        }
        let line_text = String::from_utf8_lossy(&source[tag.line_range.clone()]);
        let text: String = line_text.trim().chars().take(MAX_TEXT_CHARS).collect();
        let at = tag.name_range.start;
        let line = starts.partition_point(|s| *s <= at);
        let line_start = starts[line - 1];
        let col = String::from_utf8_lossy(&source[line_start..at]).chars().count() + 1;
        let syntax = config.syntax_type_name(tag.syntax_type_id).to_string();
        defs.push((
            tag.range.clone(),
            syntax,
            Symbol {
                name,
                kind,
                line: u32::try_from(line).unwrap_or(u32::MAX),
                col: u32::try_from(col).unwrap_or(u32::MAX),
                text,
                scope: None,
            },
        ));
    }
    // Each symbol's scope: the innermost other definition around it. Definitions come from a
    // tree, so they nest or are apart: in start order (outer first), a stack of the open ones.
    defs.sort_by(|a, b| a.0.start.cmp(&b.0.start).then(b.0.end.cmp(&a.0.end)));
    let mut open: Vec<(std::ops::Range<usize>, String)> = Vec::new();
    let mut symbols = Vec::with_capacity(defs.len());
    for (range, syntax, mut symbol) in defs {
        while open.last().is_some_and(|(outer, _)| !(outer.start <= range.start && range.end <= outer.end)) {
            open.pop();
        }
        symbol.scope = open.iter().rev().find(|(outer, _)| *outer != range).map(|(_, label)| label.clone());
        open.push((range, format!("{syntax} {}", symbol.name)));
        symbols.push(symbol);
    }
    Ok((symbols, !has_error))
}

/// Reads and tags one file (opened by `open`, confined like every file tool's).
fn tag_file(
    cx: &mut TagsContext,
    found: &Found,
    open: &(dyn Fn(&str) -> std::io::Result<std::fs::File> + Sync),
) -> Option<Tagged> {
    let lang = lang_of(Path::new(&found.rel));
    let mut bytes = Vec::new();
    let file = open(&found.rel).ok()?;
    file.take(MAX_TAGGED_BYTES + 1).read_to_end(&mut bytes).ok()?;
    let hash = i64::from_ne_bytes(xxhash_rust::xxh3::xxh3_64(&bytes).to_ne_bytes());
    let Some(lang) = lang.filter(|_| bytes.len() as u64 <= MAX_TAGGED_BYTES) else {
        return Some(Tagged { hash, state: "skipped", symbols: Vec::new() });
    };
    Some(match tag(cx, lang, &bytes) {
        Ok((symbols, true)) => Tagged { hash, state: "ok", symbols },
        Ok((symbols, false)) => Tagged { hash, state: "error", symbols },
        Err(_) => Tagged { hash, state: "error", symbols: Vec::new() },
    })
}

/// What changed between the index (`seen`) and the walk (`found`): files whose size and time
/// are as recorded are left alone; the others are read, and re-tagged when their content
/// differs. Tagging runs on up to `threads` threads.
pub fn diff(
    seen: &HashMap<String, Seen>,
    found: Vec<Found>,
    threads: usize,
    open: &(dyn Fn(&str) -> std::io::Result<std::fs::File> + Sync),
) -> Changes {
    let mut changes = Changes::default();
    let mut present: std::collections::HashSet<&str> = std::collections::HashSet::new();
    let mut todo = Vec::new();
    for f in &found {
        present.insert(f.rel.as_str());
        match seen.get(&f.rel) {
            Some(s) if s.size == f.size && s.mtime_ns == f.mtime_ns => {}
            _ => todo.push(f.clone()),
        }
    }
    changes.removed = seen.keys().filter(|p| !present.contains(p.as_str())).cloned().collect();
    let results: Mutex<Vec<(Found, Tagged)>> = Mutex::new(Vec::with_capacity(todo.len()));
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..threads.clamp(1, 8).min(todo.len().max(1)) {
            scope.spawn(|| {
                let mut cx = TagsContext::new();
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(f) = todo.get(i) else { break };
                    if let Some(tagged) = tag_file(&mut cx, f, open) {
                        results.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push((f.clone(), tagged));
                    }
                }
            });
        }
    });
    let mut results = results.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
    results.sort_by(|a, b| a.0.rel.cmp(&b.0.rel));
    for (f, tagged) in results {
        match seen.get(&f.rel) {
            Some(s) if s.hash == tagged.hash => changes.touched.push((f.rel, f.size, f.mtime_ns)),
            _ => {
                let lang = lang_of(Path::new(&f.rel)).map(|l| l.name);
                changes.replaced.push(Replaced {
                    path: f.rel,
                    size: f.size,
                    mtime_ns: f.mtime_ns,
                    hash: tagged.hash,
                    lang,
                    state: tagged.state,
                    symbols: tagged.symbols,
                });
            }
        }
    }
    changes
}

/// A file's size and modification time from its metadata.
pub fn stamp(meta: &std::fs::Metadata) -> (i64, i64) {
    let size = i64::try_from(meta.size()).unwrap_or(i64::MAX);
    let mtime = meta.mtime().saturating_mul(1_000_000_000).saturating_add(meta.mtime_nsec());
    (size, mtime)
}

/// `path` below `root` as stored (`/`-separated), if it is below it.
pub fn rel_of(root: &Path, path: &Path) -> Option<String> {
    let rel: PathBuf = path.strip_prefix(root).ok()?.to_path_buf();
    let s = rel.to_str()?.to_string();
    (!s.is_empty()).then_some(s)
}
