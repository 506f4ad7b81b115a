//! Single-agent mode (`booktr run --mode single-agent`) against the in-repo fake server over
//! HTTP: one growing conversation whose context peak grows with the book, a resume after
//! SIGKILL that rebuilds the conversation from the saved translations without sending a
//! finished turn again, its own fingerprint (mode included), and the clean "context exhausted
//! at unit N" stop, from the budget or from the provider.

use crate::support;

use std::collections::BTreeSet;
use std::process::Child;
use std::time::{Duration, Instant};

use booktr::llm::Role;
use support::fake_llm::{FakeServer, Recorded, Reply};
use support::{TestCampaign, assert_code, json_summary};

const KEY: &str = "sk-booktr-single-KEY-51c0";

fn chapter(tag: &str, n: usize) -> String {
    let mut s = format!("# Part {tag}\n\n");
    for i in 0..n {
        s.push_str(&format!(
            "## Section {tag}{i}\n\nThe Agent {i} of {tag} reads its context window, calls a tool and records what it saw for the next step.\n\n```sh\necho {tag}{i}\n```\n\n"
        ));
    }
    s
}

fn campaign(name: &str, units_per_chapter: usize, extra: &str) -> TestCampaign {
    let c = TestCampaign::with_chapters(
        name,
        &["a.md", "b.md"],
        &format!(
            "max_unit_chars = 300\n{extra}\n[provider]\nkind = \"openai\"\nmodel = \"fake-model\"\n"
        ),
    );
    c.write("a.md", &chapter("A", units_per_chapter));
    c.write("b.md", &chapter("B", units_per_chapter));
    c
}

fn single(c: &TestCampaign, fake: &FakeServer) -> std::process::Command {
    let mut cmd = c.cmd(
        "run",
        &[
            "--mode",
            "single-agent",
            "--base-url",
            &fake.base_url,
            "--json",
        ],
    );
    cmd.env("OPENAI_API_KEY", KEY);
    cmd
}

/// The journal of the single-agent state (one configuration directory).
fn journal(c: &TestCampaign, name: &str) -> Vec<serde_json::Value> {
    let mut v = Vec::new();
    if let Ok(rd) = std::fs::read_dir(c.path(&format!("{name}/state/single-agent"))) {
        for d in rd.flatten() {
            if let Ok(t) = std::fs::read_to_string(d.path().join("journal.jsonl")) {
                v.extend(t.lines().filter_map(|l| serde_json::from_str(l).ok()));
            }
        }
    }
    v
}

fn finished(c: &TestCampaign, name: &str) -> Vec<serde_json::Value> {
    journal(c, name)
        .into_iter()
        .filter(|e| e["event"] == "call_finished")
        .collect()
}

/// The unit a conversation turn translates: its last user message.
fn last_user(r: &Recorded) -> String {
    let m = r.messages.last().unwrap();
    assert_eq!(m.role, Role::User);
    m.content.clone()
}

fn prompt_tokens(r: &Recorded) -> usize {
    booktr::tokens::count_messages(r.messages.iter().map(|m| m.content.as_str()))
}

/// The baseline a user writes instead of booktr: every unit in a request of its own, with the
/// same system prompt (guide and house glossary), nothing carried from one unit to the next;
/// its own state and outputs; a second run sends nothing again.
#[test]
fn the_stateless_loop_sends_each_unit_alone_with_the_same_system_prompt_and_resumes_for_free() {
    let fake = FakeServer::start();
    let c = campaign("l", 4, "");
    let run = || {
        c.cmd(
            "run",
            &[
                "--mode",
                "stateless-loop",
                "--base-url",
                &fake.base_url,
                "--json",
            ],
        )
        .env("OPENAI_API_KEY", KEY)
        .output()
        .unwrap()
    };
    let out = run();
    assert_code(&out, 0);
    let s = json_summary(&out);
    assert_eq!(s["mode"], "stateless-loop");
    assert_eq!(s["status"], "complete");
    let total = s["units"]["total"].as_u64().unwrap() as usize;
    assert!(total >= 8, "{s}");
    assert_eq!(s["units"]["translated"].as_u64().unwrap() as usize, total);
    let reqs = fake.requests();
    assert_eq!(reqs.len(), total, "one request per unit, nothing else");
    let system = &reqs[0].messages[0].content;
    assert!(system.contains(booktr::experiment::single_agent::MARKER));
    assert!(!system.contains("in this conversation"), "{system}");
    let mut units = BTreeSet::new();
    for r in &reqs {
        assert_eq!(r.messages.len(), 2, "system prompt and the unit only");
        assert_eq!(r.messages[0].role, Role::System);
        assert_eq!(
            &r.messages[0].content, system,
            "the same system prompt every time"
        );
        units.insert(last_user(r));
    }
    assert_eq!(units.len(), total, "every unit sent once");
    // The peak is one unit's request, not the book's.
    let peak = s["main_context_peak_tokens"].as_u64().unwrap() as usize;
    let largest = reqs.iter().map(prompt_tokens).max().unwrap();
    assert!(
        peak <= largest + 8,
        "peak {peak}, largest request {largest}"
    );
    assert!(c.path("l/out/stateless-loop/a.md").is_file());
    assert!(c.path("l/state/stateless-loop").is_dir());
    // Resume: everything is in the checkpoint.
    fake.clear();
    let out = run();
    assert_code(&out, 0);
    let s = json_summary(&out);
    assert_eq!(
        s["units"]["reused"].as_u64().unwrap() as usize,
        total,
        "{s}"
    );
    assert!(fake.requests().is_empty(), "nothing is sent again");
}

