//! The specifier of `Read(…)`, `Edit(…)` and `Write(…)` rules: a path in gitignore syntax,
//! with Claude Code's anchors.
//!
//! | written | relative to |
//! |---|---|
//! | `//abs/path` | the filesystem root (`/abs/path`) |
//! | `~/path` | the home directory |
//! | `/path` | the directory the settings file governs (the project, for project files) |
//! | `./path` or `path` | the directory toolbelt started in |
//!
//! Then gitignore's rules: `*` stays within one path component, `**` crosses them, `?` and
//! `[abc]` as usual, `\` escapes. A pattern with no slash but a trailing one, written bare
//! (`*.env`, `node_modules`), matches at any depth below its base; any other is anchored to
//! it. A pattern matching a directory covers everything inside it (`Edit(./docs)` covers
//! `./docs/a/b.md`). A trailing `/` means directories only. A pattern ending in `/**` also
//! matches the directory itself, so `Read(//data/**)` lets Grep, Glob and ListDir search
//! `/data` and not only open the files below it.

use std::path::Path;

use globset::{GlobBuilder, GlobMatcher};

/// The directories anchors resolve against.
#[derive(Debug, Clone, Copy)]
pub struct Anchors<'a> {
    /// For `~/`.
    pub home: &'a Path,
    /// For `./` and bare patterns.
    pub cwd: &'a Path,
    /// For `/` (one slash).
    pub settings_dir: &'a Path,
}

/// Why a path pattern could not be parsed, and what to write instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathPatternError {
    /// Nothing inside the parentheses.
    #[error("empty path: write `Read` for every file, or a path such as `Read(./src/**)`")]
    Empty,
    /// A gitignore negation (`!…`).
    #[error("negated patterns (`!…`) are not supported: write a deny rule for what to exclude")]
    Negated,
    /// Not a valid glob.
    #[error("`{spec}` is not a valid path pattern: {kind}")]
    InvalidGlob {
        /// The specifier as written.
        spec: String,
        /// What the glob compiler said.
        kind: globset::ErrorKind,
    },
}

/// A parsed path pattern.
#[derive(Debug, Clone)]
pub struct PathPattern {
    text: String,
    matcher: GlobMatcher,
    /// For a pattern ending in `/**`: the directory it is written below.
    itself: Option<GlobMatcher>,
    dir_only: bool,
    glob: String,
}

impl PathPattern {
    /// Parses a specifier, resolving its anchor.
    pub fn parse(spec: &str, anchors: &Anchors<'_>) -> Result<PathPattern, PathPatternError> {
        let spec = spec.trim();
        if spec.is_empty() {
            return Err(PathPatternError::Empty);
        }
        if spec.starts_with('!') {
            return Err(PathPatternError::Negated);
        }
        let (base, rest, anchored): (&Path, &str, bool) = if let Some(rest) = spec.strip_prefix("//") {
            (Path::new("/"), rest, true)
        } else if spec == "~" {
            (anchors.home, "", true)
        } else if let Some(rest) = spec.strip_prefix("~/") {
            (anchors.home, rest, true)
        } else if let Some(rest) = spec.strip_prefix('/') {
            (anchors.settings_dir, rest, true)
        } else if let Some(rest) = spec.strip_prefix("./") {
            (anchors.cwd, rest, true)
        } else {
            let anchored = spec.trim_end_matches('/').contains('/');
            (anchors.cwd, spec, anchored)
        };
        let dir_only = rest.ends_with('/');
        let rest = rest.trim_end_matches('/');
        let base = globset::escape(&base.to_string_lossy());
        let base = base.trim_end_matches('/');
        let glob = match (rest, anchored) {
            ("" | ".", _) => {
                if base.is_empty() {
                    "/**".to_string()
                } else {
                    base.to_string()
                }
            }
            (rest, true) => format!("{base}/{rest}"),
            (rest, false) => format!("{base}/**/{rest}"),
        };
        let compile = |glob: &str| {
            GlobBuilder::new(glob)
                .literal_separator(true)
                .backslash_escape(true)
                .build()
                .map(|g| g.compile_matcher())
                .map_err(|e| PathPatternError::InvalidGlob { spec: spec.to_string(), kind: e.kind().clone() })
        };
        let matcher = compile(&glob)?;
        let itself = match glob.strip_suffix("/**") {
            Some(dir) if !dir.is_empty() => Some(compile(dir)?),
            _ => None,
        };
        Ok(PathPattern { text: spec.to_string(), matcher, itself, dir_only, glob })
    }

