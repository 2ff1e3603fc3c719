//! The set of tools a runtime offers, looked up by name or alias.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, OnceLock, PoisonError, RwLock};

use serde_json::Value;

use crate::error::ToolError;
use crate::export::ExportFormat;
use crate::spec::{Defer, ToolSpec};
use crate::tool::{DynTool, Prepared};
use crate::validate::{InputValidator, SchemaError};

/// Why a tool could not be registered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    /// The name or an alias is already taken.
    #[error("cannot register `{tool}`: the name `{name}` is already used by `{owner}`")]
    Duplicate {
        /// The tool being registered.
        tool: String,
        /// The clashing name or alias.
        name: String,
        /// The registered tool that owns it.
        owner: String,
    },
    /// The input schema does not compile.
    #[error("cannot register `{tool}`: its input schema is invalid: {reason}")]
    InvalidSchema {
        /// The tool being registered.
        tool: String,
        /// What the schema compiler said.
        reason: String,
    },
}

/// A tool's input validator: compiled when the tool was registered, or at its first use
/// (shared by every clone of the entry).
type Validator = Arc<OnceLock<Result<InputValidator, SchemaError>>>;

/// One registered tool with its validator. Cheap to clone.
#[derive(Clone)]
pub struct ToolEntry {
    tool: Arc<dyn DynTool>,
    validator: Validator,
    enabled: bool,
    /// Why it is disabled, when it was registered so ([`Registry::register_disabled`]).
    disabled_because: Option<Arc<str>>,
    /// About how many characters its definition takes ([`definition_size`]), for the
    /// automatic deferral of [`Defer::Auto`] tools; counted once, when first needed.
    size: Arc<OnceLock<usize>>,
}

impl std::fmt::Debug for ToolEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolEntry").field("name", &self.spec().name).field("enabled", &self.enabled).finish()
    }
}

impl ToolEntry {
    /// The tool's manifest.
    pub fn spec(&self) -> &ToolSpec {
        self.tool.spec()
    }

    /// The erased tool.
    pub fn tool(&self) -> &Arc<dyn DynTool> {
        &self.tool
    }

    /// Whether the tool is enabled.
    pub fn is_enabled(&self) -> bool {
        self.enabled
    }

    /// Why the tool is disabled, when it was registered so ([`Registry::register_disabled`]):
    /// what this machine lacks, or the setting that leaves it out.
    pub fn disabled_reason(&self) -> Option<&str> {
        if self.enabled { None } else { self.disabled_because.as_deref() }
    }

    /// Validates a raw input against the compiled schema and decodes it. A schema
    /// registered with [`Registry::register_lazy`] is compiled now if it was not yet; one
    /// that does not compile fails the call as an internal fault.
    pub fn prepare(&self, input: Value) -> Result<Prepared, ToolError> {
        let spec = self.spec();
        let validator = self
            .validator
            .get_or_init(|| InputValidator::compile(&spec.name, &spec.input_schema, &spec.param_aliases))
            .as_ref()
            .map_err(|e| ToolError::internal(format!("the input schema of `{}` is invalid: {e}", spec.name)))?;
        let normalized = validator.check(input)?;
        self.tool.prepare(normalized)
    }
}

/// Says whether a tool joining the registry is hidden (registered disabled).
type Hide = Arc<dyn Fn(&ToolSpec) -> Option<String> + Send + Sync>;

#[derive(Default)]
struct Inner {
    /// Canonical name → entry; a BTreeMap so every listing is in stable name order.
    tools: BTreeMap<String, ToolEntry>,
    /// Every name and alias → canonical name.
    names: HashMap<String, String>,
    /// Hides tools as they join (a policy's bare deny rules).
    hide: Option<Hide>,
    /// Past how many characters of definitions the [`Defer::Auto`] tools are deferred
    /// (`None`: never; `Some(0)`: always).
    defer_over: Option<usize>,
}

