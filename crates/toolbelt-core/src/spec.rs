//! A tool's manifest: everything the registry, the exports and the policy know about it.

use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

/// The family a tool belongs to; `toolbelt tools --category` filters on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    /// Reading and changing files.
    Files,
    /// Finding files and text.
    Search,
    /// Running commands.
    Shell,
    /// Fetching from and searching the web.
    Web,
    /// Code intelligence (symbols, LSP).
    Code,
    /// Planning and bookkeeping for the agent (todo lists, plan mode).
    Planning,
    /// Talking to the user or to other agents.
    Agent,
    /// Tools brought in from an upstream MCP server.
    Mcp,
    /// Anything else.
    Other,
}

impl Category {
    /// Every category, in display order.
    pub const ALL: [Category; 9] = [
        Category::Files,
        Category::Search,
        Category::Shell,
        Category::Web,
        Category::Code,
        Category::Planning,
        Category::Agent,
        Category::Mcp,
        Category::Other,
    ];

    /// The lowercase name used in manifests and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Category::Files => "files",
            Category::Search => "search",
            Category::Shell => "shell",
            Category::Web => "web",
            Category::Code => "code",
            Category::Planning => "planning",
            Category::Agent => "agent",
            Category::Mcp => "mcp",
            Category::Other => "other",
        }
    }

    /// Parses a category name as printed by [`Category::as_str`].
    pub fn parse(name: &str) -> Option<Category> {
        Category::ALL.into_iter().find(|c| c.as_str().eq_ignore_ascii_case(name))
    }
}

/// MCP-style behaviour hints. They describe the tool, they do not authorize anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Annotations {
    /// The tool does not change its environment.
    pub read_only: bool,
    /// The tool may destroy or overwrite data (meaningful when not read-only).
    pub destructive: bool,
    /// Calling it twice with the same input has no further effect.
    pub idempotent: bool,
    /// The tool talks to an open world (the web, external services).
    pub open_world: bool,
}

/// The coarse permission class the policy starts from before looking at rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PermissionClass {
    /// Only reads (allowed inside the workspace by default).
    Read,
    /// Changes files or state (asks by default).
    Write,
    /// Executes commands or reaches outside the machine (asks by default).
    External,
}

/// How far a call's effects reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SideEffects {
    /// No effect beyond the result.
    None,
    /// Changes state held by the session only.
    LocalState,
    /// Changes files.
    Files,
    /// Reaches the network.
    Network,
}

/// Whether a tool's definition is sent to the model up front or only when it asks for it
/// (`ToolSearch`). A deferred tool is listed by name only until a session loads it; it can
/// be called either way (its input is validated like any other's).
///
/// Why three states: built-in tools know whether they are rarely needed ([`Defer::Deferred`]),
/// while upstream MCP tools are deferred as a group only when their definitions together would
/// crowd the model's context ([`Defer::Auto`], judged by the registry's threshold), unless
/// their server marks one always-load ([`Defer::Load`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Defer {
    /// Always sent to the model.
    #[default]
    Load,
    /// Sent only once loaded.
    Deferred,
    /// Deferred when the registry's automatic threshold is passed (upstream MCP tools).
    Auto,
}

impl Defer {
    fn is_load(&self) -> bool {
        *self == Defer::Load
    }
}

/// The manifest of one tool.
///
/// Built with [`ToolSpec::new`] and the chained setters; the input schema is filled in by
/// [`crate::erase`] from the tool's input type (or given directly by tools from elsewhere).
#[derive(Debug, Clone, Serialize)]
pub struct ToolSpec {
    /// The canonical name the model calls (`Read`, `Bash`, `mcp__github__search`).
    pub name: String,
    /// A human title (MCP `annotations.title`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The model-facing description.
    pub description: String,
    /// Other names the tool answers to (`read_file`, `file_read`).
    pub aliases: Vec<String>,
    /// Parameter spellings accepted in place of the canonical ones, as (alias, canonical).
    pub param_aliases: Vec<(String, String)>,
    /// The tool's family.
    pub category: Category,
    /// Free-form tags for filtering (`toolbelt tools --tag`).
    pub tags: Vec<String>,
    /// Behaviour hints.
    pub annotations: Annotations,
    /// The permission class.
    pub permission: PermissionClass,
    /// How far effects reach.
    pub side_effects: SideEffects,
    /// Whether every call should be confirmed by a person whatever the rules say.
    pub needs_confirmation: bool,
    /// Whether the tool streams output while it runs.
    pub streams: bool,
    /// Whether the command lines it runs are bash that `Bash` could run as well (`Monitor`
    /// runs one in the background): rules written for `Bash` then govern them too, so a
    /// `Bash(curl *)` deny cannot be stepped around through it.
    #[serde(skip)]
    pub bash_rules: bool,
    /// Whether the addresses it contacts are judged as `WebFetch`'s are: a
    /// `WebFetch(domain:…)` rule then allows, asks about or denies its calls by their host,
    /// so a deny written for fetches cannot be stepped around through it (an HTTP tool from
    /// the settings).
    #[serde(skip)]
    pub fetch_rules: bool,
    /// The input field a rule's value is matched against (`Message(ops)` names the channel
    /// `ops`): without one, a value rule matches any top-level string of the input, the text
    /// of a message included.
    #[serde(skip)]
    pub rule_field: Option<&'static str>,
    /// Words that help find this tool when it is deferred (not sent to the model up front).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub search_hint: Option<String>,
    /// Whether the definition is sent up front ([`Defer`]).
    #[serde(skip_serializing_if = "Defer::is_load")]
    pub defer: Defer,
    /// How long a call may run when neither the input nor the config says otherwise.
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "ser_duration_ms")]
    pub default_timeout: Option<Duration>,
    /// The setting that gives this tool's own time limit ([`crate::Tool::timeout`]), in words
    /// as the model reads them: `` `lint.timeout` ``. Named when a call runs out of it.
    #[serde(skip)]
    pub time_limit_setting: Option<String>,
    /// JSON Schema (draft 2020-12) of the input.
    pub input_schema: Value,
    /// JSON Schema (draft 2020-12) of the structured result: always there for a typed tool,
    /// present for a tool from elsewhere when it declares one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
}

