//! Snippets in the PostgreSQL database a team's replicas share (`storage.url`): the user's
//! snippets become the team's, a project's its own on every replica, with the same tools,
//! limits and messages as the SQLite file.
//!
//! * **Rows**: one table, keyed by scope (`user`, or `project:` and the project's state
//!   directory name) and name; a save replaces the snippet of the same name in one statement
//!   (`INSERT … ON CONFLICT`), keeping its id and creation time, so replicas saving at once
//!   both land and one name is one snippet.
//! * **Search** is PostgreSQL's text search over a `tsvector` (names weighing most,
//!   then descriptions, then code) with a GIN index. The model's query is read as for FTS5
//!   ([`super::fts`]): words and phrases through `phraseto_tsquery`, prefixes as `word:*`,
//!   `OR` between terms, `-word` left out. Every match is ranked (`ts_rank`, 10 : 4 : 1).
//!   Text is split into words and folded before it is indexed or searched ([`fold`]: the words
//!   FTS5's `unicode61 remove_diacritics` finds), without an extension the database may not
//!   allow.

use std::sync::Arc;

use postgres::types::ToSql;

use super::fts::{FtsQuery, Term};
use super::ops::{NewSnippet, Wanted, similar_names};
use super::search::Filter;
use super::store::{SnippetError, SnippetScope};
use super::view::{Snippet, SnippetLine, rfc3339_ms};
use crate::sqlite::now_ms;
use crate::storage::{PooledClient, SharedStorage, StorageError, no_nul};

const COMPONENT: &str = "snippets";
const VERSION: i32 = 1;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS shared_snippets (
    id          BIGSERIAL PRIMARY KEY,
    scope       TEXT NOT NULL,
    name        TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    language    TEXT,
    tags        TEXT[] NOT NULL DEFAULT '{}',
    code        TEXT NOT NULL,
    created_ms  BIGINT NOT NULL,
    updated_ms  BIGINT NOT NULL,
    doc         tsvector NOT NULL,
    UNIQUE (scope, name)
);
CREATE INDEX IF NOT EXISTS shared_snippets_doc ON shared_snippets USING GIN (doc);
CREATE INDEX IF NOT EXISTS shared_snippets_tags ON shared_snippets USING GIN (tags);
CREATE INDEX IF NOT EXISTS shared_snippets_by_language ON shared_snippets (scope, language, name);
";

/// The index of a snippet: its name (A), description (B) and code (D), each folded
/// ([`fold`]); parameters `$8`, `$9`, `$10` of the save.
const DOC: &str = "setweight(to_tsvector('simple', $8), 'A') || setweight(to_tsvector('simple', $9), 'B') || \
                   setweight(to_tsvector('simple', $10), 'D')";

/// The weights of code (D), descriptions (B) and names (A), in `ts_rank`'s order D, C, B, A.
const WEIGHTS: &str = "'{0.1, 0.1, 0.4, 1.0}'";

/// How many names the error about a missing snippet carries.
const NAMES_CARRIED: i64 = 20;

const LINE: &str = "id, name, description, language, tags";

/// Names in byte order, as SQLite sorts them (a database's collation may ignore case and
/// punctuation).
const BY_NAME: &str = "name COLLATE \"C\"";

/// The snippets of one scope in shared storage.
#[derive(Debug, Clone)]
pub struct SharedSnippets {
    shared: Arc<SharedStorage>,
    scope: String,
}

impl PartialEq for SharedSnippets {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared) && self.scope == other.scope
    }
}

impl Eq for SharedSnippets {}

impl SharedSnippets {
    /// The snippets of `scope` in `shared`; `project` names the project (its state
    /// directory's name) for a project's own.
    pub fn new(shared: Arc<SharedStorage>, scope: SnippetScope, project: &str) -> Self {
        let scope = match scope {
            SnippetScope::User => "user".to_string(),
            SnippetScope::Project => format!("project:{project}"),
        };
        Self { shared, scope }
    }

