//! HTML comments are masked before a unit is sent to the model and restored after, so the
//! model never sees them as text; an answer that loses a placeholder is not accepted. Through
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

#[test]
fn a_lost_placeholder_fails_the_attempt() {
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
    assert_code(&out, 1);
    let s = json_summary(&out);
    assert_eq!(s["status"], "incomplete", "{s}");
    assert!(
        s["last_error"]
            .as_str()
            .unwrap()
            .contains("lost the placeholder ⟦1⟧"),
        "{s}"
    );
}
