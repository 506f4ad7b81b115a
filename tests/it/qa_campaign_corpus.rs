//! Campaign-level QA on the real corpus (`../shared/corpus/ai-agent-book`, skipped when absent):
//! speed on the whole English book validated against itself, and behaviour on the Chinese
//! original paired with its English edition section by section (a real human translation).

use std::path::{Path, PathBuf};
use std::time::Instant;

use booktr::book::segment::{BlockKind, DEFAULT_MAX_UNIT_CHARS, segment, top_level_blocks};
use booktr::lang::Lang;
use booktr::qa::{ChapterText, QaContext, Severity, UnitText, check_campaign};
use booktr::termbase::{Entry, Origin, Termbase};

fn corpus_dir() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/ai-agent-book");
    if p.join("en").is_dir() {
        Some(p)
    } else {
        crate::support::corpus_missing(&p);
        eprintln!("skipped: no corpus at {}", p.display());
        None
    }
}

fn chapters(dir: &Path) -> Vec<(String, String)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            (
                p.file_stem().unwrap().to_string_lossy().into_owned(),
                std::fs::read_to_string(&p).unwrap(),
            )
        })
        .collect()
}

/// The whole English book (about 1.2 MB, 12,000-character units) validated against itself, as
/// an en→zh campaign whose every unit is echoed: must take well under 5 s in release mode.
#[booktr_test_needs::needs(corpus)]
#[test]
fn whole_english_book_against_itself_is_fast() {
    let Some(corpus) = corpus_dir() else { return };
    let chs = chapters(&corpus.join("en"));
    let mut ids = Vec::new();
    let mut texts: Vec<(String, &str)> = Vec::new();
    for (key, text) in &chs {
        for u in segment(key, text, DEFAULT_MAX_UNIT_CHARS) {
            ids.push(u.id.clone());
            texts.push((key.clone(), &text[u.range.clone()]));
        }
    }
    let units: Vec<UnitText> = ids
        .iter()
        .zip(&texts)
        .map(|(id, (ch, t))| UnitText {
            unit: id,
            chapter: ch,
            source: t,
            target: Some(t),
        })
        .collect();
    let outputs: Vec<ChapterText> = chs
        .iter()
        .map(|(k, t)| ChapterText {
            chapter: k,
            output: Some(t),
        })
        .collect();
    let tb = Termbase::from_entries([Entry {
        source: "Agent".into(),
        target: "智能体".into(),
        note: String::new(),
        origin: Origin::HouseStyle,
        forbidden: vec!["代理".into()],
        variants: Vec::new(),
    }]);
    for target in ["zh", "en"] {
        let ctx = QaContext::new(&Lang::parse("en"), &Lang::parse(target), &tb);
        let t0 = Instant::now();
        let qa = check_campaign(&ctx, &units, &outputs);
        let took = t0.elapsed();
        eprintln!(
            "en→{target}: {} units, {} bytes: {:?}, {} findings, {} drift rows",
            units.len(),
            chs.iter().map(|c| c.1.len()).sum::<usize>(),
            took,
            qa.findings.len(),
            qa.drift.len()
        );
        assert!(units.len() > 100);
        assert!(qa.findings.iter().all(|f| f.check != "completeness"));
        if target == "en" {
            // Identical texts: no length outlier, no drift.
            assert!(
                qa.findings.iter().all(|f| f.severity != Severity::Error),
                "{:?}",
                qa.findings.iter().find(|f| f.severity == Severity::Error)
            );
        }
        if !cfg!(debug_assertions) {
            assert!(took.as_secs_f64() < 2.5, "took {took:?}");
        }
    }
}

/// Splits a chapter at its headings (top-level heading blocks).
fn sections(text: &str) -> Vec<&str> {
    let starts: Vec<usize> = top_level_blocks(text)
        .iter()
        .filter(|b| b.kind == BlockKind::Heading)
        .map(|b| b.range.start)
        .collect();
    let mut out = Vec::new();
    let mut prev = 0;
    for s in starts.into_iter().chain([text.len()]) {
        if s > prev {
            out.push(&text[prev..s]);
        }
        prev = s;
    }
    out
}

