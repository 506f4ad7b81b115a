//! Masking of markup that is not prose before a unit is sent to the Translation agent: HTML
//! comments (`<!-- … -->`) outside code, lines that hold nothing but HTML tags
//! (`<div align="center">`, `</div>`) and inline elements that hold no text (`<br/>`,
//! `<a id="x"></a>`, an `<img>` without `alt`/`title`) are replaced by placeholders, so the model never reads
//! them as text to translate, and restored byte for byte in its answer.
//!
//! A placeholder is `⟦` n times, a decimal index, `⟧` n times (`⟦1⟧`), where n is one more
//! than the longest run of `⟦` in the text, so a placeholder never collides with the text's
//! own characters: mask → restore is lossless for any text (property-tested). The answer
//! should carry every placeholder exactly once and no other. [`Masked::restore`] makes any
//! deviation a [`MaskError`]; the campaign reads answers with [`Masked::recover`], which takes
//! an unambiguous look-alike (`【1】`) for the placeholder and leaves a lost one's span out,
//! named in the result, for QA to flag and the repair to restore (never guessed into place);
//! a duplicated or unknown placeholder still fails the attempt. Comments inside fenced code
//! blocks and inline code are code, left as they are. [`mask_markup`] masks more (code, math,
//! links, footnote labels) for the last-resort pieces of a stuck unit.

/// A masked text and the original bytes of each placeholder.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Masked {
    /// The text with placeholders.
    pub text: String,
    /// `originals[i]` is what placeholder `i + 1` stands for.
    pub originals: Vec<String>,
    /// Brackets per side of each placeholder (n in the module docs).
    pub width: usize,
}

/// Why an answer's placeholders do not match the masked source.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MaskError {
    #[error(
        "the translation lost the placeholder {0} that stands for an HTML comment or tag of the source; the answer was not accepted"
    )]
    Missing(String),
    #[error(
        "the translation has the placeholder {0} {1} times instead of once; the answer was not accepted"
    )]
    Duplicated(String, usize),
    #[error(
        "the translation has a placeholder {0} that is not in the source; the answer was not accepted"
    )]
    Unknown(String),
}

impl Masked {
    /// The placeholder for index `i` (1-based).
    pub fn placeholder(&self, i: usize) -> String {
        format!("{}{i}{}", "⟦".repeat(self.width), "⟧".repeat(self.width))
    }

    /// A line for the request's glossary message telling the model to copy the placeholders,
    /// or `None` when nothing was masked (then the request is what it was before masking).
    pub fn instruction(&self) -> Option<String> {
        (!self.is_empty()).then(|| {
            format!(
                "\nThe text contains placeholders such as {} that stand for markup: copy each of them exactly once, unchanged, where it belongs in the translation.\n",
                self.placeholder(1)
            )
        })
    }

    /// Appends [`Masked::instruction`] to the glossary message of a Translation request built
    /// from this masked text (never to the example exchange before it).
    pub fn instruct(&self, req: &mut crate::llm::Request) {
        if let (Some(line), Some(m)) = (
            self.instruction(),
            super::translation::glossary_message_mut(req),
        ) {
            m.content.push_str(&line);
        }
    }

    /// Whether anything was masked.
    pub fn is_empty(&self) -> bool {
        self.originals.is_empty()
    }

    /// `other` (for example an earlier translation of the same unit) with the same originals
    /// replaced by their placeholders, searched in order; originals not found are left alone.
    pub fn apply(&self, other: &str) -> String {
        let mut out = String::with_capacity(other.len());
        let mut rest = other;
        for (i, o) in self.originals.iter().enumerate() {
            if let Some(at) = rest.find(o.as_str()) {
                out.push_str(&rest[..at]);
                out.push_str(&self.placeholder(i + 1));
                rest = &rest[at + o.len()..];
            }
        }
        out.push_str(rest);
        out
    }

