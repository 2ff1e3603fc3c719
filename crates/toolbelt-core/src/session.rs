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
}

trait ErasedSlot: Send + Sync {
    fn to_json(&self) -> Option<Value>;
    fn as_any(self: Arc<Self>) -> Arc<dyn Any + Send + Sync>;
}

impl<T: SessionSlot> ErasedSlot for Mutex<T> {
    fn to_json(&self) -> Option<Value> {
        serde_json::to_value(&*lock(self)).ok()
    }

    fn as_any(self: Arc<Self>) -> Arc<dyn Any + Send + Sync> {
        self
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

enum Slot {
    /// Loaded from disk, not yet asked for by type.
    Raw(Value),
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
            Some(Slot::Raw(v)) => serde_json::from_value(v).unwrap_or_default(),
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
                Slot::Raw(v) => Some(v.clone()),
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
            slots.insert(key, Slot::Raw(value));
        }
        Ok(())
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
}
