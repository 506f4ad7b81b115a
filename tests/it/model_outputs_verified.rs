//! Nothing a model made is enforced unverified, end to end against the fake server:
//! - a half-untranslated Glossary-agent entry (`Working memory → working记忆`) and one with no
//!   Chinese at all leave the termbase, are listed in report.json's `glossary_rejections` (and report.md),
//!   and are flagged in the glossary review CSV; the translation that writes 工作记忆 gets no
//!   glossary finding and no revision;
//! - a reconciliation answered `ok` is rejected: recorded in report.json's reconciliation
//!   entries (`rejected: true`, `reason`), no reconciled entry, no revision for the term.

use crate::support;

use booktr::agents::Agent;
use booktr::lang::Lang;
use booktr::llm::Message;
use support::fake_llm::{FakeServer, Reply, default_content};
use support::{TestCampaign, assert_code, json_summary};

const KEY: &str = "sk-booktr-verify-KEY-33cc";

fn chapter() -> String {
    (1..=6)
        .map(|i| format!("## Part {i}\n\nIn part {i} the agent keeps its working memory small, and each tool call adds a line to the working memory before the next step.\n\n"))
        .collect()
}

fn campaign(name: &str, extra: &str) -> TestCampaign {
    let c = TestCampaign::with_chapters(
        name,
        &["a.md"],
        &format!(
            "max_unit_chars = 300\nrevision_rounds = 1\n{extra}\n[provider]\nkind = \"openai\"\nmodel = \"m\"\n"
        ),
    );
    c.write("a.md", &chapter());
    c
}

/// The fake: the Glossary agent proposes `working记忆` for "working memory" and `nextstep` (no
/// Chinese at all) for "next step"; translations (pseudo) render "working memory" as 工作记忆.
fn script(fake: &FakeServer) {
    let zh = Lang::parse("zh");
    fake.script(move |r| {
        let text = r.all_text();
        if r.agent == Agent::Glossary
            && text.contains(booktr::agents::glossary::CANDIDATES_HEADER)
            && !text.contains("was rendered in different ways")
        {
            return Reply::Content(
                r#"{"entries": [{"source": "working memory", "target": "working记忆", "note": ""}, {"source": "next step", "target": "nextstep", "note": ""}]}"#.into(),
            );
        }
        if r.agent == Agent::Translation && !r.is_revision() {
            let mut messages: Vec<Message> = r.messages.clone();
            let g = r.glossary_index();
            messages[g].content = format!("- working memory → 工作记忆\n{}", messages[g].content);
            return Reply::Content(default_content(&zh, Agent::Translation, &messages));
        }
        Reply::Default
    });
}

#[test]
fn half_untranslated_glossary_entry_is_not_enforced_in_a_run() {
    let fake = FakeServer::start();
    script(&fake);
    let c = campaign("v", "");
    let out = c
        .cmd("run", &["--base-url", &fake.base_url, "--json"])
        .env("OPENAI_API_KEY", KEY)
        .output()
        .unwrap();
    let s = json_summary(&out);
    let report: serde_json::Value =
        serde_json::from_str(&c.read("v/validation/report.json")).unwrap();
    let rejections = report["glossary_rejections"].as_array().unwrap();
    let by = |src: &str| {
        rejections
            .iter()
            .find(|r| r["source"].as_str().unwrap().eq_ignore_ascii_case(src))
            .unwrap_or_else(|| panic!("{src} not rejected: {rejections:?}"))
    };
    assert_eq!(by("working memory")["action"], "review");
    assert_eq!(by("working memory")["target"], "working记忆");
    assert!(
        by("working memory")["reason"]
            .as_str()
            .unwrap()
            .contains("leaves the source word `working` untranslated")
    );
    assert_eq!(by("next step")["action"], "dropped");
    // Neither entered the termbase, so nothing was enforced against 工作记忆.
    let glossary = report["glossary"].as_array().unwrap();
    assert!(
        glossary.iter().all(|e| e["target"] != "working记忆"),
        "{glossary:?}"
    );
    let glossary_findings: Vec<_> = report["units"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|u| u["findings"].as_array().unwrap().iter())
        .filter(|f| f["check"] == "glossary")
        .collect();
    assert!(glossary_findings.is_empty(), "{glossary_findings:?}");
    let revisions = fake.requests().iter().filter(|r| r.is_revision()).count();
    assert_eq!(revisions, 0, "{s}");
    let md = c.read("v/validation/report.md");
    assert!(
        md.contains("## Glossary proposals not enforced") && md.contains("working记忆"),
        "{md}"
    );
    let html = c.read("v/validation/report.html");
    assert!(html.contains("glossary-rejections-table"));
}