    /// [`Masked::restore`] for a weak model's answer: a placeholder the model rewrote with
    /// look-alike brackets (`【1】`, `〚1〛`, `[1]` for `⟦1⟧`, as the 1.5b model did in
    /// `tests/fixtures/real-llm/sample.jsonl`) counts as the placeholder when the canonical
    /// form is absent from the answer, the look-alike occurs there exactly once and nowhere in
    /// the masked source (so it cannot be the text's own). A placeholder still missing then is
    /// left out: the text is returned without that span and the span's original bytes are
    /// listed, so QA flags what is missing and the deterministic repair restores it where the
    /// alignment is unambiguous. Nothing is guessed into place here. Errors: a placeholder
    /// present more than once, or one not issued by the mask (as [`Masked::restore`]).
    pub fn recover(&self, answer: &str) -> Result<(String, Vec<String>), MaskError> {
        if self.is_empty() {
            return Ok((answer.to_string(), Vec::new()));
        }
        let w = self.width;
        let mut text = answer.to_string();
        let mut lost = Vec::new();
        for i in 1..=self.originals.len() {
            let canonical = self.placeholder(i);
            if text.contains(&canonical) {
                continue;
            }
            let alike = [("【", "】"), ("〚", "〛"), ("[", "]")]
                .iter()
                .map(|(o, c)| format!("{}{i}{}", o.repeat(w), c.repeat(w)))
                .find(|v| text.matches(v.as_str()).count() == 1 && !self.text.contains(v.as_str()));
            match alike {
                Some(v) => text = text.replacen(&v, &canonical, 1),
                None => lost.push(i),
            }
        }
        if lost.is_empty() {
            return self.restore(&text).map(|t| (t, Vec::new()));
        }
        // Restore as if the lost spans were empty: a copy of the mask whose lost originals
        // are "" accepts the answer with those placeholders appended at the end, then drops
        // them.
        let mut partial = self.clone();
        for &i in &lost {
            partial.originals[i - 1] = String::new();
            text.push_str(&self.placeholder(i));
        }
        let restored = partial.restore(&text)?;
        Ok((
            restored,
            lost.iter()
                .map(|&i| self.originals[i - 1].clone())
                .collect(),
        ))
    }

    /// `answer` with every placeholder replaced by its original bytes. Errors: a placeholder
    /// missing, present more than once, or not issued by [`mask`].
    pub fn restore(&self, answer: &str) -> Result<String, MaskError> {
        if self.is_empty() {
            return Ok(answer.to_string());
        }
        let (open, close) = ("⟦".repeat(self.width), "⟧".repeat(self.width));
        let mut counts = vec![0usize; self.originals.len()];
        let mut out = String::with_capacity(answer.len());
        let mut rest = answer;
        while let Some(at) = rest.find(&open) {
            let after = &rest[at + open.len()..];
            let digits = after.bytes().take_while(u8::is_ascii_digit).count();
            if digits == 0 || !after[digits..].starts_with(&close) {
                // Not a placeholder here: move on by one bracket (a placeholder may start
                // right after a bracket of the text).
                let step = at + '⟦'.len_utf8();
                out.push_str(&rest[..step]);
                rest = &rest[step..];
                continue;
            }
            let tag = &rest[at..at + open.len() + digits + close.len()];
            let i: usize = after[..digits].parse().unwrap_or(0);
            if i == 0 || i > self.originals.len() {
                return Err(MaskError::Unknown(tag.to_string()));
            }
            counts[i - 1] += 1;
            out.push_str(&rest[..at]);
            out.push_str(&self.originals[i - 1]);
            rest = &after[digits + close.len()..];
        }
        out.push_str(rest);
        for (i, n) in counts.iter().enumerate() {
            match n {
                0 => return Err(MaskError::Missing(self.placeholder(i + 1))),
                1 => {}
                n => return Err(MaskError::Duplicated(self.placeholder(i + 1), *n)),
            }
        }
        Ok(out)
    }
}

/// `text` with its HTML comments outside code, and its lines of HTML tags only, replaced by
/// placeholders (see the module docs).
pub fn mask(text: &str) -> Masked {
    mask_with(text, false)
}

