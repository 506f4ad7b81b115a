//! A single block too large for the model (its answer truncated at the output limit, or its
//! prompt over the context) is split at sentence boundaries and joined back exactly, instead
//! of failing. Scripted in the fake OpenAI-compatible server over HTTP.

use crate::support;

use booktr::agents::Agent;
use support::fake_llm::{FakeServer, Reply};
use support::{TestCampaign, assert_code, json_summary};

const KEY: &str = "sk-booktr-sentences-KEY-31cd";

/// One paragraph (a single block) of eight sentences.
const PARAGRAPH: &str = "The agent reads the task. It plans the next step! Then it calls a tool. \
The tool returns a result? The agent checks the result. It writes a note to memory. \
It decides whether to stop. Finally it answers the user.\n";

#[test]
fn single_oversized_block_is_split_at_sentences() {
    let fake = FakeServer::start();
    let reference = TestCampaign::with_chapters(
        "r",
        &["a.md"],
        "[provider]\nkind = \"openai\"\nmodel = \"m\"\n",
    );
    reference.write("a.md", PARAGRAPH);
    let out = reference
        .cmd("run", &["--base-url", &fake.base_url, "--json"])
        .env("OPENAI_API_KEY", KEY)
        .output()
        .unwrap();
    assert_code(&out, 0);
    fake.clear();
    // Any translation of more than 100 bytes is cut short at the output limit.
    fake.script(|r| {
        if r.agent == Agent::Translation && r.unit_text().is_some_and(|t| t.len() > 100) {
            Reply::Full {
                reasoning: String::new(),
                content: "截断的".into(),
                finish: "length".into(),
            }
        } else {
            Reply::Default
        }
    });
    let c = TestCampaign::with_chapters(
        "s",
        &["a.md"],
        "[provider]\nkind = \"openai\"\nmodel = \"m\"\n",
    );
    c.write("a.md", PARAGRAPH);
    let out = c
        .cmd("run", &["--base-url", &fake.base_url, "--json"])
        .env("OPENAI_API_KEY", KEY)
        .output()
        .unwrap();
    assert_code(&out, 0);
    assert_eq!(json_summary(&out)["status"], "complete");
    let mut parts: Vec<String> = fake
        .requests()
        .into_iter()
        .filter(|r| r.agent == Agent::Translation)
        .filter_map(|r| r.unit_text().map(String::from))
        .filter(|t| t.len() <= 100)
        .collect();
    assert!(parts.len() >= 2, "{parts:#?}");
    // Every part is whole sentences: it ends with the sentence's punctuation (and its space).
    for p in &parts {
        let p = p.trim_end();
        assert!(p.ends_with(['.', '!', '?']), "{p:?}");
    }
    parts.sort_by_key(|p| PARAGRAPH.find(p.as_str()));
    assert_eq!(
        parts.concat(),
        PARAGRAPH,
        "the parts join back to the block"
    );
    assert_eq!(
        c.read("s/out/a.md"),
        reference.read("r/out/a.md"),
        "reassembly is exact"
    );
}