impl Inner {
    /// The enabled tools the model is shown by name only (canonical names, in order).
    fn deferred(&self) -> BTreeSet<String> {
        let enabled = || self.tools.values().filter(|e| e.enabled);
        let auto = self.defer_over.is_some_and(|limit| {
            let mut size = 0usize;
            for entry in enabled().filter(|e| e.tool.names().defer == Defer::Auto) {
                size = size.saturating_add(*entry.size.get_or_init(|| definition_size(entry.spec())));
                if size > limit {
                    return true;
                }
            }
            false
        });
        enabled()
            .map(|e| e.tool.names())
            .filter(|n| n.defer == Defer::Deferred || (auto && n.defer == Defer::Auto))
            .map(|n| n.name.to_string())
            .collect()
    }
}

/// About how many characters a tool's definition takes in the model's context: its name,
/// description and input schema.
fn definition_size(spec: &ToolSpec) -> usize {
    let schema = serde_json::to_string(&spec.input_schema).map_or(0, |s| s.len());
    spec.name.len() + spec.description.len() + schema
}

/// The registry as a service, for the tools that look at other tools (`ToolSearch`). Every
/// runtime offers it.
#[derive(Clone)]
pub struct ToolCatalog(pub Arc<Registry>);

impl std::fmt::Debug for ToolCatalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ToolCatalog")
    }
}

/// The tools a runtime offers. Shared behind an `Arc`; tools may join later (MCP upstreams
/// connecting), so every method takes `&self`, and [`Registry::subscribe`] tells who lists
/// the tools (an MCP server's sessions) that the list changed.
pub struct Registry {
    inner: RwLock<Inner>,
    /// Bumped whenever the set of enabled tools changes.
    generation: tokio::sync::watch::Sender<u64>,
}

