//! Lists and searches: which snippets a `snippet_list` call shows, in what order, and how many
//! match in all — every figure of one call read in one snapshot.
//!
//! Without a search, snippets are listed by name: the name index gives a page of the list
//! reading only that page's rows (which hold no code). A search ranks its matches with BM25,
//! names weighing most, then descriptions, then code — when there are at most [`RANK_ALL`].
//! Ranking costs time in proportion to the matches, so a search matching more (a word found
//! in most snippets' code) lists first the matches with a searched word in their name or
//! description, ranked (newest first when those too are more than [`RANK_ALL`]), then the
//! other matches newest first. The same snippets match; only the order of a very broad
//! search is cheaper, and a page of it costs about what a page of a narrow one does.

use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, params_from_iter};

use super::fts::FtsQuery;
use super::ops::split_tags;
use super::store::{SnippetError, SnippetStore};
use super::view::SnippetLine;

/// The most matches a search ranks all of with BM25.
pub const RANK_ALL: usize = 1_000;

/// What a list shows: which snippets, and how many at most.
#[derive(Debug, Clone)]
pub(crate) struct Filter {
    /// The search, when there is one.
    pub query: Option<FtsQuery>,
    /// Tags a snippet must all have.
    pub tags: Vec<String>,
    /// The language a snippet must have.
    pub language: Option<String>,
    /// How many to return at most.
    pub limit: usize,
    /// The most matches ranked all together ([`RANK_ALL`]; smaller in tests).
    pub rank_all: usize,
}

/// The columns a [`SnippetLine`] is read from, `s` being `snippets`.
const LINE: &str = "s.id, s.name, s.description, s.language, s.tags";

/// SQL conditions on `s` (`snippets`) and the values of their parameters, in order.
#[derive(Debug, Clone, Default)]
struct Conditions {
    sql: Vec<String>,
    args: Vec<SqlValue>,
}

impl Conditions {
    /// The tag and language conditions of `filter`.
    fn of(filter: &Filter) -> Self {
        let mut c = Conditions::default();
        if let Some(language) = &filter.language {
            c.push("s.language = ?", language);
        }
        for tag in &filter.tags {
            c.push("s.id IN (SELECT snippet FROM snippet_tags WHERE tag = ?)", tag);
        }
        c
    }

    fn push(&mut self, sql: &str, value: &str) {
        self.sql.push(sql.to_string());
        self.args.push(SqlValue::Text(value.to_string()));
    }

    /// `AND …` after another condition, or nothing.
    fn and(&self) -> String {
        self.sql.iter().map(|c| format!(" AND {c}")).collect()
    }

    /// `WHERE …`, or nothing.
    fn clause(&self) -> String {
        if self.sql.is_empty() { String::new() } else { format!(" WHERE {}", self.sql.join(" AND ")) }
    }
}

impl SnippetStore {
    /// The snippets `filter` selects, in its order, at most `filter.limit`, and how many it
    /// selects in all. Nothing saved yet is an empty list (and creates nothing).
    pub(crate) fn list(&self, filter: &Filter) -> Result<(Vec<SnippetLine>, usize), SnippetError> {
        if let Some(shared) = &self.shared {
            return shared.list(filter);
        }
        let Some(mut conn) = self.open(false)? else { return Ok((Vec::new(), 0)) };
        let tx = conn.transaction().map_err(|e| self.sql(e))?;
        let mut conditions = Conditions::of(filter);
        let found = match filter.query.as_ref().and_then(FtsQuery::matching) {
            Some(matching) => self.search(&tx, filter, &matching, &conditions)?,
            None => {
                if let Some(exclude) = filter.query.as_ref().and_then(|q| q.exclude.as_deref()) {
                    conditions.push("s.id NOT IN (SELECT rowid FROM snippets_fts WHERE snippets_fts MATCH ?)", exclude);
                }
                let total = self.count_where(
                    &tx,
                    &format!("SELECT count(*) FROM snippets s{}", conditions.clause()),
                    &conditions.args,
                )?;
                let sql = format!("SELECT {LINE} FROM snippets s{} ORDER BY s.name LIMIT ?", conditions.clause());
                (self.lines(&tx, &sql, None, &conditions, filter.limit)?, total)
            }
        };
        tx.finish().map_err(|e| self.sql(e))?;
        Ok(found)
    }

