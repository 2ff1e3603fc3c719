//! State a session keeps between calls: the cwd, the workspace roots, and typed slots.
//!
//! Slots are how tools keep session state without the core knowing their types: the todo
//! list, the file-read ledger, background tasks. A slot type names itself with a stable key
//! and is serde-serializable, so a named session can be saved to disk and loaded again; a
//! loaded slot stays as JSON until a tool first asks for it by type.

use std::any::Any;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock};

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// A typed piece of session state.
pub trait SessionSlot: Default + Serialize + DeserializeOwned + Send + 'static {
    /// Stable key under which the slot is saved (`todos`, `file_ledger`).
    const KEY: &'static str;

    /// Whether the slot follows its session from one replica of a team to another: state a
    /// request without a protocol session must find wherever it lands (the files read, the
    /// grants, the mode), never what holds this machine's resources (its processes).
    const SHARED: bool = false;

    /// Folds in `theirs`, the value another replica wrote while this one changed the slot
    /// too: by default this replica's value wins (it is the later change). A slot that gathers
    /// (the files read, the grants) keeps what both saw.
    fn merge(&mut self, theirs: Self) {
        let _ = theirs;
    }
}

trait ErasedSlot: Send + Sync {
    fn to_json(&self) -> Option<Value>;
    fn as_any(self: Arc<Self>) -> Arc<dyn Any + Send + Sync>;
    fn shared(&self) -> bool;
    /// Replaces the slot's value in place (those holding the slot see the new one); a value
    /// that does not decode (another version's) leaves the slot as it is.
    fn replace(&self, value: Value);
    /// Folds another replica's value in ([`SessionSlot::merge`]); one that does not decode is
    /// ignored.
    fn merge(&self, theirs: Value);
}

impl<T: SessionSlot> ErasedSlot for Mutex<T> {
    fn to_json(&self) -> Option<Value> {
        serde_json::to_value(&*lock(self)).ok()
    }

    fn shared(&self) -> bool {
        T::SHARED
    }

    fn replace(&self, value: Value) {
        if let Ok(value) = serde_json::from_value(value) {
            *lock(self) = value;
        }
    }

    fn merge(&self, theirs: Value) {
        if let Ok(theirs) = serde_json::from_value(theirs) {
            lock(self).merge(theirs);
        }
    }

    fn as_any(self: Arc<Self>) -> Arc<dyn Any + Send + Sync> {
        self
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

enum Slot {
    /// Loaded from disk (or from another replica: `true`), not yet asked for by type.
    Raw(Value, bool),
    Live(Arc<dyn ErasedSlot>),
}

/// The state one session shares across its calls. Cheap to share behind an `Arc`.
pub struct SessionState {
    id: String,
    cwd: RwLock<PathBuf>,
    roots: RwLock<Vec<PathBuf>>,
    /// Bumped whenever the cwd or the roots change ([`SessionState::places`]).
    places: AtomicU64,
    data_dir: RwLock<Option<PathBuf>>,
    readable: RwLock<Option<PathBuf>>,
    slots: Mutex<BTreeMap<String, Slot>>,
}

impl std::fmt::Debug for SessionState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionState").field("id", &self.id).field("cwd", &self.cwd()).finish()
    }
}

/// What a saved session looks like on disk.
#[derive(Serialize, serde::Deserialize)]
struct Saved {
    cwd: PathBuf,
    #[serde(default)]
    slots: BTreeMap<String, Value>,
}

impl SessionState {
    /// A fresh session with the given id, cwd and workspace roots (the cwd when empty).
    pub fn new(id: impl Into<String>, cwd: PathBuf, mut roots: Vec<PathBuf>) -> Self {
        if roots.is_empty() {
            roots.push(cwd.clone());
        }
        Self {
            id: id.into(),
            cwd: RwLock::new(cwd),
            roots: RwLock::new(roots),
            places: AtomicU64::new(0),
            data_dir: RwLock::new(None),
            readable: RwLock::new(None),
            slots: Mutex::new(BTreeMap::new()),
        }
    }

