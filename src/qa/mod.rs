//! Deterministic QA checks: pure functions of a unit's source, its translation and the
//! campaign's settings, modelled on what professional translation QA tools check. Model
//! opinions advise; these checks decide: an `error` finding sends a unit back for revision
//! without asking the Manager, and makes `booktr validate` exit 1.
//!
//! This module owns what every check shares: [`Finding`], [`Severity`], the settings of a run
//! ([`QaContext`]) and the two entry points, [`check_unit`] (every per-unit check) and
//! [`check_campaign`] (the checks that compare translations across units), and what the
//! checks remember between calls ([`cache`], owned by a [`QaContext`]). The checks and what
//! they read live in four folders:
//!
//! - [`unit`]: the per-unit checks, one file per family, each
//!   `fn check(&QaContext, &Doc, &Doc, src, tgt)`, pure functions of one unit's pair of texts;
//! - [`book`]: the book-level checks (completeness, length ratio, terminology drift, review
//!   markers) and [`check_campaign`], which runs them over every unit at once;
//! - [`view`]: what the checks read: one parse of a text ([`Doc`]), the book's units parsed
//!   once ([`Parsed`]), word boundaries, the gloss and marker scanner;
//! - [`findings`]: what happens to findings after the checks: stable ids and editors' marks,
//!   the MQM scorecard.

pub mod book;
pub mod cache;
pub mod findings;
pub mod unit;
pub mod view;

use book::{completeness, drift, length, review_markers};
use findings::editor_marks;
use unit::{
    alignment, code, code_comments, context_echo, emphasis, garbled, glossary, headings, injected,
    links, math_html, numbers, sentences, site_syntax, structure, style, tables, untranslated,
    xref,
};

use serde::{Deserialize, Serialize};

pub use crate::config::default_review_marker;
use crate::lang::Lang;
use crate::termbase::Termbase;

pub use book::drift::DriftRow;
pub use book::review_markers::ReviewTerm;
pub use book::{CampaignQa, Norms, check_campaign, check_translations};
pub use cache::QaCache;
pub use unit::glossary::Adherence;
pub use view::doc::Doc;
pub use view::units::{ChapterText, Parsed, UnitText};

/// How bad a finding is. `Error` findings force a revision and fail `validate`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Error,
    Warning,
    Info,
}

/// One QA finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// Check name, e.g. `code_blocks`.
    pub check: String,
    pub severity: Severity,
    /// Unit id (empty for chapter-level findings).
    pub unit: String,
    /// Chapter key.
    pub chapter: String,
    /// What is wrong and what to do, in one sentence.
    pub message: String,
    /// Up to 200 characters of the relevant source text.
    pub source_excerpt: String,
    /// Up to 200 characters of the relevant target text.
    pub target_excerpt: String,
    /// Where the finding points in the unit's target text (the translation QA checked), as
    /// `(start, end)` offsets in **chars** (Unicode scalar values, not bytes), end exclusive;
    /// `None` for findings that compare whole texts. Set by the `style_*` checks
    /// ([`style`]). Left out of JSON when `None`, so older files load and read unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub span: Option<(usize, usize)>,
    /// The stable id editors mark the finding by (12 hex digits, see [`editor_marks::finding_id`]):
    /// filled in on the final texts of a campaign (the verdict), empty elsewhere and in older
    /// files, and computed again when missing.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub id: String,
    /// The editor's mark and the check's downgrade, when one applies ([`editor_marks::Review`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review: Option<editor_marks::Review>,
}

impl Finding {
    /// A finding without unit or chapter (the caller fills them in).
    pub fn new(
        check: &str,
        severity: Severity,
        message: impl Into<String>,
        source_excerpt: &str,
        target_excerpt: &str,
    ) -> Finding {
        Finding {
            check: check.into(),
            severity,
            unit: String::new(),
            chapter: String::new(),
            message: message.into(),
            source_excerpt: crate::util::excerpt(source_excerpt, 200),
            target_excerpt: crate::util::excerpt(target_excerpt, 200),
            span: None,
            id: String::new(),
            review: None,
        }
    }

