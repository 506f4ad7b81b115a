//! Property tests for `booktr::repair`: for a generated source unit (headings with and without
//! `{#id}` anchors, paragraphs mixing prose words with inline code, inline math, links and
//! footnote references and emphasis, fenced code blocks, HTML comments and bare-tag HTML
//! blocks), its "translation" (every prose
//! word rendered in another language, every mechanical span copied), and that translation with
//! exactly one mechanical fault injected (a span of one class altered), repair restores exactly
//! the source's bytes for that span and leaves every other byte of the translation unchanged;
//! the faithful translation needs no repair; and repairing twice changes nothing more. With one
//! fault in each of several blocks, all are restored. Over
//! arbitrary Markdown-ish text, repair never panics and is idempotent. Set `PROPTEST_CASES` for
//! a longer hunt.

use booktr::repair::{Options, repair};
use proptest::prelude::*;

const EN: [&str; 8] = [
    "agent", "tool", "loop", "budget", "model", "memory", "plan", "step",
];
const ZH: [&str; 8] = [
    "智能体",
    "工具",
    "循环",
    "预算",
    "模型",
    "记忆",
    "计划",
    "步骤",
];

/// `PROPTEST_CASES` when set (for a longer hunt), else `default`.
fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[derive(Debug, Clone)]
enum Inline {
    Word(usize),
    Code(usize),
    Math(usize),
    Link(usize, usize),
    Note(usize),
    Emph(usize),
}

#[derive(Debug, Clone)]
enum Block {
    Heading(u8, Vec<usize>, Option<usize>),
    Para(Vec<Inline>),
    Code(usize),
    Comment(usize),
    Tags(usize),
}

/// Where one fault goes: block index, and the inline index (or 0 for a whole block); for a
/// heading, `1` alters the anchor instead of the level.
type Site = (usize, usize);

fn inline() -> impl Strategy<Value = Inline> {
    prop_oneof![
        4 => (0..8usize).prop_map(Inline::Word),
        1 => (0..5usize).prop_map(Inline::Code),
        1 => (0..5usize).prop_map(Inline::Math),
        1 => (0..8usize, 0..5usize).prop_map(|(w, u)| Inline::Link(w, u)),
        1 => (0..5usize).prop_map(Inline::Note),
        1 => (0..8usize).prop_map(Inline::Emph),
    ]
}

fn block() -> impl Strategy<Value = Block> {
    prop_oneof![
        1 => (1..=3u8, prop::collection::vec(0..8usize, 1..4), prop::option::of(0..5usize))
            .prop_map(|(l, w, a)| Block::Heading(l, w, a)),
        4 => prop::collection::vec(inline(), 1..10)
            .prop_filter("a paragraph starts with a word", |v| matches!(v[0], Inline::Word(_)))
            .prop_map(Block::Para),
        1 => (0..5usize).prop_map(Block::Code),
        1 => (0..5usize).prop_map(Block::Comment),
        1 => (0..5usize).prop_map(Block::Tags),
    ]
}

fn word(i: usize, zh: bool) -> &'static str {
    if zh { ZH[i] } else { EN[i] }
}

/// Renders the unit, prose in English or Chinese, with the spans at `faults` altered.
fn render(blocks: &[Block], zh: bool, faults: &[Site]) -> String {
    let mut out = Vec::new();
    for (i, b) in blocks.iter().enumerate() {
        let at = |j: usize| faults.contains(&(i, j));
        let text = match b {
            Block::Heading(level, words, anchor) => {
                let level = if at(0) { level % 3 + 4 } else { *level };
                let mut h = format!(
                    "{} {}",
                    "#".repeat(level as usize),
                    words
                        .iter()
                        .map(|w| word(*w, zh))
                        .collect::<Vec<_>>()
                        .join(" ")
                );
                if let Some(a) = anchor {
                    if at(1) {
                        h.push_str(&format!(" {{#标题{a}}}"));
                    } else {
                        h.push_str(&format!(" {{#h{a}}}"));
                    }
                }
                h
            }
            Block::Para(items) => items
                .iter()
                .enumerate()
                .map(|(j, x)| match x {
                    Inline::Word(w) => word(*w, zh).to_string(),
                    Inline::Code(n) if at(j) => format!("`changed_{n}()`"),
                    Inline::Code(n) => format!("`call_{n}()`"),
                    Inline::Math(n) if at(j) => format!("$x_{n}+1$"),
                    Inline::Math(n) => format!("$x_{n} + 1$"),
                    Inline::Link(w, u) if at(j) => {
                        format!("[{}](https://example.com/zh/p{u})", word(*w, zh))
                    }
                    Inline::Link(w, u) => format!("[{}](https://example.com/p{u})", word(*w, zh)),
                    Inline::Note(n) if at(j) => format!("[^注{n}]"),
                    Inline::Note(n) => format!("[^n{n}]"),
                    Inline::Emph(w) if at(j) => format!("* {}*", word(*w, zh)),
                    Inline::Emph(w) => format!("*{}*", word(*w, zh)),
                })
                .collect::<Vec<_>>()
                .join(" "),
            Block::Code(n) if at(0) => format!("```python\nprint({n})  # 打印\n```"),
            Block::Code(n) => format!("```python\nprint({n})  # print\n```"),
            Block::Comment(n) if at(0) => format!("<!-- 编辑：保留 {n} -->"),
            Block::Comment(n) => format!("<!-- editors: keep {n} -->"),
            Block::Tags(n) if at(0) => format!("<hr class=\"分隔{n}\">"),
            Block::Tags(n) => format!("<hr class=\"sep{n}\">"),
        };
        out.push(text);
    }
    out.join("\n\n") + "\n"
}

