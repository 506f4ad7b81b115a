//! Structural QA faults a new user found with `booktr validate` (front matter, a list cut by a
//! fence, a badge taken for a callout) and the false alarms of the reference corpus's zh
//! edition validated against its en edition (a docstring, a footnote reference before a
//! full-width colon, a reference entry ending in a URL, a three-way paragraph merge). Each is
//! shown on a small hand-written pair; the corpus ones also on the real unit, paired as
//! `validate` pairs it (skipped with a printed reason without the corpus).

use std::path::Path;

use booktr::book::{Chapter, align};
use booktr::lang::Lang;
use booktr::qa::unit::code_comments::CodeComments;
use booktr::qa::{self, Finding, QaContext, Severity};
use booktr::termbase::Termbase;

use crate::support::{self, json_summary};

/// `booktr validate` of one English chapter against one German translation: (exit code, every
/// finding of the report).
fn validate(source: &str, target: &str) -> (i32, Vec<serde_json::Value>) {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("en.md"), source).unwrap();
    std::fs::write(d.path().join("de.md"), target).unwrap();
    validate_in(d.path(), "en.md", "de.md")
}

/// `booktr validate --source source --target target` (English against German) run in `dir`:
/// (exit code, every finding of the report), the summary's error count checked against it.
fn validate_in(dir: &Path, source: &str, target: &str) -> (i32, Vec<serde_json::Value>) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_booktr"))
        .current_dir(dir)
        .args([
            "validate",
            "--source",
            source,
            "--target",
            target,
            "--source-lang",
            "en",
            "--target-lang",
            "de",
            "--json",
            "--report-dir",
            "r",
        ])
        .output()
        .unwrap();
    let summary = json_summary(&out);
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("r/report.json")).unwrap()).unwrap();
    let findings: Vec<serde_json::Value> = report["units"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|u| u["findings"].as_array().unwrap().clone())
        .collect();
    assert_eq!(
        summary["errors"].as_u64().unwrap() as usize,
        findings.iter().filter(|f| f["severity"] == "error").count(),
        "{summary}"
    );
    (out.status.code().unwrap(), findings)
}

const CHAPTER: &str = "---\ntitle: \"Tool calls\"\nslug: tool-calls\ncategories:\n  - agents\n  - tools\ntags: [agents]\n---\n\n# Tool calls\n\nAn agent calls a tool by writing a request.\n";
const KAPITEL: &str = "---\ntitle: \"Werkzeugaufrufe\"\nslug: tool-calls\ncategories:\n  - agents\n  - tools\ntags: [agents]\n---\n\n# Werkzeugaufrufe\n\nEin Agent ruft ein Werkzeug auf, indem er eine Anfrage schreibt.\n";

#[test]
fn validate_passes_a_faithful_front_matter() {
    let (code, findings) = validate(CHAPTER, KAPITEL);
    assert_eq!(code, 0, "{findings:#?}");
}

#[test]
fn a_key_joined_onto_the_previous_translated_value_was_not_reported() {
    let t = KAPITEL.replace(
        "title: \"Werkzeugaufrufe\"\nslug: tool-calls",
        "title: Werkzeugaufrufe slug: tool-calls",
    );
    let (code, findings) = validate(CHAPTER, &t);
    assert_eq!(code, 1);
    assert_eq!(findings.len(), 1, "{findings:#?}");
    let f = &findings[0];
    assert_eq!(f["check"], "structure");
    assert_eq!(f["severity"], "error");
    assert_eq!(f["unit"], "en-000");
    let m = f["message"].as_str().unwrap();
    assert!(
        m.contains("not valid YAML (line 1, column 28")
            && m.contains("the key `slug` follows another value on line 1"),
        "{m}"
    );
    // The span is the broken line, in chars of the unit's text (the front matter unit).
    let span = (
        f["span"][0].as_u64().unwrap() as usize,
        f["span"][1].as_u64().unwrap() as usize,
    );
    let line: String = t.chars().skip(span.0).take(span.1 - span.0).collect();
    assert_eq!(line, "title: Werkzeugaufrufe slug: tool-calls");
}

