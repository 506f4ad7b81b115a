//! Issue 18, "smaller when stuck", against the fake server: a model that merges two paragraphs
//! whenever it sees the whole unit (first translation and revision alike) but translates each
//! paragraph faithfully when it gets one at a time. After the last revision round the unit is
//! translated again as pieces, joined and QA-checked: the joined pieces are kept, no
//! structure error is left and the campaign is complete; a resume pays for nothing. When the
//! pieces come out worse, the earlier candidate stays kept (never worse). A link the model drops in every round comes back
//! through a one-piece retry whose request masks the markup (and, with `repair = "off"`, is
//! left to the revision rounds).

use crate::support;

use booktr::agents::Agent;
use booktr::lang::Lang;
use support::fake_llm::{FakeServer, Reply, default_content};
use support::{TestCampaign, assert_code, json_summary};

const KEY: &str = "sk-booktr-pieces-KEY-18pp";

const CHAPTER: &str = "An agent calls a tool by writing a request, and the runtime executes it.\n\nThe model then reads the result before it decides on the next step of the task.\n";

/// What a worse piece appends: code blocks and headings the source never had.
const JUNK: &str = "\n\n```python\nrun()\n```\n\n## 发明的标题\n\n## 另一个发明的标题\n";

/// A fake model that merges the paragraphs of every whole-unit answer; a one-paragraph request
/// (a piece) is answered faithfully, or with [`JUNK`] appended when `worse_pieces`.
fn merger(worse_pieces: bool) -> FakeServer {
    let fake = FakeServer::start();
    let zh = Lang::parse("zh");
    fake.script(move |r| {
        if r.agent != Agent::Translation {
            return Reply::Default;
        }
        let good = default_content(&zh, Agent::Translation, &r.messages);
        if good.trim_end().contains("\n\n") {
            Reply::Content(format!("{}\n", good.trim_end().replacen("\n\n", " ", 1)))
        } else if worse_pieces {
            Reply::Content(format!("{}{JUNK}", good.trim_end()))
        } else {
            Reply::Content(good)
        }
    });
    fake
}

/// A fake model that echoes the English source of every whole-unit request; a one-paragraph
/// request (a piece) is answered in Chinese, followed by `piece_tail`.
fn echoer(piece_tail: &'static str) -> FakeServer {
    let fake = FakeServer::start();
    let zh = Lang::parse("zh");
    fake.script(move |r| {
        if r.agent != Agent::Translation {
            return Reply::Default;
        }
        let good = default_content(&zh, Agent::Translation, &r.messages);
        if good.trim_end().contains("\n\n") {
            Reply::Content(r.unit_text().unwrap_or_default().to_string())
        } else {
            Reply::Content(format!("{}{piece_tail}\n", good.trim_end()))
        }
    });
    fake
}

fn campaign() -> TestCampaign {
    let c = TestCampaign::with_chapters(
        "p",
        &["a.md"],
        "revision_rounds = 1\nbrief = true\n[provider]\nkind = \"openai\"\nmodel = \"m\"\n",
    );
    c.write("a.md", CHAPTER);
    c
}

fn run(c: &TestCampaign, fake: &FakeServer) -> std::process::Output {
    c.cmd("run", &["--base-url", &fake.base_url, "--json"])
        .env("OPENAI_API_KEY", KEY)
        .output()
        .unwrap()
}

/// The one unit of the report, with its candidates.
fn unit(c: &TestCampaign) -> serde_json::Value {
    let r: serde_json::Value = serde_json::from_str(&c.read("p/validation/report.json")).unwrap();
    let units = r["units"].as_array().unwrap();
    assert_eq!(units.len(), 1, "{units:?}");
    units[0].clone()
}

fn translation_requests(fake: &FakeServer) -> usize {
    fake.requests()
        .iter()
        .filter(|r| r.agent == Agent::Translation)
        .count()
}

