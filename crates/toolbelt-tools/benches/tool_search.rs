//! `ToolSearch` over a large registry: the built-in tools and 1,000 upstream-style tools
//! (30 servers, names like `mcp__github__create_pull_request`, a sentence of description and
//! a few parameters each), all deferred. Prints, in µs: building the ranking index (the first
//! query after the tools change), then keyword queries, `+word` queries and `select:` loads
//! through the whole runtime (`Runtime::call`: validation, policy, the tool, rendering), p50
//! and p90 over N queries of each. Goal: ≤ 1 ms a query.
//!
//! Run: `cargo bench -p toolbelt-tools --bench tool_search -- [N]` (default 300).
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolbelt_core::{
    Access, BoxFuture, Category, Defer, DynTool, EventSink, Prepared, Registry, ToolContext, ToolError, ToolOutput,
    ToolSpec,
};
use toolbelt_runtime::{Runtime, Session, ToolCall};

struct Remote(ToolSpec);

impl DynTool for Remote {
    fn spec(&self) -> &ToolSpec {
        &self.0
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
    fn call<'a>(&'a self, _: Prepared, _: ToolContext) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async { Ok(ToolOutput::text("ok")) })
    }
}

const SERVERS: [&str; 30] = [
    "github",
    "gitlab",
    "slack",
    "jira",
    "linear",
    "notion",
    "figma",
    "sentry",
    "stripe",
    "postgres",
    "mysql",
    "redis",
    "kubernetes",
    "docker",
    "aws",
    "gcp",
    "azure",
    "datadog",
    "pagerduty",
    "zendesk",
    "hubspot",
    "salesforce",
    "shopify",
    "twilio",
    "sendgrid",
    "dropbox",
    "drive",
    "calendar",
    "gmail",
    "confluence",
];
const VERBS: [&str; 12] =
    ["create", "get", "list", "update", "delete", "search", "send", "archive", "assign", "close", "comment", "export"];
const NOUNS: [&str; 9] = ["issue", "pull_request", "message", "user", "project", "file", "event", "record", "report"];

/// The `i`th tool's server, verb and noun.
fn parts(i: usize) -> (&'static str, &'static str, &'static str) {
    let server = SERVERS[i % SERVERS.len()];
    let verb = VERBS[(i / SERVERS.len()) % VERBS.len()];
    let noun = NOUNS[(i / (SERVERS.len() * VERBS.len()) + i) % NOUNS.len()];
    (server, verb, noun)
}

fn name(i: usize) -> String {
    let (server, verb, noun) = parts(i);
    format!("mcp__{server}__{verb}_{noun}_{i}")
}

fn tools() -> Vec<Arc<dyn DynTool>> {
    let mut out: Vec<Arc<dyn DynTool>> = Vec::new();
    for i in 0..1000 {
        let (server, verb, noun) = parts(i);
        let name = name(i);
        let description = format!(
            "{verb} a {} in {server}: takes the {noun} id and options, returns the {noun} as JSON.",
            noun.replace('_', " ")
        );
        let schema = json!({"type": "object", "properties": {
            "id": {"type": "string"}, "options": {"type": "object"}, format!("{noun}_fields"): {"type": "array"}}});
        let spec = ToolSpec::new(name, description).category(Category::Mcp).defer(Defer::Auto).input_schema(schema);
        out.push(Arc::new(Remote(spec)));
    }
    out
}

fn percentile(times: &mut [Duration], p: f64) -> f64 {
    times.sort();
    let i = ((times.len() as f64 - 1.0) * p).round() as usize;
    times[i].as_secs_f64() * 1e6
}

fn main() {
    let n: usize = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(300);
    let registry = Registry::new();
    toolbelt_tools::register_builtin(&registry).unwrap();
    for tool in tools() {
        registry.register_lazy(tool).unwrap();
    }
    registry.set_defer_threshold(Some(0));
    let runtime = Runtime::builder(Arc::new(registry)).build();
    let dir = tempfile::tempdir().unwrap();
    let session = Session::new("bench", dir.path().to_path_buf(), vec![dir.path().to_path_buf()], dir.path().join("d"));
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let cancel = Default::default();
    let call = |query: &str| {
        let call = ToolCall::new("b", "ToolSearch", json!({"query": query}));
        let start = Instant::now();
        let result = rt.block_on(runtime.call(&session, call, &EventSink::none(), &cancel));
        assert!(!result.is_error, "{}", result.text());
        start.elapsed()
    };
    println!(
        "ToolSearch over {} registered tools ({} deferred), µs per query",
        runtime.registry().len(),
        runtime.registry().deferred().len()
    );
    let first = call("create pull request");
    println!("{:<34} {:>9.0}", "first query (builds the index)", first.as_secs_f64() * 1e6);
    let keyword =
        ["create pull request", "send slack message", "list kubernetes events", "export report", "assign jira issue"];
    let plus = ["+github comment", "+stripe record", "+gmail send"];
    let (one, two) = (format!("select:{}", name(2)), format!("select:EnterWorktree,{}", name(33)));
    let select = [one.as_str(), two.as_str()];
    println!("{:<34} {:>9} {:>9}", "case", "p50", "p90");
    for (label, queries) in [("keywords", &keyword[..]), ("+word", &plus[..]), ("select:", &select[..])] {
        let mut times: Vec<Duration> = (0..n).map(|i| call(queries[i % queries.len()])).collect();
        println!("{:<34} {:>9.1} {:>9.1}", label, percentile(&mut times, 0.5), percentile(&mut times, 0.9));
    }
}
