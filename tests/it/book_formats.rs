//! Issue 16, "Book formats": how a book is found and written back. `chapters` takes
//! directories and globs (in natural order, saying which files it took, exit 2 with the
//! campaign file named for a bad pattern); the mdBook, MkDocs and Docusaurus layouts are read
//! from their own tables of contents and written back as buildable translated sites.

use crate::support;
use saphyr::{LoadableYamlNode, Yaml, YamlEmitter};

use support::{TestCampaign, assert_code, corpus_dir};

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The corpus's flat `en/` folder as one `chapters` entry: all 11 chapters in natural order
/// (introduction first, because it is named before the folder), said in `plan` and `run`, with
/// every translated chapter written.
#[booktr_test_needs::needs(corpus)]
#[test]
fn corpus_folder_as_chapters_takes_every_file_in_natural_order() {
    let Some(corpus) = corpus_dir() else {
        return;
    };
    let en = corpus.join("en");
    let intro = en.join("introduction.md");
    let c = TestCampaign::with_chapters(
        "folder",
        &[intro.to_str().unwrap(), en.to_str().unwrap()],
        "",
    );
    let out = c.cmd("plan", &["--json"]).output().unwrap();
    assert_code(&out, 0);
    let plan: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().last().unwrap()).unwrap();
    let keys: Vec<&str> = plan["chapters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["chapter"].as_str().unwrap())
        .collect();
    let mut expected = vec!["introduction".to_string()];
    expected.extend((1..=10).map(|i| format!("chapter{i:02}")));
    assert_eq!(keys, expected);
    let sources = plan["chapter_sources"].as_array().unwrap();
    assert_eq!(sources[1]["kind"], "directory");
    assert_eq!(sources[1]["files"].as_array().unwrap().len(), 10);

    let out = c.cmd("plan", &[]).output().unwrap();
    assert_code(&out, 0);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("(directory): 10 file(s):") && text.contains("chapter01.md"),
        "{text}"
    );

    let out = c.cmd("run", &[]).output().unwrap();
    assert_code(&out, 0);
    assert!(
        stderr(&out).contains("(directory): 10 file(s):"),
        "{}",
        stderr(&out)
    );
    for k in &expected {
        assert!(
            c.path(&format!("folder/out/{k}.md")).is_file(),
            "{k} not written"
        );
    }
}

/// A glob in `chapters` gives its matches in natural order (ch2 before ch10), nested folders
/// included with `**`; a directory as a chapter never fails with "Is a directory".
#[test]
fn glob_and_directory_chapters_in_natural_order() {
    let c = TestCampaign::with_chapters("g", &["book/**/*.md", "more"], "");
    c.write("book/ch10.md", "# Ten\n\nText ten.\n");
    c.write("book/ch2.md", "# Two\n\nText two.\n");
    c.write("book/part/ch3.md", "# Three\n\nText three.\n");
    c.write("more/x1.md", "# X\n\nText x.\n");
    let out = c.cmd("plan", &["--json"]).output().unwrap();
    assert_code(&out, 0);
    let plan: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().last().unwrap()).unwrap();
    let files: Vec<&str> = plan["chapters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["file"].as_str().unwrap())
        .collect();
    assert_eq!(
        files,
        [
            "book/ch2.md",
            "book/ch10.md",
            "book/part/ch3.md",
            "more/x1.md"
        ]
    );
    let out = c.cmd("run", &[]).output().unwrap();
    assert_code(&out, 0);
    assert!(!stderr(&out).contains("os error 21"));
    for f in ["ch2.md", "ch10.md", "ch3.md", "x1.md"] {
        assert!(!c.read(&format!("g/out/{f}")).is_empty(), "{f} not written");
    }
}

/// Exit 2 naming the campaign file for a bad pattern, a pattern matching nothing and an empty
/// folder.
#[test]
fn bad_chapter_patterns_are_usage_errors_naming_the_campaign_file() {
    for (entry, says) in [
        ("book/[.md", "invalid"),
        ("nothing/*.md", "matches no file"),
        ("empty", "holds no Markdown"),
    ] {
        let c = TestCampaign::with_chapters("b", &[entry], "");
        std::fs::create_dir_all(c.path("empty")).unwrap();
        let out = c.cmd("plan", &[]).output().unwrap();
        assert_code(&out, 2);
        let e = stderr(&out);
        assert!(
            e.contains("campaign.toml") && e.contains(says),
            "{entry}: {e}"
        );
    }
}

