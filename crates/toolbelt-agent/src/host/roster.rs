//! A session's agents and teams, kept in the session's state: when the session ends, the
//! roster is dropped and every agent it holds is stopped.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use toolbelt_core::{AgentStatus, CancellationToken, SessionSlot};
use toolbelt_runtime::Session;

use super::SubAgent;
use crate::run::{Conversation, Inbox, RunEvent, RunOutcome, RunSpec, brief_call};

/// How many finished agents a roster keeps (running ones are always kept); the oldest
/// finished are forgotten first.
const KEEP_FINISHED: usize = 100;

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// How deep in a tree of agents a session is: 0 for a person's session, 1 for a
/// sub-agent's, and so on.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
pub(crate) struct AgentDepth {
    pub depth: u32,
}

impl SessionSlot for AgentDepth {
    const KEY: &'static str = "agent_depth";
}

/// The session slot holding its roster. Saves as nothing: running agents cannot be restored.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct RosterSlot {
    #[serde(skip)]
    pub roster: Arc<Roster>,
}

impl SessionSlot for RosterSlot {
    const KEY: &'static str = "agents";
}

/// A team: named agents sharing a mailbox.
#[derive(Debug, Clone)]
pub(crate) struct Team {
    pub description: String,
    /// Member agent ids, in the order they joined.
    pub members: Vec<String>,
}

/// A session's agents and teams.
#[derive(Debug, Default)]
pub(crate) struct Roster {
    agents: Mutex<Vec<Arc<AgentRecord>>>,
    pub teams: Mutex<BTreeMap<String, Team>>,
    next: AtomicU64,
}

impl Drop for Roster {
    fn drop(&mut self) {
        for agent in lock(&self.agents).iter() {
            agent.stop();
        }
    }
}

impl Roster {
    /// The next agent id (`agent_1`, `agent_2`…).
    pub fn next_id(&self) -> String {
        format!("agent_{}", self.next.fetch_add(1, Ordering::Relaxed) + 1)
    }

    pub fn add(&self, agent: Arc<AgentRecord>) {
        let forgotten = {
            let mut agents = lock(&self.agents);
            agents.push(agent);
            forget_old(&mut agents)
        };
        // Dropped outside the lock: a forgotten agent's session ends with it.
        drop(forgotten);
    }

    pub fn all(&self) -> Vec<Arc<AgentRecord>> {
        lock(&self.agents).clone()
    }

    /// The agent with this id, or else this name (the most recent of that name).
    pub fn find(&self, key: &str) -> Option<Arc<AgentRecord>> {
        let agents = lock(&self.agents);
        agents
            .iter()
            .find(|a| a.id == key)
            .or_else(|| agents.iter().rev().find(|a| a.name.as_deref() == Some(key)))
            .cloned()
    }

    pub fn running(&self) -> usize {
        lock(&self.agents).iter().filter(|a| a.status() == AgentStatus::Running).count()
    }
}

/// Takes the oldest finished agents out of `agents` until at most [`KEEP_FINISHED`] remain.
fn forget_old(agents: &mut Vec<Arc<AgentRecord>>) -> Vec<Arc<AgentRecord>> {
    let mut forgotten = Vec::new();
    while agents.iter().filter(|a| a.status() != AgentStatus::Running).count() > KEEP_FINISHED {
        match agents.iter().position(|a| a.status() != AgentStatus::Running) {
            Some(i) => forgotten.push(agents.remove(i)),
            None => break,
        }
    }
    forgotten
}

/// Where an agent stands between and during runs.
#[derive(Debug)]
struct State {
    status: AgentStatus,
    /// The history; `None` while a run holds it.
    convo: Option<Conversation>,
    /// How the last run ended.
    outcome: Option<RunOutcome>,
    /// What it was last seen doing (while running).
    doing: Option<String>,
    turns: u32,
    tool_calls: u32,
    /// The current run's token.
    cancel: CancellationToken,
    /// Time spent in runs before the current one.
    spent: Duration,
    /// When the current run began.
    run_started: Option<Instant>,
}

/// One agent: its definition's run spec, its own session, its history and its mailbox.
#[derive(Debug)]
pub(crate) struct AgentRecord {
    pub id: String,
    pub name: Option<String>,
    pub agent_type: String,
    pub description: String,
    pub team: Option<String>,
    /// Whether it was started in the background (and so continues there).
    pub background: bool,
    /// Its own session: cwd, read ledger, background tasks.
    pub session: Session,
    pub spec: RunSpec,
    /// Where its whole text goes when a report cuts it.
    pub spill_dir: Option<PathBuf>,
    /// The id of the session that started it.
    pub parent_session: String,
    /// Its depth among agents (1 for the first level of sub-agents).
    pub depth: u32,
    /// The permission mode its session runs in, when the policy has modes.
    pub mode: Option<toolbelt_policy::PermissionMode>,
    state: Mutex<State>,
    inbox: Mutex<Vec<String>>,
    changed: tokio::sync::watch::Sender<u64>,
}

