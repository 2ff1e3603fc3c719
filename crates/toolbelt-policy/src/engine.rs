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
//! 4. a command whose program its text does not tell, while a rule about commands exists,
//!    and a git command that may print files from git's history, while a `Read(…)` deny
//!    rule could hide one (`engine/history.rs`), ask too;
//! 5. in `dontAsk` mode what would ask is denied.
//!
//! Deny beats ask beats allow whatever the order of rules or files. Every verdict names what
//! made it (the rule and its file, the grant, the mode), and an `Ask` carries the allow rules
//! that would let such calls run, which approvers offer as "for this session" / "always".

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use toolbelt_core::{Registry, SessionSlot, SessionState, ToolSpec};

use crate::mode::{PermissionMode, SessionMode};
use crate::protected::ProtectedPaths;
use crate::rules::{self, CallParts, Part, Rule, RuleEnv, RuleOrigin};
use crate::{Approval, Authorizer, CallInfo, Decision, Verdict, VerdictSource};

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

/// Why a [`RuleStore`] could not save rules: the store's own error.
pub type RuleStoreError = Box<dyn std::error::Error + Send + Sync>;

/// Where "always allow" rules are kept (for the `toolbelt` binary: the user's grants for the
/// project, in the user's state directory).
pub trait RuleStore: Send + Sync {
    /// Adds allow rules to the settings for good; returns where they were written (a label
    /// for the rules' origin, `grants /home/me/.local/state/toolbelt/projects/p-…/grants.toml`), or why they
    /// could not be. `workspace` is the first workspace root of the session that approved
    /// them: the rules' `./` paths are relative to it, and they belong to its project.
    fn add_allow_rules(&self, rules: &[String], workspace: &std::path::Path) -> Result<String, RuleStoreError>;
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
    const SHARED: bool = true;

    /// Grants given on either replica hold.
    fn merge(&mut self, theirs: Self) {
        for rule in theirs.rules {
            if !self.rules.contains(&rule) {
                self.rules.push(rule);
            }
        }
    }
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

use judge::{Judged, Judging, SessionRoots, lines_read_only};

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
        // Without a bare deny rule no spec is looked at (a typed tool's is built at first use).
        if !self.rules.deny.iter().any(Rule::is_bare) {
            return;
        }
        for entry in registry.entries() {
            if entry.is_enabled() && self.hiding_rule(entry.spec()).is_some() {
                registry.set_enabled(&entry.spec().name, false);
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
                VerdictSource::ProtectedPath(entry),
            );
            verdict.allow_rules = self.suggest(call, part);
            return Some(verdict);
        }
        None
    }

    /// The allow rules that would cover a part, for approvers and denial messages. A path
    /// reached through a symlink gets one for where it is declared and one for where it
    /// leads, since an allow must cover both.
    fn suggest(&self, call: &CallInfo<'_>, part: &Part) -> Vec<String> {
        let (tool, env) = (call.tool, &self.session_env(call.session));
        let views = |given: &PathBuf, real: &PathBuf| {
            if given == real { vec![given.clone()] } else { vec![given.clone(), real.clone()] }
        };
        let rule = match part {
            Part::Command(command) if rules::takes_command_rules(&tool.name) => {
                suggest::command_rule(command).map(|r| format!("{}({r})", tool.name))
            }
            // Another tool that runs a command (EnterWorktree runs git): its rules name the tool.
            Part::Command(_) => Some(tool.name.clone()),
            Part::Read { given, real } => {
                let rules = views(given, real).into_iter().map(|path| {
                    let dir = if path.is_dir() { path.as_path() } else { path.parent().unwrap_or(&path) };
                    let at = suggest::escape_glob(&rules::rule_path(dir, env));
                    // `//` (the root) stays `//`: `/**` would mean the settings' own directory.
                    let at = match at.trim_end_matches('/') {
                        "" => "/",
                        trimmed => trimmed,
                    };
                    format!("Read({at}/**)")
                });
                return rules.collect();
            }
            Part::Write { given, real } => {
                let rules = views(given, real)
                    .into_iter()
                    .map(|path| format!("Edit({})", suggest::escape_glob(&rules::rule_path(&path, env))));
                return rules.collect();
            }
            Part::Url(url) if tool.name == "WebFetch" => rules::host_of(url).map(|h| format!("WebFetch(domain:{h})")),
            Part::Url(_) | Part::Call => Some(tool.name.clone()),
        };
        rule.into_iter().collect()
    }
}

