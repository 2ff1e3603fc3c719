//! Starting and continuing agents: the checks a start must pass, the agent's own session and
//! tool set, and driving its runs in the foreground or the background.

use std::sync::Arc;
use std::time::Duration;

use toolbelt_core::{
    AgentReport, AgentRequest, AgentService as _, AgentStatus, CancellationToken, ToolContext, ToolError,
};
use toolbelt_policy::SubagentInfo;
use toolbelt_runtime::{ClientInfo, Runtime, Session};

use crate::host::report::report;
use crate::host::roster::{AgentDepth, AgentRecord, RosterSlot};
use crate::host::{AgentHost, SessionProvider};
use crate::run::{Conversation, RunEvent, RunSpec, brief_call, brief_result, run};
use crate::spec::run_spec;

/// How much of a foreground call's timeout a run leaves for reporting when its budget is cut
/// to fit the call: the margin the Agent tool's own limit leaves beyond the budget.
const REPORT_MARGIN: Duration = toolbelt_core::OWN_LIMIT_MARGIN;

/// Checks a start and sets up the agent: its record in the session's roster, its session,
/// its tools. Nothing runs yet.
pub(crate) fn prepare(
    host: &AgentHost,
    runtime: &Runtime,
    cx: &ToolContext,
    request: AgentRequest,
) -> Result<Arc<AgentRecord>, ToolError> {
    let limits = host.limits();
    let depth = cx.with_slot::<AgentDepth, _>(|d| d.depth);
    if depth >= limits.max_depth {
        return Err(ToolError::failed(format!(
            "a sub-agent cannot start agents here: agents may nest {} level{} deep (agent.max_depth); do this work \
             yourself and report back",
            limits.max_depth,
            if limits.max_depth == 1 { "" } else { "s" }
        )));
    }
    let roster = cx.with_slot::<RosterSlot, _>(|slot| Arc::clone(&slot.roster));
    let running = roster.running();
    if running >= limits.max_concurrent {
        return Err(ToolError::failed(format!(
            "{running} agents are already running in this session, the most allowed at once (agent.max_concurrent); \
             wait for one with TaskOutput or stop one with TaskStop, then start this one"
        )));
    }
    let def = host.definition(request.agent_type.as_deref().unwrap_or("general-purpose"))?;
    let provider = host.provider_for(cx.session()).ok_or_else(|| match host.unusable() {
        Some(why) => ToolError::failed(format!("agents have no usable model provider: {why}")),
        None => ToolError::failed(
            "no model provider is configured for agents: set OPENAI_API_KEY or ANTHROPIC_API_KEY, or add \
             [agent.providers.NAME] to the settings (`toolbelt config check` says what is in force)",
        ),
    })?;
    let mut background = request.background;
    if let Some(team) = &request.team {
        let Some(name) = &request.name else {
            return Err(ToolError::failed(format!(
                "a member of team `{team}` needs a `name`, by which messages reach it"
            )));
        };
        let teams = crate::host::roster::lock(&roster.teams);
        let Some(found) = teams.get(team) else {
            return Err(ToolError::failed(format!("there is no team `{team}`; create it with TeamCreate first")));
        };
        if found.members.iter().any(|id| roster.find(id).is_some_and(|a| a.name.as_deref() == Some(name))) {
            return Err(ToolError::failed(format!(
                "team `{team}` already has a member named `{name}`; choose another name, or reach it with SendMessage"
            )));
        }
        // Team members work side by side: they always run in the background.
        background = true;
    }
    if let Some(name) = &request.name
        && let Some(existing) = roster.find(name)
        && existing.status() == AgentStatus::Running
    {
        return Err(ToolError::failed(format!(
            "an agent named `{name}` ({}) is already running; send it a message with SendMessage or choose another name",
            existing.id
        )));
    }
    let may_spawn = depth + 1 < limits.max_depth;
    let spec = run_spec(runtime, provider, request.model.as_deref(), def, &limits, may_spawn);
    let id = roster.next_id();
    let parent_dir = cx.session().data_dir().unwrap_or_else(|| std::env::temp_dir().join("toolbelt-agents"));
    // Its calls are recorded under the front end of the session that started it, naming it.
    let client = ClientInfo::of(cx.session()).for_agent(&format!("{id} ({})", def.name));
    let session = Session::new(
        format!("{}-{id}", cx.session().id()),
        cx.cwd(),
        cx.session().roots(),
        parent_dir.join("agents").join(&id),
    )
    .with_client(client);
    // The session's own provider (an MCP host's sampling) is its agents' too, for the agents
    // they start in turn.
    if let Some(own) = cx.session().with_slot::<SessionProvider, _>(|p| p.provider.clone()) {
        session.state().with_slot::<SessionProvider, _>(|p| p.provider = Some(own));
    }
    // An agent a job's run started is part of that run: it creates no jobs either.
    let job_run = cx.with_slot::<toolbelt_core::JobRun, _>(|r| r.run.clone());
    if job_run.is_some() {
        session.state().with_slot::<toolbelt_core::JobRun, _>(|r| r.run = job_run);
    }
    // The jobs it schedules belong to the top session, which lists them and ends them.
    let owner = cx.job_owner();
    session.state().with_slot::<toolbelt_core::JobOwner, _>(|o| o.session = Some(owner));
    // What the agent's monitors report reaches whoever follows its parent, each task named
    // under the agent (`agent_1/monitor_1`).
    let parent_events = cx.task_events();
    if parent_events.is_listening() {
        let prefix = id.clone();
        let relay = toolbelt_core::EventSink::new(move |event| {
            if let toolbelt_core::ToolEvent::Task { task_id, kind, text, exit_code } = event {
                parent_events.emit(&toolbelt_core::ToolEvent::Task {
                    task_id: format!("{prefix}/{task_id}"),
                    kind: *kind,
                    text: text.clone(),
                    exit_code: *exit_code,
                });
            }
        });
        session.state().with_slot::<toolbelt_core::TaskEvents, _>(|t| t.set(relay));
    }
    let parent_mode = runtime.permission_mode(cx.session());
    let mode = match (parent_mode, def.permission_mode) {
        (Some(parent), Some(wanted)) => Some(parent.stricter(wanted)),
        (parent, None) => parent,
        // A policy without modes decides alone; a mode would change nothing.
        (None, Some(_)) => None,
    };
    let record = Arc::new(AgentRecord::new(
        id,
        request.name.clone(),
        def.name.clone(),
        request.description.clone(),
        request.team.clone(),
        background,
        session,
        spec,
        Some(parent_dir.join("agents")),
        request.prompt,
        cx.session().id().to_string(),
        depth + 1,
        mode,
    ));
    if let Some(team) = &request.team
        && let Some(found) = crate::host::roster::lock(&roster.teams).get_mut(team)
    {
        found.members.push(record.id.clone());
    }
    roster.add(Arc::clone(&record));
    Ok(record)
}

