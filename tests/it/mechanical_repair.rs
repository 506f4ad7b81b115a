//! Issue 18 against the fake server: mechanical faults are repaired, not only reported. A
//! first translation with a translated footnote label, a demoted heading and a duplicated code
//! block ends with those repaired in the output, the kept candidate of origin `repaired`, the
//! three repairs listed in report.json and no revision request; an ambiguous fault (two inline
//! codes changed in one sentence) is left alone and goes to a revision whose request quotes the
//! finding; `repair = "off"` keeps the old behaviour; resume pays nothing and keeps the text.

use crate::support;

use booktr::agents::Agent;
use booktr::lang::Lang;
use support::fake_llm::{FakeServer, Reply, default_content};
use support::{TestCampaign, assert_code};

const KEY: &str = "sk-booktr-repair-KEY-18aa";

const CODE: &str = "```sh\npip install agent\n```";

const CHAPTER: &str = "# Agents\n\nAn agent calls tools[^tool] in a loop and reads what comes back before it decides on the next step.\n\n## Setup\n\nInstall the package before you run the first example of this chapter.\n\n```sh\npip install agent\n```\n\n[^tool]: A tool is a function that the model may ask the program to call.\n";

const INLINE: &str = "# Calls\n\nThe program calls `open_file()` first and `close_file()` when it has read everything it needs.\n";

fn campaign(extra: &str, chapter: &str) -> TestCampaign {
    let c = TestCampaign::with_chapters(
        "k",
        &["a.md"],
        &format!("revision_rounds = 1\n{extra}[provider]\nkind = \"openai\"\nmodel = \"m\"\n"),
    );
    c.write("a.md", chapter);
    c
}

/// The three mechanical faults: the footnote label translated (reference and definition), the
/// `## ` heading demoted to `### `, the code block duplicated.
fn mangle(good: &str) -> String {
    let t = good.replace("[^tool]", "[^工具]");
    let t: Vec<String> = t
        .split('\n')
        .map(|l| match l.strip_prefix("## ") {
            Some(rest) => format!("### {rest}"),
            None => l.to_string(),
        })
        .collect();
    t.join("\n").replacen(CODE, &format!("{CODE}\n\n{CODE}"), 1)
}

/// A fake model that makes the [`mangle`] faults in every first translation and answers
/// revisions with the clean rehearsal text.
fn faulty() -> FakeServer {
    let fake = FakeServer::start();
    let zh = Lang::parse("zh");
    fake.script(move |r| {
        if r.agent != Agent::Translation {
            return Reply::Default;
        }
        let good = default_content(&zh, Agent::Translation, &r.messages);
        if r.is_revision() {
            Reply::Content(good)
        } else {
            Reply::Content(mangle(&good))
        }
    });
    fake
}

/// A fake model that changes both inline codes of a sentence in the first translation (an
/// ambiguous fault: two foreign and two missing spans in one block).
fn swapped_codes() -> FakeServer {
    let fake = FakeServer::start();
    let zh = Lang::parse("zh");
    fake.script(move |r| {
        if r.agent != Agent::Translation {
            return Reply::Default;
        }
        let good = default_content(&zh, Agent::Translation, &r.messages);
        if r.is_revision() {
            Reply::Content(good)
        } else {
            Reply::Content(
                good.replace("`open_file()`", "`打开文件()`")
                    .replace("`close_file()`", "`关闭文件()`"),
            )
        }
    });
    fake
}

fn run(c: &TestCampaign, fake: &FakeServer) -> std::process::Output {
    c.cmd("run", &["--base-url", &fake.base_url, "--json"])
        .env("OPENAI_API_KEY", KEY)
        .output()
        .unwrap()
}

fn report(c: &TestCampaign) -> serde_json::Value {
    serde_json::from_str(&c.read("k/validation/report.json")).unwrap()
}

fn revisions(fake: &FakeServer) -> usize {
    fake.requests().iter().filter(|r| r.is_revision()).count()
}

