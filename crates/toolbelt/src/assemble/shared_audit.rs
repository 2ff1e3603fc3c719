//! The audit log in the shared database (`storage.url`): one chain every replica appends to,
//! each record naming the replica that wrote it.
//!
//! A call never waits for the database: its record goes onto a queue, and a thread of the
//! log's own writes what waits in one transaction at a time (many records per transaction
//! under load). While the database cannot be reached, records wait in memory (up to
//! [`MAX_WAITING`]; beyond that the oldest are dropped and counted) and the thread tries
//! again every second. Each record has an id of this process's, so a batch sent again after a
//! commit whose answer was lost is not written twice.
//!
//! A front end that stops closes the log: the thread tries at once (and again every quarter
//! second) until what waits is written or [`CLOSE_WAIT`] has passed; what is still waiting
//! then is said on stderr and counted as not written.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use toolbelt_runtime::audit::{ChainStore, chain_line};
use toolbelt_tools::storage::AuditChain;

/// How many records may wait for the database.
pub const MAX_WAITING: usize = 50_000;

/// How long closing waits for what waits to be written.
pub const CLOSE_WAIT: Duration = Duration::from_secs(5);

/// How many records one transaction writes at most.
const BATCH: usize = 500;

/// How long the thread waits before trying an unreachable database again.
const RETRY: Duration = Duration::from_secs(1);

/// How often it tries while the log is being closed.
const CLOSING_RETRY: Duration = Duration::from_millis(250);

enum Msg {
    Record(Vec<u8>),
    /// Answer once nothing waits, or at the deadline.
    Flush(Sender<()>, Instant),
}

/// A [`ChainStore`] over the shared database's [`AuditChain`].
pub struct SharedAuditLog {
    queue: Mutex<Option<Sender<Msg>>>,
    failures: Arc<AtomicU64>,
    /// Records queued and not yet written.
    waiting: Arc<AtomicUsize>,
    /// Set when closing gave up waiting and said (and counted) what was lost, so the thread
    /// does not say it again.
    abandoned: Arc<AtomicBool>,
    /// Answers when the thread has ended.
    ended: Mutex<Option<Receiver<()>>>,
}

impl SharedAuditLog {
    /// Starts the writing thread; records name `replica`.
    pub fn start(chain: AuditChain, replica: &str) -> std::io::Result<Self> {
        let (tx, rx) = mpsc::channel();
        let (ended_tx, ended) = mpsc::channel();
        let failures = Arc::new(AtomicU64::new(0));
        let waiting = Arc::new(AtomicUsize::new(0));
        let abandoned = Arc::new(AtomicBool::new(false));
        // Record ids: this process (replica, pid, start) and a counter.
        let instance = format!("{replica}:{}:{}", std::process::id(), unique_now());
        let writer = Writer {
            chain,
            rx,
            failures: Arc::clone(&failures),
            waiting: Arc::clone(&waiting),
            abandoned: Arc::clone(&abandoned),
            queue: VecDeque::new(),
            flushes: Vec::new(),
            down: false,
            next_try: Instant::now(),
            instance,
            next_id: 0,
        };
        let prefix = format!("{{\"replica\":{},", serde_json::Value::String(replica.to_string()));
        std::thread::Builder::new().name("audit-writer".into()).spawn(move || {
            writer.run(&prefix);
            let _ = ended_tx.send(());
        })?;
        Ok(Self { queue: Mutex::new(Some(tx)), failures, waiting, abandoned, ended: Mutex::new(Some(ended)) })
    }

    fn send(&self, msg: Msg) -> bool {
        let queue = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
        queue.as_ref().is_some_and(|q| q.send(msg).is_ok())
    }
}

