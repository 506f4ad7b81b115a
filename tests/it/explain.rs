//! `booktr explain` (issue 17, provenance) against the fake server: a campaign whose first
//! translation has one error (a changed link target) and whose revision is worse (it adds a
//! duplicated code block and invented headings). `explain --json` must give the unit's real
//! history from the files on disk: fingerprint, model, prompt version, both candidates with
//! their findings, the first one kept and the revision rejected by the never-worse rule.

use crate::support;

use booktr::agents::Agent;
use booktr::lang::Lang;
use support::fake_llm::{FakeServer, Reply, default_content};
use support::{TestCampaign, assert_code};

const KEY: &str = "sk-booktr-explain-KEY-17ab";
const LINK: &str = "https://example.org/guide";
const BAD_LINK: &str = "https://example.org/zh/guide";
const CHAPTER: &str = "# Agents\n\nAn agent calls tools in a loop and reads what comes back before it decides on the next step; see [the guide](https://example.org/guide) for the whole loop.\n";
const JUNK: &str =
    "\n```python\nrun()\n```\n\n```python\nrun()\n```\n\n## 发明的标题\n\n## 另一个发明的标题\n";

fn campaign() -> TestCampaign {
    let c = TestCampaign::with_chapters(
        "k",
        &["a.md"],
        "glossaries = [\"g.csv\"]\nbrief = true\nrevision_rounds = 1\nrepair = \"off\"\n[provider]\nkind = \"openai\"\nmodel = \"m\"\n",
    );
    c.write("a.md", CHAPTER);
    c.write("g.csv", "source,target,note\nagent,智能体,house term\n");
    c
}

fn worse_reviser() -> FakeServer {
    let fake = FakeServer::start();
    let zh = Lang::parse("zh");
    fake.script(move |r| {
        if r.agent != Agent::Translation {
            return Reply::Default;
        }
        let first = default_content(&zh, Agent::Translation, &r.messages).replace(LINK, BAD_LINK);
        if r.is_revision() {
            Reply::Content(format!("{first}{JUNK}"))
        } else {
            Reply::Content(first)
        }
    });
    fake
}

fn checks(findings: &serde_json::Value) -> Vec<&str> {
    findings
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["check"].as_str().unwrap())
        .collect()
}

