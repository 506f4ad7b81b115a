//! Deterministic mechanical repair: what the model should have copied byte for byte (code,
//! inline code, math, link and image destinations, footnote labels, HTML tags and comments,
//! heading levels and `{#id}` anchors, callout markers, front matter keys), booktr copies from
//! the source itself, and a block the model added or duplicated is removed.
//!
//! **Restoring is not guessing.** A span is restored only where the source holds the exact
//! bytes and the correspondence between source and target is unambiguous; otherwise nothing is
//! changed and a [`Skip`] says why (the QA finding then stays and goes to a revision request).
//! The correspondence, per class:
//!
//! - code blocks (fenced and indented, each kind on its own), headings, display math, callout
//!   and admonition markers, front matter entries: paired in order, and only when source and
//!   target have as many;
//! - inline code, inline math, link and image destinations, footnote labels, HTML tags and
//!   comments: word order changes in translation, so these are never paired by position. They
//!   are compared as multisets per top-level block (blocks paired in order when source and
//!   target have the same sequence of top-level block kinds; the whole unit is one scope
//!   otherwise): the spans of the target not in the source (foreign) against the spans of the
//!   source not in the target (missing). One foreign and one missing span in a scope are
//!   replaced; for footnote labels, which are names, equally many foreign and missing labels
//!   are replaced in their relative order. One missing inline code or math span with no foreign
//!   one gets its delimiters back when its content occurs exactly once as a bare token in the
//!   scope's prose and the source's scope has no such bare token. Anything else is skipped;
//! - HTML blocks, when the top-level block kinds of source and target match one to one: a
//!   block of bare tag and comment lines is restored whole, and bare tag lines lost or
//!   rewritten at the start or end of a block with text are put back;
//! - emphasis broken by a space after its opening `*` or `**` ([`crate::qa::unit::emphasis`]) is
//!   closed up when the source has at least as much emphasis and the blocks stay as they are;
//! - a code block duplicated by the model (the target has more, one is byte-identical to
//!   another, and without it the sequence matches the source's), a top-level block
//!   byte-identical to the block before it (the source has no such repeat), and leading or
//!   trailing target blocks with no source counterpart (per QA's `structure::extra_ends`) are
//!   removed only when, without them, the top-level block kinds of target and source match one
//!   to one.
//!
//! Edits splice byte ranges of the target (applied from the end, so offsets stay valid) and
//! never touch prose outside the repaired span. The result is idempotent: repairing a repaired
//! text changes nothing. Pure: no I/O, no model. Wiring into the campaign (a candidate with
//! origin `repaired`, reports, the campaign key `repair`) lives above this module.

mod spans;

use std::collections::BTreeMap;
use std::ops::Range;

use serde::{Deserialize, Serialize};

use crate::qa::unit::code_comments::{CodeComments, code_without_comments};
use crate::qa::unit::front_matter::{self, TRANSLATED_KEYS, block as front_matter};
use spans::{InlineKind, Spans};

/// The class of a mechanical repair (serialized in snake_case: `code_block`, `inline_code`,
/// `url`, `footnote_label`, `heading`, `anchor`, `html`, `comment`, `math`, `callout`,
/// `front_matter`, `duplicate_block`, `injected_block`, `emphasis`, `reference_label`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    /// A fenced or indented code block restored from the source.
    CodeBlock,
    /// An inline code span.
    InlineCode,
    /// A link or image destination (inline links, autolinks, link reference definitions).
    Url,
    /// A footnote label, in a reference (`[^x]`) or a definition (`[^x]:`).
    FootnoteLabel,
    /// A heading's ATX level (the `#` count).
    Heading,
    /// A heading's `{#id}` anchor.
    Anchor,
    /// An HTML tag (attributes other than `alt` and `title` included).
    Html,
    /// An HTML comment.
    Comment,
    /// Inline (`$…$`) or display (`$$…$$`) math.
    Math,
    /// A callout or admonition marker (`> [!NOTE]`, `!!! tip`, `:::tip`, `:::`).
    Callout,
    /// A front matter key, or the value of a key not in QA's translated keys.
    FrontMatter,
    /// A block the model repeated, removed.
    DuplicateBlock,
    /// A leading or trailing block the model added (a lead-in, a note), removed.
    InjectedBlock,
    /// Emphasis markup broken by a space after its opening `*` or `**`
    /// ([`crate::qa::unit::emphasis`]), closed up.
    Emphasis,
    /// The label of a reference link or image (`[text][label]`): a name, restored when the
    /// model translated or dropped it, the translated link text kept.
    ReferenceLabel,
    /// The syntax of a Markdown extension or site plugin ([`crate::book::syntax`]: a snippet
    /// line, an mkdocstrings block, an admonition or tab marker around its title, keys),
    /// restored where the translation changed it.
    SiteSyntax,
}

impl Class {
    /// Every class, in declaration order.
    pub const ALL: [Class; 16] = [
        Class::CodeBlock,
        Class::InlineCode,
        Class::Url,
        Class::FootnoteLabel,
        Class::Heading,
        Class::Anchor,
        Class::Html,
        Class::Comment,
        Class::Math,
        Class::Callout,
        Class::FrontMatter,
        Class::DuplicateBlock,
        Class::InjectedBlock,
        Class::Emphasis,
        Class::ReferenceLabel,
        Class::SiteSyntax,
    ];

    /// The serialized (snake_case) name.
    pub fn as_str(self) -> &'static str {
        match self {
            Class::CodeBlock => "code_block",
            Class::InlineCode => "inline_code",
            Class::Url => "url",
            Class::FootnoteLabel => "footnote_label",
            Class::Heading => "heading",
            Class::Anchor => "anchor",
            Class::Html => "html",
            Class::Comment => "comment",
            Class::Math => "math",
            Class::Callout => "callout",
            Class::FrontMatter => "front_matter",
            Class::DuplicateBlock => "duplicate_block",
            Class::InjectedBlock => "injected_block",
            Class::Emphasis => "emphasis",
            Class::ReferenceLabel => "reference_label",
            Class::SiteSyntax => "site_syntax",
        }
    }
}

/// One repair made: the class, where (byte range in the repaired text; empty for a removal,
/// at the place the removed bytes were), and the bytes before and after, each cut to
/// [`EXCERPT_CHARS`] characters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Repair {
    /// What kind of span was restored or removed.
    pub class: Class,
    /// Byte range in [`Outcome::text`].
    pub range: Range<usize>,
    /// The target's bytes that were replaced (or removed).
    pub before: String,
    /// The bytes put in their place (empty for a removal).
    pub after: String,
}

/// Characters kept of [`Repair::before`] and [`Repair::after`] (the same cut as QA finding
/// excerpts).
pub const EXCERPT_CHARS: usize = 200;

/// A fault of a mechanical class left alone because the correspondence is ambiguous or the
/// source does not hold the bytes: the class and why, in one sentence naming the spans.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skip {
    /// The class of the fault left alone.
    pub class: Class,
    /// Why, naming the spans (cut to 40 characters each) and the scope (top-level block
    /// number, 1-based, or the whole unit).
    pub why: String,
}

/// What to repair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// The campaign's `code_comments`: under [`CodeComments::Translate`] a code block whose
    /// code without comments equals the source's is kept as translated.
    pub code_comments: CodeComments,
    /// The classes repaired; the others are left alone without a [`Skip`].
    pub classes: Vec<Class>,
    /// For a site whose tool reads explicit heading ids: the source ids the translation keeps
    /// ([`crate::book::anchors::HeadingIds`]); a translated heading without an id of its own
    /// whose text would give another id gets `{#id}` (class [`Class::Anchor`]).
    pub keep_ids: Option<KeepIds>,
}

