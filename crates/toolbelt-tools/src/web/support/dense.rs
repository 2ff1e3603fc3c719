//! The readable part of a large page in one pass: the scoring at the heart of Mozilla's
//! Readability, without its repeated selector scans.
//!
//! Every paragraph-like element with some text gives its parent a score (more for longer
//! text and more commas) and its grandparent half of it; the best-scored element, discounted
//! by how much of its text is links, is the body, with its siblings that scored at least a
//! fifth as well. It is linear in the page, where the full algorithm (`dom_smoothie`) spends
//! most of its time matching selectors: `super::html` uses it on pages too large for that.

use std::collections::HashMap;

use dom_query::{Document, NodeId, NodeRef};

/// Elements whose text counts as a paragraph.
const PARAGRAPHS: [&str; 7] = ["p", "pre", "blockquote", "li", "td", "dd", "dt"];
/// Text shorter than this (in characters) does not count.
const MIN_CHARS: usize = 25;
/// Candidates weighed for link density.
const CANDIDATES: usize = 5;

/// The elements that make the page's body, in page order; empty when no paragraph counts.
pub fn body(doc: &Document) -> Vec<NodeRef<'_>> {
    let mut scores: HashMap<NodeId, (NodeRef<'_>, f64)> = HashMap::new();
    for node in doc.root().descendants_it() {
        if !PARAGRAPHS.iter().any(|p| node.has_name(p)) {
            continue;
        }
        let text = node.text();
        let chars = text.trim().chars().count();
        if chars < MIN_CHARS {
            continue;
        }
        let score = 1.0 + text.matches(',').count() as f64 + (chars as f64 / 100.0).min(3.0);
        if let Some(parent) = node.parent() {
            scores.entry(parent.id).or_insert((parent, 0.0)).1 += score;
            if let Some(grand) = parent.parent() {
                scores.entry(grand.id).or_insert((grand, 0.0)).1 += score / 2.0;
            }
        }
    }
    let mut ranked: Vec<(NodeRef<'_>, f64)> = scores.values().map(|(n, s)| (*n, *s)).collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
    let Some((best, best_score)) = ranked
        .into_iter()
        .take(CANDIDATES)
        .map(|(node, score)| {
            let adjusted = score * (1.0 - link_density(&node));
            (node, adjusted)
        })
        .max_by(|a, b| a.1.total_cmp(&b.1))
    else {
        return Vec::new();
    };
    let Some(parent) = best.parent() else { return vec![best] };
    let threshold = (best_score * 0.2).max(10.0);
    let weighed = |child: &NodeRef<'_>| {
        scores.get(&child.id).is_some_and(|(_, score)| score * (1.0 - link_density(child)) >= threshold)
    };
    parent.element_children().into_iter().filter(|child| child.id == best.id || weighed(child)).collect()
}

/// How much of `node`'s text is link text, from 0 to 1.
fn link_density(node: &NodeRef<'_>) -> f64 {
    let total = node.text().chars().count();
    if total == 0 {
        return 1.0;
    }
    let linked: usize = node.descendants_it().filter(|n| n.has_name("a")).map(|a| a.text().chars().count()).sum();
    linked as f64 / total as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_body_is_where_the_paragraphs_are_not_where_the_links_are() {
        let para = |i: usize| format!("<p>Paragraph {i}, with words, and more words, about the subject at hand.</p>");
        let links: String =
            (0..40).map(|i| format!("<p><a href=\"/{i}\">A link to another story, number {i}</a></p>")).collect();
        let story: String = (0..12).map(para).collect();
        let html = format!(
            "<html><body><div id=\"links\">{links}</div><div id=\"wrap\"><div id=\"story\">{story}</div>\
             <div id=\"more\">{}</div><div id=\"tiny\"><p>x</p></div></div></body></html>",
            (20..28).map(para).collect::<String>()
        );
        let doc = Document::from(html.as_str());
        let ids: Vec<String> = body(&doc).iter().filter_map(|n| n.attr("id").map(|a| a.to_string())).collect();
        assert_eq!(ids, ["story", "more"], "the story and the sibling that scores like it, in page order");
        assert!(body(&Document::from("<html><body><p>short</p></body></html>")).is_empty());
    }
}
