//! A definition file's shape: a `---` line, YAML, a `---` line, the Markdown body; and the
//! YAML read as the few shapes a definition's keys take, each with its line.

use saphyr_parser::{Event, Parser, ScalarStyle, ScanError, Span};

use super::parse::DefinitionError;

/// A file cut at its frontmatter.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Split<'a> {
    /// The YAML between the `---` lines.
    pub yaml: &'a str,
    /// The file's line of the YAML's first line.
    pub yaml_line: usize,
    /// Everything after the closing `---` line.
    pub body: &'a str,
}

/// Cuts `text` (LF line ends) at its frontmatter: a first line `---`, then YAML, then a
/// line `---`.
pub(super) fn split(text: &str) -> Result<Split<'_>, DefinitionError> {
    let mut lines = text.split_inclusive('\n');
    let first = lines.next().unwrap_or("");
    if first.trim_end() != "---" {
        return Err(DefinitionError::NoFrontmatter);
    }
    let start = first.len();
    let mut at = start;
    for line in lines {
        if line.trim_end() == "---" {
            return Ok(Split { yaml: &text[start..at], yaml_line: 2, body: &text[at + line.len()..] });
        }
        at += line.len();
    }
    Err(DefinitionError::Unclosed)
}

/// A value in the frontmatter, in the shapes a definition's keys take.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Value {
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
pub(super) struct Item {
    /// Its text.
    pub text: String,
    /// Its line in the file.
    pub line: usize,
}

/// One top-level key and its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Entry {
    /// The key.
    pub key: String,
    /// The key's line in the file.
    pub line: usize,
    /// The value.
    pub value: Value,
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

    fn next(&mut self) -> Result<(Event<'a>, usize), DefinitionError> {
        match self.parser.next_event() {
            Some(Ok((event, span))) => Ok((event, self.line(&span))),
            Some(Err(e)) => Err(self.error(&e)),
            None => Err(DefinitionError::Yaml { line: self.first_line, message: "the YAML ends too early".into() }),
        }
    }

    fn error(&self, e: &ScanError) -> DefinitionError {
        let line = self.first_line + e.marker().line().saturating_sub(1);
        DefinitionError::Yaml { line, message: e.info().to_string() }
    }

    /// Skips the rest of a mapping or list whose start was just read.
    fn skip_nested(&mut self) -> Result<(), DefinitionError> {
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

    fn value(&mut self) -> Result<Value, DefinitionError> {
        Ok(match self.next()? {
            (Event::Scalar(text, style, _, tag), _) => scalar(text.into_owned(), style, tag.is_some()),
            (Event::SequenceStart(..), _) => self.list()?,
            (Event::MappingStart(..), _) => {
                self.skip_nested()?;
                Value::Mapping
            }
            (Event::Alias(_), _) => Value::Alias,
            (_, line) => return Err(DefinitionError::Yaml { line, message: "a value was expected here".into() }),
        })
    }

    fn list(&mut self) -> Result<Value, DefinitionError> {
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
pub(super) fn read(yaml: &str, first_line: usize) -> Result<Vec<Entry>, DefinitionError> {
    // The parser is fuzzed and has never been seen to panic; a definition file is outside
    // input all the same, and a panic here must not take the program down.
    let run = std::panic::catch_unwind(|| read_events(yaml, first_line));
    run.unwrap_or_else(|_| {
        Err(DefinitionError::Yaml { line: first_line, message: "the YAML parser failed on this frontmatter".into() })
    })
}

fn read_events(yaml: &str, first_line: usize) -> Result<Vec<Entry>, DefinitionError> {
    let mut events = Events { parser: Parser::new_from_str(yaml), first_line };
    events.next()?; // StreamStart
    match events.next()? {
        (Event::StreamEnd, _) => return Ok(Vec::new()),
        (Event::DocumentStart(_), _) => {}
        (_, line) => return Err(DefinitionError::NotAMapping { line }),
    }
    let entries = match events.next()? {
        (Event::MappingStart(..), _) => mapping(&mut events)?,
        (Event::Scalar(text, ScalarStyle::Plain, _, None), _) if text.trim().is_empty() => Vec::new(),
        (_, line) => return Err(DefinitionError::NotAMapping { line }),
    };
    loop {
        match events.next()? {
            (Event::StreamEnd, _) => return Ok(entries),
            (Event::DocumentStart(_), line) => {
                let message = "a second YAML document starts here; the frontmatter is one mapping of keys".into();
                return Err(DefinitionError::Yaml { line, message });
            }
            _ => {}
        }
    }
}

fn mapping(events: &mut Events<'_>) -> Result<Vec<Entry>, DefinitionError> {
    let mut entries: Vec<Entry> = Vec::new();
    loop {
        let (key, line) = match events.next()? {
            (Event::MappingEnd, _) => return Ok(entries),
            (Event::Scalar(key, ..), line) => (key.into_owned(), line),
            (_, line) => {
                let message = "a key must be a plain name such as `description`".into();
                return Err(DefinitionError::Yaml { line, message });
            }
        };
        let value = events.value()?;
        if let Some(first) = entries.iter().find(|e| e.key == key) {
            return Err(DefinitionError::DuplicateKey { key, line, first: first.line });
        }
        entries.push(Entry { key, line, value });
    }
}
