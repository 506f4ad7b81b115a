//! Issue 16, "Book formats": how a book is found and written back. `chapters` takes
//! directories and globs (in natural order, saying which files it took, exit 2 with the
//! campaign file named for a bad pattern); the mdBook, MkDocs and Docusaurus layouts are read
//! from their own tables of contents and written back as buildable translated sites.

use crate::support;

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
