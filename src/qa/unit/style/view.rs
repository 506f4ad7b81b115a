//! The prose of a Markdown text as the house-style rules read it: a sequence of chars, each
//! with its offset in the text (in chars), where everything a style rule must never flag is
//! replaced by a marker. Code blocks, inline code, math, HTML, front matter, autolinks, link
//! targets, footnote labels, bare URLs, HTML entities and escaped characters are never prose;
//! nor is the syntax of Markdown extensions and site plugins ([`crate::book::syntax`]: the
//! quotes of `!!! note "Title"`, a `--8<-- "file"` line, `++ctrl+c++`), which the site's tool
//! reads and a translation keeps as written.
//!
//! Two markers keep the neighbourhood right: [`OPAQUE`] stands for an inline item (inline code,
//! math, inline HTML, a URL): something that sits in the sentence but whose characters are not
//! the translator's prose, so a rule can see that a comma follows *something* without ever
//! pointing into it. [`BREAK`] separates blocks, lines, table cells and images, so no rule
//! reads across them. Emphasis, strong, strikethrough and link text are transparent:
//! `**Agent**的` reads as `Agent的`, as it renders.

use pulldown_cmark::{Event, LinkType, Tag, TagEnd};

use crate::book::markdown;

/// Stands for an inline item that is not prose (see the module docs); never flagged.
pub const OPAQUE: char = '\u{FFFC}';
/// Separates blocks and lines (see the module docs); never flagged.
pub const BREAK: char = '\n';

/// One char of the view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VChar {
    /// The char, or a marker ([`OPAQUE`], [`BREAK`]).
    pub c: char,
    /// Offset of the char in the text, in chars; `None` for [`OPAQUE`] and [`BREAK`] markers.
    pub at: Option<usize>,
}

/// The prose view of a text (see the module docs).
#[derive(Debug, Clone, Default)]
pub struct View {
    /// The prose chars and markers, in text order (offsets increase strictly).
    pub chars: Vec<VChar>,
}

impl View {
    /// The view of `text` (a unit's Markdown, BOM and CRLF allowed). Offsets are char offsets
    /// into `text` itself, BOM included.
    pub fn of(text: &str) -> View {
        let (bom, _) = markdown::split_bom(text);
        // Char offset of every byte offset that starts a char (and of the end).
        let mut char_at = vec![0usize; text.len() + 1];
        let mut n = 0;
        for (b, ch) in text.char_indices() {
            for slot in &mut char_at[b..b + ch.len_utf8()] {
                *slot = n;
            }
            n += 1;
        }
        char_at[text.len()] = n;

        let mut v = View::default();
        let mut syntax = crate::book::syntax::site_syntax(text);
        syntax.sort_by_key(|r| r.start);
        let mut skip = 0usize;
        let mut autolinks: Vec<bool> = Vec::new();
        // A run of adjacent text events (pulldown-cmark splits text at `[`, `_` and the
        // like): read as one so that a bare URL in it is masked whole.
        let mut run: Option<std::ops::Range<usize>> = None;
        for (ev, r) in markdown::parser(text).into_offset_iter() {
            let r = r.start + bom..r.end + bom;
            if let Event::Text(t) = &ev
                && skip == 0
                && text.get(r.clone()) == Some(t.as_ref())
            {
                run = match run.take() {
                    Some(prev) if prev.end == r.start => Some(prev.start..r.end),
                    Some(prev) => {
                        v.push_run(text, prev, &char_at, &syntax);
                        Some(r)
                    }
                    None => Some(r),
                };
                continue;
            }
            if let Some(prev) = run.take() {
                v.push_run(text, prev, &char_at, &syntax);
            }
            match ev {
                Event::Start(Tag::CodeBlock(_) | Tag::HtmlBlock | Tag::MetadataBlock(_)) => {
                    skip += 1;
                    v.mark(BREAK);
                }
                Event::End(TagEnd::CodeBlock | TagEnd::HtmlBlock | TagEnd::MetadataBlock(_)) => {
                    skip = skip.saturating_sub(1);
                    v.mark(BREAK);
                }
                _ if skip > 0 => {}
                Event::Start(Tag::Link { link_type, .. }) => {
                    let auto = matches!(link_type, LinkType::Autolink | LinkType::Email);
                    if auto {
                        skip += 1;
                        v.mark(OPAQUE);
                    }
                    autolinks.push(auto);
                }
                Event::End(TagEnd::Link) => {
                    if autolinks.pop() == Some(true) {
                        skip = skip.saturating_sub(1);
                    }
                }
                Event::Start(Tag::Emphasis | Tag::Strong | Tag::Strikethrough)
                | Event::End(TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough) => {}
                // Text that is not the source slice (an entity, an escape) and every inline
                // item: there, but not prose.
                Event::Text(_)
                | Event::Code(_)
                | Event::InlineMath(_)
                | Event::DisplayMath(_)
                | Event::InlineHtml(_)
                | Event::Html(_)
                | Event::FootnoteReference(_)
                | Event::TaskListMarker(_) => v.mark(OPAQUE),
                // Block boundaries, line breaks, images, rules.
                _ => v.mark(BREAK),
            }
        }
        if let Some(prev) = run.take() {
            v.push_run(text, prev, &char_at, &syntax);
        }
        v
    }

