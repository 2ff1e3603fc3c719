//! Which entry of a setting wins: the highest layer's valid one. Read by the resolver and by
//! each section's own resolution (`agent`, `lint`, `lsp`, `web`).

use super::Entry;
use super::schema;

/// The entry of the highest layer setting `key` (the last one on a tie), whose value is valid.
pub(super) fn winner<'e>(entries: &'e [Entry], key: &str) -> Option<&'e Entry> {
    let def = schema::find(key)?;
    entries.iter().filter(|e| e.key == key && schema::check(def, &e.value).is_ok()).fold(
        None,
        |best: Option<&Entry>, e| match best {
            Some(b) if b.origin.layer > e.origin.layer => Some(b),
            _ => Some(e),
        },
    )
}
