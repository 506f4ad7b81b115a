//! Build script of `booktr-test-needs`: finds which optional resources of booktr's integration
//! tests are present and tells the proc macro through `cfg` flags (`has_corpus`, `has_chromium`,
//! `has_translate_toolkit`, `has_nbformat`, `has_mdbook`, `has_mdbook_gettext`, `has_sites`,
//! `has_mkdocs`, `has_mkdocs_sites`, `has_real_llm`, `has_sacrebleu`). A `BOOKTR_REQUIRE_*=1` switch sets its flag whatever
//! is found, so the test runs and fails with its own clear message when the resource is missing.
//!
//! Rebuilds: this script lives in a separate crate (a dev-dependency), so when it reruns only the
//! integration tests and benches recompile, never the `booktr` library or binary. It reruns when
//! this file changes, when one of the variables below changes, or when a resource found present
//! changes (the corpus directory, the Chromium binary). An absent resource is not watched: Cargo
//! reruns a script that watches a missing path on every build, which would recompile the tests
//! each time. After installing one, `touch tests/needs/build.rs` (or set its `BOOKTR_REQUIRE_*`
//! switch) so the next build sees it.

use std::path::Path;
use std::process::Command;

/// Chromium binaries tried by `tests/it/report_html.rs`, in order.
const CHROMIUM: &[&str] = &[
    "/usr/bin/chromium",
    "/usr/bin/chromium-browser",
    "/usr/bin/google-chrome",
];

/// The shared book, relative to the booktr checkout (this crate is `tests/needs/` in it).
const CORPUS: &str = "../../../shared/corpus/ai-agent-book";

/// The shared mdBook with real human PO catalogs (`../shared/sites`, like the corpus).
const SITES_RBE: &str = "../../../shared/sites/rust-by-example";

/// The Python modules the shared MkDocs sites' builds import (`.ci/run` installs them).
const MKDOCS_SITES_IMPORT: &str = "import mkdocs, material, pymdownx, mkdocstrings, mkdocstrings_handlers.python, mkdocs_autorefs, markdown_callouts, markdown_exec, mkdocs_coverage, mkdocs_git_revision_date_localized_plugin, mkdocs_llmstxt, mkdocs_minify_plugin, mkdocs_redirects, mkdocs_section_index, mkdocs_pymdownx_material_extras";

