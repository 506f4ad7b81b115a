//! Approval gates (campaign key `review`) against the fake server: the glossary gate stops the
//! run (exit 3) with an editable review CSV and brief, survives kills and re-runs unchanged,
//! and after `booktr approve` the translation requests carry the editor's entries and brief;
//! an edit after approval is refused. The revisions gate waits for `approve --stage revisions`
//! with `--only` / `--reject`, and only approved units are sent back.

use crate::support;

use std::collections::BTreeMap;

use booktr::agents::Agent;
use support::fake_llm::{FakeServer, Reply, default_content};
use support::{TestCampaign, assert_code, json_summary};

const KEY: &str = "sk-booktr-gates-KEY-7d7d";

fn chapter() -> String {
    (1..=6)
        .map(|i| format!("## Part {i}\n\nThe context window of an agent fills up as the agent calls each tool. In part {i} the agent writes a summary of the context window before the next tool call, so the agent keeps its plan.\n\n"))
        .collect()
}

fn campaign(name: &str, extra: &str) -> TestCampaign {
    let c = TestCampaign::with_chapters(
        name,
        &["a.md"],
        &format!("max_unit_chars = 300\n{extra}\n[provider]\nkind = \"openai\"\nmodel = \"m\"\n"),
    );
    c.write("a.md", &chapter());
    c
}

fn run(c: &TestCampaign, fake: &FakeServer) -> std::process::Output {
    c.cmd("run", &["--base-url", &fake.base_url, "--json"])
        .env("OPENAI_API_KEY", KEY)
        .output()
        .unwrap()
}

/// The review CSV's columns, in order.
fn csv_headers(text: &str) -> Vec<String> {
    let mut r = csv::Reader::from_reader(text.trim_start_matches('\u{feff}').as_bytes());
    r.headers().unwrap().iter().map(String::from).collect()
}

/// The review CSV as rows of column → value.
fn csv_rows(text: &str) -> Vec<BTreeMap<String, String>> {
    let mut r = csv::Reader::from_reader(text.trim_start_matches('\u{feff}').as_bytes());
    let headers = csv_headers(text);
    r.records()
        .map(|rec| {
            let rec = rec.unwrap();
            headers
                .iter()
                .cloned()
                .zip(rec.iter().map(String::from))
                .collect()
        })
        .collect()
}

/// Writes rows back with the columns in the review file's order (as a spreadsheet would).
fn write_csv(headers: &[String], rows: &[BTreeMap<String, String>]) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(headers).unwrap();
    for r in rows {
        w.write_record(headers.iter().map(|h| r[h].as_str()))
            .unwrap();
    }
    String::from_utf8(w.into_inner().unwrap()).unwrap()
}

