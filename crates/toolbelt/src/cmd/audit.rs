//! `toolbelt audit`: where the audit log is, and whether its hash chain holds.

use std::process::ExitCode;

use serde_json::{Value, json};
use toolbelt_runtime::audit::{Broken, verify};

use crate::cli::{AuditAction, AuditArgs, Global};
use crate::cmd::Setup;
use crate::output::line;

pub fn run(global: &Global, args: &AuditArgs) -> anyhow::Result<ExitCode> {
    let setup = Setup::load(global)?;
    let configured = &setup.settings.audit.path;
    match &args.action {
        AuditAction::Path => {
            line(&configured.display().to_string())?;
            if !setup.settings.audit_enabled {
                eprintln!("note: the audit log is off; `audit.enabled = true` (or --audit FILE) turns it on");
            }
            Ok(ExitCode::SUCCESS)
        }
        AuditAction::Verify { file, json } => {
            let path = file.as_ref().unwrap_or(configured);
            let outcome = verify(path);
            if *json {
                line(&verdict_json(&outcome).to_string())?;
            } else {
                match &outcome {
                    Ok(summary) => line(&summary.to_string())?,
                    Err(broken) => line(&broken.to_string())?,
                }
            }
            Ok(if outcome.is_ok() { ExitCode::SUCCESS } else { ExitCode::from(1) })
        }
    }
}

/// `{"ok": true, "records", "first_seq", "last_seq", "first_time", "last_time"}`, or
/// `{"ok": false, "kind", "message", …the problem's fields}`.
fn verdict_json(outcome: &Result<toolbelt_runtime::audit::Summary, Broken>) -> Value {
    let (ok, mut value) = match outcome {
        Ok(summary) => (true, serde_json::to_value(summary).unwrap_or_default()),
        Err(broken) => {
            let mut value = serde_json::to_value(broken).unwrap_or_default();
            if let Value::Object(map) = &mut value {
                map.insert("message".into(), json!(broken.to_string()));
            }
            (false, value)
        }
    };
    if let Value::Object(map) = &mut value {
        map.shift_insert(0, "ok".into(), json!(ok));
    }
    value
}
