//! Filling a skill's arguments in: `$ARGUMENTS` is the whole argument text, `$1`…`$9` and
//! `$ARGUMENTS[0]`… its words (quotes group words, as a shell would). A body that names none
//! gets the arguments appended, so they are never lost.

/// `body` with `args` filled in.
pub fn substitute(body: &str, args: &str) -> String {
    let args = args.trim();
    let words = split_words(args);
    let word = |i: usize| words.get(i).map(String::as_str).unwrap_or("");
    let mut out = String::with_capacity(body.len() + args.len());
    let mut used = false;
    let mut rest = body;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(tail) = after.strip_prefix("ARGUMENTS") {
            if let Some((index, len)) = bracket_index(tail) {
                out.push_str(word(index));
                rest = &tail[len..];
            } else {
                out.push_str(args);
                rest = tail;
            }
            used = true;
        } else if let Some(d) = after.chars().next().filter(|c| ('1'..='9').contains(c)) {
            out.push_str(word(d as usize - '1' as usize));
            rest = &after[1..];
            used = true;
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    if !used && !args.is_empty() {
        out.push_str("\n\nARGUMENTS: ");
        out.push_str(args);
    }
    out
}

/// `[N]` at the start of `text`: N and the length of `[N]`.
fn bracket_index(text: &str) -> Option<(usize, usize)> {
    let inner = text.strip_prefix('[')?;
    let close = inner.find(']')?;
    let n = inner[..close].trim().parse().ok()?;
    Some((n, close + 2))
}

/// The words of `args`: split on whitespace, a quoted stretch (`"…"` or `'…'`) one word.
fn split_words(args: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    let mut started = false;
    for c in args.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => current.push(c),
            None if c == '"' || c == '\'' => {
                quote = Some(c);
                started = true;
            }
            None if c.is_whitespace() => {
                if started {
                    words.push(std::mem::take(&mut current));
                    started = false;
                }
            }
            None => {
                current.push(c);
                started = true;
            }
        }
    }
    if started {
        words.push(current);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_whole_and_positional_arguments() {
        assert_eq!(substitute("Review $ARGUMENTS now", "src/a.rs  fast"), "Review src/a.rs  fast now");
        assert_eq!(substitute("$1 then $2, not $3.", "one \"two words\""), "one then two words, not .");
        assert_eq!(substitute("first=$ARGUMENTS[0] second=$ARGUMENTS[1]", "a b"), "first=a second=b");
        assert_eq!(substitute("costs $5? no: $x", ""), "costs ? no: $x");
        assert_eq!(substitute("Do it.", "extra words"), "Do it.\n\nARGUMENTS: extra words");
        assert_eq!(substitute("Do it.", "  "), "Do it.");
    }
}
