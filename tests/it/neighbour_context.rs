//! Neighbour context: each Translation request after the first unit of a chapter carries the
//! end of the preceding source text as read-only context; the outputs do not contain it (they
//! equal a run without context); the extra prompt tokens it costs are printed and stay under
//! 15 %; and a model that translates the context too is flagged by `context_echo` (and, as a
//! leading block with no source counterpart, by `injected_text`).

use crate::support;

use booktr::agents::Agent;
use booktr::agents::translation::CONTEXT_HEADER;
use support::fake_llm::{FakeServer, Reply, default_content};
use support::{TestCampaign, assert_code, json_summary};

const KEY: &str = "sk-booktr-context-KEY-0c0c";

fn chapter() -> String {
    (1..=6)
        .map(|i| format!("## Part {i}\n\nThis is why step {i} matters: the agent reads what the previous step wrote, checks it against the goal, and only then calls the next tool in the plan.\n\nA second paragraph of part {i} adds detail about memory, tools and the context window.\n\n"))
        .collect()
}

fn campaign(name: &str, extra: &str) -> TestCampaign {
    let c = TestCampaign::with_chapters(
        name,
        &["a.md"],
        &format!("max_unit_chars = 400\n{extra}[provider]\nkind = \"openai\"\nmodel = \"m\"\n"),
    );
    c.write("a.md", &chapter());
    c
}

#[test]
fn context_is_sent_read_only_and_costs_little() {
    let fake = FakeServer::start();
    let with = campaign("w", "");
    let out = with
        .cmd("run", &["--base-url", &fake.base_url, "--json"])
        .env("OPENAI_API_KEY", KEY)
        .output()
        .unwrap();
    assert_code(&out, 0);
    let with_tokens = json_summary(&out)["usage"]["translation"]["prompt_tokens"]
        .as_f64()
        .unwrap();
    let reqs: Vec<_> = fake
        .requests()
        .into_iter()
        .filter(|r| r.agent == Agent::Translation)
        .collect();
    let text = chapter();
    let mut with_context = 0;
    for r in &reqs {
        let unit = r.unit_text().unwrap();
        let glossary_msg = r.glossary_text();
        if text.starts_with(unit) {
            assert!(
                !glossary_msg.contains(CONTEXT_HEADER),
                "the first unit has no context"
            );
            continue;
        }
        let ctx = glossary_msg
            .split("<context>\n")
            .nth(1)
            .and_then(|s| s.split("\n</context>").next())
            .expect("context present");
        let before = &text[..text.find(unit).unwrap()];
        assert!(
            before.trim_end().ends_with(ctx.trim_start_matches('…')),
            "the context is the text just before the unit"
        );
        assert!(!unit.contains(ctx));
        with_context += 1;
    }
    assert!(with_context >= 4);

    fake.clear();
    let without = campaign("w", "context_chars = 0\n");
    let out = without
        .cmd("run", &["--base-url", &fake.base_url, "--json"])
        .env("OPENAI_API_KEY", KEY)
        .output()
        .unwrap();
    assert_code(&out, 0);
    let without_tokens = json_summary(&out)["usage"]["translation"]["prompt_tokens"]
        .as_f64()
        .unwrap();
    assert!(
        fake.requests()
            .iter()
            .all(|r| !r.all_text().contains(CONTEXT_HEADER))
    );
    assert_eq!(
        with.read("w/out/a.md"),
        without.read("w/out/a.md"),
        "the context never reaches the output"
    );
    let extra = with_tokens / without_tokens - 1.0;
    println!(
        "neighbour context: {without_tokens} → {with_tokens} translation prompt tokens (+{:.1} %)",
        extra * 100.0
    );
    assert!(extra > 0.0 && extra < 0.15, "+{:.1} %", extra * 100.0);
}

/// A fake model that translates the neighbour context as well as the unit.
fn echoing_server() -> FakeServer {
    let fake = FakeServer::start();
    let zh = booktr::lang::Lang::parse("zh");
    fake.script(move |r| {
        if r.agent != Agent::Translation
            || r.is_revision()
            || !r.glossary_text().contains(CONTEXT_HEADER)
        {
            return Reply::Default;
        }
        // The model translates the context as well as the unit.
        let ctx = r
            .glossary_text()
            .split("<context>\n")
            .nth(1)
            .unwrap()
            .split("\n</context>")
            .next()
            .unwrap()
            .to_string();
        let mut m = r.messages.clone();
        let unit = r.glossary_index() + 1;
        m[unit].content = format!("{ctx}\n\n{}", m[unit].content);
        Reply::Content(default_content(&zh, Agent::Translation, &m))
    });
    fake
}

#[test]
fn a_translation_that_includes_its_context_is_flagged() {
    let fake = echoing_server();
    // Mechanical repair (issue 18) would remove the echoed block: this test is about QA.
    let c = campaign("e", "revision_rounds = 0\nrepair = \"off\"\n");
    let out = c
        .cmd("run", &["--base-url", &fake.base_url])
        .env("OPENAI_API_KEY", KEY)
        .output()
        .unwrap();
    // The translated context is a leading block with no source counterpart: an
    // `injected_text` error (issue 14), so the run is not complete without an edit.
    assert_code(&out, 1);
    let report: serde_json::Value =
        serde_json::from_str(&c.read("e/validation/report.json")).unwrap();
    assert!(
        report["qa_counts"]["context_echo"].as_u64().unwrap_or(0) >= 3,
        "{}",
        report["qa_counts"]
    );
    assert!(
        report["qa_counts"]["injected_text"].as_u64().unwrap_or(0) >= 3,
        "{}",
        report["qa_counts"]
    );
}

/// With repair on (the default, issue 18) the echoed context is a leading block with no source
/// counterpart that repair removes: the output is clean, no revision is needed, and the
/// removals are listed as `injected_block` repairs.
#[test]
fn an_echoed_context_is_removed_by_mechanical_repair() {
    let fake = echoing_server();
    let c = campaign("e", "revision_rounds = 0\n");
    let out = c
        .cmd("run", &["--base-url", &fake.base_url])
        .env("OPENAI_API_KEY", KEY)
        .output()
        .unwrap();
    assert_code(&out, 0);
    let report: serde_json::Value =
        serde_json::from_str(&c.read("e/validation/report.json")).unwrap();
    assert!(
        report["qa_counts"].get("context_echo").is_none(),
        "{}",
        report["qa_counts"]
    );
    assert!(
        report["repairs_by_class"]["injected_block"]
            .as_u64()
            .unwrap_or(0)
            >= 3,
        "{}",
        report["repairs_by_class"]
    );
}
