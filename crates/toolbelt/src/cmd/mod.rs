//! One module per subcommand.

pub mod batch;
pub mod call;
pub mod sandbox;
pub mod tools;

use std::sync::Arc;
use std::time::Duration;

use toolbelt_core::{CancellationToken, Category, Extensions};
use toolbelt_runtime::{Runtime, RuntimeConfig};

use toolbelt_tools::shell::BashConfig;

use crate::Usage;
use crate::cli::Global;

/// The runtime every command uses: the built-in tools behind the default policy, with the
/// sandbox the flags choose.
pub fn runtime(global: &Global, concurrency: usize) -> anyhow::Result<Runtime> {
    let max_timeout = Duration::from_secs(global.max_timeout);
    let config = RuntimeConfig {
        output_budget: global.output_budget,
        concurrency,
        max_timeout,
        default_timeout: RuntimeConfig::default().default_timeout.min(max_timeout),
    };
    let bash = BashConfig { deny_patterns: global.deny_command.clone(), ..BashConfig::default() };
    bash.validate().map_err(Usage)?;
    let mut services = Extensions::default();
    services.insert(sandbox::config(global));
    services.insert(bash);
    Ok(Runtime::builder(Arc::new(toolbelt::builtin_registry())).config(config).services(services).build())
}

/// Starts the sandbox probe when a call will run a shell command, so a sandbox that cannot
/// be enforced here is reported once, up front; other commands skip it.
pub fn probe_sandbox_for(global: &Global, runtime: &Runtime, tools: &[&str]) {
    let shell = tools
        .iter()
        .any(|name| runtime.registry().lookup(name).is_ok_and(|entry| entry.spec().category == Category::Shell));
    if shell {
        sandbox::probe_in_background(&sandbox::config(global));
    }
}

/// A token cancelled by Ctrl-C, so an interrupted command still ends its calls cleanly
/// (processes killed, results reported as cancelled).
pub fn cancel_on_ctrl_c() -> CancellationToken {
    let token = CancellationToken::new();
    let trigger = token.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            tracing::warn!("interrupted: cancelling running calls");
            trigger.cancel();
        }
    });
    token
}