/// Copies `tests/fixtures/books/<name>` into `dest`.
pub(crate) fn copy_fixture(name: &str, dest: &std::path::Path) {
    let from = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/books")
        .join(name);
    for e in walkdir::WalkDir::new(&from).into_iter().flatten() {
        let to = dest.join(e.path().strip_prefix(&from).unwrap());
        if e.file_type().is_dir() {
            std::fs::create_dir_all(&to).unwrap();
        } else {
            std::fs::copy(e.path(), &to).unwrap();
        }
    }
}

/// Every local link and image target of every Markdown file under `dir` (relative to that
/// file, fragment and query cut) exists; returns how many targets were checked.
fn assert_local_targets_exist(dir: &std::path::Path) -> usize {
    use pulldown_cmark::{Event, Parser, Tag};
    let mut checked = 0;
    for e in walkdir::WalkDir::new(dir).into_iter().flatten() {
        let p = e.path();
        if !p.extension().is_some_and(|x| x == "md" || x == "mdx") {
            continue;
        }
        let text = std::fs::read_to_string(p).unwrap();
        for ev in Parser::new(&text) {
            let (Event::Start(Tag::Link { dest_url, .. })
            | Event::Start(Tag::Image { dest_url, .. })) = ev
            else {
                continue;
            };
            let t = dest_url.split(['#', '?']).next().unwrap_or("");
            if t.is_empty() || t.contains(':') || t.starts_with('/') {
                continue;
            }
            let target = p.parent().unwrap().join(t);
            assert!(
                target.exists(),
                "{} links {dest_url}, which is not in the output",
                p.display()
            );
            checked += 1;
        }
    }
    checked
}

/// The mdBook fixture: order from SUMMARY.md (prefix, part, nested and suffix chapters; the
/// draft skipped with a note), and a translated book in out_dir: SUMMARY.md titles
/// translated, book.toml copied with `language` set, images and data files copied, every
/// SUMMARY link and every relative link or image of the chapters resolving in the output.
#[test]
fn mdbook_summary_gives_order_and_a_buildable_translated_book() {
    let c = TestCampaign::new(
        "name = \"mb\"\nsource_lang = \"en\"\ntarget_lang = \"zh\"\nbook = \"book/src/SUMMARY.md\"\n",
    );
    copy_fixture("mdbook", &c.path("book"));
    let out = c.cmd("plan", &["--json"]).output().unwrap();
    assert_code(&out, 0);
    let plan: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().last().unwrap()).unwrap();
    let keys: Vec<&str> = plan["chapters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["chapter"].as_str().unwrap())
        .collect();
    assert_eq!(
        keys,
        [
            "SUMMARY",
            "intro",
            "chapter_1_index",
            "chapter_1_planning",
            "reading",
            "nav-titles"
        ]
    );
    let out = c.cmd("plan", &[]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("(mdBook): 5 file(s)"), "{text}");
    assert!(
        text.contains("draft chapter \"Evaluating Agents\""),
        "{text}"
    );

    let out = c.cmd("run", &[]).output().unwrap();
    assert_code(&out, 0);
    let book = c.path("mb/out");
    let toml = c.read("mb/out/book.toml");
    assert!(
        toml.contains("language = \"zh\"") && toml.contains("# A small mdBook"),
        "{toml}"
    );
    assert!(!toml.contains("language = \"en\""));
    // The book's title, from book.toml, is translated like the chapters.
    let parsed: toml::Table = toml::from_str(&toml).unwrap();
    let title = parsed["book"]["title"].as_str().unwrap();
    assert!(
        !title.is_empty() && title != "Agents in Practice",
        "the book's title stays English: {title}"
    );
    for f in [
        "images/loop.svg",
        "data/tools.csv",
        "intro.md",
        "chapter_1/index.md",
        "chapter_1/planning.md",
        "reading.md",
    ] {
        assert!(
            book.join("src").join(f).is_file(),
            "{f} missing from the output"
        );
    }
    let summary = c.read("mb/out/src/SUMMARY.md");
    let source = std::fs::read_to_string(c.path("book/src/SUMMARY.md")).unwrap();
    assert_ne!(summary, source, "SUMMARY.md was not translated");
    assert!(!summary.contains("Building Agents"), "{summary}");
    assert!(summary.contains("(chapter_1/planning.md)"), "{summary}");
    // SUMMARY.md's 4 links, plus 6 links and images in the chapters.
    let checked = assert_local_targets_exist(&book.join("src"));
    assert_eq!(checked, 4 + 6);
}

