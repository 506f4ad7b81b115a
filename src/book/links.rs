//! Internal links of a site, resolved as the site's tool resolves them: a link written in a
//! chapter (`../reference/config.md#buildjobs`, `general.html#build-options`, `install/`,
//! `images/loop.svg`, `{{#include arg.md}}`) names another chapter and one of its anchors, or a
//! file of the docs folder. The `site_links` QA check (`qa::book::site_links`) reads
//! links through [`SiteMap::resolve`] and anchors through [`page_anchors`].
//!
//! Pure but for [`SiteMap::resolve`], which asks the file system whether a file that is not a
//! chapter exists in the source's docs folder (the translated site copies that folder).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use regex::Regex;

use crate::book::anchors::{self, SlugRule};
use crate::book::site::{Site, SiteKind, percent_decode};

/// Where a site's chapters and files are, for resolving links between them.
#[derive(Debug, Clone)]
pub struct SiteMap {
    pub kind: SiteKind,
    pub rule: SlugRule,
    /// Whether the translation keeps the source's heading ids ([`Site::keeps_source_ids`]);
    /// otherwise links to headings are rewritten on writing ([`Retarget`]).
    pub keeps_source_ids: bool,
    /// The source's docs folder on disk.
    docs: PathBuf,
    /// Path inside the docs folder (`reference/config.md`) → chapter key.
    keys: HashMap<String, String>,
    /// Chapter key → path inside the docs folder.
    paths: HashMap<String, String>,
}

/// What a local link points at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A chapter of the book (by key), at an anchor or at its top.
    Page { key: String, frag: Option<String> },
    /// Another file, by its path inside the docs folder, and whether the source has it.
    File { path: String, exists: bool },
    /// A path that leaves the docs folder (a sibling book, the repository): not the
    /// translation's business.
    Outside,
}

impl SiteMap {
    /// The map of `site` (as read from the campaign file in `campaign_dir`).
    pub fn of(site: &Site, campaign_dir: &Path) -> SiteMap {
        let root = crate::util::normalize(&campaign_dir.join(&site.root));
        let docs = crate::util::normalize(&root.join(&site.docs_dir));
        let mut keys = HashMap::new();
        let mut paths = HashMap::new();
        for p in &site.pages {
            let file = crate::util::normalize(&campaign_dir.join(&p.source));
            let Ok(inside) = file.strip_prefix(&docs) else {
                continue;
            };
            let inside = inside.to_string_lossy().replace('\\', "/");
            keys.insert(inside.clone(), p.key.clone());
            paths.insert(p.key.clone(), inside);
        }
        SiteMap {
            kind: site.kind,
            rule: site.slug_rule,
            keeps_source_ids: site.keeps_source_ids(),
            docs,
            keys,
            paths,
        }
    }

    /// The path inside the docs folder of chapter `key`.
    pub fn path_of(&self, key: &str) -> Option<&str> {
        self.paths.get(key).map(String::as_str)
    }

    /// What link `dest`, written in chapter `from`, points at; `None` for a link that is not
    /// local (a URL with a scheme, `mailto:`, an absolute path, which the tool resolves against
    /// the deployed site) or from a page outside the map.
    ///
    /// A path is tried as written, then as each tool writes the same page another way: an
    /// mdBook `page.html` is `page.md`, a directory URL `install/` is `install/index.md`,
    /// `install/README.md` or `install.md`, an extensionless Docusaurus path `./install` is
    /// `install.md` or `install.mdx`.
    pub fn resolve(&self, from: &str, dest: &str) -> Option<Target> {
        let dest = dest.trim();
        if dest.is_empty() || dest.starts_with('/') || has_scheme(dest) {
            return None;
        }
        let from_path = self.paths.get(from)?;
        let (path, frag) = dest.split_once('#').unwrap_or((dest, ""));
        let path = path.split('?').next().unwrap_or("");
        let frag = (!frag.is_empty()).then(|| percent_decode(frag));
        if path.is_empty() {
            return Some(Target::Page {
                key: from.to_string(),
                frag,
            });
        }
        let base = from_path.rfind('/').map_or("", |i| &from_path[..i]);
        let Some(joined) = join(base, &percent_decode(path)) else {
            return Some(Target::Outside);
        };
        let stem = joined.trim_end_matches('/');
        let mut tries = vec![joined.clone()];
        if let Some(s) = stem.strip_suffix(".html") {
            tries.push(format!("{s}.md"));
            if let Some(d) = s.strip_suffix("index") {
                tries.push(format!("{d}README.md"));
            }
        }
        for ext in ["md", "mdx"] {
            let sep = if stem.is_empty() { "" } else { "/" };
            tries.push(format!("{stem}{sep}index.{ext}"));
            tries.push(format!("{stem}{sep}README.{ext}"));
            if !stem.is_empty() {
                tries.push(format!("{stem}.{ext}"));
            }
        }
        for t in &tries {
            if let Some(key) = self.keys.get(t) {
                return Some(Target::Page {
                    key: key.clone(),
                    frag,
                });
            }
        }
        let exists = self.docs.join(&joined).exists();
        Some(Target::File {
            path: joined,
            exists,
        })
    }
}