    /// The one file or directory the pattern names, when it has no wildcard (`./.env`, or
    /// `./secrets/**` for the directory `secrets`): what a sandbox can hide outright.
    pub fn literal_path(&self) -> Option<std::path::PathBuf> {
        let path = self.glob.strip_suffix("/**").unwrap_or(&self.glob);
        let wild = |s: &str| s.contains(['*', '?', '[', '{', '\\']);
        (!wild(path) && path.starts_with('/')).then(|| std::path::PathBuf::from(path))
    }

    /// The directory every path the pattern matches lies in: its leading components up to
    /// the first wildcard (`/work/app` for `./**/.env`, `/home/ann/.ssh` for `~/.ssh/**`).
    pub fn base(&self) -> std::path::PathBuf {
        let wild = |s: &str| s.contains(['*', '?', '[', '{', '\\']);
        let mut base = std::path::PathBuf::from("/");
        let components: Vec<&str> = self.glob.split('/').filter(|c| !c.is_empty()).collect();
        let fixed = components.len().saturating_sub(1);
        for component in components.into_iter().take(fixed) {
            if wild(component) {
                break;
            }
            base.push(component);
        }
        base
    }

    /// Whether an absolute, normalized path is matched, itself or through a directory that
    /// holds it.
    pub fn matches(&self, path: &Path) -> bool {
        if self.matcher.is_match(path) && (!self.dir_only || path.is_dir()) {
            return true;
        }
        if self.itself.as_ref().is_some_and(|m| m.is_match(path)) {
            return true;
        }
        path.ancestors().skip(1).any(|dir| self.matcher.is_match(dir))
    }