/// The translated mdBook builds with mdBook itself (`mdbook build`, exit 0), and the built pages
/// are the translation: `<html lang="zh">` from the book.toml booktr wrote, the translated
/// SUMMARY.md titles in the sidebar, no English title left, every chapter and the copied image
/// in the built book.
#[booktr_test_needs::needs(mdbook)]
#[test]
fn mdbook_builds_the_translated_book() {
    let c = TestCampaign::new(
        "name = \"mb\"\nsource_lang = \"en\"\ntarget_lang = \"zh\"\nbook = \"book/src/SUMMARY.md\"\n",
    );
    copy_fixture("mdbook", &c.path("book"));
    assert_code(&c.cmd("run", &[]).output().unwrap(), 0);
    let book = c.path("mb/out");
    let o = std::process::Command::new("mdbook")
        .arg("build")
        .arg(&book)
        .output()
        .expect("mdbook is on PATH (BOOKTR_REQUIRE_MDBOOK=1 says it must be)");
    assert!(
        o.status.success(),
        "mdbook build: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let html = std::fs::read_to_string(book.join("book/chapter_1/planning.html")).unwrap();
    assert!(html.contains("<html lang=\"zh\""), "{}", &html[..300]);
    let summary = c.read("mb/out/src/SUMMARY.md");
    // Every translated title of SUMMARY.md is in the built sidebar; the English ones are not.
    // mdBook writes the sidebar as toc.html (for readers without scripts) beside its script.
    let toc = std::fs::read_to_string(book.join("book/toc.html")).unwrap();
    let titles: Vec<&str> = summary
        .lines()
        .filter_map(|l| l.split_once('[').and_then(|(_, r)| r.split_once(']')))
        .map(|(t, _)| t)
        .collect();
    assert_eq!(titles.len(), 5, "{summary}");
    for t in &titles {
        assert!(toc.contains(t), "{t} not in the built table of contents");
    }
    for english in ["Building Agents", "Planning", "Further Reading"] {
        assert!(!toc.contains(english), "{english} left in the built book");
    }
    for f in [
        "intro.html",
        "chapter_1/index.html",
        "reading.html",
        "images/loop.svg",
    ] {
        assert!(book.join("book").join(f).is_file(), "{f} not built");
    }
}

/// The MkDocs fixture: order from the nav (sections, a page without a title), translated nav
/// titles in the output mkdocs.yml (the rest of the file kept), docs_dir assets copied, every
/// relative link and image resolving; `mkdocs build --strict` when mkdocs is importable.
#[test]
fn mkdocs_nav_gives_order_and_a_translated_site() {
    let c = TestCampaign::new(
        "name = \"mk\"\nsource_lang = \"en\"\ntarget_lang = \"zh\"\nbook = \"site/mkdocs.yml\"\n",
    );
    copy_fixture("mkdocs", &c.path("site"));
    let out = c.cmd("plan", &["--json"]).output().unwrap();
    assert_code(&out, 0);
    let plan: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().last().unwrap()).unwrap();
    let keys: Vec<&str> = plan["chapters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["chapter"].as_str().unwrap())
        .collect();
    assert_eq!(
        keys,
        ["index", "guide_install", "guide_usage", "nav-titles"]
    );

    let out = c.cmd("run", &[]).output().unwrap();
    assert_code(&out, 0);
    let site = c.path("mk/out");
    let yml = c.read("mk/out/mkdocs.yml");
    let cfg = &Yaml::load_from_str(&yml).unwrap()[0];
    let source_text = c.read("site/mkdocs.yml");
    let source = &Yaml::load_from_str(&source_text).unwrap()[0];
    // The site's name is translated and the (built-in) theme speaks the target language.
    let name = cfg["site_name"].as_str().unwrap();
    assert!(
        !name.is_empty() && name != source["site_name"].as_str().unwrap(),
        "site_name stays English: {name}"
    );
    assert_eq!(cfg["theme"]["locale"].as_str(), Some("zh_CN"));
    assert_eq!(cfg["markdown_extensions"], source["markdown_extensions"]);
    assert!(yml.starts_with("# A small MkDocs site"), "{yml}");
    let mut nav = String::new();
    YamlEmitter::new(&mut nav).dump(&cfg["nav"]).unwrap();
    for (title, page) in [
        ("Home", "index.md"),
        ("User Guide", ""),
        ("Installing the Toolkit", "guide/install.md"),
    ] {
        assert!(!nav.contains(title), "{title} not translated: {nav}");
        assert!(nav.contains(page), "{page} lost: {nav}");
    }
    assert!(nav.contains("- guide/usage.md"), "{nav}");
    for f in [
        "img/overview.svg",
        "index.md",
        "guide/install.md",
        "guide/usage.md",
    ] {
        assert!(site.join("docs").join(f).is_file(), "{f} missing");
    }
    assert_eq!(assert_local_targets_exist(&site.join("docs")), 5);
}

/// The translated MkDocs site builds with MkDocs itself in strict mode (`mkdocs build
/// --strict`: every nav entry and every link resolves, or the build fails), and the built
/// pages carry the translated nav titles.
#[booktr_test_needs::needs(mkdocs)]
#[test]
fn mkdocs_builds_the_translated_site_strictly() {
    let c = TestCampaign::new(
        "name = \"mk\"\nsource_lang = \"en\"\ntarget_lang = \"zh\"\nbook = \"site/mkdocs.yml\"\n",
    );
    copy_fixture("mkdocs", &c.path("site"));
    assert_code(&c.cmd("run", &[]).output().unwrap(), 0);
    let site = c.path("mk/out");
    let o = std::process::Command::new("python3")
        .args(["-m", "mkdocs", "build", "--strict", "-q", "-f"])
        .arg(site.join("mkdocs.yml"))
        .output()
        .expect("python3 runs (BOOKTR_REQUIRE_MKDOCS=1 says mkdocs must be importable)");
    assert!(
        o.status.success(),
        "mkdocs build --strict: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let index = std::fs::read_to_string(site.join("site/index.html")).unwrap();
    let yml = c.read("mk/out/mkdocs.yml");
    let cfg = &Yaml::load_from_str(&yml).unwrap()[0];
    let first = cfg["nav"][0]
        .as_mapping()
        .and_then(|m| m.keys().next())
        .and_then(|k| k.as_str())
        .unwrap()
        .to_string();
    assert!(
        index.contains(&first),
        "nav title {first} not in the built page"
    );
    assert!(!index.contains(">Home<"), "the English nav title is left");
    assert!(site.join("site/guide/install/index.html").is_file());
    assert!(site.join("site/img/overview.svg").is_file());
}

/// The Docusaurus fixture: order from `sidebar_position` and `_category_.json` positions, then
/// names; translated docs under `i18n/zh/docusaurus-plugin-content-docs/current/` with assets,
/// the category label translated there and in `current.json` (keyed by the sidebar id read
/// from sidebars.js).
#[test]
fn docusaurus_tree_gives_order_and_i18n_output() {
    let c = TestCampaign::new(
        "name = \"du\"\nsource_lang = \"en\"\ntarget_lang = \"zh\"\nbook = \"web\"\n",
    );
    copy_fixture("docusaurus", &c.path("web"));
    let out = c.cmd("plan", &["--json"]).output().unwrap();
    assert_code(&out, 0);
    let plan: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().last().unwrap()).unwrap();
    let keys: Vec<&str> = plan["chapters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["chapter"].as_str().unwrap())
        .collect();
    assert_eq!(
        keys,
        [
            "intro",
            "tutorial_step1",
            "tutorial_step2",
            "appendix",
            "nav-titles"
        ]
    );
    let out = c.cmd("run", &[]).output().unwrap();
    assert_code(&out, 0);
    let cur = c.path("du/out/i18n/zh/docusaurus-plugin-content-docs/current");
    for f in [
        "intro.md",
        "tutorial/step1.md",
        "tutorial/step2.md",
        "appendix.md",
        "img/overview.svg",
    ] {
        assert!(cur.join(f).is_file(), "{f} missing");
    }
    assert!(
        c.read("du/out/i18n/zh/docusaurus-plugin-content-docs/current/intro.md")
            .starts_with("---\nsidebar_position: 1\n---\n")
    );
    let cat: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(cur.join("tutorial/_category_.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(cat["position"], 2);
    let label = cat["label"].as_str().unwrap();
    assert!(!label.is_empty() && label != "Tutorial Basics", "{label}");
    let tr: serde_json::Value =
        serde_json::from_str(&c.read("du/out/i18n/zh/docusaurus-plugin-content-docs/current.json"))
            .unwrap();
    assert_eq!(
        tr["sidebar.tutorialSidebar.category.Tutorial Basics"]["message"],
        label
    );
    assert_eq!(assert_local_targets_exist(&cur), 3);
    // The navbar and the site's own texts, from the files `docusaurus write-translations
    // --locale en` wrote, translated into the target locale's folder; the theme's own strings
    // (`theme.…`) are left to the translations Docusaurus ships.
    let json = |f: &str| -> serde_json::Value {
        serde_json::from_str(&c.read(&format!("du/out/i18n/zh/{f}"))).unwrap()
    };
    let navbar = json("docusaurus-theme-classic/navbar.json");
    for (id, en) in [
        ("title", "Agents in Practice"),
        ("item.label.Tutorial", "Tutorial"),
        ("logo.alt", "The project's logo"),
    ] {
        let m = navbar[id]["message"].as_str().unwrap();
        assert!(!m.is_empty() && m != en, "{id}: {m}");
        assert!(navbar[id]["description"].is_string(), "{id}");
    }
    let code = json("code.json");
    let tagline = code["homepage.hero.tagline"]["message"].as_str().unwrap();
    assert!(
        tagline != "Build agents that finish their work",
        "{tagline}"
    );
    assert!(code.get("theme.docs.paginator.next").is_none(), "{code}");
}

/// Missing local images and relative link targets of the source are warnings in report.json,
/// report.md and report.html, once per target (a second use is counted, not repeated), naming
/// the chapter file and the target; present targets and URLs give none, and the status stays
/// complete.
#[test]
fn missing_source_targets_are_warned_once_in_every_report() {
    let c = TestCampaign::with_chapters("mt", &["book"], "");
    c.write(
        "book/ch1.md",
        "# One\n\nSee ![a figure](img/gone.png) and ![here](img/ok.svg).\n\nRead [the next](ch2.md), [the web](https://example.com) and [old](missing.md#part).\n",
    );
    c.write(
        "book/ch2.md",
        "# Two\n\nThe same figure again: ![again](img/gone.png).\n\nBack to [one](ch1.html).\n",
    );
    c.write("book/img/ok.svg", "<svg/>");
    let out = c.cmd("run", &["--json"]).output().unwrap();
    assert_code(&out, 0);
    let summary = support::json_summary(&out);
    assert_eq!(summary["status"], "complete");
    let report: serde_json::Value =
        serde_json::from_str(&c.read("mt/validation/report.json")).unwrap();
    let warnings: Vec<&serde_json::Value> = report["chapter_findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["check"] == "source_targets")
        .collect();
    assert_eq!(warnings.len(), 2, "{warnings:#?}");
    let m0 = warnings[0]["message"].as_str().unwrap();
    assert!(
        m0.starts_with("book/ch1.md: image target `img/gone.png` does not exist")
            && m0.contains("(2 references in all)"),
        "{m0}"
    );
    assert_eq!(warnings[0]["severity"], "warning");
    assert_eq!(warnings[0]["chapter"], "ch1");
    let m1 = warnings[1]["message"].as_str().unwrap();
    assert!(
        m1.starts_with("book/ch1.md: link target `missing.md#part`"),
        "{m1}"
    );
    let md = c.read("mt/validation/report.md");
    let html = c.read("mt/validation/report.html");
    for text in [&md, &html] {
        assert!(
            text.contains("source_targets"),
            "check missing from a report"
        );
        // (report.html escapes `/` as `&#x2f;`.)
        assert!(
            text.contains("gone.png") && text.contains("missing.md") && text.contains("ch1.md")
        );
    }
}

/// The corpus's flat folder: its image links that point at no file are each reported once,
/// naming the chapter file (issue 16 counted 121 such links).
#[booktr_test_needs::needs(corpus)]
#[test]
fn corpus_missing_images_are_each_reported_once() {
    let Some(corpus) = corpus_dir() else {
        return;
    };
    let c = TestCampaign::with_chapters("cm", &[corpus.join("en").to_str().unwrap()], "");
    let plan = booktr::config::Plan::load(&c.file, &Default::default()).unwrap();
    let campaign = booktr::campaign::Campaign::load(plan).unwrap();
    let w = booktr::campaign::core::source_targets::missing_targets(&campaign);
    let images = w
        .iter()
        .filter(|f| f.message.contains(": image target `"))
        .count();
    eprintln!("{} missing targets, {images} of them images", w.len());
    assert!(images > 0);
    let mut seen = std::collections::HashSet::new();
    for f in &w {
        assert!(
            f.message.contains("/en/chapter") || f.message.contains("/en/introduction"),
            "{}",
            f.message
        );
        assert!(
            seen.insert(f.message.clone()),
            "reported twice: {}",
            f.message
        );
    }
}

/// An mdBook chapter that pulls a Markdown file into its page (`{{#include watch.md}}`, a file
/// SUMMARY.md does not list) and code from outside the book (`{{#include ../../examples/…}}`):
/// the included file is translated like a chapter, so the built page has no English paragraph
/// from it, and the outside include still resolves from the output, one folder deeper.
#[booktr_test_needs::needs(mdbook)]
#[test]
fn an_included_markdown_file_is_translated_and_an_include_from_outside_still_resolves() {
    let c = TestCampaign::new(
        "name = \"inc\"\nsource_lang = \"en\"\ntarget_lang = \"zh\"\nbook = \"repo/book/src/SUMMARY.md\"\n",
    );
    c.write("repo/book/book.toml", "[book]\ntitle = \"Watching\"\n");
    c.write(
        "repo/book/src/SUMMARY.md",
        "# Summary\n\n- [Commands](commands/index.md)\n",
    );
    c.write(
        "repo/book/src/commands/index.md",
        "# Commands\n\nThe options of the watcher are shared by two commands.\n\n{{#include watch.md}}\n\n```rust\n{{#include ../../../examples/hello.rs}}\n```\n",
    );
    c.write(
        "repo/book/src/commands/watch.md",
        "## Watching files\n\nThe watcher rebuilds the book whenever a source file changes on disk.\n",
    );
    c.write(
        "repo/examples/hello.rs",
        "fn main() { println!(\"hello from outside\"); }\n",
    );
    assert_code(&c.cmd("run", &[]).output().unwrap(), 0);
    let out = c.read("inc/out/src/commands/watch.md");
    assert!(
        !out.contains("rebuilds the book") && out.contains("## "),
        "the included file was not translated: {out}"
    );
    let o = std::process::Command::new("mdbook")
        .arg("build")
        .arg(c.path("inc/out"))
        .output()
        .expect("mdbook is on PATH (BOOKTR_REQUIRE_MDBOOK=1 says it must be)");
    assert!(
        o.status.success(),
        "mdbook build: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let html = c.read("inc/out/book/commands/index.html");
    assert!(!html.contains("rebuilds the book"), "English in the page");
    assert!(
        html.contains("hello from outside"),
        "the outside include is lost"
    );
    // The source itself is unchanged, and the rewritten include is not a hand edit: a second
    // run finds nothing to record and writes the same file.
    assert!(
        c.read("repo/book/src/commands/index.md")
            .contains("{{#include ../../../examples/hello.rs}}")
    );
    let written = c.read("inc/out/src/commands/index.md");
    let again = c.cmd("run", &[]).output().unwrap();
    assert_code(&again, 0);
    let err = String::from_utf8_lossy(&again.stderr);
    assert!(!err.contains("edit"), "{err}");
    assert_eq!(c.read("inc/out/src/commands/index.md"), written);
}

/// A small MkDocs site whose pages link to each other's headings, with MkDocs' own anchor
/// validation made an error (`validation: anchors: warn` and `--strict`).
fn mkdocs_site_linking_headings(c: &TestCampaign, extensions: &str) {
    c.write(
        "site/mkdocs.yml",
        &format!(
            "site_name: Heading links\nnav:\n  - Home: index.md\n  - Guide: guide.md\nvalidation:\n  anchors: warn\nmarkdown_extensions:\n{extensions}  - toc:\n      permalink: true\n"
        ),
    );
    c.write(
        "site/docs/index.md",
        "# Welcome to the toolkit\n\nRead [getting started](guide.md#getting-started) first, then the\n[café options][opts] and [why it exists](#why-this-toolkit).\n\n[opts]: guide.md#cafe-options\n\n## Why this toolkit\n\nIt keeps every paragraph you have already paid for.\n",
    );
    c.write(
        "site/docs/guide.md",
        "# The user guide\n\n## Getting started\n\nInstall the toolkit and open a terminal window.\n\n## Café options\n\nEvery option has a default, <a href=\"#getting-started\">as said above</a>.\n",
    );
}

fn mkdocs_build_strict(site: &std::path::Path) {
    let o = std::process::Command::new("python3")
        .args(["-m", "mkdocs", "build", "--strict", "-q", "-f"])
        .arg(site.join("mkdocs.yml"))
        .env("NO_MKDOCS_2_WARNING", "true")
        .output()
        .expect("python3 runs (BOOKTR_REQUIRE_MKDOCS=1 says mkdocs must be importable)");
    assert!(
        o.status.success(),
        "mkdocs build --strict (anchors validated): {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// MkDocs without `attr_list` reads no explicit heading id, so links to a translated heading
/// are pointed at the id MkDocs gives it (Python-Markdown's slug: `_2` for a Chinese heading,
/// whose letters it drops); an editor who
/// chooses `heading_ids = "translated"` on a site that could keep the source's ids gets the
/// same. Either way MkDocs validates every anchor of the translated site, the output keeps no
/// `{#id}`, the units keep the source's ids (the next run records no hand edit) and the
/// rehearsal ends `complete`.
#[booktr_test_needs::needs(mkdocs)]
#[test]
fn links_to_translated_headings_point_at_their_new_ids_where_no_source_id_is_kept() {
    for (extensions, heading_ids) in [
        ("", ""),
        ("  - attr_list\n", "heading_ids = \"translated\"\n"),
    ] {
        let c = TestCampaign::new(&format!(
            "name = \"hl\"\nsource_lang = \"en\"\ntarget_lang = \"zh\"\nbook = \"site/mkdocs.yml\"\n{heading_ids}"
        ));
        mkdocs_site_linking_headings(&c, extensions);
        let out = c.cmd("run", &[]).output().unwrap();
        assert_code(&out, 0);
        assert!(stderr(&out).contains("hl: complete"), "{}", stderr(&out));
        let index = c.read("hl/out/docs/index.md");
        let guide = c.read("hl/out/docs/guide.md");
        assert!(!index.contains("{#") && !guide.contains("{#"), "{guide}");
        // Python-Markdown's ids of the Chinese headings: `_1`, `_2`… in page order.
        for link in ["(guide.md#_2)", "]: guide.md#_3", "(#_2)"] {
            assert!(index.contains(link), "{link} not in {index}");
        }
        assert!(guide.contains("href=\"#_2\""), "{guide}");
        mkdocs_build_strict(&c.path("hl/out"));
        // The written links are booktr's, not hand edits: a second run records none and
        // writes the same files.
        let again = c.cmd("run", &[]).output().unwrap();
        assert_code(&again, 0);
        assert!(
            !stderr(&again).contains("edited by hand"),
            "{}",
            stderr(&again)
        );
        assert_eq!(c.read("hl/out/docs/index.md"), index);
    }
}
