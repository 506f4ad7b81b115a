//! Internal links of README.md and of the documentation book (`docs/src/`, an mdBook): every
//! relative link names a file that exists, every `#anchor` names a heading of its page under
//! mdBook's id rule, a book page links only inside `docs/src/` (mdBook ships nothing else), and
//! `SUMMARY.md` lists every page. `mdbook build` checks none of this, so without this test a
//! renamed heading or a moved page would be found by a reader.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Component, Path, PathBuf};

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

/// The parser options of mdBook 0.5.4 with its default Markdown settings
/// (`mdbook_markdown::new_cmark_parser`: smart punctuation, definition lists and GFM
/// admonitions on). Smart punctuation matters here: it turns `--` into `–`, which the id rule
/// then drops.
fn mdbook_options() -> Options {
    Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_HEADING_ATTRIBUTES
        | Options::ENABLE_SMART_PUNCTUATION
        | Options::ENABLE_DEFINITION_LIST
        | Options::ENABLE_GFM
}

/// The id mdBook 0.5.4 gives a heading without an explicit `{#id}`, from the heading's text
/// (its text and inline-code content, without markup): trimmed, lowercased, letters, digits,
/// `_` and `-` kept, each whitespace character made `-`, everything else dropped. A copy of
/// `mdbook_html::utils::id_from_content`, which is crate-private (no library exposes it).
/// GitHub's rule for the same pages differs only for characters these headings do not use.
fn heading_id(text: &str) -> String {
    text.trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| {
            if c.is_alphanumeric() || c == '_' || c == '-' {
                Some(c)
            } else if c.is_whitespace() {
                Some('-')
            } else {
                None
            }
        })
        .collect()
}

/// mdBook's `unique_id`: an id already used on the page gets `-1`, `-2`, … (the first free one).
fn unique_id(id: &str, used: &mut HashSet<String>) -> String {
    if used.insert(id.to_string()) {
        return id.to_string();
    }
    (1..)
        .map(|n| format!("{id}-{n}"))
        .find(|c| used.insert(c.clone()))
        .expect("an unbounded counter finds a free suffix")
}

/// One Markdown page: the ids its headings get and the links it makes (line, destination).
struct Page {
    ids: HashSet<String>,
    links: Vec<(usize, String)>,
}

fn read_page(text: &str) -> Page {
    let mut ids = HashSet::new();
    let mut used = HashSet::new();
    let mut links = Vec::new();
    // Text of the heading (or definition-list title, which mdBook also gives an id from the
    // same counter) being read, and its explicit `{#id}`.
    let mut title: Option<(String, Option<String>)> = None;
    for (event, range) in Parser::new_ext(text, mdbook_options()).into_offset_iter() {
        match event {
            Event::Start(Tag::Heading { id, .. }) => {
                title = Some((String::new(), id.map(|i| i.to_string())));
            }
            Event::Start(Tag::DefinitionListTitle) => title = Some((String::new(), None)),
            Event::End(TagEnd::Heading(_)) | Event::End(TagEnd::DefinitionListTitle) => {
                if let Some((t, explicit)) = title.take() {
                    match explicit {
                        Some(id) => ids.insert(id),
                        None => ids.insert(unique_id(&heading_id(&t), &mut used)),
                    };
                }
            }
            Event::Text(t) | Event::Code(t) => {
                if let Some((buf, _)) = title.as_mut() {
                    buf.push_str(&t);
                }
            }
            Event::Start(Tag::Link { dest_url, .. })
            | Event::Start(Tag::Image { dest_url, .. }) => {
                let line = text[..range.start].matches('\n').count() + 1;
                links.push((line, dest_url.to_string()));
            }
            _ => {}
        }
    }
    Page { ids, links }
}

/// `a/b/../c` → `a/c`, without touching the file system (the target may not exist).
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// What a check of a tree found.
#[derive(Debug, Default)]
struct Checked {
    /// `file:line: message` for each broken link, and each page SUMMARY.md leaves out.
    broken: Vec<String>,
    pages: usize,
    /// Relative links whose target was checked (files and anchors).
    relative_links: usize,
    /// Anchors resolved to a heading id.
    anchors: usize,
}