    /// The session id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The current working directory.
    pub fn cwd(&self) -> PathBuf {
        self.cwd.read().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Changes the working directory (a tool such as `Bash` checks the roots first).
    pub fn set_cwd(&self, cwd: PathBuf) {
        let mut current = self.cwd.write().unwrap_or_else(PoisonError::into_inner);
        if *current != cwd {
            *current = cwd;
            self.places.fetch_add(1, Ordering::AcqRel);
        }
    }

    /// A number that changes whenever the working directory or the workspace roots do: what a
    /// call touches is judged against them, so a call judged under another number than the
    /// one it runs under must be judged again.
    pub fn places(&self) -> u64 {
        self.places.load(Ordering::Acquire)
    }

    /// The workspace roots.
    pub fn roots(&self) -> Vec<PathBuf> {
        self.roots.read().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Replaces the workspace roots.
    pub fn set_roots(&self, roots: Vec<PathBuf>) {
        let mut current = self.roots.write().unwrap_or_else(PoisonError::into_inner);
        if *current != roots {
            *current = roots;
            self.places.fetch_add(1, Ordering::AcqRel);
        }
    }

    /// Where the session keeps the files it makes for the model to read back (spilled
    /// output, task logs), when it has such a place.
    pub fn data_dir(&self) -> Option<PathBuf> {
        self.data_dir.read().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Sets the session's data directory, and `readable`, the read-only root that holds it
    /// (the project's sessions, so output spilled by an earlier call can be read back), see
    /// [`SessionState::read_roots`].
    pub fn set_data_dir(&self, dir: PathBuf, readable: PathBuf) {
        *self.data_dir.write().unwrap_or_else(PoisonError::into_inner) = Some(dir);
        *self.readable.write().unwrap_or_else(PoisonError::into_inner) = Some(readable);
    }

    /// Where the session may read: the workspace roots, and the read-only root holding its
    /// data directory (the model reads spilled output there; no tool writes it).
    pub fn read_roots(&self) -> Vec<PathBuf> {
        let mut roots = self.roots();
        if let Some(dir) = self.readable.read().unwrap_or_else(PoisonError::into_inner).clone()
            && !roots.contains(&dir)
        {
            roots.push(dir);
        }
        roots
    }

    /// Resolves `path` against the cwd (absolute paths are returned as they are).
    pub fn resolve(&self, path: &Path) -> PathBuf {
        if path.is_absolute() { path.to_path_buf() } else { self.cwd().join(path) }
    }

    /// The slot of type `T`, created (or decoded from saved state) on first use.
    ///
    /// Saved JSON that no longer decodes as `T` is dropped in favour of a default value: a
    /// session file from an older version must never stop a tool from working.
    pub fn slot<T: SessionSlot>(&self) -> Arc<Mutex<T>> {
        let mut slots = lock(&self.slots);
        if let Some(Slot::Live(live)) = slots.get(T::KEY)
            && let Ok(typed) = Arc::clone(live).as_any().downcast::<Mutex<T>>()
        {
            return typed;
        }
        let initial = match slots.remove(T::KEY) {
            // What another replica sent decodes only into a slot that is shared here too.
            Some(Slot::Raw(v, from_replica)) if T::SHARED || !from_replica => {
                serde_json::from_value(v).unwrap_or_default()
            }
            _ => T::default(),
        };
        let typed = Arc::new(Mutex::new(initial));
        let erased: Arc<dyn ErasedSlot> = typed.clone();
        slots.insert(T::KEY.to_string(), Slot::Live(erased));
        typed
    }

    /// Locks the slot of type `T` and runs `f` on it.
    pub fn with_slot<T: SessionSlot, R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        let slot = self.slot::<T>();
        let mut guard = lock(&slot);
        f(&mut guard)
    }

    /// Drops every slot, ending what they hold (a slot of background processes kills them
    /// when dropped): for a session that is over, like a stopped sub-agent's.
    pub fn clear_slots(&self) {
        let slots = std::mem::take(&mut *lock(&self.slots));
        drop(slots);
    }

    /// Serializes the cwd and every slot (live or still raw) for saving.
    pub fn save(&self) -> Value {
        let mut out = BTreeMap::new();
        for (key, slot) in lock(&self.slots).iter() {
            let value = match slot {
                Slot::Raw(v, _) => Some(v.clone()),
                Slot::Live(live) => live.to_json(),
            };
            if let Some(v) = value {
                out.insert(key.clone(), v);
            }
        }
        serde_json::to_value(Saved { cwd: self.cwd(), slots: out }).unwrap_or(Value::Null)
    }

    /// Restores what [`SessionState::save`] produced. Unknown slots are kept as they are and
    /// saved again, so state written by a newer tool survives an older one.
    pub fn load(&self, saved: Value) -> Result<(), serde_json::Error> {
        let saved: Saved = serde_json::from_value(saved)?;
        self.set_cwd(saved.cwd);
        // Raw values become typed slots lazily: `slot()` decodes them on first use.
        let mut slots = lock(&self.slots);
        for (key, value) in saved.slots {
            slots.insert(key, Slot::Raw(value, false));
        }
        Ok(())
    }

    /// The slots that follow the session to another replica ([`SessionSlot::SHARED`]), as
    /// JSON, by key.
    pub fn shared_slots(&self) -> BTreeMap<String, Value> {
        let mut out = BTreeMap::new();
        for (key, slot) in lock(&self.slots).iter() {
            let value = match slot {
                Slot::Raw(v, true) => Some(v.clone()),
                Slot::Live(live) if live.shared() => live.to_json(),
                _ => None,
            };
            if let Some(v) = value {
                out.insert(key.clone(), v);
            }
        }
        out
    }

    /// Takes slot `key`'s value from another replica: a slot in use is changed in place, so a
    /// call holding it sees the new value; one not yet in use decodes it when first asked for.
    /// A key that names a slot that is not shared is ignored: another replica cannot reach
    /// what holds this one's resources.
    pub fn adopt_shared(&self, key: &str, value: Value) {
        let mut slots = lock(&self.slots);
        match slots.get(key) {
            Some(Slot::Live(live)) if live.shared() => live.replace(value),
            Some(Slot::Live(_)) => {}
            Some(Slot::Raw(..)) | None => {
                slots.insert(key.to_string(), Slot::Raw(value, true));
            }
        }
    }

    /// Folds slot `key`'s value from another replica into this one's, which changed too
    /// ([`SessionSlot::merge`]); taken as it is when this replica has none in use.
    pub fn merge_shared(&self, key: &str, theirs: Value) {
        let live = match lock(&self.slots).get(key) {
            Some(Slot::Live(live)) => Some(Arc::clone(live)),
            _ => None,
        };
        match live {
            Some(live) if live.shared() => live.merge(theirs),
            Some(_) => {}
            None => self.adopt_shared(key, theirs),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default, Serialize, serde::Deserialize, Debug, PartialEq)]
    struct Counter {
        n: u32,
    }
    impl SessionSlot for Counter {
        const KEY: &'static str = "counter";
    }

    #[test]
    fn slots_persist_through_save_and_load() {
        let s = SessionState::new("a", PathBuf::from("/tmp"), vec![]);
        s.with_slot::<Counter, _>(|c| c.n += 2);
        s.set_cwd(PathBuf::from("/tmp/sub"));
        let saved = s.save();

        let t = SessionState::new("a", PathBuf::from("/"), vec![]);
        t.load(saved.clone()).unwrap();
        assert_eq!(t.cwd(), PathBuf::from("/tmp/sub"));
        assert_eq!(t.with_slot::<Counter, _>(|c| c.n), 2);
        // A slot nobody asked for survives a save unchanged.
        let u = SessionState::new("a", PathBuf::from("/"), vec![]);
        u.load(saved).unwrap();
        assert_eq!(u.save()["slots"]["counter"]["n"], 2);
    }

    #[test]
    fn undecodable_saved_slot_falls_back_to_default() {
        let s = SessionState::new("a", PathBuf::from("/"), vec![]);
        s.load(serde_json::json!({"cwd": "/", "slots": {"counter": "garbage"}})).unwrap();
        assert_eq!(s.with_slot::<Counter, _>(|c| c.n), 0);
    }

    #[derive(Default, Serialize, serde::Deserialize, Debug, PartialEq)]
    struct Shared {
        n: u32,
    }
    impl SessionSlot for Shared {
        const KEY: &'static str = "shared";
        const SHARED: bool = true;
    }

    #[test]
    fn only_shared_slots_travel_and_a_slot_in_use_is_changed_in_place() {
        let a = SessionState::new("a", PathBuf::from("/"), vec![]);
        a.with_slot::<Counter, _>(|c| c.n = 1);
        a.with_slot::<Shared, _>(|c| c.n = 7);
        let sent = a.shared_slots();
        assert_eq!(sent.keys().collect::<Vec<_>>(), ["shared"]);

        let b = SessionState::new("a", PathBuf::from("/"), vec![]);
        let held = b.slot::<Shared>();
        b.slot::<Counter>();
        b.adopt_shared("shared", sent["shared"].clone());
        // A slot that is not shared here is never taken from another replica.
        b.adopt_shared("counter", serde_json::json!({"n": 99}));
        assert_eq!(held.lock().unwrap().n, 7);
        assert_eq!(b.with_slot::<Counter, _>(|c| c.n), 0);
        // Not yet in use: decoded when first asked for, and sent on as it came.
        let c = SessionState::new("a", PathBuf::from("/"), vec![]);
        c.adopt_shared("shared", serde_json::json!({"n": 3}));
        c.adopt_shared("counter", serde_json::json!({"n": 99}));
        assert_eq!(c.shared_slots()["shared"]["n"], 3);
        assert_eq!(c.with_slot::<Shared, _>(|s| s.n), 3);
        assert_eq!(c.with_slot::<Counter, _>(|s| s.n), 0);
    }
}
