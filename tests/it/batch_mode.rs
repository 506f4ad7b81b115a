//! `booktr run --batch` through the binary against the in-repo fake batch APIs over real HTTP
//! (`tests/it/support/fake_batch.rs`): the Translation requests of a stage go out as one batch
//! (OpenAI-compatible `/files` + `/batches`, Anthropic Message Batches), the answers are
//! recorded like streamed ones, failed items fall back to normal streamed calls, and a run
//! killed after the submission polls the same batch when run again instead of submitting a
//! second one. The key appears in no file and no output line.

use crate::support;

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use booktr::agents::Agent;
use support::fake_anthropic::FakeAnthropic;
use support::fake_batch::FakeBatch;
use support::fake_llm::FakeServer;
use support::{TestCampaign, assert_code, json_summary};

const KEY: &str = "sk-booktr-BATCH-5a4b3c2d1e-SECRET";

/// A chapter of `n` sections, each a heading, a paragraph and a code block.
fn chapter(n: usize) -> String {
    (1..=n)
        .map(|i| format!("## Part {i}\n\nThe agent number {i} calls a tool and reads the context window before it writes.\n\n```python\nprint({i})\n```\n\n"))
        .collect()
}

fn campaign(kind: &str, n: usize) -> TestCampaign {
    let c = TestCampaign::with_chapters(
        "b",
        &["ch.md"],
        &format!(
            "max_unit_chars = 200\n[provider]\nkind = \"{kind}\"\nmodel = \"m\"\nbatch_poll_ms = 20\n"
        ),
    );
    c.write("ch.md", &chapter(n));
    c
}

fn journal(c: &TestCampaign) -> Vec<serde_json::Value> {
    c.all_files()
        .iter()
        .filter(|p| p.ends_with("journal.jsonl"))
        .flat_map(|p| {
            std::fs::read_to_string(p)
                .unwrap()
                .lines()
                .filter_map(|l| serde_json::from_str(l).ok())
                .collect::<Vec<_>>()
        })
        .collect()
}

fn events<'a>(j: &'a [serde_json::Value], name: &str) -> Vec<&'a serde_json::Value> {
    j.iter().filter(|e| e["event"] == name).collect()
}

fn cmd(c: &TestCampaign, base_url: &str, args: &[&str]) -> Command {
    let mut a = vec!["--base-url", base_url];
    a.extend_from_slice(args);
    let mut cmd = c.cmd("run", &a);
    cmd.env("OPENAI_API_KEY", KEY)
        .env("ANTHROPIC_API_KEY", KEY)
        .env_remove("ANTHROPIC_BASE_URL");
    cmd
}

/// Asserts the key is in no file of the campaign folder and not in `printed`.
fn assert_no_key(c: &TestCampaign, printed: &[u8]) {
    assert!(!String::from_utf8_lossy(printed).contains("SECRET"));
    for f in c.all_files() {
        let text = String::from_utf8_lossy(&std::fs::read(&f).unwrap()).to_string();
        assert!(
            !text.contains("SECRET"),
            "the key leaked into {}",
            f.display()
        );
    }
}

/// Every unit translated, code blocks kept.
fn assert_translated(c: &TestCampaign, n: usize) {
    let out = c.read("b/out/ch.md");
    assert_ne!(out, chapter(n));
    for i in 1..=n {
        assert!(
            out.contains(&format!("```python\nprint({i})\n```")),
            "{out}"
        );
    }
}

