//! E-mail channels: a message sent over SMTP with `lettre` — STARTTLS by default (TLS
//! required, never a silent fallback to plain text), implicit TLS on request, plain text
//! only to this machine; the server's certificate checked against the system's roots, plus
//! a CA file the channel names (a company's own, a test server's).

use std::path::PathBuf;
use std::time::Duration;

use lettre::message::Mailbox;
use lettre::message::header::ContentType;
use lettre::transport::smtp::authentication::{Credentials, Mechanism};
use lettre::transport::smtp::client::{Certificate, Tls, TlsParameters};
use lettre::{AsyncSmtpTransport, AsyncTransport as _, Tokio1Executor};
use serde::Deserialize;
use toolbelt_core::ToolError;

/// How the connection to the server is protected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Security {
    /// Plain connection upgraded with STARTTLS, which must succeed (port 587).
    Starttls,
    /// TLS from the first byte (port 465).
    Tls,
    /// No TLS: only to a server on this machine.
    None,
}

/// An e-mail channel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmailConfig {
    /// The SMTP server.
    pub host: String,
    /// Its port.
    pub port: u16,
    /// How the connection is protected.
    pub security: Security,
    /// The variable holding the user name, when the server wants one.
    pub username_env: Option<String>,
    /// The variable holding the password.
    pub password_env: Option<String>,
    /// The sender (`Agent <bot@example.com>`).
    pub from: String,
    /// The recipients.
    pub to: Vec<String>,
    /// The subject unless a call gives one.
    pub subject: String,
    /// Another CA to trust for the server's certificate.
    pub ca_file: Option<PathBuf>,
}

/// An e-mail channel's table as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    #[allow(dead_code)]
    kind: String,
    host: String,
    port: Option<u16>,
    security: Option<Security>,
    username_env: Option<String>,
    password_env: Option<String>,
    from: String,
    to: Vec<String>,
    subject: Option<String>,
    ca_file: Option<String>,
}

impl EmailConfig {
    /// An e-mail channel's table, checked.
    pub fn from_table(value: &serde_json::Value, home: &std::path::Path) -> Result<Self, String> {
        let table: Table = serde_json::from_value(value.clone()).map_err(|e| {
            format!("{e}; an e-mail channel takes host, port, security, username_env, password_env, from, to, subject, ca_file")
        })?;
        let security = table.security.unwrap_or(Security::Starttls);
        let local = matches!(table.host.as_str(), "localhost" | "127.0.0.1" | "::1");
        if security == Security::None && !local {
            return Err(format!(
                "security = \"none\" sends the message (and any password) in plain text: only to a server on this \
                 machine, not `{}`; use starttls or tls",
                table.host
            ));
        }
        if table.password_env.is_some() != table.username_env.is_some() {
            return Err("give both username_env and password_env, or neither".into());
        }
        for var in table.username_env.iter().chain(table.password_env.iter()) {
            if !var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') || var.is_empty() {
                return Err(format!("`{var}` is not a variable name: username_env and password_env name variables"));
            }
        }
        table.from.parse::<Mailbox>().map_err(|e| format!("from `{}` is not an address ({e})", table.from))?;
        if table.to.is_empty() {
            return Err("to lists no recipient".into());
        }
        for to in &table.to {
            to.parse::<Mailbox>().map_err(|e| format!("to `{to}` is not an address ({e})"))?;
        }
        let ca_file = table.ca_file.map(|p| match p.strip_prefix("~/") {
            Some(rest) => home.join(rest),
            None => PathBuf::from(p),
        });
        let port = table.port.unwrap_or(match security {
            Security::Starttls => 587,
            Security::Tls => 465,
            Security::None => 25,
        });
        Ok(Self {
            host: table.host,
            port,
            security,
            username_env: table.username_env,
            password_env: table.password_env,
            from: table.from,
            to: table.to,
            subject: table.subject.unwrap_or_else(|| "Message from toolbelt".into()),
            ca_file,
        })
    }
}

