//! Numbers the model reads in a tool's description are the limits the runtime enforces:
//! change a setting and the description changes with it.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

#[path = "common/hermetic.rs"]
mod hermetic;

use serde_json::Value;

fn bash_description(dir: &std::path::Path, flags: &[&str]) -> String {
    let out = hermetic::toolbelt(dir).args(flags).args(["tools", "--format", "json"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let tools: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    let bash = tools.iter().find(|t| t["name"] == "Bash").unwrap();
    bash["description"].as_str().unwrap().to_string()
}

#[test]
fn bash_states_the_output_budget_and_timeouts_in_force() {
    let dir = tempfile::tempdir().unwrap();
    let default = bash_description(dir.path(), &[]);
    assert!(default.contains("30,000 characters"), "{default}");
    assert!(default.contains("600000"), "{default}");

    let changed = bash_description(dir.path(), &["--output-budget", "5000", "--max-timeout", "300"]);
    assert!(changed.contains("5,000 characters"), "the budget sentence follows --output-budget: {changed}");
    assert!(!changed.contains("30,000"), "no stale budget left: {changed}");
    assert!(changed.contains("300000"), "the cap follows --max-timeout: {changed}");
    assert!(!changed.contains("600000"), "no stale cap left: {changed}");
}
