//! Issue 12 against the fake server: "the loop never makes a unit worse" and "the status tells
//! the truth". A first translation with one error is revised into a text with more errors (the
//! revision appends a duplicated code block and invented headings, as Qwen2.5-Coder-1.5B did on
//! the sample book): the first translation is kept, the revision is recorded as rejected with
//! its findings, and the campaign ends `needs_review`, never `complete`, while the error
//! remains.

use crate::support;

use booktr::agents::Agent;
use booktr::lang::Lang;
use support::fake_llm::{FakeServer, Reply, default_content};
use support::{TestCampaign, assert_code, json_summary};

const KEY: &str = "sk-booktr-keep-KEY-12cc";

const LINK: &str = "https://example.org/guide";
const BAD_LINK: &str = "https://example.org/zh/guide";

const CHAPTER: &str = "# Agents\n\nAn agent calls tools in a loop and reads what comes back before it decides on the next step; see [the guide](https://example.org/guide) for the whole loop.\n";

/// What the revision appends: a second copy of a code block and headings the source never had.
const JUNK: &str = "\n```python\nrun()\n```\n\n```python\nrun()\n```\n\n## 发明的标题\n\n## 另一个发明的标题\n\n### 第三个标题\n";

fn campaign() -> TestCampaign {
    let c = TestCampaign::with_chapters(
        "k",
        &["a.md"],
        // Mechanical repair (issue 18) would restore the link: these tests are about revisions.
        "revision_rounds = 1\nrepair = \"off\"\n[provider]\nkind = \"openai\"\nmodel = \"m\"\n",
    );
    c.write("a.md", CHAPTER);
    c
}

/// A fake model whose first translation changes the link target (one `links` error) and whose
/// revision keeps that error and appends [`JUNK`] (more errors).
fn worse_reviser() -> FakeServer {
    reviser(false)
}