/// The source ids of one unit's headings a translation keeps (see [`Options::keep_ids`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeepIds {
    pub rule: crate::book::anchors::SlugRule,
    /// Per source heading, in order: the id to keep, `None` for a heading with its own id.
    pub ids: Vec<Option<String>>,
}

impl KeepIds {
    /// The ids to keep for unit source `source` under `ids`, if it has any.
    pub fn of(ids: &crate::book::anchors::HeadingIds, source: &str) -> Option<KeepIds> {
        Some(KeepIds {
            rule: ids.rule,
            ids: ids.of(source)?.to_vec(),
        })
    }
}

impl Default for Options {
    /// Every class, comments kept ([`CodeComments::Keep`]).
    fn default() -> Options {
        Options {
            code_comments: CodeComments::Keep,
            classes: Class::ALL.to_vec(),
            keep_ids: None,
        }
    }
}

impl Options {
    /// Whether `class` is repaired.
    pub fn enabled(&self, class: Class) -> bool {
        self.classes.contains(&class)
    }
}

/// The repaired text with every repair made and every fault skipped. `text` equals the target
/// when `repairs` is empty.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outcome {
    /// The repaired target.
    pub text: String,
    /// Every repair made, ordered by position in `text`.
    pub repairs: Vec<Repair>,
    /// Faults of a mechanical class left alone (from the last round), in the order found.
    pub skipped: Vec<Skip>,
}

/// Whether QA check `check` (a [`crate::qa::Finding`]'s `check` name) is of a mechanical
/// class, i.e. its errors are what [`repair`] restores: `code_blocks`, `inline_code`, `links`,
/// `images`, `footnotes`, `headings`, `math`, `html`, `emphasis`, `site_syntax` and `injected_text`. The `structure`
/// check mixes mechanical findings (markers, front matter) with ones that need language
/// (merged, split or dropped paragraphs): use [`is_mechanical_finding`] for those. What is not
/// mechanical (meaning, omission, terminology, untranslated text, numbers, tables, reference
/// definition labels) goes to a revision request; so does a mechanical finding still present
/// after repair (its fault was skipped as ambiguous), quoted as it is.
pub fn is_mechanical(check: &str) -> bool {
    matches!(
        check,
        "code_blocks"
            | "inline_code"
            | "links"
            | "images"
            | "footnotes"
            | "headings"
            | "math"
            | "html"
            | "injected_text"
            | crate::qa::unit::emphasis::CHECK
            | crate::qa::unit::site_syntax::CHECK
    )
}

/// Whether one finding is of a mechanical class: [`is_mechanical`] of its check, or a
/// `structure` finding about admonition/callout markers or front matter (recognised by its
/// message, as QA's `structure` check words them).
pub fn is_mechanical_finding(f: &crate::qa::Finding) -> bool {
    is_mechanical(&f.check)
        || (f.check == crate::qa::unit::structure::CHECK
            && (f.message.contains("admonition marker") || f.message.contains("front matter")))
}

/// One replacement of a byte range of the text being repaired.
#[derive(Debug, Clone)]
struct Edit {
    class: Class,
    range: Range<usize>,
    with: String,
}

/// Repairs the mechanical faults of `target`, the translation of `source` (see the module
/// docs). Never fails: what cannot be repaired unambiguously is listed in
/// [`Outcome::skipped`] and left as it was.
pub fn repair(source: &str, target: &str, opts: &Options) -> Outcome {
    let mut out = Outcome {
        text: target.to_string(),
        repairs: Vec::new(),
        skipped: Vec::new(),
    };
    let src = Spans::parse(source);
    // A repair can make another one possible (a restored callout marker lets the alignment
    // see an added block): rounds run until one makes no repair, so the result is a fixpoint.
    for _ in 0..MAX_ROUNDS {
        let made = out.repairs.len();
        out.skipped.clear();
        round(source, &src, &mut out, opts);
        if out.repairs.len() == made {
            break;
        }
    }
    out
}

/// Most rounds of [`repair`]; each round that changes anything repairs at least one span,
/// and in practice the second round finds nothing left.
pub const MAX_ROUNDS: usize = 4;

/// One round: removals of duplicated blocks, then of injected blocks, then restorations.
fn round(source: &str, src: &Spans, out: &mut Outcome, opts: &Options) {
    if opts.enabled(Class::DuplicateBlock) {
        let t = Spans::parse(&out.text);
        let edits = duplicate_code(src, &t, &out.text, opts, &mut out.skipped);
        commit(out, edits);
    }
    if opts.enabled(Class::DuplicateBlock) {
        let t = Spans::parse(&out.text);
        let edits = repeated_blocks(source, src, &t, &out.text);
        commit(out, edits);
    }
    if opts.enabled(Class::InjectedBlock) {
        let t = Spans::parse(&out.text);
        let edits = extra_blocks(source, src, &t, &out.text, &mut out.skipped);
        commit(out, edits);
    }
    if opts.enabled(Class::Html) {
        let t = Spans::parse(&out.text);
        let edits = html_blocks(source, src, &t, &out.text);
        let mut trial = out.clone();
        commit(&mut trial, edits);
        // The restored lines must leave every block where it was.
        if kinds(&Spans::parse(&trial.text)) == kinds(&t) {
            *out = trial;
        }
    }
    if opts.enabled(Class::SiteSyntax) {
        let edits = missing_targets(source, &out.text);
        commit(out, edits);
    }
    if opts.enabled(Class::Emphasis) {
        let edits = emphasis(source, &out.text, &mut out.skipped);
        commit(out, edits);
    }
    let edits = span_edits(source, src, &out.text, opts, &mut out.skipped);
    if edits.is_empty() {
        return;
    }
    // A restored span must not change how the text around it parses (a backtick or `$` run
    // pairing with another one): the result must keep its block kinds and need no further
    // restoring, or none of these restorations is made.
    let mut trial = out.clone();
    commit(&mut trial, edits.clone());
    let mut ignored = Vec::new();
    let stable = kinds(&Spans::parse(&trial.text)) == kinds(&Spans::parse(&out.text))
        && span_edits(source, src, &trial.text, opts, &mut ignored)
            .iter()
            .all(|e| trial.text[e.range.clone()] == e.with);
    if stable {
        *out = trial;
        return;
    }
    let mut classes: Vec<Class> = edits.iter().map(|e| e.class).collect();
    classes.sort();
    classes.dedup();
    for class in classes {
        out.skipped.push(Skip {
            class,
            why: format!(
                "restoring the {} spans would change how the text around them parses; left as it is",
                class.as_str()
            ),
        });
    }
}

/// The restorations of spans paired in order or as multisets (everything but removals).
fn span_edits(
    source: &str,
    src: &Spans,
    tgt: &str,
    opts: &Options,
    skipped: &mut Vec<Skip>,
) -> Vec<Edit> {
    let t = Spans::parse(tgt);
    let mut edits = Vec::new();
    if opts.enabled(Class::CodeBlock) {
        code_blocks(source, src, tgt, &t, opts, &mut edits, skipped);
    }
    if opts.enabled(Class::Heading) || opts.enabled(Class::Anchor) {
        headings(source, src, tgt, &t, opts, &mut edits, skipped);
    }
    if opts.enabled(Class::Math) {
        in_order(
            Class::Math,
            "display math",
            source,
            &src.display_math,
            tgt,
            &t.display_math,
            &mut edits,
            skipped,
        );
    }
    if opts.enabled(Class::Callout) {
        callouts(source, src, tgt, &t, &mut edits, skipped);
    }
    if opts.enabled(Class::FrontMatter) {
        front_matter_entries(source, tgt, &mut edits, skipped);
    }
    if opts.enabled(Class::SiteSyntax) {
        site_syntax(source, tgt, &mut edits, skipped);
    }
    inline_spans(source, src, tgt, &t, opts, &mut edits, skipped);
    edits
}