#[test]
fn translated_list_values_of_a_key_that_is_not_prose_were_not_reported() {
    let t = KAPITEL.replace("  - agents\n  - tools", "  - Agenten\n  - Werkzeuge");
    let (code, findings) = validate(CHAPTER, &t);
    assert_eq!(code, 1);
    assert_eq!(findings.len(), 1, "{findings:#?}");
    assert!(
        findings[0]["message"].as_str().unwrap().starts_with(
            "front matter list `categories` changed: item 1 is `agents` in the source but `Agenten` in the translation"
        ),
        "{findings:#?}"
    );
}

#[test]
fn a_fence_moved_out_of_its_list_item_left_the_run_complete() {
    let src = "# Setup\n\n1. Install the package:\n\n   ```bash\n   pip install booktr\n   ```\n\n2. Run it on a chapter.\n3. Read the report.\n";
    let tgt = "# Einrichtung\n\n1. Installieren Sie das Paket:\n\n```bash\npip install booktr\n```\n\n2. Führen Sie es auf einem Kapitel aus.\n3. Lesen Sie den Bericht.\n";
    let (code, findings) = validate(src, tgt);
    assert_eq!(code, 1, "{findings:#?}");
    let errors: Vec<&serde_json::Value> = findings
        .iter()
        .filter(|f| f["severity"] == "error")
        .collect();
    assert_eq!(errors.len(), 1, "{findings:#?}");
    assert_eq!(errors[0]["check"], "structure");
    assert!(
        errors[0]["message"]
            .as_str()
            .unwrap()
            .contains("which cuts the ordered list in two (its second part starts at 2)"),
        "{errors:#?}"
    );
    assert!(errors[0]["span"].is_array(), "{errors:#?}");
}

#[test]
fn a_linked_badge_at_the_start_of_a_paragraph_is_not_an_admonition_marker() {
    let src = "# Booktr\n\n[![Build status](https://ci.example/badge.svg)](https://ci.example/run) The tool translates books.\n";
    let tgt = "# Booktr\n\n[![Build-Status](https://ci.example/badge.svg)](https://ci.example/run) Das Werkzeug übersetzt Bücher.\n";
    let (code, findings) = validate(src, tgt);
    assert_eq!(code, 0, "{findings:#?}");
}

/// The errors of one check on unit `unit` of the corpus's zh edition validated against its en
/// edition, paired as `booktr validate` pairs them (default unit size 4,000 chars).
fn corpus_unit_errors(
    corpus: &Path,
    chapter: &str,
    unit: &str,
    check: &str,
    comments: CodeComments,
) -> (Vec<Finding>, String, String) {
    let en = std::fs::read(corpus.join("en").join(format!("{chapter}.md"))).unwrap();
    let zh = std::fs::read_to_string(corpus.join("zh").join(format!("{chapter}.md"))).unwrap();
    let ch = Chapter::from_bytes(&format!("{chapter}.md"), en).unwrap();
    let pairing = align::pair(&ch.key, &ch.text, &zh, 4000);
    let id = format!("{chapter}-{unit}");
    let (u, range) = pairing
        .pairs
        .iter()
        .find(|(u, _)| u.id == id)
        .unwrap_or_else(|| panic!("no unit {id}"));
    let mut ctx = QaContext::new(&Lang::parse("en"), &Lang::parse("zh"), &Termbase::default());
    ctx.code_comments = comments;
    let (s, t) = (u.text(&ch.text).to_string(), zh[range.clone()].to_string());
    let errors = qa::check_unit(&ctx, &id, chapter, &s, &t)
        .into_iter()
        .filter(|f| f.severity == Severity::Error && f.check == check)
        .collect();
    (errors, s, t)
}

