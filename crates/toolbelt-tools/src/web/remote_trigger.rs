//! `RemoteTrigger`: calls one of the HTTP triggers the user configured (`[triggers.NAME]`:
//! start a CI workflow, a deploy, a build hook) with a payload filling its template, and
//! returns the status and the answer; `action: "list"` lists them.
//!
//! As with `Message`, the model names a trigger, never an address, and the settings that
//! define triggers are the user's only. A call is judged by the trigger's origin (the part
//! of its URL the settings write out), and `RemoteTrigger(NAME)` rules match its name.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use toolbelt_core::{
    Access, Annotations, Category, Content, PermissionClass, Render, SideEffects, Tool, ToolContext, ToolError,
    ToolSpec,
};

use crate::web::support::client::Web;
use crate::web::support::triggers::{Filled, TriggerConfig};

/// The longest part of an answer kept.
const MAX_ANSWER: usize = 8_000;

/// What `RemoteTrigger` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TriggerAction {
    /// Call `trigger` (the default).
    Run,
    /// List the configured triggers.
    List,
}

/// Input of `RemoteTrigger`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RemoteTriggerInput {
    /// `run` (the default) calls `trigger`; `list` lists the configured triggers with the
    /// payload fields each needs.
    pub action: Option<TriggerAction>,
    /// The trigger, by the name the settings give it.
    pub trigger: Option<String>,
    /// The values its template names (`{"ref": "main"}`); without a body template, what is
    /// sent as JSON.
    pub payload: Option<Map<String, Value>>,
}

/// One configured trigger, as `list` shows it.
#[derive(Debug, Serialize, JsonSchema)]
pub struct TriggerEntry {
    /// Its name.
    pub name: String,
    /// Its method.
    pub method: String,
    /// Where it goes (scheme, host and port only).
    pub origin: String,
    /// The payload fields its template needs.
    pub needs: Vec<String>,
    /// What it does, as the settings describe it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// The structured result of `RemoteTrigger`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct RemoteTriggerOutput {
    /// `run` or `list`.
    pub action: String,
    /// For `run`: the trigger called.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trigger: Option<String>,
    /// For `run`: the HTTP status it answered with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// For `run`: its answer's content type.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
    /// For `run`: its answer (cut to 8,000 characters).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
    /// For `list`: the triggers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub triggers: Vec<TriggerEntry>,
}

impl Render for RemoteTriggerOutput {
    /// The status and the answer, or one line per trigger.
    fn render(&self) -> Vec<Content> {
        if self.action == "list" {
            if self.triggers.is_empty() {
                return vec![Content::text(NONE_CONFIGURED)];
            }
            let mut text = format!("{} trigger(s):", self.triggers.len());
            for t in &self.triggers {
                let needs =
                    if t.needs.is_empty() { String::new() } else { format!("; payload: {}", t.needs.join(", ")) };
                let what = t.description.as_deref().map(|d| format!(" — {d}")).unwrap_or_default();
                text.push_str(&format!("\n{}: {} {}{needs}{what}", t.name, t.method, t.origin));
            }
            return vec![Content::text(text)];
        }
        let answer = self.answer.as_deref().map(str::trim).unwrap_or_default();
        let answer = if answer.is_empty() { " (no body)".to_string() } else { format!(":\n{answer}") };
        vec![Content::text(format!(
            "Trigger `{}` answered HTTP {}{answer}",
            self.trigger.as_deref().unwrap_or_default(),
            self.status.unwrap_or_default()
        ))]
    }
}

const NONE_CONFIGURED: &str = "No triggers are configured; the user adds them to their settings \
(~/.config/toolbelt/config.toml), e.g. [triggers.deploy] url = \"https://…\" body = '{\"ref\": \"{ref}\"}'.";

/// The `RemoteTrigger` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct RemoteTrigger;

const DESCRIPTION: &str = "Calls an HTTP trigger the user configured — start a CI workflow, a deploy, a build \
hook — with a `payload` filling its template, and returns the status and the answer. `action: \"list\"` lists the \
triggers and the payload fields each needs. Name the trigger; addresses and secrets are the user's settings.";