#[test]
fn explain_gives_the_history_of_a_revised_unit() {
    let fake = worse_reviser();
    let c = campaign();
    let out = c
        .cmd("run", &["--base-url", &fake.base_url])
        .env("OPENAI_API_KEY", KEY)
        .output()
        .unwrap();
    assert_code(&out, 1);
    let report: serde_json::Value =
        serde_json::from_str(&c.read("k/validation/report.json")).unwrap();
    let unit = report["units"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["candidates"].as_array().is_some_and(|k| k.len() == 2))
        .expect("a revised unit")["id"]
        .as_str()
        .unwrap()
        .to_string();

    let out = c.cmd("explain", &[&unit, "--json"]).output().unwrap();
    assert_code(&out, 0);
    let e: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(e["schema_version"], 1);
    assert_eq!(e["unit"], unit.as_str());
    assert_eq!(e["chapter"], "a");
    assert_eq!(e["kind"], "translate");
    assert_eq!(e["provider"], "openai");
    assert_eq!(e["model"], "m");
    assert_eq!(e["prompt_version"], booktr::agents::PROMPT_VERSION);
    let source = &CHAPTER[CHAPTER.find("An agent").unwrap()..];
    let fp = e["fingerprint"].as_str().unwrap();
    assert_eq!(fp.len(), 16, "{e}");
    assert!(fp.chars().all(|c| c.is_ascii_hexdigit()));
    assert_eq!(e["source_sha256"].as_str().unwrap().len(), 64);
    assert!(e["source_chars"].as_u64().unwrap() > 0);
    assert_eq!(e["brief_sha256"].as_str().map(str::len), Some(64), "{e}");
    assert_eq!(e["brief_edited"], false);
    assert!(source.contains("agent"));
    // The house-style entry the unit's prompts carried, with its origin.
    let g = e["glossary"].as_array().unwrap();
    assert_eq!(g.len(), 1, "{e}");
    assert_eq!(
        (
            &g[0]["source"],
            &g[0]["target"],
            &g[0]["origin"],
            &g[0]["note"]
        ),
        (
            &serde_json::json!("agent"),
            &serde_json::json!("智能体"),
            &serde_json::json!("house_style"),
            &serde_json::json!("house term")
        )
    );

    let k = e["candidates"].as_array().unwrap();
    assert_eq!(k.len(), 2, "{e}");
    assert_eq!(k[0]["round"], 0);
    assert_eq!(k[0]["origin"], "translation");
    assert_eq!(k[0]["call"], format!("translate/{fp}/r0").as_str());
    let file = k[0]["result_file"].as_str().unwrap();
    let state = c.path("k/state");
    let found = walkdir_find(&state, file);
    assert!(found, "result file {file} under {}", state.display());
    // The model the fake server named in its answers (the campaign asked for `m`).
    assert_eq!(k[0]["model"], "fake-model", "{e}");
    assert_eq!(k[1]["model"], "fake-model", "{e}");
    assert!(k[0]["usage"]["prompt_tokens"].as_u64().unwrap() > 0, "{e}");
    assert_eq!(k[0]["errors"], 1);
    assert_eq!(checks(&k[0]["findings"]), ["links"]);
    assert_eq!(k[0]["kept"], true);
    assert_eq!(k[0]["verdict"], "kept");
    assert_eq!(k[0]["sent_back_because"], "deterministic QA errors", "{e}");
    assert_eq!(k[1]["sent_back_because"], serde_json::Value::Null);
    assert_eq!(k[1]["round"], 1);
    assert_eq!(k[1]["origin"], "revision");
    assert_eq!(k[1]["rejected"], true);
    assert_eq!(k[1]["kept"], false);
    let revision_checks = checks(&k[1]["findings"]);
    assert!(
        revision_checks.contains(&"headings") && revision_checks.contains(&"links"),
        "{revision_checks:?}"
    );
    assert_eq!(
        k[1]["findings"].as_array().unwrap().len() as u64,
        k[1]["errors"].as_u64().unwrap() + k[1]["warnings"].as_u64().unwrap()
    );
    assert!(
        k[1]["verdict"].as_str().unwrap().starts_with(&format!(
            "rejected: {} error finding(s) against 1 for the best earlier candidate",
            k[1]["errors"]
        )),
        "{e}"
    );
    assert_eq!(e["kept"], 0);
    assert_eq!(e["text_origin"], "model");
    assert!(
        e["kept_because"].as_str().unwrap().starts_with(
            "fewest error findings, then fewest warnings among 2 candidates (1 error(s)"
        ),
        "{e}"
    );
    assert_eq!(checks(&e["final_findings"]), ["links"]);
    assert_eq!(e["memory"], serde_json::Value::Null);
    assert_eq!(e["marks"], serde_json::json!([]), "no mark yet");

    // The text form says the same.
    let out = c.cmd("explain", &[&unit]).output().unwrap();
    assert_code(&out, 0);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(&format!("fingerprint: {fp}")), "{text}");
    assert!(text.contains("#0 round 0 translation"), "{text}");
    assert!(text.contains("#1 round 1 revision"), "{text}");
    assert!(text.contains("kept: #0 (model)"), "{text}");

    // An editor dismisses the kept text's `links` finding: explain lists the mark.
    let reported = report["units"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["id"] == unit.as_str())
        .unwrap();
    let id = reported["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["check"] == "links")
        .expect("the kept text's links finding")["id"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(id.len(), 12, "{reported}");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_booktr"))
        .args(["qa", "dismiss"])
        .arg(&c.file)
        .args([id.as_str(), "--note", "the link is fine"])
        .output()
        .unwrap();
    assert_code(&out, 0);
    let out = c.cmd("explain", &[&unit, "--json"]).output().unwrap();
    let e: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let marks = e["marks"].as_array().unwrap();
    assert_eq!(marks.len(), 1, "{e}");
    assert_eq!(marks[0]["id"], id.as_str());
    assert_eq!(marks[0]["mark"], "dismissed");
    assert_eq!(marks[0]["note"], "the link is fine");
    assert_eq!(marks[0]["check"], "links");
    let out = c.cmd("explain", &[&unit]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!(
            "mark: finding {id} (links) dismissed via cli: the link is fine"
        )),
        "{text}"
    );
}

/// Whether `rel` (relative to some state directory below `root`) exists.
fn walkdir_find(root: &std::path::Path, rel: &str) -> bool {
    let Ok(entries) = std::fs::read_dir(root) else {
        return false;
    };
    entries.flatten().any(|e| {
        e.path().join(rel).is_file() || (e.path().is_dir() && walkdir_find(&e.path(), rel))
    })
}

