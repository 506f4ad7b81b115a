//! The skip marker itself (`tests/needs`): `#[needs(...)]` leaves a test alone when its
//! resource was there at build time, and the build's view is not stale. A resource that is
//! present now but was absent when the tests were built would leave its tests ignored; that is a
//! failure here, naming the remedy, so coverage is never lost silently.

use std::path::Path;

use booktr_test_needs::{needs, present};

/// Applied with every resource present-or-absent, the attribute keeps the function callable
/// (it only ever adds `#[ignore]`), and an empty list changes nothing.
#[needs()]
fn plain() -> u32 {
    7
}

#[test]
fn needs_keeps_the_item() {
    assert_eq!(plain(), 7);
}

/// Whether the resource is present right now (the same checks as `tests/needs/build.rs`).
fn present_now(name: &str) -> bool {
    match name {
        "corpus" => Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../shared/corpus/ai-agent-book/en")
            .is_dir(),
        "chromium" => [
            "/usr/bin/chromium",
            "/usr/bin/chromium-browser",
            "/usr/bin/google-chrome",
        ]
        .iter()
        .any(|c| Path::new(c).exists()),
        "mdbook_gettext" => crate::gettext::missing_mdbook_gettext().is_empty(),
        "sites" => Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../shared/sites/rust-by-example/po")
            .is_dir(),
        _ => unreachable!("{name}"),
    }
}

#[test]
fn a_resource_present_now_was_seen_when_the_tests_were_built() {
    for (name, at_build) in [
        ("corpus", present!(corpus)),
        ("chromium", present!(chromium)),
        ("mdbook_gettext", present!(mdbook_gettext)),
        ("sites", present!(sites)),
    ] {
        assert!(
            at_build || !present_now(name),
            "{name} is present now but was absent when the tests were built, so its tests are \
             ignored: run `touch tests/needs/build.rs` and test again"
        );
    }
}
