//! The audit log: one JSON line per call, appended to a file rotated by size.
//!
//! Each line says when the call arrived, in which session, which tool with what input
//! (secrets redacted), what the permission engine decided and what made that decision, which
//! hooks ran and what they said, and how the call ended (outcome, duration, output size).
//!
//! Writing never stands in a call's way: a line is appended with one `write` under a lock, and
//! a failure (a full disk, a removed directory) is reported once as a warning on stderr and
//! the call goes on. When the file would grow past its size limit it is rotated first
//! (`audit.jsonl` → `audit.jsonl.1` → … → `audit.jsonl.N`, the oldest dropped).

use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, SystemTime};

use serde::Serialize;
use serde_json::Value;
use toolbelt_policy::{HookRun, Verdict};

/// Where the audit log goes and how it is rotated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditConfig {
    /// The log file; its directory is created when first needed.
    pub path: PathBuf,
    /// Rotate before the file would grow past this many bytes.
    pub max_bytes: u64,
    /// How many rotated files to keep (`path.1` … `path.N`).
    pub keep: u32,
}

impl AuditConfig {
    /// A log at `path` rotated at 10 MiB, keeping 5 old files.
    pub fn at(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into(), max_bytes: 10 * 1024 * 1024, keep: 5 }
    }
}

/// One call, as recorded.
#[derive(Debug, Serialize)]
pub struct AuditRecord<'a> {
    /// When the call arrived (RFC 3339, UTC, milliseconds).
    pub time: String,
    /// The session id.
    pub session: &'a str,
    /// The call id.
    pub call_id: &'a str,
    /// The tool's canonical name, or the name asked for when it did not resolve.
    pub tool: &'a str,
    /// The input, with secret-looking values redacted (`null` when it never validated).
    pub input: Value,
    /// The permission decision and what made it, when the call got that far.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision: Option<&'a Verdict>,
    /// How a person answered when the decision was to ask (`allow_once`, `allow_session`,
    /// `allow_always`, `deny`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approval: Option<&'static str>,
    /// Hooks that ran, in order, with what they said.
    #[serde(skip_serializing_if = "<[HookRun]>::is_empty")]
    pub hooks: &'a [HookRun],
    /// How the call ended (`ok`, `tool_error`, `denied`, `timed_out`…).
    pub outcome: &'a str,
    /// Whether the model got an error.
    pub is_error: bool,
    /// Wall time from arrival to result, in milliseconds.
    pub duration_ms: f64,
    /// Characters of text the model got (after the budget).
    pub output_chars: usize,
}

/// An append-only, size-rotated JSON Lines file of [`AuditRecord`]s.
pub struct AuditLog {
    config: AuditConfig,
    file: Mutex<Option<(File, u64)>>,
    warned: AtomicBool,
}

impl std::fmt::Debug for AuditLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuditLog").field("config", &self.config).finish()
    }
}

impl AuditLog {
    /// A log as configured; nothing is opened until the first record.
    pub fn new(config: AuditConfig) -> Self {
        Self { config, file: Mutex::new(None), warned: AtomicBool::new(false) }
    }

    /// Appends one record. Never fails: a problem is a warning on stderr, once.
    pub fn record(&self, record: &AuditRecord<'_>) {
        let mut line = match serde_json::to_vec(record) {
            Ok(line) => line,
            Err(e) => return self.warn(&e.to_string()),
        };
        line.push(b'\n');
        if let Err(e) = self.append(&line) {
            self.warn(&e.to_string());
        }
    }

    fn append(&self, line: &[u8]) -> std::io::Result<()> {
        let mut guard = self.file.lock().unwrap_or_else(PoisonError::into_inner);
        let len = line.len() as u64;
        if guard.is_none() {
            *guard = Some(self.open()?);
        }
        if matches!(guard.as_ref(), Some((_, size)) if *size > 0 && size + len > self.config.max_bytes) {
            *guard = None;
            self.rotate()?;
            *guard = Some(self.open()?);
        }
        let Some((file, size)) = guard.as_mut() else { return Ok(()) };
        match file.write_all(line) {
            Ok(()) => {
                *size += len;
                Ok(())
            }
            Err(e) => {
                // Reopen next time: the file may have been removed or the disk freed.
                *guard = None;
                Err(e)
            }
        }
    }

    fn open(&self) -> std::io::Result<(File, u64)> {
        if let Some(dir) = self.config.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let file = OpenOptions::new().create(true).append(true).open(&self.config.path)?;
        let size = file.metadata()?.len();
        Ok((file, size))
    }

    /// `path.N-1` → `path.N` … `path` → `path.1`; with `keep` 0 the file is just truncated.
    fn rotate(&self) -> std::io::Result<()> {
        let path = &self.config.path;
        let numbered = |n: u32| {
            let mut p = path.as_os_str().to_owned();
            p.push(format!(".{n}"));
            PathBuf::from(p)
        };
        if self.config.keep == 0 {
            return File::create(path).map(drop);
        }
        for n in (1..self.config.keep).rev() {
            match std::fs::rename(numbered(n), numbered(n + 1)) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
        }
        std::fs::rename(path, numbered(1))
    }

