//! Where the assembly's stores keep their data: the task list and the snippets (files, or the
//! PostgreSQL database every replica shares).

use std::sync::Arc;

use toolbelt_tools::planning::TaskListStore;
use toolbelt_tools::snippets::{SnippetScope, SnippetStore};
use toolbelt_tools::storage::SharedStorage;

use super::{AssembleError, Assembly};

impl Assembly {
    /// The task list the tools work on: the one named by [`Assembly::task_list`]
    /// (`$XDG_STATE_HOME/toolbelt/task-lists/NAME.db`, shared by every session, sub-agent and
    /// process that names it), else this project's own (`tasks.db` in the project's state
    /// directory, shared by the sessions working in the project). Kept outside the project,
    /// in the state directory no tool and no sandboxed command may write.
    ///
    /// With `storage.url`, the list is kept in that PostgreSQL database instead, shared by
    /// every replica serving the project (or naming the list).
    pub fn task_store(&self) -> Result<TaskListStore, AssembleError> {
        let store = match &self.task_list {
            Some(name) => TaskListStore::named(&TaskListStore::lists_dir(&self.loc.state_dir), name)?,
            None => TaskListStore::project(self.loc.project_state_dir().join("tasks.db")),
        };
        Ok(match self.shared_storage()? {
            Some(shared) => store.shared(shared),
            None => store,
        })
    }

    /// The database `storage.url` names, if any: its pool made once (nothing connects until
    /// a store uses it).
    pub fn shared_storage(&self) -> Result<Option<Arc<SharedStorage>>, AssembleError> {
        let Some(storage) = &self.settings.storage else { return Ok(None) };
        if let Some(shared) = self.shared.get() {
            return Ok(Some(Arc::clone(shared)));
        }
        let password = match &storage.password_env {
            Some(var) => Some(std::env::var(var).map_err(|_| {
                AssembleError::Storage(format!(
                    "storage.password_env names {var}, which is not set; export the password in it"
                ))
            })?),
            None => None,
        };
        let shared = SharedStorage::connect_with(
            &storage.url,
            password.as_deref(),
            storage.max_connections,
            storage.ca_file.as_deref(),
        )
        .map_err(|e| AssembleError::Storage(e.to_string()))?;
        Ok(Some(Arc::clone(self.shared.get_or_init(|| Arc::new(shared)))))
    }

    /// The snippets the snippet tools work on: the user's
    /// (`$XDG_DATA_HOME/toolbelt/snippets.db`, shared by every project), or with
    /// `snippets.scope = "project"` this project's own (`snippets.db` in its state directory,
    /// beside its task list). Either way outside the project; the setting only chooses
    /// between these two places. With `storage.url` they are kept in that database instead:
    /// the user's become the team's, a project's stay its own on every replica.
    pub fn snippet_store(&self) -> Result<SnippetStore, AssembleError> {
        let store = match self.settings.snippets {
            SnippetScope::User => SnippetStore::user(&self.loc.data_dir),
            SnippetScope::Project => SnippetStore::project(&self.loc.project_state_dir()),
        };
        Ok(match self.shared_storage()? {
            Some(shared) => store.kept_in(shared),
            None => store,
        })
    }
}
