//! What is looked at to see that the settings changed: every settings file of every layer
//! (whether it exists or not), the plugin folders' listings, and each plugin's files that
//! become settings — each by its size and modification time.

use std::path::PathBuf;
use std::time::SystemTime;

use crate::settings::{Locations, plugins};

/// The state of the watched files at one moment.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Fingerprint(Vec<(PathBuf, Option<(u64, SystemTime)>)>);

impl Fingerprint {
    /// The settings files of `loc`, and the plugin files that could add to them, as they
    /// are now.
    pub fn of(loc: &Locations) -> Self {
        let mut paths: Vec<PathBuf> = loc.files(true).into_iter().map(|(_, file)| file).collect();
        let (found, _) = plugins::discover(loc);
        paths.push(loc.user_plugins());
        paths.push(loc.project_plugins());
        for plugin in &found {
            paths.push(plugin.root.clone());
            paths.push(plugin.manifest.clone());
            for file in ["hooks/hooks.json", ".mcp.json", ".lsp.json"] {
                paths.push(plugin.root.join(file));
            }
            let named = &plugin.paths;
            paths.extend(named.hooks.iter().chain(&named.mcp_servers).chain(&named.lsp_servers).cloned());
        }
        let mut seen: Vec<(PathBuf, Option<(u64, SystemTime)>)> = paths
            .into_iter()
            .map(|path| {
                let stamp =
                    std::fs::metadata(&path).ok().map(|m| (m.len(), m.modified().unwrap_or(SystemTime::UNIX_EPOCH)));
                (path, stamp)
            })
            .collect();
        // A folder's listing: a plugin added or removed changes its modification time.
        seen.sort();
        Self(seen)
    }
}
