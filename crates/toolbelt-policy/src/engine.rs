//! The permission engine: rules, grants and the mode turned into a verdict for each call.
//!
//! A call is judged part by part ([`Part`]: each simple command, each path, each URL):
//!
//! 1. a **deny** rule that catches any part denies the call;
//! 2. each part is then *allowed* when an allow rule or a session grant covers it, else the
//!    mode decides it ([`PermissionMode`]: reads inside the roots and read-only commands run,
//!    writes ask unless `acceptEdits`, …); the call gets the strictest part's decision;
//! 3. an **ask** rule that catches any part makes an allowed call ask (even in
//!    `bypassPermissions`: an explicit ask is never skipped);
//! 4. in `dontAsk` mode what would ask is denied.
//!
//! Deny beats ask beats allow whatever the order of rules or files. Every verdict names what
//! made it (the rule and its file, the grant, the mode), and an `Ask` carries the allow rules
//! that would let such calls run, which approvers offer as "for this session" / "always".

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use toolbelt_core::{PermissionClass, Registry, SessionSlot, SessionState, ToolSpec};

use crate::mode::{PartKind, PermissionMode};
use crate::paths::Roots;
use crate::protected::ProtectedPaths;
use crate::rules::{self, CallParts, Part, Rule, RuleEnv, RuleOrigin};
use crate::{Approval, Authorizer, CallInfo, Decision, Verdict};

/// The rules of every settings layer, merged, and the mode.
#[derive(Debug, Clone, Default)]
pub struct PermissionRules {
    /// The permission mode.
    pub mode: PermissionMode,
    /// Allow rules, in settings order.
    pub allow: Vec<Rule>,
    /// Ask rules.
    pub ask: Vec<Rule>,
    /// Deny rules.
    pub deny: Vec<Rule>,
}

/// Where "always allow" rules are written (the project-local settings file).
pub trait RuleStore: Send + Sync {
    /// Adds allow rules to the settings for good; returns where they were written, or why
    /// they could not be. `workspace` is the first workspace root of the session that
    /// approved them: the rules' `./` paths are relative to it, and they belong to its project.
    fn add_allow_rules(&self, rules: &[String], workspace: &std::path::Path) -> Result<String, String>;
}

/// Rules a person allowed for the rest of a session. Kept in the session's state, so a named
/// CLI session keeps them across invocations.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Grants {
    /// The granted allow rules, in the order they were granted.
    pub rules: Vec<String>,
}

impl SessionSlot for Grants {
    const KEY: &'static str = "permission_grants";
}

/// Decides on calls with Claude Code's permission model. See the module docs.
pub struct PermissionEngine {
    rules: PermissionRules,
    env: RuleEnv,
    protected: ProtectedPaths,
    store: Option<Arc<dyn RuleStore>>,
    /// Rules made "always" while this engine runs (also written to the store).
    persisted: RwLock<Vec<Rule>>,
    /// Grant rules parsed once per workspace (`None`: a grant that does not parse, ignored).
    grant_cache: Mutex<HashMap<(PathBuf, String), Option<Rule>>>,
}

impl std::fmt::Debug for PermissionEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PermissionEngine").field("mode", &self.rules.mode).field("env", &self.env).finish()
    }
}

/// One part, judged.
struct Judged {
    decision: Decision,
    reason: String,
    source: String,
    suggestion: Option<String>,
    /// A path outside the roots, when this part reads or writes one.
    outside: Option<PathBuf>,
}

impl PermissionEngine {
    /// An engine over `rules`, resolving `~/` and `./` anchors with `env`.
    pub fn new(rules: PermissionRules, env: RuleEnv) -> Self {
        Self {
            rules,
            env,
            protected: ProtectedPaths::default(),
            store: None,
            persisted: RwLock::new(Vec::new()),
            grant_cache: Mutex::new(HashMap::new()),
        }
    }