fn wait_for(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn kill9(child: &mut Child) {
    let st = Command::new("kill")
        .arg("-KILL")
        .arg(child.id().to_string())
        .status()
        .unwrap();
    assert!(st.success());
    let _ = child.wait();
}

#[test]
fn openai_batch_sends_every_translation_in_one_batch_and_records_the_answers() {
    let batch = FakeBatch::new("zh");
    let fake = FakeServer::start_with("zh", batch.router());
    let c = campaign("openai", 5);
    let out = cmd(&c, &fake.base_url, &["--batch", "--json"])
        .output()
        .unwrap();
    assert_code(&out, 0);
    assert_eq!(json_summary(&out)["status"], "complete");
    let batches = batch.batches();
    assert_eq!(batches.len(), 1, "one batch for the Translate stage");
    let b = &batches[0];
    assert_eq!(b.api, "openai");
    assert!(b.items.len() >= 3, "{} items", b.items.len());
    for (body, (_, messages)) in b.bodies.iter().zip(&b.items) {
        assert_eq!(body["model"], "m");
        assert!(body.get("stream").is_none() && body.get("stream_options").is_none());
        assert_eq!(support::fake_llm::agent_of(messages), Agent::Translation);
    }
    assert_eq!(
        fake.count(Agent::Translation),
        0,
        "no streamed Translation call: the batch answered them all"
    );
    assert!(fake.count(Agent::Glossary) >= 1, "other agents stream");
    assert!(
        batch
            .keys()
            .iter()
            .all(|k| k.as_deref() == Some(&format!("Bearer {KEY}") as &str))
    );
    let j = journal(&c);
    let submitted = events(&j, "batch_submitted");
    assert_eq!(submitted.len(), 1);
    assert_eq!(submitted[0]["batch"], b.id.as_str());
    assert_eq!(
        submitted[0]["items"].as_array().unwrap().len(),
        b.items.len()
    );
    let ended = events(&j, "batch_ended");
    assert_eq!(ended.len(), 1);
    assert_eq!(ended[0]["status"], "completed");
    assert_eq!(ended[0]["succeeded"], b.items.len());
    assert_eq!(ended[0]["failed"], 0);
    let recorded: Vec<_> = events(&j, "call_finished")
        .into_iter()
        .filter(|e| e["agent"] == "translation")
        .collect();
    assert_eq!(recorded.len(), b.items.len());
    assert!(
        recorded
            .iter()
            .all(|e| e["usage"]["prompt_tokens"].as_u64().unwrap() > 10)
    );
    assert_translated(&c, 5);
    let mut printed = out.stdout.clone();
    printed.extend_from_slice(&out.stderr);
    assert_no_key(&c, &printed);
}

#[test]
fn cut_batch_answers_are_continued_not_discarded() {
    let reference = campaign("openai", 5);
    let plain = FakeServer::start();
    assert_code(
        &cmd(&reference, &plain.base_url, &["--json"])
            .output()
            .unwrap(),
        0,
    );
    let batch = FakeBatch::new("zh");
    batch.cut_translations(true);
    let fake = FakeServer::start_with("zh", batch.router());
    fake.model_tokens(1.0, true);
    let c = campaign("openai", 5);
    let out = cmd(&c, &fake.base_url, &["--batch", "--json"])
        .output()
        .unwrap();
    assert_code(&out, 0);
    assert_eq!(json_summary(&out)["status"], "complete");
    let items = batch.batches()[0].items.len();
    // Each cut answer was continued once, over the streaming endpoint, from its half.
    let continuations: Vec<_> = fake
        .requests()
        .into_iter()
        .filter(|r| r.agent == Agent::Translation)
        .collect();
    assert_eq!(continuations.len(), items);
    assert!(continuations.iter().all(|r| r.prefill.is_some()));
    let report: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(c.dir.path().join("b/validation/report.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        report["runaway"]["continued"].as_array().unwrap().len(),
        items
    );
    assert_eq!(report["runaway"]["not_kept"]["completion_tokens"], 0);
    for ch in std::fs::read_dir(reference.dir.path().join("b/out"))
        .unwrap()
        .flatten()
    {
        let name = ch.file_name();
        assert_eq!(
            std::fs::read_to_string(c.dir.path().join("b/out").join(&name)).unwrap(),
            std::fs::read_to_string(ch.path()).unwrap(),
            "{name:?} joined byte for byte"
        );
    }
}

#[test]
fn failed_batch_items_fall_back_to_normal_calls() {
    let batch = FakeBatch::new("zh");
    batch.fail_if(|id, _| id == "req-1" || id == "req-3");
    let fake = FakeServer::start_with("zh", batch.router());
    let c = campaign("openai", 5);
    let out = cmd(&c, &fake.base_url, &["--batch", "--json"])
        .output()
        .unwrap();
    assert_code(&out, 0);
    assert_eq!(json_summary(&out)["status"], "complete");
    assert_eq!(
        batch.batches().len(),
        1,
        "failed items are not batched again"
    );
    assert_eq!(
        fake.count(Agent::Translation),
        2,
        "the two failed items are sent as streamed calls"
    );
    let j = journal(&c);
    let ended = events(&j, "batch_ended");
    assert_eq!(ended.len(), 1);
    assert_eq!(ended[0]["failed"], 2);
    assert_translated(&c, 5);
}

#[test]
fn a_run_killed_after_submitting_polls_the_same_batch_when_run_again() {
    let batch = FakeBatch::new("zh");
    batch.hold(true);
    let fake = FakeServer::start_with("zh", batch.router());
    let c = campaign("openai", 4);
    let mut child = cmd(&c, &fake.base_url, &["--batch"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for("the batch_submitted journal line", || {
        !events(&journal(&c), "batch_submitted").is_empty()
    });
    wait_for("a poll", || batch.polls() >= 2);
    kill9(&mut child);
    assert_eq!(batch.batches().len(), 1);
    assert!(!c.path("b/out/ch.md").exists(), "nothing was recorded yet");
    let status = c.cmd("status", &[]).output().unwrap();
    assert_code(&status, 0);
    let shown = String::from_utf8_lossy(&status.stdout);
    assert!(
        shown.contains(&format!("open batch: {}", batch.batches()[0].id)),
        "{shown}"
    );

    // The provider finishes the batch while booktr is not running; the next run polls it.
    batch.hold(false);
    let out = cmd(&c, &fake.base_url, &["--batch", "--json"])
        .output()
        .unwrap();
    assert_code(&out, 0);
    assert_eq!(json_summary(&out)["status"], "complete");
    assert_eq!(batch.batches().len(), 1, "submitted once, not again");
    assert_eq!(fake.count(Agent::Translation), 0);
    let j = journal(&c);
    assert_eq!(events(&j, "batch_submitted").len(), 1);
    let ended = events(&j, "batch_ended");
    assert_eq!(ended.len(), 1);
    assert_eq!(ended[0]["batch"], batch.batches()[0].id.as_str());
    assert!(String::from_utf8_lossy(&out.stderr).contains("submitted earlier"));
    assert_translated(&c, 4);
}

#[test]
fn anthropic_message_batches_translate_and_resume_without_resubmitting() {
    let batch = FakeBatch::new("zh");
    batch.hold(true);
    let fake = FakeAnthropic::start_with("zh", batch.router());
    let c = campaign("anthropic", 4);
    let mut child = cmd(&c, &fake.base_url(), &["--batch"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for("the batch_submitted journal line", || {
        !events(&journal(&c), "batch_submitted").is_empty()
    });
    wait_for("a poll", || batch.polls() >= 2);
    kill9(&mut child);
    let batches = batch.batches();
    assert_eq!(batches.len(), 1);
    let b = &batches[0];
    assert_eq!(b.api, "anthropic");
    assert!(b.items.len() >= 2);
    for params in &b.bodies {
        assert_eq!(params["model"], "m");
        assert_eq!(params["system"][0]["cache_control"]["type"], "ephemeral");
        assert!(params.get("stream").is_none());
    }
    // Run again *without* --batch: the open batch is paid for, so it is still polled.
    batch.hold(false);
    let out = cmd(&c, &fake.base_url(), &["--json"]).output().unwrap();
    assert_code(&out, 0);
    assert_eq!(json_summary(&out)["status"], "complete");
    assert_eq!(batch.batches().len(), 1, "submitted once");
    assert_eq!(fake.count(Agent::Translation), 0);
    assert!(fake.count(Agent::Glossary) >= 1);
    assert!(batch.keys().iter().all(|k| k.as_deref() == Some(KEY)));
    let j = journal(&c);
    assert_eq!(events(&j, "batch_submitted").len(), 1);
    let ended = events(&j, "batch_ended");
    assert_eq!(ended.len(), 1);
    assert_eq!(ended[0]["status"], "ended");
    assert_eq!(ended[0]["succeeded"], b.items.len());
    assert_translated(&c, 4);
    let mut printed = out.stdout.clone();
    printed.extend_from_slice(&out.stderr);
    assert_no_key(&c, &printed);
}

#[test]
fn batch_with_the_pseudo_provider_says_so_and_streams() {
    let c = TestCampaign::with_chapters("b", &["ch.md"], "max_unit_chars = 200\n");
    c.write("ch.md", &chapter(2));
    let out = c.cmd("run", &["--batch", "--json"]).output().unwrap();
    assert_code(&out, 0);
    assert!(String::from_utf8_lossy(&out.stderr).contains("no batch API"));
    assert!(events(&journal(&c), "batch_submitted").is_empty());
}

#[test]
fn an_endpoint_without_a_batch_api_is_streamed_with_a_note() {
    let fake = FakeServer::start();
    let c = campaign("openai", 3);
    let out = cmd(&c, &fake.base_url, &["--batch", "--json"])
        .output()
        .unwrap();
    assert_code(&out, 0);
    assert_eq!(json_summary(&out)["status"], "complete");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("HTTP 404") && stderr.contains("no batch API"),
        "{stderr}"
    );
    assert!(fake.count(Agent::Translation) >= 2);
    assert!(events(&journal(&c), "batch_submitted").is_empty());
    assert_translated(&c, 3);
}

#[test]
fn sigterm_while_polling_stops_with_130_and_leaves_the_batch_open_for_the_next_run() {
    let batch = FakeBatch::new("zh");
    batch.hold(true);
    let fake = FakeServer::start_with("zh", batch.router());
    let c = campaign("openai", 3);
    let child = cmd(&c, &fake.base_url, &["--batch"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for("a poll", || batch.polls() >= 2);
    let st = Command::new("kill")
        .arg("-TERM")
        .arg(child.id().to_string())
        .status()
        .unwrap();
    assert!(st.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j = journal(&c);
    assert!(j.iter().any(|e| e["event"] == "run_interrupted"));
    assert_eq!(events(&j, "batch_submitted").len(), 1);
    assert!(events(&j, "batch_ended").is_empty(), "the batch stays open");
    batch.hold(false);
    let out = cmd(&c, &fake.base_url, &["--batch", "--json"])
        .output()
        .unwrap();
    assert_code(&out, 0);
    assert_eq!(batch.batches().len(), 1, "submitted once");
    assert_eq!(fake.count(Agent::Translation), 0);
    assert_eq!(events(&journal(&c), "batch_ended").len(), 1);
    assert_translated(&c, 3);
}
