//! Shell words after quote removal: literal ones, and ones whose expansions the script's own
//! variables ([`crate::vars`]) tell, or that are computed when the command runs.

use tree_sitter::Node;

use crate::tree::{children, describe, is_plain_expansion, quote, snippet, text};

/// Most values one word may stand for (`for a in …; do for b in …` multiply).
const MAX_VALUES: usize = 16;

/// One shell word as the program will receive it.
#[derive(Debug, Clone)]
pub(crate) struct Word {
    /// The text after quote removal and the expansions the script tells (its first value
    /// when a variable may hold several); a part computed at run time keeps its source text.
    pub text: String,
    /// Its other values, when a variable of the script may hold several.
    pub others: Vec<String>,
    /// The source text, for messages.
    pub raw: String,
    /// Whether bash may turn it into other words (an unquoted glob, `{a,b}`, a variable
    /// holding a glob, or a loop variable over a glob's matches).
    pub may_expand: bool,
    /// Whether it holds an unquoted brace expansion (`{a,b}`).
    pub brace: bool,
    /// The first part whose value is known only when the command runs.
    pub computed: Option<Computed>,
    /// Whether a part known only when the command runs is unquoted: the shell may split its
    /// value into several words (or none) and expand globs in it.
    pub splits: bool,
}

impl Word {
    /// Every value the word may take (`text` first).
    pub(crate) fn values(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.text.as_str()).chain(self.others.iter().map(String::as_str))
    }

    /// Whether the word is only `$?`, `$#` or `$$` (quoted or not): digits, never empty.
    pub(crate) fn is_number(&self) -> bool {
        self.computed.as_ref().is_some_and(|c| {
            c.kind == ComputedKind::Number && c.raw != "$!" && c.raw != "${!}" && c.raw == self.raw.trim_matches('"')
        })
    }
}

/// A part of a word whose value is known only when the command runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Computed {
    /// Its source text (`$?`, `$HOME`, `$(pwd)`).
    pub raw: String,
    /// What it is.
    pub kind: ComputedKind,
}

/// What a computed part is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ComputedKind {
    /// `$?`, `$#`, `$$`, `$!`: a number.
    Number,
    /// `$-`, `$0`, `$@`, `$1`…: a parameter of the shell.
    Shell,
    /// A variable the command does not set before this point.
    Unset,
    /// A variable the command set to a computed value.
    Set,
    /// A command substitution.
    Output,
    /// An unquoted variable whose value the shell may split into several words.
    Split,
    /// A variable that may hold too many values to follow.
    Many,
    /// `~user`, `~+`, `~-`.
    Home,
}

impl Computed {
    /// What it is, as the start of a sentence naming it.
    pub(crate) fn describe(&self) -> String {
        let raw = quote(&snippet(&self.raw));
        match self.kind {
            ComputedKind::Number | ComputedKind::Shell => format!("{raw} is set by the shell when the command runs"),
            ComputedKind::Unset => format!("{raw} is not known to be set by the command before this point"),
            ComputedKind::Set => format!("{raw} holds a value computed when the command runs"),
            ComputedKind::Output => format!("{raw} is replaced by a command's output"),
            ComputedKind::Split => format!("{raw} is not quoted, so the shell may split its value into several words"),
            ComputedKind::Many => format!("{raw} may hold too many values to follow"),
            ComputedKind::Home => format!("{raw} names a directory known only when the command runs"),
        }
    }
}

/// One literal value a variable may hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Value {
    /// The value (for a loop over an unquoted glob, the pattern).
    pub text: String,
    /// Whether it stands for the files an unquoted glob matched (`for f in *.rs`).
    pub glob: bool,
}

/// What a variable holds at one use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Binding<'v> {
    /// The script set it before this use, only ever to one of these literal values.
    Values(&'v [Value]),
    /// The script set it before this use, to a value computed when it runs.
    Computed,
    /// The text does not say: the environment's value, or one set in ways it does not show.
    Unbound,
}

/// Where a word's variables are looked up: the script's own variables (`vars::Vars`).
pub(crate) trait Lookup {
    /// What `name` holds at byte `at` of the script.
    fn lookup(&self, name: &str, at: usize) -> Binding<'_>;
}

/// How a word's expansions are read.
pub(crate) struct Scope<'a> {
    /// The script's own variables.
    pub vars: &'a dyn Lookup,
    /// Checks the script of a command substitution (`Err`: the word is rejected).
    pub substitution: &'a dyn Fn(Node<'_>) -> Result<(), String>,
}

/// The literal word that `node` stands for, or why it is not literal.
pub(crate) fn word(node: Node<'_>, src: &str) -> Result<Word, String> {
    read(node, src, None)
}

