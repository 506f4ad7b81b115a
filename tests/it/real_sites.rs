//! Real documentation sites nobody on this project wrote (`../shared/sites`, pinned, read in
//! place), rehearsed and built with their own tool: what the translated site must keep.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};

use crate::support::{TestCampaign, assert_code, shared_site};

/// What the link check reads of one built page.
#[derive(Default)]
struct Page {
    /// Every `id` and `name` attribute.
    ids: HashSet<String>,
    /// Every `<a href>`, as written.
    hrefs: Vec<String>,
    /// Han characters and Latin-script words of the page's main content (`<main>`, else
    /// `<body>`), outside `<script>`, `<style>`, `<pre>`, `<code>` and the navigation.
    han: usize,
    latin_words: usize,
}

/// Every `.html` page of the built site in `dir`, by its path relative to `dir`, read with a
/// WHATWG tokenizer (html5gum): minified pages write unquoted attributes.
fn html_pages(dir: &Path) -> HashMap<String, Page> {
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
            let html = std::fs::read_to_string(e.path()).unwrap_or_default();
            (rel, read_page(&html))
        })
        .collect()
}

fn read_page(html: &str) -> Page {
    use html5gum::{Token, Tokenizer};
    let mut p = Page::default();
    // Depth inside elements whose text is not the page's prose.
    let mut skip = 0usize;
    let mut main = false;
    let mut text = String::new();
    let mut body_text = String::new();
    const SKIP: [&[u8]; 6] = [b"script", b"style", b"pre", b"code", b"nav", b"header"];
    for t in Tokenizer::new(html).flatten() {
        match t {
            Token::StartTag(tag) => {
                for (k, v) in &tag.attributes {
                    let v = String::from_utf8_lossy(&v.value).into_owned();
                    match &k[..] {
                        b"id" | b"name" => {
                            p.ids.insert(v);
                        }
                        b"href" if &tag.name[..] == b"a" => p.hrefs.push(v),
                        _ => {}
                    }
                }
                if SKIP.contains(&&tag.name[..]) && !tag.self_closing {
                    skip += 1;
                }
                if &tag.name[..] == b"main" || &tag.name[..] == b"article" {
                    main = true;
                }
            }
            Token::EndTag(tag) if SKIP.contains(&&tag.name[..]) => {
                skip = skip.saturating_sub(1);
            }
            Token::String(s) if skip == 0 => {
                let s = String::from_utf8_lossy(&s.value);
                body_text.push_str(&s);
                if main {
                    text.push_str(&s);
                    text.push(' ');
                }
            }
            _ => {}
        }
    }
    let text = if main { text } else { body_text };
    p.han = text
        .chars()
        .filter(|c| ('\u{4e00}'..='\u{9fff}').contains(c))
        .count();
    p.latin_words = text
        .split(|c: char| !c.is_ascii_alphabetic())
        .filter(|w| w.len() >= 3)
        .count();
    p
}

