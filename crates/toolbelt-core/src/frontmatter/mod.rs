//! A Markdown file with YAML frontmatter (agent definitions, skills): a `---` line, YAML, a
//! `---` line, the Markdown body; the YAML read as the few shapes such keys take, each with
//! its line, and read again the lenient ways real files need ([`entries`]).
//!
//! Why here: agent definitions and skills share the format and its quirks (Claude Code reads
//! unquoted `: ` in a description as text), so both read it through this one reader. Nothing
//! here does I/O.

mod lenient;

pub use lenient::entries;

use saphyr_parser::{Event, Parser, ScalarStyle, ScanError, Span};

/// Why a frontmatter cannot be read. Each variant's text says what is wrong in words that fit
/// any file with frontmatter; callers give their own advice around it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrontmatterError {
    /// The file does not start with a `---` line.
    #[error("it has no frontmatter: it must start with a `---` line, then YAML keys, then a `---` line")]
    NoFrontmatter,
    /// The frontmatter has no closing `---` line.
    #[error("the frontmatter opened here is never closed: add a `---` line after its last key")]
    Unclosed,
    /// The YAML does not parse.
    #[error("the frontmatter is not valid YAML: {message}")]
    Yaml {
        /// The line.
        line: usize,
        /// The parser's message.
        message: String,
    },
    /// The frontmatter is YAML, but not a mapping of keys.
    #[error("the frontmatter must be keys and values (`name: value`), not a list or a lone value")]
    NotAMapping {
        /// The line.
        line: usize,
    },
    /// A key appears twice.
    #[error("`{key}` is given twice (first on line {first})")]
    DuplicateKey {
        /// The key.
        key: String,
        /// The line of the second one.
        line: usize,
        /// The line of the first one.
        first: usize,
    },
}

impl FrontmatterError {
    /// The line of the file the error is on.
    pub fn line(&self) -> usize {
        match self {
            FrontmatterError::NoFrontmatter | FrontmatterError::Unclosed => 1,
            FrontmatterError::Yaml { line, .. }
            | FrontmatterError::NotAMapping { line }
            | FrontmatterError::DuplicateKey { line, .. } => *line,
        }
    }
}

/// Something odd in a frontmatter that was read all the same, with how to write it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// The line, when it has one.
    pub line: Option<usize>,
    /// What is odd and what to do.
    pub message: String,
}

/// A file cut at its frontmatter.
#[derive(Debug, PartialEq, Eq)]
pub struct Split<'a> {
    /// The YAML between the `---` lines.
    pub yaml: &'a str,
    /// The file's line of the YAML's first line.
    pub yaml_line: usize,
    /// Everything after the closing `---` line.
    pub body: &'a str,
}

/// Cuts `text` (LF line ends) at its frontmatter: a first line `---`, then YAML, then a
/// line `---`.
pub fn split(text: &str) -> Result<Split<'_>, FrontmatterError> {
    let mut lines = text.split_inclusive('\n');
    let first = lines.next().unwrap_or("");
    if first.trim_end() != "---" {
        return Err(FrontmatterError::NoFrontmatter);
    }
    let start = first.len();
    let mut at = start;
    for line in lines {
        if line.trim_end() == "---" {
            return Ok(Split { yaml: &text[start..at], yaml_line: 2, body: &text[at + line.len()..] });
        }
        at += line.len();
    }
    Err(FrontmatterError::Unclosed)
}

/// A value in the frontmatter, in the shapes a definition's keys take.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// Nothing (`key:`, `~`, `null`).
    Null,
    /// A scalar's text.
    Text {
        /// The text, as YAML reads it.
        text: String,
        /// Whether escapes in it were already read (a double-quoted or block scalar's): a
        /// plain or single-quoted one keeps `\n` as two characters.
        escaped: bool,
    },
    /// A list of scalars.
    List(Vec<Item>),
    /// A list holding lists or mappings.
    NestedList,
    /// A mapping.
    Mapping,
    /// An alias (`*name`).
    Alias,
}

impl Value {
    /// What the value is, to go in a sentence.
    pub fn describe(&self) -> &'static str {
        match self {
            Value::Null => "nothing",
            Value::Text { .. } => "text",
            Value::List(_) => "a list",
            Value::NestedList => "a list of lists or mappings",
            Value::Mapping => "a mapping",
            Value::Alias => "an alias",
        }
    }
}

/// One scalar of a list, with its line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    /// Its text.
    pub text: String,
    /// Its line in the file.
    pub line: usize,
}

/// One top-level key and its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The key.
    pub key: String,
    /// The key's line in the file.
    pub line: usize,
    /// The value.
    pub value: Value,
}

/// A list written on one line, as tool lists are (`Read, Grep, Bash(git add *, git commit *)`
/// or `Read Grep`): split on commas and spaces, a rule's parentheses kept whole.
pub fn split_list(text: &str) -> Vec<String> {
    let mut items = Vec::new();
    let mut current = String::new();
    let mut depth = 0usize;
    for c in text.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            _ => {}
        }
        if depth == 0 && (c == ',' || c.is_whitespace()) {
            if !current.trim().is_empty() {
                items.push(current.trim().to_string());
            }
            current.clear();
        } else {
            current.push(c);
        }
    }
    if !current.trim().is_empty() {
        items.push(current.trim().to_string());
    }
    items
}

