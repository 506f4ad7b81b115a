//! The files a chapter pulls into its page at build time, as each site's tool finds them:
//! mdBook's `{{#include file}}`, `{{#rustdoc_include file}}` and `{{#playground file}}`
//! (relative to the chapter), pymdownx snippets (`--8<-- "file"`, a block of paths between
//! two `--8<--` lines, and the `auto_append` files; looked up in the snippets' `base_path`
//! list) and Docusaurus partials (`import Partial from './_partial.mdx'`). A Markdown file
//! reached this way is part of the pages readers see, so a site translates it like a chapter
//! ([`crate::book::site`]).
//!
//! Reads no file itself: the caller passes each chapter's text.

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use regex::Regex;

/// How a site's tool finds included files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Dialect {
    /// mdBook: paths relative to the including file.
    MdBook,
    /// pymdownx snippets: each path looked up in `bases` in order (a folder: the path inside
    /// it; a file: the path when it names that file, as pymdownx matches file bases), and
    /// `auto_append` paths added to every page.
    Snippets {
        bases: Vec<PathBuf>,
        auto_append: Vec<String>,
    },
    /// Docusaurus (MDX): relative `import … from './file.mdx'`.
    Docusaurus,
    /// MyST (Jupyter Book, Sphinx): the `{include}` directive, in a backtick or colon fence,
    /// its path relative to the including file.
    Myst,
}

