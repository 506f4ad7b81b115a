//! The drift check (`term_drift`) on translations that render every word one way: a
//! dictionary-style word-for-word translation ([`support::word_for_word`]) of the sample book
//! and of the corpus' first two chapters must yield no drift finding, and the same translation
//! with two terms planted with a second rendering in every other unit must yield exactly those
//! two.

use crate::support;

use booktr::lang::Lang;
use booktr::qa::{self, QaContext, UnitText};
use booktr::termbase::Termbase;
use support::word_for_word;

/// (unit id, chapter, source) of every prose unit of the given chapters.
fn units(chapters: &[(String, String)], max_unit_chars: usize) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for (key, text) in chapters {
        for u in booktr::book::segment::segment(key, text, max_unit_chars) {
            if u.kind.needs_translation() {
                out.push((u.id.clone(), key.clone(), u.text(text).to_string()));
            }
        }
    }
    out
}

fn sample_chapters() -> Vec<(String, String)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("books/sample");
    ["01-agents", "02-tools", "03-memory"]
        .iter()
        .map(|k| {
            (
                k.to_string(),
                std::fs::read_to_string(dir.join(format!("{k}.md"))).unwrap(),
            )
        })
        .collect()
}

fn corpus_chapters() -> Option<Vec<(String, String)>> {
    let dir = support::corpus_dir()?.join("en");
    Some(
        ["chapter01", "chapter02"]
            .iter()
            .map(|k| {
                (
                    k.to_string(),
                    std::fs::read_to_string(dir.join(format!("{k}.md"))).unwrap(),
                )
            })
            .collect(),
    )
}

/// Runs the campaign QA over `units` translated by `translate(index, source)`; returns the
/// drifting rows' terms and the drift findings.
fn drift(
    units: &[(String, String, String)],
    translate: impl Fn(usize, &str) -> String,
) -> (Vec<String>, Vec<qa::Finding>) {
    drift_with(units, &Termbase::default(), translate)
}

/// [`drift`] with `tb` as the campaign's termbase.
fn drift_with(
    units: &[(String, String, String)],
    tb: &Termbase,
    translate: impl Fn(usize, &str) -> String,
) -> (Vec<String>, Vec<qa::Finding>) {
    let targets: Vec<String> = units
        .iter()
        .enumerate()
        .map(|(i, u)| translate(i, &u.2))
        .collect();
    let texts: Vec<UnitText> = units
        .iter()
        .zip(&targets)
        .map(|(u, t)| UnitText {
            unit: &u.0,
            chapter: &u.1,
            source: &u.2,
            target: Some(t),
        })
        .collect();
    let ctx = QaContext::new(&Lang::parse("en"), &Lang::parse("zh"), tb);
    let q = qa::check_campaign(&ctx, &texts, &[]);
    let rows: Vec<String> = q
        .drift
        .iter()
        .filter(|r| r.drifting)
        .map(|r| {
            let detail: Vec<String> = r
                .cells
                .iter()
                .map(|(k, v)| {
                    let first = &v[0];
                    let i = units.iter().position(|u| &u.0 == first).unwrap();
                    if std::env::var("DRIFT_DEBUG").is_ok() {
                        format!("{k} {v:?} src={:?} tgt={:?}", units[i].2, targets[i])
                    } else {
                        format!("{k}: {}", v.len())
                    }
                })
                .collect();
            format!("{} stat={:?} {detail:?}", r.term, r.statistical)
        })
        .collect();
    let findings: Vec<qa::Finding> = q
        .findings
        .into_iter()
        .filter(|f| f.check == qa::book::drift::CHECK)
        .collect();
    (rows, findings)
}

fn assert_consistent(chapters: &[(String, String)], max_unit_chars: usize) {
    let u = units(chapters, max_unit_chars);
    assert!(u.len() >= 10, "{} units", u.len());
    let (rows, findings) = drift(&u, |_, s| word_for_word::translate(s));
    assert!(rows.is_empty(), "{} drifting: {rows:#?}", rows.len());
    assert!(findings.is_empty(), "{findings:#?}");
}

