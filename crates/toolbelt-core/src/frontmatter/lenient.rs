//! Second readings of a frontmatter that is not valid YAML, in the ways real definition files
//! need — each kept only when the YAML then parses, and each with a warning saying how to
//! write the file so every YAML reader agrees:
//!
//! * an unquoted value with `: ` in it (`description: Use this agent when… Examples:
//!   <example>Context: …`, as generated definitions have it): strict YAML reads the `: ` as
//!   another key, Claude Code reads the line as text, and so it is read here: as quoted text;
//! * a description running over lines that are not indented (as some shipped plugin agents
//!   have it, which Claude Code cannot read either): taken whole, up to the next key.
//!
//! Every rewrite keeps each line where it was, so an error found after it is reported on the
//! line of the file it is on.

use super::{Entry, FrontmatterError, Value, Warning};

/// The frontmatter's keys. YAML that does not parse is read again the ways real files need
/// (each with a warning): unquoted values with `: ` in them quoted, then a description running
/// over unindented lines taken whole. When neither helps, the strict error stands.
pub fn entries(yaml: &str, first_line: usize, warnings: &mut Vec<Warning>) -> Result<Vec<Entry>, FrontmatterError> {
    let strict = match super::read(yaml, first_line) {
        Ok(entries) => return Ok(entries),
        Err(e) => e,
    };
    if let Some(entries) = with_colon_values_quoted(yaml, first_line, warnings) {
        return Ok(entries);
    }
    let Some(folded) = fold_description(yaml) else { return Err(strict) };
    let mut notes = Vec::new();
    let read = super::read(&folded.yaml, first_line)
        .ok()
        .or_else(|| with_colon_values_quoted(&folded.yaml, first_line, &mut notes));
    let Some(mut entries) = read else { return Err(strict) };
    if let Some(entry) = entries.iter_mut().find(|e| e.key == "description") {
        entry.value = Value::Text { text: folded.text, escaped: false };
    }
    let (from, to) = (first_line + folded.lines.0, first_line + folded.lines.1);
    warnings.push(Warning {
        line: Some(from),
        message: format!(
            "the description runs on over lines {}–{to} without indenting them, which YAML cannot read; they were \
             read as its text. Write it as a block (`description: |`, its lines indented below) so every YAML \
             reader agrees",
            from + 1
        ),
    });
    warnings.append(&mut notes);
    Ok(entries)
}

fn with_colon_values_quoted(yaml: &str, first_line: usize, warnings: &mut Vec<Warning>) -> Option<Vec<Entry>> {
    let (quoted, lines) = quote_colon_values(yaml)?;
    let entries = super::read(&quoted, first_line).ok()?;
    for (line, key) in lines {
        warnings.push(Warning {
            line: Some(first_line + line),
            message: format!(
                "the value of `{key}` has `: ` in it, which YAML reads as the start of another key; it was read as \
                 text, as Claude Code reads it. Quote it (`{key}: \"…\"`) or write it as a block (`{key}: |`) so \
                 every YAML reader agrees"
            ),
        });
    }
    Some(entries)
}

/// The lines of `yaml` whose unquoted value has `: ` in it (or ends in `:`) — which strict
/// YAML reads as another key, and Claude Code reads as text — with those values quoted, and
/// the line (0-based, in `yaml`) and key of each. Indented lines continuing such a value are
/// joined to it and left empty, so every other line keeps its number. `None` when no line
/// is of that kind.
fn quote_colon_values(yaml: &str) -> Option<(String, Vec<(usize, String)>)> {
    let lines: Vec<&str> = yaml.lines().collect();
    let mut out: Vec<String> = lines.iter().map(|l| (*l).to_string()).collect();
    let mut quoted = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some((key, value)) = plain_key_value(lines[i]) else {
            i += 1;
            continue;
        };
        let mut parts = vec![value.trim_end()];
        let mut end = i + 1;
        while end < lines.len() && lines[end].starts_with([' ', '\t']) && !lines[end].trim().is_empty() {
            parts.push(lines[end].trim());
            end += 1;
        }
        let whole = parts.join(" ");
        if whole.contains(": ") || whole.contains(":\t") || whole.ends_with(':') {
            out[i] = format!("{key}: '{}'", whole.replace('\'', "''"));
            for line in out.iter_mut().take(end).skip(i + 1) {
                line.clear();
            }
            quoted.push((i, key.to_string()));
            i = end;
        } else {
            i += 1;
        }
    }
    if quoted.is_empty() {
        return None;
    }
    let mut text = out.join("\n");
    text.push('\n');
    Some((text, quoted))
}

