//! One parse of a Markdown text into everything the QA checks compare: code, links, images,
//! footnotes, reference definitions, headings, tables, math, HTML and the prose text (with
//! code, inline code, math, HTML and link targets left out, so language checks never see them).
//!
//! Checks are pure functions of two [`Doc`]s (source and target), so each text is parsed once.

use pulldown_cmark::{CodeBlockKind, Event, LinkType, Tag, TagEnd};

use crate::book::markdown;

/// A fenced code block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fence {
    /// The info string (`rust`, `python title="x"`), as written.
    pub info: String,
    pub body: String,
}

/// A heading.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Heading {
    /// 1 to 6.
    pub level: u8,
    /// `{#anchor}` attribute, if any.
    pub anchor: Option<String>,
    /// Plain text of the heading.
    pub text: String,
}

/// A GFM table's shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableShape {
    /// Rows including the header row.
    pub rows: usize,
    /// Columns (from the delimiter row).
    pub cols: usize,
    /// Most cells written in one row of the source text. GFM drops cells beyond the delimiter
    /// row's columns when rendering, so a row with an extra cell loses text silently; this
    /// catches it (see [`raw_cells`]).
    pub max_row_cells: usize,
}

/// Cells written in one raw table row: `|`-separated, ignoring a leading and a trailing pipe,
/// pipes escaped as `\|` and pipes inside inline code. Hand-rolled because pulldown-cmark
/// reports only the cells it keeps.
pub fn raw_cells(row: &str) -> usize {
    let row = row.trim();
    let row = row.strip_prefix('|').unwrap_or(row);
    let bytes = row.as_bytes();
    let mut cells = 1;
    let mut in_code = false;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 1,
            b'`' => in_code = !in_code,
            b'|' if !in_code && i + 1 < bytes.len() && !row[i + 1..].trim().is_empty() => {
                cells += 1
            }
            _ => {}
        }
        i += 1;
    }
    cells
}

/// Labels of the lines of `text` that start (after up to three spaces and any `>` quote
/// markers) with `[^label]` and a colon, `:` or `：`, less one per label the parser did read as
/// a definition (`defs`).
fn broken_footnote_defs(text: &str, defs: &[String]) -> Vec<String> {
    let mut parsed: Vec<&str> = defs.iter().map(String::as_str).collect();
    let mut out = Vec::new();
    for line in text.lines() {
        let l = line.trim_start_matches([' ', '>']);
        let Some(rest) = l.strip_prefix("[^") else {
            continue;
        };
        let Some(end) = rest.find(']') else { continue };
        let label = &rest[..end];
        if label.is_empty() || label.contains(char::is_whitespace) {
            continue;
        }
        if !rest[end + 1..].trim_start().starts_with([':', '：']) {
            continue;
        }
        if let Some(p) = parsed.iter().position(|d| *d == label) {
            parsed.remove(p);
        } else {
            out.push(label.to_string());
        }
    }
    out
}

/// Text event `t` at byte `range` of the parsed text `text`, with the parts inside `syntax`
/// (sorted byte ranges, [`crate::book::syntax::site_syntax`]) left out. An event that is not the
/// source slice (an entity, an escape) is kept whole.
fn without_syntax<'t>(
    t: &'t str,
    range: &std::ops::Range<usize>,
    text: &str,
    syntax: &[std::ops::Range<usize>],
) -> std::borrow::Cow<'t, str> {
    let from = syntax.partition_point(|s| s.end <= range.start);
    let hits = syntax[from..]
        .iter()
        .take_while(|s| s.start < range.end)
        .collect::<Vec<_>>();
    if hits.is_empty() || markdown::split_bom(text).1.get(range.clone()) != Some(t) {
        return std::borrow::Cow::Borrowed(t);
    }
    let mut out = String::with_capacity(t.len());
    let mut at = range.start;
    for s in hits {
        if s.start > at {
            out.push_str(&t[at - range.start..s.start - range.start]);
        }
        at = at.max(s.end);
    }
    if at < range.end {
        out.push_str(&t[at - range.start..]);
    }
    std::borrow::Cow::Owned(out)
}

