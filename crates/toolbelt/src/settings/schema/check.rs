//! Checking a value against its key's type ([`super::Kind`]), with what it should have been.

use serde_json::Value;

use super::{KeyDef, Kind};

/// Why a value does not fit its key's type, and what it should be.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ValueError {
    /// Not a string.
    #[error("expected a string, got {got}")]
    NotAString {
        /// The value's type, in words ([`type_name`]).
        got: &'static str,
    },
    /// A string that is none of the choices.
    #[error("`{value}` is not one of: {}", .choices.join(", "))]
    NotAChoice {
        /// The value.
        value: String,
        /// The choices.
        choices: &'static [&'static str],
    },
    /// Not a string, where one of the choices is expected.
    #[error("expected one of {}, got {got}", .choices.join(", "))]
    ChoiceNotAString {
        /// The choices.
        choices: &'static [&'static str],
        /// The value's type, in words.
        got: &'static str,
    },
    /// A string that is no permission mode.
    #[error("`{0}` is not a permission mode; use one of: {names}", names = mode_names())]
    NotAMode(String),
    /// Not a string, where a permission mode is expected.
    #[error("expected a permission mode (a string), got {got}")]
    ModeNotAString {
        /// The value's type, in words.
        got: &'static str,
    },
    /// Not `true` or `false`.
    #[error("expected true or false, got {got}")]
    NotABool {
        /// The value's type, in words.
        got: &'static str,
    },
    /// An integer outside the key's range.
    #[error("{value} is out of range ({min} to {max})")]
    OutOfRange {
        /// The value.
        value: i64,
        /// Smallest allowed.
        min: i64,
        /// Largest allowed.
        max: i64,
    },
    /// Not an integer.
    #[error("expected an integer, got {got}")]
    NotAnInteger {
        /// The value's type, in words.
        got: &'static str,
    },
    /// Not a hook group.
    #[error("expected a hook group ({{matcher, hooks}}), got {got}")]
    NotAHookGroup {
        /// The value's type, in words.
        got: &'static str,
    },
    /// Not a table.
    #[error("expected a table, got {got}")]
    NotATable {
        /// The value's type, in words.
        got: &'static str,
    },
}

/// Checks one value (a whole scalar, or one item of a list) against its key's type.
pub fn check(def: &KeyDef, value: &Value) -> Result<(), ValueError> {
    let got = type_name(value);
    match def.kind {
        Kind::Text | Kind::List => match value {
            Value::String(_) => Ok(()),
            _ => Err(ValueError::NotAString { got }),
        },
        Kind::Choice(choices) => match value.as_str() {
            Some(s) if choices.contains(&s) => Ok(()),
            Some(s) => Err(ValueError::NotAChoice { value: s.to_string(), choices }),
            None => Err(ValueError::ChoiceNotAString { choices, got }),
        },
        Kind::Mode => match value.as_str() {
            Some(s) if toolbelt_policy::PermissionMode::parse(s).is_some() => Ok(()),
            Some(s) => Err(ValueError::NotAMode(s.to_string())),
            None => Err(ValueError::ModeNotAString { got }),
        },
        Kind::Bool => match value {
            Value::Bool(_) => Ok(()),
            _ => Err(ValueError::NotABool { got }),
        },
        Kind::Int { min, max } => match value.as_i64() {
            Some(n) if (min..=max).contains(&n) => Ok(()),
            Some(value) => Err(ValueError::OutOfRange { value, min, max }),
            None => Err(ValueError::NotAnInteger { got }),
        },
        Kind::HookGroups => match value {
            Value::Object(_) => Ok(()),
            _ => Err(ValueError::NotAHookGroup { got }),
        },
        Kind::Table => match value {
            Value::Object(_) => Ok(()),
            _ => Err(ValueError::NotATable { got }),
        },
    }
}

/// A JSON value's type, in words.
pub fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "nothing",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "an integer",
        Value::Number(_) => "a float",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "a table",
    }
}

/// Every permission mode's name, listed for an error.
fn mode_names() -> String {
    toolbelt_policy::PermissionMode::ALL.map(toolbelt_policy::PermissionMode::as_str).join(", ")
}