    /// This finding pointing at chars `start..end` of the target text (see [`Finding::span`]).
    pub fn with_span(mut self, start: usize, end: usize) -> Finding {
        self.span = Some((start, end));
        self
    }

    /// A one-line form for prompts and logs: `check: message`.
    pub fn line(&self) -> String {
        format!("{}: {}", self.check, self.message)
    }
}

/// What every check may need besides the two texts.
#[derive(Debug, Clone)]
pub struct QaContext {
    pub source_lang: Lang,
    pub target_lang: Lang,
    /// The campaign termbase (house style, agent and reconciled entries).
    pub termbase: Termbase,
    /// The marker translators put after a rendering they coined (default `[待审]` for Chinese).
    pub review_marker: String,
    /// Whether an editor approved the termbase's agent entries at the glossary gate. Until
    /// then a deviation from an agent entry (origin `agent`) is a `warning`, not an `error`:
    /// a model's proposal is advice until verified (house-style, reconciled and editor
    /// entries are always errors). `false` from [`QaContext::new`].
    pub agent_entries_approved: bool,
    /// Whether comments in code blocks may be translated (campaign key `code_comments`,
    /// default [`code_comments::CodeComments::Keep`]).
    pub code_comments: code_comments::CodeComments,
    /// What the checks remember between calls ([`QaCache`]): a fresh cache from
    /// [`QaContext::new`], the campaign's own from [`QaContext::with_cache`]; clones share it.
    cache: QaCache,
    /// The house-style lint for the target locale (campaign table `[style]`): what the
    /// `style_*` checks apply. [`QaContext::new`] gives the target's defaults
    /// ([`crate::config::Style::for_target`]).
    pub style: crate::config::Style,
    /// The words the whole translation keeps in the source language, tallied over the book
    /// before the per-unit checks run (`booktr validate` sets it; `None` from
    /// [`QaContext::new`]): a stray word the book keeps in many blocks is a warning of
    /// `untranslated_word`, not an error (see [`untranslated`]).
    pub kept_words: Option<std::sync::Arc<untranslated::KeptWords>>,
    /// Whether the target texts are a rehearsal's pseudo-translations
    /// ([`crate::llm::pseudo`]): for a Latin-script target they are the source's words with
    /// accents, which a language identifier rightly reads as the source language, so
    /// `untranslated` counts a pseudo-word as the target's ([`untranslated`]). `false` from
    /// [`QaContext::new`]; a rehearsal campaign sets it.
    pub pseudo_targets: bool,
    /// The book's ratio of target to source characters over paragraphs paired one to one, and
    /// its spread ([`alignment::ProseNorm::of_book`]), which the sentence alignment of a unit
    /// with few paragraphs measures lengths against; `None` from [`QaContext::new`] (the
    /// unit's own paragraphs, else the pair's prior, are used).
    pub prose_norm: Option<alignment::ProseNorm>,
    /// The translations checked were made elsewhere (a published edition, `validate
    /// --source --target`), not by booktr's agents under its prompt's copy rules: what a
    /// translator changes on purpose and a reader is served by (a link to the localized
    /// edition of the same page, links reordered with the sentence) is a warning, not an
    /// error. `false` from [`QaContext::new`].
    pub human_edition: bool,
    /// The source heading ids a translation keeps, for a site whose tool reads explicit ids
    /// ([`crate::book::anchors::HeadingIds`]); `None` from [`QaContext::new`] and for a
    /// campaign without such a site. The `headings` check reports a translated heading whose
    /// id would differ.
    pub heading_ids: Option<std::sync::Arc<crate::book::anchors::HeadingIds>>,
    /// The site's link map and source pages ([`crate::qa::book::site_links::SiteBook`]) for
    /// the `site_links` check; `None` from [`QaContext::new`] and for a campaign without a
    /// site (`book`).
    pub site_book: Option<std::sync::Arc<crate::qa::book::site_links::SiteBook>>,
}