fn ser_duration_ms<S: serde::Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
    match d {
        Some(d) => s.serialize_u128(d.as_millis()),
        None => s.serialize_none(),
    }
}

impl ToolSpec {
    /// A spec with the given name and description and conservative defaults: category
    /// `other`, write permission, file side effects, no aliases, an empty object input.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            title: None,
            description: description.into(),
            aliases: Vec::new(),
            param_aliases: Vec::new(),
            category: Category::Other,
            tags: Vec::new(),
            annotations: Annotations::default(),
            permission: PermissionClass::Write,
            side_effects: SideEffects::Files,
            needs_confirmation: false,
            streams: false,
            bash_rules: false,
            fetch_rules: false,
            rule_field: None,
            search_hint: None,
            defer: Defer::Load,
            default_timeout: None,
            time_limit_setting: None,
            input_schema: serde_json::json!({"type": "object"}),
            output_schema: None,
        }
    }

    /// Sets the human title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Adds names the tool answers to.
    pub fn aliases<I, S>(mut self, aliases: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.aliases.extend(aliases.into_iter().map(Into::into));
        self
    }

    /// Accepts `alias` as a spelling of the parameter `canonical` (`path` for `file_path`).
    pub fn param_alias(mut self, alias: impl Into<String>, canonical: impl Into<String>) -> Self {
        self.param_aliases.push((alias.into(), canonical.into()));
        self
    }

    /// Sets the category.
    pub fn category(mut self, category: Category) -> Self {
        self.category = category;
        self
    }

    /// Adds tags.
    pub fn tags<I, S>(mut self, tags: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.tags.extend(tags.into_iter().map(Into::into));
        self
    }

    /// Sets the behaviour hints.
    pub fn annotations(mut self, annotations: Annotations) -> Self {
        self.annotations = annotations;
        self
    }

    /// Marks the tool read-only: read permission, no side effects, read-only and idempotent hints.
    pub fn read_only(mut self) -> Self {
        self.permission = PermissionClass::Read;
        self.side_effects = SideEffects::None;
        self.annotations.read_only = true;
        self.annotations.destructive = false;
        self.annotations.idempotent = true;
        self
    }

    /// Sets the permission class.
    pub fn permission(mut self, class: PermissionClass) -> Self {
        self.permission = class;
        self
    }

    /// Sets the side-effect scope.
    pub fn side_effects(mut self, scope: SideEffects) -> Self {
        self.side_effects = scope;
        self
    }

    /// Requires a person to confirm every call.
    pub fn needs_confirmation(mut self) -> Self {
        self.needs_confirmation = true;
        self
    }

    /// Declares that the tool streams output while it runs.
    pub fn streams(mut self) -> Self {
        self.streams = true;
        self
    }

    /// Declares that its command lines are bash, governed by the rules written for `Bash`
    /// ([`ToolSpec::bash_rules`]).
    pub fn bash_rules(mut self) -> Self {
        self.bash_rules = true;
        self
    }

    /// Declares that `WebFetch(domain:…)` rules judge the hosts it contacts
    /// ([`ToolSpec::fetch_rules`]).
    pub fn fetch_rules(mut self) -> Self {
        self.fetch_rules = true;
        self
    }

    /// Names the input field value rules are matched against ([`ToolSpec::rule_field`]).
    pub fn rule_field(mut self, field: &'static str) -> Self {
        self.rule_field = Some(field);
        self
    }

    /// Sets the search hint used to find the tool when deferred.
    pub fn search_hint(mut self, hint: impl Into<String>) -> Self {
        self.search_hint = Some(hint.into());
        self
    }

    /// Defers the tool: listed by name only until a session loads it with `ToolSearch`.
    pub fn deferred(mut self) -> Self {
        self.defer = Defer::Deferred;
        self
    }

    /// Sets how the tool is deferred ([`Defer`]).
    pub fn defer(mut self, defer: Defer) -> Self {
        self.defer = defer;
        self
    }

    /// Sets the default timeout.
    pub fn default_timeout(mut self, timeout: Duration) -> Self {
        self.default_timeout = Some(timeout);
        self
    }

    /// Names the setting that gives this tool's own time limit ([`ToolSpec::time_limit_setting`]).
    pub fn time_limit_setting(mut self, setting: impl Into<String>) -> Self {
        self.time_limit_setting = Some(setting.into());
        self
    }

    /// Sets the input schema directly (tools from elsewhere; typed tools get it derived).
    pub fn input_schema(mut self, schema: Value) -> Self {
        self.input_schema = schema;
        self
    }

    /// Sets the output schema directly (tools from elsewhere; a typed tool's is derived from
    /// its [`crate::Tool::Output`] by [`crate::erase`]).
    pub fn output_schema(mut self, schema: Value) -> Self {
        self.output_schema = Some(schema);
        self
    }

    /// Whether `name` is this tool's name or one of its aliases.
    pub fn answers_to(&self, name: &str) -> bool {
        self.name == name || self.aliases.iter().any(|a| a == name)
    }

    /// Whether the tool carries the tag (case-insensitive).
    pub fn has_tag(&self, tag: &str) -> bool {
        self.tags.iter().any(|t| t.eq_ignore_ascii_case(tag))
    }
}
