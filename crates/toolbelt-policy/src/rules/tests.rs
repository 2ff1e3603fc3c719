//! Rule syntax: what parses, what does not and why, and which tools a rule names.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::json;
use toolbelt_core::{Access, ToolSpec};

use super::*;

fn env() -> RuleEnv {
    RuleEnv { home: PathBuf::from("/home/ann"), cwd: PathBuf::from("/work/app") }
}

fn parse(text: &str) -> Result<Rule, RuleError> {
    Rule::parse(text, Arc::new(RuleOrigin::new("test", "/work/app")), &env())
}

#[test]
fn claude_codes_documented_rules_parse() {
    for rule in [
        "Bash",
        "Bash(npm run build)",
        "Bash(npm run test *)",
        "Bash(npm run test:*)",
        "Bash(git diff *)",
        "Bash(* --version)",
        "Read",
        "Read(./.env)",
        "Read(./secrets/**)",
        "Read(~/Documents/*.pdf)",
        "Read(//Users/alice/secrets/**)",
        "Edit(/src/**/*.ts)",
        "Edit(docs/**)",
        "Write(*.lock)",
        "WebFetch",
        "WebFetch(domain:example.com)",
        "WebFetch(domain:*.github.com)",
        "mcp__puppeteer",
        "mcp__puppeteer__*",
        "mcp__puppeteer__puppeteer_navigate",
        "Agent(Explore)",
        "  Bash(ls *)  ",
    ] {
        let parsed = parse(rule).unwrap_or_else(|e| panic!("{rule}: {e}"));
        assert_eq!(parsed.text(), rule.trim());
    }
}

#[test]
fn bad_rules_say_what_to_write() {
    let cases = [
        ("", "the tool name is missing"),
        ("Bash(", "must end with `)`"),
        ("Bash(ls", "must end with `)`"),
        ("(ls)", "the tool name is missing"),
        ("Ba sh", "is not a tool name"),
        ("Bash*", "wildcards in tool names work only as `mcp__server__*`"),
        ("mcp__", "`mcp__<server>`"),
        ("mcp__srv__a*", "names one tool"),
        ("mcp__srv(x)", "take no specifier"),
        ("WebFetch(example.com)", "`WebFetch(domain:example.com)`"),
        ("WebFetch(domain:)", "is not a domain"),
        ("Agent()", "empty specifier"),
    ];
    for (rule, expected) in cases {
        let err = parse(rule).err().unwrap_or_else(|| panic!("`{rule}` should not parse"));
        assert!(err.to_string().contains(expected), "`{rule}`: {err}");
        assert!(err.to_string().starts_with(&format!("invalid rule `{rule}`")), "{err}");
    }
}

#[test]
fn which_tools_a_rule_names() {
    let bash = ToolSpec::new("Bash", "d").aliases(["exec", "shell_exec"]);
    let search = ToolSpec::new("mcp__github__search", "d");
    let other = ToolSpec::new("mcp__githubx__search", "d");
    let names = |rule: &str, tool: &ToolSpec| parse(rule).unwrap().names_tool(tool);
    assert!(names("Bash", &bash) && names("exec", &bash) && names("Bash(ls *)", &bash));
    assert!(!names("bash", &bash), "tool names are case-sensitive, as in Claude Code");
    // A tool whose commands are bash is named by Bash's rules, and by its own.
    let monitor = ToolSpec::new("Monitor", "d").bash_rules();
    assert!(names("Bash", &monitor) && names("Bash(curl *)", &monitor) && names("Monitor(tail *)", &monitor));
    assert!(names("exec", &monitor) && !names("Monitor", &bash), "Bash's other names reach it too");
    assert!(!names("Bash", &ToolSpec::new("PowerShell", "d")), "Bash's rules mean nothing to PowerShell");
    for rule in ["mcp__github", "mcp__github__*", "mcp__github__search"] {
        assert!(names(rule, &search), "{rule}");
        assert!(!names(rule, &other), "{rule} must not reach another server");
    }
    assert!(parse("Bash").unwrap().is_bare() && !parse("Bash(ls)").unwrap().is_bare());
}

#[test]
fn parts_of_a_call() {
    let access = Access::exclusive()
        .executes("timeout 5 cargo test && git status")
        .reads("/work/app/./src/../Cargo.toml")
        .contacts("https://docs.rs")
        .changes_state("todos");
    let parts = parts_of(&access);
    assert_eq!(parts[0], Part::Command("cargo test".into()));
    assert_eq!(parts[1], Part::Command("git status".into()));
    assert!(matches!(&parts[2], Part::Read { given, .. } if given == &PathBuf::from("/work/app/Cargo.toml")));
    assert_eq!(parts[3], Part::Url("https://docs.rs".into()));
    assert_eq!(parts.len(), 4, "state changes need no permission");
    assert_eq!(parts_of(&Access::shared()), vec![Part::Call]);
}

#[test]
fn hosts_and_globs() {
    assert_eq!(host_of("https://API.Example.com:8443/x?q=1").as_deref(), Some("api.example.com"));
    assert_eq!(host_of("example.com").as_deref(), Some("example.com"));
    assert_eq!(host_of("/just/a/path"), None);
    assert!(glob_match("Exp*re", "Explore") && glob_match("*", "") && !glob_match("Ex*z", "Explore"));
    let tool = ToolSpec::new("Agent", "d");
    let rule = parse("Agent(Explore)").unwrap();
    assert!(rule.covers(&tool, &json!({"subagent_type": "Explore"}), &Part::Call));
    assert!(!rule.covers(&tool, &json!({"subagent_type": "Plan", "nested": {"x": "Explore"}}), &Part::Call));
}

#[test]
fn an_opaque_call_is_a_command_no_rule_can_read() {
    let typed = Access::exclusive().executes("vim notes.txt");
    assert!(CallParts::of(&typed).opaque.is_empty());
    let parts = CallParts::of(&typed.opaque("keys typed into `vim`"));
    assert_eq!(parts.opaque, vec![("vim notes.txt".to_string(), "keys typed into `vim`".to_string())]);
}
