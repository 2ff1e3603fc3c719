//! `toolbelt mcp-servers login NAME` and `logout NAME`: signing in to an HTTP upstream server
//! that asks for OAuth, and forgetting the tokens ([`toolbelt_mcp::client::oauth`]).

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::bail;
use serde_json::json;
use toolbelt_mcp::client::oauth::login::{self, Browser, Login};
use toolbelt_mcp::client::{OAuthSettings, UpstreamProtocol, UpstreamState, UpstreamTransport};
use url::Url;

use crate::cli::{Global, McpLoginArgs};
use crate::cmd::Setup;
use crate::output::line;

/// Signs in to the server, then connects it and says how that went.
pub async fn login(global: &Global, args: &McpLoginArgs, json: bool) -> anyhow::Result<ExitCode> {
    let setup = Setup::load(global)?;
    setup.require_valid()?;
    let (url, settings, protocol) = signing_in(&setup, &args.name)?;
    let file = Arc::new(setup.token_place().file(&args.name, &url));
    let name = &args.name;
    let mut again = false;
    let (signed, state, tools) = loop {
        let request = Login {
            name,
            url: &url,
            settings: &settings,
            protocol,
            file: Arc::clone(&file),
            browser: if args.no_browser { Browser::Print } else { Browser::Open },
            timeout: Duration::from_secs(args.timeout),
        };
        let signed = login::login(request, |address| {
            eprintln!("To sign in to MCP server `{name}`, open this address in a browser:\n\n  {address}\n");
        })
        .await?;
        let (state, tools) = connect(&setup, name).await;
        // A server that refuses the new tokens at once may have moved to another
        // authorization server (its metadata now names it): signing in there once more.
        if matches!(state, Some(UpstreamState::NeedsLogin { .. })) && !again {
            eprintln!(
                "MCP server `{name}` refused the new sign-in; it may have moved where it signs in, so once more:"
            );
            again = true;
            continue;
        }
        break (signed, state, tools);
    };
    let connected = matches!(state, Some(UpstreamState::Connected { .. }));
    if json {
        line(&serde_json::to_string_pretty(
            &json!({"name": name, "signed_in": signed, "server": state, "tools": tools}),
        )?)?;
    } else {
        let scopes = if signed.scopes.is_empty() { "none named".into() } else { signed.scopes.join(" ") };
        let issuer = signed.issuer.as_deref().unwrap_or("its authorization server");
        line(&format!("Signed in to MCP server `{name}` at {issuer} (client {}; scopes: {scopes}).", signed.client))?;
        line(&match state {
            Some(UpstreamState::Connected { tools }) => format!("Connected: {tools} tool{}.", plural(tools)),
            Some(UpstreamState::Failed { error } | UpstreamState::NeedsLogin { error }) => {
                format!("But connecting failed: {error}")
            }
            other => format!("But it is not connected ({other:?})."),
        })?;
    }
    Ok(if connected { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// Connects the server as every later run will (with the tokens just kept): its state and
/// its tools.
async fn connect(setup: &Setup, name: &str) -> (Option<UpstreamState>, Vec<String>) {
    let registry = Arc::new(toolbelt_core::Registry::new());
    let Some(gateway) = setup.gateway_of(&registry, &[name.to_string()]).await else { return (None, Vec::new()) };
    let status = gateway.statuses().into_iter().next();
    gateway.shutdown().await;
    status.map(|s| (Some(s.state), s.tool_names)).unwrap_or_default()
}

/// Forgets the server's tokens.
pub fn logout(global: &Global, name: &str, json: bool) -> anyhow::Result<ExitCode> {
    let setup = Setup::load(global)?;
    setup.require_valid()?;
    let (url, ..) = signing_in(&setup, name)?;
    let file = setup.token_place().file(name, &url);
    let had = file.forget().map_err(anyhow::Error::msg)?;
    if json {
        line(&json!({"name": name, "signed_out": had}).to_string())?;
    } else if had {
        line(&format!("Signed out of MCP server `{name}`: its tokens, and toolbelt's registration, are forgotten."))?;
    } else {
        line(&format!("MCP server `{name}` had no tokens to forget."))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The address, OAuth settings and protocol of the server `name`, or why it cannot sign in.
fn signing_in(setup: &Setup, name: &str) -> anyhow::Result<(Url, OAuthSettings, UpstreamProtocol)> {
    let servers = &setup.settings.mcp_servers;
    let Some((_, config)) = servers.iter().find(|(n, _)| n == name) else {
        if setup.waiting_for_trust().iter().any(|n| n == name) {
            bail!(
                "MCP server `{name}` is this project's, which is not trusted yet: review the project's settings with \
                 `toolbelt trust --show`, and trust it with `toolbelt trust` first"
            );
        }
        let names: Vec<&str> = servers.iter().map(|(n, _)| n.as_str()).collect();
        if names.is_empty() {
            bail!("no MCP server is configured; add [mcp.servers.{name}] with its `url` first");
        }
        bail!("no MCP server is named `{name}`; the configured ones are: {}", names.join(", "));
    };
    let UpstreamTransport::Http { url, .. } = &config.transport else {
        bail!("MCP server `{name}` is a program toolbelt starts (stdio); only HTTP servers sign in with OAuth");
    };
    let Some(settings) = config.transport.oauth() else {
        bail!(
            "MCP server `{name}`{} is given its credentials in the settings (`bearer_token_env`, an `Authorization` \
             header, or `oauth.enabled = false`), so it does not sign in with OAuth",
            config.at()
        );
    };
    if !config.enabled {
        bail!("MCP server `{name}`{} is disabled (`enabled = false`)", config.at());
    }
    Ok((url.clone(), settings.clone(), config.protocol))
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}
