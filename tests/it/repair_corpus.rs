//! Deterministic repair (issue 18) on real-model translations of the corpus's chapters 1–2:
//! the answers recorded in `tests/fixtures/real-llm/corpus-ch01-02.jsonl` (by
//! `tests/it/record_corpus.rs`) replayed through per-unit QA, `repair::repair` and QA again
//! ([`corpus_replay::replay`], the same replay as `cargo bench --bench repair`). Needs the
//! corpus (`#[needs(corpus)]`): the fixture stores no source text, only unit ids and sha256.

use crate::support;

use booktr::config::Overrides;
use support::corpus_replay::{self, Record};

/// The recorded answers and the campaign they were recorded from, or `None` (with a printed
/// reason) without the corpus.
fn recorded() -> Option<(booktr::campaign::Campaign, Vec<Record>)> {
    support::corpus_dir()?;
    let records = corpus_replay::load_records(&corpus_replay::fixture_file())
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(!records.is_empty(), "no recorded answers");
    let c = corpus_replay::campaign(records[0].settings.max_unit_chars, &Overrides::default())
        .unwrap_or_else(|e| panic!("{e}"));
    Some((c, records))
}

/// Repair never makes a unit worse (no unit gains error findings of any check), never adds a
/// mechanical error, and removes some when there are any: the real counts are printed.
#[booktr_test_needs::needs(corpus)]
#[test]
fn repair_reduces_mechanical_errors_of_recorded_answers() {
    let Some((c, records)) = recorded() else {
        return;
    };
    let r = corpus_replay::replay(&c, &records);
    assert!(
        r.not_replayed.is_empty(),
        "recorded units not replayed (re-record, see tests/it/record_corpus.rs): {:?}",
        r.not_replayed
    );
    assert_eq!(r.units.len(), records.len());
    for u in &r.units {
        eprintln!(
            "{}: errors {} -> {}, mechanical {:?} -> {:?}, repairs {:?}, skipped {:?}",
            u.unit,
            u.errors_before,
            u.errors_after,
            u.mechanical_before,
            u.mechanical_after,
            u.repairs,
            u.skipped
        );
        assert!(
            u.errors_after <= u.errors_before,
            "{}: repair made it worse: {} error findings before, {} after",
            u.unit,
            u.errors_before,
            u.errors_after
        );
        assert!(
            u.mech_after() <= u.mech_before(),
            "{}: mechanical errors rose: {:?} -> {:?}",
            u.unit,
            u.mechanical_before,
            u.mechanical_after
        );
    }
    let before: usize = r.units.iter().map(|u| u.mech_before()).sum();
    let after: usize = r.units.iter().map(|u| u.mech_after()).sum();
    eprintln!(
        "mechanical errors over {} units: {before} before, {after} after; repairs {:?}",
        r.units.len(),
        r.repairs()
    );
    if before > 0 {
        assert!(
            after < before,
            "repair removed no mechanical error: {before} before, {after} after"
        );
    }
    assert!(r.worse().is_empty());
}

/// A recorded unit whose source changed since the recording is reported, never replayed
/// against the new text.
#[booktr_test_needs::needs(corpus)]
#[test]
fn changed_source_is_reported_not_replayed() {
    let Some((c, mut records)) = recorded() else {
        return;
    };
    records.truncate(1);
    records[0].source_sha256 = "0".repeat(64);
    let r = corpus_replay::replay(&c, &records);
    assert!(r.units.is_empty());
    assert_eq!(r.not_replayed.len(), 1);
    assert!(
        r.not_replayed[0].contains("the source changed since the recording"),
        "{:?}",
        r.not_replayed
    );
}

/// The fixture names the model by file name only and holds no source text (the answers are
/// translations; the sources are referenced by unit id and sha256).
#[test]
fn fixture_has_no_machine_paths() {
    let records = corpus_replay::load_records(&corpus_replay::fixture_file())
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(!records.is_empty());
    for r in &records {
        assert!(
            !r.model.contains('/') && !r.model.contains('\\'),
            "{}: model {:?}",
            r.unit,
            r.model
        );
        assert_eq!(r.source_sha256.len(), 64, "{}", r.unit);
        assert!(
            r.unit.starts_with(&r.chapter),
            "{} in {}",
            r.unit,
            r.chapter
        );
    }
}
