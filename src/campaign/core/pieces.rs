//! Smaller when stuck: a unit whose kept translation still has structural error
//! findings after its revision rounds is translated again as smaller pieces, which are then
//! joined and QA-checked like any other candidate.
//!
//! The decision is the Manager's ([`crate::campaign::core::manager::Manager::step`]), derived from
//! recorded facts only (the QA findings of the recorded translations, the round limit), and is
//! journaled as [`crate::campaign::core::store::Event::UnitPieces`] once per unit fingerprint. The
//! pieces reuse the split mechanism of units the model could not translate in one answer:
//! they are the parts of the split key [`pieces_key`] (`<fp>.pieces`), translated as
//! `translate/<fp>.pieces.p1/r0`, … (a piece that is itself too long is split again like any
//! part), and joined locally into `translate/<fp>/r<round>`, where `round` comes after the
//! last revision round. The joined text's candidate origin is
//! [`crate::campaign::core::state::CandidateOrigin::Pieces`]; it competes under the never-worse
//! rule ([`crate::campaign::core::state::select_kept`]), so pieces that come out worse leave the
//! earlier candidate kept.

use std::ops::Range;

use crate::qa::{self, Finding};

/// The split key under which the pieces of the unit with fingerprint `fp` are recorded
/// (`<fp>.pieces`; its parts are `<fp>.pieces.p1`, …).
pub fn pieces_key(fp: &str) -> String {
    format!("{fp}.pieces")
}

/// Whether `part` (a split part's key, `<fp>.pieces.p1`, `<fp>.pieces.p1.p2`, …) is a piece of a
/// stuck unit rather than a part of a unit too long for one answer.
///
/// A piece's request has its own shape: its inline markup (code,
/// math, link and image markup and targets, footnote labels, inline HTML) is masked with
/// [`crate::agents::mask::mask_markup`], so the model only copies placeholders, and the book
/// brief is left out. Both answer faults recorded from the 1.5b model on units that stayed
/// wrong (`tests/fixtures/real-llm/tiny.jsonl`): it dropped a link or math it was told to keep,
/// in every round, and it answered a one-paragraph unit with the brief itself instead of a
/// translation.
pub fn is_piece_part(part: &str) -> bool {
    part.contains(".pieces.")
}

/// Whether `f` is an error that sends a unit, after its revision rounds, to be translated
/// again in pieces: a fault of the *shape* of the answer, which a model makes on a long request
/// and not on a short one (a `structure` finding: merged, split or dropped paragraphs, lost
/// markers or front matter; a `truncation` finding; a `length_ratio` error saying the text is
/// likely truncated; `injected_text`, text the source does not have); an `untranslated` error
/// (the answer echoed the source, or left a block in the source language): recorded from the
/// 0.5b model on the quality benchmark's slice, a unit echoed in English in its first
/// translation and its revision was translated when the same request left out the book brief,
/// which a piece's request does; or an error of a mechanical
/// class ([`crate::repair::is_mechanical_finding`]) still there after the deterministic
/// repair, which restores what it can place and leaves a span the model dropped, since it does
/// not guess where that span belongs. A piece's request masks the inline markup
/// ([`is_piece_part`]), so the model cannot drop or rewrite a span again, only lose a
/// placeholder, which fails that attempt and leaves the earlier candidate kept.
///
/// `repair` is the campaign's `repair` switch: with `repair = "off"` (a study of raw model
/// quality) the mechanical errors do not send a unit to pieces, as without masking.
pub fn is_stuck_finding(f: &Finding, repair: bool) -> bool {
    f.severity == qa::Severity::Error
        && ((repair && crate::repair::is_mechanical_finding(f))
            || f.check == qa::unit::structure::CHECK
            || f.check == qa::unit::structure::TRUNCATION
            || f.check == qa::unit::untranslated::CHECK
            || f.check == "injected_text"
            || (f.check == qa::book::length::CHECK && f.message.contains("truncated")))
}

/// Whether the piece of source `text` is sent to the model: only when it holds something to
/// translate ([`crate::book::markdown::has_prose`]). A piece of code blocks, bare HTML tags,
/// comments or rules is joined as its own source bytes, with no request: recorded from the
/// 1.5b model on the sample book (`tests/fixtures/real-llm/sample.jsonl`), a piece that was a
/// JSON code block alone came back unfenced with its keys translated.
pub fn needs_model(text: &str) -> bool {
    crate::book::markdown::has_prose(text)
}

