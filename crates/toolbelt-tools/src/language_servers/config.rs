//! Which language servers exist: those configured (settings' `[lsp.servers.NAME]`, Claude
//! Code plugins' `.lsp.json`), then the defaults, used when their program is on `PATH`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

/// One language server: how to start it and which files it serves.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerSpec {
    /// Its name (`pyright`, `clangd`, a settings table's name).
    pub name: String,
    /// The program (a name looked up on `PATH`, or a path).
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Its arguments when it runs without the sandbox, when they differ: an index it keeps
    /// on disk would otherwise be written into the project.
    pub unconfined_args: Option<Vec<String>>,
    /// Variables set in its environment.
    pub env: BTreeMap<String, String>,
    /// File extensions it serves (lower case, no dot) and the language id of each.
    pub languages: BTreeMap<String, String>,
    /// `initializationOptions` sent with `initialize`.
    pub initialization_options: Option<Value>,
    /// What it gets for `workspace/configuration` and `workspace/didChangeConfiguration`.
    pub settings: Option<Value>,
    /// Files whose folder is the workspace root for a file below it (`Cargo.toml`); the
    /// nearest folder holding one wins, else the session's root.
    pub root_markers: Vec<String>,
    /// How to install it, for the error that says no server is there.
    pub install_hint: Option<String>,
    /// How long `initialize` may take.
    pub startup_timeout: Duration,
    /// Restarts after crashes before giving up for the rest of the session.
    pub max_restarts: u32,
    /// Where it was defined (`settings`, `plugin …/.lsp.json`, `default`).
    pub origin: String,
}

impl ServerSpec {
    /// A spec with the usual timeouts and no extras.
    pub fn new(name: &str, command: &str, args: &[&str], languages: &[(&str, &str)]) -> Self {
        Self {
            name: name.to_owned(),
            command: command.to_owned(),
            args: args.iter().map(|a| (*a).to_owned()).collect(),
            unconfined_args: None,
            env: BTreeMap::new(),
            languages: languages.iter().map(|(e, l)| ((*e).to_owned(), (*l).to_owned())).collect(),
            initialization_options: None,
            settings: None,
            root_markers: Vec::new(),
            install_hint: None,
            startup_timeout: Duration::from_secs(60),
            max_restarts: 5,
            origin: "default".to_owned(),
        }
    }

    fn markers(mut self, markers: &[&str]) -> Self {
        self.root_markers = markers.iter().map(|m| (*m).to_owned()).collect();
        self
    }

    fn unconfined(mut self, args: &[&str]) -> Self {
        self.unconfined_args = Some(args.iter().map(|a| (*a).to_owned()).collect());
        self
    }

    /// The arguments it starts with, `confined` or not.
    pub fn args_when(&self, confined: bool) -> &[String] {
        match &self.unconfined_args {
            Some(args) if !confined => args,
            _ => &self.args,
        }
    }

    fn hint(mut self, hint: &str) -> Self {
        self.install_hint = Some(hint.to_owned());
        self
    }

    /// The language id of `path` for this server, if it serves it.
    pub fn language_of(&self, path: &Path) -> Option<&str> {
        self.languages.get(&extension(path)?).map(String::as_str)
    }

    /// The program to start: `command` when it is a path, else where `PATH` has it.
    pub fn program(&self) -> Option<PathBuf> {
        find_program(&self.command, std::env::var_os("PATH").as_deref())
    }
}

/// The lower-case extension of `path`, without the dot.
pub fn extension(path: &Path) -> Option<String> {
    path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase)
}

pub use toolbelt_core::process::find_program;

/// The servers used when their program is on `PATH`, in order of preference per language.
pub fn defaults() -> Vec<ServerSpec> {
    const TS: &[(&str, &str)] = &[
        ("ts", "typescript"),
        ("mts", "typescript"),
        ("cts", "typescript"),
        ("tsx", "typescriptreact"),
        ("js", "javascript"),
        ("mjs", "javascript"),
        ("cjs", "javascript"),
        ("jsx", "javascriptreact"),
    ];
    const C: &[(&str, &str)] = &[
        ("c", "c"),
        ("h", "c"),
        ("cc", "cpp"),
        ("cpp", "cpp"),
        ("cxx", "cpp"),
        ("c++", "cpp"),
        ("hh", "cpp"),
        ("hpp", "cpp"),
        ("hxx", "cpp"),
        ("m", "objective-c"),
        ("mm", "objective-cpp"),
    ];
    let python: &[(&str, &str)] = &[("py", "python"), ("pyi", "python")];
    let python_markers =
        ["pyproject.toml", "pyrightconfig.json", "setup.py", "setup.cfg", "requirements.txt", "Pipfile"];
    vec![
        ServerSpec::new("rust-analyzer", "rust-analyzer", &[], &[("rs", "rust")])
            .markers(&["Cargo.toml"])
            .hint("rustup component add rust-analyzer"),
        ServerSpec::new("basedpyright", "basedpyright-langserver", &["--stdio"], python)
            .markers(&python_markers)
            .hint("pip install basedpyright"),
        ServerSpec::new("pyright", "pyright-langserver", &["--stdio"], python)
            .markers(&python_markers)
            .hint("npm install -g pyright"),
        ServerSpec::new("typescript-language-server", "typescript-language-server", &["--stdio"], TS)
            .markers(&["tsconfig.json", "jsconfig.json", "package.json"])
            .hint("npm install -g typescript-language-server typescript"),
        ServerSpec::new("gopls", "gopls", &[], &[("go", "go")])
            .markers(&["go.mod", "go.work"])
            .hint("go install golang.org/x/tools/gopls@latest"),
        // Its background index (for references across files) cannot land in the project:
        // language servers run read-only under the sandbox, so it stays in memory; without
        // the sandbox there is no background index.
        ServerSpec::new("clangd", "clangd", &["--background-index"], C)
            .unconfined(&["--background-index=false"])
            .markers(&["compile_commands.json", "compile_flags.txt", ".clangd"])
            .hint("apt install clangd (or your system's package of it)"),
    ]
}