#[test]
fn glossary_gate_waits_survives_kills_and_uses_the_edited_entries_and_brief() {
    let fake = FakeServer::start();
    let c = campaign("g", "review = [\"glossary\"]\nbrief = true");
    c.write(
        "glossary.csv",
        "source,target,note\nagent,智能体,house rule\n",
    );
    // A house-style glossary in the campaign.
    let body = std::fs::read_to_string(&c.file).unwrap();
    std::fs::write(&c.file, format!("glossaries = [\"glossary.csv\"]\n{body}")).unwrap();

    // 1. The run stops at the gate: exit 3, nothing translated, review files on the desk.
    let out = run(&c, &fake);
    assert_code(&out, 3);
    let s = json_summary(&out);
    assert_eq!(s["status"], "awaiting_approval");
    assert_eq!(s["awaiting"]["gate"], "glossary");
    assert!(
        s["awaiting"]["command"]
            .as_str()
            .unwrap()
            .contains("approve")
    );
    assert!(
        s["awaiting"]["command"]
            .as_str()
            .unwrap()
            .ends_with("--stage glossary")
    );
    assert_eq!(
        fake.count(Agent::Translation),
        0,
        "nothing is translated before approval"
    );
    let glossary_calls = fake.count(Agent::Glossary);
    assert!(
        glossary_calls >= 2,
        "term batches and the brief: {glossary_calls}"
    );
    let csv_text = c.read("g/validation/glossary-review.csv");
    let rows = csv_rows(&csv_text);
    let headers = csv_headers(&csv_text);
    assert_eq!(&headers[..4], ["source", "target", "note", "origin"]);
    let by_source = |s: &str| {
        rows.iter()
            .find(|r| r["source"].eq_ignore_ascii_case(s))
            .cloned()
    };
    assert_eq!(by_source("agent").unwrap()["origin"], "house_style");
    assert_eq!(by_source("agent").unwrap()["target"], "智能体");
    let window = by_source("context window").expect("the agent proposed `context window`");
    assert_eq!(window["origin"], "agent");
    assert!(window["flags"].contains("new"), "{window:?}");
    // Occurrences are counted in the book's prose, house-style terms included.
    let book = chapter().to_lowercase();
    assert_eq!(
        window["occurrences"],
        book.matches("context window").count().to_string(),
        "{window:?}"
    );
    let agent_n: usize = by_source("agent").unwrap()["occurrences"].parse().unwrap();
    assert!(agent_n >= 2, "agent occurs {agent_n}×");
    let summary = c.read("g/validation/glossary-review.md");
    assert!(summary.contains("booktr approve"), "{summary}");
    assert!(summary.contains("new terms"), "{summary}");
    let brief = c.read("g/validation/brief.md");
    assert!(brief.contains("## Chapter synopses"), "{brief}");
    let status = c.cmd("status", &[]).output().unwrap();
    assert_code(&status, 0);
    let st = String::from_utf8_lossy(&status.stdout);
    assert!(
        st.contains("waiting for the editor's approval of the glossary"),
        "{st}"
    );
    assert!(
        st.contains("booktr approve") && st.contains("--stage glossary"),
        "{st}"
    );

    // 2. A kill (or a week's pause, or a reboot) changes nothing: the gate is a recorded fact.
    let mut child = c
        .cmd("run", &["--base-url", &fake.base_url])
        .env("OPENAI_API_KEY", KEY)
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(30));
    let _ = child.kill();
    let _ = child.wait();
    let again = run(&c, &fake);
    assert_code(&again, 3);
    assert_eq!(json_summary(&again)["awaiting"]["gate"], "glossary");
    assert_eq!(
        fake.count(Agent::Glossary),
        glossary_calls,
        "no call is repeated while waiting"
    );
    assert_eq!(fake.count(Agent::Translation), 0);
    assert_eq!(
        c.read("g/validation/glossary-review.csv"),
        csv_text,
        "the review file is not rewritten"
    );

    // 3. Changing a house-style entry is refused with the remedy.
    let mut bad = rows.clone();
    for r in &mut bad {
        if r["source"].eq_ignore_ascii_case("agent") {
            r.insert("target".into(), "代理".into());
        }
    }
    std::fs::write(
        c.path("g/validation/glossary-review.csv"),
        write_csv(&headers, &bad),
    )
    .unwrap();
    let refused = c.cmd("approve", &["--stage", "glossary"]).output().unwrap();
    assert_code(&refused, 2);
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(
        err.contains("house-style entry") && err.contains("智能体"),
        "{err}"
    );

    // 4. The editor changes one entry, adds one, and edits the brief; then approves.
    let mut edited = rows.clone();
    for r in &mut edited {
        if r["source"].eq_ignore_ascii_case("context window") {
            r.insert("target".into(), "语境窗".into());
        }
    }
    let mut added = edited[0].clone();
    for (k, v) in [
        ("source", "summary"),
        ("target", "摘要甲"),
        ("note", "editor"),
        ("origin", ""),
        ("forbidden", ""),
        ("occurrences", ""),
        ("flags", ""),
    ] {
        added.insert(k.into(), v.into());
    }
    edited.push(added);
    std::fs::write(
        c.path("g/validation/glossary-review.csv"),
        write_csv(&headers, &edited),
    )
    .unwrap();
    std::fs::write(
        c.path("g/validation/brief.md"),
        format!("{brief}\n## Editor's note\nBRIEF-EDIT-42: keep sentences short.\n"),
    )
    .unwrap();
    let ok = c.cmd("approve", &["--stage", "glossary"]).output().unwrap();
    assert_code(&ok, 0);
    let err = String::from_utf8_lossy(&ok.stderr);
    assert!(
        err.contains("changed: context window") && err.contains("语境窗"),
        "{err}"
    );
    assert!(err.contains("added: summary"), "{err}");
    assert!(err.contains("edited brief taken"), "{err}");

    // 5. The next run translates with the approved entries and brief.
    let done = run(&c, &fake);
    assert_code(&done, 0);
    assert_eq!(json_summary(&done)["status"], "complete");
    let reqs: Vec<_> = fake
        .requests()
        .into_iter()
        .filter(|r| r.agent == Agent::Translation)
        .collect();
    assert_eq!(reqs.len(), 6, "one request per unit");
    for r in &reqs {
        assert!(
            r.messages[0].content.contains("BRIEF-EDIT-42"),
            "the edited brief is in the stable prefix"
        );
        let unit = r.unit_text().unwrap();
        let glossary = r.glossary_text();
        if unit.contains("context window") {
            assert!(glossary.contains("context window → 语境窗"), "{glossary}");
            assert!(
                !glossary.contains(&window["target"]),
                "the proposal was replaced: {glossary}"
            );
        }
        if unit.contains("summary") {
            assert!(glossary.contains("summary → 摘要甲"), "{glossary}");
        }
    }
    let out_text = c.read("g/out/a.md");
    assert!(
        out_text.contains("语境窗") && out_text.contains("摘要甲"),
        "{out_text}"
    );
    let report: serde_json::Value =
        serde_json::from_str(&c.read("g/validation/report.json")).unwrap();
    let editor_entries = report["glossary"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["origin"] == "editor")
        .count();
    assert_eq!(editor_entries, 2, "the changed and the added entry");

    // 6. An edit after approval is refused, naming the file and the remedy.
    let mut later = edited.clone();
    later.pop();
    std::fs::write(
        c.path("g/validation/glossary-review.csv"),
        write_csv(&headers, &later),
    )
    .unwrap();
    let before = fake.requests().len();
    let refused = run(&c, &fake);
    assert_code(&refused, 2);
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(
        err.contains("glossary-review.csv was edited after the glossary was approved"),
        "{err}"
    );
    assert!(err.contains("booktr approve"), "{err}");
    assert_eq!(fake.requests().len(), before, "nothing was sent");
}

