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