#[test]
fn consistent_word_for_word_translation_has_no_drift() {
    assert_consistent(&sample_chapters(), 300);
}

#[booktr_test_needs::needs(corpus)]
#[test]
fn consistent_word_for_word_translation_of_the_corpus_has_no_drift() {
    let Some(ch) = corpus_chapters() else { return };
    assert_consistent(&ch, 2000);
}

/// Plants two drifts in the word-for-word translation: in every other unit whose source has
/// the term, its words get a competing rendering. Both terms must be found drifting, and
/// nothing else.
fn assert_planted_found(u: &[(String, String, String)], planted: [&str; 2]) {
    assert_planted_found_by(u, planted, &Termbase::default(), |s, planted, alt| {
        word_for_word::translate_planted(s, planted, alt)
    });
}

/// [`assert_planted_found`] with `translate(source, planted, alternate)` and termbase `tb`.
fn assert_planted_found_by(
    u: &[(String, String, String)],
    planted: [&str; 2],
    tb: &Termbase,
    translate: impl Fn(&str, &[&str], bool) -> String,
) {
    let mut seen = [0usize; 2];
    let alternate: Vec<bool> = u
        .iter()
        .map(|x| {
            let lower = x.2.to_lowercase();
            let mut alt = false;
            for (i, p) in planted.iter().enumerate() {
                if lower.contains(p) {
                    seen[i] += 1;
                    alt |= seen[i].is_multiple_of(2);
                }
            }
            alt
        })
        .collect();
    assert!(
        seen.iter().all(|&n| n >= 4),
        "{planted:?} occur in {seen:?} units"
    );
    let (rows, findings) = drift_with(u, tb, |i, s| translate(s, &planted, alternate[i]));
    let terms: Vec<String> = findings
        .iter()
        .map(|f| f.message.split('"').nth(1).unwrap_or("").to_lowercase())
        .collect();
    for p in planted {
        assert!(terms.iter().any(|t| t == p), "{p} not found: {rows:#?}");
    }
    // Nothing but the planted terms and the terms inside them or containing them.
    let related = |t: &str| planted.iter().any(|p| p.contains(t) || t.contains(p));
    let others: Vec<&String> = terms.iter().filter(|t| !related(t)).collect();
    assert!(others.is_empty(), "{others:?}: {rows:#?}");
}

/// The sample book is too small (16 units) for the statistical association, so the planted
/// test without the corpus runs on a generated book of 80 units.
#[test]
fn two_planted_drifts_are_both_found() {
    let u = word_for_word::synthetic_units(80, 7);
    let (rows, findings) = drift(&u, |_, s| word_for_word::translate(s));
    assert!(
        rows.is_empty() && findings.is_empty(),
        "consistent: {rows:#?}"
    );
    assert_planted_found(&u, ["tool call", "reward model"]);
}

#[booktr_test_needs::needs(corpus)]
#[test]
fn two_planted_drifts_are_both_found_in_the_corpus() {
    let Some(ch) = corpus_chapters() else { return };
    assert_planted_found(&units(&ch, 2000), ["context window", "system prompt"]);
}

