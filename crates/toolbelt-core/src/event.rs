//! Events a call emits while it runs, and the sink they go to.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde::Serialize;

/// Which stream an output chunk came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OutputStream {
    /// A process's standard output, or a tool's only stream.
    Stdout,
    /// A process's standard error.
    Stderr,
}

/// Something that happened during a call. Serialized as one JSON line per event by
/// `toolbelt batch --events` and turned into MCP progress notifications by the server.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum ToolEvent {
    /// The call passed authorization and its tool started.
    Started {
        /// The call id.
        id: String,
        /// The tool's canonical name.
        tool: String,
    },
    /// The tool reports progress.
    Progress {
        /// The call id.
        id: String,
        /// What is happening.
        message: String,
        /// How far along, from 0.0 to 1.0, when known.
        #[serde(skip_serializing_if = "Option::is_none")]
        fraction: Option<f64>,
    },
    /// A chunk of live output.
    Output {
        /// The call id.
        id: String,
        /// The stream it came from.
        stream: OutputStream,
        /// The text.
        chunk: String,
    },
    /// The call ended (whatever the outcome).
    Finished {
        /// The call id.
        id: String,
        /// Whether the result is an error.
        is_error: bool,
        /// Wall time of the whole call.
        #[serde(serialize_with = "ser_ms", rename = "duration_ms")]
        duration: Duration,
    },
    /// A background task (a monitor) did something after the call that started it returned:
    /// lines it printed, a notice about it, its end. Delivered to the session's
    /// [`TaskEvents`] sink, not a call's.
    Task {
        /// The task's id (`monitor_1`).
        task_id: String,
        /// What happened.
        kind: TaskEventKind,
        /// The lines (joined by newlines), the notice, or how it ended, in words.
        text: String,
        /// Its exit code, when it ended by exiting.
        #[serde(skip_serializing_if = "Option::is_none")]
        exit_code: Option<i32>,
    },
}

/// What a [`ToolEvent::Task`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskEventKind {
    /// Lines the task printed (those that came within a short window, together).
    Lines,
    /// Something about the task the person should know (it was stopped for flooding).
    Notice,
    /// It ended: exited, timed out or was stopped.
    Ended,
}

/// Where a session's background tasks report once the call that started them has returned
/// ([`ToolEvent::Task`]): the front end sets it (`batch --events` writes event lines, the MCP
/// server sends log notifications, `toolbelt agent` prints to stderr); unset, the events go
/// nowhere and the task's output stays readable with `TaskOutput`. Saves as nothing.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct TaskEvents {
    #[serde(skip)]
    sink: EventSink,
}

impl crate::SessionSlot for TaskEvents {
    const KEY: &'static str = "task_events";
}

impl TaskEvents {
    /// Sends the session's task events to `sink`.
    pub fn set(&mut self, sink: EventSink) {
        self.sink = sink;
    }

    /// The sink (a silent one when unset).
    pub fn sink(&self) -> EventSink {
        self.sink.clone()
    }
}

fn ser_ms<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

type Callback = dyn Fn(&ToolEvent) + Send + Sync;

/// Where events go. Cheap to clone; a sink that nobody listens to costs nothing.
///
/// The callback runs on the tool's task and must not block: forward into a channel or
/// write a line, nothing slower.
#[derive(Clone, Default)]
pub struct EventSink {
    callback: Option<Arc<Callback>>,
}

impl std::fmt::Debug for EventSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventSink").field("listening", &self.callback.is_some()).finish()
    }
}

impl EventSink {
    /// A sink that drops every event.
    pub fn none() -> Self {
        Self { callback: None }
    }

    /// A sink that calls `f` for every event.
    pub fn new(f: impl Fn(&ToolEvent) + Send + Sync + 'static) -> Self {
        Self { callback: Some(Arc::new(f)) }
    }

    /// A sink that records every event, and the shared list it records into. Made for tests
    /// that assert what a call emitted.
    pub fn recording() -> (Self, Arc<Mutex<Vec<ToolEvent>>>) {
        let log = Arc::new(Mutex::new(Vec::new()));
        let sink_log = Arc::clone(&log);
        let sink = Self::new(move |e| {
            sink_log.lock().unwrap_or_else(PoisonError::into_inner).push(e.clone());
        });
        (sink, log)
    }

    /// Whether anybody listens (lets a tool skip building events nobody reads).
    pub fn is_listening(&self) -> bool {
        self.callback.is_some()
    }

    /// Delivers an event.
    pub fn emit(&self, event: &ToolEvent) {
        if let Some(cb) = &self.callback {
            cb(event);
        }
    }
}
