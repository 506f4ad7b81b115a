//! The single source of pulldown-cmark parser options, and small helpers over parse events.
//!
//! Every module that parses Markdown (segmentation, QA checks, the pseudo provider) calls
//! [`options`], so that they all agree on what a block, a table or a math span is.

use pulldown_cmark::{Options, Parser};

/// The parser options booktr uses everywhere.
///
/// Enabled: tables, GFM footnotes, strikethrough, task lists, heading attributes (`{#anchor}`),
/// YAML (`---`) and TOML (`+++`) front matter, `$…$`/`$$…$$` math, GFM callouts and definition
/// lists. Smart punctuation is deliberately **off**: it would rewrite quotes and dashes, and
/// booktr must reproduce the source byte for byte.
pub fn options() -> Options {
    Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_HEADING_ATTRIBUTES
        | Options::ENABLE_YAML_STYLE_METADATA_BLOCKS
        | Options::ENABLE_PLUSES_DELIMITED_METADATA_BLOCKS
        | Options::ENABLE_MATH
        | Options::ENABLE_GFM
        | Options::ENABLE_DEFINITION_LIST
}

/// The UTF-8 byte order mark.
pub const BOM: &str = "\u{feff}";

/// Splits a leading BOM off `text`: returns `(bom_len_in_bytes, rest)`.
///
/// pulldown-cmark does not skip a BOM, and with one in front a YAML front matter block parses
/// as a setext heading, so every parse goes through [`parser`], which strips it first.
pub fn split_bom(text: &str) -> (usize, &str) {
    match text.strip_prefix(BOM) {
        Some(rest) => (BOM.len(), rest),
        None => (0, text),
    }
}

/// A parser over `text` with booktr's [`options`], after any BOM. Offsets reported by the
/// returned parser are relative to the text **after** the BOM; add the first element of
/// [`split_bom`] to map them back.
pub fn parser(text: &str) -> Parser<'_> {
    Parser::new_ext(split_bom(text).1, options())
}

/// Byte ranges (in `text`, BOM included) of prose text: `Text` events outside code blocks, HTML
/// blocks, front matter and autolinks. Inline code, math, inline HTML, link targets, footnote
/// labels and heading anchors are never inside these ranges. Ranges are in document order and
/// do not overlap.
///
/// A range can still contain a bare URL or an HTML entity written in running text; callers
/// that rewrite prose use [`protected_spans`] for those.
pub fn prose_ranges(text: &str) -> Vec<std::ops::Range<usize>> {
    use pulldown_cmark::{Event, LinkType, Tag, TagEnd};
    let (bom, _) = split_bom(text);
    let mut out: Vec<std::ops::Range<usize>> = Vec::new();
    let mut skip = 0usize;
    let mut link_stack: Vec<bool> = Vec::new();
    for (ev, r) in parser(text).into_offset_iter() {
        match ev {
            Event::Start(Tag::CodeBlock(_) | Tag::HtmlBlock | Tag::MetadataBlock(_)) => skip += 1,
            Event::End(TagEnd::CodeBlock | TagEnd::HtmlBlock | TagEnd::MetadataBlock(_)) => {
                skip = skip.saturating_sub(1)
            }
            Event::Start(Tag::Link { link_type, .. }) => {
                let auto = matches!(link_type, LinkType::Autolink | LinkType::Email);
                if auto {
                    skip += 1;
                }
                link_stack.push(auto);
            }
            Event::End(TagEnd::Link) if link_stack.pop() == Some(true) => {
                skip = skip.saturating_sub(1);
            }
            // Adjacent text events (pulldown-cmark splits `[`, `]`, `^` into events of their own)
            // form one range, so `[^label]` left as text is seen whole.
            Event::Text(_) if skip == 0 => match out.last_mut() {
                Some(last) if last.end == r.start + bom => last.end = r.end + bom,
                _ => out.push(r.start + bom..r.end + bom),
            },
            _ => {}
        }
    }
    out
}

