//! Tools defined in the settings or by a plugin, not written in Rust: a command tool runs a
//! program ([`command`]), an HTTP tool sends one request ([`http`]). Each is read from its
//! table into a [`Definition`] (a bad one is refused with what to write, and left out) and
//! becomes a [`CustomTool`] the registry holds beside the built-in tools: listed, exported,
//! served over MCP and validated against its schema like any tool, judged by what it declares.
//!
//! Why they are tools of their own kind rather than Bash calls in disguise: the model sees a
//! named tool with a schema, never the command line, and the definition (the user's, or a
//! trusted project's) fixes the program and the address, so no input can choose another.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use toolbelt_core::{
    Access, Annotations, BoxFuture, DynTool, OWN_LIMIT_MARGIN, PermissionClass, Prepared, SideEffects, TimeLimit,
    ToolContext, ToolError, ToolOutput, ToolSpec,
};

pub mod command;
mod definition;
mod fields;
mod fill;
pub mod http;

pub use definition::{Action, Definition, DefinitionError, Kind, OutputKind, check_name, read};

/// A defined tool, ready for the registry.
#[derive(Debug)]
pub struct CustomTool {
    definition: Definition,
    spec: ToolSpec,
}

impl CustomTool {
    /// The tool `definition` defines.
    pub fn new(definition: Definition) -> Self {
        let spec = spec(&definition);
        Self { definition, spec }
    }

    /// The tool, erased, for the registry.
    pub fn erased(definition: Definition) -> Arc<dyn DynTool> {
        Arc::new(Self::new(definition))
    }

    /// Its definition.
    pub fn definition(&self) -> &Definition {
        &self.definition
    }
}

/// The spec a definition gives: its name, description and schemas, and how the policy
/// starts judging it.
fn spec(def: &Definition) -> ToolSpec {
    let mut spec = ToolSpec::new(&def.name, &def.description)
        .category(def.category)
        .tags(def.tags.iter().cloned())
        .input_schema(def.input_schema.clone());
    spec = match &def.action {
        Action::Command(c) => spec
            .permission(PermissionClass::External)
            .side_effects(if c.network == command::Network::Off { SideEffects::Files } else { SideEffects::Network })
            .annotations(Annotations { read_only: false, destructive: true, idempotent: false, open_world: true })
            .streams(),
        Action::Http(h) => {
            let get = h.method == "GET";
            spec.permission(PermissionClass::External)
                .side_effects(SideEffects::Network)
                .annotations(Annotations { read_only: get, destructive: !get, idempotent: get, open_world: true })
                .fetch_rules()
        }
    };
    if let Some(timeout) = def.timeout {
        spec = spec
            .default_timeout(timeout)
            .time_limit_setting(format!("the `timeout` of `{}` ({})", def.name, def.origin));
    }
    match (&def.output_schema, def.output, &def.action) {
        (Some(schema), _, _) => spec.output_schema(schema.clone()),
        (None, OutputKind::Text, Action::Command(_)) => spec.output_schema(command::text_schema()),
        _ => spec,
    }
}

impl DynTool for CustomTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn prepare(&self, input: Value) -> Result<Prepared, ToolError> {
        Ok(Prepared::new(input, ()))
    }

    fn access(&self, input: &mut Prepared, cx: &ToolContext) -> Result<Access, ToolError> {
        match &self.definition.action {
            Action::Command(c) => {
                let (access, plan) = c.judge(input.json(), cx)?;
                input.keep_plan(plan);
                Ok(access)
            }
            Action::Http(h) => h.judge(input.json()),
        }
    }

    fn timeout(&self, _input: &Prepared, _cx: &ToolContext) -> Option<TimeLimit> {
        self.definition.timeout.map(|t| TimeLimit::Set(t + OWN_LIMIT_MARGIN))
    }

    fn call<'a>(&'a self, input: Prepared, cx: ToolContext) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        let def = &self.definition;
        Box::pin(async move {
            match &def.action {
                Action::Command(c) => {
                    let (json, plan) = input.into_json_and_plan::<command::CommandPlan>();
                    let plan = plan.ok_or_else(|| {
                        ToolError::internal(format!("`{}` was asked to run a call it had not judged", def.name))
                    })?;
                    let (limit, setting) = match def.timeout {
                        Some(t) => (t, format!("the `timeout` of `{}` ({})", def.name, def.origin)),
                        None => (Duration::MAX, "`runtime.max_timeout` in the settings".to_string()),
                    };
                    c.run(json, plan, def.output, (limit, &setting), cx).await
                }
                Action::Http(h) => h.run(&def.name, input.json().clone(), def.output, def.timeout, cx).await,
            }
        })
    }
}

/// A JSON answer: its text, and the structured result when it is an object.
fn json_output(value: Value) -> ToolOutput {
    let text = serde_json::to_string_pretty(&value).unwrap_or_else(|_| value.to_string());
    let structured = value.is_object().then_some(value);
    ToolOutput { content: vec![toolbelt_core::Content::text(text)], structured, is_error: false }
}
