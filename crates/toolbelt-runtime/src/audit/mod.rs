//! The audit log: one JSON line per call, evidence of what was asked and what happened.
//!
//! Each record says when the call arrived, in which session, from which client, which tool
//! with what input (secrets redacted, written file contents as size and digest), what the
//! permission engine decided and what made that decision, which hooks ran and what they
//! said, and how the call ended (outcome, duration, output size). Calls refused before they
//! ran (an unknown tool, invalid input, a hidden tool) are recorded with their input as it
//! arrived (redacted) and the reason.
//!
//! # A hash chain
//!
//! Every record starts with `"seq"` (1, 2, 3… across rotated files and restarts) and
//! `"prev"`, the SHA-256 of the previous record's line (64 zeros for the first), so editing,
//! removing or reordering a record breaks the chain at that place. A head anchor beside the
//! log (`audit.jsonl.head`: the last `seq` and its digest, replaced atomically after each
//! record) shows when the *last* records were removed. [`verify`] checks all of it.
//!
//! The chain shows tampering by anyone who cannot rewrite the whole log and its anchor; it
//! is no signature. That is why the log lives outside the project by default (in the user's
//! state directory, where sandboxed commands cannot write), the directory 0700, the file 0600.
//!
//! # Writing never stands in a call's way
//!
//! A record is appended with one `write` (`O_APPEND`) under an advisory `flock` on the log,
//! so several processes appending to one log keep one chain. A failure (a full disk, a
//! removed directory) is reported once as a warning on stderr and the call goes on. When the
//! file would grow past its size limit it is rotated first (`audit.jsonl` → `audit.jsonl.1`
//! → … → `audit.jsonl.N`, the oldest dropped); toolbelt never truncates a log file.

mod chain;
mod redact;
mod verify;
mod writer;
mod written;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, SystemTime};

use serde::Serialize;
use serde_json::Value;
use toolbelt_policy::{HookRun, Verdict};

use crate::call::Outcome;
use crate::client::ClientInfo;

pub use chain::{GENESIS, head_path};
pub use redact::{REDACTED, redact, redact_strings, redact_text};
pub use verify::{Anchor, Broken, ChainCheck, Summary, verify};
pub use writer::chain_line;
pub use written::{Declared, digest_written, may_write};

/// Where the audit log goes and how it is rotated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditConfig {
    /// The log file; its directory is created (0700) when first needed.
    pub path: PathBuf,
    /// Rotate before the file would grow past this many bytes.
    pub max_bytes: u64,
    /// How many rotated files to keep (`path.1` … `path.N`); 0 is read as 1, since toolbelt
    /// never truncates the log and the chain must be followable across the last rotation.
    pub keep: u32,
    /// Keep the head anchor (`path.head`) up to date after each record, so removing the last
    /// records shows. On by default; off only to measure what it costs.
    pub anchor: bool,
}

impl AuditConfig {
    /// A log at `path` rotated at 10 MiB, keeping 5 old files, with its head anchor.
    pub fn at(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into(), max_bytes: 10 * 1024 * 1024, keep: 5, anchor: true }
    }

    /// Every file the log is kept in: the live file, the head anchor and its spare (which
    /// holds the previous anchor while a record is written), and the rotated files. What a
    /// front end protects when the log lies where tools and commands write.
    pub fn files(&self) -> Vec<PathBuf> {
        let mut files = vec![self.path.clone(), chain::head_path(&self.path), chain::head_spare_path(&self.path)];
        files.extend((1..=self.keep.max(1)).map(|n| chain::numbered(&self.path, n)));
        files
    }
}

/// One call, as recorded (before `seq` and `prev` are put in front).
#[derive(Debug, Serialize)]
pub struct AuditRecord<'a> {
    /// When the call arrived (RFC 3339, UTC, milliseconds).
    pub time: String,
    /// The session id.
    pub session: &'a str,
    /// Who sent the call.
    pub client: &'a ClientInfo,
    /// The call id.
    pub call_id: &'a str,
    /// The tool's canonical name, or the name asked for when it did not resolve.
    pub tool: &'a str,
    /// The input: the validated one, or as it arrived for a call refused before it ran.
    /// [`AuditLog::record`] redacts it.
    pub input: Value,
    /// Why the call ended in an error of the runtime's own (unknown tool, invalid input,
    /// denied, timed out…): the message the caller got.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<&'a str>,
    /// The permission decision and what made it, when the call got that far.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision: Option<&'a Verdict>,
    /// How a person answered when the decision was to ask (`allow_once`, `allow_session`,
    /// `allow_always`, `accept_edits_session`, `deny`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approval: Option<&'static str>,
    /// Hooks that ran, in order, with what they said.
    #[serde(skip_serializing_if = "<[HookRun]>::is_empty")]
    pub hooks: &'a [HookRun],
    /// Verdicts on access the call asked for while it ran (a redirect to another host), in
    /// order.
    #[serde(skip_serializing_if = "<[Verdict]>::is_empty")]
    pub follow_ups: &'a [Verdict],
    /// How the call ended (`ok`, `tool_error`, `denied`, `timed_out`…).
    pub outcome: Outcome,
    /// Whether the model got an error.
    pub is_error: bool,
    /// Wall time from arrival to result, in milliseconds.
    pub duration_ms: f64,
    /// Characters of text the model got (after the budget).
    pub output_chars: usize,
}

