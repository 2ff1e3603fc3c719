//! Ranking tools for a keyword query: BM25 over each tool's name (split on `_`, `__`, `-`
//! and case), search hint, parameter names and description, the fields weighted in that
//! order. Built once per set of tools and kept while the registry does not change, so a
//! query costs a few postings lookups, not a pass over every description.

use std::collections::{BTreeMap, HashMap, HashSet};

/// BM25's term-frequency saturation.
const K1: f32 = 1.2;
/// BM25's length normalization.
const B: f32 = 0.75;
/// How much a word in a field counts, by field.
const NAME_WEIGHT: f32 = 3.0;
const HINT_WEIGHT: f32 = 2.0;
const PARAM_WEIGHT: f32 = 1.5;
const DESCRIPTION_WEIGHT: f32 = 1.0;
/// How much a word that only starts with the query's word counts, against an exact one.
const PREFIX_SHARE: f32 = 0.5;

/// What is indexed of one tool.
#[derive(Debug, Clone, Default)]
pub struct Document<'a> {
    /// The tool's canonical name.
    pub name: &'a str,
    /// Its search hint.
    pub hint: &'a str,
    /// Its parameters' names.
    pub params: Vec<&'a str>,
    /// Its description.
    pub description: &'a str,
}

#[derive(Debug)]
struct Entry {
    name: String,
    /// The name in lowercase, for `+word` (a word the name must contain).
    lower: String,
    /// The name's words.
    name_words: HashSet<String>,
    length: f32,
}

/// An index of tools, queried by [`Index::search`].
#[derive(Debug, Default)]
pub struct Index {
    docs: Vec<Entry>,
    /// Word → (document, weighted frequency), words in order so a prefix is a range.
    postings: BTreeMap<String, Vec<(usize, f32)>>,
    average: f32,
}

/// A parsed query: the words to rank by, and those the name must contain (`+word`).
#[derive(Debug, Default, PartialEq)]
pub struct Query {
    /// Words ranked by (their own words once split).
    pub words: Vec<String>,
    /// Words the name must contain, lowercase.
    pub required: Vec<String>,
}

impl Query {
    /// Parses `text`: `+word` requires a word in the name (and ranks by it too).
    pub fn parse(text: &str) -> Self {
        let mut query = Query::default();
        for piece in text.split_whitespace() {
            if let Some(word) = piece.strip_prefix('+') {
                let lower = word.to_lowercase();
                if !lower.is_empty() {
                    query.required.push(lower);
                }
                query.words.extend(words(word));
            } else {
                query.words.extend(words(piece));
            }
        }
        query.words.sort();
        query.words.dedup();
        query
    }
}

impl Index {
    /// Indexes `docs`; a result names a document by its position here.
    pub fn build<'a>(docs: impl IntoIterator<Item = Document<'a>>) -> Self {
        let mut index = Index::default();
        let mut total = 0.0f32;
        for (id, doc) in docs.into_iter().enumerate() {
            let mut freq: HashMap<String, f32> = HashMap::new();
            let mut length = 0.0f32;
            let mut add = |text: &str, weight: f32| {
                for word in words(text) {
                    *freq.entry(word).or_default() += weight;
                    length += weight;
                }
            };
            add(doc.name, NAME_WEIGHT);
            add(doc.hint, HINT_WEIGHT);
            doc.params.iter().for_each(|p| add(p, PARAM_WEIGHT));
            add(doc.description, DESCRIPTION_WEIGHT);
            for (word, f) in freq {
                index.postings.entry(word).or_default().push((id, f));
            }
            total += length;
            index.docs.push(Entry {
                name: doc.name.to_string(),
                lower: doc.name.to_lowercase(),
                name_words: words(doc.name).collect(),
                length,
            });
        }
        index.average = if index.docs.is_empty() { 1.0 } else { (total / index.docs.len() as f32).max(1.0) };
        index
    }

    /// The canonical name of document `id`.
    pub fn name(&self, id: usize) -> &str {
        &self.docs[id].name
    }

    /// The documents `keep` accepts that match `query`, best first, at most `limit`: every
    /// required word in the name, and at least one word matching (a required word alone is
    /// enough). Ties go to the shorter, then the earlier name, so results are deterministic.
    pub fn search(&self, query: &Query, limit: usize, keep: impl Fn(usize) -> bool) -> Vec<(usize, f32)> {
        let n = self.docs.len() as f32;
        let mut scores: HashMap<usize, f32> = HashMap::new();
        for word in &query.words {
            let range =
                self.postings.range::<str, _>((std::ops::Bound::Included(word.as_str()), std::ops::Bound::Unbounded));
            for (term, postings) in range.take_while(|(term, _)| term.starts_with(word.as_str())) {
                let share = if term == word { 1.0 } else { PREFIX_SHARE };
                let df = postings.len() as f32;
                let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
                for &(id, tf) in postings {
                    let norm = tf + K1 * (1.0 - B + B * self.docs[id].length / self.average);
                    *scores.entry(id).or_default() += share * idf * tf * (K1 + 1.0) / norm;
                }
            }
        }
        let whole = query.words.concat();
        let mut hits: Vec<(usize, f32)> = scores
            .into_iter()
            .filter(|(id, _)| keep(*id))
            .filter(|(id, _)| query.required.iter().all(|r| self.docs[*id].lower.contains(r.as_str())))
            .map(|(id, score)| {
                let doc = &self.docs[id];
                // The query naming the tool (or its last part, for `mcp__server__tool`) wins.
                let named = !whole.is_empty()
                    && (doc.lower.replace(['_', '-'], "") == whole
                        || doc.lower.rsplit("__").next().is_some_and(|tail| tail.replace(['_', '-'], "") == whole));
                let all_in_name = query.words.iter().all(|w| doc.name_words.contains(w));
                (id, score + if named { 100.0 } else { 0.0 } + if all_in_name { 1.0 } else { 0.0 })
            })
            .collect();
        if query.words.is_empty() && !query.required.is_empty() {
            hits = (0..self.docs.len())
                .filter(|id| keep(*id))
                .filter(|id| query.required.iter().all(|r| self.docs[*id].lower.contains(r.as_str())))
                .map(|id| (id, 1.0))
                .collect();
        }
        hits.sort_by(|a, b| {
            b.1.total_cmp(&a.1)
                .then_with(|| self.docs[a.0].name.len().cmp(&self.docs[b.0].name.len()))
                .then_with(|| self.docs[a.0].name.cmp(&self.docs[b.0].name))
        });
        hits.truncate(limit);
        hits
    }
}

