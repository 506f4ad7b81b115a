//! The whole book in one campaign (issue #5): on the 11 files of the shared corpus the
//! campaign completes with the pseudo provider and against the fake server, no request exceeds
//! `max_context_tokens` (the largest request the fake saw is checked), the Manager's context
//! stays flat (whole book ≤ 1.25 × two chapters, and under 2,000 tokens), and the agents other
//! than Translation use at most 30 % of its prompt tokens.

use crate::support;

use std::path::Path;

use booktr::agents::Agent;
use support::fake_llm::FakeServer;
use support::{TestCampaign, assert_code, corpus_dir, json_summary};

fn chapters(corpus: &Path, names: &[&str]) -> Vec<String> {
    names
        .iter()
        .map(|n| corpus.join("en").join(n).to_string_lossy().into_owned())
        .collect()
}

const WHOLE: &[&str] = &[
    "introduction.md",
    "chapter01.md",
    "chapter02.md",
    "chapter03.md",
    "chapter04.md",
    "chapter05.md",
    "chapter06.md",
    "chapter07.md",
    "chapter08.md",
    "chapter09.md",
    "chapter10.md",
];

fn run(
    name: &str,
    chapters: &[String],
    extra: &str,
    args: &[&str],
    env: &[(&str, &str)],
) -> (TestCampaign, serde_json::Value) {
    let refs: Vec<&str> = chapters.iter().map(String::as_str).collect();
    let c = TestCampaign::with_chapters(name, &refs, extra);
    let mut args = args.to_vec();
    args.push("--json");
    let mut cmd = c.cmd("run", &args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    assert_code(&out, 0);
    let s = json_summary(&out);
    assert_eq!(s["status"], "complete");
    (c, s)
}

#[booktr_test_needs::needs(corpus)]
#[test]
fn the_whole_book_runs_with_a_flat_manager_and_a_lean_token_budget() {
    let Some(corpus) = corpus_dir() else { return };
    let (_, two) = run(
        "two",
        &chapters(&corpus, &["chapter01.md", "chapter02.md"]),
        "",
        &[],
        &[],
    );
    let (_, whole) = run(
        "whole",
        &chapters(&corpus, WHOLE),
        "concurrency = 8\n",
        &[],
        &[],
    );
    let (p2, pw) = (
        two["manager_context_peak_tokens"].as_f64().unwrap(),
        whole["manager_context_peak_tokens"].as_f64().unwrap(),
    );
    println!(
        "manager context peak: two chapters {p2} tokens, whole book {pw} tokens (ratio {:.2})",
        pw / p2
    );
    assert!(
        pw <= 1.25 * p2,
        "whole book {pw} > 1.25 × two chapters {p2}"
    );
    assert!(pw < 2000.0);
    assert_eq!(
        whole["units"]["translated"],
        whole["units"]["total"].as_u64().unwrap() - whole["units"]["copied"].as_u64().unwrap()
    );
    let u = &whole["usage"];
    let tokens = |a: &str| u[a]["prompt_tokens"].as_u64().unwrap() as f64;
    let others = tokens("glossary") + tokens("proofreading") + tokens("manager");
    println!(
        "prompt tokens: translation {}, glossary {}, proofreading {}, manager {} (others / translation = {:.3})",
        tokens("translation"),
        tokens("glossary"),
        tokens("proofreading"),
        tokens("manager"),
        others / tokens("translation")
    );
    assert!(others <= 0.30 * tokens("translation"));
    assert!(
        u["glossary"]["calls"].as_u64().unwrap() >= 2,
        "the glossary is built in batches over the whole book"
    );
}

#[booktr_test_needs::needs(corpus)]
#[test]
fn no_request_to_the_fake_exceeds_the_input_budget_on_the_whole_book() {
    let Some(corpus) = corpus_dir() else { return };
    let fake = FakeServer::start();
    let budget = 12_000;
    let (_, s) = run(
        "fake",
        &chapters(&corpus, WHOLE),
        &format!(
            // Proofreading (off by default, finding 21) is on: its batches must fit too.
            "concurrency = 8\nmax_context_tokens = {budget}\nproofread_share = 0.2\n[provider]\nkind = \"openai\"\nmodel = \"m\"\n"
        ),
        &["--base-url", &fake.base_url],
        &[("OPENAI_API_KEY", "sk-booktr-scale-KEY")],
    );
    let reqs = fake.requests();
    let largest = reqs
        .iter()
        .map(|r| booktr::tokens::count_messages(r.messages.iter().map(|m| m.content.as_str())))
        .max()
        .unwrap();
    println!(
        "{} requests, largest {largest} prompt tokens (budget {budget})",
        reqs.len()
    );
    assert!(
        largest <= budget,
        "a request of {largest} tokens exceeded the budget of {budget}"
    );
    // The Manager is asked only when the reviewer flags a unit QA does not already send back
    // (the fake reviewer does not); its decision is then taken without a model call.
    for agent in [Agent::Glossary, Agent::Translation, Agent::Proofreading] {
        assert!(fake.count(agent) > 0, "{agent} made no call");
    }
    assert!(s["usage"]["proofreading"]["calls"].as_u64().unwrap() >= 2);
}
