//! Provider faults at campaign level, scripted in the fake server over HTTP: an answer
//! truncated (`finish_reason: length`) before its first block ended, by a server that cannot
//! continue it, makes the unit split losslessly at a block boundary (a single block at a
//! sentence boundary, see tests/it/sentence_split.rs; continued and partly kept answers are in
//! tests/it/long_answers.rs); a single block of one sentence
//! fails clearly; final errors (401) stop the campaign early; a unit that keeps failing is
//! reported failed while the others complete, and a re-run retries only it.

use crate::support;

use booktr::agents::Agent;
use support::fake_llm::{FakeServer, Reply};
use support::{TestCampaign, assert_code, json_summary};

const KEY: &str = "sk-booktr-faults-KEY-77aa";

const LONG_UNIT: &str = "# Long\n\nFirst paragraph about the Agent and its tools.\n\nSecond paragraph about memory and retrieval.\n\n```python\nprint('keep me')\n```\n\nThird paragraph about evaluation.\n\nFourth paragraph about deployment.\n";

fn campaign(name: &str, extra_provider: &str) -> TestCampaign {
    let c = TestCampaign::with_chapters(
        name,
        &["a.md"],
        &format!(
            "max_unit_chars = 4000\n[provider]\nkind = \"openai\"\nmodel = \"m\"\nmax_attempts = 2\n{extra_provider}"
        ),
    );
    c.write("a.md", LONG_UNIT);
    c
}

fn run(c: &TestCampaign, fake: &FakeServer) -> std::process::Output {
    c.cmd("run", &["--base-url", &fake.base_url, "--json"])
        .env("OPENAI_API_KEY", KEY)
        .output()
        .unwrap()
}

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

fn truncated() -> Reply {
    Reply::Full {
        reasoning: String::new(),
        content: "截断的".into(),
        finish: "length".into(),
    }
}