    /// The specifier as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn anchors() -> Anchors<'static> {
        Anchors { home: Path::new("/home/ann"), cwd: Path::new("/work/app"), settings_dir: Path::new("/work/app") }
    }

    fn m(spec: &str, path: &str) -> bool {
        PathPattern::parse(spec, &anchors()).unwrap().matches(Path::new(path))
    }

    #[test]
    fn claude_codes_documented_examples() {
        let table = [
            ("./.env", "/work/app/.env", true),
            ("./.env", "/work/app/sub/.env", false),
            ("./.env.*", "/work/app/.env.local", true),
            ("./.env.*", "/work/app/.env", false),
            ("./secrets/**", "/work/app/secrets/a/b.key", true),
            ("./secrets/**", "/work/app/secrets2/a", false),
            ("./secrets/**", "/work/app/secrets", true),
            ("./secrets/**", "/work/app", false),
            ("/src/**/*.ts", "/work/app/src/a/b/c.ts", true),
            ("/src/**/*.ts", "/work/app/src/c.ts", true),
            ("/src/**/*.ts", "/work/app/lib/c.ts", false),
            ("//Users/alice/secrets/**", "/Users/alice/secrets/x", true),
            ("//Users/alice/secrets/**", "/work/app/Users/alice/secrets/x", false),
            ("~/Documents/*.pdf", "/home/ann/Documents/a.pdf", true),
            ("~/Documents/*.pdf", "/home/ann/Documents/sub/a.pdf", false),
            ("*.env", "/work/app/.env", true),
            ("*.env", "/work/app/prod.env", true),
            ("*.env", "/work/app/deep/down/prod.env", true),
            ("*.env", "/elsewhere/prod.env", false),
            ("docs/**", "/work/app/docs/a/b.md", true),
            ("docs/**", "/work/app/x/docs/a.md", false),
            ("node_modules", "/work/app/a/node_modules/pkg/index.js", true),
            ("./docs", "/work/app/docs/a/b.md", true),
            ("./app", "/work/app/app2/x", false),
            ("./app", "/work/app/app/x", true),
            ("~", "/home/ann/.ssh/id_rsa", true),
            ("//", "/etc/passwd", true),
        ];
        for (spec, path, want) in table {
            assert_eq!(m(spec, path), want, "`{spec}` vs {path}");
        }
    }

    #[test]
    fn a_trailing_slash_means_directories() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(base.join("build/out")).unwrap();
        std::fs::write(base.join("notes"), "").unwrap();
        let a = Anchors { home: &base, cwd: &base, settings_dir: &base };
        let build = PathPattern::parse("build/", &a).unwrap();
        assert!(build.matches(&base.join("build")) && build.matches(&base.join("build/out/x.o")));
        let notes = PathPattern::parse("notes/", &a).unwrap();
        assert!(!notes.matches(&base.join("notes")), "a file is not a directory");
    }

    #[test]
    fn escapes_and_odd_bases() {
        let odd = Anchors { home: Path::new("/h"), cwd: Path::new("/w/[x]"), settings_dir: Path::new("/") };
        assert!(PathPattern::parse("./a.txt", &odd).unwrap().matches(Path::new("/w/[x]/a.txt")));
        assert!(!PathPattern::parse("./a.txt", &odd).unwrap().matches(Path::new("/w/x/a.txt")));
        assert!(PathPattern::parse("./\\[id\\].tsx", &anchors()).unwrap().matches(Path::new("/work/app/[id].tsx")));
        assert!(PathPattern::parse("/etc/hosts", &odd).unwrap().matches(Path::new("/etc/hosts")));
    }

    #[test]
    fn literal_paths_are_what_a_sandbox_can_hide() {
        let lit = |spec: &str| PathPattern::parse(spec, &anchors()).unwrap().literal_path();
        assert_eq!(lit("./.env"), Some("/work/app/.env".into()));
        assert_eq!(lit("./secrets/**"), Some("/work/app/secrets".into()));
        assert_eq!(lit("~/.ssh/**"), Some("/home/ann/.ssh".into()));
        assert_eq!(lit("*.env"), None);
        assert_eq!(lit("./src/**/*.key"), None);
    }

    #[test]
    fn a_pattern_s_base_holds_whatever_it_matches() {
        let base = |spec: &str| PathPattern::parse(spec, &anchors()).unwrap().base();
        assert_eq!(base("./.env"), Path::new("/work/app"));
        assert_eq!(base("./secrets/**"), Path::new("/work/app/secrets"));
        assert_eq!(base("*.env"), Path::new("/work/app"));
        assert_eq!(base("~/.ssh/**"), Path::new("/home/ann/.ssh"));
        assert_eq!(base("//etc/shadow"), Path::new("/etc"));
        assert_eq!(base("//"), Path::new("/"));
        let odd = Anchors { home: Path::new("/h"), cwd: Path::new("/w/[x]"), settings_dir: Path::new("/") };
        assert_eq!(PathPattern::parse("./a", &odd).unwrap().base(), Path::new("/w"), "an escaped name stops it early");
    }

    #[test]
    fn bad_specifiers_say_what_to_write() {
        for (spec, expected) in [("", "empty path"), ("!./x", "not supported"), ("./[a", "not a valid path pattern")] {
            let err = PathPattern::parse(spec, &anchors()).unwrap_err().to_string();
            assert!(err.contains(expected), "`{spec}`: {err}");
        }
        assert_eq!(PathPattern::parse(" ./x ", &anchors()).unwrap().as_str(), "./x");
    }
}