/// The words of `text`, lowercase: split on anything not a letter or digit and between a
/// lowercase letter and an uppercase one (`NotebookEdit`, `getHTTPResponse` → `get`,
/// `http`, `response`), a trailing plural `s` dropped from longer words.
pub fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    let mut out = Vec::new();
    let mut current = String::new();
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            flush(&mut current, &mut out);
            continue;
        }
        if c.is_uppercase() && !current.is_empty() {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            if prev.is_lowercase() || prev.is_ascii_digit() || (prev.is_uppercase() && next_lower) {
                flush(&mut current, &mut out);
            }
        }
        current.extend(c.to_lowercase());
    }
    flush(&mut current, &mut out);
    out.into_iter()
}

fn flush(current: &mut String, out: &mut Vec<String>) {
    if current.is_empty() {
        return;
    }
    let mut word = std::mem::take(current);
    if word.len() > 3 && word.ends_with('s') && !word.ends_with("ss") {
        word.pop();
    }
    out.push(word);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc<'a>(name: &'a str, description: &'a str) -> Document<'a> {
        Document { name, hint: "", params: Vec::new(), description }
    }

    #[test]
    fn words_split_on_case_and_separators() {
        let w: Vec<String> = words("mcp__github__create_pull_request").collect();
        assert_eq!(w, ["mcp", "github", "create", "pull", "request"]);
        let w: Vec<String> = words("NotebookEdit getHTTPResponse files").collect();
        assert_eq!(w, ["notebook", "edit", "get", "http", "response", "file"]);
    }

    #[test]
    fn queries_parse_required_words() {
        let q = Query::parse("+slack send message");
        assert_eq!(q.required, ["slack"]);
        assert_eq!(q.words, ["message", "send", "slack"]);
    }

    #[test]
    fn the_name_outweighs_the_description_and_required_words_filter() {
        let index = Index::build([
            doc("mcp__slack__send_message", "Post a message to a channel"),
            doc("mcp__mail__send_email", "Send an email message to a person"),
            doc("NotebookEdit", "Edit a notebook cell; message not involved"),
        ]);
        let hits = index.search(&Query::parse("send message"), 5, |_| true);
        assert_eq!(index.name(hits[0].0), "mcp__slack__send_message");
        let hits = index.search(&Query::parse("+mail message"), 5, |_| true);
        assert_eq!(hits.len(), 1);
        assert_eq!(index.name(hits[0].0), "mcp__mail__send_email");
        let hits = index.search(&Query::parse("+notebook"), 5, |_| true);
        assert_eq!(index.name(hits[0].0), "NotebookEdit");
        assert!(index.search(&Query::parse("kubernetes"), 5, |_| true).is_empty());
    }

    #[test]
    fn a_prefix_matches_at_a_discount_and_an_exact_name_wins() {
        let index = Index::build([doc("echo", "Echoes back the input"), doc("get_env", "Returns environment vars")]);
        let hits = index.search(&Query::parse("environ"), 5, |_| true);
        assert_eq!(index.name(hits[0].0), "get_env");
        let hits = index.search(&Query::parse("echo"), 5, |_| true);
        assert_eq!(index.name(hits[0].0), "echo");
    }
}