/// A fake whose first translations break a link; its revisions fix it (`fixes`) or add junk
/// to the broken text.
fn reviser(fixes: bool) -> FakeServer {
    let fake = FakeServer::start();
    let zh = Lang::parse("zh");
    fake.script(move |r| {
        if r.agent != Agent::Translation {
            return Reply::Default;
        }
        let good = default_content(&zh, Agent::Translation, &r.messages);
        let first = good.replace(LINK, BAD_LINK);
        match (r.is_revision(), fixes) {
            (false, _) => Reply::Content(first),
            (true, true) => Reply::Content(good),
            (true, false) => Reply::Content(format!("{first}{JUNK}")),
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

#[test]
fn revision_with_more_errors_is_rejected_not_kept() {
    let fake = worse_reviser();
    let c = campaign();
    let out = run(&c, &fake);
    assert_code(&out, 1);
    assert!(
        fake.requests().iter().any(|r| r.is_revision()),
        "the unit with an error was sent back"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("revision of round 1 rejected") && err.contains("round 0 is kept"),
        "{err}"
    );

    // The output holds the first translation: its one error, none of the revision's junk.
    let text = c.read("k/out/a.md");
    assert!(text.contains(BAD_LINK), "{text}");
    assert!(
        !text.contains("发明的标题") && !text.contains("```python"),
        "{text}"
    );

    let r = report(&c);
    let units = r["units"].as_array().unwrap();
    let u = units
        .iter()
        .find(|u| u["candidates"].as_array().is_some_and(|k| k.len() == 2))
        .unwrap_or_else(|| panic!("a unit with two candidates: {units:?}"));
    assert_eq!(u["kept_round"], 0, "{u}");
    let k = u["candidates"].as_array().unwrap();
    assert_eq!(k[0]["round"], 0);
    assert_eq!(k[0]["origin"], "translation");
    assert_eq!(k[0]["errors"], 1, "{u}");
    assert_eq!(k[0]["rejected"], false);
    assert_eq!(k[0]["kept"], true);
    assert_eq!(k[1]["round"], 1);
    assert_eq!(k[1]["origin"], "revision");
    assert!(k[1]["errors"].as_u64().unwrap() > 1, "{u}");
    assert_eq!(k[1]["rejected"], true);
    assert_eq!(k[1]["kept"], false);
    // The rejected revision is on record with its findings.
    let rejected_checks: Vec<&str> = k[1]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["check"].as_str().unwrap())
        .collect();
    assert!(
        rejected_checks.contains(&"headings") && rejected_checks.contains(&"links"),
        "{rejected_checks:?}"
    );
    assert_eq!(
        k[1]["findings"].as_array().unwrap().len(),
        k[1]["errors"].as_u64().unwrap() as usize + k[1]["warnings"].as_u64().unwrap() as usize,
        "{u}"
    );
    // The unit's findings are those of the kept text: the link, not the headings.
    let checks: Vec<&str> = u["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] == "error")
        .map(|f| f["check"].as_str().unwrap())
        .collect();
    assert_eq!(checks, ["links"], "{u}");

    // report.md and report.html show the choice.
    let md = c.read("k/validation/report.md");
    assert!(md.contains("## Candidates"), "{md}");
    assert!(
        md.contains("round 0 translation: 1 error(s), 0 warning(s) **(kept)**"),
        "{md}"
    );
    assert!(
        md.contains("round 1 revision:") && md.contains("(rejected)"),
        "{md}"
    );
    let html = c.read("k/validation/report.html");
    assert!(html.contains("class=\"candidates\""), "{html}");
    assert!(html.contains("rejected: adds errors"), "{html}");

    // Resume makes the same choice without a new call.
    let before = fake.requests().len();
    let again = run(&c, &fake);
    assert_code(&again, 1);
    assert_eq!(fake.requests().len(), before, "nothing is paid twice");
    assert_eq!(c.read("k/out/a.md"), text);
    let r2 = report(&c);
    let u2 = r2["units"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["id"] == u["id"])
        .unwrap();
    assert_eq!(u2["kept_round"], 0);
    assert_eq!(u2["candidates"], u["candidates"]);
}

#[test]
fn status_is_not_complete_while_errors_remain() {
    let fake = worse_reviser();
    let c = campaign();
    let out = run(&c, &fake);
    assert_code(&out, 1);
    let s = json_summary(&out);
    assert_eq!(s["status"], "needs_review", "{s}");
    assert_eq!(s["findings"]["errors"], 1, "{s}");
    assert_eq!(s["findings"]["error_units"], 1, "{s}");
    assert!(s["findings"]["warnings"].is_u64(), "{s}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("needs_review: 1 error in 1 unit"), "{err}");
    assert!(!err.contains("Complete"), "{err}");
    // No hand edit: no word about hand edits.
    assert!(!err.contains("never overwritten"), "{err}");

    // `booktr status` says the same, in text and JSON.
    let st = c.cmd("status", &[]).output().unwrap();
    assert_code(&st, 0);
    let shown = String::from_utf8_lossy(&st.stdout);
    assert!(shown.contains("needs_review: 1 error in 1 unit"), "{shown}");
    assert!(!shown.contains("complete"), "{shown}");
    let st = c.cmd("status", &["--json"]).output().unwrap();
    let sj = json_summary(&st);
    assert_eq!(sj["status"], "needs_review");
    assert_eq!(sj["findings"], s["findings"]);

    // The reports' headers and the HTML unit grid.
    let r = report(&c);
    assert_eq!(r["summary"]["status"], "needs_review");
    assert_eq!(r["summary"]["findings"]["errors"], 1);
    let md = c.read("k/validation/report.md");
    assert!(
        md.contains("**Status: needs_review: 1 error in 1 unit**"),
        "{md}"
    );
    assert!(!md.contains("never overwritten"), "{md}");
    let html = c.read("k/validation/report.html");
    assert!(
        html.contains("<strong id=\"status\">needs_review: 1 error in 1 unit</strong>"),
        "{html}"
    );
    assert!(html.contains("id=\"needs-review\""), "{html}");
    assert!(html.contains("has-errors"), "{html}");
    assert!(html.contains("needs review: 1 error(s)"), "{html}");
    assert!(!html.contains("id=\"edits-kept\""), "{html}");

    // The journal's run line tells the same.
    let journal = c.read(&format!(
        "{}/journal.jsonl",
        s["state_dir"].as_str().unwrap()
    ));
    assert!(journal.contains("\"status\":\"needs_review\""), "{journal}");
}

#[test]
fn a_clean_campaign_is_complete_and_exits_0() {
    let fake = FakeServer::start();
    let c = campaign();
    let out = run(&c, &fake);
    assert_code(&out, 0);
    let s = json_summary(&out);
    assert_eq!(s["status"], "complete", "{s}");
    assert_eq!(s["findings"]["errors"], 0, "{s}");
    assert_eq!(s["findings"]["error_units"], 0, "{s}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("k: complete —"), "{err}");
    let md = c.read("k/validation/report.md");
    assert!(md.contains("**Status: complete**"), "{md}");
    let html = c.read("k/validation/report.html");
    assert!(
        html.contains("<strong id=\"status\">complete</strong>"),
        "{html}"
    );
    assert!(!html.contains("id=\"needs-review\""), "{html}");
}

#[test]
fn hand_edit_sentence_appears_only_with_hand_edits() {
    let fake = FakeServer::start();
    let c = campaign();
    let out = run(&c, &fake);
    assert_code(&out, 0);
    let no_edit = [
        String::from_utf8_lossy(&out.stderr).into_owned(),
        c.read("k/validation/report.md"),
        c.read("k/validation/report.html"),
    ];
    for text in &no_edit {
        assert!(!text.contains("never overwritten"), "{text}");
    }
    // An editor breaks the link by hand: the edit is kept, and now the sentence is said.
    let edited = c.read("k/out/a.md").replace(LINK, BAD_LINK);
    std::fs::write(c.path("k/out/a.md"), &edited).unwrap();
    let out = run(&c, &fake);
    assert_code(&out, 1);
    assert_eq!(json_summary(&out)["status"], "needs_review");
    assert_eq!(c.read("k/out/a.md"), edited);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("1 unit(s) hold hand edits or imported edits: those are never overwritten"),
        "{err}"
    );
    let md = c.read("k/validation/report.md");
    assert!(md.contains("hold hand edits or imported edits"), "{md}");
    assert!(
        c.read("k/validation/report.html")
            .contains("id=\"edits-kept\"")
    );
    let shown =
        String::from_utf8_lossy(&c.cmd("status", &[]).output().unwrap().stdout).into_owned();
    assert!(shown.contains("never overwritten"), "{shown}");
    // The edit is a candidate of its own, kept, with no round.
    let r = report(&c);
    let u = r["units"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["outcome"] == "edited")
        .unwrap();
    assert_eq!(u["kept_round"], serde_json::Value::Null);
    let last = u["candidates"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["origin"], "human");
    assert_eq!(last["round"], serde_json::Value::Null);
    assert_eq!(last["kept"], true);
    assert_eq!(last["errors"], 1);
}

#[test]
fn a_rejected_revision_is_not_the_base_of_the_next_one() {
    let fake = FakeServer::start();
    let zh = Lang::parse("zh");
    let revisions = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let n = revisions.clone();
    fake.script(move |r| {
        if r.agent != Agent::Translation {
            return Reply::Default;
        }
        let good = default_content(&zh, Agent::Translation, &r.messages);
        if !r.is_revision() {
            return Reply::Content(good.replace(LINK, BAD_LINK));
        }
        // The first revision is worse; the second one fixes the link.
        if n.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
            Reply::Content(format!("{}{JUNK}", good.replace(LINK, BAD_LINK)))
        } else {
            Reply::Content(good)
        }
    });
    let c = TestCampaign::with_chapters(
        "k",
        &["a.md"],
        // Mechanical repair (issue 18) would restore the link: these tests are about revisions.
        "revision_rounds = 2\nrepair = \"off\"\n[provider]\nkind = \"openai\"\nmodel = \"m\"\n",
    );
    c.write("a.md", CHAPTER);
    let out = run(&c, &fake);
    assert_code(&out, 0);
    assert_eq!(json_summary(&out)["status"], "complete");
    let second: Vec<_> = fake
        .requests()
        .into_iter()
        .filter(|r| r.is_revision())
        .collect();
    assert_eq!(second.len(), 2);
    // The second revision starts from the kept first translation, not the rejected revision,
    // and is told why.
    let previous = second[1].previous_translation().unwrap();
    assert!(previous.contains(BAD_LINK), "{previous}");
    assert!(!previous.contains("发明的标题"), "{previous}");
    assert!(
        second[1]
            .all_text()
            .contains("your revision of round 1 was not kept"),
        "{}",
        second[1].all_text()
    );
    let r = report(&c);
    let u = r["units"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["candidates"].as_array().is_some_and(|k| k.len() == 3))
        .unwrap();
    assert_eq!(u["kept_round"], 2, "{u}");
    let k = u["candidates"].as_array().unwrap();
    assert_eq!(
        k.iter()
            .map(|x| x["rejected"].as_bool().unwrap())
            .collect::<Vec<_>>(),
        [false, true, false]
    );
    assert_eq!(
        k.iter()
            .map(|x| x["kept"].as_bool().unwrap())
            .collect::<Vec<_>>(),
        [false, false, true]
    );
    let text = c.read("k/out/a.md");
    assert!(text.contains(LINK) && !text.contains(BAD_LINK), "{text}");
}

#[test]
fn an_imported_edit_is_a_candidate_of_origin_imported() {
    let fake = FakeServer::start();
    let c = campaign();
    assert_code(&run(&c, &fake), 0);
    let out = c.cmd("export", &["--format", "xliff"]).output().unwrap();
    assert_code(&out, 0);
    let doc = c.read("k/export/k.xlf");
    // The editor prepends a sentence to the first translatable target in the CAT tool.
    let unit = doc.find("<unit id=").unwrap();
    let at = unit + doc[unit..].find("<target>").unwrap() + "<target>".len();
    let mut edited = doc.clone();
    edited.insert_str(at, "编辑补充的一句话。");
    c.write("edited.xlf", &edited);
    let out = c
        .cmd("import", &["edited.xlf", "--json"])
        .current_dir(c.dir.path())
        .output()
        .unwrap();
    let s = json_summary(&out);
    assert_eq!(s["edited"].as_array().unwrap().len(), 1, "{s}");
    assert!(s["status"].is_string(), "{s}");
    let r = report(&c);
    let u = r["units"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["outcome"] == "edited")
        .unwrap();
    let k = u["candidates"].as_array().unwrap();
    assert_eq!(k.len(), 2, "{u}");
    assert_eq!(k[0]["origin"], "translation");
    assert_eq!(k[0]["kept"], false);
    assert_eq!(k[1]["origin"], "imported");
    assert_eq!(k[1]["round"], serde_json::Value::Null);
    assert_eq!(k[1]["kept"], true);
    assert_eq!(u["kept_round"], serde_json::Value::Null);
    assert!(c.read("k/out/a.md").contains("编辑补充的一句话。"));
}

/// A chapter of `parts` sections, each one unit with the guide link (one slot, one revision
/// round, no mechanical repair), for the tests of withheld revisions.
fn parts_campaign(parts: usize, concurrency: usize) -> TestCampaign {
    let c = TestCampaign::with_chapters(
        "k",
        &["a.md"],
        &format!(
            "revision_rounds = 1\nrepair = \"off\"\nconcurrency = {concurrency}\nmax_unit_chars = 400\n[provider]\nkind = \"openai\"\nmodel = \"m\"\n"
        ),
    );
    let body = CHAPTER.trim_start_matches("# Agents\n\n");
    let chapter: String = (1..=parts)
        .map(|i| format!("## Part {i}\n\n{body}\n"))
        .collect();
    c.write("a.md", &format!("# Agents\n\n{chapter}"));
    c
}

/// `(first translations, revisions)` the fake server was asked for.
fn translation_requests(fake: &FakeServer) -> (usize, usize) {
    let reqs = fake.requests();
    let first = reqs
        .iter()
        .filter(|r| r.agent == Agent::Translation && !r.is_revision())
        .count();
    (first, reqs.iter().filter(|r| r.is_revision()).count())
}

/// The units report.json says were withheld after round 0 (none: empty).
fn withheld_units(c: &TestCampaign) -> Vec<String> {
    report(c)["revisions_withheld"][0]["units"]
        .as_array()
        .map(|a| a.iter().map(|u| u.as_str().unwrap().to_string()).collect())
        .unwrap_or_default()
}

/// Quality benchmark finding 12: the 0.5B's revisions were all rejected (4 of 4), and every
/// one was paid for. Once the first two revisions of a round are rejected, the round's other
/// revisions are not sent; the report says which units and why, and the errors stay on it.
#[test]
fn every_revision_was_sent_although_the_model_had_failed_each_one() {
    let fake = worse_reviser();
    let c = parts_campaign(4, 1);
    let out = run(&c, &fake);
    assert_code(&out, 1);
    let (first, revisions) = translation_requests(&fake);
    assert!(first >= 4, "{first} first translations");
    assert_eq!(revisions, 2, "two revisions judged, the rest withheld");
    let rj = report(&c);
    let w = rj["revisions_withheld"].as_array().unwrap();
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(
        (w[0]["round"].as_u64(), w[0]["judged"].as_u64()),
        (Some(0), Some(2))
    );
    let withheld = withheld_units(&c);
    assert_eq!(withheld.len(), first - 2, "{withheld:?}");
    // Their errors stay on the report: nothing is called fixed.
    for u in rj["units"].as_array().unwrap() {
        if withheld.iter().any(|w| u["id"] == w.as_str()) {
            assert!(
                u["findings"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|f| f["check"] == "links"),
                "{u}"
            );
        }
    }
    let md = c.read("k/validation/report.md");
    assert!(
        md.contains("Revisions withheld after round 0: the model's first 2 revisions of the round were all rejected"),
        "{md}"
    );
}

/// The 1.5B sample-book run: with `concurrency = 4`, all five revisions were out before the
/// first was judged, and all five were rejected: withholding saved nothing. The round's first
/// two revisions now go out alone; the rest wait for their verdict.
#[test]
fn all_revisions_were_in_flight_before_the_first_was_judged() {
    let fake = worse_reviser();
    let c = parts_campaign(6, 4);
    let out = run(&c, &fake);
    assert_code(&out, 1);
    let (first, revisions) = translation_requests(&fake);
    assert!(first >= 6, "{first} first translations");
    assert_eq!(revisions, 2, "only the trial's two were sent");
    assert_eq!(withheld_units(&c).len(), first - 2);
}

/// A model whose first revision is kept lifts the trial's cap: every revision is sent.
#[test]
fn a_kept_revision_let_the_rest_of_the_round_go_out() {
    let fake = reviser(true);
    let c = parts_campaign(5, 4);
    let out = run(&c, &fake);
    assert_code(&out, 0);
    let (first, revisions) = translation_requests(&fake);
    assert!(first >= 5, "{first} first translations");
    assert_eq!(revisions, first, "every unit revised once");
    assert!(withheld_units(&c).is_empty());
}

/// A revision that was sent and failed is a failed call, not a withheld one: the next run
/// retries it (the status's "run again to retry" stays true), and only revisions never sent
/// are withheld.
#[test]
fn a_failed_revision_was_counted_as_withheld_and_never_retried() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let fake = FakeServer::start();
    let zh = Lang::parse("zh");
    let part_one = std::sync::Arc::new(AtomicUsize::new(0));
    let seen = part_one.clone();
    fake.script(move |r| {
        if r.agent != Agent::Translation {
            return Reply::Default;
        }
        let first = default_content(&zh, Agent::Translation, &r.messages).replace(LINK, BAD_LINK);
        if !r.is_revision() {
            return Reply::Content(first);
        }
        // Part 1's revision always comes back empty (a failed call); the others are worse.
        if r.unit_text().is_some_and(|t| t.contains("## Part 1")) {
            seen.fetch_add(1, Ordering::SeqCst);
            Reply::Content(String::new())
        } else {
            Reply::Content(format!("{first}{JUNK}"))
        }
    });
    let c = parts_campaign(5, 1);
    let out = run(&c, &fake);
    let s = json_summary(&out);
    assert_eq!(
        s["status"], "incomplete",
        "the failed revision is reported: {s}"
    );
    let tried = part_one.load(Ordering::SeqCst);
    assert!(tried >= 1, "Part 1's revision was sent");
    let withheld = withheld_units(&c);
    assert!(!withheld.is_empty(), "two revisions were rejected");
    // The next run retries the failed revision; the withheld ones stay withheld.
    let again = run(&c, &fake);
    assert!(
        part_one.load(Ordering::SeqCst) > tried,
        "the failed revision was retried: {}",
        String::from_utf8_lossy(&again.stderr)
    );
    assert_eq!(withheld_units(&c), withheld);
    assert_eq!(
        json_summary(&again)["status"],
        "incomplete",
        "it failed again, and says so"
    );
}