    fn with<T: Send>(
        &self,
        f: impl FnOnce(&mut PooledClient) -> Result<T, SnippetError> + Send,
    ) -> Result<T, SnippetError> {
        self.shared.with_client(COMPONENT, VERSION, SCHEMA, f)
    }

    fn err(&self) -> impl Fn(postgres::Error) -> SnippetError + '_ {
        |e| SnippetError::Shared(self.shared.error(&e))
    }

    /// Saves `new`, replacing the snippet of the same name (its id and creation time kept);
    /// whether it replaced one.
    pub(crate) fn save(&self, new: NewSnippet) -> Result<(Snippet, bool), SnippetError> {
        let now = now_ms();
        let code = no_nul(&new.code);
        let (name, description) = (no_nul(&new.name).into_owned(), no_nul(&new.description).into_owned());
        let (name_text, description_text, code_text) = (fold(&new.name), fold(&new.description), fold(&code));
        self.with(|c| {
            let params: [&(dyn ToSql + Sync); 10] = [
                &self.scope,
                &name,
                &description,
                &new.language,
                &new.tags,
                &code,
                &now,
                &name_text,
                &description_text,
                &code_text,
            ];
            let row = c
                .query_one(
                    &format!(
                        "INSERT INTO shared_snippets (scope, name, description, language, tags, code, created_ms, \
                         updated_ms, doc) VALUES ($1, $2, $3, $4, $5, $6, $7, $7, {DOC}) \
                         ON CONFLICT (scope, name) DO UPDATE SET description = EXCLUDED.description, \
                         language = EXCLUDED.language, tags = EXCLUDED.tags, code = EXCLUDED.code, doc = EXCLUDED.doc, \
                         updated_ms = GREATEST(EXCLUDED.updated_ms, shared_snippets.created_ms) \
                         RETURNING id, created_ms, updated_ms, (xmax <> 0) AS replaced"
                    ),
                    &params,
                )
                .map_err(self.err())?;
            let read = || -> Result<(i64, i64, i64, bool), postgres::Error> {
                Ok((row.try_get(0)?, row.try_get(1)?, row.try_get(2)?, row.try_get(3)?))
            };
            let (id, created, updated, replaced) = read().map_err(self.err())?;
            let snippet = Snippet {
                id,
                name,
                description,
                language: new.language,
                tags: new.tags,
                code: code.into_owned(),
                created_at: rfc3339_ms(created),
                updated_at: rfc3339_ms(updated),
            };
            Ok((snippet, replaced))
        })
    }

    /// The snippet `wanted`, in full.
    pub(crate) fn load(&self, wanted: &Wanted) -> Result<Snippet, SnippetError> {
        self.with(|c| {
            let columns =
                "SELECT id, name, description, language, tags, code, created_ms, updated_ms FROM shared_snippets";
            let row = match wanted {
                Wanted::Name(name) => {
                    c.query_opt(&format!("{columns} WHERE scope = $1 AND name = $2"), &[&self.scope, name])
                }
                Wanted::Id(id) => c.query_opt(&format!("{columns} WHERE scope = $1 AND id = $2"), &[&self.scope, id]),
            }
            .map_err(self.err())?;
            let Some(r) = row else { return Err(self.missing(c, wanted)?) };
            let read = || -> Result<Snippet, postgres::Error> {
                Ok(Snippet {
                    id: r.try_get(0)?,
                    name: r.try_get(1)?,
                    description: r.try_get(2)?,
                    language: r.try_get(3)?,
                    tags: r.try_get(4)?,
                    code: r.try_get(5)?,
                    created_at: rfc3339_ms(r.try_get(6)?),
                    updated_at: rfc3339_ms(r.try_get(7)?),
                })
            };
            read().map_err(self.err())
        })
    }

    /// Deletes the snippet named `name`; what it was.
    pub(crate) fn delete(&self, name: &str) -> Result<SnippetLine, SnippetError> {
        self.with(|c| {
            let row = c
                .query_opt(
                    &format!("DELETE FROM shared_snippets WHERE scope = $1 AND name = $2 RETURNING {LINE}"),
                    &[&self.scope, &name],
                )
                .map_err(self.err())?;
            match row {
                Some(r) => line(&r).map_err(self.err()),
                None => Err(self.missing(c, &Wanted::Name(name.to_string()))?),
            }
        })
    }

    /// How many snippets there are.
    pub(crate) fn count(&self) -> Result<usize, SnippetError> {
        self.with(|c| {
            let n: i64 = c
                .query_one("SELECT count(*) FROM shared_snippets WHERE scope = $1", &[&self.scope])
                .and_then(|r| r.try_get(0))
                .map_err(self.err())?;
            Ok(usize::try_from(n).unwrap_or(0))
        })
    }

    /// The snippets `filter` selects, best first (by name without a search), at most
    /// `filter.limit`, and how many it selects in all, in one snapshot.
    pub(crate) fn list(&self, filter: &Filter) -> Result<(Vec<SnippetLine>, usize), SnippetError> {
        let mut params: Vec<Box<dyn ToSql + Sync + Send>> = vec![Box::new(self.scope.clone())];
        let mut conditions = vec!["scope = $1".to_string()];
        if let Some(language) = &filter.language {
            params.push(Box::new(language.clone()));
            conditions.push(format!("language = ${}", params.len()));
        }
        if !filter.tags.is_empty() {
            params.push(Box::new(filter.tags.clone()));
            conditions.push(format!("tags @> ${}", params.len()));
        }
        let query = filter.query.as_ref().and_then(|q| tsquery(q, &mut params));
        // Ranked when something must match; a search that only leaves out is listed by name.
        let ranks = filter.query.as_ref().is_some_and(|q| !q.groups.is_empty());
        let order = match &query {
            Some(q) => {
                conditions.push(format!("doc @@ {q}"));
                if ranks { format!("ts_rank({WEIGHTS}, doc, {q}) DESC, {BY_NAME}") } else { BY_NAME.to_string() }
            }
            None => BY_NAME.to_string(),
        };
        let limit = i64::try_from(filter.limit).unwrap_or(i64::MAX);
        let sql_where = conditions.join(" AND ");
        self.with(|c| {
            let mut tx = c
                .build_transaction()
                .isolation_level(postgres::IsolationLevel::RepeatableRead)
                .read_only(true)
                .start()
                .map_err(self.err())?;
            let refs: Vec<&(dyn ToSql + Sync)> = params.iter().map(|p| p.as_ref() as &(dyn ToSql + Sync)).collect();
            let total: i64 = tx
                .query_one(&format!("SELECT count(*) FROM shared_snippets WHERE {sql_where}"), &refs)
                .and_then(|r| r.try_get(0))
                .map_err(self.err())?;
            let mut with_limit = refs.clone();
            with_limit.push(&limit);
            let rows = tx
                .query(
                    &format!(
                        "SELECT {LINE} FROM shared_snippets WHERE {sql_where} ORDER BY {order} LIMIT ${}",
                        with_limit.len()
                    ),
                    &with_limit,
                )
                .map_err(self.err())?;
            let lines = rows.iter().map(line).collect::<Result<Vec<_>, _>>().map_err(self.err())?;
            tx.commit().map_err(self.err())?;
            Ok((lines, usize::try_from(total).unwrap_or(0)))
        })
    }

    /// The error for `wanted`, naming the closest names and some that exist.
    fn missing(&self, c: &mut PooledClient, wanted: &Wanted) -> Result<SnippetError, SnippetError> {
        let total: i64 = c
            .query_one("SELECT count(*) FROM shared_snippets WHERE scope = $1", &[&self.scope])
            .and_then(|r| r.try_get(0))
            .map_err(self.err())?;
        let similar = match wanted {
            Wanted::Name(name) => {
                let all: Vec<String> = c
                    .query(
                        &format!("SELECT name FROM shared_snippets WHERE scope = $1 ORDER BY {BY_NAME}"),
                        &[&self.scope],
                    )
                    .map_err(self.err())?
                    .iter()
                    .map(|r| r.try_get(0))
                    .collect::<Result<_, _>>()
                    .map_err(self.err())?;
                similar_names(name, &all)
            }
            Wanted::Id(_) => Vec::new(),
        };
        let names: Vec<String> = c
            .query(
                &format!("SELECT name FROM shared_snippets WHERE scope = $1 ORDER BY {BY_NAME} LIMIT $2"),
                &[&self.scope, &NAMES_CARRIED],
            )
            .map_err(self.err())?
            .iter()
            .map(|r| r.try_get(0))
            .collect::<Result<_, _>>()
            .map_err(self.err())?;
        Ok(SnippetError::Missing { wanted: wanted.shown(), similar, names, total: usize::try_from(total).unwrap_or(0) })
    }
}

