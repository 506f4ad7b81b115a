//! Hostile and odd input through the whole pipeline (offline pseudo provider): every byte that
//! must not be translated comes out exactly as it went in, or the input is refused with an error
//! that names the file and line.

use crate::support;

use support::{TestCampaign, assert_code, json_summary};

/// Runs a one-chapter campaign over `content` and returns (exit code, output text or None).
fn run_one(name: &str, content: &[u8], extra: &str) -> (i32, Option<Vec<u8>>, String) {
    let c = TestCampaign::with_chapters("h", &[name], extra);
    let p = c.path(name);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, content).unwrap();
    let out = c.cmd("run", &["--json"]).output().unwrap();
    let file = std::path::Path::new(name)
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let written = std::fs::read(c.path(&format!("h/out/{file}"))).ok();
    (
        out.status.code().unwrap(),
        written,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn keeps(content: &str, kept: &[&str]) {
    let (code, out, err) = run_one("ch.md", content.as_bytes(), "");
    assert_eq!(code, 0, "{err}");
    let out = String::from_utf8(out.expect("output written")).unwrap();
    for k in kept {
        assert!(out.contains(k), "lost {k:?} in:\n{out}");
    }
}

#[test]
fn empty_chapter() {
    let (code, out, err) = run_one("empty.md", b"", "");
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.unwrap(), b"");
}

#[test]
fn chapter_of_only_code_is_copied_without_a_model_call() {
    let src = "```python\nprint('only code')\n```\n\n    indented();\n";
    let c = TestCampaign::with_chapters("h", &["code.md"], "");
    c.write("code.md", src);
    let out = c.cmd("run", &["--json"]).output().unwrap();
    assert_code(&out, 0);
    let s = json_summary(&out);
    assert_eq!(s["usage"]["translation"]["calls"], 0);
    assert_eq!(s["units"]["copied"], 1);
    assert_eq!(c.read("h/out/code.md"), src);
}

#[test]
fn duplicate_chapter_file_names_are_refused() {
    let c = TestCampaign::with_chapters("h", &["a/ch.md", "b/ch.md"], "");
    c.write("a/ch.md", "# A\n");
    c.write("b/ch.md", "# B\n");
    let out = c.cmd("run", &[]).output().unwrap();
    assert_code(&out, 2);
    assert!(String::from_utf8_lossy(&out.stderr).contains("same name"));
}

#[test]
fn non_utf8_and_binary_files_are_refused_naming_file_and_line() {
    let (code, _, err) = run_one("latin1.md", b"# Title\n\nCaf\xe9 au lait.\n", "");
    assert_eq!(code, 2);
    assert!(
        err.contains("latin1.md") && err.contains("line 3") && err.contains("UTF-8"),
        "{err}"
    );
    let (code, _, err) = run_one("image.md", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR", "");
    assert_eq!(code, 2);
    assert!(err.contains("image.md") && err.contains("binary"), "{err}");
}

#[test]
fn bom_and_crlf_are_kept() {
    let src = "\u{feff}---\r\ntitle: T\r\n---\r\n\r\n# Heading\r\n\r\nSome text here.\r\n\r\n```\r\ncode();\r\n```\r\n";
    let (code, out, err) = run_one("crlf.md", src.as_bytes(), "");
    assert_eq!(code, 0, "{err}");
    let out = String::from_utf8(out.unwrap()).unwrap();
    assert!(
        out.starts_with("\u{feff}---\r\ntitle: T\r\n---\r\n"),
        "{out:?}"
    );
    assert!(out.contains("```\r\ncode();\r\n```\r\n"));
    assert!(
        !out.replace("\r\n", "").contains('\n'),
        "every line ending stays CRLF"
    );
}

#[test]
fn a_300_kb_fenced_block_is_one_unit_copied_exactly() {
    let body: String = (0..10_000)
        .map(|i| format!("line_{i} = compute({i})\n"))
        .collect();
    assert!(body.len() > 200_000);
    let src = format!("# Big\n\nIntro text.\n\n```python\n{body}```\n\nOutro text.\n");
    keeps(&src, &[&format!("```python\n{body}```\n")]);
}

#[test]
fn nested_tilde_and_indented_fences_are_kept() {
    let src = "# Fences\n\nText.\n\n````markdown\n```rust\nfn inner() {}\n```\n````\n\n~~~\ntilde block\n~~~\n\n    indented code\n    more\n\nEnd.\n";
    keeps(
        src,
        &[
            "````markdown\n```rust\nfn inner() {}\n```\n````",
            "~~~\ntilde block\n~~~",
            "    indented code\n    more\n",
        ],
    );
}

#[test]
fn yaml_and_toml_front_matter_are_kept_untranslated() {
    keeps(
        "---\ntitle: Agents and Tools\ntags: [agent, tool]\n---\n\n# Body\n\nText.\n",
        &["---\ntitle: Agents and Tools\ntags: [agent, tool]\n---\n"],
    );
    keeps(
        "+++\ntitle = \"Agents\"\n+++\n\n# Body\n\nText.\n",
        &["+++\ntitle = \"Agents\"\n+++\n"],
    );
}

#[test]
fn html_comments_and_blocks_are_kept() {
    keeps(
        "# T\n\n<!-- keep: do not translate -->\n\nText with <kbd>Ctrl</kbd> key.\n\n<div class=\"note\">\n\nInside.\n\n</div>\n",
        &[
            "<!-- keep: do not translate -->",
            "<kbd>",
            "</kbd>",
            "<div class=\"note\">",
            "</div>",
        ],
    );
}

#[test]
fn a_50_kb_line_without_breaks_is_handled() {
    let line = "word ".repeat(10_000);
    let src = format!("# Long line\n\n{line}\n\n`code` end.\n");
    let (code, out, err) = run_one("long.md", src.as_bytes(), "");
    assert_eq!(code, 0, "{err}");
    let out = String::from_utf8(out.unwrap()).unwrap();
    assert!(out.contains("`code`"));
    assert!(out.len() > 20_000);
}

#[test]
fn an_unclosed_fence_at_end_of_file_is_kept() {
    keeps(
        "# T\n\nText.\n\n```bash\necho never closed\n",
        &["```bash\necho never closed\n"],
    );
}

#[test]
fn output_names_never_leave_out_dir() {
    let c = TestCampaign::with_chapters("h", &["../x/evil.md"], "");
    let p = c.dir.path().join("../x/evil.md");
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, "# Evil\n\nText.\n").unwrap();
    assert_code(&c.cmd("run", &[]).output().unwrap(), 0);
    assert!(
        c.path("h/out/evil.md").exists(),
        "written inside out_dir by file name"
    );
    std::fs::remove_file(&p).unwrap();
}

