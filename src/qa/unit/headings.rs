//! `headings` (error): the translation keeps the source's headings (prompt rule 2).
//!
//! - the same number of headings and the same sequence of levels; the first divergence is
//!   named. A translation with more headings than its source most often carries an injected
//!   heading (a title or a part label the model added), and the message says so and quotes it;
//! - the anchors kept: the `{#id}` of each source heading must be on the corresponding
//!   translation heading (matched by position when the counts agree, otherwise anywhere in the
//!   translation), because links elsewhere in the book point at it.
//!
//! No thresholds: structure is either kept or not. Heading *text* is translated, so it is
//! only quoted, never compared.

use crate::qa::view::doc::{Doc, Heading};
use crate::qa::{Finding, QaContext, Severity};

const CHECK: &str = "headings";

/// Runs the check (see the module docs).
pub fn check(ctx: &QaContext, src: &Doc, tgt: &Doc, source: &str, target: &str) -> Vec<Finding> {
    let (s, t) = (&src.headings, &tgt.headings);
    let mut out = Vec::new();
    let show = |h: &Heading| format!("{} {}", "#".repeat(h.level as usize), h.text.trim());
    // First position where the level sequences differ (or where the shorter one ends).
    let diverge = s
        .iter()
        .zip(t)
        .position(|(a, b)| a.level != b.level)
        .unwrap_or(s.len().min(t.len()));
    let names = |hs: &[Heading], ks: &[usize]| {
        ks.iter()
            .take(4)
            .map(|&k| format!("\"{}\"", hs[k].text.trim()))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if t.len() > s.len() {
        let candidates = extra_positions(s, t);
        let label = candidates.iter().copied().find(|&k| label_like(&t[k]));
        let which = match (label, candidates.as_slice()) {
            (Some(k), _) | (None, &[k]) => {
                format!(
                    "heading {} \"{}\" (level {})",
                    k + 1,
                    t[k].text.trim(),
                    t[k].level
                )
            }
            (None, [k, ..]) => format!(
                "one of the level-{} headings {}",
                t[*k].level,
                names(t, &candidates)
            ),
            (None, []) => format!(
                "heading {} \"{}\" (level {})",
                diverge + 1,
                t[diverge].text.trim(),
                t[diverge].level
            ),
        };
        let at = label.or(candidates.first().copied()).unwrap_or(diverge);
        out.push(Finding::new(
            CHECK,
            Severity::Error,
            format!(
                "the translation has {} headings but the source {}: {which} looks injected; remove any heading, title or label the source does not have",
                t.len(),
                s.len(),
            ),
            &s.get(at).map(show).unwrap_or_default(),
            &show(&t[at]),
        ));
    } else if t.len() < s.len() {
        let candidates = extra_positions(t, s);
        let which = match candidates.as_slice() {
            [k] => format!(
                "source heading {} \"{}\" (level {}) is missing",
                k + 1,
                s[*k].text.trim(),
                s[*k].level
            ),
            [k, ..] => format!(
                "a level-{} heading is missing (one of {})",
                s[*k].level,
                names(s, &candidates)
            ),
            [] => format!(
                "source heading {} \"{}\" (level {}) is missing",
                diverge + 1,
                s[diverge].text.trim(),
                s[diverge].level
            ),
        };
        let at = candidates.first().copied().unwrap_or(diverge);
        out.push(Finding::new(
            CHECK,
            Severity::Error,
            format!(
                "the translation has {} headings but the source {}: {which}; restore it as a heading of the same level",
                t.len(),
                s.len(),
            ),
            &show(&s[at]),
            &t.get(at).map(show).unwrap_or_default(),
        ));
    } else if diverge < s.len() {
        let (a, b) = (&s[diverge], &t[diverge]);
        out.push(Finding::new(
            CHECK,
            Severity::Error,
            format!(
                "heading {} is level {} in the translation but level {} in the source; keep every heading at its source level",
                diverge + 1,
                b.level,
                a.level
            ),
            &show(a),
            &show(b),
        ));
    }
    for (i, h) in s.iter().enumerate() {
        let Some(anchor) = &h.anchor else { continue };
        let kept = if s.len() == t.len() {
            t[i].anchor.as_ref() == Some(anchor)
        } else {
            t.iter().any(|x| x.anchor.as_ref() == Some(anchor))
        };
        if !kept {
            let target = if s.len() == t.len() {
                show(&t[i])
            } else {
                String::new()
            };
            out.push(Finding::new(
                CHECK,
                Severity::Error,
                format!(
                    "heading {} lost its anchor {{#{anchor}}}; keep the anchor unchanged after the translated heading",
                    i + 1
                ),
                &format!("{} {{#{anchor}}}", show(h)),
                &target,
            ));
        }
    }
    out.extend(kept_ids(ctx, source, target));
    out
}

/// The source ids a translated heading keeps on a site whose tool reads explicit ids
/// ([`crate::book::anchors::HeadingIds`]): a heading without its own `{#id}` whose translated
/// text would give another id is an error naming the `{#id}` to add (mechanical repair adds
/// it). Headings are paired in order, and only when the counts agree (otherwise the count is
/// the finding).
fn kept_ids(ctx: &QaContext, source: &str, target: &str) -> Vec<Finding> {
    let Some(ids) = &ctx.heading_ids else {
        return Vec::new();
    };
    let Some(want) = ids.of(source) else {
        return Vec::new();
    };
    let (sh, th) = (
        crate::book::anchors::headings(source),
        crate::book::anchors::headings(target),
    );
    if sh.len() != want.len() || th.len() != want.len() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (i, ((w, a), b)) in want.iter().zip(&sh).zip(&th).enumerate() {
        let Some(w) = w else { continue };
        // A heading left as it was keeps its generated id.
        if ids.keeps(&b.text, b.id.as_deref(), w)
            || (b.id.is_none() && a.text.trim() == b.text.trim())
        {
            continue;
        }
        let got = b.id.clone().unwrap_or_else(|| ids.rule.slug(&b.text));
        out.push(Finding::new(
            CHECK,
            Severity::Error,
            format!(
                "heading {} gets the id `#{got}` in the translation where the source's is `#{w}`: links to it from other chapters and other sites break; keep `{{#{w}}}` after the translated heading",
                i + 1
            ),
            a.text.trim(),
            b.text.trim(),
        ));
    }
    out
}

/// With `long` one heading longer than `short`: the positions of `long` whose removal gives
/// `short`'s level sequence (the candidates for the added or lost heading).
fn extra_positions(short: &[Heading], long: &[Heading]) -> Vec<usize> {
    if long.len() != short.len() + 1 {
        return Vec::new();
    }
    // Removing k fits iff the prefixes before k agree and the suffixes after k agree.
    let n = short.len();
    let prefix = short
        .iter()
        .zip(long)
        .take_while(|(a, b)| a.level == b.level)
        .count();
    let suffix = short
        .iter()
        .rev()
        .zip(long.iter().rev())
        .take_while(|(a, b)| a.level == b.level)
        .count();
    // k fits when k <= prefix and (n - k) <= suffix.
    (n.saturating_sub(suffix)..=prefix.min(n)).collect()
}

/// Whether a heading's text looks like a label or a title a model adds.
fn label_like(h: &Heading) -> bool {
    let l = h.text.to_lowercase();
    [
        "part",
        "unit",
        "chunk",
        "segment",
        "translation",
        "translated",
        "部分",
        "单元",
        "译文",
        "翻译",
    ]
    .iter()
    .any(|w| l.contains(w))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::Lang;
    use crate::termbase::Termbase;

    fn run(s: &str, t: &str) -> Vec<Finding> {
        let ctx = QaContext::new(&Lang::parse("en"), &Lang::parse("zh"), &Termbase::default());
        check(&ctx, &Doc::parse(s), &Doc::parse(t), s, t)
    }

    const SRC: &str =
        "# Tools {#tools}\n\nText.\n\n## Describing a Tool\n\nMore.\n\nSetext\n------\n";

    #[test]
    fn translated_headings_with_anchors_pass() {
        let tgt = "# 工具 {#tools}\n\n文本。\n\n## 描述工具\n\n更多。\n\n## 标题\n";
        assert_eq!(run(SRC, tgt), vec![]);
    }

    #[test]
    fn injected_heading_is_named() {
        let tgt = "# 工具 {#tools}\n\n文本。\n\n## 第 1 部分\n\n## 描述工具\n\n更多。\n\n## 标题\n";
        let f = run(SRC, tgt);
        assert_eq!(f.len(), 1);
        assert_eq!(
            (f[0].check.as_str(), f[0].severity),
            (CHECK, Severity::Error)
        );
        assert_eq!(
            f[0].message,
            "the translation has 4 headings but the source 3: heading 2 \"第 1 部分\" (level 2) looks injected; remove any heading, title or label the source does not have"
        );
        assert_eq!(f[0].target_excerpt, "## 第 1 部分");
    }

    #[test]
    fn single_candidates_are_named() {
        let f = run(SRC, "## 描述工具\n\n更多。\n\n## 标题\n");
        assert_eq!(
            f[0].message,
            "the translation has 2 headings but the source 3: source heading 1 \"Tools\" (level 1) is missing; restore it as a heading of the same level"
        );
        let f = run(
            SRC,
            "# 译文\n\n# 工具 {#tools}\n\n文本。\n\n## 描述工具\n\n更多。\n\n## 标题\n",
        );
        assert_eq!(f.len(), 1);
        assert_eq!(
            f[0].message,
            "the translation has 4 headings but the source 3: heading 1 \"译文\" (level 1) looks injected; remove any heading, title or label the source does not have"
        );
        let f = run(
            SRC,
            "# 工具 {#tools}\n\n文本。\n\n## 描述工具\n\n更多。\n\n## 标题\n\n## 新增\n",
        );
        assert!(
            f[0].message.contains(
                "one of the level-2 headings \"描述工具\", \"标题\", \"新增\" looks injected"
            ),
            "{}",
            f[0].message
        );
    }

    #[test]
    fn level_change_missing_heading_and_lost_anchor() {
        let f = run(
            SRC,
            "# 工具 {#tools}\n\n文本。\n\n### 描述工具\n\n更多。\n\n## 标题\n",
        );
        assert_eq!(
            f[0].message,
            "heading 2 is level 3 in the translation but level 2 in the source; keep every heading at its source level"
        );
        assert_eq!(f.len(), 1);

        let f = run(SRC, "# 工具\n\n文本。\n\n描述工具\n\n更多。\n\n## 标题\n");
        assert_eq!(f.len(), 2);
        assert_eq!(
            f[0].message,
            "the translation has 2 headings but the source 3: a level-2 heading is missing (one of \"Describing a Tool\", \"Setext\"); restore it as a heading of the same level"
        );
        assert_eq!(
            f[1].message,
            "heading 1 lost its anchor {#tools}; keep the anchor unchanged after the translated heading"
        );
        assert_eq!(f[1].source_excerpt, "# Tools {#tools}");
    }
}
