//! Issue 18, "smaller when stuck": a unit whose kept translation still has structural error
//! findings after its revision rounds is translated again as smaller pieces, which are then
//! joined and QA-checked like any other candidate.
//!
//! The decision is the Manager's ([`crate::campaign::manager::Manager::step`]), derived from
//! recorded facts only (the QA findings of the recorded translations, the round limit), and is
//! journaled as [`crate::campaign::store::Event::UnitPieces`] once per unit fingerprint. The
//! pieces reuse the split mechanism of units the model could not translate in one answer:
//! they are the parts of the split key [`pieces_key`] (`<fp>.pieces`), translated as
//! `translate/<fp>.pieces.p1/r0`, … (a piece that is itself too long is split again like any
//! part), and joined locally into `translate/<fp>/r<round>`, where `round` comes after the
//! last revision round. The joined text's candidate origin is
//! [`crate::campaign::state::CandidateOrigin::Pieces`]; it competes under the never-worse
//! rule ([`crate::campaign::state::select_kept`]), so pieces that come out worse leave the
//! earlier candidate kept.

use std::ops::Range;

use crate::qa::{self, Finding};

/// The split key under which the pieces of the unit with fingerprint `fp` are recorded
/// (`<fp>.pieces`; its parts are `<fp>.pieces.p1`, …).
pub fn pieces_key(fp: &str) -> String {
    format!("{fp}.pieces")
}

/// Whether `f` is an error of the kind smaller pieces can cure: a fault of the *shape* of the
/// answer, which a model makes on a long request and not on a short one. That is a
/// `structure` finding (merged, split or dropped paragraphs, lost markers or front matter), a
/// truncation (a `length_ratio` error saying the text is likely truncated), or `injected_text`
/// (text the source does not have).
///
/// The other mechanical classes ([`crate::repair::is_mechanical`]: code, links, images,
/// footnotes, headings, math, HTML) are left out on purpose: they are restored by the
/// deterministic repair of issue 18, and a model that rewrites a URL or a code span does so in
/// a request of any size (a piece would only repeat the fault and, on a tie, displace the
/// earlier candidate).
pub fn is_stuck_finding(f: &Finding) -> bool {
    f.severity == qa::Severity::Error
        && (f.check == qa::structure::CHECK
            || f.check == "injected_text"
            || (f.check == qa::length::CHECK && f.message.contains("truncated")))
}

/// Byte ranges of `text` (a unit's source) cut into pieces: groups of consecutive top-level
/// blocks, cut only where a cut is allowed ([`crate::book::segment::top_level_blocks`]), each
/// group at most `min(budget_tokens, tokens(text) / 2)` tokens ([`crate::tokens::count`])
/// unless it is a single block larger than that. The ranges cover `text` exactly, in order.
/// Empty when `text` cannot be cut into at least two pieces (a single block, or one uncuttable
/// group): such a unit is not split.
///
/// `budget_tokens` is the translation request's share of the context
/// ([`crate::agents::shares::ContextShares::request`]); half the unit is the cap that makes
/// every piece smaller than what the model failed on.
pub fn piece_ranges(text: &str, budget_tokens: usize) -> Vec<Range<usize>> {
    let limit = budget_tokens.min(crate::tokens::count(text) / 2).max(1);
    let ends: Vec<usize> = crate::book::segment::top_level_blocks(text)
        .iter()
        .skip(1)
        .filter(|b| b.cut_before && b.range.start > 0 && b.range.start < text.len())
        .map(|b| b.range.start)
        .chain([text.len()])
        .collect();
    let mut out = Vec::new();
    let mut start = 0;
    let mut prev: Option<usize> = None;
    for &end in &ends {
        if let Some(p) = prev
            && p > start
            && crate::tokens::count(&text[start..end]) > limit
        {
            out.push(start..p);
            start = p;
        }
        prev = Some(end);
    }
    out.push(start..text.len());
    if out.len() < 2 { Vec::new() } else { out }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn a_single_block_is_not_cut() {
        assert!(piece_ranges("One paragraph only, however long it is.\n", 10_000).is_empty());
        assert!(piece_ranges("```\ncode\n\n\nmore code\n```\n", 10_000).is_empty());
    }
}
