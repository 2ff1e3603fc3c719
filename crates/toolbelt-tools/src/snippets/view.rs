//! What the snippet tools return: a snippet in full ([`Snippet`]), a snippet as a list shows
//! it ([`SnippetLine`]), and their text.

use schemars::JsonSchema;
use serde::Serialize;

/// How much of a description a list line shows, in characters.
const LINE_DESCRIPTION_CHARS: usize = 120;

/// How many existing names an error about a missing snippet lists.
const NAMES_SHOWN: usize = 20;

/// A snippet in full.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Snippet {
    /// Its id (what `snippet_load` takes as `id`); kept when the snippet is replaced.
    pub id: i64,
    /// Its name, unique.
    pub name: String,
    /// What it does and when to use it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// Its language, lower-case (`rust`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// Its tags, lower-case, sorted.
    pub tags: Vec<String>,
    /// The code.
    pub code: String,
    /// When it was first saved (RFC 3339, UTC); kept when the snippet is replaced.
    pub created_at: String,
    /// When it was last saved (RFC 3339, UTC).
    pub updated_at: String,
}

impl Snippet {
    /// The snippet as text: name, description, language, tags and times, then the code in a
    /// fenced block marked with its language.
    pub fn text(&self) -> String {
        let mut text = format!("Snippet #{} `{}`", self.id, self.name);
        if !self.description.is_empty() {
            text.push_str(&format!(": {}", self.description));
        }
        let mut facts = Vec::new();
        if let Some(language) = &self.language {
            facts.push(format!("Language: {language}."));
        }
        if !self.tags.is_empty() {
            facts.push(format!("Tags: {}.", hashed(&self.tags)));
        }
        facts.push(if self.created_at == self.updated_at {
            format!("Saved {}.", self.created_at)
        } else {
            format!("Saved {}, first {}.", self.updated_at, self.created_at)
        });
        text.push('\n');
        text.push_str(&facts.join(" "));
        let fence = fence_for(&self.code);
        let body = self.code.strip_suffix('\n').unwrap_or(&self.code);
        text.push_str(&format!("\n{fence}{}\n{body}\n{fence}", self.language.as_deref().unwrap_or_default()));
        text
    }
}

/// A snippet as a list shows it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SnippetLine {
    /// Its id.
    pub id: i64,
    /// Its name (what `snippet_load` takes).
    pub name: String,
    /// What it does and when to use it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// Its language, lower-case.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// Its tags, lower-case, sorted.
    pub tags: Vec<String>,
}

impl SnippetLine {
    /// `name — description [language] #tag #tag`, the description's first line, cut short.
    pub fn text(&self) -> String {
        let mut text = self.name.clone();
        let first = self.description.lines().next().unwrap_or_default();
        if !first.is_empty() {
            let cut: String = first.chars().take(LINE_DESCRIPTION_CHARS).collect();
            let more = cut.len() < first.len() || self.description.lines().nth(1).is_some();
            text.push_str(&format!(" — {cut}{}", if more { "…" } else { "" }));
        }
        if let Some(language) = &self.language {
            text.push_str(&format!(" [{language}]"));
        }
        if !self.tags.is_empty() {
            text.push_str(&format!(" {}", hashed(&self.tags)));
        }
        text
    }
}

/// "#a #b".
fn hashed(tags: &[String]) -> String {
    tags.iter().map(|t| format!("#{t}")).collect::<Vec<_>>().join(" ")
}

/// A backtick fence longer than any run of backticks in `code` (three at least).
fn fence_for(code: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in code.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    "`".repeat((longest + 1).max(3))
}

