//! Reading a git configuration file as git reads it, to see which programs it names.
//!
//! A hostile `.git/config` must not hide a key from this reader that git sees, so the
//! grammar follows git's own parser (`config.c`): sections `[name]`, `[name "sub"]` and the
//! old `[name.sub]`, a variable on the same line as its header, values with quotes, escapes
//! and `\`-newline continuations (a continued value swallows what looks like a header on the
//! next line, as in git), comments after `#` or `;` outside quotes, CRLF line ends. Names are
//! compared without case (the subsection keeps its case, but no caller needs it). Where git
//! would stop at a syntax error, [`parse`] says so, and callers treat the file as one that
//! could name anything.

/// One `section.[subsection.]name = value` entry; `section` and `name` in lower case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The section (`diff`).
    pub section: String,
    /// The subsection, if any (`x` of `[diff "x"]`).
    pub subsection: Option<String>,
    /// The variable's name (`textconv`).
    pub name: String,
    /// Its value (`None` for a bare `name`, which git reads as true).
    pub value: Option<String>,
}

/// Why a file is not a configuration git would read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid {
    /// The line git would stop at (1-based).
    pub line: usize,
}

/// The entries of a configuration file's text, in order.
pub fn parse(text: &str) -> Result<Vec<Entry>, Invalid> {
    let mut p = Parser { chars: text.replace("\r\n", "\n").chars().collect(), at: 0, line: 1 };
    let mut entries = Vec::new();
    let mut section: Option<(String, Option<String>)> = None;
    let skip_bom = p.chars.first() == Some(&'\u{feff}');
    if skip_bom {
        p.at = 1;
    }
    let mut comment = false;
    while let Some(c) = p.next() {
        if c == '\n' {
            comment = false;
            continue;
        }
        if comment || c.is_whitespace() {
            continue;
        }
        if c == '#' || c == ';' {
            comment = true;
            continue;
        }
        if c == '[' {
            section = Some(p.header()?);
            continue;
        }
        if !c.is_ascii_alphabetic() {
            return Err(p.invalid());
        }
        let Some((name, sub)) = section.clone() else { return Err(p.invalid()) };
        let (var, value) = p.variable(c)?;
        entries.push(Entry { section: name, subsection: sub, name: var, value });
    }
    Ok(entries)
}

struct Parser {
    chars: Vec<char>,
    at: usize,
    line: usize,
}

