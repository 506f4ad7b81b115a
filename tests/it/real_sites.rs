//! Real documentation sites nobody on this project wrote (`../shared/sites`, pinned, read in
//! place), rehearsed and built with their own tool: what the translated site must keep.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};

use crate::support::{TestCampaign, assert_code, shared_site};

/// Every `.html` file under `dir`, by its path relative to `dir`.
fn html_pages(dir: &Path) -> HashMap<String, String> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "html"))
        .map(|e| {
            let rel = e
                .path()
                .strip_prefix(dir)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            (rel, std::fs::read_to_string(e.path()).unwrap_or_default())
        })
        .collect()
}

/// `(page, href)` of every internal link of the built site in `dir` that does not resolve: to
/// a page that is not there, or to an `#id` the page does not have. Hand-rolled over the HTML
/// with two patterns (`id="…"`, `href="…"`): the pages are mdBook's own output, and a link
/// checker crate would fetch external links, which the tests must not do.
fn broken_links(dir: &Path) -> BTreeSet<(String, String)> {
    let pages = html_pages(dir);
    let id_re = regex::Regex::new(r#"\sid="([^"]*)""#).unwrap();
    let href_re = regex::Regex::new(r#"\shref="([^"]*)""#).unwrap();
    let ids: HashMap<&str, HashSet<String>> = pages
        .iter()
        .map(|(p, html)| {
            (
                p.as_str(),
                id_re
                    .captures_iter(html)
                    .map(|c| html_unescape(&c[1]))
                    .collect(),
            )
        })
        .collect();
    let mut broken = BTreeSet::new();
    for (page, html) in &pages {
        // The sidebar (toc.html and the copy in every page's script) is the same in both
        // builds; links of the pages' own content are what translation can break.
        if page == "toc.html" || page == "print.html" || page == "404.html" {
            continue;
        }
        for c in href_re.captures_iter(html) {
            let href = html_unescape(&c[1]);
            if href.contains(':') || href.starts_with('/') || href.is_empty() {
                continue;
            }
            let (path, frag) = href.split_once('#').unwrap_or((&href, ""));
            let target = if path.is_empty() {
                page.clone()
            } else {
                let base = Path::new(page).parent().unwrap_or(Path::new(""));
                normalize(&base.join(booktr::book::site::percent_decode(path)))
            };
            let ok = match ids.get(target.as_str()) {
                None => dir.join(&target).exists() && frag.is_empty(),
                Some(have) => {
                    frag.is_empty() || have.contains(&booktr::book::site::percent_decode(frag))
                }
            };
            if !ok {
                broken.insert((page.clone(), href));
            }
        }
    }
    broken
}

fn html_unescape(s: &str) -> String {
    s.replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// `p` with `.` and `..` resolved, `/`-separated.
fn normalize(p: &Path) -> String {
    let mut out: Vec<String> = Vec::new();
    for c in p.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::Normal(x) => out.push(x.to_string_lossy().into_owned()),
            _ => {}
        }
    }
    out.join("/")
}

fn mdbook_build(book: &Path, dest: &Path) {
    let o = std::process::Command::new("mdbook")
        .arg("build")
        .arg(book)
        .arg("-d")
        .arg(dest)
        .output()
        .expect("mdbook is on PATH (BOOKTR_REQUIRE_MDBOOK=1 says it must be)");
    assert!(
        o.status.success(),
        "mdbook build {}: {}",
        book.display(),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// The Cargo Book (mdBook, 98 chapters) rehearsed into Chinese, so every heading's text and
/// generated id changes as with a real model: the rehearsal ends `complete` (its shortcut
/// reference links, `[runtime integer overflow]`, are sent as full references and come back
/// translated with their label kept), and built with mdBook every internal link that works
/// in the source's build works in the translation's, links to a heading in another chapter
/// (`config.md#buildjobs`) included.
#[booktr_test_needs::needs(mdbook)]
#[test]
fn links_to_another_chapters_heading_work_in_the_translated_mdbook() {
    let Some(site) = shared_site("cargo-book") else {
        return;
    };
    let summary = site.join("src/SUMMARY.md");
    let c = TestCampaign::new(&format!(
        "name = \"cb\"\nsource_lang = \"en\"\ntarget_lang = \"zh\"\nbook = {:?}\n",
        summary.display().to_string()
    ));
    // A clean rehearsal ends `complete`: nothing an editor must fix.
    assert_code(&c.cmd("run", &[]).output().unwrap(), 0);
    let built: PathBuf = c.path("built");
    mdbook_build(&site, &built.join("source"));
    mdbook_build(&c.path("cb/out"), &built.join("zh"));
    let before = broken_links(&built.join("source"));
    let after = broken_links(&built.join("zh"));
    // The checker sees what is broken: the source's own links out of the book (to sibling
    // books on doc.rust-lang.org, `../../reference/…`: 200-odd, the sites README) are.
    assert!(before.len() > 100, "{} broken in the source", before.len());
    let new: Vec<_> = after.difference(&before).collect();
    let pages = html_pages(&built.join("zh")).len();
    assert!(pages >= 98, "{pages} pages built");
    assert!(
        new.is_empty(),
        "{} internal links broken in the translation that work in the source, e.g. {:?}",
        new.len(),
        new.iter().take(8).collect::<Vec<_>>()
    );
    // The links this guards exist: many point at a heading of another chapter.
    let cross = html_pages(&built.join("zh"))
        .values()
        .map(|h| h.matches(".html#").count())
        .sum::<usize>();
    assert!(cross > 100, "{cross} links to another page's heading");
}