#[test]
fn one_growing_conversation_whose_context_peak_grows_with_the_book() {
    let fake = FakeServer::start();
    let c = campaign("s", 4, "");
    let out = single(&c, &fake).output().unwrap();
    assert_code(&out, 0);
    let s = json_summary(&out);
    assert_eq!(s["mode"], "single-agent");
    assert_eq!(s["status"], "complete");
    assert_eq!(s["rehearsal"], false);
    let total = s["units"]["total"].as_u64().unwrap() as usize;
    assert!(total >= 8, "{s}");
    assert_eq!(s["units"]["translated"].as_u64().unwrap() as usize, total);
    let reqs = fake.requests();
    assert_eq!(reqs.len(), total, "one request per unit, nothing else");
    // No Glossary agent, no proofreading, no Manager: every request is a conversation turn.
    assert!(reqs.iter().all(|r| r.is_single_agent()));
    for (i, r) in reqs.iter().enumerate() {
        // System prompt, then (user, assistant) per earlier unit, then this unit.
        assert_eq!(r.messages.len(), 2 + 2 * i, "request {i}");
        assert_eq!(r.messages[0].role, Role::System);
        for (k, earlier) in reqs[..i].iter().enumerate() {
            assert_eq!(r.messages[1 + 2 * k].role, Role::User);
            assert_eq!(r.messages[2 + 2 * k].role, Role::Assistant);
            // Earlier turns are sent exactly as they were the first time.
            assert_eq!(r.messages[1 + 2 * k].content, last_user(earlier));
        }
        if i > 0 {
            assert_eq!(r.messages[..2 * i], reqs[i - 1].messages[..2 * i]);
        }
    }
    // The context grows with the book: every prompt is larger than the one before.
    let sizes: Vec<usize> = reqs.iter().map(prompt_tokens).collect();
    assert!(sizes.windows(2).all(|w| w[1] > w[0]), "{sizes:?}");
    let peak = s["main_context_peak_tokens"].as_u64().unwrap() as usize;
    assert_eq!(
        peak,
        *sizes.last().unwrap(),
        "the peak is the largest prompt sent"
    );
    // It holds every earlier unit and its translation: at least the first prompt plus the
    // tokens of every earlier unit's source.
    let earlier: usize = reqs[..reqs.len() - 1]
        .iter()
        .map(|r| booktr::tokens::count(&last_user(r)))
        .sum();
    assert!(
        peak > sizes[0] + earlier && peak > 2 * sizes[0],
        "peak {peak}, first prompt {}, earlier units {earlier}",
        sizes[0]
    );
    // Each turn journals its conversation size; they grow the same way.
    let ctx: Vec<usize> = finished(&c, "s")
        .iter()
        .map(|e| e["ctx_tokens"].as_u64().unwrap() as usize)
        .collect();
    assert_eq!(ctx, sizes);
    // Real usage from the server, and the chapters are written under out/single-agent/.
    assert_eq!(
        s["usage"]["translation"]["prompt_tokens"].as_u64().unwrap() as usize,
        sizes.iter().sum::<usize>()
    );
    for ch in ["a.md", "b.md"] {
        let text = c.read(&format!("s/out/single-agent/{ch}"));
        assert!(text.contains("```sh\necho "), "{ch}: code kept");
        assert_ne!(text, c.read(ch));
    }
    // Its own fingerprint: the orchestration run of the same campaign does not share its state.
    let fp = s["fingerprint"].as_str().unwrap().to_string();
    let out = c
        .cmd("run", &["--base-url", &fake.base_url, "--json"])
        .env("OPENAI_API_KEY", KEY)
        .output()
        .unwrap();
    assert_code(&out, 0);
    let o = json_summary(&out);
    assert_ne!(o["fingerprint"].as_str().unwrap(), fp);
    let manifests = std::fs::read_dir(c.path("s/state/single-agent"))
        .unwrap()
        .flatten()
        .map(|d| d.path().join("manifests").join(format!("{fp}.json")))
        .find(|p| p.exists())
        .expect("the single-agent manifest");
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(manifests).unwrap()).unwrap();
    assert_eq!(m["mode"], "single-agent");
    // A second run sends nothing: every turn is rebuilt from the checkpoint.
    fake.clear();
    let out = single(&c, &fake).output().unwrap();
    assert_code(&out, 0);
    let again = json_summary(&out);
    assert_eq!(fake.requests().len(), 0);
    assert_eq!(again["units"]["reused"].as_u64().unwrap() as usize, total);
    assert_eq!(
        again["main_context_peak_tokens"].as_u64().unwrap() as usize,
        peak
    );
}

