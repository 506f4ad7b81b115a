//! Issue 15, "stages do not wait for the whole book": against the fake server (real HTTP and
//! SSE, a fixed latency per request), a chapter's proofreading starts as soon as that
//! chapter's units are translated, while another chapter's translations are still being
//! answered. The evidence is the journal's own order of records.

use crate::support;

use std::time::Duration;

use booktr::agents::Agent;
use support::fake_llm::FakeServer;
use support::{TestCampaign, assert_code};

/// Every journal record of campaign `name`, in journal order.
fn journal(c: &TestCampaign, name: &str) -> Vec<serde_json::Value> {
    let mut v = Vec::new();
    for d in std::fs::read_dir(c.path(&format!("{name}/state")))
        .unwrap()
        .flatten()
    {
        if let Ok(t) = std::fs::read_to_string(d.path().join("journal.jsonl")) {
            v.extend(t.lines().filter_map(|l| serde_json::from_str(l).ok()));
        }
    }
    v
}

#[test]
fn chapter_one_is_proofread_before_chapter_two_is_translated() {
    let fake = FakeServer::start();
    // Long enough that every call of a slot-full is still out when the next slot frees.
    fake.latency(Duration::from_millis(150), Duration::ZERO);
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("books/sample");
    let chapters: Vec<String> = ["01-agents.md", "02-tools.md"]
        .iter()
        .map(|c| dir.join(c).display().to_string())
        .collect();
    let refs: Vec<&str> = chapters.iter().map(String::as_str).collect();
    let c = TestCampaign::with_chapters(
        "pipe",
        &refs,
        "max_unit_chars = 200\nconcurrency = 3\nproofread_share = 1.0\n[provider]\nkind = \"openai\"\nmodel = \"m\"\n",
    );
    let out = c
        .cmd("run", &["--base-url", &fake.base_url, "--json"])
        .env("OPENAI_API_KEY", "sk-booktr-pipe-KEY-15aa")
        .output()
        .unwrap();
    assert_code(&out, 0);
    let j = journal(&c, "pipe");
    let is = |r: &serde_json::Value, event: &str| r["event"] == event;
    let call = |r: &serde_json::Value| r["call"].as_str().unwrap_or("").to_string();
    let unit = |r: &serde_json::Value| r["unit"].as_str().unwrap_or("").to_string();
    // The answers to chapter 2's first translations, by journal position.
    let ch2_translated: Vec<usize> = j
        .iter()
        .enumerate()
        .filter(|(_, r)| {
            is(r, "call_finished")
                && call(r).starts_with("translate/")
                && call(r).ends_with("/r0")
                && unit(r).starts_with("02-tools")
        })
        .map(|(i, _)| i)
        .collect();
    assert!(
        ch2_translated.len() >= 3,
        "chapter 2 has several units: {ch2_translated:?}"
    );
    let last_ch2 = *ch2_translated.last().unwrap();
    let ch1_review = j
        .iter()
        .position(|r| is(r, "call_started") && call(r).starts_with("proofread/r0/01-agents/"))
        .expect("chapter 1 is proofread");
    assert!(
        ch1_review < last_ch2,
        "chapter 1's proofreading (journal record {ch1_review}) started before chapter 2's last translation was answered (record {last_ch2})"
    );
    // Chapter 1's review came after all of chapter 1's translations (it reads them).
    let last_ch1 = j
        .iter()
        .rposition(|r| {
            is(r, "call_finished")
                && call(r).starts_with("translate/")
                && unit(r).starts_with("01-agents")
        })
        .unwrap();
    assert!(last_ch1 < ch1_review, "{last_ch1} < {ch1_review}");
    // And chapter 2's own review waited for chapter 2.
    let ch2_review = j
        .iter()
        .position(|r| is(r, "call_started") && call(r).starts_with("proofread/r0/02-tools/"))
        .expect("chapter 2 is proofread");
    assert!(last_ch2 < ch2_review, "{last_ch2} < {ch2_review}");
    assert!(fake.count(Agent::Proofreading) >= 2);
}
