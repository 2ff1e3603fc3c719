//! One run of a job: a fresh session of the project, marked as a job's run (so it schedules
//! no jobs, nor do the agents it starts), one call through the runtime, the outcome recorded
//! and announced.

use std::sync::{Arc, PoisonError};

use jiff::Timestamp;
use serde_json::json;
use toolbelt_core::{EventSink, JobAction, JobRun, RunReport, RunStatus, TaskEventKind, ToolError, ToolEvent};
use toolbelt_runtime::{ClientInfo, Session, ToolCall};
use toolbelt_tools::cron::store::{JobRow, JobStore};

use super::JobHost;
use super::service::run_report;

impl JobHost {
    /// Runs `job` now for `reason` (`schedule`, `run-now`, `trigger NAME`), recording the run
    /// in `store`; its report once it ended, `None` when it could not even be recorded.
    pub(super) async fn run_job(
        self: Arc<Self>,
        store: Arc<JobStore>,
        job: JobRow,
        reason: String,
    ) -> Option<RunReport> {
        let seq = self.begin_run(&store, &job, &reason).ok()?;
        self.finish_run(store, job, seq).await
    }

    /// Records that a run of `job` starts now, and says so; its number.
    pub(super) fn begin_run(&self, store: &JobStore, job: &JobRow, reason: &str) -> Result<i64, ToolError> {
        let seq = store.start_run(job, reason, Timestamp::now().as_millisecond()).inspect_err(|e| {
            tracing::warn!(job = %job.id, "a job's run cannot be recorded, so it does not run: {e}");
        })?;
        self.announce_start(job, seq, reason);
        Ok(seq)
    }

    /// Says run `seq` of `job` started, for `reason`.
    pub(super) fn announce_start(&self, job: &JobRow, seq: i64, reason: &str) {
        let run_id = format!("{}.{seq}", job.id);
        self.announce(job, &run_id, TaskEventKind::Lines, format!("job `{}` started ({reason})", job.name), None);
    }

    /// Runs run `seq` of `job`, begun with [`JobHost::begin_run`], and records how it ended.
    pub(super) async fn finish_run(self: Arc<Self>, store: Arc<JobStore>, job: JobRow, seq: i64) -> Option<RunReport> {
        let run_id = format!("{}.{seq}", job.id);
        let (status, output) = match self.runtime() {
            Some(runtime) => {
                let session = Session::new(
                    run_id.clone(),
                    self.place.cwd.clone(),
                    self.place.roots.clone(),
                    self.place.data_dir.join(&run_id),
                )
                .with_client(ClientInfo::default().for_agent(&format!("{run_id} (scheduled job `{}`)", job.name)));
                session.state().with_slot::<JobRun, _>(|r| r.run = Some(run_id.clone()));
                let call = match &job.action {
                    JobAction::Prompt { prompt } => {
                        ToolCall::new("1", "Agent", json!({"description": job.name, "prompt": prompt}))
                    }
                    JobAction::Tool { tool, input } => ToolCall::new("1", tool.as_str(), input.clone()),
                };
                let cancel = self.stop.child_token();
                let result = runtime.call(&session, call, &EventSink::default(), &cancel).await;
                let status = if cancel.is_cancelled() {
                    RunStatus::Interrupted
                } else if result.is_error {
                    RunStatus::Failed
                } else {
                    RunStatus::Completed
                };
                (status, result.text())
            }
            None => (RunStatus::Interrupted, "toolbelt was shutting down, so the job did not run".to_string()),
        };
        if let Err(e) = store.end_run(&job.id, seq, status, &output, Timestamp::now().as_millisecond()) {
            tracing::warn!(job = %job.id, "a job's run cannot be recorded: {e}");
        }
        let run = store.run(&job.id, Some(seq)).ok().flatten().map(|r| run_report(&r));
        let summary = match &run {
            Some(run) => first_lines(&run.output),
            None => first_lines(&output),
        };
        let code = if status == RunStatus::Completed { 0 } else { 1 };
        self.announce(
            &job,
            &run_id,
            TaskEventKind::Ended,
            format!("job `{}` {}: {summary}\n(TaskOutput {run_id} reads the whole output)", job.name, status.as_str()),
            Some(code),
        );
        if !job.recurring {
            // A one-shot has fired its only time: nobody is left to tell.
            self.listeners.lock().unwrap_or_else(PoisonError::into_inner).remove(&job.id);
        }
        run
    }

    /// Tells the job's creator (while this process has it) and whoever hears every run.
    fn announce(&self, job: &JobRow, run_id: &str, kind: TaskEventKind, text: String, exit_code: Option<i32>) {
        let event = ToolEvent::Task { task_id: run_id.to_string(), kind, text, exit_code };
        if let Some(sink) = self.listeners.lock().unwrap_or_else(PoisonError::into_inner).get(&job.id) {
            sink.emit(&event);
        }
        self.everyone.lock().unwrap_or_else(PoisonError::into_inner).emit(&event);
    }
}

/// The first lines of a run's output, for an announcement.
fn first_lines(output: &str) -> String {
    let text: String = output.trim().lines().take(5).collect::<Vec<_>>().join("\n");
    match text.char_indices().nth(600) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}