/// A row of [`LINE`]'s columns.
fn line(r: &postgres::Row) -> Result<SnippetLine, postgres::Error> {
    Ok(SnippetLine {
        id: r.try_get(0)?,
        name: r.try_get(1)?,
        description: r.try_get(2)?,
        language: r.try_get(3)?,
        tags: r.try_get(4)?,
    })
}

/// The search as a `tsquery` expression over parameters it adds to `params`; `None` when
/// it holds nothing to search for.
fn tsquery(query: &FtsQuery, params: &mut Vec<Box<dyn ToSql + Sync + Send>>) -> Option<String> {
    let mut term = |t: &Term| -> String {
        if t.prefix {
            params.push(Box::new(prefix_query(&t.text)));
            format!("to_tsquery('simple', ${})", params.len())
        } else {
            params.push(Box::new(fold(&t.text)));
            format!("phraseto_tsquery('simple', ${})", params.len())
        }
    };
    let include: Vec<String> = query
        .groups
        .iter()
        .map(|group| format!("({})", group.iter().map(&mut term).collect::<Vec<_>>().join(" || ")))
        .collect();
    let exclude: Vec<String> = query.excluded.iter().map(&mut term).collect();
    let mut parts = Vec::new();
    if !include.is_empty() {
        parts.push(include.join(" && "));
    }
    if !exclude.is_empty() {
        parts.push(format!("!!({})", exclude.join(" || ")));
    }
    (!parts.is_empty()).then(|| format!("({})", parts.join(" && ")))
}

