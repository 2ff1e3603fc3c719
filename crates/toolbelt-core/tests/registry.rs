//! The registry: registration, lookup, enable/disable and schema export.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use toolbelt_core::{
    Access, Category, Content, DynTool, ExportFormat, Registry, RegistryError, Render, TextOutput, Tool, ToolContext,
    ToolError, ToolOutput, ToolSpec, erase,
};

/// Input of a file reader shaped like the real one.
#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
#[serde(deny_unknown_fields)]
struct ReadInput {
    /// Absolute path, or relative to the working directory.
    file_path: String,
    /// Line to start from (1-based).
    #[schemars(range(min = 1))]
    offset: Option<u64>,
    /// How many lines to read.
    limit: Option<u64>,
}

#[derive(Serialize, JsonSchema)]
struct ReadOutput {
    /// Lines returned.
    lines: u64,
}

impl Render for ReadOutput {
    fn render(&self) -> Vec<Content> {
        vec![Content::text(format!("{} lines", self.lines))]
    }
}

struct ReadDouble;
impl Tool for ReadDouble {
    type Input = ReadInput;
    type Output = ReadOutput;
    fn spec(&self) -> ToolSpec {
        ToolSpec::new("Read", "Reads a file.")
            .aliases(["read_file", "file_read"])
            .param_alias("path", "file_path")
            .category(Category::Files)
            .tags(["fs"])
            .read_only()
    }
    fn access(&self, i: &ReadInput, _: &ToolContext) -> Result<Access, ToolError> {
        Ok(Access::shared().reads(&i.file_path))
    }
    async fn call(&self, _: ReadInput, _: ToolContext) -> Result<ReadOutput, ToolError> {
        Ok(ReadOutput { lines: 0 })
    }
}

/// A write tool with a nested array input.
#[derive(Deserialize, JsonSchema)]
struct MultiEditInput {
    /// File to edit.
    file_path: String,
    /// Edits applied in order.
    edits: Vec<EditOp>,
}

/// One replacement.
#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct EditOp {
    /// Text to find.
    old_string: String,
    /// Replacement.
    new_string: String,
    /// Replace every occurrence.
    #[serde(default)]
    replace_all: bool,
}