    /// How many snippets there are.
    pub(crate) fn count(&self) -> Result<usize, SnippetError> {
        if let Some(shared) = &self.shared {
            return shared.count();
        }
        let Some(conn) = self.open(false)? else { return Ok(0) };
        self.count_where(&conn, "SELECT count(*) FROM snippets", &[])
    }

    /// A search for `matching` (an FTS5 expression) under `conditions`: see the module docs
    /// for the order.
    fn search(
        &self,
        conn: &Connection,
        filter: &Filter,
        matching: &str,
        conditions: &Conditions,
    ) -> Result<(Vec<SnippetLine>, usize), SnippetError> {
        let fts = |m: &str| vec![SqlValue::Text(m.to_string())];
        let count_matches =
            |m: &str| self.count_where(conn, "SELECT count(*) FROM snippets_fts WHERE snippets_fts MATCH ?", &fts(m));
        let unfiltered = count_matches(matching)?;
        let total = if conditions.sql.is_empty() || unfiltered == 0 {
            unfiltered
        } else {
            let sql = format!(
                "SELECT count(*) FROM snippets_fts f JOIN snippets s ON s.id = f.rowid WHERE snippets_fts MATCH ?{}",
                conditions.and()
            );
            self.count_where(conn, &sql, &[fts(matching), conditions.args.clone()].concat())?
        };
        if total == 0 {
            return Ok((Vec::new(), 0));
        }
        if unfiltered <= filter.rank_all {
            return Ok((self.ranked(conn, matching, conditions, filter.limit)?, total));
        }
        let Some(any) = filter.query.as_ref().map(FtsQuery::any_term).filter(|a| !a.is_empty()) else {
            return Ok((self.newest(conn, matching, conditions, filter.limit)?, total));
        };
        let in_text = format!("{{name description}} : ({any})");
        let head = format!("({matching}) AND ({in_text})");
        let mut lines = if count_matches(&head)? <= filter.rank_all {
            self.ranked(conn, &head, conditions, filter.limit)?
        } else {
            self.newest(conn, &head, conditions, filter.limit)?
        };
        if lines.len() < filter.limit {
            let tail = format!("({matching}) NOT ({in_text})");
            lines.extend(self.newest(conn, &tail, conditions, filter.limit - lines.len())?);
        }
        Ok((lines, total))
    }

    /// The matches of `matching` under `conditions`, best first (BM25; the index alone ranks,
    /// materialized, so the planner keeps the ranking function beside its `MATCH`).
    fn ranked(
        &self,
        conn: &Connection,
        matching: &str,
        conditions: &Conditions,
        limit: usize,
    ) -> Result<Vec<SnippetLine>, SnippetError> {
        let sql = format!(
            "WITH ranked AS MATERIALIZED (SELECT rowid AS id, bm25(snippets_fts, 10.0, 4.0, 1.0) AS score \
             FROM snippets_fts WHERE snippets_fts MATCH ?) \
             SELECT {LINE} FROM ranked m JOIN snippets s ON s.id = m.id{} ORDER BY m.score, s.name LIMIT ?",
            conditions.clause()
        );
        self.lines(conn, &sql, Some(matching), conditions, limit)
    }

    /// The matches of `matching` under `conditions`, newest first (the index walks them in
    /// id order and stops at `limit`).
    fn newest(
        &self,
        conn: &Connection,
        matching: &str,
        conditions: &Conditions,
        limit: usize,
    ) -> Result<Vec<SnippetLine>, SnippetError> {
        let sql = format!(
            "SELECT {LINE} FROM snippets_fts f JOIN snippets s ON s.id = f.rowid WHERE snippets_fts MATCH ?{} \
             ORDER BY f.rowid DESC LIMIT ?",
            conditions.and()
        );
        self.lines(conn, &sql, Some(matching), conditions, limit)
    }