#[test]
fn explain_of_an_unknown_unit_names_the_campaign_and_close_ids() {
    let fake = worse_reviser();
    let c = campaign();
    let out = c
        .cmd("run", &["--base-url", &fake.base_url])
        .env("OPENAI_API_KEY", KEY)
        .output()
        .unwrap();
    assert_code(&out, 1);
    let out = c.cmd("explain", &["a-01"]).output().unwrap();
    assert_code(&out, 2);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unit `a-01` is not in campaign"), "{err}");
    assert!(err.contains("k.toml") || err.contains(".toml"), "{err}");
    assert!(err.contains("did you mean `a-00"), "{err}");
}

#[test]
fn explain_shows_a_hand_edit_as_the_kept_human_text() {
    let fake = worse_reviser();
    let c = campaign();
    let out = c
        .cmd("run", &["--base-url", &fake.base_url])
        .env("OPENAI_API_KEY", KEY)
        .output()
        .unwrap();
    assert_code(&out, 1);
    // The editor fixes the link in the output chapter; `validate` records the hand edit.
    let text = c.read("k/out/a.md");
    assert!(text.contains(BAD_LINK), "{text}");
    c.write("k/out/a.md", &text.replace(BAD_LINK, LINK));
    let out = c.cmd("validate", &[]).output().unwrap();
    assert_code(&out, 0);

    let out = c.cmd("explain", &["a-000", "--json"]).output().unwrap();
    assert_code(&out, 0);
    let e: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let k = e["candidates"].as_array().unwrap();
    assert_eq!(k.len(), 3, "{e}");
    assert_eq!(k[2]["origin"], "human");
    assert_eq!(k[2]["round"], serde_json::Value::Null);
    assert_eq!(k[2]["errors"], 0);
    assert_eq!(k[2]["kept"], true);
    assert_eq!(k[2]["call"], serde_json::Value::Null);
    assert_eq!(k[0]["kept"], false);
    assert_eq!(
        k[0]["verdict"],
        "not used: the editor's text wins over every model candidate"
    );
    assert_eq!(e["kept"], 2);
    assert_eq!(e["text_origin"], "human");
    assert!(
        e["kept_because"]
            .as_str()
            .unwrap()
            .starts_with("the editor's hand edit of the output chapter wins"),
        "{e}"
    );
    assert_eq!(e["final_findings"], serde_json::json!([]));
}

#[test]
fn explain_names_the_translation_memory_a_unit_came_from() {
    let provider = "[provider]\nkind = \"openai\"\nmodel = \"m\"\n";
    let a = TestCampaign::with_chapters("a", &["a.md"], provider);
    a.write("a.md", CHAPTER);
    let fake = FakeServer::start();
    let run = |c: &TestCampaign| {
        c.cmd("run", &["--base-url", &fake.base_url])
            .env("OPENAI_API_KEY", KEY)
            .output()
            .unwrap()
    };
    assert_code(&run(&a), 0);
    assert_code(&a.cmd("export", &["--format", "tmx"]).output().unwrap(), 0);
    let b =
        TestCampaign::with_chapters("b", &["a.md"], &format!("memory = [\"a.tmx\"]\n{provider}"));
    b.write("a.md", CHAPTER);
    b.write("a.tmx", &a.read("a/export/a.tmx"));
    assert_code(&run(&b), 0);

    let out = b.cmd("explain", &["a-000", "--json"]).output().unwrap();
    assert_code(&out, 0);
    let e: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(e["text_origin"], "memory", "{e}");
    assert_eq!(e["memory"]["file"], "a.tmx", "{e}");
    assert!(!e["memory"]["tuid"].as_str().unwrap().is_empty(), "{e}");
    let k = e["candidates"].as_array().unwrap();
    assert_eq!(k.len(), 1, "{e}");
    assert_eq!(k[0]["origin"], "memory");
    assert_eq!(k[0]["kept"], true);
    assert_eq!(k[0]["usage"]["prompt_tokens"], 0, "no model call: {e}");
    assert!(
        e["kept_because"]
            .as_str()
            .unwrap()
            .starts_with("the only candidate (0 error(s)"),
        "{e}"
    );
    let text =
        String::from_utf8_lossy(&b.cmd("explain", &["a-000"]).output().unwrap().stdout).to_string();
    assert!(text.contains("memory: a.tmx tuid "), "{text}");
}
