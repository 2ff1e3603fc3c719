//! Reading every layer: the files, the environment and the flags into entries; what a project
//! sets that never applies dropped; the trust decided; what waits for trust left out.

use std::path::PathBuf;

use super::{
    Entry, Layer, Loaded, Locations, Origin, Problem, Settings, Trust, TrustStore, agent, claude, env, loosening,
    model_access, plugins, remote, resolve, schema, store, toml_file, trust, web,
};
use crate::settings::schema::Key;

/// Reads every layer. `flags` are the command line's entries; `env` the process environment;
/// `claude_flag` is `--claude-settings`. Never fails: problems are collected in the result.
///
/// The project's own files apply only when the project is trusted ([`trust`]): until then
/// only their deny and ask rules are kept. Claude Code's files are always read, and their deny
/// and ask rules always apply; the rest of them applies when `compat.claude` (or the flag)
/// says so, that setting itself waiting for trust when a project sets it.
pub fn load(
    loc: &Locations,
    flags: Vec<Entry>,
    env: impl IntoIterator<Item = (String, String)>,
    claude_flag: bool,
) -> Loaded {
    load_as(loc, flags, env, claude_flag, Assume::Store)
}

/// [`load`] as it would be once the project is trusted with everything it asks for, the
/// settings that loosen the policy included: what `toolbelt trust` checks before it trusts,
/// and what `config check` checks in a project waiting for trust.
pub fn load_trusted(
    loc: &Locations,
    flags: Vec<Entry>,
    env: impl IntoIterator<Item = (String, String)>,
    claude_flag: bool,
) -> Loaded {
    load_as(loc, flags, env, claude_flag, Assume::Trusted)
}

/// What the project's waiting settings would be in each way of reading it — without and with
/// Claude Code's files applying whole — so one trust covers both (`--claude-settings` then
/// never reads as a change). `flags` without their `compat.claude` for the first.
pub fn trust_views(loc: &Locations, flags: &[Entry], env: &[(String, String)]) -> [trust::Pending; 2] {
    let without: Vec<Entry> = flags.iter().filter(|e| e.key != Key::COMPAT_CLAUDE).cloned().collect();
    [load(loc, without, env.to_vec(), false).pending, load(loc, flags.to_vec(), env.to_vec(), true).pending]
}

/// Every problem the project's own files would have once trusted with everything they ask
/// for (`claude`: with Claude Code's files applying whole): syntax, unknown keys, values of
/// the wrong type, rules that do not parse, directories that are not there. What `toolbelt
/// trust` refuses a project for, and what `config check` reports of a project waiting for
/// trust.
pub fn project_problems(loc: &Locations, flags: &[Entry], env: &[(String, String)], claude: bool) -> Vec<Problem> {
    let flags = flags.iter().filter(|e| claude || e.key != Key::COMPAT_CLAUDE).cloned().collect();
    let loaded = load_trusted(loc, flags, env.to_vec(), claude);
    let rule_env = toolbelt_policy::rules::RuleEnv { home: loc.home.clone(), cwd: loc.cwd.clone() };
    let (_, resolved) = Settings::resolve(&loaded, loc, &rule_env);
    let mut out: Vec<Problem> = Vec::new();
    for problem in loaded.problems.into_iter().chain(loaded.ignored_problems).chain(resolved) {
        if trust::is_project_layer(problem.origin.layer) && !out.contains(&problem) {
            out.push(problem);
        }
    }
    out
}

/// Where the trust decision comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Assume {
    /// The trust store.
    Store,
    /// The project is trusted, loosening settings included.
    Trusted,
}

