//! A long answer is not a runaway: against the in-repo fake server, whose model can count its
//! tokens at 1, 2 and 3 times `o200k_base`'s for Chinese and honours `max_tokens` as a real
//! server does (`FakeServer::model_tokens`), every unit is translated and no reply that does
//! not repeat itself is discarded:
//!
//! - a reply cut at `max_tokens` is continued (a final assistant message) and joined byte for
//!   byte: the book comes out identical to a run whose replies were never cut;
//! - where the server cannot continue a reply, the part that ends on a block boundary is kept
//!   and only the rest of the unit is asked for;
//! - the bound learns the model: after a few replies, requests carry a `max_tokens` in the
//!   model's own tokens, journaled (`output_bound`);
//! - a reply that loops is still stopped early;
//! - a run killed in the middle of a continuation resumes from the checkpointed part;
//! - `booktr experiment` translates every unit in both arms against a 3× server.

use crate::support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use booktr::agents::Agent;
use support::fake_llm::{FakeServer, Reply};
use support::{TestCampaign, assert_code, json_summary};

const KEY: &str = "sk-booktr-long-answers-KEY-31c9";

/// A chapter of long units: prose, a list of `items` items and a table of `items` rows per
/// section, the shapes whose translations run longest in tokens.
fn chapter(tag: &str, sections: usize, items: usize) -> String {
    let mut s = format!("# Part {tag}\n\n");
    for i in 0..sections {
        s.push_str(&format!(
            "## Section {tag}{i}\n\nThe agent of section {i} reads its context window, plans the next step, calls a tool with typed arguments and records what it observed, so that a later step can reuse the result instead of asking the model again.\n\n"
        ));
        for k in 0..items {
            s.push_str(&format!(
                "- Step {k}: the runtime validates the call, runs the tool in a sandbox and returns a short summary of its output.\n"
            ));
        }
        s.push_str("\n| Tool | What it does | When to use it |\n|---|---|---|\n");
        for k in 0..items {
            s.push_str(&format!(
                "| `tool_{k}` | Reads the project files and reports the lines that changed | Before a review of step {k} |\n"
            ));
        }
        s.push('\n');
    }
    s
}

