//! `ToolSearch` and deferred tools through a real runtime: which tools a session is shown,
//! the automatic threshold for upstream-style tools, `select:`, keyword ranking, `+word`,
//! loading into the session, and calling a deferred tool before it was loaded.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use serde_json::{Value, json};
use toolbelt_core::{
    Access, BoxFuture, Category, Defer, DynTool, EventSink, Prepared, Registry, ToolContext, ToolError, ToolOutput,
    ToolSpec,
};
use toolbelt_runtime::{Runtime, Session, ToolCall, ToolResult};

/// A tool shaped like an upstream MCP server's: its own schema, deferred by the threshold.
struct Remote {
    spec: ToolSpec,
}

impl Remote {
    fn tool(name: &str, description: &str, params: &[&str], defer: Defer) -> Arc<dyn DynTool> {
        let properties: serde_json::Map<String, Value> =
            params.iter().map(|p| ((*p).to_string(), json!({"type": "string"}))).collect();
        let spec = ToolSpec::new(name, description)
            .category(Category::Mcp)
            .defer(defer)
            .read_only()
            .input_schema(json!({"type": "object", "properties": properties}));
        Arc::new(Remote { spec })
    }
}

impl DynTool for Remote {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn prepare(&self, input: Value) -> Result<Prepared, ToolError> {
        Ok(Prepared::new(input, ()))
    }

    fn access(&self, _: &mut Prepared, _: &ToolContext) -> Result<Access, ToolError> {
        Ok(Access::shared())
    }

    fn timeout(&self, _: &Prepared, _: &ToolContext) -> Option<toolbelt_core::TimeLimit> {
        None
    }

    fn call<'a>(&'a self, input: Prepared, _cx: ToolContext) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        let text = format!("{} got {}", self.spec.name, input.json());
        Box::pin(async move { Ok(ToolOutput::text(text)) })
    }
}

fn upstream_tools() -> Vec<Arc<dyn DynTool>> {
    vec![
        Remote::tool(
            "mcp__github__create_pull_request",
            "Create a new pull request in a GitHub repository",
            &["owner", "repo", "title", "head", "base"],
            Defer::Auto,
        ),
        Remote::tool("mcp__github__list_issues", "List issues in a GitHub repository", &["owner", "repo"], Defer::Auto),
        Remote::tool(
            "mcp__slack__send_message",
            "Post a message to a Slack channel",
            &["channel", "text"],
            Defer::Auto,
        ),
        Remote::tool("mcp__mail__send_email", "Send an email message to a person", &["to", "body"], Defer::Auto),
        Remote::tool("mcp__docs__search", "Search the documentation", &["query"], Defer::Load),
    ]
}

struct Fixture {
    runtime: Runtime,
    session: Session,
    _dir: tempfile::TempDir,
}

fn fixture(threshold: Option<usize>) -> Fixture {
    let registry = Registry::new();
    toolbelt_tools::register_builtin(&registry).unwrap();
    for tool in upstream_tools() {
        registry.register(tool).unwrap();
    }
    registry.set_defer_threshold(threshold);
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let session = Session::new("s", root.clone(), vec![root.clone()], root.join(".data"));
    Fixture { runtime: Runtime::builder(Arc::new(registry)).build(), session, _dir: dir }
}

impl Fixture {
    async fn call(&self, tool: &str, input: Value) -> ToolResult {
        let call = ToolCall::new("c", tool, input);
        self.runtime.call(&self.session, call, &EventSink::none(), &Default::default()).await
    }

    fn shown(&self) -> Vec<String> {
        self.runtime.tools_for(self.session.state()).into_iter().map(|s| s.name).collect()
    }

    fn search_description(&self) -> String {
        let specs = self.runtime.tools_for(self.session.state());
        specs.into_iter().find(|s| s.name == "ToolSearch").unwrap().description
    }
}

#[tokio::test]
async fn upstream_tools_are_deferred_past_the_threshold_unless_always_loaded() {
    let never = fixture(None);
    assert!(never.shown().contains(&"mcp__github__list_issues".to_string()));
    // Built-in tools that declare it are deferred whatever the threshold.
    assert!(!never.shown().contains(&"EnterWorktree".to_string()));
    assert!(never.runtime.registry().deferred().contains("EnterWorktree"));

    let roomy = fixture(Some(1_000_000));
    assert!(roomy.shown().contains(&"mcp__slack__send_message".to_string()));

    let tight = fixture(Some(100));
    let shown = tight.shown();
    for name in ["mcp__github__create_pull_request", "mcp__github__list_issues", "mcp__slack__send_message"] {
        assert!(!shown.contains(&name.to_string()), "{name} should be deferred: {shown:?}");
    }
    // Marked always-load by its server: shown anyway.
    assert!(shown.contains(&"mcp__docs__search".to_string()));
    assert!(shown.contains(&"Read".to_string()) && shown.contains(&"ToolSearch".to_string()));
    // The model learns the deferred names from ToolSearch's description.
    let description = tight.search_description();
    assert!(description.contains("mcp__slack__send_message") && description.contains("EnterWorktree"), "{description}");
    assert!(!description.contains("mcp__docs__search"), "{description}");
}

