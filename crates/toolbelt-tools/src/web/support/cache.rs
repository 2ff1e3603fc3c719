//! Pages fetched in the last minutes, so paging through a long page (`offset`) or asking
//! about it again reads the same page without fetching it again.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::fetched::Page;

/// How long a page is kept.
pub const TTL: Duration = Duration::from_secs(15 * 60);
/// How many bytes of pages are kept at most; the least recently used go first.
pub const CAPACITY: usize = 50 * 1024 * 1024;

struct Entry {
    page: Arc<Page>,
    stored: Instant,
    used: u64,
}

#[derive(Default)]
struct Pages {
    entries: HashMap<String, Entry>,
    bytes: usize,
    clock: u64,
}

/// A least-recently-used cache of fetched pages keyed by the URL asked for, bounded in age
/// ([`TTL`]) and size ([`CAPACITY`]).
#[derive(Default)]
pub struct Cache {
    pages: Mutex<Pages>,
}

impl std::fmt::Debug for Cache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let pages = self.pages.lock().unwrap_or_else(PoisonError::into_inner);
        f.debug_struct("Cache").field("pages", &pages.entries.len()).field("bytes", &pages.bytes).finish()
    }
}

impl Cache {
    /// The page fetched for `url` less than [`TTL`] ago.
    pub fn get(&self, url: &str) -> Option<Arc<Page>> {
        let mut pages = self.pages.lock().unwrap_or_else(PoisonError::into_inner);
        pages.clock += 1;
        let now = pages.clock;
        match pages.entries.get_mut(url) {
            Some(entry) if entry.stored.elapsed() < TTL => {
                entry.used = now;
                Some(Arc::clone(&entry.page))
            }
            Some(_) => {
                if let Some(old) = pages.entries.remove(url) {
                    pages.bytes -= old.page.body.len();
                }
                None
            }
            None => None,
        }
    }

    /// Keeps `page` as the answer for `url`, making room by dropping the least recently used
    /// pages. A page larger than the whole cache is not kept.
    pub fn put(&self, url: &str, page: Arc<Page>) {
        let size = page.body.len();
        if size > CAPACITY {
            return;
        }
        let mut pages = self.pages.lock().unwrap_or_else(PoisonError::into_inner);
        pages.clock += 1;
        let used = pages.clock;
        if let Some(old) = pages.entries.insert(url.to_string(), Entry { page, stored: Instant::now(), used }) {
            pages.bytes -= old.page.body.len();
        }
        pages.bytes += size;
        while pages.bytes > CAPACITY {
            let Some(oldest) = pages.entries.iter().min_by_key(|(_, e)| e.used).map(|(k, _)| k.clone()) else { break };
            if let Some(old) = pages.entries.remove(&oldest) {
                pages.bytes -= old.page.body.len();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(bytes: usize) -> Arc<Page> {
        Arc::new(Page::for_test(vec![b'x'; bytes]))
    }

    #[test]
    fn the_least_recently_used_pages_make_room() {
        let cache = Cache::default();
        let third = CAPACITY / 3 + 1;
        cache.put("a", page(third));
        cache.put("b", page(third));
        assert!(cache.get("a").is_some(), "a is now the most recently used");
        cache.put("c", page(third));
        assert!(cache.get("b").is_none(), "b was the least recently used");
        assert!(cache.get("a").is_some() && cache.get("c").is_some());
        cache.put("huge", page(CAPACITY + 1));
        assert!(cache.get("huge").is_none(), "a page larger than the cache is not kept");
        cache.put("a", page(10));
        assert!(cache.pages.lock().unwrap().bytes == third + 10, "a replaced entry gives its room back");
    }
}
