//! The cron tools' side of [`JobHost`]: creating, deleting, pausing and listing jobs, and
//! reading runs, for the calling session.

use std::sync::PoisonError;

use jiff::Timestamp;
use toolbelt_core::{JobAction, JobReport, JobRequest, JobService, RunReport, ToolContext, ToolError};
use toolbelt_tools::cron::schedule::{Plan, jitter, rfc3339};
use toolbelt_tools::cron::store::{JobRow, RunRow};

use super::{JobHost, MAX_JOBS};

impl JobService for JobHost {
    fn create(&self, cx: &ToolContext, request: JobRequest) -> Result<JobReport, ToolError> {
        if cx.in_job() {
            return Err(ToolError::failed(
                "a scheduled job's run cannot schedule jobs; do the work now, or say what should be scheduled in your \
                 answer",
            ));
        }
        if !request.durable && self.serving.get().is_none() {
            return Err(ToolError::failed(
                "this session ends with this call, and a session job would go with it; set `durable: true` to keep \
                 the job in the project's job store (`toolbelt cron serve` or `toolbelt mcp` runs it)",
            ));
        }
        let mut request = request;
        // "Local time" is the creator's: written down, so a process with another TZ (a
        // service manager's) fires the job at the same moments.
        if let toolbelt_core::Schedule::Cron { tz: tz @ None, .. } = &mut request.schedule {
            *tz = jiff::tz::TimeZone::try_system().ok().and_then(|z| z.iana_name().map(str::to_string));
        }
        let plan = Plan::new(&request.schedule).map_err(ToolError::failed)?;
        self.check_action(&request.action)?;
        let store = if request.durable {
            self.durable(true)?.ok_or_else(|| ToolError::failed("the job store could not be created"))?
        } else {
            self.session_store()?
        };
        let owner = cx.job_owner();
        let count = store.list()?.iter().filter(|r| request.durable || r.owner == owner).count();
        if count >= MAX_JOBS {
            return Err(ToolError::failed(format!(
                "there are already {count} scheduled jobs here, the most allowed; delete some with CronDelete first"
            )));
        }
        let now = Timestamp::now();
        let recurring = request.recurring && plan.repeats();
        let name = request.name.as_deref().map(str::trim).filter(|n| !n.is_empty()).map_or_else(
            || match &request.action {
                JobAction::Prompt { prompt } => prompt.split_whitespace().take(6).collect::<Vec<_>>().join(" "),
                JobAction::Tool { tool, .. } => tool.clone(),
            },
            str::to_string,
        );
        let Some(first) = plan.next_after(now, now) else {
            return Err(ToolError::failed(format!(
                "{} never fires from now on (the moment is past); give a later one",
                plan.describe()
            )));
        };
        for _ in 0..8 {
            let id = new_id();
            let next = if recurring { self.jittered(&id, &plan, first, now.as_millisecond()) } else { first };
            let row = JobRow {
                id: id.clone(),
                name: name.clone(),
                owner: owner.clone(),
                schedule: request.schedule.clone(),
                action: request.action.clone(),
                recurring,
                enabled: true,
                created_ms: now.as_millisecond(),
                expires_ms: recurring
                    .then_some(self.settings.max_age)
                    .flatten()
                    .map(|age| now.as_millisecond() + i64::try_from(age.as_millis()).unwrap_or(i64::MAX / 2)),
                next_ms: Some(next.as_millisecond()),
                runs: 0,
            };
            if let Some(end) = row.expires_ms
                && next.as_millisecond() > end
            {
                let days = self.settings.max_age.map_or(0, |a| a.as_secs() / 86_400);
                return Err(ToolError::failed(format!(
                    "{} first fires {}, after the {days} days a recurring job lives (cron.max_age_days), so it would \
                     never run; make it a one-shot (`recurring: false`), or ask the user to raise cron.max_age_days \
                     (0 keeps jobs until deleted)",
                    plan.describe(),
                    rfc3339(next)
                )));
            }
            if store.insert(&row)? {
                let events = cx.task_events();
                if events.is_listening() {
                    self.listeners.lock().unwrap_or_else(PoisonError::into_inner).insert(id, events);
                }
                self.wake.notify_one();
                return Ok(report(&row, request.durable, None));
            }
        }
        Err(ToolError::failed("could not find a free job id; try again"))
    }

    fn delete(&self, cx: &ToolContext, id: &str) -> Result<JobReport, ToolError> {
        let (store, row, durable) = self.find(cx, id)?;
        store.delete(&row.id)?;
        self.listeners.lock().unwrap_or_else(PoisonError::into_inner).remove(&row.id);
        let last = store.run(&row.id, None)?;
        Ok(report(&JobRow { next_ms: None, ..row }, durable, last))
    }

