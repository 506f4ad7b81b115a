//! Book layouts read from their own table of contents: an mdBook (`SUMMARY.md`), an MkDocs site
//! (`mkdocs.yml` nav) and a Docusaurus `docs/` tree. Reading a layout gives a [`Site`]: the
//! chapter files in book order, where each translated chapter goes in the output so that the
//! translated site builds, and the navigation titles to translate. Writing the output (copying
//! assets, rewriting `book.toml`, `mkdocs.yml` and `_category_.json`) belongs to the campaign;
//! nothing here writes a file or talks to a model.
//!
//! Paths in a [`Site`] are `/`-separated: `source` paths relative to the campaign file,
//! `out` paths relative to the campaign's `out_dir`.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use saphyr::{LoadableYamlNode, Mapping, Scalar, ScalarOwned, Yaml, YamlOwned};
use serde::Serialize;

use crate::book::anchors::SlugRule;
use crate::book::includes::{Dialect, is_markdown};

/// Why a book's site (`book` in a campaign file) cannot be read: the message names the file
/// and what in it booktr cannot use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SiteError(pub String);

impl From<&str> for SiteError {
    fn from(m: &str) -> SiteError {
        SiteError(m.to_string())
    }
}

/// Which tool the book is written for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SiteKind {
    /// mdBook: `book.toml` plus `src/SUMMARY.md`.
    MdBook,
    /// MkDocs: `mkdocs.yml` with a `nav` and a `docs_dir` (default `docs`).
    MkDocs,
    /// Docusaurus: a `docs/` folder, with `_category_.json` labels and `sidebar_position`.
    Docusaurus,
    /// Jupyter Book 1 (Sphinx, MyST): `_toc.yml` and `_config.yml` in the book's folder.
    JupyterBook,
}

impl SiteKind {
    /// The tool's name as users write it.
    pub fn name(self) -> &'static str {
        match self {
            SiteKind::MdBook => "mdBook",
            SiteKind::MkDocs => "MkDocs",
            SiteKind::Docusaurus => "Docusaurus",
            SiteKind::JupyterBook => "Jupyter Book",
        }
    }
}

/// One chapter file of a site.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Page {
    /// The source file, relative to the campaign file.
    pub source: String,
    /// Where the translated file goes, relative to `out_dir`.
    pub out: String,
    /// The chapter key: the path inside the docs folder without its extension, `/` replaced
    /// by `_` (`part1/intro.md` → `part1_intro`), restricted as [`super::chapter::chapter_key`].
    pub key: String,
}

/// A book layout as read (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Site {
    pub kind: SiteKind,
    /// The site root (the folder of `book.toml`, `mkdocs.yml` or the Docusaurus project),
    /// relative to the campaign file.
    pub root: String,
    /// The folder holding the chapters (mdBook `src`, MkDocs `docs_dir`, Docusaurus `docs`),
    /// relative to `root`.
    pub docs_dir: String,
    /// Where the docs folder goes, relative to `out_dir` (`src`, `docs`, or
    /// `i18n/<lang>/docusaurus-plugin-content-docs/current`).
    pub out_docs_dir: String,
    /// Chapters in book order. For an mdBook the first is `SUMMARY.md` itself, so that its
    /// titles are translated (and checked) like any chapter.
    pub pages: Vec<Page>,
    /// Navigation titles outside the chapters (MkDocs nav entries, Docusaurus category
    /// labels), in a fixed order; translated as the one list of [`Site::titles_markdown`].
    pub titles: Vec<String>,
    /// What was left out and why (draft chapters, missing files), one sentence each.
    pub notes: Vec<String>,
    /// How the site's tool makes heading ids ([`SlugRule`]).
    #[serde(skip)]
    pub slug_rule: SlugRule,
    /// Whether the tool reads an explicit id after a heading (`## Title {#id}`): mdBook and
    /// Docusaurus always, MkDocs with the `attr_list` extension in `markdown_extensions`.
    pub explicit_ids: bool,
    /// Whether the editor chose translated heading ids (campaign key `heading_ids =
    /// "translated"`): no source id is kept, and every link to a heading is pointed at the
    /// translated heading's id ([`crate::book::links::Retarget`]).
    pub translated_ids: bool,
    /// The site's own texts in its configuration (the book's title and description), translated
    /// after [`Site::titles`] in the same list and written back into the output configuration.
    pub meta: Vec<Meta>,
}

/// A text of the site's configuration that readers see: mdBook `[book] title` and
/// `description`, MkDocs `site_name` and `site_description`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Meta {
    /// The key as the configuration file names it (`title`, `site_name`).
    pub key: String,
    /// The source text.
    pub text: String,
}

/// [`Meta`] for each of `keys` that `get` finds as non-empty text, in the order of `keys`.
fn meta_of<'a>(keys: &[&str], get: impl Fn(&str) -> Option<&'a str>) -> Vec<Meta> {
    keys.iter()
        .filter_map(|k| {
            let text = get(k)?.trim();
            (!text.is_empty() && !text.contains('\n')).then(|| Meta {
                key: k.to_string(),
                text: text.to_string(),
            })
        })
        .collect()
}

/// The pages of nav folder entry `dir` (under the docs folder `docs`), as mkdocs-literate-nav
/// lists them: the local `.md` links of the folder's nav file (`SUMMARY.md`) in order, a link
/// to a subfolder expanded the same way; without a nav file, every `.md` file of the folder
/// and its subfolders in natural order. Paths relative to `docs`.
fn folder_pages(docs: &Path, dir: &Path) -> Vec<String> {
    let nav = dir.join("SUMMARY.md");
    let mut out = Vec::new();
    if let Ok(text) = std::fs::read_to_string(&nav) {
        out.push(inside(&nav, docs).unwrap_or_default());
        let dests: Vec<String> = crate::book::markdown::parser(&text)
            .filter_map(|ev| match ev {
                pulldown_cmark::Event::Start(pulldown_cmark::Tag::Link { dest_url, .. }) => {
                    Some(dest_url.to_string())
                }
                _ => None,
            })
            .collect();
        for dest in dests {
            let Some(t) = local_target(&dest) else {
                continue;
            };
            let f = crate::util::normalize(&dir.join(percent_decode(t)));
            if f.is_dir() && f != dir {
                out.extend(folder_pages(docs, &f));
            } else if f.is_file()
                && f.extension().is_some_and(|x| x == "md")
                && let Some(r) = inside(&f, docs)
            {
                out.push(r);
            }
        }
        return out;
    }
    for e in walkdir::WalkDir::new(dir).into_iter().flatten() {
        if e.file_type().is_file()
            && e.path().extension().is_some_and(|x| x == "md")
            && let Some(r) = inside(e.path(), docs)
        {
            out.push(r);
        }
    }
    out.sort_by(|a, b| natord::compare(a, b));
    out
}

