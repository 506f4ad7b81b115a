//! QA check `emphasis`: emphasis markup the model broke, so that it renders as literal
//! asterisks. CommonMark only opens emphasis with a delimiter run that is *left-flanking*, that
//! is not followed by whitespace (CommonMark 0.31, §6.2): `** episodic记忆**` and
//! `* episodic记忆*` are text, not emphasis, and the second one even starts a bullet list at
//! the start of a list item. Recorded from the 1.5b model on the sample book
//! (`tests/fixtures/real-llm/sample.jsonl`, `03-memory-001`): it wrote `*Episodic memory*` as
//! `** episodic记忆**` in one candidate and as `* episodic记忆*` in another.
//!
//! A span is *broken* when a run of one or two `*` (not escaped, not part of a longer run) is
//! followed by spaces or tabs and then, on the same line, by text with no `*` that ends in a
//! non-space character and the same run again. Spans inside code, math, HTML and front matter
//! are never broken. The check reports the target's broken spans when it has more than the
//! source (a source that writes such a span on purpose keeps it); the repair
//! (`repair::repair`, one layer up) removes the spaces after the opening run.
//!
//! Hand-written rather than a regex: the pattern needs the excluded ranges of a Markdown parse
//! and a back-reference to the opening run, and it is a few lines of scanning.

use std::ops::Range;

use pulldown_cmark::{Event, Tag, TagEnd};

use crate::book::markdown;
use crate::qa::{Doc, Finding, QaContext, Severity};

/// The check name.
pub const CHECK: &str = "emphasis";

/// One broken emphasis span of a text: `span` is its byte range (opening run to closing run,
/// both included) and `gap` the spaces after the opening run (the bytes a repair removes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Broken {
    pub span: Range<usize>,
    pub gap: Range<usize>,
}

/// Byte ranges of `text` (BOM included) where `*` is markup of something else or literal:
/// code blocks, inline code, math, HTML and front matter.
fn excluded(text: &str) -> Vec<Range<usize>> {
    let (bom, _) = markdown::split_bom(text);
    let mut out = Vec::new();
    let mut open: Option<usize> = None;
    for (e, r) in markdown::parser(text).into_offset_iter() {
        let r = r.start + bom..r.end + bom;
        match e {
            Event::Start(Tag::CodeBlock(_) | Tag::HtmlBlock | Tag::MetadataBlock(_))
                if open.is_none() =>
            {
                open = Some(r.start);
                out.push(r);
            }
            Event::End(TagEnd::CodeBlock | TagEnd::HtmlBlock | TagEnd::MetadataBlock(_)) => {
                open = None;
            }
            Event::Code(_)
            | Event::InlineMath(_)
            | Event::DisplayMath(_)
            | Event::Html(_)
            | Event::InlineHtml(_) => out.push(r),
            _ => {}
        }
    }
    out
}

/// Byte ranges of `text` (BOM included) that the parser reads as text: an asterisk outside
/// them is markup (an emphasis delimiter, a list marker) or inside code.
fn literal(text: &str) -> Vec<Range<usize>> {
    let (bom, _) = markdown::split_bom(text);
    markdown::parser(text)
        .into_offset_iter()
        .filter(|(e, _)| matches!(e, Event::Text(_)))
        .map(|(_, r)| r.start + bom..r.end + bom)
        .collect()
}

/// The broken emphasis spans of `text`, in order (see the module docs). Both runs of a span
/// are asterisks the parser leaves as text: a closing delimiter of one emphasis followed by a
/// space and the opening one of the next (`*値* と *再同期*`) is not a broken span.
pub fn broken(text: &str) -> Vec<Broken> {
    let skip = excluded(text);
    // Parsed again only for a text that has a candidate span (most have none).
    let text_runs: std::cell::OnceCell<Vec<Range<usize>>> = std::cell::OnceCell::new();
    let skipped = |i: usize| skip.iter().any(|r| r.contains(&i));
    let markup = |i: usize| {
        !text_runs
            .get_or_init(|| literal(text))
            .iter()
            .any(|r| r.contains(&i))
    };
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut line_start = 0;
    for line in text.split_inclusive('\n') {
        let end = line_start + line.trim_end_matches(['\n', '\r']).len();
        let mut i = line_start;
        while i < end {
            if b[i] != b'*' || (i > line_start && matches!(b[i - 1], b'*' | b'\\')) {
                i += 1;
                continue;
            }
            let run = b[i..end].iter().take_while(|&&c| c == b'*').count();
            let after = i + run;
            let gap_end = after
                + b[after..end]
                    .iter()
                    .take_while(|&&c| c == b' ' || c == b'\t')
                    .count();
            // An opening run that starts its line or list item and is followed by a space is
            // read as a list marker, which is how a broken `* 语义记忆*` shows; elsewhere it
            // must be text.
            let starts_line = text[line_start..i].split_whitespace().all(|m| {
                matches!(m, "-" | "+" | "*" | ">")
                    || m.strip_suffix(['.', ')'])
                        .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
            });
            if run > 2
                || gap_end == after
                || gap_end >= end
                || skipped(i)
                || (!starts_line && markup(i))
            {
                i = after;
                continue;
            }
            // The closing run: the same length, not longer, after a non-space character.
            let close = (gap_end + 1..end).find(|&j| {
                b[j] == b'*'
                    && !matches!(b[j - 1], b' ' | b'\t' | b'*' | b'\\')
                    && b[j..end].iter().take_while(|&&c| c == b'*').count() == run
            });
            match close {
                Some(j) if !b[gap_end..j].contains(&b'*') && !skipped(j) && !markup(j) => {
                    out.push(Broken {
                        span: i..j + run,
                        gap: after..gap_end,
                    });
                    i = j + run;
                }
                _ => i = after,
            }
        }
        line_start += line.len();
    }
    out
}