/// `(page, href)` of every internal link of the built site in `dir` that does not resolve: to
/// a page or file that is not there, or to an `#id` the page does not have. A directory URL
/// (`install/`) is its `index.html`. Pages the tools generate beside the content (`toc.html`,
/// `print.html`, `404.html`: the same in both builds, with absolute URLs in some) are not read.
fn broken_links(dir: &Path, pages: &HashMap<String, Page>) -> BTreeSet<(String, String)> {
    let mut broken = BTreeSet::new();
    for (page, p) in pages {
        if page == "toc.html" || page == "print.html" || page == "404.html" {
            continue;
        }
        for href in &p.hrefs {
            let scheme = href.split_once(':').is_some_and(|(h, _)| !h.contains('/'));
            if scheme || href.starts_with('/') || href.is_empty() {
                continue;
            }
            let (path, frag) = href.split_once('#').unwrap_or((href, ""));
            let path = path.split('?').next().unwrap_or("");
            let mut target = if path.is_empty() {
                page.clone()
            } else {
                let base = Path::new(page).parent().unwrap_or(Path::new(""));
                normalize(&base.join(booktr::book::site::percent_decode(path)))
            };
            if path.ends_with('/') || dir.join(&target).is_dir() {
                target = if target.is_empty() {
                    "index.html".into()
                } else {
                    format!("{target}/index.html")
                };
            }
            let ok = match pages.get(target.as_str()) {
                None => dir.join(&target).is_file() && frag.is_empty(),
                Some(have) => {
                    frag.is_empty() || have.ids.contains(&booktr::book::site::percent_decode(frag))
                }
            };
            if !ok {
                broken.insert((page.clone(), href.clone()));
            }
        }
    }
    broken
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

/// The pages of a built Chinese translation whose main content has prose and no Han
/// character: pages left in the source language.
fn untranslated_pages(pages: &HashMap<String, Page>) -> BTreeSet<String> {
    pages
        .iter()
        .filter(|(name, p)| name.as_str() != "404.html" && p.latin_words >= 20 && p.han == 0)
        .map(|(name, _)| name.clone())
        .collect()
}

/// The built source and translation of a site compared: links broken in the translation that
/// work in the source, and the translation's pages left in the source language.
struct Compared {
    source_pages: usize,
    pages: usize,
    source_broken: usize,
    new_broken: Vec<(String, String)>,
    untranslated: BTreeSet<String>,
    cross_page_anchor_links: usize,
}

impl Compared {
    /// Every internal link that works in the source's build works in the translation's.
    fn assert_no_link_broken_that_works_in_the_source(&self) {
        assert!(
            self.new_broken.is_empty(),
            "{} internal links broken in the translation that work in the source, e.g. {:?}",
            self.new_broken.len(),
            self.new_broken.iter().take(8).collect::<Vec<_>>()
        );
    }

    /// No page of the translation is left in English.
    fn assert_every_page_translated(&self) {
        assert!(
            self.untranslated.is_empty(),
            "pages left in English: {:?}",
            self.untranslated
        );
    }
}

fn compare(source: &Path, translation: &Path) -> Compared {
    let (src, tgt) = (html_pages(source), html_pages(translation));
    let before = broken_links(source, &src);
    let after = broken_links(translation, &tgt);
    Compared {
        source_pages: src.len(),
        pages: tgt.len(),
        source_broken: before.len(),
        new_broken: after.difference(&before).cloned().collect(),
        untranslated: untranslated_pages(&tgt),
        cross_page_anchor_links: tgt
            .values()
            .flat_map(|p| &p.hrefs)
            .filter(|h| h.contains('#') && !h.starts_with('#') && !h.contains(':'))
            .count(),
    }
}

/// Runs a site tool's command to its end and returns what it printed (stdout, then stderr);
/// fails the test, with that output, when the command cannot start (`missing` says which
/// switch requires it) or does not succeed.
fn run_tool(cmd: &mut std::process::Command, missing: &str) -> String {
    let o = cmd.output().expect(missing);
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success(), "{cmd:?}: {log}");
    log
}

