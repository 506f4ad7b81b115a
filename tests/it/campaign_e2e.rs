//! End-to-end campaigns through the `booktr` binary: the pseudo provider on the real corpus,
//! the OpenAI-compatible provider against the in-repo fake server over HTTP/SSE, isolation of
//! Translation requests, the Manager's context, secrets, refusal of changed inputs, malformed
//! structured answers, and resume after a failing server or a SIGKILL.

use crate::support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::{Duration, Instant};

use booktr::agents::Agent;
use booktr::book::segment;
use support::fake_llm::{FakeServer, Reply};
use support::{TestCampaign, assert_code, corpus_dir, json_summary};

const KEY: &str = "sk-booktr-TEST-KEY-3f9a1c7e5d";

fn fences(text: &str) -> Vec<(String, String)> {
    booktr::qa::Doc::parse(text)
        .fences
        .into_iter()
        .map(|f| (f.info, f.body))
        .collect()
}

/// A synthetic chapter of `n` sections, each with a heading, two paragraphs and a code block.
fn synthetic_chapter(tag: &str, n: usize) -> String {
    let mut s = format!("# Chapter {tag}\n\n");
    for i in 0..n {
        s.push_str(&format!(
            "## Section {tag}.{i}\n\nThe Agent number {i} of part {tag} reads the context window and plans its next step with care. It calls a tool, observes the result, and writes notes for later sessions.\n\nA second paragraph {i} explains why memory matters for a long task in chapter {tag}, and links to [the guide](https://example.org/{tag}/{i}).\n\n```python\ndef step_{i}():\n    return {i} * 2\n```\n\n"
        ));
    }
    s
}

#[booktr_test_needs::needs(corpus)]
#[test]
fn pseudo_campaign_on_two_corpus_chapters_keeps_every_code_block() {
    let Some(corpus) = corpus_dir() else { return };
    let ch1 = corpus.join("en/chapter01.md");
    let ch2 = corpus.join("en/chapter02.md");
    let c =
        TestCampaign::with_chapters("book", &[ch1.to_str().unwrap(), ch2.to_str().unwrap()], "");
    let out = c.cmd("run", &["--json"]).output().unwrap();
    assert_code(&out, 0);
    let s = json_summary(&out);
    assert_eq!(s["status"], "complete");
    assert_eq!(s["rehearsal"], true);
    assert!(String::from_utf8_lossy(&out.stderr).contains("REHEARSAL"));
    for (src, name) in [(&ch1, "chapter01.md"), (&ch2, "chapter02.md")] {
        let source = std::fs::read_to_string(src).unwrap();
        let target = c.read(&format!("book/out/{name}"));
        let (a, b) = (fences(&source), fences(&target));
        assert!(!a.is_empty(), "{name} has code blocks");
        assert_eq!(a, b, "fenced code blocks of {name} must be byte-identical");
        assert_ne!(source, target, "{name} was translated");
    }
    let report = c.read("book/validation/report.md");
    assert!(report.contains("REHEARSAL"));
    let rj: serde_json::Value =
        serde_json::from_str(&c.read("book/validation/report.json")).unwrap();
    assert_eq!(rj["rehearsal"], true);
    assert!(
        rj["summary"]["manager_context_peak_tokens"]
            .as_u64()
            .unwrap()
            > 100
    );
}

/// Texts of every unit of the given chapters.
fn unit_texts(paths: &[&Path], max: usize) -> Vec<String> {
    let mut v = Vec::new();
    for p in paths {
        let text = std::fs::read_to_string(p).unwrap();
        let key = booktr::book::chapter::chapter_key(&p.file_name().unwrap().to_string_lossy());
        for u in segment(&key, &text, max) {
            v.push(u.text(&text).to_string());
        }
    }
    v
}

