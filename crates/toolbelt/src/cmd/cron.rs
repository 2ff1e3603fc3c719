//! `toolbelt cron`: the project's durable scheduled jobs for a person — `serve` runs them
//! with no host attached (a systemd unit's `ExecStart`), `list`, `run-now`, `remove`.
//!
//! Jobs run unattended: a call that would ask is refused (with the rule that would allow
//! it), whatever terminal `serve` was started from.

use std::process::ExitCode;
use std::sync::Arc;

use toolbelt::jobs::JobHost;
use toolbelt_core::{EventSink, JobReport, RunStatus, ToolEvent};
use toolbelt_policy::NoApprover;

use crate::Usage;
use crate::cli::{CronAction, CronArgs, Global};
use crate::cmd::Setup;
use crate::output::line;

pub async fn run(global: &Global, args: &CronArgs) -> anyhow::Result<ExitCode> {
    let setup = Setup::load(global)?;
    setup.require_valid()?;
    match &args.action {
        CronAction::List { json } => list(&setup, *json),
        CronAction::Remove { id } => {
            let host = setup.job_host();
            let job = host.remove_durable(id).map_err(|e| Usage(e.to_string()))?;
            line(&format!("Deleted {} `{}` ({})", job.id, job.name, job.when))?;
            Ok(ExitCode::SUCCESS)
        }
        CronAction::RunNow { id } => {
            let (runtime, gateway) = unattended(&setup).await?;
            let host = jobs_of(&runtime)?;
            let run = host.run_now(id).await.map_err(|e| Usage(e.to_string()));
            if let Some(gateway) = gateway {
                gateway.shutdown().await;
            }
            let run = run?;
            line(&format!("Run {} {}.", run.run_id, run.status.as_str()))?;
            if !run.output.trim().is_empty() {
                line(run.output.trim_end())?;
            }
            Ok(if run.status == RunStatus::Completed { ExitCode::SUCCESS } else { ExitCode::from(1) })
        }
        CronAction::Serve { once } => serve(&setup, *once).await,
    }
}

async fn serve(setup: &Setup, once: bool) -> anyhow::Result<ExitCode> {
    let (runtime, gateway) = unattended(setup).await?;
    let host = jobs_of(&runtime)?;
    host.announce_to(EventSink::new(|event| {
        if let ToolEvent::Task { task_id, text, .. } = event {
            let now = jiff::Timestamp::now().round(jiff::Unit::Second).unwrap_or_else(|_| jiff::Timestamp::now());
            let text = text.replace('\n', "\n    ");
            let _ = line(&format!("{now} {task_id} {text}"));
        }
    }));
    if once {
        let runs = host.serve_once().await;
        let failed = runs.iter().filter(|r| r.status != RunStatus::Completed).count();
        if let Some(gateway) = gateway {
            gateway.shutdown().await;
        }
        eprintln!("toolbelt cron: {} run(s), {failed} not completed", runs.len());
        return Ok(if failed == 0 { ExitCode::SUCCESS } else { ExitCode::from(1) });
    }
    eprintln!("toolbelt cron: serving the durable jobs of {} ({})", setup.loc.project.display(), host.durable_place());
    host.start(true).map_err(|e| Usage(e.to_string()))?;
    let signal = super::stop_signal().await;
    host.shutdown();
    toolbelt_tools::shell::kill_all();
    if let Some(gateway) = gateway {
        gateway.shutdown().await;
    }
    eprintln!("toolbelt cron: {signal}: stopped");
    Ok(ExitCode::SUCCESS)
}

/// A runtime for unattended runs: nobody approves what asks, nobody answers questions; with
/// the configured upstream servers connected.
async fn unattended(
    setup: &Setup,
) -> anyhow::Result<(Arc<toolbelt_runtime::Runtime>, Option<toolbelt_mcp::client::Gateway>)> {
    let people = Arc::new(crate::ask::CliPeople::open(true));
    let runtime = setup.asm.runtime_with(None, Arc::new(NoApprover), people).map_err(|e| Usage(e.to_string()))?;
    super::sandbox::probe_in_background(&setup.sandbox());
    let gateway = match setup.settings.mcp_servers.is_empty() {
        true => None,
        false => setup.gateway(runtime.registry()).await,
    };
    Ok((runtime, gateway))
}

fn jobs_of(runtime: &toolbelt_runtime::Runtime) -> anyhow::Result<Arc<JobHost>> {
    runtime.services().get::<JobHost>().ok_or_else(|| anyhow::anyhow!("this runtime has no job scheduler"))
}

fn list(setup: &Setup, json: bool) -> anyhow::Result<ExitCode> {
    let host = setup.job_host();
    let jobs = host.durable_jobs().map_err(|e| Usage(e.to_string()))?;
    if json {
        line(&serde_json::to_string(&jobs)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    line(&format!("Durable jobs of {} ({})", setup.loc.project.display(), host.durable_place()))?;
    if jobs.is_empty() {
        line("No durable jobs (CronCreate with durable: true, or cron add, schedules one).")?;
    }
    for job in &jobs {
        line(&row(job))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// A job in one line, for a person.
fn row(job: &JobReport) -> String {
    let next = match (&job.next_run, job.enabled) {
        (_, false) => "paused".to_string(),
        (Some(next), true) => format!("next {next}"),
        (None, true) => "no next firing".to_string(),
    };
    let last = job
        .last_run
        .as_ref()
        .map(|r| format!("; last {} {} at {}", r.run_id, r.status.as_str(), r.started_at))
        .unwrap_or_default();
    format!("{}  {}  {}; {next}; {} run(s){last}", job.id, job.name, job.when, job.runs)
}