/// The events of one YAML text, their lines moved to the file's.
struct Events<'a> {
    parser: Parser<'a, saphyr_parser::StrInput<'a>>,
    first_line: usize,
}

impl<'a> Events<'a> {
    fn line(&self, span: &Span) -> usize {
        self.first_line + span.start.line().saturating_sub(1)
    }

    fn next(&mut self) -> Result<(Event<'a>, usize), FrontmatterError> {
        match self.parser.next_event() {
            Some(Ok((event, span))) => Ok((event, self.line(&span))),
            Some(Err(e)) => Err(self.error(&e)),
            None => Err(FrontmatterError::Yaml { line: self.first_line, message: "the YAML ends too early".into() }),
        }
    }

    fn error(&self, e: &ScanError) -> FrontmatterError {
        let line = self.first_line + e.marker().line().saturating_sub(1);
        FrontmatterError::Yaml { line, message: e.info().to_string() }
    }

    /// Skips the rest of a mapping or list whose start was just read.
    fn skip_nested(&mut self) -> Result<(), FrontmatterError> {
        let mut depth = 1usize;
        while depth > 0 {
            match self.next()?.0 {
                Event::MappingStart(..) | Event::SequenceStart(..) => depth += 1,
                Event::MappingEnd | Event::SequenceEnd => depth -= 1,
                _ => {}
            }
        }
        Ok(())
    }

    fn value(&mut self) -> Result<Value, FrontmatterError> {
        Ok(match self.next()? {
            (Event::Scalar(text, style, _, tag), _) => scalar(text.into_owned(), style, tag.is_some()),
            (Event::SequenceStart(..), _) => self.list()?,
            (Event::MappingStart(..), _) => {
                self.skip_nested()?;
                Value::Mapping
            }
            (Event::Alias(_), _) => Value::Alias,
            (_, line) => return Err(FrontmatterError::Yaml { line, message: "a value was expected here".into() }),
        })
    }

    fn list(&mut self) -> Result<Value, FrontmatterError> {
        let mut items = Vec::new();
        let mut nested = false;
        loop {
            match self.next()? {
                (Event::SequenceEnd, _) => break,
                (Event::Scalar(text, style, _, tag), line) => {
                    if let Value::Text { text, .. } = scalar(text.into_owned(), style, tag.is_some()) {
                        items.push(Item { text, line });
                    }
                }
                (Event::MappingStart(..) | Event::SequenceStart(..), _) => {
                    self.skip_nested()?;
                    nested = true;
                }
                _ => nested = true,
            }
        }
        Ok(if nested { Value::NestedList } else { Value::List(items) })
    }
}

fn scalar(text: String, style: ScalarStyle, tagged: bool) -> Value {
    let plain = style == ScalarStyle::Plain;
    if plain && !tagged && matches!(text.as_str(), "" | "~" | "null" | "Null" | "NULL") {
        return Value::Null;
    }
    Value::Text { text, escaped: !matches!(style, ScalarStyle::Plain | ScalarStyle::SingleQuoted) }
}

/// Reads `yaml`, whose first line is the file's line `first_line`, as a mapping of keys.
/// An empty frontmatter has no keys.
pub fn read(yaml: &str, first_line: usize) -> Result<Vec<Entry>, FrontmatterError> {
    // The parser is fuzzed and has never been seen to panic; a definition file is outside
    // input all the same, and a panic here must not take the program down.
    let run = std::panic::catch_unwind(|| read_events(yaml, first_line));
    run.unwrap_or_else(|_| {
        Err(FrontmatterError::Yaml { line: first_line, message: "the YAML parser failed on this frontmatter".into() })
    })
}

fn read_events(yaml: &str, first_line: usize) -> Result<Vec<Entry>, FrontmatterError> {
    let mut events = Events { parser: Parser::new_from_str(yaml), first_line };
    events.next()?; // StreamStart
    match events.next()? {
        (Event::StreamEnd, _) => return Ok(Vec::new()),
        (Event::DocumentStart(_), _) => {}
        (_, line) => return Err(FrontmatterError::NotAMapping { line }),
    }
    let entries = match events.next()? {
        (Event::MappingStart(..), _) => mapping(&mut events)?,
        (Event::Scalar(text, ScalarStyle::Plain, _, None), _) if text.trim().is_empty() => Vec::new(),
        (_, line) => return Err(FrontmatterError::NotAMapping { line }),
    };
    loop {
        match events.next()? {
            (Event::StreamEnd, _) => return Ok(entries),
            (Event::DocumentStart(_), line) => {
                let message = "a second YAML document starts here; the frontmatter is one mapping of keys".into();
                return Err(FrontmatterError::Yaml { line, message });
            }
            _ => {}
        }
    }
}

fn mapping(events: &mut Events<'_>) -> Result<Vec<Entry>, FrontmatterError> {
    let mut entries: Vec<Entry> = Vec::new();
    loop {
        let (key, line) = match events.next()? {
            (Event::MappingEnd, _) => return Ok(entries),
            (Event::Scalar(key, ..), line) => (key.into_owned(), line),
            (_, line) => {
                let message = "a key must be a plain name such as `description`".into();
                return Err(FrontmatterError::Yaml { line, message });
            }
        };
        let value = events.value()?;
        if let Some(first) = entries.iter().find(|e| e.key == key) {
            return Err(FrontmatterError::DuplicateKey { key, line, first: first.line });
        }
        entries.push(Entry { key, line, value });
    }
}
