//! Filling a command tool's templates from a call's validated input. `{field}` is replaced
//! by the field's value; nothing put in is read again (a value holding `{x}` or `$(rm -rf ~)`
//! stays that text), and without `shell = true` no shell ever reads a value.
//!
//! In an argument:
//! - an argument that is exactly `{field}` becomes the value: one argument for a string, a
//!   number or a boolean, one per item for a list, the JSON text of a table, and none at all
//!   when the field is absent or null (an optional flag's value left out);
//! - an argument with text around its placeholders (`--limit={limit}`) is left out whole when
//!   one of them is absent or null, so an optional flag disappears with its value.

use serde_json::{Map, Value};

pub(crate) use crate::web::support::triggers::{Piece, pieces};

/// The text a value gives in a template: a string as it is, anything else as JSON; `None`
/// for null.
fn text_of(value: &Value) -> Option<String> {
    match value {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

/// The arguments one argument template gives for `input`.
pub fn arg(template: &str, input: &Map<String, Value>) -> Vec<String> {
    let parts = pieces(template);
    if let [Piece::Field(name)] = parts.as_slice() {
        return match input.get(*name) {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => items.iter().filter_map(text_of).collect(),
            Some(value) => text_of(value).into_iter().collect(),
        };
    }
    let mut out = String::with_capacity(template.len());
    for part in parts {
        match part {
            Piece::Text(text) => out.push_str(text),
            Piece::Var(name) => out.push_str(&format!("${{{name}}}")),
            Piece::Field(name) => match input.get(name).and_then(text_of) {
                Some(text) => out.push_str(&text),
                None => return Vec::new(),
            },
        }
    }
    vec![out]
}

/// `text` as one bash word: bare when it is plain, else in single quotes.
pub fn quote(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '.' | '_' | '-' | '+' | ',' | '@' | '=' | ':'));
    if plain { text.to_owned() } else { quote_always(text) }
}

/// A `shell = true` command line: each `{field}` becomes its value quoted as one bash word
/// (a list, each item quoted; an absent field, `''`), so a value is data, never code.
pub fn shell_line(template: &str, input: &Map<String, Value>) -> String {
    let quoted: Result<String, std::convert::Infallible> =
        words(template, input, &mut |_, value| Ok(quote_always(&value)));
    quoted.unwrap_or_else(|never| match never {})
}

/// The prefix of the variables a `shell = true` line reads its values from.
const VALUE_VAR: &str = "TOOLBELT_VALUE_";

/// A `shell = true` line as the shell runs it: each `{field}` becomes `"$TOOLBELT_VALUE_N"`
/// (a list, one such word per item; an absent field, `""`), with those variables: the shell
/// expands a variable to a value it never reads as code, wherever the placeholder stands
/// (a heredoc, a `$(…)`, backquotes). A value holding a NUL byte cannot be a variable's.
pub fn shell_env_line(template: &str, input: &Map<String, Value>) -> Result<(String, Vec<(String, String)>), String> {
    let mut vars: Vec<(String, String)> = Vec::new();
    let line = words(template, input, &mut |name, value| {
        if value.contains('\0') {
            return Err(format!("the value of `{name}` holds a NUL byte, which a command cannot be given"));
        }
        let var = format!("{VALUE_VAR}{}", vars.len());
        vars.push((var.clone(), value));
        Ok(format!("\"${var}\""))
    })?;
    Ok((line, vars))
}

/// `template` with each `{field}` replaced by what `word` makes of its value (each item of a
/// list, space-separated; an absent field as an empty string); `${VAR}` kept as written.
fn words<E>(
    template: &str,
    input: &Map<String, Value>,
    word: &mut dyn FnMut(&str, String) -> Result<String, E>,
) -> Result<String, E> {
    let mut out = String::with_capacity(template.len());
    for part in pieces(template) {
        match part {
            Piece::Text(text) => out.push_str(text),
            Piece::Var(name) => out.push_str(&format!("${{{name}}}")),
            Piece::Field(name) => match input.get(name) {
                Some(Value::Array(items)) => {
                    let mut made = Vec::new();
                    for item in items.iter().filter_map(text_of) {
                        made.push(word(name, item)?);
                    }
                    out.push_str(&made.join(" "));
                }
                value => out.push_str(&word(name, value.and_then(text_of).unwrap_or_default())?),
            },
        }
    }
    Ok(out)
}