fn wait_for_finished(c: &TestCampaign, name: &str, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while finished(c, name).len() < n {
        assert!(Instant::now() < deadline, "no progress");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn resume_after_sigkill_rebuilds_the_conversation_and_never_resends_a_finished_turn() {
    let fake = FakeServer::start();
    let c = campaign("k", 5, "");
    // Uninterrupted reference run of the same book, to compare outputs.
    let reference = campaign("r", 5, "");
    assert_code(&single(&reference, &fake).output().unwrap(), 0);
    let uninterrupted = fake.requests();
    fake.clear();
    fake.latency(Duration::from_millis(60), Duration::ZERO);
    let mut child: Child = single(&c, &fake)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_for_finished(&c, "k", 4);
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let done: Vec<serde_json::Value> = finished(&c, "k");
    assert!(done.len() >= 4);
    let done_units: BTreeSet<String> = done
        .iter()
        .map(|e| e["unit"].as_str().unwrap().to_string())
        .collect();
    let before = fake.requests();
    fake.clear();
    fake.latency(Duration::ZERO, Duration::ZERO);
    let out = single(&c, &fake).output().unwrap();
    assert_code(&out, 0);
    let s = json_summary(&out);
    assert_eq!(s["status"], "complete");
    // A kill between a result file and its journal line leaves one more turn saved: the
    // resume adopts it.
    let reused = s["units"]["reused"].as_u64().unwrap() as usize;
    assert!(
        reused == done.len() || reused == done.len() + 1,
        "{reused} reused, {} journaled before the kill",
        done.len()
    );
    let total = s["units"]["total"].as_u64().unwrap() as usize;
    let resumed = fake.requests();
    // Only the turns not finished before the kill are sent.
    assert_eq!(resumed.len(), total - reused);
    let finished_sources: BTreeSet<String> = before.iter().take(reused).map(last_user).collect();
    assert_eq!(finished_sources.len(), reused);
    for r in &resumed {
        assert!(
            !finished_sources.contains(&last_user(r)),
            "a finished turn was sent again"
        );
    }
    // The first resumed request carries the rebuilt conversation: the saved translations as
    // assistant turns, exactly as the server answered them before the kill.
    let first = &resumed[0];
    assert_eq!(first.messages.len(), 2 + 2 * reused);
    let last_before = &before[reused - 1];
    assert_eq!(
        first.messages[..2 * reused],
        last_before.messages[..],
        "the conversation up to the last finished unit is rebuilt unchanged"
    );
    assert_eq!(first.messages[2 * reused].role, Role::Assistant);
    // Byte for byte the request an uninterrupted run sends at that point.
    assert_eq!(first.messages, uninterrupted[reused].messages);
    // Same chapters as the uninterrupted run, and every unit exactly once in the journal.
    for ch in ["a.md", "b.md"] {
        assert_eq!(
            c.read(&format!("k/out/single-agent/{ch}")),
            reference.read(&format!("r/out/single-agent/{ch}"))
        );
    }
    let units: Vec<String> = finished(&c, "k")
        .iter()
        .map(|e| e["unit"].as_str().unwrap().to_string())
        .collect();
    let unique: BTreeSet<&String> = units.iter().collect();
    assert_eq!(units.len(), total);
    assert_eq!(unique.len(), total);
    assert!(done_units.iter().all(|u| units.contains(u)));
    // The context peak is the whole conversation, the same as without the kill.
    assert_eq!(
        s["main_context_peak_tokens"],
        json_summary(&single(&reference, &fake).output().unwrap())["main_context_peak_tokens"]
    );
}

#[test]
fn context_exhaustion_stops_cleanly_at_unit_n_before_sending_it() {
    let fake = FakeServer::start();
    // 2000 tokens (the smallest budget allowed) hold the system prompt and a few turns only.
    let c = campaign("x", 12, "max_context_tokens = 2000");
    let out = single(&c, &fake).output().unwrap();
    assert_code(&out, 1);
    let s = json_summary(&out);
    assert_eq!(s["status"], "context_exhausted");
    let n = s["exhausted"]["index"].as_u64().unwrap() as usize;
    let total = s["units"]["total"].as_u64().unwrap() as usize;
    assert!(n > 1 && n < total, "exhausted at {n} of {total}");
    assert_eq!(s["units"]["translated"].as_u64().unwrap() as usize, n - 1);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("context exhausted at unit {n} (")),
        "{err}"
    );
    assert!(
        !err.to_lowercase().contains("http"),
        "not an API error: {err}"
    );
    // Unit N was never sent: N-1 requests, all within the budget.
    let reqs = fake.requests();
    assert_eq!(reqs.len(), n - 1);
    assert!(reqs.iter().all(|r| prompt_tokens(r) <= 2000));
    assert!(s["exhausted"]["tokens"].as_u64().unwrap() > 2000);
    let events: Vec<serde_json::Value> = journal(&c, "x")
        .into_iter()
        .filter(|e| e["event"] == "context_exhausted")
        .collect();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["index"].as_u64().unwrap() as usize, n);
    assert_eq!(events[0]["budget"], 2000);
    // A resume with the same budget sends nothing and records nothing new.
    fake.clear();
    let out = single(&c, &fake).output().unwrap();
    assert_code(&out, 1);
    assert_eq!(fake.requests().len(), 0);
    assert_eq!(
        journal(&c, "x")
            .iter()
            .filter(|e| e["event"] == "context_exhausted")
            .count(),
        1
    );
}

