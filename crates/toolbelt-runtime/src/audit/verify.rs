//! Checking a log: the rotated files oldest first, then the live one, every line a record,
//! every `seq` one more than the last, every `prev` the digest of the line before, and the
//! head anchor naming the last record. The first thing that is wrong is reported, precisely
//! enough to find it (which record, which file, which line).
//!
//! A log may start past `seq` 1, older files being dropped by rotation; the head anchor says
//! where it starts (`first`), so records removed from the start show too. A record with
//! `seq` 1 must chain to 64 zeros.

use std::collections::BTreeMap;
use std::fmt;
use std::fs::File;
use std::path::{Path, PathBuf};

use nix::fcntl::{Flock, FlockArg};
use serde::{Deserialize, Serialize};

use super::chain::{self, GENESIS, Head, Link};

/// A log whose chain holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// How many records were checked.
    pub records: u64,
    /// The first record's `seq`.
    pub first_seq: u64,
    /// The last record's `seq`.
    pub last_seq: u64,
    /// When the first record's call arrived.
    pub first_time: String,
    /// When the last record's call arrived.
    pub last_time: String,
    /// How many records each replica wrote, when records name theirs (a chain several
    /// replicas share).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub replicas: BTreeMap<String, u64>,
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "ok: {} record{}, seq {}..{}, {} to {}",
            self.records,
            if self.records == 1 { "" } else { "s" },
            self.first_seq,
            self.last_seq,
            self.first_time,
            self.last_time
        )?;
        if !self.replicas.is_empty() {
            let each: Vec<String> = self.replicas.iter().map(|(name, n)| format!("{name}: {n}")).collect();
            write!(f, " (by replica: {})", each.join(", "))?;
        }
        Ok(())
    }
}

/// The first thing wrong with a log. Files are named by their file name (`audit.jsonl.1`),
/// lines from 1.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Broken {
    /// Neither the log nor any rotated file exists.
    #[error("nothing to verify: there is no audit log at {path}")]
    NoLog {
        /// The log's path.
        path: String,
    },
    /// The log's files hold no record, and there is no head anchor saying there were some.
    #[error("the audit log {path} holds no records")]
    Empty {
        /// The log's path.
        path: String,
    },
    /// A file could not be read.
    #[error("cannot read {file}: {error}")]
    Unreadable {
        /// The file.
        file: String,
        /// What went wrong.
        error: String,
    },
    /// A line ends before its JSON does (a write cut short, or a cut).
    #[error("{file} line {line} is truncated (not a complete JSON record)")]
    Truncated {
        /// The file.
        file: String,
        /// The line.
        line: usize,
    },
    /// A line is JSON but not a chained record (or not JSON at all).
    #[error("{file} line {line} is not an audit record ({problem})")]
    NotARecord {
        /// The file.
        file: String,
        /// The line.
        line: usize,
        /// What is wrong with it.
        problem: String,
    },
    /// The next record carries a different digest of this one.
    #[error("record seq {seq} ({file} line {line}) was edited: record {next} carries a different digest of it")]
    Edited {
        /// The edited record's `seq`.
        seq: u64,
        /// Its file.
        file: String,
        /// Its line.
        line: usize,
        /// The record after it.
        next: u64,
    },
    /// The record with `seq` 1 does not chain to 64 zeros.
    #[error("record seq 1 ({file} line {line}) was edited: the first record's prev must be 64 zeros")]
    EditedFirst {
        /// Its file.
        file: String,
        /// Its line.
        line: usize,
    },
    /// `seq` jumps: records between two lines are gone.
    #[error("{} missing between {after_file} line {after_line} and {before_file} line {before_line}", seqs(*first, *last))]
    Missing {
        /// The first missing `seq`.
        first: u64,
        /// The last missing `seq`.
        last: u64,
        /// The file of the record before the gap.
        after_file: String,
        /// Its line.
        after_line: usize,
        /// The file of the record after the gap.
        before_file: String,
        /// Its line.
        before_line: usize,
    },
    /// The log starts later than the head anchor says: its oldest records are gone.
    #[error("{} missing before {file} line {line}: the head anchor says the log starts at seq {first}", seqs(*first, *last))]
    MissingFirst {
        /// The first missing `seq` (where the anchor says the log starts).
        first: u64,
        /// The last missing `seq`.
        last: u64,
        /// The file of the oldest record left.
        file: String,
        /// Its line.
        line: usize,
    },
    /// The log starts earlier than the head anchor says.
    #[error(
        "the head anchor {file} says the log starts at seq {head}, but it starts at seq {first}: the anchor was replaced or could not be written"
    )]
    HeadStart {
        /// The anchor file.
        file: String,
        /// Where the anchor says the log starts.
        head: u64,
        /// Where it starts.
        first: u64,
    },
    /// `seq` goes back or repeats.
    #[error("record seq {seq} ({file} line {line}) is out of order: it comes after seq {after}")]
    OutOfOrder {
        /// The record's `seq`.
        seq: u64,
        /// Its file.
        file: String,
        /// Its line.
        line: usize,
        /// The `seq` before it.
        after: u64,
    },
    /// The head anchor names a later record than the log's last.
    #[error("{} missing: the head anchor says seq {head}", last_missing(*count))]
    MissingLast {
        /// How many records are gone from the end.
        count: u64,
        /// The anchor's `seq`.
        head: u64,
    },
    /// The last record is not the one the head anchor names.
    #[error("record seq {seq} ({file} line {line}) was edited: the head anchor carries a different digest of it")]
    EditedLast {
        /// The record's `seq`.
        seq: u64,
        /// Its file.
        file: String,
        /// Its line.
        line: usize,
    },
    /// The head anchor names an earlier record than the log's last.
    #[error(
        "the head anchor {file} is behind the log (seq {head}, the log goes on to seq {last}): it was replaced or could not be written"
    )]
    HeadBehind {
        /// The anchor file.
        file: String,
        /// The anchor's `seq`.
        head: u64,
        /// The log's last `seq`.
        last: u64,
    },
    /// There is no head anchor, or it is not one.
    #[error("the head anchor {file} is {problem}: the end of the log cannot be checked")]
    BadHead {
        /// The anchor file.
        file: String,
        /// `missing`, or what is wrong with it.
        problem: String,
    },
}