/// `text` with a blank line put before each line that opens or closes a JSX component
/// (`<Sandpack>`, `</Hint>`: a tag whose name starts with a capital) right after a line of
/// text, outside fenced code, and the offsets (in the new text) of the newlines put in; `None`
/// when there is none. MDX reads such a tag as a block of its own whether or not a blank line
/// precedes it, where CommonMark would read it as inline HTML inside the paragraph: published
/// MDX translations often drop that blank line, and the page builds the same.
fn jsx_blank_lines(text: &str) -> (Option<String>, Vec<usize>) {
    if !text.contains("\n<") {
        return (None, Vec::new());
    }
    let is_component = |line: &str| {
        let t = line.trim_start();
        let t = t.strip_prefix("</").or_else(|| t.strip_prefix('<'));
        t.is_some_and(|r| r.starts_with(|c: char| c.is_ascii_uppercase()))
    };
    let mut out = String::with_capacity(text.len() + 16);
    let mut inserted = Vec::new();
    let mut fence: Option<(char, usize)> = None;
    let mut prev_text = false;
    for line in text.split_inclusive('\n') {
        let t = line.trim_start();
        let run = |c: char| t.chars().take_while(|&x| x == c).count();
        let opens = ['`', '~'].into_iter().find(|&c| run(c) >= 3);
        match (fence, opens) {
            (None, Some(c)) => fence = Some((c, run(c))),
            (Some((c, n)), Some(o)) if o == c && run(c) >= n && t.trim_end().len() == run(c) => {
                fence = None
            }
            _ => {}
        }
        if fence.is_none() && prev_text && is_component(line) {
            inserted.push(out.len());
            out.push('\n');
        }
        out.push_str(line);
        prev_text = fence.is_none()
            && opens.is_none()
            && !t.trim().is_empty()
            && !t.starts_with('<')
            && !t.starts_with('#');
    }
    if inserted.is_empty() {
        (None, inserted)
    } else {
        (Some(out), inserted)
    }
}

/// Everything the checks look at, in document order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Doc {
    pub fences: Vec<Fence>,
    /// Bodies of indented code blocks.
    pub indented: Vec<String>,
    pub inline_code: Vec<String>,
    /// Link destinations (inline, reference, autolinks), in order.
    pub links: Vec<String>,
    /// Image destinations, in order.
    pub images: Vec<String>,
    /// Footnote labels referenced (`[^x]`), in order.
    pub footnote_refs: Vec<String>,
    /// Footnote labels defined (`[^x]: …`), in order.
    pub footnote_defs: Vec<String>,
    /// Labels of lines that start like a footnote definition, `[^x]` and a colon, that the
    /// parser did not read as one (a full-width `：`, or a definition where none may start), in
    /// order: what [`crate::qa::unit::links`] must not count as references.
    pub broken_footnote_defs: Vec<String>,
    /// Link reference definitions as `label → destination`, sorted by label.
    pub ref_defs: Vec<(String, String)>,
    pub headings: Vec<Heading>,
    pub tables: Vec<TableShape>,
    pub inline_math: Vec<String>,
    pub display_math: Vec<String>,
    /// Inline HTML and HTML blocks (tags and comments), in order.
    pub html: Vec<String>,
    /// Prose text: text events outside code, HTML, front matter and autolinks, one per line.
    pub prose: String,
    /// The block outline (paragraphs, list items, headings, …) compared by
    /// [`crate::qa::unit::structure`].
    pub blocks: Vec<crate::qa::view::outline::Block>,
}

