//! A small shell lexer: enough of bash's quoting to split a command line into the words of
//! its simple commands, for the deny list. It never fails; what it does not understand
//! becomes words.

/// One lexical unit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Token {
    /// A word after quote removal. `substitution` is set when a double-quoted part held a
    /// command substitution, which runs too: the text is then checked as a command.
    Word {
        /// The text.
        text: String,
        /// Whether it holds `$(…)` or backticks inside double quotes.
        substitution: bool,
    },
    /// `>`, `>>`, `<`, `>|`, …: the next word is a redirection target.
    Redirect,
    /// Anything that ends a simple command: `;`, `&`, `|`, newline, parentheses, braces,
    /// the start and end of a substitution.
    Separator,
}

/// Splits `input` into tokens.
pub fn lex(input: &str) -> Vec<Token> {
    let mut lexer = Lexer { chars: input.chars().collect(), pos: 0, tokens: Vec::new(), word: None, subst: false };
    lexer.run();
    lexer.tokens
}

struct Lexer {
    chars: Vec<char>,
    pos: usize,
    tokens: Vec<Token>,
    word: Option<String>,
    subst: bool,
}

impl Lexer {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.pos + ahead).copied()
    }

    fn push_char(&mut self, c: char) {
        self.word.get_or_insert_with(String::new).push(c);
    }

    fn end_word(&mut self) {
        if let Some(text) = self.word.take() {
            let substitution = std::mem::take(&mut self.subst);
            if !substitution && (text == "{" || text == "}") {
                self.tokens.push(Token::Separator);
            } else {
                self.tokens.push(Token::Word { text, substitution });
            }
        }
    }

    fn run(&mut self) {
        while let Some(c) = self.peek(0) {
            self.pos += 1;
            match c {
                ' ' | '\t' => self.end_word(),
                '\n' | ';' | '&' | '|' | '(' | ')' | '`' => {
                    self.end_word();
                    self.tokens.push(Token::Separator);
                }
                '>' | '<' => {
                    // A descriptor number right before the operator (`2>`) is not a word.
                    if self.word.as_deref().is_some_and(|w| w.chars().all(|c| c.is_ascii_digit())) {
                        self.word = None;
                    }
                    self.end_word();
                    while matches!(self.peek(0), Some('>' | '<' | '|' | '&')) {
                        self.pos += 1;
                    }
                    self.tokens.push(Token::Redirect);
                }
                '#' if self.word.is_none() => {
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.pos += 1;
                    }
                }
                '\\' => match self.peek(0) {
                    Some('\n') => self.pos += 1,
                    Some(next) => {
                        self.pos += 1;
                        self.push_char(next);
                    }
                    None => {}
                },
                '\'' => self.single_quoted(),
                '"' => self.double_quoted(),
                '$' => self.dollar(),
                _ => self.push_char(c),
            }
        }
        self.end_word();
    }

    fn single_quoted(&mut self) {
        let word = self.word.get_or_insert_with(String::new);
        while let Some(c) = self.chars.get(self.pos).copied() {
            self.pos += 1;
            if c == '\'' {
                return;
            }
            word.push(c);
        }
    }

    fn double_quoted(&mut self) {
        self.word.get_or_insert_with(String::new);
        while let Some(c) = self.peek(0) {
            self.pos += 1;
            match c {
                '"' => return,
                '\\' if matches!(self.peek(0), Some('"' | '\\' | '$' | '`' | '\n')) => {
                    if let Some(next) = self.peek(0) {
                        self.pos += 1;
                        self.push_char(next);
                    }
                }
                '`' => {
                    self.subst = true;
                    self.push_char(' ');
                    self.push_char(';');
                }
                '$' if self.peek(0) == Some('(') => {
                    self.subst = true;
                    self.push_char('$');
                }
                _ => self.push_char(c),
            }
        }
    }

    /// `$(` starts a substitution (a new command), `${…}` stays in the word, `$'…'` is a
    /// quoted string.
    fn dollar(&mut self) {
        match self.peek(0) {
            Some('(') => {
                self.pos += 1;
                self.end_word();
                self.tokens.push(Token::Separator);
            }
            Some('{') => {
                self.push_char('$');
                while let Some(c) = self.peek(0) {
                    self.pos += 1;
                    self.push_char(c);
                    if c == '}' {
                        break;
                    }
                }
            }
            Some('\'') => {
                self.pos += 1;
                self.single_quoted();
            }
            _ => self.push_char('$'),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(input: &str) -> Vec<String> {
        lex(input)
            .into_iter()
            .map(|t| match t {
                Token::Word { text, .. } => text,
                Token::Redirect => ">".into(),
                Token::Separator => ";".into(),
            })
            .collect()
    }

    #[test]
    fn splits_like_the_shell() {
        assert_eq!(words(r#"rm -rf "$HOME"/ 'a b' c\ d"#), ["rm", "-rf", "$HOME/", "a b", "c d"]);
        assert_eq!(words("a&&b|c;d"), ["a", ";", ";", "b", ";", "c", ";", "d"]);
        assert_eq!(words("echo ${HOME} 2>/dev/null"), ["echo", "${HOME}", ">", "/dev/null"]);
        assert_eq!(words("x $(rm /) # rm -rf /"), ["x", ";", "rm", "/", ";"]);
        assert_eq!(words("{ a; }"), [";", "a", ";", ";"]);
    }

    #[test]
    fn marks_substitutions_in_double_quotes() {
        let tokens = lex(r#"echo "$(rm -rf /)""#);
        assert_eq!(tokens[1], Token::Word { text: "$(rm -rf /)".into(), substitution: true });
    }
}
