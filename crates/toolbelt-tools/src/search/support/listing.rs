//! The text of a page of output, kept as what the search wrote and put together only when
//! the result is rendered: a content search with hundreds of thousands of matching lines
//! hands its text over whole when the page is all of it, and copies only the page's lines
//! otherwise.

use std::ops::Range;

use super::content::Found;
use super::pages;

/// A page's text: either whole, or a range of a content search's text.
#[derive(Debug, Default)]
pub struct Listing {
    text: String,
    found: Option<Found>,
    bytes: Range<usize>,
}

impl Listing {
    /// A text already put together (each entry on its line, without a final newline).
    pub fn whole(text: String) -> Self {
        Self { text, ..Self::default() }
    }

    /// The lines at `bytes` of `found`'s text (each ending with a newline).
    pub fn lines(found: Found, bytes: Range<usize>) -> Self {
        Self { text: String::new(), found: Some(found), bytes }
    }

    fn as_str(&self) -> &str {
        match &self.found {
            None => &self.text,
            Some(found) => found.text().get(self.bytes.clone()).unwrap_or_default(),
        }
    }

    /// The text, without the newline after its last line, with room for `spare` more bytes.
    pub fn render(&self, spare: usize) -> String {
        let page = self.as_str();
        let mut text = pages::with_capacity(page.len() + spare);
        text.push_str(page);
        if self.found.is_some() {
            text.pop();
        }
        text
    }

    /// [`Listing::render`], handing over a search's text instead of copying it when the
    /// page is all of it.
    pub fn into_text(self, spare: usize) -> String {
        match self.found {
            Some(found) if self.bytes.start == 0 && self.bytes.end == found.text().len() => {
                let mut text = found.into_text();
                text.pop();
                text.reserve(spare);
                text
            }
            _ => self.render(spare),
        }
    }
}