#[test]
fn brief_is_produced_in_every_prefix_and_its_edit_changes_the_fingerprint() {
    let fake = FakeServer::start();
    let c = campaign("b", "brief = true");
    let out = run(&c, &fake);
    assert_code(&out, 0);
    let brief = c.read("b/validation/brief.md");
    assert!(
        brief.contains("## Audience") && brief.contains("`a`"),
        "{brief}"
    );
    let first: Vec<_> = fake
        .requests()
        .into_iter()
        .filter(|r| r.agent == Agent::Translation)
        .collect();
    assert_eq!(first.len(), 6);
    for r in &first {
        assert!(
            r.messages[0].content.contains(brief.trim_end()),
            "the brief is in the system prompt"
        );
        // Stable prefix: the brief precedes the unit.
        assert!(r.messages.last().unwrap().content == r.unit_text().unwrap());
    }
    // Unchanged brief: a re-run reuses everything.
    fake.clear();
    let again = run(&c, &fake);
    assert_code(&again, 0);
    assert_eq!(fake.count(Agent::Translation), 0);
    assert_eq!(json_summary(&again)["units"]["reused"], 6);
    // The editor edits the brief (no gate): the run takes it, and since the brief is part of
    // every unit's fingerprint, the units are translated again with it.
    std::fs::write(
        c.path("b/validation/brief.md"),
        format!("{brief}\nBRIEF-EDIT-7\n"),
    )
    .unwrap();
    let edited = run(&c, &fake);
    assert_code(&edited, 0);
    assert!(String::from_utf8_lossy(&edited.stderr).contains("using your edited brief"));
    let second: Vec<_> = fake
        .requests()
        .into_iter()
        .filter(|r| r.agent == Agent::Translation)
        .collect();
    assert_eq!(second.len(), 6);
    assert!(
        second
            .iter()
            .all(|r| r.messages[0].content.contains("BRIEF-EDIT-7"))
    );
    assert_eq!(
        fake.count(Agent::Glossary),
        0,
        "the brief is not requested again"
    );
    assert_eq!(
        c.read("b/validation/brief.md"),
        format!("{brief}\nBRIEF-EDIT-7\n"),
        "the editor's file is kept"
    );
}

fn revision_chapter() -> String {
    (1..=6)
        .map(|i| format!("## Section {i}\n\nIn section {i} the agent reads what the tool returned and decides on the next step of the task, writing a short note for the next session.\n\n"))
        .collect()
}

