//! Sentence segments for CAT tools: where a translation unit (a run of Markdown blocks, often
//! several thousand characters) is cut into the `<segment>`s of an XLIFF 2 `<unit>` and the
//! `<tu>`s of a TMX, and how the target's sentences are paired with the source's.
//!
//! **Cuts** ([`sentences`]), SRX-style (break rules, then no-break exceptions per language):
//! 1. before every top-level Markdown block (paragraph, heading, list, code block, table...)
//!    where the book segmenter allows a cut ([`crate::book::segment::top_level_blocks`]);
//! 2. before every item of a list block (a line starting with `-`, `*`, `+`, `1.` or `1)`);
//! 3. at every sentence boundary of [`crate::book::sentences::sentence_boundaries`] (Latin
//!    `.!?…` before whitespace and a non-lower-case letter, CJK `。！？．` with no space; never
//!    inside code, math or a link target; decimals such as `3.14` and ellipses inside a
//!    sentence are no boundary), except (the no-break rules):
//!    - after an abbreviation of [`ABBREVIATIONS`] for the source language or English
//!      (`e.g.`, `i.e.`, `cf.`, `vs.`, `Dr.`; `z.B.`, `vgl.` in German...), and after
//!      `Fig.`, `Eq.`, `No.`, `p.`, `Sec.`... ([`NUMBER_ABBREVIATIONS`]) when a digit follows;
//!    - after a single upper-case letter and a dot (an initial, `J. Smith`);
//!    - after the number of an ordered list item (`1. First`).
//!
//! No cut ever falls inside an inline code ([`super::inline::split`]: code, links, emphasis,
//! HTML, math), so every code lies in one segment whole.
//!
//! **Alignment** ([`align`]): source and target are cut into blocks and sentences. When both
//! have the same number of blocks, each block pair is aligned sentence by sentence when both
//! have the same number of sentences and each sentence pair has the same inline codes (as a
//! multiset); otherwise the block pair is one segment. When the block counts differ, the whole
//! unit is one segment. Segments are contiguous byte ranges covering the whole text, so joining
//! them in order gives the text back exactly.

use std::ops::Range;

use super::inline::{self, Piece};
use crate::book::segment::top_level_blocks;
use crate::book::sentences::sentence_boundaries;

/// Abbreviations after which a `.` never ends a sentence, by primary language subtag, lower
/// case, without their final dot. The English list applies to every language (technical text
/// quotes English). Chosen from the abbreviations common in technical books; `etc.` is left
/// out because it usually ends a sentence.
pub const ABBREVIATIONS: &[(&str, &[&str])] = &[
    (
        "en",
        &[
            "e.g", "i.e", "cf", "vs", "al", "approx", "dr", "mr", "mrs", "ms", "prof", "st", "jr",
            "sr", "inc", "ltd", "corp", "resp", "esp", "viz",
        ],
    ),
    (
        "de",
        &[
            "z.b", "bzw", "usw", "ca", "vgl", "evtl", "ggf", "d.h", "u.a", "s.o", "s.u", "z.t",
            "inkl", "bspw",
        ],
    ),
    ("fr", &["p.ex", "env", "m", "mme", "mlle", "cf"]),
    ("es", &["p.ej", "sr", "sra", "dr", "dra", "ej"]),
];

/// Abbreviations that do not end a sentence when a digit follows (`Fig. 3`, `No. 5`, `p. 12`),
/// lower case, without their dot. Applies to every language.
pub const NUMBER_ABBREVIATIONS: &[&str] = &[
    "fig", "figs", "eq", "eqs", "no", "nos", "vol", "ch", "chap", "sec", "p", "pp", "ref", "refs",
    "tab", "art", "abb", "nr", "bd", "kap", "s",
];

/// One segment of a unit: byte ranges in the source and (when there is a target) the target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    pub source: Range<usize>,
    pub target: Option<Range<usize>>,
    /// True when the segment is one sentence (or one sentence-aligned piece) on both sides;
    /// false for a block or unit kept whole because its sentences did not align 1:1.
    pub sentence: bool,
}

/// An inline code of a text: its byte range and its native start and end (end empty for a
/// standalone code), used to compare the codes of two sentences.
type CodeSpan = (Range<usize>, String, String);

/// The inline codes of `pieces` (as [`inline::split`] gives them for a text), with byte ranges
/// in that text, outermost first.
fn code_spans(pieces: &[Piece], pos: &mut usize, out: &mut Vec<CodeSpan>) {
    for p in pieces {
        match p {
            Piece::Text(t) => *pos += t.len(),
            Piece::Ph(n) => {
                out.push((*pos..*pos + n.len(), n.clone(), String::new()));
                *pos += n.len();
            }
            Piece::Pc { start, end, inner } => {
                let at = out.len();
                let begin = *pos;
                out.push((begin..begin, start.clone(), end.clone()));
                *pos += start.len();
                code_spans(inner, pos, out);
                *pos += end.len();
                out[at].0 = begin..*pos;
            }
        }
    }
}

