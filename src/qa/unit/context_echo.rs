//! `context_echo`: a translation that also translated the read-only neighbour context the
//! translator was given (the end of the text before the unit). Three signals, any is enough:
//!
//! - **anchors**: numbers, inline code or link targets that occur in the context but not in
//!   the source appear in the translation (they survive translation verbatim, so they are
//!   precise evidence);
//! - **length**: the translation is as long as source and context together would be: with the
//!   pair's prior length ratio `r` ([`crate::qa::book::length::prior`], mid-point; 1.0 for unknown
//!   pairs), prose(target) ≥ r × (prose(source) + prose(context)) and > 1.5 × r × prose(source);
//! - **heading**: the context ends in a heading section and the translation starts with a
//!   heading while the source does not.
//!
//! Severity `warning`: a long translation can be legitimate (expansions, explanations), and the
//! per-unit `headings` check already errs on extra headings.

use crate::qa::book::length::{prior, prose_chars};
use crate::qa::view::doc::Doc;
use crate::qa::{Finding, QaContext, Severity};

pub const CHECK: &str = "context_echo";

/// Checks one translation against the context its request carried.
pub fn check(ctx: &QaContext, source: &str, context: &str, target: &str) -> Vec<Finding> {
    let (s, c, t) = (Doc::parse(source), Doc::parse(context), Doc::parse(target));
    let (src_prose, ctx_prose, tgt_prose) = (s.clean_prose(), c.clean_prose(), t.clean_prose());
    let (ps, pc, pt) = (
        prose_chars(&src_prose),
        prose_chars(&ctx_prose),
        prose_chars(&tgt_prose),
    );
    let r = prior(&ctx.source_lang, &ctx.target_lang).map_or(1.0, |(lo, hi)| (lo + hi) / 2.0);
    let mut out = Vec::new();
    // Anchors: tokens that survive translation unchanged.
    let numbers = |text: &str| -> Vec<String> {
        text.split(|ch: char| !ch.is_ascii_digit())
            .filter(|n| !n.is_empty())
            .map(String::from)
            .collect()
    };
    let (src_numbers, tgt_numbers) = (numbers(&src_prose), numbers(&tgt_prose));
    let mut echoed: Vec<String> = numbers(&ctx_prose)
        .into_iter()
        .filter(|n| !src_numbers.contains(n) && tgt_numbers.contains(n))
        .collect();
    echoed.extend(
        c.inline_code
            .iter()
            .filter(|x| !s.inline_code.contains(x) && t.inline_code.contains(x))
            .map(|x| format!("`{x}`")),
    );
    echoed.extend(
        c.links
            .iter()
            .filter(|x| !s.links.contains(x) && t.links.contains(x))
            .cloned(),
    );
    echoed.sort();
    echoed.dedup();
    if !echoed.is_empty() {
        out.push(Finding::new(
            CHECK,
            Severity::Warning,
            format!(
                "the translation contains {} from the read-only context before the unit, not from the unit itself; remove the translated context",
                echoed.join(", ")
            ),
            context,
            target,
        ));
    } else if ps >= 40
        && pc >= 40
        && (pt as f64) > 1.5 * r * ps as f64
        && (pt as f64) >= r * (ps + pc) as f64
    {
        out.push(Finding::new(
            CHECK,
            Severity::Warning,
            format!(
                "the translation is {pt} characters long where about {:.0} were expected; it may include the read-only context given before the unit — remove any text that translates it",
                r * ps as f64
            ),
            context,
            target,
        ));
    }
    let starts_with_heading = |text: &str| text.trim_start().starts_with('#');
    if !c.headings.is_empty() && starts_with_heading(target) && !starts_with_heading(source) {
        out.push(Finding::new(
            CHECK,
            Severity::Warning,
            "the translation starts with a heading the source does not have, like the context before the unit; remove the translated context",
            context,
            target,
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::Lang;
    use crate::termbase::Termbase;

    fn ctx() -> QaContext {
        QaContext::new(&Lang::parse("en"), &Lang::parse("zh"), &Termbase::default())
    }

    const CONTEXT: &str = "## Memory\n\nAn agent keeps notes in files so that a later step can read them back when they matter again.";
    const SOURCE: &str = "Long tasks need memory outside the context window, because the window is finite and fills up.\n";

    #[test]
    fn a_faithful_translation_passes() {
        assert!(
            check(
                &ctx(),
                SOURCE,
                CONTEXT,
                "长任务需要上下文窗口之外的记忆，因为窗口是有限的，会被填满。\n"
            )
            .is_empty()
        );
    }

    #[test]
    fn a_translation_with_the_context_is_flagged() {
        let echoed = "## 记忆\n\n智能体把笔记保存在文件中，以便后续步骤在需要时重新读取。\n\n长任务需要上下文窗口之外的记忆，因为窗口是有限的，会被填满。\n";
        let f = check(&ctx(), SOURCE, CONTEXT, echoed);
        assert_eq!(f.len(), 2, "{f:?}");
        assert!(
            f.iter()
                .all(|f| f.check == CHECK && f.severity == Severity::Warning)
        );
    }
}