impl QaContext {
    pub fn new(source_lang: &Lang, target_lang: &Lang, termbase: &Termbase) -> QaContext {
        QaContext {
            source_lang: source_lang.clone(),
            target_lang: target_lang.clone(),
            termbase: termbase.clone(),
            review_marker: default_review_marker(target_lang).to_string(),
            agent_entries_approved: false,
            code_comments: code_comments::CodeComments::Keep,
            cache: QaCache::default(),
            style: crate::config::Style::for_target(target_lang),
            kept_words: None,
            pseudo_targets: false,
            prose_norm: None,
            human_edition: false,
            heading_ids: None,
            site_book: None,
        }
    }

    /// This context with `cache` as its memo (a campaign passes its own, so every context it
    /// builds shares one).
    pub fn with_cache(mut self, cache: QaCache) -> QaContext {
        self.cache = cache;
        self
    }

    /// The memo the checks use.
    pub fn cache(&self) -> &QaCache {
        &self.cache
    }
}

/// The signature every per-unit check shares: the campaign context, both texts parsed once,
/// and both raw texts (for checks that look at lines, such as injected preambles).
pub type UnitCheck = fn(&QaContext, &Doc, &Doc, &str, &str) -> Vec<Finding>;

/// Every per-unit check, in the order their findings are reported.
pub const UNIT_CHECKS: &[UnitCheck] = &[
    untranslated::check,
    garbled::check,
    injected::check,
    code::check,
    links::check,
    headings::check,
    tables::check,
    math_html::check,
    emphasis::check,
    numbers::check,
    xref::check,
    glossary::check,
    structure::check,
    site_syntax::check,
    sentences::check,
    alignment::check,
    style::check,
];

/// Runs every per-unit check on `source` and its translation `target`, filling in unit and
/// chapter ids. Each text is parsed once into a [`Doc`] shared by all checks.
pub fn check_unit(
    ctx: &QaContext,
    unit: &str,
    chapter: &str,
    source: &str,
    target: &str,
) -> Vec<Finding> {
    let src = Doc::parse(source);
    let tgt = Doc::parse(target);
    let mut out = Vec::new();
    for check in UNIT_CHECKS {
        out.extend(check(ctx, &src, &tgt, source, target));
    }
    // A word left in the source language is to be translated, not spaced: the space finding
    // at its edge (the char after a missing space, or the spaces before it) would tell the
    // editor only to add or remove a space.
    let words: Vec<(usize, usize)> = out
        .iter()
        .filter(|f| f.check == untranslated::WORD_CHECK)
        .filter_map(|f| f.span)
        .collect();
    if !words.is_empty() {
        out.retain(|f| {
            f.check != style::CJK_LATIN_SPACE
                || !f
                    .span
                    .is_some_and(|(s, e)| words.iter().any(|&(ws, we)| s <= we && e >= ws))
        });
    }
    for f in &mut out {
        f.unit = unit.to_string();
        f.chapter = chapter.to_string();
    }
    out
}

/// Every check name, ordered by how badly a finding of it breaks the book: first lost or
/// added content (a chapter or unit missing, text left untranslated, a truncated or padded
/// translation, injected or echoed text), then broken structure (code, headings, tables,
/// links, images, footnotes, reference definitions, math, HTML), then changed facts
/// (numbers), then terminology and style (glossary, drift, review markers), then notes about
/// how a comparison was made (pairing). Reports list findings by severity, then by this
/// order ([`check_rank`]); it is the project's own ranking, chosen so that an editor fixes
/// what makes the book wrong or unbuildable before what makes it inconsistent.
pub const CHECK_ORDER: &[&str] = &[
    completeness::CHECK,
    untranslated::CHECK,
    untranslated::WORD_CHECK,
    length::CHECK,
    structure::TRUNCATION,
    alignment::OMISSION,
    alignment::ADDITION,
    garbled::CHECK,
    "injected_text",
    context_echo::CHECK,
    structure::CHECK,
    site_syntax::CHECK,
    "code_blocks",
    "inline_code",
    "headings",
    "tables",
    "links",
    "images",
    "footnotes",
    xref::FOOTNOTES,
    xref::ANCHORS,
    crate::qa::book::site_links::CHECK,
    "reference_definitions",
    "math",
    "html",
    emphasis::CHECK,
    "numbers",
    xref::NUMBERS,
    xref::TARGETS,
    glossary::CHECK,
    drift::CHECK,
    review_markers::CHECK,
    style::CJK_PUNCTUATION,
    style::CJK_LATIN_SPACE,
    style::QUOTES,
    style::FR_SPACING,
    style::NUMBER_FORMAT,
    style::TERM_CASING,
    "pairing",
];

