//! A team's replicas finding each other through the shared database: each serving replica
//! says where it can be reached (every few seconds, and that it left when it stops), and looks
//! up the owner of another replica's session to pass the session's requests on to it.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use toolbelt_mcp::http::forward::Replicas;
use toolbelt_tools::storage::{ReplicaTable, SharedStorage};

/// How often a replica says it is alive.
const HEARTBEAT: Duration = Duration::from_secs(5);

/// How recently a replica must have said so to be passed requests: three heartbeats.
const FRESH: Duration = Duration::from_secs(15);

/// The replicas the shared database knows.
#[derive(Debug)]
pub struct SharedReplicas(pub Arc<SharedStorage>);

impl Replicas for SharedReplicas {
    fn locate(&self, name: &str) -> Result<Option<String>, String> {
        ReplicaTable::new(&self.0).locate(name, FRESH).map_err(|e| e.to_string())
    }
}

/// This process's heartbeat, while it announces itself ([`leave`] ends it).
static ANNOUNCING: Mutex<Option<Announcing>> = Mutex::new(None);

/// Says this replica is alive at `url`, every [`HEARTBEAT`], until [`leave`]; on a thread of
/// its own (the database's client blocks).
pub fn announce(shared: Arc<SharedStorage>, name: String, url: String) -> std::io::Result<()> {
    let (stop, stopped) = mpsc::channel::<()>();
    let thread = std::thread::Builder::new().name("replica-heartbeat".into()).spawn(move || {
        let table = ReplicaTable::new(&shared);
        let (mut failing, mut clashed, mut first) = (false, false, true);
        loop {
            // The first time, a fresh row of this name is this replica's previous run's.
            let announced = table.announce(&name, &url, FRESH);
            let clash = !std::mem::replace(&mut first, false);
            match announced {
                Ok(Some(other)) if clash && !std::mem::replace(&mut clashed, true) => tracing::error!(
                    "another process announces itself as replica {name} (at {other}): replicas sharing a name take \
                     each other's sessions for ended ones; give each its own TOOLBELT_REPLICA"
                ),
                Ok(_) if std::mem::take(&mut failing) => {
                    tracing::info!("this replica is announced in the shared database again");
                }
                Ok(_) => {}
                Err(e) if !std::mem::replace(&mut failing, true) => tracing::warn!(
                    "cannot say where this replica is in the shared database ({e}); other replicas cannot pass \
                     requests of its sessions on to it until it can"
                ),
                Err(_) => {}
            }
            match stopped.recv_timeout(HEARTBEAT) {
                Err(RecvTimeoutError::Timeout) => {}
                Ok(()) | Err(RecvTimeoutError::Disconnected) => break,
            }
        }
        if let Err(e) = table.leave(&name, &url) {
            tracing::debug!("could not say this replica left: {e}");
        }
    })?;
    let mut slot = ANNOUNCING.lock().unwrap_or_else(PoisonError::into_inner);
    *slot = Some(Announcing { stop: Some(stop), thread: Some(thread) });
    Ok(())
}

/// Says this replica left: its heartbeat stops and its row goes. Blocking (a round trip to the
/// database): call it off the async runtime's threads. Nothing when it did not announce.
pub fn leave() {
    // Held while the heartbeat ends, so a second caller waits for the row to go (the
    // heartbeat thread never takes this lock).
    let mut slot = ANNOUNCING.lock().unwrap_or_else(PoisonError::into_inner);
    drop(slot.take());
}

/// A replica announcing itself; dropping it says it left.
struct Announcing {
    stop: Option<mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Announcing {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The URL other replicas reach this one at: `mcp.advertise_url`, else the address it serves
/// when other machines can reach it there. Never a loopback or unspecified address on its own:
/// another machine's replica would send the session's requests, with their client's token, to
/// whatever listens on its own loopback.
pub fn advertised(setting: Option<&str>, bind: std::net::SocketAddr) -> Option<String> {
    match setting.map(str::trim).filter(|s| !s.is_empty()) {
        Some(url) => Some(url.trim_end_matches('/').to_string()),
        None => (!bind.ip().is_unspecified() && !bind.ip().is_loopback()).then(|| format!("http://{bind}")),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_advertised_address() {
        let bind = "10.0.0.7:8080".parse().unwrap();
        assert_eq!(super::advertised(None, bind).as_deref(), Some("http://10.0.0.7:8080"));
        assert_eq!(super::advertised(Some("http://pod:8080/"), bind).as_deref(), Some("http://pod:8080"));
        assert_eq!(super::advertised(None, "0.0.0.0:8080".parse().unwrap()), None);
        assert_eq!(super::advertised(None, "127.0.0.1:8080".parse().unwrap()), None, "loopback is this machine's only");
        let given = super::advertised(Some("http://127.0.0.1:9000"), "127.0.0.1:9000".parse().unwrap());
        assert_eq!(given.as_deref(), Some("http://127.0.0.1:9000"), "unless the user says so");
    }
}
