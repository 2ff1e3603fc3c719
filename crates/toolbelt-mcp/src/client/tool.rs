//! An upstream tool in the registry: validated against its own input schema by the registry,
//! authorized, hooked and audited like any other tool, called over its server's connection.

use std::sync::Arc;

use serde_json::Value;
use toolbelt_core::{
    Access, Annotations, BoxFuture, Category, Defer, DynTool, PermissionClass, Prepared, SideEffects, ToolContext,
    ToolError, ToolOutput, ToolSpec,
};

use super::upstream::Upstream;

/// The `_meta` key with which a server marks a tool to be sent to the model up front even
/// when the other upstream tools are deferred.
pub const ALWAYS_LOAD: &str = "anthropic/alwaysLoad";

/// One tool of an upstream server.
pub struct McpTool {
    spec: ToolSpec,
    remote: String,
    read_only: bool,
    upstream: Arc<Upstream>,
}

impl McpTool {
    /// The tool `tool` (as the server listed it) of `upstream`, registered as `name`.
    pub fn new(name: String, tool: &rmcp::model::Tool, upstream: Arc<Upstream>) -> Self {
        let hints = tool.annotations.clone().unwrap_or_default();
        let read_only = hints.read_only_hint.unwrap_or(false);
        let remote = tool.name.to_string();
        let description = tool
            .description
            .as_deref()
            .filter(|d| !d.trim().is_empty())
            .map_or_else(|| format!("`{remote}` from the MCP server `{}`.", upstream.name), str::to_string);
        let mut spec = ToolSpec::new(name, description)
            .category(Category::Mcp)
            .tags(["mcp".to_string(), upstream.name.clone()])
            .annotations(Annotations {
                read_only,
                destructive: hints.destructive_hint.unwrap_or(true),
                idempotent: hints.idempotent_hint.unwrap_or(false),
                open_world: hints.open_world_hint.unwrap_or(true),
            })
            // Hints from another server describe, they never authorize: every upstream tool
            // is external to the permission engine whatever it says of itself.
            .permission(PermissionClass::External)
            .side_effects(SideEffects::Network)
            .default_timeout(upstream.config.call_timeout)
            .time_limit_setting(format!("the `timeout` of the MCP server `{}`", upstream.name))
            .input_schema(Value::Object(tool.input_schema.as_ref().clone()));
        // Deferred with the other upstream tools once theirs together crowd the context,
        // unless the server asks for this one to be always sent.
        let always_load = tool.meta.as_ref().and_then(|m| m.get(ALWAYS_LOAD)).and_then(Value::as_bool) == Some(true);
        spec = spec.defer(if always_load { Defer::Load } else { Defer::Auto });
        if let Some(title) = tool.title.as_ref().or(hints.title.as_ref()) {
            spec = spec.title(title);
        }
        if let Some(output) = &tool.output_schema {
            // With the properties the runtime adds to a result cut to the budget or given
            // hook context, so such a result still validates for our own clients.
            let mut output = Value::Object(output.as_ref().clone());
            toolbelt_core::additions::declare_additions(&mut output);
            spec = spec.output_schema(output);
        }
        Self { spec, remote, read_only, upstream }
    }
}

impl DynTool for McpTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn prepare(&self, input: Value) -> Result<Prepared, ToolError> {
        Ok(Prepared::new(input, ()))
    }

    fn access(&self, _input: &mut Prepared, _cx: &ToolContext) -> Result<Access, ToolError> {
        // What it touches is the server's business; a read-only one may run beside reads. The
        // reason a call asks says so, rather than "runs commands".
        let access = if self.read_only { Access::shared() } else { Access::exclusive() };
        let hint = if self.read_only { ", and its read-only hint is only the server's word" } else { "" };
        Ok(access.reaching(format!(
            "is a tool of {}: what it does is the server's business{hint}",
            self.upstream.described()
        )))
    }

    /// The server's own `timeout` setting, honoured whatever `runtime.max_timeout` says.
    fn timeout(&self, _input: &Prepared, _cx: &ToolContext) -> Option<toolbelt_core::TimeLimit> {
        Some(toolbelt_core::TimeLimit::Set(self.upstream.config.call_timeout))
    }

    fn call<'a>(&'a self, input: Prepared, cx: ToolContext) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move { self.upstream.call_tool(&self.remote, input.json().clone(), &cx).await })
    }
}
