//! Faults planted one per copy into a human translation, to measure what QA catches. Each
//! planting function takes an aligned pair and returns the target with one fault of its kind,
//! or `None` when the pair has no place for it (no list, no number, no code span…).
//!
//! Faults are planted into units QA passes clean; a fault counts as caught when QA reports an
//! error on the faulty copy ([`caught`]).

#![allow(dead_code)]

use std::ops::Range;

use booktr::book::segment::{BlockKind, top_level_blocks};
use booktr::interchange::segments::sentences;
use booktr::qa::Finding;

/// The kinds of planted fault (issue 46).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// A prose paragraph of the target replaced by its source paragraph.
    ParagraphLeft,
    /// One sentence of a target paragraph replaced by an English sentence of its source.
    SentenceLeft,
    /// One sentence deleted from a target paragraph of two or more.
    SentenceDeleted,
    /// A sentence of another unit in the same language added to a target paragraph.
    SentenceAdded,
    /// A number in target prose changed.
    NumberChanged,
    /// One character of an inline code span changed.
    InlineCodeAltered,
    /// One occurrence of an identifier in a code block renamed.
    IdentifierRenamed,
    /// A link's destination changed.
    UrlChanged,
    /// A heading one level deeper.
    HeadingLevel,
    /// The last item of a list dropped.
    ListItemDropped,
}

/// Every kind, in report order.
pub const KINDS: &[Kind] = &[
    Kind::ParagraphLeft,
    Kind::SentenceLeft,
    Kind::SentenceDeleted,
    Kind::SentenceAdded,
    Kind::NumberChanged,
    Kind::InlineCodeAltered,
    Kind::IdentifierRenamed,
    Kind::UrlChanged,
    Kind::HeadingLevel,
    Kind::ListItemDropped,
];

impl Kind {
    /// The kind's name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Kind::ParagraphLeft => "paragraph_left",
            Kind::SentenceLeft => "sentence_left",
            Kind::SentenceDeleted => "sentence_deleted",
            Kind::SentenceAdded => "sentence_added",
            Kind::NumberChanged => "number_changed",
            Kind::InlineCodeAltered => "inline_code_altered",
            Kind::IdentifierRenamed => "identifier_renamed",
            Kind::UrlChanged => "url_changed",
            Kind::HeadingLevel => "heading_level",
            Kind::ListItemDropped => "list_item_dropped",
        }
    }
}

