//! Heading anchors as a site's tool makes them: the slug rules, the ids of a page's headings,
//! and which of a book's ids a translation must keep.
//!
//! A link to another chapter's heading (`general.md#build-options`) names the id the site's
//! tool generated from the source heading's text. A translated heading gets another id, so the
//! link breaks, in this book and in every site that links into it. Where the tool reads an
//! explicit id after a heading (`## 构建选项 {#build-options}`: mdBook, Docusaurus, MkDocs with
//! the `attr_list` extension), the translation keeps the source's id that way ([`HeadingIds`]);
//! QA's `headings` check reports a heading that would lose it, and mechanical repair puts it
//! back.
//!
//! Pure: no I/O.

use std::collections::HashMap;

use pulldown_cmark::{Event, Tag, TagEnd};

/// How a site's tool turns a heading's text into its id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlugRule {
    /// GitHub's (github-slugger), mdBook's (`normalize_id`) and Docusaurus' rule: lower case;
    /// letters, digits, `_` and `-` of any script kept; whitespace to `-`; the rest dropped.
    /// The n-th repeat of an id in a page gets `-n`.
    GitHub,
    /// Python-Markdown's `toc` extension (MkDocs' default `slugify`): ASCII word characters,
    /// whitespace and `-` kept, the rest dropped (so a Chinese heading's slug is empty), lower
    /// case, runs of whitespace and `-` to one `-`, after decomposing (NFKD) so that `é` is
    /// `e`. The n-th repeat, or an empty id, gets `_n`.
    PythonMarkdown,
    /// Python-Markdown's `toc` with pymdownx's `slugify` (`pymdownx.slugs`): letters of every
    /// script kept as [`SlugRule::GitHub`] does, repeats numbered `_n` as `toc` does.
    Pymdownx,
}

impl SlugRule {
    /// The id this rule makes of heading text `text` (before making it unique in its page).
    pub fn slug(self, text: &str) -> String {
        match self {
            SlugRule::GitHub | SlugRule::Pymdownx => text
                .trim()
                .chars()
                .filter_map(|c| {
                    if c.is_alphanumeric() || c == '_' || c == '-' {
                        Some(c.to_lowercase().collect::<String>())
                    } else if c.is_whitespace() {
                        Some("-".to_string())
                    } else {
                        None
                    }
                })
                .collect(),
            SlugRule::PythonMarkdown => {
                // Python-Markdown's `toc.slugify`: NFKD, then ASCII only (`é` → `e`, `构` →
                // nothing), `[^\w\s-]` dropped, trimmed, lower case, runs of `-` and
                // whitespace to one `-`.
                let ascii: String = icu_normalizer::DecomposingNormalizerBorrowed::new_nfkd()
                    .normalize(text)
                    .chars()
                    .filter(|c| {
                        c.is_ascii_alphanumeric()
                            || *c == '_'
                            || *c == '-'
                            || c.is_ascii_whitespace()
                    })
                    .collect();
                let kept = ascii.trim().to_lowercase();
                let mut out = String::with_capacity(kept.len());
                let mut dash = false;
                for c in kept.chars() {
                    if c == '-' || c.is_ascii_whitespace() {
                        dash = true;
                    } else {
                        if dash {
                            out.push('-');
                        }
                        dash = false;
                        out.push(c);
                    }
                }
                if dash {
                    out.push('-');
                }
                out
            }
        }
    }

    /// `base` made unique among `seen` (ids already given in the page), and recorded there.
    fn unique(self, base: String, seen: &mut HashMap<String, usize>) -> String {
        match self {
            SlugRule::GitHub => {
                let n = seen.entry(base.clone()).or_default();
                let id = if *n == 0 { base } else { format!("{base}-{n}") };
                *n += 1;
                id
            }
            SlugRule::PythonMarkdown | SlugRule::Pymdownx => {
                let mut id = base;
                let mut k = 0;
                let stem = id.clone();
                while id.is_empty() || seen.contains_key(&id) {
                    k += 1;
                    id = format!("{stem}_{k}");
                }
                seen.insert(id.clone(), 1);
                id
            }
        }
    }
}