#[test]
#[booktr_test_needs::needs(corpus)]
fn corpus_units_of_the_zh_edition_raise_none_of_the_old_false_alarms() {
    let Some(corpus) = support::corpus_dir() else {
        return;
    };
    // A docstring translated under code_comments = "translate".
    let (e, s, _) = corpus_unit_errors(
        &corpus,
        "chapter05",
        "028",
        "code_blocks",
        CodeComments::Translate,
    );
    assert!(s.contains("\"\"\""), "the unit has its docstring");
    assert_eq!(e, vec![], "chapter05-028");
    // The same unit under `keep` still reports the translated docstring and comments.
    let (e, _, _) = corpus_unit_errors(
        &corpus,
        "chapter05",
        "028",
        "code_blocks",
        CodeComments::Keep,
    );
    assert_eq!(e.len(), 1, "{e:#?}");
    // `[^ch7-8]：` inside a zh sentence is the reference.
    let (e, _, t) = corpus_unit_errors(
        &corpus,
        "chapter07",
        "010",
        "footnotes",
        CodeComments::Translate,
    );
    assert!(
        t.contains("[^ch7-8]："),
        "the unit has the reference before a full-width colon"
    );
    assert_eq!(e, vec![], "chapter07-010");
    // The last reference entry is compared with its own counterpart, and a URL ends no
    // sentence early.
    let (e, _, _) = corpus_unit_errors(
        &corpus,
        "chapter08",
        "003",
        "truncation",
        CodeComments::Translate,
    );
    assert_eq!(e, vec![], "chapter08-003");
}

#[test]
#[booktr_test_needs::needs(corpus)]
fn corpus_units_merged_three_paragraphs_into_one_and_the_message_says_so() {
    let Some(corpus) = support::corpus_dir() else {
        return;
    };
    for (chapter, unit, want) in [
        (
            "chapter03",
            "002",
            "paragraph 43 and paragraph 44 of the source have no counterpart: merged with paragraph 42 into paragraph 42 of the translation?",
        ),
        (
            "chapter09",
            "004",
            "paragraph 8 and paragraph 9 of the source have no counterpart: merged with paragraph 7 into paragraph 7 of the translation?",
        ),
    ] {
        let (e, _, _) =
            corpus_unit_errors(&corpus, chapter, unit, "structure", CodeComments::Translate);
        let messages: Vec<&str> = e.iter().map(|f| f.message.as_str()).collect();
        assert_eq!(messages.len(), 1, "{chapter}-{unit}: {messages:#?}");
        assert!(
            messages[0].starts_with(want),
            "{chapter}-{unit}: {messages:#?}"
        );
    }
}

/// A Docusaurus docs folder nests its pages in subfolders and writes them as `.mdx`: `validate`
/// reads them all, pairs each with the page at the same path in the translation, keeps two
/// pages of the same name apart, and reports a page the translation lacks.
#[test]
fn validate_reads_a_nested_folder_of_mdx_pages() {
    let d = tempfile::tempdir().unwrap();
    let page = |root: &str, rel: &str, text: &str| {
        let p = d.path().join(root).join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    page("en", "intro.mdx", "# Intro\n\nAn agent calls a tool.\n");
    page(
        "en",
        "concepts/index.mdx",
        "# Concepts\n\nThe loop runs 3 times.\n",
    );
    page(
        "en",
        "guides/index.md",
        "# Guides\n\nRead the report first.\n",
    );
    page(
        "de",
        "intro.mdx",
        "# Einführung\n\nEin Agent ruft ein Werkzeug auf.\n",
    );
    page(
        "de",
        "concepts/index.mdx",
        "# Konzepte\n\nDie Schleife läuft 4 Mal.\n",
    );
    let (code, findings) = validate_in(d.path(), "en", "de");
    assert_eq!(code, 1, "{findings:#?}");
    let errors: Vec<(String, String)> = findings
        .iter()
        .filter(|f| f["severity"] == "error")
        .map(|f| {
            (
                f["check"].as_str().unwrap().to_string(),
                f["chapter"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    // The changed number in concepts/index.mdx, and guides/index.md missing from the translation.
    assert!(
        errors.contains(&("numbers".into(), "concepts-index".into())),
        "{errors:?}"
    );
    assert!(
        errors
            .iter()
            .any(|(c, ch)| c == "completeness" && ch == "guides-index"),
        "{errors:?}"
    );
    assert!(!errors.iter().any(|(_, ch)| ch == "intro"), "{errors:?}");
}
