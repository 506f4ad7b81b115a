//! Interchange with CAT tools through the `booktr` binary: glossaries in every format (and
//! malformed ones), termbase export round trips, XLIFF export → edit → import → run, TMX as a
//! translation memory that makes a second campaign free (proved by the fake server's request
//! count), bilingual output, and the exports read by an external parser (translate-toolkit).

use crate::support;

use std::collections::BTreeSet;

use booktr::agents::Agent;
use booktr::book::segment::{BlockKind, top_level_blocks};
use booktr::interchange::{bilingual, delimited, tbx, tmx, xliff};
use booktr::lang::Lang;
use support::fake_llm::FakeServer;
use support::{TestCampaign, assert_code, corpus_dir, json_summary};

const KEY: &str = "sk-booktr-interchange-KEY-9d41";

/// A chapter with headings, prose, a list, links, inline code and code blocks.
fn chapter(tag: &str, sections: usize) -> String {
    let mut s = format!("# Chapter {tag}\n\n");
    for i in 0..sections {
        s.push_str(&format!(
            "## Section {tag}.{i}\n\nThe Agent {i} reads its context window, calls `tool_{i}()` and follows [the guide](https://example.org/{tag}/{i}) before it plans the next step.\n\n- first point about memory {i}\n- second point about tools {i}\n\n```python\ndef step_{i}():\n    return {i} * 2\n```\n\nA closing paragraph {i} explains why the loop stops when the task is done.\n\n"
        ));
    }
    s
}

fn fences(text: &str) -> Vec<(String, String)> {
    booktr::qa::Doc::parse(text)
        .fences
        .into_iter()
        .map(|f| (f.info, f.body))
        .collect()
}

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

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

// ---------------------------------------------------------------------------------------------
// Glossaries

const TBX_V3: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<tbx type="TBX-Core" style="dca" xml:lang="en" xmlns="urn:iso:std:iso:30042:ed-2">
<tbxHeader><fileDesc><sourceDesc><p>test</p></sourceDesc></fileDesc></tbxHeader>
<text><body>
<conceptEntry id="c1">
  <langSec xml:lang="en"><termSec><term>context window</term></termSec></langSec>
  <langSec xml:lang="zh-Hans"><termSec><term>上下文窗口</term></termSec>
    <termSec><term>语境窗口</term><termNote type="administrativeStatus">deprecatedTerm-admn-sts</termNote></termSec></langSec>
</conceptEntry>
</body></text>
</tbx>
"#;

const TBX_V2: &str = r#"<?xml version="1.0"?>
<martif type="TBX-Basic" xml:lang="en-US"><martifHeader><fileDesc><sourceDesc><p>x</p></sourceDesc></fileDesc></martifHeader>
<text><body>
<termEntry id="t1"><note>the loop</note>
  <langSet xml:lang="en-US"><tig><term>task</term></tig></langSet>
  <langSet xml:lang="zh-CN"><tig><term>任务</term></tig></langSet>
</termEntry>
</body></text></martif>
"#;

#[test]
fn every_glossary_format_feeds_the_campaign_termbase() {
    let c = TestCampaign::with_chapters(
        "g",
        &["ch.md"],
        "max_unit_chars = 600\nglossaries = [\"house.csv\", \"deepl.csv\", \"terms.tsv\", \"v3.tbx\", \"v2.xml\"]\n",
    );
    c.write("ch.md", &chapter("1", 2));
    c.write(
        "house.csv",
        "source,target,note,forbidden\nAgent,智能体,core,代理\n",
    );
    c.write("deepl.csv", "tool,工具,en,zh\ntool,Werkzeug,en,de\n");
    c.write("terms.tsv", "en\tzh-CN\nguide\t指南\n");
    c.write("v3.tbx", TBX_V3);
    c.write("v2.xml", TBX_V2);
    assert_code(&c.cmd("run", &[]).output().unwrap(), 0);
    let out = c
        .cmd("export", &["--format", "csv", "--out", "tb.csv"])
        .current_dir(c.dir.path())
        .output()
        .unwrap();
    assert_code(&out, 0);
    let (en, zh) = (Lang::parse("en"), Lang::parse("zh"));
    let tb = delimited::read(c.read("tb.csv").as_bytes(), "tb.csv", b',', &en, &zh).unwrap();
    let house: Vec<(&str, &str)> = tb
        .iter()
        .filter(|e| e.origin == booktr::termbase::Origin::HouseStyle)
        .map(|e| (e.source.as_str(), e.target.as_str()))
        .collect();
    assert_eq!(
        house,
        [
            ("Agent", "智能体"),
            ("tool", "工具"),
            ("guide", "指南"),
            ("context window", "上下文窗口"),
            ("task", "任务")
        ]
    );
    let agent = tb.iter().find(|e| e.source == "Agent").unwrap();
    assert_eq!(agent.forbidden, ["代理"]);
    let cw = tb.iter().find(|e| e.source == "context window").unwrap();
    assert_eq!(
        cw.forbidden,
        ["语境窗口"],
        "deprecated TBX terms are forbidden renderings"
    );
    let task = tb.iter().find(|e| e.source == "task").unwrap();
    assert_eq!(task.note, "the loop");
}

#[test]
fn malformed_glossaries_are_refused_naming_file_and_line() {
    let cases: [(&str, &str, &str); 6] = [
        (
            "bad.csv",
            "source,target\nAgent,智能体\ntool,\n",
            "bad.csv, line 3",
        ),
        ("bad.tsv", "source\ttarget\nAgent\t\n", "bad.tsv, line 2"),
        ("nohead.csv", "source,note\nAgent,x\n", "nohead.csv, line 1"),
        (
            "bad.tbx",
            "<martif>\n<text><body>\n<termEntry>\n</langSet>\n</body></text></martif>\n",
            "bad.tbx, line 4",
        ),
        (
            "nolang.tbx",
            "<tbx>\n<text><body><conceptEntry>\n<langSec><termSec><term>x</term></termSec></langSec>\n</conceptEntry></body></text></tbx>\n",
            "nolang.tbx, line 3",
        ),
        (
            "latin1.csv",
            "source,target\nCaf\u{e9},咖啡\n",
            "latin1.csv, line 2",
        ),
    ];
    for (name, content, expected) in cases {
        let c =
            TestCampaign::with_chapters("m", &["ch.md"], &format!("glossaries = [\"{name}\"]\n"));
        c.write("ch.md", "# A\n\nText.\n");
        if name == "latin1.csv" {
            // Not UTF-8: é as a single Latin-1 byte.
            std::fs::write(
                c.path(name),
                content.replace('\u{e9}', "\u{1}").replace('\u{1}', ""),
            )
            .unwrap();
            let mut bytes = b"source,target\nCaf".to_vec();
            bytes.push(0xE9);
            bytes.extend_from_slice(",咖啡\n".as_bytes());
            std::fs::write(c.path(name), bytes).unwrap();
        } else {
            c.write(name, content);
        }
        let out = c.cmd("run", &[]).output().unwrap();
        assert_code(&out, 2);
        assert!(
            stderr(&out).contains(expected),
            "{name}: expected `{expected}` in:\n{}",
            stderr(&out)
        );
    }
}