/// A heading as an anchor sees it: its text as renderers slug it (text and inline code, no
/// markup) and its explicit `{#id}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeadingAnchor {
    pub text: String,
    pub id: Option<String>,
}

/// The headings of Markdown `text`, in order.
pub fn headings(text: &str) -> Vec<HeadingAnchor> {
    let mut out = Vec::new();
    let mut cur: Option<HeadingAnchor> = None;
    for ev in crate::book::markdown::parser(text) {
        match ev {
            Event::Start(Tag::Heading { id, .. }) => {
                cur = Some(HeadingAnchor {
                    text: String::new(),
                    id: id.map(|s| s.to_string()),
                })
            }
            Event::Text(t) | Event::Code(t) => {
                if let Some(h) = cur.as_mut() {
                    h.text.push_str(&t);
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                out.extend(cur.take().map(attr_list).map(without_shortcodes))
            }
            _ => {}
        }
    }
    out
}

/// `h` with its emoji and icon shortcodes (`:material-bug:`) left out of the text: the site
/// renders them as images, which no slug rule reads.
fn without_shortcodes(mut h: HeadingAnchor) -> HeadingAnchor {
    let codes = crate::book::markdown::shortcodes(&h.text);
    if !codes.is_empty() {
        let mut text = h.text.clone();
        for r in codes.into_iter().rev() {
            text.replace_range(r, "");
        }
        h.text = text.trim().to_string();
    }
    h
}

/// `h` with a trailing attribute list that pulldown-cmark leaves in the text read as Python-
/// Markdown's `attr_list` reads it (`## Title {: #id .class}`, `{#id}` with an escaped
/// character, `{: .class}`): its `#id` becomes the id, and the block leaves the text (the
/// tool does not slug it).
fn attr_list(mut h: HeadingAnchor) -> HeadingAnchor {
    let t = h.text.trim_end();
    if !t.ends_with('}') {
        return h;
    }
    let Some(open) = t.rfind('{') else { return h };
    let inner = t[open + 1..t.len() - 1].trim_start_matches(':');
    if inner.contains(['{', '}']) {
        return h;
    }
    // Glued to the word before it (`:heart:{: .throb}`), the list belongs to that inline
    // element, not to the heading: it leaves the text and gives no id.
    let glued = t[..open]
        .chars()
        .next_back()
        .is_some_and(|c| !c.is_whitespace());
    if h.id.is_none() && !glued {
        h.id = inner
            .split_whitespace()
            .find_map(|tok| tok.strip_prefix('#'))
            .map(|id| id.replace('\\', ""));
    }
    h.text = t[..open].trim_end().to_string();
    h
}

/// The id of each heading of a page (its headings in order, as [`headings`] reads them) under
/// `rule`: an explicit id as written, else the generated slug made unique in the page.
pub fn page_ids(rule: SlugRule, page: &[HeadingAnchor]) -> Vec<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    for h in page {
        if let Some(id) = &h.id {
            seen.insert(id.clone(), 1);
        }
    }
    page.iter()
        .map(|h| match &h.id {
            Some(id) => id.clone(),
            None => rule.unique(rule.slug(&h.text), &mut seen),
        })
        .collect()
}

/// The source ids a translation keeps, for a site whose tool reads explicit heading ids: per
/// unit source text, for each of its headings in order, the id the source page gives a
/// heading without an explicit one (`None` for a heading with its own `{#id}`, which the
/// `headings` check keeps as it is).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeadingIds {
    pub rule: SlugRule,
    /// Hash of a unit's source text ([`text_key`]) → the ids of its headings. Keyed by text
    /// so that the per-unit checks, which see texts and not units, find them; by its hash so
    /// that the book's text is not held a second time.
    by_source: HashMap<u64, Vec<Option<String>>>,
}

