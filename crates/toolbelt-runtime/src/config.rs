//! Knobs of the runtime.

use std::time::Duration;

/// How the runtime treats calls. The defaults match what agents people already use expect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuntimeConfig {
    /// Timeout of a call when neither its input nor its tool's spec gives one.
    pub default_timeout: Duration,
    /// No call runs longer than this, whatever it asks for.
    pub max_timeout: Duration,
    /// Characters of text the model gets from one call before the rest is cut and spilled.
    pub output_budget: usize,
    /// How many shared calls of a batch run at once.
    pub concurrency: usize,
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        Self {
            default_timeout: Duration::from_secs(120),
            max_timeout: Duration::from_secs(600),
            output_budget: 30_000,
            concurrency: 10,
        }
    }
}
