//! A PDF's text, page by page, for `Read` and `WebFetch`.
//!
//! The text comes from `pdf-extract` over `lopdf`. Both panic on some malformed files and
//! can take long on hostile ones, so the work runs on a thread of its own: a panic becomes
//! an error (a page that fails is reported and the others are kept), and a document that
//! takes longer than [`DEADLINE`] is given up (the thread is left to finish on its own).

use std::collections::BTreeSet;
use std::time::Duration;

/// How long reading a document's text may take.
pub const DEADLINE: Duration = Duration::from_secs(30);
/// Pages a PDF may have to be read whole without `pages`.
pub const WHOLE_MAX_PAGES: usize = 10;
/// Pages one call reads at most.
pub const MAX_PAGES_PER_CALL: usize = 20;

/// Why a PDF's text could not be had.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PdfError {
    /// Not a PDF the parser can read.
    #[error("it is not a readable PDF ({0})")]
    Unreadable(String),
    /// Encrypted with a password.
    #[error("it is encrypted with a password, so its text cannot be read")]
    Encrypted,
    /// Over [`DEADLINE`].
    #[error("reading its text took over {} s and was given up", DEADLINE.as_secs())]
    TooSlow,
    /// A `pages` value that is not a page selection.
    #[error("`{0}` is not a page selection: write a page (`3`), a range (`1-5`) or a list (`1-3,7`)")]
    BadPages(String),
    /// Pages past the end.
    #[error("the document has {total} page{}; {asked} is past the end", if *total == 1 { "" } else { "s" })]
    PastTheEnd {
        /// Pages the document has.
        total: usize,
        /// The first page asked for that is not there.
        asked: usize,
    },
    /// A document too long to read whole, read without a selection.
    #[error(
        "it has {total} pages, more than the {WHOLE_MAX_PAGES} read without `pages`: read it in parts, e.g. pages: \"1-{MAX_PAGES_PER_CALL}\" (at most {MAX_PAGES_PER_CALL} per call)"
    )]
    NeedsPages {
        /// Pages the document has.
        total: usize,
    },
    /// More pages than one call reads.
    #[error("{asked} pages were asked for; read at most {MAX_PAGES_PER_CALL} per call")]
    TooManyPages {
        /// How many.
        asked: usize,
    },
}

/// The text of some pages of a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PdfText {
    /// Pages the document has.
    pub total_pages: usize,
    /// The pages read (1-based) with their text, in order; a page that failed carries a note
    /// instead.
    pub pages: Vec<(usize, String)>,
}

impl PdfText {
    /// The pages as one text, each headed `--- Page N ---`.
    pub fn joined(&self) -> String {
        let mut out = String::new();
        for (n, text) in &self.pages {
            if !out.is_empty() {
                out.push_str("\n\n");
            }
            out.push_str(&format!("--- Page {n} ---\n{}", text.trim()));
        }
        out
    }
}

/// The pages `pages` selects as written (`3`, `1-5`, `1-3,7`); `None` when no selection
/// was given.
pub fn selection(pages: Option<&str>) -> Result<Option<BTreeSet<usize>>, PdfError> {
    let Some(spec) = pages else { return Ok(None) };
    let bad = || PdfError::BadPages(spec.to_string());
    let mut chosen = BTreeSet::new();
    for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (first, last) = match part.split_once('-') {
            Some((a, b)) => {
                (a.trim().parse::<usize>().map_err(|_| bad())?, b.trim().parse::<usize>().map_err(|_| bad())?)
            }
            None => {
                let n = part.parse::<usize>().map_err(|_| bad())?;
                (n, n)
            }
        };
        if first == 0 || last < first {
            return Err(bad());
        }
        if last - first >= MAX_PAGES_PER_CALL {
            return Err(PdfError::TooManyPages { asked: last - first + 1 });
        }
        chosen.extend(first..=last);
    }
    if chosen.is_empty() {
        return Err(bad());
    }
    if chosen.len() > MAX_PAGES_PER_CALL {
        return Err(PdfError::TooManyPages { asked: chosen.len() });
    }
    Ok(Some(chosen))
}