    /// Writes "always" approvals to `store`.
    pub fn with_store(mut self, store: Arc<dyn RuleStore>) -> Self {
        self.store = Some(store);
        self
    }

    /// Protects these paths (the default protects [`crate::protected::PROTECTED_NAMES`] at
    /// any depth): writing them asks in every mode unless an allow rule names them.
    pub fn with_protected(mut self, protected: ProtectedPaths) -> Self {
        self.protected = protected;
        self
    }

    /// The protected paths.
    pub fn protected(&self) -> &ProtectedPaths {
        &self.protected
    }

    /// The mode.
    pub fn mode(&self) -> PermissionMode {
        self.rules.mode
    }

    /// The bare deny rule that removes this tool from listings and exports, if any.
    pub fn hiding_rule(&self, tool: &ToolSpec) -> Option<&Rule> {
        self.rules.deny.iter().find(|r| r.is_bare() && r.names_tool(tool))
    }

    /// Disables every tool of `registry` a bare deny rule names, so it leaves every listing
    /// and export (a call to it is denied, naming the rule: [`Authorizer::hidden`]).
    pub fn hide_denied(&self, registry: &Registry) {
        for spec in registry.specs() {
            if self.hiding_rule(&spec).is_some() {
                registry.set_enabled(&spec.name, false);
            }
        }
    }

    /// How the rules a session approves are anchored: `./` at the session's first workspace
    /// root (an MCP client's first root; the CLI's working directory), which is where they
    /// were suggested from, so a grant or an "always" rule means the path the person saw.
    fn session_env(&self, session: &SessionState) -> RuleEnv {
        match session.roots().into_iter().next() {
            Some(root) => RuleEnv { home: self.env.home.clone(), cwd: root },
            None => self.env.clone(),
        }
    }

    fn session_grants(&self, session: &SessionState) -> Vec<Rule> {
        let texts = session.with_slot::<Grants, _>(|g| g.rules.clone());
        if texts.is_empty() {
            return Vec::new();
        }
        let env = self.session_env(session);
        let mut cache = self.grant_cache.lock().unwrap_or_else(PoisonError::into_inner);
        texts
            .into_iter()
            .filter_map(|text| {
                cache
                    .entry((env.cwd.clone(), text))
                    .or_insert_with_key(|(cwd, text)| {
                        let origin = Arc::new(RuleOrigin::new("session grant", cwd.clone()));
                        Rule::parse(text, origin, &env).ok()
                    })
                    .clone()
            })
            .collect()
    }

    /// An `Ask` for the first write to a protected path that no allow rule or grant names.
    fn protected_writes(
        &self,
        call: &CallInfo<'_>,
        parts: &CallParts,
        grants: &[Rule],
        persisted: &[Rule],
    ) -> Option<Verdict> {
        for part in &parts.parts {
            let Part::Write { given, real } = part else { continue };
            let Some(entry) = self.protected.protects(given).or_else(|| self.protected.protects(real)) else {
                continue;
            };
            let word = ProtectedPaths::entry_word(&entry);
            let named = self
                .rules
                .allow
                .iter()
                .chain(persisted)
                .chain(grants)
                .any(|r| r.names_entry(word) && r.covers(call.tool, call.input, part));
            if named {
                continue;
            }
            let mut verdict = Verdict::new(
                Decision::Ask,
                format!(
                    "writing {} changes `{entry}`, a protected path (it decides what toolbelt, the agent host, git \
                     or the editor run next), so it asks in every mode unless an allow rule names it",
                    given.display()
                ),
                format!("protected path `{entry}`"),
            );
            verdict.allow_rules = self.suggest(call, part).into_iter().collect();
            return Some(verdict);
        }
        None
    }

