//! The living book: the block is the grain of memory. A changed paragraph re-sends that
//! paragraph alone, an editor's fix survives a source edit elsewhere in its unit, an edited
//! paragraph whose source changed is a `stale_edit` the editor decides, and `status --check`
//! answers "is every paragraph's translation current?" with no model call.

use crate::support;

use booktr::agents::Agent;
use support::fake_llm::FakeServer;
use support::{TestCampaign, assert_code, json_summary};

const KEY: &str = "sk-booktr-living-KEY-7d1e";

/// Six paragraphs under a heading: one unit at the default `max_unit_chars`. Each says
/// something else, so that no repeated phrase becomes a glossary candidate whose entry would
/// touch every paragraph.
fn paragraphs() -> Vec<String> {
    [
        "An agent plans before it acts: it writes down the goal and the first step.",
        "Then it calls a tool and waits for the answer, which may take a few seconds.",
        "The answer goes into the context window, where the model can read it later.",
        "When the result looks wrong, the loop retries once with a shorter prompt.",
        "Every call is logged, so that a reviewer can replay the whole session.",
        "Finally the agent reports what it did and which files it changed.",
    ]
    .map(String::from)
    .to_vec()
}

fn chapter(paras: &[String]) -> String {
    format!("# The agent loop\n\n{}\n", paras.join("\n\n"))
}

fn campaign() -> TestCampaign {
    let c = TestCampaign::with_chapters(
        "lb",
        &["a.md"],
        "[provider]\nkind = \"openai\"\nmodel = \"m\"\n",
    );
    c.write("a.md", &chapter(&paragraphs()));
    c
}

fn run(c: &TestCampaign, fake: &FakeServer) -> std::process::Output {
    c.cmd("run", &["--base-url", fake.base_url.as_str(), "--json"])
        .env("OPENAI_API_KEY", KEY)
        .output()
        .unwrap()
}

/// The source texts of the first-translation requests the fake received.
fn sent(fake: &FakeServer) -> Vec<String> {
    fake.requests()
        .iter()
        .filter(|r| r.agent == Agent::Translation && !r.is_revision())
        .map(|r| r.unit_text().unwrap().to_string())
        .collect()
}

/// The top-level blocks of an output chapter, trimmed.
fn blocks(text: &str) -> Vec<String> {
    text.split("\n\n")
        .map(|b| b.trim().to_string())
        .filter(|b| !b.is_empty())
        .collect()
}

const OUT: &str = "lb/out/a.md";

#[test]
fn a_one_paragraph_edit_resends_that_paragraph_and_changes_one_block_of_output() {
    let fake = FakeServer::start();
    let c = campaign();
    assert_code(&run(&c, &fake), 0);
    let before = blocks(&c.read(OUT));
    assert_eq!(before.len(), 7, "{before:?}");
    fake.clear();

    let mut paras = paragraphs();
    paras[3] = "When the result looks wrong, the loop now asks the user before it retries.".into();
    c.write("a.md", &chapter(&paras));
    let out = run(&c, &fake);
    assert_code(&out, 0);
    let texts = sent(&fake);
    assert_eq!(texts.len(), 1, "one request: {texts:?}");
    assert_eq!(
        texts[0].trim(),
        paras[3],
        "the source re-sent is the edited paragraph alone"
    );
    let req = &fake.requests()[0];
    // The end of the paragraph before it goes along as read-only context (at most a quarter
    // of the text sent, `ContextShares::neighbour_chars`).
    assert!(
        req.all_text().contains("read it later."),
        "{}",
        req.all_text()
    );
    let after = blocks(&c.read(OUT));
    assert_eq!(after.len(), before.len());
    let changed: Vec<usize> = (0..after.len())
        .filter(|&i| after[i] != before[i])
        .collect();
    assert_eq!(
        changed,
        [4],
        "only the edited paragraph's translation changed"
    );
    let s = json_summary(&out);
    assert_eq!(s["status"], "complete", "{s}");
}

