//! Running a tool's synchronous file-system work off the async threads.

use toolbelt_core::{ToolContext, ToolError};

/// Runs `work` on the blocking pool with a clone of the call's context. A panic inside it
/// becomes an internal error rather than taking the runtime down.
pub async fn run_blocking<T, F>(cx: &ToolContext, work: F) -> Result<T, ToolError>
where
    T: Send + 'static,
    F: FnOnce(&ToolContext) -> Result<T, ToolError> + Send + 'static,
{
    let task_cx = cx.clone();
    tokio::task::spawn_blocking(move || work(&task_cx))
        .await
        .map_err(|e| ToolError::internal(format!("the tool's blocking task failed: {e}")))?
}
