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

/// How many processors this process may run on, read once: the standard library reads the
/// cgroup's CPU quota from its files at every call (several system calls), which every search
/// would otherwise pay for its walker's and its searchers' thread counts.
pub fn processors() -> usize {
    static PROCESSORS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *PROCESSORS.get_or_init(|| std::thread::available_parallelism().map_or(1, usize::from))
}