#[test]
fn a_malicious_glossary_cannot_harm() {
    let huge = "x".repeat(1_000_000);
    let csv = format!(
        "source,target,note\nAgent,=cmd|' /C calc'!A0,\"<script>alert(1)</script>\"\ntool,工具,{huge}\n"
    );
    let c = TestCampaign::with_chapters("h", &["ch.md"], "glossaries = [\"g.csv\"]\n");
    c.write("ch.md", "# Agents\n\nAn Agent uses a tool.\n");
    c.write("g.csv", &csv);
    let out = c.cmd("run", &["--json"]).output().unwrap();
    assert_code(&out, 0);
    let html = c.read("h/validation/report.html");
    assert!(!html.contains("<script") && html.contains("&lt;script&gt;alert(1)"));
    // The glossary is data in every output: no cell of report.md starts a formula or breaks the table.
    let md = c.read("h/validation/report.md");
    assert!(
        md.contains("=cmd\\|"),
        "pipes are escaped in Markdown tables"
    );
}

#[test]
fn same_source_and_target_language_and_a_bad_review_share_are_refused() {
    let c = TestCampaign::new(
        "name = \"s\"\nsource_lang = \"en\"\ntarget_lang = \"EN\"\nchapters = [\"ch.md\"]\n",
    );
    c.write("ch.md", "# T\n\nText.\n");
    let out = c.cmd("plan", &[]).output().unwrap();
    assert_code(&out, 2);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("target_lang") && err.contains("same language"),
        "{err}"
    );

    let c = TestCampaign::with_chapters("s", &["ch.md"], "proofread_share = -1");
    c.write("ch.md", "# T\n\nText.\n");
    let out = c.cmd("run", &[]).output().unwrap();
    assert_code(&out, 2);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("proofread_share") && err.contains("between 0"),
        "{err}"
    );
}

#[test]
fn a_house_term_with_two_renderings_is_refused_naming_both_files() {
    let c = TestCampaign::with_chapters("g", &["ch.md"], "glossaries = [\"a.csv\", \"b.csv\"]");
    c.write("ch.md", "# T\n\nAn agent.\n");
    c.write("a.csv", "source,target,note\nAgent,智能体,\ntool,工具,\n");
    c.write(
        "b.csv",
        "source,target,note\nagent,代理,\nTool,工具,same rendering: fine\n",
    );
    let out = c.cmd("run", &[]).output().unwrap();
    assert_code(&out, 2);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("b.csv")
            && err.contains("代理")
            && err.contains("智能体")
            && err.contains("a.csv"),
        "{err}"
    );
    assert!(!err.contains("tool"), "{err}");
}
