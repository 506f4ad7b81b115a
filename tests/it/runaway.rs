//! Runaway output is bounded, and account problems stop the campaign (issue 12), over real
//! HTTP and SSE against the in-repo fake server:
//!
//! - every request carries a `max_tokens` derived from what it asks for (translations: a
//!   multiple of the unit's source tokens with a floor; structured answers: their own bounds);
//! - a reply that repeats itself, or outgrows its bound while the server ignores `max_tokens`,
//!   is stopped by the stream reader long before the provider's limit, retried once at a lower
//!   temperature, never kept, and counted in the report;
//! - quota, billing and key errors (a 429 `insufficient_quota`, a 402) are not retried: the
//!   campaign stops at the first one, keeps its finished work and resumes without sending it
//!   again.

use crate::support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use booktr::agents::Agent;
use support::fake_batch::FakeBatch;
use support::fake_llm::{FakeServer, Reply};
use support::{TestCampaign, assert_code, json_summary};

const KEY: &str = "sk-booktr-runaway-KEY-5f3e";

/// One long paragraph (a single block, so it cannot be split) of about 640 tokens.
fn long_paragraph() -> String {
    (0..40)
        .map(|i| {
            format!(
                "Agent {i} reads its context window, calls a tool and records what it observed. "
            )
        })
        .collect::<String>()
        + "\n"
}

fn run(c: &TestCampaign, fake: &FakeServer) -> std::process::Output {
    c.cmd("run", &["--base-url", &fake.base_url, "--json"])
        .env("OPENAI_API_KEY", KEY)
        .output()
        .unwrap()
}

fn report(c: &TestCampaign, name: &str) -> serde_json::Value {
    serde_json::from_str(&c.read(&format!("{name}/validation/report.json"))).unwrap()
}

fn translation_requests(fake: &FakeServer) -> Vec<support::fake_llm::Recorded> {
    fake.requests()
        .into_iter()
        .filter(|r| r.agent == Agent::Translation)
        .collect()
}

/// The bound booktr documents for en → zh: `max(1024, ceil(tokens · 1.2 · 2.0))`.
fn expected_translation_bound(text: &str) -> u64 {
    let tokens = booktr::tokens::count(text) as f64;
    ((tokens * 1.2 * 2.0 - 1e-9).ceil() as u64).max(1024)
}