/// MyST targets (`(label)=` lines, which `{ref}` links name) of `source` that the translation
/// `tgt` lost, put back: a target right before a heading goes right before the translation's
/// heading of the same rank, as a line of its own. Its own step of a round (it adds a block,
/// which the span restorations' stability check refuses); a target before anything but a
/// heading, or whose heading has no counterpart, is left to the in-order pairing of
/// [`site_syntax`] (and its skip).
fn missing_targets(source: &str, tgt: &str) -> Vec<Edit> {
    let t = crate::qa::unit::site_syntax::spans(tgt);
    let have: Vec<&str> = t.iter().map(|r| tgt[r.clone()].trim()).collect();
    let (src_heads, tgt_heads) = (heading_lines(source), heading_lines(tgt));
    let mut edits = Vec::new();
    for r in crate::qa::unit::site_syntax::spans(source) {
        let span = source[r.clone()].trim();
        if !(span.starts_with('(') && span.ends_with(")=")) || have.contains(&span) {
            continue;
        }
        let after = source[r.end..].trim_start_matches(['\r', '\n']);
        let next = source.len() - after.len();
        if let Some(rank) = src_heads.iter().position(|&h| h == next)
            && let Some(&at) = tgt_heads.get(rank)
        {
            edits.push(Edit {
                class: Class::SiteSyntax,
                range: at..at,
                with: format!("{span}\n"),
            });
        }
    }
    edits
}

/// Byte offsets of the starts of the lines that begin the headings of Markdown `text`, in order.
fn heading_lines(text: &str) -> Vec<usize> {
    let (bom, _) = crate::book::markdown::split_bom(text);
    crate::book::markdown::parser(text)
        .into_offset_iter()
        .filter(|(e, _)| {
            matches!(
                e,
                pulldown_cmark::Event::Start(pulldown_cmark::Tag::Heading { .. })
            )
        })
        .map(|(_, r)| {
            let at = r.start + bom;
            text[..at].rfind('\n').map_or(0, |i| i + 1)
        })
        .collect()
}

/// Site syntax restored in order: when the source and the translation have as many site
/// syntax spans ([`crate::qa::unit::site_syntax::spans`]: a heading's attribute list is the
/// anchor repair's), each translated span that differs from
/// the source's at its place takes the source's bytes (the spans leave out the translatable
/// titles, so a translated title stays). With another count a changed span cannot be paired
/// safely: a source span missing from the translation is then a [`Skip`].
fn site_syntax(source: &str, tgt: &str, edits: &mut Vec<Edit>, skipped: &mut Vec<Skip>) {
    let (s, t) = (
        crate::qa::unit::site_syntax::spans(source),
        crate::qa::unit::site_syntax::spans(tgt),
    );
    if s.len() == t.len() {
        for (a, b) in s.iter().zip(&t) {
            if source[a.clone()] != tgt[b.clone()] {
                edits.push(Edit {
                    class: Class::SiteSyntax,
                    range: b.clone(),
                    with: source[a.clone()].to_string(),
                });
            }
        }
        return;
    }
    let have: Vec<&str> = t.iter().map(|r| &tgt[r.clone()]).collect();
    if let Some(gone) = s
        .iter()
        .map(|r| &source[r.clone()])
        .find(|x| !have.contains(x))
    {
        skipped.push(Skip {
            class: Class::SiteSyntax,
            why: format!(
                "the site syntax `{}` is missing, and the translation has {} syntax spans against the source's {}: which one it became is ambiguous; left as it is",
                crate::util::excerpt(gone.trim(), 40),
                t.len(),
                s.len()
            ),
        });
    }
}

/// Applies non-overlapping `edits` to `out.text` (an edit overlapping an earlier one is
/// dropped with a [`Skip`]), records them as repairs and moves the ranges of earlier repairs
/// to the new text.
fn commit(out: &mut Outcome, mut edits: Vec<Edit>) {
    edits.retain(|e| out.text[e.range.clone()] != e.with);
    if edits.is_empty() {
        return;
    }
    edits.sort_by_key(|e| (e.range.start, e.range.end));
    let mut kept: Vec<Edit> = Vec::new();
    for e in edits {
        match kept.last() {
            Some(last) if e.range.start < last.range.end => out.skipped.push(Skip {
                class: e.class,
                why: format!(
                    "the {} repair at bytes {}..{} overlaps another repair; left as it is",
                    e.class.as_str(),
                    e.range.start,
                    e.range.end
                ),
            }),
            _ => kept.push(e),
        }
    }
    // Moves a position of the old text to the new one.
    let shift = |pos: usize| -> usize {
        let mut p = pos as isize;
        for e in &kept {
            if e.range.end <= pos && !(e.range.is_empty() && e.range.start == pos) {
                p += e.with.len() as isize - e.range.len() as isize;
            }
        }
        p as usize
    };
    for r in &mut out.repairs {
        r.range = shift(r.range.start)..shift(r.range.end);
    }
    let mut text = out.text.clone();
    for e in kept.iter().rev() {
        text.replace_range(e.range.clone(), &e.with);
    }
    let mut delta = 0isize;
    for e in &kept {
        let start = (e.range.start as isize + delta) as usize;
        out.repairs.push(Repair {
            class: e.class,
            range: start..start + e.with.len(),
            before: crate::util::excerpt(&out.text[e.range.clone()], EXCERPT_CHARS),
            after: crate::util::excerpt(&e.with, EXCERPT_CHARS),
        });
        delta += e.with.len() as isize - e.range.len() as isize;
    }
    out.repairs.sort_by_key(|r| (r.range.start, r.range.end));
    out.text = text;
}

/// The bytes to remove with a block at `r`: whole lines, plus the blank lines after it (or,
/// for the last block, the blank lines before it), so the blocks around it keep one blank line
/// between them.
fn removal(text: &str, r: &Range<usize>) -> Range<usize> {
    let b = text.as_bytes();
    let mut start = r.start;
    while start > 0 && matches!(b[start - 1], b' ' | b'\t') {
        start -= 1;
    }
    let mut end = r.end.max(start);
    // The rest of the block's last line.
    while end < b.len() && matches!(b[end], b' ' | b'\t' | b'\r') {
        end += 1;
    }
    if end < b.len() && b[end] == b'\n' {
        end += 1;
    } else if end > start && b[end - 1] != b'\n' && end < b.len() {
        return start..r.end; // not on its own lines: remove only the block's bytes
    }
    // Blank lines after it.
    loop {
        let mut e = end;
        while e < b.len() && matches!(b[e], b' ' | b'\t' | b'\r') {
            e += 1;
        }
        if e < b.len() && b[e] == b'\n' {
            end = e + 1;
        } else {
            if e == b.len() {
                end = e;
            }
            break;
        }
    }
    if end == b.len() {
        while start >= 2 && &b[start - 2..start] == b"\n\n" {
            start -= 1;
        }
    }
    start..end
}

