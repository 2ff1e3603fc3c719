//! Looking symbols and files up, ranked: an exact name first, then names starting with the
//! query, then names containing it, then names close to it (a typo, a letter missing), each
//! tier in a fixed order (shorter names, then path, then line), so the same index answers the
//! same way every time. Each tier reads a bounded number of candidates in index order, so a
//! name defined thousands of times (`new`) costs what a rare one does. Exact and prefix matches come from the name index, containing ones
//! from the trigram index, close ones from the trigram index's candidates scored by
//! Jaro–Winkler similarity.

use rusqlite::{Connection, params_from_iter};

/// What to look for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wanted {
    /// Functions and methods.
    Function,
    /// Classes, structs, interfaces, traits, types, modules.
    Class,
    /// Variables, constants, fields.
    Variable,
    /// Files, by path.
    File,
    /// Every kind of symbol, then files.
    All,
}

/// What a match is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum MatchKind {
    /// A function or method.
    Function,
    /// A class, struct, interface, trait, type or module.
    Class,
    /// A variable, constant or field.
    Variable,
    /// A file, found by its path.
    File,
}

impl MatchKind {
    /// Every kind.
    pub const ALL: [MatchKind; 4] = [MatchKind::Function, MatchKind::Class, MatchKind::Variable, MatchKind::File];

    /// Its name, as the index stores it and results show it.
    pub fn as_str(self) -> &'static str {
        match self {
            MatchKind::Function => "function",
            MatchKind::Class => "class",
            MatchKind::Variable => "variable",
            MatchKind::File => "file",
        }
    }

    /// The kind of a stored name.
    pub fn parse(name: &str) -> Option<MatchKind> {
        MatchKind::ALL.into_iter().find(|k| k.as_str() == name)
    }
}

impl std::fmt::Display for MatchKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl rusqlite::types::FromSql for MatchKind {
    fn column_result(value: rusqlite::types::ValueRef<'_>) -> rusqlite::types::FromSqlResult<Self> {
        MatchKind::parse(value.as_str()?).ok_or(rusqlite::types::FromSqlError::InvalidType)
    }
}

/// How well a name matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    /// The name is the query.
    Exact,
    /// The name starts with the query.
    Prefix,
    /// The name contains the query.
    Substring,
    /// The name is close to the query.
    Fuzzy,
}

impl Tier {
    /// Its name, as results show it.
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Exact => "exact",
            Tier::Prefix => "prefix",
            Tier::Substring => "substring",
            Tier::Fuzzy => "fuzzy",
        }
    }
}

/// One match.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// The file, below the root.
    pub path: String,
    /// 1-based line (1 for a file).
    pub line: u32,
    /// 1-based column.
    pub col: u32,
    /// `function`, `class`, `variable` or `file`.
    pub kind: MatchKind,
    /// The symbol's name (the file's name for a file).
    pub name: String,
    /// The definition's first line.
    pub text: String,
    /// The definition it is inside.
    pub scope: Option<String>,
    /// How well it matched.
    pub tier: Tier,
    /// Within the tier, higher is better (case matching exactly, similarity).
    score: i64,
}

/// The most files or close names read before ranking.
const CANDIDATES: usize = 2_000;

/// The least similarity a close name needs.
const FUZZY_MIN: f64 = 0.82;

/// Looks `query` up: at most `limit` hits, best first, only below `under` (a path below the
/// root, `""` for all).
pub fn search(conn: &Connection, query: &str, wanted: Wanted, under: &str, limit: usize) -> rusqlite::Result<Vec<Hit>> {
    let q = query.trim();
    let lower = q.to_lowercase();
    let mut hits: Vec<Hit> = Vec::new();
    if wanted != Wanted::File {
        symbols(conn, q, &lower, wanted, under, limit, &mut hits)?;
    }
    if matches!(wanted, Wanted::File | Wanted::All) {
        files(conn, &lower, under, &mut hits)?;
    }
    hits.sort_by(|a, b| {
        a.tier
            .cmp(&b.tier)
            .then(b.score.cmp(&a.score))
            .then(a.name.len().cmp(&b.name.len()))
            .then_with(|| a.path.cmp(&b.path))
            .then(a.line.cmp(&b.line))
            .then(a.col.cmp(&b.col))
    });
    hits.dedup_by(|a, b| a.path == b.path && a.line == b.line && a.col == b.col && a.name == b.name);
    hits.truncate(limit);
    Ok(hits)
}

fn kind_filter(wanted: Wanted) -> &'static str {
    match wanted {
        Wanted::Function => " AND s.kind = 'function'",
        Wanted::Class => " AND s.kind = 'class'",
        Wanted::Variable => " AND s.kind = 'variable'",
        Wanted::File | Wanted::All => "",
    }
}

/// `under` as a condition on `f.path` (its own path or anything below it).
const UNDER: &str = " AND (?2 = '' OR f.path = ?2 OR substr(f.path, 1, length(?2) + 1) = ?2 || '/')";

const COLUMNS: &str = "f.path, s.line, s.col, s.kind, s.name, s.text, s.scope";