/// A whole run against the fake server answering with the word-for-word translator (and a
/// Glossary agent proposing the same dictionary renderings): the translation is consistent,
/// so the run must send no revision and report no drift.
#[test]
fn consistent_run_sends_no_revision_and_reports_no_drift() {
    use booktr::agents::Agent;
    use support::fake_llm::{FakeServer, Reply};
    let fake = FakeServer::start();
    fake.script(|r| {
        if r.agent == Agent::Glossary
            && !r.all_text().contains("was rendered in different ways")
            && r.all_text().contains(booktr::agents::glossary::CANDIDATES_HEADER)
        {
            let req = booktr::llm::Request {
                task: r.agent.into(),
                messages: r.messages.clone(),
                json_schema: None,
                max_tokens: None,
                ceiling_tokens: None,
                prefill: None,
            };
            let entries: Vec<serde_json::Value> = booktr::agents::glossary::candidates_in(&req)
                .into_iter()
                .map(|t| {
                    serde_json::json!({"source": t, "target": word_for_word::translate(&t).trim(), "note": "dictionary"})
                })
                .collect();
            return Reply::Content(serde_json::json!({ "entries": entries }).to_string());
        }
        if r.agent == Agent::Translation && !r.is_revision() {
            return Reply::Content(word_for_word::translate(r.unit_text().unwrap_or("")));
        }
        Reply::Default
    });
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("books/sample");
    let chapters: Vec<String> = ["01-agents.md", "02-tools.md", "03-memory.md"]
        .iter()
        .map(|c| dir.join(c).display().to_string())
        .collect();
    let refs: Vec<&str> = chapters.iter().map(String::as_str).collect();
    let c = support::TestCampaign::with_chapters(
        "w",
        &refs,
        "max_unit_chars = 300\nrevision_rounds = 2\n[provider]\nkind = \"openai\"\nmodel = \"m\"\n",
    );
    let out = c
        .cmd("run", &["--base-url", &fake.base_url, "--json"])
        .env("OPENAI_API_KEY", "sk-booktr-w4w-KEY-22bb")
        .output()
        .unwrap();
    let s = support::json_summary(&out);
    let translations = fake.count(Agent::Translation);
    let revisions = fake.requests().iter().filter(|r| r.is_revision()).count();
    let report: serde_json::Value =
        serde_json::from_str(&c.read("w/validation/report.json")).unwrap();
    assert!(
        translations >= 10,
        "{translations} translation requests; {s}"
    );
    assert_eq!(revisions, 0, "revision requests; {s}\n{}", report["units"]);
    assert_eq!(
        report["drift"].as_array().map(Vec::len),
        Some(0),
        "{}",
        report["drift"]
    );
    assert!(
        !report["glossary"].as_array().unwrap().is_empty(),
        "the dictionary glossary entered the termbase"
    );
    assert_eq!(report["summary"]["units"]["failed"], 0, "{s}");
}

/// The pseudo provider's rehearsal translation is consistent too (one pseudo-word per source
/// word): no drift on the sample book or the corpus' first two chapters.
#[test]
fn consistent_pseudo_translation_has_no_drift() {
    let zh = Lang::parse("zh");
    let pseudo = |_: usize, s: &str| booktr::llm::pseudo::pseudo_translate(s, &zh, &[]);
    let mut books = vec![units(&sample_chapters(), 300)];
    if let Some(ch) = corpus_chapters() {
        books.push(units(&ch, 2000));
    }
    for u in books {
        let (rows, findings) = drift(&u, pseudo);
        assert!(rows.is_empty(), "{} drifting: {rows:#?}", rows.len());
        assert!(findings.is_empty(), "{findings:#?}");
    }
}

/// The pseudo-Chinese case ([`pseudo_chinese_corpus`]).
struct PseudoChinese {
    /// (unit id, chapter, source).
    units: Vec<(String, String, String)>,
    dict: word_for_word::Dictionary,
    /// (source, target) pairs the prompts carry.
    glossary: Vec<(String, String)>,
}

/// The house-style glossary (`glossaries/house-style.en-zh.csv`) as (source, target) pairs.
fn house_style() -> Vec<(String, String)> {
    let csv = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("glossaries/house-style.en-zh.csv"),
    )
    .unwrap();
    csv.lines()
        .skip(1)
        .filter_map(|l| {
            let mut f = l.split(',');
            Some((f.next()?.to_string(), f.next()?.to_string()))
        })
        .collect()
}

