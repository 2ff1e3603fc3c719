//! What every part of a definition reads fields with: the error a refused definition
//! gives, and the readers of lists, tables and placeholders. The definition (`definition.rs`)
//! and each kind's own fields (`command/`, `http.rs`) build on these; nothing here knows them.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::fill::{self, Piece};

/// Why a definition was refused: said with its file and line by `toolbelt config check`, and
/// the tool is left out (the others still load).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct DefinitionError(pub String);

impl DefinitionError {
    pub(super) fn new(message: impl Into<String>) -> Self {
        Self(message.into())
    }
}

/// What the model gets back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputKind {
    /// The output as text (a command's with its exit code, a request's with its status).
    Text,
    /// The output read as JSON: the structured result, and its text.
    Json,
}

/// The error for a field of the wrong type.
pub(super) fn wrong_type(field: &str, expected: &str, got: &Value) -> DefinitionError {
    DefinitionError::new(format!("`{field}` must be {expected}, not {}", short(got)))
}

/// A value, short, for an error.
fn short(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 60 { format!("{}…", text.chars().take(60).collect::<String>()) } else { text }
}

/// The fields a template names, in order, each once, added to `names`.
pub(super) fn fields_in(template: &str, names: &mut Vec<String>) {
    for piece in fill::pieces(template) {
        if let Piece::Field(name) = piece
            && !names.iter().any(|n| n == name)
        {
            names.push(name.to_string());
        }
    }
}

/// A list of strings, or an error naming the field.
pub(super) fn strings(fields: &Map<String, Value>, field: &str) -> Result<Vec<String>, DefinitionError> {
    match fields.get(field) {
        None => Ok(Vec::new()),
        Some(Value::Array(items)) if items.iter().all(Value::is_string) => {
            Ok(items.iter().filter_map(Value::as_str).map(str::to_string).collect())
        }
        Some(v) => Err(wrong_type(field, "a list of strings", v)),
    }
}

/// A table of strings, or an error naming the field.
pub(super) fn string_table(
    fields: &Map<String, Value>,
    field: &str,
) -> Result<BTreeMap<String, String>, DefinitionError> {
    match fields.get(field) {
        None => Ok(BTreeMap::new()),
        Some(Value::Object(items)) => items
            .iter()
            .map(|(k, v)| match v.as_str() {
                Some(s) => Ok((k.clone(), s.to_string())),
                None => Err(wrong_type(&format!("{field}.{k}"), "a string", v)),
            })
            .collect(),
        Some(v) => Err(wrong_type(field, "a table of strings", v)),
    }
}