#[booktr_test_needs::needs(corpus)]
#[test]
fn openai_campaign_against_fake_server_records_real_usage_isolates_units_and_leaks_no_key() {
    let Some(corpus) = corpus_dir() else { return };
    let fake = FakeServer::start();
    let ch1 = corpus.join("en/chapter01.md");
    let ch2 = corpus.join("en/chapter02.md");
    let c = TestCampaign::with_chapters(
        "book",
        &[ch1.to_str().unwrap(), ch2.to_str().unwrap()],
        // Proofreading is off by default (finding 21); this campaign runs every agent.
        "proofread_share = 0.2\n[provider]\nkind = \"openai\"\nmodel = \"fake-model\"\n",
    );
    let out = c
        .cmd(
            "run",
            &[
                "--provider",
                "openai",
                "--base-url",
                &fake.base_url,
                "--concurrency",
                "8",
                "--json",
            ],
        )
        .env("OPENAI_API_KEY", KEY)
        .output()
        .unwrap();
    assert_code(&out, 0);
    let s = json_summary(&out);
    assert_eq!(s["status"], "complete");
    assert_eq!(s["rehearsal"], false);
    // The fake reviewer flags nothing beyond what QA sends back, so the Manager decides
    // without a model call (quality benchmark finding 10), and says so in report.json.
    assert_eq!(s["usage"]["manager"]["calls"], 0, "{s}");
    let rj: serde_json::Value =
        serde_json::from_str(&c.read("book/validation/report.json")).unwrap();
    let decisions = rj["decisions"].as_array().unwrap();
    assert!(
        !decisions.is_empty() && decisions.iter().all(|d| d["by_model"] == false),
        "{decisions:?}"
    );
    for agent in ["glossary", "translation", "proofreading"] {
        let u = &s["usage"][agent];
        assert!(
            u["calls"].as_u64().unwrap() >= 1,
            "{agent} made no call: {s}"
        );
        assert!(
            u["prompt_tokens"].as_u64().unwrap() > 50,
            "{agent} usage: {u}"
        );
        assert!(
            u["completion_tokens"].as_u64().unwrap() > 0,
            "{agent} usage: {u}"
        );
    }
    // Usage in the summary is what the server reported.
    let reqs = fake.requests();
    assert_eq!(
        s["usage"]["translation"]["calls"].as_u64().unwrap() as usize,
        fake.count(Agent::Translation)
    );
    assert!(
        reqs.iter()
            .all(|r| r.authorization.as_deref() == Some(&format!("Bearer {KEY}")))
    );
    assert!(
        reqs.iter()
            .all(|r| r.body["stream"] == true && r.body["stream_options"]["include_usage"] == true)
    );

    // Isolation: each Translation request carries exactly one unit's text and no other's.
    let units = unit_texts(&[&ch1, &ch2], 12_000);
    for r in reqs.iter().filter(|r| r.agent == Agent::Translation) {
        let text = r.unit_text().unwrap();
        let own: Vec<usize> = (0..units.len()).filter(|&i| units[i] == text).collect();
        assert_eq!(
            own.len(),
            1,
            "a translation request must carry exactly one unit"
        );
        let all = r.all_text();
        for (i, u) in units.iter().enumerate() {
            if i != own[0] && u.trim().len() > 80 {
                assert!(
                    !all.contains(u.trim()),
                    "request for unit {} also carries unit {i}",
                    own[0]
                );
            }
        }
    }
    // The Manager's requests carry no unit text.
    for r in reqs.iter().filter(|r| r.agent == Agent::Manager) {
        let all = r.all_text();
        for u in &units {
            let probe: String = u.trim().chars().take(120).collect();
            if probe.chars().count() >= 60 {
                assert!(!all.contains(&probe), "the Manager saw unit text");
            }
        }
    }
    // Code blocks survived in the outputs.
    assert_eq!(
        fences(&std::fs::read_to_string(&ch1).unwrap()),
        fences(&c.read("book/out/chapter01.md"))
    );
    // No file written and no output line contains the key.
    let mut scanned = 0;
    for f in c.all_files() {
        let bytes = std::fs::read(&f).unwrap();
        assert!(
            !String::from_utf8_lossy(&bytes).contains(KEY),
            "{} contains the API key",
            f.display()
        );
        scanned += 1;
    }
    assert!(scanned > 20, "scanned {scanned} files");
    assert!(!String::from_utf8_lossy(&out.stdout).contains(KEY));
    assert!(!String::from_utf8_lossy(&out.stderr).contains(KEY));
}

