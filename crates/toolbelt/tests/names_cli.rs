//! Names with one home, through the real binary: `config show` lists every key of the
//! settings schema and one hook key per hook event, a hook group under any event is read from
//! toolbelt's own settings and from Claude Code's, and the output schemas `toolbelt tools`
//! prints list the values of the fields that name one of a few things.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;
use toolbelt::policy::HookEvent;
use toolbelt::settings::schema::{KEYS, Kind};

#[path = "common/hermetic.rs"]
mod hermetic;

struct Project {
    _dir: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
}

impl Project {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let (root, home) = (base.join("project"), base.join("home"));
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(home.join(".config/toolbelt")).unwrap();
        Project { _dir: dir, root, home }
    }

    fn write(&self, path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn run(&self, args: &[&str]) -> Output {
        hermetic::toolbelt_with_home(&self.root, &self.home).args(args).output().unwrap()
    }

    fn show(&self, args: &[&str]) -> serde_json::Map<String, Value> {
        let out = self.run(&[args, &["config", "show", "--json"]].concat());
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let shown: Value = serde_json::from_slice(&out.stdout).unwrap();
        shown.as_object().unwrap().clone()
    }
}

/// One hook group per event, in TOML.
fn hook_groups_toml() -> String {
    HookEvent::ALL
        .iter()
        .map(|e| {
            format!(
                "[[hooks.{}]]\nmatcher = \"*\"\nhooks = [{{ type = \"command\", command = \"true\" }}]\n",
                e.as_str()
            )
        })
        .collect()
}

#[test]
fn config_show_lists_every_key_and_every_hook_event() {
    let p = Project::new();
    let shown = p.show(&[]);
    // Tables (`mcp.servers.*`, `web.search.brave`) show only once configured.
    for def in KEYS.iter().filter(|d| d.kind != Kind::Table) {
        assert!(shown.contains_key(&def.key.to_string()), "{} missing from config show --json", def.key);
    }
    for event in HookEvent::ALL {
        let key = format!("hooks.{}", event.as_str());
        assert_eq!(shown[&key]["value"], Value::Array(Vec::new()), "{key}");
    }
    let out = p.run(&["config", "show"]);
    let text = String::from_utf8_lossy(&out.stdout);
    let hooks = text.split("[hooks]\n").nth(1).unwrap().split("\n\n").next().unwrap();
    let listed: Vec<&str> = hooks.lines().filter_map(|l| l.split(" = ").next()).collect();
    let events: Vec<&str> = HookEvent::ALL.iter().map(|e| e.as_str()).collect();
    assert_eq!(listed, events, "{text}");
}

#[test]
fn a_hook_group_under_every_event_is_read_and_checked() {
    let p = Project::new();
    p.write(&p.home.join(".config/toolbelt/config.toml"), &hook_groups_toml());
    let out = p.run(&["config", "check"]);
    let said = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && !said.contains("unknown key"), "{said}");
    let shown = p.show(&[]);
    for event in HookEvent::ALL {
        let value = &shown[&format!("hooks.{}", event.as_str())]["value"];
        assert_eq!(value.as_array().map(Vec::len), Some(1), "{event:?}: {value}");
    }
}

#[test]
fn claude_code_hooks_of_every_event_are_imported() {
    let p = Project::new();
    let groups: serde_json::Map<String, Value> = HookEvent::ALL
        .iter()
        .map(|e| {
            let group = serde_json::json!([{"matcher": "*", "hooks": [{"type": "command", "command": "true"}]}]);
            (e.as_str().to_string(), group)
        })
        .chain([("UserPromptSubmit".to_string(), serde_json::json!([{"hooks": []}]))])
        .collect();
    let settings = serde_json::json!({ "hooks": groups });
    p.write(&p.home.join(".claude/settings.json"), &settings.to_string());
    let shown = p.show(&["--claude-settings"]);
    for event in HookEvent::ALL {
        let value = &shown[&format!("hooks.{}", event.as_str())]["value"];
        assert_eq!(value.as_array().map(Vec::len), Some(1), "{event:?}: {value}");
    }
    assert!(!shown.contains_key("hooks.UserPromptSubmit"));
}

#[test]
fn tools_output_schemas_list_the_names_a_field_takes() {
    let p = Project::new();
    let modes = ["default", "acceptEdits", "plan", "dontAsk", "bypassPermissions"];
    let cases: [(&str, &str, &[&str]); 7] = [
        ("Lint", "/properties/findings/items/properties/severity", &["error", "warning", "info"]),
        ("Lint", "/properties/linters/items/properties/status", &["ok", "failed", "unavailable"]),
        ("Skill", "/properties/scope", &["project", "user"]),
        ("code_query", "/properties/matches/items/properties/kind", &["function", "class", "variable", "file"]),
        ("code_query", "/properties/matches/items/properties/matched", &["exact", "prefix", "substring", "fuzzy"]),
        ("EnterPlanMode", "/properties/previous_mode", &modes),
        ("ExitPlanMode", "/properties/mode", &modes),
    ];
    for (format, schema_at) in [("json", "/output_schema"), ("mcp", "/outputSchema")] {
        let out = p.run(&["tools", "--format", format]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let tools: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
        for (tool, pointer, values) in cases {
            let spec = tools.iter().find(|t| t["name"] == tool).unwrap_or_else(|| panic!("{format}: no {tool}"));
            let field = spec.pointer(&format!("{schema_at}{pointer}")).unwrap_or_else(|| panic!("{tool}{pointer}"));
            let listed: Vec<&str> =
                field["oneOf"].as_array().unwrap().iter().filter_map(|c| c["const"].as_str()).collect();
            assert_eq!(listed, values, "{format}: {tool}{pointer}");
        }
    }
}
