//! `booktr plan` works offline (no key, no request) and its estimate of prompt tokens is within
//! 10 % of what the pseudo provider then measures; on a campaign with state it shows what is done
//! and what a resume would send.

use crate::support;

use support::{TestCampaign, assert_code, corpus_dir, json_summary};

fn total_prompt(v: &serde_json::Value) -> f64 {
    v.as_object()
        .unwrap()
        .values()
        .map(|a| a["prompt_tokens"].as_f64().unwrap())
        .sum()
}

fn check(c: &TestCampaign) {
    // Offline even for an OpenAI campaign with no key set: plan builds no provider.
    let out = c
        .cmd(
            "plan",
            &["--json", "--provider", "openai", "--model", "some-model"],
        )
        .output()
        .unwrap();
    assert_code(&out, 0);
    let openai_plan: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().last().unwrap()).unwrap();
    assert_eq!(openai_plan["provider"], "openai");

    let out = c.cmd("plan", &["--json"]).output().unwrap();
    assert_code(&out, 0);
    let plan: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().last().unwrap()).unwrap();
    let estimated = total_prompt(&plan["estimate"]["total"]);
    assert!(
        plan["chapters"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["units"].as_u64().unwrap() > 0)
    );
    assert!(plan["agent_graph"].as_array().unwrap().len() >= 5);

    let out = c.cmd("run", &["--json"]).output().unwrap();
    assert_code(&out, 0);
    let measured = total_prompt(&json_summary(&out)["usage"]);
    let error = (estimated - measured).abs() / measured;
    println!(
        "estimated {estimated} prompt tokens, measured {measured} ({:.1} % off)",
        error * 100.0
    );
    assert!(
        error <= 0.10,
        "estimate {estimated} vs measured {measured}: {:.1} % off",
        error * 100.0
    );

    // With state: everything is done, a resume sends nothing for translation.
    let out = c.cmd("plan", &["--json"]).output().unwrap();
    let after: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().last().unwrap()).unwrap();
    let e = &after["estimate"];
    assert_eq!(e["units_done"], e["units_to_translate"]);
    assert_eq!(e["remaining"]["translation"]["calls"], 0);
    assert_eq!(e["remaining"]["glossary"]["calls"], 0);
}

#[test]
fn plan_estimates_the_sample_book_within_ten_percent() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let chapters = support::sample_book_chapters();
    let refs: Vec<&str> = chapters.iter().map(String::as_str).collect();
    let glossary = root.join("glossaries/house-style.en-zh.csv");
    let c = TestCampaign::with_chapters(
        "p",
        &refs,
        &format!(
            "max_unit_chars = 800\nglossaries = [{:?}]\n",
            glossary.to_string_lossy()
        ),
    );
    check(&c);
}

#[booktr_test_needs::needs(corpus)]
#[test]
fn plan_estimates_two_corpus_chapters_within_ten_percent() {
    let Some(corpus) = corpus_dir() else { return };
    let chapters: Vec<String> = ["chapter01.md", "chapter02.md"]
        .iter()
        .map(|f| corpus.join("en").join(f).to_string_lossy().into_owned())
        .collect();
    let refs: Vec<&str> = chapters.iter().map(String::as_str).collect();
    let c = TestCampaign::with_chapters("p", &refs, "");
    check(&c);
}