/// Byte ranges of `text` (a unit's source) cut into pieces: groups of consecutive top-level
/// blocks, cut only where a cut is allowed ([`crate::book::segment::top_level_blocks`]), each
/// group at most `min(budget_tokens, tokens(text) / 2)` tokens ([`crate::tokens::count`])
/// unless it is a single block larger than that. A block with nothing to translate (code, bare
/// tags, comments, rules: not [`needs_model`]) is a piece of its own wherever a cut is allowed
/// around it, so it is joined as its source's bytes and the prose around it goes to the model
/// without it: recorded from the 1.5b model on the sample book, a piece of a sentence and the
/// JSON code block after it came back as the JSON alone, unfenced, with its keys translated.
/// The ranges cover `text` exactly, in order. Empty when `text` cannot be cut into at least two
/// pieces (a single block, or one uncuttable group): such a unit is not split.
///
/// `budget_tokens` is the translation request's share of the context
/// ([`crate::agents::shares::ContextShares::request`]); half the unit is the cap that makes
/// every piece smaller than what the model failed on.
pub fn piece_ranges(text: &str, budget_tokens: usize) -> Vec<Range<usize>> {
    use crate::book::segment::{BlockKind, top_level_blocks};
    let limit = budget_tokens.min(crate::tokens::count(text) / 2).max(1);
    let blocks = top_level_blocks(text);
    let bare: Vec<bool> = blocks
        .iter()
        .map(|b| b.kind == BlockKind::Verbatim && !needs_model(&text[b.range.clone()]))
        .collect();
    // Allowed cuts (the start of a block), and whether a bare block on either side forces it.
    let cuts: Vec<(usize, bool)> = blocks
        .iter()
        .enumerate()
        .skip(1)
        .filter(|(_, b)| b.cut_before && b.range.start > 0 && b.range.start < text.len())
        .map(|(i, b)| (b.range.start, bare[i] || bare[i - 1]))
        .chain([(text.len(), false)])
        .collect();
    let mut out = Vec::new();
    let mut start = 0;
    let mut prev: Option<usize> = None;
    for &(end, forced) in &cuts {
        if let Some(p) = prev
            && p > start
            && crate::tokens::count(&text[start..end]) > limit
        {
            out.push(start..p);
            start = p;
        }
        if forced && end > start {
            out.push(start..end);
            start = end;
        }
        prev = Some(end);
    }
    if start < text.len() {
        out.push(start..text.len());
    }
    if out.len() < 2 { Vec::new() } else { out }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `truncation` check was split out of `structure` under its own name and no longer
    /// sent a unit to pieces, though the doc above promised it; `untranslated` never did.
    #[test]
    fn a_truncated_or_untranslated_unit_was_not_sent_to_pieces() {
        let err = |check: &'static str| Finding::new(check, qa::Severity::Error, "m", "s", "t");
        for check in [
            qa::unit::structure::TRUNCATION,
            qa::unit::untranslated::CHECK,
            qa::unit::structure::CHECK,
            "injected_text",
        ] {
            assert!(is_stuck_finding(&err(check), true), "{check}");
            assert!(is_stuck_finding(&err(check), false), "{check}");
        }
        // A word left in English, a glossary miss: not a fault of the answer's shape.
        for check in ["untranslated_word", qa::unit::glossary::CHECK, "numbers"] {
            assert!(!is_stuck_finding(&err(check), false), "{check}");
        }
        let warning = Finding::new(
            qa::unit::untranslated::CHECK,
            qa::Severity::Warning,
            "m",
            "s",
            "t",
        );
        assert!(!is_stuck_finding(&warning, true));
    }

    #[test]
    fn two_paragraphs_become_two_pieces() {
        let text = "First paragraph with a few words in it.\n\nSecond paragraph with a few more words in it.\n";
        let r = piece_ranges(text, 10_000);
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!(
            &text[r[0].clone()],
            "First paragraph with a few words in it.\n\n"
        );
        assert_eq!(
            &text[r[1].clone()],
            "Second paragraph with a few more words in it.\n"
        );
    }

    #[test]
    fn pieces_cover_the_text_and_respect_the_budget() {
        let para = "A sentence of about ten words sits in this paragraph here.";
        let text: String = (0..12).map(|i| format!("{para} {i}\n\n")).collect();
        let r = piece_ranges(&text, 40);
        assert!(r.len() >= 3, "{r:?}");
        assert_eq!(r[0].start, 0);
        assert_eq!(r.last().unwrap().end, text.len());
        for w in r.windows(2) {
            assert_eq!(w[0].end, w[1].start);
        }
        for p in &r {
            assert!(crate::tokens::count(&text[p.clone()]) <= 40, "{p:?}");
        }
    }

    /// Recorded from the 1.5b model on the sample book (`02-tools-001`): the sentence before a
    /// JSON code block and the block itself, sent as one piece, came back as the JSON alone.
    #[test]
    fn a_code_block_between_paragraphs_was_sent_with_its_prose() {
        let text = "The schema below describes `read_file`:\n\n```json\n{\"name\": \"read_file\"}\n```\n\nSee the guide.\n\n    # indented code\n    agent --tools x\n\nTool calls cost tokens.\n";
        let r = piece_ranges(text, 10_000);
        let pieces: Vec<&str> = r.iter().map(|x| &text[x.clone()]).collect();
        assert_eq!(
            pieces,
            [
                "The schema below describes `read_file`:\n\n",
                "```json\n{\"name\": \"read_file\"}\n```\n\n",
                "See the guide.\n\n",
                "    # indented code\n    agent --tools x\n\n",
                "Tool calls cost tokens.\n",
            ]
        );
        let sent: Vec<bool> = pieces.iter().map(|p| needs_model(p)).collect();
        assert_eq!(sent, [true, false, true, false, true]);
    }

    #[test]
    fn a_single_block_is_not_cut() {
        assert!(piece_ranges("One paragraph only, however long it is.\n", 10_000).is_empty());
        assert!(piece_ranges("```\ncode\n\n\nmore code\n```\n", 10_000).is_empty());
    }
}
