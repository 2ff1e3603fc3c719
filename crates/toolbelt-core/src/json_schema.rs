//! Deriving JSON Schemas from Rust types, in the form every export accepts.
//!
//! Schemas are draft 2020-12 with subschemas inlined: some hosts do not follow `$ref`, and
//! tool inputs are small and never recursive, so inlining costs nothing. The root's
//! `$schema`, `title` and `description` are dropped: the name and doc of an input struct
//! (`ReadInput`, "Input of Read") tell the model nothing the tool's description does not,
//! and every export format carries the dialect implicitly. Doc comments wrapped over
//! several source lines are joined back into paragraphs, as a reader of the schema expects.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::Value;

/// `T`'s schema in the form every export accepts (see the module docs).
pub(crate) fn schema_for<T: JsonSchema>() -> Value {
    let settings = SchemaSettings::draft2020_12().with(|s| {
        s.inline_subschemas = true;
        s.meta_schema = None;
    });
    let mut value: Value = settings.into_generator().into_root_schema_for::<T>().into();
    if let Value::Object(map) = &mut value {
        map.remove("title");
        map.remove("$schema");
    }
    unwrap_descriptions(&mut value);
    drop_optional_null(&mut value);
    drop_numeric_formats(&mut value);
    value
}

/// Removes the `format` schemars gives Rust's number types (`uint64`, `int32`, `double`…):
/// they are not JSON Schema formats, validators warn about each one (the TypeScript MCP SDK
/// prints a line per field), and `minimum: 0` already says an integer is unsigned.
fn drop_numeric_formats(value: &mut Value) {
    match value {
        Value::Object(map) => {
            let numeric = map.get("format").and_then(Value::as_str).is_some_and(|f| {
                matches!(f, "int8" | "int16" | "int32" | "int64" | "int" | "uint8" | "uint16" | "uint32" | "uint64")
                    || matches!(f, "uint" | "float" | "double")
            });
            if numeric {
                map.remove("format");
            }
            map.values_mut().for_each(drop_numeric_formats);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_numeric_formats),
        _ => {}
    }
}

/// An optional field is shown as its type, not "integer or null": being left out of
/// `required` already says it is optional. A `null` the model sends anyway is read as
/// absent (see `InputValidator::check`).
fn drop_optional_null(schema: &mut Value) {
    let Value::Object(map) = schema else { return };
    let required: Vec<String> = map
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).map(str::to_string).collect())
        .unwrap_or_default();
    if let Some(Value::Object(props)) = map.get_mut("properties") {
        for (name, prop) in props.iter_mut() {
            if !required.contains(name) {
                strip_null_type(prop);
            }
        }
    }
    for (_, child) in map.iter_mut() {
        match child {
            Value::Object(_) => drop_optional_null(child),
            Value::Array(items) => items.iter_mut().for_each(drop_optional_null),
            _ => {}
        }
    }
}

fn strip_null_type(prop: &mut Value) {
    let Value::Object(map) = prop else { return };
    if let Some(Value::Array(types)) = map.get_mut("type") {
        types.retain(|t| t != "null");
        if let [only] = types.as_slice() {
            let only = only.clone();
            map.insert("type".into(), only);
        }
    } else if let Some(Value::Array(branches)) = map.get("anyOf") {
        let non_null: Vec<&Value> = branches.iter().filter(|b| b.get("type") != Some(&Value::from("null"))).collect();
        if let ([Value::Object(inner)], true) = (non_null.as_slice(), branches.len() == 2) {
            let inner = inner.clone();
            map.remove("anyOf");
            for (k, v) in inner {
                map.entry(k).or_insert(v);
            }
        }
    }
}

/// Joins hard-wrapped doc comment lines ("a\nb" → "a b"), keeping paragraph breaks.
fn unwrap_descriptions(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                match v {
                    Value::String(s) if key == "description" => *s = unwrap_lines(s),
                    other => unwrap_descriptions(other),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(unwrap_descriptions),
        _ => {}
    }
}

fn unwrap_lines(text: &str) -> String {
    let paragraphs: Vec<String> =
        text.split("\n\n").map(|p| p.lines().map(str::trim).collect::<Vec<_>>().join(" ")).collect();
    paragraphs.join("\n\n")
}