impl Authorizer for PermissionEngine {
    fn mode(&self, session: &SessionState) -> Option<PermissionMode> {
        Some(SessionMode::of(session, self.rules.mode))
    }

    fn authorize(&self, call: &CallInfo<'_>) -> Verdict {
        let parts = CallParts::of(call.access);
        if let Some(rule) = self.rules.deny.iter().find(|r| r.catches(call.tool, call.input, &parts)) {
            return Verdict::new(
                Decision::Deny,
                format!("a deny rule forbids `{}` here", call.tool.name),
                rule.source(),
            );
        }

        let roots = SessionRoots::of(call.session);
        let grants = self.session_grants(call.session);
        let mode = SessionMode::of(call.session, self.rules.mode);
        let persisted = self.persisted.read().unwrap_or_else(PoisonError::into_inner);
        let judging = Judging {
            roots: &roots,
            grants: &grants,
            persisted: &persisted,
            mode,
            lines_read_only: lines_read_only(call.access),
        };
        let judged: Vec<Judged> = parts.parts.iter().map(|p| self.judge(call, p, &judging)).collect();
        let protected = self.protected_writes(call, &parts, &grants, &persisted);
        drop(persisted);

        let worst = judged.iter().map(|j| j.decision).max().unwrap_or(Decision::Allow);
        let Some(first) = judged.iter().find(|j| j.decision == worst) else {
            return Verdict::new(Decision::Allow, "the call touches nothing", VerdictSource::Mode(mode));
        };
        let mut verdict = Verdict::new(worst, first.reason.clone(), first.source.clone());
        // The mode's own asks (and dontAsk's denials of them) yield to a hook's allow; plan
        // mode's denials and every rule's verdict do not.
        // (Rules and grants only ever allow a part, so whatever asks or denies here is the mode's.)
        verdict.hook_may_allow = !(worst == Decision::Deny && mode == PermissionMode::Plan);
        // Switching to acceptEdits is worth offering when edits inside the roots are what asks.
        verdict.offers_accept_edits = worst == Decision::Ask
            && mode == PermissionMode::Default
            && judged.iter().any(|j| j.decision == Decision::Ask && j.edit_inside);
        verdict.allow_rules = suggest::prune(
            judged.iter().filter(|j| j.decision != Decision::Allow).flat_map(|j| j.suggestion.clone()).collect(),
        );
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
                rule.source(),
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
                rule.source(),
            );
            opaque.allow_rules = verdict.allow_rules.clone();
            verdict = opaque;
        }
        if verdict.decision < Decision::Deny
            && let Some(question) = self.history_question(call, &parts)
        {
            verdict = question;
        }
        if verdict.decision == Decision::Ask && mode == PermissionMode::DontAsk {
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
        if *approval == Approval::AcceptEditsForSession {
            // Only ever from `default`: the switch never loosens plan or dontAsk.
            if SessionMode::of(call.session, self.rules.mode) == PermissionMode::Default {
                call.session.with_slot::<SessionMode, _>(|m| m.mode = Some(PermissionMode::AcceptEdits));
            }
            return;
        }
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

    /// Within what [`crate::mode::may_switch`] allows.
    fn switch_mode(&self, session: &SessionState, mode: PermissionMode) -> Result<(), String> {
        let base = self.rules.mode;
        if !crate::mode::may_switch(base, mode) {
            return Err(format!(
                "the settings put this session in {} mode, and only the user can change that (to {})",
                base.as_str(),
                mode.as_str()
            ));
        }
        session.with_slot::<SessionMode, _>(|m| m.mode = Some(mode));
        Ok(())
    }

    fn grant(&self, session: &SessionState, rule: &str) -> Result<(), String> {
        let env = self.session_env(session);
        Rule::parse(rule, Arc::new(RuleOrigin::new("session grant", env.cwd.clone())), &env)
            .map_err(|e| format!("`{rule}` is not a permission rule: {e}"))?;
        session.with_slot::<Grants, _>(|g| {
            if !g.rules.iter().any(|r| r == rule) {
                g.rules.push(rule.to_string());
            }
        });
        Ok(())
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
        Some(Verdict::new(Decision::Deny, reason, rule.source()))
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

mod history;
mod judge;
mod suggest;

#[cfg(test)]
mod tests;