#[test]
fn a_hand_fix_survives_a_source_edit_elsewhere_in_its_unit() {
    let fake = FakeServer::start();
    let c = campaign();
    assert_code(&run(&c, &fake), 0);
    // The editor fixes paragraph 1 of the output.
    let out_text = c.read(OUT);
    let b = blocks(&out_text);
    let fix = "编辑修订的第一段：代理先规划，再调用工具。";
    c.write(OUT, &out_text.replacen(&b[1], fix, 1));
    let v = c.cmd("validate", &[]).output().unwrap();
    assert!(
        String::from_utf8_lossy(&v.stderr).contains("edited by hand"),
        "{}",
        String::from_utf8_lossy(&v.stderr)
    );
    fake.clear();

    // The author changes paragraph 4.
    let mut paras = paragraphs();
    paras[3] = "When the result looks wrong, the loop now asks the user before it retries.".into();
    c.write("a.md", &chapter(&paras));
    let out = run(&c, &fake);
    assert_code(&out, 0);
    let after = c.read(OUT);
    assert!(after.contains(fix), "the hand fix is kept: {after}");
    let texts = sent(&fake);
    assert_eq!(texts.len(), 1, "{texts:?}");
    assert_eq!(texts[0].trim(), paras[3]);
    let after_blocks = blocks(&after);
    assert_eq!(after_blocks[1], fix);
    assert_ne!(
        after_blocks[4], b[4],
        "the edited paragraph is translated anew"
    );
    // And it stays through a later run with no change.
    fake.clear();
    assert_code(&run(&c, &fake), 0);
    assert!(c.read(OUT).contains(fix));
    assert_eq!(fake.requests().len(), 0);
}

#[test]
fn a_stale_edit_is_reported_and_resolved_by_the_editors_choice() {
    for keep in ["editor", "model"] {
        let fake = FakeServer::start();
        let c = campaign();
        assert_code(&run(&c, &fake), 0);
        let out_text = c.read(OUT);
        let b = blocks(&out_text);
        let fix = "编辑修订的第二段。";
        c.write(OUT, &out_text.replacen(&b[2], fix, 1));
        assert_code(&c.cmd("validate", &[]).output().unwrap(), 0);
        fake.clear();

        // The author rewrites the very paragraph the editor fixed.
        let mut paras = paragraphs();
        paras[1] = "Then it calls a tool and streams the answer as it arrives.".into();
        c.write("a.md", &chapter(&paras));
        let out = run(&c, &fake);
        assert_code(&out, 1);
        let s = json_summary(&out);
        assert_eq!(s["status"], "needs_review", "{s}");
        // The model saw the new paragraph, with the editor's text as its reference.
        let reqs = fake.requests();
        let tr: Vec<_> = reqs
            .iter()
            .filter(|r| r.agent == Agent::Translation)
            .collect();
        assert_eq!(tr.len(), 1);
        assert_eq!(tr[0].unit_text().unwrap().trim(), paras[1]);
        assert!(
            tr[0].all_text().contains(fix),
            "the editor's text is the reference"
        );
        // The editor's text stays in the output, and the report says why.
        assert!(c.read(OUT).contains(fix));
        let report = c.read("lb/validation/report.json");
        assert!(report.contains("\"stale_edit\""), "{report}");
        assert!(report.contains("waits for the answer"), "old source shown");
        let md = c.read("lb/validation/report.md");
        assert!(md.contains("**Stale edits**") && md.contains(fix), "{md}");
        let st = c.cmd("status", &[]).output().unwrap();
        assert!(
            String::from_utf8_lossy(&st.stdout).contains("stale")
                || String::from_utf8_lossy(&st.stderr).contains("stale"),
            "status names the stale edit"
        );

        let a = c
            .cmd("approve", &["--stale", "a-000", "--keep", keep])
            .output()
            .unwrap();
        assert_code(&a, 0);
        fake.clear();
        let out = run(&c, &fake);
        assert_code(&out, 0);
        assert_eq!(fake.requests().len(), 0, "deciding pays for nothing");
        let text = c.read(OUT);
        if keep == "editor" {
            assert!(text.contains(fix), "{text}");
        } else {
            assert!(!text.contains(fix), "{text}");
            assert_eq!(blocks(&text).len(), 7);
        }
    }
}