/// The word that `node` stands for, its expansions read in `scope`; `Err` for an expansion
/// that is not read at all (arithmetic, `${x:-y}`, ANSI-C quoting…) or a substitution that
/// `scope` rejects.
pub(crate) fn expand(node: Node<'_>, src: &str, scope: &Scope<'_>) -> Result<Word, String> {
    read(node, src, Some(scope))
}

fn read(node: Node<'_>, src: &str, scope: Option<&Scope<'_>>) -> Result<Word, String> {
    let raw = text(node, src);
    let mut builder = Builder::new(raw, scope);
    if node.kind() == "concatenation" {
        for piece in children(node) {
            builder.piece(piece, src)?;
        }
    } else {
        builder.piece(node, src)?;
    }
    let mut texts = builder.texts.into_iter();
    Ok(Word {
        text: texts.next().unwrap_or_default(),
        others: texts.collect(),
        raw: raw.to_string(),
        may_expand: builder.may_expand || builder.brace_separator,
        brace: builder.brace_separator,
        computed: builder.computed,
        splits: builder.splits,
    })
}

/// Whether a node of this kind can be a literal word (an argument or a command name).
pub(crate) fn is_word(kind: &str) -> bool {
    matches!(kind, "word" | "number" | "raw_string" | "string" | "concatenation")
}

/// Whether a node of this kind is an argument word (literal or not).
pub(crate) fn is_argument(kind: &str) -> bool {
    is_word(kind)
        || matches!(
            kind,
            "simple_expansion"
                | "expansion"
                | "command_substitution"
                | "process_substitution"
                | "arithmetic_expansion"
                | "ansi_c_string"
                | "translated_string"
                | "brace_expression"
        )
}

struct Builder<'s, 'c> {
    raw: &'s str,
    scope: Option<&'c Scope<'c>>,
    /// The word's values so far (one unless a variable holds several).
    texts: Vec<String>,
    may_expand: bool,
    computed: Option<Computed>,
    /// A computed part is unquoted.
    splits: bool,
    /// Unquoted `{` not yet closed.
    brace_depth: usize,
    /// An unquoted `,` or `..` inside braces: bash expands `{a,b}` and `{1..3}`.
    brace_separator: bool,
    /// An unquoted `!` ended the last piece: fine only if no piece follows.
    bang_pending: bool,
    /// Whether nothing has been read yet (a leading `~` is a tilde expansion).
    at_start: bool,
}

impl<'s, 'c> Builder<'s, 'c> {
    fn new(raw: &'s str, scope: Option<&'c Scope<'c>>) -> Self {
        Builder {
            raw,
            scope,
            texts: vec![String::new()],
            may_expand: false,
            computed: None,
            splits: false,
            brace_depth: 0,
            brace_separator: false,
            bang_pending: false,
            at_start: true,
        }
    }

    fn push(&mut self, c: char) {
        for t in &mut self.texts {
            t.push(c);
        }
    }

    fn push_str(&mut self, s: &str) {
        for t in &mut self.texts {
            t.push_str(s);
        }
    }

    fn piece(&mut self, node: Node<'_>, src: &str) -> Result<(), String> {
        if self.bang_pending {
            return Err(self.history());
        }
        let start = self.at_start;
        self.at_start = false;
        match node.kind() {
            "word" | "number" => {
                if let Some(inner) = children(node).into_iter().find(|n| n.is_named()) {
                    return Err(describe(inner, src));
                }
                self.unquoted(text(node, src), start)
            }
            "raw_string" => {
                let body = text(node, src).strip_prefix('\'').and_then(|s| s.strip_suffix('\''));
                let Some(body) = body else {
                    return Err(format!("the quoting in {} is not classified", quote(&snippet(self.raw))));
                };
                self.push_str(body);
                Ok(())
            }
            "string" => {
                for part in children(node) {
                    match part.kind() {
                        "\"" if !part.is_named() => {}
                        "string_content" => self.double_quoted(text(part, src))?,
                        "simple_expansion" | "expansion" | "command_substitution" => self.expansion(part, src, true)?,
                        _ => return Err(describe(part, src)),
                    }
                }
                Ok(())
            }
            "simple_expansion" | "expansion" | "command_substitution" => self.expansion(node, src, false),
            _ => Err(describe(node, src)),
        }
    }

