//! What people do with a project's durable jobs, without a model in between (`toolbelt cron
//! list|run-now|remove`), and what starts a run from outside the clock (incoming triggers).

use std::sync::Arc;

use jiff::Timestamp;
use toolbelt_core::{JobAction, JobReport, RunReport, Schedule, ToolError};
use toolbelt_tools::cron::store::{JobRow, JobStore};

use super::JobHost;
use super::incoming::IncomingTrigger;
use super::service::report;

impl JobHost {
    /// The project's durable jobs, soonest first.
    pub fn durable_jobs(&self) -> Result<Vec<JobReport>, ToolError> {
        let Some(store) = self.durable(false)? else { return Ok(Vec::new()) };
        store.list()?.into_iter().map(|row| Ok(report(&row, true, store.run(&row.id, None)?))).collect()
    }

    /// Deletes the durable job with id (or name) `id`.
    pub fn remove_durable(&self, id: &str) -> Result<JobReport, ToolError> {
        let (store, row) = self.durable_row(id)?;
        store.delete(&row.id)?;
        let last = store.run(&row.id, None)?;
        Ok(report(&JobRow { next_ms: None, ..row }, true, last))
    }

    /// Runs the durable job with id (or name) `id` now, outside its schedule (which it
    /// keeps), and waits for the run to end.
    pub async fn run_now(self: &Arc<Self>, id: &str) -> Result<RunReport, ToolError> {
        let (store, row) = self.durable_row(id)?;
        Arc::clone(self)
            .run_job(store, row, "run-now".into())
            .await
            .ok_or_else(|| ToolError::failed("the run could not be recorded in the job store"))
    }

    /// Starts the job of the incoming trigger `name` now; the run's id. Its runs are
    /// recorded in the project's job store under `job_trigger_NAME`.
    pub fn fire_trigger(self: &Arc<Self>, name: &str, action: JobAction) -> Result<String, ToolError> {
        let store = self.durable(true)?.ok_or_else(|| ToolError::failed("the job store cannot be created"))?;
        let now = Timestamp::now();
        let job = JobRow {
            id: IncomingTrigger::job_id(name),
            name: format!("trigger {name}"),
            owner: "trigger".into(),
            schedule: Schedule::At { at: now.to_string() },
            action,
            recurring: false,
            enabled: true,
            created_ms: now.as_millisecond(),
            expires_ms: None,
            next_ms: None,
            runs: 0,
        };
        let seq = self.begin_run(&store, &job, &format!("trigger {name}"))?;
        let run_id = format!("{}.{seq}", job.id);
        tokio::spawn(Arc::clone(self).finish_run(store, job, seq));
        Ok(run_id)
    }

    fn durable_row(&self, id: &str) -> Result<(Arc<JobStore>, JobRow), ToolError> {
        let missing =
            || ToolError::failed(format!("this project has no durable job `{id}`; `toolbelt cron list` lists them"));
        let store = self.durable(false)?.ok_or_else(missing)?;
        let row = store.find(id)?.ok_or_else(missing)?;
        Ok((store, row))
    }
}