/// `template` with each `${VAR}` replaced by what `var` gives for it (or its error), every
/// `{field}` kept as written.
pub fn with_vars<E>(template: &str, var: impl Fn(&str) -> Result<String, E>) -> Result<String, E> {
    let mut out = String::with_capacity(template.len());
    for part in pieces(template) {
        match part {
            Piece::Text(text) => out.push_str(text),
            Piece::Field(name) => out.push_str(&format!("{{{name}}}")),
            Piece::Var(name) => out.push_str(&var(name)?),
        }
    }
    Ok(out)
}

/// The first placeholder of a bash line that stands inside quotes (`'{q}'`, `"{q}"`), where
/// it could not be one word of its own.
pub fn quoted_placeholder(template: &str) -> Option<String> {
    let (mut single, mut double, mut escaped) = (false, false, false);
    let chars: Vec<char> = template.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if escaped {
            escaped = false;
        } else if c == '\\' && !single {
            escaped = true;
        } else if c == '\'' && !double {
            single = !single;
        } else if c == '"' && !single {
            double = !double;
        } else if c == '{' && (single || double) {
            let name: String = chars[i + 1..].iter().take_while(|c| c.is_ascii_alphanumeric() || **c == '_').collect();
            if !name.is_empty() && chars.get(i + 1 + name.chars().count()) == Some(&'}') {
                return Some(name);
            }
        }
        i += 1;
    }
    None
}

/// Whether a program would read `value`, given as an argument of its own, as an option: it
/// starts with `-` and is no number (`-5`, `-0.5`).
pub fn reads_as_option(value: &str) -> bool {
    value.starts_with('-') && value.len() > 1 && value.parse::<f64>().is_err()
}

/// `text` in single quotes, always: bare text next to a placeholder could join it into a
/// word the shell reads differently (`{x}` right after `=`).
fn quote_always(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn input(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn arguments_take_values_whole_and_drop_with_absent_ones() {
        let i = input(json!({"env": "prod", "n": 3, "files": ["a b", "c"], "opt": null, "t": {"k": 1}}));
        assert_eq!(arg("{env}", &i), ["prod"]);
        assert_eq!(arg("{files}", &i), ["a b", "c"]);
        assert_eq!(arg("--n={n}", &i), ["--n=3"]);
        assert!(arg("--opt={opt}", &i).is_empty() && arg("{missing}", &i).is_empty());
        assert_eq!(arg("{t}", &i), [r#"{"k":1}"#]);
        assert_eq!(arg("plain", &i), ["plain"]);
        let evil = input(json!({"x": "$(touch /tmp/pwned) {env}"}));
        assert_eq!(arg("{x}", &evil), ["$(touch /tmp/pwned) {env}"]);
    }

    #[test]
    fn a_shell_line_runs_its_values_from_variables_and_refuses_quoted_placeholders() {
        let i = input(json!({"q": "$(id)", "files": ["a", "b c"]}));
        let (line, vars) = shell_env_line("cat <<EOF\n{q}\nEOF\ngrep {q} {files} {none}", &i).unwrap();
        assert_eq!(
            line,
            "cat <<EOF\n\"$TOOLBELT_VALUE_0\"\nEOF\ngrep \"$TOOLBELT_VALUE_1\" \"$TOOLBELT_VALUE_2\" \"$TOOLBELT_VALUE_3\" \"$TOOLBELT_VALUE_4\""
        );
        assert_eq!(vars[0].1, "$(id)");
        assert_eq!(vars[3].1, "b c");
        assert_eq!(vars[4].1, "");
        assert_eq!(quoted_placeholder("jq '.n==\"{q}\"'").as_deref(), Some("q"));
        assert_eq!(quoted_placeholder("grep \"{q}\" ."), Some("q".to_string()));
        assert_eq!(quoted_placeholder("grep {q} '{literal' \\'{x}"), None);
        assert!(
            reads_as_option("--pre=./x") && !reads_as_option("-5") && !reads_as_option("-") && !reads_as_option("a-b")
        );
    }

    #[test]
    fn a_shell_line_quotes_every_value() {
        let i = input(json!({"q": "it's $(id)", "files": ["a", "b c"]}));
        assert_eq!(shell_line("grep -r {q} {files} | head", &i), r"grep -r 'it'\''s $(id)' 'a' 'b c' | head");
        assert_eq!(shell_line("echo {missing}", &i), "echo ''");
    }
}