/// Helper-found bug: after a campaign whose every unit came from the translation memory had
/// finished, `plan` still counted one proofreading call per chapter as remaining ("a resume
/// would send 3 calls") and in the total, while `run` sent none: the run's review budget is a
/// share of the prompt tokens the translations cost, and memory hits cost none.
#[test]
fn plan_counted_proofreading_for_a_campaign_all_from_memory() {
    use support::fake_llm::FakeServer;
    const KEY: &str = "sk-booktr-plan-memory-KEY-5c1e";
    let chapters = [
        (
            "a.md",
            "# Agents\n\nAn agent calls tools in a loop and reads what comes back before it decides on the next step.\n\nA second paragraph says why the loop ends when the task is done.\n",
        ),
        (
            "b.md",
            "# Tools\n\nA tool is a function the model may call; its result goes back into the context window.\n",
        ),
    ];
    let names: Vec<&str> = chapters.iter().map(|c| c.0).collect();
    // Proofreading is off by default (finding 21); this test is about its budget.
    let provider = "proofread_share = 0.2\n[provider]\nkind = \"openai\"\nmodel = \"m\"\n";
    let fake = FakeServer::start();
    let run = |c: &TestCampaign| c.run_ok_against(&fake.base_url, KEY);
    let a = TestCampaign::with_chapters("a", &names, provider);
    for (name, text) in chapters {
        a.write(name, text);
    }
    let first = run(&a);
    assert!(
        first["usage"]["proofreading"]["calls"].as_u64().unwrap() > 0,
        "{first}"
    );
    assert_code(&a.cmd("export", &["--format", "tmx"]).output().unwrap(), 0);

    let b = TestCampaign::with_chapters("b", &names, &format!("memory = [\"a.tmx\"]\n{provider}"));
    for (name, text) in chapters {
        b.write(name, text);
    }
    b.write("a.tmx", &a.read("a/export/a.tmx"));
    let plan = |c: &TestCampaign| -> serde_json::Value {
        let out = c.cmd("plan", &["--json"]).output().unwrap();
        assert_code(&out, 0);
        let e: serde_json::Value =
            serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().last().unwrap())
                .unwrap();
        e["estimate"].clone()
    };
    let before = plan(&b);
    let summary = run(&b);
    assert_eq!(summary["units"]["memory_hits"], 2, "{summary}");
    assert_eq!(summary["usage"]["translation"]["calls"], 0, "{summary}");
    let sent = summary["usage"]["proofreading"]["calls"].as_u64().unwrap();
    assert_eq!(
        sent, 0,
        "a chapter all from memory has no review budget: {summary}"
    );
    // Before the run, the estimate counted the proofreading calls the run then sent.
    assert_eq!(before["total"]["proofreading"]["calls"], sent, "{before}");
    assert_eq!(before["remaining"]["translation"]["calls"], 0, "{before}");
    // After it, nothing remains to send.
    let after = plan(&b);
    let remaining: u64 = after["remaining"]
        .as_object()
        .unwrap()
        .values()
        .map(|a| a["calls"].as_u64().unwrap())
        .sum();
    assert_eq!(remaining, 0, "{after}");
}

/// With proofreading off (`proofread_share = 0`, the default since finding 21), `plan`
/// counted a Proofreading batch per chapter (3 calls, 576 prompt tokens on the sample book) and
/// a Manager decision per revision round at the range's high end, while the run sends neither.
#[test]
fn plan_counted_proofreading_with_proofreading_off() {
    let chapters = support::sample_book_chapters();
    let refs: Vec<&str> = chapters.iter().map(String::as_str).collect();
    let c = TestCampaign::with_chapters("off", &refs, "max_unit_chars = 800\n");
    let out = c.cmd("plan", &["--json"]).output().unwrap();
    assert_code(&out, 0);
    let plan: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().last().unwrap()).unwrap();
    let e = &plan["estimate"];
    assert_eq!(e["total"]["proofreading"]["calls"], 0, "{e}");
    assert_eq!(e["total"]["proofreading"]["prompt_tokens"], 0, "{e}");
    for end in ["low", "high"] {
        assert_eq!(e["range"]["proofreading"][end]["calls"], 0, "{end}: {e}");
        assert_eq!(e["range"]["manager"][end]["calls"], 0, "{end}: {e}");
    }
    // The translations are still counted, and the run then sends what plan said.
    assert_eq!(e["total"]["translation"]["calls"], 6, "{e}");
    let out = c.cmd("run", &["--json"]).output().unwrap();
    assert_code(&out, 0);
    let r = json_summary(&out);
    assert_eq!(r["usage"]["proofreading"]["calls"], 0, "{r}");
    assert_eq!(r["usage"]["manager"]["calls"], 0, "{r}");
    assert_eq!(r["usage"]["translation"]["calls"], 6, "{r}");
}