/// Which pages [`text`] reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pages {
    /// Every page.
    All,
    /// Every page if there are at most [`WHOLE_MAX_PAGES`], else [`PdfError::NeedsPages`].
    AllIfFew,
    /// These pages (1-based).
    These(BTreeSet<usize>),
}

/// The text of the `wanted` pages of the PDF in `bytes`, read on a thread of its own within
/// [`DEADLINE`]. Blocks the calling thread: call it from blocking work.
pub fn text(bytes: Vec<u8>, wanted: Pages) -> Result<PdfText, PdfError> {
    let (tx, rx) = std::sync::mpsc::channel();
    let spawned =
        std::thread::Builder::new().name("toolbelt-pdf".into()).stack_size(64 * 1024 * 1024).spawn(move || {
            let _ = tx.send(read(&bytes, &wanted));
        });
    if spawned.is_err() {
        return Err(PdfError::Unreadable("no thread could be started to read it".into()));
    }
    match rx.recv_timeout(DEADLINE) {
        Ok(result) => result,
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => Err(PdfError::TooSlow),
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
            Err(PdfError::Unreadable("the reader stopped without a result".into()))
        }
    }
}

fn read(bytes: &[u8], wanted: &Pages) -> Result<PdfText, PdfError> {
    let loaded = std::panic::catch_unwind(|| pdf_extract::Document::load_mem(bytes));
    let mut doc = match loaded {
        Ok(Ok(doc)) => doc,
        Ok(Err(e)) => return Err(PdfError::Unreadable(e.to_string())),
        Err(_) => return Err(PdfError::Unreadable("its structure is broken".into())),
    };
    if doc.is_encrypted() && doc.decrypt("").is_err() {
        return Err(PdfError::Encrypted);
    }
    let numbers: Vec<u32> = doc.get_pages().keys().copied().collect();
    let total = numbers.len();
    let chosen: Vec<usize> = match wanted {
        Pages::These(set) => {
            if let Some(&past) = set.iter().find(|n| **n > total) {
                return Err(PdfError::PastTheEnd { total, asked: past });
            }
            set.iter().copied().collect()
        }
        Pages::AllIfFew if total > WHOLE_MAX_PAGES => return Err(PdfError::NeedsPages { total }),
        Pages::All | Pages::AllIfFew => (1..=total).collect(),
    };
    let mut pages = Vec::with_capacity(chosen.len());
    for n in chosen {
        let Some(&number) = numbers.get(n - 1) else { continue };
        let page = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let mut text = String::new();
            let mut out = pdf_extract::PlainTextOutput::new(&mut text);
            pdf_extract::output_doc_page(&doc, &mut out, number).map(|()| text)
        }));
        let text = match page {
            Ok(Ok(text)) => text,
            Ok(Err(e)) => format!("[this page's text could not be read: {e}]"),
            Err(_) => "[this page's text could not be read: its content is malformed]".to_string(),
        };
        pages.push((n, text));
    }
    Ok(PdfText { total_pages: total, pages })
}

/// Whether `bytes` start like a PDF.
pub fn is_pdf(bytes: &[u8]) -> bool {
    bytes.starts_with(b"%PDF-")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selections() {
        assert_eq!(selection(None).unwrap(), None);
        assert_eq!(selection(Some("3")).unwrap().unwrap().into_iter().collect::<Vec<_>>(), [3]);
        assert_eq!(selection(Some("1-3, 7")).unwrap().unwrap().into_iter().collect::<Vec<_>>(), [1, 2, 3, 7]);
        assert!(matches!(selection(Some("0")), Err(PdfError::BadPages(_))));
        assert!(matches!(selection(Some("5-2")), Err(PdfError::BadPages(_))));
        assert!(matches!(selection(Some("x")), Err(PdfError::BadPages(_))));
        assert!(matches!(selection(Some("1-21")), Err(PdfError::TooManyPages { asked: 21 })));
        assert!(matches!(selection(Some("1-15,20-30")), Err(PdfError::TooManyPages { asked: 26 })));
    }

    #[test]
    fn garbage_is_an_error_not_a_crash() {
        assert!(matches!(text(b"%PDF-1.4 nonsense".to_vec(), Pages::All), Err(PdfError::Unreadable(_))));
        assert!(matches!(text(Vec::new(), Pages::All), Err(PdfError::Unreadable(_))));
    }
}
