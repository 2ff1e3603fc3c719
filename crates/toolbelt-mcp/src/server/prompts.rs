//! `prompts/list` and `prompts/get`: the front end's prompts (the skills found where the
//! session works), which hosts show as slash commands. Each takes one optional argument,
//! `args`, filled into the skill as its `$ARGUMENTS`.

use rmcp::ErrorData as McpError;
use rmcp::model::{
    GetPromptRequestParams, GetPromptResult, ListPromptsResult, Prompt, PromptArgument, PromptMessage, Role,
};
use serde_json::Value;
use toolbelt_core::Prompts;
use toolbelt_runtime::{Runtime, Session};

/// The name of a prompt's one argument.
pub(super) const ARGUMENT: &str = "args";

/// The prompts service, when the runtime offers one.
pub(super) fn source(runtime: &Runtime) -> Option<std::sync::Arc<Prompts>> {
    runtime.services().get::<Prompts>()
}

/// Every prompt for `session`.
pub(super) fn list(runtime: &Runtime, session: &Session) -> ListPromptsResult {
    let Some(prompts) = source(runtime) else { return ListPromptsResult::default() };
    let items = prompts
        .0
        .list(session.state())
        .into_iter()
        .map(|p| {
            let hint = p.argument_hint.unwrap_or_else(|| "what the skill should work on".into());
            let argument = PromptArgument::new(ARGUMENT).with_description(hint).with_required(false);
            Prompt::new(p.name, Some(p.description), Some(vec![argument]))
        })
        .collect();
    ListPromptsResult::with_all_items(items)
}

/// The prompt `request` names, its argument filled in, as one user message.
pub(super) fn get(
    runtime: &Runtime,
    session: &Session,
    request: &GetPromptRequestParams,
) -> Result<GetPromptResult, McpError> {
    let Some(prompts) = source(runtime) else {
        return Err(McpError::invalid_params("this server offers no prompts", None));
    };
    let arguments = match request.arguments.as_ref().and_then(|a| a.get(ARGUMENT)) {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    };
    let text =
        prompts.0.get(session.state(), &request.name, &arguments).map_err(|e| McpError::invalid_params(e, None))?;
    Ok(GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text.text)]).with_description(text.description))
}