    fn judge(&self, call: &CallInfo<'_>, part: &Part, roots: &Roots, grants: &[Rule], persisted: &[Rule]) -> Judged {
        let (tool, input) = (call.tool, call.input);
        let outside = match part {
            Part::Read { given, real } | Part::Write { given, real } if !roots.contain(given, real) => {
                Some(given.clone())
            }
            _ => None,
        };
        let allowed = |source: String| Judged {
            decision: Decision::Allow,
            reason: "an allow rule covers it".into(),
            source,
            suggestion: None,
            outside: outside.clone(),
        };
        // A path is seen as declared and as it really is: an allow must cover both (by the same
        // rule or two), so a symlink cannot carry an allow somewhere else.
        let views: Vec<Part> = match part {
            Part::Read { given, real } if given != real => vec![
                Part::Read { given: given.clone(), real: given.clone() },
                Part::Read { given: real.clone(), real: real.clone() },
            ],
            Part::Write { given, real } if given != real => vec![
                Part::Write { given: given.clone(), real: given.clone() },
                Part::Write { given: real.clone(), real: real.clone() },
            ],
            _ => vec![part.clone()],
        };
        let rules: Vec<&Rule> = self.rules.allow.iter().chain(persisted).collect();
        let cover = |view: &Part| -> Option<String> {
            if let Some(rule) = rules.iter().find(|r| r.covers(tool, input, view)) {
                return Some(rule.describe());
            }
            grants.iter().find(|r| r.covers(tool, input, view)).map(|r| format!("session grant `{}`", r.text()))
        };
        if let Some(sources) = views.iter().map(cover).collect::<Option<Vec<String>>>() {
            let mut sources = sources;
            sources.dedup();
            return allowed(sources.join(" and "));
        }
        let mode = self.rules.mode;
        let (mut kind, what) = self.kind_of(call.tool, part, outside.is_some());
        // The files a command names inside the workspace are the command's business: its own
        // part decides (allowed by its rule, or asked about), so they add no question. Those
        // outside the roots ask like the Read and Write tools; deny rules and protected paths
        // hold either way.
        let runs = call.access.touches.iter().any(|t| matches!(t, toolbelt_core::Touch::Execute(_)));
        if runs && matches!(kind, PartKind::ReadInside | PartKind::WriteInside) {
            kind = PartKind::State;
        }
        let decision = mode.baseline(kind);
        let reason = match (decision, kind) {
            (Decision::Allow, _) => format!("{what}: allowed in {mode} mode"),
            (Decision::Deny, _) if mode == PermissionMode::Plan => format!("plan mode is read-only: {what}"),
            (_, PartKind::ReadOutside | PartKind::WriteOutside) => format!("{what}, outside the workspace roots"),
            (_, PartKind::WriteInside) if mode == PermissionMode::Default => {
                format!("{what} needs approval in default mode (acceptEdits mode allows edits inside the workspace)")
            }
            _ => format!("{what} needs approval"),
        };
        let suggestion = (decision != Decision::Allow).then(|| self.suggest(call, part)).flatten();
        Judged { decision, reason, source: format!("mode {mode}"), suggestion, outside }
    }

    /// The kind of a part, and a few words saying what it does.
    fn kind_of(&self, tool: &ToolSpec, part: &Part, outside: bool) -> (PartKind, String) {
        match part {
            Part::Read { given, .. } => (
                if outside { PartKind::ReadOutside } else { PartKind::ReadInside },
                format!("reading {}", given.display()),
            ),
            Part::Write { given, .. } => (
                if outside { PartKind::WriteOutside } else { PartKind::WriteInside },
                format!("writing {}", given.display()),
            ),
            Part::Command(command) => match toolbelt_command::classify(command).reason() {
                None => (PartKind::ReadOnlyCommand, format!("`{command}` is read-only")),
                Some(why) => (PartKind::Command, format!("`{command}` is not read-only ({why})")),
            },
            Part::Url(url) => (PartKind::Network, format!("contacting {url}")),
            Part::Call => match tool.permission {
                PermissionClass::Read => (PartKind::State, format!("`{}` only reads", tool.name)),
                PermissionClass::Write => (PartKind::WriteInside, format!("`{}` changes files or state", tool.name)),
                PermissionClass::External => {
                    (PartKind::Command, format!("`{}` runs commands or reaches outside the machine", tool.name))
                }
            },
        }
    }

