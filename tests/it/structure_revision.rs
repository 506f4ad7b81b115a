//! "The revision request quotes it": a translation that merges two paragraphs gets a
//! `structure` error, and the Translation agent's revision request, as the fake server receives
//! it over HTTP, quotes that finding's message naming the block.

use crate::support;

use booktr::agents::Agent;
use booktr::lang::Lang;
use support::fake_llm::{FakeServer, Reply, default_content};
use support::{TestCampaign, assert_code, json_summary};

const KEY: &str = "sk-booktr-structure-KEY-22bb";

#[test]
fn a_merged_paragraph_is_quoted_in_the_revision_request() {
    let fake = FakeServer::start();
    let zh = Lang::parse("zh");
    fake.script(move |r| {
        if r.agent != Agent::Translation || r.is_revision() {
            return Reply::Default;
        }
        // The model joins the two paragraphs into one.
        let good = default_content(&zh, Agent::Translation, &r.messages);
        Reply::Content(format!("{}\n", good.trim_end().replacen("\n\n", " ", 1)))
    });
    let c = TestCampaign::with_chapters(
        "s",
        &["a.md"],
        "revision_rounds = 1\n[provider]\nkind = \"openai\"\nmodel = \"m\"\n",
    );
    c.write(
        "a.md",
        "An agent calls a tool by writing a request, and the runtime executes it.\n\nThe model then reads the result before it decides on the next step of the task.\n",
    );
    let out = c
        .cmd("run", &["--base-url", &fake.base_url, "--json"])
        .env("OPENAI_API_KEY", KEY)
        .output()
        .unwrap();
    assert_code(&out, 0);
    assert_eq!(json_summary(&out)["status"], "complete");
    let revisions: Vec<String> = fake
        .requests()
        .into_iter()
        .filter(|r| r.is_revision())
        .map(|r| r.all_text())
        .collect();
    assert_eq!(revisions.len(), 1, "{revisions:#?}");
    assert!(
        revisions[0].contains(
            "- structure: paragraph 2 of the source has no counterpart: merged into paragraph 1 of the translation? Keep paragraph 1 and paragraph 2 as separate paragraphs"
        ),
        "{}",
        revisions[0]
    );
}
