//! The agent loop: ask the model, run the tool calls it makes through the runtime, give it
//! the results, until it answers or a limit stops it.
//!
//! A run never loses what was done. Whatever stops it — an answer, the turn limit, the time
//! budget, a provider error, cancellation — its [`RunOutcome`] carries the last text the
//! model wrote and, when it stopped in the middle of tool calls, what those calls were.

mod brief;

use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use toolbelt_core::{AgentStatus, CancellationToken, EventSink, ToolError};
use toolbelt_runtime::{Runtime, Session, ToolCall, ToolResult};

use crate::message::{Message, Part, Reply, Request, Role, StopReason, StreamEvent, ToolChoice, ToolDef, Usage};
use crate::provider::Provider;

pub use brief::{brief_call, brief_result};

/// What one run works with: the model, its instructions, its tools and its limits.
#[derive(Debug, Clone)]
pub struct RunSpec {
    /// Who answers.
    pub provider: Arc<dyn Provider>,
    /// The model to ask.
    pub model: String,
    /// The system prompt.
    pub system: String,
    /// The tools the model is shown (the deferred ones among them only once the session
    /// loaded them).
    pub tools: Arc<[ToolDef]>,
    /// Which of `tools` are deferred: shown only once the session loads them (`ToolSearch`).
    pub deferred: Arc<HashSet<String>>,
    /// The canonical names of the tools it may call; a call to any other is answered with an
    /// error, whatever the model was or was not shown.
    pub allowed: HashSet<String>,
    /// Model turns this run may take.
    pub max_turns: u32,
    /// Wall time this run may take.
    pub budget: Duration,
    /// The most tokens one reply may have.
    pub max_tokens: u32,
    /// Where the events of its tool calls go (a sub-agent's progress, a command's output):
    /// a terminal, the parent call's progress, or nowhere.
    pub tool_events: EventSink,
    /// The name of the agent definition it runs (`Explore`, `main`), which refusals name.
    pub definition: String,
}

/// The conversation a run continues, and what it has cost so far. It outlives a run, so a
/// stopped agent can be continued with its history.
#[derive(Debug, Clone, Default)]
pub struct Conversation {
    /// Every message so far.
    pub messages: Vec<Message>,
    /// Tokens spent so far.
    pub usage: Usage,
    /// Model turns taken so far.
    pub turns: u32,
    /// Tool calls made so far.
    pub tool_calls: u32,
    /// The last text the model wrote (kept even when later turns wrote none).
    pub last_text: String,
}

impl Conversation {
    /// Adds text from the person or the parent agent. Text arriving right after tool
    /// results joins their message, so user and assistant messages keep alternating.
    ///
    /// When the conversation ends with tool calls that never ran (the run stopped first),
    /// each is answered with an error saying so before the text: every provider wants each
    /// tool call answered in the message that follows it.
    pub fn push_user(&mut self, text: impl Into<String>) {
        self.answer_dangling();
        match self.messages.last_mut() {
            Some(last) if last.role == Role::User => last.parts.push(Part::text(text)),
            _ => self.messages.push(Message::user(text)),
        }
    }
}

impl Conversation {
    fn answer_dangling(&mut self) {
        let Some(last) = self.messages.last() else { return };
        if last.role != Role::Assistant {
            return;
        }
        let parts: Vec<Part> = last
            .tool_uses()
            .map(|(id, _, _)| Part::ToolResult {
                id: id.to_string(),
                content: vec![toolbelt_core::Content::text(
                    "This call was not run: the agent was stopped (a limit, an error or a stop) before it ran.",
                )],
                is_error: true,
            })
            .collect();
        if !parts.is_empty() {
            self.messages.push(Message { role: Role::User, parts });
        }
    }
}