fn kinds(s: &Spans) -> Vec<&'static str> {
    s.top.iter().map(|b| b.kind).collect()
}

/// `DuplicateBlock` among code blocks: the target has more code blocks of one kind than the
/// source, and removing later copies of blocks identical to an earlier target block makes the
/// sequence equal the source's.
fn duplicate_code(
    src: &Spans,
    tgt: &Spans,
    text: &str,
    opts: &Options,
    skipped: &mut Vec<Skip>,
) -> Vec<Edit> {
    let mut edits = Vec::new();
    for fenced in [true, false] {
        let s: Vec<_> = src.code.iter().filter(|c| c.fenced == fenced).collect();
        let t: Vec<_> = tgt.code.iter().filter(|c| c.fenced == fenced).collect();
        if t.len() <= s.len() {
            continue;
        }
        let same = |a: &spans::CodeSpan, b: &spans::CodeSpan| {
            a.info == b.info
                && (a.body == b.body
                    || opts.code_comments == CodeComments::Translate
                        && code_without_comments(&a.info, &a.body)
                            == code_without_comments(&b.info, &b.body))
        };
        let dup = |j: usize| (0..j).any(|k| t[k].info == t[j].info && t[k].body == t[j].body);
        // Greedy: keep a target block when it matches the next source block, drop it when it
        // repeats an earlier target block.
        let mut i = 0;
        let mut drop = Vec::new();
        let mut ok = true;
        for (j, tj) in t.iter().enumerate() {
            if i < s.len() && same(s[i], tj) {
                i += 1;
            } else if dup(j) {
                drop.push(j);
            } else {
                ok = false;
                break;
            }
        }
        let noun = if fenced { "fenced" } else { "indented" };
        if ok && i == s.len() && !drop.is_empty() {
            for j in drop {
                edits.push(Edit {
                    class: Class::DuplicateBlock,
                    range: removal(text, &t[j].range),
                    with: String::new(),
                });
            }
        } else if t.iter().enumerate().any(|(j, _)| dup(j)) {
            skipped.push(Skip {
                class: Class::DuplicateBlock,
                why: format!(
                    "the translation has {} {noun} code blocks, the source {}, but removing the repeated ones does not give the source's sequence",
                    t.len(),
                    s.len()
                ),
            });
        }
    }
    edits
}

/// `DuplicateBlock` among top-level blocks: a target block byte-identical to the block before
/// it, where the source has no such repeat and fewer blocks than the target.
fn repeated_blocks(source: &str, src: &Spans, tgt: &Spans, text: &str) -> Vec<Edit> {
    let raw = |t: &str, r: &Range<usize>| t[r.clone()].trim_end().to_string();
    let src_repeats = |body: &str| {
        src.top
            .windows(2)
            .any(|w| raw(source, &w[0].range) == body && raw(source, &w[1].range) == body)
    };
    let mut dups: Vec<usize> = Vec::new();
    for j in 1..tgt.top.len() {
        let body = raw(text, &tgt.top[j].range);
        if !body.is_empty() && body == raw(text, &tgt.top[j - 1].range) && !src_repeats(&body) {
            dups.push(j);
        }
    }
    if tgt.top.len() < src.top.len() + dups.len() {
        return Vec::new();
    }
    dups.iter()
        .map(|&j| Edit {
            class: Class::DuplicateBlock,
            range: removal(text, &tgt.top[j].range),
            with: String::new(),
        })
        .collect()
}

/// `InjectedBlock`: leading and trailing top-level blocks QA's alignment finds with no
/// counterpart, removed when without them the kinds of top-level blocks match the source's.
fn extra_blocks(
    source: &str,
    src: &Spans,
    tgt: &Spans,
    text: &str,
    skipped: &mut Vec<Skip>,
) -> Vec<Edit> {
    let (sk, tk) = (kinds(src), kinds(tgt));
    if sk == tk {
        return Vec::new();
    }
    // Top-level blocks QA's alignment finds with no counterpart at either end.
    let mut ends: Vec<usize> = Vec::new();
    let mut partial = false;
    {
        let (sd, td) = (crate::qa::Doc::parse(source), crate::qa::Doc::parse(text));
        let extra = crate::qa::unit::structure::extra_ends(&sd, &td);
        let owner = &tgt.outline_top;
        if owner.len() == td.blocks.len() {
            let idx: Vec<usize> = extra
                .iter()
                .filter_map(|(blk, _)| td.blocks.iter().position(|x| std::ptr::eq(x, *blk)))
                .collect();
            for &i in &idx {
                let top = owner[i];
                // Every outline block of that top-level block must be extra.
                let whole = owner
                    .iter()
                    .enumerate()
                    .filter(|(_, o)| **o == top)
                    .all(|(k, _)| idx.contains(&k));
                if !whole {
                    partial = true;
                } else if !ends.contains(&top) {
                    ends.push(top);
                }
            }
        } else if !extra.is_empty() {
            partial = true;
        }
    }
    // A removed end block next to a kept block of the same kind could as well be that block's
    // translation; only paragraphs carry enough length for QA's alignment to tell them apart.
    let removed = |j: usize| ends.contains(&j);
    partial |= ends.iter().any(|&j| {
        let k = tgt.top[j].kind;
        k != "paragraph"
            && [j.wrapping_sub(1), j + 1]
                .iter()
                .any(|&n| n < tgt.top.len() && !removed(n) && tgt.top[n].kind == k)
    });
    let kept = (0..tgt.top.len())
        .filter(|j| !ends.contains(j))
        .map(|j| tgt.top[j].kind);
    if partial || !kept.eq(sk.iter().copied()) {
        if !ends.is_empty() || partial {
            skipped.push(Skip {
                class: Class::InjectedBlock,
                why: format!(
                    "the translation has {} top-level blocks, the source {}, and removing those added at the ends does not make their kinds match one to one",
                    tk.len(),
                    sk.len()
                ),
            });
        }
        return Vec::new();
    }
    let mut edits: Vec<Edit> = ends
        .iter()
        .map(|&j| Edit {
            class: Class::InjectedBlock,
            range: removal(text, &tgt.top[j].range),
            with: String::new(),
        })
        .collect();
    // Adjacent removals share blank lines: trim overlaps.
    edits.sort_by_key(|e| e.range.start);
    for i in 1..edits.len() {
        let prev_end = edits[i - 1].range.end;
        if edits[i].range.start < prev_end {
            edits[i].range.start = prev_end.min(edits[i].range.end);
        }
    }
    edits
}

/// `Emphasis`: the spaces after the opening run of each broken emphasis span of the target
/// ([`crate::qa::unit::emphasis::broken`]) are removed, when the target has more broken spans than
/// the source and closing them up gives the target no more emphasis spans than the source has
/// and the same top-level blocks (so a `* ` that is a bullet marker is never joined to its
/// text).
fn emphasis(source: &str, text: &str, skipped: &mut Vec<Skip>) -> Vec<Edit> {
    use crate::qa::unit::emphasis::{broken, count};
    let theirs = broken(text);
    if theirs.len() <= broken(source).len() {
        return Vec::new();
    }
    let edits: Vec<Edit> = theirs
        .iter()
        .map(|x| Edit {
            class: Class::Emphasis,
            range: x.gap.clone(),
            with: String::new(),
        })
        .collect();
    let mut trial = text.to_string();
    for e in edits.iter().rev() {
        trial.replace_range(e.range.clone(), "");
    }
    if count(&trial) > count(source) || kinds(&Spans::parse(&trial)) != kinds(&Spans::parse(text)) {
        skipped.push(Skip {
            class: Class::Emphasis,
            why: format!(
                "closing up {} broken emphasis span(s) would give the translation more emphasis than the source or other blocks; left as it is",
                theirs.len()
            ),
        });
        return Vec::new();
    }
    edits
}

