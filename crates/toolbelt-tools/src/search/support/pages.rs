//! Large output texts on huge pages.
//!
//! A content search with hundreds of thousands of matching lines writes tens of megabytes of
//! text. Fresh memory costs the kernel a page fault per 4 KiB page (a page allocated, zeroed,
//! mapped, and later freed), which for such a search is a good part of its time; backed by
//! huge pages (2 MiB) it costs one fault per 2 MiB. So a text past a few megabytes asks for
//! them (`MADV_HUGEPAGE`, what Linux's transparent huge pages in their usual `madvise` mode
//! wait for). Only a hint: contents never change, and where huge pages are off (or always
//! on) nothing does.

/// Buffers smaller than this are left alone (most of a huge page would go unused).
const MIN: usize = 4 << 20;

/// Past this much text, [`reserve`] grows a buffer to at least [`BIG`] bytes at once.
const GROW_BIG: usize = 256 << 10;

/// The least capacity [`reserve`] grows a large buffer to.
const BIG: usize = 8 << 20;

/// The size of a huge page.
const HUGE: usize = 2 << 20;

/// What the allocator adds to a large block, at most (glibc's malloc: 16 bytes in front, and
/// the block rounded to whole pages).
const HEADER: usize = 32;

/// A capacity of at least `wanted` bytes whose block, with the allocator's header, is whole
/// huge pages: the system then places it on huge-page boundaries, so every one of its pages
/// can be huge (only a block's whole, aligned 2 MiB can).
fn huge_capacity(wanted: usize) -> usize {
    (wanted + HEADER).next_multiple_of(HUGE) - HEADER
}

/// A text with room for `capacity` bytes, on huge pages when that is large.
pub fn with_capacity(capacity: usize) -> String {
    if capacity < MIN {
        return String::with_capacity(capacity);
    }
    let text = String::with_capacity(huge_capacity(capacity));
    advise(&text, &mut 0);
    text
}

/// Makes room in `text` for `additional` more bytes (a hint: the text grows anyway when it
/// was too little). Past 256 KiB it grows to at least 8 MiB, doubling, on huge pages asked for
/// before any is written: the first time into a new block (what it holds is copied; moved
/// along, its pages would stay small); `advised` is as for [`advise`].
pub fn reserve(text: &mut String, additional: usize, advised: &mut usize) {
    let wanted = text.len() + additional;
    if wanted <= text.capacity() || wanted < GROW_BIG {
        return;
    }
    let capacity = huge_capacity(wanted.max(text.capacity() * 2).max(BIG));
    if *advised == 0 {
        let mut big = with_capacity(capacity);
        big.push_str(text);
        *text = big;
        *advised = text.capacity();
        return;
    }
    text.reserve_exact(capacity - text.len());
    advise(text, advised);
}

/// Asks for huge pages behind `text`'s buffer (its capacity, used or not) when it is large
/// and its capacity is not `advised`, the capacity last asked for; records it. Asked before
/// the buffer's fresh part is written: pages already touched stay small.
pub fn advise(text: &String, advised: &mut usize) {
    let capacity = text.capacity();
    if capacity < MIN || capacity == *advised {
        return;
    }
    *advised = capacity;
    crate::process::memory::madvise_huge(text.as_ptr() as usize, capacity);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_buffers_are_advised_once_per_capacity() {
        let mut advised = 0;
        let small = String::with_capacity(1 << 20);
        advise(&small, &mut advised);
        assert_eq!(advised, 0);
        let mut large = String::with_capacity(8 << 20);
        advise(&large, &mut advised);
        assert_eq!(advised, large.capacity());
        large.push_str("text");
        advise(&large, &mut advised);
        assert_eq!((advised, large.as_str()), (large.capacity(), "text"));
    }

    #[test]
    fn reserve_grows_large_texts_at_once() {
        let mut advised = 0;
        let mut text = String::new();
        reserve(&mut text, 1000, &mut advised);
        assert_eq!((text.capacity(), advised), (0, 0), "small texts grow as strings do");
        text.push_str(&"x".repeat(GROW_BIG));
        reserve(&mut text, 10, &mut advised);
        assert!(text.capacity() >= BIG && advised == text.capacity());
        let capacity = text.capacity();
        reserve(&mut text, 10, &mut advised);
        assert_eq!(text.capacity(), capacity);
        text.push_str(&"y".repeat(capacity - text.len()));
        reserve(&mut text, 1, &mut advised);
        assert!(text.capacity() >= 2 * capacity && advised == text.capacity());
        assert!(text.starts_with('x') && text.ends_with('y'));
    }

    #[test]
    fn huge_capacities_fill_whole_huge_pages() {
        assert_eq!(huge_capacity(1), HUGE - HEADER);
        assert_eq!(huge_capacity(HUGE - HEADER), HUGE - HEADER);
        assert_eq!(huge_capacity(HUGE), 2 * HUGE - HEADER);
        assert!(with_capacity(MIN).capacity() >= MIN && with_capacity(10).capacity() >= 10);
    }
}
