//! `toolbelt sandbox check`: what the OS sandbox can enforce here, and whether the chosen
//! mode can be.

use std::process::ExitCode;

use toolbelt_tools::shell::{SandboxConfig, SandboxMode, SandboxReport};

use crate::cli::{Global, SandboxAction, SandboxArgs};
use crate::cmd::Setup;
use crate::output::line;

/// Probes the sandbox on a thread of its own, so the first shell command does not wait for
/// it, and warns (one line on stderr) when the chosen mode cannot be enforced here.
pub fn probe_in_background(config: &SandboxConfig) {
    if config.mode == SandboxMode::DangerFullAccess {
        return;
    }
    let (mode, network) = (config.mode, config.network);
    let spawned = std::thread::Builder::new().name("sandbox-probe".into()).spawn(move || {
        if let Err(why) = SandboxReport::probe().can_confine(mode, network) {
            tracing::warn!("{why}");
        }
    });
    if let Err(e) = spawned {
        tracing::debug!(error = %e, "cannot probe the sandbox in the background; the first shell command will");
    }
}

pub fn run(global: &Global, args: &SandboxArgs) -> anyhow::Result<ExitCode> {
    let setup = Setup::load(global)?;
    setup.require_valid()?;
    match args.action {
        SandboxAction::Check => check(&setup.sandbox()),
    }
}

/// Prints the probe's facts, then the chosen mode and whether it can be enforced: exit 0 when
/// it can, 1 when not.
fn check(config: &SandboxConfig) -> anyhow::Result<ExitCode> {
    let report = SandboxReport::probe();
    for fact in report.lines() {
        line(&fact)?;
    }
    let network = match (config.mode, config.network) {
        (SandboxMode::DangerFullAccess, _) => "not confined",
        (_, true) => "on",
        (_, false) => "off",
    };
    line(&format!("mode: {} (network {network})", config.mode))?;
    Ok(match report.can_confine(config.mode, config.network) {
        Ok(()) if config.mode == SandboxMode::DangerFullAccess => {
            line("enforced: nothing (commands run unconfined)")?;
            ExitCode::SUCCESS
        }
        Ok(()) => {
            line("enforced: yes")?;
            ExitCode::SUCCESS
        }
        Err(why) => {
            line(&format!("enforced: no: {why}"))?;
            ExitCode::from(1)
        }
    })
}
