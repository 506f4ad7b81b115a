//! `booktr validate` on a campaign records editors' hand edits; a later `run` keeps them and
//! `run --force` overwrites them; `validate --source/--target` checks files made elsewhere.

use crate::support;

use support::{TestCampaign, assert_code, json_summary};

const CHAPTER: &str = "# Tools\n\nA tool is a function the Agent may call.\n\n## Describing a tool\n\nEach tool has a name and a schema.\n\n```json\n{\"name\": \"read_file\"}\n```\n\nTools cost tokens.\n";

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

#[test]
fn hand_edits_are_recorded_by_validate_and_kept_by_run_unless_forced() {
    let c = TestCampaign::with_chapters("e", &["ch.md"], "max_unit_chars = 200\n");
    c.write("ch.md", CHAPTER);
    assert_code(&c.cmd("run", &[]).output().unwrap(), 0);
    let original = c.read("e/out/ch.md");
    // The editor rewrites the second section's paragraph.
    let lines: Vec<&str> = original.lines().collect();
    let h2 = lines.iter().position(|l| l.starts_with("## ")).unwrap();
    let para = lines[h2 + 2].to_string(); // the paragraph under the second heading
    let edited = original.replacen(&para, "每个工具都有名称和参数模式（编辑改写）。", 1);
    std::fs::write(c.path("e/out/ch.md"), &edited).unwrap();

    let out = c.cmd("validate", &["--json"]).output().unwrap();
    assert_code(&out, 0);
    let edits: Vec<_> = journal(&c, "e")
        .into_iter()
        .filter(|e| e["event"] == "human_edit")
        .collect();
    assert_eq!(edits.len(), 1, "exactly the edited unit is recorded");
    assert!(c.read("e/validation/report.md").contains("0 revised"));
    let report: serde_json::Value =
        serde_json::from_str(&c.read("e/validation/report.json")).unwrap();
    assert_eq!(
        report["units"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|u| u["outcome"] == "edited")
            .count(),
        1
    );

    // A later run keeps the edit and records nothing new.
    let out = c.cmd("run", &["--json"]).output().unwrap();
    assert_code(&out, 0);
    assert_eq!(json_summary(&out)["status"], "complete");
    assert_eq!(c.read("e/out/ch.md"), edited);

    // An edit made without validate is also kept by run (and recorded then).
    let edited2 = edited.replacen("# ", "# 【改】", 1);
    std::fs::write(c.path("e/out/ch.md"), &edited2).unwrap();
    assert_code(&c.cmd("run", &[]).output().unwrap(), 0);
    assert_eq!(c.read("e/out/ch.md"), edited2);
    assert_eq!(
        journal(&c, "e")
            .iter()
            .filter(|e| e["event"] == "human_edit")
            .count(),
        2
    );

    // A deleted output chapter is written again, hand edits included.
    std::fs::remove_file(c.path("e/out/ch.md")).unwrap();
    assert_code(&c.cmd("run", &[]).output().unwrap(), 0);
    assert_eq!(c.read("e/out/ch.md"), edited2);

    // An edit that breaks the book (the code block dropped) is kept, and run says so: exit 1.
    let fence = edited2.find("```json").unwrap();
    let fence_end = edited2[fence..].find("```\n\n").unwrap() + fence + 5;
    let broken = format!("{}{}", &edited2[..fence], &edited2[fence_end..]);
    std::fs::write(c.path("e/out/ch.md"), &broken).unwrap();
    let out = c.cmd("run", &[]).output().unwrap();
    assert_code(&out, 1);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("error finding(s) remain"), "{err}");
    assert_eq!(c.read("e/out/ch.md"), broken);

    // --force puts the model translations back.
    assert_code(&c.cmd("run", &["--force"]).output().unwrap(), 0);
    assert_eq!(c.read("e/out/ch.md"), original);
    assert_eq!(
        journal(&c, "e")
            .iter()
            .filter(|e| e["event"] == "human_edits_discarded")
            .count(),
        1
    );
}

