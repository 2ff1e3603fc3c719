//! A tool's definition as the settings write it (`[tools.command.NAME]`, `[tools.http.NAME]`),
//! read into a [`Definition`] or refused with what to write instead. What both kinds share is
//! read here; each kind's own fields in `command/` and `http.rs`, with the readers of `fields.rs`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value, json};
use toolbelt_core::{Category, InputValidator};

use super::fields::wrong_type;
pub use super::fields::{DefinitionError, OutputKind};

/// Most seconds a tool's `timeout` may say (a day).
const MAX_TIMEOUT_SECS: u64 = 86_400;

/// Which kind of tool a definition makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `[tools.command.NAME]`: a program run as Bash runs commands.
    Command,
    /// `[tools.http.NAME]`: one HTTP request.
    Http,
}

impl Kind {
    /// The settings table it is written in: `command` or `http`.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Command => "command",
            Kind::Http => "http",
        }
    }
}

/// A tool defined in the settings or by a plugin.
#[derive(Debug, Clone, PartialEq)]
pub struct Definition {
    /// Its name (the table's): what the model calls.
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// The JSON Schema its input is checked against (an object's).
    pub input_schema: Value,
    /// The schema of its JSON output, when it gives one (an object's).
    pub output_schema: Option<Value>,
    /// Text or JSON.
    pub output: OutputKind,
    /// Its own time limit, when it sets one.
    pub timeout: Option<Duration>,
    /// Its category (`shell` for commands, `web` for HTTP tools unless it says).
    pub category: Category,
    /// Its tags: `custom`, its kind, `plugin:NAME` for a plugin's, and its own.
    pub tags: Vec<String>,
    /// Where it was defined, for people (`user ~/.config/toolbelt/config.toml:12`).
    pub origin: String,
    /// What it runs.
    pub action: Action,
}

/// What a defined tool does when called.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Runs a program.
    Command(super::command::CommandAction),
    /// Sends a request.
    Http(super::http::HttpAction),
}

/// The fields every definition has, before its kind's.
const COMMON: [&str; 8] =
    ["description", "input_schema", "output_schema", "output", "timeout", "category", "tags", "title"];