fn load_as(
    loc: &Locations,
    flags: Vec<Entry>,
    env: impl IntoIterator<Item = (String, String)>,
    claude_flag: bool,
    assume: Assume,
) -> Loaded {
    let mut loaded = Loaded::default();
    read_files(&mut loaded, loc.files(false));
    loaded.entries.extend(env::entries(env, &mut loaded.problems));
    loaded.entries.extend(flags);
    let wants_claude = claude_flag || resolve::last_bool(&loaded.entries, Key::COMPAT_CLAUDE).unwrap_or(false);
    // Claude Code's files are always read: their deny and ask rules only make the policy
    // stricter and apply in any case; the rest (allow rules, mode, hooks) waits for the opt-in.
    let claude = loc.files(true).into_iter().filter(|(layer, _)| layer.is_claude());
    read_files(&mut loaded, claude);
    if !wants_claude {
        keep_claude_restrictions(&mut loaded);
    }
    plugins::load(&mut loaded, loc);
    // Every layer in precedence order; within a layer, file order (the sort is stable).
    loaded.entries.sort_by_key(|e| e.origin.layer);
    loaded.files_read.sort_by_key(|(layer, _)| *layer);
    // Every value is checked, whether it will apply or not.
    let mut problems = Vec::new();
    for entry in &loaded.entries {
        check_entry(entry, &mut problems);
    }
    // A plugin's mistakes leave its part out; they never stop a call.
    let (theirs, ours): (Vec<Problem>, Vec<Problem>) =
        problems.into_iter().partition(|p| matches!(p.origin.layer, Layer::UserPlugin | Layer::ProjectPlugin));
    loaded.plugin_problems.extend(theirs);
    loaded.problems.extend(ours);

    // What a project sets that never applies, trusted or not, goes first: the trust digest
    // and review then cover only what would apply.
    let mut review = Vec::new();
    trust::keep_user_floor(&mut loaded.entries, &mut review);
    agent::keep_user_providers(&mut loaded.entries, &mut review);
    web::keep_user_network(&mut loaded.entries, &mut review);
    remote::keep_user_endpoints(&mut loaded.entries, &mut review);
    model_access::keep_user_opt_in(&mut loaded.entries, &mut review);
    keep_user_audit(&mut loaded.entries, &mut review);
    keep_user_storage(&mut loaded.entries, &mut review);
    plugins::keep_user_disabled(&mut loaded.entries, &mut review);

    loaded.pending = trust::Pending::of(&loaded.entries, &loc.project);
    loaded.trust = match assume {
        // Only once something waits for trust is the store read (on a team, a query).
        Assume::Store if loaded.pending.is_empty() => Trust::NotNeeded,
        Assume::Store => {
            let storage = super::resolve::storage_of(&loaded.entries, loc);
            Trust::decide(&loaded.pending, &loc.project, &TrustStore::of(loc, storage.as_ref()))
        }
        Assume::Trusted if loaded.pending.is_empty() => Trust::NotNeeded,
        Assume::Trusted => Trust::Trusted { loosening: true },
    };
    match &loaded.trust {
        Trust::Untrusted { .. } => {
            loaded.entries.retain(|e| !trust::is_project_layer(e.origin.layer) || trust::only_restricts(e));
            loaded.files_read.retain(|(layer, _)| !trust::is_project_layer(*layer));
        }
        Trust::Trusted { loosening: false } if !loaded.pending.loosening.is_empty() => {
            loaded.entries.retain(|e| !trust::is_project_layer(e.origin.layer) || loosening::reason(e).is_none());
            loaded.notices.push(format!(
                "{} setting(s) of this project that loosen the policy are not applied ({}): it was trusted \
                 without them; review them with `toolbelt trust --show` and apply them with `toolbelt trust \
                 --allow-loosening`",
                loaded.pending.loosening.len(),
                loaded.pending.loosening_gist()
            ));
            loaded.notices.extend(review.iter().cloned());
        }
        Trust::Trusted { .. } | Trust::NotNeeded => loaded.notices.extend(review.iter().cloned()),
    }
    plugins::keep_enabled(&mut loaded);
    loaded.review_notes = review;
    let problems = std::mem::take(&mut loaded.problems);
    loaded.problems = loaded.keep_fatal(problems);
    // Read speculatively for the digest: Claude Code's files apply only if a trusted layer
    // still asks for them.
    if wants_claude && !claude_flag && !resolve::last_bool(&loaded.entries, Key::COMPAT_CLAUDE).unwrap_or(false) {
        keep_claude_restrictions(&mut loaded);
    }
    loaded.claude_note = claude_note(&loaded, wants_claude);
    loaded
}

/// The audit log is the user's evidence: a project's files cannot switch it off, move it or
/// make it rotate away.
fn keep_user_audit(entries: &mut Vec<Entry>, notices: &mut Vec<String>) {
    entries.retain(|e| {
        let project_audit = trust::is_project_layer(e.origin.layer) && Key::AUDIT_PATH.shares_section(&e.key);
        if project_audit {
            notices.push(format!(
                "{} in {} is ignored: the audit log is set up by the user (user or managed settings, \
                 TOOLBELT_AUDIT__* variables, --audit), never by a project",
                e.key, e.origin
            ));
        }
        !project_audit
    });
}