/// The slug rule of an MkDocs site (`yml`: its `mkdocs.yml` text): Python-Markdown's default,
/// or [`SlugRule::Pymdownx`] when the `toc` extension's `slugify` is one of pymdownx's
/// (`pymdownx.slugs.slugify`, `uslugify`), which keep letters of every script.
/// Read from the text: the YAML loader keeps the value of a `!!python/…` tag, not the tag that
/// names the function.
fn mkdocs_slug_rule(yml: &str) -> SlugRule {
    let lines: Vec<&str> = yml.lines().collect();
    let indent = |l: &str| l.len() - l.trim_start().len();
    for (i, l) in lines.iter().enumerate() {
        let t = l.trim_start().trim_start_matches("- ").trim();
        if t != "toc:" && t != "markdown.extensions.toc:" {
            continue;
        }
        let custom = lines[i + 1..]
            .iter()
            .take_while(|x| x.trim().is_empty() || indent(x) > indent(l))
            .any(|x| x.contains("slugify:") && x.contains("pymdownx.slugs"));
        if custom {
            return SlugRule::Pymdownx;
        }
    }
    SlugRule::PythonMarkdown
}

/// Whether MkDocs config `cfg` lists Markdown extension `name` in `markdown_extensions`
/// (as a bare name or a mapping key, with or without the `markdown.extensions.` prefix).
fn mkdocs_extension(cfg: &YamlOwned, name: &str) -> bool {
    let matches = |s: &str| s == name || s.strip_prefix("markdown.extensions.") == Some(name);
    let Some(list) = cfg
        .as_mapping_get("markdown_extensions")
        .and_then(|v| v.as_sequence())
    else {
        return false;
    };
    list.iter().any(|e| match e.as_str() {
        Some(s) => matches(s),
        None => e
            .as_mapping()
            .is_some_and(|m| m.keys().any(|k| k.as_str().is_some_and(matches))),
    })
}

/// Appends to `pages` every Markdown file the pages include ([`Dialect::includes`], followed
/// into included files too), each as a chapter of its own: a file inside the docs folder
/// `docs` goes to the same place under `out_docs`; one elsewhere under the site `root` goes to
/// the same place under `out_dir` when the output mirrors the root (`mirror_root`: mdBook and
/// MkDocs, whose `out_dir` holds the configuration and the docs folder as the root does).
/// A Markdown file included from outside that gets a note instead: it is not translated, and
/// the translated pages include it in the source language.
#[allow(clippy::too_many_arguments)]
fn add_included(
    pages: &mut Vec<Page>,
    notes: &mut Vec<String>,
    campaign_dir: &Path,
    root: &Path,
    docs: &Path,
    out_docs: &str,
    mirror_root: bool,
    dialect: &Dialect,
) {
    let file_of = |p: &Page| crate::util::normalize(&campaign_dir.join(&p.source));
    let mut seen: std::collections::HashSet<PathBuf> = pages.iter().map(file_of).collect();
    let mut keys: std::collections::HashSet<String> = pages.iter().map(|p| p.key.clone()).collect();
    let mut i = 0;
    while i < pages.len() {
        let file = file_of(&pages[i]);
        let from = pages[i].source.clone();
        i += 1;
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        for inc in dialect.includes(&file, &text) {
            if !is_markdown(&inc) || !seen.insert(inc.clone()) {
                continue;
            }
            let out = match (inside(&inc, docs), inside(&inc, root)) {
                (Some(r), _) if out_docs == "." => r,
                (Some(r), _) => format!("{out_docs}/{r}"),
                (None, Some(r)) if mirror_root => r,
                _ => {
                    notes.push(format!(
                        "{} is included by {from} from outside the site's folder: it is not translated, and the translated pages include it in the source language",
                        rel(&inc, campaign_dir)
                    ));
                    continue;
                }
            };
            let mut key = page_key(&inside(&inc, root).unwrap_or_else(|| out.clone()));
            while !keys.insert(key.clone()) {
                key = format!("included_{key}");
            }
            pages.push(Page {
                source: rel(&inc, campaign_dir),
                out,
                key,
            });
        }
    }
}

/// How MkDocs' pymdownx snippets find files, from the `pymdownx.snippets` entry of
/// `markdown_extensions`: its `base_path` (one path or a list, relative to the folder MkDocs
/// runs in, the site `root`; default `.`; a tagged entry such as `!relative $config_dir` is
/// the root) and `auto_append`. No snippets when the extension is not listed.
fn snippets_dialect(cfg: &YamlOwned, root: &Path) -> Dialect {
    let entry = cfg
        .as_mapping_get("markdown_extensions")
        .and_then(|v| v.as_sequence())
        .and_then(|list| {
            list.iter().find_map(|e| {
                if e.as_str() == Some("pymdownx.snippets") {
                    return Some(None);
                }
                let m = e.as_mapping()?;
                m.iter()
                    .find(|(k, _)| k.as_str() == Some("pymdownx.snippets"))
                    .map(|(_, v)| Some(v.clone()))
            })
        });
    let Some(options) = entry else {
        return Dialect::Snippets {
            bases: Vec::new(),
            auto_append: Vec::new(),
        };
    };
    let list = |key: &str| -> Option<Vec<Option<String>>> {
        let v = options.as_ref()?.as_mapping_get(key)?;
        Some(match v.as_sequence() {
            Some(s) => s.iter().map(|x| x.as_str().map(str::to_string)).collect(),
            None => vec![v.as_str().map(str::to_string)],
        })
    };
    let bases = list("base_path")
        .unwrap_or_else(|| vec![Some(".".into())])
        .into_iter()
        .map(|b| crate::util::normalize(&root.join(b.unwrap_or_else(|| ".".into()))))
        .collect();
    let auto_append = list("auto_append")
        .unwrap_or_default()
        .into_iter()
        .flatten()
        .collect();
    Dialect::Snippets { bases, auto_append }
}

