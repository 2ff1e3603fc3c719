//! Saving, loading and deleting snippets: each call is one transaction.
//!
//! Changes take the write lock when they begin (`BEGIN IMMEDIATE`), so a save reads whether
//! the name exists and writes with no other writer in between: two processes saving at once
//! both land, and two saving the same name leave one snippet (the later one's), never two.
//! Reads run in a snapshot (WAL) and never wait for a writer. The full-text index is changed
//! here, in the same transaction as the rows, so it never disagrees with them. Lists and
//! searches are in [`super::search`].

use rusqlite::{Connection, OptionalExtension as _, TransactionBehavior, params};

use super::store::{SnippetError, SnippetStore};
use super::view::{Snippet, SnippetLine, rfc3339_ms};
use crate::sqlite::now_ms;

/// How many names close to a missing one its error suggests.
const SIMILAR_SHOWN: usize = 3;

/// How many existing names the error about a missing snippet carries.
const NAMES_CARRIED: usize = 20;

/// A snippet to save, its fields already checked and normalized.
#[derive(Debug, Clone)]
pub(crate) struct NewSnippet {
    /// Its name.
    pub name: String,
    /// Its description (may be empty).
    pub description: String,
    /// Its language.
    pub language: Option<String>,
    /// Its tags, sorted, each once.
    pub tags: Vec<String>,
    /// The code.
    pub code: String,
}

/// A snippet to find.
#[derive(Debug, Clone)]
pub(crate) enum Wanted {
    /// By its name.
    Name(String),
    /// By its id.
    Id(i64),
}

impl Wanted {
    /// "named `x`" or "#3", as messages say it.
    pub(crate) fn shown(&self) -> String {
        match self {
            Wanted::Name(name) => format!("named `{name}`"),
            Wanted::Id(id) => format!("#{id}"),
        }
    }
}

impl SnippetStore {
    /// Saves `new`: a new snippet, or the one of the same name replaced (its id and creation
    /// time kept). Returns it, and whether it replaced one.
    pub(crate) fn save(&self, new: NewSnippet) -> Result<(Snippet, bool), SnippetError> {
        if let Some(shared) = &self.shared {
            return shared.save(new);
        }
        let mut conn = self.writable()?;
        let e = |err| self.sql(err);
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(e)?;
        let now = now_ms();
        let existing: Option<i64> =
            tx.query_row("SELECT id FROM snippets WHERE name = ?1", [&new.name], |r| r.get(0)).optional().map_err(e)?;
        let tags = new.tags.join(" ");
        let id = match existing {
            Some(id) => {
                tx.execute(
                    "UPDATE snippets SET description = ?1, language = ?2, tags = ?3, \
                     updated_ms = max(?4, created_ms) WHERE id = ?5",
                    params![new.description, new.language, tags, now, id],
                )
                .map_err(e)?;
                tx.execute("UPDATE snippet_code SET code = ?1 WHERE snippet = ?2", params![new.code, id]).map_err(e)?;
                tx.execute("DELETE FROM snippet_tags WHERE snippet = ?1", [id]).map_err(e)?;
                tx.execute("DELETE FROM snippets_fts WHERE rowid = ?1", [id]).map_err(e)?;
                id
            }
            None => {
                tx.execute(
                    "INSERT INTO snippets (name, description, language, tags, created_ms, updated_ms) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?5)",
                    params![new.name, new.description, new.language, tags, now],
                )
                .map_err(e)?;
                let id = tx.last_insert_rowid();
                tx.execute("INSERT INTO snippet_code (snippet, code) VALUES (?1, ?2)", params![id, new.code])
                    .map_err(e)?;
                id
            }
        };
        tx.execute(
            "INSERT INTO snippets_fts (rowid, name, description, code) VALUES (?1, ?2, ?3, ?4)",
            params![id, new.name, new.description, new.code],
        )
        .map_err(e)?;
        {
            let mut insert = tx.prepare("INSERT INTO snippet_tags (tag, snippet) VALUES (?1, ?2)").map_err(e)?;
            for tag in &new.tags {
                insert.execute(params![tag, id]).map_err(e)?;
            }
        }
        let snippet =
            self.read(&tx, &Wanted::Id(id))?.ok_or_else(|| self.corrupt(format!("snippet #{id} vanished as saved")))?;
        tx.commit().map_err(e)?;
        Ok((snippet, existing.is_some()))
    }

    /// The snippet `wanted`, in full.
    pub(crate) fn load(&self, wanted: &Wanted) -> Result<Snippet, SnippetError> {
        if let Some(shared) = &self.shared {
            return shared.load(wanted);
        }
        let Some(mut conn) = self.open(false)? else { return Err(self.missing_in_empty(wanted)) };
        let tx = conn.transaction().map_err(|e| self.sql(e))?;
        let found = match self.read(&tx, wanted)? {
            Some(snippet) => snippet,
            None => return Err(self.missing(&tx, wanted)?),
        };
        tx.finish().map_err(|e| self.sql(e))?;
        Ok(found)
    }

