//! A `tools/call` of a 2026-07-28 client: its attempt runs in a round ([`crate::round`]), and
//! what it wanted answered goes back as an `input_required` result.

use std::sync::Arc;

use rmcp::model::{CallToolRequestParams, CallToolResponse};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};

use super::inline::Seat;
use super::{McpServer, roots};
use crate::round::{self, Offers, Round};

impl McpServer {
    /// The call in `seat`'s session, with the answers its `requestState` and `inputResponses`
    /// bring; first, once per session, the client's roots when it offers them.
    pub(super) async fn call_in_rounds(
        &self,
        seat: &Seat,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let session = seat.session();
        let binding = round::state::binding(session.id(), &request);
        let redeemed = round::state::redeem(&binding, &request)?;
        let capabilities = context.client_capabilities().unwrap_or_default();
        let offers =
            Offers { elicitation: capabilities.elicitation.is_some(), sampling: capabilities.sampling.is_some() };
        let round =
            Arc::new(Round::new(session.id(), context.peer.clone(), context.meta.log_level(), offers, redeemed));
        // The client's roots, before the call resolves any path (a call of a tool that does
        // not exist is refused first).
        let known = self.runtime().registry().lookup(&request.name).is_ok();
        if known && capabilities.roots.is_some() && !seat.roots_known() {
            match round.roots() {
                Some(Ok(listed)) => roots::apply(session, &listed),
                Some(Err(e)) => tracing::warn!("{e}; keeping the session's roots"),
                None => {}
            }
            if round.wants_input()
                && let Some(input) = round.input_required(&binding)?
            {
                return Ok(input.into());
            }
            seat.roots_learned();
        } else {
            // Roots an earlier round gave, which this session has learned since.
            round.pass_roots();
        }
        let response = Arc::clone(&round).scope(self.run(seat, request, context, true)).await?;
        Ok(match round.input_required(&binding)? {
            Some(input) => input.into(),
            None => response,
        })
    }
}