#[test]
fn mechanical_faults_are_repaired_without_a_revision() {
    let fake = faulty();
    let c = campaign("", CHAPTER);
    let out = run(&c, &fake);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_code(&out, 0);
    assert_eq!(revisions(&fake), 0, "nothing left for a revision: {err}");

    let text = c.read("k/out/a.md");
    assert!(
        text.contains("[^tool]") && !text.contains("[^工具]"),
        "{text}"
    );
    assert!(text.contains("\n## ") && !text.contains("\n### "), "{text}");
    assert_eq!(text.matches(CODE).count(), 1, "{text}");

    let r = report(&c);
    let units = r["units"].as_array().unwrap();
    let repaired: Vec<&serde_json::Value> = units
        .iter()
        .filter(|u| !u["repairs"].as_array().unwrap().is_empty())
        .collect();
    assert!(!repaired.is_empty(), "{units:?}");
    let mut classes: Vec<String> = repaired
        .iter()
        .flat_map(|u| u["repairs"].as_array().unwrap())
        .map(|x| {
            assert_eq!(x["round"], 0, "{x}");
            assert_eq!(x["kept"], true, "{x}");
            x["class"].as_str().unwrap().to_string()
        })
        .collect();
    classes.sort();
    classes.dedup();
    assert_eq!(
        classes,
        ["duplicate_block", "footnote_label", "heading"],
        "{repaired:?}"
    );
    assert_eq!(
        r["repairs_by_class"]["heading"], 1,
        "{}",
        r["repairs_by_class"]
    );
    assert_eq!(r["repairs_by_class"]["duplicate_block"], 1);
    // The reference and the definition.
    assert_eq!(r["repairs_by_class"]["footnote_label"], 2);
    assert_eq!(r["repairs"], 4);
    let fl = repaired
        .iter()
        .flat_map(|u| u["repairs"].as_array().unwrap())
        .find(|x| x["class"] == "footnote_label")
        .unwrap();
    assert_eq!(fl["before"], "工具", "{fl}");
    assert_eq!(fl["after"], "tool", "{fl}");
    for u in &repaired {
        let k = u["candidates"].as_array().unwrap();
        assert_eq!(k.len(), 2, "{u}");
        assert_eq!(k[0]["origin"], "translation");
        assert_eq!(k[0]["kept"], false);
        assert!(k[0]["errors"].as_u64().unwrap() >= 1, "{u}");
        assert_eq!(k[1]["origin"], "repaired");
        assert_eq!(k[1]["round"], 0);
        assert_eq!(k[1]["kept"], true);
        assert_eq!(k[1]["errors"], 0, "{u}");
        assert_eq!(u["kept_round"], 0);
        assert!(
            u["findings"]
                .as_array()
                .unwrap()
                .iter()
                .all(|f| f["severity"] != "error"),
            "{u}"
        );
    }
    assert_eq!(r["summary"]["findings"]["errors"], 0, "{}", r["summary"]);

    let md = c.read("k/validation/report.md");
    assert!(
        md.contains("## Repairs") && md.contains("### Repairs made from the source"),
        "{md}"
    );
    assert!(md.contains("| footnote_label | `工具` → `tool` |"), "{md}");
    let html = c.read("k/validation/report.html");
    assert!(html.contains("id=\"repairs-table\""), "{html}");

    // Resume: no request, the same text and report.
    let before = fake.requests().len();
    let again = run(&c, &fake);
    assert_code(&again, 0);
    assert_eq!(fake.requests().len(), before, "nothing is paid twice");
    assert_eq!(c.read("k/out/a.md"), text);
    let r2 = report(&c);
    assert_eq!(r2["repairs"], r["repairs"]);
    assert_eq!(r2["units"].as_array().unwrap().len(), units.len());
}

#[test]
fn repair_off_sends_mechanical_faults_to_a_revision() {
    let fake = faulty();
    let c = campaign("repair = \"off\"\n", CHAPTER);
    let out = run(&c, &fake);
    assert_code(&out, 0);
    assert!(revisions(&fake) >= 1, "the faults went to a revision");
    let r = report(&c);
    assert_eq!(r["repairs"], 0);
    for u in r["units"].as_array().unwrap() {
        assert!(u["repairs"].as_array().unwrap().is_empty(), "{u}");
        assert!(
            u["candidates"]
                .as_array()
                .unwrap()
                .iter()
                .all(|k| k["origin"] != "repaired"),
            "{u}"
        );
    }
    // The clean revision is the text in the output.
    let text = c.read("k/out/a.md");
    assert!(
        text.contains("[^tool]") && !text.contains("[^工具]"),
        "{text}"
    );
}

#[test]
fn ambiguous_inline_code_fault_goes_to_a_revision_quoting_the_finding() {
    let fake = swapped_codes();
    let c = campaign("", INLINE);
    let out = run(&c, &fake);
    assert_code(&out, 0);
    let revs: Vec<_> = fake
        .requests()
        .into_iter()
        .filter(|r| r.is_revision())
        .collect();
    assert_eq!(revs.len(), 1, "one revision for the ambiguous fault");
    let all: String = revs[0]
        .messages
        .iter()
        .map(|m| m.content.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    assert!(all.contains("inline_code"), "{all}");
    assert!(all.contains("open_file()"), "{all}");
    let r = report(&c);
    assert_eq!(r["repairs"], 0, "nothing guessed");
    let text = c.read("k/out/a.md");
    assert!(
        text.contains("`open_file()`") && text.contains("`close_file()`"),
        "{text}"
    );
}

#[test]
fn wrong_repair_value_is_a_config_error_naming_the_file_and_values() {
    let c = campaign("repair = \"aggressive\"\n", CHAPTER);
    let out = c.cmd("plan", &[]).output().unwrap();
    assert_code(&out, 2);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("`repair`") && err.contains("aggressive"),
        "{err}"
    );
    assert!(
        err.contains("`mechanical`") && err.contains("`off`"),
        "{err}"
    );
    assert!(err.contains(".toml"), "{err}");
}