impl Doc {
    /// Parses `text` (CRLF is treated as LF so that line endings never count as a change).
    pub fn parse(text: &str) -> Doc {
        let normalized;
        let text = if text.contains("\r\n") {
            normalized = text.replace("\r\n", "\n");
            normalized.as_str()
        } else {
            text
        };
        let (spaced, inserted) = jsx_blank_lines(text);
        let text = spaced.as_deref().unwrap_or(text);
        let mut d = Doc::default();
        let mut fence: Option<Fence> = None;
        let mut indented: Option<String> = None;
        let mut heading: Option<Heading> = None;
        let mut skip = 0usize; // inside HTML block / metadata / autolink
        let mut links_auto: Vec<bool> = Vec::new();
        let mut html_block = String::new();
        let mut in_html_block = false;
        let mut table: Option<TableShape> = None;
        // The labels of full references whose definition is in another unit: the parser reads
        // `[text][label]` as text then, but the label is a name that is never shown, so it is
        // not prose (a translation keeps it in the source language on purpose).
        let labels: Vec<std::ops::Range<usize>> = markdown::reference_links(text)
            .into_iter()
            .filter(|l| l.form == markdown::RefForm::Full && !l.defined)
            .map(|l| l.label.start.saturating_sub(1)..l.label.end + 1)
            .collect();
        let in_label = |r: &std::ops::Range<usize>| {
            labels.iter().any(|l| l.start <= r.start && r.end <= l.end)
        };
        // Site syntax (`++ctrl+c++`, `!!! note "…"` markers, `--8<--` lines) is structure the
        // translation keeps, not prose: cut out of the text events that hold it.
        let mut syntax = crate::book::syntax::site_syntax(markdown::split_bom(text).1);
        syntax.sort_by_key(|r| r.start);
        let parser = markdown::parser(text);
        let mut iter = parser.into_offset_iter();
        let mut outline = crate::qa::view::outline::OutlineBuilder::default();
        for (ev, range) in iter.by_ref() {
            outline.event(&ev, &range);
            match ev {
                Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info))) => {
                    fence = Some(Fence {
                        info: info.to_string(),
                        body: String::new(),
                    })
                }
                Event::Start(Tag::CodeBlock(CodeBlockKind::Indented)) => {
                    indented = Some(String::new())
                }
                Event::End(TagEnd::CodeBlock) => {
                    if let Some(f) = fence.take() {
                        d.fences.push(f);
                    }
                    if let Some(b) = indented.take() {
                        d.indented.push(b);
                    }
                }
                Event::Text(t) if fence.is_some() || indented.is_some() => {
                    if let Some(f) = fence.as_mut() {
                        f.body.push_str(&t);
                    } else if let Some(b) = indented.as_mut() {
                        b.push_str(&t);
                    }
                }
                Event::Start(Tag::HtmlBlock) => {
                    in_html_block = true;
                    html_block.clear();
                }
                Event::End(TagEnd::HtmlBlock) => {
                    in_html_block = false;
                    d.html.push(std::mem::take(&mut html_block));
                }
                Event::Html(h) if in_html_block => html_block.push_str(&h),
                Event::Html(h) | Event::InlineHtml(h) => d.html.push(h.to_string()),
                Event::Start(Tag::MetadataBlock(_)) => skip += 1,
                Event::End(TagEnd::MetadataBlock(_)) => skip = skip.saturating_sub(1),
                Event::Code(c) => d.inline_code.push(c.to_string()),
                Event::InlineMath(m) => d.inline_math.push(m.to_string()),
                Event::DisplayMath(m) => d.display_math.push(m.to_string()),
                Event::FootnoteReference(l) => d.footnote_refs.push(l.to_string()),
                Event::Start(Tag::FootnoteDefinition(l)) => d.footnote_defs.push(l.to_string()),
                Event::Start(Tag::Link {
                    link_type,
                    dest_url,
                    ..
                }) => {
                    let auto = matches!(link_type, LinkType::Autolink | LinkType::Email);
                    d.links.push(dest_url.to_string());
                    if auto {
                        skip += 1;
                    }
                    links_auto.push(auto);
                }
                Event::End(TagEnd::Link) if links_auto.pop() == Some(true) => {
                    skip = skip.saturating_sub(1);
                }
                Event::Start(Tag::Image { dest_url, .. }) => d.images.push(dest_url.to_string()),
                Event::Start(Tag::Heading { level, id, .. }) => {
                    heading = Some(Heading {
                        level: level as u8,
                        anchor: id.map(|s| s.to_string()),
                        text: String::new(),
                    })
                }
                Event::End(TagEnd::Heading(_)) => {
                    if let Some(h) = heading.take() {
                        d.headings.push(h);
                    }
                }
                Event::Start(Tag::Table(aligns)) => {
                    table = Some(TableShape {
                        rows: 0,
                        cols: aligns.len(),
                        max_row_cells: 0,
                    })
                }
                Event::Start(Tag::TableHead | Tag::TableRow) => {
                    if let Some(t) = table.as_mut() {
                        t.rows += 1;
                        let line = text[range].lines().next().unwrap_or("");
                        t.max_row_cells = t.max_row_cells.max(raw_cells(line));
                    }
                }
                Event::End(TagEnd::Table) => {
                    if let Some(t) = table.take() {
                        d.tables.push(t);
                    }
                }
                Event::Text(_) if skip == 0 && !in_html_block && in_label(&range) => {}
                Event::Text(t) if skip == 0 && !in_html_block => {
                    let t = without_syntax(&t, &range, text, &syntax);
                    if let Some(h) = heading.as_mut() {
                        h.text.push_str(&t);
                    }
                    d.prose.push_str(&t);
                    d.prose.push('\n');
                }
                _ => {}
            }
        }
        let mut defs: Vec<(String, String)> = iter
            .reference_definitions()
            .iter()
            .map(|(label, def)| (label.to_string(), def.dest.to_string()))
            .collect();
        defs.sort();
        d.ref_defs = defs;
        d.blocks = outline.finish();
        if !inserted.is_empty() {
            // Block ranges in the text as given, not as spaced.
            let back = |at: usize| at - inserted.partition_point(|&i| i < at);
            for b in &mut d.blocks {
                b.range = back(b.range.start)..back(b.range.end);
            }
        }
        d.broken_footnote_defs = broken_footnote_defs(text, &d.footnote_defs);
        d
    }

    /// This `Doc` with only the parts the campaign-level checks read (`prose`, here the clean
    /// prose, `headings`, `display_math`, `links`, `images`, `footnote_defs`); the rest is
    /// left empty.
    /// Those checks hold every unit of the book at once (see [`crate::qa::Parsed`]).
    pub fn for_campaign(self) -> Doc {
        Doc {
            // The clean prose in place of the prose: the campaign checks read only the clean
            // prose (cleaning it again changes nothing), and a second copy of every unit's
            // text was a third of `Parsed`'s memory on a long book.
            prose: self.clean_prose(),
            headings: self.headings,
            display_math: self.display_math,
            links: self.links,
            images: self.images,
            footnote_defs: self.footnote_defs,
            ..Doc::default()
        }
    }

    /// The prose with bare URLs and HTML entities removed (for language and number checks).
    pub fn clean_prose(&self) -> String {
        let mut out = String::with_capacity(self.prose.len());
        for line in self.prose.lines() {
            let mut last = 0;
            for r in markdown::protected_spans(line) {
                out.push_str(&line[last..r.start]);
                out.push(' ');
                last = r.end;
            }
            out.push_str(&line[last..]);
            out.push('\n');
        }
        out
    }
}

