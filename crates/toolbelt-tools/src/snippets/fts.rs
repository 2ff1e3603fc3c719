//! A search as the model writes it, turned into an FTS5 query that cannot fail to parse.
//!
//! What is understood: words (all must match: `retry http`), prefixes (`pars*`), phrases
//! (`"open file"`, `"open fi"*`), `OR` between two terms (`tokio OR async-std`, binding
//! tighter than the implicit AND: `http retry OR backoff` is `http AND (retry OR backoff)`)
//! and `-word` to leave out what matches it. Everything else is text: every term reaches
//! FTS5 inside double quotes (a `"` in it doubled), so `:`, `(`, `^`, `NEAR`, `AND` or a stray
//! `"` are searched for, never parsed as syntax. A term with no letter or digit in it is
//! dropped (the tokenizer would find no word in it either).

use super::store::SnippetError;

/// The most terms one search may have.
pub const MAX_TERMS: usize = 64;

/// A search made safe for FTS5's `MATCH`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FtsQuery {
    /// What must match, when anything must.
    pub include: Option<String>,
    /// What must not match, when anything is left out.
    pub exclude: Option<String>,
    /// Every term that must or may match (not the excluded ones), quoted.
    pub terms: Vec<String>,
    /// The same search as terms, for PostgreSQL's text search ([`super::postgres`]): groups
    /// of alternatives that must all match, and what must not.
    pub groups: Vec<Vec<Term>>,
    /// Terms a match must not have.
    pub excluded: Vec<Term>,
}

/// One term as the model wrote it: a word or a phrase, its last word a prefix when `prefix`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Term {
    /// The word or phrase, unquoted.
    pub text: String,
    /// Whether its last word is a prefix (`pars*`).
    pub prefix: bool,
}

impl FtsQuery {
    /// The expression for `MATCH` when there is something to include: `(include) NOT
    /// (exclude)`.
    pub fn matching(&self) -> Option<String> {
        let include = self.include.as_ref()?;
        Some(match &self.exclude {
            Some(exclude) => format!("({include}) NOT ({exclude})"),
            None => include.clone(),
        })
    }

    /// Any of the terms that must or may match: `"a" OR "b" *`; empty when there are none.
    pub fn any_term(&self) -> String {
        self.terms.join(" OR ")
    }
}

/// One piece of the search, as read.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    /// A word or phrase, quoted for FTS5, and as written.
    Term { fts: String, negated: bool, term: Term },
    /// A bare `OR`.
    Or,
}

/// The search `query` as FTS5 expressions; `Ok(None)` when it holds no word to search for.
pub(crate) fn parse(query: &str) -> Result<Option<FtsQuery>, SnippetError> {
    let pieces = pieces(query);
    let terms = pieces.iter().filter(|p| matches!(p, Piece::Term { .. })).count();
    if terms > MAX_TERMS {
        return Err(SnippetError::Invalid(format!(
            "the query has {terms} terms, more than the {MAX_TERMS} a search may have: search for the few words \
             that matter"
        )));
    }
    // Positive terms in groups of alternatives (`a OR b`), negated terms apart.
    let mut groups: Vec<Vec<String>> = Vec::new();
    let mut excluded: Vec<String> = Vec::new();
    let mut term_groups: Vec<Vec<Term>> = Vec::new();
    let mut excluded_terms: Vec<Term> = Vec::new();
    let mut joins = false;
    for (i, piece) in pieces.iter().enumerate() {
        match piece {
            Piece::Term { fts, negated: true, term } => {
                excluded.push(fts.clone());
                excluded_terms.push(term.clone());
                joins = false;
            }
            Piece::Term { fts, negated: false, term } => match (groups.last_mut(), term_groups.last_mut()) {
                (Some(group), Some(terms)) if joins => {
                    group.push(fts.clone());
                    terms.push(term.clone());
                    joins = false;
                }
                _ => {
                    groups.push(vec![fts.clone()]);
                    term_groups.push(vec![term.clone()]);
                }
            },
            Piece::Or => {
                let after_term = i > 0 && matches!(pieces[i - 1], Piece::Term { negated: false, .. });
                let before_term = matches!(pieces.get(i + 1), Some(Piece::Term { negated: false, .. }));
                if after_term && before_term {
                    joins = true;
                } else {
                    // Not between two terms: the word "or" itself.
                    groups.push(vec![quoted("OR")]);
                    term_groups.push(vec![Term { text: "OR".into(), prefix: false }]);
                }
            }
        }
    }
    if groups.is_empty() && excluded.is_empty() {
        return Ok(None);
    }
    let terms: Vec<String> = groups.iter().flatten().cloned().collect();
    let include = (!groups.is_empty()).then(|| {
        let parts: Vec<String> = groups
            .into_iter()
            .map(|g| if g.len() == 1 { g.concat() } else { format!("({})", g.join(" OR ")) })
            .collect();
        parts.join(" AND ")
    });
    let exclude = (!excluded.is_empty()).then(|| excluded.join(" OR "));
    Ok(Some(FtsQuery { include, exclude, terms, groups: term_groups, excluded: excluded_terms }))
}

