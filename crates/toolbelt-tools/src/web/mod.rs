//! Web tools: `WebFetch` (a page's own text, paged), `WebSearch` (results from a search
//! provider), `Message` (to a channel the user configured) and `RemoteTrigger` (an HTTP
//! trigger the user configured), one file each. What they share is in [`support`]: the URL and address checks
//! that keep requests out of private networks ([`support::guard`], [`support::resolver`]),
//! the HTTP client with its redirects and limits ([`support::client`]), what makes a body
//! readable ([`support::content`], [`support::html`]), and the search providers
//! ([`support::search`]).

use std::sync::Arc;

use toolbelt_core::{DynTool, erase};

pub mod message;
pub mod remote_trigger;
pub(crate) mod support;
#[cfg(feature = "testing")]
pub mod testing;
pub mod web_fetch;
pub mod web_search;

pub use support::channels::ChannelConfig;
pub use support::client::Web;
pub use support::config::{SearchConfig, SearchProviderConfig, SearchProviderKind, WebConfig};
pub use support::guard::parse_host_entry;
pub use support::triggers::TriggerConfig;

/// Every web tool, erased.
pub fn tools() -> Vec<Arc<dyn DynTool>> {
    vec![
        erase(web_fetch::WebFetch),
        erase(web_search::WebSearch),
        erase(message::Message),
        erase(remote_trigger::RemoteTrigger),
    ]
}