/// The pseudo-Chinese case on the corpus' chapters 1–2: every English word has one
/// rendering, a real Chinese word ([`word_for_word::Dictionary`] over the corpus' zh edition),
/// written without spaces and articles, and the glossary the prompts carry is followed: the
/// house style and, as a Glossary agent would propose them, the 200 most frequent term
/// candidates, their multi-word ones with a coined word of their own (not the words' renderings
/// joined). Returns the units, the dictionary and the glossary.
fn pseudo_chinese_corpus() -> Option<PseudoChinese> {
    let ch = corpus_chapters()?;
    let u = units(&ch, 2000);
    let zh_dir = support::corpus_dir()?.join("zh");
    // The whole zh edition: chapters 1–2 alone have fewer words than the English lemmas.
    let mut reference = String::new();
    for e in std::fs::read_dir(&zh_dir).unwrap() {
        reference.push_str(&std::fs::read_to_string(e.unwrap().path()).unwrap());
    }
    let mut glossary = house_style();
    let avoid: Vec<String> = glossary.iter().map(|g| g.1.clone()).collect();
    let avoid: Vec<&str> = avoid.iter().map(String::as_str).collect();
    let sources: Vec<&str> = u.iter().map(|x| x.2.as_str()).collect();
    let dict = word_for_word::Dictionary::new(&sources, &reference, &avoid);
    let mut coined = 0;
    for c in booktr::termbase::candidates::candidates(&sources, &Termbase::default(), 200) {
        if glossary.iter().any(|g| g.0.eq_ignore_ascii_case(&c.term)) {
            continue;
        }
        let target = if c.term.split_whitespace().count() >= 2 {
            coined += 1;
            dict.coined(coined)?.to_string()
        } else {
            word_for_word::translate_inner(&c.term, &[], &[], false, Some(&dict))
                .trim()
                .to_string()
        };
        glossary.push((c.term, target));
    }
    Some(PseudoChinese {
        units: u,
        dict,
        glossary,
    })
}

fn termbase_of(glossary: &[(String, String)]) -> Termbase {
    Termbase::from_entries(glossary.iter().map(|(s, t)| booktr::termbase::Entry {
        source: s.clone(),
        target: t.clone(),
        note: String::new(),
        origin: booktr::termbase::Origin::Agent,
        forbidden: Vec::new(),
        variants: Vec::new(),
    }))
}

/// The failure: a consistent pseudo-Chinese translation of the corpus' chapters 1–2
/// was reported drifting (5 terms on 06d7853 with no termbase, as `validate --source --target`
/// checks it: `Harness` rendered 未能 in 9 units, 任务和工具 in 6, …, each the word of a
/// neighbour found by character n-grams). Now no term drifts, whether QA knows the glossary
/// or not.
#[booktr_test_needs::needs(corpus)]
#[test]
fn a_consistent_pseudo_chinese_translation_was_reported_drifting() {
    let Some(PseudoChinese {
        units: u,
        dict,
        glossary,
    }) = pseudo_chinese_corpus()
    else {
        return;
    };
    assert!(glossary.len() > 100, "{} glossary entries", glossary.len());
    let translate =
        |_: usize, s: &str| word_for_word::translate_inner(s, &glossary, &[], false, Some(&dict));
    for tb in [Termbase::default(), termbase_of(&glossary)] {
        let (rows, findings) = drift_with(&u, &tb, translate);
        assert!(rows.is_empty(), "{} drifting: {rows:#?}", rows.len());
        assert!(findings.is_empty(), "{findings:#?}");
    }
}

/// Recall on the same translation: two terms planted with a second real word in every other
/// unit that has them are both found, and nothing else.
#[booktr_test_needs::needs(corpus)]
#[test]
fn two_planted_drifts_are_both_found_in_the_pseudo_chinese_corpus() {
    let Some(PseudoChinese { units: u, dict, .. }) = pseudo_chinese_corpus() else {
        return;
    };
    let house = house_style();
    assert_planted_found_by(
        &u,
        ["context engineering", "system prompt"],
        &Termbase::default(),
        |s, planted, alt| word_for_word::translate_inner(s, &house, planted, alt, Some(&dict)),
    );
}
