//! Teams: named agents sharing a mailbox. Members are started with `Agent{team_name, name}`
//! and always work in the background; a broadcast reaches every member.

use std::sync::Arc;

use toolbelt_core::{AgentStatus, TeamMember, TeamReport, ToolError};

use crate::host::roster::{AgentRecord, Roster, Team, lock};

/// The longest team name.
const MAX_NAME: usize = 64;

/// Creates team `name`.
pub(crate) fn create(roster: &Roster, name: &str, description: &str) -> Result<TeamReport, ToolError> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > MAX_NAME {
        return Err(ToolError::failed(format!("a team name needs 1 to {MAX_NAME} characters")));
    }
    let mut teams = lock(&roster.teams);
    if teams.contains_key(name) {
        return Err(ToolError::failed(format!(
            "team `{name}` already exists; start members in it with Agent{{team_name, name}} or delete it with TeamDelete"
        )));
    }
    let team = Team { description: description.to_string(), members: Vec::new() };
    let report = team_report(roster, name, &team);
    teams.insert(name.to_string(), team);
    Ok(report)
}

/// Deletes team `name`; refused while any member runs.
pub(crate) fn delete(roster: &Roster, name: &str) -> Result<TeamReport, ToolError> {
    let mut teams = lock(&roster.teams);
    let Some(team) = teams.get(name) else {
        return Err(no_team(name, teams.keys()));
    };
    let report = team_report(roster, name, team);
    let running: Vec<String> = report
        .members
        .iter()
        .filter(|m| m.status == AgentStatus::Running)
        .map(|m| format!("{} ({})", m.name, m.agent_id))
        .collect();
    if !running.is_empty() {
        return Err(ToolError::failed(format!(
            "team `{name}` still has members running: {}; wait for them with TaskOutput or stop them with TaskStop, \
             then delete the team",
            running.join(", ")
        )));
    }
    teams.remove(name);
    Ok(report)
}

/// Sends `message` to every member of team `name`: a running member reads it at its next
/// turn, an idle one continues in the background (`resume`).
pub(crate) fn broadcast(
    roster: &Roster,
    name: &str,
    message: &str,
    resume: impl Fn(Arc<AgentRecord>, String),
) -> Result<TeamReport, ToolError> {
    let team = {
        let teams = lock(&roster.teams);
        teams.get(name).cloned().ok_or_else(|| no_team(name, teams.keys()))?
    };
    if team.members.is_empty() {
        return Err(ToolError::failed(format!(
            "team `{name}` has no members yet; start some with Agent{{team_name: \"{name}\", name, …}}"
        )));
    }
    let text = format!("Message to team `{name}`:\n{message}");
    for id in &team.members {
        if let Some(agent) = roster.find(id) {
            resume(agent, text.clone());
        }
    }
    Ok(team_report(roster, name, &team))
}

fn team_report(roster: &Roster, name: &str, team: &Team) -> TeamReport {
    let members = team
        .members
        .iter()
        .filter_map(|id| roster.find(id))
        .map(|a| TeamMember {
            name: a.name.clone().unwrap_or_else(|| a.id.clone()),
            agent_id: a.id.clone(),
            status: a.status(),
        })
        .collect();
    TeamReport { team_name: name.to_string(), description: team.description.clone(), members }
}

fn no_team<'a>(name: &str, known: impl Iterator<Item = &'a String>) -> ToolError {
    let known: Vec<&str> = known.map(String::as_str).collect();
    if known.is_empty() {
        ToolError::failed(format!("there is no team `{name}`; create one with TeamCreate"))
    } else {
        ToolError::failed(format!("there is no team `{name}`; the teams are: {}", known.join(", ")))
    }
}