impl Tool for RemoteTrigger {
    type Input = RemoteTriggerInput;
    type Output = RemoteTriggerOutput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("RemoteTrigger", DESCRIPTION)
            .title("Call a configured HTTP trigger")
            .aliases(["remote_trigger"])
            .category(Category::Web)
            .tags(["trigger", "webhook", "ci", "deploy", "http"])
            .permission(PermissionClass::External)
            .side_effects(SideEffects::Network)
            .annotations(Annotations { read_only: false, destructive: true, idempotent: false, open_world: true })
            .rule_field("trigger")
            .deferred()
            .search_hint("trigger webhook ci workflow deploy dispatch remote http call start build")
    }

    fn access(&self, input: &RemoteTriggerInput, cx: &ToolContext) -> Result<Access, ToolError> {
        if input.action == Some(TriggerAction::List) {
            return Ok(Access::shared().changes_state("nothing: it lists the configured triggers"));
        }
        let web = Web::of(cx);
        let (_, trigger) = trigger(&web, input)?;
        Ok(Access::exclusive().contacts(origin(&trigger.url)))
    }

    async fn call(&self, input: RemoteTriggerInput, cx: ToolContext) -> Result<RemoteTriggerOutput, ToolError> {
        let web = Web::of(&cx);
        if input.action == Some(TriggerAction::List) {
            let triggers = web
                .config()
                .triggers
                .iter()
                .map(|(name, t)| TriggerEntry {
                    name: name.clone(),
                    method: t.method.clone(),
                    origin: origin(&t.url),
                    needs: t.placeholders(),
                    description: t.description.clone(),
                })
                .collect();
            let empty = RemoteTriggerOutput::empty("list");
            return Ok(RemoteTriggerOutput { triggers, ..empty });
        }
        let (name, trigger) = trigger(&web, &input)?;
        let (name, trigger) = (name.to_string(), trigger.clone());
        let payload = input.payload.unwrap_or_default();
        let (status, content_type, answer) = call(&web, &name, &trigger, &payload).await?;
        if !(200..300).contains(&status) {
            let said = if answer.trim().is_empty() { "no body".to_string() } else { answer.trim().to_string() };
            return Err(ToolError::failed(format!(
                "trigger `{name}` answered HTTP {status}: {said}. The call may not have started anything; check the \
                 payload (RemoteTrigger{{action: \"list\"}} says what it needs) or the trigger's settings"
            )));
        }
        Ok(RemoteTriggerOutput {
            trigger: Some(name),
            status: Some(status),
            content_type,
            answer: Some(answer),
            ..RemoteTriggerOutput::empty("run")
        })
    }
}

impl RemoteTriggerOutput {
    fn empty(action: &str) -> Self {
        Self {
            action: action.into(),
            trigger: None,
            status: None,
            content_type: None,
            answer: None,
            triggers: Vec::new(),
        }
    }
}

/// The trigger the input names.
fn trigger<'w>(web: &'w Web, input: &RemoteTriggerInput) -> Result<(&'w str, &'w TriggerConfig), ToolError> {
    let triggers = &web.config().triggers;
    let Some(name) = input.trigger.as_deref() else {
        return Err(ToolError::failed("give `trigger` (its name), or action \"list\" to see the triggers"));
    };
    triggers.get_key_value(name).map(|(n, t)| (n.as_str(), t)).ok_or_else(|| {
        if triggers.is_empty() {
            ToolError::failed(NONE_CONFIGURED)
        } else {
            let names: Vec<&str> = triggers.keys().map(String::as_str).collect();
            ToolError::failed(format!("no trigger `{name}`; the configured ones are {}", names.join(", ")))
        }
    })
}

/// The origin the template writes out.
fn origin(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("https", url));
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    match url::Url::parse(&format!("{scheme}://{authority}/")) {
        Ok(u) => u.origin().ascii_serialization(),
        Err(_) => format!("{scheme}://{authority}"),
    }
}

/// Makes the request; its status, content type and answer.
async fn call(
    web: &Web,
    name: &str,
    trigger: &TriggerConfig,
    payload: &Map<String, Value>,
) -> Result<(u16, Option<String>, String), ToolError> {
    let var = |v: &str| web.var(v);
    let wrong = |what: &str, e: String| {
        ToolError::failed(format!(
            "trigger `{name}`: {what}: {e}; RemoteTrigger{{action: \"list\"}} shows the payload fields it needs"
        ))
    };
    let filled =
        Filled::from_templates(&trigger.method, &trigger.url, &trigger.headers, trigger.body.as_deref(), payload, &var)
            .map_err(|(what, e)| wrong(&what, e))?;
    let request = filled.request(web.endpoint_client()?);
    let timeout = web.config().timeout;
    let response = tokio::time::timeout(timeout, request.send())
        .await
        .map_err(|_| {
            ToolError::failed(format!(
                "trigger `{name}` did not answer within {}; it may or may not have started",
                toolbelt_core::human_duration(timeout)
            ))
        })?
        // The URL may hold a secret: never in an error.
        .map_err(|e| ToolError::failed(format!("cannot reach trigger `{name}`: {}", e.without_url())))?;
    let status = response.status().as_u16();
    let content_type =
        response.headers().get(reqwest::header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).map(str::to_string);
    let text = response.text().await.unwrap_or_default();
    let mut answer: String = text.chars().take(MAX_ANSWER).collect();
    if answer.len() < text.len() {
        answer.push_str("\n…[answer cut]");
    }
    Ok((status, content_type, answer))
}