impl AgentRecord {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        id: String,
        name: Option<String>,
        agent_type: String,
        description: String,
        team: Option<String>,
        background: bool,
        session: Session,
        spec: RunSpec,
        spill_dir: Option<PathBuf>,
        first: String,
        parent_session: String,
        depth: u32,
        mode: Option<toolbelt_policy::PermissionMode>,
    ) -> Self {
        let mut convo = Conversation::default();
        convo.push_user(first);
        Self {
            id,
            name,
            agent_type,
            description,
            team,
            background,
            session,
            spec,
            spill_dir,
            parent_session,
            depth,
            mode,
            state: Mutex::new(State {
                status: AgentStatus::Running,
                convo: Some(convo),
                outcome: None,
                doing: None,
                turns: 0,
                tool_calls: 0,
                cancel: CancellationToken::new(),
                spent: Duration::ZERO,
                run_started: None,
            }),
            inbox: Mutex::new(Vec::new()),
            changed: tokio::sync::watch::channel(0).0,
        }
    }

    pub fn status(&self) -> AgentStatus {
        lock(&self.state).status
    }

    /// Takes the history for a run (adding `message` to it, if any) and marks the agent
    /// running under `cancel`; `None` when a run already holds it, and then `message` waits
    /// in the inbox for that run's next turn (left there under the same lock [`Self::end`]
    /// takes, so the run cannot end between the look and the post without reading it).
    pub fn begin(&self, message: Option<String>, cancel: CancellationToken) -> Option<Conversation> {
        let mut state = lock(&self.state);
        let Some(mut convo) = state.convo.take() else {
            if let Some(message) = message {
                lock(&self.inbox).push(message);
            }
            return None;
        };
        if let Some(message) = message {
            convo.push_user(message);
        }
        state.status = AgentStatus::Running;
        state.cancel = cancel;
        state.run_started = Some(Instant::now());
        state.doing = None;
        drop(state);
        self.changed.send_modify(|n| *n += 1);
        Some(convo)
    }

    /// Puts the history back with how the run ended; or, when it completed but a message
    /// arrived meanwhile (and it was not stopped), hands the history back for the run to go
    /// on reading it, the agent still running.
    pub fn end(&self, convo: Conversation, outcome: RunOutcome) -> Option<Conversation> {
        let mut state = lock(&self.state);
        state.turns = convo.turns;
        state.tool_calls = convo.tool_calls;
        if outcome.status == AgentStatus::Completed && !state.cancel.is_cancelled() && !lock(&self.inbox).is_empty() {
            return Some(convo);
        }
        state.status = outcome.status;
        state.doing = outcome.doing.clone();
        state.outcome = Some(outcome);
        state.convo = Some(convo);
        if let Some(started) = state.run_started.take() {
            state.spent += started.elapsed();
        }
        drop(state);
        self.changed.send_modify(|n| *n += 1);
        None
    }

    /// Records what a run does as it goes, for reports while it runs.
    pub fn note(&self, event: &RunEvent<'_>) {
        let mut state = lock(&self.state);
        match event {
            RunEvent::Turn(n) => state.turns = *n,
            RunEvent::ToolCall(call) => {
                state.tool_calls += 1;
                state.doing = Some(brief_call(call));
            }
            _ => {}
        }
    }

    /// Sets the agent's depth, permission mode and identity in its session, before each run
    /// (so nothing that cleared the session's state can loosen them, or make its questions
    /// and its agents' records anonymous).
    pub fn apply_session_limits(&self) {
        let depth = self.depth;
        self.session.state().with_slot::<AgentDepth, _>(|d| d.depth = depth);
        let identity = SubAgent {
            id: self.id.clone(),
            name: self.name.clone(),
            agent_type: self.agent_type.clone(),
            description: self.description.clone(),
            background: self.background,
        };
        self.session.state().with_slot::<SubAgent, _>(|a| *a = identity);
        // The client in the session's state, for the agents this one starts.
        self.session.set_client((*self.session.client()).clone());
        if let Some(mode) = self.mode {
            self.session.state().with_slot::<toolbelt_policy::SessionMode, _>(|m| m.mode = Some(mode));
        }
    }

    /// Whether messages wait to be read.
    pub fn has_mail(&self) -> bool {
        !lock(&self.inbox).is_empty()
    }

    /// Stops the current run, and everything it started. An agent between runs has no run
    /// to clear its session on the way out, so it is cleared here: what the agent left
    /// running (background commands, its own agents) ends now.
    pub fn stop(&self) {
        let state = lock(&self.state);
        state.cancel.cancel();
        if state.convo.is_some() {
            self.session.state().clear_slots();
        }
    }

    /// Waits until the agent is not running, or `wait` passes.
    pub async fn settle(&self, wait: Duration) {
        let mut changes = self.changed.subscribe();
        let _ = tokio::time::timeout(wait, async {
            while self.status() == AgentStatus::Running {
                if changes.changed().await.is_err() {
                    break;
                }
            }
        })
        .await;
    }

    /// A snapshot for a report: status, outcome, counts, wall time.
    pub fn snapshot(&self) -> Snapshot {
        let state = lock(&self.state);
        let running_for = state.run_started.map(|s| s.elapsed()).unwrap_or_default();
        let last_text = state.convo.as_ref().map(|c| c.last_text.clone());
        Snapshot {
            status: state.status,
            outcome: state.outcome.clone(),
            doing: state.doing.clone(),
            last_text,
            turns: state.turns,
            tool_calls: state.tool_calls,
            duration: state.spent + running_for,
        }
    }
}

impl Inbox for AgentRecord {
    fn take(&self) -> Vec<String> {
        std::mem::take(&mut *lock(&self.inbox))
    }
}

/// An agent's state at one moment.
#[derive(Debug, Clone)]
pub(crate) struct Snapshot {
    pub status: AgentStatus,
    pub outcome: Option<RunOutcome>,
    pub doing: Option<String>,
    pub last_text: Option<String>,
    pub turns: u32,
    pub tool_calls: u32,
    pub duration: Duration,
}