/// Share of `lang`'s script among the letters of the clean prose of `doc`, and the number of
/// letters counted. `None` when the prose has fewer than `min_letters` letters (too little text
/// to judge). Letters are alphabetic chars; digits, punctuation and symbols do not count.
pub fn script_share(
    lang: &crate::lang::Lang,
    doc: &Doc,
    min_letters: usize,
) -> Option<(f64, usize)> {
    let prose = doc.clean_prose();
    let mut letters = 0usize;
    let mut native = 0usize;
    for c in prose.chars().filter(|c| c.is_alphabetic()) {
        letters += 1;
        if lang.is_script_letter(c) {
            native += 1;
        }
    }
    (letters >= min_letters && letters > 0).then(|| (native as f64 / letters as f64, letters))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_jsx_component_right_after_a_line_of_text_is_a_block_of_its_own() {
        let with_blank = Doc::parse("Some text.\n\n<Sandpack>\n\n```js\nx\n```\n\n</Sandpack>\n");
        let without = Doc::parse("Some text.\n<Sandpack>\n\n```js\nx\n```\n\n</Sandpack>\n");
        let kinds = |d: &Doc| d.blocks.iter().map(|b| b.kind).collect::<Vec<_>>();
        assert_eq!(kinds(&with_blank), kinds(&without));
        // Ranges stay those of the text as given.
        assert_eq!(without.blocks[0].range, 0..11);
        assert_eq!(without.blocks[1].range.start, 11);
        // Inside code, and for lower-case HTML, nothing changes.
        assert_eq!(
            jsx_blank_lines("```\ntext\n<Foo>\n```\n").1,
            Vec::<usize>::new()
        );
        assert_eq!(
            jsx_blank_lines("text\n<span>x</span>\n").1,
            Vec::<usize>::new()
        );
    }

    #[test]
    fn collects_everything_once() {
        let text = "---\ntitle: t\n---\n\n# Intro {#intro}\n\nSee `x()` and [a](http://a.io) <http://auto.io> ![i](p.png) $a^2$ <b>bold</b> [r][ref] note[^1].\n\n$$E=mc^2$$\n\n| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n\n```rust\nfn main() {}\n```\n\n    indented\n\n<!-- comment -->\n\n[^1]: Footnote text.\n\n[ref]: https://ref.example\n";
        let d = Doc::parse(text);
        assert_eq!(
            d.fences,
            vec![Fence {
                info: "rust".into(),
                body: "fn main() {}\n".into()
            }]
        );
        assert_eq!(d.indented, vec!["indented\n".to_string()]);
        assert_eq!(d.inline_code, vec!["x()"]);
        assert_eq!(
            d.links,
            vec!["http://a.io", "http://auto.io", "https://ref.example"]
        );
        assert_eq!(d.images, vec!["p.png"]);
        assert_eq!(d.footnote_refs, vec!["1"]);
        assert_eq!(d.footnote_defs, vec!["1"]);
        assert_eq!(
            d.ref_defs,
            vec![("ref".to_string(), "https://ref.example".to_string())]
        );
        assert_eq!(
            d.headings,
            vec![Heading {
                level: 1,
                anchor: Some("intro".into()),
                text: "Intro".into()
            }]
        );
        assert_eq!(
            d.tables,
            vec![TableShape {
                rows: 3,
                cols: 2,
                max_row_cells: 2
            }]
        );
        assert_eq!(d.inline_math, vec!["a^2"]);
        assert_eq!(d.display_math, vec!["E=mc^2"]);
        assert!(d.html.iter().any(|h| h.contains("<!-- comment -->")));
        assert!(d.html.contains(&"<b>".to_string()));
        assert!(d.prose.contains("See ") && d.prose.contains("Footnote text."));
        assert!(
            !d.prose.contains("fn main")
                && !d.prose.contains("title: t")
                && !d.prose.contains("auto.io")
                && !d.prose.contains("a^2")
        );
    }

    #[test]
    fn script_shares() {
        let zh = crate::lang::Lang::parse("zh");
        let (s, n) =
            script_share(&zh, &Doc::parse("智能体 uses 工具 `code_is_ignored`\n"), 1).unwrap();
        assert_eq!(n, 9);
        assert!((s - 5.0 / 9.0).abs() < 1e-9);
        assert!(script_share(&zh, &Doc::parse("ok\n"), 10).is_none());
    }

    #[test]
    fn crlf_is_normalised() {
        assert_eq!(Doc::parse("```\r\na\r\n```\r\n").fences[0].body, "a\n");
    }

    #[test]
    fn clean_prose_drops_urls() {
        let d = Doc::parse("Visit https://x.io/a now &amp; later.\n");
        let p = d.clean_prose();
        assert!(!p.contains("x.io") && !p.contains("amp") && p.contains("Visit"));
    }
}
