//! The text of a page of content-mode output, kept as pieces of what the search formatted
//! and put together only when the text is rendered: a search with hundreds of thousands of
//! matching lines copies its output once, not once to assemble the page and again to render
//! it.

use super::content::Found;

/// One piece of the text.
#[derive(Debug, Clone, Copy)]
pub enum Piece {
    /// All output lines of file `i` of [`Found::files`].
    File(usize),
    /// Output line `k` of file `i`.
    Line(usize, usize),
    /// A `--` break line between files.
    Break,
}

/// A page's text: either whole, or pieces of a search's output.
#[derive(Debug, Default)]
pub struct Listing {
    text: String,
    found: Found,
    pieces: Vec<Piece>,
}

impl Listing {
    /// A text already put together (each entry on its line, without a final newline).
    pub fn whole(text: String) -> Self {
        Self { text, ..Self::default() }
    }

    /// Pieces of `found`'s output, each ending with a newline.
    pub fn pieces(found: Found, pieces: Vec<Piece>) -> Self {
        Self { text: String::new(), found, pieces }
    }

    fn piece(&self, piece: Piece) -> &str {
        let files = &self.found.files;
        match piece {
            Piece::File(i) => files.get(i).map_or("", |hit| self.found.text(hit)),
            Piece::Line(i, k) => files.get(i).map_or("", |hit| self.found.formatted(hit, k)),
            Piece::Break => "--\n",
        }
    }

    /// The text, without the newline after its last line, with room for `spare` more bytes.
    pub fn render(&self, spare: usize) -> String {
        if self.pieces.is_empty() {
            let mut text = String::with_capacity(self.text.len() + spare);
            text.push_str(&self.text);
            return text;
        }
        let len: usize = self.pieces.iter().map(|&p| self.piece(p).len()).sum();
        let mut text = String::with_capacity(len + spare);
        for &piece in &self.pieces {
            text.push_str(self.piece(piece));
        }
        text.pop();
        text
    }
}