/// The message for a snippet that is not there: what exists, and what to do.
pub(crate) fn missing_message(wanted: &str, similar: &[String], names: &[String], total: usize) -> String {
    if total == 0 {
        return format!("there is no snippet {wanted}: no snippets are saved yet (snippet_save saves one)");
    }
    let mut text = format!("there is no snippet {wanted}");
    if !similar.is_empty() {
        text.push_str(&format!("; did you mean {}?", listed(similar, "or")));
    }
    let shown = &names[..names.len().min(NAMES_SHOWN)];
    let more = total.saturating_sub(shown.len());
    let count = if total == 1 { "1 snippet exists".to_string() } else { format!("{total} snippets exist") };
    let sep = if similar.is_empty() { "; " } else { " " };
    text.push_str(&match more {
        0 => format!("{sep}{count}: {}", listed(shown, "and")),
        _ => format!(
            "{sep}{count}, among them {}, and {more} more; snippet_list searches them by words, tags or language",
            listed(shown, ",")
        ),
    });
    text
}

/// "`a`, `b` or `c`" (with `last` "or"), "`a`, `b`, `c`" (with ",").
fn listed(names: &[String], last: &str) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    match quoted.split_last() {
        Some((tail, rest)) if !rest.is_empty() && last != "," => format!("{} {last} {tail}", rest.join(", ")),
        _ => quoted.join(", "),
    }
}

/// Milliseconds since the epoch as RFC 3339 in UTC, to the millisecond.
pub(crate) fn rfc3339_ms(ms: i64) -> String {
    toolbelt_core::time::rfc3339_millis(ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(description: &str, language: Option<&str>, tags: &[&str]) -> SnippetLine {
        SnippetLine {
            id: 1,
            name: "retry".into(),
            description: description.into(),
            language: language.map(str::to_string),
            tags: tags.iter().map(|t| t.to_string()).collect(),
        }
    }

    #[test]
    fn a_line_is_name_description_language_tags() {
        assert_eq!(
            line("Retry with backoff", Some("rust"), &["http", "net"]).text(),
            "retry — Retry with backoff [rust] #http #net"
        );
        assert_eq!(line("", None, &[]).text(), "retry");
        assert_eq!(line("first\nsecond", None, &[]).text(), "retry — first…");
        let long = "x".repeat(300);
        assert_eq!(
            line(&long, None, &[]).text().chars().count(),
            "retry — ".chars().count() + LINE_DESCRIPTION_CHARS + 1
        );
    }

    #[test]
    fn code_is_fenced_past_its_own_backticks() {
        let snippet = Snippet {
            id: 3,
            name: "md".into(),
            description: String::new(),
            language: Some("markdown".into()),
            tags: vec![],
            code: "```sh\nls\n```\n".into(),
            created_at: rfc3339_ms(0),
            updated_at: rfc3339_ms(0),
        };
        assert_eq!(
            snippet.text(),
            "Snippet #3 `md`\nLanguage: markdown. Saved 1970-01-01T00:00:00.000Z.\n````markdown\n```sh\nls\n```\n````"
        );
    }

    #[test]
    fn times_are_rfc3339() {
        assert_eq!(rfc3339_ms(1_700_000_000_123), "2023-11-14T22:13:20.123Z");
        assert_eq!(rfc3339_ms(951_782_400_000), "2000-02-29T00:00:00.000Z");
    }

    #[test]
    fn a_missing_snippet_names_what_exists() {
        let names: Vec<String> = ["alpha", "beta"].iter().map(|s| s.to_string()).collect();
        assert_eq!(
            missing_message("named `alpah`", &names[..1], &names, 2),
            "there is no snippet named `alpah`; did you mean `alpha`? 2 snippets exist: `alpha` and `beta`"
        );
        assert_eq!(
            missing_message("#9", &[], &[], 0),
            "there is no snippet #9: no snippets are saved yet (snippet_save saves one)"
        );
        let many: Vec<String> = (0..30).map(|i| format!("s{i}")).collect();
        let text = missing_message("named `x`", &[], &many, 30);
        assert!(text.contains("among them `s0`, `s1`,"), "{text}");
        assert!(text.ends_with("`s19`, and 10 more; snippet_list searches them by words, tags or language"), "{text}");
    }
}
