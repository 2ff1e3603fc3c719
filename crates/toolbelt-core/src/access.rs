//! What a call touches, declared by the tool before it runs.

use std::path::PathBuf;

/// Entries protected wherever they appear: the files that decide what runs next (git's
/// internals, toolbelt's and the agent host's settings, MCP servers, editor tasks). No tool
/// writes them without an explicit approval, and the shell sandbox keeps them read-only. The
/// permission policy and the sandbox both read this one list.
pub const PROTECTED_NAMES: &[&str] = &[".git", ".toolbelt", ".claude", ".mcp.json", ".vscode", ".idea"];

/// Whether a call may run beside other calls.
///
/// Decided per input: `Read` is always shared, a read-only `Bash` command is shared, a write
/// is exclusive. The batch scheduler runs consecutive shared calls together and every
/// exclusive call alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Concurrency {
    /// May run concurrently with other shared calls.
    Shared,
    /// Must run with no other call in flight.
    Exclusive,
}

/// One thing a call touches. The permission engine matches rules against these.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "kind", content = "target", rename_all = "snake_case")]
pub enum Touch {
    /// Reads this path (file or directory).
    Read(PathBuf),
    /// Creates, modifies or deletes this path.
    Write(PathBuf),
    /// Runs this command line.
    Execute(String),
    /// Talks to this URL (or host).
    Network(String),
    /// Changes session-local state only (a todo list, the cwd).
    State(String),
}

impl std::fmt::Display for Touch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Touch::Read(path) => write!(f, "reading {}", path.display()),
            Touch::Write(path) => write!(f, "writing {}", path.display()),
            Touch::Execute(command) => write!(f, "running `{command}`"),
            Touch::Network(url) => write!(f, "contacting {url}"),
            Touch::State(what) => write!(f, "changing {what}"),
        }
    }
}

/// The declaration a tool makes for one call: everything it touches, and its concurrency.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Access {
    /// What the call touches, in the order the tool listed it.
    pub touches: Vec<Touch>,
    /// Whether the call may run beside others.
    pub concurrency: Concurrency,
    /// Set when this call needs a person's approval whatever the rules allow, with the
    /// reason (e.g. a command that cannot be sandboxed here).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approval: Option<String>,
    /// What the call reaches beyond toolbelt, in words, when no touch can say it: an upstream
    /// MCP tool talks to its server ("is a tool of the MCP server `fs` (`npx`, started by
    /// toolbelt)…"). The policy gives it as the reason a call of an external tool asks,
    /// instead of a generic one; it decides nothing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reaches: Option<String>,
    /// Why the call needs this access, in words for a person asked about it, put before the
    /// policy's own reason when the policy asks ("the command made `.git` where there was
    /// none …"). It decides nothing: a rule that allows the access still allows it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// Set when the call's command lines may not do what their text says (a session's
    /// carried shell environment redefines commands: functions, aliases, `PATH`), with why:
    /// none of them then counts as read-only, and each is judged as a command that changes
    /// things. Rules still decide.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unproven: Option<String>,
    /// Set when what the call runs cannot be read from its text at all (keys typed into a
    /// program, which decides what they do), with why: on top of [`Access::unproven`], the
    /// rules about commands cannot be checked, so where a deny or ask rule about commands
    /// exists the call asks instead of being matched.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub opaque: Option<String>,
}

impl Access {
    /// A call that may run beside other shared calls and touches nothing yet.
    pub fn shared() -> Self {
        Self {
            touches: Vec::new(),
            concurrency: Concurrency::Shared,
            approval: None,
            reaches: None,
            context: None,
            unproven: None,
            opaque: None,
        }
    }

    /// A call that must run alone and touches nothing yet.
    pub fn exclusive() -> Self {
        Self { concurrency: Concurrency::Exclusive, ..Self::shared() }
    }

    /// Adds a path the call reads.
    pub fn reads(mut self, path: impl Into<PathBuf>) -> Self {
        self.touches.push(Touch::Read(path.into()));
        self
    }

    /// Adds a path the call writes.
    pub fn writes(mut self, path: impl Into<PathBuf>) -> Self {
        self.touches.push(Touch::Write(path.into()));
        self
    }

    /// Adds a command line the call executes.
    pub fn executes(mut self, command: impl Into<String>) -> Self {
        self.touches.push(Touch::Execute(command.into()));
        self
    }

    /// Adds a URL the call contacts.
    pub fn contacts(mut self, url: impl Into<String>) -> Self {
        self.touches.push(Touch::Network(url.into()));
        self
    }

    /// Adds a piece of session state the call changes.
    pub fn changes_state(mut self, what: impl Into<String>) -> Self {
        self.touches.push(Touch::State(what.into()));
        self
    }

    /// Asks for a person's approval of this call, for `reason`, even where the rules allow it.
    /// A second reason is added to the first (`first; second`).
    pub fn needs_approval(mut self, reason: impl Into<String>) -> Self {
        let reason = reason.into();
        self.approval = Some(match self.approval.take() {
            Some(first) => format!("{first}; {reason}"),
            None => reason,
        });
        self
    }

    /// Says what the call reaches beyond toolbelt, as a clause after the tool's name
    /// ([`Access::reaches`]).
    pub fn reaching(mut self, what: impl Into<String>) -> Self {
        self.reaches = Some(what.into());
        self
    }

    /// Says why the call needs this access, for a person asked about it
    /// ([`Access::context`]).
    pub fn because(mut self, why: impl Into<String>) -> Self {
        self.context = Some(why.into());
        self
    }

    /// Says the call's command lines may not do what their text says, and why
    /// ([`Access::unproven`]); the call then runs alone.
    pub fn unproven(mut self, why: impl Into<String>) -> Self {
        self.unproven = Some(why.into());
        self.concurrency = Concurrency::Exclusive;
        self
    }

    /// Says what the call runs cannot be read from its text, and why ([`Access::opaque`]):
    /// unproven too.
    pub fn opaque(self, why: impl Into<String>) -> Self {
        let why = why.into();
        let mut access = self.unproven(why.clone());
        access.opaque = Some(why);
        access
    }

    /// Whether the call may run beside others.
    pub fn is_shared(&self) -> bool {
        self.concurrency == Concurrency::Shared
    }
}
