//! A definition file's text turned into an [`AgentDefinition`], or the reason it cannot be.

use toolbelt_policy::PermissionMode;

use super::{AgentDefinition, DefinitionSource, KeyLines};
use toolbelt_core::frontmatter::{self, Entry, FrontmatterError, Value};

/// Why a definition file cannot be used. Each message says what is wrong and what to do;
/// [`DefinitionError::line`] says where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DefinitionError {
    /// The file could not be opened or read.
    #[error("cannot read it: {0}")]
    Unreadable(String),
    /// The path is not a regular file (a FIFO, a device, a socket, a directory).
    #[error("it is {0}, not a regular file; an agent definition is a regular Markdown file")]
    NotRegular(&'static str),
    /// The file is larger than [`MAX_FILE_BYTES`](super::MAX_FILE_BYTES).
    #[error("it is larger than {limit} bytes, the most an agent definition may have; shorten its prompt")]
    TooLarge {
        /// The limit, in bytes.
        limit: u64,
    },
    /// The file is not UTF-8.
    #[error("it is not UTF-8 text (this line has the first byte that is not); save it as UTF-8")]
    NotUtf8 {
        /// The line of the first invalid byte.
        line: usize,
    },
    /// The file does not start with a `---` line.
    #[error(
        "it has no frontmatter: an agent definition starts with a `---` line, then YAML keys (`name:`, \
         `description:`…), then a `---` line, then the prompt"
    )]
    NoFrontmatter,
    /// The frontmatter has no closing `---` line.
    #[error("the frontmatter opened here is never closed: add a `---` line after its last key, before the prompt")]
    Unclosed,
    /// The YAML does not parse.
    #[error("the frontmatter is not valid YAML: {message}{}", yaml_hint(.message))]
    Yaml {
        /// The line.
        line: usize,
        /// The parser's message.
        message: String,
    },
    /// The frontmatter is YAML, but not a mapping of keys.
    #[error("the frontmatter must be keys and values (`name: reviewer`), not a list or a lone value")]
    NotAMapping {
        /// The line.
        line: usize,
    },
    /// A key is given twice.
    #[error("`{key}` is given twice (first on line {first}); keep one")]
    DuplicateKey {
        /// The key.
        key: String,
        /// The line of the second one.
        line: usize,
        /// The line of the first one.
        first: usize,
    },
    /// A key's value has the wrong shape.
    #[error("`{key}` must be {expected}, not {found}")]
    WrongType {
        /// The key.
        key: String,
        /// What it must be.
        expected: &'static str,
        /// What it is.
        found: &'static str,
        /// The line.
        line: usize,
    },
    /// A key's value is of the right shape but not one it may take.
    #[error("`{key}: {value}` is not valid: {expected}")]
    BadValue {
        /// The key.
        key: String,
        /// The value given.
        value: String,
        /// What it may be.
        expected: String,
        /// The line.
        line: usize,
    },
}

fn yaml_hint(message: &str) -> &'static str {
    if message.contains("mapping values") {
        " (a value with `: ` in it must be quoted: `description: \"…\"`, or written as a block: `description: |` \
         with its lines indented below)"
    } else if message.contains("simple key") || message.contains("expected ':'") {
        " (a value that runs over several lines needs those lines indented, or quoted, or written as a block: \
         `description: |` with its lines indented below)"
    } else {
        ""
    }
}

impl DefinitionError {
    /// The line of the file the error is on, when it is on one.
    pub fn line(&self) -> Option<usize> {
        match self {
            DefinitionError::Unreadable(_) | DefinitionError::NotRegular(_) | DefinitionError::TooLarge { .. } => None,
            DefinitionError::NoFrontmatter | DefinitionError::Unclosed => Some(1),
            DefinitionError::NotUtf8 { line }
            | DefinitionError::Yaml { line, .. }
            | DefinitionError::NotAMapping { line }
            | DefinitionError::DuplicateKey { line, .. }
            | DefinitionError::WrongType { line, .. }
            | DefinitionError::BadValue { line, .. } => Some(*line),
        }
    }
}

/// Something odd in a definition that was used all the same.
pub use toolbelt_core::frontmatter::Warning;