    /// The allow rule that would cover a part, for approvers and denial messages.
    fn suggest(&self, call: &CallInfo<'_>, part: &Part) -> Option<String> {
        let (tool, env) = (call.tool, &self.session_env(call.session));
        Some(match part {
            Part::Command(command) => format!("{}({})", tool.name, suggest_command(command)),
            Part::Read { given, .. } => {
                let dir = if given.is_dir() { given.as_path() } else { given.parent().unwrap_or(given) };
                format!("Read({}/**)", escape_glob(&rules::rule_path(dir, env)).trim_end_matches('/'))
            }
            Part::Write { given, .. } => format!("Edit({})", escape_glob(&rules::rule_path(given, env))),
            Part::Url(url) if tool.name == "WebFetch" => format!("WebFetch(domain:{})", rules::host_of(url)?),
            Part::Url(_) | Part::Call => tool.name.clone(),
        })
    }
}

impl Authorizer for PermissionEngine {
    fn authorize(&self, call: &CallInfo<'_>) -> Verdict {
        let parts = CallParts::of(call.access);
        if let Some(rule) = self.rules.deny.iter().find(|r| r.catches(call.tool, call.input, &parts)) {
            return Verdict::new(
                Decision::Deny,
                format!("a deny rule forbids `{}` here", call.tool.name),
                rule.describe(),
            );
        }

        let roots = Roots::new(&call.session.roots());
        let grants = self.session_grants(call.session);
        let persisted = self.persisted.read().unwrap_or_else(PoisonError::into_inner);
        let judged: Vec<Judged> =
            parts.parts.iter().map(|p| self.judge(call, p, &roots, &grants, &persisted)).collect();
        let protected = self.protected_writes(call, &parts, &grants, &persisted);
        drop(persisted);

        let worst = judged.iter().map(|j| j.decision).max().unwrap_or(Decision::Allow);
        let Some(first) = judged.iter().find(|j| j.decision == worst) else {
            return Verdict::new(Decision::Allow, "the call touches nothing", format!("mode {}", self.rules.mode));
        };
        let mut verdict = Verdict::new(worst, first.reason.clone(), first.source.clone());
        // The mode's own asks (and dontAsk's denials of them) yield to a hook's allow; plan
        // mode's denials and every rule's verdict do not.
        // (Rules and grants only ever allow a part, so whatever asks or denies here is the mode's.)
        verdict.hook_may_allow = !(worst == Decision::Deny && self.rules.mode == PermissionMode::Plan);
        let mut suggestions: Vec<String> = Vec::new();
        for s in judged.iter().filter(|j| j.decision != Decision::Allow).filter_map(|j| j.suggestion.clone()) {
            if !suggestions.contains(&s) {
                suggestions.push(s);
            }
        }
        verdict.allow_rules = suggestions;
        verdict.allowed_outside =
            judged.iter().filter(|j| j.decision == Decision::Allow).filter_map(|j| j.outside.clone()).collect();

        if verdict.decision < Decision::Deny
            && let Some(verdict_for_protected) = protected
        {
            verdict = verdict_for_protected;
        }
        if verdict.decision < Decision::Deny
            && let Some(rule) = self.rules.ask.iter().find(|r| r.catches(call.tool, call.input, &parts))
        {
            verdict = Verdict::new(
                Decision::Ask,
                format!("an ask rule always asks before `{}` runs this", call.tool.name),
                rule.describe(),
            );
            verdict.allowed_outside.clear();
        }
        if verdict.decision < Decision::Deny
            && let Some((text, why)) = parts.opaque.first()
            && let Some(rule) = self.rules.deny.iter().chain(&self.rules.ask).find(|r| r.is_command_rule_for(call.tool))
        {
            let mut opaque = Verdict::new(
                Decision::Ask,
                format!(
                    "`{text}` runs a program that cannot be read from the command's text ({why}), so it cannot be \
                     checked against the rules about commands"
                ),
                rule.describe(),
            );
            opaque.allow_rules = verdict.allow_rules.clone();
            verdict = opaque;
        }
        if verdict.decision == Decision::Ask && self.rules.mode == PermissionMode::DontAsk {
            verdict = Verdict {
                decision: Decision::Deny,
                reason: format!("{} (dontAsk mode denies what would ask)", verdict.reason),
                ..verdict
            };
        }
        verdict
    }