/// How a reference link or image is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefForm {
    /// `[text][label]`.
    Full,
    /// `[label][]`: the text is the label.
    Collapsed,
    /// `[label]`: the text is the label.
    Shortcut,
}

/// A reference link or image as written in a text (byte ranges in the text, BOM included).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefLink {
    pub form: RefForm,
    /// The whole link (`[text][label]`, with the `!` of an image).
    pub range: std::ops::Range<usize>,
    /// The label as written: inside the second brackets of a full reference, the text inside
    /// the brackets of a collapsed or shortcut one.
    pub label: std::ops::Range<usize>,
    /// Whether the text defines the label (`[label]: url`); a translation unit often uses
    /// labels defined in another unit of its chapter.
    pub defined: bool,
}

/// The reference links and images of `text`, defined in it or not: parsed with every label
/// accepted, as the whole chapter's parse would resolve them (footnote references and task
/// list markers are not links). A shortcut reference whose label the text does not define
/// may be plain bracketed text (`[optional]`): callers decide what an undefined shortcut is.
pub fn reference_links(text: &str) -> Vec<RefLink> {
    use pulldown_cmark::{Event, LinkType, Tag};
    let (bom, body) = split_bom(text);
    let accept = |_: pulldown_cmark::BrokenLink<'_>| Some(("".into(), "".into()));
    let mut out = Vec::new();
    for (ev, r) in
        Parser::new_with_broken_link_callback(body, options(), Some(accept)).into_offset_iter()
    {
        let link_type = match ev {
            Event::Start(Tag::Link { link_type, .. } | Tag::Image { link_type, .. }) => link_type,
            _ => continue,
        };
        let (form, defined) = match link_type {
            LinkType::Reference => (RefForm::Full, true),
            LinkType::ReferenceUnknown => (RefForm::Full, false),
            LinkType::Collapsed => (RefForm::Collapsed, true),
            LinkType::CollapsedUnknown => (RefForm::Collapsed, false),
            LinkType::Shortcut => (RefForm::Shortcut, true),
            LinkType::ShortcutUnknown => (RefForm::Shortcut, false),
            _ => continue,
        };
        // pulldown-cmark's range of a collapsed reference leaves out its `[]`.
        let r = if form == RefForm::Collapsed && body[r.end..].starts_with("[]") {
            r.start..r.end + 2
        } else {
            r
        };
        let raw = &body[r.clone()];
        let open = if raw.starts_with("![") { 2 } else { 1 };
        let label = match form {
            RefForm::Full if raw.ends_with(']') => match raw[..raw.len() - 1].rfind('[') {
                Some(i) => i + 1..raw.len() - 1,
                None => continue,
            },
            RefForm::Collapsed if raw.ends_with("][]") => open..raw.len() - 3,
            RefForm::Shortcut if raw.ends_with(']') => open..raw.len() - 1,
            _ => continue,
        };
        if raw[label.clone()].starts_with('^') || label.is_empty() {
            continue;
        }
        out.push(RefLink {
            form,
            range: r.start + bom..r.end + bom,
            label: r.start + bom + label.start..r.start + bom + label.end,
            defined,
        });
    }
    out
}

/// Byte ranges of the emoji and icon shortcodes of `text` (`:smile:`, `:material-bug:`;
/// pymdownx.emoji, GitHub): a `:name:` of lower-case letters, digits, `_`, `+` and `-` with a
/// letter in it, standing alone (no ASCII letter or digit, `_`, `:`, `/`, `-`, quote or
/// backtick touching it on either side; a CJK letter may), so `12:30:` and `a:b:c` are not.
pub fn shortcodes(text: &str) -> Vec<std::ops::Range<usize>> {
    use std::sync::LazyLock;
    static SHORTCODE: LazyLock<regex::Regex> =
        LazyLock::new(|| regex::Regex::new(r":[a-z0-9_+][a-z0-9_+-]*:").expect("a valid pattern"));
    SHORTCODE
        .find_iter(text)
        .filter(|m| {
            let before = text[..m.start()].chars().next_back();
            let after = text[m.end()..].chars().next();
            // Standing alone: not inside a word, a path or a time (`a:b:c`, `12:30:45`). A
            // letter of a script without spaces (`伪:smile:文`) is a boundary too.
            let apart = |c: char| !(c.is_ascii_alphanumeric() || "_:/-'\"`".contains(c));
            before.is_none_or(apart)
                && after.is_none_or(apart)
                && m.as_str().chars().any(|c| c.is_ascii_lowercase())
        })
        .map(|m| m.range())
        .collect()
}

