//! Incremental re-translation: translations are stored by unit fingerprint (source bytes,
//! glossary entries that apply, prompt version, model), so editing one paragraph re-sends only
//! the changed unit, and adding a glossary entry re-sends only the units containing the term.
//! A changed model is a new configuration: refused, unless `--fresh` (old state moved aside) or
//! `--retranslate` (new state beside the old one).

use crate::support;

use booktr::agents::Agent;
use support::fake_llm::FakeServer;
use support::{TestCampaign, assert_code, json_summary};

const KEY: &str = "sk-booktr-incr-KEY-5c2b";

fn chapter() -> String {
    (1..=8)
        .map(|i| format!("## Section {i}\n\nParagraph {i}: the agent plans a step, calls a tool, reads the result and keeps notes in its context window for the next call.\n\n"))
        .collect()
}

fn campaign(glossary: &str) -> TestCampaign {
    let c = TestCampaign::with_chapters(
        "i",
        &["a.md"],
        "max_unit_chars = 300\nglossaries = [\"g.csv\"]\n[provider]\nkind = \"openai\"\nmodel = \"m\"\n",
    );
    c.write("a.md", &chapter());
    c.write("g.csv", glossary);
    c
}

fn run(c: &TestCampaign, fake: &FakeServer, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["--base-url", fake.base_url.as_str(), "--json"];
    args.extend_from_slice(extra);
    c.cmd("run", &args)
        .env("OPENAI_API_KEY", KEY)
        .output()
        .unwrap()
}

fn translation_texts(fake: &FakeServer) -> Vec<String> {
    fake.requests()
        .iter()
        .filter(|r| r.agent == Agent::Translation && !r.is_revision())
        .map(|r| r.unit_text().unwrap().to_string())
        .collect()
}

#[test]
fn editing_one_paragraph_resends_only_the_changed_unit() {
    let fake = FakeServer::start();
    let c = campaign("source,target\ncontext window,上下文窗口\n");
    let out = run(&c, &fake, &[]);
    assert_code(&out, 0);
    let first = json_summary(&out);
    let units = first["units"]["translated"].as_u64().unwrap();
    assert!(units >= 4, "{first}");
    assert_eq!(first["units"]["reused"], 0);
    fake.clear();

    c.write(
        "a.md",
        &chapter().replace(
            "Paragraph 5: the agent plans a step",
            "Paragraph 5: the agent carefully plans a step",
        ),
    );
    let out = run(&c, &fake, &[]);
    assert_code(&out, 0);
    let s = json_summary(&out);
    let sent = translation_texts(&fake);
    assert_eq!(
        sent.len(),
        1,
        "exactly the changed unit is re-sent: {sent:?}"
    );
    assert!(sent[0].contains("carefully plans"));
    assert_eq!(s["units"]["reused"].as_u64().unwrap(), units - 1);
    assert_eq!(
        fake.count(Agent::Glossary),
        0,
        "no new term, no glossary call"
    );
    assert!(c.read("i/out/a.md").contains("## "), "outputs rewritten");
    // Nothing changed: nothing is sent.
    fake.clear();
    assert_code(&run(&c, &fake, &[]), 0);
    assert_eq!(fake.requests().len(), 0);
}

#[test]
fn resume_line_did_not_say_it_paid_nothing() {
    // A new user's report: a resume printed the same line as the first run, so it read as if
    // everything had been paid again. The line now names the reused translations.
    let fake = FakeServer::start();
    let c = campaign("source,target\ncontext window,上下文窗口\n");
    let first = run(&c, &fake, &[]);
    assert_code(&first, 0);
    let units = json_summary(&first)["units"]["translated"]
        .as_u64()
        .unwrap();
    assert!(!String::from_utf8_lossy(&first.stderr).contains("reused"));
    fake.clear();
    let again = run(&c, &fake, &[]);
    assert_code(&again, 0);
    assert_eq!(fake.requests().len(), 0);
    let err = String::from_utf8_lossy(&again.stderr);
    assert!(
        err.contains(&format!(
            "units translated ({units} reused from earlier runs, not requested again)"
        )),
        "{err}"
    );
}

#[test]
fn adding_a_glossary_entry_retranslates_only_units_with_the_term() {
    let fake = FakeServer::start();
    let c = campaign("source,target\ncontext window,上下文窗口\n");
    assert_code(&run(&c, &fake, &[]), 0);
    fake.clear();
    // "Paragraph 3" occurs in one unit only.
    c.write(
        "g.csv",
        "source,target\ncontext window,上下文窗口\nParagraph 3,第三段\n",
    );
    let out = run(&c, &fake, &[]);
    assert_code(&out, 0);
    let sent = translation_texts(&fake);
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert!(sent[0].contains("Paragraph 3"));
    assert!(
        fake.requests()
            .iter()
            .filter(|r| r.agent == Agent::Translation)
            .all(|r| r.glossary_text().contains("Paragraph 3 → 第三段"))
    );
}

#[test]
fn a_changed_model_is_refused_unless_fresh_or_retranslate() {
    let fake = FakeServer::start();
    let c = campaign("source,target\n");
    assert_code(&run(&c, &fake, &[]), 0);
    let out = run(&c, &fake, &["--model", "other"]);
    assert_code(&out, 2);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("model changed: m → other")
            && err.contains("--fresh")
            && err.contains("--retranslate"),
        "{err}"
    );

    fake.clear();
    let out = run(&c, &fake, &["--model", "other", "--retranslate"]);
    assert_code(&out, 0);
    assert!(
        fake.count(Agent::Translation) >= 4,
        "everything translated again with the new model"
    );
    let states: Vec<_> = std::fs::read_dir(c.path("i/state"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().join("config.json").exists())
        .collect();
    assert_eq!(states.len(), 2, "the old state is kept beside the new one");

    let out = run(&c, &fake, &["--model", "third", "--fresh"]);
    assert_code(&out, 0);
    assert!(c.path("i/state/superseded").is_dir());
    let states: Vec<_> = std::fs::read_dir(c.path("i/state"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().join("config.json").exists())
        .collect();
    assert_eq!(states.len(), 1);
}