impl From<FrontmatterError> for DefinitionError {
    fn from(e: FrontmatterError) -> Self {
        match e {
            FrontmatterError::NoFrontmatter => DefinitionError::NoFrontmatter,
            FrontmatterError::Unclosed => DefinitionError::Unclosed,
            FrontmatterError::Yaml { line, message } => DefinitionError::Yaml { line, message },
            FrontmatterError::NotAMapping { line } => DefinitionError::NotAMapping { line },
            FrontmatterError::DuplicateKey { key, line, first } => DefinitionError::DuplicateKey { key, line, first },
        }
    }
}

/// A definition read from a file, and what was odd in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parsed {
    /// The definition.
    pub definition: AgentDefinition,
    /// What was odd in it.
    pub warnings: Vec<Warning>,
}

/// The longest name a definition may have.
const MAX_NAME_CHARS: usize = 128;

impl AgentDefinition {
    /// Reads a definition from the text of its file (UTF-8, any line ends). `file_name` names
    /// it when its frontmatter has no `name` (the file's stem: `reviewer` for `reviewer.md`).
    pub fn parse(text: &str, file_name: &str, source: DefinitionSource) -> Result<Parsed, DefinitionError> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let text = text.replace("\r\n", "\n");
        let split = frontmatter::split(&text)?;
        let mut warnings = Vec::new();
        let entries = frontmatter::entries(split.yaml, split.yaml_line, &mut warnings)?;
        let definition = build(entries, split.body, file_name, source, &mut warnings)?;
        Ok(Parsed { definition, warnings })
    }
}

/// The keys a definition reads, as Claude Code spells them.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Key {
    Name,
    Description,
    Tools,
    DisallowedTools,
    Model,
    PermissionMode,
    MaxTurns,
}

impl Key {
    /// The key `key` spells, ignoring case and `-`/`_` (`max_turns` is `maxTurns`).
    fn of(key: &str) -> Option<Key> {
        let folded: String = key.chars().filter(|c| !matches!(c, '-' | '_')).flat_map(char::to_lowercase).collect();
        Some(match folded.as_str() {
            "name" => Key::Name,
            "description" => Key::Description,
            "tools" => Key::Tools,
            "disallowedtools" => Key::DisallowedTools,
            "model" => Key::Model,
            "permissionmode" => Key::PermissionMode,
            "maxturns" => Key::MaxTurns,
            _ => return None,
        })
    }
}

fn build(
    entries: Vec<Entry>,
    body: &str,
    file_name: &str,
    source: DefinitionSource,
    warnings: &mut Vec<Warning>,
) -> Result<AgentDefinition, DefinitionError> {
    let mut def = AgentDefinition {
        name: String::new(),
        description: String::new(),
        tools: None,
        disallowed_tools: Vec::new(),
        model: None,
        permission_mode: None,
        max_turns: None,
        system_prompt: prompt(body),
        source,
        lines: KeyLines::default(),
    };
    let mut seen: Vec<(Key, usize)> = Vec::new();
    for Entry { key: name, line, value } in entries {
        let Some(key) = Key::of(&name) else { continue };
        if let Some((_, first)) = seen.iter().find(|(k, _)| *k == key) {
            return Err(DefinitionError::DuplicateKey { key: name, line, first: *first });
        }
        seen.push((key, line));
        match key {
            Key::Name => def.name = text(&name, line, value, "text")?.map(|t| t.trim().to_string()).unwrap_or_default(),
            Key::Description => def.description = description(&name, line, value)?,
            Key::Tools => {
                def.lines.tools = Some(line);
                def.tools = tool_list(&name, line, value, warnings)?;
            }
            Key::DisallowedTools => {
                def.lines.disallowed_tools = Some(line);
                def.disallowed_tools = tool_list(&name, line, value, warnings)?.unwrap_or_default();
            }
            Key::Model => {
                let model = text(&name, line, value, "a model name")?.map(|t| t.trim().to_string());
                def.model = model.filter(|m| !m.is_empty() && !m.eq_ignore_ascii_case("inherit"));
            }
            Key::PermissionMode => def.permission_mode = permission_mode(&name, line, value)?,
            Key::MaxTurns => def.max_turns = max_turns(&name, line, value)?,
        }
    }
    if def.name.is_empty() {
        def.name = file_name.trim().to_string();
    }
    check_name(&def.name, seen.iter().find(|(k, _)| *k == Key::Name).map_or(1, |(_, l)| *l))?;
    if def.description.is_empty() {
        warnings.push(Warning {
            line: Some(1),
            message: "it has no `description`: the model choosing an agent will not know when to use this one; \
                      add `description: Use this agent when …`"
                .into(),
        });
    }
    Ok(def)
}

