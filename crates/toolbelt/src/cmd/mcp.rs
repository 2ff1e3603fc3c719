//! `toolbelt mcp`: every tool over MCP, on stdio or Streamable HTTP.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context as _;
use tokio_util::sync::CancellationToken;
use toolbelt::jobs::{JobHost, TriggerDoor};
use toolbelt_mcp::approve::SessionApprovers;
use toolbelt_mcp::http::{self, HttpOptions};
use toolbelt_mcp::{McpServer, ServerOptions, serve_stdio};

use super::serve_replicas::{SharedReplicas, advertised, announce};
use crate::Usage;
use crate::cli::{Global, McpArgs};
use crate::cmd::Setup;

pub async fn run(global: &Global, args: &McpArgs) -> anyhow::Result<ExitCode> {
    let mut setup = Setup::load(global)?;
    if let Some(note) = &setup.loaded.claude_note {
        tracing::warn!("{note}");
    }
    // The server's own token never reaches a shell command's environment.
    setup.asm.secret_vars.extend(args.token_env.iter().cloned());
    // Nor do the incoming triggers' tokens.
    let trigger_vars: Vec<String> = setup.settings.incoming_triggers.values().map(|t| t.token_env.clone()).collect();
    setup.asm.secret_vars.extend(trigger_vars);
    let approvers = Arc::new(SessionApprovers::default());
    let askers = Arc::new(toolbelt_mcp::ask::SessionAskers::default());
    let runtime = setup.runtime_serving(None, approvers.clone(), askers.clone())?;
    super::sandbox::probe_in_background(&setup.sandbox());
    // Upstream servers join the registry first, so the first tools/list has their tools.
    let gateway = setup.gateway(runtime.registry()).await;
    // What the person behind the host should know: stderr is rarely in front of anyone there.
    let mut notices = setup.warnings();
    if let Some(gateway) = &gateway {
        notices.extend(gateway.notices());
        // Names in the settings that leave a tool live which they mean to disable or deny.
        for found in toolbelt::upstream_names::check(&setup, gateway, runtime.registry()) {
            tracing::warn!("{}", found.problem);
            notices.push(found.problem.to_string());
        }
    }
    // The settings files are watched: a changed tool, plugin, hook or MCP server section
    // applies without a restart.
    let live = toolbelt::live::Live::new(&setup.asm, Arc::clone(&runtime), gateway);
    let stop_watching = tokio_util::sync::CancellationToken::new();
    let watching = live.watch(stop_watching.clone());
    // Over HTTP, a signal drains the server; on stdio it stops at once.
    let drain = args.http.map(|_| Arc::new(toolbelt_mcp::drain::Drain::default()));
    let roots = if args.root.is_empty() { setup.ws.roots.clone() } else { canonical_dirs(&args.root)? };
    let cwd = roots.first().cloned().unwrap_or_else(|| setup.ws.cwd.clone());
    // On a team (HTTP, shared storage), requests without a protocol session find their
    // session's state on any replica.
    let team = match args.http {
        Some(_) => setup.asm.shared_storage().map_err(|e| Usage(e.to_string()))?,
        None => None,
    }
    .map(|shared| Arc::new(toolbelt_mcp::team::Team::new(Arc::new(super::serve_team::SharedTeam(shared)))));
    let options = Arc::new(ServerOptions {
        cwd,
        roots,
        sessions_dir: {
            toolbelt::sessions::clean(&setup.ws.sessions_dir());
            setup.ws.sessions_dir()
        },
        approvers,
        askers,
        instructions: Some(instructions(&notices)),
        notices,
        inline: Default::default(),
        drain: drain.clone(),
        team,
    });
    // Stopped by a signal, the server kills every command its sessions still run before it
    // goes (a command that left its session would otherwise outlive it); over HTTP it drains
    // first (`serve_ops::drain_on_stop`).
    let audit = runtime.audit_log().cloned();
    let stopping = CancellationToken::new();
    // Scheduled jobs fire while the server runs: its sessions' own, and the project's
    // durable ones (shared with any other process serving them: each firing runs once).
    let jobs = runtime.services().get::<JobHost>();
    if let Some(drain) = &drain {
        let grace = args.drain_timeout.map_or(setup.settings.mcp_http.drain_timeout, std::time::Duration::from_secs);
        let draining = super::serve_ops::drain_on_stop(Arc::clone(drain), grace, audit, jobs.clone(), stopping.clone());
        tokio::spawn(draining);
    } else {
        tokio::spawn(async move {
            let signal = super::stop_signal().await;
            let trees = toolbelt_tools::shell::kill_all();
            tracing::warn!("{signal}: stopped the {trees} command(s) still running");
            // The process ends without dropping the runtime: what waits is written first.
            let _ = tokio::task::spawn_blocking(move || {
                if let Some(audit) = audit {
                    audit.close();
                }
                toolbelt::telemetry::flush();
            })
            .await;
            std::process::exit(if signal == "terminated" { 143 } else { 130 });
        });
    }
    let servers = runtime.services().get::<toolbelt_tools::language_servers::LanguageServers>();
    if let Some(jobs) = &jobs {
        let _ = jobs.start(true);
    }
    let served = serve(args, &setup, runtime, options, jobs.clone(), stopping).await;
    if let Some(jobs) = jobs {
        jobs.shutdown();
    }
    if let Some(servers) = servers {
        servers.shutdown_all().await;
    }
    stop_watching.cancel();
    let _ = watching.await;
    live.shutdown().await;
    // What started after the drain killed the running commands (a background agent's) goes
    // with the server.
    if drain.is_some() {
        toolbelt_tools::shell::kill_all();
    }
    served?;
    Ok(ExitCode::SUCCESS)
}