/// [`mask`] for a unit of an MDX chapter: inline `{expressions}` and JSX component tags
/// outside code ([`crate::book::mdx::inline_spans`]) become placeholders too, so they reach
/// the output byte-identical and the model never reads them.
pub fn mask_mdx(text: &str) -> Masked {
    mask_with(text, true)
}

/// [`mask`] or [`mask_mdx`], by whether the unit's chapter is MDX.
pub fn mask_for(text: &str, mdx: bool) -> Masked {
    mask_with(text, mdx)
}

fn mask_with(text: &str, mdx: bool) -> Masked {
    mask_spans(text, base_spans(text, mdx))
}

/// The spans [`mask`] replaces (HTML comments outside code, lines of HTML tags only and
/// inline elements that hold no text) and, with `mdx`, those [`mask_mdx`] adds; sorted and
/// disjoint.
fn base_spans(text: &str, mdx: bool) -> Vec<std::ops::Range<usize>> {
    let code = crate::book::syntax::code_ranges(text);
    let mut spans = comment_spans(text, &code);
    spans.extend(tag_line_spans(text, &code, &spans));
    spans.extend(empty_element_spans(text, &code, &spans));
    for f in crate::book::syntax::site_syntax_outside(text, &code) {
        if !spans.iter().any(|s| s.start < f.end && f.start < s.end) {
            spans.push(f);
        }
    }
    if mdx {
        let mut found = Vec::new();
        // ESM and JSX lines (as in neighbour context, which holds whole protected blocks).
        let mut pos = 0;
        for line in text.split_inclusive('\n') {
            let body = line.trim_end_matches(['\n', '\r']);
            let lead = body.len() - body.trim_start().len();
            if !body.trim().is_empty()
                && !code.iter().any(|r| r.contains(&(pos + lead)))
                && (body.trim_start().starts_with("import ")
                    || body.trim_start().starts_with("export "))
            {
                found.push(pos + lead..pos + body.len());
            }
            pos += line.len();
        }
        for f in crate::book::mdx::inline_spans(text, &code) {
            if !found.iter().any(|s| s.start < f.end && f.start < s.end) {
                found.push(f);
            }
        }
        // A JSX span inside one already masked (a comment) stays in it; one overlapping a
        // masked tag line takes its place.
        spans.retain(|s| {
            !found.iter().any(|f| {
                f.start < s.end && s.start < f.end && !(s.start <= f.start && f.end <= s.end)
            })
        });
        for f in found {
            if !spans.iter().any(|s| s.start < f.end && f.start < s.end) {
                spans.push(f);
            }
        }
    }
    spans.sort_by_key(|r| r.start);
    spans
}

/// Smaller when stuck: what [`mask`] masks, plus every inline span a model must
/// copy byte for byte, for the pieces of a unit whose mechanical errors neither the revision
/// rounds nor the deterministic repair cured (the repair does not guess where a dropped span
/// belongs). Masked as a whole: inline code, inline and display math (`$…$`, `$$…$$`),
/// footnote references (`[^x]`), links and images with their text (`[text](target)`,
/// autolinks), inline HTML tags, and the label of a footnote definition (`[^x]:`). Fenced code
/// blocks are left to the repair (their comments may be translatable).
///
/// A link's text is masked with it, so it stays in the source language: the recorded 1.5b
/// answers kept single placeholders but lost one of the pair when a link was masked around its
/// text (`tests/fixtures/real-llm/tiny.jsonl`), which left a stray bracket and still no link.
/// Untranslated link text is visible to the editor in the output; a dropped link is an error.
/// This is the last-resort request of a unit that stayed wrong, not the normal one. Lossless
/// like [`mask`]: restoring the masked text gives `text` back (property-tested).
pub fn mask_markup(text: &str) -> Masked {
    mask_markup_for(text, false)
}