/// Where a log's records go when not to a file: a store several processes (a team's
/// replicas) append to as one chain, such as a database table. The store forms each line
/// with [`chain_line`], continuing its chain, and keeps its own count of failures.
pub trait ChainStore: Send + Sync {
    /// Appends the record whose JSON (without `seq` and `prev`) is `body`. Never fails the
    /// call: a store that writes later (in batches, on a thread of its own) counts and reports
    /// what it could not write.
    fn append(&self, body: Vec<u8>);
    /// Writes what is still waiting, as far as it can within a few seconds; called when the
    /// front end stops.
    fn close(&self);
    /// How many records could not be written.
    fn failures(&self) -> u64;
}

/// Where an [`AuditLog`] writes.
enum Backend {
    /// The file of [`AuditConfig::path`], rotated beside itself.
    File(Mutex<writer::Writer>),
    /// A store of its own.
    Store(Box<dyn ChainStore>),
}

/// An append-only, hash-chained, size-rotated JSON Lines file of [`AuditRecord`]s (or a
/// [`ChainStore`] holding the same chain).
pub struct AuditLog {
    config: AuditConfig,
    backend: Backend,
    warned: AtomicBool,
    failures: AtomicU64,
}

impl std::fmt::Debug for AuditLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuditLog").field("config", &self.config).finish()
    }
}

impl AuditLog {
    /// A log as configured; nothing is opened until the first record.
    pub fn new(config: AuditConfig) -> Self {
        Self {
            config,
            backend: Backend::File(Mutex::new(writer::Writer::default())),
            warned: AtomicBool::new(false),
            failures: AtomicU64::new(0),
        }
    }

    /// A log whose records go to `store` (`config` still names the file a front end
    /// protects and prints, unused for writing).
    pub fn with_store(config: AuditConfig, store: Box<dyn ChainStore>) -> Self {
        Self { config, backend: Backend::Store(store), warned: AtomicBool::new(false), failures: AtomicU64::new(0) }
    }

    /// The configuration.
    pub fn config(&self) -> &AuditConfig {
        &self.config
    }

    /// Redacts and appends one record. Never fails: a problem is a warning on stderr, once.
    ///
    /// The input loses the values of secret-named keys and every secret-shaped string;
    /// every other string of the record (the reason, the decision, hook outcomes, the
    /// client's name) loses its secret-shaped parts.
    pub fn record(&self, record: &AuditRecord<'_>) {
        let body = match serde_json::to_value(record).and_then(|mut value| {
            if let Value::Object(fields) = &mut value {
                for (key, field) in fields.iter_mut() {
                    match key.as_str() {
                        "input" => *field = redact(field),
                        "time" | "session" | "call_id" | "outcome" | "is_error" | "duration_ms" | "output_chars" => {}
                        _ => redact_strings(field),
                    }
                }
            }
            serde_json::to_vec(&value)
        }) {
            Ok(body) => body,
            Err(e) => return self.warn(&e.to_string()),
        };
        self.append(&body);
    }

    /// Appends a record of the server's own (`{"time", "event", …}`): a drain begun, what
    /// a stop cut short. It joins the chain like a call's; its strings lose their
    /// secret-shaped parts.
    pub fn record_event(&self, event: &str, fields: Value) {
        let mut record = serde_json::Map::new();
        record.insert("time".into(), Value::String(rfc3339(SystemTime::now())));
        record.insert("event".into(), Value::String(event.to_string()));
        if let Value::Object(fields) = fields {
            record.extend(fields);
        }
        let mut record = Value::Object(record);
        redact_strings(&mut record);
        match serde_json::to_vec(&record) {
            Ok(body) => self.append(&body),
            Err(e) => self.warn(&e.to_string()),
        }
    }

    /// How many records could not be written since the log was opened.
    pub fn failures(&self) -> u64 {
        let store = match &self.backend {
            Backend::File(_) => 0,
            Backend::Store(store) => store.failures(),
        };
        self.failures.load(Ordering::Relaxed) + store
    }

    fn append(&self, body: &[u8]) {
        let writer = match &self.backend {
            Backend::File(writer) => writer,
            Backend::Store(store) => return store.append(body.to_vec()),
        };
        let mut writer = writer.lock().unwrap_or_else(PoisonError::into_inner);
        if let Err(e) = writer.append(&self.config, body) {
            drop(writer);
            self.warn(&e.to_string());
        }
    }

    /// Leaves nothing but the log and its anchor beside it (the anchor's spare goes; see
    /// `docs/design.md`, "The audit log"). Dropping the log does the same; a front end that
    /// ends its process without dropping it (on a signal) calls this first. Records written
    /// later still go in.
    pub fn close(&self) {
        match &self.backend {
            Backend::File(writer) => writer.lock().unwrap_or_else(PoisonError::into_inner).close(),
            Backend::Store(store) => store.close(),
        }
    }

    fn warn(&self, problem: &str) {
        self.failures.fetch_add(1, Ordering::Relaxed);
        if !self.warned.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                "cannot write the audit log {} ({problem}); calls go on without it until it can be written again",
                self.config.path.display()
            );
        }
    }
}

/// `time` as RFC 3339 in UTC with milliseconds (`2026-11-22T14:03:07.123Z`).
pub fn rfc3339(time: SystemTime) -> String {
    let since = time.duration_since(SystemTime::UNIX_EPOCH).unwrap_or(Duration::ZERO);
    toolbelt_core::time::rfc3339_millis(i64::try_from(since.as_millis()).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests;
