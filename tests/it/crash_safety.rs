//! Crash safety of a campaign run: the single-runner lock, graceful interruption (SIGINT and
//! SIGTERM exit 130 and say how to resume), and the kill test: a campaign SIGKILLed at random
//! moments and resumed each time ends with outputs equal to an uninterrupted run's, no unit
//! lost, and no finished call sent twice (only calls in flight at a kill may be repeated).
//!
//! `kill_test_short` runs in CI (6 kills); `kill_test_long` (20 kills) is `#[ignore]`d:
//! `cargo test --release --test it crash_safety:: -- --ignored --nocapture`.

use crate::support;

use std::collections::{BTreeMap, BTreeSet};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use booktr::agents::Agent;
use support::fake_llm::FakeServer;
use support::{TestCampaign, assert_code, json_summary};

const KEY: &str = "sk-booktr-crash-KEY-8d1e";

fn chapter(tag: &str, n: usize) -> String {
    let mut s = format!("# Part {tag}\n\n");
    for i in 0..n {
        s.push_str(&format!("## Section {tag}{i}\n\nThe Agent {i} of {tag} reads its context window, calls a tool and records what it saw for the next step.\n\n```sh\necho {tag}{i}\n```\n\n"));
    }
    s
}

fn campaign(name: &str, units_per_chapter: usize) -> TestCampaign {
    let c = TestCampaign::with_chapters(
        name,
        &["a.md", "b.md"],
        "max_unit_chars = 300\nconcurrency = 4\n[provider]\nkind = \"openai\"\nmodel = \"m\"\n",
    );
    c.write("a.md", &chapter("A", units_per_chapter));
    c.write("b.md", &chapter("B", units_per_chapter));
    c
}

fn spawn(c: &TestCampaign, fake: &FakeServer) -> Child {
    c.cmd("run", &["--base-url", &fake.base_url])
        .env("OPENAI_API_KEY", KEY)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

fn journal(c: &TestCampaign, name: &str) -> Vec<serde_json::Value> {
    let mut v = Vec::new();
    if let Ok(rd) = std::fs::read_dir(c.path(&format!("{name}/state"))) {
        for d in rd.flatten() {
            if let Ok(t) = std::fs::read_to_string(d.path().join("journal.jsonl")) {
                v.extend(t.lines().filter_map(|l| serde_json::from_str(l).ok()));
            }
        }
    }
    v
}

fn signal(child: &Child, sig: &str) {
    let st = Command::new("kill")
        .arg(format!("-{sig}"))
        .arg(child.id().to_string())
        .status()
        .unwrap();
    assert!(st.success());
}

fn wait_for_finished(c: &TestCampaign, name: &str, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while journal(c, name)
        .iter()
        .filter(|e| e["event"] == "call_finished")
        .count()
        < n
    {
        assert!(Instant::now() < deadline, "no progress");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn second_runner_is_refused_naming_the_holder() {
    let fake = FakeServer::start();
    fake.latency(Duration::from_millis(300), Duration::ZERO);
    let c = campaign("l", 3);
    let mut first = spawn(&c, &fake);
    wait_for_finished(&c, "l", 1);
    let out = c
        .cmd("run", &["--base-url", &fake.base_url])
        .env("OPENAI_API_KEY", KEY)
        .output()
        .unwrap();
    assert_code(&out, 2);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("pid {}", first.id())), "{err}");
    // `--fresh` would move the running state aside: refused the same way, nothing moved.
    let out = c
        .cmd("run", &["--base-url", &fake.base_url, "--fresh"])
        .env("OPENAI_API_KEY", KEY)
        .output()
        .unwrap();
    assert_code(&out, 2);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("pid {}", first.id())), "{err}");
    assert!(
        !c.path("l/state/superseded").exists(),
        "the running state was moved aside"
    );
    first.kill().unwrap();
    first.wait().unwrap();
}

#[test]
fn sigint_and_sigterm_stop_gracefully_with_code_130_and_resume() {
    for sig in ["INT", "TERM"] {
        let fake = FakeServer::start();
        fake.latency(Duration::from_millis(150), Duration::ZERO);
        let c = campaign("g", 4);
        let child = spawn(&c, &fake);
        wait_for_finished(&c, "g", 3);
        signal(&child, sig);
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(130),
            "SIG{sig}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("again to resume"), "{err}");
        // The units the run never reached are its work left, named apart from an editor's
        // errors, in the status line and in report.md.
        assert!(err.contains("units not translated yet"), "{err}");
        let md = c.read("g/validation/report.md");
        assert!(
            md.contains("units not translated yet")
                && md.contains("- Not translated yet (run the campaign again): "),
            "{md}"
        );
        // The hint names the same state: the provider flags of this run are in it.
        assert!(
            err.contains(&format!("--base-url {}` again to resume", fake.base_url)),
            "{err}"
        );
        assert!(
            journal(&c, "g")
                .iter()
                .any(|e| e["event"] == "run_interrupted")
        );
        // No torn or temporary file is left behind.
        for f in c.all_files() {
            assert!(
                !f.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with(".tmp-"),
                "temporary file left: {}",
                f.display()
            );
        }
        fake.latency(Duration::ZERO, Duration::ZERO);
        let out = c
            .cmd("run", &["--base-url", &fake.base_url, "--json"])
            .env("OPENAI_API_KEY", KEY)
            .output()
            .unwrap();
        assert_code(&out, 0);
        assert_eq!(json_summary(&out)["status"], "complete");
    }
}