fn mdbook_build(book: &Path, dest: &Path) {
    run_tool(
        std::process::Command::new("mdbook")
            .arg("build")
            .arg(book)
            .arg("-d")
            .arg(dest),
        "mdbook is on PATH (BOOKTR_REQUIRE_MDBOOK=1 says it must be)",
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
    cargo_book_rehearsed_and_built("");
}

/// The Cargo Book rehearsed into Chinese with `heading_ids = "translated"`: no heading keeps
/// the source's id, every link to a heading (inline, reference definitions, raw HTML) is
/// pointed at the translated heading's id, and built with mdBook every internal link that
/// works in the source's build still works.
#[booktr_test_needs::needs(mdbook)]
#[test]
fn with_translated_heading_ids_every_link_follows_its_heading_in_the_translated_mdbook() {
    let Some(campaign) = cargo_book_rehearsed_and_built("heading_ids = \"translated\"\n") else {
        return;
    };
    let config = campaign.read("cb/out/src/reference/config.md");
    assert!(
        !config.contains("{#") && config.contains("](#"),
        "translated ids and links to them expected in config.md"
    );
}

/// The Cargo Book rehearsed into Chinese with the campaign keys `extra`, both it and its source
/// built with mdBook and compared (see the callers); returns the campaign.
fn cargo_book_rehearsed_and_built(extra: &str) -> Option<TestCampaign> {
    let site = shared_site("cargo-book")?;
    let summary = site.join("src/SUMMARY.md");
    let c = TestCampaign::new(&format!(
        "name = \"cb\"\nsource_lang = \"en\"\ntarget_lang = \"zh\"\nbook = {:?}\n{extra}",
        summary.display().to_string()
    ));
    // A clean rehearsal ends `complete`: nothing an editor must fix.
    assert_code(&c.cmd("run", &[]).output().unwrap(), 0);
    let built: PathBuf = c.path("built");
    mdbook_build(&site, &built.join("source"));
    mdbook_build(&c.path("cb/out"), &built.join("zh"));
    let campaign = c;
    let c = compare(&built.join("source"), &built.join("zh"));
    // The checker sees what is broken: the source's own links out of the book (to sibling
    // books on doc.rust-lang.org, `../../reference/…`: 200-odd, the sites README) are.
    assert!(
        c.source_broken > 100,
        "{} broken in the source",
        c.source_broken
    );
    assert!(
        c.pages >= 98 && c.pages == c.source_pages,
        "{} pages built",
        c.pages
    );
    c.assert_no_link_broken_that_works_in_the_source();
    c.assert_every_page_translated();
    // The links this guards exist: many point at a heading of another chapter.
    assert!(
        c.cross_page_anchor_links > 100,
        "{} links to another page's heading",
        c.cross_page_anchor_links
    );
    Some(campaign)
}

/// Rust by Example (mdBook, 197 chapters, code-heavy pages, an optional gettext
/// preprocessor) as a new user takes it: `booktr init --to zh`, a rehearsal that ends
/// `complete`, both books built with mdBook: every internal link that works in the source's
/// build works in the translation's, and every page is in Chinese.
#[booktr_test_needs::needs(mdbook)]
#[test]
fn rust_by_example_builds_translated_with_every_link_working() {
    let Some(site) = shared_site("rust-by-example") else {
        return;
    };
    let (dir, out) = init_and_rehearse(&site, "zh");
    let built = dir.path().join("built");
    mdbook_build(&site, &built.join("source"));
    mdbook_build(&out, &built.join("zh"));
    let c = compare(&built.join("source"), &built.join("zh"));
    assert!(
        c.pages >= 197 && c.pages == c.source_pages,
        "{} pages built, {} in the source",
        c.pages,
        c.source_pages
    );
    c.assert_no_link_broken_that_works_in_the_source();
    c.assert_every_page_translated();
}

/// `python3 -m mkdocs build` of the site whose `mkdocs.yml` is in `dir`, run there (its
/// configuration imports modules and reads snippets relative to it), into `dest`.
fn mkdocs_build(dir: &Path, dest: &Path) {
    run_tool(
        std::process::Command::new("python3")
            .args(["-m", "mkdocs", "build", "-q", "-d"])
            .arg(dest)
            .current_dir(dir)
            .env("DISABLE_MKDOCS_2_WARNING", "true")
            .env("NO_MKDOCS_2_WARNING", "true"),
        "python3 runs (BOOKTR_REQUIRE_MKDOCS_SITES=1 says the MkDocs plugins must be importable)",
    );
}

/// `booktr init <site> --to <lang>` and a rehearsal of the campaign it wrote, which must end
/// `complete` (nothing an editor must fix): the campaign's folder and its `out_dir`.
fn init_and_rehearse(site: &Path, lang: &str) -> (tempfile::TempDir, PathBuf) {
    let (dir, out, run) = init_and_run(site, lang);
    assert_code(&run, 0);
    (dir, out)
}

/// `booktr init <site> --to <lang>` and a rehearsal of the campaign it wrote: the campaign's
/// folder, its `out_dir` and the run's output, whatever its status.
fn init_and_run(site: &Path, lang: &str) -> (tempfile::TempDir, PathBuf, std::process::Output) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("campaign.toml");
    let bin = env!("CARGO_BIN_EXE_booktr");
    let init = std::process::Command::new(bin)
        .arg("init")
        .arg(site)
        .args(["--to", lang, "--file"])
        .arg(&file)
        .output()
        .unwrap();
    assert_code(&init, 0);
    let run = std::process::Command::new(bin)
        .arg("run")
        .arg(&file)
        .output()
        .unwrap();
    let out = walkdir::WalkDir::new(dir.path())
        .max_depth(2)
        .into_iter()
        .flatten()
        .find(|e| e.file_name() == "out" && e.file_type().is_dir())
        .map(|e| e.path().to_path_buf())
        .expect("the campaign wrote out/");
    (dir, out, run)
}

