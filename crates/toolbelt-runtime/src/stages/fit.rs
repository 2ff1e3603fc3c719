//! Fitting a structured result to the output budget.
//!
//! A client may show the model the structured result instead of the text, so it is held to
//! the same budget. Its size is the characters of its strings and other values — the data a
//! model reads in it; keys, quotes, braces and escapes are structure and not counted, so the
//! structured form of a text that fits fits too, give or take the few fields beside the
//! payload (a path, some counts), which get a little room ([`slack`]). Over the budget it is
//! cut the way a reader loses
//! least: small fields stay whole and the large ones share what is left (fair shares, the
//! smallest first); a long string keeps its head and its tail (three fifths and two fifths,
//! as the text does) with a marker saying how much was cut; a long list keeps its first items
//! whole and leaves out the rest. Each cut is described, so the notice can say what is
//! missing.

use serde_json::Value;
use toolbelt_core::thousands;

/// How far past the budget a structured result may go before it is cut: room for the fields
/// beside the payload, a tenth of the budget up to 500 characters.
pub(super) fn slack(budget: usize) -> usize {
    (budget / 10).min(500)
}

/// Characters of data in `value`: strings by their characters, other values as written; keys
/// are not counted.
pub(super) fn size(value: &Value) -> usize {
    match value {
        Value::String(s) => chars(s),
        Value::Array(items) => items.iter().map(size).sum(),
        Value::Object(map) => map.values().map(size).sum(),
        Value::Null => 4,
        Value::Bool(true) => 4,
        Value::Bool(false) => 5,
        Value::Number(n) => n.to_string().len(),
    }
}

/// Characters of `s`; its length when it is ASCII, which is checked much faster.
fn chars(s: &str) -> usize {
    if s.is_ascii() { s.len() } else { s.chars().count() }
}

/// The byte offset of the `n`th character of `s` (its length when it has fewer).
fn char_offset(s: &str, n: usize) -> usize {
    if s.is_ascii() { n.min(s.len()) } else { s.char_indices().nth(n).map_or(s.len(), |(i, _)| i) }
}

/// An upper bound of [`size`] counted in bytes: when it fits, so does the value, and no
/// character is counted.
pub(super) fn bytes(value: &Value) -> usize {
    match value {
        Value::String(s) => s.len(),
        Value::Array(items) => items.iter().map(bytes).sum(),
        Value::Object(map) => map.values().map(bytes).sum(),
        Value::Null | Value::Bool(_) => 5,
        Value::Number(_) => 24,
    }
}

/// Cuts `value` to `budget` characters of data, plus the markers saying where strings were
/// cut (see the module's doc), and returns what was cut,
/// one phrase per cut (`` `content` keeps the first 18,000 and the last 12,000 of 40,000
/// characters ``). Nothing is returned when it fits.
pub(super) fn shrink(value: &mut Value, budget: usize) -> Vec<String> {
    let mut cuts = Vec::new();
    shrink_at(value, budget, &mut String::new(), &mut cuts);
    cuts
}

