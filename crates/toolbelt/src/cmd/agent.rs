//! `toolbelt agent`: one agent run in the current workspace, with every tool, under the same
//! settings, permissions, hooks, sandbox and audit as `toolbelt call`. What it does streams
//! to stderr; the final text goes to stdout (`--json`: a transcript).

use std::io::{IsTerminal as _, Read as _, Write as _};
use std::process::ExitCode;
use std::sync::{Mutex, MutexGuard, PoisonError};

use serde_json::json;
use toolbelt_agent::run::{brief_call, brief_result};
use toolbelt_agent::{Conversation, NoInbox, RunEvent, run};
use toolbelt_core::{AgentStatus, EventSink, ToolEvent};

use crate::Usage;
use crate::cli::{AgentArgs, Global};
use crate::cmd::Setup;
use crate::output::line;
use crate::project::OpenSession;

pub async fn run_agent(global: &Global, args: &AgentArgs) -> anyhow::Result<ExitCode> {
    let prompt = read_prompt(args.prompt.as_deref())?;
    let setup = Setup::load_asking_trust(global)?;
    setup.require_valid()?;
    let agents = setup.agents();
    let provider = agents.provider(args.provider.as_deref()).map_err(Usage)?;
    let def = match &args.agent {
        Some(name) => agents.definition(name).map_err(Usage)?.clone(),
        None => agents.main_definition(&setup.ws.cwd),
    };
    let runtime = setup.runtime(None)?;
    let gateway = match setup.settings.mcp_servers.is_empty() {
        true => None,
        false => setup.gateway(runtime.registry()).await,
    };
    super::sandbox::probe_in_background(&setup.sandbox());
    let open = OpenSession::open(&setup.ws, args.session.session.as_deref(), "agent")?;
    let mut limits = agents.limits;
    if let Some(turns) = args.max_turns {
        limits.max_turns = turns;
    }
    let may_spawn = limits.max_depth > 0;
    let mut spec = toolbelt_agent::run_spec(&runtime, provider, args.model.as_deref(), &def, &limits, may_spawn);
    // What sub-agents do shows under the Agent call that started them.
    spec.tool_events = EventSink::new(|event| {
        if let ToolEvent::Progress { message, .. } = event {
            eprintln!("  · {message}");
        }
    });
    // What its monitors print after their call returned, for the person watching.
    let monitors_sink = EventSink::new(|event| {
        if let ToolEvent::Task { task_id, text, .. } = event {
            // A command's escape sequences stay off the person's terminal.
            let shown: String = text.chars().filter(|c| *c == '\n' || *c == '\t' || !c.is_control()).collect();
            eprintln!("  ◦ {task_id}: {}", shown.replace('\n', &format!("\n  ◦ {task_id}: ")));
        }
    });
    open.session
        .state()
        .slot::<toolbelt_core::TaskEvents>()
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .set(monitors_sink.clone());
    toolbelt_agent::apply_mode(&runtime, &open.session, def.permission_mode);
    tracing::info!(provider = spec.provider.name(), model = %spec.model, tools = spec.tools.len(), "agent starting");
    open.start(&runtime).await;
    // The session's scheduled jobs fire while the agent runs (durable ones are served by
    // `toolbelt mcp` and `toolbelt cron serve`).
    let jobs = runtime.services().get::<toolbelt::jobs::JobHost>();
    if let Some(jobs) = &jobs {
        let _ = jobs.start(false);
    }
    let cancel = super::cancel_on_stop();
    let mut convo = Conversation::default();
    convo.push_user(prompt);
    let printer = Printer::default();
    let events = |event: RunEvent<'_>| printer.show(&event);
    let outcome = run(&runtime, &open.session, &spec, &mut convo, &NoInbox, &cancel, &events).await;
    printer.finish();
    if let Some(jobs) = jobs {
        jobs.shutdown();
    }
    open.close(&runtime).await?;
    if let Some(gateway) = gateway {
        gateway.shutdown().await;
    }
    if args.json {
        let transcript = json!({
            "status": outcome.status,
            "text": outcome.text,
            "error": outcome.error,
            "doing": outcome.doing,
            "turns": convo.turns,
            "tool_calls": convo.tool_calls,
            "usage": convo.usage,
            "provider": spec.provider.name(),
            "model": spec.model,
            "messages": convo.messages,
        });
        line(&serde_json::to_string(&transcript)?)?;
    } else {
        if outcome.status != AgentStatus::Completed {
            let why = outcome.error.clone().unwrap_or_else(|| outcome.status.as_str().to_string());
            eprintln!("toolbelt agent: stopped before finishing ({}): {why}", outcome.status.as_str());
            if let Some(doing) = &outcome.doing {
                eprintln!("toolbelt agent: it was doing: {doing}");
            }
            if outcome.status == AgentStatus::MaxTurns {
                eprintln!("toolbelt agent: give it more turns with --max-turns (or agent.max_turns in the settings)");
            }
        }
        if !outcome.text.is_empty() {
            line(&outcome.text)?;
        }
    }
    Ok(if outcome.status == AgentStatus::Completed { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// The prompt: the argument, or stdin for `-` (or no argument with input piped in).
fn read_prompt(arg: Option<&str>) -> anyhow::Result<String> {
    let from_stdin = match arg {
        Some("-") => true,
        Some(text) => return non_empty(text.to_string()),
        None if !std::io::stdin().is_terminal() => true,
        None => false,
    };
    if !from_stdin {
        return Err(Usage("give the agent a task: `toolbelt agent \"PROMPT\"`, or pipe it in with `-`".into()).into());
    }
    let mut text = String::new();
    std::io::stdin().read_to_string(&mut text).map_err(|e| Usage(format!("cannot read the prompt from stdin: {e}")))?;
    non_empty(text)
}

fn non_empty(text: String) -> anyhow::Result<String> {
    if text.trim().is_empty() {
        return Err(Usage("the prompt is empty; say what the agent should do".into()).into());
    }
    Ok(text)
}

/// Shows a run on stderr: each turn's text once the turn makes tool calls (the final text
/// goes to stdout instead), each call and, in brief, its result.
#[derive(Default)]
struct Printer {
    text: Mutex<String>,
}

impl Printer {
    fn show(&self, event: &RunEvent<'_>) {
        let mut err = std::io::stderr().lock();
        match event {
            RunEvent::Text(chunk) => lock(&self.text).push_str(chunk),
            RunEvent::Turn(_) => lock(&self.text).clear(),
            RunEvent::ToolCall(call) => {
                let text = std::mem::take(&mut *lock(&self.text));
                if !text.trim().is_empty() {
                    let _ = writeln!(err, "{}", text.trim_end());
                }
                let _ = writeln!(err, "● {}", brief_call(call));
            }
            RunEvent::ToolResult(_, result) => {
                let _ = writeln!(err, "  ⎿ {}", brief_result(result));
            }
            RunEvent::Message(message) => {
                let _ = writeln!(err, "✉ {}", message.lines().next().unwrap_or(""));
            }
        }
    }

    fn finish(&self) {
        let _ = std::io::stderr().flush();
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}
