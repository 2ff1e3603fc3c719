//! More access in the middle of a call, judged by the runtime.
//!
//! A call declares what it touches before it runs ([`crate::Access`]), and the runtime
//! authorizes that. A few calls learn of more only once they run: a fetched page redirects
//! to `www.` of its host. The tool does not decide whether it may go on; it asks the
//! runtime through [`crate::ToolContext::authorize`], which judges the new access by the
//! same rules, mode and approver as the call itself, and records the verdict with the call.

use std::future::Future;
use std::pin::Pin;

use crate::access::Access;
use crate::error::ToolError;

/// Judges access a running call turned out to need. The runtime puts one in each call's
/// context; a context without one (a tool called directly) refuses every follow-up.
pub trait FollowUp: Send + Sync + std::fmt::Debug {
    /// Judges `access` as the call was judged: `Ok` when it may go ahead (a person may have
    /// been asked), the denial saying why and what would allow it otherwise.
    ///
    /// (The return type is [`crate::BoxFuture`], spelled out: the context, which holds a
    /// judge, comes before the tool contract that names the alias.)
    fn authorize(&self, access: Access) -> Pin<Box<dyn Future<Output = Result<(), ToolError>> + Send + '_>>;
}