/// The pieces of `query`: quoted phrases, bare words (trailing `*` making a prefix), `-` in
/// front of either to exclude, bare `OR`. Terms without a letter or digit are dropped.
fn pieces(query: &str) -> Vec<Piece> {
    let chars: Vec<char> = query.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i].is_whitespace() {
            i += 1;
            continue;
        }
        let negated = chars[i] == '-' && chars.get(i + 1).is_some_and(|c| !c.is_whitespace());
        if negated {
            i += 1;
        }
        let (text, phrase) = if chars[i] == '"' {
            let start = i + 1;
            let end = chars[start..].iter().position(|&c| c == '"').map_or(chars.len(), |n| start + n);
            i = (end + 1).min(chars.len());
            (chars[start..end].iter().collect::<String>(), true)
        } else {
            let start = i;
            while i < chars.len() && !chars[i].is_whitespace() {
                i += 1;
            }
            (chars[start..i].iter().collect::<String>(), false)
        };
        let mut prefix = false;
        let text = if phrase {
            while i < chars.len() && chars[i] == '*' {
                prefix = true;
                i += 1;
            }
            text
        } else {
            let trimmed = text.trim_end_matches('*');
            prefix = trimmed.len() < text.len();
            trimmed.to_string()
        };
        if !phrase && !negated && !prefix && text == "OR" {
            out.push(Piece::Or);
            continue;
        }
        if !text.chars().any(char::is_alphanumeric) {
            continue;
        }
        let fts = if prefix { format!("{} *", quoted(&text)) } else { quoted(&text) };
        out.push(Piece::Term { fts, negated, term: Term { text, prefix } });
    }
    out
}

/// `text` as an FTS5 string: in double quotes, each `"` doubled.
fn quoted(text: &str) -> String {
    format!("\"{}\"", text.replace('"', "\"\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn include(query: &str) -> Option<String> {
        parse(query).unwrap().and_then(|q| q.include)
    }

    #[test]
    fn words_prefixes_and_phrases() {
        assert_eq!(include("retry http").as_deref(), Some(r#""retry" AND "http""#));
        assert_eq!(include("pars*").as_deref(), Some(r#""pars" *"#));
        assert_eq!(include(r#""open file""#).as_deref(), Some(r#""open file""#));
        assert_eq!(include(r#""open fi"*"#).as_deref(), Some(r#""open fi" *"#));
        assert_eq!(include("http retry OR backoff").as_deref(), Some(r#""http" AND ("retry" OR "backoff")"#));
        let q = parse("http retry OR back* -old").unwrap().unwrap();
        assert_eq!(q.any_term(), r#""http" OR "retry" OR "back" *"#);
    }

    #[test]
    fn exclusions_stand_apart() {
        let q = parse("http -async -\"old api\"").unwrap().unwrap();
        assert_eq!(q.include.as_deref(), Some(r#""http""#));
        assert_eq!(q.exclude.as_deref(), Some(r#""async" OR "old api""#));
        assert_eq!(q.matching().as_deref(), Some(r#"("http") NOT ("async" OR "old api")"#));
        let only = parse("-legacy").unwrap().unwrap();
        assert_eq!((only.include.clone(), only.matching()), (None, None));
        assert_eq!(only.exclude.as_deref(), Some(r#""legacy""#));
    }

    #[test]
    fn syntax_characters_are_text() {
        assert_eq!(include(r#"a"b"#).as_deref(), Some(r#""a""b""#));
        assert_eq!(include("std::fs").as_deref(), Some(r#""std::fs""#));
        assert_eq!(include("name:foo").as_deref(), Some(r#""name:foo""#));
        assert_eq!(include("f(x) AND NOT y").as_deref(), Some(r#""f(x)" AND "AND" AND "NOT" AND "y""#));
        assert_eq!(include("NEAR(a b)").as_deref(), Some(r#""NEAR(a" AND "b)""#));
        assert_eq!(include(r#""unclosed phrase"#).as_deref(), Some(r#""unclosed phrase""#));
        assert_eq!(include("OR").as_deref(), Some(r#""OR""#), "a lone OR is the word");
        assert_eq!(include("a OR").as_deref(), Some(r#""a" AND "OR""#));
        assert_eq!(include("- -- * ** \" ( ) : ^ \"\""), None);
        assert_eq!(parse("(((").unwrap(), None);
    }

    #[test]
    fn too_many_terms_is_an_error() {
        let words: Vec<String> = (0..=MAX_TERMS).map(|i| format!("w{i}")).collect();
        assert!(parse(&words.join(" ")).is_err());
    }
}
