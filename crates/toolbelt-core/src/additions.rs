//! What the runtime adds to a structured result, and how every output schema declares it.
//!
//! A client may hand the model a tool's structured result instead of its text (pydantic-ai does
//! whenever a tool declares an output schema), so whatever the runtime adds to the text after
//! the tool ran must reach the structured result too: the notice that the result was cut to
//! the output budget and where the whole of it was saved ([`TRUNCATION`]), and the context
//! PostToolUse hooks added ([`HOOK_CONTEXT`]), and the result a PostToolUse hook put in place
//! of the tool's ([`HOOK_OUTPUT`]). All are optional properties of every output schema a typed
//! tool derives ([`crate::output_schema`]), and the gateway declares them in its upstream
//! tools' schemas too, so a result carrying them still validates.
//!
//! A replaced result carries only [`HOOK_OUTPUT`]: the tool's own properties would hand
//! structured-first clients what the hook took out (a hook that redacts). So the schema's
//! `required` list becomes one of two alternatives — the tool's own required properties, or
//! [`HOOK_OUTPUT`] — and a client that checks `structuredContent` against `outputSchema`, as
//! the official SDKs do, accepts either. MCP requires a structured result from every tool that
//! declares an output schema; without this a replaced result had none, and those clients
//! refused it.

use std::sync::OnceLock;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

/// The property holding a [`Truncation`].
pub const TRUNCATION: &str = "truncation";

/// The property holding the context hooks added: a list of texts.
pub const HOOK_CONTEXT: &str = "hook_context";

/// The property holding the result a PostToolUse hook gave in place of the tool's, as text:
/// when present, the only property of the result.
pub const HOOK_OUTPUT: &str = "hook_output";

/// How a structured result was cut to the output budget; the runtime adds it under
/// [`TRUNCATION`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Truncation {
    /// What was cut, and where and how to read the rest.
    pub notice: String,
    /// The file holding the whole output, when it could be saved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub full_output: Option<String>,
}

/// The texts hooks add after a result, under [`HOOK_CONTEXT`].
#[derive(JsonSchema)]
#[allow(dead_code)] // only its schema is used
struct HookContext(Vec<String>);

/// The schemas of the runtime's properties, derived once.
fn properties() -> &'static [(&'static str, Value); 3] {
    static PROPERTIES: OnceLock<[(&str, Value); 3]> = OnceLock::new();
    PROPERTIES.get_or_init(|| {
        let mut truncation = crate::json_schema::schema_for::<Truncation>();
        truncation["description"] = Value::from(
            "Present when the result was cut to the output budget: what was cut, and where the whole output is.",
        );
        let mut context = crate::json_schema::schema_for::<HookContext>();
        context["description"] = Value::from("Context that hooks added to this result, in order.");
        let output = serde_json::json!({
            "type": "string",
            "description": "Present when a PostToolUse hook replaced this result: the result, whole, as the hook \
                gave it. The tool's own properties are then absent."
        });
        [(TRUNCATION, truncation), (HOOK_CONTEXT, context), (HOOK_OUTPUT, output)]
    })
}

/// Declares the runtime's properties in an object schema's `properties`, leaving a property
/// the schema already has of its own alone. A schema that is not an object schema is left as
/// it is.
pub fn declare_additions(schema: &mut Value) {
    let Some(map) = schema.as_object_mut() else { return };
    if map.get("type").is_some_and(|t| t != "object") {
        return;
    }
    let Some(props) = map.entry("properties").or_insert_with(|| Value::Object(Default::default())).as_object_mut()
    else {
        return;
    };
    let mut output_declared = false;
    for (key, property) in properties() {
        if !props.contains_key(*key) {
            props.insert(key.to_string(), property.clone());
            output_declared |= *key == HOOK_OUTPUT;
        }
    }
    // A replaced result holds only the hook's output: the tool's required properties become
    // one alternative, the hook's output the other.
    if output_declared
        && let Some(required) = map.remove("required")
        && required.as_array().is_some_and(|r| !r.is_empty())
    {
        let either = serde_json::json!([{"required": required}, {"required": [HOOK_OUTPUT]}]);
        match map.remove("anyOf") {
            None => {
                map.insert("anyOf".into(), either);
            }
            Some(own) => {
                let all = map.entry("allOf").or_insert_with(|| Value::Array(Vec::new()));
                if let Value::Array(all) = all {
                    all.push(serde_json::json!({"anyOf": own}));
                    all.push(serde_json::json!({"anyOf": either}));
                }
            }
        }
    }
}

/// The structured result that stands for `text`, the output a PostToolUse hook put in place
/// of a tool's, when the tool's output schema allows it ([`declare_additions`]); `None` when
/// it does not (a schema with a `hook_output` of its own), or there is no schema.
pub fn hook_output(schema: Option<&Value>, text: String) -> Option<Value> {
    (schema.is_some() && may_add(schema, HOOK_OUTPUT)).then(|| serde_json::json!({ HOOK_OUTPUT: text }))
}

/// Whether a result of a tool whose output schema is `schema` may carry the runtime's
/// property `key`: the schema declares it as the runtime does, or there is no schema to
/// match.
pub fn may_add(schema: Option<&Value>, key: &str) -> bool {
    let Some(schema) = schema else { return true };
    let ours = properties().iter().find(|(k, _)| *k == key).map(|(_, v)| v);
    ours.is_some() && schema.get("properties").and_then(|p| p.get(key)) == ours
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn declared_where_free_and_only_then_added() {
        let mut schema =
            json!({"type": "object", "properties": {"n": {"type": "integer"}}, "additionalProperties": false});
        declare_additions(&mut schema);
        assert_eq!(schema["properties"][TRUNCATION]["required"], json!(["notice"]));
        assert_eq!(schema["properties"][HOOK_CONTEXT]["items"]["type"], "string");
        assert!(may_add(Some(&schema), TRUNCATION) && may_add(Some(&schema), HOOK_CONTEXT));
        assert!(may_add(None, TRUNCATION));

        // A schema with a `truncation` of its own keeps it, and the runtime does not write it.
        let mut own = json!({"type": "object", "properties": {"truncation": {"type": "boolean"}}});
        declare_additions(&mut own);
        assert_eq!(own["properties"][TRUNCATION], json!({"type": "boolean"}));
        assert!(!may_add(Some(&own), TRUNCATION));
        assert!(may_add(Some(&own), HOOK_CONTEXT));

        // Required properties become one alternative; the hook's output alone, the other.
        let mut required = json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]});
        declare_additions(&mut required);
        assert!(required.get("required").is_none());
        assert_eq!(required["anyOf"], json!([{"required": ["n"]}, {"required": [HOOK_OUTPUT]}]));
        assert_eq!(hook_output(Some(&required), "x".into()), Some(json!({"hook_output": "x"})));
        assert_eq!(hook_output(None, "x".into()), None);
        // An `anyOf` of the schema's own is kept beside ours.
        let mut own_any =
            json!({"type": "object", "required": ["n"], "anyOf": [{"required": ["a"]}, {"required": ["b"]}]});
        declare_additions(&mut own_any);
        assert_eq!(own_any["allOf"][0]["anyOf"][1], json!({"required": ["b"]}));
        assert_eq!(own_any["allOf"][1]["anyOf"][1], json!({"required": [HOOK_OUTPUT]}));

        let mut array = json!({"type": "array"});
        declare_additions(&mut array);
        assert_eq!(array, json!({"type": "array"}));
    }
}
