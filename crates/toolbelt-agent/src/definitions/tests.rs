//! Parsing definition files: the shapes real files take, and every error with its line.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod discovery;
mod files;
mod tool_sets;

use std::path::PathBuf;

use toolbelt_policy::PermissionMode;

use super::*;

fn source() -> DefinitionSource {
    DefinitionSource::File { path: PathBuf::from("/p/.claude/agents/x.md"), scope: Scope::Project }
}

fn parse(text: &str) -> Result<Parsed, DefinitionError> {
    AgentDefinition::parse(text, "from-file", source())
}

fn ok(text: &str) -> Parsed {
    parse(text).unwrap_or_else(|e| panic!("{e} (line {:?})", e.line()))
}

fn err(text: &str) -> DefinitionError {
    parse(text).expect_err("the file should not parse")
}

#[test]
fn every_key_is_read() {
    let parsed = ok("---
name: reviewer
description: Reviews a change for bugs.
tools: Read, Grep, Glob
disallowedTools: Write, Edit
model: opus
permissionMode: acceptEdits
maxTurns: 25
color: purple
---

You review code.

Be brief.
");
    let def = parsed.definition;
    assert_eq!(def.name, "reviewer");
    assert_eq!(def.description, "Reviews a change for bugs.");
    assert_eq!(def.tools, Some(vec!["Read".to_string(), "Grep".into(), "Glob".into()]));
    assert_eq!(def.disallowed_tools, vec!["Write".to_string(), "Edit".into()]);
    assert_eq!(def.model.as_deref(), Some("opus"));
    assert_eq!(def.permission_mode, Some(PermissionMode::AcceptEdits));
    assert_eq!(def.max_turns, Some(25));
    assert_eq!(def.system_prompt, "You review code.\n\nBe brief.");
    assert_eq!(def.source, source());
    assert_eq!(def.lines, KeyLines { tools: Some(4), disallowed_tools: Some(5) });
    assert!(parsed.warnings.is_empty(), "{:?}", parsed.warnings);
}

/// The shape generated definitions have: one long unquoted line standing for many, with `\n`
/// escapes, `<example>` blocks and `Context:`/`user:` labels that strict YAML reads as keys.
#[test]
fn a_generated_one_line_description_with_examples_is_read_as_text_with_a_warning() {
    let text = "---
name: api-docs-writer
description: Use this agent when an endpoint was added or changed and its docs must follow. Examples:\\n\\n<example>\\nContext: The user added a route.\\nuser: \"I added GET /orders/{id}\"\\nassistant: \"I'll use the api-docs-writer agent to document it.\"\\n<commentary>A new route needs docs.</commentary>\\n</example>
model: sonnet
color: green
---
You write API reference pages.
";
    let parsed = ok(text);
    let def = &parsed.definition;
    assert_eq!(def.name, "api-docs-writer");
    assert!(def.description.starts_with("Use this agent when an endpoint was added or changed"));
    assert!(
        def.description.contains("\n<example>\nContext: The user added a route.\nuser: \"I added GET /orders/{id}\"")
    );
    assert!(!def.description.contains("\\n"), "the escapes stand for line breaks");
    assert_eq!(
        def.summary(200),
        "Use this agent when an endpoint was added or changed and its docs must follow. Examples:"
    );
    assert_eq!(def.model.as_deref(), Some("sonnet"));
    assert_eq!(parsed.warnings.len(), 1);
    let w = &parsed.warnings[0];
    assert_eq!(w.line, Some(3));
    assert!(w.message.contains("`description` has `: ` in it"), "{}", w.message);
    assert!(w.message.contains("Quote it"), "{}", w.message);
}

#[test]
fn a_colon_value_continued_on_indented_lines_is_joined_and_later_lines_keep_their_numbers() {
    let text = "---
description: Checks migrations. Note: it never
  runs them against production.
tools: [Read, Bogus: x]
---
";
    // Quoting fixes the description; the tools line has a mistake of its own, still
    // reported on its line.
    let e = err(text);
    assert_eq!(e.line(), Some(4), "{e}");
    assert!(e.to_string().contains("`tools` must be tool names"), "{e}");

    let parsed =
        ok("---\ndescription: Checks migrations. Note: it never\n  runs them against production.\nmaxTurns: 3\n---\n");
    assert_eq!(parsed.definition.description, "Checks migrations. Note: it never runs them against production.");
    assert_eq!(parsed.definition.max_turns, Some(3));
    assert_eq!(parsed.warnings[0].line, Some(2));
}

#[test]
fn quoted_and_block_scalars() {
    let double = ok("---\nname: \"triage\"\ndescription: \"Sorts issues.\\nUse it: when many come in.\"\n---\n");
    assert_eq!(double.definition.description, "Sorts issues.\nUse it: when many come in.");
    assert!(double.warnings.is_empty());

    let single = ok("---\nname: 'it''s'\ndescription: 'Reads logs: fast.\\nOne line.'\n---\n");
    assert_eq!(single.definition.name, "it's");
    assert_eq!(single.definition.description, "Reads logs: fast.\nOne line.");

    let literal = ok("---
name: planner
description: |
  Plans a change before it is made.

  <example>
  user: \"plan the migration\"
  assistant: \"I'll use the planner agent.\"
  </example>
tools:
  - Read
  - Grep
---
Plan.
");
    let def = literal.definition;
    assert!(
        def.description.starts_with("Plans a change before it is made.\n\n<example>\nuser: \"plan the migration\"")
    );
    assert!(def.description.ends_with("</example>"));
    assert_eq!(def.tools, Some(vec!["Read".to_string(), "Grep".into()]));
    assert_eq!(def.lines.tools, Some(10));

    let folded = ok("---\nname: f\ndescription: >-\n  One long\n  sentence.\n---\n");
    assert_eq!(folded.definition.description, "One long sentence.");
}

#[test]
fn tool_lists_in_every_spelling() {
    let def = |tools: &str| ok(&format!("---\nname: t\ndescription: d\ntools: {tools}\n---\n")).definition.tools;
    assert_eq!(def("Read,Grep ,  Glob"), Some(vec!["Read".to_string(), "Grep".into(), "Glob".into()]));
    assert_eq!(def("[Read, Grep]"), Some(vec!["Read".to_string(), "Grep".into()]));
    assert_eq!(def("Read Grep"), Some(vec!["Read".to_string(), "Grep".into()]));
    assert_eq!(
        def("Read, Bash(git add *, git commit *), mcp__github__create_issue"),
        Some(vec!["Read".to_string(), "Bash(git add *, git commit *)".into(), "mcp__github__create_issue".into()])
    );
    assert_eq!(def("\"*\""), Some(vec!["*".to_string()]));
    assert_eq!(def(""), None, "an empty value means every tool");
    let empty = ok("---\nname: t\ndescription: d\ntools: []\n---\n");
    assert_eq!(empty.definition.tools, Some(vec![]));
    assert!(empty.warnings[0].message.contains("empty list"), "{:?}", empty.warnings);
    let snake =
        ok("---\nname: t\ndescription: d\ndisallowed_tools:\n  - Write\nmax-turns: 4\npermission_mode: plan\n---\n");
    assert_eq!(snake.definition.disallowed_tools, vec!["Write".to_string()]);
    assert_eq!(snake.definition.max_turns, Some(4));
    assert_eq!(snake.definition.permission_mode, Some(PermissionMode::Plan));
}

#[test]
fn defaults_and_ignored_keys() {
    let parsed = ok("---
description: No name here.
model: inherit
maxTurns: \"7\"
skills: [a, b]
hooks:
  PreToolUse:
    - matcher: Bash
      hooks: [{type: command, command: echo}]
memory: project
shared: &s {a: 1}
again: *s
---
");
    let def = parsed.definition;
    assert_eq!(def.name, "from-file", "a definition without a name takes its file's");
    assert_eq!(def.model, None, "`inherit` means none");
    assert_eq!(def.max_turns, Some(7));
    assert_eq!(def.tools, None);
    assert_eq!(def.system_prompt, "", "an empty body is fine");
    assert!(parsed.warnings.is_empty(), "{:?}", parsed.warnings);
}

#[test]
fn crlf_a_byte_order_mark_and_a_missing_description() {
    let parsed = ok("\u{feff}---\r\nname: win\r\ntools: Read\r\n---\r\nLine one.\r\nLine two.\r\n");
    assert_eq!(parsed.definition.name, "win");
    assert_eq!(parsed.definition.system_prompt, "Line one.\nLine two.");
    assert_eq!(parsed.warnings.len(), 1);
    assert!(parsed.warnings[0].message.contains("no `description`"), "{:?}", parsed.warnings);
    let empty = ok("---\n---\n");
    assert_eq!(empty.definition.name, "from-file");
}

#[test]
fn errors_say_where_and_what_to_do() {
    let cases: [(&str, Option<usize>, &str); 14] = [
        ("Just a prompt.\n", Some(1), "has no frontmatter"),
        ("---\nname: x\nno end\n", Some(1), "never closed"),
        ("---\nname: x\ntools: [Read\n---\n", Some(4), "not valid YAML"),
        ("---\n- a\n- b\n---\n", Some(2), "must be keys and values"),
        ("---\nname: a\ndescription: d\nname: b\n---\n", Some(4), "`name` is given twice (first on line 2)"),
        ("---\nname: a\nmaxTurns: 3\nmax_turns: 4\n---\n", Some(4), "`max_turns` is given twice (first on line 3)"),
        ("---\nname: a\ntools:\n  Read: yes\n---\n", Some(3), "`tools` must be tool names"),
        ("---\nname: a\ndescription: [a, b]\n---\n", Some(3), "`description` must be text, not a list"),
        ("---\nname: a\npermissionMode: yolo\n---\n", Some(3), "use one of default, acceptEdits, plan"),
        ("---\nname: a\nmaxTurns: ten\n---\n", Some(3), "whole number of model turns"),
        ("---\nname: a\nmaxTurns: 0\n---\n", Some(3), "whole number of model turns"),
        ("---\nname: \"a\\tb\"\n---\n", Some(2), "no control characters"),
        ("---\nx: &d text\ndescription: *d\n---\n", Some(3), "`description` must be text, not an alias"),
        ("---\nname: a\ntools: [[Read]]\n---\n", Some(3), "not a list of lists or mappings"),
    ];
    for (text, line, wanted) in cases {
        let e = err(text);
        assert_eq!(e.line(), line, "{text:?}: {e}");
        assert!(e.to_string().contains(wanted), "{text:?}: {e}");
    }
}

/// A description running over unindented lines — as some shipped plugin agents have it, and
/// which strict YAML cannot read — is taken whole up to the next key, with a warning.
#[test]
fn a_description_running_over_unindented_lines_is_taken_whole() {
    let parsed = ok("---
name: coordinator
description: Use this agent when a release is due. Examples:

<example>
Context: a release is due
user: \"ship it\"
assistant: \"I'll use the coordinator agent.\"
</example>
model: sonnet
tools: [\"Read\", \"Bash\"]
---
Coordinate.
");
    let def = &parsed.definition;
    assert_eq!(
        def.description,
        "Use this agent when a release is due. Examples:\n\n<example>\nContext: a release is due\nuser: \"ship it\"\n\
         assistant: \"I'll use the coordinator agent.\"\n</example>"
    );
    assert_eq!(def.model.as_deref(), Some("sonnet"));
    assert_eq!(def.tools, Some(vec!["Read".to_string(), "Bash".into()]));
    assert_eq!(def.lines.tools, Some(11), "later keys keep their lines");
    assert_eq!(parsed.warnings.len(), 1, "{:?}", parsed.warnings);
    assert_eq!(parsed.warnings[0].line, Some(3));
    assert!(
        parsed.warnings[0].message.contains("runs on over lines 4–9 without indenting them"),
        "{:?}",
        parsed.warnings
    );
}

#[test]
fn a_colon_description_before_another_tools_key_is_quoted_not_run_on() {
    let parsed = ok("---\nname: n\ndescription: Use it for: logs\ntype: standard\nmodel: haiku\n---\n");
    assert_eq!(parsed.definition.description, "Use it for: logs");
    assert_eq!(parsed.definition.model.as_deref(), Some("haiku"));
    assert!(parsed.warnings[0].message.contains("has `: ` in it"), "{:?}", parsed.warnings);
}

/// When no second reading helps, the YAML's own error stands, with how to write the value.
#[test]
fn an_unreadable_run_on_description_is_an_error_with_the_fix() {
    let e = err("---
name: coordinator
description: Coordinates the release work.
<example>
user: \"ship it\"
</example>
tools: [Read
---
");
    assert_eq!(e.line(), Some(5), "{e}");
    let message = e.to_string();
    assert!(message.contains("not valid YAML"), "{message}");
    assert!(message.contains("needs those lines indented"), "{message}");
}

#[test]
fn the_builtins_are_what_they_promise() {
    let catalog = Catalog::builtin();
    assert_eq!(catalog.names(), vec![GENERAL_PURPOSE, EXPLORE]);
    let gp = catalog.get("general-purpose").unwrap();
    assert_eq!(gp.tools, None);
    assert_eq!(gp.disallowed_tools, AGENT_TOOLS.map(String::from).to_vec());
    assert!(gp.system_prompt.contains("Your final message is your report"));
    let explore = catalog.get("explore").expect("found ignoring case");
    assert_eq!(explore.name, "Explore");
    assert_eq!(explore.permission_mode, Some(PermissionMode::Plan));
    assert_eq!(explore.tools.as_deref().unwrap(), ["Read", "Glob", "Grep", "ListDir", "Bash"]);
    assert!(explore.system_prompt.contains("read-only"));
    for def in &catalog.definitions {
        assert!(def.is_builtin());
        assert!(def.summary(60).chars().count() <= 60, "{}", def.summary(60));
    }
}

#[test]
fn summary_and_problem_display() {
    let mut def = Catalog::builtin().definitions.remove(0);
    def.description = "\n  First line here.\nSecond.".into();
    assert_eq!(def.summary(100), "First line here.");
    assert_eq!(def.summary(10), "First lin…");
    let p = Problem::error("/a/b.md", Some(3), "bad");
    assert_eq!(p.to_string(), "/a/b.md:3: bad");
    let w = Problem::warning("/a/b.md", None, "odd");
    assert_eq!(w.to_string(), "/a/b.md: warning: odd");
}
