//! A toolbelt settings file (TOML) read into entries, each with its line.

use std::path::Path;

use serde_json::{Map, Value};
use toml_edit::{Document, Item, Table};

use super::schema::{self, Kind};
use super::{Entry, Layer, Origin, Problem, line_of, unknown_key};

/// Reads `text` (the contents of `file`) into entries; problems for syntax errors, unknown
/// keys and values of the wrong shape.
pub(super) fn entries(layer: Layer, file: &Path, text: &str, out: &mut Vec<Entry>, problems: &mut Vec<Problem>) {
    let doc = match Document::parse(text) {
        Ok(doc) => doc,
        Err(e) => {
            let line = e.span().map(|s| line_of(text, s.start));
            let message = format!("not valid TOML: {}", e.message().trim());
            problems.push(Problem { origin: Origin::file(layer, file, line), key: String::new(), message });
            return;
        }
    };
    let mut walker = Walker { layer, file, text, out, problems };
    walker.table("", doc.as_table());
}

struct Walker<'a> {
    layer: Layer,
    file: &'a Path,
    text: &'a str,
    out: &'a mut Vec<Entry>,
    problems: &'a mut Vec<Problem>,
}

impl Walker<'_> {
    fn origin(&self, span: Option<std::ops::Range<usize>>) -> Origin {
        Origin::file(self.layer, self.file, span.map(|s| line_of(self.text, s.start)))
    }

    fn table(&mut self, prefix: &str, table: &Table) {
        for (key, item) in table.iter() {
            let path = if prefix.is_empty() { key.to_string() } else { format!("{prefix}.{key}") };
            let span = item.span().or_else(|| table.key(key).and_then(|k| k.span()));
            if let Some(def) = schema::find(&path) {
                self.leaf(&path, def.kind, item, span);
            } else if schema::is_table(&path) {
                match item {
                    Item::Table(t) => self.table(&path, t),
                    Item::Value(toml_edit::Value::InlineTable(t)) => {
                        let t = t.clone().into_table();
                        self.table(&path, &t);
                    }
                    _ => self.problem(span, &path, format!("expected a table, got {}", item.type_name())),
                }
            } else {
                let problem = unknown_key(self.origin(span), &path);
                self.problems.push(problem);
            }
        }
    }

    fn leaf(&mut self, path: &str, kind: Kind, item: &Item, span: Option<std::ops::Range<usize>>) {
        if kind == Kind::Table {
            match item {
                Item::Table(t) => self.push(path, table_json(t), span),
                Item::Value(v @ toml_edit::Value::InlineTable(_)) => self.push(path, to_json(v), span),
                _ => self.problem(span, path, format!("expected a table, got {}", item.type_name())),
            }
            return;
        }
        if !kind.accumulates() {
            match item.as_value() {
                Some(v) => self.push(path, to_json(v), v.span().or(span)),
                None => self.problem(span, path, format!("expected a value, got {}", item.type_name())),
            }
            return;
        }
        match item {
            Item::Value(toml_edit::Value::Array(items)) => {
                for v in items.iter() {
                    self.push(path, to_json(v), v.span().or(span.clone()));
                }
            }
            Item::ArrayOfTables(tables) => {
                for t in tables.iter() {
                    self.push(path, table_json(t), t.span().or(span.clone()));
                }
            }
            _ => self.problem(span, path, format!("expected an array, got {}", item.type_name())),
        }
    }

    fn push(&mut self, path: &str, value: Value, span: Option<std::ops::Range<usize>>) {
        let origin = self.origin(span);
        self.out.push(Entry { key: path.to_string(), value, origin });
    }

    fn problem(&mut self, span: Option<std::ops::Range<usize>>, key: &str, message: String) {
        let origin = self.origin(span);
        self.problems.push(Problem { origin, key: key.to_string(), message });
    }
}