#[test]
fn manager_context_is_measured_and_holds_no_unit_text() {
    let fake = FakeServer::start();
    let c = TestCampaign::with_chapters(
        "m",
        &["a.md", "b.md"],
        "max_unit_chars = 600\n[provider]\nkind = \"openai\"\nmodel = \"fake-model\"\n",
    );
    c.write("a.md", &synthetic_chapter("A", 6));
    c.write("b.md", &synthetic_chapter("B", 6));
    let out = c
        .cmd("run", &["--base-url", &fake.base_url, "--json"])
        .env("OPENAI_API_KEY", KEY)
        .output()
        .unwrap();
    assert_code(&out, 0);
    let s = json_summary(&out);
    let peak = s["manager_context_peak_tokens"].as_u64().unwrap();
    assert!(peak > 200 && peak < 2000, "peak {peak}");

    // Rebuild the final context from the saved state, as `status` does.
    let plan = booktr::config::Plan::load(&c.file, &Default::default()).unwrap();
    let plan = booktr::config::Plan {
        provider: booktr::config::ProviderPlan {
            kind: booktr::config::ProviderKind::Openai,
            model: "fake-model".into(),
            ..plan.provider.clone()
        },
        ..plan
    };
    let campaign = booktr::campaign::Campaign::load(plan).unwrap();
    let state =
        booktr::campaign::core::state::State::load(&campaign, &campaign.state_path(), "t").unwrap();
    let manager = booktr::campaign::core::manager::Manager::new(&campaign, &state);
    let ctx = manager.context(&state);
    let json = ctx.to_json();
    assert_eq!(ctx.tokens(), booktr::tokens::count(&json));
    assert!(ctx.tokens() as u64 <= peak);
    assert_eq!(ctx.progress.translated, campaign.prose_units().count());
    for u in &campaign.units {
        let src = campaign.source_text(u);
        for line in src.lines().filter(|l| l.len() > 30) {
            assert!(!json.contains(line), "context contains source text: {line}");
        }
        if let Some(t) = state.latest_translation(&u.id, u32::MAX) {
            for line in t.1.lines().filter(|l| l.chars().count() > 20) {
                assert!(!json.contains(line), "context contains translated text");
            }
        }
    }
    assert!(
        !json.contains(&*c.dir.path().to_string_lossy()),
        "context holds an absolute path"
    );
}

#[test]
fn malformed_structured_answers_are_repaired_or_dropped() {
    let fake = FakeServer::start();
    let repair_seen = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let seen = repair_seen.clone();
    fake.script(move |r| match r.agent {
        // An array instead of an object, with junk entries.
        Agent::Glossary => Reply::Content(
            "[{\"source\": \"context window\", \"target\": \"上下文窗口\", \"note\": \"\", \"extra\": 1}, null, {\"term\": \"Agent\"}, {\"source\": \"\", \"target\": \"x\"}]".into(),
        ),
        // Prose around JSON with missing keys, then plain junk once (needs a schema repair).
        Agent::Proofreading if r.messages.len() == 2 && !seen.load(std::sync::atomic::Ordering::SeqCst) => {
            seen.store(true, std::sync::atomic::Ordering::SeqCst);
            Reply::Content("I reviewed everything and it looks fine to me!".into())
        }
        Agent::Proofreading => Reply::Content(
            "Here is my report:\n```json\n{\"issues\": [{\"unit\": \"a-001\", \"type\": \"fluency\", \"detail\": \"stiff wording\"}, {\"unit\": \"nope-9\"}], \"summary\": \"one issue\"}\n```".into(),
        ),
        Agent::Manager => Reply::Content("null".into()),
        Agent::Translation | Agent::Judge => Reply::Default,
    });
    let c = TestCampaign::with_chapters(
        "j",
        &["a.md"],
        "max_unit_chars = 500\nproofread_share = 1.0\n[provider]\nkind = \"openai\"\nmodel = \"m\"\n",
    );
    c.write("a.md", &synthetic_chapter("A", 4));
    let out = c
        .cmd("run", &["--base-url", &fake.base_url, "--json"])
        .env("OPENAI_API_KEY", KEY)
        .output()
        .unwrap();
    assert_code(&out, 0);
    assert!(repair_seen.load(std::sync::atomic::Ordering::SeqCst));
    let repairs: Vec<_> = fake
        .requests()
        .into_iter()
        .filter(|r| r.all_text().contains("could not be used"))
        .collect();
    assert_eq!(repairs.len(), 1, "exactly one schema-repair request");
    assert_eq!(repairs[0].agent, Agent::Proofreading);
    let report: serde_json::Value =
        serde_json::from_str(&c.read("j/validation/report.json")).unwrap();
    let glossary = report["glossary"].as_array().unwrap();
    assert!(
        glossary
            .iter()
            .any(|e| e["source"] == "context window" && e["origin"] == "agent"),
        "{glossary:?}"
    );
    assert!(report["glossary_parse"]["dropped"].as_u64().unwrap() >= 3);
    assert!(report["glossary_parse"]["repaired"].as_u64().unwrap() >= 1);
    let issues: usize = report["proofreading"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["issues"].as_array().unwrap().len())
        .sum();
    assert_eq!(
        issues, 1,
        "the valid issue is kept, the one for an unknown unit dropped"
    );
    assert_eq!(
        report["decisions"][0]["revise"].as_array().unwrap().len(),
        0,
        "a null decision revises nothing"
    );
}