/// The MkDocs site `name` of `../shared/sites` as a new user takes it: `booktr init --to zh`,
/// a rehearsal that ends `complete`, and both the source and the translation built with
/// MkDocs and its plugins. Returns the comparison, the translation's `index.html` and the
/// campaign's `report.json`.
fn mkdocs_site_rehearsed(name: &str) -> Option<(Compared, String, serde_json::Value)> {
    let site = shared_site(name)?;
    let (dir, out) = init_and_rehearse(&site, "zh");
    assert!(
        out.join("mkdocs.yml").is_file(),
        "the output has an mkdocs.yml"
    );
    let built = dir.path().join("built");
    mkdocs_build(&site, &built.join("source"));
    mkdocs_build(&out, &built.join("zh"));
    let index = std::fs::read_to_string(built.join("zh/index.html")).unwrap();
    let report = std::fs::read_to_string(out.parent().unwrap().join("validation/report.json"))
        .expect("the campaign wrote validation/report.json beside out/");
    let report = serde_json::from_str(&report).unwrap();
    Some((
        compare(&built.join("source"), &built.join("zh")),
        index,
        report,
    ))
}

/// PyMdown Extensions' docs (MkDocs, Material, every pymdownx extension, a hooks module and a
/// custom theme beside the docs, snippets in a hidden `.snippets/` folder appended to every
/// page) rehearsed into Chinese: the translation builds with MkDocs, every internal link that
/// works in the source's build works in it, every page is translated, and the page says it is
/// Chinese.
#[booktr_test_needs::needs(mkdocs_sites)]
#[test]
fn an_mkdocs_site_with_pymdownx_syntax_builds_translated_with_every_link_working() {
    let Some((c, index, report)) = mkdocs_site_rehearsed("pymdown-extensions") else {
        return;
    };
    assert!(
        c.pages >= 48 && c.pages == c.source_pages,
        "{} pages",
        c.pages
    );
    c.assert_no_link_broken_that_works_in_the_source();
    c.assert_every_page_translated();
    assert!(
        c.cross_page_anchor_links > 20,
        "{}",
        c.cross_page_anchor_links
    );
    assert!(
        index.contains("lang=zh") || index.contains("lang=\"zh\""),
        "the page does not say it is Chinese"
    );
    // The one snippet no page includes is copied in English, and the report says so.
    let notes = report["site_notes"].to_string();
    assert!(
        notes.contains("copied to the output in the source language")
            && notes.contains(".snippets/uml.md"),
        "{notes}"
    );
}

/// mkdocstrings' docs (MkDocs with mkdocstrings, markdown-exec, autorefs and snippets of the
/// repository's README, CHANGELOG and CONTRIBUTING outside docs/, which hold most of the
/// prose) rehearsed into Chinese: the `# ::: mkdocstrings` block renders the API again, the
/// translation builds, no link breaks, and every page is translated but the two the plugins
/// generate from code (the API reference, read from docstrings, and the credits, written by a
/// script at build time).
#[booktr_test_needs::needs(mkdocs_sites)]
#[test]
fn an_mkdocs_site_with_mkdocstrings_and_snippets_builds_translated_with_every_page_translated() {
    let Some((c, _, _)) = mkdocs_site_rehearsed("mkdocstrings") else {
        return;
    };
    assert!(
        c.pages >= 12 && c.pages == c.source_pages,
        "{} pages",
        c.pages
    );
    c.assert_no_link_broken_that_works_in_the_source();
    let generated: BTreeSet<String> = ["credits/index.html", "reference/api/index.html"]
        .into_iter()
        .map(String::from)
        .collect();
    assert!(
        c.untranslated.is_subset(&generated),
        "pages left in English: {:?}",
        c.untranslated.difference(&generated).collect::<Vec<_>>()
    );
}

/// `npx docusaurus build --locale <locale>` of the Docusaurus project `dir` into `dest`; the
/// build's log (its broken anchors are warnings there).
fn docusaurus_build(dir: &Path, locale: &str, dest: &Path) -> String {
    run_tool(
        std::process::Command::new("npx")
            .args(["docusaurus", "build", "--locale", locale, "--out-dir"])
            .arg(dest)
            .current_dir(dir),
        "npx runs (BOOKTR_REQUIRE_DOCUSAURUS=1 says the Yew site's packages are there)",
    )
}

