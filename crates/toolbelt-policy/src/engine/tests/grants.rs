//! Grants for the session and for always, and switching a session to acceptEdits.

use super::*;

/// Records what it was asked to write, and for which workspace.
struct Store(Mutex<Vec<String>>, Mutex<Vec<PathBuf>>);

impl Store {
    fn new() -> Self {
        Store(Mutex::new(Vec::new()), Mutex::new(Vec::new()))
    }
}

impl RuleStore for Store {
    fn add_allow_rules(&self, rules: &[String], workspace: &Path) -> Result<String, crate::RuleStoreError> {
        self.0.lock().unwrap().extend(rules.iter().cloned());
        self.1.lock().unwrap().push(workspace.to_path_buf());
        Ok("project-local test.toml".into())
    }
}

#[test]
fn grants_for_the_session_and_for_always() {
    let w = world();
    let store = Arc::new(Store::new());
    let e = engine(&w, PermissionMode::Default, &[], &[], &[]).with_store(store.clone());
    let spec = tool("Bash", PermissionClass::External);
    let call = |cmd: &str, approval: Option<Approval>| {
        let input = json!({"command": cmd});
        let access = Access::exclusive().executes(cmd);
        let info =
            CallInfo { session: &w.session, call_id: "c", cwd: &w.root, tool: &spec, input: &input, access: &access };
        let v = e.authorize(&info);
        if let Some(a) = approval {
            e.remember(&info, &v, &a);
        }
        v
    };
    // Once: nothing remembered.
    assert_eq!(call("cargo build --release", Some(Approval::AllowOnce)).decision, Ask);
    assert_eq!(call("cargo build", None).decision, Ask);
    // Session: the suggested rule is granted, in the session's state.
    let v = call("cargo build --release", Some(Approval::AllowSession));
    assert_eq!(v.allow_rules, ["Bash(cargo build *)"]);
    let again = call("cargo build", None);
    assert_eq!((again.decision, again.source.to_string().as_str()), (Allow, "session grant `Bash(cargo build *)`"));
    assert_eq!(w.session.with_slot::<Grants, _>(|g| g.rules.clone()), ["Bash(cargo build *)"]);
    assert!(store.0.lock().unwrap().is_empty());
    // Always: written to the store, and effective in any session of this engine.
    call("npm install", Some(Approval::AllowAlways));
    assert_eq!(store.0.lock().unwrap().as_slice(), ["Bash(npm install *)"]);
    let fresh = SessionState::new("other", w.root.clone(), vec![w.root.clone()]);
    let input = json!({"command": "npm install left-pad"});
    let access = Access::exclusive().executes("npm install left-pad");
    let info = CallInfo { session: &fresh, call_id: "c", cwd: &w.root, tool: &spec, input: &input, access: &access };
    let v = e.authorize(&info);
    assert_eq!(
        (v.decision, v.source.to_string().as_str()),
        (Allow, "rule `Bash(npm install *)` (project-local test.toml)")
    );
    assert_eq!(*store.1.lock().unwrap(), vec![w.root.clone()]);
}

#[test]
fn a_session_elsewhere_gets_rules_anchored_at_its_own_root() {
    // The engine's settings were read in `root`; an MCP session's client works in `outside`.
    let w = world();
    let store = Arc::new(Store::new());
    let e = engine(&w, PermissionMode::Default, &[], &[], &[]).with_store(store.clone());
    let session = SessionState::new("mcp", w.outside.clone(), vec![w.outside.clone()]);
    let spec = tool("Write", PermissionClass::Write);
    let target = w.outside.join("notes.txt");
    let input = json!({"file_path": target});
    let access = Access::exclusive().writes(&target);
    let info =
        CallInfo { session: &session, call_id: "c", cwd: &w.outside, tool: &spec, input: &input, access: &access };
    let v = e.authorize(&info);
    assert_eq!((v.decision, v.allow_rules.as_slice()), (Ask, ["Edit(./notes.txt)".to_string()].as_slice()));
    // For the session: the grant means that file, read from the session's root.
    e.remember(&info, &v, &Approval::AllowSession);
    assert_eq!(e.authorize(&info).decision, Allow);
    // Always: written for the session's workspace, and it means the same file.
    e.remember(&info, &v, &Approval::AllowAlways);
    assert_eq!(*store.1.lock().unwrap(), vec![w.outside.clone()]);
    let fresh = SessionState::new("mcp2", w.outside.clone(), vec![w.outside.clone()]);
    let info = CallInfo { session: &fresh, call_id: "c", cwd: &w.outside, tool: &spec, input: &input, access: &access };
    assert_eq!(e.authorize(&info).decision, Allow);
    // A session in the engine's own root is not allowed `root/notes.txt` by it.
    let mine = w.root.join("notes.txt");
    assert_eq!(write(&e, &w, &mine).decision, Ask);
}

