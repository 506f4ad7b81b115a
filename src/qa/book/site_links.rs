//! `site_links` (book level, `error`): every internal link of a site's translated chapters
//! (Markdown links and images, reference definitions, raw HTML `href`/`src`, mdBook
//! `{{#include}}`) that works in the source book works in the translated one, resolved as the
//! site's tool resolves it ([`crate::book::links`]) and with the tool's own heading ids
//! ([`crate::book::anchors::SlugRule`]):
//!
//! - a link to an anchor of a chapter (this one or another: `config.md#buildjobs`) is broken
//!   when the source chapter has that anchor and its translation does not. The translation's
//!   anchors are known once every unit of the linked chapter is translated; until then links
//!   to it are not judged (a campaign half done reports nothing the remaining units may
//!   supply);
//! - a link to a file that is not a chapter is broken when the file is not in the source's
//!   docs folder (the translated site copies that folder) and the source unit does not have
//!   the same link (then it is the source's own broken link).
//!
//! A link that already dangles in the source is the source's business and not reported; links
//! out of the docs folder (a sibling book) and absolute or external URLs are not judged. For a
//! site, this check replaces the page-local `anchor_links`, whose slugs follow GitHub's rule
//! whatever the site's tool.

use std::collections::{HashMap, HashSet};

use crate::book::links::{SiteMap, Target, other_targets, page_anchors};
use crate::qa::{Finding, Parsed, QaContext, Severity};

/// Check name.
pub const CHECK: &str = "site_links";

/// A site's link map and its source pages, built once per campaign (the campaign's
/// `site_book`).
#[derive(Debug, Clone)]
pub struct SiteBook {
    pub map: SiteMap,
    /// Chapter key → its source page.
    pages: HashMap<String, SourcePage>,
}

/// What the check needs of a source chapter.
#[derive(Debug, Clone)]
struct SourcePage {
    /// How many translation units the chapter has.
    units: usize,
    /// Every anchor of the page ([`page_anchors`]).
    anchors: HashSet<String>,
    /// The id of each heading, in page order.
    heading_ids: Vec<String>,
}

impl SiteBook {
    /// From the site's map and its chapters, each as its key and its units' source texts in
    /// order.
    pub fn new<'a>(
        map: SiteMap,
        chapters: impl IntoIterator<Item = (&'a str, Vec<&'a str>)>,
    ) -> SiteBook {
        let pages = chapters
            .into_iter()
            .map(|(key, units)| {
                let text = units.concat();
                let page = SourcePage {
                    units: units.len(),
                    anchors: page_anchors(map.rule, &text),
                    heading_ids: heading_ids(&map, &text),
                };
                (key.to_string(), page)
            })
            .collect();
        SiteBook { map, pages }
    }
}

fn heading_ids(map: &SiteMap, text: &str) -> Vec<String> {
    crate::book::anchors::page_ids(map.rule, &crate::book::anchors::headings(text))
}

/// Every link target of a text the check resolves, each once, in order.
fn targets(doc: &crate::qa::view::doc::Doc, raw: &str) -> Vec<String> {
    let mut seen = HashSet::new();
    doc.links
        .iter()
        .chain(&doc.images)
        .cloned()
        .chain(other_targets(raw))
        .filter(|d| seen.insert(d.clone()))
        .collect()
}

