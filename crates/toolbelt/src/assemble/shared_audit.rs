//! The audit log in the shared database (`storage.url`): one chain every replica appends to,
//! each record naming the replica that wrote it.
//!
//! A call never waits for the database: its record goes onto a queue, and a thread of the
//! log's own writes what waits in one transaction at a time (many records per transaction
//! under load). While the database cannot be reached, records wait in memory (up to
//! [`MAX_WAITING`]; beyond that the oldest are dropped and counted) and the thread tries
//! again every second. A front end that stops closes the log, which writes what waits (for a
//! few seconds at most) before the process ends.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use toolbelt_runtime::audit::{ChainStore, chain_line};
use toolbelt_tools::storage::AuditChain;

/// How many records may wait for the database.
pub const MAX_WAITING: usize = 50_000;

/// How many records one transaction writes at most.
const BATCH: usize = 500;

/// How long closing waits for what waits to be written.
const CLOSE_WAIT: Duration = Duration::from_secs(5);

/// How long the thread waits before trying an unreachable database again.
const RETRY: Duration = Duration::from_secs(1);

enum Msg {
    Record(Vec<u8>),
    /// Answer once nothing waits (or writing failed).
    Flush(Sender<()>),
}

/// A [`ChainStore`] over the shared database's [`AuditChain`].
pub struct SharedAuditLog {
    queue: Mutex<Option<Sender<Msg>>>,
    failures: Arc<AtomicU64>,
}

impl SharedAuditLog {
    /// Starts the writing thread; records name `replica`.
    pub fn start(chain: AuditChain, replica: &str) -> std::io::Result<Self> {
        let (tx, rx) = mpsc::channel();
        let failures = Arc::new(AtomicU64::new(0));
        let writer = Writer {
            chain,
            rx,
            failures: Arc::clone(&failures),
            waiting: VecDeque::new(),
            flushes: Vec::new(),
            down: false,
        };
        let prefix = format!("{{\"replica\":{},", serde_json::Value::String(replica.to_string()));
        std::thread::Builder::new().name("audit-writer".into()).spawn(move || writer.run(&prefix))?;
        Ok(Self { queue: Mutex::new(Some(tx)), failures })
    }

    fn send(&self, msg: Msg) -> bool {
        let queue = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
        queue.as_ref().is_some_and(|q| q.send(msg).is_ok())
    }
}

impl ChainStore for SharedAuditLog {
    fn append(&self, body: Vec<u8>) {
        if !self.send(Msg::Record(body)) {
            self.failures.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn close(&self) {
        let (tx, rx) = mpsc::channel();
        if self.send(Msg::Flush(tx)) {
            let _ = rx.recv_timeout(CLOSE_WAIT);
        }
    }

    fn failures(&self) -> u64 {
        self.failures.load(Ordering::Relaxed)
    }
}

impl Drop for SharedAuditLog {
    /// Writes what waits, then lets the thread end (it makes one last attempt at what is
    /// still left and counts what it cannot write).
    fn drop(&mut self) {
        self.close();
        self.queue.lock().unwrap_or_else(PoisonError::into_inner).take();
    }
}

/// The writing thread's state.
struct Writer {
    chain: AuditChain,
    rx: Receiver<Msg>,
    failures: Arc<AtomicU64>,
    waiting: VecDeque<Vec<u8>>,
    flushes: Vec<Sender<()>>,
    /// Whether the last attempt failed (warned about once per outage).
    down: bool,
}

impl Writer {
    fn run(mut self, prefix: &str) {
        let mut open = true;
        let mut next_try = Instant::now();
        loop {
            // Wait for work: for as long as it takes when nothing waits, until the next attempt
            // while the database is down, not at all otherwise.
            let got = if self.waiting.is_empty() {
                self.rx.recv().map_err(|_| RecvTimeoutError::Disconnected)
            } else {
                self.rx.recv_timeout(if self.down {
                    next_try.saturating_duration_since(Instant::now())
                } else {
                    Duration::ZERO
                })
            };
            match got {
                Ok(msg) => self.take(msg),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => open = false,
            }
            while let Ok(msg) = self.rx.try_recv() {
                self.take(msg);
            }
            // While the database is down, the next attempt waits its turn; the end tries once
            // more.
            if !self.waiting.is_empty() && (!self.down || Instant::now() >= next_try || !open) {
                self.write(prefix);
                next_try = Instant::now() + RETRY;
            }
            if !open && self.down {
                // Nobody will send again and the database does not answer: what waits is lost.
                self.failures.fetch_add(self.waiting.len() as u64, Ordering::Relaxed);
                self.waiting.clear();
            }
            if self.down && !self.waiting.is_empty() && !self.flushes.is_empty() {
                // Closing: the front end is about to stop, and these go with it.
                tracing::warn!(
                    "{} audit record(s) could not be written to {}, which does not answer; they are lost when \
                     toolbelt stops",
                    self.waiting.len(),
                    self.chain.server()
                );
            }
            if self.waiting.is_empty() || self.down {
                for flush in self.flushes.drain(..) {
                    let _ = flush.send(());
                }
            }
            if !open && self.waiting.is_empty() {
                return;
            }
        }
    }

    fn take(&mut self, msg: Msg) {
        match msg {
            Msg::Record(body) => {
                if self.waiting.len() >= MAX_WAITING {
                    self.waiting.pop_front();
                    self.failures.fetch_add(1, Ordering::Relaxed);
                }
                self.waiting.push_back(body);
            }
            Msg::Flush(done) => self.flushes.push(done),
        }
    }

    /// Writes what waits, a batch per transaction, until it is all written or one fails.
    fn write(&mut self, prefix: &str) {
        while !self.waiting.is_empty() {
            let n = self.waiting.len().min(BATCH);
            let bodies: Vec<Vec<u8>> = self.waiting.iter().take(n).map(|body| with_replica(prefix, body)).collect();
            match self.chain.append(&bodies, chain_line) {
                Ok(_) => {
                    self.waiting.drain(..n);
                    if std::mem::take(&mut self.down) {
                        tracing::info!("the audit log is written to {} again", self.chain.server());
                    }
                }
                Err(e) => {
                    if !std::mem::replace(&mut self.down, true) {
                        tracing::warn!(
                            "cannot write the audit log to the shared database ({e}); calls go on, and their records \
                             wait in memory (up to {MAX_WAITING}) until it can be written again"
                        );
                    }
                    return;
                }
            }
        }
    }
}

/// The body with the replica's name as its first field.
fn with_replica(prefix: &str, body: &[u8]) -> Vec<u8> {
    match body.strip_prefix(b"{").filter(|rest| rest.len() > 1) {
        Some(rest) => {
            let mut out = Vec::with_capacity(prefix.len() + rest.len());
            out.extend_from_slice(prefix.as_bytes());
            out.extend_from_slice(rest);
            out
        }
        None => body.to_vec(),
    }
}