#[test]
fn termbase_exports_round_trip_through_tbx_and_csv() {
    let c = TestCampaign::with_chapters(
        "t",
        &["ch.md"],
        "max_unit_chars = 600\nglossaries = [\"house.csv\"]\n",
    );
    c.write("ch.md", &chapter("1", 3));
    c.write(
        "house.csv",
        "source,target,note,forbidden\nAgent,智能体,\"core, \"\"quoted\"\"\",代理\n=cmd,@公式,-note,+x\n",
    );
    assert_code(&c.cmd("run", &[]).output().unwrap(), 0);
    let (en, zh) = (Lang::parse("en"), Lang::parse("zh"));
    for fmt in ["tbx", "csv", "tsv"] {
        let out = c
            .cmd("export", &["--format", fmt, "--out", &format!("tb.{fmt}")])
            .current_dir(c.dir.path())
            .output()
            .unwrap();
        assert_code(&out, 0);
        let text = c.read(&format!("tb.{fmt}"));
        let entries = match fmt {
            "tbx" => tbx::read(&text, "tb.tbx", &en, &zh).unwrap(),
            "csv" => delimited::read(text.as_bytes(), "tb.csv", b',', &en, &zh).unwrap(),
            _ => delimited::read(text.as_bytes(), "tb.tsv", b'\t', &en, &zh).unwrap(),
        };
        assert!(
            entries
                .iter()
                .any(|e| e.source == "=cmd" && e.target == "@公式")
        );
        assert!(
            entries.len() >= 2,
            "{fmt}: the termbase has entries: {entries:?}"
        );
        // Each entry keeps its origin: the house style file's and the Glossary agent's.
        use booktr::termbase::Origin;
        let agent = entries.iter().find(|e| e.source == "Agent").unwrap();
        assert_eq!(
            (agent.origin, agent.forbidden.as_slice()),
            (Origin::HouseStyle, ["代理".to_string()].as_slice()),
            "{fmt}"
        );
        assert!(
            entries.iter().any(|e| e.origin == Origin::Agent),
            "{fmt}: agent entries are exported with their origin: {entries:?}"
        );
        // The campaign is a rehearsal (pseudo provider): its exports carry the mark.
        use booktr::interchange::{Format, rehearsal};
        let format = fmt.parse::<Format>().unwrap();
        assert!(rehearsal::is_marked(format, text.as_bytes()), "{fmt}");
        let again = match fmt {
            "tbx" => tbx::write_marked(&entries, &en, &zh, "booktr termbase of campaign t", true),
            "csv" => String::from_utf8(delimited::write_marked(&entries, b',', true)).unwrap(),
            _ => String::from_utf8(delimited::write_marked(&entries, b'\t', true)).unwrap(),
        };
        assert_eq!(again, text, "{fmt}: export → import → export is stable");
        if fmt != "tbx" {
            // No cell starts a formula.
            let delim = if fmt == "csv" { b',' } else { b'\t' };
            let mut r = csv::ReaderBuilder::new()
                .has_headers(false)
                .delimiter(delim)
                .from_reader(text.as_bytes());
            for rec in r.records() {
                for cell in rec.unwrap().iter() {
                    assert!(
                        !cell.starts_with(['=', '+', '-', '@', '\t', '\r']),
                        "{fmt}: formula cell {cell:?}"
                    );
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// XLIFF

#[test]
fn edited_xliff_changes_only_the_edited_units_and_a_later_run_keeps_them() {
    let c = TestCampaign::with_chapters("x", &["a.md", "b.md"], "max_unit_chars = 400\n");
    c.write("a.md", &chapter("A", 3));
    c.write("b.md", &chapter("B", 2));
    assert_code(&c.cmd("run", &[]).output().unwrap(), 0);
    let before_a = c.read("x/out/a.md");
    let before_b = c.read("x/out/b.md");
    let out = c.cmd("export", &["--format", "xliff"]).output().unwrap();
    assert_code(&out, 0);
    let path = "x/export/x.xlf";
    let doc = c.read(path);
    let units = xliff::read(&doc, path).unwrap();
    assert_eq!(doc.matches("<file ").count(), 2, "one <file> per chapter");
    let campaign_units: usize = ["a.md", "b.md"]
        .iter()
        .map(|f| booktr::book::segment(&f[..1], &c.read(f), 400).len())
        .sum();
    assert_eq!(
        units.len(),
        campaign_units,
        "one <unit> per translation unit"
    );
    assert!(
        doc.contains("<ph id=") && doc.contains("<pc id="),
        "inline code protected"
    );
    assert!(!doc.contains("<source>```"), "code blocks are placeholders");

    // Export → import of the untouched file changes nothing, and exports the same bytes.
    let out = c
        .cmd("import", &[path, "--json"])
        .current_dir(c.dir.path())
        .output()
        .unwrap();
    assert_code(&out, 0);
    let s = json_summary(&out);
    assert_eq!(s["edited"].as_array().unwrap().len(), 0, "{s}");
    assert_eq!(c.read("x/out/a.md"), before_a);
    assert_code(
        &c.cmd("export", &["--format", "xliff"]).output().unwrap(),
        0,
    );
    assert_eq!(
        c.read(path),
        doc,
        "XLIFF export → import → export is stable"
    );

    // An editor changes two targets (one in each chapter) in the CAT tool.
    let prose: Vec<&xliff::ReadUnit> = units
        .iter()
        .filter(|u| {
            u.translate
                && u.target
                    .as_deref()
                    .is_some_and(|t| t.contains("```") || t.len() > 40)
        })
        .collect();
    let a = prose.iter().find(|u| u.file == "a").unwrap();
    let b = prose.iter().find(|u| u.file == "b").unwrap();
    let new_a = "编辑改写的第一段。\n\n";
    let new_b = "编辑改写的另一段（含 `tool_0()`）。\n\n";
    let mut edited = doc.clone();
    for (u, new) in [(a, new_a), (b, new_b)] {
        let start = edited.find(&format!("<unit id=\"{}\"", u.id)).unwrap();
        let new_xml = new.replace("`tool_0()`", "<ph id=\"99\" dataRef=\"dx\"/>");
        edited = set_unit_target(&edited, start, &new_xml);
        if new.contains("tool_0") {
            // The editor's CAT tool wrote the code as a placeholder of its own.
            let od = edited[start..].find("<originalData>").unwrap() + start;
            edited.insert_str(
                od + "<originalData>".len(),
                "<data id=\"dx\">`tool_0()`</data>",
            );
        }
    }
    c.write("edited.xlf", &edited);
    let out = c
        .cmd("import", &["edited.xlf", "--json"])
        .current_dir(c.dir.path())
        .output()
        .unwrap();
    let s = json_summary(&out);
    // Validated again: the edit of a dropped the unit's code block, link and terms, so the
    // import reports error findings on it (exit 1) and names them.
    assert_code(&out, 1);
    assert!(s["errors"].as_u64().unwrap() > 0, "{s}");
    assert!(
        stderr(&out).contains(&format!("error: {}: code_blocks", a.id)),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        s["edited"],
        serde_json::json!([a.id, b.id]),
        "exactly the edited units: {s}\n{}",
        stderr(&out)
    );
    let edits: Vec<_> = journal(&c, "x")
        .into_iter()
        .filter(|e| e["event"] == "human_edit")
        .collect();
    assert_eq!(edits.len(), 2);
    let after_a = c.read("x/out/a.md");
    let after_b = c.read("x/out/b.md");
    assert!(after_a.contains("编辑改写的第一段。"));
    assert!(after_b.contains("编辑改写的另一段（含 `tool_0()`）。"));
    // Only the edited unit changed in each chapter.
    let old_a = a.target.as_deref().unwrap();
    assert_eq!(
        after_a,
        before_a.replacen(old_a.trim_end(), new_a.trim_end(), 1)
    );
    let old_b = b.target.as_deref().unwrap();
    assert_eq!(
        after_b,
        before_b.replacen(old_b.trim_end(), new_b.trim_end(), 1)
    );
    // QA ran on the edits: the report marks them edited.
    let report: serde_json::Value =
        serde_json::from_str(&c.read("x/validation/report.json")).unwrap();
    let edited_ids: BTreeSet<&str> = report["units"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|u| u["outcome"] == "edited")
        .map(|u| u["id"].as_str().unwrap())
        .collect();
    assert_eq!(edited_ids, BTreeSet::from([a.id.as_str(), b.id.as_str()]));

    // A later run keeps them, and records nothing new; the edit's error findings remain, so
    // it exits 1 like the import did.
    let out = c.cmd("run", &["--json"]).output().unwrap();
    assert_code(&out, 1);
    assert_eq!(c.read("x/out/a.md"), after_a);
    assert_eq!(c.read("x/out/b.md"), after_b);
    assert_eq!(
        journal(&c, "x")
            .iter()
            .filter(|e| e["event"] == "human_edit")
            .count(),
        2
    );
    // The next export carries the edits as final targets.
    assert_code(
        &c.cmd("export", &["--format", "xliff"]).output().unwrap(),
        0,
    );
    let again_doc = c.read(path);
    let again = xliff::read(&again_doc, path).unwrap();
    let ua = again.iter().find(|u| u.id == a.id).unwrap();
    assert_eq!(ua.target.as_deref(), Some(new_a));
    // The edited unit is final, and its QA findings are <note>s on it.
    let unit_a = &again_doc[again_doc.find(&format!("<unit id=\"{}\"", a.id)).unwrap()..];
    let unit_a = &unit_a[..unit_a.find("</unit>").unwrap()];
    assert!(unit_a.contains("<segment state=\"final\">"), "{unit_a}");
    assert!(
        unit_a.contains(
            "<note category=\"booktr:qa\" priority=\"1\" appliesTo=\"target\">error code_blocks:"
        ),
        "{unit_a}"
    );
}

#[test]
fn xliff_import_refuses_bad_files_and_changes_nothing() {
    let c = TestCampaign::with_chapters("r", &["a.md"], "");
    c.write("a.md", &chapter("A", 1));
    // Before any run there is nothing to attach edits to.
    c.write("x.xlf", "<xliff version=\"2.0\"><file id=\"a\"/></xliff>");
    let out = c
        .cmd("import", &["x.xlf"])
        .current_dir(c.dir.path())
        .output()
        .unwrap();
    assert_code(&out, 2);
    assert!(stderr(&out).contains("booktr run"), "{}", stderr(&out));
    assert_code(&c.cmd("run", &[]).output().unwrap(), 0);
    let before = journal(&c, "r").len();
    for (name, content, expected) in [
        // XLIFF 1.2 is imported since issue 16 (`xliff12`); another version is refused.
        (
            "future.xlf",
            "<xliff version=\"3.0\"><file/></xliff>",
            "XLIFF 2",
        ),
        (
            "torn.xlf",
            "<xliff version=\"2.0\">\n<file id=\"a\">\n<unit id=\"a-000\">\n</file>",
            "torn.xlf, line 4",
        ),
        ("g.csv", "source,target\nA,B\n", "glossaries"),
    ] {
        c.write(name, content);
        let out = c
            .cmd("import", &[name])
            .current_dir(c.dir.path())
            .output()
            .unwrap();
        assert_code(&out, 2);
        assert!(stderr(&out).contains(expected), "{name}: {}", stderr(&out));
    }
    assert_eq!(
        journal(&c, "r").len(),
        before,
        "a refused import records nothing"
    );
}

// ---------------------------------------------------------------------------------------------
// TMX

/// `doc` with the unit starting at byte `start` retargeted as an editor would in a CAT tool:
/// the first segment's target becomes `new_xml`, every other segment's and ignorable's
/// target is emptied (the unit is written in sentence segments), so the unit's target reads
/// back as `new_xml`.
fn set_unit_target(doc: &str, start: usize, new_xml: &str) -> String {
    let end = start + doc[start..].find("</unit>").unwrap();
    let unit = &doc[start..end];
    let mut out = String::new();
    let mut rest = unit;
    let mut first = true;
    while let Some(i) = [rest.find("<segment"), rest.find("<ignorable")]
        .into_iter()
        .flatten()
        .min()
    {
        let close = if rest[i..].starts_with("<segment") {
            "</segment>"
        } else {
            "</ignorable>"
        };
        let e = i + rest[i..].find(close).unwrap();
        let element = &rest[i..e];
        let body = match element.find("<target>") {
            Some(t) => element[..t].to_string(),
            None => element.to_string(),
        };
        out.push_str(&rest[..i]);
        out.push_str(&body);
        out.push_str("<target>");
        if first && close == "</segment>" {
            out.push_str(new_xml);
            first = false;
        }
        out.push_str("</target>");
        rest = &rest[e..];
    }
    out.push_str(rest);
    format!("{}{out}{}", &doc[..start], &doc[end..])
}

fn run_fake(c: &TestCampaign, fake: &FakeServer) -> std::process::Output {
    c.cmd("run", &["--base-url", &fake.base_url, "--json"])
        .env("OPENAI_API_KEY", KEY)
        .output()
        .unwrap()
}

#[test]
fn a_tmx_from_one_campaign_makes_a_second_campaign_on_the_same_book_make_no_translation_call() {
    let provider = "[provider]\nkind = \"openai\"\nmodel = \"m\"\n";
    let a = TestCampaign::with_chapters(
        "a",
        &["one.md", "two.md"],
        &format!("max_unit_chars = 500\n{provider}"),
    );
    a.write("one.md", &chapter("1", 4));
    a.write("two.md", &chapter("2", 3));
    let fake = FakeServer::start();
    let out = run_fake(&a, &fake);
    assert_code(&out, 0);
    let first = json_summary(&out);
    let prose = first["units"]["translated"].as_u64().unwrap();
    assert!(prose >= 6, "{first}");
    assert!(fake.count(Agent::Translation) as u64 >= prose);
    assert_code(&a.cmd("export", &["--format", "tmx"]).output().unwrap(), 0);
    let tmx_doc = a.read("a/export/a.tmx");

    // Campaign B: same book, its own state, the TMX as memory, a fresh fake server.
    let b = TestCampaign::with_chapters(
        "b",
        &["one.md", "two.md"],
        &format!("max_unit_chars = 500\nmemory = [\"a.tmx\"]\n{provider}"),
    );
    b.write("one.md", &chapter("1", 4));
    b.write("two.md", &chapter("2", 3));
    b.write("a.tmx", &tmx_doc);
    // The offline plan already knows: no Translation call.
    let out = b
        .cmd("plan", &["--json", "--provider", "openai", "--model", "m"])
        .output()
        .unwrap();
    assert_code(&out, 0);
    let plan = json_summary(&out);
    assert_eq!(
        plan["estimate"]["total"]["translation"]["calls"], 0,
        "{plan}"
    );
    assert_eq!(plan["estimate"]["remaining"]["translation"]["calls"], 0);
    let fake_b = FakeServer::start();
    let out = run_fake(&b, &fake_b);
    assert_code(&out, 0);
    let s = json_summary(&out);
    assert_eq!(
        fake_b.count(Agent::Translation),
        0,
        "every unit came from the memory: {s}"
    );
    assert_eq!(s["units"]["memory_hits"].as_u64().unwrap(), prose, "{s}");
    assert_eq!(s["units"]["translated"].as_u64().unwrap(), prose);
    assert_eq!(s["usage"]["translation"]["calls"], 0);
    assert_eq!(b.read("b/out/one.md"), a.read("a/out/one.md"));
    assert_eq!(b.read("b/out/two.md"), a.read("a/out/two.md"));
    assert!(
        b.read("b/validation/report.md")
            .contains(&format!("Translation memory: {prose} unit(s)"))
    );
    assert!(
        b.read("b/validation/report.html").contains(&format!(
            "<span id=\"memory-hits\">{prose} from translation memory</span>"
        )),
        "report.html counts memory hits"
    );
    // Memory hits are journaled as results with zero usage and origin memory.
    let hits: Vec<serde_json::Value> = journal(&b, "b")
        .into_iter()
        .filter(|e| e["event"] == "call_finished" && e["agent"] == "translation")
        .collect();
    assert_eq!(hits.len() as u64, prose);
    for h in &hits {
        assert_eq!(h["requests"], 0);
        assert_eq!(h["usage"]["prompt_tokens"], 0);
        let dir = std::fs::read_dir(b.path("b/state"))
            .unwrap()
            .flatten()
            .next()
            .unwrap()
            .path();
        let r: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join(h["file"].as_str().unwrap())).unwrap(),
        )
        .unwrap();
        assert_eq!(r["origin"]["kind"], "memory");
        assert_eq!(r["origin"]["file"], "a.tmx");
    }

    // TMX export → import → export is stable: B's memory export has A's pairs.
    assert_code(&b.cmd("export", &["--format", "tmx"]).output().unwrap(), 0);
    let (en, zh) = (Lang::parse("en"), Lang::parse("zh"));
    let pa = tmx::read(&tmx_doc, "a.tmx", &en, &zh).unwrap();
    let pb = tmx::read(&b.read("b/export/b.tmx"), "b.tmx", &en, &zh).unwrap();
    assert_eq!(pa, pb);
    // Sentence pairs (tuid `unit#sN`) where a unit's sentences align, else one per unit:
    // every translated unit is there.
    let units: BTreeSet<&str> = pa.iter().map(|p| p.id.split('#').next().unwrap()).collect();
    assert_eq!(units.len() as u64, prose);
    assert!(pa.len() as u64 >= prose, "sentence pairs: {}", pa.len());
}

#[test]
fn booktr_import_of_a_tmx_fills_units_a_failed_run_left() {
    let provider = "[provider]\nkind = \"openai\"\nmodel = \"m\"\nmax_attempts = 1\n";
    let c = TestCampaign::with_chapters(
        "f",
        &["one.md"],
        &format!("max_unit_chars = 500\n{provider}"),
    );
    c.write("one.md", &chapter("1", 3));
    // Translation always fails; the other agents answer.
    let fake = FakeServer::start();
    fake.script(|r| {
        if r.agent == Agent::Translation {
            support::fake_llm::Reply::Status {
                code: 400,
                body: "{\"error\":{\"message\":\"no\"}}".into(),
                retry_after: None,
            }
        } else {
            support::fake_llm::Reply::Default
        }
    });
    let out = run_fake(&c, &fake);
    assert_code(&out, 1);
    // A memory from another real campaign on the same book (a rehearsal's memory is refused:
    // see pseudo_tmx_is_refused_as_memory_of_a_real_campaign).
    let m = TestCampaign::with_chapters(
        "m",
        &["one.md"],
        "max_unit_chars = 500\n[provider]\nkind = \"openai\"\nmodel = \"m\"\n",
    );
    m.write("one.md", &chapter("1", 3));
    let fake_m = FakeServer::start();
    assert_code(&run_fake(&m, &fake_m), 0);
    assert_code(
        &m.cmd("export", &["--format", "tmx", "--out", "mem.tmx"])
            .current_dir(m.dir.path())
            .output()
            .unwrap(),
        0,
    );
    let mem = m.path("mem.tmx");
    let out = c
        .cmd("import", &[mem.to_str().unwrap(), "--json"])
        .output()
        .unwrap();
    assert_code(&out, 0);
    let s = json_summary(&out);
    let filled = s["memory_hits"].as_u64().unwrap();
    assert!(filled >= 3, "{s}\n{}", stderr(&out));
    assert_eq!(c.read("f/out/one.md"), m.read("m/out/one.md"));
    // The next run needs no translation call.
    fake.clear();
    fake.script(|_| support::fake_llm::Reply::Default);
    let out = run_fake(&c, &fake);
    assert_code(&out, 0);
    assert_eq!(fake.count(Agent::Translation), 0);
    assert_eq!(
        json_summary(&out)["units"]["memory_hits"].as_u64().unwrap(),
        filled
    );
}

// ---------------------------------------------------------------------------------------------
// Bilingual output

/// Checks a bilingual chapter against its source and translation: every code block of the
/// source exactly once, every source prose block immediately followed by its translation.
fn assert_bilingual(source: &str, target: &str, bilingual: &str, name: &str) {
    assert_eq!(
        fences(bilingual),
        fences(source),
        "{name}: every code block once, in order"
    );
    let blocks = |t: &str| -> Vec<(String, bool)> {
        let bs = top_level_blocks(t);
        bs.iter()
            .enumerate()
            .map(|(i, b)| {
                let end = bs.get(i + 1).map_or(t.len(), |n| n.range.start);
                (
                    t[b.range.start..end].trim_end().to_string(),
                    b.kind == BlockKind::Verbatim || b.kind == BlockKind::FrontMatter,
                )
            })
            .collect()
    };
    let (sb, tb) = (blocks(source), blocks(target));
    assert_eq!(
        sb.len(),
        tb.len(),
        "{name}: the translation keeps the block structure"
    );
    let mut pos = 0;
    let mut pairs = 0;
    for ((s, verbatim), (t, _)) in sb.iter().zip(&tb) {
        if *verbatim {
            continue;
        }
        // A code block nested in the block (a list item, a quote) is shown once, with the
        // translation; the source side keeps the rest of the block.
        let s = &bilingual::source_without_shared_code(s, t);
        let pair = format!("{s}\n\n{t}");
        let pair_list = format!("{s}\n\n<!-- -->\n\n{t}");
        let at = bilingual[pos..]
            .find(&pair)
            .or_else(|| bilingual[pos..].find(&pair_list))
            .unwrap_or_else(|| panic!("{name}: source block not followed by its translation:\n{s}\n--- expected ---\n{t}"));
        pos += at + s.len();
        pairs += 1;
    }
    assert!(pairs > 3, "{name}: {pairs} pairs");
}

#[test]
fn bilingual_output_keeps_every_code_block_once_and_pairs_every_source_block() {
    let mut chapters: Vec<(String, String)> = vec![("syn.md".into(), chapter("S", 4))];
    if let Some(corpus) = corpus_dir() {
        for n in ["chapter01.md", "chapter02.md"] {
            chapters.push((
                corpus.join("en").join(n).to_str().unwrap().to_string(),
                std::fs::read_to_string(corpus.join("en").join(n)).unwrap(),
            ));
        }
    }
    let names: Vec<&str> = chapters.iter().map(|(n, _)| n.as_str()).collect();
    let c = TestCampaign::with_chapters("bi", &names, "");
    c.write("syn.md", &chapters[0].1);
    let out = c.cmd("run", &["--bilingual"]).output().unwrap();
    assert_code(&out, 0);
    for (path, source) in &chapters {
        let file = std::path::Path::new(path)
            .file_name()
            .unwrap()
            .to_str()
            .unwrap();
        let target = c.read(&format!("bi/out/{file}"));
        let bilingual = c.read(&format!("bi/out/bilingual/{file}"));
        assert_bilingual(source, &target, &bilingual, file);
    }
    let html = c.read("bi/validation/report.html");
    assert!(html.contains("id=\"bilingual\""));
    assert!(html.contains(
        "<td class=\"src\" lang=\"en\">## Section S.0</td><td class=\"tgt\" lang=\"zh\">"
    ));

    // Without the flag or key, no bilingual view.
    let plain = TestCampaign::with_chapters("p", &["syn.md"], "");
    plain.write("syn.md", &chapters[0].1);
    assert_code(&plain.cmd("run", &[]).output().unwrap(), 0);
    assert!(!plain.path("p/out/bilingual").exists());
    assert!(
        !plain
            .read("p/validation/report.html")
            .contains("id=\"bilingual\"")
    );
}

// ---------------------------------------------------------------------------------------------
// External parser

/// XLIFF, TMX and TBX exports (of a rehearsal, so with their rehearsal marks) open in
/// translate-toolkit (a real CAT-tool library) with the same units and texts booktr wrote. Skipped with a reason when python3 or translate-toolkit
/// is missing, unless `BOOKTR_REQUIRE_TRANSLATE_TOOLKIT=1` (CI sets it).
#[booktr_test_needs::needs(translate_toolkit)]
#[test]
fn exports_open_in_translate_toolkit() {
    let have = std::process::Command::new("python3")
        .args([
            "-c",
            "import translate.storage.xliff2, translate.storage.tmx, translate.storage.tbx",
        ])
        .output()
        .is_ok_and(|o| o.status.success());
    if !have {
        if std::env::var("BOOKTR_REQUIRE_TRANSLATE_TOOLKIT").is_ok_and(|v| v == "1") {
            panic!("translate-toolkit is required (pip install translate-toolkit)");
        }
        eprintln!(
            "skipped: python3 with translate-toolkit is not installed (pip install translate-toolkit)"
        );
        return;
    }
    let c = TestCampaign::with_chapters(
        "tt",
        &["a.md", "b.md"],
        "max_unit_chars = 400\nglossaries = [\"g.csv\"]\n",
    );
    c.write("a.md", &chapter("A", 2));
    c.write(
        "b.md",
        &format!(
            "{}Line with CRLF\r\nand <b>html</b> & \"quotes\".\r\n",
            chapter("B", 1)
        ),
    );
    c.write(
        "g.csv",
        "source,target,note,forbidden\nAgent,智能体,core & main,代理\n",
    );
    assert_code(&c.cmd("run", &[]).output().unwrap(), 0);
    for f in ["xliff", "tmx", "tbx"] {
        assert_code(&c.cmd("export", &["--format", f]).output().unwrap(), 0);
    }
    // The campaign is a rehearsal: translate-toolkit must read the exports with their marks.
    for (format, ext) in [
        (booktr::interchange::Format::Xliff, "xlf"),
        (booktr::interchange::Format::Tmx, "tmx"),
        (booktr::interchange::Format::Tbx, "tbx"),
    ] {
        assert!(
            booktr::interchange::rehearsal::is_marked(
                format,
                c.read(&format!("tt/export/tt.{ext}")).as_bytes()
            ),
            "tt.{ext} carries the rehearsal mark"
        );
    }
    let (en, zh) = (Lang::parse("en"), Lang::parse("zh"));
    let units = xliff::read(&c.read("tt/export/tt.xlf"), "tt.xlf").unwrap();
    let pairs = tmx::read(&c.read("tt/export/tt.tmx"), "tt.tmx", &en, &zh).unwrap();
    let terms = tbx::read(&c.read("tt/export/tt.tbx"), "tt.tbx", &en, &zh).unwrap();
    let expected = serde_json::json!({
        "xliff_units": units.iter().map(|u| &u.id).collect::<Vec<_>>(),
        "xliff_files": units.iter().map(|u| &u.file).collect::<BTreeSet<_>>(),
        "tmx": pairs.iter().map(|p| [&p.source, &p.target]).collect::<Vec<_>>(),
        "tbx": terms.iter().map(|e| [&e.source, &e.target]).collect::<Vec<_>>(),
    });
    c.write("expected.json", &expected.to_string());
    let script = r#"
import json, sys
from translate.storage import xliff2, tmx, tbx
exp = json.load(open("expected.json", encoding="utf-8"))
x = xliff2.Xliff2File(open("tt/export/tt.xlf", "rb").read())
ids = [u.getid() for u in x.units]
# translate-toolkit prefixes unit ids with their file id, and lists each <segment> of a unit
# with several as `unit::segment-N`: booktr writes sentence segments.
assert any("::segment-2" in i for i in ids), ids[:5]
units = []
for i in ids:
    u = i.split("\x04")[-1].split("::")[0]
    if not units or units[-1] != u:
        units.append(u)
assert units == exp["xliff_units"], (ids[:5], exp["xliff_units"][:5])
assert sorted(x.getfilenames()) == sorted(exp["xliff_files"]), x.getfilenames()
assert all(u.source is not None for u in x.units)
t = tmx.tmxfile(open("tt/export/tt.tmx", "rb").read(), "en", "zh")
got = [[u.source, u.target] for u in t.units]
assert got == exp["tmx"], (got[:2], exp["tmx"][:2])
b = tbx.tbxfile(open("tt/export/tt.tbx", "rb").read(), "en", "zh")
terms = [[u.source, u.target] for u in b.units]
assert terms == exp["tbx"], (terms, exp["tbx"])
print("translate-toolkit read", len(ids), "XLIFF units,", len(got), "TMX pairs,", len(terms), "TBX entries")
"#;
    c.write("check.py", script);
    let out = std::process::Command::new("python3")
        .arg("check.py")
        .current_dir(c.dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "translate-toolkit rejected an export:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        stderr(&out)
    );
    eprintln!("{}", String::from_utf8_lossy(&out.stdout).trim());
}

// ---------------------------------------------------------------------------------------------
// A rehearsal leaks nowhere

const REAL: &str = "[provider]\nkind = \"openai\"\nmodel = \"m\"\n";

/// A pseudo campaign over `chapter("1", 3)`, run, with its exports in `p/export/`.
fn rehearsal_exports() -> TestCampaign {
    let p = TestCampaign::with_chapters("p", &["one.md"], "max_unit_chars = 500\n");
    p.write("one.md", &chapter("1", 3));
    assert_code(&p.cmd("run", &[]).output().unwrap(), 0);
    for f in ["xliff", "tmx", "tbx", "csv", "tsv"] {
        assert_code(&p.cmd("export", &["--format", f]).output().unwrap(), 0);
    }
    p
}

/// Regression (a TMX exported from a pseudo rehearsal, used as memory in a real campaign,
/// filled every unit with pseudo text, the run reporting `rehearsal: false` with no warning).
#[test]
fn pseudo_tmx_is_refused_as_memory_of_a_real_campaign() {
    let p = rehearsal_exports();
    let doc = p.read("p/export/p.tmx");
    let real = TestCampaign::with_chapters(
        "r",
        &["one.md"],
        &format!("max_unit_chars = 500\nmemory = [\"rehearsal.tmx\"]\n{REAL}"),
    );
    real.write("one.md", &chapter("1", 3));
    real.write("rehearsal.tmx", &doc);
    let fake = FakeServer::start();
    let out = run_fake(&real, &fake);
    assert_code(&out, 2);
    let err = stderr(&out);
    assert!(
        err.contains("translation memory rehearsal.tmx is an export of a rehearsal")
            && err.contains("pseudo text, not translations")
            && err.contains("Remove it from `memory`"),
        "{err}"
    );
    assert_eq!(fake.requests().len(), 0, "refused before any request");
    assert!(!real.path("r/out/one.md").exists());
    assert!(!real.path("r/state").exists(), "refused before any state");
    // The offline plan refuses it too.
    let out = real
        .cmd("plan", &["--provider", "openai", "--model", "m"])
        .output()
        .unwrap();
    assert_code(&out, 2);
    assert!(stderr(&out).contains("rehearsal.tmx"));

    // A rehearsal may still use it: every unit comes from the memory.
    let again = TestCampaign::with_chapters(
        "q",
        &["one.md"],
        "max_unit_chars = 500\nmemory = [\"rehearsal.tmx\"]\n",
    );
    again.write("one.md", &chapter("1", 3));
    again.write("rehearsal.tmx", &doc);
    let out = again.cmd("run", &["--json"]).output().unwrap();
    assert_code(&out, 0);
    let s = json_summary(&out);
    assert!(s["units"]["memory_hits"].as_u64().unwrap() >= 3, "{s}");
    assert_eq!(s["units"]["memory_hits"], s["units"]["translated"]);

    // Pseudo text that lost its mark is still recognised: a warning naming the file.
    let unmarked = doc.replace("<prop type=\"x-booktr-rehearsal\">true</prop>", "");
    assert_ne!(unmarked, doc);
    real.write("rehearsal.tmx", &unmarked);
    let out = run_fake(&real, &fake);
    assert_code(&out, 0);
    let err = stderr(&out);
    assert!(
        err.contains("warning: translation memory rehearsal.tmx:")
            && err.contains("look like pseudo text"),
        "{err}"
    );
}

#[test]
fn pseudo_xliff_is_refused_by_import_of_a_real_campaign() {
    let real =
        TestCampaign::with_chapters("r", &["one.md"], &format!("max_unit_chars = 500\n{REAL}"));
    real.write("one.md", &chapter("1", 3));
    let fake = FakeServer::start();
    assert_code(&run_fake(&real, &fake), 0);
    let p = rehearsal_exports();
    let before: Vec<(std::path::PathBuf, Vec<u8>)> = real
        .all_files()
        .into_iter()
        .map(|f| (f.clone(), std::fs::read(&f).unwrap()))
        .collect();
    for file in ["p/export/p.xlf", "p/export/p.tmx"] {
        let path = p.path(file);
        let out = real
            .cmd("import", &[path.to_str().unwrap()])
            .output()
            .unwrap();
        assert_code(&out, 2);
        let err = stderr(&out);
        assert!(
            err.contains(path.to_str().unwrap())
                && err.contains("is an export of a rehearsal")
                && err.contains("`booktr import` input")
                && err.contains("Nothing was imported"),
            "{err}"
        );
    }
    let after: Vec<(std::path::PathBuf, Vec<u8>)> = real
        .all_files()
        .into_iter()
        .map(|f| (f.clone(), std::fs::read(&f).unwrap()))
        .collect();
    assert!(before == after, "a refused import changes no file");
    // Pseudo targets that lost the mark (a CAT tool dropped the metadata) give a warning.
    let xlf = p.read("p/export/p.xlf");
    let meta_start = xlf.find("<mda:metadata>").unwrap();
    let notes_end = xlf.find("</notes>").unwrap() + "</notes>".len();
    let stripped = format!("{}{}", &xlf[..meta_start], &xlf[notes_end..]);
    assert!(!stripped.contains("rehearsal"), "{stripped}");
    let path = p.write("stripped.xlf", &stripped);
    let out = real
        .cmd("import", &[path.to_str().unwrap()])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert!(
        err.contains("target(s) look like pseudo text from a rehearsal"),
        "{err}"
    );
    // The rehearsal itself may import its own export (an edited target becomes a human edit).
    let xlf = p.read("p/export/p.xlf");
    // The first target's first segment is the chapter heading: an editor retitles it.
    let mut at = xlf.find("<target>").unwrap() + "<target>".len();
    if xlf[at..].starts_with("<mrk") {
        at += xlf[at..].find('>').unwrap() + 1;
    }
    let end = at + xlf[at..].find(['\n', '<']).unwrap();
    assert!(xlf[at..end].starts_with("# "), "{}", &xlf[at..end]);
    let edited = format!("{}# 人工标题 1{}", &xlf[..at], &xlf[end..]);
    p.write("edited.xlf", &edited);
    let out = p
        .cmd("import", &["edited.xlf", "--json"])
        .current_dir(p.dir.path())
        .output()
        .unwrap();
    assert_code(&out, 0);
    assert_eq!(json_summary(&out)["edited"].as_array().unwrap().len(), 1);
}

#[test]
fn exports_of_a_pseudo_campaign_carry_the_rehearsal_mark_and_real_ones_do_not() {
    use booktr::interchange::{Format, rehearsal};
    let fake = FakeServer::start();
    for (name, provider, pseudo) in [("p", "", true), ("r", REAL, false)] {
        let c = TestCampaign::with_chapters(
            name,
            &["a.md"],
            &format!(
                "max_unit_chars = 400\nglossaries = [\"g.csv\"]\nbilingual = true\n{provider}"
            ),
        );
        c.write("a.md", &chapter("A", 2));
        c.write("g.csv", "source,target\nAgent,智能体\n");
        let out = if pseudo {
            c.cmd("run", &[]).output().unwrap()
        } else {
            run_fake(&c, &fake)
        };
        assert_code(&out, 0);
        for f in ["xliff", "tmx", "tbx", "csv", "tsv"] {
            assert_code(&c.cmd("export", &["--format", f]).output().unwrap(), 0);
        }
        let read = |ext: &str| c.read(&format!("{name}/export/{name}.{ext}"));
        for (format, ext) in [
            (Format::Xliff, "xlf"),
            (Format::Tmx, "tmx"),
            (Format::Tbx, "tbx"),
            (Format::Csv, "csv"),
            (Format::Tsv, "tsv"),
        ] {
            let text = read(ext);
            assert_eq!(
                rehearsal::is_marked(format, text.as_bytes()),
                pseudo,
                "{name}.{ext}"
            );
            assert_eq!(text.contains("rehearsal"), pseudo, "{name}.{ext}:\n{text}");
        }
        let (tmx_doc, xlf, tbx_doc, csv, tsv) = (
            read("tmx"),
            read("xlf"),
            read("tbx"),
            read("csv"),
            read("tsv"),
        );
        assert_eq!(
            tmx_doc.contains("<prop type=\"x-booktr-rehearsal\">true</prop>"),
            pseudo
        );
        assert_eq!(
            xlf.matches("<mda:meta type=\"x-booktr-rehearsal\">true</mda:meta>")
                .count(),
            usize::from(pseudo),
            "one per <file> (one chapter)"
        );
        assert_eq!(xlf.contains("<note category=\"booktr:rehearsal\""), pseudo);
        assert_eq!(
            tbx_doc.contains("<note>x-booktr-rehearsal: true. REHEARSAL:"),
            pseudo
        );
        let header = if pseudo {
            "source,target,note,forbidden,origin,rehearsal"
        } else {
            "source,target,note,forbidden,origin"
        };
        assert_eq!(csv.lines().next().unwrap(), header);
        assert!(csv.lines().skip(1).count() >= 1, "{csv}");
        assert!(
            csv.lines().skip(1).all(|l| l.ends_with(",true") == pseudo),
            "{csv}"
        );
        assert_eq!(tsv.lines().next().unwrap(), header.replace(',', "\t"));
        // booktr's readers read marked files as before.
        let (en, zh) = (Lang::parse("en"), Lang::parse("zh"));
        let units = xliff::read(&xlf, "x.xlf").unwrap();
        assert!(units.iter().filter(|u| u.target.is_some()).count() >= 2);
        let pairs = tmx::read(&tmx_doc, "x.tmx", &en, &zh).unwrap();
        // TMX pairs at the XLIFF granularity: sentence pairs `unit#sN` where a unit's
        // sentences align (the pseudo text keeps every sentence), else one per unit.
        let pair_units: BTreeSet<&str> = pairs
            .iter()
            .map(|p| p.id.split('#').next().unwrap())
            .collect();
        assert_eq!(
            pair_units.len(),
            units
                .iter()
                .filter(|u| u.translate && u.target.is_some())
                .count()
        );
        assert!(pairs.len() >= pair_units.len());
        if pseudo {
            assert!(
                pairs.iter().any(|p| p.id.ends_with("#s2"))
                    && tmx_doc.contains("segtype=\"sentence\""),
                "{tmx_doc}"
            );
        }
        let from_tbx = tbx::read(&tbx_doc, "x.tbx", &en, &zh).unwrap();
        let from_csv = delimited::read(csv.as_bytes(), "x.csv", b',', &en, &zh).unwrap();
        assert_eq!(from_tbx, from_csv);
        assert!(
            from_csv
                .iter()
                .any(|e| e.source == "Agent" && e.target == "智能体")
        );
        let bi = c.read(&format!("{name}/out/bilingual/a.md"));
        assert_eq!(
            bi.starts_with("<!-- x-booktr-rehearsal: true."),
            pseudo,
            "{bi}"
        );
        if pseudo {
            // A real campaign refuses the rehearsal's termbase as a glossary, in either format.
            for ext in ["tbx", "csv"] {
                let g = TestCampaign::with_chapters(
                    "g",
                    &["a.md"],
                    &format!("glossaries = [\"pseudo.{ext}\"]\n{REAL}"),
                );
                g.write("a.md", &chapter("A", 2));
                g.write(&format!("pseudo.{ext}"), &read(ext));
                let out = g.cmd("plan", &[]).output().unwrap();
                assert_code(&out, 2);
                let err = stderr(&out);
                assert!(
                    err.contains(&format!(
                        "glossary pseudo.{ext} is an export of a rehearsal"
                    )) && err.contains("Remove it from `glossaries`"),
                    "{err}"
                );
                // A rehearsal takes it.
                let out = g.cmd("plan", &["--provider", "pseudo"]).output().unwrap();
                assert_code(&out, 0);
            }
        }
    }
}

/// A memory entry similar to a unit (one word changed) is a fuzzy match: it goes into that
/// unit's Translation prompt as a reference with its match percentage, after the stable
/// system prompt, and is never copied as the translation; the reports count it by band.
#[test]
fn a_fuzzy_memory_match_is_a_prompt_reference_never_a_copied_translation() {
    let provider = "[provider]\nkind = \"openai\"\nmodel = \"m\"\n";
    let text = |verb: &str| {
        format!(
            "# Agents\n\nThe agent calls a tool and {verb} the result. It then writes a short answer for the user.\n\nA second paragraph explains memory in some detail. It lists three kinds of memory.\n"
        )
    };
    let a = TestCampaign::with_chapters(
        "a",
        &["one.md"],
        &format!("max_unit_chars = 500\n{provider}"),
    );
    a.write("one.md", &text("reads"));
    assert_code(&run_fake(&a, &FakeServer::start()), 0);
    assert_code(&a.cmd("export", &["--format", "tmx"]).output().unwrap(), 0);

    let b = TestCampaign::with_chapters(
        "b",
        &["one.md"],
        &format!("max_unit_chars = 500\nmemory = [\"a.tmx\"]\n{provider}"),
    );
    b.write("one.md", &text("prints"));
    b.write("a.tmx", &a.read("a/export/a.tmx"));
    let fake = FakeServer::start();
    let out = run_fake(&b, &fake);
    assert_code(&out, 0);
    let s = json_summary(&out);
    assert_eq!(
        s["units"]["memory_hits"], 0,
        "a fuzzy match is not a hit: {s}"
    );
    let requests: Vec<_> = fake
        .requests()
        .into_iter()
        .filter(|r| r.agent == Agent::Translation)
        .collect();
    assert!(!requests.is_empty(), "the unit was translated by the model");
    let with_ref: Vec<_> = requests
        .iter()
        .filter(|r| r.glossary_text().contains("<reference match=\""))
        .collect();
    assert!(!with_ref.is_empty(), "{:?}", requests[0].glossary_text());
    let second = with_ref[0].glossary_text();
    assert!(second.contains("reads the result"), "{second}");
    // Stable prefix first: the system prompt carries no reference; the unit text is last.
    assert!(!with_ref[0].messages[0].content.contains("<reference"));
    assert!(
        with_ref[0]
            .unit_text()
            .unwrap()
            .contains("prints the result")
    );
    let pct: u32 = second
        .split("<reference match=\"")
        .nth(1)
        .unwrap()
        .split('%')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!((75..100).contains(&pct), "{pct}");
    let report: serde_json::Value =
        serde_json::from_str(&b.read("b/validation/report.json")).unwrap();
    let fz = &report["fuzzy_matches"];
    let band = match pct {
        75..=84 => "75-84",
        85..=94 => "85-94",
        _ => "95-99",
    };
    assert!(fz[band].as_u64().unwrap() >= 1, "{fz}");
    assert!(
        b.read("b/validation/report.md")
            .contains("Fuzzy translation-memory matches"),
    );
    assert!(
        b.read("b/validation/report.html")
            .contains("<span id=\"fuzzy-matches\">")
    );
}
