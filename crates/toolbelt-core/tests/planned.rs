//! The plan a tool's judgement makes is the plan its call runs: carried in the prepared input
//! from `access` to `call`, made again only when the input is judged again.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::sync::atomic::{AtomicU32, Ordering};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use toolbelt_core::{Access, Content, PlannedTool, Render, Tool, ToolContext, ToolError, ToolSpec, erase};

#[derive(Deserialize, JsonSchema)]
struct In {
    /// What to run.
    command: String,
}

#[derive(Serialize, JsonSchema)]
struct Out {
    /// The line that ran.
    ran: String,
}

impl Render for Out {
    fn render(&self) -> Vec<Content> {
        vec![Content::text(&self.ran)]
    }
}

/// Plans a numbered line per judgement, so a line made twice would show.
#[derive(Default)]
struct Numbered {
    judged: AtomicU32,
}

impl PlannedTool for Numbered {
    type Input = In;
    type Output = Out;
    type Plan = String;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("Numbered", "Runs a numbered line.")
    }

    fn access(&self, input: &In, _: &ToolContext) -> Result<(Access, String), ToolError> {
        let n = self.judged.fetch_add(1, Ordering::SeqCst) + 1;
        let line = format!("{} #{n}", input.command);
        Ok((Access::exclusive().executes(line.clone()), line))
    }

    async fn call(&self, _: In, line: String, _: ToolContext) -> Result<Out, ToolError> {
        Ok(Out { ran: line })
    }
}

struct Plain;

impl Tool for Plain {
    type Input = In;
    type Output = Out;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("Plain", "Runs its input.")
    }

    fn access(&self, _: &In, _: &ToolContext) -> Result<Access, ToolError> {
        Ok(Access::shared())
    }

    async fn call(&self, input: In, _: ToolContext) -> Result<Out, ToolError> {
        Ok(Out { ran: input.command })
    }
}

fn cx() -> ToolContext {
    ToolContext::detached(std::env::temp_dir())
}

#[tokio::test]
async fn the_call_runs_the_plan_its_judgement_made() {
    let tool = erase(Numbered::default());
    let mut input = tool.prepare(json!({"command": "make"})).unwrap();
    let access = tool.access(&mut input, &cx()).unwrap();
    assert_eq!(access.touches, vec![toolbelt_core::Touch::Execute("make #1".into())]);
    let out = tool.call(input, cx()).await.unwrap();
    assert_eq!(out.structured.unwrap()["ran"], "make #1", "the line judged, not a second one");
}

#[tokio::test]
async fn judged_again_the_newest_plan_runs() {
    let tool = erase(Numbered::default());
    let mut input = tool.prepare(json!({"command": "make"})).unwrap();
    tool.access(&mut input, &cx()).unwrap();
    let access = tool.access(&mut input, &cx()).unwrap();
    assert_eq!(access.touches, vec![toolbelt_core::Touch::Execute("make #2".into())]);
    assert_eq!(tool.call(input, cx()).await.unwrap().structured.unwrap()["ran"], "make #2");
}

#[tokio::test]
async fn a_planned_tool_never_runs_what_was_not_judged() {
    let tool = erase(Numbered::default());
    let input = tool.prepare(json!({"command": "make"})).unwrap();
    let err = tool.call(input, cx()).await.unwrap_err().to_string();
    assert!(err.contains("had not judged"), "{err}");
}

#[tokio::test]
async fn a_tool_whose_input_is_its_plan_needs_nothing_kept() {
    let tool = erase(Plain);
    let input = tool.prepare(json!({"command": "ls"})).unwrap();
    assert_eq!(tool.call(input, cx()).await.unwrap().structured.unwrap()["ran"], "ls");
}