/// [`mask_markup`] for a unit of an MDX chapter when `mdx` (its JSX and expressions masked as
/// [`mask_mdx`] does).
pub fn mask_markup_for(text: &str, mdx: bool) -> Masked {
    let mut spans = base_spans(text, mdx);
    let taken = spans.clone();
    let overlaps =
        |a: &std::ops::Range<usize>, b: &std::ops::Range<usize>| a.start < b.end && b.start < a.end;
    for r in inline_markup_spans(text) {
        if r.is_empty() || taken.iter().any(|t| overlaps(t, &r)) {
            continue;
        }
        spans.push(r);
    }
    spans.sort_by_key(|r| (r.start, r.end));
    let mut disjoint: Vec<std::ops::Range<usize>> = Vec::with_capacity(spans.len());
    for r in spans {
        if disjoint.last().is_none_or(|l| l.end <= r.start) {
            disjoint.push(r);
        }
    }
    mask_spans(text, disjoint)
}

/// Byte ranges (in `text`) of the inline markup [`mask_markup`] masks, from pulldown-cmark's
/// offsets (the parser options of [`crate::book::markdown::options`]); may overlap the base
/// spans, which win.
fn inline_markup_spans(text: &str) -> Vec<std::ops::Range<usize>> {
    use pulldown_cmark::{Event, Tag};
    let (bom, _) = crate::book::markdown::split_bom(text);
    let mut out = Vec::new();
    for (ev, r) in crate::book::markdown::parser(text).into_offset_iter() {
        let r = r.start + bom..r.end + bom;
        match ev {
            // A link or image (autolinks too) is masked whole, its text with it; what it
            // holds (code, math) is inside that span and dropped by [`mask_markup`]'s
            // disjoint filter.
            Event::Code(_)
            | Event::InlineMath(_)
            | Event::DisplayMath(_)
            | Event::FootnoteReference(_)
            | Event::InlineHtml(_)
            | Event::Start(Tag::Link { .. })
            | Event::Start(Tag::Image { .. }) => out.push(r),
            Event::Start(Tag::FootnoteDefinition(_)) => {
                if let Some(end) = text[r.clone()].find("]:") {
                    out.push(r.start..r.start + end + 2);
                }
            }
            _ => {}
        }
    }
    out
}

/// `text` with each of `spans` (sorted, disjoint byte ranges) replaced by a placeholder.
fn mask_spans(text: &str, spans: Vec<std::ops::Range<usize>>) -> Masked {
    let width = 1 + longest_run(text, '⟦');
    let mut m = Masked {
        width,
        ..Default::default()
    };
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    for r in spans {
        out.push_str(&text[i..r.start]);
        m.originals.push(text[r.clone()].to_string());
        out.push_str(&m.placeholder(m.originals.len()));
        i = r.end;
    }
    out.push_str(&text[i..]);
    m.text = out;
    m
}

/// Byte ranges of the HTML comments of `text` that start outside `code`; an unclosed
/// comment ends the search (it is left as text).
fn comment_spans(text: &str, code: &[std::ops::Range<usize>]) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(rel) = text[i..].find("<!--") {
        let at = i + rel;
        if code.iter().any(|r| r.contains(&at)) {
            i = at + 4;
            continue;
        }
        let Some(end_rel) = text[at + 4..].find("-->") else {
            break;
        };
        let end = at + 4 + end_rel + 3;
        out.push(at..end);
        i = end;
    }
    out
}

/// Byte ranges (indentation and line break excluded) of the lines of `text` outside `code` and
/// outside `taken` that hold nothing but HTML tags, such as `<div align="center">`, `</div>`
/// or `<a id="x"></a>`: markup with no prose, which must reach the output unchanged. A tag
/// with an `alt` or `title` attribute is left as text, since those values may be translated.
fn tag_line_spans(
    text: &str,
    code: &[std::ops::Range<usize>],
    taken: &[std::ops::Range<usize>],
) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut pos = 0;
    for line in text.split_inclusive('\n') {
        let start = pos;
        pos += line.len();
        let body = line.trim_end_matches(['\n', '\r']).trim_end();
        let lead = body.len() - body.trim_start().len();
        let span = start + lead..start + body.len();
        if span.is_empty()
            || code.iter().any(|r| r.contains(&span.start))
            || taken
                .iter()
                .any(|r| r.start < span.end && span.start < r.end)
        {
            continue;
        }
        if crate::book::markdown::only_html_tags(&text[span.clone()]) {
            out.push(span);
        }
    }
    out
}