/// The fake's Chinese translation of a Translation request with an English sentence left at
/// its end: an `untranslated` error, but a translation (not an echo, which is not revised).
fn with_an_english_sentence(messages: &[booktr::llm::Message]) -> String {
    let zh = booktr::lang::Lang::parse("zh");
    format!(
        "{} This stays in English.\n",
        default_content(&zh, Agent::Translation, messages).trim_end()
    )
}

#[test]
fn revisions_gate_sends_back_only_approved_units() {
    let fake = FakeServer::start();
    // Sections 2, 4 and 6 come back with a sentence left in English, so QA proposes them for
    // revision; section 6 keeps it in revision too. (Not a whole echo of the source: an echo
    // is not revised but translated again in pieces.)
    fake.script(|r| {
        if r.agent != Agent::Translation {
            return Reply::Default;
        }
        let text = r.unit_text().unwrap_or("");
        let leftover = ["Section 2\n", "Section 4\n", "Section 6\n"]
            .iter()
            .any(|s| text.contains(s))
            && (!r.is_revision() || text.contains("Section 6\n"));
        if leftover {
            Reply::Content(with_an_english_sentence(&r.messages))
        } else {
            Reply::Default
        }
    });
    let c = TestCampaign::with_chapters(
        "v",
        &["a.md"],
        "max_unit_chars = 300\nrevision_rounds = 2\nreview = [\"revisions\"]\n[provider]\nkind = \"openai\"\nmodel = \"m\"\n",
    );
    c.write("a.md", &revision_chapter());
    let units = booktr::book::segment("a", &revision_chapter(), 300);
    let id_of = |section: &str| {
        units
            .iter()
            .find(|u| {
                u.text(&revision_chapter())
                    .contains(&format!("Section {section}\n"))
            })
            .unwrap()
            .id
            .clone()
    };
    let (u2, u4, u6) = (id_of("2"), id_of("4"), id_of("6"));

    let out = run(&c, &fake);
    assert_code(&out, 3);
    let s = json_summary(&out);
    assert_eq!(s["awaiting"]["gate"]["revisions"]["round"], 0, "{s}");
    let proposed: Vec<String> = s["awaiting"]["proposed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p[0].as_str().unwrap().to_string())
        .collect();
    assert_eq!(proposed, vec![u2.clone(), u4.clone(), u6.clone()]);
    assert_eq!(
        fake.requests().iter().filter(|r| r.is_revision()).count(),
        0
    );
    assert!(c.read("v/validation/revisions-review.md").contains(&u4));

    // A unit that was not proposed is refused, with the list.
    let bad = c
        .cmd("approve", &["--stage", "revisions", "--only", "a-999"])
        .output()
        .unwrap();
    assert_code(&bad, 2);
    assert!(String::from_utf8_lossy(&bad.stderr).contains(&u2));
    // The glossary stage is not waiting: approving it is refused.
    let wrong = c.cmd("approve", &["--stage", "glossary"]).output().unwrap();
    assert_code(&wrong, 2);

    // Round 0: everything but section 4.
    let ok = c
        .cmd("approve", &["--stage", "revisions", "--reject", &u4])
        .output()
        .unwrap();
    assert_code(&ok, 0);
    let out = run(&c, &fake);
    // Section 6 is still untranslated after its revision: round 1 waits again.
    assert_code(&out, 3);
    let s = json_summary(&out);
    assert_eq!(s["awaiting"]["gate"]["revisions"]["round"], 1, "{s}");
    let revised: Vec<String> = fake
        .requests()
        .iter()
        .filter(|r| r.is_revision())
        .map(|r| r.unit_text().unwrap().to_string())
        .collect();
    assert_eq!(revised.len(), 2, "sections 2 and 6 only");
    assert!(revised.iter().all(|t| !t.contains("Section 4\n")));

    // Round 1: only section 6.
    let ok = c
        .cmd("approve", &["--stage", "revisions", "--only", &u6])
        .output()
        .unwrap();
    assert_code(&ok, 0);
    assert!(String::from_utf8_lossy(&ok.stderr).contains("1 unit(s) to revise"));
    let out = run(&c, &fake);
    let s = json_summary(&out);
    let revisions: Vec<String> = fake
        .requests()
        .iter()
        .filter(|r| r.is_revision())
        .map(|r| r.unit_text().unwrap().to_string())
        .collect();
    assert_eq!(revisions.len(), 3, "{s}");
    assert_eq!(
        revisions
            .iter()
            .filter(|t| t.contains("Section 6\n"))
            .count(),
        2
    );
    assert_eq!(
        revisions
            .iter()
            .filter(|t| t.contains("Section 4\n"))
            .count(),
        0,
        "rejected: never revised"
    );
    // Every stage done, but the rejected unit still has its error findings: exit 1, as
    // documented, and the status says an editor must look (issue 12: not "complete").
    assert_code(&out, 1);
    assert_eq!(s["status"], "needs_review", "{s}");
    assert!(s["findings"]["errors"].as_u64().unwrap() > 0, "{s}");
    // Section 4 keeps its first translation, its English sentence included, and the report
    // still flags it.
    let out_text = c.read("v/out/a.md");
    let section4 = out_text
        .split("## ")
        .find(|s| s.contains(" 4\n"))
        .unwrap_or_default();
    assert!(section4.contains("This stays in English."), "{out_text}");
    let report: serde_json::Value =
        serde_json::from_str(&c.read("v/validation/report.json")).unwrap();
    let u4_report = report["units"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["id"] == u4.as_str())
        .unwrap();
    assert!(
        u4_report["findings"].to_string().contains("untranslated"),
        "{u4_report}"
    );
}

fn part_chapter(part: &str) -> String {
    (1..=3)
        .map(|i| format!("## Section {i}\n\nIn section {i} of part {part} the agent reads what the tool returned and decides on the next step of the task, writing a short note for the next session.\n\n"))
        .collect()
}

/// The `### unit` section of `revisions-review.md` (up to the next heading).
fn review_section<'a>(md: &'a str, unit: &str) -> Option<&'a str> {
    let start = md.find(&format!("\n### {unit}\n"))? + 1;
    let rest = &md[start + 4..];
    let end = rest.find("\n#").map_or(rest.len(), |e| e + 1);
    Some(&md[start..start + 4 + end])
}