#[test]
fn rejected_glossary_entries_are_flagged_at_the_glossary_gate() {
    let fake = FakeServer::start();
    script(&fake);
    let c = campaign("g", "review = [\"glossary\"]");
    let out = c
        .cmd("run", &["--base-url", &fake.base_url, "--json"])
        .env("OPENAI_API_KEY", KEY)
        .output()
        .unwrap();
    assert_code(&out, 3);
    let csv = c.read("g/validation/glossary-review.csv");
    let line = csv
        .lines()
        .find(|l| l.contains("working记忆"))
        .unwrap_or_else(|| panic!("no review row: {csv}"));
    assert!(line.contains("rejected (review)"), "{line}");
    assert!(
        !csv.contains("nextstep"),
        "a dropped entry is no row: {csv}"
    );
    let md = c.read("g/validation/glossary-review.md");
    assert!(
        md.contains("## Proposals dropped by a check") && md.contains("nextstep"),
        "{md}\n{csv}"
    );
}

/// The chapter of `tests/it/repair_loop.rs`: eight sections, each with one "tool call".
fn sections() -> String {
    let lead = [
        "Every",
        "Each",
        "A slow",
        "The first",
        "One more",
        "Any",
        "This",
        "That",
    ];
    let tail = [
        "is logged",
        "costs tokens",
        "may fail",
        "returns text",
        "needs a schema",
        "can time out",
        "is checked",
        "ends a step",
    ];
    (1..=8)
        .map(|i| {
            let (l, t) = (lead[i - 1], tail[8 - i]);
            format!("## Section {i}\n\nIn section {i} we look at agents at work. {l} tool call {t}, and the model reads what comes back before it decides on the next step of the task.\n\n")
        })
        .collect()
}

#[test]
fn reconciliation_answer_ok_is_rejected_in_a_run() {
    let fake = FakeServer::start();
    let zh = Lang::parse("zh");
    fake.script(move |r| {
        let text = r.all_text();
        if r.agent == Agent::Glossary && text.contains("was rendered in different ways") {
            return Reply::Content(r#"{"rendering": "ok", "note": "ok"}"#.into());
        }
        if r.agent == Agent::Glossary && text.contains(booktr::agents::glossary::CANDIDATES_HEADER)
        {
            return Reply::Content("{\"entries\": []}".into());
        }
        if r.agent != Agent::Translation || r.is_revision() {
            return Reply::Default;
        }
        // Sections 2 and 5 keep "tool call" in English; the others render it 工具调用, which
        // section 1 glosses (工具调用（tool call）), so the drift is confirmed and reconciled.
        let unit = r.unit_text().unwrap_or("");
        let keep = unit.contains("Section 2\n") || unit.contains("Section 5\n");
        let mut messages: Vec<Message> = r.messages.clone();
        let line = if keep {
            "- tool call → tool call\n"
        } else if unit.contains("Section 1\n") {
            "- tool call → 工具调用（tool call）\n"
        } else {
            "- tool call → 工具调用\n"
        };
        let g = r.glossary_index();
        messages[g].content = format!("{line}{}", messages[g].content);
        Reply::Content(default_content(&zh, Agent::Translation, &messages))
    });
    let c = campaign("r", "");
    c.write("a.md", &sections());
    let out = c
        .cmd("run", &["--base-url", &fake.base_url, "--json"])
        .env("OPENAI_API_KEY", KEY)
        .output()
        .unwrap();
    let s = json_summary(&out);
    let report: serde_json::Value =
        serde_json::from_str(&c.read("r/validation/report.json")).unwrap();
    let rec = report["reconciliations"].as_array().unwrap();
    let x = rec
        .iter()
        .find(|x| {
            x["term"]
                .as_str()
                .unwrap()
                .eq_ignore_ascii_case("tool call")
        })
        .unwrap_or_else(|| panic!("no reconciliation of tool call: {rec:?}; {s}"));
    assert_eq!(x["rejected"], true, "{x}");
    assert!(x["chosen"].is_null(), "{x}");
    assert!(
        x["reason"].as_str().unwrap().starts_with("`ok` is neither"),
        "{x}"
    );
    assert!(
        report["glossary"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["origin"] != "reconciled"),
        "{}",
        report["glossary"]
    );
    // Sections 2 and 5 keep "tool call" in English: `untranslated_word` errors, whose
    // revisions are not the reconciliation's.
    let revisions = fake
        .requests()
        .iter()
        .filter(|r| r.is_revision())
        .filter(|r| {
            let t = r.all_text();
            let review = t.rsplit("A review found problems").next().unwrap_or("");
            review
                .lines()
                .filter(|l| l.starts_with("- "))
                .any(|l| !l.starts_with("- untranslated_word: \"tool call\""))
        })
        .count();
    assert_eq!(
        revisions, 0,
        "no revision from a rejected reconciliation; {s}"
    );
    // Asked once, not again in a later round.
    let asked = fake
        .requests()
        .iter()
        .filter(|r| r.all_text().contains("was rendered in different ways"))
        .count();
    assert_eq!(asked, 1);
    let md = c.read("r/validation/report.md");
    assert!(md.contains("answer **rejected**"), "{md}");
}
