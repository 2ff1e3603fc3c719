//! The schemas a typed tool declares: its input's, always an object schema, and its
//! output's, with the properties the runtime may add to any result ([`crate::additions`]).
//! Both are derived from the Rust types ([`crate::json_schema`]).

use schemars::JsonSchema;
use serde_json::Value;

/// The input schema of a tool whose input type is `T`: always an object schema.
pub fn input_schema<T: JsonSchema>() -> Value {
    let mut value = crate::json_schema::schema_for::<T>();
    if let Value::Object(map) = &mut value {
        map.remove("description");
        // Function-calling APIs require an object with `properties`, even when empty.
        map.entry("properties").or_insert_with(|| Value::Object(Default::default()));
    }
    value
}

/// The output schema of a typed result `T` (MCP `outputSchema`), with the properties the
/// runtime may add to any result declared ([`crate::additions`]).
pub fn output_schema<T: JsonSchema>() -> Value {
    let mut value = crate::json_schema::schema_for::<T>();
    crate::additions::declare_additions(&mut value);
    value
}