    /// The lines `sql` selects, its parameters being `matching` (when given), the conditions'
    /// and `limit`.
    fn lines(
        &self,
        conn: &Connection,
        sql: &str,
        matching: Option<&str>,
        conditions: &Conditions,
        limit: usize,
    ) -> Result<Vec<SnippetLine>, SnippetError> {
        let e = |err| self.sql(err);
        let mut args: Vec<SqlValue> = matching.map(|m| SqlValue::Text(m.to_string())).into_iter().collect();
        args.extend(conditions.args.iter().cloned());
        args.push(SqlValue::Integer(i64::try_from(limit).unwrap_or(i64::MAX)));
        let mut stmt = conn.prepare(sql).map_err(e)?;
        let rows = stmt
            .query_map(params_from_iter(args), |r| {
                Ok(SnippetLine {
                    id: r.get(0)?,
                    name: r.get(1)?,
                    description: r.get(2)?,
                    language: r.get(3)?,
                    tags: split_tags(&r.get::<_, String>(4)?),
                })
            })
            .map_err(e)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(e)
    }

    /// The count `sql` selects with `args`.
    fn count_where(&self, conn: &Connection, sql: &str, args: &[SqlValue]) -> Result<usize, SnippetError> {
        let n: i64 = conn.query_row(sql, params_from_iter(args), |r| r.get(0)).map_err(|e| self.sql(e))?;
        Ok(usize::try_from(n).unwrap_or(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snippets::fts;
    use crate::snippets::ops::NewSnippet;

    fn names(lines: &[SnippetLine]) -> Vec<&str> {
        lines.iter().map(|l| l.name.as_str()).collect()
    }

    #[test]
    fn a_broad_search_lists_name_and_description_matches_first_then_the_newest() {
        let dir = tempfile::tempdir().unwrap();
        let store = SnippetStore::user(dir.path());
        let snippets = [
            ("a-code-only", "", "", "let x = parse(y);"),
            ("b-in-description", "Parse a header", "rust", "fn h() {}"),
            ("c-code-only", "", "rust", "parse(a); parse(b);"),
            ("d-parse-in-name", "", "", "fn d() {}"),
            ("e-unrelated", "", "", "fn e() {}"),
            ("f-code-only", "", "rust", "parse(z)"),
        ];
        for (name, description, language, code) in snippets {
            let new = NewSnippet {
                name: name.into(),
                description: description.into(),
                language: (!language.is_empty()).then(|| language.to_string()),
                tags: Vec::new(),
                code: code.into(),
            };
            store.save(new).unwrap();
        }
        let filter = |rank_all: usize, language: Option<&str>| Filter {
            query: fts::parse("parse").unwrap(),
            tags: Vec::new(),
            language: language.map(str::to_string),
            limit: 10,
            rank_all,
        };
        let (ranked, total) = store.list(&filter(RANK_ALL, None)).unwrap();
        assert_eq!(total, 5);
        assert_eq!(names(&ranked)[..2], ["d-parse-in-name", "b-in-description"], "names weigh most");
        // Past the limit: the name and description matches ranked, then the rest newest first.
        let (broad, total) = store.list(&filter(4, None)).unwrap();
        assert_eq!(total, 5);
        assert_eq!(names(&broad), ["d-parse-in-name", "b-in-description", "f-code-only", "c-code-only", "a-code-only"]);
        // Even the name and description matches too many to rank: newest first, then the rest.
        let (broadest, _) = store.list(&filter(1, None)).unwrap();
        assert_eq!(
            names(&broadest),
            ["d-parse-in-name", "b-in-description", "f-code-only", "c-code-only", "a-code-only"]
        );
        // Conditions hold in every part, and the total counts what they keep.
        let (rust, total) = store.list(&filter(1, Some("rust"))).unwrap();
        assert_eq!((names(&rust), total), (vec!["b-in-description", "f-code-only", "c-code-only"], 3));
        let cut = Filter { limit: 3, ..filter(1, None) };
        let (page, total) = store.list(&cut).unwrap();
        assert_eq!((names(&page), total), (vec!["d-parse-in-name", "b-in-description", "f-code-only"], 5));
    }
}
