//! `#[needs(resource)]`, the skip marker of booktr's integration tests (`tests/it/`). libtest has
//! no skip at run time, so a test that needs an optional resource is marked `#[ignore = reason]`
//! at build time when the resource was absent (see `build.rs` for how each one is found). The
//! summary then counts it in `N ignored`, and `cargo test` prints `test x ... ignored, <reason>`.
//! The tests keep their own run-time check as well, printing why they return early, for a binary
//! built while the resource was there but run after it went away.
//!
//! Resources: `corpus` (`../shared/corpus/ai-agent-book`), `chromium` (Debian's `chromium`),
//! `translate_toolkit` (python3 with translate-toolkit), `nbformat` (python3 with nbformat),
//! `mdbook` (the `mdbook` command), `mdbook_gettext` (the `mdbook` and `mdbook-gettext`
//! commands), `sites` (`../shared/sites/rust-by-example`), `mkdocs` (python3 with mkdocs),
//! `mkdocs_sites` (python3 with the plugins of the shared MkDocs sites), `jupyter_book` (`jupyter-book` on PATH), `docusaurus` (the Yew
//! site's npm packages at `BOOKTR_DOCUSAURUS_MODULES`),
//! `sacrebleu` (python3 with sacrebleu) and `real_llm` (`BOOKTR_REAL_LLM_URL`).
//! Each has a `BOOKTR_REQUIRE_*=1` switch that makes the test run (and fail) instead.

use proc_macro::TokenStream;

/// Whether the resource was present at build time (or required), and the ignore reason.
fn resource(name: &str) -> Option<(bool, &'static str)> {
    Some(match name {
        "corpus" => (
            cfg!(has_corpus),
            "needs ../shared/corpus/ai-agent-book (absent when the tests were built); \
             BOOKTR_REQUIRE_CORPUS=1 makes this a failure",
        ),
        "chromium" => (
            cfg!(has_chromium),
            "needs Debian's chromium (absent when the tests were built); \
             BOOKTR_REQUIRE_CHROMIUM=1 makes this a failure",
        ),
        "translate_toolkit" => (
            cfg!(has_translate_toolkit),
            "needs python3 with translate-toolkit (absent when the tests were built; \
             pip install translate-toolkit); BOOKTR_REQUIRE_TRANSLATE_TOOLKIT=1 makes this a failure",
        ),
        "nbformat" => (
            cfg!(has_nbformat),
            "needs python3 with nbformat (absent when the tests were built; \
             pip install nbformat); BOOKTR_REQUIRE_NBFORMAT=1 makes this a failure",
        ),
        "mdbook" => (
            cfg!(has_mdbook),
            "needs the mdbook command (absent when the tests were built; \
             cargo install --locked mdbook --version 0.5.4 --no-default-features); \
             BOOKTR_REQUIRE_MDBOOK=1 makes this a failure",
        ),
        "mdbook_gettext" => (
            cfg!(has_mdbook_gettext),
            "needs the mdbook and mdbook-gettext commands (absent when the tests were built; \
             cargo install --locked mdbook-i18n-helpers --version 0.4.0); \
             BOOKTR_REQUIRE_MDBOOK_GETTEXT=1 makes this a failure",
        ),
        "sites" => (
            cfg!(has_sites),
            "needs ../shared/sites/rust-by-example (absent when the tests were built); \
             BOOKTR_REQUIRE_CORPUS=1 makes this a failure",
        ),
        "mkdocs" => (
            cfg!(has_mkdocs),
            "needs python3 with mkdocs (absent when the tests were built; \
             pip install mkdocs); BOOKTR_REQUIRE_MKDOCS=1 makes this a failure",
        ),
        "mkdocs_sites" => (
            cfg!(has_mkdocs_sites),
            "needs python3 with MkDocs and the plugins of the shared MkDocs sites (absent when \
             the tests were built; .ci/run lists them); BOOKTR_REQUIRE_MKDOCS_SITES=1 makes this a failure",
        ),
        "docusaurus" => (
            cfg!(has_docusaurus),
            "needs the Yew site's npm packages at BOOKTR_DOCUSAURUS_MODULES (unset when the \
             tests were built; run `npm ci` in a copy of ../shared/sites/yew-docusaurus and point \
             it at its node_modules); BOOKTR_REQUIRE_DOCUSAURUS=1 makes this a failure",
        ),
        "jupyter_book" => (
            cfg!(has_jupyter_book),
            "needs `jupyter-book` 1.0.4.post1 on PATH with the packages of the shared Jupyter Book \
             docs (absent when the tests were built; ../shared/sites/README.md lists them); \
             BOOKTR_REQUIRE_JUPYTER_BOOK=1 makes this a failure",
        ),
        "sacrebleu" => (
            cfg!(has_sacrebleu),
            "needs python3 with sacrebleu (absent when the tests were built; \
             pip install sacrebleu); BOOKTR_REQUIRE_SACREBLEU=1 makes this a failure",
        ),
        "real_llm" => (
            cfg!(has_real_llm),
            "needs a real model at BOOKTR_REAL_LLM_URL (unset when the tests were built; \
             bash ../shared/real-llm/start.sh 0.5b); BOOKTR_REQUIRE_REAL_LLM=1 makes this a failure",
        ),
        _ => return None,
    })
}

/// `#[needs(corpus)]` above `#[test]`: adds `#[ignore = "<reason>"]` to the test when the named
/// resource was absent at build time, and leaves it unchanged otherwise. Several resources may
/// be listed (`#[needs(corpus, chromium)]`); the first absent one gives the reason. An unknown
/// name is a compile error listing the known ones.
#[proc_macro_attribute]
pub fn needs(attr: TokenStream, item: TokenStream) -> TokenStream {
    let names = attr.to_string();
    for name in names.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let Some((present, reason)) = resource(name) else {
            let msg = format!(
                "#[needs({name})]: unknown resource; known: corpus, chromium, translate_toolkit, nbformat, mdbook, mdbook_gettext, sites, mkdocs, mkdocs_sites, docusaurus, jupyter_book, sacrebleu, real_llm"
            );
            return format!("compile_error!({msg:?});").parse().unwrap();
        };
        if !present {
            let mut out: TokenStream = format!("#[ignore = {reason:?}]").parse().unwrap();
            out.extend(item);
            return out;
        }
    }
    item
}

/// `present!(corpus)`: `true` or `false`, whether the resource was present (or required) when
/// the tests were built, the value `#[needs(...)]` decided on. An unknown name is a compile
/// error. Lets a test check that the build's view is not stale.
#[proc_macro]
pub fn present(input: TokenStream) -> TokenStream {
    let name = input.to_string();
    match resource(name.trim()) {
        Some((present, _)) => present.to_string().parse().unwrap(),
        None => format!("compile_error!(\"present!({name}): unknown resource\")")
            .parse()
            .unwrap(),
    }
}