/// A TOML value as JSON (datetimes as strings).
fn to_json(value: &toml_edit::Value) -> Value {
    use toml_edit::Value as T;
    match value {
        T::String(s) => Value::String(s.value().clone()),
        T::Integer(i) => Value::from(*i.value()),
        T::Float(f) => serde_json::Number::from_f64(*f.value()).map_or(Value::Null, Value::Number),
        T::Boolean(b) => Value::Bool(*b.value()),
        T::Datetime(d) => Value::String(d.value().to_string()),
        T::Array(a) => Value::Array(a.iter().map(to_json).collect()),
        T::InlineTable(t) => Value::Object(t.iter().map(|(k, v)| (k.to_string(), to_json(v))).collect()),
    }
}

fn table_json(table: &Table) -> Value {
    let mut map = Map::new();
    for (k, item) in table.iter() {
        let v = match item {
            Item::None => continue,
            Item::Value(v) => to_json(v),
            Item::Table(t) => table_json(t),
            Item::ArrayOfTables(ts) => Value::Array(ts.iter().map(table_json).collect()),
        };
        map.insert(k.to_string(), v);
    }
    Value::Object(map)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(text: &str) -> (Vec<Entry>, Vec<Problem>) {
        let (mut out, mut problems) = (Vec::new(), Vec::new());
        entries(Layer::Project, Path::new("/p/.toolbelt/config.toml"), text, &mut out, &mut problems);
        (out, problems)
    }

    #[test]
    fn entries_carry_their_lines() {
        let (entries, problems) = read(
            "# settings\n[permissions]\nmode = \"plan\"\nallow = [\n  \"Bash(ls *)\",\n  \"Read(./x)\",\n]\n\n\
             [[hooks.PreToolUse]]\nmatcher = \"Bash\"\nhooks = [{ type = \"command\", command = \"./check.sh\" }]\n",
        );
        assert!(problems.is_empty(), "{problems:?}");
        let got: Vec<(String, Value, Option<usize>)> =
            entries.into_iter().map(|e| (e.key, e.value, e.origin.line)).collect();
        assert_eq!(
            got,
            vec![
                ("permissions.mode".into(), json!("plan"), Some(3)),
                ("permissions.allow".into(), json!("Bash(ls *)"), Some(5)),
                ("permissions.allow".into(), json!("Read(./x)"), Some(6)),
                (
                    "hooks.PreToolUse".into(),
                    json!({"matcher": "Bash", "hooks": [{"type": "command", "command": "./check.sh"}]}),
                    Some(9)
                ),
            ]
        );
    }

    #[test]
    fn unknown_keys_and_bad_shapes_are_problems() {
        let (_, problems) = read("[permissions]\nalow = []\nallow = \"Bash\"\n[sandboxx]\nmode = 1\n");
        let shown: Vec<String> = problems.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                "/p/.toolbelt/config.toml:2: permissions.alow: unknown key; did you mean `permissions.allow`?",
                "/p/.toolbelt/config.toml:3: permissions.allow: expected an array, got string",
                "/p/.toolbelt/config.toml:4: sandboxx: unknown key; did you mean `sandbox.mode`?",
            ]
        );
        let (_, problems) = read("[permissions\nmode = 1");
        assert!(problems[0].to_string().starts_with("/p/.toolbelt/config.toml:1: not valid TOML"), "{problems:?}");
    }

    #[test]
    fn every_key_of_the_schema_reads_back_as_itself() {
        for def in schema::KEYS {
            let path = if def.key.is_named() { def.key.named("x") } else { def.key.to_string() };
            let value = match def.kind {
                Kind::List => "[\"x\"]".to_string(),
                Kind::HookGroups => "[{ matcher = \"*\", hooks = [] }]".to_string(),
                Kind::Table => "{ enabled = true }".to_string(),
                _ => def.default.text().into_owned(),
            };
            let (section, name) = path.rsplit_once('.').unwrap();
            let (entries, problems) = read(&format!("[{section}]\n{name} = {value}\n"));
            assert!(problems.is_empty(), "{path}: {problems:?}");
            assert!(!entries.is_empty() && entries.iter().all(|e| e.key == path), "{path}: {entries:?}");
            assert_eq!(schema::Key::parse(&entries[0].key), Some(def.key), "{path}");
        }
    }
}