fn seqs(first: u64, last: u64) -> String {
    if first == last { format!("record seq {first} is") } else { format!("records seq {first}..{last} are") }
}

fn last_missing(count: u64) -> String {
    if count == 1 { "the last record is".to_string() } else { format!("the last {count} records are") }
}

/// What a line must hold to be checked.
#[derive(Deserialize)]
struct Chained {
    seq: u64,
    prev: String,
    #[serde(default)]
    time: String,
    #[serde(default)]
    replica: Option<String>,
}

/// The record before the one being checked.
struct Previous {
    link: Link,
    file: String,
    line: usize,
}

/// Checks the log at `path` (the live file; its rotated files and head anchor are found
/// beside it). Writers are held off (a shared lock on the live file) while it reads.
pub fn verify(path: &Path) -> Result<Summary, Broken> {
    let name = |p: &Path| p.file_name().map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into_owned());
    let unreadable = |p: &Path, e: std::io::Error| Broken::Unreadable { file: name(p), error: e.to_string() };
    let _lock = File::open(path).ok().and_then(|f| Flock::lock(f, FlockArg::LockShared).ok());
    let mut files: Vec<PathBuf> = chain::rotated(path).map_err(|e| unreadable(path, e))?;
    if path.exists() {
        files.push(path.to_path_buf());
    }
    if files.is_empty() {
        return Err(Broken::NoLog { path: path.display().to_string() });
    }
    let head = chain::read_head(path);
    let mut check = Checker::new(head.as_ref().ok().and_then(Option::as_ref), name(&chain::head_path(path)));
    for file in &files {
        let bytes = std::fs::read(file).map_err(|e| unreadable(file, e))?;
        let file = name(file);
        let mut lines: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
        let unterminated = lines.pop().filter(|last| !last.is_empty());
        let terminated = lines.len();
        lines.extend(unterminated);
        for (index, line) in lines.into_iter().enumerate() {
            check.line(line, &file, index + 1, index < terminated)?;
        }
    }
    check.finish(head, &path.display().to_string())
}

/// A head anchor kept somewhere other than a file beside the log (a database row): the last
/// record's `seq` and digest, and the `seq` the chain starts at (0 when unknown).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Anchor {
    /// The last record's `seq` (0 before the first).
    pub seq: u64,
    /// The SHA-256 (hex) of the last record's line.
    pub sha256: String,
    /// The `seq` of the oldest record kept.
    pub first: u64,
}

/// Checks a chain kept elsewhere than in files (a database table) the way [`verify`] checks a
/// file, fed as it is read: [`ChainCheck::anchor`] first, then each line oldest first, then
/// [`ChainCheck::finish`].
pub struct ChainCheck {
    checker: Checker,
    head: Option<Head>,
    source: String,
}

impl ChainCheck {
    /// A check of the chain `source` names (`table audit_log`), whose anchor `anchor_name`
    /// names.
    pub fn new(source: &str, anchor_name: &str) -> Self {
        Self { checker: Checker::new(None, anchor_name.to_string()), head: None, source: source.to_string() }
    }

    /// Where the anchor says the chain stands; before the first line.
    pub fn anchor(&mut self, anchor: Anchor) {
        let head = Head { seq: anchor.seq, sha256: anchor.sha256, first: anchor.first };
        self.checker.start = Some(head.clone());
        self.head = Some(head);
    }

    /// The next line; `at` is where it is kept (its row, counted from 1).
    pub fn line(&mut self, line: &[u8], at: usize) -> Result<(), Broken> {
        self.checker.line(line, &self.source, at, true)
    }

    /// After the last line: the summary, or what is wrong at the end.
    pub fn finish(self) -> Result<Summary, Broken> {
        self.checker.finish(Ok(self.head), &self.source)
    }
}

