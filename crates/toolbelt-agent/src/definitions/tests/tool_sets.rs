//! The tools a definition gives its agent.

use super::*;

const AVAILABLE: [&str; 9] = ["Agent", "Bash", "Edit", "Glob", "Grep", "ListDir", "Read", "SendMessage", "Write"];

/// A registry's lookup: canonical names and a few aliases, ignoring case.
fn resolve(name: &str) -> Option<String> {
    let alias = match name.to_ascii_lowercase().as_str() {
        "ls" => "ListDir",
        "task" => "Agent",
        "read_file" => "Read",
        "notebookedit" => "NotebookEdit",
        _ => "",
    };
    if !alias.is_empty() {
        return Some(alias.into());
    }
    AVAILABLE.iter().find(|t| t.eq_ignore_ascii_case(name)).map(|t| (*t).to_string())
}

fn def(front: &str) -> AgentDefinition {
    let text = format!("---\nname: t\ndescription: d\n{front}---\n");
    AgentDefinition::parse(&text, "t", source()).unwrap().definition
}

fn set(front: &str, agent_tools: AgentTools) -> ToolSet {
    def(front).tool_set(&AVAILABLE, resolve, agent_tools)
}

#[test]
fn every_tool_means_every_tool_but_the_agent_tools() {
    let all = set("", AgentTools::AsListed);
    assert_eq!(all.tools, ["Bash", "Edit", "Glob", "Grep", "ListDir", "Read", "Write"]);
    assert!(all.warnings.is_empty());
    assert_eq!(set("tools: \"*\"\n", AgentTools::AsListed).tools, all.tools);
    let gp = Catalog::builtin().definitions.remove(0);
    assert_eq!(gp.tool_set(&AVAILABLE, resolve, AgentTools::AsListed).tools, all.tools);
}

#[test]
fn a_list_keeps_the_available_order_and_resolves_aliases() {
    let s = set("tools: read_file, LS, grep, NotebookEdit\n", AgentTools::AsListed);
    assert_eq!(s.tools, ["Grep", "ListDir", "Read"], "NotebookEdit is a tool, but not available here");
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    let explore = Catalog::builtin().definitions.remove(1);
    let s = explore.tool_set(&AVAILABLE, resolve, AgentTools::AsListed);
    assert_eq!(s.tools, ["Bash", "Glob", "Grep", "ListDir", "Read"]);
}

#[test]
fn agent_tools_only_when_named_and_allowed() {
    let named = "tools: Read, Task, SendMessage\n";
    assert_eq!(set(named, AgentTools::AsListed).tools, ["Agent", "Read", "SendMessage"]);
    assert_eq!(set(named, AgentTools::Withheld).tools, ["Read"]);
    assert_eq!(set("tools: ['*', Agent]\n", AgentTools::AsListed).tools.len(), 8);
}

#[test]
fn disallowed_tools_are_taken_away() {
    assert_eq!(
        set("disallowedTools: Write, Edit, Bash\n", AgentTools::AsListed).tools,
        ["Glob", "Grep", "ListDir", "Read"]
    );
    assert_eq!(set("tools: Read, Write\ndisallowedTools: [write]\n", AgentTools::AsListed).tools, ["Read"]);
    assert!(set("disallowedTools: \"*\"\n", AgentTools::AsListed).tools.is_empty());
}

#[test]
fn unknown_names_and_rules_are_warnings_on_their_lines() {
    let d = def("tools: Read, WebFetch, Bash(git log *)\ndisallowedTools:\n  - Wirte\n");
    let s = d.tool_set(&AVAILABLE, resolve, AgentTools::AsListed);
    assert_eq!(s.tools, ["Bash", "Read"]);
    let messages: Vec<(ToolKey, &str)> = s.warnings.iter().map(|w| (w.key, w.name.as_str())).collect();
    assert_eq!(
        messages,
        vec![(ToolKey::Tools, "WebFetch"), (ToolKey::Tools, "Bash(git log *)"), (ToolKey::DisallowedTools, "Wirte")]
    );
    assert!(s.warnings[0].message.contains("`tools` names `WebFetch`, which is no tool here"));
    assert!(s.warnings[1].message.contains("this means all of `Bash`"), "{}", s.warnings[1].message);
    assert!(s.warnings[2].message.contains("nothing is removed for it"));
    let problems: Vec<String> = d.tool_problems(&s).iter().map(ToString::to_string).collect();
    assert_eq!(problems.len(), 3);
    assert!(problems[0].starts_with("/p/.claude/agents/x.md:4: warning: `tools` names `WebFetch`"), "{problems:?}");
    assert!(problems[2].starts_with("/p/.claude/agents/x.md:5: warning: `disallowedTools` names `Wirte`"));
    assert!(s.contains("Bash") && !s.contains("WebFetch"));
}

#[test]
fn a_builtin_has_no_file_to_report_on() {
    let gp = Catalog::builtin().definitions.remove(0);
    let s = gp.tool_set(&["Read"], |_| None, AgentTools::AsListed);
    assert_eq!(s.warnings.len(), 5, "the agent tools are not in this registry");
    assert!(gp.tool_problems(&s).is_empty());
}