async fn serve(
    args: &McpArgs,
    setup: &Setup,
    runtime: Arc<toolbelt_runtime::Runtime>,
    options: Arc<ServerOptions>,
    jobs: Option<Arc<JobHost>>,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    match args.http {
        None => {
            serve_stdio(McpServer::new(runtime, options)).await.context("MCP over stdio")?;
        }
        Some(bind) => {
            let token = match &args.token_env {
                Some(var) => Some(std::env::var(var).map_err(|_| {
                    Usage(format!("--token-env {var}: the variable is not set; export the token in it"))
                })?)
                .filter(|t| !t.is_empty()),
                None => None,
            };
            let shared = setup.asm.shared_storage().map_err(|e| Usage(e.to_string()))?;
            let ops = super::serve_ops::ServeOps::new(
                Arc::clone(&runtime),
                setup.asm.loc.project_state_dir(),
                shared.clone(),
            );
            export_gauges(&runtime, shared.clone());
            let drain = options.drain.clone();
            let new_server = move || McpServer::new(Arc::clone(&runtime), Arc::clone(&options));
            let mut options = http_options(args, setup, token);
            options.drain = drain;
            options.ops = Some(Arc::new(ops));
            // On a team: other replicas find this one, and it finds theirs.
            if let (Some(shared), Some(replica)) = (&shared, &options.replica) {
                options.replicas = Some(Arc::new(SharedReplicas(Arc::clone(shared))));
                match advertised(setup.settings.mcp_http.advertise_url.as_deref(), bind) {
                    Some(url) => announce(Arc::clone(shared), replica.clone(), url)?,
                    None => tracing::warn!(
                        "this replica serves {bind}, where other machines cannot reach it: set mcp.advertise_url \
                         (http://POD_IP:PORT) so other replicas can pass it requests of its sessions"
                    ),
                }
            }
            if let Some(jobs) = jobs
                && !setup.settings.incoming_triggers.is_empty()
            {
                let door = TriggerDoor::new(jobs, &setup.settings.incoming_triggers, |v| std::env::var(v).ok());
                options.triggers = Some(Arc::new(door));
            }
            let served = http::serve(bind, new_server, options, shutdown).await;
            // The replica says it left (its row goes), off the runtime's threads.
            let _ = tokio::task::spawn_blocking(super::serve_replicas::leave).await;
            served.map_err(|e| match e.kind() {
                std::io::ErrorKind::InvalidInput => Usage(format!("--allow-origin / mcp.allowed_origins: {e}")).into(),
                _ => anyhow::Error::new(e).context("MCP over HTTP"),
            })?;
        }
    }
    Ok(())
}

