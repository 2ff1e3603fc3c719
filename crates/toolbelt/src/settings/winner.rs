//! Which entry of a setting wins: the highest layer's valid one. Read by the resolver and by
//! each section's own resolution (`agent`, `lint`, `lsp`, `web`).

use super::Entry;
use super::schema::{self, Key};

/// The entry of the highest layer setting `key` (the last one on a tie), whose value is valid.
pub(super) fn winner(entries: &[Entry], key: Key) -> Option<&Entry> {
    highest(entries, key, |path| key == *path)
}

/// The entry of the highest layer setting the table `name` of the family `family`
/// (`Key::MCP_SERVERS`, `github`), whose value is valid.
pub(super) fn named_winner<'e>(entries: &'e [Entry], family: Key, name: &str) -> Option<&'e Entry> {
    highest(entries, family, |path| family.name_in(path) == Some(name))
}

fn highest(entries: &[Entry], key: Key, is_it: impl Fn(&str) -> bool) -> Option<&Entry> {
    let def = key.def()?;
    entries.iter().filter(|e| is_it(&e.key) && schema::check(def, &e.value).is_ok()).fold(
        None,
        |best: Option<&Entry>, e| match best {
            Some(b) if b.origin.layer > e.origin.layer => Some(b),
            _ => Some(e),
        },
    )
}