/// Drops `storage.*` and `mcp.advertise_url` from a project's files, saying so: where the
/// team's shared data lives (and with which password) and where other replicas send this
/// one's sessions (with their clients' tokens) are the user's to say; a repository naming a
/// database would read and write its task lists there.
fn keep_user_storage(entries: &mut Vec<Entry>, notices: &mut Vec<String>) {
    entries.retain(|e| {
        let team = Key::STORAGE_URL.shares_section(&e.key) || e.key == Key::MCP_ADVERTISE_URL;
        let project_storage = trust::is_project_layer(e.origin.layer) && team;
        if project_storage {
            let what = if e.key == Key::MCP_ADVERTISE_URL {
                "where other replicas reach this one is set up by the user (user or managed settings, \
                 TOOLBELT_MCP__ADVERTISE_URL)"
            } else {
                "shared storage is set up by the user (user or managed settings, TOOLBELT_STORAGE__* variables)"
            };
            notices.push(format!("{} in {} is ignored: {what}, never by a project", e.key, e.origin));
        }
        !project_storage
    });
}

/// Without Claude compatibility, keeps only the entries of Claude Code's files that restrict
/// (deny and ask rules), and only the problems that stop one of those from applying.
fn keep_claude_restrictions(loaded: &mut Loaded) {
    let before = loaded.entries.len();
    loaded.entries.retain(|e| !e.origin.layer.is_claude() || trust::only_restricts(e));
    loaded.claude_skipped += before - loaded.entries.len();
    let keep = |p: &Problem| {
        !p.origin.layer.is_claude()
            || p.key.is_empty()
            || matches!(Key::parse(&p.key), Some(Key::PERMISSIONS_DENY | Key::PERMISSIONS_ASK))
    };
    loaded.problems.retain(keep);
    loaded.ignored_problems.retain(keep);
}

/// What Claude Code's files contributed, to tell the user; `None` when none was found.
fn claude_note(loaded: &Loaded, wanted: bool) -> Option<String> {
    let mut files: Vec<String> = Vec::new();
    let read = loaded.files_read.iter().filter(|(layer, _)| layer.is_claude()).map(|(_, file)| file.as_path());
    let named = loaded.entries.iter().filter(|e| e.origin.layer.is_claude()).filter_map(|e| e.origin.file.as_deref());
    for file in read.chain(named) {
        let file = file.display().to_string();
        if !files.contains(&file) {
            files.push(file);
        }
    }
    if files.is_empty() || wanted && loaded.claude_skipped == 0 {
        return None;
    }
    let count = |key: Key| loaded.entries.iter().filter(|e| e.origin.layer.is_claude() && e.key == key).count();
    let mut note = format!(
        "Claude Code's settings ({}): {} deny and {} ask rule(s) applied",
        files.join(", "),
        count(Key::PERMISSIONS_DENY),
        count(Key::PERMISSIONS_ASK)
    );
    if loaded.claude_skipped > 0 {
        note.push_str(&format!(
            "; {} other setting(s) (allow rules, mode, hooks…) not applied: pass --claude-settings or set \
             [compat] claude = true to use them",
            loaded.claude_skipped
        ));
    }
    Some(note)
}

fn read_files(loaded: &mut Loaded, files: impl IntoIterator<Item = (Layer, PathBuf)>) {
    for (layer, file) in files {
        let text = match std::fs::read_to_string(&file) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => {
                loaded.problems.push(Problem {
                    origin: Origin::file(layer, &file, None),
                    key: String::new(),
                    message: format!("cannot be read: {e}"),
                });
                continue;
            }
        };
        loaded.files_read.push((layer, file.clone()));
        let before = loaded.entries.len();
        if layer == Layer::Grants {
            store::grant_entries(&file, &text, &mut loaded.entries, &mut loaded.problems);
            continue;
        }
        if file.file_name().is_some_and(|n| n == ".mcp.json") {
            claude::mcp_json_entries(layer, &file, &text, &mut loaded.entries, &mut loaded.problems);
        } else if layer.is_claude() {
            claude::entries(layer, &file, &text, &mut loaded.entries, &mut loaded.problems);
        } else {
            toml_file::entries(layer, &file, &text, &mut loaded.entries, &mut loaded.problems);
        }
        debug_assert!(loaded.entries[before..].iter().all(|e| e.origin.layer == layer));
    }
}

/// Checks an entry against its key's type (unknown keys were reported when read).
fn check_entry(entry: &Entry, problems: &mut Vec<Problem>) {
    let Some(def) = schema::find(&entry.key) else { return };
    if let Err(e) = schema::check(def, &entry.value) {
        problems.push(Problem { origin: entry.origin.clone(), key: entry.key.clone(), message: e.to_string() });
    }
}