/// Translation requests received, by unit text.
fn translated_texts(fake: &FakeServer) -> Vec<String> {
    fake.requests()
        .iter()
        .filter(|r| r.agent == Agent::Translation && !r.is_revision())
        .filter_map(|r| r.unit_text().map(String::from))
        .collect()
}

fn outputs(c: &TestCampaign, name: &str) -> BTreeMap<String, String> {
    ["a.md", "b.md"]
        .iter()
        .map(|f| (f.to_string(), c.read(&format!("{name}/out/{f}"))))
        .collect()
}

fn two_chapter_campaign(name: &str, fake: &FakeServer) -> TestCampaign {
    let c = TestCampaign::with_chapters(
        name,
        &["a.md", "b.md"],
        "max_unit_chars = 500\nconcurrency = 3\n[provider]\nkind = \"openai\"\nmodel = \"m\"\n",
    );
    c.write("a.md", &synthetic_chapter("A", 8));
    c.write("b.md", &synthetic_chapter("B", 8));
    let _ = fake;
    c
}

#[test]
fn resume_after_failing_server_sends_no_finished_unit_again() {
    let fake = FakeServer::start();
    // Reference: an uninterrupted run.
    let reference = two_chapter_campaign("x", &fake);
    assert_code(
        &reference
            .cmd("run", &["--base-url", &fake.base_url])
            .env("OPENAI_API_KEY", KEY)
            .output()
            .unwrap(),
        0,
    );
    fake.clear();

    // The server fails every translation after the first 5.
    let c = two_chapter_campaign("x", &fake);
    let ok = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let ok2 = ok.clone();
    fake.script(move |r| {
        if r.agent == Agent::Translation
            && ok2.fetch_add(1, std::sync::atomic::Ordering::SeqCst) >= 5
        {
            Reply::Status {
                code: 500,
                body: "boom".into(),
                retry_after: None,
            }
        } else {
            Reply::Default
        }
    });
    let out = c
        .cmd("run", &["--base-url", &fake.base_url, "--json"])
        .env("OPENAI_API_KEY", KEY)
        .output()
        .unwrap();
    assert_code(&out, 1);
    let s = json_summary(&out);
    assert_eq!(s["status"], "incomplete");
    assert!(s["units"]["failed"].as_u64().unwrap() > 0);
    assert!(s["last_error"].as_str().unwrap().contains("500"));
    let first: Vec<String> = fake
        .requests()
        .iter()
        .filter(|r| r.agent == Agent::Translation)
        .take(5)
        .filter_map(|r| r.unit_text().map(String::from))
        .collect();
    assert_eq!(first.len(), 5);

    fake.clear();
    fake.script(|_| Reply::Default);
    let out = c
        .cmd("run", &["--base-url", &fake.base_url, "--json"])
        .env("OPENAI_API_KEY", KEY)
        .output()
        .unwrap();
    assert_code(&out, 0);
    let again = translated_texts(&fake);
    for t in &first {
        assert!(!again.contains(t), "a finished unit was requested again");
    }
    let uniq: BTreeSet<&String> = again.iter().collect();
    assert_eq!(
        uniq.len(),
        again.len(),
        "no unit requested twice in the resumed run"
    );
    assert_eq!(
        fake.count(Agent::Glossary),
        0,
        "the finished glossary stage is not repeated"
    );
    assert_eq!(outputs(&c, "x"), outputs(&reference, "x"));
}