/// The position of `check` in [`CHECK_ORDER`]; a check missing from the table ranks after
/// every listed one.
pub fn check_rank(check: &str) -> usize {
    CHECK_ORDER
        .iter()
        .position(|c| *c == check)
        .unwrap_or(CHECK_ORDER.len())
}

/// Whether any finding is an error.
pub fn has_error(findings: &[Finding]) -> bool {
    findings.iter().any(|f| f.severity == Severity::Error)
}

/// How two sequences of items differ, as multisets and in order (shared by the checks that
/// compare code, links, images, math and HTML).
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct SeqDiff<'a> {
    /// Source items the translation has fewer of: one entry per missing occurrence, in source
    /// order.
    pub missing: Vec<&'a str>,
    /// Translation items the source has fewer of: one entry per extra occurrence, in
    /// translation order.
    pub extra: Vec<&'a str>,
    /// When both hold the same multiset in another order: the first position that differs and
    /// the source and translation items there.
    pub reordered: Option<(usize, &'a str, &'a str)>,
}

impl<'a> SeqDiff<'a> {
    /// Compares `src` and `tgt` in linear time.
    pub fn new(src: &[&'a str], tgt: &[&'a str]) -> SeqDiff<'a> {
        let mut balance: std::collections::HashMap<&str, isize> =
            std::collections::HashMap::with_capacity(src.len() + tgt.len());
        for s in src {
            *balance.entry(s).or_default() += 1;
        }
        for t in tgt {
            *balance.entry(t).or_default() -= 1;
        }
        let mut d = SeqDiff::default();
        let mut left = balance.clone();
        for s in src {
            let b = left.get_mut(s).expect("counted");
            if *b > 0 {
                d.missing.push(s);
                *b -= 1;
            }
        }
        for t in tgt {
            let b = left.get_mut(t).expect("counted");
            if *b < 0 {
                d.extra.push(t);
                *b += 1;
            }
        }
        if d.missing.is_empty() && d.extra.is_empty() {
            d.reordered = src
                .iter()
                .zip(tgt)
                .enumerate()
                .find(|(_, (a, b))| a != b)
                .map(|(i, (a, b))| (i, *a, *b));
        }
        d
    }

    /// Findings for this difference, worded with `noun` (`link target`) and `fix` (what to do
    /// about a missing or changed item). When as many occurrences are missing as are extra,
    /// they are paired in order and reported as changes; otherwise each distinct missing or
    /// extra item gets one finding with its counts.
    pub fn findings(
        &self,
        check: &str,
        severity: Severity,
        noun: &str,
        fix: &str,
        src: &[&str],
        tgt: &[&str],
    ) -> Vec<Finding> {
        let mut out = Vec::new();
        if let Some((i, a, b)) = self.reordered {
            out.push(Finding::new(
                check,
                severity,
                format!(
                    "{noun}s are in a different order: number {} is {} in the source but {} in the translation; keep the source order",
                    i + 1,
                    quote(a),
                    quote(b)
                ),
                a,
                b,
            ));
            return out;
        }
        if self.missing.len() == self.extra.len() {
            for (a, b) in self.missing.iter().zip(&self.extra) {
                out.push(Finding::new(
                    check,
                    severity,
                    format!("{noun} {} was changed to {}; {fix}", quote(a), quote(b)),
                    a,
                    b,
                ));
            }
            return out;
        }
        let count = |items: &[&str], x: &str| items.iter().filter(|i| **i == x).count();
        for (a, n) in distinct(&self.missing) {
            let (s, t) = (count(src, a), count(tgt, a));
            let msg = if t == 0 {
                format!("{noun} {} is missing from the translation; {fix}", quote(a))
            } else {
                format!(
                    "{noun} {} occurs {s} times in the source but {t} in the translation; {fix}",
                    quote(a)
                )
            };
            debug_assert_eq!(s - t, n);
            out.push(Finding::new(check, severity, msg, a, ""));
        }
        for (b, _) in distinct(&self.extra) {
            let (s, t) = (count(src, b), count(tgt, b));
            let msg = if s == 0 {
                format!(
                    "{noun} {} does not occur in the source; remove it or restore the source's {noun}",
                    quote(b)
                )
            } else {
                format!(
                    "{noun} {} occurs {t} times in the translation but {s} in the source; remove the extra one",
                    quote(b)
                )
            };
            out.push(Finding::new(check, severity, msg, "", b));
        }
        out
    }
}

