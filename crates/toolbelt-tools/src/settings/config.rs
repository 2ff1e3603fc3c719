//! `Config`: reads a setting with where its value comes from, or changes one of the few a
//! model may change. The settings themselves belong to whoever built the runtime
//! ([`toolbelt_core::SettingsService`]); a change is a write to the project-local settings
//! file, declared so the permission engine judges it (that file is protected: someone
//! approves it in every mode). A changed `permissions.mode` also applies to this session at
//! once; other settings apply when toolbelt next starts.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolbelt_core::{
    Access, Annotations, Category, Content, Modes, PermissionClass, Render, SettingValue, SettingsService, SideEffects,
    Tool, ToolContext, ToolError, ToolSpec,
};

/// Input of `Config`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConfigInput {
    /// The setting's dotted key, e.g. `runtime.output_budget` or `permissions.mode`.
    #[schemars(length(min = 1))]
    pub setting: String,
    /// The new value (a string, number or boolean). Leave it out to read the setting.
    pub value: Option<Value>,
}

/// The `Config` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct Config;

const DESCRIPTION: &str = "Reads or changes a toolbelt setting. Without `value` it returns the setting's value, \
    where that value comes from (a settings file and line, a flag, an environment variable or the default) and \
    whether you may change it. With `value` it writes the setting to the project's personal settings file \
    (.toolbelt/config.local.toml), keeping its comments, once the user approves. Only a few settings may be changed \
    this way (how much output you see, default timeouts, concurrency, sub-agent turns; the permission mode only if \
    the user allows it); rules, hooks, the sandbox, the network and the audit log are the user's.";

/// Whether the call read or changed the setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Operation {
    /// Read it.
    Get,
    /// Changed it.
    Set,
}

/// The setting, after the call.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ConfigOutput {
    /// Read or changed.
    pub operation: Operation,
    /// The setting's key.
    pub setting: String,
    /// Its value in force now.
    pub value: Value,
    /// Where that value comes from (one entry per list item).
    pub sources: Vec<String>,
    /// What the setting does.
    pub description: String,
    /// Whether a model may change it.
    pub settable: bool,
    /// The value before the change.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous_value: Option<Value>,
    /// The value written (which `value` shows only when nothing overrides it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_value: Option<Value>,
    /// The file the change was written to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// When the change takes effect, or why it does not (a higher layer overrides it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Render for ConfigOutput {
    fn render(&self) -> Vec<Content> {
        let from = self.sources.join(", ");
        let mut text = match (&self.file, &self.previous_value, &self.new_value) {
            (Some(file), Some(previous), Some(new)) => {
                format!("Set {} to {new} in {file} (it was {previous}).", self.setting)
            }
            _ => format!("{} = {} ({from})\n{}", self.setting, self.value, self.description),
        };
        if let Some(note) = &self.note {
            text.push_str(&format!("\n{note}"));
        }
        if self.operation == Operation::Get {
            text.push_str(if self.settable {
                "\nYou may change it with Config (the user approves the change)."
            } else {
                "\nOnly the user can change it."
            });
        }
        vec![Content::text(text)]
    }
}

fn settings(cx: &ToolContext) -> Result<std::sync::Arc<SettingsService>, ToolError> {
    cx.service::<SettingsService>().ok_or_else(|| ToolError::failed("this runtime has no settings to read or change"))
}

/// The directory whose project's settings a call concerns: the session's first root.
fn workspace(cx: &ToolContext) -> std::path::PathBuf {
    cx.roots().into_iter().next().unwrap_or_else(|| cx.cwd())
}

impl Tool for Config {
    type Input = ConfigInput;
    type Output = ConfigOutput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("Config", DESCRIPTION)
            .deferred()
            .title("Settings")
            .aliases(["config"])
            .category(Category::Other)
            .tags(["settings", "config"])
            // Reading is what a call without touches does; a change declares its write, which
            // the engine judges as one (of a protected file).
            .permission(PermissionClass::Read)
            .side_effects(SideEffects::Files)
            .annotations(Annotations { read_only: false, destructive: false, idempotent: true, open_world: false })
            .search_hint("settings configuration get set option preference output budget timeout mode")
    }

    fn access(&self, input: &ConfigInput, cx: &ToolContext) -> Result<Access, ToolError> {
        let Some(value) = &input.value else {
            return Ok(Access::shared());
        };
        let file = settings(cx)?
            .0
            .target(&workspace(cx), input.setting.trim(), value)
            .map_err(|e| ToolError::failed(e.to_string()))?;
        Ok(Access::exclusive().writes(file))
    }

    async fn call(&self, input: ConfigInput, cx: ToolContext) -> Result<ConfigOutput, ToolError> {
        let service = settings(&cx)?;
        let (workspace, key) = (workspace(&cx), input.setting.trim());
        let failed = |e: toolbelt_core::SettingsError| ToolError::failed(e.to_string());
        let before = service.0.get(&workspace, key).map_err(failed)?;
        let Some(value) = input.value else {
            return Ok(output(Operation::Get, before, None, None, None));
        };
        let done = service.0.set(&workspace, key, &value).map_err(failed)?;
        let note = if !done.applies {
            format!(
                "It does not apply yet: {} sets it to {}, which wins over the project's personal file.",
                done.now.sources.join(", "),
                done.now.value
            )
        } else if let Some(mode) = done.mode {
            match cx.service::<Modes>() {
                Some(modes) => match modes.0.switch(cx.session(), mode) {
                    Ok(()) => format!("This session is now in {mode} mode."),
                    Err(why) => format!("This session keeps its mode ({why}); new sessions start in {mode}."),
                },
                None => "It applies to sessions started from now on.".to_string(),
            }
        } else {
            "It applies when toolbelt next starts (the next `toolbelt call`, or once the MCP server restarts)."
                .to_string()
        };
        let mut out =
            output(Operation::Set, done.now, Some(before.value), Some(done.file.display().to_string()), Some(note));
        out.new_value = Some(done.written);
        Ok(out)
    }
}

fn output(
    operation: Operation,
    setting: SettingValue,
    previous_value: Option<Value>,
    file: Option<String>,
    note: Option<String>,
) -> ConfigOutput {
    ConfigOutput {
        operation,
        setting: setting.key,
        value: setting.value,
        sources: setting.sources,
        description: setting.doc,
        settable: setting.settable,
        previous_value,
        new_value: None,
        file,
        note,
    }
}