    fn set_enabled(&self, cx: &ToolContext, id: &str, enabled: bool) -> Result<JobReport, ToolError> {
        let (store, row, durable) = self.find(cx, id)?;
        let now_ms = Timestamp::now().as_millisecond();
        if enabled && row.expires_ms.is_some_and(|end| end < now_ms) {
            store.delete(&row.id)?;
            return Err(ToolError::failed(format!(
                "job `{}` expired while paused, and is deleted; schedule it again with CronCreate",
                row.name
            )));
        }
        let next = if enabled {
            let plan = Plan::new(&row.schedule).map_err(ToolError::failed)?;
            let now = Timestamp::now();
            plan.next_after(now, Timestamp::from_millisecond(row.created_ms).unwrap_or(now))
                .map(|first| if row.recurring { self.jittered(&row.id, &plan, first, row.created_ms) } else { first })
        } else {
            None
        };
        let next_ms = if enabled { next.map(|t| t.as_millisecond()) } else { row.next_ms };
        if enabled && next_ms.is_none() {
            return Err(ToolError::failed(format!(
                "job `{}` would never fire again (its moment is past); delete it, or schedule a new one",
                row.name
            )));
        }
        store.set_enabled(&row.id, enabled, next_ms)?;
        self.wake.notify_one();
        let last = store.run(&row.id, None)?;
        Ok(report(&JobRow { enabled, next_ms, ..row }, durable, last))
    }

    fn list(&self, cx: &ToolContext) -> Result<Vec<JobReport>, ToolError> {
        let mut out = Vec::new();
        let owner = cx.job_owner();
        if let Some(store) = self.session.get() {
            for row in store.list()?.into_iter().filter(|r| r.owner == owner) {
                let last = store.run(&row.id, None)?;
                out.push((row.next_ms, report(&row, false, last)));
            }
        }
        if let Some(store) = self.durable(false)? {
            for row in store.list()? {
                let last = store.run(&row.id, None)?;
                out.push((row.next_ms, report(&row, true, last)));
            }
        }
        out.sort_by_key(|(next, _)| (next.is_none(), *next));
        Ok(out.into_iter().map(|(_, r)| r).collect())
    }

    fn run_report(&self, _cx: &ToolContext, id: &str) -> Result<Option<RunReport>, ToolError> {
        let (job, seq) = match id.rsplit_once('.') {
            Some((job, seq)) => match seq.parse::<i64>() {
                Ok(seq) => (job, Some(seq)),
                Err(_) => return Ok(None),
            },
            None => (id, None),
        };
        if let Some(session) = self.session.get()
            && let Some(run) = session.run(job, seq)?
        {
            return Ok(Some(run_report(&run)));
        }
        match self.durable(false)? {
            Some(store) => Ok(store.run(job, seq)?.map(|r| run_report(&r))),
            None => Ok(None),
        }
    }

    fn end_session(&self, session: &str) {
        let Some(store) = self.session.get() else { return };
        let Ok(rows) = store.list() else { return };
        let mut listeners = self.listeners.lock().unwrap_or_else(PoisonError::into_inner);
        for row in rows.into_iter().filter(|r| r.owner == session) {
            let _ = store.delete(&row.id);
            listeners.remove(&row.id);
        }
    }
}

impl JobHost {
    /// `slot` moved later by the job's jitter, when the settings want it.
    pub(super) fn jittered(&self, id: &str, plan: &Plan, slot: Timestamp, created_ms: i64) -> Timestamp {
        if !self.settings.jitter {
            return slot;
        }
        let created = Timestamp::from_millisecond(created_ms).unwrap_or(slot);
        let Some(period) = plan.period_at(slot, created) else { return slot };
        let late = jitter(id, period);
        slot.checked_add(jiff::SignedDuration::try_from(late).unwrap_or_default()).unwrap_or(slot)
    }
}

/// A new job id: `job_` and 8 hex digits, from the clock, the process and a counter (the
/// store's primary key refuses a repeat, and creation tries another).
fn new_id() -> String {
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let seed = format!("{:?}/{}/{n}", std::time::SystemTime::now(), std::process::id());
    format!("job_{}", &toolbelt_core::sha256_hex(seed.as_bytes())[..8])
}

/// A moment in milliseconds as RFC 3339.
fn ms_text(ms: i64) -> String {
    Timestamp::from_millisecond(ms).map(rfc3339).unwrap_or_default()
}

/// A job as listings show it.
pub(super) fn report(row: &JobRow, durable: bool, last: Option<RunRow>) -> JobReport {
    let when = Plan::new(&row.schedule).map(|p| p.describe()).unwrap_or_else(|e| e);
    JobReport {
        id: row.id.clone(),
        name: row.name.clone(),
        schedule: row.schedule.clone(),
        when,
        action: row.action.clone(),
        recurring: row.recurring,
        durable,
        enabled: row.enabled,
        created_at: ms_text(row.created_ms),
        next_run: row.next_ms.map(ms_text),
        expires_at: row.expires_ms.map(ms_text),
        runs: u64::try_from(row.runs).unwrap_or(0),
        last_run: last.as_ref().map(run_report),
    }
}

/// A run as `TaskOutput` and listings show it.
pub(super) fn run_report(run: &RunRow) -> RunReport {
    RunReport {
        run_id: run.run_id(),
        job_id: run.job_id.clone(),
        started_at: ms_text(run.started_ms),
        ended_at: run.ended_ms.map(ms_text),
        status: run.status,
        output: run.output.clone(),
        truncated: run.truncated,
        reason: run.reason.clone(),
    }
}