/// Reads a Claude Code plugin's `.lsp.json`: `{NAME: {command, args, extensionToLanguage,
/// env, initializationOptions, settings, startupTimeout, maxRestarts}}`. Each entry that is
/// not usable is returned as a problem, naming it.
pub fn from_lsp_json(value: &Value, origin: &str) -> (Vec<ServerSpec>, Vec<String>) {
    let mut specs = Vec::new();
    let mut problems = Vec::new();
    let Some(table) = value.as_object() else {
        return (specs, vec![format!("{origin}: expected an object of servers by name")]);
    };
    for (name, entry) in table {
        match spec_from_json(name, entry, origin, "extensionToLanguage") {
            Ok(spec) => specs.push(spec),
            Err(why) => problems.push(format!("{origin}: server `{name}`: {why}")),
        }
    }
    (specs, problems)
}

/// A server from a JSON (or TOML-turned-JSON) table: `command` and its extensions are
/// required. `extensions_key` names the extension map (`extensionToLanguage` in `.lsp.json`,
/// `extensions` in settings, where a list of extensions is also accepted).
pub fn spec_from_json(name: &str, entry: &Value, origin: &str, extensions_key: &str) -> Result<ServerSpec, String> {
    let get = |camel: &str, snake: &str| entry.get(camel).or_else(|| entry.get(snake)).filter(|v| !v.is_null());
    let command = entry.get("command").and_then(Value::as_str).filter(|c| !c.trim().is_empty());
    let command = command.ok_or("`command` is missing (the program to start)")?;
    let args = string_list(entry.get("args"), "args")?;
    let mut languages = BTreeMap::new();
    match entry.get(extensions_key).or_else(|| entry.get("extensions")) {
        Some(Value::Object(map)) => {
            for (ext, lang) in map {
                let lang = lang.as_str().ok_or(format!("`{extensions_key}` values must be language ids"))?;
                languages.insert(ext.trim_start_matches('.').to_ascii_lowercase(), lang.to_owned());
            }
        }
        Some(Value::Array(_)) => {
            for ext in string_list(entry.get("extensions"), "extensions")? {
                let ext = ext.trim_start_matches('.').to_ascii_lowercase();
                let lang = language_for_extension(&ext).unwrap_or_else(|| name.to_owned());
                languages.insert(ext, lang);
            }
        }
        _ => return Err(format!("`{extensions_key}` is missing (which file extensions it serves)")),
    }
    if languages.is_empty() {
        return Err(format!("`{extensions_key}` names no extension"));
    }
    let mut env = BTreeMap::new();
    if let Some(vars) = get("env", "env").and_then(Value::as_object) {
        for (k, v) in vars {
            env.insert(k.clone(), v.as_str().map(str::to_owned).unwrap_or_else(|| v.to_string()));
        }
    }
    let seconds = |v: Option<&Value>, default: Duration| {
        v.and_then(Value::as_f64).filter(|s| *s > 0.0).map_or(default, |s| Duration::from_secs_f64(s.min(600.0)))
    };
    let mut spec = ServerSpec::new(name, command, &[], &[]);
    spec.args = args;
    spec.languages = languages;
    spec.env = env;
    spec.initialization_options = get("initializationOptions", "initialization_options").cloned();
    spec.settings = get("settings", "settings").cloned();
    spec.root_markers = string_list(get("rootMarkers", "root_markers"), "root_markers")?;
    // `.lsp.json` gives milliseconds; settings give seconds.
    spec.startup_timeout = match get("startupTimeout", "startup_timeout") {
        Some(ms) if extensions_key == "extensionToLanguage" => {
            seconds(ms.as_f64().map(|ms| Value::from(ms / 1000.0)).as_ref(), spec.startup_timeout)
        }
        other => seconds(other, spec.startup_timeout),
    };
    if let Some(n) = get("maxRestarts", "max_restarts").and_then(Value::as_u64) {
        spec.max_restarts = u32::try_from(n).unwrap_or(u32::MAX);
    }
    spec.origin = origin.to_owned();
    Ok(spec)
}