/// Runs the kill test with `kills` SIGKILLs; returns the printed table row.
/// Kills a campaign of `units_per_chapter` × 2 units `kills` times (the campaign must be large
/// enough that it is still running at every kill moment), then checks the outcome.
fn kill_test(kills: usize, seed: u64, units_per_chapter: usize) -> String {
    let fake = FakeServer::start();
    // Reference run.
    let reference = campaign("k", units_per_chapter);
    assert_code(
        &reference
            .cmd("run", &["--base-url", &fake.base_url])
            .env("OPENAI_API_KEY", KEY)
            .output()
            .unwrap(),
        0,
    );
    let total_calls_reference = fake.requests().len();
    fake.clear();

    let c = campaign("k", units_per_chapter);
    fake.latency(Duration::from_millis(40), Duration::from_micros(100));
    let mut rng = seed;
    let mut next = || {
        // xorshift64: deterministic kill moments for a given seed (test-only; no crate needed).
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    // Calls in flight at each kill (a call in flight at two kills counts twice).
    let mut in_flight_at_kills = 0usize;
    let mut in_flight_by_call: BTreeMap<String, usize> = BTreeMap::new();
    let mut done = 0;
    let mut runs = 0;
    while done < kills {
        runs += 1;
        let mut child = spawn(&c, &fake);
        // Kill at a random moment after this run has started sending calls.
        let started_before = journal(&c, "k")
            .iter()
            .filter(|e| e["event"] == "call_started")
            .count();
        let deadline = Instant::now() + Duration::from_secs(30);
        while journal(&c, "k")
            .iter()
            .filter(|e| e["event"] == "call_started")
            .count()
            == started_before
            && Instant::now() < deadline
        {
            if child.try_wait().unwrap().is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        std::thread::sleep(Duration::from_millis(next() % 250));
        if child.try_wait().unwrap().is_some() {
            // Finished before the kill moment: the campaign is complete.
            break;
        }
        child.kill().unwrap();
        child.wait().unwrap();
        done += 1;
        // Calls this run started but did not finish may legitimately be sent again.
        let j = journal(&c, "k");
        let this_run = j
            .iter()
            .rposition(|e| e["event"] == "run_started")
            .unwrap_or(0);
        let finished: BTreeSet<&str> = j
            .iter()
            .filter(|e| e["event"] == "call_finished")
            .filter_map(|e| e["call"].as_str())
            .collect();
        for e in j[this_run..]
            .iter()
            .filter(|e| e["event"] == "call_started")
        {
            let call = e["call"].as_str().unwrap();
            if !finished.contains(call) {
                in_flight_at_kills += 1;
                // Translations by unit id (their call keys hold the unit's fingerprint).
                let what = e["unit"]
                    .as_str()
                    .map_or_else(|| call.to_string(), |u| format!("unit:{u}"));
                *in_flight_by_call.entry(what).or_insert(0) += 1;
            }
        }
    }
    assert_eq!(
        done, kills,
        "the campaign finished before every kill: make it larger"
    );
    fake.latency(Duration::ZERO, Duration::ZERO);
    let out = c
        .cmd("run", &["--base-url", &fake.base_url, "--json"])
        .env("OPENAI_API_KEY", KEY)
        .output()
        .unwrap();
    assert_code(&out, 0);
    assert_eq!(json_summary(&out)["status"], "complete");

    // Outputs equal the uninterrupted run's, byte for byte.
    for f in ["a.md", "b.md"] {
        assert_eq!(
            c.read(&format!("k/out/{f}")),
            reference.read(&format!("k/out/{f}")),
            "{f} differs from the uninterrupted run"
        );
    }
    // Which calls were sent more than once? Identify translation calls by unit text and others
    // by agent and full prompt.
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for r in fake.requests() {
        let key = match r.agent {
            Agent::Translation => format!("t:{}:{}", r.is_revision(), r.unit_text().unwrap()),
            _ => format!("{:?}:{}", r.agent, r.all_text()),
        };
        *seen.entry(key).or_insert(0) += 1;
    }
    let repeated: usize = seen.values().map(|n| n - 1).sum();
    // Strictly for translations: a unit sent n times was in flight at n - 1 kills at least.
    let mut text_to_unit = BTreeMap::new();
    for f in ["a.md", "b.md"] {
        let text = c.read(f);
        let key = booktr::book::chapter::chapter_key(f);
        for u in booktr::book::segment(&key, &text, 300) {
            text_to_unit.insert(u.text(&text).to_string(), u.id.clone());
        }
    }
    // Sends of a translation beyond the kills it was in flight at: a finished call repeated.
    let mut finished_repeated = 0;
    for (key, n) in &seen {
        if let Some(text) = key.strip_prefix("t:false:") {
            let call = format!("unit:{}", text_to_unit[text]);
            let in_flight = in_flight_by_call.get(&call).copied().unwrap_or(0);
            finished_repeated += (n - 1).saturating_sub(in_flight);
            assert!(
                n - 1 <= in_flight,
                "{call} was sent {n} times but in flight at only {in_flight} kills"
            );
        }
    }
    let translation_calls_in_flight = in_flight_at_kills;
    assert!(
        repeated <= translation_calls_in_flight,
        "{repeated} calls repeated but only {translation_calls_in_flight} were in flight at kills"
    );
    // No unit lost: every prose unit has a translation in the final state.
    let j = journal(&c, "k");
    let translated: BTreeSet<&str> = j
        .iter()
        .filter(|e| e["event"] == "call_finished" && e["agent"] == "translation")
        .filter_map(|e| e["unit"].as_str())
        .collect();
    let units: usize = ["a.md", "b.md"]
        .iter()
        .map(|f| {
            booktr::book::segment("x", &c.read(f), 300)
                .iter()
                .filter(|u| u.kind.needs_translation())
                .count()
        })
        .sum();
    let lost = units - translated.len();
    assert_eq!(lost, 0, "units lost");
    let row = format!(
        "| kills | runs | calls sent | calls (uninterrupted) | calls repeated | in flight at kills | finished calls repeated | units lost |\n|---|---|---|---|---|---|---|---|\n| {done} | {runs} | {} | {total_calls_reference} | {repeated} | {translation_calls_in_flight} | {finished_repeated} | {lost} |",
        fake.requests().len()
    );
    println!("{row}");
    row
}

#[test]
fn kill_test_short() {
    kill_test(6, 0x9E37_79B9_7F4A_7C15, 24);
}

#[test]
#[ignore = "long variant: 20 kills (run with --ignored)"]
fn kill_test_long() {
    kill_test(20, 0xD1B5_4A32_D192_ED03, 120);
}

#[test]
fn a_result_without_its_journal_line_is_adopted_and_not_requested_again() {
    let fake = FakeServer::start();
    let c = campaign("a", 3);
    let out = c
        .cmd("run", &["--base-url", &fake.base_url])
        .env("OPENAI_API_KEY", KEY)
        .output()
        .unwrap();
    assert_code(&out, 0);
    // Simulate a crash between writing a result file and appending its journal line: drop the
    // last translation's `call_finished` line (and everything after it).
    let dir = std::fs::read_dir(c.path("a/state"))
        .unwrap()
        .flatten()
        .find(|e| e.path().join("journal.jsonl").exists())
        .unwrap()
        .path();
    let journal = std::fs::read_to_string(dir.join("journal.jsonl")).unwrap();
    let lines: Vec<&str> = journal.lines().collect();
    let cut = lines
        .iter()
        .rposition(|l| l.contains("\"call_finished\"") && l.contains("\"translation\""))
        .unwrap();
    let dropped: serde_json::Value = serde_json::from_str(lines[cut]).unwrap();
    // Also leave a torn half line at the end, as a kill during an append would.
    let kept = format!(
        "{}\n{}",
        lines[..cut].join("\n"),
        &lines[cut][..lines[cut].len() / 2]
    );
    std::fs::write(dir.join("journal.jsonl"), kept).unwrap();
    fake.clear();
    let out = c
        .cmd("run", &["--base-url", &fake.base_url, "--json"])
        .env("OPENAI_API_KEY", KEY)
        .output()
        .unwrap();
    assert_code(&out, 0);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("torn") && err.contains("adopted result"),
        "{err}"
    );
    assert_eq!(
        fake.count(Agent::Translation),
        0,
        "the adopted translation {} is not requested again",
        dropped["call"]
    );
    let journal = std::fs::read_to_string(dir.join("journal.jsonl")).unwrap();
    let records: Vec<serde_json::Value> = journal
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    assert_eq!(
        records.len(),
        journal.lines().count() - 1,
        "only the torn line is unreadable"
    );
    assert!(
        records
            .iter()
            .any(|r| r["adopted"] == true && r["call"] == dropped["call"])
    );
}
