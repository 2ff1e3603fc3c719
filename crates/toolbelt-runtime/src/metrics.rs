//! What a runtime's calls did, counted for an operator's dashboards: calls by tool and
//! outcome, their latency, the permission decisions and who made them, the approvals waited
//! on and for how long, the calls running now. A front end writes them out in the Prometheus
//! text format ([`CallMetrics::write_prometheus`]); `toolbelt mcp --http` serves them at
//! `/metrics`.
//!
//! Counting costs one uncontended lock and a hash lookup by the tool's name per call. Labels
//! stay bounded whatever clients send: a call to a tool that does not exist is counted under
//! `(unknown)`, never under the name it asked for, and a decision's source is its kind
//! (`rule`, `mode`, `hook`…), never the rule's text.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use toolbelt_policy::{Approval, Decision, Verdict, VerdictSource};

use crate::call::Outcome;

/// The upper bounds of the latency buckets, in seconds: from a cached read to a long build.
const BOUNDS: [f64; 16] =
    [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0, 30.0, 120.0, 600.0];

/// Every outcome, in the order counted.
const OUTCOMES: [Outcome; 11] = Outcome::ALL;

/// Who made a decision, as a label: the kinds of [`VerdictSource`].
const SOURCES: [&str; 8] = ["rule", "mode", "protected_path", "hook", "tool_spec", "tool", "allow_all", "other"];

/// The decisions, as labels.
const DECISIONS: [&str; 3] = ["allow", "ask", "deny"];

/// How a person answered, as labels.
const ANSWERS: [&str; 5] = ["allow_once", "allow_session", "allow_always", "accept_edits_session", "deny"];

/// The label of calls to a tool that does not exist.
const UNKNOWN: &str = "(unknown)";

/// The counters of one runtime. Shared by every session; read by whoever exposes them.
#[derive(Debug, Default)]
pub struct CallMetrics {
    counted: Mutex<Counted>,
    running: AtomicUsize,
}

#[derive(Debug, Default)]
struct Counted {
    tools: HashMap<Box<str>, ToolStats>,
    decisions: [[u64; SOURCES.len()]; DECISIONS.len()],
    answers: [u64; ANSWERS.len()],
    waited: Histogram,
}

#[derive(Debug, Default)]
struct ToolStats {
    outcomes: [u64; OUTCOMES.len()],
    latency: Histogram,
}

/// A Prometheus histogram: counts per bucket (not cumulative until written), sum and count.
#[derive(Debug, Default, Clone)]
struct Histogram {
    buckets: [u64; BOUNDS.len()],
    sum: f64,
    count: u64,
}

impl Histogram {
    fn observe(&mut self, seconds: f64) {
        if let Some(i) = BOUNDS.iter().position(|&b| seconds <= b) {
            self.buckets[i] += 1;
        }
        self.sum += seconds;
        self.count += 1;
    }

    fn write(&self, out: &mut String, name: &str, labels: &str) {
        let sep = if labels.is_empty() { "" } else { "," };
        let mut cumulative = 0;
        for (bound, n) in BOUNDS.iter().zip(self.buckets) {
            cumulative += n;
            let _ = writeln!(out, "{name}_bucket{{{labels}{sep}le=\"{bound}\"}} {cumulative}");
        }
        let _ = writeln!(out, "{name}_bucket{{{labels}{sep}le=\"+Inf\"}} {}", self.count);
        let braces = if labels.is_empty() { String::new() } else { format!("{{{labels}}}") };
        let _ = writeln!(out, "{name}_sum{braces} {}", self.sum);
        let _ = writeln!(out, "{name}_count{braces} {}", self.count);
    }
}

/// Counts a call as running until dropped.
#[derive(Debug)]
pub(crate) struct Running<'a>(&'a CallMetrics);

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.0.running.fetch_sub(1, Ordering::Relaxed);
    }
}

