//! Issue 17, "editors confirm or dismiss findings" and "a per-chapter MQM scorecard", through
//! the binary: stable finding ids, `booktr qa dismiss|confirm`, `findings-review.csv` read
//! back, marks cleared when the text changes, precision downgrades, XLIFF notes, and the
//! scorecard in report.json/md/html.

use std::process::Command;

use crate::support;

use support::{TestCampaign, assert_code, json_summary};

const CHAPTER: &str = "# Tools\n\nA tool is a function the Agent may call.\n\n## Describing a tool\n\nEach tool has a name and a schema.\n\n```json\n{\"name\": \"read_file\"}\n```\n\nTools cost tokens.\n";

fn qa(c: &TestCampaign, action: &str, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_booktr"))
        .args(["qa", action])
        .arg(&c.file)
        .args(args)
        .env_remove("OPENAI_BASE_URL")
        .env_remove("OPENAI_API_KEY")
        .output()
        .unwrap()
}

fn report(c: &TestCampaign) -> serde_json::Value {
    serde_json::from_str(&c.read("e/validation/report.json")).unwrap()
}

/// Every finding of report.json (units' and chapter-level).
fn findings(r: &serde_json::Value) -> Vec<serde_json::Value> {
    let mut v: Vec<serde_json::Value> = r["units"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|u| u["findings"].as_array().unwrap().clone())
        .collect();
    v.extend(r["chapter_findings"].as_array().unwrap().iter().cloned());
    v
}

fn marks_in_journal(c: &TestCampaign) -> Vec<serde_json::Value> {
    let mut v = Vec::new();
    for d in std::fs::read_dir(c.path("e/state")).unwrap().flatten() {
        if let Ok(t) = std::fs::read_to_string(d.path().join("journal.jsonl")) {
            v.extend(
                t.lines()
                    .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
                    .filter(|e| e["event"] == "finding_marked"),
            );
        }
    }
    v
}

/// A campaign translated by the rehearsal provider whose output chapter the editor broke by
/// changing the code block: `validate` finds one `code_blocks` error.
fn broken_campaign(extra: &str) -> (TestCampaign, String) {
    let c = TestCampaign::with_chapters("e", &["ch.md"], &format!("max_unit_chars = 200\n{extra}"));
    c.write("ch.md", CHAPTER);
    assert_code(&c.cmd("run", &[]).output().unwrap(), 0);
    let out = c.read("e/out/ch.md");
    assert!(
        out.contains("\"read_file\""),
        "code block kept by the rehearsal"
    );
    let broken = out.replacen("\"read_file\"", "\"write_file\"", 1);
    std::fs::write(c.path("e/out/ch.md"), &broken).unwrap();
    (c, broken)
}

fn code_block_error(r: &serde_json::Value) -> serde_json::Value {
    findings(r)
        .into_iter()
        .find(|f| f["check"] == "code_blocks")
        .unwrap_or_else(|| panic!("no code_blocks finding in {r:#}"))
}

