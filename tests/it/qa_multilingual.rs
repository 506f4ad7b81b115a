//! The multilingual real set (`labelled::multilingual`): published human translations of three
//! projects in thirteen languages, the course held out, and the labels read for its findings.
//! The figures (errors per 10,000 words, labelled precision, planted recall) come from
//! `cargo bench --bench qa_labelled`; these tests keep the set and its labels sound. Skipped
//! when the cache (`tests/fixtures/qa-multilingual/fetch.sh`) is absent, unless
//! `BOOKTR_REQUIRE_CORPUS=1`.

use std::collections::BTreeSet;

use crate::labelled::multilingual as ml;
use crate::labelled::plant::{self, Kind};
use crate::support::REQUIRE_CORPUS_VAR;

/// The set, or `None` with the reason printed; a panic under `BOOKTR_REQUIRE_CORPUS=1`.
fn set() -> Option<Vec<ml::Pair>> {
    match ml::load() {
        Ok((pairs, _)) => Some(pairs),
        Err(e) if std::env::var(REQUIRE_CORPUS_VAR).is_ok_and(|v| v == "1") => {
            panic!("{REQUIRE_CORPUS_VAR}=1 but the multilingual set is missing: {e}")
        }
        Err(e) => {
            eprintln!("skipped: {e}");
            None
        }
    }
}

#[test]
fn the_set_spans_thirteen_languages_in_each_half_and_holds_the_course_out() {
    let Some(pairs) = set() else { return };
    for held_out in [false, true] {
        let half: Vec<&ml::Pair> = pairs.iter().filter(|p| p.held_out == held_out).collect();
        let langs: BTreeSet<String> = half.iter().map(|p| ml::lang_code(&p.lang)).collect();
        assert!(langs.len() >= 13, "{held_out}: {langs:?}");
        for must in [
            "ko", "ja", "zh-Hant", "ar", "fa", "ru", "uk", "de", "fr", "es", "it", "pt-BR",
        ] {
            assert!(langs.contains(must), "{held_out}: no {must} in {langs:?}");
        }
        let projects: BTreeSet<&str> = half.iter().map(|p| p.project).collect();
        assert!(projects.len() >= 3, "{held_out}: {projects:?}");
        let words: usize = half.iter().map(|p| ml::words(&p.source)).sum();
        assert!(words > 500_000, "{held_out}: {words} source words");
    }
    assert!(
        pairs
            .iter()
            .filter(|p| p.project == "comprehensive-rust")
            .all(|p| p.held_out),
        "the course is held out whole"
    );
}

#[test]
fn every_label_names_a_unit_of_the_set_and_a_check() {
    let Some(pairs) = set() else { return };
    let labels = ml::labels();
    assert!(labels.len() >= 200, "{} labels", labels.len());
    let units: BTreeSet<(&str, &str, &str)> = pairs
        .iter()
        .map(|p| (p.project, p.lang.as_str(), p.unit.as_str()))
        .collect();
    for l in &labels {
        assert!(
            units.contains(&(l.project.as_str(), l.lang.as_str(), l.unit.as_str())),
            "label for a unit the set does not have: {l:?}"
        );
        assert!(
            booktr::qa::CHECK_ORDER.contains(&l.check.as_str()),
            "label for an unknown check: {l:?}"
        );
        assert!(
            !l.why.trim().is_empty(),
            "a label without its reason: {l:?}"
        );
    }
    let langs: BTreeSet<String> = labels.iter().map(|l| ml::lang_code(&l.lang)).collect();
    assert!(langs.len() >= 13, "{langs:?}");
    let faults = labels.iter().filter(|l| l.fault).count();
    assert!(
        faults > 0 && faults < labels.len(),
        "{faults} of {}",
        labels.len()
    );
}

/// Each kind of planted fault changes the text where its kind says, once.
#[test]
fn each_kind_of_planted_fault_changes_the_target_once() {
    let source = "## Counting\n\nCount the items with `len()` before you sort them. Then print 3 of them.\n\n- one\n- two\n\nSee [the guide](guide.md).\n\n```rust\nfn main() {\n    let items = vec![1, 2];\n    let n = items.len();\n    println!(\"{n}\");\n}\n```\n";
    let target = "## Zählen\n\nZähle die Elemente mit `len()`, bevor du sie sortierst. Gib dann 3 davon aus.\n\n- eins\n- zwei\n\nSiehe [die Anleitung](guide.md).\n\n```rust\nfn main() {\n    let items = vec![1, 2];\n    let n = items.len();\n    println!(\"{n}\");\n}\n```\n";
    let donor = "Ein ganz anderer Satz steht hier. Und noch einer folgt ihm.\n";
    let cases = [
        (
            Kind::ParagraphLeft,
            "Count the items with `len()` before you sort them.",
        ),
        (Kind::SentenceLeft, "Then print 3 of them."),
        (Kind::SentenceAdded, "Ein ganz anderer Satz steht hier."),
        (Kind::NumberChanged, "Gib dann 4 davon aus."),
        (Kind::InlineCodeAltered, "`lex()`"),
        (Kind::IdentifierRenamed, "items2"),
        (Kind::UrlChanged, "(guide.md-x)"),
        (Kind::HeadingLevel, "### Zählen"),
    ];
    for (kind, shows) in cases {
        let faulty = plant::plant(kind, source, target, "de", donor)
            .unwrap_or_else(|| panic!("{kind:?} found no place"));
        assert_ne!(faulty, target, "{kind:?}");
        assert!(faulty.contains(shows), "{kind:?}: {faulty}");
    }
    let deleted = plant::plant(Kind::SentenceDeleted, source, target, "de", donor).unwrap();
    assert!(!deleted.contains("Gib dann 3 davon aus."), "{deleted}");
    let dropped = plant::plant(Kind::ListItemDropped, source, target, "de", donor).unwrap();
    assert!(dropped.contains("- eins\n\nSiehe"), "{dropped}");
}