impl HeadingIds {
    /// From the chapters of a book, each as its units' source texts in order (a chapter's page
    /// is its units joined).
    pub fn of_book<'a>(
        rule: SlugRule,
        chapters: impl IntoIterator<Item = Vec<&'a str>>,
    ) -> HeadingIds {
        let mut by_source = HashMap::new();
        for units in chapters {
            let per_unit: Vec<Vec<HeadingAnchor>> = units.iter().map(|u| headings(u)).collect();
            let page: Vec<HeadingAnchor> = per_unit.iter().flatten().cloned().collect();
            let mut ids = page_ids(rule, &page).into_iter();
            for (u, hs) in units.iter().zip(&per_unit) {
                let kept: Vec<Option<String>> = hs
                    .iter()
                    .map(|h| {
                        let id = ids.next();
                        if h.id.is_some() { None } else { id }
                    })
                    .collect();
                if kept.iter().any(Option::is_some) {
                    by_source.insert(text_key(u), kept);
                }
            }
        }
        HeadingIds { rule, by_source }
    }

    /// The ids to keep for the headings of unit source `source` (see the type's docs), or
    /// `None` when it has no heading without an explicit id.
    pub fn of(&self, source: &str) -> Option<&[Option<String>]> {
        self.by_source.get(&text_key(source)).map(Vec::as_slice)
    }

    /// Whether a translated heading with text `text` and explicit id `id` keeps id `want`.
    pub fn keeps(&self, text: &str, id: Option<&str>, want: &str) -> bool {
        match id {
            Some(id) => id == want,
            None => self.rule.slug(text) == want,
        }
    }
}

/// The key of a unit's source text in [`HeadingIds`] (SipHash, std's `DefaultHasher`).
fn text_key(text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_follow_each_tools_rule() {
        let g = SlugRule::GitHub;
        assert_eq!(g.slug("Build options"), "build-options");
        assert_eq!(g.slug("`cargo build` --release!"), "cargo-build---release");
        assert_eq!(g.slug("调用工具 API"), "调用工具-api");
        let p = SlugRule::PythonMarkdown;
        assert_eq!(p.slug("Build options"), "build-options");
        assert_eq!(p.slug("What's new?  -- v2"), "whats-new-v2");
        assert_eq!(p.slug("构建选项"), "");
        assert_eq!(p.slug("Nächste Schritte"), "nachste-schritte");
        assert_eq!(p.slug("Réglages -- ﬁnal"), "reglages-final");
    }

    #[test]
    fn an_attribute_list_after_a_heading_gives_its_id_and_leaves_its_text() {
        let page = headings("# 6.0 Notes {: #\\6.0}\n\n## Sponsor :heart:{: .throb}\n");
        assert_eq!(page[0].id.as_deref(), Some("6.0"));
        assert_eq!(page[0].text, "6.0 Notes");
        assert_eq!(page[1].id, None);
        assert_eq!(page[1].text, "Sponsor");
    }

    #[test]
    fn repeated_and_empty_ids_are_made_unique_as_each_tool_does() {
        let page = headings("# Intro\n\n## Example\n\n## Example\n\n## 例子\n\n## 示例\n");
        assert_eq!(
            page_ids(SlugRule::GitHub, &page),
            ["intro", "example", "example-1", "例子", "示例"]
        );
        assert_eq!(
            page_ids(SlugRule::PythonMarkdown, &page),
            ["intro", "example", "example_1", "_1", "_2"]
        );
        assert_eq!(
            page_ids(SlugRule::Pymdownx, &page),
            ["intro", "example", "example_1", "例子", "示例"]
        );
    }

    #[test]
    fn a_units_heading_ids_count_the_headings_of_the_units_before_it() {
        let ids = HeadingIds::of_book(
            SlugRule::GitHub,
            [vec![
                "# Guide\n\n## Setup\n",
                "## Setup\n\nText.\n\n## Other {#own}\n",
            ]],
        );
        assert_eq!(
            ids.of("# Guide\n\n## Setup\n").unwrap(),
            [Some("guide".to_string()), Some("setup".to_string())]
        );
        assert_eq!(
            ids.of("## Setup\n\nText.\n\n## Other {#own}\n").unwrap(),
            [Some("setup-1".to_string()), None]
        );
        assert!(ids.keeps("设置 ", Some("setup-1"), "setup-1"));
        assert!(!ids.keeps("设置", None, "setup"));
    }
}