/// Key of the synthetic chapter that carries a site's navigation titles.
pub const TITLES_KEY: &str = "nav-titles";

/// Where the translated navigation titles are written, relative to `out_dir`.
pub const TITLES_OUT: &str = ".booktr/nav-titles.md";

impl Site {
    /// Whether the translation keeps the source's heading ids as explicit ids (`## 构建 {#build}`):
    /// the tool reads them and the editor did not choose translated ids. Otherwise links to
    /// headings are rewritten to the translated ids ([`crate::book::links::Retarget`]).
    pub fn keeps_source_ids(&self) -> bool {
        self.explicit_ids && !self.translated_ids
    }

    /// Whether the site has texts outside its chapters to translate (navigation titles or
    /// [`Meta`]): then a synthetic chapter carries them.
    pub fn has_titles(&self) -> bool {
        !self.titles.is_empty() || !self.meta.is_empty()
    }

    /// The navigation titles, then the [`Meta`] texts, as a Markdown list, one `- title` per
    /// line (what is translated).
    pub fn titles_markdown(&self) -> String {
        let mut s = String::new();
        for t in self.titles.iter().chain(self.meta.iter().map(|m| &m.text)) {
            s.push_str("- ");
            s.push_str(t);
            s.push('\n');
        }
        s
    }

    /// The translated navigation titles and [`Meta`] texts from a translated
    /// [`Site::titles_markdown`], each in order; `None` when the list does not have one item
    /// per text (then the source texts are kept).
    pub fn parse_titles(&self, translated: &str) -> Option<(Vec<String>, Vec<String>)> {
        let mut items: Vec<String> = translated
            .lines()
            .filter_map(|l| l.trim_start().strip_prefix("- "))
            .map(|t| t.trim().to_string())
            .collect();
        if items.len() != self.titles.len() + self.meta.len() {
            return None;
        }
        let meta = items.split_off(self.titles.len());
        Some((items, meta))
    }
}

/// The chapter key of a page at `rel` inside the docs folder (see [`Page::key`]).
pub fn page_key(rel: &str) -> String {
    let no_ext = match rel.rfind('.') {
        Some(i) if !rel[i..].contains('/') => &rel[..i],
        _ => rel,
    };
    super::chapter::chapter_key(&format!("{}.md", no_ext.replace('/', "_")))
}

/// Reads the layout named by the campaign's `book` key: a `SUMMARY.md` (mdBook), a
/// `mkdocs.yml`/`mkdocs.yaml` (MkDocs) or a folder (Docusaurus: the project root holding
/// `docs/`, or the `docs/` folder itself). `target_lang` names the Docusaurus i18n folder.
///
/// Errors: a message naming the file and the remedy (the caller prefixes the campaign file):
/// an unreadable or malformed table of contents, a chapter it links that does not exist, two
/// chapters with the same key, a layout with no chapter.
pub fn read(campaign_dir: &Path, book: &str, target_lang: &str) -> Result<Site, SiteError> {
    let path = crate::util::normalize(&campaign_dir.join(book));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    let site = if name == "_toc.yml" || (path.is_dir() && path.join("_toc.yml").is_file()) {
        let toc = if path.is_dir() {
            path.join("_toc.yml")
        } else {
            path.clone()
        };
        jupyter_book(campaign_dir, &toc)?
    } else if path.is_dir() {
        docusaurus(campaign_dir, &path, target_lang)?
    } else if name == "summary.md" {
        mdbook(campaign_dir, &path)?
    } else if name == "mkdocs.yml" || name == "mkdocs.yaml" {
        mkdocs(campaign_dir, &path)?
    } else {
        return Err(SiteError(format!(
            "`book` is {book}: give an mdBook's SUMMARY.md, an MkDocs mkdocs.yml, a Jupyter Book's _toc.yml or a Docusaurus folder"
        )));
    };
    let mut keys = std::collections::HashMap::new();
    for p in &site.pages {
        if let Some(prev) = keys.insert(p.key.clone(), p.source.clone()) {
            return Err(SiteError(format!(
                "{book}: the chapters {prev} and {} get the same key `{}`; rename one",
                p.source, p.key
            )));
        }
    }
    if site.pages.is_empty() {
        return Err(SiteError(format!("{book}: the book lists no chapter file")));
    }
    Ok(site)
}

fn rel(path: &Path, base: &Path) -> String {
    crate::util::relative_to(path, base)
}

/// `rel` of `path` under `dir`, or `None` when `path` is outside it.
fn inside(path: &Path, dir: &Path) -> Option<String> {
    path.strip_prefix(dir)
        .ok()
        .map(|p| p.to_string_lossy().replace('\\', "/"))
}

fn read_text(path: &Path) -> Result<String, SiteError> {
    std::fs::read_to_string(path)
        .map_err(|e| SiteError(format!("cannot read {}: {e}", path.display())))
}

/// A local link target (no scheme, not absolute), without `#fragment` or `?query`.
fn local_target(dest: &str) -> Option<&str> {
    let t = dest.split(['#', '?']).next().unwrap_or("");
    (!t.is_empty() && !t.contains(':') && !t.starts_with('/')).then_some(t)
}

/// Percent-decodes `%20`-style escapes in a link target (mdBook and CommonMark links to files
/// with spaces). Hand-rolled: a few lines, and no URL crate is a dependency. Invalid UTF-8
/// after decoding gives `s` unchanged.
pub fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = b
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match hex {
            Some(v) if b[i] == b'%' => {
                out.push(v);
                i += 3;
            }
            _ => {
                out.push(b[i]);
                i += 1;
            }
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| s.to_string())
}