/// HTML elements with no content of their own (WHATWG HTML, "void elements"), masked wherever
/// they stand in prose.
const VOID_ELEMENTS: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
    "wbr",
];

/// Byte ranges, in prose outside `code` and `taken`, of inline elements that hold no text:
/// void elements (`<br>`, `<br/>`, `<img src=…>` without `alt`/`title`) and an opening tag
/// directly followed by its closing tag (`<a id="x"></a>`, `<span class="anchor"></span>`).
/// Elements that wrap text (`<kbd>Ctrl</kbd>`) are left as text: their content is prose, and
/// the `html` QA check guards their tags.
fn empty_element_spans(
    text: &str,
    code: &[std::ops::Range<usize>],
    taken: &[std::ops::Range<usize>],
) -> Vec<std::ops::Range<usize>> {
    let free = |r: &std::ops::Range<usize>| {
        !code.iter().any(|c| c.contains(&r.start))
            && !taken.iter().any(|t| t.start < r.end && r.start < t.end)
    };
    let mut out: Vec<std::ops::Range<usize>> = Vec::new();
    let mut i = 0;
    while let Some(rel) = text[i..].find('<') {
        let at = i + rel;
        i = at + 1;
        let Some((name, end)) = open_tag(text, at) else {
            continue;
        };
        let tag = &text[at..end];
        let lower = tag.to_ascii_lowercase();
        if lower.contains(" alt=") || lower.contains(" title=") {
            continue;
        }
        let span = if VOID_ELEMENTS.contains(&name.as_str()) {
            at..end
        } else {
            let close = format!("</{name}>");
            if text[end..]
                .get(..close.len())
                .is_some_and(|t| t.eq_ignore_ascii_case(&close))
            {
                at..end + close.len()
            } else {
                continue;
            }
        };
        if free(&span) {
            i = span.end;
            out.push(span);
        }
    }
    out
}

/// The lower-cased element name and the end (exclusive, bytes) of an opening or self-closing
/// HTML tag starting at `at` (`<name`, then whitespace, `/` or `>`, ending at the first `>` on
/// the same line), or `None`.
fn open_tag(text: &str, at: usize) -> Option<(String, usize)> {
    let after = &text[at + 1..];
    let n = after
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'-')
        .count();
    if n == 0 || !after.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return None;
    }
    if !after[n..].starts_with([' ', '\t', '/', '>']) {
        return None;
    }
    let close = after.find('>')?;
    let inner = &after[..close];
    if inner.contains(['<', '\n']) {
        return None;
    }
    Some((after[..n].to_ascii_lowercase(), at + 1 + close + 1))
}

/// `text` with its HTML comments outside code removed (for read-only context, where a
/// placeholder would mean nothing).
pub fn strip_comments(text: &str) -> String {
    strip_for(text, false)
}

/// [`strip_comments`], and for an MDX chapter (`mdx`) also its ESM lines, `{expressions}` and
/// JSX tags (what [`mask_mdx`] masks).
pub fn strip_for(text: &str, mdx: bool) -> String {
    let m = mask_with(text, mdx);
    let mut out = m.text.clone();
    for i in (1..=m.originals.len()).rev() {
        out = out.replacen(&m.placeholder(i), "", 1);
    }
    out
}