/// Reads the table of the tool `name` of `kind`. `dir` is the directory a schema file's
/// relative path starts from (the settings file's, or the plugin's); `vars` names what
/// `${VAR}` in a command may be besides the environment (a plugin's root).
pub fn read(
    kind: Kind,
    name: &str,
    table: &Value,
    dir: &Path,
    origin: &str,
    vars: &BTreeMap<String, String>,
) -> Result<Definition, DefinitionError> {
    check_name(name)?;
    let Some(fields) = table.as_object() else {
        return Err(DefinitionError::new(format!("`{name}` must be a table of the tool's settings")));
    };
    let own: &[&str] = match kind {
        Kind::Command => &super::command::FIELDS,
        Kind::Http => &super::http::FIELDS,
    };
    if let Some(unknown) = fields.keys().find(|k| !COMMON.contains(&k.as_str()) && !own.contains(&k.as_str())) {
        let mut known: Vec<&str> = COMMON.iter().chain(own).copied().collect();
        known.sort_unstable();
        return Err(DefinitionError::new(format!(
            "`{unknown}` is not a setting of a {} tool; it takes {}",
            kind.as_str(),
            known.join(", ")
        )));
    }
    let description = match fields.get("description") {
        Some(Value::String(d)) if !d.trim().is_empty() => d.trim().to_string(),
        Some(Value::String(_)) | None => {
            return Err(DefinitionError::new(
                "`description` is missing: the model chooses tools by it, so say what the tool does and when to use it",
            ));
        }
        Some(other) => return Err(wrong_type("description", "a string", other)),
    };
    let action = match kind {
        Kind::Command => Action::Command(super::command::CommandAction::read(fields, vars, dir)?),
        Kind::Http => Action::Http(super::http::HttpAction::read(fields)?),
    };
    let placeholders = match &action {
        Action::Command(c) => c.placeholders(),
        Action::Http(h) => h.placeholders(),
    };
    let input_schema = match fields.get("input_schema") {
        Some(given) => schema(given, dir, "input_schema")?,
        None => implied_schema(&placeholders),
    };
    check_schema(name, &input_schema, "input_schema")?;
    check_placeholders(&input_schema, &placeholders)?;
    let output = match fields.get("output").map(|v| (v, v.as_str())) {
        None | Some((_, Some("text"))) => OutputKind::Text,
        Some((_, Some("json"))) => OutputKind::Json,
        Some((v, _)) => return Err(wrong_type("output", "\"text\" or \"json\"", v)),
    };
    let output_schema = fields.get("output_schema").map(|v| schema(v, dir, "output_schema")).transpose()?;
    if let Some(s) = &output_schema {
        if output != OutputKind::Json {
            return Err(DefinitionError::new("`output_schema` describes JSON output: add output = \"json\""));
        }
        check_schema(name, s, "output_schema")?;
    }
    let timeout = match fields.get("timeout") {
        None => None,
        Some(v) => match v.as_u64() {
            Some(secs @ 1..=MAX_TIMEOUT_SECS) => Some(Duration::from_secs(secs)),
            _ => return Err(wrong_type("timeout", &format!("seconds, 1 to {MAX_TIMEOUT_SECS}"), v)),
        },
    };
    let category = match fields.get("category") {
        None => match kind {
            Kind::Command => Category::Shell,
            Kind::Http => Category::Web,
        },
        Some(v) => v.as_str().and_then(Category::parse).ok_or_else(|| {
            let names: Vec<&str> = Category::ALL.iter().map(|c| c.as_str()).collect();
            wrong_type("category", &format!("one of {}", names.join(", ")), v)
        })?,
    };
    let mut tags = vec!["custom".to_string(), kind.as_str().to_string()];
    match fields.get("tags") {
        None => {}
        Some(Value::Array(items)) if items.iter().all(Value::is_string) => {
            tags.extend(items.iter().filter_map(Value::as_str).map(str::to_string));
        }
        Some(v) => return Err(wrong_type("tags", "a list of strings", v)),
    }
    Ok(Definition {
        name: name.to_string(),
        description,
        input_schema,
        output_schema,
        output,
        timeout,
        category,
        tags,
        origin: origin.to_string(),
        action,
    })
}

/// A tool name the model and every MCP client accept: 1 to 64 of `A-Z a-z 0-9 _ -`.
pub fn check_name(name: &str) -> Result<(), DefinitionError> {
    if name.starts_with("mcp__") {
        return Err(DefinitionError::new(format!(
            "`{name}` starts with `mcp__`, which names an MCP server's tools (and the rules written for them); \
             choose another name"
        )));
    }
    let fine = (1..=64).contains(&name.len()) && name.chars().all(|c| c.is_ascii_alphanumeric() || "_-".contains(c));
    if fine {
        Ok(())
    } else {
        Err(DefinitionError::new(format!(
            "`{name}` is not a tool name: use 1 to 64 letters, digits, `_` or `-` (models and MCP clients refuse others)"
        )))
    }
}

/// A schema given inline (a table) or as a file's path (relative to `dir`).
fn schema(given: &Value, dir: &Path, field: &str) -> Result<Value, DefinitionError> {
    match given {
        Value::Object(_) => Ok(given.clone()),
        Value::String(path) => {
            let file = if Path::new(path).is_absolute() { PathBuf::from(path) } else { dir.join(path) };
            let text = read_small(&file)
                .map_err(|e| DefinitionError::new(format!("`{field}`: cannot read {}: {e}", file.display())))?;
            serde_json::from_str(&text)
                .map_err(|e| DefinitionError::new(format!("`{field}`: {} is not JSON: {e}", file.display())))
        }
        other => Err(wrong_type(field, "a JSON Schema (a table) or the path of a .json file holding one", other)),
    }
}

/// The most bytes a schema file may hold.
const MAX_SCHEMA_BYTES: u64 = 1024 * 1024;