fn mdbook(campaign_dir: &Path, summary: &Path) -> Result<Site, SiteError> {
    let text = read_text(summary)?;
    let src = summary.parent().unwrap_or(Path::new(".")).to_path_buf();
    let root = match src.parent() {
        Some(p) if p.join("book.toml").is_file() => p.to_path_buf(),
        _ if src.join("book.toml").is_file() => src.clone(),
        Some(p) => p.to_path_buf(),
        None => src.clone(),
    };
    let docs_dir = inside(&src, &root).unwrap_or_default();
    let docs_dir = if docs_dir.is_empty() {
        ".".into()
    } else {
        docs_dir
    };
    let out_docs = docs_dir.clone();
    let join_out = |r: &str| {
        if out_docs == "." {
            r.to_string()
        } else {
            format!("{out_docs}/{r}")
        }
    };
    let mut notes = Vec::new();
    if !root.join("book.toml").is_file() {
        notes.push(format!(
            "no book.toml beside {}: the output has none either",
            summary.display()
        ));
    }
    let mut pages = vec![Page {
        source: rel(summary, campaign_dir),
        out: join_out("SUMMARY.md"),
        key: "SUMMARY".into(),
    }];
    let mut seen = std::collections::HashSet::new();
    use pulldown_cmark::{Event, Tag, TagEnd};
    let mut link: Option<(String, String)> = None;
    for ev in super::markdown::parser(&text) {
        match ev {
            Event::Start(Tag::Link { dest_url, .. }) => {
                link = Some((dest_url.to_string(), String::new()));
            }
            Event::Text(t) | Event::Code(t) => {
                if let Some((_, title)) = &mut link {
                    title.push_str(&t);
                }
            }
            Event::End(TagEnd::Link) => {
                let Some((dest, title)) = link.take() else {
                    continue;
                };
                if dest.trim().is_empty() {
                    notes.push(format!("draft chapter \"{title}\" has no file: skipped"));
                    continue;
                }
                let Some(target) = local_target(&dest) else {
                    continue;
                };
                let file = crate::util::normalize(&src.join(percent_decode(target)));
                let Some(in_src) = inside(&file, &src) else {
                    return Err(SiteError(format!(
                        "{}: the chapter \"{title}\" links {dest}, outside the book's folder {}; move it inside",
                        summary.display(),
                        src.display()
                    )));
                };
                if !file.is_file() {
                    return Err(SiteError(format!(
                        "{}: the chapter \"{title}\" links {dest}, which does not exist. Create the file, or make it a draft chapter with an empty link: [{title}]()",
                        summary.display()
                    )));
                }
                if seen.insert(file.clone()) {
                    pages.push(Page {
                        source: rel(&file, campaign_dir),
                        out: join_out(&in_src),
                        key: page_key(&in_src),
                    });
                }
            }
            _ => {}
        }
    }
    add_included(
        &mut pages,
        &mut notes,
        campaign_dir,
        &root,
        &src,
        &out_docs,
        true,
        &Dialect::MdBook,
    );
    let book_toml: toml::Table = std::fs::read_to_string(root.join("book.toml"))
        .ok()
        .and_then(|t| toml::from_str(&t).ok())
        .unwrap_or_default();
    let book = book_toml.get("book").and_then(|b| b.as_table());
    let meta = meta_of(&["title", "description"], |k| {
        book.and_then(|b| b.get(k)).and_then(|v| v.as_str())
    });
    Ok(Site {
        kind: SiteKind::MdBook,
        slug_rule: SlugRule::GitHub,
        explicit_ids: true,
        translated_ids: false,
        root: rel(&root, campaign_dir),
        docs_dir,
        out_docs_dir: out_docs,
        pages,
        titles: Vec::new(),
        notes,
        meta,
    })
}

/// One MkDocs nav entry as read: a title (or none: a bare path) and either a page path, a
/// URL, or a section of entries.
#[derive(Debug, Clone, PartialEq)]
pub enum NavItem {
    /// `- Title: path.md`, or a bare `- path.md` (title `None`).
    Page { title: Option<String>, path: String },
    /// `- Title: [ ... ]`.
    Section { title: String, items: Vec<NavItem> },
}

/// Parses the `nav` of an `mkdocs.yml` (a YAML sequence, read with `saphyr`).
///
/// Errors: a `nav` that is not a sequence of pages and sections.
pub fn mkdocs_nav(value: &YamlOwned) -> Result<Vec<NavItem>, SiteError> {
    let YamlOwned::Sequence(seq) = value else {
        return Err("`nav` is not a list".into());
    };
    let mut out = Vec::new();
    for item in seq {
        match item {
            YamlOwned::Value(ScalarOwned::String(p)) => out.push(NavItem::Page {
                title: None,
                path: p.clone(),
            }),
            YamlOwned::Mapping(m) if m.len() == 1 => {
                let (k, v) = m.iter().next().expect("one entry");
                let title = k.as_str().ok_or("a nav title is not text")?.to_string();
                match v {
                    YamlOwned::Value(ScalarOwned::String(p)) => out.push(NavItem::Page {
                        title: Some(title),
                        path: p.clone(),
                    }),
                    YamlOwned::Sequence(_) => out.push(NavItem::Section {
                        title,
                        items: mkdocs_nav(v)?,
                    }),
                    _ => {
                        return Err(SiteError(format!(
                            "the nav entry \"{title}\" is neither a page nor a section"
                        )));
                    }
                }
            }
            _ => return Err("a nav entry is neither `Title: page.md` nor `page.md`".into()),
        }
    }
    Ok(out)
}

/// Every title of `items`, depth first (the order of [`Site::titles`]).
pub fn nav_titles(items: &[NavItem], out: &mut Vec<String>) {
    for i in items {
        match i {
            NavItem::Page { title, .. } => out.extend(title.clone()),
            NavItem::Section { title, items } => {
                out.push(title.clone());
                nav_titles(items, out);
            }
        }
    }
}

/// Every page path of `items`, depth first.
fn nav_pages(items: &[NavItem], out: &mut Vec<String>) {
    for i in items {
        match i {
            NavItem::Page { path, .. } => out.push(path.clone()),
            NavItem::Section { items, .. } => nav_pages(items, out),
        }
    }
}

/// `items` with their titles replaced, in [`nav_titles`] order, from `titles`.
pub fn retitle(items: &[NavItem], titles: &mut impl Iterator<Item = String>) -> Vec<NavItem> {
    items
        .iter()
        .map(|i| match i {
            NavItem::Page { title, path } => NavItem::Page {
                title: title
                    .as_ref()
                    .map(|t| titles.next().unwrap_or_else(|| t.clone())),
                path: path.clone(),
            },
            NavItem::Section { title, items } => NavItem::Section {
                title: titles.next().unwrap_or_else(|| title.clone()),
                items: retitle(items, titles),
            },
        })
        .collect()
}

