//! `toolbelt audit`: where the audit log is, and whether its hash chain holds.

use std::cell::RefCell;
use std::process::ExitCode;

use serde_json::{Value, json};
use toolbelt_runtime::audit::{Anchor, Broken, ChainCheck, Summary, verify};
use toolbelt_tools::storage::{AUDIT_TABLE, AuditChain};

use crate::cli::{AuditAction, AuditArgs, Global};
use crate::cmd::Setup;
use crate::output::line;

pub fn run(global: &Global, args: &AuditArgs) -> anyhow::Result<ExitCode> {
    let setup = Setup::load(global)?;
    let configured = &setup.settings.audit.path;
    match &args.action {
        AuditAction::Path => {
            match setup.asm.shared_storage()? {
                Some(shared) => line(&format!("postgres://{}/{AUDIT_TABLE}", shared.server()))?,
                None => line(&configured.display().to_string())?,
            }
            if !setup.settings.audit_enabled {
                eprintln!("note: the audit log is off; `audit.enabled = true` (or --audit FILE) turns it on");
            }
            Ok(ExitCode::SUCCESS)
        }
        AuditAction::Verify { file, json } => {
            let outcome = match (file, setup.asm.shared_storage()?) {
                (None, Some(shared)) => verify_shared(AuditChain::new(shared))?,
                (file, _) => verify(file.as_ref().unwrap_or(configured)),
            };
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

/// Checks the chain in the shared database, in one snapshot, on a thread of its own (the
/// database's blocking client must not run on a runtime's thread).
fn verify_shared(chain: AuditChain) -> anyhow::Result<Result<Summary, Broken>> {
    let read = std::thread::spawn(move || {
        let check = RefCell::new(ChainCheck::new(&format!("table {AUDIT_TABLE}"), "table audit_head"));
        let mut broken = None;
        let mut at = 0;
        chain.read(
            &mut |head| check.borrow_mut().anchor(Anchor { seq: head.seq, sha256: head.sha256, first: head.first }),
            &mut |text| {
                at += 1;
                broken = check.borrow_mut().line(text.as_bytes(), at).err();
                broken.is_none()
            },
        )?;
        anyhow::Ok(match broken {
            Some(broken) => Err(broken),
            None => check.into_inner().finish(),
        })
    });
    read.join().map_err(|_| anyhow::anyhow!("reading the audit log failed"))?
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