#[allow(clippy::too_many_arguments)]
fn symbols(
    conn: &Connection,
    q: &str,
    lower: &str,
    wanted: Wanted,
    under: &str,
    limit: usize,
    hits: &mut Vec<Hit>,
) -> rusqlite::Result<()> {
    let kinds = kind_filter(wanted);
    // Exact, then prefix: the name index, read in its order and cut at the limit (a name
    // like `new` is defined thousands of times in a large tree).
    let sql = format!(
        "SELECT {COLUMNS} FROM symbols s JOIN files f ON f.id = s.file \
         WHERE s.lower = ?1{kinds}{UNDER} ORDER BY s.lower, s.file, s.line LIMIT {}",
        limit * 4
    );
    read(conn, &sql, &[lower, under], |name| Some((Tier::Exact, i64::from(name == q))), hits)?;
    let sql = format!(
        "SELECT {COLUMNS} FROM symbols s JOIN files f ON f.id = s.file \
         WHERE s.lower > ?1 AND s.lower < ?1 || char(1114111){kinds}{UNDER} \
         ORDER BY s.lower, s.file, s.line LIMIT {limit}"
    );
    read(conn, &sql, &[lower, under], |name| Some((Tier::Prefix, i64::from(name.starts_with(q)))), hits)?;
    if hits.len() >= limit {
        return Ok(());
    }
    let short = lower.chars().count() < 3;
    // Substring: the trigram index (a short query scans the names instead), its first
    // candidates only.
    let sql = if short {
        format!(
            "SELECT {COLUMNS} FROM symbols s JOIN files f ON f.id = s.file \
             WHERE instr(s.lower, ?1) > 1{kinds}{UNDER} LIMIT {CANDIDATES}"
        )
    } else {
        format!(
            "SELECT {COLUMNS} FROM symbols s JOIN files f ON f.id = s.file \
             WHERE s.id IN (SELECT rowid FROM symbols_tri WHERE symbols_tri MATCH ?1 LIMIT {CANDIDATES}) \
             AND instr(s.lower, ?3) > 1{kinds}{UNDER}"
        )
    };
    let phrase = format!("\"{}\"", lower.replace('"', "\"\""));
    let first = if short { lower.to_string() } else { phrase };
    read(
        conn,
        &sql,
        &[first.as_str(), under, lower],
        |name| Some((Tier::Substring, i64::from(name.contains(q)))),
        hits,
    )?;
    if hits.len() >= limit || short {
        return Ok(());
    }
    // Close: names sharing a trigram with the query, scored by similarity.
    let grams: Vec<String> = {
        let chars: Vec<char> = lower.chars().collect();
        let mut grams: Vec<String> = chars.windows(3).map(|w| w.iter().collect::<String>()).collect();
        grams.sort();
        grams.dedup();
        grams.into_iter().map(|g| format!("\"{}\"", g.replace('"', "\"\""))).collect()
    };
    let sql = format!(
        "SELECT {COLUMNS} FROM symbols s JOIN files f ON f.id = s.file \
         WHERE s.id IN (SELECT rowid FROM symbols_tri WHERE symbols_tri MATCH ?1 LIMIT {CANDIDATES}) \
         {kinds}{UNDER}"
    );
    let any = grams.join(" OR ");
    read(
        conn,
        &sql,
        &[any.as_str(), under, lower],
        |name| {
            let n = name.to_lowercase();
            // A typo or two, not another name that shares a beginning.
            let (a, b) = (n.chars().count(), lower.chars().count());
            if n.contains(lower) || a.abs_diff(b) > 2.max(b / 5) {
                return None;
            }
            let similarity = strsim::jaro_winkler(&n, lower);
            (similarity >= FUZZY_MIN).then_some((Tier::Fuzzy, (similarity * 1000.0) as i64))
        },
        hits,
    )
}

fn read(
    conn: &Connection,
    sql: &str,
    args: &[&str],
    rank: impl Fn(&str) -> Option<(Tier, i64)>,
    hits: &mut Vec<Hit>,
) -> rusqlite::Result<()> {
    let mut stmt = conn.prepare(sql)?;
    let n = stmt.parameter_count();
    let mut rows = stmt.query(params_from_iter(args.iter().take(n)))?;
    while let Some(row) = rows.next()? {
        let name: String = row.get(4)?;
        let Some((tier, score)) = rank(&name) else { continue };
        hits.push(Hit {
            path: row.get(0)?,
            line: row.get(1)?,
            col: row.get(2)?,
            kind: row.get(3)?,
            name,
            text: row.get(5)?,
            scope: row.get(6)?,
            tier,
            score,
        });
    }
    Ok(())
}

/// Files whose path contains the query, ranked by their name: the name is the query, starts
/// with it, contains it; then paths containing it.
fn files(conn: &Connection, lower: &str, under: &str, hits: &mut Vec<Hit>) -> rusqlite::Result<()> {
    // Three letters or more: the trigram index; fewer: a scan of the paths.
    let (sql, first) = if lower.chars().count() >= 3 {
        let sql = format!(
            "SELECT f.path FROM files f WHERE f.id IN (SELECT rowid FROM files_tri WHERE files_tri MATCH ?1){UNDER} \
             LIMIT {CANDIDATES}"
        );
        (sql, format!("\"{}\"", lower.replace('"', "\"\"")))
    } else {
        (
            format!("SELECT f.path FROM files f WHERE instr(f.lpath, ?1) > 0{UNDER} LIMIT {CANDIDATES}"),
            lower.to_string(),
        )
    };
    let mut stmt = conn.prepare(&sql)?;
    let mut rows = stmt.query([first.as_str(), under])?;
    while let Some(row) = rows.next()? {
        let path: String = row.get(0)?;
        let name = path.rsplit('/').next().unwrap_or(&path).to_string();
        let n = name.to_lowercase();
        let stem = n.split('.').next().unwrap_or(&n);
        let tier = if n == lower || stem == lower {
            Tier::Exact
        } else if n.starts_with(lower) {
            Tier::Prefix
        } else {
            Tier::Substring
        };
        let score = i64::from(n.contains(lower));
        hits.push(Hit {
            path,
            line: 1,
            col: 1,
            kind: MatchKind::File,
            name,
            text: String::new(),
            scope: None,
            tier,
            score,
        });
    }
    Ok(())
}