/// The labels (as [`label_key`]s) of the link reference definitions of `text`.
pub fn defined_labels(text: &str) -> std::collections::HashSet<String> {
    let mut p = Parser::new_ext(text, options());
    for _ in p.by_ref() {}
    p.reference_definitions()
        .iter()
        .map(|(label, _)| label_key(label))
        .collect()
}

/// `text` with each shortcut (`[label]`) and collapsed (`[label][]`) reference link or image
/// written as a full reference that keeps its label (`[label][label]`), for a reference that
/// `text` defines or whose label is in `defined` (the labels of the unit's chapter, see
/// [`defined_labels`]). A full reference lets a translator translate the link text and keep
/// the label: in the shortcut form the text is the label, so a translated text no longer
/// names the definition (the link vanishes from the built page) and an untranslated one is
/// English in the translation. A `[label]` defined nowhere is left as it is: it is as often
/// bracketed prose as a link.
pub fn full_references(text: &str, defined: &std::collections::HashSet<String>) -> String {
    let mut out = String::with_capacity(text.len() + 64);
    let mut last = 0;
    for l in reference_links(text) {
        let known = l.defined || defined.contains(&label_key(&text[l.label.clone()]));
        // A label in code (`[`ToString`]`) has nothing to translate, and copied it would add
        // a code span.
        if !known || l.form == RefForm::Full || text[l.label.clone()].contains('`') {
            continue;
        }
        let label = &text[l.label.clone()];
        match l.form {
            RefForm::Shortcut => {
                out.push_str(&text[last..l.range.end]);
                out.push('[');
                out.push_str(label);
                out.push(']');
                last = l.range.end;
            }
            RefForm::Collapsed => {
                // `[label][]` → `[label][label]`: the label goes inside the empty brackets.
                out.push_str(&text[last..l.range.end - 1]);
                out.push_str(label);
                last = l.range.end - 1;
            }
            RefForm::Full => {}
        }
    }
    out.push_str(&text[last..]);
    out
}

/// A link label as CommonMark matches it: case-folded, inner whitespace collapsed to one
/// space, trimmed.
pub fn label_key(label: &str) -> String {
    label
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// Byte ranges inside a prose slice that must not be rewritten: bare URLs (`scheme://…` or
/// `www.…`, up to the next whitespace, minus trailing sentence punctuation), HTML entities
/// (`&amp;`, `&#123;`) and footnote references (`[^label]`) that pulldown-cmark leaves as text
/// when the definition sits in another unit. Hand-rolled: a URL regex crate would add a
/// dependency for one scan.
pub fn protected_spans(slice: &str) -> Vec<std::ops::Range<usize>> {
    let mut spans = Vec::new();
    let bytes = slice.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let rest = &slice[i..];
        let word_start = i == 0
            || bytes[i - 1].is_ascii_whitespace()
            || matches!(bytes[i - 1], b'(' | b'<' | b'"' | b'\'' | b'[');
        let is_url = word_start
            && (rest.starts_with("http://")
                || rest.starts_with("https://")
                || rest.starts_with("www.")
                || rest.starts_with("ftp://"));
        if is_url {
            let mut end = rest
                .find(|c: char| c.is_whitespace() || c == '<' || c == '>')
                .map_or(slice.len(), |e| i + e);
            while end > i
                && matches!(
                    bytes[end - 1],
                    b'.' | b',' | b';' | b':' | b'!' | b'?' | b')' | b'"' | b'\''
                )
            {
                end -= 1;
            }
            spans.push(i..end);
            i = end.max(i + 1);
            continue;
        }
        if rest.starts_with("[^")
            && let Some(close) = rest.find(']')
        {
            let label = &rest[2..close];
            if !label.is_empty() && !label.contains(char::is_whitespace) {
                spans.push(i..i + close + 1);
                i += close + 1;
                continue;
            }
        }
        if bytes[i] == b'&'
            && let Some(semi) = rest[1..].find(';')
        {
            let name = &rest[1..1 + semi];
            if (1..=32).contains(&name.len())
                && (name.chars().all(|c| c.is_ascii_alphanumeric())
                    || (name.starts_with('#')
                        && name[1..]
                            .chars()
                            .all(|c| c.is_ascii_hexdigit() || c == 'x' || c == 'X')))
            {
                spans.push(i..i + semi + 2);
                i += semi + 2;
                continue;
            }
        }
        i += rest.chars().next().map_or(1, char::len_utf8);
    }
    spans
}