    /// Deletes the snippet named `name`; returns what it was.
    pub(crate) fn delete(&self, name: &str) -> Result<SnippetLine, SnippetError> {
        if let Some(shared) = &self.shared {
            return shared.delete(name);
        }
        let wanted = Wanted::Name(name.to_string());
        let Some(mut conn) = self.open(false)? else { return Err(self.missing_in_empty(&wanted)) };
        let e = |err| self.sql(err);
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(e)?;
        let Some(snippet) = self.read(&tx, &wanted)? else { return Err(self.missing(&tx, &wanted)?) };
        // The code and tags go with it (ON DELETE CASCADE).
        tx.execute("DELETE FROM snippets WHERE id = ?1", [snippet.id]).map_err(e)?;
        tx.execute("DELETE FROM snippets_fts WHERE rowid = ?1", [snippet.id]).map_err(e)?;
        tx.commit().map_err(e)?;
        let Snippet { id, name, description, language, tags, .. } = snippet;
        Ok(SnippetLine { id, name, description, language, tags })
    }

    /// The snippet `wanted`, if it exists.
    fn read(&self, conn: &Connection, wanted: &Wanted) -> Result<Option<Snippet>, SnippetError> {
        let columns = "SELECT s.id, s.name, s.description, s.language, s.tags, c.code, s.created_ms, s.updated_ms \
                       FROM snippets s JOIN snippet_code c ON c.snippet = s.id";
        let read = |r: &rusqlite::Row<'_>| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?, r.get(7)?))
        };
        type Raw = (i64, String, String, Option<String>, String, String, i64, i64);
        let raw: Option<Raw> = match wanted {
            Wanted::Name(name) => conn.query_row(&format!("{columns} WHERE s.name = ?1"), [name], read),
            Wanted::Id(id) => conn.query_row(&format!("{columns} WHERE s.id = ?1"), [id], read),
        }
        .optional()
        .map_err(|e| self.sql(e))?;
        let Some((id, name, description, language, tags, code, created, updated)) = raw else { return Ok(None) };
        Ok(Some(Snippet {
            id,
            name,
            description,
            language,
            tags: split_tags(&tags),
            code,
            created_at: rfc3339_ms(created),
            updated_at: rfc3339_ms(updated),
        }))
    }

    /// The error for `wanted` when nothing was saved yet.
    fn missing_in_empty(&self, wanted: &Wanted) -> SnippetError {
        SnippetError::Missing { wanted: wanted.shown(), similar: Vec::new(), names: Vec::new(), total: 0 }
    }

    /// The error for `wanted`, naming the closest names and some that exist.
    fn missing(&self, conn: &Connection, wanted: &Wanted) -> Result<SnippetError, SnippetError> {
        let e = |err| self.sql(err);
        let mut stmt = conn.prepare("SELECT name FROM snippets ORDER BY name").map_err(e)?;
        let all = stmt.query_map([], |r| r.get::<_, String>(0)).map_err(e)?;
        let all = all.collect::<Result<Vec<_>, _>>().map_err(e)?;
        let similar = match wanted {
            Wanted::Name(name) => similar_names(name, &all),
            Wanted::Id(_) => Vec::new(),
        };
        let total = all.len();
        let names = all.into_iter().take(NAMES_CARRIED).collect();
        Ok(SnippetError::Missing { wanted: wanted.shown(), similar, names, total })
    }
}

/// The names in `all` closest to `name` (same letters in another case, one containing the
/// other, or a close spelling), closest first.
pub(crate) fn similar_names(name: &str, all: &[String]) -> Vec<String> {
    let wanted = name.to_lowercase();
    let mut scored: Vec<(f64, &String)> = all
        .iter()
        .filter_map(|candidate| {
            let lower = candidate.to_lowercase();
            let score = if lower == wanted {
                2.0
            } else if lower.contains(&wanted) || wanted.contains(&lower) {
                1.5
            } else {
                strsim::jaro_winkler(&wanted, &lower)
            };
            (score > 0.85).then_some((score, candidate))
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    scored.into_iter().take(SIMILAR_SHOWN).map(|(_, n)| n.clone()).collect()
}

/// Tags as stored (space-separated, sorted).
pub(crate) fn split_tags(text: &str) -> Vec<String> {
    text.split(' ').filter(|t| !t.is_empty()).map(str::to_string).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn similar_names_come_closest_first() {
        let all: Vec<String> = ["Retry", "retry-http", "parse-args", "retyr"].iter().map(|s| s.to_string()).collect();
        assert_eq!(similar_names("retry", &all), ["Retry", "retry-http", "retyr"]);
        assert!(similar_names("zzz", &all).is_empty());
    }

    #[test]
    fn tags_split() {
        assert_eq!(split_tags("http net"), ["http", "net"]);
        assert!(split_tags("").is_empty());
    }
}