/// A schema file's text: a regular file (opened without waiting on a FIFO or a device) of at
/// most [`MAX_SCHEMA_BYTES`].
fn read_small(file: &Path) -> Result<String, String> {
    use std::io::Read as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let opened = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(file)
        .map_err(|e| e.to_string())?;
    let meta = opened.metadata().map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("it is not a regular file".into());
    }
    if meta.len() > MAX_SCHEMA_BYTES {
        return Err(format!("it is larger than {MAX_SCHEMA_BYTES} bytes"));
    }
    let mut text = String::new();
    opened.take(MAX_SCHEMA_BYTES).read_to_string(&mut text).map_err(|e| e.to_string())?;
    Ok(text)
}

/// A schema that is an object's and compiles.
fn check_schema(name: &str, schema: &Value, field: &str) -> Result<(), DefinitionError> {
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        return Err(DefinitionError::new(format!(
            "`{field}` must describe an object (type = \"object\", with its properties): tools take and give named fields"
        )));
    }
    InputValidator::compile(name, schema, &[])
        .map(|_| ())
        .map_err(|e| DefinitionError::new(format!("`{field}` is not a valid JSON Schema: {e}")))
}

/// Without `input_schema`: every placeholder a required string.
fn implied_schema(placeholders: &[String]) -> Value {
    let properties: Map<String, Value> = placeholders.iter().map(|p| (p.clone(), json!({"type": "string"}))).collect();
    json!({"type": "object", "properties": properties, "required": placeholders, "additionalProperties": false})
}

/// Every placeholder names a property of the schema (a typo would otherwise only show at a
/// call).
fn check_placeholders(schema: &Value, placeholders: &[String]) -> Result<(), DefinitionError> {
    let properties = schema.get("properties").and_then(Value::as_object);
    let missing: Vec<&str> = placeholders
        .iter()
        .filter(|p| properties.is_none_or(|props| !props.contains_key(p.as_str())))
        .map(String::as_str)
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(DefinitionError::new(format!(
        "{} named in the templates but not a property of `input_schema`: add {} to its properties",
        missing.iter().map(|m| format!("{{{m}}}")).collect::<Vec<_>>().join(", "),
        if missing.len() == 1 { "it" } else { "them" }
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_command(table: Value) -> Result<Definition, DefinitionError> {
        read(Kind::Command, "deploy", &table, Path::new("/nonexistent"), "test", &BTreeMap::new())
    }

    #[test]
    fn a_definition_without_a_schema_takes_its_placeholders_as_strings() {
        let def = read_command(json!({"description": "Deploys", "command": "deploy.sh", "args": ["--env", "{env}"]}))
            .unwrap();
        assert_eq!(def.input_schema["required"], json!(["env"]));
        assert_eq!(def.category, Category::Shell);
        assert_eq!(def.tags, ["custom", "command"]);
    }

    #[test]
    fn bad_definitions_say_what_to_write() {
        let err = |t: Value| read_command(t).unwrap_err().to_string();
        assert!(err(json!({"command": "x"})).contains("`description` is missing"));
        assert!(err(json!({"description": "d", "command": "x", "argz": []})).contains("`argz` is not a setting"));
        let typo = err(json!({"description": "d", "command": "x", "args": ["{nmae}"],
            "input_schema": {"type": "object", "properties": {"name": {"type": "string"}}}}));
        assert!(typo.contains("{nmae}") && typo.contains("not a property"), "{typo}");
        assert!(err(json!({"description": "d", "command": "x", "input_schema": {"type": "array"}})).contains("object"));
        assert!(err(json!({"description": "d", "command": "x", "timeout": 0})).contains("`timeout` must be seconds"));
        assert!(
            err(json!({"description": "d", "command": "x", "input_schema": "missing.json"})).contains("cannot read")
        );
        let bad_name = read(Kind::Command, "a b", &json!({}), Path::new("/"), "t", &BTreeMap::new()).unwrap_err();
        assert!(bad_name.to_string().contains("is not a tool name"));
    }
}
