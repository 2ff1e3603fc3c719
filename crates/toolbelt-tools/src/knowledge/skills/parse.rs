//! A `SKILL.md`: YAML frontmatter (`name`, `description`, `allowed-tools`,
//! `disable-model-invocation`, `argument-hint`) and a Markdown body, the instruction.

use toolbelt_core::frontmatter::{self, Entry, Value};

/// The longest skill name.
pub const MAX_NAME_CHARS: usize = 64;

/// The longest description kept (longer ones are cut, with a warning).
pub const MAX_DESCRIPTION_CHARS: usize = 1024;

/// What a `SKILL.md` says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillText {
    /// Its name: lowercase letters, digits and hyphens.
    pub name: String,
    /// What it is for and when to use it.
    pub description: String,
    /// Permission rules granted for the session once it is loaded (`Bash(npm test *)`).
    pub allowed_tools: Vec<String>,
    /// Only the person may invoke it (as a prompt); the model is not offered it.
    pub disable_model_invocation: bool,
    /// What its argument should hold.
    pub argument_hint: Option<String>,
    /// The instruction.
    pub body: String,
    /// Odd things that were read all the same, each with its line.
    pub warnings: Vec<String>,
}

/// Reads a `SKILL.md`'s text; `folder` (its directory's name) names a skill whose frontmatter
/// has none. The error says what is wrong and where.
pub fn parse(text: &str, folder: &str) -> Result<SkillText, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text).replace("\r\n", "\n");
    let split = frontmatter::split(&text).map_err(|e| format!("line {}: {e}", e.line()))?;
    let mut notes = Vec::new();
    let entries =
        frontmatter::entries(split.yaml, split.yaml_line, &mut notes).map_err(|e| format!("line {}: {e}", e.line()))?;
    let mut warnings: Vec<String> =
        notes.into_iter().map(|w| format!("line {}: {}", w.line.unwrap_or(1), w.message)).collect();
    let mut skill = SkillText {
        name: String::new(),
        description: String::new(),
        allowed_tools: Vec::new(),
        disable_model_invocation: false,
        argument_hint: None,
        body: split.body.trim().to_string(),
        warnings: Vec::new(),
    };
    let mut name = None;
    for Entry { key, line, value } in entries {
        let folded: String = key.chars().filter(|c| !matches!(c, '-' | '_')).flat_map(char::to_lowercase).collect();
        match folded.as_str() {
            "name" => name = Some(text_of(&key, line, &value)?),
            "description" => skill.description = text_of(&key, line, &value)?,
            "allowedtools" => skill.allowed_tools = rules_of(line, &value)?,
            "disablemodelinvocation" => {
                skill.disable_model_invocation = match text_of(&key, line, &value)?.as_str() {
                    "true" | "True" | "yes" => true,
                    "false" | "False" | "no" | "" => false,
                    other => return Err(format!("line {line}: `{key}` is `{other}`; write true or false")),
                }
            }
            "argumenthint" => skill.argument_hint = Some(text_of(&key, line, &value)?).filter(|h| !h.is_empty()),
            _ => {} // license, metadata, model, version…: used by others, not here.
        }
    }
    skill.name = match name.filter(|n| !n.is_empty()) {
        Some(n) => n,
        None => folder.to_string(),
    };
    check_name(&skill.name)?;
    if skill.description.trim().is_empty() {
        let first = skill.body.lines().map(str::trim).find(|l| !l.is_empty() && !l.starts_with('#'));
        skill.description = first.unwrap_or("").to_string();
        warnings.push("it has no `description`; its first line of text stands in. Add `description:` saying what it does and when to use it".into());
    }
    if skill.description.chars().count() > MAX_DESCRIPTION_CHARS {
        skill.description = skill.description.chars().take(MAX_DESCRIPTION_CHARS).collect();
        warnings.push(format!("its description is longer than {MAX_DESCRIPTION_CHARS} characters and was cut"));
    }
    if skill.body.is_empty() {
        return Err("its body is empty: write the instruction below the frontmatter".into());
    }
    skill.warnings = warnings;
    Ok(skill)
}

/// A name is 1–64 lowercase letters, digits and hyphens, not starting or ending with one.
pub fn check_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.chars().count() <= MAX_NAME_CHARS
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !name.starts_with('-')
        && !name.ends_with('-');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "its name `{name}` is not a skill name: use 1–{MAX_NAME_CHARS} lowercase letters, digits and hyphens (`pdf-tools`)"
        ))
    }
}

fn text_of(key: &str, line: usize, value: &Value) -> Result<String, String> {
    match value {
        Value::Null => Ok(String::new()),
        Value::Text { text, .. } => Ok(text.trim().to_string()),
        other => Err(format!("line {line}: `{key}` should be text, not {}", other.describe())),
    }
}

/// `allowed-tools` as Claude Code writes it: a list, or one line separated by commas (or
/// spaces between rules that have no parentheses).
fn rules_of(line: usize, value: &Value) -> Result<Vec<String>, String> {
    match value {
        Value::Null => Ok(Vec::new()),
        Value::List(items) => Ok(items.iter().map(|i| i.text.trim().to_string()).filter(|t| !t.is_empty()).collect()),
        Value::Text { text, .. } => Ok(frontmatter::split_list(text)),
        other => Err(format!("line {line}: `allowed-tools` should be a list of rules, not {}", other.describe())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_key() {
        let text = "---\nname: pdf-tools\ndescription: Fill PDF forms: use when a PDF is mentioned\nallowed-tools: Read, Bash(python scripts/fill.py *)\ndisable-model-invocation: false\nargument-hint: \"[file]\"\nlicense: MIT\n---\n\n# PDF\nRun the script on $ARGUMENTS.\n";
        let s = parse(text, "folder").unwrap();
        assert_eq!(s.name, "pdf-tools");
        assert_eq!(s.description, "Fill PDF forms: use when a PDF is mentioned");
        assert_eq!(s.allowed_tools, ["Read", "Bash(python scripts/fill.py *)"]);
        assert_eq!(s.argument_hint.as_deref(), Some("[file]"));
        assert!(!s.disable_model_invocation);
        assert_eq!(s.body, "# PDF\nRun the script on $ARGUMENTS.");
        assert_eq!(s.warnings.len(), 1, "{:?}", s.warnings); // the unquoted `: `
    }

    #[test]
    fn the_folder_names_a_nameless_skill_and_bad_files_say_why() {
        let s = parse("---\ndescription: d\nallowed-tools:\n  - Read\n  - Grep\n---\nbody", "my-skill").unwrap();
        assert_eq!((s.name.as_str(), s.allowed_tools.len()), ("my-skill", 2));
        assert!(parse("no frontmatter", "x").unwrap_err().contains("no frontmatter"));
        assert!(parse("---\nname: Bad_Name\n---\nbody", "x").unwrap_err().contains("not a skill name"));
        assert!(parse("---\nname: ok\ndescription: d\n---\n\n", "x").unwrap_err().contains("body is empty"));
        let e = parse("---\nname: ok\ndisable-model-invocation: maybe\n---\nb", "x").unwrap_err();
        assert!(e.contains("line 3") && e.contains("true or false"), "{e}");
    }
}