/// Found by a new-user try: an editor broke a code span, ran `validate` (the edit is
/// recorded), then restored the file byte for byte. The restored file has the hash booktr last
/// wrote, so the undo was not seen: `validate` went on judging the broken edit, and `run` wrote
/// it back into the file, losing the editor's fix without a word.
/// `--fresh` sets the old state aside, not the editor's work: with a hand edit in the outputs
/// (here made after the last run and never recorded) it refuses, naming the unit and both
/// remedies, and writes nothing; `--fresh --force` is the editor's decision to discard it.
#[test]
fn a_hand_edit_is_never_lost_to_a_fresh_start_without_force() {
    let c = TestCampaign::with_chapters("f", &["ch.md"], "max_unit_chars = 200\n");
    c.write("ch.md", CHAPTER);
    assert_code(&c.cmd("run", &[]).output().unwrap(), 0);
    let original = c.read("f/out/ch.md");
    let lines: Vec<&str> = original.lines().collect();
    let h2 = lines.iter().position(|l| l.starts_with("## ")).unwrap();
    let para = lines[h2 + 2].to_string();
    let edited = original.replacen(&para, "每个工具都有名称和参数模式（编辑改写）。", 1);
    assert_ne!(edited, original);
    std::fs::write(c.path("f/out/ch.md"), &edited).unwrap();
    let out = c.cmd("run", &["--fresh"]).output().unwrap();
    assert_code(&out, 2);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--fresh would set aside 1 unit(s) edited by hand (ch-")
            && err.contains("run without --fresh")
            && err.contains("add --force"),
        "{err}"
    );
    assert_eq!(c.read("f/out/ch.md"), edited, "nothing written");
    // The edit was recorded in the state: a plain run keeps it.
    assert_code(&c.cmd("run", &[]).output().unwrap(), 0);
    assert_eq!(c.read("f/out/ch.md"), edited);
    // --fresh --force discards it, by the editor's decision.
    assert_code(&c.cmd("run", &["--fresh", "--force"]).output().unwrap(), 0);
    assert_eq!(c.read("f/out/ch.md"), original);
}

#[test]
fn an_undone_hand_edit_was_ignored_and_run_wrote_it_back() {
    let c = TestCampaign::with_chapters("e", &["ch.md"], "max_unit_chars = 200\n");
    c.write("ch.md", CHAPTER);
    assert_code(&c.cmd("run", &[]).output().unwrap(), 0);
    let original = c.read("e/out/ch.md");
    assert!(original.contains("read_file"), "{original}");
    let broken = original.replace("read_file", "read_fil");
    std::fs::write(c.path("e/out/ch.md"), &broken).unwrap();
    assert_code(&c.cmd("validate", &[]).output().unwrap(), 1);

    // The editor undoes the edit.
    std::fs::write(c.path("e/out/ch.md"), &original).unwrap();
    let out = c.cmd("validate", &["--json"]).output().unwrap();
    assert_code(&out, 0);
    assert_eq!(json_summary(&out)["errors"], 0);
    let out = c.cmd("run", &["--json"]).output().unwrap();
    assert_code(&out, 0);
    assert_eq!(json_summary(&out)["status"], "complete");
    assert_eq!(c.read("e/out/ch.md"), original, "run kept the undo");
}

#[test]
fn validate_without_state_is_a_usage_error() {
    let c = TestCampaign::with_chapters("n", &["ch.md"], "");
    c.write("ch.md", CHAPTER);
    let out = c.cmd("validate", &[]).output().unwrap();
    assert_code(&out, 2);
    assert!(String::from_utf8_lossy(&out.stderr).contains("booktr run"));
}

#[test]
fn validate_files_made_elsewhere_pairs_chapters_by_name() {
    let c = TestCampaign::new("");
    c.write("src/a.md", CHAPTER);
    c.write("src/b.md", "# B\n\nText.\n");
    c.write(
        "tgt/a.md",
        &CHAPTER.replace(
            "A tool is a function the Agent may call.",
            "工具是智能体可以调用的函数。",
        ),
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_booktr"))
        .current_dir(c.path(""))
        .args(["validate", "--source"])
        .arg(c.path("src"))
        .arg("--target")
        .arg(c.path("tgt"))
        .args(["--source-lang", "en", "--target-lang", "zh", "--json"])
        .output()
        .unwrap();
    assert_code(&out, 1);
    let s = json_summary(&out);
    // A chapter without its translation: work remains.
    assert_eq!(s["status"], "incomplete");
    assert_eq!(s["pass"], false);
    assert!(
        s["qa_counts"]["completeness"].as_u64().unwrap() == 1,
        "b.md has no translation: {s}"
    );
    assert!(c.path("booktr-validate/src/report.html").exists());
}

/// Regression (a new user): `validate --source A --target B` wrote its report into the
/// folder of the target, inside the book, without being asked. Now it goes under
/// `--report-dir`, by default `booktr-validate/<name>` in the current folder, or in the
/// temporary folder when the current folder is inside the book; the command names it.
#[test]
fn validate_wrote_its_report_into_the_book() {
    let c = TestCampaign::new("");
    // A name of its own: the temporary folder is shared with other tests and processes.
    let name = format!("en-{}", std::process::id());
    c.write(&format!("{name}/a.md"), CHAPTER);
    c.write(
        "zh/a.md",
        &CHAPTER.replace("Tools cost tokens.", "工具消耗令牌。"),
    );
    let validate = |cwd: &str| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_booktr"))
            .current_dir(c.path(cwd))
            .args(["validate", "--source"])
            .arg(c.path(&name))
            .arg("--target")
            .arg(c.path("zh"))
            .args(["--source-lang", "en", "--target-lang", "zh", "--json"])
            .output()
            .unwrap();
        let s = json_summary(&out);
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        (s, err)
    };
    let book_files = || -> Vec<std::path::PathBuf> {
        let mut v: Vec<_> = c
            .all_files()
            .into_iter()
            .filter(|p| !p.starts_with(c.path("booktr-validate")))
            .collect();
        v.sort();
        v
    };
    let before = book_files();
    // From the folder that holds the book: beside it, named.
    let (s, err) = validate("");
    let dir = c.path(&format!("booktr-validate/{name}"));
    assert!(dir.join("report.json").is_file(), "{s} {err}");
    assert!(err.contains(&format!("booktr-validate/{name}")), "{err}");
    assert_eq!(
        book_files(),
        before,
        "nothing written into the source or target"
    );
    // From inside the target: the temporary folder, named, never the book.
    let (s, err) = validate("zh");
    let tmp = std::env::temp_dir().join("booktr-validate").join(&name);
    assert!(tmp.join("report.json").is_file(), "{s} {err}");
    assert!(err.contains(&tmp.display().to_string()), "{err}");
    assert_eq!(book_files(), before, "nothing written into the book");
    std::fs::remove_dir_all(&tmp).unwrap();
    // A folder given with --report-dir is used as it is.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_booktr"))
        .args(["validate", "--source"])
        .arg(c.path(&name))
        .arg("--target")
        .arg(c.path("zh"))
        .args(["--source-lang", "en", "--target-lang", "zh", "--report-dir"])
        .arg(c.path("reports"))
        .output()
        .unwrap();
    assert_code(&out, 1);
    assert!(c.path("reports/report.html").is_file());
}

