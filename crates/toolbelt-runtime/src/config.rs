//! Knobs of the runtime.

use std::time::Duration;

use toolbelt_core::CallLimits;

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
        let limits = CallLimits::DEFAULT;
        Self {
            default_timeout: limits.default_timeout,
            max_timeout: limits.max_timeout,
            output_budget: limits.output_budget,
            concurrency: 10,
        }
    }
}

impl RuntimeConfig {
    /// The per-call limits in force, for tools whose descriptions state them.
    pub fn limits(&self) -> CallLimits {
        CallLimits {
            default_timeout: self.default_timeout,
            max_timeout: self.max_timeout,
            output_budget: self.output_budget,
        }
    }
}