/// The lines of `block` (with their line breaks) that hold only HTML tags or comments
/// ([`crate::book::markdown::only_html_tags`]) at its start and at its end, as byte lengths:
/// `(lead, trail)`. A block made only of such lines has `lead == block.len()`.
fn tag_lines(block: &str) -> (usize, usize) {
    let bare = |l: &str| {
        let t = l.trim();
        !t.is_empty()
            && (crate::book::markdown::only_html_tags(t)
                || (t.starts_with("<!--") && t.ends_with("-->") && !t[4..].contains("-->")))
    };
    let lines: Vec<&str> = block.split_inclusive('\n').collect();
    let lead: usize = lines
        .iter()
        .take_while(|l| bare(l) || l.trim().is_empty())
        .map(|l| l.len())
        .sum();
    if lead == block.len() {
        return (lead, lead);
    }
    let trail: usize = lines
        .iter()
        .rev()
        .take_while(|l| bare(l) || l.trim().is_empty())
        .map(|l| l.len())
        .sum();
    (lead, trail)
}

/// `Html` (or `Comment`) at the level of HTML blocks, when the top-level block kinds of source
/// and target match one to one (so HTML block *k* of the target is the translation of HTML
/// block *k* of the source): a source HTML block made only of bare tag and comment lines
/// (`</details>`, `<div align="center">`, `<!-- note -->`) has nothing to translate, and a
/// differing target block is replaced by its bytes; in a block that also holds text, bare tag
/// lines at its start or end that the target lost (`<details>` before `<summary>…</summary>`)
/// are put back, or replace as many bare tag lines the target has there instead. Anything else
/// is left to the inline comparison. Recorded from the 1.5b model on the sample book
/// (`tests/fixtures/real-llm/sample.jsonl`): it dropped `<details>` and wrote `</details>` as
/// a second `<summary>`.
fn html_blocks(source: &str, src: &Spans, tgt: &Spans, text: &str) -> Vec<Edit> {
    let mut edits = Vec::new();
    if kinds(src) != kinds(tgt) {
        return edits;
    }
    for (a, b) in src.top.iter().zip(&tgt.top) {
        if a.kind != "html" {
            continue;
        }
        let (sb, tb) = (&source[a.range.clone()], &text[b.range.clone()]);
        if sb.trim_end() == tb.trim_end() {
            continue;
        }
        let class = if sb.contains("<!--") && !sb.replace("<!--", "").contains('<') {
            Class::Comment
        } else {
            Class::Html
        };
        let (s_lead, s_trail) = tag_lines(sb);
        let (t_lead, t_trail) = tag_lines(tb);
        if s_lead == sb.len() {
            // Nothing to translate: the source's bytes, ending like the target block.
            let body = sb.trim_end();
            let end = b.range.start + tb.trim_end().len();
            edits.push(Edit {
                class,
                range: b.range.start..end,
                with: body.to_string(),
            });
            continue;
        }
        if t_lead == tb.len() {
            continue; // the target block has no text left: not the same block
        }
        let lines = |x: &str| x.lines().filter(|l| !l.trim().is_empty()).count();
        let (s_head, t_head) = (&sb[..s_lead], &tb[..t_lead]);
        if s_head.trim() != t_head.trim() && (t_lead == 0 || lines(s_head) == lines(t_head)) {
            edits.push(Edit {
                class: Class::Html,
                range: b.range.start..b.range.start + t_lead,
                with: s_head.to_string(),
            });
        }
        let (s_tail, t_tail) = (&sb[sb.len() - s_trail..], &tb[tb.len() - t_trail..]);
        if s_tail.trim() != t_tail.trim() && (t_trail == 0 || lines(s_tail) == lines(t_tail)) {
            // Keep the target block's own ending (its last line break or none).
            let t_body_end = b.range.start + tb.trim_end().len();
            let from = b.range.end - t_trail;
            let from = from.min(t_body_end);
            let sep = if t_trail == 0 { "\n" } else { "" };
            edits.push(Edit {
                class: Class::Html,
                range: from..t_body_end,
                with: format!("{sep}{}", s_tail.trim_end()),
            });
        }
    }
    edits
}

/// Code blocks paired in order when counts agree; a differing target block is replaced by the
/// source's bytes (kept under `code_comments = translate` when only comments differ).
fn code_blocks(
    source: &str,
    src: &Spans,
    text: &str,
    tgt: &Spans,
    opts: &Options,
    edits: &mut Vec<Edit>,
    skipped: &mut Vec<Skip>,
) {
    for fenced in [true, false] {
        let s: Vec<_> = src.code.iter().filter(|c| c.fenced == fenced).collect();
        let t: Vec<_> = tgt.code.iter().filter(|c| c.fenced == fenced).collect();
        let noun = if fenced { "fenced" } else { "indented" };
        if s.len() != t.len() {
            skipped.push(Skip {
                class: Class::CodeBlock,
                why: format!(
                    "the source has {} {noun} code blocks but the translation {}: no pairing in order",
                    s.len(),
                    t.len()
                ),
            });
            continue;
        }
        for (a, b) in s.iter().zip(&t) {
            if a.info == b.info && a.body == b.body {
                continue;
            }
            if opts.code_comments == CodeComments::Translate
                && a.info == b.info
                && code_without_comments(&a.info, &a.body)
                    == code_without_comments(&b.info, &b.body)
            {
                continue;
            }
            // The source block's bytes, ending like the target block (with or without its
            // final line break), so the text after the block is not touched.
            let mut with = source[a.range.clone()].to_string();
            let ends_nl = |x: &str| x.ends_with('\n');
            if ends_nl(&with) && !ends_nl(&text[b.range.clone()]) {
                with.pop();
                if with.ends_with('\r') {
                    with.pop();
                }
            } else if !ends_nl(&with) && ends_nl(&text[b.range.clone()]) {
                with.push('\n');
            }
            // The source block's bytes must sit in the same container prefix: compare the
            // line prefixes before each block.
            let prefix = |t: &str, r: &Range<usize>| {
                let ls = t[..r.start].rfind('\n').map_or(0, |i| i + 1);
                t[ls..r.start].to_string()
            };
            if prefix(source, &a.range) != prefix(text, &b.range) {
                skipped.push(Skip {
                    class: Class::CodeBlock,
                    why: format!(
                        "{noun} code block {} sits in another container in the translation (line prefix {:?} instead of {:?})",
                        crate::util::excerpt(&a.body, 40),
                        prefix(text, &b.range),
                        prefix(source, &a.range)
                    ),
                });
                continue;
            }
            edits.push(Edit {
                class: Class::CodeBlock,
                range: b.range.clone(),
                with,
            });
        }
    }
}