/// `key: value` at the start of a line, when the value is a plain scalar (not quoted, not a
/// block, list, mapping, anchor, alias, tag or comment).
fn plain_key_value(line: &str) -> Option<(&str, &str)> {
    let (key, rest) = line.split_once(':')?;
    let key_ok = key.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && key.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'));
    if !key_ok || !rest.starts_with([' ', '\t']) {
        return None;
    }
    let value = rest.trim_start();
    let plain = value.chars().next().is_some_and(|c| !"'\"|>[{&*!%@`#".contains(c));
    plain.then_some((key, value))
}

/// Keys that end a description running over unindented lines: a definition's own, and those
/// other tools put in the same files.
const KEYS_AFTER_A_DESCRIPTION: [&str; 15] = [
    "name",
    "description",
    "tools",
    "disallowedtools",
    "model",
    "permissionmode",
    "maxturns",
    "color",
    "skills",
    "hooks",
    "mcpservers",
    "memory",
    "effort",
    "background",
    "isolation",
];

/// A description that runs over unindented lines, taken out of the YAML.
#[derive(Debug, PartialEq, Eq)]
struct Folded {
    /// The YAML with the description's first line made `description: ''` and the lines it
    /// runs over left empty, so every other line keeps its number.
    yaml: String,
    /// The description: its first line's value and every line it runs over, as written.
    text: String,
    /// The description's line and its last line (0-based, in the YAML).
    lines: (usize, usize),
}

/// The description of `yaml` when it runs over lines that are not indented — as Claude
/// Code's generated files sometimes have it (`Examples:` ending the first line, then
/// `<example>` blocks at the start of lines), which YAML cannot read — up to the next line
/// starting a key definition files use (`model:`, `color:`, `tools:`…). `None` when the
/// description is not written so.
fn fold_description(yaml: &str) -> Option<Folded> {
    let lines: Vec<&str> = yaml.lines().collect();
    let (start, first) = lines.iter().enumerate().find_map(|(i, line)| {
        let (key, value) = line.split_once(':')?;
        (key == "description" && (value.is_empty() || value.starts_with([' ', '\t']))).then_some((i, value.trim()))
    })?;
    if first.starts_with(['"', '\'', '|', '>', '[', '{', '&', '*', '!']) {
        return None;
    }
    let end = (start + 1..lines.len()).find(|&i| starts_known_key(lines[i])).unwrap_or(lines.len());
    // Only a line that is no `key: value` says the description runs on: `description: a: b`
    // followed by keys of other tools is for the quoting above.
    let runs_over = lines[start + 1..end]
        .iter()
        .any(|l| !l.trim().is_empty() && !l.starts_with([' ', '\t', '#']) && !looks_like_key(l));
    if !runs_over {
        return None;
    }
    let mut text = first.to_string();
    for line in &lines[start + 1..end] {
        text.push('\n');
        text.push_str(line.trim_end());
    }
    let mut out: Vec<String> = lines.iter().map(|l| (*l).to_string()).collect();
    out[start] = "description: ''".into();
    for line in out.iter_mut().take(end).skip(start + 1) {
        line.clear();
    }
    let mut yaml = out.join("\n");
    yaml.push('\n');
    Some(Folded { yaml, text, lines: (start, end - 1) })
}

fn starts_known_key(line: &str) -> bool {
    let Some((key, rest)) = line.split_once(':') else { return false };
    let folded: String = key.chars().filter(|c| !matches!(c, '-' | '_')).flat_map(char::to_lowercase).collect();
    (rest.is_empty() || rest.starts_with([' ', '\t'])) && KEYS_AFTER_A_DESCRIPTION.contains(&folded.as_str())
}

/// Whether `line` starts with `name:` followed by nothing or a space.
fn looks_like_key(line: &str) -> bool {
    line.split_once(':').is_some_and(|(key, rest)| {
        !key.is_empty()
            && key.chars().all(|c| c.is_alphanumeric() || matches!(c, '_' | '-'))
            && (rest.is_empty() || rest.starts_with([' ', '\t']))
    })
}