#[test]
fn translation_request_carries_max_tokens() {
    let fake = FakeServer::start();
    let c = TestCampaign::with_chapters(
        "mt",
        &["a.md", "b.md"],
        "max_unit_chars = 6000\nproofread_share = 1.0\n[provider]\nkind = \"openai\"\nmodel = \"m\"\n",
    );
    let long = long_paragraph();
    c.write("a.md", &long);
    c.write("b.md", "# Tools\n");
    let out = run(&c, &fake);
    assert_code(&out, 0);

    let tr = translation_requests(&fake);
    assert!(!tr.is_empty());
    let mut seen_long = false;
    let mut seen_floor = false;
    for r in &tr {
        let text = r.unit_text().unwrap();
        let asked = r.body["max_tokens"].as_u64().expect("max_tokens is sent");
        assert_eq!(asked, expected_translation_bound(text), "unit {text:?}");
        if text == long {
            seen_long = true;
            let tokens = booktr::tokens::count(&long);
            assert!(tokens > 500, "{tokens}");
            // The exact value for this unit: its tokens × 1.2 (en → zh) × 2.0, rounded up.
            assert_eq!(asked, (tokens as f64 * 2.4).ceil() as u64);
            assert!(asked > 1024);
        }
        if text.starts_with("# Tools") {
            seen_floor = true;
            assert_eq!(asked, 1024, "a heading gets the floor");
        }
    }
    assert!(seen_long && seen_floor, "both units were requested");

    // Structured requests carry bounds of their own, functions of what they ask about.
    let mut structured = 0;
    for r in fake.requests() {
        let asked = r.body["max_tokens"].as_u64();
        let user = r.messages.get(1).map(|m| m.content.as_str()).unwrap_or("");
        match r.agent {
            Agent::Glossary if user.contains(booktr::agents::glossary::CANDIDATES_HEADER) => {
                let after = user
                    .split(booktr::agents::glossary::CANDIDATES_HEADER)
                    .nth(1)
                    .unwrap();
                let n = after.lines().filter(|l| l.starts_with("- ")).count() as u64;
                assert!(n > 0);
                assert_eq!(asked, Some(256 + 80 * n), "glossary of {n} candidates");
                structured += 1;
            }
            Agent::Glossary if user.starts_with("Term: ") => {
                assert_eq!(asked, Some(512), "a reconciliation");
            }
            Agent::Glossary => {
                // The brief.
                assert_eq!(asked, Some(booktr::agents::brief::BRIEF_TOKENS as u64));
            }
            Agent::Proofreading => {
                let units = user.matches("</unit>").count() as u64;
                assert!(units > 0);
                assert_eq!(
                    asked,
                    Some(512 + 192 * units),
                    "proofreading of {units} units"
                );
                structured += 1;
            }
            Agent::Manager => {
                let findings: serde_json::Value =
                    serde_json::from_str(user.split("Findings:\n").nth(1).unwrap()).unwrap();
                let n = findings["candidates"].as_array().unwrap().len() as u64;
                assert_eq!(asked, Some(256 + 64 * n), "decision over {n} candidates");
                structured += 1;
            }
            _ => {}
        }
    }
    assert!(
        structured >= 2,
        "glossary and proofreading requests were checked"
    );

    // The campaign's max_tokens caps every bound.
    let fake2 = FakeServer::start();
    let capped = TestCampaign::with_chapters(
        "mt",
        &["a.md"],
        "max_unit_chars = 6000\n[provider]\nkind = \"openai\"\nmodel = \"m\"\nmax_tokens = 1100\n",
    );
    capped.write("a.md", &long);
    // (The fake ignores max_tokens; a short answer keeps it within the cap.)
    fake2.script(|r| {
        if r.agent == Agent::Translation {
            Reply::Content("智能体读取上下文窗口，调用工具并记录观察结果。\n".into())
        } else {
            Reply::Default
        }
    });
    let code = run(&capped, &fake2).status.code();
    assert!(matches!(code, Some(0 | 1)), "{code:?}");
    for r in fake2.requests() {
        let asked = r.body["max_tokens"].as_u64().unwrap();
        assert!(asked <= 1100, "{:?} asked {asked}", r.agent);
        if r.unit_text() == Some(long.as_str()) {
            assert_eq!(asked, 1100);
        }
    }
}