/// Regression (a new user): for the same state, `validate CAMPAIGN` said `incomplete` (stage
/// "write outputs", after it recorded a hand edit) where `run` said `needs_review`. `run`,
/// `status` and `validate` now say one word for one state.
#[test]
fn validate_said_incomplete_where_run_said_needs_review() {
    let c = TestCampaign::with_chapters(
        "v",
        &["ch.md"],
        "max_unit_chars = 200
",
    );
    c.write("ch.md", CHAPTER);
    assert_code(&c.cmd("run", &[]).output().unwrap(), 0);
    // The editor breaks the code block: an error finding on a hand edit (kept as it is).
    let out_text = c.read("v/out/ch.md");
    std::fs::write(
        c.path("v/out/ch.md"),
        out_text.replace("{\"name\": \"read_file\"}", "{\"name\": \"读取文件\"}"),
    )
    .unwrap();
    let validate = c.cmd("validate", &["--json"]).output().unwrap();
    assert_code(&validate, 1);
    let v = json_summary(&validate);
    assert_eq!(
        (&v["status"], &v["pass"]),
        (&"needs_review".into(), &false.into()),
        "{v}"
    );
    let err = String::from_utf8_lossy(&validate.stderr);
    assert!(
        err.contains("status needs_review: 1 error in 1 unit"),
        "{err}"
    );
    let status = c.cmd("status", &["--json"]).output().unwrap();
    assert_code(&status, 0);
    let st = json_summary(&status);
    assert_eq!(st["status"], "needs_review", "{st}");
    assert_eq!(st["stage"]["stage"], "complete", "{st}");
    let run = c.cmd("run", &["--json"]).output().unwrap();
    assert_code(&run, 1);
    assert_eq!(json_summary(&run)["status"], "needs_review");
    let again = c.cmd("validate", &["--json"]).output().unwrap();
    assert_eq!(json_summary(&again)["status"], "needs_review");
}

#[test]
fn validate_files_with_a_missing_target_is_a_usage_error() {
    let c = TestCampaign::new("");
    c.write("src/a.md", CHAPTER);
    // `validate --source SOURCE --target TARGET` en → zh in the campaign's folder: its stderr.
    let validate = |source: &str, target: &str| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_booktr"))
            .current_dir(c.path(""))
            .args(["validate", "--source", source, "--target", target])
            .args(["--source-lang", "en", "--target-lang", "zh"])
            .output()
            .unwrap();
        assert_code(&out, 2);
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let err = validate("src", "no-such-folder");
    assert!(
        err.contains("no-such-folder") && err.contains("--target"),
        "{err}"
    );
    assert!(
        !c.path("validation").exists(),
        "no report for a missing target"
    );
    // A missing source is named with its flag and remedy too.
    let err = validate("no-such-source", "src");
    assert!(
        err.contains("cannot read the source no-such-source") && err.contains("--source"),
        "{err}"
    );
}