fn campaign(name: &str, extra_provider: &str) -> TestCampaign {
    let c = TestCampaign::with_chapters(
        name,
        &["a.md", "b.md"],
        &format!(
            "max_unit_chars = 4000\nconcurrency = 2\n[provider]\nkind = \"openai\"\nmodel = \"m\"\nmax_attempts = 2\n{extra_provider}"
        ),
    );
    c.write("a.md", &chapter("A", 3, 12));
    c.write("b.md", &chapter("B", 2, 16));
    c
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

/// The reference: the same campaign against a server whose replies are never cut.
fn reference() -> (TestCampaign, FakeServer) {
    let fake = FakeServer::start();
    let c = campaign("ref", "");
    assert_code(&run(&c, &fake), 0);
    (c, fake)
}

#[test]
fn replies_at_one_two_and_three_times_chinese_tokens_are_all_kept() {
    let (reference, _) = reference();
    let mut learned_at_1 = 0.0;
    for factor in [1.0, 2.0, 3.0] {
        let fake = FakeServer::start();
        fake.model_tokens(factor, true);
        let name = format!("x{}", factor as u32);
        let c = campaign(&name, "");
        let out = run(&c, &fake);
        assert_code(&out, 0);
        let s = json_summary(&out);
        assert_eq!(s["status"], "complete", "{factor}×: {s}");
        assert_eq!(s["units"]["failed"], 0, "{factor}×");
        let rep = report(&c, &name);
        let rr = &rep["runaway"];
        assert_eq!(rr["replies"], 0, "{factor}×: no reply stopped as a runaway");
        assert_eq!(
            rr["not_kept"]["completion_tokens"], 0,
            "{factor}×: nothing paid was thrown away: {}",
            rr["not_kept"]
        );
        // Joined byte for byte: the book is the one whose replies were never cut.
        for ch in ["a.md", "b.md"] {
            assert_eq!(
                c.read(&format!("{name}/out/{ch}")),
                reference.read(&format!("ref/out/{ch}")),
                "{factor}×: {ch}"
            );
        }
        let continued = rr["continued"].as_array().unwrap().len();
        let cut = fake
            .requests()
            .iter()
            .filter(|r| r.prefill.is_some())
            .count();
        eprintln!(
            "{factor}×: {continued} replies continued with {cut} continuation requests, {} tokens",
            rr["continuation_usage"]["completion_tokens"]
        );
        // The bound learned the model: the figure journaled is in the model's tokens per
        // source token, so it grows with the model's tokenizer.
        let bounds: Vec<_> = journal(&c, &name)
            .into_iter()
            .filter(|e| e["event"] == "output_bound" && e["agent"] == "translation")
            .collect();
        let last = bounds.last().expect("a learned translation bound");
        let per = last["figure"]["per_token"].as_f64().unwrap();
        if factor <= 1.0 {
            learned_at_1 = per;
        } else {
            let r = per / learned_at_1;
            assert!(
                (r - factor).abs() < 0.25 * factor,
                "{factor}×: learned {per:.2} against {learned_at_1:.2} at 1×"
            );
        }
        if factor >= 3.0 {
            assert!(continued > 0, "3×: the table's first bounds are too low");
            assert_eq!(
                rep["runaway"]["learned_bounds"]["translation"]["per_token"],
                last["figure"]["per_token"]
            );
            let asked: Vec<u64> = fake
                .requests()
                .iter()
                .filter(|r| r.agent == Agent::Translation && r.prefill.is_none())
                .map(|r| r.body["max_tokens"].as_u64().unwrap())
                .collect();
            assert!(asked.iter().max() > asked.first(), "{asked:?}");
        } else if factor <= 1.0 {
            assert_eq!(cut, 0, "1×: nothing is cut at the table's bounds");
        }
    }
}

#[test]
fn a_cut_reply_is_continued_then_joined_byte_exactly() {
    let (reference, _) = reference();
    let fake = FakeServer::start();
    fake.model_tokens(3.0, true);
    // A cap far below the units' needs: every long reply is cut and continued several times.
    let c = campaign("cap", "max_tokens = 800\n");
    let out = run(&c, &fake);
    assert_code(&out, 0);
    let reqs = fake.requests();
    let continuations: Vec<_> = reqs.iter().filter(|r| r.prefill.is_some()).collect();
    assert!(
        continuations.len() >= 5,
        "{} continuations",
        continuations.len()
    );
    // Each continuation sends the same question, and as its prefill the reply so far.
    for k in &continuations {
        let first = reqs
            .iter()
            .find(|r| r.prefill.is_none() && r.messages == k.messages)
            .expect("the first request of the call");
        assert_eq!(first.body["max_tokens"], 800);
        assert!(!k.prefill.as_deref().unwrap().is_empty());
    }
    for ch in ["a.md", "b.md"] {
        assert_eq!(
            c.read(&format!("cap/out/{ch}")),
            reference.read(&format!("ref/out/{ch}")),
            "{ch}"
        );
    }
    let rep = report(&c, "cap");
    assert_eq!(rep["runaway"]["replies"], 0);
    assert_eq!(rep["runaway"]["not_kept"]["completion_tokens"], 0);
    assert_eq!(
        rep["runaway"]["continuations"].as_u64().unwrap() as usize,
        continuations.len()
    );
    // explain names a continued unit and what its continuations cost.
    let unit = rep["runaway"]["continued"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|l| l["unit"].as_str().filter(|u| !u.contains('.')))
        .expect("a continued unit")
        .to_string();
    let out = c.cmd("explain", &[&unit]).output().unwrap();
    assert_code(&out, 0);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("reached max_tokens and was continued"),
        "{text}"
    );
}

#[test]
fn a_server_that_cannot_continue_keeps_the_blocks_received() {
    let fake = FakeServer::start();
    // OpenAI-like: a final assistant message starts a new reply.
    fake.model_tokens(3.0, false);
    let c = campaign("nc", "max_tokens = 3000\ncontinuation = \"none\"\n");
    let out = run(&c, &fake);
    assert_code(&out, 0);
    let s = json_summary(&out);
    assert_eq!(s["status"], "complete", "{s}");
    assert!(
        fake.requests().iter().all(|r| r.prefill.is_none()),
        "no continuation is asked of a server that cannot continue"
    );
    let rep = report(&c, "nc");
    let kept = rep["runaway"]["kept_splits"].as_array().unwrap();
    assert!(!kept.is_empty(), "cut replies kept their blocks");
    assert!(kept.iter().all(|k| k["blocks"].as_u64().unwrap() >= 1));
    assert_eq!(rep["runaway"]["replies"], 0);
    // What was not kept is only the replies whose first block did not fit (a long table in
    // one block), asked again with more room, and the report says so.
    let nk = &rep["runaway"]["not_kept"];
    assert_eq!(nk["rejected"], 0, "{nk}");
    assert_eq!(nk["completion_tokens"], nk["asked_again"], "{nk}");
    let j = journal(&c, "nc");
    let split = j
        .iter()
        .find(|e| e["event"] == "unit_split")
        .expect("a split");
    assert_eq!(split["usage"]["completion_tokens"], 0, "{split}");
    // Every source byte is translated once: the chapters are complete.
    for ch in ["a.md", "b.md"] {
        let out = c.read(&format!("nc/out/{ch}"));
        assert_eq!(
            out.matches("| `tool_").count(),
            c.read(ch).matches("| `tool_").count(),
            "{ch}: every table row is there once"
        );
    }
}