#[test]
fn runaway_repetition_is_aborted_before_provider_limit() {
    let fake = FakeServer::start();
    const PROVIDER_LIMIT: usize = 20_000;
    let first = Arc::new(AtomicUsize::new(0));
    let f2 = first.clone();
    fake.script(move |r| {
        if r.agent == Agent::Translation && f2.fetch_add(1, Ordering::SeqCst) == 0 {
            // The same sentence over and over, until the provider's limit (20,000 chunks).
            Reply::Stream {
                parts: vec!["智能体调用工具。".to_string(); PROVIDER_LIMIT],
                delay: Duration::from_millis(1),
            }
        } else {
            Reply::Default
        }
    });
    let c = TestCampaign::with_chapters(
        "rep",
        &["a.md"],
        "[provider]\nkind = \"openai\"\nmodel = \"m\"\ntemperature = 0.8\n",
    );
    c.write("a.md", "The agent calls a tool and reads the result.\n");
    let out = run(&c, &fake);
    assert_code(&out, 0);

    let sent = fake.streamed_chunks();
    assert!(
        sent < 1_000,
        "booktr stopped reading after {sent} of {PROVIDER_LIMIT} chunks"
    );
    let tr = translation_requests(&fake);
    assert_eq!(tr.len(), 2, "the runaway attempt is retried once");
    assert_eq!(tr[0].body["temperature"], 0.8);
    assert_eq!(
        tr[1].body["temperature"], 0.4,
        "the retry is sampled at half the temperature"
    );
    assert_eq!(tr[0].body["max_tokens"], tr[1].body["max_tokens"]);

    let text = c.read("rep/out/a.md");
    assert!(!text.contains("智能体调用工具"), "{text}");
    let rep = report(&c, "rep");
    assert_eq!(rep["runaway"]["replies"], 1);
    let call = &rep["runaway"]["calls"][0];
    assert_eq!(call["agent"], "translation");
    assert_eq!(call["unit"], "a-000");
    assert_eq!(call["temperature"], 0.8);
    assert_eq!(call["retry_temperature"], 0.4);
    assert!(call["reason"].as_str().unwrap().contains("repeats itself"));
    let spent = rep["runaway"]["completion_tokens"].as_u64().unwrap();
    assert!(spent > 0 && spent < 2_000, "{spent}");
    assert_eq!(rep["summary"]["runaway_replies"], 1);
    // Billed, so counted in the agent's usage too.
    let usage = &rep["summary"]["usage"]["translation"];
    assert!(usage["completion_tokens"].as_u64().unwrap() > spent);
    assert_eq!(usage["requests"], 2);
    assert!(
        c.read("rep/validation/report.md")
            .contains("Runaway replies: 1")
    );
    assert_eq!(json_summary(&out)["runaway_replies"], 1);
}

/// Finding 20 of docs/src/benchmarks.md, in the orchestration: the 1.5B answered a unit with
/// its whole translation, then wrote it again in a `markdown` fence over and over; the stream
/// reader stopped the reply (rightly), and the whole reply, the good first copy with it, was
/// thrown away: retried at a lower temperature, then the unit split in two, each paid again.
/// What came before the repetition is now the answer when it covers every block: one
/// request, no retry, the runaway journaled and reported as kept.
#[test]
fn a_whole_translation_before_a_repetition_was_thrown_away_in_the_orchestration() {
    let fake = FakeServer::start();
    let translation = "# 智能体\n\n智能体调用工具，并在决定下一步之前读取结果。\n";
    let mut parts = vec![translation.to_string()];
    for _ in 0..40 {
        parts.push(format!("\n```markdown\n{translation}```\n"));
    }
    let first = Arc::new(AtomicUsize::new(0));
    let f2 = first.clone();
    fake.script(move |r| {
        if r.agent == Agent::Translation && f2.fetch_add(1, Ordering::SeqCst) == 0 {
            Reply::Stream {
                parts: parts.clone(),
                delay: Duration::from_millis(1),
            }
        } else {
            Reply::Default
        }
    });
    let c = TestCampaign::with_chapters(
        "whole",
        &["a.md"],
        "[provider]\nkind = \"openai\"\nmodel = \"m\"\ntemperature = 0.8\n",
    );
    c.write(
        "a.md",
        "# Agents\n\nThe agent calls a tool and reads the result before it decides on the next step.\n",
    );
    let out = run(&c, &fake);
    assert_code(&out, 0);
    let tr = translation_requests(&fake);
    assert_eq!(
        tr.len(),
        1,
        "no retry and no split: the first copy was kept"
    );
    assert_eq!(c.read("whole/out/a.md"), translation);
    let rep = report(&c, "whole");
    assert_eq!(rep["runaway"]["replies"], 1);
    assert_eq!(rep["runaway"]["kept"], 1);
    let call = &rep["runaway"]["calls"][0];
    assert_eq!(call["kept"], true);
    assert!(call["retry_temperature"].is_null(), "{call}");
    assert!(call["reason"].as_str().unwrap().contains("repeats itself"));
    // Its tokens were kept, so none of them is counted as paid and not kept.
    assert_eq!(rep["runaway"]["not_kept"]["runaway_repetition"], 0);
    let kept_tokens = rep["runaway"]["kept_completion_tokens"].as_u64().unwrap();
    assert!(kept_tokens > 0, "{}", rep["runaway"]);
    let usage = &rep["summary"]["usage"]["translation"];
    assert_eq!(usage["requests"], 1);
    assert_eq!(usage["completion_tokens"].as_u64().unwrap(), kept_tokens);
    let md = c.read("whole/validation/report.md");
    assert!(
        md.contains("1 of them covered every block of the unit before the repetition, and that part was kept as the answer"),
        "{md}"
    );
    assert_eq!(json_summary(&out)["status"], "complete");
}