/// The chain so far, fed a line at a time.
struct Checker {
    /// Where the anchor says the log starts, checked at the first record.
    start: Option<Head>,
    head_file: String,
    previous: Option<Previous>,
    summary: Summary,
}

impl Checker {
    fn new(head: Option<&Head>, head_file: String) -> Self {
        Self {
            start: head.cloned(),
            head_file,
            previous: None,
            summary: Summary {
                records: 0,
                first_seq: 0,
                last_seq: 0,
                first_time: String::new(),
                last_time: String::new(),
                replicas: BTreeMap::new(),
            },
        }
    }

    /// One line (without its newline), at line `at` of `file`; `terminated` when a newline
    /// followed it.
    fn line(&mut self, line: &[u8], file: &str, at: usize, terminated: bool) -> Result<(), Broken> {
        let record: Chained = serde_json::from_slice(line).map_err(|e| {
            if e.is_eof() || (!terminated && !e.is_data()) {
                Broken::Truncated { file: file.to_string(), line: at }
            } else {
                Broken::NotARecord { file: file.to_string(), line: at, problem: e.to_string() }
            }
        })?;
        check_link(self.previous.as_ref(), &record, file, at)?;
        let summary = &mut self.summary;
        if summary.records == 0 {
            if let Some(head) = &self.start {
                check_start(head, &self.head_file, record.seq, file, at)?;
            }
            summary.first_seq = record.seq;
            summary.first_time = record.time.clone();
        }
        summary.records += 1;
        summary.last_seq = record.seq;
        summary.last_time = record.time;
        if let Some(replica) = record.replica {
            *summary.replicas.entry(replica).or_default() += 1;
        }
        self.previous = Some(Previous { link: Link::of_line(line), file: file.to_string(), line: at });
        Ok(())
    }

    /// After the last line: the anchor must name it. `path` names the log when it is empty.
    fn finish(self, head: std::io::Result<Option<Head>>, path: &str) -> Result<Summary, Broken> {
        if self.summary.records == 0 {
            return match head {
                Ok(Some(head)) if head.seq > 0 => Err(Broken::MissingLast { count: head.seq, head: head.seq }),
                _ => Err(Broken::Empty { path: path.to_string() }),
            };
        }
        check_head(head, self.head_file, self.previous.as_ref())?;
        Ok(self.summary)
    }
}

/// Whether the oldest record is where the head anchor says the log starts.
fn check_start(head: &Head, head_file: &str, seq: u64, file: &str, line: usize) -> Result<(), Broken> {
    if head.first == 0 || head.first == seq {
        return Ok(());
    }
    if head.first < seq {
        return Err(Broken::MissingFirst { first: head.first, last: seq - 1, file: file.into(), line });
    }
    Err(Broken::HeadStart { file: head_file.into(), head: head.first, first: seq })
}

/// Whether `record` follows `previous` (or starts a chain).
fn check_link(previous: Option<&Previous>, record: &Chained, file: &str, line: usize) -> Result<(), Broken> {
    let Some(prev) = previous else {
        return match record.seq {
            0 => Err(Broken::NotARecord { file: file.into(), line, problem: "seq starts at 1".into() }),
            1 if record.prev != GENESIS => Err(Broken::EditedFirst { file: file.into(), line }),
            _ => Ok(()),
        };
    };
    let expected = prev.link.seq + 1;
    if record.seq < expected {
        return Err(Broken::OutOfOrder { seq: record.seq, file: file.into(), line, after: prev.link.seq });
    }
    if record.seq > expected {
        return Err(Broken::Missing {
            first: expected,
            last: record.seq - 1,
            after_file: prev.file.clone(),
            after_line: prev.line,
            before_file: file.into(),
            before_line: line,
        });
    }
    if record.prev != prev.link.sha256 {
        return Err(Broken::Edited { seq: prev.link.seq, file: prev.file.clone(), line: prev.line, next: record.seq });
    }
    Ok(())
}

/// Whether the head anchor names the last record.
fn check_head(head: std::io::Result<Option<Head>>, file: String, last: Option<&Previous>) -> Result<(), Broken> {
    let head = match head {
        Ok(Some(head)) => head,
        Ok(None) => return Err(Broken::BadHead { file, problem: "missing".into() }),
        Err(e) => return Err(Broken::BadHead { file, problem: format!("not valid ({e})") }),
    };
    let last_seq = last.map_or(0, |l| l.link.seq);
    match (head.seq.cmp(&last_seq), last) {
        (std::cmp::Ordering::Greater, _) => Err(Broken::MissingLast { count: head.seq - last_seq, head: head.seq }),
        (std::cmp::Ordering::Less, _) => Err(Broken::HeadBehind { file, head: head.seq, last: last_seq }),
        (std::cmp::Ordering::Equal, Some(l)) if l.link.sha256 != head.sha256 => {
            Err(Broken::EditedLast { seq: l.link.seq, file: l.file.clone(), line: l.line })
        }
        _ => Ok(()),
    }
}