struct EditDouble(&'static str, &'static [&'static str]);
impl Tool for EditDouble {
    type Input = MultiEditInput;
    type Output = TextOutput;
    fn spec(&self) -> ToolSpec {
        ToolSpec::new(self.0, "Edits a file.").aliases(self.1.iter().copied()).category(Category::Files)
    }
    fn access(&self, i: &MultiEditInput, _: &ToolContext) -> Result<Access, ToolError> {
        Ok(Access::exclusive().writes(&i.file_path))
    }
    async fn call(&self, i: MultiEditInput, _: ToolContext) -> Result<TextOutput, ToolError> {
        Ok(TextOutput::new(format!("{} edits", i.edits.len())))
    }
}

fn registry() -> Registry {
    let r = Registry::new();
    r.register(erase(ReadDouble)).unwrap();
    r.register(erase(EditDouble("MultiEdit", &["multi_edit"]))).unwrap();
    r
}

#[test]
fn duplicate_names_and_aliases_are_refused() {
    let r = registry();
    // Same canonical name.
    let err = r.register(erase(ReadDouble)).unwrap_err();
    assert_eq!(err, RegistryError::Duplicate { tool: "Read".into(), name: "Read".into(), owner: "Read".into() });
    // An alias of a new tool clashing with an existing alias.
    struct Other;
    impl Tool for Other {
        type Input = ReadInput;
        type Output = TextOutput;
        fn spec(&self) -> ToolSpec {
            ToolSpec::new("Cat", "x").aliases(["file_read"])
        }
        fn access(&self, _: &ReadInput, _: &ToolContext) -> Result<Access, ToolError> {
            Ok(Access::shared())
        }
        async fn call(&self, _: ReadInput, _: ToolContext) -> Result<TextOutput, ToolError> {
            Ok(TextOutput::new(""))
        }
    }
    let err = r.register(erase(Other)).unwrap_err();
    assert_eq!(err.to_string(), "cannot register `Cat`: the name `file_read` is already used by `Read`");
    // The failed registration left nothing behind.
    assert!(r.lookup("Cat").is_err());
    assert_eq!(r.len(), 2);
}

#[test]
fn lookup_by_name_alias_and_case() {
    let r = registry();
    assert_eq!(r.lookup("Read").unwrap().spec().name, "Read");
    assert_eq!(r.lookup("read_file").unwrap().spec().name, "Read");
    assert_eq!(r.lookup("multiedit").unwrap().spec().name, "MultiEdit");
}

#[test]
fn unknown_names_suggest_the_closest_tools() {
    let r = registry();
    let suggestions = |name: &str| match r.lookup(name).unwrap_err() {
        ToolError::UnknownTool { suggestions, .. } => suggestions,
        other => panic!("{other:?}"),
    };
    assert_eq!(suggestions("Raed"), ["Read"]);
    assert_eq!(suggestions("readfile"), ["Read"]);
    assert_eq!(suggestions("multi_edits"), ["MultiEdit"]);
    assert!(suggestions("WebSearch").is_empty());
    assert_eq!(r.lookup("Reed").unwrap_err().to_string(), "unknown tool `Reed`; did you mean `Read`?");
    // Among a narrower set only: an agent given MultiEdit alone is pointed at nothing else.
    assert_eq!(r.closest("Raed", |_| true), ["Read"]);
    assert!(r.closest("Raed", |tool| tool == "MultiEdit").is_empty());
    assert_eq!(r.closest("multi_edits", |tool| tool == "MultiEdit"), ["MultiEdit"]);
}

#[test]
fn disabled_tools_are_hidden_and_refused() {
    let r = registry();
    assert!(r.set_enabled("read_file", false));
    assert_eq!(r.lookup("Read").unwrap_err(), ToolError::Disabled { name: "Read".into(), reason: None });
    assert_eq!(r.specs().len(), 1);
    assert_eq!(r.export(ExportFormat::Mcp).len(), 1);
    assert!(r.set_enabled("Read", true));
    assert_eq!(r.specs().len(), 2);
    assert!(!r.set_enabled("Nope", true));
}

#[test]
fn a_tool_registered_disabled_says_why() {
    let r = registry();
    let changes = r.subscribe();
    let tool: Arc<dyn DynTool> = erase(EditDouble("Edit", &[]));
    r.register_disabled(tool, "`disabled_tools` lists it (config.toml:3)").unwrap();
    assert!(!changes.has_changed().unwrap(), "nothing listed changed");
    assert!(r.specs().iter().all(|s| s.name != "Edit"));
    let refused = r.lookup("Edit").unwrap_err();
    assert_eq!(refused.to_string(), "tool `Edit` is disabled: `disabled_tools` lists it (config.toml:3)");
    assert!(!r.lookup("Edt").unwrap_err().to_string().contains("`Edit`"), "never suggested");
}

#[test]
fn changes_to_the_listed_tools_are_announced() {
    let r = registry();
    let mut changes = r.subscribe();
    assert!(!changes.has_changed().unwrap());
    // Disabling changes the list; disabling again does not.
    assert!(r.set_enabled("Read", false));
    assert!(changes.has_changed().unwrap());
    changes.mark_unchanged();
    assert!(r.set_enabled("Read", false));
    assert!(!changes.has_changed().unwrap());
    assert!(!r.entry("Read").unwrap().is_enabled(), "a disabled tool is still there to explain");
    // Removing a tool frees its name and aliases.
    assert!(r.unregister("MultiEdit"));
    assert!(changes.has_changed().unwrap());
    assert!(matches!(r.lookup("multi_edit"), Err(ToolError::UnknownTool { .. })));
    assert!(r.entry("MultiEdit").is_none() && !r.unregister("MultiEdit"));
    r.register(erase(EditDouble("MultiEdit", &["multi_edit"]))).unwrap();
    assert_eq!(r.lookup("multi_edit").unwrap().spec().name, "MultiEdit");
}

#[test]
fn tools_a_policy_hides_join_hidden() {
    let r = Registry::new();
    let mut changes = r.subscribe();
    r.hide_joining(|spec| (spec.name == "MultiEdit").then(|| "left out by a test".to_string()));
    r.register(erase(ReadDouble)).unwrap();
    assert!(changes.has_changed().unwrap() && r.lookup("Read").is_ok());
    changes.mark_unchanged();
    // Never listed, not even for a moment, and nobody is told of it.
    r.register(erase(EditDouble("MultiEdit", &["multi_edit"]))).unwrap();
    assert!(!changes.has_changed().unwrap());
    assert!(!r.entry("MultiEdit").unwrap().is_enabled());
    assert_eq!(r.entry("MultiEdit").unwrap().disabled_reason(), Some("left out by a test"));
    assert!(!r.specs().iter().any(|s| s.name == "MultiEdit"));
    assert!(matches!(r.lookup("multi_edit"), Err(ToolError::Disabled { .. })));
}

#[test]
fn entries_are_in_name_order_and_prepare_validates() {
    let r = registry();
    let names: Vec<String> = r.specs().into_iter().map(|s| s.name).collect();
    assert_eq!(names, ["MultiEdit", "Read"]);
    let read = r.lookup("Read").unwrap();
    let p = read.prepare(json!({"path": "a.txt", "offset": 3, "limit": null})).unwrap();
    assert_eq!(p.json(), &json!({"file_path": "a.txt", "offset": 3}));
    let err = read.prepare(json!({"offset": 0, "limit": "all"})).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid input for `Read` (3 problems); fix these fields and call again:\n  \
         /: missing required field `file_path`\n  /limit: expected integer, got string\n  \
         /offset: 0 is less than the minimum of 1"
    );
}

#[test]
fn exports_match_snapshots() {
    let r = registry();
    insta::assert_json_snapshot!("openai", r.export(ExportFormat::OpenAi));
    insta::assert_json_snapshot!("anthropic", r.export(ExportFormat::Anthropic));
    insta::assert_json_snapshot!("mcp", r.export(ExportFormat::Mcp));
}

/// Every schema in every export is valid JSON Schema draft 2020-12.
#[test]
fn every_exported_schema_is_valid_draft_2020_12() {
    let r = registry();
    let meta = jsonschema::draft202012::meta::validator();
    let mut checked = 0;
    for format in [ExportFormat::OpenAi, ExportFormat::Anthropic, ExportFormat::Mcp] {
        for tool in r.export(format) {
            let schemas: Vec<&Value> = [
                tool.pointer("/function/parameters"),
                tool.get("input_schema"),
                tool.get("inputSchema"),
                tool.get("outputSchema"),
            ]
            .into_iter()
            .flatten()
            .collect();
            for schema in schemas {
                let errors: Vec<String> = meta.iter_errors(schema).map(|e| e.to_string()).collect();
                assert!(errors.is_empty(), "{tool}: {errors:?}");
                assert_eq!(schema.get("type").and_then(Value::as_str), Some("object"));
                checked += 1;
            }
        }
    }
    // Per format, Read's input and output and MultiEdit's input and output; OpenAI and
    // Anthropic carry inputs only.
    assert_eq!(checked, 8);
    // The meta-validator really rejects a broken schema, so the check above can fail.
    assert!(!meta.is_valid(&json!({"type": "objekt"})));
}

#[test]
fn erased_tools_from_elsewhere_join_the_same_registry() {
    // A tool whose schema is only known at run time, like an MCP upstream's.
    struct Upstream(ToolSpec);
    impl DynTool for Upstream {
        fn spec(&self) -> &ToolSpec {
            &self.0
        }
        fn prepare(&self, input: Value) -> Result<toolbelt_core::Prepared, ToolError> {
            Ok(toolbelt_core::Prepared::new(input.clone(), input))
        }
        fn access(&self, _: &mut toolbelt_core::Prepared, _: &ToolContext) -> Result<Access, ToolError> {
            Ok(Access::exclusive().contacts("mcp://srv"))
        }
        fn timeout(
            &self,
            _: &toolbelt_core::Prepared,
            _: &toolbelt_core::ToolContext,
        ) -> Option<toolbelt_core::TimeLimit> {
            None
        }
        fn call<'a>(
            &'a self,
            input: toolbelt_core::Prepared,
            _: ToolContext,
        ) -> toolbelt_core::BoxFuture<'a, Result<ToolOutput, ToolError>> {
            Box::pin(async move { Ok(ToolOutput::text(input.json().to_string())) })
        }
    }
    let r = registry();
    let spec = ToolSpec::new("mcp__srv__echo", "Echo.")
        .category(Category::Mcp)
        .input_schema(json!({"type": "object", "properties": {"msg": {"type": "string"}}, "required": ["msg"]}));
    r.register(Arc::new(Upstream(spec))).unwrap();
    let entry = r.lookup("mcp__srv__echo").unwrap();
    assert!(entry.prepare(json!({})).is_err());
    assert!(entry.prepare(json!({"msg": "hi"})).is_ok());
    // An upstream schema that does not compile is refused with the reason.
    let bad = ToolSpec::new("mcp__srv__bad", "Bad.").input_schema(json!({"type": 5}));
    assert!(matches!(r.register(Arc::new(Upstream(bad))), Err(RegistryError::InvalidSchema { .. })));
}
