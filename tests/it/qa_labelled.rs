//! The labelled set (`tests/fixtures/qa-labelled/`): every faulty pair gets an error naming the
//! right check, and no faithful pair gets an error. Precision and recall per check are printed
//! by `cargo bench --bench qa_labelled`.

use crate::labelled;

#[test]
fn every_bad_pair_is_caught_by_its_check_and_no_good_pair_gets_an_error() {
    let pairs = labelled::pairs();
    assert!(pairs.len() >= 60, "{} pairs", pairs.len());
    for lang in ["zh", "ja", "de", "fr", "ru"] {
        let mine: Vec<_> = pairs.iter().filter(|p| p.lang == lang).collect();
        assert!(mine.iter().any(|p| p.expected_check.is_none()), "{lang}");
        // The false alarms of the issue have faithful pairs in every language (an inflected
        // glossary term, a translated `alt`, a kept HTML comment, translated code comments
        // under `code_comments = "translate"`), beside faulty ones.
        assert!(
            mine.iter()
                .any(|p| p.expected_check.is_none() && !p.glossary.is_empty()),
            "{lang}"
        );
        for check in ["structure", "injected_text", "truncation"] {
            assert!(
                mine.iter()
                    .filter(|p| p.expected_check.as_deref() == Some(check))
                    .count()
                    >= 4,
                "{lang} {check}"
            );
        }
    }
    let (scores, wrong) = labelled::score(&pairs);
    assert!(
        wrong.is_empty(),
        "{} wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
    assert!(scores["structure"].tp >= 60, "{scores:?}");
    for check in ["glossary", "html", "code_blocks"] {
        assert!(scores[check].tp >= 5, "{check}: {scores:?}");
    }
}

#[test]
fn structural_findings_name_the_block() {
    let pairs = labelled::pairs();
    let merged = pairs
        .iter()
        .find(|p| p.id == "de-merged-paragraphs")
        .unwrap();
    let errs = labelled::errors(merged);
    assert!(
        errs.iter().any(|f| f.check == "structure"
            && f.message.starts_with("paragraph 2 of the source has no counterpart: merged into paragraph 1 of the translation?")),
        "{errs:#?}"
    );
    let cut = pairs
        .iter()
        .find(|p| p.id == "de-truncated-2-of-12-sentences")
        .unwrap();
    let errs = labelled::errors(cut);
    assert!(
        errs.iter()
            .any(|f| f.check == "truncation"
                && f.message.contains("12 sentences in the source but 2")),
        "{errs:#?}"
    );
}

/// The real part (`labelled::real`): every `untranslated` and `untranslated_word` error on the
/// recorded 1.5B answers is labelled, and on them the two checks reach the targets (recall at
/// least 0.95, precision at least 0.9). The sample and tiny books' answers need nothing else;
/// the corpus units need the corpus (skipped with the reason when it is absent).
#[test]
fn real_model_answers_left_in_english_are_found_with_their_targets_met() {
    use labelled::real;
    let mut units = real::recorded_sets();
    assert!(
        units.iter().any(|u| u.unit == "01-agents-000"),
        "the sample book's first answer (unlike聊天机器人) is paired with its unit: {:?}",
        units.iter().map(|u| &u.unit).collect::<Vec<_>>()
    );
    let mut sets = vec!["1.5b-sample", "1.5b-tiny"];
    match real::corpus_set() {
        Ok(c) => {
            assert!(c.len() >= 12, "{} corpus units", c.len());
            units.extend(c);
            sets.push("1.5b-corpus");
        }
        Err(e) => eprintln!("1.5b-corpus left out: {e}"),
    }
    let found = real::findings(&real::context(&units), &units);
    // The two words of the issue are errors with their spans.
    for word in ["unlike", "rehearse"] {
        assert!(
            found.iter().any(|f| f.unit == "01-agents-000"
                && f.finding.check == "untranslated_word"
                && f.finding.severity == booktr::qa::Severity::Error
                && f.at == word),
            "{word}: {found:#?}"
        );
    }
    let (scores, lines) = real::score(&found, &real::labels(), &sets);
    assert!(
        !lines.iter().any(|l| l.starts_with("unlabelled")),
        "label every error:\n{}",
        lines.join("\n")
    );
    for check in real::LABELLED {
        let s = scores.get(*check).copied().unwrap_or_default();
        assert!(s.tp >= 10, "{check}: {s:?}");
        assert!(
            s.recall() >= 0.95 && s.precision() >= 0.9,
            "{check}: {s:?}\n{}",
            lines.join("\n")
        );
    }
}

/// The human zh edition (the corpus's Chinese original against its English edition): every
/// `untranslated_word` finding, warning or error, is labelled by reading it, and the figures
/// are the ones recorded in validation/bench/qa_labelled.json. On the edition alone precision
/// is 0.894: it writes programs, system calls, fields and the identifiers of its examples in
/// Chinese sentences without code marks (`fork`, `git`, `triage`), which read as English words;
/// those no dictionary lists, those its code blocks use and those of the unit's own code are
/// passed. On the whole real part (the 1.5B answers and the edition) the targets are met:
/// precision at least 0.9, recall at least 0.95.
/// This test holds the measured floor, so that a change that adds false alarms shows.
#[booktr_test_needs::needs(corpus)]
#[test]
fn the_human_zh_edition_findings_are_all_labelled() {
    use labelled::real;
    if crate::support::corpus_dir().is_none() {
        return;
    }
    let units = real::human_set().expect("the corpus is there");
    let found = real::findings(&real::context(&units), &units);
    let (scores, lines) = real::score(&found, &real::labels(), &["human-zh"]);
    assert!(
        !lines.iter().any(|l| l.starts_with("unlabelled")),
        "label every finding:\n{}",
        lines.join("\n")
    );
    let s = scores.get("untranslated_word").copied().unwrap_or_default();
    eprintln!(
        "human zh edition, untranslated_word: {s:?}, precision {:.3}, error tier {:.3}",
        s.precision(),
        s.error_tp as f64 / (s.error_tp + s.error_fp).max(1) as f64
    );
    assert!(s.tp >= 400, "{s:?}");
    assert!(s.precision() >= 0.89, "{s:?}\n{}", lines.join("\n"));
    assert!(s.recall() >= 0.97, "{s:?}\n{}", lines.join("\n"));
    // The whole real part: the recorded 1.5B answers (the corpus ones included) and the edition.
    let mut all = real::recorded_sets();
    all.extend(real::corpus_set().expect("the corpus is there"));
    let mut found = real::findings(&real::context(&all), &all);
    found.extend(real::findings(&real::context(&units), &units));
    let sets = ["1.5b-sample", "1.5b-tiny", "1.5b-corpus", "human-zh"];
    let (scores, lines) = real::score(&found, &real::labels(), &sets);
    let s = scores.get("untranslated_word").copied().unwrap_or_default();
    assert!(s.tp >= 500, "{s:?}");
    assert!(
        s.precision() >= 0.9 && s.recall() >= 0.95,
        "real part: {s:?}, precision {:.3}, recall {:.3}\n{}",
        s.precision(),
        s.recall(),
        lines.join("\n")
    );
}