#[test]
fn a_unit_stuck_with_merged_paragraphs_is_translated_again_in_pieces_and_kept() {
    let fake = merger(false);
    let c = campaign();
    let out = run(&c, &fake);
    assert_code(&out, 0);
    let s = json_summary(&out);
    assert_eq!(s["status"], "complete", "{s}");
    assert_eq!(s["findings"]["errors"], 0, "{s}");
    // First translation, one revision, then the two pieces.
    assert_eq!(translation_requests(&fake), 4);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("still wrong after its revision rounds")
            && err.contains("in 2 smaller pieces"),
        "{err}"
    );
    let u = unit(&c);
    assert_eq!(u["kept_round"], 2, "{u}");
    let k = u["candidates"].as_array().unwrap();
    let shape: Vec<(u64, &str, bool)> = k
        .iter()
        .map(|x| {
            (
                x["round"].as_u64().unwrap(),
                x["origin"].as_str().unwrap(),
                x["kept"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        shape,
        [
            (0, "translation", false),
            (1, "revision", false),
            (2, "pieces", true)
        ],
        "{u}"
    );
    assert!(k[0]["errors"].as_u64().unwrap() >= 1, "{u}");
    assert_eq!(k[2]["errors"], 0, "{u}");
    assert!(
        !u["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["check"] == "structure" && f["severity"] == "error"),
        "{u}"
    );
    // The output keeps the two paragraphs apart.
    let text = c.read("p/out/a.md");
    assert_eq!(text.trim_end().matches("\n\n").count(), 1, "{text}");
    // The decision is a journaled fact, once.
    let journal = c.read(&format!(
        "{}/journal.jsonl",
        s["state_dir"].as_str().unwrap()
    ));
    assert_eq!(journal.matches("\"event\":\"unit_pieces\"").count(), 1);

    // Resume: nothing is split again, nothing is paid twice.
    let before = fake.requests().len();
    let again = run(&c, &fake);
    assert_code(&again, 0);
    assert_eq!(fake.requests().len(), before, "a resume makes 0 requests");
    assert_eq!(json_summary(&again)["status"], "complete");
    assert_eq!(c.read("p/out/a.md"), text);
    let journal = c.read(&format!(
        "{}/journal.jsonl",
        s["state_dir"].as_str().unwrap()
    ));
    assert_eq!(journal.matches("\"event\":\"unit_pieces\"").count(), 1);
    assert_eq!(unit(&c)["candidates"], u["candidates"]);
}

/// Regression (a new user): a piece the provider refused was logged as "failed
/// translate/…" while the summary said "0 failed": the count took only units without a first
/// translation. Every failed translation call of a unit now counts it, in the summary, the
/// last line and `status`.
#[test]
fn a_failed_piece_was_logged_while_the_summary_said_0_failed() {
    let fake = FakeServer::start();
    let zh = Lang::parse("zh");
    fake.script(move |r| {
        if r.agent != Agent::Translation {
            return Reply::Default;
        }
        let good = default_content(&zh, Agent::Translation, &r.messages);
        if good.trim_end().contains("\n\n") {
            Reply::Content(format!("{}\n", good.trim_end().replacen("\n\n", " ", 1)))
        } else {
            Reply::Status {
                code: 400,
                body: r#"{"error":{"message":"this piece is refused"}}"#.into(),
                retry_after: None,
            }
        }
    });
    let c = campaign();
    let out = run(&c, &fake);
    assert_code(&out, 1);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("failed translate/") && err.contains(".pieces.p"),
        "the piece's failure is logged: {err}"
    );
    let s = json_summary(&out);
    assert_eq!(s["status"], "incomplete", "{s}");
    assert_eq!(s["units"]["failed"], 1, "{s}");
    // A later run tries the piece again: the campaign is not done.
    assert!(err.contains("incomplete: 1 failed"), "{err}");
    assert!(err.contains("Run the same command again"), "{err}");
    assert!(err.contains(", 1 failed;"), "{err}");
    let status = c.cmd("status", &[]).output().unwrap();
    let text = String::from_utf8_lossy(&status.stdout);
    assert!(text.contains(" 1 failed,"), "{text}");
}

#[test]
fn pieces_that_come_out_worse_leave_the_earlier_candidate_kept() {
    let fake = merger(true);
    let c = campaign();
    let out = run(&c, &fake);
    assert_code(&out, 1);
    assert_eq!(json_summary(&out)["status"], "needs_review");
    assert_eq!(translation_requests(&fake), 4);
    let u = unit(&c);
    let k = u["candidates"].as_array().unwrap();
    assert_eq!(k.len(), 3, "{u}");
    assert_eq!(k[2]["origin"], "pieces");
    assert_eq!(k[2]["kept"], false, "{u}");
    assert_eq!(k[2]["rejected"], true, "{u}");
    assert!(
        k[2]["errors"].as_u64().unwrap() > k[1]["errors"].as_u64().unwrap(),
        "{u}"
    );
    assert_ne!(u["kept_round"], 2, "{u}");
    let text = c.read("p/out/a.md");
    assert!(
        !text.contains("发明的标题") && !text.contains("```python"),
        "{text}"
    );
    // Only once per unit: a resume neither splits again nor pays.
    let before = fake.requests().len();
    assert_code(&run(&c, &fake), 1);
    assert_eq!(fake.requests().len(), before);
}

/// Regression (a new user's trial with the real 0.5B model, issue 32's stumble 9): the
/// translation echoed the English source (one `untranslated` error for the whole unit) and
/// the pieces came back in Chinese with English words left in them (many `untranslated_word`
/// errors, counted one by one). Selection compared error counts alone and kept the English
/// copy. A text left in the source language now ranks below any translation: the pieces are
/// kept, and the echo is marked as such in the candidates.
#[test]
fn an_english_copy_was_kept_over_pieces_in_chinese_with_stray_words() {
    // Each piece leaves three English words, each on its own.
    let fake = echoer("然后 engine 会 execute 这个 request。");
    let c = campaign();
    let out = run(&c, &fake);
    assert_code(&out, 1);
    assert_eq!(json_summary(&out)["status"], "needs_review");
    // The echo is not revised (see `an_echo_was_revised_although_a_weak_model_copies_it_again`):
    // the first translation, then the two pieces.
    assert_eq!(translation_requests(&fake), 3);
    let u = unit(&c);
    let k = u["candidates"].as_array().unwrap();
    assert_eq!(k.len(), 2, "{u}");
    assert_eq!(k[0]["errors"], 1, "{u}");
    assert_eq!(k[0]["left_in_source"], true, "{u}");
    assert_eq!(k[0]["kept"], false, "{u}");
    assert_eq!(k[1]["origin"], "pieces");
    assert_eq!(k[1]["left_in_source"], false, "{u}");
    assert!(k[1]["errors"].as_u64().unwrap() >= 6, "{u}");
    assert_eq!(k[1]["kept"], true, "{u}");
    assert_eq!(k[1]["rejected"], false, "{u}");
    assert_eq!(u["kept_round"], 2, "{u}");
    let text = c.read("p/out/a.md");
    assert!(!text.contains("An agent calls a tool"), "{text}");
    assert!(text.contains("engine 会 execute"), "{text}");
    // `explain` says why the text with more errors is kept.
    let explained = c.cmd("explain", &["a-000"]).output().unwrap();
    let explained = String::from_utf8_lossy(&explained.stdout);
    assert!(
        explained.contains("a translation before the 1 left in the source language")
            && explained.contains("nearly all of it is still in the source language"),
        "{explained}"
    );
    // The findings left are the stray words, which the editor is told to translate.
    let words = u["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["check"] == "untranslated_word" && f["severity"] == "error")
        .count();
    assert!(words >= 6, "{u}");
}

/// Recorded from the 0.5B model on the quality benchmark's slice (finding 4 in
/// docs/src/benchmarks.md): asked to revise its answer that was the English source, it
/// repeated the English, the review message or one passage again and again, and QA rejected
/// every such revision; the pieces, asked from the source alone, were translated. A unit whose
/// kept text is left in the source language is no longer revised: it waits for the end of
/// the review rounds and is translated again in pieces. A unit with other errors is still
/// revised.
#[test]
fn an_echo_was_revised_although_a_weak_model_copies_it_again() {
    let fake = echoer("");
    let c = campaign();
    let out = run(&c, &fake);
    let s = json_summary(&out);
    assert_code(&out, 0);
    assert_eq!(s["status"], "complete", "{s}");
    let revisions = fake.requests().iter().filter(|r| r.is_revision()).count();
    assert_eq!(revisions, 0, "an echo was sent back for revision: {s}");
    assert_eq!(translation_requests(&fake), 3, "{s}");
    let u = unit(&c);
    assert_eq!(u["kept_round"], 2, "{u}");
    assert_eq!(u["outcome"], "revised", "{u}");
    // A merged paragraph (no echo) is still revised first: see
    // `a_unit_stuck_with_merged_paragraphs_is_translated_again_in_pieces_and_kept`.
}

/// One paragraph with a link, which a weak model drops in every whole-unit answer.
const LINKED: &str =
    "Long tasks therefore need memory, as the [next chapter](memory.md) explains in detail.\n";

/// `text` with every `[…](memory.md)` link replaced by its text alone (the fault the 1.5b
/// model made on `tests/fixtures/real-llm/book/loop.md`, in the first answer and the revision).
fn drop_links(text: &str) -> String {
    let mut out = text.to_string();
    while let Some(end) = out.find("](memory.md)") {
        let Some(open) = out[..end].rfind('[') else {
            break;
        };
        out.replace_range(end..end + "](memory.md)".len(), "");
        out.replace_range(open..open + 1, "");
    }
    out
}

/// Issue 18, measured point: a link target the model drops in every round cannot be placed by
/// the repair (it does not guess where the span belongs), so the unit, one paragraph, is
/// translated again as one piece whose request masks the link markup: the model only has to
/// keep the placeholders, the link comes back byte for byte, and no mechanical error is left.
#[test]
fn a_link_the_model_drops_every_round_is_restored_through_a_masked_piece() {
    let fake = FakeServer::start();
    let zh = Lang::parse("zh");
    fake.script(move |r| {
        if r.agent != Agent::Translation {
            return Reply::Default;
        }
        let good = default_content(&zh, Agent::Translation, &r.messages);
        if r.unit_text().is_some_and(|t| t.contains('⟦')) {
            Reply::Content(good)
        } else {
            Reply::Content(drop_links(&good))
        }
    });
    let c = TestCampaign::with_chapters(
        "p",
        &["a.md"],
        "revision_rounds = 1\nbrief = true\n[provider]\nkind = \"openai\"\nmodel = \"m\"\n",
    );
    c.write("a.md", LINKED);
    let out = run(&c, &fake);
    // The piece hides the whole link, its text too, so the link text stays English inside a
    // Chinese sentence: the one error left is that `untranslated_word`, for the editor.
    assert_code(&out, 1);
    let s = json_summary(&out);
    assert_eq!(s["status"], "needs_review", "{s}");
    assert_eq!(s["findings"]["errors"], 1, "{s}");
    let md = c.read("p/validation/report.md");
    assert!(
        md.contains("| **error** | untranslated_word | a-000 | \"next chapter\" is English"),
        "{md}"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("in 1 smaller pieces"), "{err}");
    // First translation and revision dropped the link; the piece kept it.
    let translations: Vec<_> = fake
        .requests()
        .into_iter()
        .filter(|r| r.agent == Agent::Translation)
        .collect();
    assert_eq!(translations.len(), 3);
    let piece = translations[2].unit_text().unwrap().to_string();
    assert!(
        piece.contains('⟦') && !piece.contains("memory.md") && piece.contains("explains"),
        "the piece hides the link behind a placeholder: {piece}"
    );
    assert!(
        !translations[2].all_text().contains("Book brief"),
        "a piece request leaves the brief out"
    );
    let u = unit(&c);
    assert_eq!(u["kept_round"], 2, "{u}");
    // Nothing hidden: the report says the unit went to pieces, and why.
    assert_eq!(u["pieces"]["round"], 2, "{u}");
    assert_eq!(u["pieces"]["parts"], 1, "{u}");
    assert!(
        u["pieces"]["reason"]
            .as_str()
            .unwrap()
            .contains("link target `memory.md` is missing"),
        "{u}"
    );
    let md = c.read("p/validation/report.md");
    assert!(
        md.contains("### Translated again in pieces") && md.contains("| a-000 | 2 | 1 | yes |"),
        "{md}"
    );
    let text = c.read("p/out/a.md");
    assert!(text.contains("](memory.md)"), "{text}");
    assert_eq!(text.matches('[').count(), 1, "{text}");
}

/// With `repair = "off"` (a study of raw model quality) a dropped link is left to the revision
/// rounds and reported; no masked piece is tried.
#[test]
fn repair_off_sends_no_unit_to_masked_pieces_for_a_dropped_link() {
    let fake = FakeServer::start();
    let zh = Lang::parse("zh");
    fake.script(move |r| {
        if r.agent != Agent::Translation {
            return Reply::Default;
        }
        Reply::Content(drop_links(&default_content(
            &zh,
            Agent::Translation,
            &r.messages,
        )))
    });
    let c = TestCampaign::with_chapters(
        "p",
        &["a.md"],
        "revision_rounds = 1\nrepair = \"off\"\n[provider]\nkind = \"openai\"\nmodel = \"m\"\n",
    );
    c.write("a.md", LINKED);
    let out = run(&c, &fake);
    assert_code(&out, 1);
    assert_eq!(translation_requests(&fake), 2);
    let s = json_summary(&out);
    assert_ne!(s["status"], "complete", "{s}");
}

const SCHEMA: &str = "The schema below describes `read_file`:\n\n```json\n{\"name\": \"read_file\", \"parameters\": {\"path\": {\"type\": \"string\"}}}\n```\n\nSee the guide for the wire format of a tool call.\n";

/// Recorded from the 1.5b model on the sample book (`02-tools-001`, see
/// `tests/fixtures/real-llm/sample.jsonl`): the whole unit came back without its JSON code
/// block, which the repair cannot place; a piece of the lead-in sentence and the code block
/// together came back as the JSON alone, unfenced, with its keys translated; and the lead-in
/// sentence on its own came back as an empty fence. Now the code block is a piece of its own
/// that is never sent (joined as its source's bytes), and a piece the model answers unusably
/// is joined as its source, so the joined candidate has its code block byte for byte, no
/// mechanical error, and the untranslated lead-in is reported for the editor.
#[test]
fn a_code_block_piece_was_sent_to_the_model_and_came_back_translated() {
    let fake = FakeServer::start();
    let zh = Lang::parse("zh");
    fake.script(move |r| {
        if r.agent != Agent::Translation {
            return Reply::Default;
        }
        let text = r.unit_text().unwrap_or("").to_string();
        let good = default_content(&zh, Agent::Translation, &r.messages);
        if text.contains("See the guide") && text.contains("schema below") {
            // The whole unit: the code block dropped.
            let cut = good.find("```").unwrap();
            let end = good[cut + 3..].find("```").unwrap() + cut + 6;
            Reply::Content(format!("{}{}", &good[..cut], good[end..].trim_start()))
        } else if text.contains("schema below") {
            Reply::Content("```markdown\n```".into())
        } else {
            Reply::Content(good)
        }
    });
    let c = campaign();
    c.write("a.md", SCHEMA);
    let out = run(&c, &fake);
    let s = json_summary(&out);
    let requests: Vec<String> = fake
        .requests()
        .iter()
        .filter_map(|r| r.unit_text().map(String::from))
        .collect();
    // First translation, revision, then two prose pieces, the empty answer of the lead-in
    // asked for once more (faults::an_empty_reply_failed_the_unit_without_asking_again); the
    // code block is never sent alone.
    assert_eq!(requests.len(), 5, "{requests:#?}");
    assert_eq!(
        fake.requests()
            .iter()
            .filter(|r| r.all_text().contains("Your reply held no translation"))
            .count(),
        1
    );
    assert!(
        !requests
            .iter()
            .any(|t| t.contains("read_file\", \"parameters") && !t.contains("See the guide")),
        "a piece with the code block was sent: {requests:#?}"
    );
    let u = unit(&c);
    assert_eq!(u["kept_round"], 2, "{u}");
    assert_eq!(u["pieces"]["parts"], 3, "{u}");
    let text = c.read("p/out/a.md");
    assert!(
        text.contains("```json\n{\"name\": \"read_file\", \"parameters\": {\"path\": {\"type\": \"string\"}}}\n```\n"),
        "{text}"
    );
    assert!(
        text.starts_with("The schema below describes `read_file`:\n\n"),
        "{text}"
    );
    let errors: Vec<String> = u["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] == "error")
        .map(|f| f["check"].as_str().unwrap().to_string())
        .collect();
    assert!(
        !errors
            .iter()
            .any(|c| booktr::repair::is_mechanical(c) || c == "structure"),
        "{errors:?}"
    );
    // The untranslated lead-in is what the editor is left to fix, and the status says so.
    assert_ne!(s["status"], "complete", "{s}");
    assert_code(&out, 1);
}

/// Recorded from the 0.5b model on the quality benchmark's slice: with the book brief in its
/// system prompt it answered a unit with the English source, in its first translation and in
/// its revision; the same request without the brief was translated. A unit left untranslated
/// after its revision rounds was not sent to pieces (whose requests leave the brief out), so
/// it stayed in English. The fake model here echoes every request that carries the brief.
#[test]
fn a_unit_left_untranslated_after_its_revision_rounds_was_not_translated_again_in_pieces() {
    let fake = FakeServer::start();
    let zh = Lang::parse("zh");
    fake.script(move |r| {
        if r.agent != Agent::Translation {
            return Reply::Default;
        }
        if r.messages[0].content.contains("Book brief:") {
            Reply::Content(r.unit_text().unwrap_or_default().to_string())
        } else {
            Reply::Content(default_content(&zh, Agent::Translation, &r.messages))
        }
    });
    let c = campaign();
    let out = run(&c, &fake);
    let s = json_summary(&out);
    let reqs = fake.requests();
    let tr: Vec<_> = reqs
        .iter()
        .filter(|r| r.agent == Agent::Translation)
        .collect();
    // The first translation carries the brief; it echoed the source, so no revision is
    // sent (an echo is not revised); the two pieces do not carry the brief.
    assert_eq!(tr.len(), 3, "{s}");
    assert!(tr[0].messages[0].content.contains("Book brief:"));
    assert!(
        tr[1..]
            .iter()
            .all(|r| !r.messages[0].content.contains("Book brief:"))
    );
    assert_code(&out, 0);
    assert_eq!(s["status"], "complete", "{s}");
    assert_eq!(s["findings"]["errors"], 0, "{s}");
    let u = unit(&c);
    assert_eq!(u["kept_round"], 2, "{u}");
    let k = u["candidates"].as_array().unwrap();
    assert_eq!(k[0]["origin"], "translation", "{u}");
    assert!(k[0]["errors"].as_u64().unwrap() >= 1, "{u}");
    assert_eq!(k[0]["left_in_source"], true, "{u}");
    assert_eq!(k.len(), 2, "{u}");
    assert_eq!(k[1]["origin"], "pieces", "{u}");
    assert_eq!(k[1]["errors"], 0, "{u}");
}

/// Regression (a real 1.5B run of the sample book): the first translation cut a paragraph to
/// four characters (one `truncation` error, MQM-critical) and its pieces had the paragraph,
/// with more errors (stray English words). The pieces are kept (a text that lost content
/// ranks last), and `explain` said the first translation lost on error count.
#[test]
fn explain_said_a_text_that_lost_a_paragraph_lost_on_error_count() {
    const LONG: &str = "An agent calls a tool by writing a structured request, and the runtime executes that request on its behalf.\n\nThe model then reads the result of the call before it decides on the next step of the task it was given.\n";
    let fake = FakeServer::start();
    let zh = Lang::parse("zh");
    fake.script(move |r| {
        if r.agent != Agent::Translation {
            return Reply::Default;
        }
        let good = default_content(&zh, Agent::Translation, &r.messages);
        match good.trim_end().split_once("\n\n") {
            // A whole-unit answer: the second paragraph cut to a fragment.
            Some((first, _)) => Reply::Content(format!("{first}\n\n[ ]\n")),
            // A piece: translated, with English words left in it.
            None => Reply::Content(format!(
                "{}然后 engine 会 execute 这个 request。\n",
                good.trim_end()
            )),
        }
    });
    let c = campaign();
    c.write("a.md", LONG);
    assert_code(&run(&c, &fake), 1);
    let u = unit(&c);
    let k = u["candidates"].as_array().unwrap();
    let first = &k[0];
    assert_eq!(first["critical"], 1, "{u}");
    let kept = k.iter().find(|x| x["kept"] == true).unwrap();
    assert_eq!(kept["origin"], "pieces", "{u}");
    assert_eq!(kept["critical"], 0, "{u}");
    assert!(
        kept["errors"].as_u64() > first["errors"].as_u64(),
        "the pieces have more errors: {u}"
    );
    let explained = c.cmd("explain", &["a-000"]).output().unwrap();
    let explained = String::from_utf8_lossy(&explained.stdout);
    assert!(
        explained.contains("not kept: it lost content (1 critical error finding(s))")
            && explained.contains("a text that lost no content before the 2 that did"),
        "{explained}"
    );
}