/// The nav as YAML (a `saphyr` document that owns its strings), for the output `mkdocs.yml`.
pub fn nav_yaml(items: &[NavItem]) -> Yaml<'static> {
    let text = |t: &str| Yaml::Value(Scalar::String(Cow::Owned(t.to_string())));
    let entry = |k: Yaml<'static>, v: Yaml<'static>| {
        let mut m = Mapping::new();
        m.insert(k, v);
        Yaml::Mapping(m)
    };
    Yaml::Sequence(
        items
            .iter()
            .map(|i| match i {
                NavItem::Page { title: None, path } => text(path),
                NavItem::Page {
                    title: Some(t),
                    path,
                } => entry(text(t), text(path)),
                NavItem::Section { title, items } => entry(text(title), nav_yaml(items)),
            })
            .collect(),
    )
}

/// Reads `mkdocs.yml` as YAML (`saphyr`), ignoring the Python-specific tags MkDocs configs use
/// (`!!python/name:…`, `!ENV`): they load as tagged or bad values and are left alone. An empty
/// file is an empty mapping.
///
/// Errors: the file cannot be read, or is not YAML (with the line and column of the fault).
pub fn mkdocs_config(path: &Path) -> Result<YamlOwned, SiteError> {
    let text = read_text(path)?;
    let docs = YamlOwned::load_from_str(&text)
        .map_err(|e| SiteError(format!("{} is not valid YAML: {e}", path.display())))?;
    Ok(docs
        .into_iter()
        .next()
        .unwrap_or_else(|| YamlOwned::Mapping(Default::default())))
}

fn mkdocs(campaign_dir: &Path, file: &Path) -> Result<Site, SiteError> {
    let cfg = mkdocs_config(file)?;
    let root = file.parent().unwrap_or(Path::new(".")).to_path_buf();
    let docs_dir = cfg
        .as_mapping_get("docs_dir")
        .and_then(|v| v.as_str())
        .unwrap_or("docs")
        .trim_end_matches('/')
        .to_string();
    let docs = crate::util::normalize(&root.join(&docs_dir));
    let mut notes = Vec::new();
    let (paths, titles) = match cfg.as_mapping_get("nav") {
        Some(nav) => {
            let items =
                mkdocs_nav(nav).map_err(|e| SiteError(format!("{}: {e}", file.display())))?;
            let (mut paths, mut titles) = (Vec::new(), Vec::new());
            nav_pages(&items, &mut paths);
            nav_titles(&items, &mut titles);
            (paths, titles)
        }
        None => {
            // No nav: MkDocs lists the docs folder alphabetically; natural order reads better
            // for numbered chapters and keeps the same order otherwise.
            let mut files = Vec::new();
            for e in walkdir::WalkDir::new(&docs).into_iter().flatten() {
                if e.file_type().is_file()
                    && e.path().extension().is_some_and(|x| x == "md")
                    && let Some(r) = inside(e.path(), &docs)
                {
                    files.push(r);
                }
            }
            files.sort_by(|a, b| natord::compare(a, b));
            notes.push("mkdocs.yml has no nav: chapters in natural order of docs_dir".into());
            (files, Vec::new())
        }
    };
    let mut pages = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut listed = Vec::new();
    for p in paths {
        if p.contains("://") {
            continue;
        }
        let f = crate::util::normalize(&docs.join(&p));
        if f.is_dir() {
            // A folder entry (mkdocs-literate-nav): the folder's own nav file, or its pages.
            listed.extend(folder_pages(&docs, &f));
        } else if f.is_file() {
            listed.push(p);
        } else if p.ends_with(".md") {
            // A page a plugin writes at build time (mkdocs-gen-files, mkdocs-coverage): there
            // is nothing to translate, and the translated site's plugin writes it again.
            notes.push(format!(
                "the nav lists {p}, which is not in {docs_dir}/ (a page a plugin generates at build time?): left out"
            ));
        } else {
            return Err(SiteError(format!(
                "{}: the nav lists {p}, which is not in {docs_dir}/. Fix the nav or create the file",
                file.display()
            )));
        }
    }
    for p in listed {
        let f = crate::util::normalize(&docs.join(&p));
        if seen.insert(f.clone()) {
            pages.push(Page {
                source: rel(&f, campaign_dir),
                out: format!("{docs_dir}/{p}"),
                key: page_key(&p),
            });
        }
    }
    add_included(
        &mut pages,
        &mut notes,
        campaign_dir,
        &root,
        &docs,
        &docs_dir,
        true,
        &snippets_dialect(&cfg, &root),
    );
    Ok(Site {
        kind: SiteKind::MkDocs,
        root: rel(&root, campaign_dir),
        docs_dir: docs_dir.clone(),
        out_docs_dir: docs_dir,
        pages,
        titles,
        notes,
        slug_rule: mkdocs_slug_rule(&std::fs::read_to_string(file).unwrap_or_default()),
        explicit_ids: mkdocs_extension(&cfg, "attr_list"),
        translated_ids: false,
        meta: meta_of(&["site_name", "site_description"], |k| {
            cfg.as_mapping_get(k).and_then(|v| v.as_str())
        }),
    })
}

/// The `sidebar_position` of a Docusaurus page's YAML front matter, if any.
pub fn sidebar_position(text: &str) -> Option<f64> {
    let rest = super::markdown::split_bom(text).1.strip_prefix("---")?;
    let end = rest.find("\n---")?;
    rest[..end].lines().find_map(|l| {
        l.trim()
            .strip_prefix("sidebar_position:")
            .and_then(|v| v.trim().trim_matches(['"', '\'']).parse().ok())
    })
}

/// `position` and `label` of a `_category_.json` (Docusaurus), when the file exists.
fn category(dir: &Path) -> (Option<f64>, Option<String>) {
    let Ok(text) = std::fs::read_to_string(dir.join("_category_.json")) else {
        return (None, None);
    };
    let v: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    (
        v.get("position").and_then(|p| p.as_f64()),
        v.get("label").and_then(|l| l.as_str()).map(str::to_string),
    )
}

/// The output folder of translated Docusaurus docs for `lang` (what `docusaurus write-translations`
/// and `docusaurus build --locale` expect).
pub fn docusaurus_out(lang: &str) -> String {
    format!("i18n/{lang}/docusaurus-plugin-content-docs/current")
}