#[test]
fn status_check_exits_1_until_every_paragraph_has_a_current_translation() {
    let fake = FakeServer::start();
    let c = campaign();
    let before = c.cmd("status", &["--check"]).output().unwrap();
    assert_code(&before, 1);
    let json = c.cmd("status", &["--check", "--json"]).output().unwrap();
    assert_code(&json, 1);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["current"], false, "{v}");
    assert_code(&run(&c, &fake), 0);
    let after = c.cmd("status", &["--check"]).output().unwrap();
    assert_code(&after, 0);
    // A source edit makes one paragraph's translation out of date: no model call, no key.
    let mut paras = paragraphs();
    paras[5] = "Finally the agent writes a short summary for the user.".into();
    c.write("a.md", &chapter(&paras));
    fake.clear();
    let stale = c.cmd("status", &["--check"]).output().unwrap();
    assert_code(&stale, 1);
    assert!(
        String::from_utf8_lossy(&stale.stdout).contains("a-000"),
        "{}",
        String::from_utf8_lossy(&stale.stdout)
    );
    assert_eq!(fake.requests().len(), 0);
}

/// Rust by Example's human ja.po (mdbook-i18n-helpers) seeds a campaign over the 76 chapters
/// unchanged since its POT date: every block whose messages all have a translated, non-fuzzy
/// entry is filled from the catalog and never sent; only the rest reaches the model.
/// Skipped when the shared sites are absent, unless `BOOKTR_REQUIRE_CORPUS=1`.
#[booktr_test_needs::needs(sites)]
#[test]
fn seeding_from_a_real_mdbook_po_reuses_every_matching_block_without_a_model_call() {
    use booktr::interchange::{po, xgettext};
    let Some(site) = support::rust_by_example() else {
        return;
    };
    let chapters: Vec<&str> = include_str!("../fixtures/gettext/rust-by-example-ja-unchanged.txt")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .collect();
    // The blocks whose every message has a translated, non-fuzzy entry in ja.po: the ones
    // seeding must fill.
    let catalog: std::collections::HashMap<String, (String, bool)> = po::read(
        &std::fs::read_to_string(site.join("po/ja.po")).unwrap(),
        "ja.po",
    )
    .unwrap()
    .into_iter()
    .map(|m| (m.msgid, (m.msgstr.clone(), m.fuzzy || m.msgstr.is_empty())))
    .collect();
    let mut expected: Vec<String> = Vec::new();
    let mut prose_blocks = 0usize;
    for rel in &chapters {
        let ch = booktr::book::chapter::Chapter::load(&site, rel).unwrap();
        let links = xgettext::Links::of(&ch.text);
        for u in ch.segment(booktr::book::segment::DEFAULT_MAX_UNIT_CHARS) {
            if !u.kind.needs_translation() {
                continue;
            }
            for b in booktr::campaign::core::blocks::cores(u.text(&ch.text)) {
                if !booktr::campaign::core::pieces::needs_model(b) {
                    continue;
                }
                prose_blocks += 1;
                let msgs = xgettext::extract(b, &links);
                if !msgs.is_empty()
                    && msgs
                        .iter()
                        .all(|m| catalog.get(&m.msgid).is_some_and(|(_, fuzzy)| !fuzzy))
                {
                    expected.push(b.to_string());
                }
            }
        }
    }
    assert!(expected.len() > 300, "{} of {prose_blocks}", expected.len());

    // The whole book (read in place), seeded from its ja.po.
    let c = TestCampaign::new(&format!(
        "name = \"rbe\"\nsource_lang = \"en\"\ntarget_lang = \"ja\"\nbook = {:?}\nseed = [{:?}]\n[provider]\nkind = \"openai\"\nmodel = \"m\"\n",
        site.join("src/SUMMARY.md").display().to_string(),
        site.join("po/ja.po").display().to_string()
    ));
    let fake = FakeServer::start_for("ja");
    let out = c
        .cmd("run", &["--base-url", fake.base_url.as_str(), "--json"])
        .env("OPENAI_API_KEY", KEY)
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sent: String = fake
        .requests()
        .iter()
        .filter(|r| r.agent == Agent::Translation)
        .map(|r| r.unit_text().unwrap_or("").to_string())
        .collect::<Vec<_>>()
        .join("\n");
    let resent: Vec<&String> = expected
        .iter()
        .filter(|b| sent.contains(b.as_str()))
        .collect();
    let reused = expected.len() - resent.len();
    eprintln!(
        "Rust by Example ja.po seed: {reused} of {} fully translated blocks reused without a call ({:.1}%), of {prose_blocks} prose blocks; {} translation request(s) for the rest",
        expected.len(),
        100.0 * reused as f64 / expected.len() as f64,
        fake.count(Agent::Translation)
    );
    assert!(
        reused * 100 >= expected.len() * 95,
        "{reused} of {}: first resent {:?}",
        expected.len(),
        resent.first()
    );
    // The output holds the catalog's Japanese for a seeded block.
    let s = json_summary(&out);
    assert!(s["units"]["translated"].as_u64().unwrap() > 0, "{s}");
}

