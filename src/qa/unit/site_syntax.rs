//! `site_syntax` (per unit, `error`): the syntax of Markdown extensions and site plugins the
//! source holds ([`crate::book::syntax::site_syntax`]: pymdownx snippets, mkdocstrings blocks,
//! admonition and tab markers around their titles, `///` blocks, Jinja tags, attribute lists,
//! keys, progress bars, shortcodes) is in the translation byte for byte. A snippet line with
//! typographic quotes (`--8<-- „CONTRIBUTING.md“`), a translated option or a localized key
//! breaks the build or the page; the site's tool reads them, not the reader.
//!
//! Compared as multisets of span texts: each source span missing from the translation is one
//! finding. Spans the translation adds (an `{#id}` mechanical repair keeps on a heading) are
//! not findings. Mechanical repair restores changed spans (its class `site_syntax`).

use std::collections::HashMap;

use crate::qa::view::doc::Doc;
use crate::qa::{Finding, QaContext, Severity};

/// Check name.
pub const CHECK: &str = "site_syntax";

/// The site syntax spans of `text` this check and its repair own, in order: every span of
/// [`crate::book::syntax::site_syntax`] but an attribute list on a heading line (`## Title
/// {: #id .class}`), whose id the `headings` check and the anchor repair keep.
pub fn spans(text: &str) -> Vec<std::ops::Range<usize>> {
    let mut r = crate::book::syntax::site_syntax(text);
    r.retain(|s| {
        let line_start = text[..s.start].rfind('\n').map_or(0, |i| i + 1);
        !(text[s.clone()].starts_with('{') && text[line_start..].trim_start().starts_with('#'))
    });
    r.sort_by_key(|r| r.start);
    r
}

/// Runs the check (see the module docs).
pub fn check(_ctx: &QaContext, _src: &Doc, _tgt: &Doc, source: &str, target: &str) -> Vec<Finding> {
    let src = spans(source);
    if src.is_empty() {
        return Vec::new();
    }
    let mut have: HashMap<&str, usize> = HashMap::new();
    for t in spans(target) {
        *have.entry(&target[t]).or_default() += 1;
    }
    let mut out = Vec::new();
    for s in src.into_iter().map(|r| &source[r]) {
        match have.get_mut(s) {
            Some(n) if *n > 0 => *n -= 1,
            _ => out.push(Finding::new(
                CHECK,
                Severity::Error,
                format!(
                    "site syntax `{}` is changed or missing in the translation; the site's build reads it: copy it byte for byte (only an admonition's or a tab's title is translated)",
                    crate::util::excerpt(s.trim(), 80)
                ),
                s,
                "",
            )),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(source: &str, target: &str) -> Vec<Finding> {
        let ctx = QaContext::new(
            &crate::lang::Lang::parse("en"),
            &crate::lang::Lang::parse("de"),
            &crate::termbase::Termbase::default(),
        );
        check(&ctx, &Doc::default(), &Doc::default(), source, target)
    }

    #[test]
    fn changed_plugin_syntax_is_an_error_and_a_translated_title_is_not() {
        let source = "--8<-- \"CONTRIBUTING.md\"\n\n!!! note \"Read this\"\n    Body.\n\nPress ++ctrl+c++.\n";
        let good = "--8<-- \"CONTRIBUTING.md\"\n\n!!! note \"Lies das\"\n    Text.\n\nDrücke ++ctrl+c++.\n";
        assert!(run(source, good).is_empty(), "{:?}", run(source, good));
        let bad = "--8<-- „CONTRIBUTING.md“\n\n!!! Hinweis \"Lies das\"\n    Text.\n\nDrücke ++strg+c++.\n";
        let f = run(source, bad);
        let got: Vec<&str> = f.iter().map(|f| f.source_excerpt.as_str()).collect();
        assert_eq!(
            got,
            ["--8<-- \"CONTRIBUTING.md\"", "!!! note \"", "++ctrl+c++"]
        );
        assert!(
            f.iter()
                .all(|f| f.severity == Severity::Error && f.check == CHECK)
        );
    }
}