/// Something a run did, as it happens (for a terminal, a parent's progress, a transcript).
#[derive(Debug, Clone, Copy)]
pub enum RunEvent<'a> {
    /// A model turn begins.
    Turn(u32),
    /// Text streams in.
    Text(&'a str),
    /// A tool call is about to run.
    ToolCall(&'a ToolCall),
    /// A tool call finished.
    ToolResult(&'a ToolCall, &'a ToolResult),
    /// A message from outside (the parent, a team broadcast) joined the conversation.
    Message(&'a str),
}

/// Where a run reports its [`RunEvent`]s.
pub type RunEvents<'a> = &'a (dyn Fn(RunEvent<'_>) + Send + Sync);

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunOutcome {
    /// Why it ended.
    pub status: AgentStatus,
    /// Its answer when it completed, else the last text it wrote.
    pub text: String,
    /// The tool calls it had asked for when it stopped short, described in brief.
    pub doing: Option<String>,
    /// Why it stopped short, in words.
    pub error: Option<String>,
}

/// Where a run gets messages sent to it while it runs.
pub trait Inbox: Send + Sync {
    /// Takes every message waiting.
    fn take(&self) -> Vec<String>;
}

/// An inbox nobody writes to.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoInbox;

impl Inbox for NoInbox {
    fn take(&self) -> Vec<String> {
        Vec::new()
    }
}

/// Runs `convo` on until the model answers or a limit stops it. The tool calls run in
/// `session` through `runtime` (its policy, hooks, sandbox and audit), a reply's calls as
/// one batch, so calls that may run together do. Cancelling `cancel` stops the run and
/// every call it has running.
pub async fn run(
    runtime: &Runtime,
    session: &Session,
    spec: &RunSpec,
    convo: &mut Conversation,
    inbox: &dyn Inbox,
    cancel: &CancellationToken,
    events: RunEvents<'_>,
) -> RunOutcome {
    let deadline = Instant::now() + spec.budget;
    let turns_at_start = convo.turns;
    let mut pending: Vec<ToolCall> = Vec::new();
    let mut shown = Shown::default();
    loop {
        for message in inbox.take() {
            events(RunEvent::Message(&message));
            convo.push_user(message);
        }
        if convo.turns - turns_at_start >= spec.max_turns {
            let error = format!("it reached its limit of {} model turns before finishing", spec.max_turns);
            return short(convo, AgentStatus::MaxTurns, error, &pending);
        }
        convo.turns += 1;
        events(RunEvent::Turn(convo.turns));
        let shown = shown.get(runtime, spec, session);
        let reply = tokio::select! {
            biased;
            () = cancel.cancelled() => return short(convo, AgentStatus::Stopped, "it was stopped".into(), &pending),
            () = tokio::time::sleep_until(deadline.into()) => return out_of_time(convo, spec, &pending),
            reply = ask(spec, &shown, convo, events) => reply,
        };
        let reply = match reply {
            Ok(reply) => reply,
            Err(e) => return short(convo, AgentStatus::Failed, e.to_string(), &pending),
        };
        convo.usage.add(reply.usage);
        let stop = reply.stop.clone();
        let message = reply.into_message();
        let text = message.text();
        if !text.trim().is_empty() {
            convo.last_text = text;
        }
        pending = message.tool_uses().map(|(id, name, input)| ToolCall::new(id, name, input.clone())).collect();
        if !message.parts.is_empty() {
            convo.messages.push(message);
        }
        if pending.is_empty() {
            let late = inbox.take();
            if !late.is_empty() {
                // A message arrived while the model answered: it gets another turn to read it.
                for message in late {
                    events(RunEvent::Message(&message));
                    convo.push_user(message);
                }
                continue;
            }
            return match stop {
                StopReason::MaxTokens => short(
                    convo,
                    AgentStatus::MaxTokens,
                    "its reply was cut at the token limit (agent.max_tokens)".into(),
                    &pending,
                ),
                StopReason::Refusal => short(convo, AgentStatus::Failed, "the model refused to go on".into(), &pending),
                _ => RunOutcome {
                    status: AgentStatus::Completed,
                    text: convo.last_text.clone(),
                    doing: None,
                    error: None,
                },
            };
        }
        let results = tokio::select! {
            biased;
            () = cancel.cancelled() => return short(convo, AgentStatus::Stopped, "it was stopped while its tools ran".into(), &pending),
            () = tokio::time::sleep_until(deadline.into()) => return out_of_time(convo, spec, &pending),
            results = run_tools(runtime, session, spec, &pending, cancel, events) => results,
        };
        convo.tool_calls += u32::try_from(pending.len()).unwrap_or(u32::MAX);
        let parts = results
            .into_iter()
            .map(|r| Part::ToolResult { id: r.id, content: r.content, is_error: r.is_error })
            .collect();
        convo.messages.push(Message { role: Role::User, parts });
        // `pending` keeps the calls just run: if a limit stops the run before the model reads
        // their results, they are what it was doing.
    }
}

/// The tools the model is shown, rebuilt only when what it depends on changed: the deferred
/// tools the session loaded, and the descriptions tools give this session (the skills found
/// where it works).
#[derive(Default)]
struct Shown {
    key: Option<(BTreeSet<String>, Vec<Option<String>>)>,
    tools: Option<Arc<[ToolDef]>>,
}

impl Shown {
    /// This turn's tools: those not deferred and the deferred ones the session loaded, each
    /// described as it describes itself to the session; `ToolSearch`'s description names the
    /// deferred ones not loaded.
    fn get(&mut self, runtime: &Runtime, spec: &RunSpec, session: &Session) -> Arc<[ToolDef]> {
        let loaded = session.state().with_slot::<toolbelt_core::LoadedTools, _>(|l| l.names.clone());
        let cx = toolbelt_core::DescribeContext::new(session.state(), runtime.services());
        let described: Vec<Option<String>> = spec
            .tools
            .iter()
            .map(|t| match t.name.as_str() {
                "ToolSearch" => None,
                name => runtime.registry().entry(name).and_then(|e| e.tool().describe(&cx)),
            })
            .collect();
        let key = (loaded, described);
        if let (Some(tools), Some(last)) = (&self.tools, &self.key)
            && *last == key
        {
            return Arc::clone(tools);
        }
        let (loaded, described) = &key;
        let mut held: Vec<&str> = spec.deferred.iter().filter(|n| !loaded.contains(*n)).map(String::as_str).collect();
        held.sort_unstable();
        let tools: Arc<[ToolDef]> = spec
            .tools
            .iter()
            .zip(described)
            .filter(|(t, _)| !spec.deferred.contains(&t.name) || loaded.contains(&t.name))
            .map(|(t, described)| {
                let mut t = t.clone();
                if t.name == "ToolSearch" {
                    t.description.push_str(&toolbelt_core::deferred_note(&held));
                } else if let Some(described) = described {
                    t.description.clone_from(described);
                }
                t
            })
            .collect();
        self.key = Some(key);
        self.tools = Some(Arc::clone(&tools));
        tools
    }
}

/// One model turn: the request from the conversation, the reply streamed to `events`.
async fn ask(
    spec: &RunSpec,
    tools: &Arc<[ToolDef]>,
    convo: &Conversation,
    events: RunEvents<'_>,
) -> Result<Reply, crate::provider::ProviderError> {
    let request = Request {
        model: spec.model.clone(),
        system: spec.system.clone(),
        messages: convo.messages.clone(),
        tools: Arc::clone(tools),
        tool_choice: ToolChoice::Auto,
        max_tokens: spec.max_tokens,
    };
    let sink = |event: StreamEvent<'_>| {
        if let StreamEvent::Text(text) = event {
            events(RunEvent::Text(text));
        }
    };
    spec.provider.complete(&request, &sink).await
}

/// Runs one reply's tool calls as a batch; a call to a tool the agent does not have is
/// refused (and recorded) without running.
async fn run_tools(
    runtime: &Runtime,
    session: &Session,
    spec: &RunSpec,
    calls: &[ToolCall],
    cancel: &CancellationToken,
    events: RunEvents<'_>,
) -> Vec<ToolResult> {
    let mut results: Vec<Option<ToolResult>> = vec![None; calls.len()];
    let mut batch = Vec::new();
    let mut slots = Vec::new();
    for (i, call) in calls.iter().enumerate() {
        events(RunEvent::ToolCall(call));
        match refusal(runtime, spec, &call.name) {
            None => {
                batch.push(call.clone());
                slots.push(i);
            }
            Some(error) => {
                // Through the runtime, so the refusal is in the audit log like any other.
                let plan = runtime.refuse(call.clone(), error);
                let refused = runtime.run(session, plan, &spec.tool_events, cancel).await;
                events(RunEvent::ToolResult(call, &refused));
                results[i] = Some(refused);
            }
        }
    }
    let ran = runtime.batch(session, batch, &spec.tool_events, cancel).await;
    for (i, result) in slots.into_iter().zip(ran) {
        events(RunEvent::ToolResult(&calls[i], &result));
        results[i] = Some(result);
    }
    results
        .into_iter()
        .zip(calls)
        .map(|(r, call)| r.unwrap_or_else(|| ToolResult::rejected(&call.id, "the call was not run")))
        .collect()
}

/// Why the loop refuses a call to `name` before the runtime sees it; `None` for a call the
/// runtime is to judge. A name or alias of one of the agent's tools goes to the runtime, and
/// so does a tool the policy hides (a bare deny rule): the runtime refuses that one, naming
/// the rule, as it would for anyone. A name no tool has is an unknown tool, with the closest
/// of the agent's own tools; a tool its definition leaves out is refused, saying so briefly
/// (the model has the list of its tools).
fn refusal(runtime: &Runtime, spec: &RunSpec, name: &str) -> Option<ToolError> {
    let registry = runtime.registry();
    match registry.lookup(name) {
        Ok(entry) if spec.allowed.contains(&entry.spec().name) => None,
        Ok(entry) => Some(ToolError::Denied { reason: left_out(&entry.spec().name, spec) }),
        Err(ToolError::Disabled { .. }) => None,
        Err(_) => Some(ToolError::UnknownTool {
            name: name.to_string(),
            suggestions: registry.closest(name, |tool| spec.allowed.contains(tool)),
        }),
    }
}

/// The most of an agent's tools a refusal lists; beyond that it points at the model's own
/// tool list.
const LISTED_TOOLS: usize = 10;

/// The reason for a call to `tool`, which exists, but which this agent was not given.
fn left_out(tool: &str, spec: &RunSpec) -> String {
    let why = if toolbelt_core::AGENT_TOOLS.contains(&tool) {
        format!(
            "an agent gets the agent tools only when its definition (`{}`) names them and agents may nest deeper \
             than it (agent.max_depth)",
            spec.definition
        )
    } else if spec.allowed.is_empty() {
        format!("this agent's model (provider `{}`) takes no tools", spec.provider.name())
    } else {
        format!("its definition, `{}`, leaves it out", spec.definition)
    };
    let mut names: Vec<&str> = spec.allowed.iter().map(String::as_str).collect();
    names.sort_unstable();
    let instead = match names.len() {
        0 => "answer in text".to_string(),
        n if n <= LISTED_TOOLS => format!("use one of: {}", names.join(", ")),
        _ => "use one of the tools you were given".to_string(),
    };
    format!("`{tool}` is not one of this agent's tools: {why}; {instead}")
}

fn out_of_time(convo: &Conversation, spec: &RunSpec, pending: &[ToolCall]) -> RunOutcome {
    let error = format!(
        "it ran out of its time budget ({}, `agent.time_budget` in the settings) before finishing",
        toolbelt_core::human_duration(spec.budget)
    );
    short(convo, AgentStatus::TimeBudget, error, pending)
}

/// The outcome of a run that stopped before its answer: the last text, and the calls it
/// was making.
fn short(convo: &Conversation, status: AgentStatus, error: String, pending: &[ToolCall]) -> RunOutcome {
    let doing = (!pending.is_empty()).then(|| {
        let calls: Vec<String> = pending.iter().map(brief_call).collect();
        calls.join("; ")
    });
    RunOutcome { status, text: convo.last_text.clone(), doing, error: Some(error) }
}