/// The corpus's Chinese edition, given as a translated folder, seeds an en → zh campaign over
/// chapters 1–2: the blocks the aligner pairs ([`booktr::interchange::align`]) are filled
/// from it and never sent, the rest are translated, and the campaign lists what it could not
/// align. Skipped without the corpus, unless `BOOKTR_REQUIRE_CORPUS=1`.
#[test]
fn seeding_from_a_translated_folder_fills_the_aligned_blocks_and_sends_the_rest() {
    let Some(corpus) = support::corpus_dir() else {
        return;
    };
    let en = corpus.join("en");
    let c = TestCampaign::new(&format!(
        "name = \"fs\"\nsource_lang = \"en\"\ntarget_lang = \"zh\"\nchapters = [{:?}, {:?}]\nseed = [{:?}]\n[provider]\nkind = \"openai\"\nmodel = \"m\"\n",
        en.join("chapter01.md").display().to_string(),
        en.join("chapter02.md").display().to_string(),
        corpus.join("zh").display().to_string()
    ));
    let fake = FakeServer::start();
    let out = c
        .cmd("run", &["--base-url", fake.base_url.as_str(), "--json"])
        .env("OPENAI_API_KEY", KEY)
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let seeded: Vec<(String, String)> = {
        let zh = |n: &str| std::fs::read_to_string(corpus.join("zh").join(n)).unwrap();
        let en = |n: &str| std::fs::read_to_string(en.join(n)).unwrap();
        ["chapter01.md", "chapter02.md"]
            .iter()
            .flat_map(|n| {
                let (s, t) = (en(n), zh(n));
                let a = booktr::interchange::align::align_blocks(&s, &t);
                a.pairs
                    .iter()
                    .map(|p| {
                        (
                            s[p.source.clone()].trim().to_string(),
                            t[p.target.clone()].trim().to_string(),
                        )
                    })
                    .collect::<Vec<_>>()
            })
            .collect()
    };
    let sent: String = fake
        .requests()
        .iter()
        .filter(|r| r.agent == Agent::Translation)
        .map(|r| r.unit_text().unwrap_or("").to_string())
        .collect::<Vec<_>>()
        .join("\n");
    let prose: Vec<&(String, String)> = seeded
        .iter()
        .filter(|(s, _)| booktr::campaign::core::pieces::needs_model(s) && s.len() > 40)
        .collect();
    let resent = prose
        .iter()
        .filter(|(s, _)| sent.contains(s.as_str()))
        .count();
    let out1 = c.read("fs/out/chapter01.md");
    let kept = prose
        .iter()
        .filter(|(_, t)| {
            out1.contains(t.as_str()) || c.read("fs/out/chapter02.md").contains(t.as_str())
        })
        .count();
    eprintln!(
        "corpus zh folder seed: {} aligned prose blocks, {resent} sent to the model, {kept} in the output as the human text",
        prose.len()
    );
    assert!(prose.len() > 100, "{}", prose.len());
    assert_eq!(resent, 0, "an aligned block is never sent");
    assert!(kept * 100 >= prose.len() * 95, "{kept} of {}", prose.len());
}

