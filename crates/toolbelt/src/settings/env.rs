//! The environment layer: `TOOLBELT_<SECTION>__<KEY>=value` (`TOOLBELT_PERMISSIONS__MODE=plan`,
//! `TOOLBELT_PERMISSIONS__ALLOW='["Bash(ls *)", "Read"]'`).
//!
//! Only variables with a `__` are settings (`TOOLBELT_LOG` is not). A value is read as TOML
//! when it parses as one (`true`, `42`, `["a", "b"]`), else as a plain string; a list key
//! given a plain string gets that one item.

use serde_json::Value;

use super::schema::{self, Kind};
use super::{Entry, Origin, Problem, unknown_key};

pub(super) fn entries(vars: impl IntoIterator<Item = (String, String)>, problems: &mut Vec<Problem>) -> Vec<Entry> {
    let mut vars: Vec<(String, String)> =
        vars.into_iter().filter(|(k, _)| k.starts_with("TOOLBELT_") && k.contains("__")).collect();
    vars.sort();
    let mut out = Vec::new();
    for (var, raw) in vars {
        let key = var["TOOLBELT_".len()..].to_ascii_lowercase().replace("__", ".");
        let origin = Origin::env(&var);
        let Some(def) = schema::find(&key) else {
            problems.push(unknown_key(origin, &key));
            continue;
        };
        let value = parse(&raw, def.kind);
        match (def.kind.accumulates(), value) {
            (true, Value::Array(items)) => {
                out.extend(items.into_iter().map(|v| Entry { key: key.clone(), value: v, origin: origin.clone() }));
            }
            (_, value) => out.push(Entry { key, value, origin }),
        }
    }
    out
}

fn parse(raw: &str, kind: Kind) -> Value {
    if kind == Kind::Text || matches!(kind, Kind::Choice(_) | Kind::Mode) {
        return Value::String(raw.to_string());
    }
    let as_toml = format!("v = {raw}");
    match toml_edit::Document::parse(as_toml.as_str()) {
        Ok(doc) => doc
            .as_table()
            .get("v")
            .and_then(|item| item.as_value())
            .map(toml_json)
            .unwrap_or_else(|| Value::String(raw.to_string())),
        Err(_) => Value::String(raw.to_string()),
    }
}

fn toml_json(value: &toml_edit::Value) -> Value {
    use toml_edit::Value as T;
    match value {
        T::String(s) => Value::String(s.value().clone()),
        T::Integer(i) => Value::from(*i.value()),
        T::Boolean(b) => Value::Bool(*b.value()),
        T::Array(a) => Value::Array(a.iter().map(toml_json).collect()),
        other => Value::String(other.to_string().trim().to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn variables_become_entries() {
        let vars = [
            ("TOOLBELT_PERMISSIONS__MODE", "plan"),
            ("TOOLBELT_PERMISSIONS__ALLOW", r#"["Bash(ls *)", "Read"]"#),
            ("TOOLBELT_PERMISSIONS__DENY", "WebFetch"),
            ("TOOLBELT_SANDBOX__NETWORK", "true"),
            ("TOOLBELT_RUNTIME__OUTPUT_BUDGET", "5000"),
            ("TOOLBELT_LOG", "debug"),
            ("TOOLBELT_SANDBOX__NETWROK", "true"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()));
        let mut problems = Vec::new();
        let got: Vec<(String, Value)> = entries(vars, &mut problems).into_iter().map(|e| (e.key, e.value)).collect();
        assert_eq!(
            got,
            vec![
                ("permissions.allow".into(), json!("Bash(ls *)")),
                ("permissions.allow".into(), json!("Read")),
                ("permissions.deny".into(), json!("WebFetch")),
                ("permissions.mode".into(), json!("plan")),
                ("runtime.output_budget".into(), json!(5000)),
                ("sandbox.network".into(), json!(true)),
            ]
        );
        assert_eq!(
            problems.iter().map(ToString::to_string).collect::<Vec<_>>(),
            ["env TOOLBELT_SANDBOX__NETWROK: sandbox.netwrok: unknown key; did you mean `sandbox.network`?"]
        );
    }
}
