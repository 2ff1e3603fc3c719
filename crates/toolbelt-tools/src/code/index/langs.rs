//! The languages symbols are read from: each grammar's own tag query (which the grammar
//! crates ship; TypeScript's adds to JavaScript's, as its grammar extends JavaScript's), plus
//! a few patterns for the variables and constants those queries leave out,
//! compiled once per process on first use.

use std::path::Path;
use std::sync::OnceLock;

use tree_sitter::Language;
use tree_sitter_tags::TagsConfiguration;

/// One language: its name, its file extensions, and how to build its tag configuration.
pub struct Lang {
    /// Its name (`rust`, `typescript`…).
    pub name: &'static str,
    extensions: &'static [&'static str],
    language: fn() -> Language,
    queries: &'static [&'static str],
    config: OnceLock<Result<TagsConfiguration, String>>,
}

impl Lang {
    /// The tag configuration, built on first use; why not, when the queries do not compile
    /// for the grammar (a bug here, reported per file rather than fatal).
    pub fn config(&self) -> Result<&TagsConfiguration, &str> {
        self.config
            .get_or_init(|| {
                let query = self.queries.join("\n");
                TagsConfiguration::new((self.language)(), &query, "")
                    .map_err(|e| format!("the {} tag query does not compile: {e}", self.name))
            })
            .as_ref()
            .map_err(String::as_str)
    }
}

/// Rust constants and statics, which its tag query leaves out.
const RUST_EXTRA: &str = "
(const_item name: (identifier) @name) @definition.constant
(static_item name: (identifier) @name) @definition.constant
";

/// Go's package-level constants and variables.
const GO_EXTRA: &str = "
(source_file (const_declaration (const_spec name: (identifier) @name) @definition.constant))
(source_file (var_declaration (var_spec name: (identifier) @name) @definition.variable))
";

/// Java's fields.
const JAVA_EXTRA: &str = "
(field_declaration declarator: (variable_declarator name: (identifier) @name)) @definition.field
";

/// C's (and C++'s) file-level variables.
const C_EXTRA: &str = "
(translation_unit (declaration declarator: (init_declarator declarator: (identifier) @name)) @definition.variable)
";

macro_rules! lang {
    ($name:literal, $ext:expr, $language:expr, $($query:expr),+) => {
        Lang {
            name: $name,
            extensions: $ext,
            language: || $language.into(),
            queries: &[$($query),+],
            config: OnceLock::new(),
        }
    };
}

fn langs() -> &'static [Lang] {
    static LANGS: OnceLock<Vec<Lang>> = OnceLock::new();
    LANGS.get_or_init(|| {
        vec![
            lang!("rust", &["rs"], tree_sitter_rust::LANGUAGE, tree_sitter_rust::TAGS_QUERY, RUST_EXTRA),
            lang!("python", &["py", "pyi"], tree_sitter_python::LANGUAGE, tree_sitter_python::TAGS_QUERY),
            lang!(
                "javascript",
                &["js", "mjs", "cjs", "jsx"],
                tree_sitter_javascript::LANGUAGE,
                tree_sitter_javascript::TAGS_QUERY
            ),
            lang!(
                "typescript",
                &["ts", "mts", "cts"],
                tree_sitter_typescript::LANGUAGE_TYPESCRIPT,
                tree_sitter_javascript::TAGS_QUERY,
                tree_sitter_typescript::TAGS_QUERY
            ),
            lang!(
                "tsx",
                &["tsx"],
                tree_sitter_typescript::LANGUAGE_TSX,
                tree_sitter_javascript::TAGS_QUERY,
                tree_sitter_typescript::TAGS_QUERY
            ),
            lang!("go", &["go"], tree_sitter_go::LANGUAGE, tree_sitter_go::TAGS_QUERY, GO_EXTRA),
            lang!("java", &["java"], tree_sitter_java::LANGUAGE, tree_sitter_java::TAGS_QUERY, JAVA_EXTRA),
            lang!("c", &["c", "h"], tree_sitter_c::LANGUAGE, tree_sitter_c::TAGS_QUERY, C_EXTRA),
            lang!(
                "cpp",
                &["cc", "cpp", "cxx", "c++", "hh", "hpp", "hxx", "h++"],
                tree_sitter_cpp::LANGUAGE,
                tree_sitter_cpp::TAGS_QUERY,
                C_EXTRA
            ),
        ]
    })
}

/// The language of `path`, by its extension.
pub fn lang_of(path: &Path) -> Option<&'static Lang> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    langs().iter().find(|l| l.extensions.contains(&ext.as_str()))
}

/// The kind a tag's syntax type is, as `code_query` names kinds: `function`, `class` or
/// `variable`; `None` for what is none of them.
pub fn kind_of(syntax_type: &str) -> Option<&'static str> {
    Some(match syntax_type {
        "function" | "method" | "macro" => "function",
        "class" | "interface" | "module" | "type" | "struct" | "enum" | "trait" | "union" => "class",
        "constant" | "variable" | "field" | "property" => "variable",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_language_s_queries_compile() {
        for lang in langs() {
            assert!(lang.config().is_ok(), "{}", lang.config().err().unwrap_or_default());
        }
        assert_eq!(lang_of(Path::new("a/b.TSX")).map(|l| l.name), Some("tsx"));
        assert_eq!(lang_of(Path::new("x.h")).map(|l| l.name), Some("c"));
        assert!(lang_of(Path::new("README.md")).is_none());
    }
}