#[test]
fn a_hand_fix_survives_a_source_edit_made_before_it_was_recorded() {
    let fake = FakeServer::start();
    let c = campaign();
    assert_code(&run(&c, &fake), 0);
    let out_text = c.read(OUT);
    let b = blocks(&out_text);
    let fix = "编辑修订的第一段：代理先规划。";
    c.write(OUT, &out_text.replacen(&b[1], fix, 1));
    // No validate: the author changes paragraph 4 before booktr sees the hand fix.
    let mut paras = paragraphs();
    paras[3] = "When the result looks wrong, the loop now asks the user before it retries.".into();
    c.write("a.md", &chapter(&paras));
    fake.clear();
    let out = run(&c, &fake);
    assert_code(&out, 0);
    let after = c.read(OUT);
    assert!(after.contains(fix), "{after}");
    let texts = sent(&fake);
    assert_eq!(texts.len(), 1, "{texts:?}");
    assert_eq!(texts[0].trim(), paras[3]);
}

#[test]
fn a_state_without_block_records_is_migrated_on_its_next_run() {
    let fake = FakeServer::start();
    let c = campaign();
    assert_code(&run(&c, &fake), 0);
    // Make the state look like one written before block memory: no block records.
    let state = std::fs::read_dir(c.path("lb/state"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let journal = state.join("journal.jsonl");
    let kept: Vec<String> = std::fs::read_to_string(&journal)
        .unwrap()
        .lines()
        .filter(|l| !l.contains("\"blocks_recorded\""))
        .map(String::from)
        .collect();
    std::fs::write(&journal, kept.join("\n") + "\n").unwrap();
    std::fs::remove_dir_all(state.join("results/blocks")).unwrap();
    // The next run (nothing to translate) records the blocks; then an edit re-sends one block.
    fake.clear();
    assert_code(&run(&c, &fake), 0);
    assert_eq!(fake.requests().len(), 0);
    assert!(
        std::fs::read_to_string(&journal)
            .unwrap()
            .contains("\"blocks_recorded\"")
    );
    let mut paras = paragraphs();
    paras[2] = "The answer goes into a scratch file that the model reads later.".into();
    c.write("a.md", &chapter(&paras));
    assert_code(&run(&c, &fake), 0);
    let texts = sent(&fake);
    assert_eq!(texts.len(), 1, "{texts:?}");
    assert_eq!(texts[0].trim(), paras[2]);
}

/// A TMX seed that holds two of six paragraphs: `plan` counts only the other four as paid,
/// names the seed, and the run sends only them.
#[test]
fn plan_shows_what_remains_to_pay_for_after_seeding() {
    let c = campaign();
    let paras = paragraphs();
    let tmx = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<tmx version=\"1.4\"><header srclang=\"en\" datatype=\"plaintext\" segtype=\"block\" adminlang=\"en\" creationtool=\"t\" creationtoolversion=\"1\" o-tmf=\"t\"/><body>\n<tu tuid=\"1\"><tuv xml:lang=\"en\"><seg>{}</seg></tuv><tuv xml:lang=\"zh\"><seg>代理先规划再行动。</seg></tuv></tu>\n<tu tuid=\"2\"><tuv xml:lang=\"en\"><seg>{}</seg></tuv><tuv xml:lang=\"zh\"><seg>然后它调用工具并等待答复。</seg></tuv></tu>\n</body></tmx>\n",
        paras[0], paras[1]
    );
    c.write("old.tmx", &tmx);
    let remaining = |c: &TestCampaign| -> u64 {
        let out = c
            .cmd("plan", &["--json", "--provider", "openai", "--model", "m"])
            .output()
            .unwrap();
        assert_code(&out, 0);
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["estimate"]["remaining"]["translation"]["prompt_tokens"]
            .as_u64()
            .unwrap_or_else(|| panic!("{v}"))
    };
    let whole = remaining(&c);
    let body = std::fs::read_to_string(&c.file).unwrap();
    std::fs::write(
        &c.file,
        body.replace("[provider]", "seed = [\"old.tmx\"]\n[provider]"),
    )
    .unwrap();
    let seeded = remaining(&c);
    assert!(seeded < whole, "{seeded} < {whole}");
    let text = c
        .cmd("plan", &["--provider", "openai", "--model", "m"])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&text.stdout);
    assert!(
        out.contains("seed old.tmx (tmx): 2 distinct block(s)"),
        "{out}"
    );
    let fake = FakeServer::start();
    let run_out = run(&c, &fake);
    assert!(matches!(run_out.status.code(), Some(0 | 1)));
    let texts = sent(&fake);
    assert!(
        texts
            .iter()
            .all(|t| !t.contains(&paras[0]) && !t.contains(&paras[1])),
        "{texts:?}"
    );
    assert!(c.read(OUT).contains("代理先规划再行动。"));
}