/// A settings value that must be a list of strings (absent or null: empty), or what is
/// wrong with it, naming `what`.
pub fn string_list(value: Option<&Value>, what: &str) -> Result<Vec<String>, String> {
    match value {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| i.as_str().map(str::to_owned).ok_or_else(|| format!("`{what}` must be a list of strings")))
            .collect(),
        Some(_) => Err(format!("`{what}` must be a list of strings")),
    }
}

/// The usual language id of a file extension (lower case, no dot).
pub fn language_for_extension(ext: &str) -> Option<String> {
    defaults().into_iter().find_map(|s| s.languages.get(ext).cloned())
}

/// Language server settings, as the front end resolved them.
#[derive(Debug, Clone)]
pub struct LspSettings {
    /// Whether language servers are used at all.
    pub enabled: bool,
    /// Configured servers, first wins for an extension.
    pub servers: Vec<ServerSpec>,
    /// Whether the defaults are used (for extensions no configured server serves).
    pub use_defaults: bool,
    /// How long an edit waits for a running server's diagnostics.
    pub diagnostics_wait: Duration,
    /// How long one request may take.
    pub request_timeout: Duration,
    /// Problems found reading the configuration (a bad `.lsp.json` entry), shown in errors.
    pub problems: Vec<String>,
}

impl Default for LspSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            servers: Vec::new(),
            use_defaults: true,
            diagnostics_wait: Duration::from_secs(3),
            request_timeout: Duration::from_secs(30),
            problems: Vec::new(),
        }
    }
}

impl LspSettings {
    /// The servers that could serve `path`, in order: configured ones, then the defaults.
    pub fn candidates(&self, path: &Path) -> Vec<ServerSpec> {
        let defaults = if self.use_defaults { defaults() } else { Vec::new() };
        self.servers.iter().cloned().chain(defaults).filter(|s| s.language_of(path).is_some()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clangd_keeps_no_index_on_disk_without_the_sandbox() {
        let clangd = defaults().into_iter().find(|s| s.name == "clangd").unwrap();
        assert_eq!(clangd.args_when(true), ["--background-index"]);
        assert_eq!(clangd.args_when(false), ["--background-index=false"]);
        // A configured server starts with its own arguments either way.
        let mine = spec_from_json(
            "mine",
            &json!({"command": "clangd", "args": ["-x"], "extensions": ["c"]}),
            "settings",
            "extensions",
        )
        .unwrap();
        assert_eq!((mine.args_when(true), mine.args_when(false)), (&["-x".to_owned()][..], &["-x".to_owned()][..]));
    }
    use serde_json::json;

    #[test]
    fn lsp_json_entries_become_servers_and_bad_ones_are_named() {
        let value = json!({
            "go": {"command": "gopls", "args": ["serve"], "extensionToLanguage": {".go": "go"}, "startupTimeout": 5000},
            "bad": {"args": []},
            "noext": {"command": "x"}
        });
        let (specs, problems) = from_lsp_json(&value, "plugin p/.lsp.json");
        assert_eq!(specs.len(), 1);
        assert_eq!(specs[0].languages.get("go").map(String::as_str), Some("go"));
        assert_eq!(specs[0].args, ["serve"]);
        assert_eq!(specs[0].startup_timeout, Duration::from_secs(5));
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems.iter().any(|p| p.contains("`bad`") && p.contains("command")));
    }

    #[test]
    fn settings_take_a_list_of_extensions() {
        let entry = json!({"command": "pylsp", "extensions": [".py", "PYI"], "startup_timeout": 2});
        let spec = spec_from_json("pylsp", &entry, "settings", "extensions").unwrap();
        assert_eq!(spec.language_of(Path::new("a/b.py")), Some("python"));
        assert_eq!(spec.language_of(Path::new("b.pyi")), Some("python"));
        assert_eq!(spec.startup_timeout, Duration::from_secs(2));
    }

    #[test]
    fn candidates_put_configured_servers_first() {
        let mut settings = LspSettings::default();
        settings
            .servers
            .push(spec_from_json("mine", &json!({"command": "x", "extensions": ["py"]}), "s", "extensions").unwrap());
        let names: Vec<String> = settings.candidates(Path::new("x.py")).into_iter().map(|s| s.name).collect();
        assert_eq!(names, ["mine", "basedpyright", "pyright"]);
        assert!(settings.candidates(Path::new("x.unknown")).is_empty());
    }
}