/// Byte length of a piece's text.
pub fn piece_len(p: &Piece) -> usize {
    match p {
        Piece::Text(t) | Piece::Ph(t) => t.len(),
        Piece::Pc { start, end, inner } => {
            start.len() + end.len() + inner.iter().map(piece_len).sum::<usize>()
        }
    }
}

/// The primary subtag of a BCP 47 code, lower case (`zh-Hans` → `zh`).
fn primary(lang: &str) -> String {
    lang.split(['-', '_'])
        .next()
        .unwrap_or("")
        .to_ascii_lowercase()
}

/// Whether the sentence boundary at `b` of `text` is an exception of the no-break rules (see
/// the module docs) for language `lang`.
fn no_break(text: &str, b: usize, lang: &str) -> bool {
    let before = text[..b]
        .trim_end()
        .trim_end_matches(['"', '\'', '”', '’', ')', ']']);
    let Some(body) = before.strip_suffix('.') else {
        return false;
    };
    let word_start = body
        .char_indices()
        .rev()
        .find(|(_, c)| c.is_whitespace() || matches!(c, '(' | '[' | '"' | '“' | '\'' | '*' | '_'))
        .map_or(0, |(i, c)| i + c.len_utf8());
    let word = body[word_start..].to_lowercase();
    if word.is_empty() {
        return false;
    }
    let initial = &body[word_start..];
    let mut chars = initial.chars();
    if chars.next().is_some_and(char::is_uppercase) && chars.next().is_none() {
        return true;
    }
    if word.chars().all(|c| c.is_ascii_digit()) {
        let line_start = text[..word_start].rfind('\n').map_or(0, |i| i + 1);
        return text[line_start..word_start].trim().is_empty();
    }
    let p = primary(lang);
    if ABBREVIATIONS
        .iter()
        .filter(|(l, _)| *l == "en" || *l == p)
        .any(|(_, list)| list.contains(&word.as_str()))
    {
        return true;
    }
    NUMBER_ABBREVIATIONS.contains(&word.as_str())
        && text[b..].chars().next().is_some_and(|c| c.is_ascii_digit())
}

/// Whether a line starts a list item (`-`, `*`, `+`, `1.` or `1)` and a space or tab).
fn starts_list_item(line: &str) -> bool {
    let l = line.trim_start();
    if let Some(rest) = l.strip_prefix(['-', '*', '+']) {
        return rest.starts_with([' ', '\t']);
    }
    let digits = l.chars().take_while(char::is_ascii_digit).count();
    digits > 0
        && digits <= 9
        && l[digits..].starts_with(['.', ')'])
        && l[digits + 1..].starts_with([' ', '\t'])
}

/// The blocks of `text` in language `lang`, each as its sentences' byte ranges (see the module
/// docs for the rules). Blocks and sentences are contiguous and cover the whole text; an
/// empty text is one empty block.
pub fn sentences(text: &str, lang: &str) -> Vec<Vec<Range<usize>>> {
    sentences_with(text, lang, &inline::split(text))
}

fn sentences_with(text: &str, lang: &str, pieces: &[Piece]) -> Vec<Vec<Range<usize>>> {
    let mut spans = Vec::new();
    code_spans(pieces, &mut 0, &mut spans);
    let allowed = |pos: usize| {
        pos > 0
            && pos < text.len()
            && !text[..pos]
                .trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}')
                .is_empty()
            && !spans.iter().any(|(r, _, _)| r.start < pos && pos < r.end)
    };
    let mut starts: Vec<usize> = top_level_blocks(text)
        .into_iter()
        .filter(|b| b.cut_before)
        .map(|b| b.range.start)
        .filter(|&p| allowed(p))
        .collect();
    starts.insert(0, 0);
    starts.dedup();
    let mut out = Vec::new();
    for (i, &a) in starts.iter().enumerate() {
        let b = starts.get(i + 1).copied().unwrap_or(text.len());
        let block = &text[a..b];
        // List items, then sentences inside each.
        let mut items = vec![a];
        if starts_list_item(block) {
            let mut pos = a;
            for line in block.split_inclusive('\n') {
                if pos > a && starts_list_item(line) && allowed(pos) {
                    items.push(pos);
                }
                pos += line.len();
            }
        }
        let mut cuts = Vec::new();
        for (k, &ia) in items.iter().enumerate() {
            let ib = items.get(k + 1).copied().unwrap_or(b);
            if k > 0 {
                cuts.push(ia);
            }
            for s in sentence_boundaries(&text[ia..ib]) {
                let at = ia + s;
                if allowed(at) && !no_break(text, at, lang) {
                    cuts.push(at);
                }
            }
        }
        let mut ranges = Vec::new();
        let mut last = a;
        for c in cuts {
            if c > last && c < b {
                ranges.push(last..c);
                last = c;
            }
        }
        ranges.push(last..b);
        out.push(ranges);
    }
    out
}

/// The codes lying in `range`, as a sorted list of native (start, end) pairs.
fn codes_in(spans: &[CodeSpan], range: &Range<usize>) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = spans
        .iter()
        .filter(|(r, _, _)| r.start >= range.start && r.end <= range.end)
        .map(|(_, s, e)| (s.clone(), e.clone()))
        .collect();
    v.sort();
    v
}