impl CallMetrics {
    /// A call started; it counts as running until the guard is dropped.
    pub(crate) fn started(&self) -> Running<'_> {
        self.running.fetch_add(1, Ordering::Relaxed);
        Running(self)
    }

    /// How many calls are running now.
    pub fn running(&self) -> usize {
        self.running.load(Ordering::Relaxed)
    }

    /// A call ended: `tool` is its canonical name, `None` when no tool has the name asked for.
    pub(crate) fn finished(&self, tool: Option<&str>, outcome: Outcome, duration: Duration) {
        let tool = tool.filter(|_| !matches!(outcome, Outcome::UnknownTool | Outcome::InvalidLine)).unwrap_or(UNKNOWN);
        let mut counted = self.lock();
        let stats = match counted.tools.get_mut(tool) {
            Some(stats) => stats,
            None => counted.tools.entry(tool.into()).or_default(),
        };
        stats.outcomes[outcome_index(outcome)] += 1;
        stats.latency.observe(duration.as_secs_f64());
    }

    /// The permission engine (with the hooks) decided about a call.
    pub(crate) fn decided(&self, verdict: &Verdict) {
        let decision = match verdict.decision {
            Decision::Allow => 0,
            Decision::Ask => 1,
            Decision::Deny => 2,
        };
        self.lock().decisions[decision][source_index(&verdict.source)] += 1;
    }

    /// A person (or the client standing for one) was asked, answered `approval`, after `waited`.
    pub(crate) fn answered(&self, approval: &Approval, waited: Duration) {
        let answer = match approval {
            Approval::AllowOnce => 0,
            Approval::AllowSession => 1,
            Approval::AllowAlways => 2,
            Approval::AcceptEditsForSession => 3,
            Approval::Deny { .. } => 4,
        };
        let mut counted = self.lock();
        counted.answers[answer] += 1;
        counted.waited.observe(waited.as_secs_f64());
    }

    /// Appends the counters in the Prometheus text format (version 0.0.4), each family with
    /// its `# HELP` and `# TYPE`.
    pub fn write_prometheus(&self, out: &mut String) {
        let counted = self.lock();
        let mut tools: Vec<_> = counted.tools.iter().collect();
        tools.sort_by(|a, b| a.0.cmp(b.0));

        family(out, "toolbelt_calls_total", "counter", "Tool calls that ended, by tool and outcome.");
        for (tool, stats) in &tools {
            let tool = label_value(tool);
            for (outcome, n) in OUTCOMES.iter().zip(stats.outcomes).filter(|(_, n)| *n > 0) {
                let _ = writeln!(out, "toolbelt_calls_total{{tool=\"{tool}\",outcome=\"{}\"}} {n}", outcome.as_str());
            }
        }
        family(
            out,
            "toolbelt_call_duration_seconds",
            "histogram",
            "Time from a call's arrival to its result, approvals and hooks included, by tool.",
        );
        for (tool, stats) in &tools {
            let labels = format!("tool=\"{}\"", label_value(tool));
            stats.latency.write(out, "toolbelt_call_duration_seconds", &labels);
        }
        family(
            out,
            "toolbelt_decisions_total",
            "counter",
            "Permission decisions (deny: a denial), by decision and by the kind of what made it.",
        );
        for (decision, row) in DECISIONS.iter().zip(counted.decisions) {
            for (source, n) in SOURCES.iter().zip(row).filter(|(_, n)| *n > 0) {
                let _ = writeln!(out, "toolbelt_decisions_total{{decision=\"{decision}\",source=\"{source}\"}} {n}");
            }
        }
        family(out, "toolbelt_approvals_total", "counter", "Approvals waited on, by the answer.");
        for (answer, n) in ANSWERS.iter().zip(counted.answers) {
            let _ = writeln!(out, "toolbelt_approvals_total{{answer=\"{answer}\"}} {n}");
        }
        family(out, "toolbelt_approval_wait_seconds", "histogram", "Time waited for an approval.");
        counted.waited.write(out, "toolbelt_approval_wait_seconds", "");
        family(out, "toolbelt_calls_running", "gauge", "Tool calls running now.");
        let _ = writeln!(out, "toolbelt_calls_running {}", self.running());
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Counted> {
        self.counted.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Writes a family's `# HELP` and `# TYPE` lines.
pub fn family(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

/// `value` escaped for a label: backslash, double quote and line feed, as the format says.
pub fn label_value(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

fn outcome_index(outcome: Outcome) -> usize {
    OUTCOMES.iter().position(|o| *o == outcome).unwrap_or(OUTCOMES.len() - 1)
}

/// The kind of what made a decision, as metrics and telemetry label it (`rule`, `mode`,
/// `protected_path`, `hook`, …).
pub fn source_kind(source: &VerdictSource) -> &'static str {
    SOURCES[source_index(source)]
}

/// A decision, as metrics and telemetry label it (`allow`, `ask`, `deny`).
pub fn decision_name(verdict: &Verdict) -> &'static str {
    match verdict.decision {
        Decision::Allow => DECISIONS[0],
        Decision::Ask => DECISIONS[1],
        Decision::Deny => DECISIONS[2],
    }
}

fn source_index(source: &VerdictSource) -> usize {
    match source {
        VerdictSource::Rule(_) | VerdictSource::LinkAndTarget { .. } => 0,
        VerdictSource::Mode(_) => 1,
        VerdictSource::ProtectedPath(_) => 2,
        VerdictSource::Hook { .. } => 3,
        VerdictSource::ToolSpec => 4,
        VerdictSource::ToolForThisCall => 5,
        VerdictSource::AllowAll => 6,
        VerdictSource::Other(_) => 7,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_stay_bounded_and_escaped() {
        let metrics = CallMetrics::default();
        metrics.finished(Some("Read"), Outcome::Ok, Duration::from_millis(2));
        metrics.finished(Some("made-up-name-1"), Outcome::UnknownTool, Duration::from_millis(1));
        metrics.finished(None, Outcome::UnknownTool, Duration::from_millis(1));
        metrics.finished(Some("up\"stream\\tool"), Outcome::Ok, Duration::from_secs(700));
        let mut out = String::new();
        metrics.write_prometheus(&mut out);
        assert!(out.contains("toolbelt_calls_total{tool=\"Read\",outcome=\"ok\"} 1\n"), "{out}");
        assert!(out.contains("toolbelt_calls_total{tool=\"(unknown)\",outcome=\"unknown_tool\"} 2\n"), "{out}");
        assert!(!out.contains("made-up-name-1"), "{out}");
        assert!(out.contains("tool=\"up\\\"stream\\\\tool\""), "{out}");
        // Past the last bound: only in +Inf, sum and count.
        assert!(out.contains("toolbelt_call_duration_seconds_bucket{tool=\"Read\",le=\"0.0025\"} 1\n"), "{out}");
        assert!(out.contains("toolbelt_call_duration_seconds_bucket{tool=\"Read\",le=\"0.001\"} 0\n"), "{out}");
        assert!(out.contains("toolbelt_call_duration_seconds_bucket{tool=\"up\\\"stream\\\\tool\",le=\"600\"} 0\n"));
        assert!(out.contains("toolbelt_call_duration_seconds_bucket{tool=\"up\\\"stream\\\\tool\",le=\"+Inf\"} 1\n"));
    }

    #[test]
    fn the_running_gauge_follows_its_guards() {
        let metrics = CallMetrics::default();
        let a = metrics.started();
        let b = metrics.started();
        assert_eq!(metrics.running(), 2);
        drop(a);
        drop(b);
        assert_eq!(metrics.running(), 0);
    }
}