/// Headings paired in order when counts agree: the ATX `#` count and the `{#id}` anchor.
#[allow(clippy::too_many_arguments)]
fn headings(
    source: &str,
    src: &Spans,
    text: &str,
    tgt: &Spans,
    opts: &Options,
    edits: &mut Vec<Edit>,
    skipped: &mut Vec<Skip>,
) {
    // The id each target heading would get, where the source's must be kept.
    let keep: Vec<Option<&str>> = match &opts.keep_ids {
        Some(k) if k.ids.len() == src.headings.len() => {
            let texts = crate::book::anchors::headings(text);
            let sources = crate::book::anchors::headings(source);
            k.ids
                .iter()
                .enumerate()
                .map(|(i, w)| {
                    let w = w.as_deref()?;
                    let b = texts.get(i)?;
                    // A heading left as it was keeps its generated id.
                    let same = sources
                        .get(i)
                        .is_some_and(|a| a.text.trim() == b.text.trim());
                    (b.id.is_none() && !same && k.rule.slug(&b.text) != w).then_some(w)
                })
                .collect()
        }
        _ => Vec::new(),
    };
    let differs = src
        .headings
        .iter()
        .zip(&tgt.headings)
        .any(|(a, b)| a.level != b.level || a.id != b.id)
        || keep.iter().any(Option::is_some);
    if src.headings.len() != tgt.headings.len() {
        skipped.push(Skip {
            class: Class::Heading,
            why: format!(
                "the source has {} headings but the translation {}: no pairing in order",
                src.headings.len(),
                tgt.headings.len()
            ),
        });
        return;
    }
    if !differs {
        return;
    }
    for (a, b) in src.headings.iter().zip(&tgt.headings) {
        let line_end = text[b.range.clone()]
            .find('\n')
            .map_or(b.range.end, |i| b.range.start + i);
        let line = &text[b.range.start..line_end];
        if a.level != b.level && opts.enabled(Class::Heading) {
            if a.atx && b.atx {
                let lead = line.len() - line.trim_start_matches(' ').len();
                let hashes = line[lead..].bytes().take_while(|c| *c == b'#').count();
                let at = b.range.start + lead;
                edits.push(Edit {
                    class: Class::Heading,
                    range: at..at + hashes,
                    with: "#".repeat(a.level as usize),
                });
            } else {
                skipped.push(Skip {
                    class: Class::Heading,
                    why: format!(
                        "heading {:?} is level {} in the translation, {} in the source, but one of them is a setext heading",
                        line.trim(),
                        b.level,
                        a.level
                    ),
                });
            }
        }
        if a.id != b.id && opts.enabled(Class::Anchor) {
            anchor(a, b, line, b.range.start, edits, skipped);
        }
    }
    if !opts.enabled(Class::Anchor) {
        return;
    }
    for (k, want) in keep.iter().enumerate() {
        let (Some(want), Some(b)) = (want, tgt.headings.get(k)) else {
            continue;
        };
        let line_end = text[b.range.clone()]
            .find('\n')
            .map_or(b.range.end, |i| b.range.start + i);
        let trimmed = text[b.range.start..line_end].trim_end();
        // An attribute list without an id (`{: .class}`) takes the id inside it.
        let brace = trimmed.ends_with('}').then(|| trimmed.rfind('{')).flatten();
        // A list glued to the word before it belongs to that inline element, not the heading.
        let glued = brace.is_some_and(|o| {
            trimmed[..o]
                .chars()
                .next_back()
                .is_some_and(|c| !c.is_whitespace())
        });
        let attrs = brace.filter(|&o| !glued && !trimmed[o..].contains('#'));
        if let Some(o) = attrs.filter(|_| b.atx) {
            let after = if trimmed[o + 1..].starts_with(':') {
                o + 2
            } else {
                o + 1
            };
            let s = b.range.start + after;
            edits.push(Edit {
                class: Class::Anchor,
                range: s..s,
                with: format!(" #{want}"),
            });
        } else if b.atx && !trimmed.ends_with('#') && (!trimmed.ends_with('}') || glued) {
            let s = b.range.start + trimmed.len();
            edits.push(Edit {
                class: Class::Anchor,
                range: s..s,
                with: format!(" {{#{want}}}"),
            });
        } else {
            skipped.push(Skip {
                class: Class::Anchor,
                why: format!(
                    "heading {:?} is not written so that `{{#{want}}}` can be added after it",
                    trimmed.trim()
                ),
            });
        }
    }
}

/// Restores the `{#id}` of source heading `a` on target heading `b` (its first line `line`
/// starts at byte `at`).
fn anchor(
    a: &spans::HeadingSpan,
    b: &spans::HeadingSpan,
    line: &str,
    at: usize,
    edits: &mut Vec<Edit>,
    skipped: &mut Vec<Skip>,
) {
    let Some(id) = &a.id else {
        skipped.push(Skip {
            class: Class::Anchor,
            why: format!(
                "heading {:?} has an anchor the source heading does not have",
                line.trim()
            ),
        });
        return;
    };
    let trimmed = line.trim_end();
    let brace = trimmed.ends_with('}').then(|| trimmed.rfind('{')).flatten();
    match (&b.id, brace) {
        (Some(old), Some(open)) => {
            let block = &trimmed[open..];
            let needle = format!("#{old}");
            match block.find(&needle) {
                Some(p) if block.matches(&needle).count() == 1 => {
                    let s = at + open + p + 1;
                    edits.push(Edit {
                        class: Class::Anchor,
                        range: s..s + old.len(),
                        with: id.clone(),
                    });
                }
                _ => skipped.push(Skip {
                    class: Class::Anchor,
                    why: format!(
                        "the anchor of heading {:?} is not found as `#{old}`",
                        line.trim()
                    ),
                }),
            }
        }
        (None, None) if b.atx && !trimmed.ends_with('#') => {
            let s = at + trimmed.len();
            edits.push(Edit {
                class: Class::Anchor,
                range: s..s,
                with: format!(" {{#{id}}}"),
            });
        }
        _ => skipped.push(Skip {
            class: Class::Anchor,
            why: format!(
                "heading {:?} has no anchor where `{{#{id}}}` could be put back unambiguously",
                line.trim()
            ),
        }),
    }
}

/// Spans paired in order when counts agree; a differing target span gets the source's bytes.
#[allow(clippy::too_many_arguments)]
fn in_order(
    class: Class,
    noun: &str,
    source: &str,
    s: &[Range<usize>],
    text: &str,
    t: &[Range<usize>],
    edits: &mut Vec<Edit>,
    skipped: &mut Vec<Skip>,
) {
    if s.len() != t.len() {
        skipped.push(Skip {
            class,
            why: format!(
                "the source has {} {noun} spans but the translation {}: no pairing in order",
                s.len(),
                t.len()
            ),
        });
        return;
    }
    for (a, b) in s.iter().zip(t) {
        if spans::lf(&source[a.clone()]) != spans::lf(&text[b.clone()]) {
            edits.push(Edit {
                class,
                range: b.clone(),
                with: source[a.clone()].to_string(),
            });
        }
    }
}

/// Callout and admonition markers in order, when counts agree.
fn callouts(
    source: &str,
    src: &Spans,
    text: &str,
    tgt: &Spans,
    edits: &mut Vec<Edit>,
    skipped: &mut Vec<Skip>,
) {
    let names = |m: &[(String, Range<usize>)]| m.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    let (a, b) = (names(&src.markers), names(&tgt.markers));
    if a == b {
        return;
    }
    // Restore only what QA's check names the same way.
    if a != crate::qa::unit::structure::markers(source)
        || b != crate::qa::unit::structure::markers(text)
    {
        skipped.push(Skip {
            class: Class::Callout,
            why: "the markers could not be located line by line".to_string(),
        });
        return;
    }
    if a.len() != b.len() {
        skipped.push(Skip {
            class: Class::Callout,
            why: format!(
                "the source has {} callout or admonition markers but the translation {}: no pairing in order",
                a.len(),
                b.len()
            ),
        });
        return;
    }
    for ((na, ra), (nb, rb)) in src.markers.iter().zip(&tgt.markers) {
        if na != nb {
            edits.push(Edit {
                class: Class::Callout,
                range: rb.clone(),
                with: source[ra.clone()].to_string(),
            });
        }
    }
}