/// A prefix term (`pars*`, `"open fi"*`) as `tsquery` text: its words in a row, each a
/// quoted lexeme, the last a prefix (`'open' <-> 'fi':*`). Words are what lies between
/// characters that are neither letters nor digits, lowercased as the index is.
fn prefix_query(text: &str) -> String {
    let text = fold(text);
    let words: Vec<&str> = text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).collect();
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    match quoted.split_last() {
        Some((last, [])) => format!("{last}:*"),
        Some((last, rest)) => format!("{} <-> {last}:*", rest.join(" <-> ")),
        None => "''".to_string(),
    }
}

/// `text` as the index reads it, word for word as FTS5's `unicode61 remove_diacritics`
/// tokenizer does: lowercase, letters without their diacritics (`Àrg` reads `arg`), and
/// every character that is neither a letter nor a digit a space between words. PostgreSQL's
/// parser would otherwise keep `os.makedirs` or `file.rs` as one token (a host name), and a
/// search for `makedirs` would miss it.
fn fold(text: &str) -> String {
    use unicode_normalization::UnicodeNormalization as _;
    text.nfd()
        .filter(|c| !unicode_normalization::char::is_combining_mark(*c))
        .map(|c| if c.is_alphanumeric() { c } else { ' ' })
        .flat_map(char::to_lowercase)
        .collect()
}

impl From<StorageError> for SnippetError {
    fn from(e: StorageError) -> Self {
        SnippetError::Shared(e)
    }
}

#[cfg(test)]
mod tests {
    use super::prefix_query;

    #[test]
    fn prefixes_are_lexemes_in_a_row() {
        assert_eq!(prefix_query("Pars"), "'pars':*");
        assert_eq!(prefix_query("open fi"), "'open' <-> 'fi':*");
        assert_eq!(prefix_query("it's"), "'it' <-> 's':*");
        assert_eq!(prefix_query("Àrgu"), "'argu':*");
    }
}