/// Checks `README.md` and every `.md` under `docs/src/` of `root`.
fn check_tree(root: &Path) -> Checked {
    let book_src = root.join("docs/src");
    let mut files = vec![root.join("README.md")];
    for e in walkdir::WalkDir::new(&book_src).sort_by_file_name() {
        let e = e.unwrap();
        if e.file_type().is_file() && e.path().extension().is_some_and(|x| x == "md") {
            files.push(e.into_path());
        }
    }
    let pages: HashMap<PathBuf, Page> = files
        .iter()
        .map(|f| {
            (
                normalize(f),
                read_page(&std::fs::read_to_string(f).unwrap()),
            )
        })
        .collect();
    let scheme = regex::Regex::new(r"^[A-Za-z][A-Za-z0-9+.-]*:").unwrap();
    let mut out = Checked {
        pages: pages.len(),
        ..Checked::default()
    };
    let mut in_summary = BTreeSet::new();
    for file in &files {
        let file = normalize(file);
        let page = &pages[&file];
        let shown = file
            .strip_prefix(root)
            .unwrap_or(&file)
            .display()
            .to_string();
        let in_book = file.starts_with(&book_src);
        for (line, dest) in &page.links {
            if scheme.is_match(dest) {
                continue; // https:, mailto: …: not ours to check offline
            }
            out.relative_links += 1;
            let (path, anchor) = match dest.split_once('#') {
                Some((p, a)) => (p, Some(a)),
                None => (dest.as_str(), None),
            };
            let mut broken = |msg: String| out.broken.push(format!("{shown}:{line}: {msg}"));
            if path.starts_with('/') {
                broken(format!(
                    "`{dest}` is absolute; write it relative to the page"
                ));
                continue;
            }
            let target = if path.is_empty() {
                file.clone()
            } else {
                normalize(&file.parent().unwrap().join(path))
            };
            if in_book && !target.starts_with(&book_src) {
                broken(format!(
                    "`{dest}` leaves docs/src, which is all mdBook ships (name the file in code instead)"
                ));
                continue;
            }
            if !target.exists() {
                broken(format!("`{dest}`: no file {}", target.display()));
                continue;
            }
            if file.file_name().is_some_and(|n| n == "SUMMARY.md") && in_book {
                in_summary.insert(target.clone());
            }
            let Some(anchor) = anchor else { continue };
            match pages.get(&target) {
                Some(p) if p.ids.contains(anchor) => out.anchors += 1,
                Some(p) => {
                    let mut known: Vec<&String> = p.ids.iter().collect();
                    known.sort();
                    broken(format!(
                        "`{dest}`: no heading with id `{anchor}` (the page has {known:?})"
                    ));
                }
                None => broken(format!(
                    "`{dest}`: an anchor into a page this test does not read"
                )),
            }
        }
    }
    let summary = normalize(&book_src.join("SUMMARY.md"));
    for file in &files {
        let file = normalize(file);
        if file.starts_with(&book_src) && file != summary && !in_summary.contains(&file) {
            out.broken.push(format!(
                "{}: not listed in docs/src/SUMMARY.md, so mdBook does not build it",
                file.strip_prefix(root).unwrap_or(&file).display()
            ));
        }
    }
    out
}

#[test]
fn heading_ids_follow_mdbook() {
    // mdbook-html 0.5.4's own vectors (utils.rs, `it_normalizes_ids`).
    assert_eq!(
        heading_id("`--passes`: add more rustdoc passes"),
        "--passes-add-more-rustdoc-passes"
    );
    assert_eq!(
        heading_id("Method-call 🐙 expressions \u{1f47c}"),
        "method-call--expressions-"
    );
    assert_eq!(heading_id("_-_12345"), "_-_12345");
    assert_eq!(heading_id("中文標題 CJK title"), "中文標題-cjk-title");
    assert_eq!(heading_id("Über"), "über");
    // And as the parser gives heading text: code spans without backticks, markup dropped.
    let p = read_page(
        "# Measuring the design: single-agent mode and `booktr experiment`\n\n## House style: `[style]`\n\n## Notes\n\n## Notes\n\n## Custom {#kept-id}\n\n## A -- B\n",
    );
    let mut ids: Vec<&str> = p.ids.iter().map(String::as_str).collect();
    ids.sort();
    assert_eq!(
        ids,
        [
            "a--b",
            "house-style-style",
            "kept-id",
            "measuring-the-design-single-agent-mode-and-booktr-experiment",
            "notes",
            "notes-1"
        ]
    );
}

#[test]
fn every_internal_link_of_the_readme_and_the_docs_resolves() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let c = check_tree(root);
    assert!(
        c.broken.is_empty(),
        "{} broken link(s):\n{}",
        c.broken.len(),
        c.broken.join("\n")
    );
    // Not an empty pass: the README and every chapter were read, and their links checked.
    assert!(c.pages >= 16, "{c:?}");
    assert!(c.relative_links >= 50, "{c:?}");
    assert!(c.anchors >= 10, "{c:?}");
    eprintln!(
        "{} pages, {} relative links, {} anchors: all resolve",
        c.pages, c.relative_links, c.anchors
    );
}

#[test]
fn a_broken_link_or_anchor_is_reported_with_its_place() {
    let t = tempfile::tempdir().unwrap();
    let w = |p: &str, s: &str| {
        let p = t.path().join(p);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, s).unwrap();
    };
    w(
        "README.md",
        "# R\n\n[ok](docs/src/a.md#two-words) [gone](docs/src/missing.md)\n[bad anchor](docs/src/a.md#nope) [web](https://example.com/x#y)\n",
    );
    w("docs/src/SUMMARY.md", "# Summary\n\n- [A](a.md)\n");
    w(
        "docs/src/a.md",
        "# A\n\n## Two words\n\n[self](#two-words) [self, broken](#three)\n[out of the book](../../README.md)\n",
    );
    w("docs/src/orphan.md", "# Orphan\n");
    let c = check_tree(t.path());
    let b = c.broken.join("\n");
    assert!(
        b.contains("README.md:3: `docs/src/missing.md`: no file"),
        "{b}"
    );
    assert!(
        b.contains("README.md:4: `docs/src/a.md#nope`: no heading with id `nope`"),
        "{b}"
    );
    assert!(
        b.contains("docs/src/a.md:5: `#three`: no heading with id `three`"),
        "{b}"
    );
    assert!(
        b.contains("docs/src/a.md:6: `../../README.md` leaves docs/src"),
        "{b}"
    );
    assert!(
        b.contains("docs/src/orphan.md: not listed in docs/src/SUMMARY.md"),
        "{b}"
    );
    assert_eq!(c.broken.len(), 5, "{b}");
    // The good ones: README → a.md#two-words, a.md → #two-words, SUMMARY → a.md.
    assert_eq!(c.anchors, 2, "{c:?}");
}
