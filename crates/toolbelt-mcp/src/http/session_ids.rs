//! The session ids clients see. On a team, every id names the replica that opened the session
//! (`replica.<uuid>`), so a request that reaches another replica is told whose session it is
//! (or passed on to it, [`super::forward`]). rmcp makes its own ids and keeps its sessions by
//! them; [`SessionIds`] translates both ways. rmcp's ids are UUIDs (no dots), so the replica is
//! everything before the last dot, dots in its name included.

use rmcp::transport::streamable_http_server::SessionId;

use super::sessions::SessionError;

/// The translation between the ids clients see and rmcp's.
#[derive(Debug, Clone, Default)]
pub(super) struct SessionIds {
    /// `replica.` when ids name this replica.
    prefix: Option<String>,
}

impl SessionIds {
    /// Ids naming `replica`, or rmcp's own without one.
    pub(super) fn new(replica: Option<&str>) -> Self {
        Self { prefix: replica.map(|r| format!("{r}.")) }
    }

    /// The id a client sees for rmcp's `inner`.
    pub(super) fn outer(&self, inner: SessionId) -> SessionId {
        match &self.prefix {
            Some(prefix) => SessionId::from(format!("{prefix}{inner}")),
            None => inner,
        }
    }

    /// rmcp's id for the id `outer` a client sent, or why there is none here.
    pub(super) fn inner(&self, outer: &SessionId) -> Result<SessionId, SessionError> {
        let Some(prefix) = &self.prefix else { return Ok(outer.clone()) };
        match outer.strip_prefix(prefix.as_str()) {
            Some(inner) => Ok(SessionId::from(inner.to_string())),
            None => Err(self.not_here(outer)),
        }
    }

    /// Why a session `id` names is not here: it ended, or another replica holds it.
    pub(super) fn not_here(&self, id: &str) -> SessionError {
        let here = self.prefix.as_deref().map(|p| p.trim_end_matches('.'));
        match (here, id.rsplit_once('.')) {
            (Some(here), Some((owner, _))) if owner != here => {
                SessionError::Elsewhere { id: id.to_string(), owner: owner.to_string(), here: here.to_string() }
            }
            _ => SessionError::NotHere(id.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_name_their_replica() {
        let named = SessionIds::new(Some("toolbelt-1.pods"));
        let outer = named.outer(SessionId::from("5d1c".to_string()));
        assert_eq!(&*outer, "toolbelt-1.pods.5d1c");
        assert_eq!(&*named.inner(&outer).unwrap(), "5d1c");
        let theirs = SessionId::from("toolbelt-2.pods.77ab".to_string());
        let e = named.inner(&theirs).unwrap_err().to_string();
        assert!(e.starts_with("the session toolbelt-2.pods.77ab was opened on replica toolbelt-2.pods, and this is replica toolbelt-1.pods"), "{e}");
        assert!(matches!(named.not_here("toolbelt-1.pods.0000"), SessionError::NotHere(_)), "ours, ended");
        let plain = SessionIds::new(None);
        assert_eq!(&*plain.outer(SessionId::from("5d1c".to_string())), "5d1c");
        assert!(matches!(plain.not_here("x.y"), SessionError::NotHere(_)));
    }
}