fn docusaurus(campaign_dir: &Path, dir: &Path, target_lang: &str) -> Result<Site, SiteError> {
    let (root, docs) = if dir.join("docs").is_dir() {
        (dir.to_path_buf(), dir.join("docs"))
    } else {
        (dir.parent().unwrap_or(dir).to_path_buf(), dir.to_path_buf())
    };
    let docs_dir = inside(&docs, &root).unwrap_or_else(|| "docs".into());
    // Order of an autogenerated sidebar: `sidebar_position` (pages) and `position`
    // (`_category_.json`) first, ascending; the rest after them in natural order of names.
    // (sidebars.js is JavaScript; it is not read.)
    fn walk(dir: &Path, docs: &Path, pages: &mut Vec<String>, labels: &mut Vec<String>) {
        let mut entries: Vec<(Option<f64>, String, PathBuf)> = Vec::new();
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with(['.', '_']) {
                continue;
            }
            if p.is_dir() {
                entries.push((category(&p).0, name, p));
            } else if p.extension().is_some_and(|x| x == "md" || x == "mdx") {
                let pos = std::fs::read_to_string(&p)
                    .ok()
                    .and_then(|t| sidebar_position(&t));
                entries.push((pos, name, p));
            }
        }
        entries.sort_by(|a, b| match (a.0, b.0) {
            (Some(x), Some(y)) => x.total_cmp(&y).then_with(|| natord::compare(&a.1, &b.1)),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => natord::compare(&a.1, &b.1),
        });
        for (_, _, p) in entries {
            if p.is_dir() {
                if let Some(l) = category(&p).1 {
                    labels.push(l);
                }
                walk(&p, docs, pages, labels);
            } else if let Some(r) = inside(&p, docs) {
                pages.push(r);
            }
        }
    }
    let (mut paths, mut titles) = (Vec::new(), Vec::new());
    walk(&docs, &docs, &mut paths, &mut titles);
    let out_docs = docusaurus_out(target_lang);
    let mut pages = paths
        .iter()
        .map(|p| Page {
            source: rel(&docs.join(p), campaign_dir),
            out: format!("{out_docs}/{p}"),
            key: page_key(p),
        })
        .collect();
    let mut notes = Vec::new();
    add_included(
        &mut pages,
        &mut notes,
        campaign_dir,
        &root,
        &docs,
        &out_docs,
        false,
        &Dialect::Docusaurus,
    );
    Ok(Site {
        kind: SiteKind::Docusaurus,
        slug_rule: SlugRule::GitHub,
        explicit_ids: true,
        translated_ids: false,
        root: rel(&root, campaign_dir),
        docs_dir,
        out_docs_dir: out_docs,
        pages,
        titles,
        notes,
        meta: docusaurus_theme_strings(&root),
    })
}

/// The titles of a Jupyter Book `_toc.yml` (`text`) that readers see, in the file's order:
/// each `caption:` (a part) and `title:` (an entry) value, with the byte range of the value as
/// written (quotes included) and the text (quotes removed). A line scan, not a YAML parser, so
/// that the translated file is the source with only these values replaced (its comments and
/// layout kept); `_toc.yml` writes each on its own line.
pub fn toc_titles(text: &str) -> Vec<(std::ops::Range<usize>, String)> {
    static TITLE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r#"(?m)^[ \t]*(?:-[ \t]+)?(?:caption|title):[ \t]*("[^"\n]*"|'[^'\n]*'|[^\n#]*?)[ \t]*(?:#.*)?$"#,
        )
        .expect("valid")
    });
    TITLE
        .captures_iter(text)
        .filter_map(|c| {
            let v = c.get(1)?;
            let raw = v.as_str();
            let unquoted = match raw.chars().next() {
                Some(q @ ('"' | '\'')) if raw.len() >= 2 && raw.ends_with(q) => {
                    raw[1..raw.len() - 1].to_string()
                }
                _ => raw.to_string(),
            };
            (!unquoted.trim().is_empty()).then(|| (v.range(), unquoted))
        })
        .collect()
}