/// How many emphasis and strong emphasis spans `text` has, as pulldown-cmark parses it.
pub fn count(text: &str) -> usize {
    markdown::parser(text)
        .filter(|e| matches!(e, Event::Start(Tag::Emphasis | Tag::Strong)))
        .count()
}

/// The `emphasis` check: an error for each broken span of the target when the target has more
/// of them than the source.
pub fn check(_ctx: &QaContext, _src: &Doc, _tgt: &Doc, source: &str, target: &str) -> Vec<Finding> {
    let theirs = broken(target);
    if theirs.len() <= broken(source).len() {
        return Vec::new();
    }
    theirs
        .iter()
        .map(|x| {
            let span = &target[x.span.clone()];
            let fixed = format!(
                "{}{}",
                &target[x.span.start..x.gap.start],
                &target[x.gap.end..x.span.end]
            );
            Finding::new(
                CHECK,
                Severity::Error,
                format!(
                    "emphasis `{span}` has a space after its opening `{}`, so it shows as literal asterisks; write `{fixed}`",
                    &target[x.span.start..x.gap.start]
                ),
                "",
                span,
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broken_emphasis_the_1_5b_model_wrote_is_found() {
        let t = "1. **工作记忆**：当前。\n2. ** episodic记忆**：过去。\n3. * 语义记忆*：事实。\n";
        let found: Vec<&str> = broken(t).iter().map(|x| &t[x.span.clone()]).collect();
        assert_eq!(found, ["** episodic记忆**", "* 语义记忆*"]);
        assert_eq!(count(t), 1);
    }

    #[test]
    fn math_code_lists_and_products_are_not_broken_emphasis() {
        for t in [
            "* a bullet item\n* another one\n",
            "Compute `a * b*` and $a * b*c$ here.\n",
            "```\nx = a ** b**\n```\n",
            "Three times * four * is twelve.\n",
            "Well **formed** and *fine* emphasis.\n",
            "An escaped \\** literal**.\n",
        ] {
            assert!(broken(t).is_empty(), "{t:?}: {:?}", broken(t));
        }
    }

    #[test]
    fn two_well_formed_emphases_on_a_line_are_not_a_broken_one() {
        for t in [
            "*リアクティブな値* と *再同期* を見ます。\n",
            "**然后** 和 **输入会更新**。\n",
            "## 你可以传 *key* 吗 {/*can-you-pass-a-key*/}\n",
            "* 列表项 *内部* 的强调\n",
            "**معطلا** و**يظهر** هنا\n",
        ] {
            assert_eq!(broken(t), vec![], "{t}");
        }
        // A span the parser leaves as literal asterisks is still broken.
        assert_eq!(broken("这是 ** episodic记忆** 的例子。\n").len(), 1);
    }

    #[test]
    fn check_reports_only_what_the_source_does_not_have() {
        let ctx = QaContext::new(
            &crate::lang::Lang::parse("en"),
            &crate::lang::Lang::parse("zh"),
            &Default::default(),
        );
        let s = "2. *Episodic memory*: past.\n";
        let t = "2. ** episodic记忆**：过去。\n";
        let f = check(&ctx, &Doc::parse(s), &Doc::parse(t), s, t);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].severity, Severity::Error);
        assert!(
            f[0].message.contains("write `**episodic记忆**`"),
            "{}",
            f[0].message
        );
        assert!(check(&ctx, &Doc::parse(t), &Doc::parse(t), t, t).is_empty());
    }
}