impl Default for Registry {
    fn default() -> Self {
        Self { inner: RwLock::default(), generation: tokio::sync::watch::Sender::new(0) }
    }
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.read().tools.keys()).finish()
    }
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Inner> {
        self.inner.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Inner> {
        self.inner.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// Adds a tool. Its name and every alias must be free; its schema is compiled now, and
    /// refused when it does not compile.
    pub fn register(&self, tool: Arc<dyn DynTool>) -> Result<(), RegistryError> {
        let spec = tool.spec();
        let validator = InputValidator::compile(&spec.name, &spec.input_schema, &spec.param_aliases)
            .map_err(|e| RegistryError::InvalidSchema { tool: spec.name.clone(), reason: e.message })?;
        self.insert(tool, Arc::new(OnceLock::from(Ok(validator))), None)
    }

    /// Adds a tool whose schema is known to compile (one derived from its Rust types, as the
    /// built-in tools' are, with a test compiling it): its name and every alias must be
    /// free; its schema is compiled at its first call. A process that registers many tools
    /// and calls one (`toolbelt call`) then compiles one schema, not all of them.
    pub fn register_lazy(&self, tool: Arc<dyn DynTool>) -> Result<(), RegistryError> {
        self.insert(tool, Arc::default(), None)
    }

    /// Adds a tool that is disabled for `reason` (a setting that leaves it out, and where): it
    /// is never listed nor callable, and a call by its name is refused with the reason, not
    /// as an unknown tool. Its name and aliases must be free; its schema is never compiled.
    pub fn register_disabled(&self, tool: Arc<dyn DynTool>, reason: impl Into<String>) -> Result<(), RegistryError> {
        self.insert(tool, Arc::default(), Some(Arc::from(reason.into())))
    }

    fn insert(
        &self,
        tool: Arc<dyn DynTool>,
        validator: Validator,
        disabled_because: Option<Arc<str>>,
    ) -> Result<(), RegistryError> {
        // The names only: a typed tool's schemas are not derived for joining.
        let own = tool.names();
        let mut inner = self.write();
        let mut names: Vec<&str> = std::iter::once(own.name).chain(own.aliases.iter().map(String::as_str)).collect();
        names.dedup();
        for name in &names {
            if let Some(owner) = inner.names.get(*name) {
                return Err(RegistryError::Duplicate {
                    tool: own.name.to_string(),
                    name: (*name).to_string(),
                    owner: owner.clone(),
                });
            }
        }
        for name in names {
            inner.names.insert(name.to_string(), own.name.to_string());
        }
        let hidden = match &disabled_because {
            Some(_) => None,
            None => inner.hide.as_ref().and_then(|hide| hide(tool.spec())),
        };
        let enabled = disabled_because.is_none() && hidden.is_none();
        let disabled_because = disabled_because.or_else(|| hidden.filter(|h| !h.is_empty()).map(Arc::from));
        let entry = ToolEntry { validator, enabled, disabled_because, size: Arc::default(), tool: Arc::clone(&tool) };
        inner.tools.insert(own.name.to_string(), entry);
        drop(inner);
        if enabled {
            self.changed();
        }
        Ok(())
    }

    /// Every tool registered from now on for which `hide` gives a reason joins disabled, so
    /// it is never listed, not even for a moment (MCP upstream tools a deny rule or a
    /// `tools.disabled` setting names, joining when their server connects); the reason is
    /// what [`ToolEntry::disabled_reason`] says (none when empty). Tools already registered
    /// are left as they are.
    pub fn hide_joining(&self, hide: impl Fn(&ToolSpec) -> Option<String> + Send + Sync + 'static) {
        self.write().hide = Some(Arc::new(hide));
    }

    /// Removes a tool (by its canonical name) with its aliases. Returns false when no tool
    /// has that name.
    pub fn unregister(&self, name: &str) -> bool {
        let mut inner = self.write();
        let Some(entry) = inner.tools.remove(name) else { return false };
        inner.names.retain(|_, canonical| canonical != name);
        let was_listed = entry.enabled;
        drop(inner);
        if was_listed {
            self.changed();
        }
        true
    }

    /// Disables a tool by name or alias for `reason` (a setting that leaves it out, and
    /// where): no longer listed nor callable, a call by its name answered with the reason.
    /// Returns false when no tool answers.
    pub fn disable(&self, name: &str, reason: impl Into<String>) -> bool {
        let mut inner = self.write();
        let Some(canonical) = inner.names.get(name).cloned() else { return false };
        let Some(entry) = inner.tools.get_mut(&canonical) else { return false };
        let changed = entry.enabled;
        entry.enabled = false;
        entry.disabled_because = Some(Arc::from(reason.into()));
        drop(inner);
        if changed {
            self.changed();
        }
        true
    }

    /// Enables or disables a tool by name or alias. Returns false when no tool answers.
    pub fn set_enabled(&self, name: &str, enabled: bool) -> bool {
        let mut inner = self.write();
        let Some(canonical) = inner.names.get(name).cloned() else { return false };
        let Some(entry) = inner.tools.get_mut(&canonical) else { return false };
        let changed = entry.enabled != enabled;
        entry.enabled = enabled;
        if enabled {
            entry.disabled_because = None;
        }
        drop(inner);
        if changed {
            self.changed();
        }
        true
    }

    /// A receiver woken whenever the set of enabled tools changes (a tool registered,
    /// removed, enabled or disabled); its value is a counter of such changes. Changes that
    /// come in a burst may wake it once.
    pub fn subscribe(&self) -> tokio::sync::watch::Receiver<u64> {
        self.generation.subscribe()
    }

    fn changed(&self) {
        self.generation.send_modify(|g| *g = g.wrapping_add(1));
    }

    /// A counter bumped whenever the set of enabled tools (or which are deferred) changes:
    /// what a cache of the tools' definitions is keyed by.
    pub fn generation(&self) -> u64 {
        *self.generation.borrow()
    }

    /// Sets past how many characters of definitions ([`definition_size`], summed) the tools
    /// marked [`Defer::Auto`] (upstream MCP tools) are deferred as a group: `None` never
    /// defers them, `Some(0)` always does.
    pub fn set_defer_threshold(&self, chars: Option<usize>) {
        let mut inner = self.write();
        if inner.defer_over == chars {
            return;
        }
        inner.defer_over = chars;
        drop(inner);
        self.changed();
    }

    /// The enabled tools that are deferred now: listed by name only until a session loads
    /// them (canonical names, in name order).
    pub fn deferred(&self) -> BTreeSet<String> {
        self.read().deferred()
    }

    /// The enabled tools whose definitions a session that loaded `loaded` is shown (every
    /// tool not deferred, and the deferred ones it loaded), in name order; and the names of
    /// the deferred tools it has not loaded.
    pub fn listed(&self, loaded: &BTreeSet<String>) -> (Vec<ToolEntry>, Vec<String>) {
        let inner = self.read();
        let deferred = inner.deferred();
        let mut shown = Vec::new();
        let mut held = Vec::new();
        for (name, entry) in inner.tools.iter().filter(|(_, e)| e.enabled) {
            if deferred.contains(name) && !loaded.contains(name) {
                held.push(name.clone());
            } else {
                shown.push(entry.clone());
            }
        }
        (shown, held)
    }

    /// Looks a tool up by name or alias (exact first, then ignoring case when that is
    /// unambiguous). Unknown names get the closest registered names as suggestions; a
    /// disabled tool is an error too.
    pub fn lookup(&self, name: &str) -> Result<ToolEntry, ToolError> {
        let inner = self.read();
        let canonical = match inner.names.get(name) {
            Some(c) => Some(c),
            None => {
                let mut hits = inner.names.iter().filter(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, c)| c);
                match (hits.next(), hits.next()) {
                    (Some(c), None) => Some(c),
                    _ => None,
                }
            }
        };
        let entry = canonical.and_then(|c| inner.tools.get(c));
        match entry {
            Some(e) if e.enabled => Ok(e.clone()),
            Some(e) => Err(ToolError::Disabled {
                name: e.spec().name.clone(),
                reason: e.disabled_because.as_deref().map(str::to_string),
            }),
            None => Err(ToolError::UnknownTool { name: name.to_string(), suggestions: suggest(&inner, name) }),
        }
    }

    /// The (at most three) enabled tools whose names or aliases are closest to `name`, best
    /// first, among those whose canonical name `keep` accepts: what an error about a name
    /// that no tool of a narrower set has suggests instead.
    pub fn closest(&self, name: &str, keep: impl Fn(&str) -> bool) -> Vec<String> {
        closest_in(&self.read(), name, &keep)
    }

    /// The tool registered under this canonical name, enabled or not (to say why a disabled
    /// tool is refused).
    pub fn entry(&self, name: &str) -> Option<ToolEntry> {
        self.read().tools.get(name).cloned()
    }

    /// Every tool, enabled or not, in name order.
    pub fn entries(&self) -> Vec<ToolEntry> {
        self.read().tools.values().cloned().collect()
    }

    /// The manifests of the enabled tools, in name order.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.read().tools.values().filter(|e| e.enabled).map(|e| e.spec().clone()).collect()
    }

    /// How many tools are registered.
    pub fn len(&self) -> usize {
        self.read().tools.len()
    }

    /// Whether no tool is registered.
    pub fn is_empty(&self) -> bool {
        self.read().tools.is_empty()
    }

    /// Every enabled tool's schema in `format`, in name order.
    pub fn export(&self, format: ExportFormat) -> Vec<Value> {
        self.read().tools.values().filter(|e| e.enabled).map(|e| format.render(e.spec())).collect()
    }
}

/// Up to three registered names closest to `name`, canonical names only, best first.
fn suggest(inner: &Inner, name: &str) -> Vec<String> {
    closest_in(inner, name, &|_| true)
}

/// The (at most three) enabled tools whose names or aliases are closest to `name`, best
/// first, among those whose canonical name `keep` accepts.
fn closest_in(inner: &Inner, name: &str, keep: &dyn Fn(&str) -> bool) -> Vec<String> {
    let wanted = name.to_lowercase();
    let mut scored: Vec<(f64, &String)> = inner
        .names
        .iter()
        .filter(|(_, canonical)| inner.tools.get(*canonical).is_some_and(|e| e.enabled) && keep(canonical))
        .map(|(n, canonical)| {
            let n = n.to_lowercase();
            let mut score = strsim::jaro_winkler(&n, &wanted);
            if n.contains(&wanted) || wanted.contains(&n) {
                score = score.max(0.85);
            }
            (score, canonical)
        })
        .filter(|(score, _)| *score >= 0.75)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    let mut out: Vec<String> = Vec::new();
    for (_, canonical) in scored {
        if !out.contains(canonical) {
            out.push(canonical.clone());
        }
        if out.len() == 3 {
            break;
        }
    }
    out
}