#[test]
fn truncation_without_a_higher_limit_splits_the_unit_losslessly() {
    let fake = FakeServer::start();
    let reference = campaign("s", "");
    assert_code(&run(&reference, &fake), 0);
    fake.clear();
    // Any translation request carrying the whole unit is truncated before its first block
    // ends, by a server that cannot continue a reply (the continued case is in
    // tests/it/long_answers.rs); halves are fine.
    fake.script(|r| {
        if r.agent == Agent::Translation && r.unit_text() == Some(LONG_UNIT) {
            truncated()
        } else {
            Reply::Default
        }
    });
    let c = campaign("s", "continuation = \"none\"\n");
    let out = run(&c, &fake);
    assert_code(&out, 0);
    assert_eq!(json_summary(&out)["status"], "complete");
    let j = journal(&c, "s");
    let split = j
        .iter()
        .find(|e| e["event"] == "unit_split")
        .expect("the unit was split");
    assert_eq!(split["unit"], "a-000");
    let mut halves: Vec<String> = fake
        .requests()
        .into_iter()
        .filter(|r| r.agent == Agent::Translation && r.unit_text() != Some(LONG_UNIT))
        .map(|r| r.unit_text().unwrap().to_string())
        .collect();
    assert_eq!(halves.len(), 2);
    // The halves are sent concurrently: put them in book order before joining.
    halves.sort_by_key(|h| LONG_UNIT.find(h.as_str()));
    assert_eq!(
        halves.concat(),
        LONG_UNIT,
        "the halves join back to the unit"
    );
    assert_eq!(
        c.read("s/out/a.md"),
        reference.read("s/out/a.md"),
        "reassembly is exact"
    );
    let report: serde_json::Value =
        serde_json::from_str(&c.read("s/validation/report.json")).unwrap();
    let usage = &report["summary"]["usage"]["translation"];
    assert_eq!(usage["calls"], 2, "two parts translated");
    assert_eq!(
        usage["requests"], 4,
        "and the truncated attempt, asked once more with room for its first block, is paid for and counted"
    );
    // Those two replies were paid and not kept, and the report says why.
    let nk = &report["runaway"]["not_kept"];
    assert!(nk["rejected"].as_u64().unwrap() > 0, "{nk}");
    assert!(
        nk["calls"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("before its first block ended"),
        "{nk}"
    );
}

/// A unit that cannot be split and keeps being cut.
fn cut_single_block(fake: &FakeServer) -> (TestCampaign, std::process::Output) {
    fake.script(|r| {
        if r.agent == Agent::Translation {
            truncated()
        } else {
            Reply::Default
        }
    });
    let c = TestCampaign::with_chapters(
        "b",
        &["a.md"],
        "[provider]\nkind = \"openai\"\nmodel = \"m\"\n",
    );
    c.write(
        "a.md",
        "One single paragraph that the model keeps cutting short.\n",
    );
    let out = run(&c, fake);
    (c, out)
}

#[test]
fn a_single_block_that_cannot_be_split_fails_clearly() {
    let fake = FakeServer::start();
    let (_c, out) = cut_single_block(&fake);
    assert_code(&out, 1);
    let s = json_summary(&out);
    assert_eq!(s["status"], "incomplete");
    assert_eq!(s["units"]["failed"], 1);
    assert!(
        s["last_error"].as_str().unwrap().contains("single block"),
        "{s}"
    );
}

/// report.json matched a unit's failed calls by unit id where the call key holds its
/// fingerprint, so a failed unit showed `pending` with no error.
#[test]
fn a_failed_unit_was_reported_pending_without_its_error() {
    let fake = FakeServer::start();
    let (c, out) = cut_single_block(&fake);
    assert_code(&out, 1);
    // The unit's own line in report.json names its failure too.
    let report: serde_json::Value =
        serde_json::from_str(&c.read("b/validation/report.json")).unwrap();
    let unit = &report["units"][0];
    assert_eq!(unit["outcome"], "failed", "{unit}");
    assert!(
        unit["error"]
            .as_str()
            .is_some_and(|e| e.starts_with("translate/") && e.contains("single block")),
        "{unit}"
    );
}

#[test]
fn a_rejected_key_stops_the_campaign_early_with_one_clear_message() {
    let fake = FakeServer::start();
    fake.script(|_| Reply::Status {
        code: 401,
        body: "{\"error\":{\"message\":\"Incorrect API key provided\"}}".into(),
        retry_after: None,
    });
    let c = TestCampaign::with_chapters(
        "k",
        &["a.md"],
        "max_unit_chars = 200\nconcurrency = 1\n[provider]\nkind = \"openai\"\nmodel = \"m\"\n",
    );
    c.write(
        "a.md",
        &"A paragraph about agents and tools.\n\n".repeat(30),
    );
    let out = run(&c, &fake);
    assert_code(&out, 1);
    assert_eq!(
        fake.requests().len(),
        1,
        "no retry and no further call after a 401"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("401") && err.contains("stopping"), "{err}");
    assert!(!err.contains(KEY));
}

#[test]
fn a_unit_that_keeps_failing_is_reported_and_retried_alone_on_the_next_run() {
    let fake = FakeServer::start();
    let para = |i: usize| {
        format!(
            "Paragraph number {i} about agents, which read their context window, call tools, observe the results and write notes for the next step.\n\n"
        )
    };
    let bad: &'static str = Box::leak(para(3).into_boxed_str());
    fake.script(move |r| {
        if r.unit_text() == Some(bad) {
            Reply::Status {
                code: 503,
                body: "overloaded".into(),
                retry_after: None,
            }
        } else {
            Reply::Default
        }
    });
    let c = TestCampaign::with_chapters(
        "f",
        &["a.md"],
        "max_unit_chars = 200\n[provider]\nkind = \"openai\"\nmodel = \"m\"\nmax_attempts = 3\n",
    );
    let text: String = (1..=6).map(para).collect();
    c.write("a.md", &text);
    let out = run(&c, &fake);
    assert_code(&out, 1);
    let s = json_summary(&out);
    assert_eq!(
        (
            s["units"]["translated"].as_u64(),
            s["units"]["failed"].as_u64()
        ),
        (Some(5), Some(1))
    );
    assert_eq!(
        fake.requests()
            .iter()
            .filter(|r| r.unit_text() == Some(bad))
            .count(),
        3,
        "bounded by max_attempts"
    );
    assert!(
        !c.path("f/out/a.md").exists(),
        "an incomplete chapter is not written"
    );

    fake.clear();
    fake.script(|_| Reply::Default);
    let out = run(&c, &fake);
    assert_code(&out, 0);
    let tr: Vec<_> = fake
        .requests()
        .into_iter()
        .filter(|r| r.agent == Agent::Translation)
        .collect();
    assert_eq!(tr.len(), 1);
    assert_eq!(tr[0].unit_text(), Some(bad));
}

#[test]
fn a_context_length_error_splits_the_unit() {
    let fake = FakeServer::start();
    fake.script(|r| {
        if r.agent == Agent::Translation && r.unit_text() == Some(LONG_UNIT) {
            Reply::Status { code: 400, body: "{\"error\":{\"code\":\"context_length_exceeded\",\"message\":\"This model's maximum context length is 8192 tokens\"}}".into(), retry_after: None }
        } else {
            Reply::Default
        }
    });
    let c = campaign("c", "");
    let out = run(&c, &fake);
    assert_code(&out, 0);
    assert!(
        journal(&c, "c").iter().any(|e| e["event"] == "unit_split"
            && e["reason"].as_str().unwrap().contains("context window"))
    );
    assert_eq!(
        fake.requests()
            .iter()
            .filter(|r| r.unit_text() == Some(LONG_UNIT))
            .count(),
        1,
        "a context-length error is not retried as is"
    );
}

/// Regression (a new user): for a unit too large for the model's context (a 400
/// context-length error, or a prompt the server cut short), the remedy said "raise
/// max_tokens", which bounds the reply, not the prompt. Every context failure now says to set
/// max_context_tokens to the model's context size (booktr then splits to fit) or lower
/// max_unit_chars, and a unit that cannot be split smaller says to give the model more
/// context; none mentions max_tokens.
#[test]
fn the_remedy_for_a_unit_too_large_for_the_context_said_raise_max_tokens() {
    const ONE: &str = "One single paragraph that the model cannot take in one request.\n";
    let context = || {
        Reply::Status {
        code: 400,
        body: "{\"error\":{\"code\":\"context_length_exceeded\",\"message\":\"This model's maximum context length is 8192 tokens\"}}".into(),
        retry_after: None,
    }
    };
    let fake = FakeServer::start();
    fake.script(move |r| {
        if r.agent == Agent::Translation {
            context()
        } else {
            Reply::Default
        }
    });
    let c = TestCampaign::with_chapters(
        "cx",
        &["a.md", "b.md"],
        "[provider]\nkind = \"openai\"\nmodel = \"m\"\n",
    );
    c.write("a.md", ONE);
    c.write("b.md", LONG_UNIT);
    let out = run(&c, &fake);
    assert_code(&out, 1);
    let err = String::from_utf8_lossy(&out.stderr);
    let failures: Vec<&str> = err.lines().filter(|l| l.starts_with("failed ")).collect();
    assert!(!failures.is_empty(), "{err}");
    for line in &failures {
        assert!(
            line.contains("max_context_tokens") && !line.contains("max_tokens"),
            "a context failure's remedy: {line}"
        );
    }
    let single = failures
        .iter()
        .find(|l| l.contains("single block"))
        .unwrap_or_else(|| panic!("the one-sentence unit fails: {err}"));
    assert!(single.contains("more context"), "{single}");
    let s = json_summary(&out);
    let last = s["last_error"].as_str().unwrap();
    assert!(!last.contains("max_tokens"), "{last}");
}

/// Regression (the real 1.5B model on the sample book): a short piece ending in a code
/// block's placeholder (`The schema below describes ⟦1⟧:`) was answered with an empty code
/// fence; the translation was empty after clean-up and the unit failed at once, leaving the
/// campaign incomplete. Such a reply is now asked for once more, saying what was wrong, and
/// the second answer is kept.
#[test]
fn an_empty_reply_failed_the_unit_without_asking_again() {
    let fake = FakeServer::start();
    fake.script(|r| {
        if r.agent != Agent::Translation {
            return Reply::Default;
        }
        if r.all_text().contains("Your reply held no translation") {
            Reply::Default
        } else if r.unit_text().is_some_and(|t| t.contains("Empty answer")) {
            Reply::Content("```markdown\n```".into())
        } else {
            Reply::Default
        }
    });
    let c = campaign("empty", "");
    c.write(
        "a.md",
        "# One\n\nEmpty answer: the model replies with an empty code fence to this paragraph.\n",
    );
    let out = run(&c, &fake);
    let s = json_summary(&out);
    assert_eq!(s["units"]["failed"], 0, "{s}");
    let followups: Vec<_> = fake
        .requests()
        .into_iter()
        .filter(|r| r.all_text().contains("Your reply held no translation"))
        .collect();
    assert_eq!(followups.len(), 1, "asked once more");
    // The follow-up carries the empty reply, then says what was wrong.
    let m = &followups[0].messages;
    assert_eq!(m[m.len() - 2].content, "```markdown\n```");
    let text = c.read("empty/out/a.md");
    assert!(!text.contains("Empty answer"), "translated: {text}");
    assert!(text.trim().len() > 20, "{text}");
}

/// A run where no server answered said "Some calls failed. Run the same command again" and
/// "0 failed": it names the address no server answered at and the two places to fix it.
#[test]
fn a_run_no_server_answered_named_no_remedy() {
    // A port bound and closed again: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let c = TestCampaign::with_chapters(
        "b",
        &["a.md"],
        &format!(
            "[provider]\nkind = \"openai\"\nmodel = \"m\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\nmax_attempts = 1\n"
        ),
    );
    c.write("a.md", "One paragraph to translate for the test.\n");
    let out = c
        .cmd("run", &[])
        .env("OPENAI_API_KEY", KEY)
        .output()
        .unwrap();
    assert_code(&out, 1);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "No server answered at http://127.0.0.1:{port}/v1/chat/completions: start it, or fix the address (--base-url, or base_url under [provider] in "
        )),
        "{err}"
    );
    assert!(!err.contains("Some calls failed."), "{err}");
}