/// Runs `agent` (continuing with `message` when given): in the foreground until it stops,
/// else in the background, answering at once.
pub(crate) async fn go(
    runtime: Arc<Runtime>,
    agent: Arc<AgentRecord>,
    message: Option<String>,
    cx: &ToolContext,
    cap: usize,
) -> AgentReport {
    if agent.background {
        start_background(runtime, Arc::clone(&agent), message);
        return report(&agent, cap);
    }
    // In the foreground the agent lives within the call: cancelling the call stops it, and
    // its budget ends before the call's timeout so the result still comes back.
    let cancel = cx.cancellation().child_token();
    let budget = agent.spec.budget.min(cx.limits().timeout.saturating_sub(REPORT_MARGIN));
    let fresh = message.is_none();
    // When another run holds the history, the message waits for its next turn.
    if let Some(convo) = agent.begin(message, cancel.clone()) {
        // The run is a task of its own, stopped rather than dropped when this call goes away
        // (its parent's run cut off by a limit or a stop): it always ends, its report says
        // how, and its session is cleared.
        let guard = cancel.clone().drop_guard();
        let run = tokio::spawn(drive(runtime, Arc::clone(&agent), convo, fresh, cancel, budget, Some(cx.clone())));
        let _ = run.await;
        guard.disarm();
    }
    report(&agent, cap)
}

/// Continues `agent` in the background with `message`; a running agent gets it at its next
/// turn instead.
pub(crate) fn resume_in_background(runtime: Arc<Runtime>, agent: Arc<AgentRecord>, message: String) {
    start_background(runtime, agent, Some(message));
}

fn start_background(runtime: Arc<Runtime>, agent: Arc<AgentRecord>, message: Option<String>) {
    let cancel = CancellationToken::new();
    let budget = agent.spec.budget;
    // Taken here, not in the task: from this moment the agent is running, so a TaskOutput
    // that follows waits for this run rather than reading the last one's result.
    // When another run holds the history, the message waits for its next turn.
    let fresh = message.is_none();
    if let Some(convo) = agent.begin(message, cancel.clone()) {
        tokio::spawn(drive(runtime, agent, convo, fresh, cancel, budget, None));
    }
}

/// One run of `agent` on `convo` (taken with [`AgentRecord::begin`]), to its end; a message that arrives as it finishes gets it going
/// again, so none is left unread.
async fn drive(
    runtime: Arc<Runtime>,
    agent: Arc<AgentRecord>,
    mut convo: Conversation,
    fresh: bool,
    cancel: CancellationToken,
    budget: Duration,
    progress: Option<ToolContext>,
) {
    agent.apply_session_limits();
    let cwd = agent.session.state().cwd();
    let parent = agent.parent_session.clone();
    let start = SubagentInfo {
        session_id: &parent,
        agent_id: &agent.id,
        agent_type: &agent.agent_type,
        cwd: &cwd,
        status: None,
        last_message: None,
    };
    if fresh {
        // A fresh start: SubagentStart hooks may add context for the agent's first turn.
        for context in runtime.subagent_start(&start).await {
            convo.push_user(context);
        }
    }
    let spec = RunSpec { budget, ..agent.spec.clone() };
    let id = agent.id.clone();
    let events = |event: RunEvent<'_>| {
        agent.note(&event);
        if let Some(cx) = &progress {
            match event {
                RunEvent::ToolCall(call) => cx.progress(format!("{id}: {}", brief_call(call)), None),
                RunEvent::ToolResult(_, result) if result.is_error => {
                    cx.progress(format!("{id}: {}", brief_result(result)), None)
                }
                _ => {}
            }
        }
    };
    loop {
        let outcome = loop {
            let outcome = run(&runtime, &agent.session, &spec, &mut convo, &*agent, &cancel, &events).await;
            if outcome.status == AgentStatus::Completed && agent.has_mail() {
                continue;
            }
            break outcome;
        };
        if outcome.status == AgentStatus::Stopped || cancel.is_cancelled() {
            // A stopped agent's session is over: what it left running (background commands,
            // its own agents) is killed with it.
            agent.session.state().clear_slots();
        }
        let stop = SubagentInfo { status: Some(outcome.status.as_str()), last_message: Some(&outcome.text), ..start };
        runtime.subagent_stop(&stop).await;
        // A message that came while it finished (the hook ran, say) keeps it going.
        match agent.end(convo, outcome) {
            Some(back) => convo = back,
            None => break,
        }
    }
}