#[test]
fn a_server_that_restarts_instead_of_continuing_is_found_out() {
    // The campaign says `prefix`, but the server starts over: the restart is taken as the
    // reply (nothing is joined twice), continuation is turned off, and the book is complete.
    let (reference, _) = reference();
    let fake = FakeServer::start();
    fake.model_tokens(3.0, false);
    let c = campaign("rs", "max_tokens = 3000\ncontinuation = \"prefix\"\n");
    let out = run(&c, &fake);
    assert_code(&out, 0);
    assert_eq!(json_summary(&out)["status"], "complete");
    let rep = report(&c, "rs");
    let restarted = rep["runaway"]["continued"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["restarted"] == true)
        .count();
    assert!(restarted >= 1, "{}", rep["runaway"]);
    for ch in ["a.md", "b.md"] {
        let got = c.read(&format!("rs/out/{ch}"));
        let want = reference.read(&format!("ref/out/{ch}"));
        assert_eq!(
            got.matches("| `tool_").count(),
            want.matches("| `tool_").count(),
            "{ch}: no block is doubled by a restart joined to its prefix"
        );
    }
}

#[test]
fn a_reply_that_loops_is_still_stopped_early() {
    let fake = FakeServer::start();
    fake.model_tokens(3.0, true);
    let sentence = "智能体会调用工具并观察结果，然后继续。";
    const PROVIDER_LIMIT: usize = 5_000;
    fake.script(move |r| {
        if r.agent == Agent::Translation && r.unit_text().is_some_and(|t| t.contains("Part A")) {
            Reply::Stream {
                parts: (0..PROVIDER_LIMIT).map(|_| sentence.to_string()).collect(),
                delay: Duration::from_millis(1),
            }
        } else {
            Reply::Default
        }
    });
    let c = campaign("loop", "");
    let out = run(&c, &fake);
    let rep = report(&c, "loop");
    assert!(rep["runaway"]["replies"].as_u64().unwrap() >= 1);
    assert_eq!(
        rep["runaway"]["replies"], rep["runaway"]["repetitions"],
        "{}",
        rep["runaway"]
    );
    // Stopped as soon as the repetition spans MIN_SPAN_CHARS, as before the bounds changed:
    // each looping attempt streamed a few dozen copies, not the provider's thousands.
    let per_attempt = booktr::llm::runaway::MIN_SPAN_CHARS / sentence.chars().count() + 8;
    let attempts = rep["runaway"]["replies"].as_u64().unwrap() as usize;
    let sent = fake.streamed_chunks();
    assert!(
        sent <= attempts * per_attempt,
        "{sent} chunks streamed for {attempts} looping attempts (≤ {per_attempt} each)"
    );
    assert!(
        rep["runaway"]["not_kept"]["runaway_repetition"]
            .as_u64()
            .unwrap()
            > 0
    );
    // The looping unit was split and translated in parts; the run ends.
    assert!(out.status.code().is_some());
}

/// Regression (the real 1.5B model on the sample book, CI): a glossary reply cut at
/// `max_tokens` was continued, the continuation wrote the same entry over and over, and the
/// whole reply was discarded as a runaway twice over; the failed glossary batch blocked the
/// campaign before any translation. Now the continuation's repetition ends the reply: its
/// complete entries received before it are kept, the runaway's tokens are reported as paid and
/// not kept, and the book is translated.
#[test]
fn a_glossary_continuation_that_looped_blocked_the_campaign() {
    let fake = FakeServer::start();
    fake.model_tokens(1.0, true);
    let target = booktr::lang::Lang::parse("zh-Hans");
    fake.script(move |r| {
        if r.agent != Agent::Glossary {
            return Reply::Default;
        }
        // The brief comes to the fake as a Glossary request too: its answer is prose.
        let Ok(whole) = serde_json::from_str::<serde_json::Value>(
            &support::fake_llm::default_content(&target, Agent::Glossary, &r.messages),
        ) else {
            return Reply::Default;
        };
        let entries = whole["entries"].as_array().expect("entries").clone();
        let first = &entries[0]["source"];
        let looped =
            format!("{{\"source\": {first}, \"target\": \"循环\", \"note\": \"\"}},\n    ");
        match &r.prefill {
            // The continuation: the same entry, on and on.
            Some(_) => Reply::Stream {
                parts: (0..2_000).map(|_| looped.clone()).collect(),
                delay: Duration::from_millis(0),
            },
            // The first reply: every entry, then the loop begins, cut at max_tokens.
            None => Reply::Full {
                reasoning: String::new(),
                content: format!(
                    "{{\"entries\": [\n    {},\n    {}",
                    entries
                        .iter()
                        .map(|e| e.to_string())
                        .collect::<Vec<_>>()
                        .join(",\n    "),
                    looped.repeat(3)
                ),
                finish: "length".into(),
            },
        }
    });
    let c = campaign("gl", "continuation = \"prefix\"\n");
    let out = run(&c, &fake);
    let s = json_summary(&out);
    assert_ne!(s["stage"]["stage"], "blocked", "{s}");
    assert_eq!(s["units"]["failed"], 0, "{s}");
    assert_eq!(s["units"]["translated"], s["units"]["total"], "{s}");
    let rep = report(&c, "gl");
    // Every entry of the first reply is in the termbase, each once; the looped one is the
    // first entry again, with another target, and the first occurrence wins or is refused.
    let parse = &rep["glossary_parse"];
    assert!(parse["accepted"].as_u64().unwrap() >= 2, "{parse}");
    assert!(
        rep["glossary"].as_array().unwrap().len() >= 2,
        "{}",
        rep["glossary"]
    );
    // Both looping continuations (the first and its retry) were stopped early and reported
    // as repetitions, paid and not kept.
    let rr = &rep["runaway"];
    assert_eq!(rr["repetitions"], 2, "{rr}");
    assert!(
        rr["not_kept"]["runaway_repetition"].as_u64().unwrap() > 0,
        "{rr}"
    );
    assert!(
        fake.streamed_chunks() < 2 * 200,
        "each loop was stopped after a few dozen copies: {}",
        fake.streamed_chunks()
    );
}

