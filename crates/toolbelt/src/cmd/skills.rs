//! `toolbelt skills`: the skills found from the working directory — name, where each comes
//! from, its description, what it asks to be allowed — the ones a nearer skill of the same
//! name hides, and every problem in the files (`path: message`). Problems never fail the
//! command: they are what it is for.

use std::path::Path;
use std::process::ExitCode;

use serde_json::{Value, json};
use toolbelt::settings::Locations;
use toolbelt_tools::knowledge::skills::{Skill, discover};

use crate::cli::{Global, SkillsArgs};
use crate::output;
use crate::project::WorkDirs;

/// How many characters of a description the listing shows.
const SUMMARY_CHARS: usize = 100;

pub fn run(global: &Global, args: &SkillsArgs) -> anyhow::Result<ExitCode> {
    let ws = WorkDirs::from_flags(global)?;
    let project = toolbelt::assemble::project_root(&ws.cwd);
    // The enabled plugins' come after the project's and the user's own.
    let plugins = crate::cmd::Setup::load(global).map(|s| s.loaded.plugins.clone()).unwrap_or_default();
    let dirs = toolbelt::assemble::skill_dirs(&Locations::discover(&ws.cwd, &project), &plugins);
    let catalog = discover(&ws.cwd, &dirs);
    if args.json {
        let skills: Vec<Value> = catalog.skills.iter().map(|s| skill_json(s, None)).collect();
        let shadowed: Vec<Value> = catalog.shadowed.iter().map(|(s, by)| skill_json(s, Some(by))).collect();
        let problems: Vec<Value> =
            catalog.problems.iter().map(|p| json!({"path": p.path, "message": p.message, "error": p.fatal})).collect();
        let out = json!({"skills": skills, "shadowed": shadowed, "problems": problems});
        output::line(&serde_json::to_string_pretty(&out)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    for skill in &catalog.skills {
        print_skill(skill, None, &ws.cwd)?;
        for (hidden, _) in catalog.shadowed.iter().filter(|(_, by)| *by == skill.path) {
            print_skill(hidden, Some(&skill.path), &ws.cwd)?;
        }
    }
    if catalog.skills.is_empty() {
        show(
            "No skills: add a folder with a SKILL.md (YAML frontmatter with name and description, then the \
             instruction) to .toolbelt/skills/, .claude/skills/ or .agents/skills/ in the project, or to \
             ~/.config/toolbelt/skills/, ~/.claude/skills/ or ~/.agents/skills/ for every project.",
        )?;
    }
    if !catalog.problems.is_empty() {
        show("")?;
        for p in &catalog.problems {
            let kind = if p.fatal { "error" } else { "warning" };
            show(&format!("{}: {kind}: {}", relative(&p.path, &ws.cwd), p.message))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn print_skill(skill: &Skill, shadowed_by: Option<&Path>, cwd: &Path) -> std::io::Result<()> {
    let mut head = format!("{}  {} ({})", skill.text.name, relative(&skill.path, cwd), skill.scope.as_str());
    if let Some(by) = shadowed_by {
        head.push_str(&format!("  [shadowed by {}]", relative(by, cwd)));
    }
    show(&head)?;
    let summary: String = skill.text.description.chars().take(SUMMARY_CHARS).collect();
    show(&format!("    {summary}"))?;
    let mut facts = Vec::new();
    if !skill.text.allowed_tools.is_empty() {
        facts.push(format!("allowed tools: {}", skill.text.allowed_tools.join(", ")));
    }
    if let Some(hint) = &skill.text.argument_hint {
        facts.push(format!("arguments: {hint}"));
    }
    if skill.text.disable_model_invocation {
        facts.push("user-invoked only".into());
    }
    if !facts.is_empty() {
        show(&format!("    {}", facts.join(" · ")))?;
    }
    Ok(())
}

fn skill_json(skill: &Skill, shadowed_by: Option<&Path>) -> Value {
    json!({
        "name": skill.text.name,
        "description": skill.text.description,
        "path": skill.path,
        "dir": skill.dir,
        "scope": skill.scope.as_str(),
        "allowed_tools": skill.text.allowed_tools,
        "argument_hint": skill.text.argument_hint,
        "disable_model_invocation": skill.text.disable_model_invocation,
        "shadowed_by": shadowed_by,
    })
}

/// `path` relative to `cwd` when it is below it, else as it is.
fn relative(path: &Path, cwd: &Path) -> String {
    path.strip_prefix(cwd).unwrap_or(path).display().to_string()
}

/// One line with every control character replaced: names, descriptions and paths come from
/// files a repository may hold, and an escape sequence in them must not reach the terminal.
fn show(text: &str) -> std::io::Result<()> {
    let shown: String = text.chars().map(|c| if c.is_control() { '\u{fffd}' } else { c }).collect();
    output::line(&shown)
}