/// Sends `content` by e-mail; the server's answer (`250 OK: queued as …`).
pub(crate) async fn send(
    name: &str,
    config: &EmailConfig,
    content: &str,
    subject: Option<&str>,
    var: &(dyn Fn(&str) -> Option<String> + Sync),
    timeout: Duration,
) -> Result<String, ToolError> {
    let fail = |what: String| ToolError::failed(format!("channel `{name}`: {what}"));
    let mut mail = lettre::Message::builder()
        .from(config.from.parse::<Mailbox>().map_err(|e| fail(format!("from: {e}")))?)
        .subject(subject.unwrap_or(&config.subject))
        .header(ContentType::TEXT_PLAIN);
    for to in &config.to {
        mail = mail.to(to.parse::<Mailbox>().map_err(|e| fail(format!("to: {e}")))?);
    }
    let mail = mail.body(content.to_string()).map_err(|e| fail(format!("cannot build the message: {e}")))?;

    let tls = || -> Result<TlsParameters, ToolError> {
        let mut params = TlsParameters::builder(config.host.clone());
        if let Some(ca) = &config.ca_file {
            let pem = std::fs::read(ca).map_err(|e| fail(format!("cannot read ca_file {}: {e}", ca.display())))?;
            let cert = Certificate::from_pem(&pem)
                .map_err(|e| fail(format!("ca_file {} holds no PEM certificate: {e}", ca.display())))?;
            params = params.add_root_certificate(cert);
        }
        params.build_rustls().map_err(|e| fail(format!("cannot set up TLS: {e}")))
    };
    let tls = match config.security {
        Security::Starttls => Tls::Required(tls()?),
        Security::Tls => Tls::Wrapper(tls()?),
        Security::None => Tls::None,
    };
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
    let mut builder = AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(config.host.clone())
        .port(config.port)
        .tls(tls)
        .timeout(Some(timeout));
    if let (Some(user), Some(password)) = (&config.username_env, &config.password_env) {
        let value = |v: &str| {
            var(v).ok_or_else(|| {
                fail(format!(
                    "its credentials come from ${v}, which is not set in toolbelt's environment; set it and try again"
                ))
            })
        };
        // PLAIN only, which TLS protects: a server refusing it says so at once, where falling
        // back to LOGIN leaves some servers waiting for a dialogue that never comes.
        builder = builder
            .credentials(Credentials::new(value(user)?, value(password)?))
            .authentication(vec![Mechanism::Plain]);
    }
    let transport = builder.build();
    let response = tokio::time::timeout(timeout, transport.send(mail))
        .await
        .map_err(|_| {
            fail(format!(
                "{}:{} did not answer within {}",
                config.host,
                config.port,
                toolbelt_core::human_duration(timeout)
            ))
        })?
        .map_err(|e| {
            fail(format!(
                "the mail server {}:{} refused or failed the message: {e}. Nothing was sent; check the channel's \
                 settings (host, port, security, credentials)",
                config.host, config.port
            ))
        })?;
    let said: Vec<&str> = response.message().collect();
    Ok(format!("{} {}", u16::from(response.code()), said.join(" ")))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn plain_text_only_to_this_machine_and_addresses_checked() {
        let home = std::path::Path::new("/h");
        let base = json!({"kind": "email", "host": "smtp.example.com", "from": "Bot <bot@example.com>", "to": ["me@example.com"]});
        let ok = EmailConfig::from_table(&base, home).unwrap();
        assert_eq!((ok.port, ok.security), (587, Security::Starttls));
        let mut plain = base.clone();
        plain["security"] = json!("none");
        assert!(EmailConfig::from_table(&plain, home).unwrap_err().contains("plain text"));
        plain["host"] = json!("127.0.0.1");
        assert_eq!(EmailConfig::from_table(&plain, home).unwrap().port, 25);
        let mut bad = base.clone();
        bad["to"] = json!(["not an address"]);
        assert!(EmailConfig::from_table(&bad, home).unwrap_err().contains("is not an address"));
        let mut half = base;
        half["password_env"] = json!("SMTP_PASSWORD");
        assert!(EmailConfig::from_table(&half, home).unwrap_err().contains("both"));
    }
}