#[test]
fn a_provider_refusing_the_conversation_as_too_long_is_context_exhaustion_not_an_error() {
    let fake = FakeServer::start();
    fake.script(|r| {
        if r.messages.len() > 5 {
            Reply::Status {
                code: 400,
                body: r#"{"error": {"code": "context_length_exceeded", "message": "This model's maximum context length is 128 tokens."}}"#.into(),
                retry_after: None,
            }
        } else {
            Reply::Default
        }
    });
    let c = campaign("p", 3, "");
    let out = single(&c, &fake).output().unwrap();
    assert_code(&out, 1);
    let s = json_summary(&out);
    assert_eq!(s["status"], "context_exhausted");
    // Turns 1 and 2 fit (2 and 4 messages); the third (6 messages) was refused.
    assert_eq!(s["exhausted"]["index"], 3);
    assert_eq!(s["exhausted"]["tokens"], 0);
    assert!(
        s["exhausted"]["reason"]
            .as_str()
            .unwrap()
            .contains("refused the conversation as too long"),
        "{s}"
    );
    assert_eq!(s["units"]["translated"], 2);
    // Refused once, not retried.
    assert_eq!(fake.requests().len(), 3);
    assert!(String::from_utf8_lossy(&out.stderr).contains("context exhausted at unit 3 ("));
}

/// The translation of `chapter("A", 1)`'s one unit, block for block.
const PART_A: &str = "# 第 A 部分\n\n## 第 A0 节\n\nA 的智能体 0 读取它的上下文窗口，调用一个工具，并为下一步记录它看到的内容。\n\n```sh\necho A0\n```\n\n";

