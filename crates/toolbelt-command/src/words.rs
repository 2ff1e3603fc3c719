//! Shell words after quote removal, accepted only when they are literal.

use tree_sitter::Node;

use crate::tree::{children, describe, quote, snippet, text};

/// One shell word as the program will receive it.
#[derive(Debug, Clone)]
pub(crate) struct Word {
    /// The text after quote removal.
    pub text: String,
    /// The source text, for messages.
    pub raw: String,
    /// Whether bash may turn it into other words (an unquoted glob, `{a,b}` or `{1..3}`).
    pub may_expand: bool,
}

/// The literal word that `node` stands for, or why it is not literal.
pub(crate) fn word(node: Node<'_>, src: &str) -> Result<Word, String> {
    let raw = text(node, src);
    let mut builder = Builder { raw, ..Builder::default() };
    if node.kind() == "concatenation" {
        for piece in children(node) {
            builder.piece(piece, src)?;
        }
    } else {
        builder.piece(node, src)?;
    }
    Ok(Word { text: builder.text, raw: raw.to_string(), may_expand: builder.may_expand || builder.brace_separator })
}

/// Whether a node of this kind can be a word (an argument or a command name).
pub(crate) fn is_word(kind: &str) -> bool {
    matches!(kind, "word" | "number" | "raw_string" | "string" | "concatenation")
}

#[derive(Default)]
struct Builder<'s> {
    raw: &'s str,
    text: String,
    may_expand: bool,
    /// Unquoted `{` not yet closed.
    brace_depth: usize,
    /// An unquoted `,` or `..` inside braces: bash expands `{a,b}` and `{1..3}`.
    brace_separator: bool,
    /// An unquoted `!` ended the last piece: fine only if no piece follows.
    bang_pending: bool,
}

impl Builder<'_> {
    fn piece(&mut self, node: Node<'_>, src: &str) -> Result<(), String> {
        if self.bang_pending {
            return Err(self.history());
        }
        match node.kind() {
            "word" | "number" => {
                if let Some(inner) = children(node).into_iter().find(|n| n.is_named()) {
                    return Err(describe(inner, src));
                }
                self.unquoted(text(node, src))
            }
            "raw_string" => {
                let body = text(node, src).strip_prefix('\'').and_then(|s| s.strip_suffix('\''));
                let Some(body) = body else {
                    return Err(format!("unsupported quoting in {}", quote(&snippet(self.raw))));
                };
                self.text.push_str(body);
                Ok(())
            }
            "string" => {
                for part in children(node) {
                    match part.kind() {
                        "\"" if !part.is_named() => {}
                        "string_content" => self.double_quoted(text(part, src))?,
                        _ => return Err(describe(part, src)),
                    }
                }
                Ok(())
            }
            _ => Err(describe(node, src)),
        }
    }

    /// Unquoted text: backslash escapes, globs and brace expansion, history expansion.
    fn unquoted(&mut self, s: &str) -> Result<(), String> {
        let mut chars = s.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    Some('\n') => {}
                    Some(escaped) => self.text.push(escaped),
                    None => self.text.push('\\'),
                },
                '$' | '`' => return Err(format!("an expansion in {}", quote(&snippet(self.raw)))),
                '!' => {
                    match chars.peek() {
                        None => self.bang_pending = true,
                        Some(&next) if next.is_whitespace() || next == '=' || next == '(' => {}
                        Some(_) => return Err(self.history()),
                    }
                    self.text.push(c);
                }
                '*' | '?' | '[' => {
                    self.may_expand = true;
                    self.text.push(c);
                }
                '{' => {
                    self.brace_depth += 1;
                    self.text.push(c);
                }
                '}' => {
                    self.brace_depth = self.brace_depth.saturating_sub(1);
                    self.text.push(c);
                }
                ',' if self.brace_depth > 0 => {
                    self.brace_separator = true;
                    self.text.push(c);
                }
                '.' if self.brace_depth > 0 && chars.peek() == Some(&'.') => {
                    self.brace_separator = true;
                    self.text.push(c);
                }
                _ => self.text.push(c),
            }
        }
        Ok(())
    }

    /// The inside of `"…"`: only `\$`, `` \` ``, `\"`, `\\` and `\`-newline are escapes.
    fn double_quoted(&mut self, s: &str) -> Result<(), String> {
        let mut chars = s.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' => match chars.peek() {
                    Some(&next @ ('$' | '`' | '"' | '\\')) => {
                        self.text.push(next);
                        chars.next();
                    }
                    Some('\n') => {
                        chars.next();
                    }
                    _ => self.text.push('\\'),
                },
                '$' | '`' => return Err(format!("an expansion in {}", quote(&snippet(self.raw)))),
                '!' => {
                    match chars.peek() {
                        None => {}
                        Some(&next) if next.is_whitespace() || next == '=' || next == '(' => {}
                        Some(_) => return Err(self.history()),
                    }
                    self.text.push(c);
                }
                _ => self.text.push(c),
            }
        }
        Ok(())
    }

    fn history(&self) -> String {
        format!("`!` in {} could be a history expansion; quote it with single quotes", quote(&snippet(self.raw)))
    }
}