    /// `$name`, `${name}`, `$?`…, `$(…)` and backticks, when a scope reads them.
    fn expansion(&mut self, node: Node<'_>, src: &str, quoted: bool) -> Result<(), String> {
        let Some(scope) = self.scope else { return Err(describe(node, src)) };
        let raw = text(node, src);
        if node.kind() == "command_substitution" {
            (scope.substitution)(node)?;
            self.compute(raw, ComputedKind::Output, !quoted);
            return Ok(());
        }
        let name = match children(node).as_slice() {
            [dollar, name] if dollar.kind() == "$" => *name,
            _ if node.kind() == "expansion" && is_plain_expansion(node) => {
                let Some(name) = node.named_child(0) else { return Err(describe(node, src)) };
                name
            }
            _ => {
                return Err(format!(
                    "{} is a parameter expansion with an operator, which is not classified",
                    quote(&snippet(raw))
                ));
            }
        };
        let name_text = text(name, src);
        let shell = match name.kind() {
            "special_variable_name" if matches!(name_text, "?" | "#" | "$" | "!") => Some(ComputedKind::Number),
            "special_variable_name" => Some(ComputedKind::Shell),
            "variable_name" if name_text.bytes().all(|b| b.is_ascii_digit()) => Some(ComputedKind::Shell),
            "variable_name" => None,
            _ => return Err(describe(node, src)),
        };
        if let Some(kind) = shell {
            self.compute(raw, kind, !quoted);
            return Ok(());
        }
        match scope.vars.lookup(name_text, node.start_byte()) {
            Binding::Unbound => self.compute(raw, ComputedKind::Unset, !quoted),
            Binding::Computed => self.compute(raw, ComputedKind::Set, !quoted),
            Binding::Values(values) => self.values(values, quoted, raw),
        }
        Ok(())
    }

    /// A part known only when the command runs; `split` when it is unquoted.
    fn compute(&mut self, raw: &str, kind: ComputedKind, split: bool) {
        self.splits |= split;
        if self.computed.is_none() {
            self.computed = Some(Computed { raw: raw.to_string(), kind });
        }
        self.push_str(raw);
    }

    /// A variable the script set to one of `values`.
    fn values(&mut self, values: &[Value], quoted: bool, raw: &str) {
        let splits = |v: &Value| v.glob || v.text.is_empty() || v.text.contains([' ', '\t', '\n']);
        if !quoted && values.iter().any(splits) {
            return self.compute(raw, ComputedKind::Split, true);
        }
        if self.texts.len() * values.len() > MAX_VALUES {
            return self.compute(raw, ComputedKind::Many, !quoted);
        }
        self.may_expand |= values.iter().any(|v| v.glob || (!quoted && v.text.contains(['*', '?', '['])));
        self.texts =
            self.texts.iter().flat_map(|t| values.iter().map(move |v| format!("{t}{}", v.text))).collect::<Vec<_>>();
        self.texts.dedup();
    }

    /// Unquoted text: backslash escapes, globs and brace expansion, history expansion, a
    /// leading `~user`.
    fn unquoted(&mut self, s: &str, start: bool) -> Result<(), String> {
        if start && let Some(rest) = s.strip_prefix('~') {
            let user = rest.split('/').next().unwrap_or_default();
            if !user.is_empty() {
                let home = format!("~{user}");
                if self.scope.is_none() {
                    return Err(format!("{} names a directory known only when the command runs", quote(&home)));
                }
                self.compute(&home, ComputedKind::Home, false);
                return self.unquoted(&rest[user.len()..], false);
            }
        }
        let mut chars = s.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    Some('\n') => {}
                    Some(escaped) => self.push(escaped),
                    None => self.push('\\'),
                },
                '$' | '`' => {
                    return Err(format!("{} holds an expansion that is not classified", quote(&snippet(self.raw))));
                }
                '!' => {
                    match chars.peek() {
                        None => self.bang_pending = true,
                        Some(&next) if next.is_whitespace() || next == '=' || next == '(' => {}
                        Some(_) => return Err(self.history()),
                    }
                    self.push(c);
                }
                '*' | '?' | '[' => {
                    self.may_expand = true;
                    self.push(c);
                }
                '{' => {
                    self.brace_depth += 1;
                    self.push(c);
                }
                '}' => {
                    self.brace_depth = self.brace_depth.saturating_sub(1);
                    self.push(c);
                }
                ',' if self.brace_depth > 0 => {
                    self.brace_separator = true;
                    self.push(c);
                }
                '.' if self.brace_depth > 0 && chars.peek() == Some(&'.') => {
                    self.brace_separator = true;
                    self.push(c);
                }
                _ => self.push(c),
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
                        self.push(next);
                        chars.next();
                    }
                    Some('\n') => {
                        chars.next();
                    }
                    _ => self.push('\\'),
                },
                '$' | '`' => {
                    return Err(format!("{} holds an expansion that is not classified", quote(&snippet(self.raw))));
                }
                '!' => {
                    match chars.peek() {
                        None => {}
                        Some(&next) if next.is_whitespace() || next == '=' || next == '(' => {}
                        Some(_) => return Err(self.history()),
                    }
                    self.push(c);
                }
                _ => self.push(c),
            }
        }
        Ok(())
    }

    fn history(&self) -> String {
        format!("`!` in {} could be a history expansion; quote it with single quotes", quote(&snippet(self.raw)))
    }
}