/// The prompt: the body without the blank lines around it.
fn prompt(body: &str) -> String {
    body.trim_start_matches(['\n', ' ', '\t']).trim_end().to_string()
}

/// A scalar's text, `None` for nothing; anything else is of the wrong type.
fn text(key: &str, line: usize, value: Value, expected: &'static str) -> Result<Option<String>, DefinitionError> {
    match value {
        Value::Null => Ok(None),
        Value::Text { text, .. } => Ok(Some(text)),
        other => Err(DefinitionError::WrongType { key: key.into(), expected, found: other.describe(), line }),
    }
}

/// The description, with the `\n` of a plain or single-quoted value read as line breaks (the
/// way such files are written, one line standing for several).
fn description(key: &str, line: usize, value: Value) -> Result<String, DefinitionError> {
    let escaped = matches!(value, Value::Text { escaped: true, .. });
    let text = text(key, line, value, "text")?.unwrap_or_default();
    let text = if escaped { text } else { text.replace("\\n", "\n") };
    Ok(text.trim().to_string())
}

fn tool_list(
    key: &str,
    line: usize,
    value: Value,
    warnings: &mut Vec<Warning>,
) -> Result<Option<Vec<String>>, DefinitionError> {
    let names: Vec<String> = match value {
        Value::Null => return Ok(None),
        Value::Text { text, .. } if text.trim().is_empty() => return Ok(None),
        Value::Text { text, .. } => frontmatter::split_list(&text),
        Value::List(items) => items.iter().flat_map(|item| frontmatter::split_list(&item.text)).collect(),
        other => {
            let expected = "tool names, as `Read, Grep` or a YAML list";
            return Err(DefinitionError::WrongType { key: key.into(), expected, found: other.describe(), line });
        }
    };
    if names.is_empty() {
        warnings.push(Warning {
            line: Some(line),
            message: format!("`{key}` is an empty list; leave it out to mean every tool"),
        });
    }
    Ok(Some(names))
}

fn permission_mode(key: &str, line: usize, value: Value) -> Result<Option<PermissionMode>, DefinitionError> {
    let Some(name) = text(key, line, value, "a permission mode")? else { return Ok(None) };
    let name = name.trim();
    if name.is_empty() {
        return Ok(None);
    }
    PermissionMode::parse(name).map(Some).ok_or_else(|| {
        let all: Vec<&str> = PermissionMode::ALL.iter().map(|m| m.as_str()).collect();
        DefinitionError::BadValue {
            key: key.into(),
            value: name.to_string(),
            expected: format!("use one of {}", all.join(", ")),
            line,
        }
    })
}

fn max_turns(key: &str, line: usize, value: Value) -> Result<Option<u32>, DefinitionError> {
    let Some(given) = text(key, line, value, "a number of turns")? else { return Ok(None) };
    match given.trim().parse::<u32>() {
        Ok(turns) if turns > 0 => Ok(Some(turns)),
        _ => Err(DefinitionError::BadValue {
            key: key.into(),
            value: given.trim().to_string(),
            expected: format!("it is a whole number of model turns, from 1 to {}", u32::MAX),
            line,
        }),
    }
}

fn check_name(name: &str, line: usize) -> Result<(), DefinitionError> {
    let bad = |expected: &str| DefinitionError::BadValue {
        key: "name".into(),
        value: name.chars().take(MAX_NAME_CHARS).collect(),
        expected: expected.into(),
        line,
    };
    if name.is_empty() {
        return Err(bad("give the agent a name (`name: reviewer`)"));
    }
    if name.chars().count() > MAX_NAME_CHARS {
        return Err(bad(&format!("a name has at most {MAX_NAME_CHARS} characters")));
    }
    if name.chars().any(|c| c.is_control() || matches!(c, '(' | ')' | ',' | '*')) {
        return Err(bad("a name has no control characters, parentheses, commas or `*` (use letters, digits and `-`)"));
    }
    Ok(())
}
