//! The input and output schema of every built-in tool, snapshotted one file per tool and
//! direction: a change to what the model sends or gets back shows in review.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use serde_json::Value;

/// The built-in, settings and agent tools.
fn every_tool() -> impl Iterator<Item = std::sync::Arc<dyn toolbelt_core::DynTool>> {
    toolbelt_tools::builtin()
        .into_iter()
        .chain(toolbelt_tools::settings::tools())
        .chain(toolbelt_tools::agents::tools(&[]))
}

#[test]
fn every_tool_declares_input_and_output_schemas() {
    for tool in toolbelt_tools::builtin() {
        let spec = tool.spec();
        let name = &spec.name;
        let output = spec.output_schema.clone().unwrap_or_else(|| panic!("{name} declares no output schema"));
        // MCP's structuredContent is an object; every property tells the reader what it is.
        assert_eq!(output["type"], "object", "{name}'s output is not an object: {output}");
        let properties = output["properties"].as_object().unwrap_or_else(|| panic!("{name}: no properties"));
        for (field, schema) in properties {
            let documented = schema.get("description").and_then(Value::as_str).is_some_and(|d| !d.is_empty());
            assert!(documented, "{name}'s output field `{field}` has no doc comment");
        }
        insta::assert_json_snapshot!(format!("{name}_input"), spec.input_schema);
        insta::assert_json_snapshot!(format!("{name}_output"), output);
    }
}

/// The built-in, settings and agent tools are registered without compiling their schemas
/// (each is compiled at the tool's first call): here every one is compiled, and so checked
/// against JSON Schema's meta-schema, as registering a tool from elsewhere does.
#[test]
fn every_tool_schema_compiles() {
    for tool in every_tool() {
        let spec = tool.spec();
        let compiled = toolbelt_core::InputValidator::compile(&spec.name, &spec.input_schema, &spec.param_aliases);
        assert!(compiled.is_ok(), "{}: {:?}", spec.name, compiled.err());
    }
}

/// The registry joins a tool by its names alone (its schemas are derived at first use): what
/// `names()` says must be what the complete spec says, for every tool.
#[test]
fn every_tool_names_itself_as_its_spec_does() {
    for tool in every_tool() {
        let names = tool.names();
        let spec = tool.spec();
        assert_eq!(names.name, spec.name);
        assert_eq!(names.aliases, spec.aliases.as_slice(), "{}", spec.name);
        assert_eq!(names.defer, spec.defer, "{}", spec.name);
        assert!(spec.input_schema["type"] == "object", "{}: the derived schema is there", spec.name);
    }
}

/// The values listed at `pointer` in `tool`'s output schema: a `oneOf` of constants or an
/// `enum`.
fn listed(tool: &str, pointer: &str) -> Vec<String> {
    let found = toolbelt_tools::builtin().into_iter().find(|t| t.spec().name == tool).unwrap();
    let schema = found.spec().output_schema.clone().unwrap();
    let field = schema.pointer(pointer).unwrap_or_else(|| panic!("{tool}: no {pointer}"));
    let values = match (field.get("oneOf"), field.get("enum")) {
        (Some(Value::Array(choices)), _) => choices.iter().map(|c| c["const"].clone()).collect(),
        (_, Some(Value::Array(values))) => values.clone(),
        _ => panic!("{tool}{pointer} lists no values: {field}"),
    };
    values.into_iter().map(|v| v.as_str().unwrap().to_string()).collect()
}

/// The JSON words `values` are sent as.
fn wire<T: serde::Serialize>(values: &[T]) -> Vec<String> {
    values.iter().map(|v| serde_json::to_value(v).unwrap().as_str().unwrap().to_string()).collect()
}

/// Output fields that name one of a few things are enums: their schema lists the names, and
/// the JSON a model reads carries the same words as when they were strings.
#[test]
fn named_output_fields_list_their_values_and_keep_their_words() {
    use toolbelt_core::PermissionMode;
    use toolbelt_tools::code::index::search::{MatchKind, Tier};
    use toolbelt_tools::code::lint::LinterStatus;
    use toolbelt_tools::code::linters::Severity;
    use toolbelt_tools::knowledge::skills::Scope;

    let cases: Vec<(&str, &str, Vec<String>, &[&str])> = vec![
        ("Lint", "/properties/findings/items/properties/severity", wire(&Severity::ALL), &["error", "warning", "info"]),
        (
            "Lint",
            "/properties/linters/items/properties/status",
            wire(&LinterStatus::ALL),
            &["ok", "failed", "unavailable"],
        ),
        ("Skill", "/properties/scope", wire(&[Scope::Project, Scope::User]), &["project", "user"]),
        (
            "code_query",
            "/properties/matches/items/properties/kind",
            wire(&MatchKind::ALL),
            &["function", "class", "variable", "file"],
        ),
        (
            "code_query",
            "/properties/matches/items/properties/matched",
            wire(&[Tier::Exact, Tier::Prefix, Tier::Substring, Tier::Fuzzy]),
            &["exact", "prefix", "substring", "fuzzy"],
        ),
        (
            "EnterPlanMode",
            "/properties/previous_mode",
            wire(&PermissionMode::ALL),
            &["default", "acceptEdits", "plan", "dontAsk", "bypassPermissions"],
        ),
        (
            "ExitPlanMode",
            "/properties/mode",
            wire(&PermissionMode::ALL),
            &["default", "acceptEdits", "plan", "dontAsk", "bypassPermissions"],
        ),
    ];
    for (tool, pointer, serialized, before) in cases {
        assert_eq!(listed(tool, pointer), before, "{tool}{pointer}");
        assert_eq!(serialized, before, "{tool}{pointer}: the words sent are the words the schema lists");
    }
    // The names the code prints (as text, and in the index) are the same words.
    assert_eq!(Severity::ALL.map(Severity::name), ["error", "warning", "info"]);
    assert_eq!(LinterStatus::ALL.map(LinterStatus::as_str), ["ok", "failed", "unavailable"]);
    assert_eq!(MatchKind::ALL.map(MatchKind::as_str), ["function", "class", "variable", "file"]);
    assert_eq!([Scope::Project.as_str(), Scope::User.as_str()], ["project", "user"]);
}