#[test]
fn finding_ids_are_stable_across_runs_and_listed_in_the_review_csv() {
    let (c, _) = broken_campaign("");
    assert_code(&c.cmd("validate", &[]).output().unwrap(), 1);
    let first = report(&c);
    let ids: Vec<String> = findings(&first)
        .iter()
        .map(|f| f["id"].as_str().unwrap_or_default().to_string())
        .collect();
    assert!(!ids.is_empty());
    assert!(
        ids.iter()
            .all(|i| i.len() == 12 && i.chars().all(|c| c.is_ascii_hexdigit())),
        "{ids:?}"
    );
    assert_code(&c.cmd("validate", &[]).output().unwrap(), 1);
    let again: Vec<String> = findings(&report(&c))
        .iter()
        .map(|f| f["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids, again, "identical input, identical ids");
    let csv = c.read("e/validation/findings-review.csv");
    let header = csv.trim_start_matches('\u{feff}').lines().next().unwrap();
    assert!(
        header.starts_with("id,mark,note,severity,check"),
        "{header}"
    );
    for id in &ids {
        assert!(
            csv.contains(id.as_str()),
            "{id} missing from the review CSV"
        );
    }
}

#[test]
fn a_dismissed_finding_no_longer_fails_validate_and_stays_visible_as_dismissed() {
    let (c, broken) = broken_campaign("");
    assert_code(&c.cmd("validate", &[]).output().unwrap(), 1);
    let f = code_block_error(&report(&c));
    assert_eq!(f["severity"], "error");
    let id = f["id"].as_str().unwrap().to_string();

    let out = qa(
        &c,
        "dismiss",
        &[&id, "--note", "the block moved to an appendix"],
    );
    assert_code(&out, 0);
    let marks = marks_in_journal(&c);
    assert_eq!(marks.len(), 1);
    assert_eq!(marks[0]["id"], id.as_str());
    assert_eq!(marks[0]["mark"], "dismissed");
    assert_eq!(marks[0]["via"], "cli");

    let out = c.cmd("validate", &["--json"]).output().unwrap();
    assert_code(&out, 0);
    assert_eq!(json_summary(&out)["errors"], 0);
    let r = report(&c);
    let f = code_block_error(&r);
    assert_eq!(f["id"], id.as_str());
    assert_eq!(f["severity"], "info");
    assert_eq!(f["review"]["mark"], "dismissed");
    assert_eq!(f["review"]["checked_severity"], "error");
    assert_eq!(f["review"]["note"], "the block moved to an appendix");
    assert_eq!(r["finding_marks"]["dismissed"], 1);
    assert!(
        c.read("e/validation/report.md")
            .contains("info (dismissed error)")
    );
    assert!(
        c.read("e/validation/report.html")
            .contains("data-mark=\"dismissed\"")
    );
    // status agrees (no error left), and so does run.
    let out = c.cmd("status", &["--json"]).output().unwrap();
    assert_code(&out, 0);
    assert_eq!(json_summary(&out)["findings"]["errors"], 0);
    let out = c.cmd("status", &[]).output().unwrap();
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .contains("editor marks: 0 confirmed, 1 dismissed, 0 cleared"),
        "{out:?}"
    );
    let out = c.cmd("run", &["--json"]).output().unwrap();
    assert_code(&out, 0);
    assert_eq!(
        json_summary(&out)["status"],
        "complete",
        "nothing left to fix"
    );
    assert_eq!(c.read("e/out/ch.md"), broken, "the edit is kept");

    // XLIFF notes carry the id and the mark.
    let xlf = c.path("e.xlf");
    let out = c
        .cmd(
            "export",
            &["--format", "xliff", "--out", xlf.to_str().unwrap()],
        )
        .output()
        .unwrap();
    assert_code(&out, 0);
    let x = std::fs::read_to_string(&xlf).unwrap();
    assert!(
        x.contains(&format!(
            "[finding {id}; dismissed by the editor: the block moved to an appendix]"
        )),
        "{x}"
    );

    // The unit's text changes: the mark is cleared and reported as such.
    // (The first paragraph, in the unit of the code block: same evidence, other text.)
    let para = broken.lines().nth(2).unwrap().to_string();
    let changed = broken.replacen(&para, &format!("{para}（改）"), 1);
    assert_ne!(changed, broken);
    std::fs::write(c.path("e/out/ch.md"), &changed).unwrap();
    assert_code(&c.cmd("validate", &[]).output().unwrap(), 1);
    let r = report(&c);
    assert_eq!(r["finding_marks"]["dismissed"], 0);
    let cleared = r["finding_marks"]["cleared"].as_array().unwrap();
    assert_eq!(cleared.len(), 1, "{r:#}");
    assert_eq!(cleared[0]["id"], id.as_str());
    assert!(
        cleared[0]["reason"]
            .as_str()
            .unwrap()
            .contains("text changed"),
        "{cleared:?}"
    );
    assert!(
        c.read("e/validation/report.md")
            .contains("Marks cleared (1)")
    );
}

#[test]
fn an_unknown_id_is_a_usage_error_naming_the_remedy() {
    let (c, _) = broken_campaign("");
    assert_code(&c.cmd("validate", &[]).output().unwrap(), 1);
    let out = qa(&c, "confirm", &["0123456789ab"]);
    assert_code(&out, 2);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("0123456789ab"), "{err}");
    assert!(err.contains("findings-review.csv"), "{err}");
    assert!(err.contains("booktr validate"), "{err}");
    assert!(marks_in_journal(&c).is_empty(), "nothing journaled");
}

