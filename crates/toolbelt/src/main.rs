//! The `toolbelt` command.

use std::process::ExitCode;

use clap::FromArgMatches as _;

mod approve;
mod ask;
mod cli;
mod cmd;
mod keys;
mod output;
mod project;

use cli::{Cli, Command};

/// A usage or configuration error: the command exits with status 2.
#[derive(Debug)]
pub struct Usage(pub String);

impl std::fmt::Display for Usage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Usage {}

fn main() -> ExitCode {
    // `toolbelt --version` alone is answered before the command line is built: clap builds
    // every subcommand's arguments to parse it, most of what the process would do otherwise.
    // What it prints is what clap prints (a test compares them).
    if let [_, flag] = std::env::args_os().collect::<Vec<_>>().as_slice()
        && (flag == "--version" || flag == "-V")
    {
        println!("toolbelt {}", env!("CARGO_PKG_VERSION"));
        return ExitCode::SUCCESS;
    }
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let mut command = Cli::command_line();
    if no_color {
        command = command.color(clap::ColorChoice::Never);
    }
    let cli = match command.try_get_matches().and_then(|m| Cli::from_arg_matches(&m)) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    init_logging(cli.global.verbose, no_color);
    // reqwest is built without a TLS provider of its own (no C build): ring is the process's
    // provider, installed before any HTTP client (MCP upstreams, HTTP hooks) is made.
    let _ = rustls::crypto::ring::default_provider().install_default();
    // Descriptors this process inherited never reach the commands it runs.
    toolbelt_tools::shell::seal_inherited();
    // OpenTelemetry, when the OTEL_* variables ask for it: set up before the async runtime
    // (its exporters' blocking client must not be made inside one), flushed after it.
    let front_end = match &cli.command {
        Command::Mcp(_) => "mcp",
        Command::Agent(_) => "agent",
        _ => "cli",
    };
    let telemetry = toolbelt::telemetry::Telemetry::from_env(front_end);

    // An MCP server on stdio answers one client, and `call` makes one call: one event-loop
    // thread (plus the blocking pool for file work, and the threads a search starts itself)
    // answers a small call in about half the time a multi-thread scheduler does, since no
    // message is handed between worker threads, and a one-shot call starts no worker threads.
    let single_client =
        matches!(&cli.command, Command::Mcp(args) if args.http.is_none()) || matches!(&cli.command, Command::Call(_));
    let mut builder = if single_client {
        tokio::runtime::Builder::new_current_thread()
    } else {
        tokio::runtime::Builder::new_multi_thread()
    };
    let runtime = match builder.enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    let outcome = runtime.block_on(async {
        match &cli.command {
            Command::Tools(args) => cmd::tools::run(&cli.global, args).await,
            Command::Agent(args) => cmd::agent::run_agent(&cli.global, args).await,
            Command::Agents(args) => cmd::agents::run(&cli.global, args),
            Command::Skills(args) => cmd::skills::run(&cli.global, args),
            Command::Call(args) => cmd::call::run(&cli.global, args).await,
            Command::Batch(args) => cmd::batch::run(&cli.global, args).await,
            Command::Sandbox(args) => cmd::sandbox::run(&cli.global, args),
            Command::Mcp(args) => cmd::mcp::run(&cli.global, args).await,
            Command::McpServers(args) => cmd::mcp_servers::run(&cli.global, args).await,
            Command::Config(args) => cmd::config::run(&cli.global, args).await,
            Command::Permissions(args) => cmd::permissions::run(&cli.global, args).await,
            Command::Trust(args) => cmd::trust::run(&cli.global, args),
            Command::Audit(args) => cmd::audit::run(&cli.global, args),
            Command::Tasks(args) => cmd::tasks::run(&cli.global, args),
            Command::Cron(args) => cmd::cron::run(&cli.global, args).await,
            Command::Plugin(args) => cmd::plugin::run(&cli.global, args),
        }
    });
    // Don't wait for blocking tasks of cancelled calls: what they own was already killed.
    runtime.shutdown_background();
    // The empty cgroups kept for the next commands go with this process.
    toolbelt_tools::shell::release_idle();
    if let Some(telemetry) = telemetry {
        telemetry.shutdown();
    }
    match outcome {
        Ok(code) => code,
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe))
}

/// Logs go to stderr (stdout carries results, and the MCP protocol). `TOOLBELT_LOG` takes a
/// full filter (`toolbelt_runtime=debug`); `-v`/`-vv` raise the default level.
fn init_logging(verbose: u8, no_color: bool) {
    use std::io::IsTerminal as _;
    // At the default level, rmcp's client transport does not report its own end: the
    // connection's owner reports it (a server that failed, or asks to sign in), once, saying
    // what to do.
    let default = match verbose {
        0 => "warn,rmcp::transport::worker=off",
        1 => "info",
        _ => "debug",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("TOOLBELT_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(!no_color && std::io::stderr().is_terminal())
        .with_target(false)
        .try_init();
}
