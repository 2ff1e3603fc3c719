//! `toolbelt tools`: list the tools, or export their schemas.

use std::process::ExitCode;

use toolbelt_core::{Category, ExportFormat, ToolSpec};

use toolbelt::settings::ToolFilter;

use crate::Usage;
use crate::cli::{Global, ToolsArgs, ToolsFormat};
use crate::cmd::Setup;
use crate::output::line;

pub async fn run(global: &Global, args: &ToolsArgs) -> anyhow::Result<ExitCode> {
    let category = match &args.category {
        Some(name) => Some(Category::parse(name).ok_or_else(|| {
            let all: Vec<&str> = Category::ALL.iter().map(|c| c.as_str()).collect();
            Usage(format!("unknown category `{name}`; expected one of: {}", all.join(", ")))
        })?),
        None => None,
    };
    // The settings matter here: a bare deny rule removes a tool from every listing.
    let setup = Setup::load(global)?;
    setup.require_valid()?;
    let registry = std::sync::Arc::new(setup.registry(&setup.engine()));
    let gateway = setup.gateway(&registry).await;
    let specs: Vec<ToolSpec> = registry
        .specs()
        .into_iter()
        .filter(|s| category.is_none_or(|c| s.category == c))
        .filter(|s| args.tag.iter().all(|t| s.has_tag(t)))
        .collect();

    match args.format {
        ToolsFormat::Names => {
            for s in &specs {
                line(&s.name)?;
            }
        }
        ToolsFormat::Table => {
            table(&specs, &registry.deferred())?;
            // What is registered but cannot be offered, with why: a tool missing from the
            // table is otherwise a mystery.
            let absent: Vec<(String, String)> = registry
                .entries()
                .iter()
                .filter(|e| category.is_none_or(|c| e.spec().category == c))
                .filter(|e| args.tag.iter().all(|t| e.spec().has_tag(t)))
                .filter_map(|e| Some((e.spec().name.clone(), e.disabled_reason()?.to_string())))
                .collect();
            // Those the settings leave out on purpose are counted unless asked for.
            let (chosen, other): (Vec<_>, Vec<_>) =
                absent.into_iter().partition(|(_, why)| ToolFilter::is_its_reason(why));
            let shown = if args.all { [other, chosen.clone()].concat() } else { other };
            unavailable(&shown)?;
            if !args.all && !chosen.is_empty() {
                line("")?;
                line(&format!(
                    "{} more left out by tools.enabled / tools.disabled (`toolbelt tools --all` lists them with why)",
                    chosen.len()
                ))?;
            }
        }
        ToolsFormat::Json => line(&serde_json::to_string_pretty(&specs)?)?,
        ToolsFormat::Openai | ToolsFormat::Anthropic | ToolsFormat::Mcp => {
            let format = match args.format {
                ToolsFormat::Openai => ExportFormat::OpenAi,
                ToolsFormat::Anthropic => ExportFormat::Anthropic,
                _ => ExportFormat::Mcp,
            };
            let exported: Vec<_> = specs.iter().map(|s| format.render(s)).collect();
            line(&serde_json::to_string_pretty(&exported)?)?;
        }
    }
    if let Some(gateway) = gateway {
        gateway.shutdown().await;
    }
    Ok(ExitCode::SUCCESS)
}

/// The tools as a table; deferred ones (sent to the model by name only until `ToolSearch`
/// loads them) are marked.
fn table(specs: &[ToolSpec], deferred: &std::collections::BTreeSet<String>) -> std::io::Result<()> {
    if specs.is_empty() {
        return line("no tools match");
    }
    let width = specs.iter().map(|s| s.name.len()).max().unwrap_or(4).max(4);
    line(&format!("{:width$}  {:9}  {:8}  DESCRIPTION", "NAME", "CATEGORY", "ACCESS"))?;
    for s in specs {
        let access = if s.annotations.read_only { "read" } else { permission(s) };
        let summary = s.description.split(". ").next().unwrap_or("").trim_end_matches('.');
        let aliases =
            if s.aliases.is_empty() { String::new() } else { format!(" (aliases: {})", s.aliases.join(", ")) };
        let mark = if deferred.contains(&s.name) { "[deferred] " } else { "" };
        line(&format!("{:width$}  {:9}  {:8}  {mark}{summary}{aliases}", s.name, s.category.as_str(), access))?;
    }
    if specs.iter().any(|s| deferred.contains(&s.name)) {
        line("")?;
        line("[deferred]: listed to the model by name only until ToolSearch loads it; callable either way")?;
    }
    Ok(())
}

/// The tools that are registered but not offered, each with why.
fn unavailable(absent: &[(String, String)]) -> std::io::Result<()> {
    if absent.is_empty() {
        return Ok(());
    }
    line("")?;
    line("Not available here:")?;
    for (name, why) in absent {
        line(&format!("  {name}: {why}"))?;
    }
    Ok(())
}

fn permission(s: &ToolSpec) -> &'static str {
    match s.permission {
        toolbelt_core::PermissionClass::Read => "session",
        toolbelt_core::PermissionClass::Write => "write",
        toolbelt_core::PermissionClass::External => "external",
    }
}