#[test]
fn sigkill_mid_campaign_then_resume_completes_without_repeating_finished_units() {
    let fake = FakeServer::start();
    let reference = two_chapter_campaign("k", &fake);
    assert_code(
        &reference
            .cmd("run", &["--base-url", &fake.base_url])
            .env("OPENAI_API_KEY", KEY)
            .output()
            .unwrap(),
        0,
    );
    fake.clear();
    fake.latency(Duration::from_millis(60), Duration::from_micros(300));

    let c = two_chapter_campaign("k", &fake);
    let mut child = c
        .cmd("run", &["--base-url", &fake.base_url])
        .env("OPENAI_API_KEY", KEY)
        .spawn()
        .unwrap();
    // Wait until some translations are recorded, then SIGKILL.
    let deadline = Instant::now() + Duration::from_secs(60);
    let journal = || -> Vec<serde_json::Value> {
        let Ok(state) = std::fs::read_dir(c.path("k/state")) else {
            return vec![];
        };
        let mut v = vec![];
        for d in state.flatten() {
            if let Ok(text) = std::fs::read_to_string(d.path().join("journal.jsonl")) {
                v.extend(text.lines().filter_map(|l| serde_json::from_str(l).ok()));
            }
        }
        v
    };
    loop {
        let finished = journal()
            .iter()
            .filter(|e| e["event"] == "call_finished" && e["agent"] == "translation")
            .count();
        if finished >= 4 {
            break;
        }
        assert!(Instant::now() < deadline, "campaign did not progress");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL on Unix
    child.wait().unwrap();
    let finished_units: BTreeSet<String> = journal()
        .iter()
        .filter(|e| e["event"] == "call_finished" && e["agent"] == "translation")
        .map(|e| e["unit"].as_str().unwrap().to_string())
        .collect();
    assert!(finished_units.len() >= 4);
    let total_units = unit_texts(&[&c.path("a.md"), &c.path("b.md")], 500).len();
    assert!(finished_units.len() < total_units, "killed before the end");

    fake.clear();
    fake.latency(Duration::ZERO, Duration::ZERO);
    let out = c
        .cmd("run", &["--base-url", &fake.base_url, "--json"])
        .env("OPENAI_API_KEY", KEY)
        .output()
        .unwrap();
    assert_code(&out, 0);
    assert_eq!(json_summary(&out)["status"], "complete");
    // Map finished unit ids to their texts and check none was requested again.
    let mut texts = BTreeMap::new();
    for f in ["a.md", "b.md"] {
        let text = c.read(f);
        let key = booktr::book::chapter::chapter_key(f);
        for u in segment(&key, &text, 500) {
            texts.insert(u.id.clone(), u.text(&text).to_string());
        }
    }
    let again = translated_texts(&fake);
    for id in &finished_units {
        assert!(
            !again.contains(&texts[id]),
            "finished unit {id} was requested again after the kill"
        );
    }
    assert_eq!(
        outputs(&c, "k"),
        outputs(&reference, "k"),
        "outputs equal an uninterrupted run's"
    );
}

#[test]
fn help_documents_exit_codes() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_booktr"))
        .arg("run")
        .arg("--help")
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    for code in ["0 ", "1 ", "2 ", "130"] {
        assert!(help.contains(code), "{help}");
    }
}

#[test]
fn local_images_are_copied_beside_the_translated_chapters() {
    let c = TestCampaign::with_chapters("img", &["book/ch.md"], "");
    c.write(
        "book/ch.md",
        "# Figures\n\nThe loop is drawn below.\n\n![The agent loop](images/loop.svg)\n\n![Remote](https://example.com/x.png) and ![Outside](../outside.png)\n",
    );
    let svg = "<svg xmlns=\"http://www.w3.org/2000/svg\"><circle r=\"4\"/></svg>\n";
    c.write("book/images/loop.svg", svg);
    c.write("outside.png", "not copied");
    assert_code(&c.cmd("run", &[]).output().unwrap(), 0);
    assert_eq!(c.read("img/out/images/loop.svg"), svg);
    assert!(c.read("img/out/ch.md").contains("](images/loop.svg)"));
    assert!(
        !c.path("img/outside.png").exists(),
        "a `..` target is never followed"
    );
    // A later run leaves the copy alone; a changed source image is copied again.
    let changed = svg.replace("r=\"4\"", "r=\"5\"");
    c.write("book/images/loop.svg", &changed);
    assert_code(&c.cmd("run", &[]).output().unwrap(), 0);
    assert_eq!(c.read("img/out/images/loop.svg"), changed);
}