/// Distinct items with their number of occurrences, in first-occurrence order.
fn distinct<'a>(items: &[&'a str]) -> Vec<(&'a str, usize)> {
    let mut out: Vec<(&str, usize)> = Vec::new();
    for i in items {
        match out.iter_mut().find(|(x, _)| x == i) {
            Some((_, n)) => *n += 1,
            None => out.push((i, 1)),
        }
    }
    out
}

/// An item for a message: backquoted and shortened to one line of at most 80 characters.
pub(crate) fn quote(item: &str) -> String {
    let one_line = item.trim().replace('\n', "⏎");
    format!("`{}`", crate::util::excerpt(&one_line, 80))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> QaContext {
        QaContext::new(&Lang::parse("en"), &Lang::parse("zh"), &Termbase::default())
    }

    /// [`ctx`] with a house style that keeps `token` and `schema` in English (glossary entries
    /// whose target is the source term), as the corpus's zh edition does: without them the
    /// faithful unit below has an `untranslated_word` error per kept word.
    fn ctx_keeping() -> QaContext {
        let keep = |t: &str| crate::termbase::Entry {
            source: t.into(),
            target: t.into(),
            note: String::new(),
            origin: crate::termbase::Origin::HouseStyle,
            forbidden: vec![],
            variants: vec![],
        };
        let tb = Termbase::from_entries([keep("token"), keep("schema")]);
        QaContext::new(&Lang::parse("en"), &Lang::parse("zh"), &tb)
    }

    const EN_UNIT: &str = r#"## Calling Tools {#calling-tools}

An **Agent** calls a tool by writing a request; the runtime executes it and returns the result. A call with 3 arguments typically adds 40 to 60 tokens, and a 128K context window holds roughly 300 pages[^tokens].

| Tool | Purpose | Side effects |
|------|---------|--------------|
| `web_search` | Find pages on the web | None |
| `send_email` | Send a message | Yes: needs approval |

The schema below describes `read_file`:

```json
{"name": "read_file", "parameters": {"path": {"type": "string"}}}
```

See the [OpenAI function calling guide](https://platform.openai.com/docs/guides/function-calling) for details. The relevance score is $s = \frac{a \cdot b}{\|a\| \|b\|}$, and only facts with $s > 0.75$ are kept; in 2024, 1,000 stored facts needed fewer than 10 per step.

![Figure 2-1: The tool-calling loop](images/tool-loop.svg)

<!-- Editors: keep this comment untranslated. -->

<details>
<summary>Why ask before sending email?</summary>

Because a sent message cannot be recalled.

</details>

[^tokens]: A token is about 4 characters of English text.
"#;

    const ZH_UNIT: &str = r#"## 调用工具 {#calling-tools}

**Agent** 通过编写请求来调用工具；运行时执行该请求并返回结果。一次带 3 个参数的调用通常会增加 40 到 60 个 token，而 128K 的上下文窗口大约能容纳 300 页内容[^tokens]。

| 工具 | 用途 | 副作用 |
|------|------|--------|
| `web_search` | 在网上查找网页 | 无 |
| `send_email` | 发送消息 | 有：需要批准 |

下面的 schema 描述了 `read_file`：

```json
{"name": "read_file", "parameters": {"path": {"type": "string"}}}
```

详情请参阅 [OpenAI 函数调用指南](https://platform.openai.com/docs/guides/function-calling)。相关性得分为 $s = \frac{a \cdot b}{\|a\| \|b\|}$，只有 $s > 0.75$ 的事实才会被保留；2024 年，1,000 条已存储的事实中每一步只需要不到 10 条。

![图 2-1：工具调用循环](images/tool-loop.svg)

<!-- Editors: keep this comment untranslated. -->

<details>
<summary>为什么发送邮件前要先询问？</summary>

因为已发送的消息无法撤回。

</details>

[^tokens]: 一个 token 大约相当于 4 个英文字符。
"#;

    #[test]
    fn sequence_differences() {
        let d = SeqDiff::new(&["a", "b", "a", "c"], &["a", "c", "b", "x"]);
        assert_eq!(d.missing, vec!["a"]);
        assert_eq!(d.extra, vec!["x"]);
        assert_eq!(d.reordered, None);
        let d = SeqDiff::new(&["a", "b"], &["b", "a"]);
        assert_eq!(d.reordered, Some((0, "a", "b")));
        let f = SeqDiff::new(&["a", "a"], &["a"]).findings(
            "x",
            Severity::Error,
            "item",
            "fix it",
            &["a", "a"],
            &["a"],
        );
        assert_eq!(f.len(), 1);
        assert_eq!(
            f[0].message,
            "item `a` occurs 2 times in the source but 1 in the translation; fix it"
        );
        assert!(
            SeqDiff::new(&["a"], &["a"])
                .findings("x", Severity::Error, "item", "fix it", &["a"], &["a"])
                .is_empty()
        );
    }

    #[test]
    fn faithful_chinese_translation_has_no_finding() {
        assert_eq!(
            check_unit(&ctx_keeping(), "u1", "ch02", EN_UNIT, ZH_UNIT),
            vec![]
        );
    }

    #[test]
    fn echoed_source_is_exactly_one_untranslated_error() {
        let f = check_unit(&ctx(), "u1", "ch02", EN_UNIT, EN_UNIT);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(f[0].check, "untranslated");
        assert_eq!(f[0].severity, Severity::Error);
        assert_eq!((f[0].unit.as_str(), f[0].chapter.as_str()), ("u1", "ch02"));
        assert!(has_error(&f));
    }

    #[test]
    fn broken_translation_is_reported_by_each_family() {
        let broken = format!("[Part 1/3]\n\n{ZH_UNIT}")
            .replace("{#calling-tools}", "")
            .replace("`read_file`", "`读取文件`")
            .replace("(images/tool-loop.svg)", "(images/zh/tool-loop.svg)")
            .replace("| `send_email` | 发送消息 | 有：需要批准 |\n", "")
            .replace("$s > 0.75$", "$s > 0.8$")
            .replace(
                "<!-- Editors: keep this comment untranslated. -->",
                "<!-- 编辑：请勿翻译此注释。 -->",
            )
            .replace("40 到 60", "40 到 50")
            .replace("[^tokens]。", "。")
            .replace("\"string\"", "\"字符串\"");
        let f = check_unit(&ctx_keeping(), "u1", "ch02", EN_UNIT, &broken);
        let checks: Vec<(&str, Severity)> =
            f.iter().map(|f| (f.check.as_str(), f.severity)).collect();
        assert_eq!(
            checks,
            vec![
                ("injected_text", Severity::Error),
                ("code_blocks", Severity::Error),
                ("inline_code", Severity::Error),
                ("inline_code", Severity::Error),
                ("inline_code", Severity::Warning),
                ("images", Severity::Error),
                ("footnotes", Severity::Error),
                ("headings", Severity::Error),
                ("tables", Severity::Error),
                ("math", Severity::Error),
                ("html", Severity::Error),
                ("numbers", Severity::Error),
            ],
            "{f:#?}"
        );
    }

    #[test]
    fn pseudo_translations_of_the_sample_book_pass() {
        let zh = Lang::parse("zh");
        for (name, text) in [
            ("01-agents", include_str!("../../books/sample/01-agents.md")),
            ("02-tools", include_str!("../../books/sample/02-tools.md")),
            ("03-memory", include_str!("../../books/sample/03-memory.md")),
        ] {
            for glossary in [vec![], vec![("Agent".to_string(), "智能体".to_string())]] {
                let target = crate::llm::pseudo::pseudo_translate(text, &zh, &glossary);
                let f = check_unit(&ctx(), name, name, text, &target);
                assert!(
                    f.iter().all(|f| f.severity == Severity::Info),
                    "{name}: {f:#?}\n{target}"
                );
            }
        }
    }

    #[test]
    fn corpus_against_itself_is_fast_and_only_untranslated() {
        let Some(root) = crate::util::test_corpus() else {
            return;
        };
        let mut chapters: Vec<_> = std::fs::read_dir(root.join("en"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        chapters.sort();
        let texts: Vec<String> = chapters
            .iter()
            .map(|p| std::fs::read_to_string(p).unwrap())
            .collect();
        let ctx = ctx();
        let start = std::time::Instant::now();
        let mut units = 0;
        for (i, text) in texts.iter().enumerate() {
            let key = format!("ch{i}");
            for u in crate::book::segment::segment(&key, text, 2000) {
                let s = u.text(text);
                for f in check_unit(&ctx, &u.id, &key, s, s) {
                    assert_eq!(f.check, "untranslated", "{f:#?}");
                }
                units += 1;
            }
        }
        let took = start.elapsed();
        // Release builds take a fraction of a second; debug builds allow for slow CI machines
        // but still catch a quadratic scan.
        let limit = if cfg!(debug_assertions) { 60.0 } else { 5.0 };
        assert!(took.as_secs_f64() < limit, "{units} units in {took:?}");
        assert!(units > 400, "{units}");
    }

    #[test]
    fn every_check_a_damaged_translation_triggers_has_a_rank() {
        // Drop the table, the code block and the link; add a heading and a number: many
        // checks fire, and each must be in the ordering table the reports use.
        let broken = ZH_UNIT
            .replace("| `send_email` | 发送消息 | 有：需要批准 |\n", "")
            .replace("```json", "```python")
            .replace(
                "(https://platform.openai.com/docs/guides/function-calling)",
                "",
            )
            .replace("300 页", "301 页")
            + "\n## 新增标题\n";
        let findings = check_unit(&ctx(), "u", "c", EN_UNIT, &broken);
        let checks: std::collections::BTreeSet<&str> =
            findings.iter().map(|f| f.check.as_str()).collect();
        assert!(checks.len() >= 4, "{checks:?}");
        for c in &checks {
            assert!(
                check_rank(c) < CHECK_ORDER.len(),
                "{c} is not in CHECK_ORDER"
            );
        }
        let unique: std::collections::BTreeSet<&&str> = CHECK_ORDER.iter().collect();
        assert_eq!(unique.len(), CHECK_ORDER.len(), "no check listed twice");
        // Lost content and broken structure before terminology and style.
        assert!(check_rank("completeness") < check_rank("code_blocks"));
        assert!(check_rank("code_blocks") < check_rank("glossary"));
        assert!(check_rank("headings") < check_rank("term_drift"));
        assert_eq!(check_rank("no_such_check"), CHECK_ORDER.len());
    }
}