#[test]
fn runaway_past_the_ceiling_is_not_kept() {
    let fake = FakeServer::start();
    const PROVIDER_LIMIT: usize = 20_000;
    // Never the same text twice, and no end: the server ignores max_tokens. Without repetition
    // such a reply is stopped only at the hard ceiling (here its floor, 4,096 o200k_base
    // tokens for a one-line unit), far past what the unit needs.
    fake.script(move |r| {
        if r.agent == Agent::Translation {
            Reply::Stream {
                parts: (0..PROVIDER_LIMIT).map(|i| format!("第{i}句。")).collect(),
                delay: Duration::from_millis(1),
            }
        } else {
            Reply::Default
        }
    });
    let c = TestCampaign::with_chapters(
        "ob",
        &["a.md"],
        "[provider]\nkind = \"openai\"\nmodel = \"m\"\n",
    );
    c.write("a.md", "One paragraph the model never stops translating.\n");
    let out = run(&c, &fake);
    assert_code(&out, 1);
    let s = json_summary(&out);
    assert_eq!(s["status"], "incomplete");
    assert_eq!(s["units"]["failed"], 1);
    assert!(s["last_error"].as_str().unwrap().contains("runaway"), "{s}");

    let tr = translation_requests(&fake);
    assert_eq!(tr.len(), 2, "one retry, then the call fails");
    assert_eq!(tr[0].body["max_tokens"], 1024);
    assert!(tr[0].body.get("temperature").is_none());
    assert_eq!(
        tr[1].body["temperature"], 0.3,
        "no configured temperature: the retry uses 0.3"
    );
    let sent = fake.streamed_chunks();
    let floor = booktr::agents::bounds::CEILING_FLOOR as usize;
    assert!(
        sent > 2 * floor / 8 && sent < 2 * floor / 2,
        "each attempt stopped at its ceiling of {floor} tokens (2 to 8 tokens a chunk): {sent} chunks of {}",
        2 * PROVIDER_LIMIT
    );

    // Nothing of it is kept: no output text, no result file with it.
    let out_file = c.path("ob/out/a.md");
    if out_file.exists() {
        assert!(!c.read("ob/out/a.md").contains("第1句"));
    }
    for f in c.all_files() {
        if let Ok(t) = std::fs::read_to_string(&f) {
            assert!(!t.contains("第10句。第11句"), "kept in {}", f.display());
        }
    }
    let rep = report(&c, "ob");
    assert_eq!(rep["runaway"]["replies"], 2);
    assert!(
        rep["runaway"]["calls"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("passed the hard ceiling of 4096 tokens")
    );
    assert_eq!(rep["summary"]["runaway_replies"], 2);
    let spent = rep["runaway"]["completion_tokens"].as_u64().unwrap();
    let usage = &rep["summary"]["usage"]["translation"];
    assert_eq!(
        usage["completion_tokens"].as_u64().unwrap(),
        spent,
        "the failed call's billed tokens are the two runaways'"
    );
}

/// A unit chapter of `n` paragraphs, each its own unit with `max_unit_chars = 200`.
fn paragraphs(n: usize) -> String {
    (0..n)
        .map(|i| {
            format!(
                "Paragraph {i} explains how agent number {i} plans its next step, calls a tool and writes down what it observed for later.\n\n"
            )
        })
        .collect()
}

fn quota_campaign(name: &str) -> TestCampaign {
    let c = TestCampaign::with_chapters(
        name,
        &["a.md"],
        "max_unit_chars = 200\nconcurrency = 1\n[provider]\nkind = \"openai\"\nmodel = \"m\"\n",
    );
    c.write("a.md", &paragraphs(8));
    c
}

#[test]
fn insufficient_quota_stops_campaign_at_first_occurrence() {
    let cases = [
        (
            429,
            r#"{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}"#,
            "You exceeded your current quota",
        ),
        (
            402,
            r#"{"error":{"message":"Insufficient Balance","type":"unknown_error","param":null,"code":"invalid_request_error"}}"#,
            "Insufficient Balance",
        ),
    ];
    // Requests of a whole run, for comparison.
    let reference = FakeServer::start();
    assert_code(&run(&quota_campaign("q"), &reference), 0);
    let total = reference.requests().len();
    assert!(total > 8, "{total}");

    for (status, body, message) in cases {
        let fake = FakeServer::start();
        let n = Arc::new(AtomicUsize::new(0));
        let refused = Arc::new(AtomicUsize::new(0));
        let (n2, r2) = (n.clone(), refused.clone());
        let body = body.to_string();
        // The 3rd translation request meets the exhausted account, and every one after it.
        fake.script(move |r| {
            if r.agent == Agent::Translation && n2.fetch_add(1, Ordering::SeqCst) >= 2 {
                r2.fetch_add(1, Ordering::SeqCst);
                Reply::Status {
                    code: status,
                    body: body.clone(),
                    retry_after: None,
                }
            } else {
                Reply::Default
            }
        });
        let c = quota_campaign("q");
        let out = run(&c, &fake);
        assert_code(&out, 1);
        assert_eq!(
            refused.load(Ordering::SeqCst),
            1,
            "HTTP {status}: exactly one request met the error (no retry, no further call)"
        );
        let made_first = fake.requests().len();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(message), "HTTP {status}: {err}");
        assert!(err.contains("booktr run"), "the resume command: {err}");
        assert!(err.contains("stopping"), "{err}");
        assert!(!err.contains(KEY));
        let s = json_summary(&out);
        assert_eq!(s["status"], "incomplete");
        assert!(s["stopped"].as_str().unwrap().contains(message), "{s}");
        assert!(
            s["resume"].as_str().unwrap().starts_with("booktr run "),
            "{s}"
        );
        // Finished work is kept: two translations recorded.
        assert_eq!(s["units"]["translated"], 2, "{s}");
        for f in c.all_files() {
            if let Ok(t) = std::fs::read_to_string(&f) {
                assert!(!t.contains(KEY), "the key is in {}", f.display());
            }
        }
        let journal: String = c
            .all_files()
            .iter()
            .filter(|f| f.ends_with("journal.jsonl"))
            .map(|f| std::fs::read_to_string(f).unwrap())
            .collect();
        assert!(journal.contains("\"run_stopped\""), "{journal}");
        let finished: Vec<String> = fake
            .requests()
            .iter()
            .filter(|r| r.agent == Agent::Translation)
            .take(2)
            .filter_map(|r| r.unit_text().map(String::from))
            .collect();
        assert_eq!(finished.len(), 2);

        // The account is fixed: the re-run sends only what is missing.
        fake.clear();
        fake.script(|_| Reply::Default);
        let out = run(&c, &fake);
        assert_code(&out, 0);
        let again = fake.requests();
        assert_eq!(
            made_first - 1 + again.len(),
            total,
            "HTTP {status}: only the missing calls are made"
        );
        let texts: Vec<String> = again
            .iter()
            .filter(|r| r.agent == Agent::Translation && !r.is_revision())
            .filter_map(|r| r.unit_text().map(String::from))
            .collect();
        for t in &finished {
            assert!(!texts.contains(t), "a finished unit was sent again: {t}");
        }
        assert!(json_summary(&out)["stopped"].is_null());
    }
}