/// Whether `s` is one or more HTML tags (`<name …>`, `</name>`, `<name …/>`) with only
/// whitespace between them, none with an `alt` or `title` attribute. Hand-written (a small
/// scanner rather than an HTML parser): it only has to recognise whole lines of tags, and
/// anything it does not recognise stays text for the model and for the `html` QA check.
pub fn only_html_tags(s: &str) -> bool {
    let mut rest = s.trim();
    let mut tags = 0;
    while !rest.is_empty() {
        let Some(after) = rest.strip_prefix('<') else {
            return false;
        };
        let name = after.strip_prefix('/').unwrap_or(after);
        if !name.starts_with(|c: char| c.is_ascii_alphabetic()) {
            return false;
        }
        let Some(end) = after.find('>') else {
            return false;
        };
        let inner = after[..end].to_ascii_lowercase();
        if inner.contains('<') || inner.contains(" alt=") || inner.contains(" title=") {
            return false;
        }
        tags += 1;
        rest = after[end + 1..].trim_start();
    }
    tags > 0
}

/// `html` with its `<!-- … -->` comments removed (an unclosed one runs to the end): a container
/// tag mentioned in a comment opens nothing, and a comment line holds no prose.
pub fn strip_html_comments(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(start) = rest.find("<!--") {
        out.push_str(&rest[..start]);
        match rest[start + 4..].find("-->") {
            Some(end) => rest = &rest[start + 4 + end + 3..],
            None => return out,
        }
    }
    out.push_str(rest);
    out
}