/// The segments of a unit with text `source` (language `src_lang`) and, when translated,
/// `target` (language `trg_lang`), aligned as the module docs describe. Never empty; the
/// source ranges (and target ranges, when there is a target) are contiguous and cover their
/// whole texts.
pub fn align(source: &str, target: Option<&str>, src_lang: &str, trg_lang: &str) -> Vec<Segment> {
    let sp = inline::split(source);
    let sb = sentences_with(source, src_lang, &sp);
    let Some(target) = target else {
        return sb
            .into_iter()
            .flatten()
            .map(|r| Segment {
                source: r,
                target: None,
                sentence: true,
            })
            .collect();
    };
    let tp = inline::split(target);
    let tb = sentences_with(target, trg_lang, &tp);
    let whole = |v: &[Range<usize>]| v[0].start..v[v.len() - 1].end;
    if sb.len() != tb.len() {
        return vec![Segment {
            source: 0..source.len(),
            target: Some(0..target.len()),
            sentence: false,
        }];
    }
    let (mut ss, mut ts) = (Vec::new(), Vec::new());
    code_spans(&sp, &mut 0, &mut ss);
    code_spans(&tp, &mut 0, &mut ts);
    let mut out = Vec::new();
    for (s, t) in sb.iter().zip(&tb) {
        let aligned = s.len() == t.len()
            && s.iter()
                .zip(t)
                .all(|(a, b)| codes_in(&ss, a) == codes_in(&ts, b));
        if aligned {
            out.extend(s.iter().zip(t).map(|(a, b)| Segment {
                source: a.clone(),
                target: Some(b.clone()),
                sentence: true,
            }));
        } else {
            out.push(Segment {
                source: whole(s),
                target: Some(whole(t)),
                sentence: false,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts<'a>(text: &'a str, lang: &str) -> Vec<&'a str> {
        sentences(text, lang)
            .into_iter()
            .flatten()
            .map(|r| &text[r])
            .collect()
    }

    #[test]
    fn blocks_list_items_and_sentences_with_no_break_rules() {
        let t = "# Agents. An intro\n\nAn agent, e.g. Claude, calls tools (see Fig. 3). It reads p. 12 too. Pi is 3.14... Really? Yes. J. Smith said so.\n\n1. First step. Then more.\n2. Second\n- third\n\n```\nA. B. C.\n```\n";
        assert_eq!(
            texts(t, "en"),
            vec![
                "# Agents. ",
                "An intro\n\n",
                "An agent, e.g. Claude, calls tools (see Fig. 3). ",
                "It reads p. 12 too. ",
                "Pi is 3.14... ",
                "Really? ",
                "Yes. ",
                "J. Smith said so.\n\n",
                "1. First step. ",
                "Then more.\n",
                "2. Second\n",
                "- third\n\n",
                "```\nA. B. C.\n```\n",
            ]
        );
        assert_eq!(
            texts("智能体调用工具。它读取文件！真的吗？是的。\n", "zh"),
            vec!["智能体调用工具。", "它读取文件！", "真的吗？", "是的。\n"]
        );
        assert_eq!(
            texts("Siehe z.B. Kapitel 2. Dann vgl. Abb. 4. Ende.", "de"),
            vec!["Siehe z.B. Kapitel 2. ", "Dann vgl. Abb. 4. ", "Ende."]
        );
    }

    #[test]
    fn no_cut_inside_inline_codes() {
        let t = "See **One. Two.** and [A. B](u) here. Next `x. Y` end.";
        assert_eq!(
            texts(t, "en"),
            vec!["See **One. Two.** and [A. B](u) here. ", "Next `x. Y` end."]
        );
    }

    #[test]
    fn aligns_sentences_one_to_one_else_blocks_else_unit() {
        let s = "Call `f()`. Then stop.\n\nOne. Two.\n";
        let t = "调用 `f()`。然后停止。\n\n一二。\n";
        let a = align(s, Some(t), "en", "zh");
        let pairs: Vec<(&str, &str, bool)> = a
            .iter()
            .map(|g| {
                (
                    &s[g.source.clone()],
                    &t[g.target.clone().unwrap()],
                    g.sentence,
                )
            })
            .collect();
        assert_eq!(
            pairs,
            vec![
                ("Call `f()`. ", "调用 `f()`。", true),
                ("Then stop.\n\n", "然后停止。\n\n", true),
                ("One. Two.\n", "一二。\n", false),
            ]
        );
        // Same count, codes moved to another sentence: the block stays whole.
        let a = align("A `x`. B.", Some("甲。乙 `x`。"), "en", "zh");
        assert_eq!(a.len(), 1);
        assert!(!a[0].sentence);
        // Different block counts: one segment for the unit.
        let a = align("A.\n\nB.\n", Some("甲。乙。\n"), "en", "zh");
        assert_eq!(
            a,
            vec![Segment {
                source: 0..7,
                target: Some(0..13),
                sentence: false
            }]
        );
        // No target: the source's sentences.
        assert_eq!(align("Aa. Bb.", None, "en", "zh").len(), 2);
        assert_eq!(align("", None, "en", "zh").len(), 1);
    }
}
