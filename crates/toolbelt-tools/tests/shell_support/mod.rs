//! Helpers for the shell tests: contexts with a recording sink, limits or services, calls
//! through the registry with such a context, and a /proc scan for processes a command left.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use toolbelt_core::{
    CancellationToken, EventSink, Extensions, Limits, Registry, SessionState, ToolContext, ToolError, ToolEvent,
    ToolOutput,
};

/// A temp directory (kept alive by the guard) and its canonical path.
pub fn project() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    (dir, root)
}

/// A context over `session` with the given sink, limits and services.
pub fn cx_with(session: &Arc<SessionState>, events: EventSink, limits: Limits, services: Extensions) -> ToolContext {
    ToolContext::new("call", Arc::clone(session), CancellationToken::new(), events, limits, services)
}

/// A context with a recording sink, and what it records.
pub fn recording(session: &Arc<SessionState>) -> (ToolContext, Arc<Mutex<Vec<ToolEvent>>>) {
    let (sink, log) = EventSink::recording();
    (cx_with(session, sink, Limits::default(), Extensions::default()), log)
}

thread_local! {
    static REGISTRY: Registry = {
        let r = Registry::new();
        toolbelt_tools::register_builtin(&r).unwrap();
        r
    };
}

/// Validates and runs `input` with `cx`, as the runtime would (minus policy).
pub async fn call_with(cx: ToolContext, tool: &str, input: Value) -> Result<ToolOutput, ToolError> {
    let entry = REGISTRY.with(|r| r.lookup(tool))?;
    let mut prepared = entry.prepare(input)?;
    entry.tool().access(&mut prepared, &cx)?;
    entry.tool().call(prepared, cx).await
}

/// A marker unique to one test, to export in a command so every process it starts carries it.
pub fn marker() -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    format!("m{}x{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed))
}

/// Live (non-zombie) processes whose environment holds `TEST_MARK=<marker>`.
pub fn alive_with(marker: &str) -> Vec<u32> {
    let needle = format!("TEST_MARK={marker}").into_bytes();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else { continue };
        let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| s.rsplit_once(')').map(|(_, rest)| rest.trim_start().starts_with('Z')))
            .unwrap_or(true);
        if zombie {
            continue;
        }
        if let Ok(env) = std::fs::read(format!("/proc/{pid}/environ"))
            && env.split(|&b| b == 0).any(|e| e == needle)
        {
            found.push(pid);
        }
    }
    found
}

/// Whether process `pid` is alive (not a zombie).
pub fn pid_alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit_once(')').map(|(_, rest)| !rest.trim_start().starts_with('Z')))
        .unwrap_or(false)
}

/// Waits (bounded) for a file a command writes, and returns its trimmed content.
pub async fn wait_for_file(path: &Path) -> String {
    let start = Instant::now();
    loop {
        if let Ok(text) = std::fs::read_to_string(path)
            && text.ends_with('\n')
        {
            return text.trim().to_string();
        }
        assert!(start.elapsed() < Duration::from_secs(20), "{} never appeared", path.display());
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The text of every output event of the given stream, joined.
pub fn streamed(log: &Mutex<Vec<ToolEvent>>, want: toolbelt_core::OutputStream) -> String {
    log.lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            ToolEvent::Output { stream, chunk, .. } if *stream == want => Some(chunk.clone()),
            _ => None,
        })
        .collect()
}

mod beyond_tmp;
#[allow(unused_imports)]
pub use beyond_tmp::beyond_tmp;
