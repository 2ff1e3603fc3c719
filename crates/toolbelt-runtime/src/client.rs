//! Who sent a session's calls: the command line, or an MCP client (which one, over which
//! transport, from where). The audit log names it in every record.
//!
//! A sub-agent's session runs under the client of the session that started it, naming the
//! agent too: its calls are the model's, made within what that client's call began. The
//! client is kept in the session's state as well ([`SessionClient`]), where the agent host,
//! which sees a session only through its state, reads it.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use toolbelt_core::{SessionSlot, SessionState};

/// The longest client name or version kept (a client chooses them; the log stays readable).
const MAX_FIELD: usize = 200;

/// What kind of front end opened the session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ClientKind {
    /// A program embedding the runtime that did not say who it is.
    #[default]
    Embedded,
    /// `toolbelt call` or `toolbelt batch`.
    Cli,
    /// An MCP client.
    Mcp,
}

impl ClientKind {
    /// The kind as the audit log writes it (`embedded`, `cli`, `mcp`).
    pub fn as_str(self) -> &'static str {
        match self {
            ClientKind::Embedded => "embedded",
            ClientKind::Cli => "cli",
            ClientKind::Mcp => "mcp",
        }
    }
}

/// How an MCP client is connected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    /// The server's stdin and stdout.
    Stdio,
    /// Streamable HTTP.
    Http,
}

/// The client of a session, as the audit log records it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct ClientInfo {
    /// What kind of front end.
    pub kind: ClientKind,
    /// For MCP: the transport.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transport: Option<Transport>,
    /// For MCP: the name the client gave in `initialize` (`clientInfo.name`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// For MCP: the version the client gave in `initialize`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Over HTTP: the peer's address and port.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peer: Option<String>,
    /// Over HTTP, for a request another replica passed on (then `peer` is that replica): the
    /// client's address as that replica said it (not checked).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forwarded_for: Option<String>,
    /// Over HTTP with a bearer token: which token (see [`token_id`]), never the token.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token_id: Option<String>,
    /// For a sub-agent's calls: which agent made them (`agent_1 (Explore)`); the other fields
    /// name the front end its tree of agents runs under.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
}

/// A session's client in its state (see the module's documentation). Saves as nothing: a
/// session's client is whoever opens it next.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct SessionClient {
    /// The client, once one was said.
    #[serde(skip)]
    pub client: Option<Arc<ClientInfo>>,
}

impl SessionSlot for SessionClient {
    const KEY: &'static str = "client";
}

impl ClientInfo {
    /// The command line (`toolbelt call`, `toolbelt batch`).
    pub fn cli() -> Self {
        Self { kind: ClientKind::Cli, ..Self::default() }
    }

    /// An MCP client over `transport` that introduced itself as `name` `version`.
    pub fn mcp(transport: Transport, name: &str, version: &str) -> Self {
        Self {
            kind: ClientKind::Mcp,
            transport: Some(transport),
            name: Some(bounded(name)),
            version: Some(bounded(version)),
            ..Self::default()
        }
    }

    /// The client of the session whose state is `state`, as it was last said
    /// ([`crate::Session::set_client`]); `embedded` when nobody said.
    pub fn of(state: &SessionState) -> ClientInfo {
        state.with_slot::<SessionClient, _>(|slot| slot.client.as_deref().cloned()).unwrap_or_default()
    }

    /// This client, for the calls of the sub-agent `agent` (`agent_1 (Explore)`).
    pub fn for_agent(&self, agent: &str) -> ClientInfo {
        ClientInfo { agent: Some(bounded(agent)), ..self.clone() }
    }
}

/// A token's id: the first 12 hex digits of its SHA-256. Enough to tell configured tokens
/// apart in the log; useless for finding the token itself.
pub fn token_id(token: &str) -> String {
    let mut digest = toolbelt_core::sha256_hex(token.as_bytes());
    digest.truncate(12);
    digest
}

fn bounded(text: &str) -> String {
    match text.char_indices().nth(MAX_FIELD) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serializes_only_what_is_known() {
        assert_eq!(serde_json::to_string(&ClientInfo::cli()).unwrap(), r#"{"kind":"cli"}"#);
        let mut mcp = ClientInfo::mcp(Transport::Http, "inspector", "0.9");
        mcp.peer = Some("127.0.0.1:5000".into());
        mcp.token_id = Some(token_id("s3cret"));
        assert_eq!(
            serde_json::to_value(&mcp).unwrap(),
            serde_json::json!({"kind": "mcp", "transport": "http", "name": "inspector", "version": "0.9",
                "peer": "127.0.0.1:5000", "token_id": &toolbelt_core::sha256_hex("s3cret")[..12]})
        );
        assert_eq!(ClientInfo::mcp(Transport::Stdio, &"x".repeat(500), "1").name.unwrap().chars().count(), 201);
        assert_eq!(
            serde_json::to_string(&ClientInfo::cli().for_agent("agent_1 (Explore)")).unwrap(),
            r#"{"kind":"cli","agent":"agent_1 (Explore)"}"#
        );
    }

    #[test]
    fn a_session_s_client_is_in_its_state() {
        let session = crate::Session::new("s", std::env::temp_dir(), Vec::new(), std::env::temp_dir().join("tb-s"));
        assert_eq!(ClientInfo::of(session.state()), ClientInfo::default());
        session.set_client(ClientInfo::mcp(Transport::Http, "inspector", "1"));
        assert_eq!(ClientInfo::of(session.state()), ClientInfo::mcp(Transport::Http, "inspector", "1"));
    }
}