    fn mark(&mut self, c: char) {
        // Consecutive markers of one kind say nothing more than one.
        if self
            .chars
            .last()
            .is_some_and(|l| l.c == c && l.at.is_none())
        {
            return;
        }
        self.chars.push(VChar { c, at: None });
    }

    /// Pushes the prose slice `text[r]`, with bare URLs, entities and footnote labels
    /// ([`markdown::protected_spans`]) and site syntax (`syntax`: byte ranges of `text`
    /// sorted by start) as [`OPAQUE`].
    fn push_run(
        &mut self,
        text: &str,
        r: std::ops::Range<usize>,
        char_at: &[usize],
        syntax: &[std::ops::Range<usize>],
    ) {
        let slice = &text[r.clone()];
        let mut last = 0;
        let in_syntax = |at: usize| {
            let i = syntax.partition_point(|s| s.start <= at);
            i > 0 && syntax[i - 1].contains(&at)
        };
        let push_plain = |v: &mut View, from: usize, to: usize| {
            for (b, c) in slice[from..to].char_indices() {
                let at = r.start + from + b;
                if in_syntax(at) {
                    v.mark(OPAQUE);
                } else {
                    v.chars.push(VChar {
                        c,
                        at: Some(char_at[at]),
                    });
                }
            }
        };
        for p in markdown::protected_spans(slice) {
            push_plain(self, last, p.start);
            self.mark(OPAQUE);
            last = p.end;
        }
        push_plain(self, last, slice.len());
    }

    /// The char at `i`, or [`BREAK`] outside the view.
    pub fn c(&self, i: isize) -> char {
        if i < 0 {
            return BREAK;
        }
        self.chars.get(i as usize).map_or(BREAK, |v| v.c)
    }

    /// Whether view char `k` follows view char `k - 1` directly in the target, with no markup
    /// between them (false for `k` 0, outside the view, or a char not in the target). A token a
    /// check reads (a number, a run of one punctuation mark) does not run across markup, so its
    /// span covers only the chars it objects to.
    pub fn follows(&self, k: usize) -> bool {
        k > 0
            && matches!(
                (self.chars[k - 1].at, self.chars.get(k).and_then(|x| x.at)),
                (Some(a), Some(b)) if b == a + 1
            )
    }

    /// The first char before `i` that is not an ASCII space (or [`BREAK`]).
    pub fn prev_nonspace(&self, i: usize) -> char {
        let mut j = i as isize - 1;
        while self.c(j) == ' ' {
            j -= 1;
        }
        self.c(j)
    }

    /// The first char after `i` that is not an ASCII space (or [`BREAK`]).
    pub fn next_nonspace(&self, i: usize) -> char {
        let mut j = i as isize + 1;
        while self.c(j) == ' ' {
            j += 1;
        }
        self.c(j)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(v: &View) -> String {
        v.chars.iter().map(|c| c.c).collect()
    }

    #[test]
    fn code_urls_and_markup_are_never_prose() {
        let t = "# 标题\n\n使用 `foo()`，见 https://x.io/a 和 [文档](http://d.io)。**Agent**的 $x$ &amp; <b>b</b>\n\n```\ncode, here.\n```\n";
        let v = View::of(t);
        let p = plain(&v);
        assert_eq!(
            p,
            "\n标题\n使用 \u{FFFC}，见 \u{FFFC} 和 文档。Agent的 \u{FFFC} \u{FFFC} \u{FFFC}b\u{FFFC}\n"
        );
        // Every offset points at the same char in the text.
        let chars: Vec<char> = t.chars().collect();
        for vc in &v.chars {
            if let Some(at) = vc.at {
                assert_eq!(chars[at], vc.c);
            }
        }
    }

    #[test]
    fn site_syntax_is_never_prose() {
        let v = View::of(
            "!!! note \"Ein Titel\"\n\n    Text.\n\n=== \"Tab\"\n\nPress ++cmd+alt+\"&Uuml;\"++ now.\n\n--8<-- \"a.md\"\n",
        );
        let p = plain(&v);
        assert!(!p.contains('"'), "{p:?}");
        assert!(
            p.contains("Ein Titel") && p.contains("Tab") && p.contains("Press"),
            "{p:?}"
        );
        assert!(!p.contains("cmd") && !p.contains("a.md"), "{p:?}");
    }

    #[test]
    fn offsets_count_chars_after_a_bom_and_crlf() {
        let t = "\u{feff}中文,abc\r\n第二行\r\n";
        let v = View::of(t);
        let comma = v.chars.iter().find(|c| c.c == ',').unwrap();
        assert_eq!(comma.at, Some(3));
        let second = v.chars.iter().find(|c| c.c == '第').unwrap();
        assert_eq!(t.chars().nth(second.at.unwrap()), Some('第'));
    }
}