/// The anchors Docusaurus reports broken from pages of the current docs (`/docs/next/…`), one
/// `page -> link` line each.
fn broken_anchors_of_current_docs(log: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut page: Option<&str> = None;
    for line in log.lines() {
        if let Some(p) = line
            .trim()
            .strip_prefix("- Broken anchor on source page path = ")
        {
            page = Some(p.trim_end_matches(':'));
        } else if let (Some(p), Some(l)) = (page, line.trim().strip_prefix("-> linking to "))
            && p.contains("/docs/next/")
        {
            out.insert(format!("{p} -> {l}"));
        }
    }
    out
}

/// The Yew website (Docusaurus 3: every page MDX, `import Tabs from '@theme/Tabs'`, `:::tip`
/// admonitions, explicit heading ids, `onBrokenLinks: 'throw'`) rehearsed into its `zh-Hans`
/// locale, the translated current docs put where `docusaurus write-translations` puts them,
/// and both locales built with Docusaurus: the translation builds (no broken link, which
/// would fail it), Docusaurus reports no broken anchor in the translated docs that the source
/// does not have, and every page of the current docs is in Chinese. Needs the site's npm
/// packages (`npm ci`, which `.ci/run` caches) named by `BOOKTR_DOCUSAURUS_MODULES`; about 4
/// minutes on 2 cores, most of it Docusaurus' two builds.
#[booktr_test_needs::needs(docusaurus)]
#[test]
fn a_docusaurus_site_builds_translated_with_every_link_working() {
    let Some(site) = shared_site("yew-docusaurus") else {
        return;
    };
    let modules = PathBuf::from(std::env::var("BOOKTR_DOCUSAURUS_MODULES").unwrap());
    // A copy of the project with the packages linked in, and the navbar, footer and the site's
    // own texts in English written by Docusaurus, as its i18n guide has a new locale start.
    let work = tempfile::tempdir().unwrap();
    let project = work.path().join("project");
    let copy = |from: &Path, to: &Path| {
        for e in walkdir::WalkDir::new(from).into_iter().flatten() {
            let rel = e.path().strip_prefix(from).unwrap();
            if e.file_type().is_file() {
                std::fs::create_dir_all(to.join(rel).parent().unwrap()).unwrap();
                std::fs::copy(e.path(), to.join(rel)).unwrap();
            }
        }
    };
    copy(&site, &project);
    // Only the current docs (booktr's input) and the last release's (which the blog and the
    // home page link to) are built: the three older versions' 180 pages made each build
    // minutes longer.
    let config = project.join("docusaurus.config.js");
    let text = std::fs::read_to_string(&config).unwrap();
    let anchor = "routeBasePath: '/docs',";
    assert_eq!(
        text.matches(anchor).count(),
        1,
        "the docs options of the pinned config"
    );
    let last: Vec<String> =
        serde_json::from_str(&std::fs::read_to_string(project.join("versions.json")).unwrap())
            .unwrap();
    let versions = format!("{anchor} onlyIncludeVersions: ['current', '{}'],", last[0]);
    std::fs::write(&config, text.replace(anchor, &versions)).unwrap();
    std::os::unix::fs::symlink(&modules, project.join("node_modules")).unwrap();
    let o = std::process::Command::new("npx")
        .args(["docusaurus", "write-translations", "--locale", "en"])
        .current_dir(&project)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (dir, out) = init_and_rehearse(&project, "zh-Hans");
    // The site's own zh-Hans docs and theme texts replaced by booktr's.
    let docs = "i18n/zh-Hans/docusaurus-plugin-content-docs/current";
    std::fs::remove_dir_all(project.join(docs)).unwrap();
    copy(&out.join("i18n/zh-Hans"), &project.join("i18n/zh-Hans"));
    let navbar: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("i18n/zh-Hans/docusaurus-theme-classic/navbar.json"))
            .expect("booktr wrote the translated navbar texts"),
    )
    .unwrap();
    let docs_label = navbar["item.label.Docs"]["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert_ne!(docs_label, "Docs");
    let built = dir.path().join("built");
    let en = docusaurus_build(&project, "en", &built.join("en"));
    let zh = docusaurus_build(&project, "zh-Hans", &built.join("zh"));
    let (before, after) = (
        broken_anchors_of_current_docs(&en),
        broken_anchors_of_current_docs(&zh),
    );
    let new: Vec<_> = after.difference(&before).collect();
    assert!(
        new.is_empty(),
        "broken anchors the source does not have: {new:?}"
    );
    let pages: HashMap<String, Page> = html_pages(&built.join("zh"))
        .into_iter()
        .filter(|(p, _)| p.starts_with("docs/next/"))
        .collect();
    assert!(
        pages.len() >= 63,
        "{} pages of the current docs",
        pages.len()
    );
    let english = untranslated_pages(&pages);
    assert!(english.is_empty(), "pages left in English: {english:?}");
    // The navbar speaks the target language too.
    let intro =
        std::fs::read_to_string(built.join("zh/docs/next/getting-started/introduction/index.html"))
            .or_else(|_| std::fs::read_to_string(built.join("zh/docs/next/index.html")))
            .expect("a built page of the current docs");
    assert!(
        intro.contains(&docs_label),
        "the navbar's translated `Docs` label {docs_label} is not in the built page"
    );
}