#[test]
fn a_hidden_tool_is_denied_naming_its_rule() {
    let w = world();
    let e = engine(&w, PermissionMode::Default, &[], &[], &["Bash", "Read(./.env)"]);
    let hidden = e.hidden(&tool("Bash", PermissionClass::External)).unwrap();
    assert_eq!(hidden.decision, Deny);
    assert!(
        hidden.reason.starts_with("`Bash` is denied by the rule `Bash` (project .toolbelt/config.toml)"),
        "{}",
        hidden.reason
    );
    assert_eq!(hidden.source, "rule `Bash` (project .toolbelt/config.toml)");
    assert!(e.hidden(&tool("Read", PermissionClass::Read)).is_none(), "a rule with a specifier hides nothing");
}

#[test]
fn allowing_all_edits_switches_only_this_session_to_accept_edits() {
    let w = world();
    let e = engine(&w, PermissionMode::Default, &[], &[], &[]);
    let inside = w.root.join("src/main.rs");
    let spec = tool("Write", PermissionClass::Write);
    let first = write(&e, &w, &inside);
    assert_eq!(first.decision, Ask);
    assert!(first.offers_accept_edits, "an edit inside the roots offers the switch");
    // Neither a command, a write outside the roots nor a protected path offers it.
    assert!(!bash(&e, &w, "cargo build").offers_accept_edits);
    assert!(!write(&e, &w, &w.outside.join("notes.txt")).offers_accept_edits);
    assert!(!write(&e, &w, &w.root.join(".git/config")).offers_accept_edits);

    let input = json!({"file_path": inside});
    let access = Access::exclusive().writes(&inside);
    let info =
        CallInfo { session: &w.session, call_id: "c", cwd: &w.root, tool: &spec, input: &input, access: &access };
    e.remember(&info, &first, &Approval::AcceptEditsForSession);
    assert_eq!(SessionMode::of(&w.session, PermissionMode::Default), PermissionMode::AcceptEdits);

    let later = write(&e, &w, &w.root.join("docs/new.md"));
    assert_eq!((later.decision, later.source.to_string().as_str()), (Allow, "mode acceptEdits"));
    assert!(!later.offers_accept_edits);
    assert_eq!(bash(&e, &w, "cargo build").decision, Ask, "commands still ask");
    assert_eq!(write(&e, &w, &w.outside.join("notes.txt")).decision, Ask, "outside the roots still asks");
    assert_eq!(write(&e, &w, &w.root.join(".git/config")).decision, Ask, "protected paths still ask");
    // The switch lives in the session's state: another session is untouched.
    let fresh = SessionState::new("other", w.root.clone(), vec![w.root.clone()]);
    let input = json!({"file_path": inside});
    let info = CallInfo { session: &fresh, call_id: "c", cwd: &w.root, tool: &spec, input: &input, access: &access };
    assert_eq!(e.authorize(&info).decision, Ask);
    let saved = w.session.save();
    assert_eq!(saved["slots"]["permission_mode"]["mode"], "acceptEdits", "{saved}");
}

#[test]
fn allowing_all_edits_never_loosens_plan_mode() {
    let w = world();
    let e = engine(&w, PermissionMode::Plan, &[], &[], &[]);
    let inside = w.root.join("src/main.rs");
    let v = write(&e, &w, &inside);
    assert_eq!(v.decision, Deny);
    assert!(!v.offers_accept_edits);
    let spec = tool("Write", PermissionClass::Write);
    let input = json!({"file_path": inside});
    let access = Access::exclusive().writes(&inside);
    let info =
        CallInfo { session: &w.session, call_id: "c", cwd: &w.root, tool: &spec, input: &input, access: &access };
    e.remember(&info, &v, &Approval::AcceptEditsForSession);
    assert_eq!(write(&e, &w, &inside).decision, Deny);
}

#[test]
fn tools_switch_modes_only_within_what_the_settings_allow() {
    use PermissionMode::*;
    let mode = |e: &PermissionEngine, w: &World| Authorizer::mode(e, &w.session).unwrap();
    // From default: into plan and back, to acceptEdits, never to bypass or dontAsk.
    let w = world();
    let e = engine(&w, Default, &[], &[], &[]);
    e.switch_mode(&w.session, Plan).unwrap();
    assert_eq!(mode(&e, &w), Plan);
    assert_eq!(write(&e, &w, &w.root.join("src/a.rs")).decision, Deny);
    e.switch_mode(&w.session, AcceptEdits).unwrap();
    assert_eq!(mode(&e, &w), AcceptEdits);
    let err = e.switch_mode(&w.session, BypassPermissions).unwrap_err();
    assert!(err.contains("only the user can change that"), "{err}");
    assert!(e.switch_mode(&w.session, DontAsk).is_err());
    assert_eq!(mode(&e, &w), AcceptEdits, "a refused switch changes nothing");
    // Settings in plan mode: a session may re-enter plan, never leave it.
    let w = world();
    let e = engine(&w, Plan, &[], &[], &[]);
    for m in [Default, AcceptEdits, BypassPermissions, DontAsk] {
        assert!(e.switch_mode(&w.session, m).is_err(), "{m:?}");
    }
    e.switch_mode(&w.session, Plan).unwrap();
    // Settings in bypass mode: plan mode and back are fine.
    let w = world();
    let e = engine(&w, BypassPermissions, &[], &[], &[]);
    e.switch_mode(&w.session, Plan).unwrap();
    e.switch_mode(&w.session, BypassPermissions).unwrap();
    assert!(e.switch_mode(&w.session, AcceptEdits).is_err());
}
