//! The book brief: a short Markdown document the Glossary stage writes for every translator:
//! audience, register and tone, the conventions for this book and target language (number and
//! unit formats, quotation marks, what stays as written), and a synopsis of each chapter. Term
//! renderings are the termbase's alone: the conventions heading once asked "whether English
//! terms are kept in parentheses on first use", and the 1.5B model answered with a rule that
//! lowered house-term adherence (docs/src/benchmarks.md, finding 18). The editor may edit it;
//! it is part of the stable prefix of every Translation request, and its hash is part of every
//! unit's fingerprint.
//!
//! The call sees an outline of the book, never whole chapters: each chapter's headings and the
//! opening of its first paragraph, cut to fit the budget.

use pulldown_cmark::{Event, Tag, TagEnd};

use super::Agent;
use crate::book::{Chapter, markdown};
use crate::lang::Lang;
use crate::llm::{Message, Request};

/// Most headings listed per chapter in the outline.
pub const MAX_HEADINGS: usize = 15;
/// Characters of each chapter's opening paragraph in the outline.
pub const OPENING_CHARS: usize = 300;
/// Tokens the brief may take (the model is asked for about this; the prompt says 500 words).
pub const BRIEF_TOKENS: u32 = 1200;

/// Tokens of book outline the brief request carries: 6,000, or less when the campaign's input
/// budget (`max_context_tokens`) is smaller (a quarter of it is left for the instructions).
pub fn outline_budget(max_context_tokens: usize) -> usize {
    super::shares::ContextShares::of(max_context_tokens).brief_outline
}

/// Marker in the system prompt (used by the pseudo provider and test servers to recognise the
/// call).
pub const BRIEF_MARKER: &str = "translation brief";

/// The outline of one chapter: its key, headings (level ≤ 3) and opening.
pub fn chapter_outline(ch: &Chapter) -> String {
    let mut headings = Vec::new();
    let mut opening = String::new();
    let mut in_heading: Option<(u8, String)> = None;
    let mut in_para = false;
    for ev in markdown::parser(&ch.text) {
        match ev {
            Event::Start(Tag::Heading { level, .. }) => {
                in_heading = Some((level as u8, String::new()))
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some((l, t)) = in_heading.take()
                    && l <= 3
                    && headings.len() < MAX_HEADINGS
                {
                    headings.push(format!("{} {}", "#".repeat(l as usize), t.trim()));
                }
            }
            Event::Start(Tag::Paragraph) if opening.is_empty() => in_para = true,
            Event::End(TagEnd::Paragraph) => in_para = false,
            Event::Text(t) | Event::Code(t) => {
                if let Some((_, h)) = in_heading.as_mut() {
                    h.push_str(&t);
                } else if in_para && opening.chars().count() < OPENING_CHARS {
                    opening.push_str(&t);
                }
            }
            Event::SoftBreak if in_para => opening.push(' '),
            _ => {}
        }
    }
    let opening = crate::util::excerpt(opening.trim(), OPENING_CHARS);
    format!(
        "Chapter `{}`:\n{}\nOpening: {}\n",
        ch.key,
        headings.join("\n"),
        opening
    )
}

/// The system prompt.
pub fn system_prompt(source: &Lang, target: &Lang) -> String {
    format!(
        "You are the lead editor preparing the {BRIEF_MARKER} for a technical book translated from {src} into {tgt}. From the outline the user gives, write a brief of at most 500 words in English Markdown with these sections:\n\
         ## Audience\n## Register and tone\n## Conventions for {tgt} (number and unit formats, quotation marks, what stays as written such as code and product names, anything else translators must do the same way; how each term is rendered is fixed by the termbase, so give no rule for terms)\n## Chapter synopses (one or two sentences per chapter, in book order)\n\
         Reply with the brief only.",
        src = source.name,
        tgt = target.name
    )
}

/// The request, for an outline already cut to the budget.
pub fn build_request(source: &Lang, target: &Lang, outline: &str) -> Request {
    Request {
        task: Agent::Glossary.into(),
        messages: vec![
            Message::system(system_prompt(source, target)),
            Message::user(format!("Book outline:\n\n{outline}")),
        ],
        json_schema: None,
        max_tokens: Some(BRIEF_TOKENS),
        ceiling_tokens: None,
        prefill: None,
    }
}

/// The outline of a book within `budget_tokens`: chapter outlines, each shortened alike when
/// the whole does not fit.
pub fn outline(chapters: &[Chapter], budget_tokens: usize) -> String {
    let parts: Vec<String> = chapters.iter().map(chapter_outline).collect();
    let mut whole = parts.join("\n");
    let mut keep = 1.0f64;
    while crate::tokens::count(&whole) > budget_tokens && keep > 0.05 {
        keep *= 0.7;
        whole = parts
            .iter()
            .map(|p| {
                let n = ((p.chars().count() as f64) * keep) as usize;
                crate::util::excerpt(p, n.max(40))
            })
            .collect::<Vec<_>>()
            .join("\n");
    }
    whole
}

/// Expected length of a brief in tokens for a book of `chapters` chapters (for estimates made
/// before the brief exists): about 150 tokens of audience, register and conventions plus 40 per
/// chapter synopsis, at most [`BRIEF_TOKENS`]. Measured on the pseudo provider's briefs, which
/// follow the same shape.
pub fn expected_tokens(chapters: usize) -> usize {
    (150 + 40 * chapters).min(BRIEF_TOKENS as usize)
}

/// Placeholder text of [`expected_tokens`] tokens, standing in for the brief in estimates.
pub fn placeholder(chapters: usize) -> String {
    "brief ".repeat(expected_tokens(chapters))
}

/// Whether `req` is a brief request.
pub fn is_brief(req: &Request) -> bool {
    req.messages
        .first()
        .is_some_and(|m| m.content.contains(BRIEF_MARKER))
}

/// Cleans the model's answer: leading reasoning, a wrapping code fence and surrounding blank
/// lines are removed.
pub fn clean(answer: &str) -> String {
    let (text, _) = crate::llm::stream::split_think(answer);
    let t = text.trim();
    let t = t
        .strip_prefix("```markdown")
        .or_else(|| t.strip_prefix("```md"))
        .or_else(|| t.strip_prefix("```"))
        .map_or(t, |r| r.trim_end().strip_suffix("```").unwrap_or(r));
    format!("{}\n", t.trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outline_lists_headings_and_opening_within_budget() {
        let ch = Chapter::from_bytes("ch1.md", b"# Agents\n\nAn agent is a program that decides.\n\n## Loop\n\nText.\n\n```\n# not a heading\n```\n".to_vec()).unwrap();
        let o = chapter_outline(&ch);
        assert!(
            o.contains("# Agents")
                && o.contains("## Loop")
                && o.contains("Opening: An agent is a program")
        );
        assert!(!o.contains("not a heading"));
        let many: Vec<Chapter> = (0..40)
            .map(|i| {
                Chapter::from_bytes(
                    &format!("c{i}.md"),
                    format!("# Chapter {i}\n\n{}\n", "word ".repeat(200)).into_bytes(),
                )
                .unwrap()
            })
            .collect();
        assert!(crate::tokens::count(&outline(&many, 1500)) <= 1500);
    }

    #[test]
    fn clean_removes_fences_and_think() {
        assert_eq!(
            clean("<think>x</think>```markdown\n## Audience\nEngineers.\n```"),
            "## Audience\nEngineers.\n"
        );
    }
}