/// Whether `dest` starts with a URL scheme (`https:`, `mailto:`, `data:`): letters, digits,
/// `+`, `-` or `.` before the first `:`, which comes before any `/`.
fn has_scheme(dest: &str) -> bool {
    let Some(i) = dest.find(':') else {
        return false;
    };
    let head = &dest[..i];
    !head.is_empty()
        && !head.contains('/')
        && head
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
}

/// `rel` joined to folder `base` (both `/`-separated, inside the docs folder), with `.` and
/// `..` resolved; `None` when it leaves the docs folder. A trailing `/` is kept.
fn join(base: &str, rel: &str) -> Option<String> {
    let mut parts: Vec<&str> = base.split('/').filter(|p| !p.is_empty()).collect();
    for p in rel.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    let mut out = parts.join("/");
    if rel.ends_with('/') && !out.is_empty() {
        out.push('/');
    }
    Some(out)
}

/// Every anchor a page of Markdown `text` has under `rule`: its headings' ids ([`anchors::page_ids`])
/// and the ids raw HTML and attribute lists give (`<a id="x">`, `<dt id="x">`, `<a name="x">`,
/// `{: #x}`). Read with a pattern, not an HTML parser: an id inside a code block counts too,
/// which can only hide a broken link, never invent one.
pub fn page_anchors(rule: SlugRule, text: &str) -> HashSet<String> {
    static HTML_ID: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r#"(?:^|[\s<])(?:id|name)\s*=\s*(?:"([^"]+)"|'([^']+)')"#).expect("valid")
    });
    static ATTR_ID: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"\{:?[^{}\n]*?#([^\s{}#]+)[^{}\n]*\}").expect("valid"));
    let mut out: HashSet<String> = anchors::page_ids(rule, &anchors::headings(text))
        .into_iter()
        .collect();
    for c in HTML_ID.captures_iter(text) {
        out.extend(c.get(1).or(c.get(2)).map(|m| m.as_str().to_string()));
    }
    for c in ATTR_ID.captures_iter(text) {
        out.insert(c[1].replace('\\', ""));
    }
    out
}

/// Where a translated site's links to headings point when the translation does not keep the
/// source's heading ids (a tool that reads no explicit id, such as MkDocs without `attr_list`,
/// or an editor who chose translated ids): a link written with a source heading's id
/// (`config.md#build-jobs`) is pointed at the id the tool gives the same heading translated
/// (`config.md#_3`, `config.md#erstellungsauftrage`) when the chapter is written, and read
/// back to the source's id before QA and hand-edit detection, so the units keep the ids the
/// source wrote and a later change of the heading's wording moves the link with it.
///
/// Headings are paired by position: the n-th heading of a translated chapter is the n-th of
/// its source (the `headings` check reports a translation that adds or drops one). A chapter
/// whose translation has another number of headings, or is not complete, is left out; its
/// links stay as written and `site_links` reports those that break.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Retarget {
    /// Chapter key → source heading id → translated heading id, for the ids that differ.
    forward: HashMap<String, HashMap<String, String>>,
    /// Chapter key → translated heading id → source heading id (the inverse of `forward`:
    /// both lists of ids are unique in their page, so the pairing is one to one).
    back: HashMap<String, HashMap<String, String>>,
}

