//! `toolbelt trust`: apply a project's own settings (hooks, MCP servers, modes, rules) from
//! now on, review them first, stop trusting it, or list the projects trusted.

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use toolbelt::settings::trust::Pending;
use toolbelt::settings::{self, Locations, Trust, TrustStore};

use crate::Usage;
use crate::cli::{Global, TrustArgs};
use crate::output::line;

pub fn run(global: &Global, args: &TrustArgs) -> anyhow::Result<ExitCode> {
    let here = std::env::current_dir().map_err(|e| Usage(format!("cannot read the current directory: {e}")))?;
    let start = args.path.as_deref().or(global.cwd.as_deref()).unwrap_or(Path::new("."));
    let dir =
        std::fs::canonicalize(here.join(start)).map_err(|e| Usage(format!("{}: {e}", here.join(start).display())))?;
    let loc = Locations::discover(&dir, &toolbelt::assemble::project_root(&dir));
    let store = TrustStore::at(&loc);
    if args.list {
        return list(&store);
    }
    let loaded = settings::load(&loc, super::flag_entries(global), std::env::vars(), global.claude_settings);
    let project = loc.project.display();
    if args.revoke {
        let was =
            store.revoke(&loc.project).map_err(|e| anyhow::anyhow!("cannot update {}: {e}", store.file().display()))?;
        line(&if was {
            format!("{project} is no longer trusted: its own settings are ignored until you trust it again")
        } else {
            format!("{project} was not trusted")
        })?;
        return Ok(ExitCode::SUCCESS);
    }
    if args.show {
        let state = match &loaded.trust {
            Trust::NotNeeded => "sets nothing that needs trust",
            Trust::Trusted => "is trusted: these settings of its own apply",
            Trust::Untrusted { changed: true, .. } => {
                "changed since it was trusted: these settings wait for `toolbelt trust`"
            }
            Trust::Untrusted { changed: false, .. } => "is not trusted: these settings wait for `toolbelt trust`",
        };
        line(&format!("{project} {state}"))?;
        print_settings(&loaded.pending)?;
        return Ok(ExitCode::SUCCESS);
    }
    trust(&store, &loc.project, &loaded.pending)?;
    Ok(ExitCode::SUCCESS)
}

fn trust(store: &TrustStore, project: &Path, pending: &Pending) -> anyhow::Result<()> {
    store.trust(project, pending).map_err(|e| anyhow::anyhow!("cannot write {}: {e}", store.file().display()))?;
    if pending.is_empty() {
        line(&format!(
            "trusted {}: it sets nothing that needs trust now; if its settings change, toolbelt asks again",
            project.display()
        ))?;
    } else {
        line(&format!(
            "trusted {}: these settings of its own apply from now on (until they change):",
            project.display()
        ))?;
        print_settings(pending)?;
    }
    Ok(())
}

fn print_settings(pending: &Pending) -> anyhow::Result<()> {
    for setting in pending.summary() {
        line(&format!("  {setting}"))?;
    }
    Ok(())
}

fn list(store: &TrustStore) -> anyhow::Result<ExitCode> {
    let all = store.all();
    if all.is_empty() {
        line("no project is trusted")?;
    }
    for (project, record) in all {
        let path = PathBuf::from(&project);
        let state = if !path.is_dir() {
            "gone".to_string()
        } else {
            let loc = Locations::discover(&path, &path);
            let loaded = settings::load(&loc, Vec::new(), std::env::vars(), false);
            match loaded.trust {
                Trust::Untrusted { changed: true, .. } => "changed since trusted".to_string(),
                _ => "current".to_string(),
            }
        };
        line(&format!("{project}  (trusted {}, {state}, {} settings)", record.trusted_at, record.settings.len()))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// At a terminal (not CI), asks whether to trust an untrusted project whose own settings
/// are waiting; records the answer. Returns whether it is now trusted.
pub fn ask_at_terminal(loc: &Locations, trust: &Trust) -> bool {
    let Trust::Untrusted { pending, changed } = trust else { return false };
    let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0");
    if ci {
        return false;
    }
    let Ok(mut tty) = std::fs::OpenOptions::new().read(true).write(true).open("/dev/tty") else { return false };
    let mut text = format!(
        "\nThe project {} has settings of its own{}:\n",
        loc.project.display(),
        if *changed { ", changed since you trusted it" } else { "" }
    );
    for setting in pending.summary() {
        text.push_str(&format!("  {setting}\n"));
    }
    text.push_str("They can run programs (hooks, MCP servers) and change what runs without asking.\n");
    text.push_str("Trust this project and apply them? [y/N]: ");
    if tty.write_all(text.as_bytes()).and_then(|()| tty.flush()).is_err() {
        return false;
    }
    let mut answer = String::new();
    let Ok(reader) = tty.try_clone() else { return false };
    if BufReader::new(reader).read_line(&mut answer).is_err() {
        return false;
    }
    if !matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes") {
        return false;
    }
    let store = TrustStore::at(loc);
    match store.trust(&loc.project, pending) {
        Ok(()) => true,
        Err(e) => {
            tracing::warn!("cannot record the trust in {}: {e}", store.file().display());
            false
        }
    }
}
