//! Putting a command under the sandbox, and what happens when this machine cannot.
//!
//! The sandbox settings come from the [`SandboxConfig`] service (the defaults when absent:
//! `workspace-write`, network off). When the sandbox cannot be applied here, a command is
//! never run unconfined silently: by default (`ask`) its access declares that it needs a
//! person's approval, with the reason, so the runtime asks before it runs; `refuse` refuses
//! it; `run` runs it with a notice in its output. A command the classifier proves read-only
//! needs no approval for that: confinement would not change what it does.

use toolbelt_core::{Access, ToolContext, ToolError};

use crate::process::sandbox::{
    Confinement, SandboxConfig, SandboxMode, SandboxReport, SandboxUnavailable, WhenUnavailable,
};

/// The sandbox settings in effect.
pub fn sandbox_config(cx: &ToolContext) -> SandboxConfig {
    cx.service::<SandboxConfig>().map(|c| (*c).clone()).unwrap_or_default()
}

/// How a command will be confined, as its call was judged: the sandbox settings read then,
/// and why the sandbox could not be applied, when it could not. The call runs under this,
/// not under settings or a probe read again: what runs is what was judged.
#[derive(Debug, Clone)]
pub struct Confining {
    config: SandboxConfig,
    /// The sandbox cannot be applied here (and the call was judged to run anyway: approved, or
    /// proven read-only, or `if_unsandboxed = "run"`).
    unavailable: Option<String>,
}

/// Adds to `access` what the sandbox's availability asks of this call — approval when it
/// cannot be applied and the policy is to ask, or a refusal when the policy is to refuse —
/// and returns how the call will then be confined.
pub fn declare(cx: &ToolContext, access: Access, read_only: bool) -> Result<(Access, Confining), ToolError> {
    declare_with(cx, access, read_only, |_| {})
}

/// [`declare`] with the sandbox settings changed for this call by `adjust` (a command tool
/// the settings define may use the network, or write where it declared it writes).
pub fn declare_with(
    cx: &ToolContext,
    access: Access,
    read_only: bool,
    adjust: impl FnOnce(&mut SandboxConfig),
) -> Result<(Access, Confining), ToolError> {
    let mut config = sandbox_config(cx);
    adjust(&mut config);
    if config.mode == SandboxMode::DangerFullAccess {
        return Ok((access, Confining { config, unavailable: None }));
    }
    let available = SandboxReport::probe().can_confine(config.mode, config.network);
    let unavailable = available.as_ref().err().map(|SandboxUnavailable(reason)| reason.clone());
    let access = decide(available, config.when_unavailable, access, read_only)?;
    Ok((access, Confining { config, unavailable }))
}

/// [`declare`]'s decision, given whether the sandbox can be applied.
fn decide(
    available: Result<(), SandboxUnavailable>,
    when: WhenUnavailable,
    access: Access,
    read_only: bool,
) -> Result<Access, ToolError> {
    match available {
        Ok(()) => Ok(access),
        Err(SandboxUnavailable(reason)) => match when {
            WhenUnavailable::Refuse => Err(refusal(&reason)),
            WhenUnavailable::Ask if !read_only => Ok(access.needs_approval(unconfined_reason(&reason))),
            WhenUnavailable::Ask | WhenUnavailable::Run => Ok(access),
        },
    }
}

impl Confining {
    /// The confinement the command runs under (none in `danger-full-access`), and the notice
    /// to add when it runs unconfined as judged. A sandbox that could be applied when the call
    /// was judged and cannot be now refuses the call: nobody judged it unconfined.
    pub fn confinement(&self, cx: &ToolContext) -> Result<(Option<Confinement>, Option<String>), ToolError> {
        if let Some(reason) = &self.unavailable {
            return Ok((None, Some(format!("Ran without the sandbox: {reason}"))));
        }
        // The session's roots only: a path approved for one call (an extra root) may be read,
        // but an approval never widens what a command may write.
        let masks = cx.hidden().map(|h| h.masks()).unwrap_or_default();
        match Confinement::for_command(&self.config, &cx.session().roots(), &masks) {
            Ok(confinement) => Ok((confinement, None)),
            Err(SandboxUnavailable(reason)) => Err(ToolError::failed(format!(
                "Refused: the sandbox could be applied when this call was judged but cannot be now ({reason}); \
                 nothing ran. Run it again; if this persists, ask the user to check the sandbox (`toolbelt sandbox \
                 check`)."
            ))),
        }
    }
}

fn unconfined_reason(reason: &str) -> String {
    format!("this command would run outside the sandbox: {reason}")
}

fn refusal(reason: &str) -> ToolError {
    ToolError::failed(format!(
        "Refused: the sandbox cannot be applied on this machine ({reason}), and the configuration says to refuse \
         commands it cannot confine. Ask the user to fix the sandbox (`toolbelt sandbox check`) or to change the \
         sandbox settings."
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unavailable_sandbox_asks_refuses_or_runs() {
        let access = || Access::exclusive().executes("make");
        let missing =
            || Err(SandboxUnavailable("Landlock is not available (kernel too old); upgrade the kernel".to_string()));
        assert_eq!(decide(Ok(()), WhenUnavailable::Ask, access(), false).unwrap(), access());
        let asked = decide(missing(), WhenUnavailable::Ask, access(), false).unwrap();
        assert_eq!(
            asked.approval.as_deref(),
            Some(
                "this command would run outside the sandbox: Landlock is not available (kernel too old); upgrade the kernel"
            )
        );
        // A command proven read-only needs no approval for it.
        assert_eq!(decide(missing(), WhenUnavailable::Ask, access(), true).unwrap().approval, None);
        assert_eq!(decide(missing(), WhenUnavailable::Run, access(), false).unwrap().approval, None);
        let refused = decide(missing(), WhenUnavailable::Refuse, access(), true).unwrap_err().to_string();
        assert!(refused.starts_with("Refused: the sandbox cannot be applied on this machine (Landlock"), "{refused}");
    }
}