/// Regression (a new user): after a quota stop and a clean resume, the summary said
/// `complete` while `last_error` still showed the old quota error. An error is shown only
/// while its call is still failed; `status` says `none` once every call has finished.
#[test]
fn a_clean_resume_after_a_quota_stop_still_showed_the_quota_error() {
    let fake = FakeServer::start();
    let n = Arc::new(AtomicUsize::new(0));
    let n2 = n.clone();
    fake.script(move |r| {
        if r.agent == Agent::Translation && n2.fetch_add(1, Ordering::SeqCst) == 1 {
            Reply::Status {
                code: 429,
                body: r#"{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}"#.into(),
                retry_after: None,
            }
        } else {
            Reply::Default
        }
    });
    let c = quota_campaign("lq");
    let out = run(&c, &fake);
    assert_code(&out, 1);
    let s = json_summary(&out);
    assert_eq!(s["status"], "incomplete");
    assert!(
        s["last_error"]
            .as_str()
            .unwrap()
            .contains("exceeded your current quota"),
        "the stopping error is shown while it stands: {s}"
    );
    // The account is fixed; the resume redoes the stopped call and the rest.
    fake.script(|_| Reply::Default);
    let out = run(&c, &fake);
    assert_code(&out, 0);
    let s = json_summary(&out);
    assert_eq!(s["status"], "complete", "{s}");
    assert!(
        s["last_error"].is_null(),
        "a resolved error is not shown: {s}"
    );
    let status = c.cmd("status", &[]).output().unwrap();
    let text = String::from_utf8_lossy(&status.stdout);
    assert!(text.contains("last error: none"), "{text}");
}

