//! `toolbelt config check [--json] [--connect]`: every problem in every settings file, in file
//! and line order, then what was not applied and why; with `--connect`, also what only the
//! MCP servers can tell (those that do not connect, names that match none of their tools).

use std::process::ExitCode;
use std::sync::Arc;

use serde_json::{Value, json};
use std::path::PathBuf;
use toolbelt::settings::agent::{self, AgentsStatus};

use toolbelt::settings::Key;
use toolbelt::settings::{Layer, Origin, Problem, Trust};
use toolbelt_mcp::client::UpstreamState;
use toolbelt_policy::rules::{Rule, RuleOrigin};

use crate::cmd::Setup;
use crate::output::line;

/// How much a message matters: errors make the check fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Severity {
    Error,
    Warning,
    Note,
}

impl Severity {
    fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        }
    }
}

/// One thing to tell the user, with where it is when it is somewhere.
struct Message {
    severity: Severity,
    origin: Option<Origin>,
    key: String,
    message: String,
}

impl Message {
    fn of(severity: Severity, problem: &Problem) -> Self {
        Self {
            severity,
            origin: Some(problem.origin.clone()),
            key: problem.key.clone(),
            message: problem.message.clone(),
        }
    }

    /// `file:line: key: message`, the way compilers print it.
    fn text(&self) -> String {
        let problem = self.origin.as_ref().map(|origin| Problem {
            origin: origin.clone(),
            key: self.key.clone(),
            message: self.message.clone(),
        });
        match problem {
            Some(p) => p.to_string(),
            None => self.message.clone(),
        }
    }

    fn json(&self) -> Value {
        let origin = self.origin.as_ref();
        json!({
            "severity": self.severity.as_str(),
            "layer": origin.map(|o| o.layer.as_str()),
            "file": origin.and_then(|o| o.file.as_ref()).map(|f| f.display().to_string()),
            "line": origin.and_then(|o| o.line),
            "source": origin.and_then(|o| o.name.clone()),
            "key": (!self.key.is_empty()).then_some(&self.key),
            "message": self.message,
            "text": self.text(),
        })
    }
}