/// `site_links` over the translated `units` of a campaign (see the module docs); nothing
/// without a site.
pub fn check(ctx: &QaContext, units: &[&Parsed]) -> Vec<Finding> {
    let Some(book) = &ctx.site_book else {
        return Vec::new();
    };
    // The translated pages whose every unit is translated: their anchors and heading ids.
    let mut texts: HashMap<&str, (usize, String)> = HashMap::new();
    for u in units {
        if let Some(t) = u.target {
            let e = texts.entry(u.chapter).or_default();
            e.0 += 1;
            e.1.push_str(t);
        }
    }
    let translated: HashMap<&str, (HashSet<String>, Vec<String>)> = texts
        .iter()
        .filter(|(k, (n, _))| book.pages.get(**k).is_some_and(|p| p.units == *n))
        .map(|(k, (_, t))| {
            (
                *k,
                (page_anchors(book.map.rule, t), heading_ids(&book.map, t)),
            )
        })
        .collect();
    let mut out = Vec::new();
    for u in units {
        let (Some(tgt), Some(raw)) = (&u.tgt, u.target) else {
            continue;
        };
        let in_source: HashSet<String> = targets(&u.src, u.source).into_iter().collect();
        for dest in targets(tgt, raw) {
            let Some(target) = book.map.resolve(u.chapter, &dest) else {
                continue;
            };
            let msg = match target {
                Target::Page {
                    key,
                    frag: Some(frag),
                } => {
                    let (Some(src), Some((now, now_ids))) =
                        (book.pages.get(&key), translated.get(key.as_str()))
                    else {
                        continue;
                    };
                    if now.contains(&frag) || !src.anchors.contains(&frag) {
                        continue;
                    }
                    let page = book.map.path_of(&key).unwrap_or(&key);
                    let heading = src.heading_ids.iter().position(|id| *id == frag);
                    let new = heading
                        .filter(|_| now_ids.len() == src.heading_ids.len())
                        .map(|i| now_ids[i].as_str());
                    let remedy = match (book.map.keeps_source_ids, heading, new) {
                        (true, Some(_), _) => format!(
                            "keep the source's id on the translated heading: add `{{#{frag}}}` after it"
                        ),
                        // Pointed at the translated heading's id when the chapter is written
                        // (`book::links::Retarget`).
                        (false, Some(_), Some(_)) => continue,
                        (_, Some(_), None) => {
                            "the translated chapter has another number of headings: find the heading and point the link at its id".to_string()
                        }
                        (_, None, _) => format!(
                            "restore the element with `id=\"{frag}\"` in the translated chapter"
                        ),
                    };
                    format!(
                        "link `{dest}` no longer resolves: `{page}` has the anchor `#{frag}` in the source and not in its translation; {remedy}"
                    )
                }
                Target::File {
                    path,
                    exists: false,
                } if !in_source.contains(&dest) => format!(
                    "link `{dest}` points to `{path}`, which is not in the book (the source unit does not link it); keep the source's link target"
                ),
                _ => continue,
            };
            out.push(u.locate(Finding::new(CHECK, Severity::Error, msg, &dest, &dest)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::book::anchors::SlugRule;
    use crate::book::site::{Page, Site, SiteKind};
    use crate::qa::UnitText;

    fn book(explicit_ids: bool, rule: SlugRule, chapters: &[(&str, &[&str])]) -> SiteBook {
        let site = Site {
            kind: SiteKind::MkDocs,
            root: ".".into(),
            docs_dir: "docs".into(),
            out_docs_dir: "docs".into(),
            pages: chapters
                .iter()
                .map(|(k, _)| Page {
                    source: format!("docs/{k}.md"),
                    out: format!("docs/{k}.md"),
                    key: k.to_string(),
                })
                .collect(),
            titles: Vec::new(),
            notes: Vec::new(),
            slug_rule: rule,
            explicit_ids,
            translated_ids: false,
            meta: Vec::new(),
        };
        let map = SiteMap::of(&site, std::path::Path::new("/nowhere"));
        SiteBook::new(map, chapters.iter().map(|(k, u)| (*k, u.to_vec())))
    }

    fn run(book: SiteBook, units: &[UnitText]) -> Vec<Finding> {
        let mut ctx = QaContext::new(
            &crate::lang::Lang::parse("en"),
            &crate::lang::Lang::parse("zh"),
            &crate::termbase::Termbase::default(),
        );
        ctx.site_book = Some(std::sync::Arc::new(book));
        let parsed = Parsed::all(units);
        check(&ctx, &parsed.iter().collect::<Vec<_>>())
    }

    fn unit<'a>(id: &'a str, ch: &'a str, s: &'a str, t: &'a str) -> UnitText<'a> {
        UnitText {
            unit: id,
            chapter: ch,
            source: s,
            target: Some(t),
        }
    }

    #[test]
    fn a_link_to_another_chapters_heading_that_lost_its_id_is_an_error_on_the_linking_chapter() {
        let b = book(
            true,
            SlugRule::GitHub,
            &[
                ("guide", &["See [jobs](config.md#build-jobs).\n"]),
                ("config", &["# Config\n\n", "## Build jobs\n"]),
            ],
        );
        let f = run(
            b,
            &[
                unit(
                    "guide-1",
                    "guide",
                    "See [jobs](config.md#build-jobs).\n",
                    "见[作业](config.md#build-jobs)。\n",
                ),
                unit("config-1", "config", "# Config\n\n", "# 配置\n\n"),
                unit("config-2", "config", "## Build jobs\n", "## 构建作业\n"),
            ],
        );
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].check, CHECK);
        assert_eq!(f[0].unit, "guide-1");
        assert_eq!(f[0].chapter, "guide");
        assert!(
            f[0].message.contains("config.md")
                && f[0].message.contains("#build-jobs")
                && f[0].message.contains("{#build-jobs}"),
            "{}",
            f[0].message
        );
        // Kept with `{#build-jobs}`, the link works.
        let b = book(
            true,
            SlugRule::GitHub,
            &[
                ("guide", &["See [jobs](config.md#build-jobs).\n"]),
                ("config", &["## Build jobs\n"]),
            ],
        );
        let f = run(
            b,
            &[
                unit(
                    "guide-1",
                    "guide",
                    "See [jobs](config.md#build-jobs).\n",
                    "见[作业](config.md#build-jobs)。\n",
                ),
                unit(
                    "config-1",
                    "config",
                    "## Build jobs\n",
                    "## 构建作业 {#build-jobs}\n",
                ),
            ],
        );
        assert!(f.is_empty(), "{f:?}");
    }

    #[test]
    fn without_kept_ids_a_link_to_a_translated_heading_is_rewritten_and_only_a_lost_heading_reported()
     {
        let src = "# Setup\n\nSee [below](#next-steps).\n\n## Next steps\n";
        let b = book(false, SlugRule::PythonMarkdown, &[("a", &[src])]);
        // The heading is there, translated: the link is pointed at `#nachste-schritte` when
        // the chapter is written, so nothing is broken.
        let f = run(
            b,
            &[unit(
                "a-1",
                "a",
                src,
                "# Einrichtung\n\nSiehe [unten](#next-steps).\n\n## Nächste Schritte\n",
            )],
        );
        assert!(f.is_empty(), "{f:?}");
        // The translation lost the heading: no heading to point the link at.
        let b = book(false, SlugRule::PythonMarkdown, &[("a", &[src])]);
        let f = run(
            b,
            &[unit(
                "a-1",
                "a",
                src,
                "# Einrichtung\n\nSiehe [unten](#next-steps).\n\nNächste Schritte.\n",
            )],
        );
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(
            f[0].message.contains("another number of headings"),
            "{}",
            f[0].message
        );
    }

    #[test]
    fn links_broken_in_the_source_and_pages_not_yet_translated_are_not_judged() {
        let b = book(
            true,
            SlugRule::GitHub,
            &[
                ("a", &["[x](b.md#nowhere) [y](b.md#real) ![i](gone.png)\n"]),
                ("b", &["## Real\n", "More.\n"]),
            ],
        );
        let f = run(
            b,
            &[
                unit(
                    "a-1",
                    "a",
                    "[x](b.md#nowhere) [y](b.md#real) ![i](gone.png)\n",
                    "[x](b.md#nowhere) [y](b.md#real) ![i](gone.png)\n",
                ),
                // Chapter b has one of its two units translated: its anchors are not known.
                unit("b-1", "b", "## Real\n", "## 真的\n"),
            ],
        );
        assert!(f.is_empty(), "{f:?}");
        // A link the translation changed to a file that is not there is reported.
        let b = book(true, SlugRule::GitHub, &[("a", &["![i](img/a.png)\n"])]);
        let f = run(
            b,
            &[unit(
                "a-1",
                "a",
                "![i](img/a.png)\n",
                "![图](img/a-zh.png)\n",
            )],
        );
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(f[0].message.contains("img/a-zh.png"), "{}", f[0].message);
    }
}