fn longest_run(text: &str, c: char) -> usize {
    let (mut best, mut cur) = (0, 0);
    for ch in text.chars() {
        if ch == c {
            cur += 1;
            best = best.max(cur);
        } else {
            cur = 0;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn plugin_and_extension_syntax_is_masked_and_only_titles_are_left_to_translate() {
        let text = "--8<-- \"CONTRIBUTING.md\"\n\n!!! example \"Example with Python\"\n    === \"docs/my_page.md\"\n\n        Text here.\n\n::: my_package.my_module.MyClass\n    options:\n      show_source: false\n\nSee {{ config.site_name }} and {% include 'x.md' %}.\n\n!!! note\n    Body.\n\n--8<--\na.md\nb.md\n--8<--\n\n```\n!!! not \"masked\"\n```\n";
        let m = mask(text);
        assert_eq!(m.restore(&m.text).unwrap(), text, "lossless");
        let ph = |i: usize| m.placeholder(i);
        let kept: Vec<&str> = m.originals.iter().map(String::as_str).collect();
        assert_eq!(
            kept,
            [
                "--8<-- \"CONTRIBUTING.md\"",
                "!!! example \"",
                "\"",
                "=== \"",
                "\"",
                "::: my_package.my_module.MyClass\n    options:\n      show_source: false",
                "{{ config.site_name }}",
                "{% include 'x.md' %}",
                "!!! note",
                "--8<--\na.md\nb.md\n--8<--",
            ]
        );
        // The titles are what the model reads and translates.
        assert!(
            m.text
                .contains(&format!("{}Example with Python{}", ph(2), ph(3)))
        );
        assert!(m.text.contains("!!! not \"masked\""), "code is left alone");
        let inline = mask(
            "Press ++ctrl+alt+delete++ now.{: .source-link }\n\n[=85% \"85%\"]{: .candystripe} and ^†^{#\\_fn_1}\n",
        );
        let kept: Vec<&str> = inline.originals.iter().map(String::as_str).collect();
        assert_eq!(
            kept,
            [
                "++ctrl+alt+delete++",
                "{: .source-link }",
                "[=85% \"85%\"]",
                "{: .candystripe}",
                "{#\\_fn_1}"
            ]
        );
        let block_text = "/// admonition | Some Title\n    type: warning\n\nContent here.\n///\n\n/// html | div\n:smile: x\n///\n";
        let blocks = mask(block_text);
        let kept: Vec<&str> = blocks.originals.iter().map(String::as_str).collect();
        assert_eq!(
            kept,
            [
                "/// admonition | ",
                "\n    type: warning",
                "///",
                "/// html | div",
                ":smile:",
                "///"
            ]
        );
        assert_eq!(blocks.restore(&blocks.text).unwrap(), block_text);
        let icons =
            mask("## Sponsor :octicons-heart-fill-16:{: .throb}\n\nAt 12:30: fine :smile: ok.\n");
        let kept: Vec<&str> = icons.originals.iter().map(String::as_str).collect();
        assert_eq!(kept, [":octicons-heart-fill-16:", "{: .throb}", ":smile:"]);
    }

    #[test]
    fn comments_are_masked_outside_code_and_restored() {
        let src = "Intro.\n\n<!-- Editors: keep this. -->\n\nText <!-- inline --> here and `<!-- code -->`.\n\n```html\n<!-- in code -->\n```\n";
        let m = mask(src);
        assert_eq!(
            m.text,
            "Intro.\n\n⟦1⟧\n\nText ⟦2⟧ here and `<!-- code -->`.\n\n```html\n<!-- in code -->\n```\n"
        );
        assert_eq!(
            m.originals,
            vec!["<!-- Editors: keep this. -->", "<!-- inline -->"]
        );
        let answer =
            "引言。\n\n⟦1⟧\n\n文本 ⟦2⟧ 在此，`<!-- code -->`。\n\n```html\n<!-- in code -->\n```\n";
        assert_eq!(
            m.restore(answer).unwrap(),
            "引言。\n\n<!-- Editors: keep this. -->\n\n文本 <!-- inline --> 在此，`<!-- code -->`。\n\n```html\n<!-- in code -->\n```\n"
        );
        assert_eq!(m.apply(src), m.text);
    }

    #[test]
    fn a_lost_or_duplicated_placeholder_is_an_error() {
        let m = mask("A <!-- x --> b <!-- y -->.\n");
        assert_eq!(
            m.restore("A b ⟦2⟧.\n"),
            Err(MaskError::Missing("⟦1⟧".into()))
        );
        assert_eq!(
            m.restore("A ⟦1⟧ ⟦1⟧ b ⟦2⟧.\n"),
            Err(MaskError::Duplicated("⟦1⟧".into(), 2))
        );
        assert_eq!(
            m.restore("A ⟦1⟧ b ⟦2⟧ ⟦3⟧.\n"),
            Err(MaskError::Unknown("⟦3⟧".into()))
        );
    }

    #[test]
    fn lines_of_html_tags_only_are_masked() {
        let src = "<div align=\"center\">\n  <a id=\"top\"></a>\n\nSee <b>this</b>.\n\n<p><img src=\"a.png\" alt=\"Logo\"></p>\n</div>\n\n```html\n<div>\n```\n";
        let m = mask(src);
        assert_eq!(
            m.text,
            "⟦1⟧\n  ⟦2⟧\n\nSee <b>this</b>.\n\n<p><img src=\"a.png\" alt=\"Logo\"></p>\n⟦3⟧\n\n```html\n<div>\n```\n"
        );
        assert_eq!(
            m.originals,
            vec!["<div align=\"center\">", "<a id=\"top\"></a>", "</div>"]
        );
        assert_eq!(m.restore(&m.text).unwrap(), src);
        assert!(!crate::book::markdown::only_html_tags("<b>bold</b>"));
        assert!(!crate::book::markdown::only_html_tags("a < b > c"));
        assert!(!crate::book::markdown::only_html_tags(
            "<img src=x title=\"Hi\">"
        ));
    }

    #[test]
    fn empty_inline_elements_are_masked_in_prose() {
        let src = "Line one<br/>line two <a id=\"x\"></a>and <img src=\"a.png\"> but <img src=\"b.png\" alt=\"B\"> and <kbd>Ctrl</kbd>, a<b, `<br>`.\n";
        let m = mask(src);
        assert_eq!(
            m.text,
            "Line one⟦1⟧line two ⟦2⟧and ⟦3⟧ but <img src=\"b.png\" alt=\"B\"> and <kbd>Ctrl</kbd>, a<b, `<br>`.\n"
        );
        assert_eq!(
            m.originals,
            vec!["<br/>", "<a id=\"x\"></a>", "<img src=\"a.png\">"]
        );
        assert_eq!(m.restore(&m.text).unwrap(), src);
    }

    /// Regression (found by `mask_then_restore_is_lossless`): looking for `</div>` after an
    /// opening tag sliced the text inside a multi-byte character and panicked.
    #[test]
    fn closing_tag_lookup_at_a_multibyte_char_does_not_panic() {
        let src = "<div>a⟧⟧ and <a id=x>⟦</a>\n";
        let m = mask(src);
        assert_eq!(m.restore(&m.text).unwrap(), src);
    }

    #[test]
    fn text_with_brackets_gets_wider_placeholders() {
        let src = "Math ⟦1⟧ and <!-- c -->.\n";
        let m = mask(src);
        assert_eq!(m.text, "Math ⟦1⟧ and ⟦⟦1⟧⟧.\n");
        assert_eq!(m.restore(&m.text).unwrap(), src);
    }

    #[test]
    fn mask_markup_masks_code_math_links_footnotes_and_inline_html() {
        let src = "Each step costs $n \\times t$ tokens; call `run()`[^cost]. The [OpenAI guide](https://platform.openai.com/docs) and ![a loop](images/loop.svg \"Loop\") and <https://example.com> and <kbd>Ctrl</kbd>.\n\n[^cost]: Tokens cost money.\n";
        let m = mask_markup(src);
        assert_eq!(
            m.text,
            "Each step costs ⟦1⟧ tokens; call ⟦2⟧⟦3⟧. The ⟦4⟧ and ⟦5⟧ and ⟦6⟧ and ⟦7⟧Ctrl⟦8⟧.\n\n⟦9⟧ Tokens cost money.\n"
        );
        assert_eq!(
            m.originals,
            vec![
                "$n \\times t$",
                "`run()`",
                "[^cost]",
                "[OpenAI guide](https://platform.openai.com/docs)",
                "![a loop](images/loop.svg \"Loop\")",
                "<https://example.com>",
                "<kbd>",
                "</kbd>",
                "[^cost]:",
            ]
        );
        let answer = "每一步花费 ⟦1⟧ 个词元；调用 ⟦2⟧⟦3⟧。⟦4⟧、⟦5⟧、⟦6⟧ 和 ⟦7⟧Ctrl⟦8⟧。\n\n⟦9⟧ 词元要花钱。\n";
        assert_eq!(
            m.restore(answer).unwrap(),
            "每一步花费 $n \\times t$ 个词元；调用 `run()`[^cost]。[OpenAI guide](https://platform.openai.com/docs)、![a loop](images/loop.svg \"Loop\")、<https://example.com> 和 <kbd>Ctrl</kbd>。\n\n[^cost]: 词元要花钱。\n"
        );
    }

    #[test]
    fn mask_markup_masks_links_whole_and_keeps_comments_as_mask_does() {
        let m = mask_markup("See [](memory.md) and <!-- note --> and [next chapter](memory.md).\n");
        assert_eq!(m.text, "See ⟦1⟧ and ⟦2⟧ and ⟦3⟧.\n");
        assert_eq!(m.originals[2], "[next chapter](memory.md)");
        assert_eq!(m.originals[0], "[](memory.md)");
        assert_eq!(m.originals[1], "<!-- note -->");
    }

    #[test]
    fn recover_accepts_look_alike_brackets_and_leaves_lost_spans_out() {
        let m =
            mask("Facts are kept.\n\n<!-- Editors: keep. -->\n\n<details>\n\nWhy.\n\n</details>\n");
        assert_eq!(m.text, "Facts are kept.\n\n⟦1⟧\n\n⟦2⟧\n\nWhy.\n\n⟦3⟧\n");
        // 【1】 is the model's rewrite of ⟦1⟧; ⟦2⟧ was dropped.
        let (text, lost) = m
            .recover("事实被保留。\n\n【1】\n\n为什么。\n\n⟦3⟧\n")
            .unwrap();
        assert_eq!(
            text,
            "事实被保留。\n\n<!-- Editors: keep. -->\n\n为什么。\n\n</details>\n"
        );
        assert_eq!(lost, vec!["<details>".to_string()]);
        // A look-alike that is the text's own is not taken for a placeholder.
        let own = mask("See [1] and <!-- c -->.\n");
        let (text, lost) = own.recover("见 [1] 和。\n").unwrap();
        assert_eq!(text, "见 [1] 和。\n");
        assert_eq!(lost, vec!["<!-- c -->".to_string()]);
        // Duplicates stay an error.
        assert!(m.recover("⟦1⟧ ⟦1⟧ ⟦2⟧ ⟦3⟧").is_err());
    }

    proptest! {
        #[test]
        fn mask_markup_then_restore_is_lossless(s in "(\\$|\\$\\$|`|\\[|\\]|\\(|\\)|!|\\^|:|<|>|https://x|<b>|</b>|<!--|-->|⟦|⟧|[a-z ]|\n){0,40}") {
            let m = mask_markup(&s);
            prop_assert_eq!(m.restore(&m.text).unwrap(), s.clone());
        }

        #[test]
        fn mask_then_restore_is_lossless(s in "(<!--|-->|⟦|⟧|`|```\n|<div>|</div>|<a id=x>|</a>|<br>|<b>|<|>|[a-z0-9 ]|\n){0,40}") {
            let m = mask(&s);
            prop_assert_eq!(m.restore(&m.text).unwrap(), s.clone());
            prop_assert!(m.originals.iter().all(|o| (o.starts_with("<!--") && o.ends_with("-->")) || crate::book::markdown::only_html_tags(o)));
        }
    }
}