/// Runs the check; exit 1 when there is an error.
pub async fn run(setup: &Setup, json: bool, connect: bool) -> anyhow::Result<ExitCode> {
    let mut messages: Vec<Message> = setup.problems.iter().map(|p| Message::of(Severity::Error, p)).collect();
    // The project's files are checked as they would apply once trusted, whether they apply
    // now or not: a project waiting for trust (a clone, a repository's CI) is checked too.
    let as_trusted = setup.loaded_as_trusted();
    let applies_whole = matches!(setup.loaded.trust, Trust::Trusted { loosening: true } | Trust::NotNeeded)
        && setup.loaded.ignored_problems.is_empty();
    if !applies_whole {
        let why = match setup.loaded.trust {
            Trust::Trusted { .. } => {
                " (a setting that loosens the policy, not applied; `toolbelt trust --allow-loosening` refuses it until \
                 it is fixed)"
            }
            _ => {
                " (calls leave it out while the project is not trusted; `toolbelt trust` refuses it until it is fixed)"
            }
        };
        messages.extend(setup.project_problems().iter().filter(|p| !setup.problems.contains(p)).map(|p| {
            let mut m = Message::of(Severity::Error, p);
            m.message.push_str(why);
            m
        }));
    }
    messages.extend(unknown_tool_warnings(setup, &as_trusted.entries));
    messages.extend(unknown_filter_words(&as_trusted.entries));
    messages.extend(tool_definition_problems(&as_trusted.entries));
    messages.extend(as_trusted.plugin_problems.iter().map(|p| Message::of(Severity::Error, p)));
    if connect {
        messages.extend(upstream_warnings(setup).await);
    }
    let (agents, agents_ready) = agents_message(setup);
    let agents_json = json!({"available": agents_ready, "message": agents.message});
    // File and line order: layer by layer as they are read, each file top to bottom.
    messages.sort_by(|a, b| {
        let key =
            |m: &Message| m.origin.as_ref().map(|o| (o.layer, o.file.clone(), o.line.unwrap_or(0), o.name.clone()));
        key(a).cmp(&key(b))
    });
    // What was read but not applied (a project's setting the user's own override or keep
    // for themselves), then trust and Claude Code's files.
    let notes = setup.loaded.notices.iter().cloned().map(Some);
    let notes = notes.chain([setup.loaded.trust.notice(&setup.loc.project), setup.loaded.claude_note.clone()]);
    messages.extend(notes.flatten().map(|message| Message {
        severity: Severity::Note,
        origin: None,
        key: String::new(),
        message,
    }));
    // Which provider agents use (or why none), last: it is about the whole, not a place.
    match agents.origin {
        Some(_) => {
            let at = messages.iter().position(|m| m.origin.is_none()).unwrap_or(messages.len());
            messages.insert(at, agents);
        }
        None => messages.push(agents),
    }
    // Where web searches go, and what is missing for the chosen provider.
    let env = |name: &str| std::env::var(name).ok();
    let web = toolbelt::settings::web::search_status(&setup.settings.web, &env);
    let web_json = json!({"search": web});
    messages.push(Message { severity: Severity::Note, origin: None, key: String::new(), message: web });
    let errors = messages.iter().filter(|m| m.severity == Severity::Error).count();
    let files = &setup.loaded.files_read;
    // The project's files read but not applied: they wait for trust.
    let waiting: Vec<&(Layer, PathBuf)> = as_trusted.files_read.iter().filter(|f| !files.contains(f)).collect();
    if json {
        let out = json!({
            "ok": errors == 0,
            "errors": errors,
            "agents": agents_json,
            "web": web_json,
            "files": files.iter().map(|(l, f)| json!({"layer": l.as_str(), "path": f.display().to_string()})).collect::<Vec<_>>(),
            "waiting_for_trust": waiting.iter().map(|(l, f)| json!({"layer": l.as_str(), "path": f.display().to_string()})).collect::<Vec<_>>(),
            "messages": messages.iter().map(Message::json).collect::<Vec<_>>(),
        });
        line(&serde_json::to_string_pretty(&out)?)?;
    } else {
        for m in &messages {
            line(&format!("{}: {}", m.severity.as_str(), m.text()))?;
        }
        let mut layers: Vec<String> = files.iter().map(|(l, f)| format!("{} {}", l.as_str(), f.display())).collect();
        layers.extend(waiting.iter().map(|(l, f)| format!("{} {} (waiting for trust)", l.as_str(), f.display())));
        let checked = if layers.is_empty() { "no settings files found".to_string() } else { layers.join(", ") };
        if errors == 0 {
            line(&format!("ok: {checked}"))?;
        } else {
            line(&format!("{errors} problem(s) in: {checked}"))?;
        }
    }
    Ok(if errors == 0 { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// Rules naming a tool that does not exist here (a typo, or an MCP server not configured).
fn unknown_tool_warnings(setup: &Setup, entries: &[toolbelt::settings::Entry]) -> Vec<Message> {
    let registry = toolbelt::builtin_registry();
    let specs = registry.specs();
    let rule_keys = [Key::PERMISSIONS_ALLOW, Key::PERMISSIONS_ASK, Key::PERMISSIONS_DENY];
    let mut out = Vec::new();
    for entry in entries.iter().filter(|e| rule_keys.iter().any(|k| e.key == *k)) {
        let Some(text) = entry.value.as_str() else { continue };
        // A rule that does not parse is already an error.
        let mut problems = setup.problems.iter().chain(&setup.loaded.ignored_problems);
        if problems.any(|p| p.origin == entry.origin && p.key == entry.key) {
            continue;
        }
        let origin = Arc::new(RuleOrigin::new(entry.origin.to_string(), setup.loc.project.clone()));
        let Ok(rule) = Rule::parse(text, origin, &setup.rule_env) else { continue };
        let Some(name) = rule.tool_name() else { continue };
        if matches!(name, "Read" | "Edit" | "Write")
            || name.starts_with("mcp__")
            || specs.iter().any(|s| rule.names_tool(s))
        {
            continue;
        }
        let hint = closest(&registry, name);
        out.push(Message {
            severity: Severity::Warning,
            origin: Some(entry.origin.clone()),
            key: entry.key.clone(),
            message: format!("rule `{text}` names no tool here{hint}"),
        });
    }
    out
}

/// `tools.enabled` / `tools.disabled` words that name no tool, alias, category or tag here (a
/// typo leaves a tool in, or, in `enabled`, every tool out). An upstream server's tool
/// (`server__tool`) is not known until it connects, so such names are left alone.
fn unknown_filter_words(entries: &[toolbelt::settings::Entry]) -> Vec<Message> {
    let registry = toolbelt::builtin_registry();
    let specs = registry.specs();
    let mut out = Vec::new();
    for entry in entries.iter().filter(|e| e.key == Key::TOOLS_ENABLED || e.key == Key::TOOLS_DISABLED) {
        let Some(word) = entry.value.as_str().map(str::trim) else { continue };
        let known = match registry.lookup(word) {
            Err(toolbelt_core::ToolError::UnknownTool { .. }) => {
                toolbelt_core::Category::parse(word).is_some() || specs.iter().any(|s| s.has_tag(word))
            }
            _ => true,
        };
        if known || word.contains("__") {
            continue;
        }
        let hint = closest(&registry, word);
        out.push(Message {
            severity: Severity::Warning,
            origin: Some(entry.origin.clone()),
            key: entry.key.clone(),
            message: format!("`{word}` names no tool, alias, category or tag here{hint}"),
        });
    }
    out
}

/// `; did you mean `Bash`?` for a name no tool has but one is close to; else nothing.
fn closest(registry: &toolbelt_core::Registry, name: &str) -> String {
    match registry.lookup(name) {
        Err(toolbelt_core::ToolError::UnknownTool { suggestions, .. }) if !suggestions.is_empty() => {
            format!("; did you mean `{}`?", suggestions[0])
        }
        _ => String::new(),
    }
}

/// What only connecting the MCP servers tells: a server that does not connect, and names in
/// the settings that match none of the tools the servers list.
async fn upstream_warnings(setup: &Setup) -> Vec<Message> {
    let registry = Arc::new(toolbelt_core::Registry::new());
    let Some(gateway) = setup.gateway(&registry).await else { return Vec::new() };
    let mut out: Vec<Message> = toolbelt::upstream_names::check(setup, &gateway, &registry)
        .iter()
        .map(|found| Message::of(Severity::Warning, &found.problem))
        .collect();
    for status in gateway.statuses() {
        let error = match status.state {
            UpstreamState::Failed { error } => error,
            UpstreamState::NeedsLogin { .. } => {
                format!("it asks to sign in: run `toolbelt mcp-servers login {}`", status.name)
            }
            _ => continue,
        };
        let key = Key::MCP_SERVERS.named(&status.name);
        let entry = setup.loaded.entries.iter().filter(|e| e.key == key).max_by_key(|e| e.origin.layer);
        out.push(Message {
            severity: Severity::Warning,
            origin: entry.map(|e| e.origin.clone()),
            message: format!("MCP server `{}` did not connect: {error}", status.name),
            key,
        });
    }
    gateway.shutdown().await;
    out
}

/// Which model provider agents use, or why they are unavailable and what to set; whether
/// they are available.
fn agents_message(setup: &Setup) -> (Message, bool) {
    let env = |name: &str| std::env::var(name).ok();
    let note = |severity, message| Message { severity, origin: None, key: String::new(), message };
    let message = match agent::status(&setup.settings.agent, &env) {
        AgentsStatus::Ready(text) => return (note(Severity::Note, text), true),
        AgentsStatus::NoProvider(text) => note(Severity::Note, text),
        AgentsStatus::Unusable(text) => note(Severity::Warning, text),
        AgentsStatus::UnknownProvider(text) => {
            // The highest layer's value is the one that counts: the last of them.
            let entry = setup.loaded.entries.iter().rev().find(|e| e.key == Key::AGENT_PROVIDER);
            Message {
                severity: Severity::Error,
                origin: entry.map(|e| e.origin.clone()),
                key: Key::AGENT_PROVIDER.into(),
                message: format!("{text}; agents are unavailable until it names one"),
            }
        }
    };
    (message, false)
}

/// The tools the settings define that are left out: a definition refused, or a name another
/// tool already answers to (checked against the built-in tools).
fn tool_definition_problems(entries: &[toolbelt::settings::Entry]) -> Vec<Message> {
    let (definitions, problems) = toolbelt::settings::custom_tools::resolve(entries);
    let mut messages: Vec<Message> = problems.iter().map(|p| Message::of(Severity::Error, p)).collect();
    if definitions.is_empty() {
        return messages;
    }
    let registry = toolbelt::builtin_registry();
    for (name, why) in toolbelt::settings::custom_tools::register(&registry, &definitions) {
        let family = entries.iter().find(|e| {
            Key::TOOLS_COMMAND.name_in(&e.key) == Some(name.as_str())
                || Key::TOOLS_HTTP.name_in(&e.key) == Some(name.as_str())
        });
        messages.push(Message {
            severity: Severity::Error,
            origin: family.map(|e| e.origin.clone()),
            key: family.map(|e| e.key.clone()).unwrap_or_default(),
            message: format!("{why}; the tool is left out"),
        });
    }
    messages
}