#[test]
fn marks_edited_in_the_review_csv_are_read_back_by_status_and_journaled_by_validate() {
    let (c, _) = broken_campaign("");
    assert_code(&c.cmd("validate", &[]).output().unwrap(), 1);
    let id = code_block_error(&report(&c))["id"]
        .as_str()
        .unwrap()
        .to_string();
    // The editor marks the row as dismissed in a spreadsheet.
    let path = c.path("e/validation/findings-review.csv");
    let bytes = std::fs::read(&path).unwrap();
    let body = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&bytes);
    let mut rd = csv::Reader::from_reader(body);
    let headers = rd.headers().unwrap().clone();
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(&headers).unwrap();
    for rec in rd.records() {
        let mut rec: Vec<String> = rec.unwrap().iter().map(str::to_string).collect();
        if rec[0] == id {
            rec[1] = "Dismiss".into();
            rec[2] = "false positive".into();
        }
        w.write_record(&rec).unwrap();
    }
    std::fs::write(&path, w.into_inner().unwrap()).unwrap();

    // status counts it without journaling (it holds no lock) …
    let out = c.cmd("status", &["--json"]).output().unwrap();
    assert_code(&out, 0);
    assert_eq!(json_summary(&out)["findings"]["errors"], 0);
    assert!(String::from_utf8_lossy(&out.stderr).contains("1 mark(s) edited in"));
    assert!(marks_in_journal(&c).is_empty());
    // … validate journals it, once.
    assert_code(&c.cmd("validate", &[]).output().unwrap(), 0);
    let marks = marks_in_journal(&c);
    assert_eq!(marks.len(), 1);
    assert_eq!(
        (marks[0]["mark"].as_str(), marks[0]["via"].as_str()),
        (Some("dismissed"), Some("csv"))
    );
    assert_eq!(marks[0]["note"], "false positive");
    assert_code(&c.cmd("validate", &[]).output().unwrap(), 0);
    assert_eq!(
        marks_in_journal(&c).len(),
        1,
        "the rewritten CSV holds the mark as recorded"
    );
    let csv = c.read("e/validation/findings-review.csv");
    let row = csv.lines().find(|l| l.starts_with(&id)).unwrap();
    assert!(
        row.starts_with(&format!("{id},dismissed,false positive,error,code_blocks")),
        "{row}"
    );

    // A bad mark is an error naming the file, the row and the remedy.
    let bad = csv.replacen(&format!("{id},dismissed"), &format!("{id},maybe"), 1);
    std::fs::write(&path, bad).unwrap();
    let out = c.cmd("validate", &[]).output().unwrap();
    assert_code(&out, 2);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("findings-review.csv, row") && err.contains("`maybe` is not a mark"),
        "{err}"
    );
}