/// The Chinese original paired with its English edition, section by section, as an en→zh
/// campaign: a consistent human translation. Prints the norms and drift table; asserts that
/// nothing is reported as untranslated, truncated or incomplete.
#[booktr_test_needs::needs(corpus)]
#[test]
fn human_translation_sections() {
    let Some(corpus) = corpus_dir() else { return };
    let en = chapters(&corpus.join("en"));
    let zh = chapters(&corpus.join("zh"));
    let mut rows: Vec<(String, String, String, String)> = Vec::new();
    for (key, en_text) in &en {
        let Some((_, zh_text)) = zh.iter().find(|(k, _)| k == key) else {
            continue;
        };
        let (a, b) = (sections(en_text), sections(zh_text));
        if a.len() != b.len() {
            eprintln!("{key}: {} en sections, {} zh: skipped", a.len(), b.len());
            continue;
        }
        for (i, (s, t)) in a.iter().zip(&b).enumerate() {
            rows.push((
                format!("{key}-{i:03}"),
                key.clone(),
                s.to_string(),
                t.to_string(),
            ));
        }
    }
    let units: Vec<UnitText> = rows
        .iter()
        .map(|(id, ch, s, t)| UnitText {
            unit: id,
            chapter: ch,
            source: s,
            target: Some(t),
        })
        .collect();
    // The zh house style (NOTICE.md): "Agent" kept, 提示词 for prompt, 上下文 for context.
    let e = |s: &str, t: &str| Entry {
        source: s.into(),
        target: t.into(),
        note: String::new(),
        origin: Origin::HouseStyle,
        forbidden: Vec::new(),
        variants: Vec::new(),
    };
    let tb = Termbase::from_entries([
        e("Agent", "Agent"),
        e("prompt", "提示词"),
        e("context", "上下文"),
        e("latency", "延迟"),
    ]);
    let ctx = QaContext::new(&Lang::parse("en"), &Lang::parse("zh"), &tb);
    let t0 = Instant::now();
    let qa = check_campaign(&ctx, &units, &[]);
    eprintln!("{} section pairs: {:?}", units.len(), t0.elapsed());
    eprintln!(
        "length: {:?} median {:?} mad {:?}; share median {:?}",
        qa.norms.length.basis,
        qa.norms.length.median,
        qa.norms.length.mad,
        qa.norms.script_share.median
    );
    let mut ratios: Vec<f64> = qa.norms.length.ratios.iter().map(|r| r.ratio).collect();
    ratios.sort_by(f64::total_cmp);
    if !ratios.is_empty() {
        let q = |p: f64| ratios[((ratios.len() - 1) as f64 * p).round() as usize];
        eprintln!(
            "ratio quartiles {:.3} {:.3} {:.3}",
            q(0.25),
            q(0.5),
            q(0.75)
        );
    }
    for f in &qa.findings {
        eprintln!("{:?} {} {}: {}", f.severity, f.check, f.unit, f.message);
    }
    for r in qa.drift.iter().take(40) {
        let cells: Vec<String> = r
            .cells
            .iter()
            .map(|(k, v)| format!("{k}×{}", v.len()))
            .collect();
        eprintln!(
            "{} {} {:?} [{}]",
            if r.drifting { "DRIFT" } else { "     " },
            r.term,
            r.suggested,
            cells.join(" ")
        );
    }
    eprintln!("{} review terms", qa.review_terms.len());
    for t in qa.review_terms.iter().take(30) {
        eprintln!("  {:?} {} ({}) {}", t.term, t.rendering, t.unit, t.context);
    }
    for a in &qa.adherence {
        eprintln!("{a:?}");
    }
    assert!(units.len() > 200);
    assert!(!qa.findings.iter().any(|f| f.check == "completeness"));
    // One known `untranslated` error: the chapter 7 summary, whose footnotes cite English titles
    // (41% Han letters against a median of 84%). No `length_ratio` error: the human translation
    // has no truncated section.
    let untranslated: Vec<&str> = qa
        .findings
        .iter()
        .filter(|f| f.check == "untranslated")
        .map(|f| f.unit.as_str())
        .collect();
    assert_eq!(untranslated, vec!["chapter07-028"]);
    assert!(
        !qa.findings
            .iter()
            .any(|f| f.check == "length_ratio" && f.severity == Severity::Error)
    );
    // The English edition calls it "context window" and the Chinese 上下文窗口: found by
    // association, extended past the 4-character n-gram.
    let row = qa
        .drift
        .iter()
        .find(|r| r.term == "context window")
        .unwrap();
    assert_eq!(row.suggested.as_deref(), Some("上下文窗口"), "{row:?}");
}