#[test]
fn insufficient_quota_stops_a_batch_campaign_at_submission() {
    let batch = FakeBatch::new("zh");
    let fake = FakeServer::start_with("zh", batch.router());
    batch.refuse_uploads(Some((
        429,
        r#"{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","code":"insufficient_quota"}}"#,
    )));
    let c = quota_campaign("q");
    let batch_run = |c: &TestCampaign| {
        c.cmd("run", &["--base-url", &fake.base_url, "--batch", "--json"])
            .env("OPENAI_API_KEY", KEY)
            .output()
            .unwrap()
    };
    let out = batch_run(&c);
    assert_code(&out, 1);
    assert_eq!(batch.refused(), 1, "the refused submission is not retried");
    assert!(batch.batches().is_empty());
    assert_eq!(
        fake.count(Agent::Translation),
        0,
        "no translation is streamed instead"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("You exceeded your current quota"), "{err}");
    assert!(err.contains("booktr run"), "{err}");
    let s = json_summary(&out);
    assert!(
        s["stopped"]
            .as_str()
            .unwrap()
            .contains("submitting a batch")
    );

    // Credit added: the same command submits the batch and completes.
    batch.refuse_uploads(None);
    let out = batch_run(&c);
    assert_code(&out, 0);
    assert_eq!(batch.batches().len(), 1);
    assert_eq!(batch.refused(), 1);
}

/// No false positive on a real chapter: every unit of chapter 1 of the shared corpus, answered
/// by the fake (pseudo translations, which take more tokens than real Chinese), stays within
/// its bound and is never taken for a repetition. Skipped with a reason when the corpus is
/// absent.
#[booktr_test_needs::needs(corpus)]
#[test]
fn a_real_chapter_has_no_runaway_reply() {
    let Some(corpus) = support::corpus_dir() else {
        return;
    };
    let fake = FakeServer::start();
    let ch = corpus.join("en/chapter01.md");
    let c = TestCampaign::with_chapters(
        "real",
        &[ch.to_str().unwrap()],
        "[provider]\nkind = \"openai\"\nmodel = \"m\"\n",
    );
    let out = run(&c, &fake);
    assert_code(&out, 0);
    let s = json_summary(&out);
    assert_eq!(s["runaway_replies"], 0, "{s}");
    assert!(fake.count(Agent::Translation) > 10);
    assert!(
        fake.requests()
            .iter()
            .all(|r| r.body["max_tokens"].as_u64().is_some_and(|m| m >= 256)),
        "every request carries a bound"
    );
}

