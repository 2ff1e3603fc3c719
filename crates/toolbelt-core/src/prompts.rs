//! Prompts a front end can offer the person (an MCP server's `prompts/list` and
//! `prompts/get`, which hosts show as slash commands): the skills found where a session
//! works. Core holds the contract only; the skills module of the tools implements it and the
//! front end that knows where skills live offers it as a service ([`Prompts`]).

use std::sync::Arc;

use crate::session::SessionState;

/// One prompt, as a list shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptInfo {
    /// The name it is asked for by.
    pub name: String,
    /// What it is for.
    pub description: String,
    /// What its one argument should hold (`[file] [focus]`), when it takes one.
    pub argument_hint: Option<String>,
}

/// A prompt's text, ready to send to the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptText {
    /// What it is for.
    pub description: String,
    /// The text, its arguments filled in.
    pub text: String,
}

/// The prompts one session can be offered.
pub trait PromptSource: Send + Sync {
    /// The prompts for `session` (found from its cwd), in name order.
    fn list(&self, session: &SessionState) -> Vec<PromptInfo>;

    /// The prompt `name` for `session` with `arguments` filled in; why not, when there is no
    /// such prompt or it cannot be read.
    fn get(&self, session: &SessionState, name: &str, arguments: &str) -> Result<PromptText, String>;
}

/// The front end's [`PromptSource`], as a service (`services().get::<Prompts>()`).
#[derive(Clone)]
pub struct Prompts(pub Arc<dyn PromptSource>);

impl std::fmt::Debug for Prompts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Prompts")
    }
}