fn shrink_at(value: &mut Value, budget: usize, path: &mut String, cuts: &mut Vec<String>) {
    if bytes(value) <= budget {
        return;
    }
    let have = size(value);
    if have <= budget {
        return;
    }
    match value {
        Value::String(s) => {
            if let Some(cut) = cut_string(s, budget) {
                cuts.push(format!("{} {cut}", named(path)));
            }
        }
        Value::Array(items) => shrink_array(items, budget, path, cuts),
        Value::Object(map) => {
            let mut left = budget;
            let mut fields: Vec<(String, usize)> = map.iter().map(|(k, v)| (k.clone(), size(v))).collect();
            fields.sort_by_key(|(_, n)| *n);
            let mut others = fields.len();
            for (key, n) in fields {
                let share = left / others.max(1);
                others -= 1;
                if n <= share {
                    left -= n;
                    continue;
                }
                if let Some(field) = map.get_mut(&key) {
                    let len = path.len();
                    if !path.is_empty() {
                        path.push('.');
                    }
                    path.push_str(&key);
                    shrink_at(field, share, path, cuts);
                    path.truncate(len);
                    left = left.saturating_sub(size(field).min(share));
                }
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// Keeps the first items that fit whole; when not even the first does, it is cut to the
/// budget and kept alone.
fn shrink_array(items: &mut Vec<Value>, budget: usize, path: &mut String, cuts: &mut Vec<String>) {
    let total = items.len();
    let mut left = budget;
    let mut keep = 0;
    for item in items.iter() {
        let n = size(item);
        if n > left {
            break;
        }
        left -= n;
        keep += 1;
    }
    if keep == 0 {
        let len = path.len();
        path.push_str("[0]");
        if let Some(first) = items.first_mut() {
            shrink_at(first, budget, path, cuts);
        }
        path.truncate(len);
        keep = 1;
    }
    if keep < total {
        items.truncate(keep);
        cuts.push(format!("{} keeps the first {} of {} items", named(path), thousands(keep), thousands(total)));
    }
}

/// How a cut names where it happened.
fn named(path: &str) -> String {
    if path.is_empty() { "the result".to_string() } else { format!("`{path}`") }
}

/// The end of the marker a cut leaves between a string's head and its tail.
pub(super) const CUT_MARKER_END: &str = " characters cut …]";

/// Keeps `budget` characters of `s`, its head and its tail (three fifths and two fifths), with
/// a marker between; the characters kept at the head and at the tail, and how many there were.
/// `None`, and `s` as it was, when it fits.
pub(super) fn head_and_tail(s: &mut String, budget: usize) -> Option<(usize, usize, usize)> {
    let total = chars(s);
    if total <= budget {
        return None;
    }
    let tail = budget * 2 / 5;
    let head = budget - tail;
    let head_end = char_offset(s, head);
    let tail_start = char_offset(s, total - tail);
    let cut = total - head - tail;
    *s = format!("{}\n[… {}{CUT_MARKER_END}\n{}", &s[..head_end], thousands(cut), &s[tail_start..]);
    Some((head, tail, total))
}

/// [`head_and_tail`], saying what it kept.
fn cut_string(s: &mut String, budget: usize) -> Option<String> {
    let (head, tail, total) = head_and_tail(s, budget)?;
    Some(if tail == 0 {
        format!("keeps the first {} of {} characters", thousands(head), thousands(total))
    } else {
        format!(
            "keeps the first {} and the last {} of {} characters",
            thousands(head),
            thousands(tail),
            thousands(total)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Characters a cut marker adds.
    const MARKER: usize = "\n[… 10,000 characters cut …]\n".len();

    #[test]
    fn fitting_values_are_left_alone() {
        let mut v = json!({"file_path": "a.txt", "content": "x".repeat(100), "n": 3, "ok": true});
        let before = v.clone();
        assert!(shrink(&mut v, 200).is_empty());
        assert_eq!(v, before);
        assert_eq!(size(&json!({"ab": "é", "n": 12, "t": true, "x": null})), 1 + 2 + 4 + 4);
    }

    #[test]
    fn a_long_string_keeps_its_head_and_tail_and_small_fields_stay_whole() {
        let content: String = (0..10_000).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
        let mut v = json!({"file_path": "big.txt", "total_lines": 1, "content": content});
        let cuts = shrink(&mut v, 1_000);
        assert_eq!(v["file_path"], "big.txt");
        assert_eq!(v["total_lines"], 1);
        let cut = v["content"].as_str().unwrap();
        assert!(cut.starts_with("abcdef") && cut.contains("characters cut …]"), "{cut}");
        assert!(size(&v) <= 1_000 + MARKER, "{}", size(&v));
        assert_eq!(cuts.len(), 1);
        assert!(cuts[0].starts_with("`content` keeps the first "), "{cuts:?}");
        assert!(cuts[0].ends_with("of 10,000 characters"), "{cuts:?}");
    }

    #[test]
    fn a_long_list_keeps_its_first_items() {
        let items: Vec<Value> = (0..1_000).map(|i| json!({"path": format!("src/file{i}.rs"), "line": i})).collect();
        let mut v = json!({"mode": "content", "matches": items, "total": 1_000});
        let cuts = shrink(&mut v, 2_000);
        let kept = v["matches"].as_array().unwrap();
        assert!(!kept.is_empty() && kept.len() < 1_000);
        assert_eq!(kept[0]["path"], "src/file0.rs");
        assert!(size(&v) <= 2_000);
        assert_eq!(cuts, vec![format!("`matches` keeps the first {} of 1,000 items", kept.len())]);
    }

    #[test]
    fn large_fields_share_the_budget_and_nesting_is_named() {
        let mut v =
            json!({"stdout": "o".repeat(5_000), "stderr": "e".repeat(5_000), "agent": {"text": "t".repeat(5_000)}});
        let cuts = shrink(&mut v, 3_000);
        assert!(size(&v) <= 3_000 + 3 * MARKER, "{}", size(&v));
        for key in ["stdout", "stderr"] {
            let n = v[key].as_str().unwrap().chars().count();
            assert!(n > 500, "{key} got a fair share: {n}");
        }
        assert!(cuts.iter().any(|c| c.starts_with("`agent.text` keeps")), "{cuts:?}");
    }

    #[test]
    fn one_huge_item_is_cut_rather_than_dropped() {
        let mut v = json!({"results": ["x".repeat(10_000), "y"]});
        let cuts = shrink(&mut v, 500);
        assert_eq!(v["results"].as_array().unwrap().len(), 1);
        assert!(size(&v) <= 500 + MARKER);
        assert_eq!(cuts.len(), 2, "{cuts:?}");
        assert!(cuts[0].starts_with("`results[0]` keeps the first"), "{cuts:?}");
        assert_eq!(cuts[1], "`results` keeps the first 1 of 2 items");
    }

    #[test]
    fn strings_are_cut_at_character_boundaries() {
        let mut v = json!({"s": format!("{}{}", "é".repeat(60), "ü".repeat(40))});
        let cuts = shrink(&mut v, 10);
        assert_eq!(v["s"], format!("{}\n[… 90 characters cut …]\n{}", "é".repeat(6), "ü".repeat(4)));
        assert_eq!(cuts, ["`s` keeps the first 6 and the last 4 of 100 characters"]);
    }

    #[test]
    fn tiny_budgets_do_not_panic() {
        for budget in [0, 1, 10, 41] {
            let mut v = json!({"a": "é".repeat(100), "b": ["x".repeat(50)], "c": {"d": "z".repeat(70)}});
            shrink(&mut v, budget);
        }
    }
}