/// The server's gauges over OpenTelemetry, when metrics are exported (as `/metrics` has them).
fn export_gauges(
    runtime: &Arc<toolbelt_runtime::Runtime>,
    shared: Option<Arc<toolbelt_tools::storage::SharedStorage>>,
) {
    use opentelemetry::KeyValue;
    use toolbelt::telemetry::gauge;
    let running = Arc::clone(runtime);
    gauge("toolbelt.calls.running", "Calls running", move || vec![(vec![], running.metrics().running() as u64)]);
    gauge("toolbelt.processes.running", "Commands running, each a process tree", || {
        vec![(vec![], toolbelt_tools::shell::live_count() as u64)]
    });
    let audit = Arc::clone(runtime);
    gauge("toolbelt.storage.errors", "Records that could not be written, by store", move || {
        let mut points = vec![(vec![KeyValue::new("store", "audit")], audit.audit_log().map_or(0, |l| l.failures()))];
        if let Some(shared) = &shared {
            points.push((vec![KeyValue::new("store", "postgres")], shared.errors()));
        }
        points
    });
}

/// The HTTP endpoint's options: the settings, then the flags.
fn http_options(args: &McpArgs, setup: &Setup, token: Option<String>) -> HttpOptions {
    let settings = &setup.settings.mcp_http;
    let mut limits = settings.limits;
    if let Some(n) = args.max_sessions.and_then(|n| usize::try_from(n).ok()) {
        limits.max_sessions = n;
    }
    if let Some(secs) = args.session_idle_timeout {
        limits.idle_timeout = std::time::Duration::from_secs(secs);
    }
    if let Some(secs) = args.sse_poll_after {
        limits.poll_after = (secs > 0).then(|| std::time::Duration::from_secs(secs));
    }
    let mut allowed_origins = settings.allowed_origins.clone();
    allowed_origins.extend(args.allow_origin.iter().cloned());
    let mut allowed_hosts = settings.allowed_hosts.clone();
    allowed_hosts.extend(args.allow_host.iter().cloned());
    let replica = toolbelt::replica::on_team(setup.settings.storage.is_some());
    HttpOptions { token, allowed_origins, allowed_hosts, limits, replica, ..Default::default() }
}

const INSTRUCTIONS: &str = "toolbelt's tools work on the files of the workspace roots. Paths may be \
absolute or relative to the session's working directory. Read a file before editing or overwriting it. \
Calls that need approval are asked about; a denied call says which rule would allow it.";

/// The instructions, with what is not applied here: the model may be asked why a project
/// setting does nothing, and can tell the user what to do.
fn instructions(notices: &[String]) -> String {
    let mut text = INSTRUCTIONS.to_string();
    if !notices.is_empty() {
        text.push_str(" Not applied in this server (tell the user if it matters):");
        for notice in notices {
            text.push_str(&format!(" {notice}."));
        }
    }
    text
}

fn canonical_dirs(dirs: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    dirs.iter()
        .map(|d| match std::fs::canonicalize(d) {
            Ok(p) if p.is_dir() => Ok(p),
            Ok(p) => Err(Usage(format!("--root {}: not a directory", p.display())).into()),
            Err(e) => Err(Usage(format!("--root {}: {e}", d.display())).into()),
        })
        .collect()
}