/// The front matter block of `text` with its entries as QA reads them
/// ([`crate::qa::unit::front_matter::parse`]), offsets made relative to `text`; `None` when `text`
/// has no block, or one that is not a YAML mapping.
fn entries(text: &str) -> Option<Vec<front_matter::Entry<'_>>> {
    let fm = front_matter(text)?;
    let base = fm.as_ptr() as usize - text.as_ptr() as usize;
    let front_matter::Parsed::Mapping(mut es) = front_matter::parse(fm).ok()? else {
        return None;
    };
    for e in &mut es {
        e.key_range = e.key_range.start + base..e.key_range.end + base;
        e.range = e.range.start + base..e.range.end + base;
    }
    Some(es)
}

fn front_matter_entries(source: &str, text: &str, edits: &mut Vec<Edit>, skipped: &mut Vec<Skip>) {
    if front_matter(source).is_none() {
        return;
    }
    let (Some(s), Some(t)) = (entries(source), entries(text)) else {
        if front_matter(text) != front_matter(source) {
            skipped.push(Skip {
                class: Class::FrontMatter,
                why: "the front matter of the translation is missing or not a YAML mapping"
                    .to_string(),
            });
        }
        return;
    };
    if s.len() != t.len() {
        skipped.push(Skip {
            class: Class::FrontMatter,
            why: format!(
                "the source's front matter has {} keys but the translation's {}: no pairing in order",
                s.len(),
                t.len()
            ),
        });
        return;
    }
    // Paired by key when the translation only reordered them (YAML mappings have no order),
    // else in order (a renamed key sits where the source's was).
    let same_keys = s.iter().all(|a| t.iter().any(|b| b.key == a.key));
    let pairs: Vec<(&front_matter::Entry<'_>, &front_matter::Entry<'_>)> = if same_keys {
        s.iter()
            .filter_map(|a| t.iter().find(|b| b.key == a.key).map(|b| (a, b)))
            .collect()
    } else {
        s.iter().zip(&t).collect()
    };
    for (a, b) in pairs {
        if TRANSLATED_KEYS.contains(&a.key.as_str()) {
            if a.key != b.key {
                edits.push(Edit {
                    class: Class::FrontMatter,
                    range: b.key_range.clone(),
                    with: source[a.key_range.clone()].to_string(),
                });
            }
        } else if a.key != b.key || a.value != b.value {
            edits.push(Edit {
                class: Class::FrontMatter,
                range: b.range.clone(),
                with: source[a.range.clone()].to_string(),
            });
        }
    }
}

fn inline_class(k: InlineKind) -> Class {
    match k {
        InlineKind::Code => Class::InlineCode,
        InlineKind::Math => Class::Math,
        InlineKind::Url => Class::Url,
        InlineKind::Footnote => Class::FootnoteLabel,
        InlineKind::Tag => Class::Html,
        InlineKind::Comment => Class::Comment,
        InlineKind::RefLabel => Class::ReferenceLabel,
    }
}