#[tokio::test]
async fn select_loads_exact_names_into_the_session() {
    let f = fixture(Some(0));
    let r = f.call("ToolSearch", json!({"query": "select:mcp__slack__send_message, EnterWorktree,Nopetool"})).await;
    assert!(!r.is_error, "{}", r.text());
    let text = r.text();
    assert!(text.starts_with("2 tools loaded; call them now"), "{text}");
    assert!(
        text.contains("<function>{\"name\":\"mcp__slack__send_message\",\"description\":\"Post a message"),
        "{text}"
    );
    assert!(text.contains("Not found: `Nopetool`"), "{text}");
    let s = r.structured.unwrap();
    assert_eq!(s["tools"][0]["name"], "mcp__slack__send_message");
    assert_eq!(s["tools"][0]["parameters"]["properties"]["channel"]["type"], "string");
    assert_eq!(s["tools"][1]["name"], "EnterWorktree");
    // Now shown, and no longer named as deferred.
    let shown = f.shown();
    assert!(shown.contains(&"mcp__slack__send_message".to_string()) && shown.contains(&"EnterWorktree".to_string()));
    assert!(!shown.contains(&"mcp__mail__send_email".to_string()));
    let description = f.search_description();
    assert!(!description.contains("mcp__slack__send_message") && description.contains("mcp__mail__send_email"));
    // An alias selects its tool.
    let r = f.call("ToolSearch", json!({"query": "select:exit_worktree"})).await;
    assert_eq!(r.structured.unwrap()["tools"][0]["name"], "ExitWorktree");
}

#[tokio::test]
async fn keywords_rank_deferred_tools_and_plus_words_must_be_in_the_name() {
    let f = fixture(Some(0));
    let names = |r: &ToolResult| -> Vec<String> {
        let s = r.structured.as_ref().unwrap();
        s["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_string()).collect()
    };
    let r = f.call("ToolSearch", json!({"query": "create pull request"})).await;
    assert_eq!(names(&r)[0], "mcp__github__create_pull_request", "{}", r.text());
    let r = f.call("ToolSearch", json!({"query": "send message"})).await;
    assert_eq!(names(&r)[0], "mcp__slack__send_message");
    assert!(names(&r).contains(&"mcp__mail__send_email".to_string()));
    let r = f.call("ToolSearch", json!({"query": "+mail send message"})).await;
    assert_eq!(names(&r), ["mcp__mail__send_email"]);
    let r = f.call("ToolSearch", json!({"query": "+github"})).await;
    assert_eq!(names(&r), ["mcp__github__list_issues", "mcp__github__create_pull_request"]);
    // Parameter names count: `channel` is only a parameter.
    let r = f.call("ToolSearch", json!({"query": "channel"})).await;
    assert_eq!(names(&r)[0], "mcp__slack__send_message");
    let r = f.call("ToolSearch", json!({"query": "github", "max_results": 1})).await;
    assert_eq!(names(&r).len(), 1);
    // Tools shown up front are not searched; nothing matching says what to try.
    let r = f.call("ToolSearch", json!({"query": "kubernetes pods"})).await;
    assert!(!r.is_error && r.text().starts_with("No deferred tool matched."), "{}", r.text());
    assert_eq!(names(&r).len(), 0);
}

#[tokio::test]
async fn bad_queries_say_what_to_send() {
    let f = fixture(Some(0));
    let r = f.call("ToolSearch", json!({"query": "select:"})).await;
    assert!(r.is_error && r.text().contains("`select:` names no tool"), "{}", r.text());
    let r = f.call("ToolSearch", json!({"query": " -- "})).await;
    assert!(r.is_error && r.text().contains("the query has no words"), "{}", r.text());
    let r = f.call("ToolSearch", json!({"query": "x", "max_results": 0})).await;
    assert!(r.is_error && r.text().contains("max_results"), "{}", r.text());
}

#[tokio::test]
async fn a_deferred_tool_can_be_called_before_it_is_loaded() {
    let f = fixture(Some(0));
    assert!(!f.shown().contains(&"mcp__github__list_issues".to_string()));
    let r = f.call("mcp__github__list_issues", json!({"owner": "o", "repo": "r"})).await;
    assert!(!r.is_error, "{}", r.text());
    assert_eq!(r.text(), r#"mcp__github__list_issues got {"owner":"o","repo":"r"}"#);
    // And its input is validated like any other's.
    let r = f.call("mcp__github__list_issues", json!({"owner": 3})).await;
    assert!(r.is_error && r.text().contains("invalid input"), "{}", r.text());
}
