//! `Message` through the real binary, against a loopback server speaking each channel's API
//! (a JSON webhook, Slack's and Discord's incoming webhooks, Telegram's Bot API) and a file:
//! what each service receives, what the model reads back, refusals named with the channel and
//! the service's answer, a channel's secret never in a result, an error or the audit log,
//! and `Message(NAME)` rules matching the channel, never the text.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use toolbelt_tools::web::testing::{Reply, Server};

#[path = "common/hermetic.rs"]
mod hermetic;

const TELEGRAM_TOKEN: &str = "123456:SECRET-bot-token";
const SLACK_PATH: &str = "/services/T0/B0/SECRETslack";

struct Services {
    server: Server,
    _runtime: tokio::runtime::Runtime,
}

/// One loopback server answering as each service does.
fn services() -> Services {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime
        .block_on(Server::start(|req| {
            let body = req.json();
            match req.path() {
                SLACK_PATH if body["text"].is_string() => Reply::ok("text/plain", "ok"),
                SLACK_PATH => Reply::status(400, "text/plain", "no_text"),
                "/services/revoked" => Reply::status(404, "text/plain", "no_service"),
                "/api/webhooks/1/SECRETdiscord" => Reply::status(204, "text/plain", ""),
                path if path == format!("/bot{TELEGRAM_TOKEN}/sendMessage") => {
                    if body["chat_id"] == "42" {
                        Reply::ok("application/json", r#"{"ok":true,"result":{"message_id":7,"chat":{"id":42}}}"#)
                    } else {
                        Reply::status(
                            400,
                            "application/json",
                            r#"{"ok":false,"error_code":400,"description":"Bad Request: chat not found"}"#,
                        )
                    }
                }
                "/hook" if req.header("authorization") == Some("Bearer hooktok") => {
                    Reply::ok("application/json", r#"{"received":true}"#)
                }
                "/hook" => Reply::status(401, "text/plain", "missing token"),
                _ => Reply::status(404, "text/plain", "no such hook"),
            }
        }))
        .unwrap();
    Services { server, _runtime: runtime }
}

/// A project whose user defines a channel of each kind on `services`.
fn project(services: &Services) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap().join("app");
    std::fs::create_dir_all(root.join(".git")).unwrap();
    let config = root.join(".test-home/.config/toolbelt");
    std::fs::create_dir_all(&config).unwrap();
    let base = services.server.url("");
    let base = base.trim_end_matches('/');
    std::fs::write(
        config.join("config.toml"),
        format!(
            "[message.channels.ops]\nkind = \"slack\"\nurl_env = \"TB_SLACK_URL\"\n\
             [message.channels.old]\nkind = \"slack\"\nurl_env = \"TB_OLD_SLACK_URL\"\n\
             [message.channels.alerts]\nkind = \"discord\"\nurl_env = \"TB_DISCORD_URL\"\n\
             [message.channels.me]\nkind = \"telegram\"\ntoken_env = \"TB_TELEGRAM_TOKEN\"\nchat_id = \"42\"\nchats = [\"9\"]\napi_base = \"{base}\"\n\
             [message.channels.ci]\nkind = \"webhook\"\nurl = \"{base}/hook\"\nheaders = {{ Authorization = \"Bearer ${{TB_HOOK_TOKEN}}\" }}\n\
             [message.channels.notes]\nkind = \"file\"\npath = \"~/notes.md\"\n\
             [message.channels.unset]\nkind = \"discord\"\nurl_env = \"TB_NOT_SET\"\n"
        ),
    )
    .unwrap();
    (dir, root)
}

fn env(services: &Services) -> Vec<(String, String)> {
    vec![
        ("TB_SLACK_URL".into(), services.server.url(SLACK_PATH)),
        ("TB_OLD_SLACK_URL".into(), services.server.url("/services/revoked")),
        ("TB_DISCORD_URL".into(), services.server.url("/api/webhooks/1/SECRETdiscord")),
        ("TB_TELEGRAM_TOKEN".into(), TELEGRAM_TOKEN.into()),
        ("TB_HOOK_TOKEN".into(), "hooktok".into()),
    ]
}

/// `toolbelt [args…] call --json Message INPUT`: the result, the exit code and stderr.
fn message(root: &Path, services: &Services, args: &[&str], input: Value) -> (Value, i32, String) {
    let out = hermetic::toolbelt(root)
        .envs(env(services))
        .args(args)
        .args(["call", "--json", "Message", &input.to_string()])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let result = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    (result, out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into_owned())
}

fn text(result: &Value) -> String {
    result["content"][0]["text"].as_str().unwrap_or_default().to_string()
}

#[test]
fn each_channel_gets_the_message_in_its_service_s_own_shape() {
    let services = services();
    let (_dir, root) = project(&services);
    let allow = ["--allow", "Message"];

    let (slack, code, _) = message(&root, &services, &allow, json!({"channel": "ops", "content": "Build is green."}));
    assert_eq!(code, 0, "{slack}");
    assert_eq!(text(&slack), "Sent to channel `ops` (slack) (HTTP 200): ok");
    let (discord, code, _) = message(&root, &services, &allow, json!({"channel": "alerts", "content": "Deploy done"}));
    assert_eq!(code, 0, "{discord}");
    assert_eq!(discord["structured"]["status"], 204);
    let (telegram, code, _) = message(&root, &services, &allow, json!({"channel": "me", "content": "Hi"}));
    assert_eq!(code, 0, "{telegram}");
    assert_eq!(telegram["structured"]["message_id"], "7", "{telegram}");
    let (hook, code, _) =
        message(&root, &services, &allow, json!({"channel": "ci", "content": "Run 12 passed", "chat_id": "room-1"}));
    assert_eq!(code, 0, "{hook}");
    assert!(text(&hook).contains(r#"{"received":true}"#), "{hook}");

    let bodies: Vec<(String, Value)> =
        services.server.requests().iter().map(|r| (r.path().to_string(), r.json())).collect();
    assert_eq!(bodies[0], (SLACK_PATH.to_string(), json!({"text": "Build is green."})));
    assert_eq!(bodies[1].1, json!({"content": "Deploy done"}));
    assert_eq!(bodies[2].1, json!({"chat_id": "42", "text": "Hi"}));
    assert_eq!(
        bodies[3],
        ("/hook".to_string(), json!({"channel": "ci", "content": "Run 12 passed", "chat_id": "room-1"}))
    );

    // A file channel: appended to, one block per message.
    for line in ["first", "second"] {
        let (noted, code, _) = message(&root, &services, &allow, json!({"channel": "notes", "content": line}));
        assert_eq!(code, 0, "{noted}");
    }
    let notes = std::fs::read_to_string(root.join(".test-home/notes.md")).unwrap();
    let blocks: Vec<&str> = notes.split("--- ").filter(|b| !b.is_empty()).collect();
    assert_eq!(blocks.len(), 2, "{notes}");
    assert!(blocks[0].ends_with("---\nfirst\n\n") && blocks[1].ends_with("---\nsecond\n\n"), "{notes}");
}

#[test]
fn refusals_name_the_channel_and_the_service_s_answer_and_nothing_leaks_its_secret() {
    let services = services();
    let (dir, root) = project(&services);
    let audit = dir.path().join("audit.jsonl");
    let audit_arg = audit.display().to_string();
    let allow = ["--allow", "Message", "--audit", &audit_arg];
    let cases = [
        (
            json!({"channel": "old", "content": "x"}),
            "Slack refused the message for channel `old` (HTTP 404): `no_service`",
        ),
        (
            json!({"channel": "me", "content": "x", "chat_id": "9"}),
            "Telegram refused the message for channel `me` (HTTP 400): `Bad Request: chat not found`",
        ),
        (
            json!({"channel": "unset", "content": "x"}),
            "channel `unset` takes its secret from $TB_NOT_SET, which is not set",
        ),
        (json!({"channel": "alerts", "content": "x".repeat(2001)}), "Discord takes at most 2000 in one message"),
        (
            json!({"channel": "nope", "content": "x"}),
            "no channel `nope`; the configured ones are `alerts` (discord), `ci` (webhook)",
        ),
    ];
    let before = services.server.requests().len();
    for (input, said) in cases {
        let (result, code, stderr) = message(&root, &services, &allow, input.clone());
        assert_eq!(code, 1, "{input}: {result}");
        assert!(text(&result).contains(said), "{input}: {}", text(&result));
        for secret in [TELEGRAM_TOKEN, "SECRETslack", "SECRETdiscord"] {
            assert!(!result.to_string().contains(secret) && !stderr.contains(secret), "{secret} leaked: {result}");
        }
    }
    // The unlisted chat, the over-long message and the unknown channel never reached a service.
    assert_eq!(services.server.requests().len(), before + 2);
    let log = std::fs::read_to_string(&audit).unwrap();
    assert!(log.lines().count() >= 5, "{log}");
    for secret in [TELEGRAM_TOKEN, "SECRETslack", "SECRETdiscord", "hooktok"] {
        assert!(!log.contains(secret), "{secret} is in the audit log");
    }
}

#[test]
fn a_message_asks_unless_a_rule_names_its_channel() {
    let services = services();
    let (_dir, root) = project(&services);
    let (asked, code, _) = message(&root, &services, &[], json!({"channel": "ops", "content": "hi"}));
    assert_eq!(code, 1, "{asked}");
    let origin = services.server.url("").trim_end_matches('/').to_string();
    assert!(text(&asked).contains(&format!("contacts {origin}")), "{}", text(&asked));
    assert!(!text(&asked).contains("SECRETslack"), "{}", text(&asked));

    let (allowed, code, _) =
        message(&root, &services, &["--allow", "Message(ops)"], json!({"channel": "ops", "content": "hi"}));
    assert_eq!(code, 0, "{allowed}");
    // The rule names a channel: a message to another channel whose text is `ops` is not allowed.
    let (other, code, _) =
        message(&root, &services, &["--allow", "Message(ops)"], json!({"channel": "alerts", "content": "ops"}));
    assert_eq!(code, 1, "{other}");
    let (denied, code, _) = message(
        &root,
        &services,
        &["--allow", "Message", "--deny", "Message(alerts)"],
        json!({"channel": "alerts", "content": "x"}),
    );
    assert_eq!(code, 1, "{denied}");
    assert!(text(&denied).contains("Message(alerts)"), "{denied}");
}

#[path = "common/peers.rs"]
mod peers;

/// The SMTP server of `peers/smtp_server.py`, stopped when dropped.
struct Smtp {
    child: std::process::Child,
    port: u16,
}

impl Smtp {
    fn start(python: &Path, dir: &Path) -> Self {
        use std::io::BufRead as _;
        let mut child = std::process::Command::new(python)
            .arg(peers::script("smtp_server.py"))
            .arg(dir)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        // The reader stays open as long as the server runs: it may still write.
        let mut reader = std::io::BufReader::new(child.stdout.take().unwrap());
        reader.read_line(&mut line).unwrap();
        std::mem::forget(reader);
        let port = serde_json::from_str::<Value>(&line).unwrap()["port"].as_u64().unwrap();
        Self { child, port: u16::try_from(port).unwrap() }
    }
}

impl Drop for Smtp {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn an_e_mail_goes_through_starttls_and_auth_and_plain_text_is_refused() {
    let Some(peers) = peers::Peers::find() else { return };
    let services = services();
    let (dir, root) = project(&services);
    let mail_dir = dir.path().join("smtp");
    std::fs::create_dir_all(&mail_dir).unwrap();
    let smtp = Smtp::start(&peers.python(), &mail_dir);
    let config = root.join(".test-home/.config/toolbelt/config.toml");
    let mut settings = std::fs::read_to_string(&config).unwrap();
    settings.push_str(&format!(
        "[message.channels.mail]\nkind = \"email\"\nhost = \"127.0.0.1\"\nport = {port}\nusername_env = \"TB_SMTP_USER\"\n\
         password_env = \"TB_SMTP_PASSWORD\"\nfrom = \"Agent <agent@example.com>\"\nto = [\"me@example.com\", \"ops@example.com\"]\n\
         ca_file = \"{ca}\"\n\
         [message.channels.untrusted]\nkind = \"email\"\nhost = \"127.0.0.1\"\nport = {port}\nfrom = \"a@example.com\"\nto = [\"me@example.com\"]\n\
         [message.channels.plain]\nkind = \"email\"\nhost = \"127.0.0.1\"\nport = {port}\nsecurity = \"none\"\nfrom = \"a@example.com\"\nto = [\"me@example.com\"]\n",
        port = smtp.port,
        ca = mail_dir.join("ca.pem").display()
    ));
    std::fs::write(&config, settings).unwrap();
    let send = |channel: &str, password: &str, subject: Option<&str>| {
        let mut input = json!({"channel": channel, "content": "The nightly build failed.\nSee run 12."});
        if let Some(subject) = subject {
            input["subject"] = json!(subject);
        }
        let out = hermetic::toolbelt(&root)
            .env("TB_SMTP_USER", "bot")
            .env("TB_SMTP_PASSWORD", password)
            .args(["--allow", "Message", "call", "--json", "Message", &input.to_string()])
            .output()
            .unwrap();
        let result: Value = serde_json::from_str(&String::from_utf8_lossy(&out.stdout)).unwrap();
        (result, out.status.code())
    };

    let (sent, code) = send("mail", "s3cret", Some("Nightly build"));
    assert_eq!(code, Some(0), "{sent}");
    assert_eq!(text(&sent), "Sent to channel `mail` (email): 250 OK: queued as 42");
    let received = std::fs::read_to_string(mail_dir.join("received.jsonl")).unwrap();
    let mail: Value = serde_json::from_str(received.lines().next().unwrap()).unwrap();
    assert_eq!(mail["from"], "agent@example.com");
    assert_eq!(mail["to"], json!(["me@example.com", "ops@example.com"]));
    assert_eq!(mail["tls"], true, "{mail}");
    let data = mail["data"].as_str().unwrap();
    assert!(
        data.contains("Subject: Nightly build") && data.contains("The nightly build failed.\r\nSee run 12."),
        "{data}"
    );

    // A wrong password, a server whose certificate nothing trusts, and plain text: refused,
    // each saying so, and nothing more is received.
    let (refused, code) = send("mail", "wrong", None);
    assert_eq!(code, Some(1));
    assert!(
        text(&refused).contains("the mail server 127.0.0.1") && text(&refused).contains("refused or failed"),
        "{refused}"
    );
    assert!(!refused.to_string().contains("wrong\""), "the password is in the result: {refused}");
    let (untrusted, code) = send("untrusted", "s3cret", None);
    assert_eq!(code, Some(1));
    assert!(text(&untrusted).to_lowercase().contains("certificate"), "{untrusted}");
    let (plain, code) = send("plain", "s3cret", None);
    assert_eq!(code, Some(1), "{plain}");
    assert_eq!(std::fs::read_to_string(mail_dir.join("received.jsonl")).unwrap().lines().count(), 1);
}

#[test]
fn commands_never_see_the_channels_and_triggers_secrets() {
    let services = services();
    let (_dir, root) = project(&services);
    let config = root.join(".test-home/.config/toolbelt/config.toml");
    let mut settings = std::fs::read_to_string(&config).unwrap();
    settings.push_str("[triggers.go]\nurl = \"https://ci.example/run?token=${TB_TRIGGER_TOKEN}\"\n");
    std::fs::write(&config, settings).unwrap();
    let input =
        json!({"command": "printenv TB_SLACK_URL TB_TELEGRAM_TOKEN TB_HOOK_TOKEN TB_TRIGGER_TOKEN; echo checked"});
    let out = hermetic::toolbelt(&root)
        .envs(env(&services))
        .env("TB_TRIGGER_TOKEN", "trigger-SECRET")
        .args(["--allow", "Bash", "call", "--json", "Bash", &input.to_string()])
        .output()
        .unwrap();
    let result = String::from_utf8_lossy(&out.stdout);
    assert!(result.contains("checked"), "{result}");
    for secret in ["SECRETslack", TELEGRAM_TOKEN, "hooktok", "trigger-SECRET"] {
        assert!(!result.contains(secret), "a command read {secret}: {result}");
    }
}