/// Inline spans compared as multisets per scope (see the module docs).
fn inline_spans(
    source: &str,
    src: &Spans,
    text: &str,
    tgt: &Spans,
    opts: &Options,
    edits: &mut Vec<Edit>,
    skipped: &mut Vec<Skip>,
) {
    let same_blocks = kinds(src) == kinds(tgt);
    let scope = |b: usize| if same_blocks { b } else { 0 };
    // (kind, scope) → (source spans, target spans), each in document order.
    type Group<'a> = (Vec<&'a spans::Inline>, Vec<&'a spans::Inline>);
    let mut groups: BTreeMap<(InlineKind, usize), Group> = BTreeMap::new();
    for s in &src.inline {
        groups
            .entry((s.kind, scope(s.block)))
            .or_default()
            .0
            .push(s);
    }
    for t in &tgt.inline {
        groups
            .entry((t.kind, scope(t.block)))
            .or_default()
            .1
            .push(t);
    }
    for ((kind, sc), (s, t)) in groups {
        let class = inline_class(kind);
        if !opts.enabled(class) {
            continue;
        }
        let mut used = vec![false; t.len()];
        let mut missing = Vec::new();
        for a in &s {
            match (0..t.len()).find(|&j| !used[j] && t[j].key == a.key) {
                Some(j) => used[j] = true,
                None => missing.push(*a),
            }
        }
        let foreign: Vec<_> = t
            .iter()
            .zip(&used)
            .filter(|(_, u)| !**u)
            .map(|(b, _)| *b)
            .collect();
        if missing.is_empty() && foreign.is_empty() {
            continue;
        }
        let place = if sc == usize::MAX {
            "the link reference definitions".to_string()
        } else if same_blocks {
            format!("top-level block {}", sc + 1)
        } else {
            "the unit (its block structure differs from the source's)".to_string()
        };
        let block = |sp: &Spans, t: &str| match sp.top.get(sc) {
            Some(b) if same_blocks => b.range.clone(),
            _ => 0..t.len(),
        };
        // Delimiters dropped: the span's content written once as bare text in the scope.
        if missing.len() == 1
            && foreign.is_empty()
            && matches!(kind, InlineKind::Code | InlineKind::Math)
        {
            let a = missing[0];
            if let Some(at) = bare_once(source, block(src, source), text, block(tgt, text), &a.key)
            {
                edits.push(Edit {
                    class,
                    range: at,
                    with: source[a.range.clone()].to_string(),
                });
                continue;
            }
        }
        let pairwise = kind == InlineKind::Footnote
            && missing.len() == foreign.len()
            && consistent(&missing, &foreign);
        // A foreign code or math span takes the missing one's place only when it is an
        // altered copy of it and not the source's own bare word set as code: otherwise the
        // model wrote something else there, and the missing span's fact would replace it.
        if missing.len() == 1
            && foreign.len() == 1
            && matches!(kind, InlineKind::Code | InlineKind::Math)
        {
            let (a, b) = (span_content(&missing[0].key), span_content(&foreign[0].key));
            let word_of_source = !bare_tokens(source, &block(src, source), b).is_empty();
            if word_of_source || !altered_copy(a, b) {
                skipped.push(Skip {
                    class,
                    why: format!(
                        "the place of {:?} in {place} is not certain: the translation's {:?} there is {}, not an altered copy of it",
                        crate::util::excerpt(&missing[0].key, 40),
                        crate::util::excerpt(&foreign[0].key, 40),
                        if word_of_source {
                            "a word of the source's text set as code"
                        } else {
                            "another span"
                        }
                    ),
                });
                continue;
            }
        }
        if (missing.len() == 1 && foreign.len() == 1) || pairwise {
            for (a, b) in missing.iter().zip(&foreign) {
                let with = match kind {
                    InlineKind::Tag => transplant(&source[a.range.clone()], &text[b.range.clone()]),
                    InlineKind::RefLabel => {
                        relabel(&source[a.range.clone()], &text[b.range.clone()])
                    }
                    _ => source[a.range.clone()].to_string(),
                };
                edits.push(Edit {
                    class,
                    range: b.range.clone(),
                    with,
                });
            }
            continue;
        }
        let list = |v: &[&spans::Inline]| {
            v.iter()
                .map(|i| format!("{:?}", crate::util::excerpt(&i.key, 40)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let why = match (missing.len(), foreign.len()) {
            (_, 0) => format!(
                "{} missing from {place} with no altered span to put it back in: [{}]",
                class.as_str(),
                list(&missing)
            ),
            (0, _) => format!(
                "{} only in the translation in {place}, nothing of the source is missing there: [{}]",
                class.as_str(),
                list(&foreign)
            ),
            _ => format!(
                "ambiguous: {} spans missing from {place} ([{}]) and {} not in the source ([{}])",
                missing.len(),
                list(&missing),
                foreign.len(),
                list(&foreign)
            ),
        };
        skipped.push(Skip { class, why });
    }
}

/// The content of an inline code or math span, its delimiters (and a code span's padding
/// spaces) stripped.
fn span_content(span: &str) -> &str {
    let inner = span.trim_matches('`').trim_matches('$');
    if span.starts_with('`') {
        inner.trim_matches(' ')
    } else {
        inner
    }
}

/// Byte offsets in `t` where `inner` occurs as a whole token (no ASCII letter, digit or `_`
/// on either side) in the prose of `t[within]`.
fn bare_tokens(t: &str, within: &Range<usize>, inner: &str) -> Vec<usize> {
    let mut at = Vec::new();
    if inner.trim().is_empty() {
        return at;
    }
    for r in crate::book::markdown::prose_ranges(t) {
        if r.start < within.start || r.end > within.end {
            continue;
        }
        let slice = &t[r.clone()];
        let mut from = 0;
        while let Some(i) = slice[from..].find(inner).map(|i| i + from) {
            let before = slice[..i].chars().next_back();
            let after = slice[i + inner.len()..].chars().next();
            let word = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
            if !word(before) && !word(after) {
                at.push(r.start + i);
            }
            from = i + inner.len().max(1);
        }
    }
    at
}

/// Where the content of `span` (inline code or math, delimiters stripped) occurs exactly once
/// as a whole token in the prose of `text[scope]`, while the prose of `source[src_scope]` has
/// it nowhere as bare text (so that occurrence can only be the span with its delimiters lost).
fn bare_once(
    source: &str,
    src_scope: Range<usize>,
    text: &str,
    scope: Range<usize>,
    span: &str,
) -> Option<Range<usize>> {
    let inner = span_content(span);
    if inner.trim().is_empty() || !bare_tokens(source, &src_scope, inner).is_empty() {
        return None;
    }
    match bare_tokens(text, &scope, inner).as_slice() {
        [one] => Some(*one..*one + inner.len()),
        _ => None,
    }
}

/// Fewest shared character bigrams (Dice coefficient, lower-cased) for a foreign inline code
/// or math span to be an altered copy of a missing one (`SUMARY.md` for `SUMMARY.md` is 0.94,
/// `readFile` for `read_file` 0.8, `mdBook` for `SUMMARY.md` 0.14).
pub const MIN_COPY_SIMILARITY: f64 = 0.5;

/// Whether the foreign span content `b` is an altered copy of the missing span content `a`:
/// they start or end alike (three characters or more), share at least
/// [`MIN_COPY_SIMILARITY`] of their character bigrams, or `b` has letters outside ASCII where
/// `a` has none (its words translated). Any other foreign span is the
/// model's rendering of something else, and putting the missing span in its place would state
/// another fact.
fn altered_copy(a: &str, b: &str) -> bool {
    if !a.chars().any(|c| !c.is_ascii() && c.is_alphabetic())
        && b.chars().any(|c| !c.is_ascii() && c.is_alphabetic())
    {
        return true;
    }
    let grams = |s: &str| -> Vec<(char, char)> {
        let v: Vec<char> = s.to_lowercase().chars().collect();
        v.windows(2).map(|w| (w[0], w[1])).collect()
    };
    // A common start or end of three characters or more, one of them a letter or digit
    // (`SUMARY.md`, `changed_0()` for `call_0()`): the same name or call, altered.
    let (ca, cb): (Vec<char>, Vec<char>) = (
        a.to_lowercase().chars().collect(),
        b.to_lowercase().chars().collect(),
    );
    let affix = |pairs: &mut dyn Iterator<Item = (&char, &char)>| {
        let common: Vec<char> = pairs.take_while(|(x, y)| x == y).map(|(x, _)| *x).collect();
        common.len() >= 3 && common.iter().any(|c| c.is_alphanumeric())
    };
    if affix(&mut ca.iter().zip(&cb)) || affix(&mut ca.iter().rev().zip(cb.iter().rev())) {
        return true;
    }
    let (ga, gb) = (grams(a), grams(b));
    if ga.is_empty() || gb.is_empty() {
        return a.eq_ignore_ascii_case(b);
    }
    let mut rest = gb.clone();
    let mut shared = 0;
    for g in &ga {
        if let Some(k) = rest.iter().position(|x| x == g) {
            rest.swap_remove(k);
            shared += 1;
        }
    }
    2.0 * shared as f64 / (ga.len() + gb.len()) as f64 >= MIN_COPY_SIMILARITY
}

/// The target's reference link `tgt` (a full reference's label, or a whole `[text]` or
/// `[text][]`) with the source's label (from `src`, written the same two ways): a label is
/// replaced, and a shortcut or collapsed link keeps its translated text and gets the label
/// (`[文本]` → `[文本][label]`).
fn relabel(src: &str, tgt: &str) -> String {
    let inner = |s: &str| -> (bool, String) {
        let bang = s.starts_with('!');
        let t = s.trim_start_matches('!');
        match t.strip_prefix('[') {
            Some(rest) => {
                let rest = rest.strip_suffix("][]").or_else(|| rest.strip_suffix(']'));
                (bang, rest.unwrap_or(rest.unwrap_or_default()).to_string())
            }
            None => (bang, s.to_string()),
        }
    };
    let label = if src.trim_start_matches('!').starts_with('[') {
        inner(src).1
    } else {
        src.to_string()
    };
    if tgt.trim_start_matches('!').starts_with('[') {
        let (bang, text) = inner(tgt);
        format!("{}[{text}][{label}]", if bang { "!" } else { "" })
    } else {
        label
    }
}

/// Whether pairing `missing` and `foreign` footnote labels by position maps each foreign label
/// to one source label and back.
fn consistent(missing: &[&spans::Inline], foreign: &[&spans::Inline]) -> bool {
    let mut fwd: BTreeMap<&str, &str> = BTreeMap::new();
    let mut back: BTreeMap<&str, &str> = BTreeMap::new();
    for (a, b) in missing.iter().zip(foreign) {
        if *fwd.entry(b.key.as_str()).or_insert(a.key.as_str()) != a.key
            || *back.entry(a.key.as_str()).or_insert(b.key.as_str()) != b.key
        {
            return false;
        }
    }
    true
}

/// The source tag `s` with the values of its translatable attributes taken from the target
/// tag `t` when both have the same such attributes in the same order; `s` unchanged otherwise.
fn transplant(s: &str, t: &str) -> String {
    let values = crate::qa::unit::math_html::translatable_values;
    let (vs, vt) = (values(s), values(t));
    if vs.is_empty() || vs.len() != vt.len() || vs.iter().zip(&vt).any(|(a, b)| a.0 != b.0) {
        return s.to_string();
    }
    let mut out = s.to_string();
    for ((_, rs), (_, rt)) in vs.iter().zip(&vt).rev() {
        out.replace_range(rs.clone(), &t[rt.clone()]);
    }
    out
}

#[cfg(test)]
mod tests;