impl Retarget {
    /// From each complete chapter as (key, source text, translated text), under `rule`.
    pub fn new<'a>(
        rule: SlugRule,
        pages: impl IntoIterator<Item = (&'a str, &'a str, &'a str)>,
    ) -> Retarget {
        let mut r = Retarget::default();
        for (key, source, target) in pages {
            let src = anchors::page_ids(rule, &anchors::headings(source));
            let tgt = anchors::page_ids(rule, &anchors::headings(target));
            if src.len() != tgt.len() {
                continue;
            }
            for (f, g) in src.into_iter().zip(tgt).filter(|(f, g)| f != g) {
                r.back
                    .entry(key.to_string())
                    .or_default()
                    .insert(g.clone(), f.clone());
                r.forward.entry(key.to_string()).or_default().insert(f, g);
            }
        }
        r
    }

    /// The translated id of chapter `key`'s heading whose source id is `frag`, when it differs.
    pub fn translated_id(&self, key: &str, frag: &str) -> Option<&str> {
        self.forward.get(key)?.get(frag).map(String::as_str)
    }

    /// Chapter `from`'s `text` with every link to a heading pointed at its translated id.
    pub fn rewrite(&self, map: &SiteMap, from: &str, text: &str) -> String {
        self.replace(map, from, text, &self.forward)
    }

    /// The inverse of [`Retarget::rewrite`]: links to translated ids pointed back at the
    /// source's ids.
    pub fn restore(&self, map: &SiteMap, from: &str, text: &str) -> String {
        self.replace(map, from, text, &self.back)
    }

    fn replace(
        &self,
        map: &SiteMap,
        from: &str,
        text: &str,
        ids: &HashMap<String, HashMap<String, String>>,
    ) -> String {
        if ids.is_empty() {
            return text.to_string();
        }
        let mut out = String::with_capacity(text.len());
        let mut last = 0;
        for r in fragment_ranges(text) {
            let dest = &text[r.start..r.end];
            let Some(hash) = dest.find('#') else { continue };
            let Some(Target::Page {
                key,
                frag: Some(frag),
            }) = map.resolve(from, dest)
            else {
                continue;
            };
            let Some(new) = ids.get(&key).and_then(|m| m.get(&frag)) else {
                continue;
            };
            out.push_str(&text[last..r.start + hash + 1]);
            out.push_str(new);
            last = r.end;
        }
        out.push_str(&text[last..]);
        out
    }
}

/// Byte ranges in `text` of the link destinations that carry a fragment (`page.md#id`, `#id`):
/// inline links and images, reference definitions and raw HTML `href`s, in order, without
/// overlap. Found through pulldown-cmark's events and definitions, then located in the
/// written text: pulldown-cmark gives a link's whole span, not its destination's, and a
/// destination written with escapes or entities (which its parsed form no longer matches) is
/// skipped, as it cannot be rewritten in place.
fn fragment_ranges(text: &str) -> Vec<std::ops::Range<usize>> {
    use pulldown_cmark::{Event, LinkType, Tag};
    static HREF: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r#"(?:^|\s)href\s*=\s*(?:"([^"]*#[^"]*)"|'([^']*#[^']*)')"#).expect("valid")
    });
    let (bom, body) = crate::book::markdown::split_bom(text);
    let mut out = Vec::new();
    let mut p = crate::book::markdown::parser(text).into_offset_iter();
    for (ev, r) in p.by_ref() {
        let (Event::Start(Tag::Link {
            link_type: LinkType::Inline,
            dest_url,
            ..
        })
        | Event::Start(Tag::Image {
            link_type: LinkType::Inline,
            dest_url,
            ..
        })) = ev
        else {
            continue;
        };
        if !dest_url.contains('#') {
            continue;
        }
        let span = &body[r.clone()];
        for open in ["(", "(<"] {
            if let Some(i) = span.rfind(&format!("{open}{dest_url}")) {
                let start = bom + r.start + i + open.len();
                out.push(start..start + dest_url.len());
                break;
            }
        }
    }
    for (_, def) in p.reference_definitions().iter() {
        if !def.dest.contains('#') {
            continue;
        }
        let span = &body[def.span.clone()];
        if let Some(i) = span
            .find("]:")
            .and_then(|c| span[c..].find(def.dest.as_ref()).map(|j| c + j))
        {
            let start = bom + def.span.start + i;
            out.push(start..start + def.dest.len());
        }
    }
    // Raw HTML read with a pattern; one inside a code block or span is an example, not a link.
    let code = crate::book::syntax::code_ranges(text);
    for c in HREF.captures_iter(text) {
        if let Some(m) = c.get(1).or(c.get(2))
            && !code
                .iter()
                .any(|r| r.start <= m.start() && m.end() <= r.end)
        {
            out.push(m.range());
        }
    }
    out.sort_by_key(|r| r.start);
    out.dedup_by(|b, a| b.start < a.end);
    out
}