/// The path of command `name` if it is in a directory of `PATH`.
fn on_path(name: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

fn flag(var: &str) -> bool {
    println!("cargo::rerun-if-env-changed={var}");
    std::env::var(var).is_ok_and(|v| v == "1")
}

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    for cfg in [
        "has_corpus",
        "has_chromium",
        "has_translate_toolkit",
        "has_nbformat",
        "has_mdbook",
        "has_mdbook_gettext",
        "has_sites",
        "has_mkdocs",
        "has_mkdocs_sites",
        "has_docusaurus",
        "has_jupyter_book",
        "has_real_llm",
        "has_sacrebleu",
    ] {
        println!("cargo::rustc-check-cfg=cfg({cfg})");
    }
    let here = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");

    let corpus = Path::new(&here).join(CORPUS);
    let has_corpus = corpus.join("en").is_dir();
    if has_corpus {
        println!("cargo::rerun-if-changed={}", corpus.display());
    }
    if flag("BOOKTR_REQUIRE_CORPUS") || has_corpus {
        println!("cargo::rustc-cfg=has_corpus");
    }

    let chromium = CHROMIUM.iter().find(|c| Path::new(c).exists());
    if let Some(c) = chromium {
        println!("cargo::rerun-if-changed={c}");
    }
    if flag("BOOKTR_REQUIRE_CHROMIUM") || chromium.is_some() {
        println!("cargo::rustc-cfg=has_chromium");
    }

    let tt = Command::new("python3")
        .args([
            "-c",
            "import translate.storage.xliff2, translate.storage.tmx, translate.storage.tbx",
        ])
        .output()
        .is_ok_and(|o| o.status.success());
    if flag("BOOKTR_REQUIRE_TRANSLATE_TOOLKIT") || tt {
        println!("cargo::rustc-cfg=has_translate_toolkit");
    }

    // nbformat (PyPI), Jupyter's own notebook reader and validator, checks translated notebooks.
    let nbf = Command::new("python3")
        .args(["-c", "import nbformat"])
        .output()
        .is_ok_and(|o| o.status.success());
    if flag("BOOKTR_REQUIRE_NBFORMAT") || nbf {
        println!("cargo::rustc-cfg=has_nbformat");
    }

    // mdBook's own builder checks that a translated mdBook builds.
    let mdbook = Command::new("mdbook")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if flag("BOOKTR_REQUIRE_MDBOOK") || mdbook {
        println!("cargo::rustc-cfg=has_mdbook");
    }

    // mdbook-i18n-helpers' mdbook-gettext builds an mdBook from booktr's PO catalog.
    let gettext_bin = on_path("mdbook-gettext");
    if let Some(p) = &gettext_bin {
        println!("cargo::rerun-if-changed={}", p.display());
    }
    let gettext = mdbook && gettext_bin.is_some();
    if flag("BOOKTR_REQUIRE_MDBOOK_GETTEXT") || gettext {
        println!("cargo::rustc-cfg=has_mdbook_gettext");
    }

    // Rust by Example's human PO catalogs check booktr's msgids (the corpus switch covers it).
    let rbe = Path::new(&here).join(SITES_RBE);
    let has_rbe = rbe.join("po").is_dir();
    if has_rbe {
        println!("cargo::rerun-if-changed={}", rbe.display());
    }
    if flag("BOOKTR_REQUIRE_CORPUS") || has_rbe {
        println!("cargo::rustc-cfg=has_sites");
    }

    // MkDocs (PyPI) checks that a translated MkDocs site builds (`mkdocs build --strict`).
    let mkdocs = Command::new("python3")
        .args(["-c", "import mkdocs"])
        .output()
        .is_ok_and(|o| o.status.success());
    if flag("BOOKTR_REQUIRE_MKDOCS") || mkdocs {
        println!("cargo::rustc-cfg=has_mkdocs");
    }

    // MkDocs with the plugins of the shared MkDocs sites (Material, pymdownx, mkdocstrings and
    // the rest of `.ci/run`'s list) builds those sites and their translations.
    let mkdocs_sites = Command::new("python3")
        .args(["-c", MKDOCS_SITES_IMPORT])
        .output()
        .is_ok_and(|o| o.status.success());
    if flag("BOOKTR_REQUIRE_MKDOCS_SITES") || mkdocs_sites {
        println!("cargo::rustc-cfg=has_mkdocs_sites");
    }

    // The Yew site's npm packages (`npm ci` in a copy of ../shared/sites/yew-docusaurus, about
    // a minute), named by BOOKTR_DOCUSAURUS_MODULES, build that site and its translation.
    println!("cargo::rerun-if-env-changed=BOOKTR_DOCUSAURUS_MODULES");
    let modules = std::env::var("BOOKTR_DOCUSAURUS_MODULES")
        .is_ok_and(|m| Path::new(&m).join("@docusaurus/core").is_dir());
    if flag("BOOKTR_REQUIRE_DOCUSAURUS") || modules {
        println!("cargo::rustc-cfg=has_docusaurus");
    }

    // Jupyter Book 1 (PyPI, with the packages ../shared/sites/README.md lists) builds the
    // shared Jupyter Book docs and their translation.
    let jupyter_book = Command::new("jupyter-book")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if flag("BOOKTR_REQUIRE_JUPYTER_BOOK") || jupyter_book {
        println!("cargo::rustc-cfg=has_jupyter_book");
    }

    // sacreBLEU (PyPI), the reference implementation of chrF++, checks booktr's chrF++.
    let sacrebleu = Command::new("python3")
        .args(["-c", "import sacrebleu"])
        .output()
        .is_ok_and(|o| o.status.success());
    if flag("BOOKTR_REQUIRE_SACREBLEU") || sacrebleu {
        println!("cargo::rustc-cfg=has_sacrebleu");
    }

    println!("cargo::rerun-if-env-changed=BOOKTR_REAL_LLM_URL");
    let url = std::env::var("BOOKTR_REAL_LLM_URL").is_ok_and(|u| !u.trim().is_empty());
    if flag("BOOKTR_REQUIRE_REAL_LLM") || url {
        println!("cargo::rustc-cfg=has_real_llm");
    }
}