/// A Jupyter Book 1 (`_toc.yml` at `toc`, `_config.yml` beside it): the pages in the order
/// of the table of contents (`root`, then `parts` → `chapters` → `sections`, depth first; a
/// `glob` entry's matches in natural order; `url` entries are links, not pages), each entry's
/// `file` resolved as Jupyter Book does (without an extension: `.md`, `.ipynb`, then the
/// other source types). Markdown (MyST) and notebooks are translated; `.Rmd`, `.rst` and `.py`
/// pages are named in a note and copied as they are. Titles: the parts' captions and entries'
/// titles ([`toc_titles`]); meta: `_config.yml`'s `title`. MyST `{include}` of a Markdown file
/// in the book makes it a chapter.
fn jupyter_book(campaign_dir: &Path, toc: &Path) -> Result<Site, SiteError> {
    let root = toc.parent().unwrap_or(Path::new(".")).to_path_buf();
    let text = read_text(toc)?;
    let docs = YamlOwned::load_from_str(&text)
        .map_err(|e| SiteError(format!("{} is not valid YAML: {e}", toc.display())))?;
    let Some(top) = docs.into_iter().next() else {
        return Err(SiteError(format!("{} is empty", toc.display())));
    };
    let mut files = Vec::new();
    let mut notes = Vec::new();
    fn walk(node: &YamlOwned, root: &Path, files: &mut Vec<String>, notes: &mut Vec<String>) {
        match node {
            YamlOwned::Sequence(seq) => seq.iter().for_each(|n| walk(n, root, files, notes)),
            YamlOwned::Mapping(_) => {
                for key in ["root", "file"] {
                    if let Some(f) = node.as_mapping_get(key).and_then(|v| v.as_str()) {
                        files.push(f.to_string());
                    }
                }
                if let Some(g) = node.as_mapping_get("glob").and_then(|v| v.as_str()) {
                    let pattern = root.join(g).to_string_lossy().into_owned();
                    let mut found: Vec<String> = glob::glob(&pattern)
                        .into_iter()
                        .flatten()
                        .flatten()
                        .filter_map(|p| inside(&p, root))
                        .collect();
                    found.sort_by(|a, b| natord::compare(a, b));
                    if found.is_empty() {
                        notes.push(format!("_toc.yml: the glob `{g}` matches no file"));
                    }
                    files.extend(found);
                }
                for key in ["parts", "chapters", "sections", "subtrees", "entries"] {
                    if let Some(v) = node.as_mapping_get(key) {
                        walk(v, root, files, notes);
                    }
                }
            }
            _ => {}
        }
    }
    walk(&top, &root, &mut files, &mut notes);
    let mut pages = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for f in files {
        let given = root.join(&f);
        let found = if given.is_file() {
            Some(given)
        } else {
            ["md", "ipynb", "markdown", "Rmd", "rst", "py", "myst"]
                .iter()
                .map(|x| root.join(format!("{f}.{x}")))
                .find(|p| p.is_file())
        };
        let Some(file) = found else {
            return Err(SiteError(format!(
                "{}: the table of contents lists `{f}`, which is not in {} (with or without .md or .ipynb). Fix the entry or create the file",
                toc.display(),
                root.display()
            )));
        };
        let Some(r) = inside(&file, &root) else {
            continue;
        };
        if !seen.insert(r.clone()) {
            continue;
        }
        if is_markdown(&file) || file.extension().is_some_and(|x| x == "ipynb") {
            pages.push(Page {
                source: rel(&file, campaign_dir),
                out: r.clone(),
                key: page_key(&r),
            });
        } else {
            notes.push(format!(
                "{r} is copied in the source language: booktr translates Markdown (MyST) and notebook pages, not .{} files",
                file.extension().unwrap_or_default().to_string_lossy()
            ));
        }
    }
    add_included(
        &mut pages,
        &mut notes,
        campaign_dir,
        &root,
        &root,
        ".",
        true,
        &Dialect::Myst,
    );
    let config = root.join("_config.yml");
    let cfg = if config.is_file() {
        mkdocs_config(&config)?
    } else {
        YamlOwned::Mapping(Default::default())
    };
    Ok(Site {
        kind: SiteKind::JupyterBook,
        root: rel(&root, campaign_dir),
        docs_dir: ".".into(),
        out_docs_dir: ".".into(),
        pages,
        titles: toc_titles(&text).into_iter().map(|(_, t)| t).collect(),
        notes,
        // MyST's heading anchors (`myst_heading_anchors`) are GitHub's slugs; MyST reads no
        // `{#id}` after a heading without the `attrs_block` extension, so links to headings
        // are pointed at the translated ids.
        slug_rule: SlugRule::GitHub,
        explicit_ids: false,
        translated_ids: false,
        meta: meta_of(&["title"], |k| {
            cfg.as_mapping_get(k).and_then(|v| v.as_str())
        }),
    })
}

/// The files of `i18n/<default locale>/` whose strings Docusaurus reads for a locale's navbar,
/// footer and the site's own `<Translate>` texts, as `docusaurus write-translations` writes
/// them (relative to the locale's folder).
pub const DOCUSAURUS_THEME_FILES: [&str; 3] = [
    "docusaurus-theme-classic/navbar.json",
    "docusaurus-theme-classic/footer.json",
    "code.json",
];

/// The translatable strings of a Docusaurus project at `root`, from the files
/// `docusaurus write-translations --locale <default>` wrote into `i18n/<default locale>/`
/// ([`DOCUSAURUS_THEME_FILES`]; the default locale is the configuration's `defaultLocale`,
/// else `en`): each entry's `message` as a [`Meta`] keyed `<file>#<id>`, files in that order and ids
/// in code-point order (as serde_json reads an object). Left
/// out: `code.json` ids under `theme.` (the classic theme's own strings, which Docusaurus
/// ships translated for its locales and which a copy in English would override), empty and
/// multi-line messages. None when the files are not there.
pub fn docusaurus_theme_strings(root: &Path) -> Vec<Meta> {
    let locale = docusaurus_default_locale(root);
    let mut out = Vec::new();
    for file in DOCUSAURUS_THEME_FILES {
        let Ok(text) = std::fs::read_to_string(root.join("i18n").join(&locale).join(file)) else {
            continue;
        };
        let Ok(serde_json::Value::Object(entries)) = serde_json::from_str(&text) else {
            continue;
        };
        for (id, entry) in entries {
            if file == "code.json" && id.starts_with("theme.") {
                continue;
            }
            let Some(message) = entry.get("message").and_then(|m| m.as_str()) else {
                continue;
            };
            let message = message.trim();
            if !message.is_empty() && !message.contains('\n') {
                out.push(Meta {
                    key: format!("{file}#{id}"),
                    text: message.to_string(),
                });
            }
        }
    }
    out
}