/// Every place one mechanical fault can go.
fn sites(blocks: &[Block]) -> Vec<Site> {
    let mut out = Vec::new();
    for (i, b) in blocks.iter().enumerate() {
        match b {
            Block::Heading(_, _, anchor) => {
                out.push((i, 0));
                if anchor.is_some() {
                    out.push((i, 1));
                }
            }
            Block::Para(items) => {
                for (j, x) in items.iter().enumerate() {
                    if !matches!(x, Inline::Word(_)) {
                        out.push((i, j));
                    }
                }
            }
            Block::Code(_) | Block::Comment(_) | Block::Tags(_) => out.push((i, 0)),
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(256)))]

    #[test]
    fn one_injected_fault_is_restored_and_nothing_else_changes(
        blocks in prop::collection::vec(block(), 1..7),
        pick in any::<prop::sample::Index>(),
    ) {
        let source = render(&blocks, false, &[]);
        let faithful = render(&blocks, true, &[]);
        let opts = Options::default();
        let clean = repair(&source, &faithful, &opts);
        prop_assert_eq!(&clean.text, &faithful);
        prop_assert!(clean.repairs.is_empty(), "{:#?}", clean.repairs);
        let sites = sites(&blocks);
        prop_assume!(!sites.is_empty());
        let site = sites[pick.index(sites.len())];
        let faulty = render(&blocks, true, &[site]);
        prop_assert_ne!(&faulty, &faithful);
        let out = repair(&source, &faulty, &opts);
        prop_assert_eq!(&out.text, &faithful, "source:\n{}\nfaulty:\n{}\n{:#?}", source, faulty, out);
        prop_assert!(!out.repairs.is_empty());
        for r in &out.repairs {
            prop_assert_eq!(&out.text[r.range.clone()], r.after.as_str());
        }
        let again = repair(&source, &out.text, &opts);
        prop_assert!(again.repairs.is_empty(), "{:#?}", again.repairs);
    }

    #[test]
    fn repairing_the_source_itself_changes_nothing(blocks in prop::collection::vec(block(), 1..7)) {
        let source = render(&blocks, false, &[]);
        let out = repair(&source, &source, &Options::default());
        prop_assert_eq!(&out.text, &source);
        prop_assert!(out.repairs.is_empty() && out.skipped.is_empty(), "{:#?}", out);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(256)))]

    /// One fault in each of several blocks: every block is its own scope, so all are restored.
    #[test]
    fn one_fault_per_block_are_all_restored(
        blocks in prop::collection::vec(block(), 2..8),
        picks in prop::collection::vec(any::<prop::sample::Index>(), 8),
    ) {
        let source = render(&blocks, false, &[]);
        let faithful = render(&blocks, true, &[]);
        let all = sites(&blocks);
        let mut faults: Vec<Site> = Vec::new();
        for (i, pick) in (0..blocks.len()).zip(&picks) {
            let here: Vec<Site> = all.iter().copied().filter(|s| s.0 == i).collect();
            if !here.is_empty() {
                faults.push(here[pick.index(here.len())]);
            }
        }
        prop_assume!(faults.len() >= 2);
        let faulty = render(&blocks, true, &faults);
        let out = repair(&source, &faulty, &Options::default());
        prop_assert_eq!(&out.text, &faithful, "source:\n{}\nfaulty:\n{}\n{:#?}", source, faulty, out);
        prop_assert!(out.repairs.len() >= faults.len());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(512)))]

    /// Model output can be anything: repair never panics, never changes a text it makes no
    /// repair to, and a repaired text needs no second repair.
    #[test]
    fn arbitrary_text_never_panics_and_is_idempotent(
        source in "(# |## |```|`|\\$|\\[\\^|\\]|<!--|-->|<b>|\\[a\\]\\(|\\)|> \\[!NOTE\\]|---\n|\n|x|文| ){0,40}",
        target in "(# |### |```|`|\\$|\\[\\^|\\]|<!--|-->|<i>|\\[a\\]\\(|\\)|> \\[!TIP\\]|---\n|\n|y|字| ){0,40}",
    ) {
        let out = repair(&source, &target, &Options::default());
        if out.repairs.is_empty() {
            prop_assert_eq!(&out.text, &target);
        }
        let again = repair(&source, &out.text, &Options::default());
        prop_assert_eq!(&again.text, &out.text, "{:#?}\n{:#?}", out, again);
    }
}