    fn hidden_paths(&self) -> Option<Arc<dyn toolbelt_core::HiddenPaths>> {
        let rules: Vec<Rule> =
            self.rules.deny.iter().filter(|r| r.tool_name() == Some("Read") && !r.is_bare()).cloned().collect();
        if rules.is_empty() {
            return None;
        }
        Some(Arc::new(ReadDenials { rules }))
    }

    fn remember(&self, call: &CallInfo<'_>, verdict: &Verdict, approval: &Approval) {
        if !matches!(approval, Approval::AllowSession | Approval::AllowAlways) || verdict.allow_rules.is_empty() {
            return;
        }
        call.session.with_slot::<Grants, _>(|g| {
            for rule in &verdict.allow_rules {
                if !g.rules.contains(rule) {
                    g.rules.push(rule.clone());
                }
            }
        });
        if *approval != Approval::AllowAlways {
            return;
        }
        let Some(store) = &self.store else { return };
        let env = self.session_env(call.session);
        match store.add_allow_rules(&verdict.allow_rules, &env.cwd) {
            Ok(place) => {
                let origin = Arc::new(RuleOrigin::new(place, env.cwd.clone()));
                let parsed = verdict.allow_rules.iter().filter_map(|r| Rule::parse(r, Arc::clone(&origin), &env).ok());
                self.persisted.write().unwrap_or_else(PoisonError::into_inner).extend(parsed);
            }
            Err(e) => tracing::warn!("could not save the allow rules {:?} for good: {e}", verdict.allow_rules),
        }
    }

    fn hidden(&self, tool: &ToolSpec) -> Option<Verdict> {
        let rule = self.hiding_rule(tool)?;
        let reason = format!(
            "`{}` is denied by the rule `{}` ({}), so it is left out of this session's tools; use another tool, or \
             ask the user to remove that rule",
            tool.name,
            rule.text(),
            rule.origin().label
        );
        Some(Verdict::new(Decision::Deny, reason, rule.describe()))
    }
}

/// The `Read(…)` deny rules, as the paths they hide from tools that walk many files.
#[derive(Debug)]
struct ReadDenials {
    rules: Vec<Rule>,
}

impl toolbelt_core::HiddenPaths for ReadDenials {
    fn is_hidden(&self, path: &std::path::Path) -> bool {
        self.rules.iter().any(|r| r.hides_from_reading(path, path))
    }

    fn masks(&self) -> Vec<PathBuf> {
        self.rules.iter().filter_map(Rule::literal_read_path).collect()
    }
}

/// `Bash` specifier for a command: its first plain words (at most two) then ` *`, so
/// `cargo test --workspace` suggests `cargo test *`; an unusual command is suggested as is.
fn suggest_command(command: &str) -> String {
    let plain = |w: &&str| {
        !w.starts_with('-')
            && w.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':' | '@' | '+'))
    };
    let prefix: Vec<&str> = command.split_whitespace().take_while(plain).take(2).collect();
    if prefix.is_empty() { command.to_string() } else { format!("{} *", prefix.join(" ")) }
}

/// Escapes glob metacharacters so a suggested path rule names exactly that path.
fn escape_glob(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for c in path.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '{' | '}' | '\\' | '!') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests;