/// MyST's `{include}` and `{literalinclude}` directives (```` ```{include} ../README.md ````,
/// `:::{literalinclude} a.py`): group 1 is the directive up to the path, group 2 the path.
pub static MYST_INCLUDE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?m)^([ \t]*(?:`{3,}|:{3,})\{(?:include|literalinclude)\}[ \t]+)(\S+)")
        .expect("valid")
});

/// mdBook's include directives (`{{#include file}}`, `{{#rustdoc_include file:anchor}}`,
/// `{{#playground file}}`, the old `{{#playpen}}`): group 1 is the directive up to the path,
/// group 2 the file's path without the `:anchor` or line range after it.
pub static MDBOOK_INCLUDE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(\{\{#(?:include|rustdoc_include|playground|playpen)\s+)([^\s}:]+)")
        .expect("valid")
});

impl Dialect {
    /// The files `text` (of the file `file`) includes, in order, as paths on disk; a path that
    /// does not resolve to an existing file is left out (the tool reports it at build time).
    pub fn includes(&self, file: &Path, text: &str) -> Vec<PathBuf> {
        static SNIPPET: LazyLock<Regex> = LazyLock::new(|| {
            Regex::new(r#"^[ \t]*--8<--[ \t]+(?:"([^"]+)"|'([^']+)')[ \t]*$"#).expect("valid")
        });
        static IMPORT: LazyLock<Regex> = LazyLock::new(|| {
            Regex::new(r#"(?m)^import\s+[\w{}\s,*]+\s+from\s+['"](\.{1,2}/[^'"]+)['"]"#)
                .expect("valid")
        });
        let dir = file.parent().unwrap_or(Path::new("."));
        let existing = |p: PathBuf| {
            let p = crate::util::normalize(&p);
            p.is_file().then_some(p)
        };
        match self {
            Dialect::MdBook => MDBOOK_INCLUDE
                .captures_iter(text)
                .filter_map(|c| existing(dir.join(&c[2])))
                .collect(),
            Dialect::Myst => MYST_INCLUDE
                .captures_iter(text)
                .filter(|c| c[1].contains("{include}"))
                .filter_map(|c| existing(dir.join(&c[2])))
                .collect(),
            Dialect::Docusaurus => IMPORT
                .captures_iter(text)
                .filter_map(|c| existing(dir.join(&c[1])))
                .collect(),
            Dialect::Snippets { bases, auto_append } => {
                let mut names: Vec<String> = Vec::new();
                let mut in_block = false;
                for line in text.lines() {
                    let t = line.trim();
                    if t == "--8<--" {
                        in_block = !in_block;
                        continue;
                    }
                    if in_block {
                        // A block line is a path; one starting with `;` is escaped.
                        if !t.is_empty() && !t.starts_with(';') {
                            names.push(t.to_string());
                        }
                        continue;
                    }
                    if let Some(c) = SNIPPET.captures(line) {
                        names.push(c.get(1).or(c.get(2)).expect("one").as_str().to_string());
                    }
                }
                names.extend(auto_append.iter().cloned());
                names
                    .iter()
                    .filter_map(|n| {
                        // `file.md:3:5` and `file.md:section` select lines or a section.
                        let n = match n.rsplit_once(':') {
                            Some((f, sel)) if !f.is_empty() && !sel.contains('/') => {
                                f.split(':').next().unwrap_or(f)
                            }
                            _ => n.as_str(),
                        };
                        snippet_file(bases, n)
                    })
                    .collect()
            }
        }
    }
}

/// The file pymdownx snippets reads for snippet name `name`: the first base folder holding
/// it, or a base file whose name it is.
fn snippet_file(bases: &[PathBuf], name: &str) -> Option<PathBuf> {
    if name.contains("://") {
        return None;
    }
    bases.iter().find_map(|b| {
        if b.is_dir() {
            let f = crate::util::normalize(&b.join(name));
            f.is_file().then_some(f)
        } else if b.is_file() && b.file_name().is_some_and(|f| f.to_string_lossy() == name) {
            Some(b.clone())
        } else {
            None
        }
    })
}

/// `text`, an mdBook chapter read from `from` and written to `to`, with each include whose
/// file lies outside the site `root` (`{{#include ../../../examples/a.rs}}`) pointed at that
/// file from `to`'s folder: the output mirrors the root, so an include inside it resolves
/// from `to` as it did from `from`, and one outside would not. The file part is replaced; an
/// `:anchor` or line range after it is kept. Other text is unchanged.
pub fn rebase_outside(text: &str, from: &Path, to: &Path, root: &Path) -> String {
    rebase_outside_with(&MDBOOK_INCLUDE, text, from, to, root)
}

/// [`rebase_outside`] for the include directives `pattern` finds (group 1 up to the path,
/// group 2 the path): [`MDBOOK_INCLUDE`] or [`MYST_INCLUDE`].
pub fn rebase_outside_with(
    pattern: &Regex,
    text: &str,
    from: &Path,
    to: &Path,
    root: &Path,
) -> String {
    let (from_dir, to_dir) = (
        from.parent().unwrap_or(Path::new(".")),
        to.parent().unwrap_or(Path::new(".")),
    );
    pattern
        .replace_all(text, |c: &regex::Captures| {
            let file = crate::util::normalize(&from_dir.join(&c[2]));
            // A path from the site's root (`/x`, Sphinx) resolves in the output as it did.
            if c[2].starts_with('/') || file.starts_with(root) {
                return c[0].to_string();
            }
            format!(
                "{}{}",
                &c[1],
                crate::util::relative_to(&file, &crate::util::normalize(to_dir))
            )
        })
        .into_owned()
}

/// Whether `path` is a Markdown file a site translates (`.md`, `.mdx`, `.markdown`).
pub fn is_markdown(path: &Path) -> bool {
    path.extension()
        .is_some_and(|x| x == "md" || x == "mdx" || x == "markdown")
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::util::test_tree as tree;

    #[test]
    fn each_tool_finds_its_includes() {
        let d = tree(&[
            ("src/guide/arg.md", "x"),
            ("src/guide/ex.rs", "x"),
            ("snips/refs.md", "x"),
            ("LICENSE.md", "x"),
            ("docs/_part.mdx", "x"),
        ]);
        let r = d.path();
        let md = Dialect::MdBook.includes(
            &r.join("src/guide/page.md"),
            "{{#include arg.md}}\n{{#rustdoc_include ex.rs:main}}\n{{#include gone.md}}\n",
        );
        assert_eq!(md, [r.join("src/guide/arg.md"), r.join("src/guide/ex.rs")]);
        let sn = Dialect::Snippets {
            bases: vec![r.join("snips"), r.join("LICENSE.md")],
            auto_append: vec!["refs.md".into()],
        };
        let got = sn.includes(
            &r.join("docs/a.md"),
            "--8<-- \"LICENSE.md\"\n\n```\n;--8<-- \"x.md\"\n```\n\n--8<--\nrefs.md:2:3\n;skip.md\n--8<--\n",
        );
        assert_eq!(
            got,
            [
                r.join("LICENSE.md"),
                r.join("snips/refs.md"),
                r.join("snips/refs.md")
            ]
        );
        let du = Dialect::Docusaurus.includes(
            &r.join("docs/a.mdx"),
            "import Tabs from '@theme/Tabs';\nimport Part from './_part.mdx';\n",
        );
        assert_eq!(du, [r.join("docs/_part.mdx")]);
    }

    #[test]
    fn an_include_from_outside_the_book_still_resolves_from_the_output() {
        let text = "{{#include ../../../examples/a.rs:main}}\n{{#include arg.md}}\n";
        let out = rebase_outside(
            text,
            Path::new("/repo/doc/book/src/cli/page.md"),
            Path::new("/work/camp/out/src/cli/page.md"),
            Path::new("/repo/doc/book"),
        );
        assert_eq!(
            out,
            "{{#include ../../../../../repo/doc/examples/a.rs:main}}\n{{#include arg.md}}\n"
        );
    }
}