#[test]
fn revisions_gate_approves_one_chapter_while_the_others_wait() {
    let fake = FakeServer::start();
    // Section 2 of each chapter comes back with a sentence left in English in round 0 only.
    fake.script(|r| {
        if r.agent != Agent::Translation {
            return Reply::Default;
        }
        let text = r.unit_text().unwrap_or("");
        if text.contains("Section 2\n") && !r.is_revision() {
            Reply::Content(with_an_english_sentence(&r.messages))
        } else {
            Reply::Default
        }
    });
    let c = TestCampaign::with_chapters(
        "ch",
        &["a.md", "b.md"],
        "max_unit_chars = 300\nrevision_rounds = 1\nreview = [\"revisions\"]\n[provider]\nkind = \"openai\"\nmodel = \"m\"\n",
    );
    c.write("a.md", &part_chapter("A"));
    c.write("b.md", &part_chapter("B"));
    let id_of = |chapter: &str, part: &str| {
        booktr::book::segment(chapter, &part_chapter(part), 300)
            .iter()
            .find(|u| u.text(&part_chapter(part)).contains("Section 2\n"))
            .unwrap()
            .id
            .clone()
    };
    let (a2, b2) = (id_of("a", "A"), id_of("b", "B"));
    let revisions = |fake: &FakeServer| -> Vec<String> {
        fake.requests()
            .iter()
            .filter(|r| r.is_revision())
            .map(|r| r.unit_text().unwrap().to_string())
            .collect()
    };

    // 1. The gate: both chapters' section 2 proposed; the review file shows each unit's
    // findings by chapter, with the command for each chapter.
    let out = run(&c, &fake);
    assert_code(&out, 3);
    let s = json_summary(&out);
    let proposed = |s: &serde_json::Value| -> Vec<String> {
        s["awaiting"]["proposed"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p[0].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(proposed(&s), vec![a2.clone(), b2.clone()], "{s}");
    let md = c.read("ch/validation/revisions-review.md");
    assert!(md.contains("## Chapter a (`a.md`): 1 unit(s)"), "{md}");
    assert!(md.contains("## Chapter b (`b.md`): 1 unit(s)"), "{md}");
    assert!(md.contains("--stage revisions --chapter a\n"), "{md}");
    let section = review_section(&md, &a2).unwrap_or_else(|| panic!("no section for {a2}:\n{md}"));
    assert!(
        section.contains("Reason: deterministic QA errors"),
        "{section}"
    );
    let row = section
        .lines()
        .find(|l| l.starts_with("| error | untranslated | "))
        .unwrap_or_else(|| panic!("no untranslated row:\n{section}"));
    let cells: Vec<&str> = row.split(" | ").collect();
    assert_eq!(cells.len(), 5, "{row}");
    assert!(cells[2].len() > 20, "a message: {row}");
    assert!(
        cells[3].contains("part A") || cells[4].contains("part A"),
        "an excerpt of the unit's text: {row}"
    );

    // 2. An unknown chapter is a usage error naming the campaign's chapters; so is a unit of
    // another chapter than the one approved, and --chapter at the glossary stage.
    let bad = c
        .cmd("approve", &["--stage", "revisions", "--chapter", "nope"])
        .output()
        .unwrap();
    assert_code(&bad, 2);
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(err.contains("unknown chapter `nope`"), "{err}");
    assert!(
        err.contains("a (a.md)") && err.contains("b (b.md)"),
        "{err}"
    );
    let bad = c
        .cmd(
            "approve",
            &["--stage", "revisions", "--chapter", "a", "--only", &b2],
        )
        .output()
        .unwrap();
    assert_code(&bad, 2);
    assert!(String::from_utf8_lossy(&bad.stderr).contains(&a2));
    let bad = c
        .cmd("approve", &["--stage", "glossary", "--chapter", "a"])
        .output()
        .unwrap();
    assert_code(&bad, 2);

    // 3. Approve chapter a only: its unit is revised, chapter b still waits.
    let ok = c
        .cmd("approve", &["--stage", "revisions", "--chapter", "a"])
        .output()
        .unwrap();
    assert_code(&ok, 0);
    let err = String::from_utf8_lossy(&ok.stderr);
    assert!(
        err.contains("approved for chapter(s) a: 1 unit(s) to revise"),
        "{err}"
    );
    assert!(
        err.contains("1 unit(s) in other chapters still wait"),
        "{err}"
    );
    let out = run(&c, &fake);
    assert_code(&out, 3);
    let s = json_summary(&out);
    assert_eq!(s["awaiting"]["gate"]["revisions"]["round"], 0, "{s}");
    assert_eq!(proposed(&s), vec![b2.clone()], "only chapter b waits: {s}");
    let revised = revisions(&fake);
    assert_eq!(revised.len(), 1, "{revised:?}");
    assert!(revised[0].contains("part A"), "{revised:?}");
    let md = c.read("ch/validation/revisions-review.md");
    assert!(review_section(&md, &b2).is_some(), "{md}");
    assert!(review_section(&md, &a2).is_none(), "{md}");
    assert!(
        md.contains("Already decided for this round (chapters a): 1 approved, 0 rejected."),
        "{md}"
    );

    // 4. Resume: the recorded approval decides; nothing is sent again, b still waits.
    let before = fake.requests().len();
    let again = run(&c, &fake);
    assert_code(&again, 3);
    assert_eq!(proposed(&json_summary(&again)), vec![b2.clone()]);
    assert_eq!(fake.requests().len(), before, "no call is repeated");

    // 5. Approve chapter b by its file name: the campaign completes.
    let ok = c
        .cmd("approve", &["--stage", "revisions", "--chapter", "b.md"])
        .output()
        .unwrap();
    assert_code(&ok, 0);
    assert!(!String::from_utf8_lossy(&ok.stderr).contains("still wait"));
    let done = run(&c, &fake);
    assert_code(&done, 0);
    assert_eq!(json_summary(&done)["status"], "complete");
    let revised = revisions(&fake);
    assert_eq!(revised.len(), 2, "{revised:?}");
    assert!(revised[1].contains("part B"), "{revised:?}");
    let out_a = c.read("ch/out/a.md");
    let out_b = c.read("ch/out/b.md");
    assert!(
        !out_a.contains("In section 2 of part A") && !out_b.contains("In section 2 of part B"),
        "both revisions are in the output:\n{out_a}\n{out_b}"
    );
    let report: serde_json::Value =
        serde_json::from_str(&c.read("ch/validation/report.json")).unwrap();
    let approvals = report["approvals"].to_string();
    assert!(approvals.contains("(by chapter: a, b)"), "{approvals}");
}