#[test]
fn a_check_under_the_precision_threshold_is_downgraded_to_warnings_for_the_campaign() {
    let c = TestCampaign::with_chapters("e", &["ch.md"], "");
    c.write(
        "ch.md",
        "# Calls\n\nThe agent calls `a1`, `b2`, `c3`, `d4`, `e5`, `f6`, `g7`, `h8`, `i9`, `j10` and `k11` in turn.\n",
    );
    assert_code(&c.cmd("run", &[]).output().unwrap(), 0);
    // The editor's spreadsheet lost the backticks: eleven inline_code errors.
    let out = c.read("e/out/ch.md").replace('`', "");
    std::fs::write(c.path("e/out/ch.md"), out).unwrap();
    assert_code(&c.cmd("validate", &[]).output().unwrap(), 1);
    let ids: Vec<String> = findings(&report(&c))
        .iter()
        .filter(|f| f["check"] == "inline_code")
        .map(|f| f["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids.len(), 11);
    let dismiss: Vec<&str> = ids[..8].iter().map(String::as_str).collect();
    assert_code(&qa(&c, "dismiss", &dismiss), 0);
    assert_code(&qa(&c, "confirm", &[&ids[8], &ids[9]]), 0);

    // Ten marks, precision 2/10 = 0.2 < 0.5: the check is downgraded; the two confirmed
    // errors stay errors (exit 1), the unmarked one is a warning.
    let out = c.cmd("validate", &["--json"]).output().unwrap();
    assert_code(&out, 1);
    let s = json_summary(&out);
    assert_eq!(
        (s["errors"].as_u64(), s["warnings"].as_u64()),
        (Some(2), Some(1))
    );
    let r = report(&c);
    let m = &r["finding_marks"];
    assert_eq!(m["downgraded"], serde_json::json!(["inline_code"]));
    assert_eq!(
        (m["confirmed"].as_u64(), m["dismissed"].as_u64()),
        (Some(2), Some(8))
    );
    let p = &m["precision"][0];
    assert_eq!(p["check"], "inline_code");
    assert!((p["precision"].as_f64().unwrap() - 0.2).abs() < 1e-9);
    let last = findings(&r)
        .into_iter()
        .find(|f| f["id"] == ids[10].as_str())
        .unwrap();
    assert_eq!(last["severity"], "warning");
    assert_eq!(last["review"]["downgraded"], true);
    let md = c.read("e/validation/report.md");
    assert!(
        md.contains("Downgraded to warnings for this campaign (precision under 0.5): inline_code."),
        "{md}"
    );
    assert!(
        md.contains("| inline_code | 2 | 8 | 0.20 | **yes** |"),
        "{md}"
    );
    assert!(
        c.read("e/validation/report.html")
            .contains("id=\"downgraded-checks\"")
    );

    // The MQM scorecard keeps confirmed errors apart: 2 major (10 points), 1 minor
    // unconfirmed, the dismissed ones score nothing.
    let ch = &r["mqm"]["chapters"][0];
    assert_eq!(ch["confirmed"]["major"], 2);
    assert_eq!(ch["confirmed"]["points"], 10);
    assert_eq!(ch["unconfirmed"]["minor"], 1);
    assert_eq!(ch["unconfirmed"]["points"], 1);
    assert_eq!(ch["dismissed"], 8);
    let words = ch["source_words"].as_f64().unwrap();
    assert_eq!(words, 18.0);
    assert!((ch["per_1000_words"].as_f64().unwrap() - 11.0 * 1000.0 / words).abs() < 1e-9);
    assert_eq!(ch["pass"], false);
    assert!(
        c.read("e/validation/report.html")
            .contains("id=\"mqm-table\"")
    );

    // A lower threshold (campaign key) keeps the check at full severity.
    let toml = c.read("campaign.toml") + "mark_precision_threshold = 0.1\nmqm_threshold = 900\n";
    std::fs::write(&c.file, toml).unwrap();
    let out = c.cmd("validate", &["--json"]).output().unwrap();
    assert_code(&out, 1);
    assert_eq!(json_summary(&out)["errors"], 3);
    let r = report(&c);
    assert_eq!(r["finding_marks"]["downgraded"], serde_json::json!([]));
    // 3 major errors, 15 points over 18 words: 833 per 1,000, under 900.
    assert_eq!(r["mqm"]["chapters"][0]["pass"], true);
    assert_eq!(r["mqm"]["threshold"], 900.0);
}

/// `validate --source/--target` of two real chapters (the English edition against the
/// Chinese original, a human translation): its real findings get stable, distinct ids, every
/// check has an MQM category, and each chapter's scorecard adds up.
#[booktr_test_needs::needs(corpus)]
#[test]
fn real_corpus_findings_have_stable_ids_and_an_mqm_scorecard() {
    let Some(corpus) = support::corpus_dir() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (en, zh) = (dir.path().join("en"), dir.path().join("zh"));
    std::fs::create_dir_all(&en).unwrap();
    std::fs::create_dir_all(&zh).unwrap();
    for c in ["chapter01.md", "chapter03.md"] {
        std::fs::copy(corpus.join("en").join(c), en.join(c)).unwrap();
        std::fs::copy(corpus.join("zh").join(c), zh.join(c)).unwrap();
    }
    let run = |name: &str| -> serde_json::Value {
        let report = dir.path().join(name);
        let out = Command::new(env!("CARGO_BIN_EXE_booktr"))
            .args(["validate", "--source"])
            .arg(&en)
            .arg("--target")
            .arg(&zh)
            .args(["--source-lang", "en", "--target-lang", "zh", "--report-dir"])
            .arg(&report)
            .output()
            .unwrap();
        assert!(matches!(out.status.code(), Some(0 | 1)), "{out:?}");
        serde_json::from_str(&std::fs::read_to_string(report.join("report.json")).unwrap()).unwrap()
    };
    let (a, b) = (run("r1"), run("r2"));
    let ids = |r: &serde_json::Value| -> Vec<String> {
        findings(r)
            .iter()
            .map(|f| f["id"].as_str().unwrap().to_string())
            .collect()
    };
    let (ia, ib) = (ids(&a), ids(&b));
    assert!(ia.len() >= 10, "real findings: {}", ia.len());
    assert_eq!(ia, ib, "identical input, identical ids");
    let distinct: std::collections::BTreeSet<&String> = ia.iter().collect();
    assert_eq!(
        distinct.len(),
        ia.len(),
        "ids are distinct within the report"
    );
    for f in findings(&a) {
        let check = f["check"].as_str().unwrap();
        assert!(
            booktr::qa::findings::mqm::is_mapped(check),
            "{check} has no MQM category"
        );
    }
    let chapters = a["mqm"]["chapters"].as_array().unwrap();
    assert_eq!(chapters.len(), 2);
    for ch in chapters {
        let words = ch["source_words"].as_f64().unwrap();
        assert!(words > 5000.0, "{ch}");
        let key = ch["chapter"].as_str().unwrap();
        let points: u64 = findings(&a)
            .iter()
            .filter(|f| f["chapter"] == key)
            .map(|f| match f["severity"].as_str().unwrap() {
                "error"
                    if ["completeness", "truncation"].contains(&f["check"].as_str().unwrap()) =>
                {
                    25
                }
                "error" => 5,
                "warning" => 1,
                _ => 0,
            })
            .sum();
        assert!(points > 0, "{key} has real findings");
        assert_eq!(ch["unconfirmed"]["points"].as_u64(), Some(points), "{ch}");
        assert_eq!(ch["confirmed"]["points"], 0);
        let per = ch["per_1000_words"].as_f64().unwrap();
        assert!((per - points as f64 * 1000.0 / words).abs() < 1e-6, "{ch}");
        assert_eq!(ch["pass"].as_bool(), Some(per <= 10.0));
    }
    // Files made elsewhere have no campaign state to mark against: no review CSV.
    assert!(!dir.path().join("r1").join("findings-review.csv").exists());
}

/// Regression (found trying `qa dismiss` as a new user): dismissing the `completeness` finding
/// of a chapter whose output file was deleted made `validate` exit 0 with status complete
/// while the chapter was missing. A missing chapter, unit or ending is a fact of the files:
/// `qa dismiss` refuses it (exit 2) and `validate` still reports it.
#[test]
fn dismissing_a_missing_chapter_let_validate_pass() {
    let c = TestCampaign::with_chapters("d", &["a.md", "b.md"], "");
    c.write(
        "a.md",
        "# A\n\nThe agent calls a tool and reads the result.\n",
    );
    c.write("b.md", "# B\n\nThe model writes a plan before each step.\n");
    let out = c.cmd("run", &[]).output().unwrap();
    assert_code(&out, 0);
    std::fs::remove_file(c.path("d/out/b.md")).unwrap();
    let out = c.cmd("validate", &[]).output().unwrap();
    assert_code(&out, 1);
    let report: serde_json::Value =
        serde_json::from_str(&c.read("d/validation/report.json")).unwrap();
    fn completeness_id(v: &serde_json::Value) -> Option<String> {
        match v {
            serde_json::Value::Object(o) => {
                if o.get("check").and_then(|c| c.as_str()) == Some("completeness")
                    && let Some(id) = o.get("id").and_then(|i| i.as_str())
                {
                    return Some(id.to_string());
                }
                o.values().find_map(completeness_id)
            }
            serde_json::Value::Array(a) => a.iter().find_map(completeness_id),
            _ => None,
        }
    }
    let id = completeness_id(&report).expect("a completeness finding with an id");
    let id = id.as_str();
    assert_eq!(id.len(), 12, "{id}");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_booktr"))
        .args(["qa", "dismiss"])
        .arg(&c.file)
        .arg(id)
        .output()
        .unwrap();
    assert_code(&out, 2);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot be dismissed"), "{err}");
    let out = c.cmd("validate", &[]).output().unwrap();
    assert_code(&out, 1);
}