/// A fake server that answers chapter A's unit with `text` streamed in chunks of 9
/// characters and no end (the runaway guard must stop it), and every other unit with the
/// pseudo translation.
fn endless_at_a0(text: String) -> FakeServer {
    let fake = FakeServer::start();
    fake.script(move |r: &Recorded| {
        if last_user(r).contains("Section A0") {
            let chars: Vec<char> = text.chars().collect();
            Reply::Stream {
                parts: chars.chunks(9).map(|c| c.iter().collect()).collect(),
                delay: Duration::from_millis(0),
            }
        } else {
            Reply::Default
        }
    });
    fake
}

/// Issue 31, finding 20 (recorded from the 1.5B on the quality benchmark's slice): a reply
/// that translated its unit and then wrote the translation again and again was stopped by the
/// runaway guard, and the unit was left untranslated: the single pass lost 16 of its 24 units
/// that way, each with a whole translation in its first copy. The part before the repetition
/// is now kept as a reply cut there, and the runaway is journaled.
#[test]
fn a_translation_written_again_and_again_was_thrown_away_in_the_single_pass() {
    let fake = endless_at_a0(format!("{PART_A}{}", PART_A.repeat(15)));
    let c = campaign("rw", 1, "");
    let out = single(&c, &fake).output().unwrap();
    assert_code(&out, 0);
    let s = json_summary(&out);
    assert_eq!(s["status"], "complete", "{s}");
    let text = c.read("rw/out/single-agent/a.md");
    assert_eq!(text.matches("第 A0 节").count(), 1, "{text}");
    assert_eq!(text.matches("echo A0").count(), 1, "{text}");
    assert!(text.contains("A 的智能体 0 读取它的上下文窗口"), "{text}");
    let j = journal(&c, "rw");
    let runaways: Vec<_> = j.iter().filter(|e| e["event"] == "runaway_reply").collect();
    assert_eq!(runaways.len(), 1, "{j:?}");
    assert!(
        runaways[0]["reason"]
            .as_str()
            .unwrap()
            .contains("repeats itself"),
        "{:?}",
        runaways[0]
    );
    assert!(runaways[0]["usage"]["completion_tokens"].as_u64().unwrap() > 0);
    // The part before the repetition held the whole translation, its last block too: no
    // follow-up request for the rest of the unit.
    let reqs = fake.requests();
    assert_eq!(reqs.len(), 2, "one request per unit");
    // The next turn's conversation holds the translation once.
    let next = reqs
        .iter()
        .find(|r| last_user(r).contains("Section B0"))
        .unwrap();
    let turn = &next.messages[next.messages.len() - 2];
    assert_eq!(turn.role, Role::Assistant);
    assert_eq!(
        turn.content.matches("第 A0 节").count(),
        1,
        "{}",
        turn.content
    );
}

/// A runaway the single pass could keep nothing of (a short passage from its first
/// character) failed the unit, and the tokens it had cost were not counted: the call was
/// journaled with zero usage, so the baseline's token total left out what it had paid for
/// (the 1.5B's single pass on the quality benchmark's slice: 24 requests, 13,963 prompt
/// tokens counted).
#[test]
fn a_runaway_in_the_single_pass_left_its_tokens_uncounted() {
    let fake = endless_at_a0("1.".repeat(600));
    let c = campaign("rt", 1, "");
    let out = single(&c, &fake).output().unwrap();
    assert_code(&out, 1);
    let s = json_summary(&out);
    assert_eq!(s["status"], "incomplete", "{s}");
    let failed: Vec<_> = journal(&c, "rt")
        .into_iter()
        .filter(|e| e["event"] == "call_failed")
        .collect();
    assert_eq!(failed.len(), 1, "{failed:?}");
    let usage = &failed[0]["usage"];
    assert!(usage["prompt_tokens"].as_u64().unwrap() > 100, "{usage}");
    assert!(usage["completion_tokens"].as_u64().unwrap() > 0, "{usage}");
    assert!(
        failed[0]["error"]
            .as_str()
            .unwrap()
            .contains("runaway reply"),
        "{:?}",
        failed[0]
    );
    // The summary's usage holds it: more prompt tokens than the turns that finished sent.
    let finished_prompt: u64 = finished(&c, "rt")
        .iter()
        .map(|e| e["usage"]["prompt_tokens"].as_u64().unwrap_or(0))
        .sum();
    let total = s["usage"]["translation"]["prompt_tokens"].as_u64().unwrap();
    assert!(total > finished_prompt, "{total} vs {finished_prompt}");
}