impl Parser {
    fn next(&mut self) -> Option<char> {
        let c = self.chars.get(self.at).copied()?;
        self.at += 1;
        if c == '\n' {
            self.line += 1;
        }
        Some(c)
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn invalid(&self) -> Invalid {
        Invalid { line: self.line }
    }

    /// After `[`: `name]`, `name.sub]` or `name "sub"]`.
    fn header(&mut self) -> Result<(String, Option<String>), Invalid> {
        let mut name = String::new();
        loop {
            match self.next() {
                None => return Err(self.invalid()),
                Some(']') => break,
                Some(c) if c.is_whitespace() => return self.extended(name),
                Some(c) if c.is_ascii_alphanumeric() || c == '-' || c == '.' => name.push(c.to_ascii_lowercase()),
                Some(_) => return Err(self.invalid()),
            }
        }
        if name.is_empty() {
            return Err(self.invalid());
        }
        // `[diff.x]`: the old spelling of `[diff "x"]`.
        Ok(match name.split_once('.') {
            Some((section, sub)) => (section.to_string(), Some(sub.to_string())),
            None => (name, None),
        })
    }

    /// `[name "sub"]` after the blank following `name`.
    fn extended(&mut self, name: String) -> Result<(String, Option<String>), Invalid> {
        let mut c = ' ';
        while c.is_whitespace() {
            if c == '\n' {
                return Err(self.invalid());
            }
            c = self.next().ok_or_else(|| self.invalid())?;
        }
        if c != '"' || name.is_empty() {
            return Err(self.invalid());
        }
        let mut sub = String::new();
        loop {
            match self.next() {
                None | Some('\n') => return Err(self.invalid()),
                Some('"') => break,
                Some('\\') => match self.next() {
                    None | Some('\n') => return Err(self.invalid()),
                    Some(c) => sub.push(c),
                },
                Some(c) => sub.push(c),
            }
        }
        if self.next() != Some(']') {
            return Err(self.invalid());
        }
        // `[diff.x "y"]` is `diff.x.y.…`: the driver `x.y` of section `diff`.
        Ok(match name.split_once('.') {
            Some((section, rest)) => (section.to_string(), Some(format!("{rest}.{sub}"))),
            None => (name, Some(sub)),
        })
    }

    /// A variable starting with `first`, and its value.
    fn variable(&mut self, first: char) -> Result<(String, Option<String>), Invalid> {
        let mut name = first.to_ascii_lowercase().to_string();
        while let Some(c) = self.peek().filter(|c| c.is_ascii_alphanumeric() || *c == '-') {
            name.push(c.to_ascii_lowercase());
            self.at += 1;
        }
        while matches!(self.peek(), Some(' ' | '\t')) {
            self.at += 1;
        }
        match self.next() {
            None | Some('\n') => Ok((name, None)),
            Some('=') => Ok((name, Some(self.value()?))),
            Some(_) => Err(self.invalid()),
        }
    }

    /// A value, up to the end of its (possibly continued) line.
    fn value(&mut self) -> Result<String, Invalid> {
        let mut value = String::new();
        let (mut quote, mut comment) = (false, false);
        let mut trim_at: Option<usize> = None;
        while let Some(c) = self.next() {
            if c == '\n' {
                if quote {
                    return Err(self.invalid());
                }
                break;
            }
            if comment {
                continue;
            }
            if c.is_whitespace() && !quote {
                // Leading blanks are dropped, trailing ones trimmed at the end.
                if !value.is_empty() {
                    trim_at.get_or_insert(value.len());
                    value.push(c);
                }
                continue;
            }
            if !quote && (c == ';' || c == '#') {
                comment = true;
                continue;
            }
            trim_at = None;
            match c {
                '\\' => match self.next() {
                    Some('\n') => {}
                    Some('t') => value.push('\t'),
                    Some('b') => value.push('\u{8}'),
                    Some('n') => value.push('\n'),
                    Some(c @ ('\\' | '"')) => value.push(c),
                    _ => return Err(self.invalid()),
                },
                '"' => quote = !quote,
                c => value.push(c),
            }
        }
        if let Some(at) = trim_at {
            value.truncate(at);
        }
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(text: &str) -> Vec<String> {
        parse(text)
            .unwrap()
            .into_iter()
            .map(|e| match e.subsection {
                Some(sub) => format!("{}.{sub}.{}={}", e.section, e.name, e.value.unwrap_or_default()),
                None => format!("{}.{}={}", e.section, e.name, e.value.unwrap_or_default()),
            })
            .collect()
    }

    #[test]
    fn reads_as_git_reads() {
        assert_eq!(
            keys("[core]\n\tbare = false\n[diff \"x\"]\n\ttextconv = sh -c 'cat \"$0\"' # note\n"),
            ["core.bare=false", "diff.x.textconv=sh -c 'cat $0'"]
        );
        assert_eq!(keys("[Diff \"X\"] TextConv=evil"), ["diff.X.textconv=evil"], "a variable on the header's line");
        assert_eq!(keys("[diff.x]\ncommand = evil\n"), ["diff.x.command=evil"], "the old spelling");
        assert_eq!(keys("[filter \"a\\\"b\"]\nclean = \"a;b\" ; c\n"), ["filter.a\"b.clean=a;b"]);
        assert_eq!(keys("[core]\r\n\tpager = less\r\n"), ["core.pager=less"]);
        assert_eq!(keys("[gpg]\nprogram\n"), ["gpg.program="]);
        assert_eq!(keys("[diff.x \"y\"]\ncommand = evil"), ["diff.x.y.command=evil"]);
        assert_eq!(keys("[include]\n\tpath =   other  \n"), ["include.path=other"]);
        // A continued value swallows the next line, header-looking or not.
        assert_eq!(
            keys("[diff \"x\"]\n\tfoo = a \\\n[core]\n\ttextconv = evil\n"),
            ["diff.x.foo=a [core]", "diff.x.textconv=evil"]
        );
        // A comment ends at its line, whatever it holds.
        assert_eq!(keys("[core] # x \\\n[diff]\nexternal = evil"), ["diff.external=evil"]);
    }

    #[test]
    fn what_git_would_refuse_is_invalid() {
        for text in ["textconv = x", "[diff \"x\"\nq = 1", "[diff]\n0x = 1", "[a]\nb = \"open\n", "[a]\nb = \\q"] {
            assert!(parse(text).is_err(), "{text:?}");
        }
    }
}