/// Whether a top-level block is a list (its first char after indentation is a marker).
fn is_list(text: &str) -> bool {
    let t = text.trim_start();
    t.starts_with("- ")
        || t.starts_with("* ")
        || t.starts_with("+ ")
        || t.split_once(". ")
            .is_some_and(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
}

/// The prose paragraphs of `text` (top-level prose blocks that are not lists, tables, quotes or
/// HTML-like lines), as byte ranges.
fn paragraphs(text: &str) -> Vec<Range<usize>> {
    top_level_blocks(text)
        .into_iter()
        .filter(|b| b.kind == BlockKind::Prose)
        .map(|b| b.range)
        .filter(|r| {
            let t = text[r.clone()].trim_start();
            !is_list(t)
                && !t.starts_with('|')
                && !t.starts_with('>')
                && !t.starts_with('<')
                && !t.starts_with('[')
        })
        .collect()
}

/// Whether byte `i` of `text` lies in a run of letters, digits, `.`, `-` and `_` that holds an
/// ASCII letter (`v15.3.1`, `UTF-8`): a name, not a number of the prose (the `numbers` check
/// reads them so too).
fn in_identifier(text: &str, i: usize) -> bool {
    let part = |c: char| c.is_alphanumeric() || matches!(c, '.' | '-' | '_');
    let start = text[..i]
        .char_indices()
        .rev()
        .take_while(|(_, c)| part(*c))
        .last()
        .map_or(i, |(k, _)| k);
    let end = text[i..]
        .char_indices()
        .find(|(_, c)| !part(*c))
        .map_or(text.len(), |(k, _)| i + k);
    text[start..end].chars().any(|c| c.is_ascii_alphabetic())
}

/// The sentences of one paragraph (byte ranges of `text`), trailing whitespace trimmed.
fn paragraph_sentences(text: &str, para: Range<usize>, lang: &str) -> Vec<Range<usize>> {
    let body = &text[para.clone()];
    sentences(body, lang)
        .into_iter()
        .flatten()
        .map(|r| {
            let s = &body[r.clone()];
            let trimmed = s.trim_end();
            para.start + r.start..para.start + r.start + trimmed.len()
        })
        .filter(|r| {
            text[r.clone()]
                .chars()
                .filter(|c| c.is_alphabetic())
                .count()
                >= 8
        })
        .collect()
}

fn splice(text: &str, r: Range<usize>, with: &str) -> String {
    format!("{}{}{}", &text[..r.start], with, &text[r.end..])
}

/// The target with one fault of `kind` planted, or `None`. `lang` is the target's language
/// code; `donor` is another target text in the same language (for an added sentence).
pub fn plant(kind: Kind, source: &str, target: &str, lang: &str, donor: &str) -> Option<String> {
    match kind {
        Kind::ParagraphLeft => {
            let (s, t) = (paragraphs(source), paragraphs(target));
            if s.len() != t.len() {
                return None;
            }
            let i = (0..t.len()).find(|&i| {
                let src = &source[s[i].clone()];
                src.split_whitespace().count() >= 6 && src != &target[t[i].clone()]
            })?;
            Some(splice(target, t[i].clone(), &source[s[i].clone()]))
        }
        Kind::SentenceLeft => {
            let (s, t) = (paragraphs(source), paragraphs(target));
            if s.len() != t.len() {
                return None;
            }
            for i in 0..t.len() {
                let ts = paragraph_sentences(target, t[i].clone(), lang);
                let ss = paragraph_sentences(source, s[i].clone(), "en");
                if ts.len() >= 2 && ss.len() >= 2 {
                    let j = ts.len().min(ss.len()) - 1;
                    return Some(splice(target, ts[j].clone(), &source[ss[j].clone()]));
                }
            }
            None
        }
        Kind::SentenceDeleted => {
            for p in paragraphs(target) {
                let ts = paragraph_sentences(target, p.clone(), lang);
                if ts.len() >= 2 {
                    // The last sentence, with the space before it.
                    let prev_end = ts[ts.len() - 2].end;
                    return Some(splice(target, prev_end..ts[ts.len() - 1].end, ""));
                }
            }
            None
        }
        Kind::SentenceAdded => {
            let extra = paragraphs(donor)
                .into_iter()
                .flat_map(|p| paragraph_sentences(donor, p, lang))
                .map(|r| donor[r].to_string())
                .find(|s| !s.contains('`') && !s.contains('[') && !target.contains(s.as_str()))?;
            let p = paragraphs(target)
                .into_iter()
                .find(|p| !paragraph_sentences(target, p.clone(), lang).is_empty())?;
            let end = p.start + target[p.clone()].trim_end().len();
            let space = if lang.starts_with("zh") || lang.starts_with("ja") {
                ""
            } else {
                " "
            };
            Some(format!(
                "{}{space}{extra}{}",
                &target[..end],
                &target[end..]
            ))
        }
        Kind::NumberChanged => {
            for p in paragraphs(target) {
                let body = &target[p.clone()];
                // Prose only: not inside inline code, a link destination `](…)` or a tag.
                let (mut in_code, mut in_tag) = (false, false);
                let mut url_depth = 0usize; // parentheses open inside a link destination
                let mut prev = ' ';
                for (i, c) in body.char_indices() {
                    match c {
                        '`' => in_code = !in_code,
                        '(' if prev == ']' || url_depth > 0 => url_depth += 1,
                        ')' if url_depth > 0 => url_depth -= 1,
                        ' ' if url_depth > 0 => url_depth = 0,
                        '<' => in_tag = true,
                        '>' => in_tag = false,
                        _ => {}
                    }
                    let in_url = url_depth > 0;
                    let digit = c.to_digit(10).or_else(|| other_digit(c));
                    if !in_code
                        && !in_url
                        && !in_tag
                        && let Some(d) = digit
                        && !prev.is_alphanumeric()
                        && prev != '('
                        && prev != '/'
                        && prev != '#'
                        && !in_identifier(body, i)
                    {
                        let new = (d + 1) % 10;
                        let replaced = shift_digit(c, new);
                        let at = p.start + i;
                        return Some(splice(target, at..at + c.len_utf8(), &replaced.to_string()));
                    }
                    prev = c;
                }
            }
            None
        }
        Kind::InlineCodeAltered => {
            for p in paragraphs(target) {
                let body = &target[p.clone()];
                let Some(open) = body.find('`') else { continue };
                let Some(len) = body[open + 1..].find('`') else {
                    continue;
                };
                let code = &body[open + 1..open + 1 + len];
                let Some((k, c)) = code
                    .char_indices()
                    .rev()
                    .find(|(_, c)| c.is_ascii_alphabetic())
                else {
                    continue;
                };
                let swapped = if c == 'x' { 'y' } else { 'x' };
                let at = p.start + open + 1 + k;
                return Some(splice(target, at..at + 1, &swapped.to_string()));
            }
            None
        }
        Kind::IdentifierRenamed => {
            for b in top_level_blocks(target) {
                let body = &target[b.range.clone()];
                if b.kind != BlockKind::Verbatim || !body.trim_start().starts_with("```") {
                    continue;
                }
                // An identifier of 4+ chars on a line after the first two lines of code, which
                // the source's code has too.
                let code_start = body.find('\n')? + 1;
                let mut offset = code_start;
                for (n, line) in body[code_start..].split_inclusive('\n').enumerate() {
                    if n >= 2
                        && let Some((k, ident)) =
                            identifiers(line).find(|(_, w)| w.len() >= 4 && source.contains(*w))
                    {
                        let at = b.range.start + offset + k;
                        return Some(splice(target, at..at + ident.len(), &format!("{ident}2")));
                    }
                    offset += line.len();
                }
            }
            None
        }
        Kind::UrlChanged => {
            let at = target.find("](")? + 2;
            let end = at + target[at..].find(')')?;
            let url = &target[at..end];
            if url.is_empty() || url.contains(' ') {
                return None;
            }
            let changed = if let Some((path, frag)) = url.split_once('#') {
                format!("{path}#{frag}-x")
            } else {
                format!("{url}-x")
            };
            Some(splice(target, at..end, &changed))
        }
        Kind::HeadingLevel => {
            let b = top_level_blocks(target).into_iter().find(|b| {
                b.kind == BlockKind::Heading && target[b.range.clone()].starts_with('#')
            })?;
            let level = target[b.range.clone()]
                .chars()
                .take_while(|c| *c == '#')
                .count();
            if level >= 6 {
                return None;
            }
            Some(splice(target, b.range.start..b.range.start, "#"))
        }
        Kind::ListItemDropped => {
            for b in top_level_blocks(target) {
                let body = &target[b.range.clone()];
                if b.kind != BlockKind::Prose || !is_list(body) {
                    continue;
                }
                // Items start at lines with the first item's indentation and a marker.
                let indent = body.len() - body.trim_start().len();
                let mut starts = Vec::new();
                let mut offset = 0;
                for line in body.split_inclusive('\n') {
                    let t = &line[indent.min(line.len())..];
                    if line.len() - line.trim_start().len() == indent && is_list(t) {
                        starts.push(offset);
                    }
                    offset += line.len();
                }
                if starts.len() >= 2 {
                    let last = *starts.last().unwrap();
                    let end = body.trim_end().len();
                    // The item's lines and the line break before them.
                    let from = b.range.start + last - 1;
                    return Some(splice(target, from..b.range.start + end, ""));
                }
            }
            None
        }
    }
}

/// The words of a code line made of ASCII letters, digits and `_`, starting with a letter, with
/// their byte offsets.
fn identifiers(line: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in line.char_indices().chain([(line.len(), ' ')]) {
        let word = c.is_ascii_alphanumeric() || c == '_';
        match (start, word) {
            (None, true) => start = Some(i),
            (Some(s), false) => {
                let w = &line[s..i];
                if w.starts_with(|c: char| c.is_ascii_alphabetic()) {
                    out.push((s, w));
                }
                start = None;
            }
            _ => {}
        }
    }
    out.into_iter()
}

/// The value of an Arabic-Indic (U+0660–0669) or Persian (U+06F0–06F9) digit.
fn other_digit(c: char) -> Option<u32> {
    match c {
        '\u{660}'..='\u{669}' => Some(c as u32 - 0x660),
        '\u{6F0}'..='\u{6F9}' => Some(c as u32 - 0x6F0),
        _ => None,
    }
}

/// Digit `d` in the script of `like`.
fn shift_digit(like: char, d: u32) -> char {
    let base = match like {
        '\u{660}'..='\u{669}' => 0x660,
        '\u{6F0}'..='\u{6F9}' => 0x6F0,
        _ => '0' as u32,
    };
    char::from_u32(base + d).unwrap()
}

/// Whether `faulty` has more error findings of some check than `clean`: what an editor would
/// see appear. Counted per check, not per message, so that a message that only restates a
/// count of an existing error does not pass for a catch.
pub fn caught(clean: &[Finding], faulty: &[Finding]) -> bool {
    let count = |fs: &[Finding], check: &str| fs.iter().filter(|f| f.check == check).count();
    faulty
        .iter()
        .any(|f| count(faulty, &f.check) > count(clean, &f.check))
}
