//! Deriving JSON Schemas from Rust types, in the form every export accepts.
//!
//! Schemas are draft 2020-12 with subschemas inlined: some hosts do not follow `$ref`, and
//! tool inputs are small and never recursive, so inlining costs nothing. The `$schema` and
//! `title` keywords are dropped: the title of an input struct (`ReadInput`) tells the model
//! nothing, and every export format carries the dialect implicitly.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::Value;

fn schema_for<T: JsonSchema>() -> Value {
    let settings = SchemaSettings::draft2020_12().with(|s| {
        s.inline_subschemas = true;
        s.meta_schema = None;
    });
    let mut value: Value = settings.into_generator().into_root_schema_for::<T>().into();
    if let Value::Object(map) = &mut value {
        map.remove("title");
        map.remove("$schema");
    }
    value
}

/// The input schema of a tool whose input type is `T`: always an object schema.
pub fn input_schema<T: JsonSchema>() -> Value {
    let mut value = schema_for::<T>();
    if let Value::Object(map) = &mut value {
        // Function-calling APIs require an object with `properties`, even when empty.
        map.entry("properties").or_insert_with(|| Value::Object(Default::default()));
    }
    value
}

/// The output schema of a typed result `T` (MCP `outputSchema`).
pub fn output_schema<T: JsonSchema>() -> Value {
    schema_for::<T>()
}
