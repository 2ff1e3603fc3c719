//! `toolbelt agents`: every agent definition — the built-ins, the project's files, the
//! user's — with where it comes from, what it may use, which ones a same-named definition
//! hides, and every problem in the files (`path:line: message`). Problems never fail the
//! command: they are what it is for.

use std::path::Path;
use std::process::ExitCode;

use serde_json::{Value, json};
use toolbelt::settings::Locations;
use toolbelt_agent::definitions::{AgentDefinition, AgentTools, DefinitionSource, Problem, ToolSet, discover};

use crate::cli::{AgentsArgs, Global};
use crate::output;
use crate::project::WorkDirs;

/// How many characters of a description's first line the listing shows.
const SUMMARY_CHARS: usize = 100;

/// One definition as listed: shadowed or not, and the tools it gets here.
struct Row<'a> {
    def: &'a AgentDefinition,
    shadowed_by: Option<&'a DefinitionSource>,
    tools: ToolSet,
}

pub fn run(global: &Global, args: &AgentsArgs) -> anyhow::Result<ExitCode> {
    let ws = WorkDirs::from_flags(global)?;
    let project = toolbelt::assemble::project_root(&ws.cwd);
    // The enabled plugins' come after the project's and the user's own.
    let plugins = crate::cmd::Setup::load(global).map(|s| s.loaded.plugins.clone()).unwrap_or_default();
    let dirs = toolbelt::assemble::agent_search_dirs(&Locations::discover(&ws.cwd, &project), &plugins);
    let catalog = discover(&dirs);

    // Names are checked against the built-in tools; an MCP tool (`mcp__server__tool`) cannot
    // be without connecting its server, so it is taken on trust.
    let registry = toolbelt::builtin_registry();
    let available: Vec<String> = registry.specs().into_iter().map(|s| s.name).collect();
    let resolve = |name: &str| match name.starts_with("mcp__") {
        true => Some(name.to_string()),
        false => registry.lookup(name).ok().map(|entry| entry.spec().name.clone()),
    };
    let mut rows = Vec::new();
    for def in &catalog.definitions {
        rows.push(Row { def, shadowed_by: None, tools: def.tool_set(&available, resolve, AgentTools::AsListed) });
        for hidden in catalog.shadowed.iter().filter(|s| s.by == def.source) {
            let tools = hidden.definition.tool_set(&available, resolve, AgentTools::AsListed);
            rows.push(Row { def: &hidden.definition, shadowed_by: Some(&hidden.by), tools });
        }
    }
    let mut problems = catalog.problems.clone();
    problems.extend(rows.iter().flat_map(|row| row.def.tool_problems(&row.tools)));

    if args.json {
        let agents: Vec<Value> = rows.iter().map(row_json).collect();
        let searched: Vec<Value> =
            dirs.directories().into_iter().map(|(scope, path)| json!({"scope": scope, "path": path})).collect();
        let out = json!({"agents": agents, "problems": problems, "directories": searched});
        output::line(&serde_json::to_string_pretty(&out)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    for row in &rows {
        print_row(row, &ws.cwd)?;
    }
    if catalog.definitions.iter().chain(catalog.shadowed.iter().map(|s| &s.definition)).all(|d| d.is_builtin()) {
        show("")?;
        show(
            "No agent files: add Markdown files with YAML frontmatter to .toolbelt/agents/, .claude/agents/ or \
             .agents/agents/ in the project, or to ~/.config/toolbelt/agents/ or ~/.claude/agents/ for every project.",
        )?;
    }
    if !problems.is_empty() {
        show("")?;
        for problem in &problems {
            let shown = Problem { path: relative(&problem.path, &ws.cwd).into(), ..problem.clone() };
            show(&shown.to_string())?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn print_row(row: &Row<'_>, cwd: &Path) -> std::io::Result<()> {
    let def = row.def;
    let mut head = format!("{}  {}", def.name, source(&def.source, cwd));
    if let Some(by) = row.shadowed_by {
        head.push_str(&format!("  [shadowed by {}]", source(by, cwd)));
    }
    show(&head)?;
    let summary = def.summary(SUMMARY_CHARS);
    show(&format!("    {}", if summary.is_empty() { "(no description)" } else { &summary }))?;
    let mut facts = vec![format!("tools: {}", tools(def))];
    if let Some(model) = &def.model {
        facts.push(format!("model: {model}"));
    }
    if let Some(mode) = def.permission_mode {
        facts.push(format!("permission mode: {mode}"));
    }
    if let Some(turns) = def.max_turns {
        facts.push(format!("max turns: {turns}"));
    }
    show(&format!("    {}", facts.join(" · ")))
}

/// The tools as the definition writes them: `all`, a list, or `none`, and what it takes away.
fn tools(def: &AgentDefinition) -> String {
    let mut shown = match def.tools.as_deref() {
        None => "all".to_string(),
        Some([]) => "none".to_string(),
        Some(list) if list.iter().any(|t| t == "*") => "all".to_string(),
        Some(list) => list.join(", "),
    };
    if !def.disallowed_tools.is_empty() {
        shown.push_str(&format!(" except {}", def.disallowed_tools.join(", ")));
    }
    shown
}

fn source(source: &DefinitionSource, cwd: &Path) -> String {
    match source {
        DefinitionSource::BuiltIn => "built-in".into(),
        DefinitionSource::File { path, scope } => format!("{} ({})", relative(path, cwd), scope.as_str()),
    }
}

/// `path` relative to `cwd` when it is below it, else as it is.
fn relative(path: &Path, cwd: &Path) -> String {
    path.strip_prefix(cwd).unwrap_or(path).display().to_string()
}

/// Prints one line of the listing with every control character replaced: names, descriptions
/// and file names come from files a repository may hold, and an escape sequence in them must
/// not reach the terminal.
fn show(text: &str) -> std::io::Result<()> {
    let shown: String = text.chars().map(|c| if c.is_control() { '\u{fffd}' } else { c }).collect();
    output::line(&shown)
}

fn row_json(row: &Row<'_>) -> Value {
    let def = row.def;
    json!({
        "name": def.name,
        "description": def.description,
        "tools": def.tools,
        "disallowed_tools": def.disallowed_tools,
        "tool_set": row.tools.tools,
        "model": def.model,
        "permission_mode": def.permission_mode,
        "max_turns": def.max_turns,
        "source": def.source,
        "shadowed_by": row.shadowed_by,
        "system_prompt": def.system_prompt,
    })
}