/// The Anthropic client reads its stream under the same guard, sends the retry's temperature,
/// and classifies a "credit balance is too low" 400 as an account problem, sent once.
#[test]
fn anthropic_runaway_and_billing_errors_are_typed() {
    use booktr::config::{ProviderKind, ProviderPlan};
    use booktr::llm::error::AccountProblem;
    use booktr::llm::{CallOptions, LlmError, Message, Request};
    use support::fake_anthropic::FakeAnthropic;

    let fake = FakeAnthropic::start();
    unsafe {
        std::env::set_var("BOOKTR_RETRY_BASE_MS", "10");
        std::env::set_var("BOOKTR_TEST_RUNAWAY_ANTHROPIC_KEY", KEY);
    }
    let plan = ProviderPlan {
        kind: ProviderKind::Anthropic,
        model: "claude-fake".into(),
        base_url: fake.base_url(),
        api_key_env: "BOOKTR_TEST_RUNAWAY_ANTHROPIC_KEY".into(),
        temperature: Some(0.6),
        max_tokens: None,
        max_output_tokens: None,
        max_attempts: 4,
        max_requests_per_minute: None,
        max_tokens_per_minute: None,
        request_timeout_s: 20,
        stream_idle_timeout_s: 2,
        connect_timeout_s: 2,
        quirks: Default::default(),
        batch_poll_ms: 20,
    };
    let p = booktr::commands::rehearsal::provider(&plan, &booktr::lang::Lang::parse("zh")).unwrap();
    let req = Request {
        task: Agent::Translation.into(),
        messages: vec![
            Message::system("You are a professional technical translator."),
            Message::user("Glossary: none"),
            Message::user("The agent calls a tool.\n"),
        ],
        json_schema: None,
        max_tokens: Some(1024),
        ceiling_tokens: None,
        prefill: None,
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();

    fake.script(|_| {
        Reply::Stream {
            parts: vec!["智能体调用工具。".to_string(); 20_000],
            delay: Duration::from_millis(1),
        }
        .into()
    });
    let started = std::time::Instant::now();
    let e = rt
        .block_on(p.complete_with(
            &req,
            CallOptions {
                temperature: Some(0.3),
            },
        ))
        .unwrap_err();
    match &e {
        LlmError::Runaway { reason, usage, .. } => {
            assert!(reason.contains("repeats itself"), "{reason}");
            assert!(usage.completion_tokens > 0 && usage.completion_tokens < 1_000);
            assert!(usage.prompt_tokens > 0);
        }
        other => panic!("{other:?}"),
    }
    assert!(started.elapsed() < Duration::from_secs(15));
    let reqs = fake.requests();
    assert_eq!(reqs.len(), 1, "a runaway is not retried by the client");
    assert_eq!(reqs[0].body["temperature"], 0.3);
    assert_eq!(reqs[0].body["max_tokens"], 1024);

    fake.script(|_| {
        Reply::Status {
            code: 400,
            body: r#"{"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."}}"#.into(),
            retry_after: None,
        }
        .into()
    });
    let e = rt.block_on(p.complete(&req)).unwrap_err();
    assert!(
        matches!(
            e,
            LlmError::Account {
                problem: AccountProblem::Billing,
                status: 400,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(e.is_fatal_for_campaign());
    assert!(e.to_string().contains("credit balance is too low"));
    assert!(!e.to_string().contains(KEY));
    assert_eq!(fake.requests().len(), 2, "sent once, not retried");
}