    fn warn(&self, problem: &str) {
        if !self.warned.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                "cannot write the audit log {} ({problem}); calls go on without it until it can be written again",
                self.config.path.display()
            );
        }
    }
}

/// Keys whose values are never written to the audit log (matched without case, `-` and `_`).
const SECRET_KEYS: &[&str] = &[
    "token",
    "password",
    "passwd",
    "secret",
    "authorization",
    "apikey",
    "cookie",
    "credential",
    "privatekey",
    "accesskey",
];

/// The input with the value of every key that looks like it holds a secret replaced by
/// `"[redacted]"`, at any depth.
pub fn redact(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let v = if is_secret_key(k) { Value::String("[redacted]".into()) } else { redact(v) };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(redact).collect()),
        other => other.clone(),
    }
}

fn is_secret_key(key: &str) -> bool {
    let folded: String = key.chars().filter(|c| !matches!(c, '-' | '_' | ' ')).flat_map(char::to_lowercase).collect();
    SECRET_KEYS.iter().any(|s| folded.contains(s))
}

/// `time` as RFC 3339 in UTC with milliseconds (`2026-11-22T14:03:07.123Z`).
pub fn rfc3339(time: SystemTime) -> String {
    let since = time.duration_since(SystemTime::UNIX_EPOCH).unwrap_or(Duration::ZERO);
    let secs = since.as_secs();
    let (days, rest) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(i64::try_from(days).unwrap_or(0));
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60,
        since.subsec_millis()
    )
}

/// Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = u32::try_from(doy - (153 * mp + 2) / 5 + 1).unwrap_or(1);
    let m = u32::try_from(if mp < 10 { mp + 3 } else { mp - 9 }).unwrap_or(1);
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use serde_json::json;

    #[test]
    fn secrets_are_redacted_at_any_depth() {
        let input = json!({
            "command": "curl",
            "headers": {"Authorization": "Bearer x", "X-Api-Key": "k", "accept": "json"},
            "list": [{"password": "p"}, {"name": "n"}],
            "GITHUB_TOKEN": "t",
            "client_secret": "s",
        });
        assert_eq!(
            redact(&input),
            json!({
                "command": "curl",
                "headers": {"Authorization": "[redacted]", "X-Api-Key": "[redacted]", "accept": "json"},
                "list": [{"password": "[redacted]"}, {"name": "n"}],
                "GITHUB_TOKEN": "[redacted]",
                "client_secret": "[redacted]",
            })
        );
    }

    fn record_of(call_id: &str) -> AuditRecord<'_> {
        AuditRecord {
            time: rfc3339(SystemTime::now()),
            session: "s",
            call_id,
            tool: "Read",
            input: json!({"file_path": "a.txt"}),
            decision: None,
            approval: None,
            hooks: &[],
            outcome: "ok",
            is_error: false,
            duration_ms: 0.5,
            output_chars: 10,
        }
    }

    #[test]
    fn appends_lines_and_rotates_by_size() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("logs/audit.jsonl");
        let log = AuditLog::new(AuditConfig { path: path.clone(), max_bytes: 400, keep: 2 });
        for i in 0..12 {
            log.record(&record_of(&format!("call-{i:02}")));
        }
        let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
        let numbered = |n: u32| PathBuf::from(format!("{}.{n}", path.display()));
        let (now, one, two) = (read(&path), read(&numbered(1)), read(&numbered(2)));
        for text in [&now, &one, &two] {
            assert!(!text.is_empty() && text.len() <= 400, "{text}");
            for line in text.lines() {
                let v: Value = serde_json::from_str(line).unwrap();
                assert_eq!(v["tool"], "Read");
            }
        }
        assert!(!numbered(3).exists(), "only `keep` rotated files are kept");
        // A line is ~190 bytes, so each file holds two: the newest live, older ones rotated
        // out in order, the oldest dropped.
        let ids = |text: &str| {
            text.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()["call_id"].clone()).collect::<Vec<_>>()
        };
        assert_eq!(ids(&now), [json!("call-10"), json!("call-11")]);
        assert_eq!(ids(&one), [json!("call-08"), json!("call-09")]);
        assert_eq!(ids(&two), [json!("call-06"), json!("call-07")]);
    }

    #[test]
    fn an_unwritable_log_never_fails_a_call() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("file"), "").unwrap();
        // Its "directory" is a file: every write fails; recording just warns.
        let log = AuditLog::new(AuditConfig::at(dir.path().join("file/audit.jsonl")));
        log.record(&record_of("c1"));
        log.record(&record_of("c2"));
        assert!(log.warned.load(Ordering::Relaxed));
    }

    #[test]
    fn formats_utc_times() {
        let t = SystemTime::UNIX_EPOCH + Duration::from_millis(1_795_356_187_123);
        assert_eq!(rfc3339(t), "2026-11-22T14:03:07.123Z");
        assert_eq!(rfc3339(SystemTime::UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let leap = SystemTime::UNIX_EPOCH + Duration::from_secs(951_782_400); // 2000-02-29
        assert_eq!(&rfc3339(leap)[..10], "2000-02-29");
    }
}