#[test]
fn taking_the_models_text_for_a_stale_edit_keeps_the_units_other_hand_fixes() {
    let fake = FakeServer::start();
    let c = campaign();
    assert_code(&run(&c, &fake), 0);
    let out_text = c.read(OUT);
    let b = blocks(&out_text);
    let (fix1, fix2) = ("编辑修订的第一段。", "编辑修订的第二段。");
    c.write(
        OUT,
        &out_text.replacen(&b[1], fix1, 1).replacen(&b[2], fix2, 1),
    );
    assert_code(&c.cmd("validate", &[]).output().unwrap(), 0);
    let mut paras = paragraphs();
    paras[1] = "Then it calls a tool and streams the answer as it arrives.".into();
    c.write("a.md", &chapter(&paras));
    assert_code(&run(&c, &fake), 1);
    let st = c.cmd("status", &["--check"]).output().unwrap();
    assert_code(&st, 1);
    let st = String::from_utf8_lossy(&st.stdout).to_string();
    assert!(
        st.contains("--stale a-000 --keep editor") && st.contains("campaign.toml"),
        "the check names the whole command: {st}"
    );
    let a = c
        .cmd("approve", &["--stale", "a-000", "--keep", "model"])
        .output()
        .unwrap();
    assert_code(&a, 0);
    // The decision is in the output at once, and the next run keeps it.
    let decided = c.read(OUT);
    assert!(
        decided.contains(fix1) && !decided.contains(fix2),
        "{decided}"
    );
    fake.clear();
    let out = run(&c, &fake);
    assert_code(&out, 0);
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("edited by hand"),
        "no new hand edit: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(fake.requests().len(), 0);
    let text = c.read(OUT);
    assert!(text.contains(fix1) && !text.contains(fix2), "{text}");
    let report = c.read("lb/validation/report.json");
    assert!(
        !report.contains("\"stale_edit\""),
        "decided: no finding left"
    );
    let check = c.cmd("status", &["--check", "--json"]).output().unwrap();
    assert_code(&check, 0);
    let v: serde_json::Value = serde_json::from_slice(&check.stdout).unwrap();
    assert_eq!(v["current"], true, "{v}");
}

/// An XLIFF 2.0 file from a CAT tool seeds the blocks whose source it holds.
#[test]
fn an_xliff_seed_fills_the_paragraphs_it_holds() {
    let c = campaign();
    let paras = paragraphs();
    let xliff = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<xliff xmlns=\"urn:oasis:names:tc:xliff:document:2.0\" version=\"2.0\" srcLang=\"en\" trgLang=\"zh\">\n<file id=\"f1\">\n<unit id=\"u1\"><segment><source>{}</source><target>每次调用都会记录，以便审阅者重放整个会话。</target></segment></unit>\n<unit id=\"u2\"><segment><source>{}</source><target>最后代理报告它做了什么、改了哪些文件。</target></segment></unit>\n</file>\n</xliff>\n",
        paras[4], paras[5]
    );
    c.write("cat.xlf", &xliff);
    let body = std::fs::read_to_string(&c.file).unwrap();
    std::fs::write(
        &c.file,
        body.replace("[provider]", "seed = [\"cat.xlf\"]\n[provider]"),
    )
    .unwrap();
    let fake = FakeServer::start();
    let out = run(&c, &fake);
    assert!(matches!(out.status.code(), Some(0 | 1)));
    let texts = sent(&fake);
    assert!(!texts.is_empty());
    assert!(
        texts
            .iter()
            .all(|t| !t.contains(&paras[4]) && !t.contains(&paras[5])),
        "{texts:?}"
    );
    let text = c.read(OUT);
    assert!(
        text.contains("每次调用都会记录，以便审阅者重放整个会话。"),
        "{text}"
    );
    assert!(text.contains("最后代理报告它做了什么、改了哪些文件。"));
}