/// The link targets of Markdown `text` that the `site_links` check resolves besides its
/// Markdown links and images: reference definitions (`[label]: other.md#x`, which resolve a
/// link written in another unit), `href` and `src` attributes of raw HTML, and the files of
/// mdBook's `{{#include …}}`, `{{#rustdoc_include …}}` and `{{#playground …}}` (without their
/// `:anchor` or line range).
pub fn other_targets(text: &str) -> Vec<String> {
    static HTML: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r#"(?:^|\s)(?:href|src)\s*=\s*(?:"([^"]+)"|'([^']+)')"#).expect("valid")
    });
    let mut out = Vec::new();
    let mut p = crate::book::markdown::parser(text);
    for _ in p.by_ref() {}
    out.extend(
        p.reference_definitions()
            .iter()
            .map(|(_, d)| d.dest.to_string()),
    );
    for c in HTML.captures_iter(text) {
        out.extend(c.get(1).or(c.get(2)).map(|m| m.as_str().to_string()));
    }
    for c in crate::book::includes::MDBOOK_INCLUDE.captures_iter(text) {
        out.push(c[2].to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::book::site::Page;

    fn map(kind: SiteKind, docs: &Path, pages: &[&str]) -> SiteMap {
        let site = Site {
            kind,
            root: ".".into(),
            docs_dir: docs.to_string_lossy().into_owned(),
            out_docs_dir: "docs".into(),
            pages: pages
                .iter()
                .map(|p| Page {
                    source: format!("{}/{p}", docs.display()),
                    out: format!("docs/{p}"),
                    key: crate::book::site::page_key(p),
                })
                .collect(),
            titles: Vec::new(),
            notes: Vec::new(),
            slug_rule: SlugRule::GitHub,
            explicit_ids: true,
            translated_ids: false,
            meta: Vec::new(),
        };
        SiteMap::of(&site, Path::new("/"))
    }

    #[test]
    fn links_resolve_to_chapters_anchors_and_files_as_the_tools_write_them() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("images")).unwrap();
        std::fs::write(d.path().join("images/loop.svg"), "<svg/>").unwrap();
        let m = map(
            SiteKind::MdBook,
            d.path(),
            &[
                "guide/index.md",
                "guide/build.md",
                "reference/config.md",
                "install/README.md",
            ],
        );
        let page = |key: &str, frag: Option<&str>| {
            Some(Target::Page {
                key: key.into(),
                frag: frag.map(str::to_string),
            })
        };
        assert_eq!(
            m.resolve("guide_build", "../reference/config.md#build-jobs"),
            page("reference_config", Some("build-jobs"))
        );
        assert_eq!(
            m.resolve("guide_build", "../reference/config.html#build%20jobs"),
            page("reference_config", Some("build jobs"))
        );
        assert_eq!(
            m.resolve("guide_build", "#x"),
            page("guide_build", Some("x"))
        );
        assert_eq!(m.resolve("guide_build", "./"), page("guide_index", None));
        assert_eq!(
            m.resolve("guide_build", "../install/"),
            page("install_README", None)
        );
        assert_eq!(
            m.resolve("guide_build", "../images/loop.svg"),
            Some(Target::File {
                path: "images/loop.svg".into(),
                exists: true
            })
        );
        assert_eq!(
            m.resolve("guide_build", "gone.md"),
            Some(Target::File {
                path: "guide/gone.md".into(),
                exists: false
            })
        );
        assert_eq!(
            m.resolve("guide_build", "../../reference/index.html"),
            Some(Target::Outside)
        );
        assert_eq!(m.resolve("guide_build", "https://doc.rust-lang.org"), None);
        assert_eq!(m.resolve("guide_build", "mailto:a@b.c"), None);
        assert_eq!(m.resolve("guide_build", "/absolute/path"), None);
    }

    #[test]
    fn a_pages_anchors_are_its_heading_ids_and_its_html_and_attribute_ids() {
        let text = "# Build options {#opts}\n\n## Jobs\n\n<dl><dt id=\"option-cargo-build--j\"><a class=\"option-anchor\" href=\"#option-cargo-build--j\"></a></dt></dl>\n\nA paragraph.\n{: #para .note }\n\n<a name='legacy'></a>\n";
        let a = page_anchors(SlugRule::GitHub, text);
        for id in ["opts", "jobs", "option-cargo-build--j", "para", "legacy"] {
            assert!(a.contains(id), "{id} missing from {a:?}");
        }
        assert!(!a.contains("build-options"));
    }

    #[test]
    fn definitions_html_links_and_includes_are_targets_too() {
        let t = other_targets(
            "See [jobs].\n\n[jobs]: ../config.md#jobs\n\n<a href=\"other.md#x\">o</a> <img src='i.png'>\n\n{{#include arg.md}}\n{{#rustdoc_include ../../ex/a.rs:main}}\n",
        );
        assert_eq!(
            t,
            [
                "../config.md#jobs",
                "other.md#x",
                "i.png",
                "arg.md",
                "../../ex/a.rs"
            ]
        );
    }

    #[test]
    fn links_to_headings_are_pointed_at_the_translated_ids_and_back() {
        let d = tempfile::tempdir().unwrap();
        let mut m = map(SiteKind::MkDocs, d.path(), &["index.md", "guide.md"]);
        m.rule = SlugRule::PythonMarkdown;
        let r = Retarget::new(
            SlugRule::PythonMarkdown,
            [
                (
                    "guide",
                    "# Guide\n\n## Getting started\n\n## Café options\n\n## Own {#own}\n",
                    "# Leitfaden\n\n## Erste Schritte\n\n## Café-Optionen\n\n## Eigen {#own}\n",
                ),
                // Another number of headings: left as written.
                ("index", "# Home\n\n## Why\n", "# Start\n"),
            ],
        );
        assert_eq!(
            r.translated_id("guide", "getting-started"),
            Some("erste-schritte")
        );
        assert_eq!(
            r.translated_id("guide", "cafe-options"),
            Some("cafe-optionen")
        );
        assert_eq!(r.translated_id("guide", "own"), None);
        let text = "Siehe [Start](guide.md#getting-started \"T\") und ![B](guide.md#cafe-options).\n\n[cfg]: guide.md#getting-started\n\n<a href=\"guide.md#cafe-options\">x</a> [w](#why) [o](guide.md#own)\n\n```html\n<a href=\"guide.md#cafe-options\">\n```\n";
        let out = r.rewrite(&m, "index", text);
        assert_eq!(
            out,
            "Siehe [Start](guide.md#erste-schritte \"T\") und ![B](guide.md#cafe-optionen).\n\n[cfg]: guide.md#erste-schritte\n\n<a href=\"guide.md#cafe-optionen\">x</a> [w](#why) [o](guide.md#own)\n\n```html\n<a href=\"guide.md#cafe-options\">\n```\n"
        );
        assert_eq!(r.restore(&m, "index", &out), text);
    }
}