#[test]
fn resume_after_a_kill_in_a_continuation_pays_nothing_twice() {
    let fake = FakeServer::start();
    fake.model_tokens(3.0, true);
    // The first continuation hangs: the run is killed while it waits.
    let hang = Arc::new(AtomicBool::new(true));
    let h = hang.clone();
    fake.script(move |r| {
        if r.prefill.is_some() && h.load(Ordering::SeqCst) {
            Reply::Stall {
                partial: String::new(),
            }
        } else {
            Reply::Default
        }
    });
    let c = campaign("kill", "max_tokens = 300\n");
    let mut child = c
        .cmd("run", &["--base-url", &fake.base_url])
        .env("OPENAI_API_KEY", KEY)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    let checkpoints = || {
        c.all_files()
            .into_iter()
            .filter(|p| p.to_string_lossy().contains("/partials/"))
            .count()
    };
    while !(fake.requests().iter().any(|r| r.prefill.is_some()) && checkpoints() > 0) {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "no continuation was asked"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let first_run = fake.requests();
    let cut_calls: Vec<_> = first_run
        .iter()
        .filter(|r| r.prefill.is_some())
        .map(|r| r.messages.clone())
        .collect();
    assert!(!cut_calls.is_empty());
    fake.clear();
    hang.store(false, Ordering::SeqCst);
    let out = run(&c, &fake);
    assert_code(&out, 0);
    assert_eq!(json_summary(&out)["status"], "complete");
    // The calls cut in the first run are continued from their checkpoint: not one request of
    // the second run asks their question afresh.
    let second = fake.requests();
    for m in &cut_calls {
        let asked: Vec<_> = second.iter().filter(|r| &r.messages == m).collect();
        assert!(!asked.is_empty(), "the cut call was finished");
        assert!(
            asked.iter().all(|r| r.prefill.is_some()),
            "a cut call was asked again from the start"
        );
    }
}

fn experiment_campaign() -> TestCampaign {
    let c = TestCampaign::with_chapters(
        "ex",
        &["a.md", "b.md"],
        "max_unit_chars = 4000\nmax_context_tokens = 200000\n[provider]\nkind = \"openai\"\nmodel = \"fake-model\"\n",
    );
    c.write("a.md", &chapter("A", 2, 10));
    c.write("b.md", &chapter("B", 2, 12));
    c
}

#[test]
fn experiment_at_three_times_translates_every_unit_in_both_arms() {
    let fake = FakeServer::start();
    fake.model_tokens(3.0, true);
    let c = experiment_campaign();
    let out = c
        .cmd(
            "experiment",
            &[
                "--base-url",
                &fake.base_url,
                "--judge-model",
                "fake-judge",
                "--json",
            ],
        )
        .env("OPENAI_API_KEY", KEY)
        .output()
        .unwrap();
    let s = json_summary(&out);
    let ev: serde_json::Value =
        serde_json::from_str(&c.read(s["evidence"].as_str().unwrap())).unwrap();
    let total = ev["source"]["units_to_translate"].as_u64().unwrap();
    assert!(total >= 4);
    for arm in ["orchestration", "single_agent"] {
        let a = &ev["arms"][arm];
        assert_eq!(a["units_translated"].as_u64().unwrap(), total, "{arm}: {a}");
    }
    assert!(
        fake.requests()
            .iter()
            .any(|r| r.prefill.is_some() && r.is_single_agent()),
        "the single-agent arm's long replies were continued, not failed"
    );
}
