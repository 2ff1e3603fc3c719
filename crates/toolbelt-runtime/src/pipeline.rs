//! What the stages of a call use of the runtime. A [`crate::Runtime`] holds one and hands it
//! to the stages, which know nothing of the runtime itself.

use std::sync::Arc;

use toolbelt_core::{Extensions, HiddenPaths, Registry};
use toolbelt_policy::{Approver, Authorizer, Hooks};

use crate::audit::AuditLog;
use crate::config::RuntimeConfig;
use crate::metrics::CallMetrics;

/// The registry, the policy, the hooks, the services tools ask for, the audit log and the
/// knobs: the same for every call of every session of a runtime.
pub(crate) struct Pipeline {
    /// Where calls find their tools.
    pub(crate) registry: Arc<Registry>,
    /// The permission engine.
    pub(crate) authorizer: Arc<dyn Authorizer>,
    /// Who answers `Ask` verdicts.
    pub(crate) approver: Arc<dyn Approver>,
    /// The configured hooks.
    pub(crate) hooks: Arc<dyn Hooks>,
    /// The shared services tools can ask for.
    pub(crate) services: Extensions,
    /// The knobs.
    pub(crate) config: RuntimeConfig,
    /// Where every call is recorded, when anywhere.
    pub(crate) audit: Option<Arc<AuditLog>>,
    /// What the authorizer hides from tools that walk many files.
    pub(crate) hidden: Option<Arc<dyn HiddenPaths>>,
    /// What the calls did, counted.
    pub(crate) metrics: Arc<CallMetrics>,
    /// Who else is told of each finished call (telemetry), if anyone.
    pub(crate) observer: Option<Arc<dyn crate::observe::CallObserver>>,
}
