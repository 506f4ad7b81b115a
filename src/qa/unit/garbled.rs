//! `garbled_text` (per unit, `error`): the translation holds U+FFFD REPLACEMENT CHARACTER (`�`)
//! that the source does not: bytes the model sent were not valid UTF-8 (a small model cut a
//! multi-byte character in two), so a word of the translation is lost and the page shows `�`.
//! No other check sees it: the character is a letter of no script, in prose. Likewise a
//! placeholder of the translation mask left in the text (`⟦3⟧`, or the look-alikes a small
//! model writes, `【3】`, `〚3〛`), which the source does not hold: the span it stood for (inline
//! code, a link, site syntax) is lost there, and the reader sees the bracket.

use crate::qa::view::doc::Doc;
use crate::qa::{Finding, QaContext, Severity};

/// Check name.
pub const CHECK: &str = "garbled_text";

/// Runs the check (see the module docs): one finding per line that gained `�`, and one per
/// mask placeholder the source does not hold.
pub fn check(_ctx: &QaContext, _src: &Doc, _tgt: &Doc, source: &str, target: &str) -> Vec<Finding> {
    use std::sync::LazyLock;
    static PLACEHOLDER: LazyLock<regex::Regex> = LazyLock::new(|| {
        regex::Regex::new(r"⟦+\d+⟧+|【+\d+】+|〚+\d+〛+").expect("a valid pattern")
    });
    let mut out = Vec::new();
    for m in PLACEHOLDER.find_iter(target) {
        if !source.contains(m.as_str()) {
            let at = target[..m.start()].chars().count();
            out.push(
                Finding::new(
                    CHECK,
                    Severity::Error,
                    format!(
                        "the translation holds `{}`, a placeholder of booktr's mask the model did not give back in place: the span it stood for (inline code, a link, site syntax) is lost there; restore it from the source",
                        m.as_str()
                    ),
                    "",
                    m.as_str(),
                )
                .with_span(at, at + m.as_str().chars().count()),
            );
        }
    }
    const BAD: char = '\u{FFFD}';
    if source.contains(BAD) || !target.contains(BAD) {
        return out;
    }
    let mut at = 0; // chars before the current line
    for line in target.split_inclusive('\n') {
        if let Some(i) = line.chars().position(|c| c == BAD) {
            out.push(
                Finding::new(
                    CHECK,
                    Severity::Error,
                    format!(
                        "the translation has a replacement character `\u{FFFD}` in `{}`: the model's answer was not valid UTF-8 there and a word is lost; translate the line again",
                        crate::util::excerpt(line.trim(), 60)
                    ),
                    "",
                    line.trim(),
                )
                .with_span(at + i, at + i + 1),
            );
        }
        at += line.chars().count();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn en_zh() -> (QaContext, Doc) {
        let ctx = QaContext::new(
            &crate::lang::Lang::parse("en"),
            &crate::lang::Lang::parse("zh"),
            &crate::termbase::Termbase::default(),
        );
        (ctx, Doc::default())
    }

    #[test]
    fn a_replacement_character_the_source_does_not_have_is_an_error() {
        let (ctx, d) = en_zh();
        let f = check(
            &ctx,
            &d,
            &d,
            "# Caret\n\nText.\n",
            "# 纺\u{FFFD} {#caret}\n\n文本。\n",
        );
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].span, Some((3, 4)));
        assert!(check(&ctx, &d, &d, "a \u{FFFD}\n", "甲 \u{FFFD}\n").is_empty());
        assert!(check(&ctx, &d, &d, "a\n", "甲\n").is_empty());
    }

    #[test]
    fn a_mask_placeholder_left_in_the_translation_is_an_error() {
        let (ctx, d) = en_zh();
        let f = check(
            &ctx,
            &d,
            &d,
            "Surround it in single `^`.\n",
            "将内容用单【3】包围。\n\n【3】\n",
        );
        assert_eq!(f.len(), 2, "{f:?}");
        assert_eq!(f[0].span, Some((5, 8)));
        // Brackets the source writes itself are its own.
        assert!(check(&ctx, &d, &d, "See 【1】.\n", "见【1】。\n").is_empty());
    }
}