impl ChainStore for SharedAuditLog {
    fn append(&self, body: Vec<u8>) {
        self.waiting.fetch_add(1, Ordering::Relaxed);
        if !self.send(Msg::Record(body)) {
            self.waiting.fetch_sub(1, Ordering::Relaxed);
            self.failures.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Blocking, at most a little over [`CLOSE_WAIT`]: call it off the async runtime's threads.
    fn close(&self) {
        let (tx, rx) = mpsc::channel();
        if !self.send(Msg::Flush(tx, Instant::now() + CLOSE_WAIT)) {
            return;
        }
        if rx.recv_timeout(CLOSE_WAIT + Duration::from_secs(1)).is_err() {
            // The thread is inside an attempt that does not end in time (a connection that
            // does not come, a lock held elsewhere): what waits is said lost here, once.
            let left = self.waiting.load(Ordering::Relaxed);
            if left > 0 && !self.abandoned.swap(true, Ordering::Relaxed) {
                self.failures.fetch_add(left as u64, Ordering::Relaxed);
                tracing::warn!(
                    "{left} audit record(s) could not be written to the shared database within {} s of closing; \
                     they are lost when toolbelt stops",
                    CLOSE_WAIT.as_secs()
                );
            }
        }
    }

    fn failures(&self) -> u64 {
        self.failures.load(Ordering::Relaxed)
    }
}

impl Drop for SharedAuditLog {
    /// Writes what waits, then ends the thread and waits (briefly) for it to end.
    fn drop(&mut self) {
        self.close();
        self.queue.lock().unwrap_or_else(PoisonError::into_inner).take();
        if let Some(ended) = self.ended.lock().unwrap_or_else(PoisonError::into_inner).take() {
            let _ = ended.recv_timeout(Duration::from_secs(1));
        }
    }
}

/// The writing thread's state.
struct Writer {
    chain: AuditChain,
    rx: Receiver<Msg>,
    failures: Arc<AtomicU64>,
    waiting: Arc<AtomicUsize>,
    /// Records to write, each with its id.
    queue: VecDeque<(String, Vec<u8>)>,
    /// Closes waiting for their answer, with their deadlines.
    flushes: Vec<(Sender<()>, Instant)>,
    /// Whether the last attempt failed (warned about once per outage).
    down: bool,
    /// When to try again while `down`.
    next_try: Instant,
    abandoned: Arc<AtomicBool>,
    instance: String,
    next_id: u64,
}

impl Writer {
    fn run(mut self, prefix: &str) {
        let mut open = true;
        loop {
            // Wait for work: for as long as it takes when nothing waits, until the next attempt
            // while the database is down, not at all otherwise.
            let got = if self.queue.is_empty() && self.flushes.is_empty() {
                self.rx.recv().map_err(|_| RecvTimeoutError::Disconnected)
            } else if self.down {
                let deadline =
                    self.flushes.iter().map(|(_, d)| *d).min().map_or(self.next_try, |d| d.min(self.next_try));
                self.rx.recv_timeout(deadline.saturating_duration_since(Instant::now()))
            } else {
                self.rx.recv_timeout(Duration::ZERO)
            };
            match got {
                Ok(msg) => self.take(msg),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => open = false,
            }
            while let Ok(msg) = self.rx.try_recv() {
                self.take(msg);
            }
            let closing = !open || !self.flushes.is_empty();
            if !self.queue.is_empty() && (!self.down || Instant::now() >= self.next_try) {
                self.write(prefix);
                self.next_try = Instant::now() + if closing { CLOSING_RETRY } else { RETRY };
            }
            self.answer_flushes();
            if !open {
                if !self.queue.is_empty() {
                    self.give_up();
                }
                return;
            }
        }
    }

    fn take(&mut self, msg: Msg) {
        match msg {
            Msg::Record(body) => {
                if self.queue.len() >= MAX_WAITING {
                    self.queue.pop_front();
                    self.waiting.fetch_sub(1, Ordering::Relaxed);
                    self.failures.fetch_add(1, Ordering::Relaxed);
                }
                self.next_id += 1;
                self.queue.push_back((format!("{}:{}", self.instance, self.next_id), body));
            }
            Msg::Flush(done, deadline) => {
                // Closing tries at once, whenever the last attempt was.
                self.next_try = Instant::now();
                self.flushes.push((done, deadline));
            }
        }
    }

    /// Answers the closes whose wait is over: nothing waits, or their deadline passed (what
    /// still waits is then said and counted).
    fn answer_flushes(&mut self) {
        if self.flushes.is_empty() {
            return;
        }
        let now = Instant::now();
        let empty = self.queue.is_empty();
        let (due, pending): (Vec<_>, Vec<_>) =
            self.flushes.drain(..).partition(|(_, deadline)| empty || *deadline <= now);
        self.flushes = pending;
        if due.is_empty() {
            return;
        }
        if !empty {
            self.give_up();
        }
        for (done, _) in due {
            let _ = done.send(());
        }
    }

    /// What still waits when the log closes is lost with the process: said and counted.
    fn give_up(&mut self) {
        let left = self.queue.len();
        // Unless closing already said so, having waited no longer.
        if !self.abandoned.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                "{left} audit record(s) could not be written to {}, which does not answer; they are lost when \
                 toolbelt stops",
                self.chain.server()
            );
            self.failures.fetch_add(left as u64, Ordering::Relaxed);
        }
        self.waiting.fetch_sub(left, Ordering::Relaxed);
        self.queue.clear();
    }

    /// Writes what waits, a batch per transaction, until it is all written or one fails.
    fn write(&mut self, prefix: &str) {
        while !self.queue.is_empty() {
            let n = self.queue.len().min(BATCH);
            let batch: Vec<(String, Vec<u8>)> =
                self.queue.iter().take(n).map(|(id, body)| (id.clone(), with_replica(prefix, body))).collect();
            match self.chain.append(&batch, chain_line) {
                Ok(_) => {
                    self.queue.drain(..n);
                    self.waiting.fetch_sub(n, Ordering::Relaxed);
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

/// Nanoseconds since the epoch, hashed short: with the pid, this process's part of the ids.
fn unique_now() -> String {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_nanos();
    toolbelt_core::sha256_hex(nanos.to_string().as_bytes())[..12].to_string()
}
