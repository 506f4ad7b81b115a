//! HTML comments are masked before a unit is sent to the model and restored after, so the
//! model never sees them as text; a span whose placeholder the answer lost reaches QA and the
//! repair instead of failing the unit. Through
//! the fake OpenAI-compatible server over HTTP.

use crate::support;

use booktr::agents::Agent;
use support::fake_llm::{FakeServer, Reply};
use support::{TestCampaign, assert_code, json_summary};

const KEY: &str = "sk-booktr-masking-KEY-9e01";

const CHAPTER: &str = "# Agents\n\nAn agent plans. <!-- TODO(editor): check this claim -->\n\n<!-- Editors: keep this comment. -->\n\nIt then acts.\n";

fn campaign(name: &str) -> TestCampaign {
    let c = TestCampaign::with_chapters(
        name,
        &["a.md"],
        "max_unit_chars = 4000\n[provider]\nkind = \"openai\"\nmodel = \"m\"\nmax_attempts = 1\n",
    );
    c.write("a.md", CHAPTER);
    c
}

fn run(c: &TestCampaign, fake: &FakeServer) -> std::process::Output {
    c.cmd("run", &["--base-url", &fake.base_url, "--json"])
        .env("OPENAI_API_KEY", KEY)
        .output()
        .unwrap()
}

#[test]
fn html_comment_is_never_sent_to_the_model() {
    let fake = FakeServer::start();
    let c = campaign("m");
    let out = run(&c, &fake);
    assert_code(&out, 0);
    let tr: Vec<_> = fake
        .requests()
        .into_iter()
        .filter(|r| r.agent == Agent::Translation)
        .collect();
    assert!(!tr.is_empty());
    for r in &tr {
        let body = r.body.to_string();
        assert!(
            !body.contains("check this claim") && !body.contains("keep this comment"),
            "a comment reached the model: {body}"
        );
        assert!(
            r.unit_text().unwrap().contains("⟦1⟧"),
            "{:?}",
            r.unit_text()
        );
        assert!(
            body.contains("copy each of them exactly once"),
            "the model is told to copy the placeholders"
        );
    }
    let translated = c.read("m/out/a.md");
    assert!(
        translated.contains("<!-- TODO(editor): check this claim -->")
            && translated.contains("<!-- Editors: keep this comment. -->"),
        "{translated}"
    );
    assert!(!translated.contains('⟦'), "{translated}");
}

/// Regression (issue 18, recorded from the 1.5b model on the sample book): an answer that
/// lost the placeholder of an HTML comment failed the unit, so a weak model that mangles
/// placeholders left the whole campaign `incomplete` with nothing to review. Now the lost span
/// is left out of the text and named in the result's cleanup; QA flags it and the repair
/// restores what it can place; the unit is translated, never failed.
#[test]
fn a_lost_placeholder_failed_the_unit_instead_of_reaching_qa() {
    let fake = FakeServer::start();
    fake.script(|r| {
        if r.agent == Agent::Translation {
            Reply::Content("# 智能体\n\n智能体会规划。\n\n它随后行动。\n".into())
        } else {
            Reply::Default
        }
    });
    let c = campaign("l");
    let out = run(&c, &fake);
    let s = json_summary(&out);
    assert_eq!(s["units"]["failed"], 0, "{s}");
    assert_eq!(s["units"]["translated"], 1, "{s}");
    // The model never gives the comments back: the editor is told, the unit is not lost.
    assert_eq!(s["status"], "needs_review", "{s}");
    assert!(s["findings"]["errors"].as_u64().unwrap() >= 1, "{s}");
    let text = c.read("l/out/a.md");
    assert!(text.starts_with("# 智能体"), "{text}");
    // The result file names the spans whose placeholders were lost.
    let state = c.path(s["state_dir"].as_str().unwrap());
    let mut named = false;
    for e in walk(&state) {
        if std::fs::read_to_string(&e).is_ok_and(|t| {
            t.contains("placeholders_lost") && t.contains("<!-- Editors: keep this comment. -->")
        }) {
            named = true;
        }
    }
    assert!(
        named,
        "no result file under {} lists the lost span",
        state.display()
    );
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}
