//! `snippet_delete`: removes a saved snippet for good.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolbelt_core::{
    Access, Annotations, Category, Content, PermissionClass, Render, SideEffects, Tool, ToolContext, ToolError,
    ToolSpec,
};

use super::fields;
use super::store::{SnippetScope, SnippetStore};
use crate::blocking::run_blocking;

/// Input of `snippet_delete`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SnippetDeleteInput {
    /// The name of the snippet to delete, as snippet_list shows it.
    pub name: String,
}

/// What `snippet_delete` removed.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SnippetDeleteOutput {
    /// The deleted snippet's id.
    pub id: i64,
    /// Its name (free to use again).
    pub name: String,
    /// Where it was kept: `user` (shared by every project) or `project` (this project's own).
    pub scope: SnippetScope,
}

impl Render for SnippetDeleteOutput {
    /// ``Deleted snippet #3 `retry` from your snippets.``
    fn render(&self) -> Vec<Content> {
        vec![Content::text(format!("Deleted snippet #{} `{}` from {}.", self.id, self.name, self.scope.label()))]
    }
}

/// The `snippet_delete` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct SnippetDelete;

const DESCRIPTION: &str = "Delete a saved snippet by its `name`, for good (there is no undo; snippet_load it \
first if it may be wanted again). A name that does not exist is answered with the closest names saved, and \
nothing is deleted. To change a snippet, save it again under the same name with snippet_save instead.";

impl Tool for SnippetDelete {
    type Input = SnippetDeleteInput;
    type Output = SnippetDeleteOutput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("snippet_delete", DESCRIPTION)
            .deferred()
            .title("Delete a snippet")
            .aliases(["SnippetDelete", "delete_snippet", "snippet_remove"])
            .category(Category::Other)
            .tags(["snippets"])
            // It changes toolbelt's own store outside the workspace, never the project's
            // files, and declares that change (`changes_state`).
            .permission(PermissionClass::Write)
            .side_effects(SideEffects::LocalState)
            .annotations(Annotations { read_only: false, destructive: true, idempotent: false, open_world: false })
            .search_hint("snippet delete remove forget code")
    }

    fn access(&self, _input: &SnippetDeleteInput, cx: &ToolContext) -> Result<Access, ToolError> {
        Ok(Access::exclusive().changes_state(SnippetStore::of(cx).label()))
    }

    async fn call(&self, input: SnippetDeleteInput, cx: ToolContext) -> Result<SnippetDeleteOutput, ToolError> {
        let name = fields::name(&input.name)?;
        run_blocking(&cx, move |cx| {
            let store = SnippetStore::of(cx);
            let deleted = store.delete(&name)?;
            Ok(SnippetDeleteOutput { id: deleted.id, name: deleted.name, scope: store.scope })
        })
        .await
    }
}
