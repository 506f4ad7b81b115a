//! The house-style lint (`style_*`, issue 17) on the human Chinese edition of the reference
//! corpus, read as a translation of the English edition. A professionally edited book follows
//! a house style, so nearly everything the lint reports there is a false positive: the test
//! prints every finding and bounds their number (see the bounds for why each is what it is).
//! Skipped, with the reason printed, when the corpus is absent.

use std::collections::BTreeMap;

use booktr::config::Style;
use booktr::lang::Lang;
use booktr::qa::unit::style;

use crate::support::corpus_dir;

#[booktr_test_needs::needs(corpus)]
#[test]
fn house_style_lint_on_the_human_chinese_edition_finds_little() {
    let Some(corpus) = corpus_dir() else {
        return;
    };
    let zh = Lang::parse("zh");
    let rules = Style::for_target(&zh);
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    let mut chars = 0usize;
    let mut chapters = 0;
    for entry in std::fs::read_dir(corpus.join("zh")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "md") {
            continue;
        }
        let name = path.file_name().unwrap().to_owned();
        let target = std::fs::read_to_string(&path).unwrap();
        let source = std::fs::read_to_string(corpus.join("en").join(&name)).unwrap_or_default();
        let tchars: Vec<char> = target.chars().collect();
        chars += tchars.len();
        chapters += 1;
        for h in style::lint(&rules, &zh, &source, &target) {
            *counts.entry(h.check).or_default() += 1;
            let from = h.start.saturating_sub(12);
            let to = (h.end + 12).min(tchars.len());
            let around: String = tchars[from..to]
                .iter()
                .collect::<String>()
                .replace('\n', "⏎");
            let what: String = tchars[h.start..h.end].iter().collect();
            println!(
                "{} {}:{}..{} {what:?} in {around:?}: {}",
                h.check,
                name.to_string_lossy(),
                h.start,
                h.end,
                h.message
            );
        }
    }
    println!("{chapters} chapters, {chars} chars: {counts:?}");
    assert!(chapters >= 10, "the zh edition has ten chapters");
    let n = |check: &str| counts.get(check).copied().unwrap_or(0);
    let total: usize = counts.values().sum();
    // Every finding printed at the time of writing (49 in 434,132 chars) was read and is a
    // real deviation from the house style the book itself follows: 18 straight or corner
    // quotes, half-width commas inside Chinese tuples (`（北京, 是首都, 中国）`), `...` for
    // `……`, citation dots after Chinese text, `双X架构`, `mlflow`/`sympy`/`numpy`/`ArXiv`
    // for the source's `MLflow`/`SymPy`/`NumPy`/`arXiv`. The bounds leave about 20 % room
    // for edits of the corpus; a new class of false positive breaks them (the one fixed while
    // writing this test, dots of bold list numbers such as `**1. 并行启动**`, added 11, and
    // figure labels such as `图1-1`, which the spacing rule exempts, would add 200).
    assert!(
        total <= 60,
        "{total} findings on a house-styled book: {counts:?}"
    );
    assert!(n(style::CJK_LATIN_SPACE) <= 10, "{counts:?}");
    assert!(n(style::CJK_PUNCTUATION) <= 35, "{counts:?}");
    assert!(n(style::TERM_CASING) <= 10, "{counts:?}");
    assert!(n(style::QUOTES) <= 25, "{counts:?}");
    assert_eq!(
        n(style::NUMBER_FORMAT),
        0,
        "the book writes 1,234.5: {counts:?}"
    );
    // And the lint is not blind: the edition's straight quotes in Chinese sentences (a grep
    // finds 16 such `"` beside Chinese text) are found.
    assert!(n(style::QUOTES) >= 16, "{counts:?}");
}

/// A rehearsal's pseudo-translation of the corpus, set in the house style's typography (the
/// `pseudo` provider of a zh campaign), leaves the house-style lint almost nothing to say;
/// the plain pseudo-words leave thousands of warnings. Before the fix every rehearsal report
/// was full of them: 33,860 `style_quotes` and 12,130 `style_cjk_latin_space` warnings on ten
/// times the book (issue 15's `scale10`), 53 MB of HTML report for 12.5 MB of source, and the
/// findings were a fifth of the run's peak memory.
#[booktr_test_needs::needs(corpus)]
#[test]
fn pseudo_rehearsals_inflated_style_warnings() {
    let Some(corpus) = corpus_dir() else {
        return;
    };
    let zh = Lang::parse("zh");
    let rules = Style::for_target(&zh);
    let typography = booktr::commands::rehearsal::typography(&rules);
    // The house glossary, and entries as the rehearsal's glossary agent proposes them:
    // acronyms kept as they are, renderings that start in Latin.
    let house = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("glossaries/house-style.en-zh.csv"),
    )
    .unwrap();
    let mut glossary: Vec<(String, String)> = house
        .lines()
        .skip(1)
        .filter_map(|l| {
            let mut f = l.split(',');
            Some((f.next()?.to_string(), f.next()?.to_string()))
        })
        .collect();
    for (source, target) in [
        ("AI Agent", "AI 智能体"),
        ("LLM", "LLM"),
        ("RL", "RL"),
        ("R1", "R1"),
        ("RLHF", "RLHF"),
        ("API", "API"),
    ] {
        glossary.push((source.into(), target.into()));
    }
    let mut plain: BTreeMap<&str, usize> = BTreeMap::new();
    let mut styled: BTreeMap<&str, usize> = BTreeMap::new();
    for entry in std::fs::read_dir(corpus.join("en")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "md") {
            continue;
        }
        let source = std::fs::read_to_string(&path).unwrap();
        let before = booktr::llm::pseudo::pseudo_translate(&source, &zh, &glossary);
        for h in style::lint(&rules, &zh, &source, &before) {
            *plain.entry(h.check).or_default() += 1;
        }
        let after =
            booktr::llm::pseudo::pseudo_translate_with(&source, &zh, &glossary, &typography);
        let chars: Vec<char> = after.chars().collect();
        for h in style::lint(&rules, &zh, &source, &after) {
            *styled.entry(h.check).or_default() += 1;
            let around: String = chars[h.start.saturating_sub(12)..(h.end + 12).min(chars.len())]
                .iter()
                .collect();
            println!("{}: {} in {around:?}", h.check, h.message);
        }
    }
    println!("plain pseudo-words: {plain:?}\nin the house style: {styled:?}");
    let n = |m: &BTreeMap<&str, usize>, check: &str| m.get(check).copied().unwrap_or(0);
    // The bug, as it was: thousands of quote and spacing warnings on the plain pseudo text.
    assert!(n(&plain, style::QUOTES) > 1000, "{plain:?}");
    assert!(n(&plain, style::CJK_LATIN_SPACE) > 100, "{plain:?}");
    assert!(n(&plain, style::CJK_PUNCTUATION) > 10, "{plain:?}");
    // Set in the house style: no straight quote and no spacing fault left. What is left
    // (6 at the time of writing, each printed above) is older than the fix and not about
    // typography: a URL the pseudo-words map as words (`演译：//01.练/…`, the `https` of a
    // URL the prose scan does not protect) and a dot after markup (`**.”`).
    assert_eq!(n(&styled, style::QUOTES), 0, "{styled:?}");
    assert_eq!(n(&styled, style::CJK_LATIN_SPACE), 0, "{styled:?}");
    let total: usize = styled.values().sum();
    assert!(total <= 8, "{styled:?}");
}