/// `jupyter-book build <book> --path-output <dest>`; the HTML is in `<dest>/_build/html`.
fn jupyter_book_build(book: &Path, dest: &Path) {
    run_tool(
        std::process::Command::new("jupyter-book")
            .arg("build")
            .arg(book)
            .arg("--path-output")
            .arg(dest),
        "jupyter-book is on PATH (BOOKTR_REQUIRE_JUPYTER_BOOK=1 says it must be)",
    );
}

/// The Jupyter Book 1 docs (MyST pages, notebooks, `_toc.yml` with parts and nested sections,
/// MyST targets, roles and colon-fence directives, backtick-fenced directives with Markdown
/// bodies, an `{include}` of a file outside the book) rehearsed into Chinese (ending
/// `complete`) and built with Jupyter Book: the translation builds, every internal link that
/// works in the source's build works in it, every page (but the `.Rmd` page, which booktr
/// copies and names in a note) is in Chinese, and the pages say they are Chinese. A copy of the
/// site is built with notebook execution off (`execute_notebooks: "off"`: the notebooks'
/// stored outputs are shown), so the build needs Jupyter Book and its Sphinx extensions but
/// none of the notebooks' scientific packages, and takes about 25 s.
#[booktr_test_needs::needs(jupyter_book)]
#[test]
fn a_jupyter_book_builds_translated_with_every_link_working() {
    let Some(shared) = shared_site("jupyter-book-docs") else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let site = work.path().join("jupyter-book-docs");
    for e in walkdir::WalkDir::new(&shared).into_iter().flatten() {
        let rel = e.path().strip_prefix(&shared).unwrap();
        if e.file_type().is_file() {
            std::fs::create_dir_all(site.join(rel).parent().unwrap()).unwrap();
            std::fs::copy(e.path(), site.join(rel)).unwrap();
        }
    }
    let config = site.join("docs/_config.yml");
    let text = std::fs::read_to_string(&config).unwrap();
    assert!(
        text.contains("execute_notebooks: cache"),
        "the pinned config"
    );
    std::fs::write(
        &config,
        text.replace("execute_notebooks: cache", "execute_notebooks: \"off\""),
    )
    .unwrap();
    let (dir, out, run) = init_and_run(&site.join("docs"), "zh");
    // A clean rehearsal ends `complete`: nothing an editor must fix.
    assert_code(&run, 0);
    let log = String::from_utf8_lossy(&run.stderr).into_owned();
    assert!(
        log.contains("jupytext.Rmd is copied in the source language"),
        "{log}"
    );
    assert!(out.join("_toc.yml").is_file() && out.join("_config.yml").is_file());
    let built = dir.path().join("built");
    jupyter_book_build(&site.join("docs"), &built.join("en"));
    jupyter_book_build(&out, &built.join("zh"));
    let c = compare(&built.join("en/_build/html"), &built.join("zh/_build/html"));
    assert!(c.pages >= 67, "{} pages built", c.pages);
    c.assert_no_link_broken_that_works_in_the_source();
    let english: Vec<&String> = c
        .untranslated
        .iter()
        .filter(|p| !p.contains("jupytext"))
        .collect();
    assert!(english.is_empty(), "pages left in English: {english:?}");
    let index = std::fs::read_to_string(built.join("zh/_build/html/intro.html")).unwrap();
    assert!(
        index.contains("lang=\"zh"),
        "the pages do not say they are Chinese"
    );
}