/// Whether `text` (Markdown) holds anything a translator must translate: prose text
/// ([`prose_ranges`] with a letter or digit), front matter (its title-like values may be
/// translated), or an HTML block line with text outside its tags and comments. `false` for a
/// text made only of code blocks, thematic breaks, HTML comments, lines of bare tags
/// ([`only_html_tags`]) and whitespace, which the source's own bytes already translate.
pub fn has_prose(text: &str) -> bool {
    use pulldown_cmark::{Event, Tag};
    let (bom, _) = split_bom(text);
    if prose_ranges(text)
        .iter()
        .any(|r| text[r.clone()].chars().any(char::is_alphanumeric))
    {
        return true;
    }
    let mut in_html_block = false;
    for (e, r) in parser(text).into_offset_iter() {
        match e {
            Event::Start(Tag::MetadataBlock(_)) => return true,
            Event::Start(Tag::HtmlBlock) => in_html_block = true,
            Event::End(pulldown_cmark::TagEnd::HtmlBlock) => in_html_block = false,
            Event::Html(_) if in_html_block => {
                let rest = strip_html_comments(&text[bom + r.start..bom + r.end]);
                let rest = rest.trim();
                if !rest.is_empty()
                    && !only_html_tags(rest)
                    && rest.chars().any(char::is_alphanumeric)
                {
                    return true;
                }
            }
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_links_are_found_with_their_labels_defined_or_not() {
        let t = "See [a ref][ref-a], [the guide] and ![fig][] and [x](http://u) and [^n].\n\n[the guide]: https://g\n";
        let got: Vec<(RefForm, &str, &str, bool)> = reference_links(t)
            .iter()
            .map(|l| (l.form, &t[l.range.clone()], &t[l.label.clone()], l.defined))
            .collect();
        assert_eq!(
            got,
            [
                (RefForm::Full, "[a ref][ref-a]", "ref-a", false),
                (RefForm::Shortcut, "[the guide]", "the guide", true),
                (RefForm::Collapsed, "![fig][]", "fig", false),
            ]
        );
        assert_eq!(label_key("  The\n Guide "), "the guide");
    }

    #[test]
    fn has_prose_is_false_for_code_tag_lines_comments_and_rules_only() {
        assert!(!has_prose("```json\n{\"name\": \"read_file\"}\n```\n\n"));
        assert!(!has_prose(
            "    indented code\n\n---\n\n<!-- keep -->\n\n</details>\n"
        ));
        assert!(!has_prose("<div align=\"center\">\n\n</div>\n"));
        assert!(!has_prose("\n\n"));
        assert!(has_prose("```\ncode\n```\n\nThen a sentence.\n"));
        assert!(has_prose(
            "<details>\n<summary>Why not keep everything?</summary>\n"
        ));
        assert!(has_prose("---\ntitle: Memory\n---\n"));
        assert!(has_prose("![An agent loop](loop.svg)\n"));
        assert!(has_prose("| a | b |\n|---|---|\n| x | y |\n"));
    }

    #[test]
    fn prose_excludes_code_math_links_and_html() {
        let text = "# Title {#t}\n\nSee `code` and $x$ at [link](http://a.b) <b>x</b> <http://auto.link>.\n\n```\nfn x\n```\n\n<div>html</div>\n";
        let prose: Vec<&str> = prose_ranges(text).into_iter().map(|r| &text[r]).collect();
        assert!(prose.contains(&"Title"));
        assert!(prose.contains(&"link"));
        assert!(!prose.iter().any(|p| p.contains("fn x")
            || p.contains("code")
            || p.contains("auto.link")
            || p.contains("html")));
    }

    #[test]
    fn prose_ranges_shift_past_bom() {
        let text = "\u{feff}Hello\n";
        let r = prose_ranges(text);
        assert_eq!(&text[r[0].clone()], "Hello");
    }

    #[test]
    fn protects_urls_and_entities() {
        let s = "Visit https://x.y/z?a=1. Also &amp; and &#x27; not & alone; www.site.org! See[^voyager-2023] and [^ a].";
        let spans: Vec<&str> = protected_spans(s).into_iter().map(|r| &s[r]).collect();
        assert_eq!(
            spans,
            vec![
                "https://x.y/z?a=1",
                "&amp;",
                "&#x27;",
                "www.site.org",
                "[^voyager-2023]"
            ]
        );
    }
}

#[cfg(test)]
mod reference_tests {
    use super::*;

    #[test]
    fn shortcut_and_collapsed_references_are_written_in_full_keeping_their_label() {
        let defined: std::collections::HashSet<String> =
            ["building".to_string()].into_iter().collect();
        let text = "See [Building], [the guide][guide], [Guide][] and ![logo].\n\n\
                    Plain [brackets] stay.\n\n[guide]: guide.md\n[logo]: logo.png\n";
        assert_eq!(
            full_references(text, &defined),
            "See [Building][Building], [the guide][guide], [Guide][Guide] and ![logo][logo].\n\n\
             Plain [brackets] stay.\n\n[guide]: guide.md\n[logo]: logo.png\n"
        );
        assert_eq!(
            defined_labels("[A  Label]: x.md\n\n[b]: y.md\n"),
            ["a label".to_string(), "b".to_string()]
                .into_iter()
                .collect()
        );
        // A label in code has nothing to translate.
        let lbl = "See [`ToString`].\n\n[`ToString`]: x.html\n";
        assert_eq!(full_references(lbl, &defined), lbl);
        // Code is not touched.
        let code = "`[building]` and\n\n```\n[building]\n```\n";
        assert_eq!(full_references(code, &defined), code);
    }
}