/// The `defaultLocale` a Docusaurus configuration at `root` names (`defaultLocale: 'en'`), else
/// `en`. A scan, not a JavaScript parser: the key is a string literal in every configuration
/// `docusaurus init` writes.
pub fn docusaurus_default_locale(root: &Path) -> String {
    [
        "docusaurus.config.js",
        "docusaurus.config.ts",
        "docusaurus.config.mjs",
    ]
    .iter()
    .find_map(|f| std::fs::read_to_string(root.join(f)).ok())
    .and_then(|t| {
        let rest = &t[t.find("defaultLocale")? + "defaultLocale".len()..];
        let rest = rest.trim_start().strip_prefix(':')?.trim_start();
        let q = rest.chars().next().filter(|c| "'\"`".contains(*c))?;
        let end = rest[1..].find(q)?;
        Some(rest[1..1 + end].to_string())
    })
    .unwrap_or_else(|| "en".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::util::test_tree as tree;

    #[test]
    fn mdbook_order_from_summary_with_parts_nesting_and_drafts() {
        let d = tree(&[
            ("b/book.toml", "[book]\ntitle = \"T\"\n"),
            (
                "b/src/SUMMARY.md",
                "# Summary\n\n[Preface](preface.md)\n\n# Part I\n\n- [One](ch1/README.md)\n    - [One a](ch1/a%20b.md)\n- [Draft]()\n\n---\n\n[Thanks](misc/thanks.md)\n",
            ),
            ("b/src/preface.md", "# P\n"),
            ("b/src/ch1/README.md", "# 1\n"),
            ("b/src/ch1/a b.md", "# 1a\n"),
            ("b/src/misc/thanks.md", "# T\n"),
        ]);
        let s = read(d.path(), "b/src/SUMMARY.md", "zh").unwrap();
        assert_eq!(s.kind, SiteKind::MdBook);
        assert_eq!(s.root, "b");
        assert_eq!(s.docs_dir, "src");
        let outs: Vec<&str> = s.pages.iter().map(|p| p.out.as_str()).collect();
        assert_eq!(
            outs,
            [
                "src/SUMMARY.md",
                "src/preface.md",
                "src/ch1/README.md",
                "src/ch1/a b.md",
                "src/misc/thanks.md"
            ]
        );
        let keys: Vec<&str> = s.pages.iter().map(|p| p.key.as_str()).collect();
        assert_eq!(
            keys,
            ["SUMMARY", "preface", "ch1_README", "ch1_a_b", "misc_thanks"]
        );
        assert_eq!(s.pages[1].source, "b/src/preface.md");
        assert!(s.notes[0].contains("Draft"), "{:?}", s.notes);
    }

    #[test]
    fn mdbook_link_to_a_missing_file_is_an_error_naming_it() {
        let d = tree(&[("src/SUMMARY.md", "- [Gone](gone.md)\n")]);
        let e = read(d.path(), "src/SUMMARY.md", "zh").unwrap_err();
        let e = e.to_string();
        assert!(e.contains("gone.md") && e.contains("does not exist"), "{e}");
    }

    #[test]
    fn mkdocs_nav_order_and_titles() {
        let d = tree(&[
            (
                "site/mkdocs.yml",
                "site_name: S\nnav:\n  - Home: index.md\n  - Guide:\n      - Install: guide/install.md\n      - guide/use.md\n  - Site: https://example.com\nmarkdown_extensions:\n  - pymdownx.emoji:\n      emoji_index: !!python/name:material.extensions.emoji.twemoji\n",
            ),
            ("site/docs/index.md", "# Home\n"),
            ("site/docs/guide/install.md", "# Install\n"),
            ("site/docs/guide/use.md", "# Use\n"),
        ]);
        let s = read(d.path(), "site/mkdocs.yml", "zh").unwrap();
        let outs: Vec<&str> = s.pages.iter().map(|p| p.out.as_str()).collect();
        assert_eq!(
            outs,
            [
                "docs/index.md",
                "docs/guide/install.md",
                "docs/guide/use.md"
            ]
        );
        assert_eq!(s.titles, ["Home", "Guide", "Install", "Site"]);
        assert_eq!(
            s.meta,
            [Meta {
                key: "site_name".into(),
                text: "S".into()
            }]
        );
        let (back, meta) = s.parse_titles(&s.titles_markdown()).unwrap();
        assert_eq!(back, s.titles);
        assert_eq!(meta, ["S"]);
    }

    #[test]
    fn a_literate_nav_folder_entry_and_a_generated_page_do_not_stop_an_mkdocs_site() {
        let d = tree(&[
            (
                "site/mkdocs.yml",
                "site_name: S\nnav:\n  - Home: index.md\n  - Guide: guide/\n  - API: api/\n  - Coverage: coverage.md\nmarkdown_extensions:\n  - attr_list\n  - toc:\n      permalink: true\n",
            ),
            ("site/docs/index.md", "# Home\n"),
            (
                "site/docs/guide/SUMMARY.md",
                "- [Use](use.md)\n- [Install](install.md)\n- [More](more/)\n",
            ),
            ("site/docs/guide/install.md", "# Install\n"),
            ("site/docs/guide/use.md", "# Use\n"),
            ("site/docs/guide/more/b.md", "# B\n"),
            ("site/docs/api/x10.md", "# X10\n"),
            ("site/docs/api/x2.md", "# X2\n"),
        ]);
        let s = read(d.path(), "site/mkdocs.yml", "zh").unwrap();
        let outs: Vec<&str> = s.pages.iter().map(|p| p.out.as_str()).collect();
        assert_eq!(
            outs,
            [
                "docs/index.md",
                "docs/guide/SUMMARY.md",
                "docs/guide/use.md",
                "docs/guide/install.md",
                "docs/guide/more/b.md",
                "docs/api/x2.md",
                "docs/api/x10.md",
            ]
        );
        assert!(
            s.notes.iter().any(|n| n.contains("coverage.md")),
            "{:?}",
            s.notes
        );
        assert!(s.explicit_ids, "attr_list is on");
        assert_eq!(s.slug_rule, SlugRule::PythonMarkdown);
    }

    #[test]
    fn an_mkdocs_site_with_pymdownx_slugs_slugs_headings_in_every_script() {
        let d = tree(&[
            (
                "site/mkdocs.yml",
                "site_name: S\nmarkdown_extensions:\n  - markdown.extensions.toc:\n      slugify: !!python/object/apply:pymdownx.slugs.slugify {kwds: {case: lower}}\n  - markdown.extensions.attr_list:\n",
            ),
            ("site/docs/index.md", "# Home\n"),
        ]);
        let s = read(d.path(), "site/mkdocs.yml", "zh").unwrap();
        assert_eq!(s.slug_rule, SlugRule::Pymdownx);
        assert!(s.explicit_ids);
    }

    #[test]
    fn docusaurus_order_from_positions_then_natural_names() {
        let d = tree(&[
            (
                "web/docs/intro.md",
                "---\nsidebar_position: 1\n---\n# Intro\n",
            ),
            ("web/docs/z-last.md", "# Z\n"),
            (
                "web/docs/guide/_category_.json",
                "{\"label\": \"The Guide\", \"position\": 2}",
            ),
            ("web/docs/guide/step10.mdx", "# 10\n"),
            ("web/docs/guide/step2.md", "# 2\n"),
        ]);
        let s = read(d.path(), "web", "zh-Hans").unwrap();
        let outs: Vec<&str> = s.pages.iter().map(|p| p.out.as_str()).collect();
        let base = "i18n/zh-Hans/docusaurus-plugin-content-docs/current";
        assert_eq!(
            outs,
            [
                format!("{base}/intro.md"),
                format!("{base}/guide/step2.md"),
                format!("{base}/guide/step10.mdx"),
                format!("{base}/z-last.md"),
            ]
        );
        assert_eq!(s.titles, ["The Guide"]);
        assert_eq!(s.docs_dir, "docs");
    }
}
