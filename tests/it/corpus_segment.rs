//! Segmentation of a real book: every `*.md` chapter of the shared `ai-agent-book` corpus (English
//! and Chinese), cut at 12,000 and at 2,000 characters per unit, keeps all of `segment`'s
//! guarantees: the units joined in order are the chapter byte for byte, they are contiguous from
//! 0 to `len` on `char` boundaries with ids `<key>-NNN`; no unit starts strictly inside a code
//! block, table, list, block quote, HTML block, footnote definition, front matter, display math
//! or any other top-level block of a fresh pulldown-cmark parse; every fenced code block lies
//! entirely inside one unit; and a unit over the limit contains no allowed cut point. It also
//! checks the cuts are real ones (hundreds of units at 2,000 characters, few oversized units).
//! The corpus is read in place (never copied); without it the test prints why and passes.

use std::collections::HashSet;
use std::ops::Range;
use std::path::{Path, PathBuf};

use booktr::book::markdown;
use booktr::book::segment::{join, top_level_blocks};
use booktr::book::{Unit, UnitKind, segment};
use pulldown_cmark::{CodeBlockKind, Event, Tag};
use sha2::{Digest, Sha256};

const CORPUS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/corpus/ai-agent-book"
);

/// The chapters of one language, sorted by file name, or `None` when the directory is absent.
fn chapters(lang: &str) -> Option<Vec<(String, String)>> {
    let dir = Path::new(CORPUS).join(lang);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        crate::support::corpus_missing(&dir);
        return None;
    };
    let mut paths: Vec<PathBuf> = entries
        .map(|e| e.expect("corpus dir entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    paths.sort();
    Some(
        paths
            .into_iter()
            .map(|p| {
                let key = p.file_stem().unwrap().to_string_lossy().into_owned();
                let text = std::fs::read_to_string(&p)
                    .unwrap_or_else(|e| panic!("{} is not UTF-8 text: {e}", p.display()));
                (key, text)
            })
            .collect(),
    )
}

/// Ranges no unit may start strictly inside (BOM-adjusted): every top-level block, and code
/// blocks, tables, lists, quotes, HTML blocks, front matter, footnote definitions and display
/// math at any depth. Each range is clipped at the next top-level block start (pulldown-cmark
/// reports a definition list as running over the paragraph after it).
fn protected(text: &str) -> Vec<(Range<usize>, &'static str)> {
    let (bom, _) = markdown::split_bom(text);
    let mut out = Vec::new();
    let mut depth = 0usize;
    for (event, r) in markdown::parser(text).into_offset_iter() {
        let r = r.start + bom..r.end + bom;
        match event {
            Event::Start(tag) => {
                let label = match tag {
                    Tag::CodeBlock(CodeBlockKind::Fenced(_)) => Some("fenced code"),
                    Tag::CodeBlock(_) => Some("indented code"),
                    Tag::Table(_) => Some("table"),
                    Tag::List(_) => Some("list"),
                    Tag::BlockQuote(_) => Some("block quote"),
                    Tag::HtmlBlock => Some("HTML block"),
                    Tag::MetadataBlock(_) => Some("front matter"),
                    Tag::FootnoteDefinition(_) => Some("footnote definition"),
                    _ => None,
                };
                if let Some(label) = label {
                    out.push((r.clone(), label));
                }
                if depth == 0 {
                    out.push((r, "top-level block"));
                }
                depth += 1;
            }
            Event::End(_) => depth = depth.saturating_sub(1),
            Event::DisplayMath(_) => out.push((r, "display math")),
            _ => {}
        }
    }
    let mut starts: Vec<usize> = out
        .iter()
        .filter(|(_, l)| *l == "top-level block")
        .map(|(r, _)| r.start)
        .collect();
    starts.sort_unstable();
    for (r, _) in &mut out {
        let i = starts.partition_point(|&s| s <= r.start);
        if let Some(&next) = starts.get(i) {
            r.end = r.end.min(next);
        }
    }
    out
}

/// Asserts every guarantee for one chapter and returns its units.
fn check_chapter(key: &str, text: &str, max: usize) -> Vec<Unit> {
    let units = segment(key, text, max);
    let at = |what: String| format!("{key} @ {max}: {what}");
    assert!(!units.is_empty(), "{}", at("no units".into()));
    assert_eq!(
        join(units.iter().map(|u| u.text(text))),
        text,
        "{}",
        at("join differs".into())
    );
    assert_eq!(units[0].range.start, 0, "{}", at("first unit".into()));
    assert_eq!(
        units.last().unwrap().range.end,
        text.len(),
        "{}",
        at("last".into())
    );
    let mut ids = HashSet::new();
    for (i, u) in units.iter().enumerate() {
        let slice = u.text(text);
        assert!(
            u.range.start < u.range.end,
            "{}",
            at(format!("empty unit {i}"))
        );
        if let Some(next) = units.get(i + 1) {
            assert_eq!(
                u.range.end,
                next.range.start,
                "{}",
                at(format!("gap at {i}"))
            );
        }
        assert!(text.is_char_boundary(u.range.start) && text.is_char_boundary(u.range.end));
        assert_eq!(u.id, format!("{key}-{i:03}"));
        assert_eq!((u.index, u.chapter.as_str()), (i, key));
        assert!(
            ids.insert(u.id.clone()),
            "{}",
            at(format!("duplicate {}", u.id))
        );
        assert_eq!(u.chars, slice.chars().count());
        assert_eq!(u.sha256, hex::encode(Sha256::digest(slice.as_bytes())));
        if u.kind == UnitKind::Prose {
            assert!(
                slice.chars().any(char::is_alphanumeric),
                "{}",
                at(format!("{i}"))
            );
        }
        let s = u.range.start;
        if s > 0 {
            let b = text.as_bytes();
            assert!(
                !(b[s - 1] == b'\r' && b[s] == b'\n'),
                "{}",
                at("split CRLF".into())
            );
            // The corpus has no indented top-level blocks, so every cut is at a line start.
            let line = text[..s].rfind(['\n', '\r']).map_or(0, |p| p + 1);
            assert_eq!(line, s, "{}", at(format!("unit {i} starts mid-line")));
        }
    }
    let prot = protected(text);
    for u in &units[1..] {
        let s = u.range.start;
        if let Some((r, l)) = prot.iter().find(|(r, _)| r.start < s && s < r.end) {
            panic!(
                "{}",
                at(format!(
                    "unit {} starts at {s} strictly inside {l} {r:?}",
                    u.id
                ))
            );
        }
    }
    // Every fenced code block, from the start of its line, lies inside one unit.
    for (r, _) in prot.iter().filter(|(_, l)| *l == "fenced code") {
        let line = text[..r.start].rfind(['\n', '\r']).map_or(0, |p| p + 1);
        assert!(
            units
                .iter()
                .any(|u| u.range.start <= line && r.end <= u.range.end),
            "{}",
            at(format!("fenced code {r:?} split across units"))
        );
    }
    // Size rule: over the limit only without an allowed cut inside (the first block's start is
    // not a cut: what precedes it belongs to the first unit). In this corpus an oversized unit
    // is always one huge top-level block, never a run locked by the `$$`/HTML heuristics.
    let blocks = top_level_blocks(text);
    for u in units.iter().filter(|u| u.chars > max) {
        let inner = prot
            .iter()
            .filter(|(r, l)| *l == "top-level block" && u.range.contains(&r.start))
            .count();
        assert_eq!(inner, 1, "{}", at(format!("{} is {} blocks", u.id, inner)));
        let cut = blocks
            .iter()
            .skip(1)
            .find(|b| b.cut_before && u.range.start < b.range.start && b.range.start < u.range.end);
        assert!(
            cut.is_none(),
            "{}",
            at(format!(
                "{} has {} chars with a cut at {cut:?}",
                u.id, u.chars
            ))
        );
    }
    units
}

/// Per-language totals at one limit.
#[derive(Debug, Default)]
struct Stats {
    chapters: usize,
    bytes: usize,
    units: usize,
    oversized: usize,
    largest: usize,
    fenced: usize,
}

fn run(lang: &str, max: usize) -> Option<Stats> {
    let Some(chapters) = chapters(lang) else {
        println!("skipping {lang}: corpus directory {CORPUS}/{lang} not found");
        return None;
    };
    let mut st = Stats::default();
    for (key, text) in &chapters {
        let units = check_chapter(key, text, max);
        st.chapters += 1;
        st.bytes += text.len();
        st.units += units.len();
        st.oversized += units.iter().filter(|u| u.chars > max).count();
        st.largest = st
            .largest
            .max(units.iter().map(|u| u.chars).max().unwrap_or(0));
        st.fenced += protected(text)
            .iter()
            .filter(|(_, l)| *l == "fenced code")
            .count();
    }
    println!("{lang} @ {max}: {st:?}");
    Some(st)
}

#[booktr_test_needs::needs(corpus)]
#[test]
fn english_corpus_keeps_guarantees() {
    let (Some(big), Some(small)) = (run("en", 12_000), run("en", 2_000)) else {
        return;
    };
    assert!(big.chapters >= 10, "{big:?}");
    assert!(big.fenced > 30, "expected many fenced code blocks: {big:?}");
    assert!(small.units > 100, "{small:?}");
    assert!(
        small.units > 3 * big.units,
        "2,000 should cut much finer: {big:?} {small:?}"
    );
    // About 1.1 M characters: at 12,000 that is at least ~90 units.
    assert!(big.units * 12_000 >= big.bytes / 2, "{big:?}");
    // Oversized units are rare exceptions (single huge blocks), not the rule.
    assert!(small.oversized * 10 < small.units, "{small:?}");
}

#[booktr_test_needs::needs(corpus)]
#[test]
fn chinese_corpus_keeps_guarantees() {
    let (Some(big), Some(small)) = (run("zh", 12_000), run("zh", 2_000)) else {
        return;
    };
    assert!(big.chapters >= 10, "{big:?}");
    assert!(small.units > 100, "{small:?}");
    assert!(small.units > 2 * big.units, "{big:?} {small:?}");
    assert!(small.oversized * 10 < small.units, "{small:?}");
}

/// The same chapters with a BOM and CRLF line endings: the extra bytes are kept, the cuts move
/// with the text and no cut falls between `\r` and `\n`.
#[booktr_test_needs::needs(corpus)]
#[test]
fn corpus_with_bom_and_crlf_keeps_guarantees() {
    let Some(chapters) = chapters("en") else {
        println!("skipping: corpus directory {CORPUS}/en not found");
        return;
    };
    for (key, text) in chapters.iter().take(4) {
        let crlf = format!("\u{feff}{}", text.replace('\n', "\r\n"));
        let lf_units = check_chapter(key, text, 2_000);
        let units = check_chapter(key, &crlf, 2_000);
        assert!(units[0].text(&crlf).starts_with('\u{feff}'));
        // CRLF adds one char per line, so cuts can shift, but not by much in number.
        let (a, b) = (lf_units.len(), units.len());
        assert!(
            b + 5 >= a && b <= a + a / 4 + 5,
            "{key}: {a} LF units vs {b} CRLF units"
        );
    }
}
