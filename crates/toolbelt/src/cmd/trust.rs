//! `toolbelt trust`: apply a project's own settings (hooks, MCP servers, modes, rules) from
//! now on, review them first, stop trusting it, or list the projects trusted.
//!
//! A project is checked before it is trusted: one whose files do not parse or validate is
//! refused with each problem's file and line. A trust covers the project read both ways —
//! with Claude Code's files applying whole (`--claude-settings`) and without — and applies
//! the settings that loosen the policy only with `--allow-loosening` (at the terminal, a
//! second question).

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use toolbelt::settings::trust::Pending;
use toolbelt::settings::{self, Entry, Locations, Problem, Trust, TrustStore};

use crate::Usage;
use crate::cli::{Global, TrustArgs};
use crate::output::line;

pub fn run(global: &Global, args: &TrustArgs) -> anyhow::Result<ExitCode> {
    let here = std::env::current_dir().map_err(|e| Usage(format!("cannot read the current directory: {e}")))?;
    let start = args.path.as_deref().or(global.cwd.as_deref()).unwrap_or(Path::new("."));
    let dir =
        std::fs::canonicalize(here.join(start)).map_err(|e| Usage(format!("{}: {e}", here.join(start).display())))?;
    let loc = Locations::discover(&dir, &toolbelt::assemble::project_root(&dir));
    let review = Review::read(global, &loc);
    // Kept where the user's settings say: the file, or the team's database.
    let store = TrustStore::of(&loc, settings::storage_of(&review.loaded.entries, &loc).as_ref());
    if args.list {
        return list(&store);
    }
    let project = loc.project.display();
    if args.revoke {
        let was = store.revoke(&loc.project).map_err(|e| anyhow::anyhow!("cannot update {}: {e}", store.place()))?;
        line(&if was {
            format!("{project} is no longer trusted: its own settings are ignored until you trust it again")
        } else {
            format!("{project} was not trusted")
        })?;
        return Ok(ExitCode::SUCCESS);
    }
    if args.show {
        let state = match &review.loaded.trust {
            Trust::NotNeeded => "sets nothing that needs trust",
            Trust::Trusted { loosening: true } => "is trusted: these settings of its own apply",
            Trust::Trusted { loosening: false } => {
                "is trusted: these settings of its own apply (those that loosen the policy only with `toolbelt trust \
                 --allow-loosening`)"
            }
            Trust::Untrusted { changed: true, .. } => {
                "changed since it was trusted: these settings wait for `toolbelt trust`"
            }
            Trust::Untrusted { changed: false, .. } => "is not trusted: these settings wait for `toolbelt trust`",
        };
        line(&format!("{project} {state}"))?;
        review.print(None)?;
        if !review.problems.is_empty() {
            line(&format!("it cannot be trusted until these {} problem(s) are fixed:", review.problems.len()))?;
            for problem in &review.problems {
                line(&format!("  {problem}"))?;
            }
        }
        return Ok(ExitCode::SUCCESS);
    }
    review.refuse_if_invalid(&loc.project)?;
    let [without, with] = &review.views;
    store
        .trust(&loc.project, &[without, with], args.allow_loosening)
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", store.place()))?;
    if review.is_empty() {
        line(&format!(
            "trusted {project}: it sets nothing that needs trust now; if its settings change, toolbelt asks again"
        ))?;
    } else {
        line(&format!("trusted {project}: these settings of its own apply from now on (until they change):"))?;
        review.print(Some(args.allow_loosening))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// What a trust would accept: the project read both ways, and its problems.
struct Review {
    /// As this command reads it (with or without Claude Code's files, as the flags say).
    loaded: settings::Loaded,
    /// Without Claude Code's files applying whole, and with.
    views: [Pending; 2],
    /// What stops the project from being trusted.
    problems: Vec<Problem>,
}

impl Review {
    fn read(global: &Global, loc: &Locations) -> Self {
        let flags: Vec<Entry> = super::flag_entries(global);
        let env: Vec<(String, String)> = std::env::vars().collect();
        let loaded = settings::load(loc, flags.clone(), env.clone(), global.claude_settings);
        let views = settings::trust_views(loc, &flags, &env);
        let mut problems = settings::project_problems(loc, &flags, &env, false);
        for problem in settings::project_problems(loc, &flags, &env, true) {
            if !problems.contains(&problem) {
                problems.push(problem);
            }
        }
        Self { loaded, views, problems }
    }

    fn is_empty(&self) -> bool {
        self.views.iter().all(Pending::is_empty)
    }

    /// Refuses a project whose files do not parse or validate, naming each problem.
    fn refuse_if_invalid(&self, project: &Path) -> anyhow::Result<()> {
        if self.problems.is_empty() {
            return Ok(());
        }
        let list: Vec<String> = self.problems.iter().map(|p| format!("  {p}")).collect();
        Err(Usage(format!(
            "cannot trust {}: its settings have {} problem(s):\n{}\nfix them (`toolbelt config check` lists them), \
             then run `toolbelt trust` again",
            project.display(),
            self.problems.len(),
            list.join("\n")
        ))
        .into())
    }

    /// The settings a trust applies, those that loosen the policy (said applied or not as
    /// `loosening` says, `None` for a review), those that apply only with Claude Code's files,
    /// and what never applies from a project.
    fn print(&self, loosening: Option<bool>) -> anyhow::Result<()> {
        let [without, with] = &self.views;
        for setting in without.summary() {
            line(&format!("  {setting}"))?;
        }
        let loose = without.loosening_summary();
        if !loose.is_empty() {
            line(match loosening {
                Some(true) => "and, since you allowed it, these, which loosen the policy:",
                Some(false) => {
                    "not applied: these loosen the policy; apply them with `toolbelt trust --allow-loosening`:"
                }
                None => "these loosen the policy and apply only with `toolbelt trust --allow-loosening`:",
            })?;
            for setting in loose {
                line(&format!("  ! {setting}"))?;
            }
        }
        let claude: Vec<String> = with
            .summary()
            .into_iter()
            .filter(|s| !without.summary().contains(s))
            .chain(with.loosening_summary().into_iter().filter(|s| !without.loosening_summary().contains(s)))
            .collect();
        if !claude.is_empty() {
            line("with --claude-settings (Claude Code's files applying whole), also:")?;
            for setting in claude {
                line(&format!("  {setting}"))?;
            }
        }
        if !self.loaded.review_notes.is_empty() {
            line("never applied from a project, trusted or not:")?;
            for note in &self.loaded.review_notes {
                line(&format!("  {note}"))?;
            }
        }
        Ok(())
    }
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
        let loosening = if record.loosening { "" } else { ", without the settings that loosen the policy" };
        line(&format!(
            "{project}  (trusted {}{loosening}, {state}, {} settings)",
            record.trusted_at,
            record.settings.len()
        ))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// At a terminal (not CI), asks whether to trust an untrusted project whose own settings
/// are waiting, and then, when it has settings that loosen the policy, whether to apply
/// those too; records the answers. A project whose files have problems is not offered (the
/// warnings say what to fix). Returns whether it is now trusted.
pub fn ask_at_terminal(global: &Global, loc: &Locations, trust: &Trust) -> bool {
    let Trust::Untrusted { changed, .. } = trust else { return false };
    let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0");
    if ci {
        return false;
    }
    let Ok(mut tty) = std::fs::OpenOptions::new().read(true).write(true).open("/dev/tty") else { return false };
    let review = Review::read(global, loc);
    if !review.problems.is_empty() {
        return false;
    }
    let pending = &review.views[0];
    let base = pending.summary();
    if !base.is_empty() {
        let mut text = format!(
            "\nThe project {} has settings of its own{}:\n",
            loc.project.display(),
            if *changed { ", changed since you trusted it" } else { "" }
        );
        for setting in base {
            text.push_str(&format!("  {setting}\n"));
        }
        text.push_str("They can run programs (hooks, MCP servers) and change what runs without asking.\n");
        text.push_str("Trust this project and apply them? [y/N]: ");
        if !yes(&mut tty, &text) {
            return false;
        }
    }
    let loose = pending.loosening_summary();
    let loosening = !loose.is_empty() && {
        let mut text = format!(
            "\nThe project {} also sets what loosens the policy (the model's calls run with fewer questions or less \
             confinement):\n",
            loc.project.display()
        );
        for setting in loose {
            text.push_str(&format!("  ! {setting}\n"));
        }
        text.push_str("Apply these too? [y/N]: ");
        yes(&mut tty, &text)
    };
    let store = TrustStore::of(loc, settings::storage_of(&review.loaded.entries, loc).as_ref());
    let [without, with] = &review.views;
    match store.trust(&loc.project, &[without, with], loosening) {
        Ok(()) => true,
        Err(e) => {
            tracing::warn!("cannot record the trust in {}: {e}", store.place());
            false
        }
    }
}

/// Asks `question` on the terminal; whether the answer was yes.
fn yes(tty: &mut std::fs::File, question: &str) -> bool {
    if tty.write_all(question.as_bytes()).and_then(|()| tty.flush()).is_err() {
        return false;
    }
    let mut answer = String::new();
    let Ok(reader) = tty.try_clone() else { return false };
    if BufReader::new(reader).read_line(&mut answer).is_err() {
        return false;
    }
    matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes")
}
