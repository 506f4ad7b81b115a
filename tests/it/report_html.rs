//! `report.html` opens and renders in headless Chromium, shows the overview table, and book
//! text that contains `<script>`, an `onerror` handler or a `javascript:` link stays inert.
//! A control page with the same script unescaped proves the detection works. A screenshot is
//! saved under `target/test-artifacts/`.
//!
//! Needs Debian's `chromium` (installed by `.ci/run`). Without it the test prints why it is
//! skipped, unless `BOOKTR_REQUIRE_CHROMIUM=1` (set in CI), where it fails.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Command;

use support::{TestCampaign, assert_code};

fn chromium() -> Option<PathBuf> {
    for c in [
        "/usr/bin/chromium",
        "/usr/bin/chromium-browser",
        "/usr/bin/google-chrome",
    ] {
        if Path::new(c).exists() {
            return Some(PathBuf::from(c));
        }
    }
    if std::env::var("BOOKTR_REQUIRE_CHROMIUM").as_deref() == Ok("1") {
        panic!("chromium is required (BOOKTR_REQUIRE_CHROMIUM=1) but not installed");
    }
    eprintln!(
        "skipped: no chromium on this machine (install Debian's `chromium` to run this test)"
    );
    None
}

fn headless(bin: &Path, profile: &Path) -> Command {
    let mut c = Command::new(bin);
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--virtual-time-budget=2000",
    ])
    .arg(format!("--user-data-dir={}", profile.display()));
    c
}

fn dump_dom(bin: &Path, profile: &Path, page: &Path) -> String {
    let out = headless(bin, profile)
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

const HOSTILE: &str = "# Hostile chapter\n\nPlain text before.\n\n<script>document.body.setAttribute('data-pwned', 'script')</script>\n\nA [harmless looking link](javascript:document.body.setAttribute('data-pwned','link')) and <img src=\"x\" onerror=\"document.body.setAttribute('data-pwned','img')\">.\n\n```html\n<script>alert('in code')</script>\n```\n";

#[booktr_test_needs::needs(chromium)]
#[test]
fn report_html_renders_in_chromium_and_keeps_hostile_text_inert() {
    let Some(bin) = chromium() else { return };
    let c = TestCampaign::with_chapters("h", &["hostile.md", "plain.md"], "");
    c.write("hostile.md", HOSTILE);
    c.write("plain.md", "# Plain\n\nAn Agent reads a context window.\n");
    assert_code(&c.cmd("run", &[]).output().unwrap(), 0);
    let page = c.path("h/validation/report.html");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("&lt;script&gt;document.body.setAttribute"),
        "the script is escaped"
    );
    assert!(!html.contains("<script"), "no script element in the page");

    let profile = tempfile::tempdir().unwrap();
    let dom = dump_dom(&bin, profile.path(), &page);
    assert!(
        dom.contains("id=\"overview-table\""),
        "overview table rendered"
    );
    assert!(
        dom.contains("<td>hostile</td>") && dom.contains("<td>plain</td>"),
        "one overview row per chapter:\n{}",
        &dom[dom.find("overview-table").unwrap_or(0)..][..1500.min(dom.len())]
    );
    assert!(dom.contains("REHEARSAL"));
    assert!(!dom.contains("data-pwned=\""), "an injected script ran");

    // Control: the same payload unescaped in a page without CSP does run, so the check above
    // can see an execution.
    let control = c.path("control.html");
    std::fs::write(&control, "<!DOCTYPE html><html><body><p>x</p><script>document.body.setAttribute('data-pwned', 'script')</script></body></html>").unwrap();
    assert!(
        dump_dom(&bin, profile.path(), &control).contains("data-pwned=\"script\""),
        "control page must show execution"
    );

    // Screenshot for the test output.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-artifacts");
    std::fs::create_dir_all(&dir).unwrap();
    let shot = dir.join("report-html.png");
    let out = headless(&bin, profile.path())
        .arg(format!("--screenshot={}", shot.display()))
        .arg("--window-size=1300,1600")
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(
        std::fs::metadata(&shot).unwrap().len() > 10_000,
        "screenshot written"
    );
    println!("screenshot: {}", shot.display());
}

/// The campaign of [`report_html_has_lang_tags_resolving_anchors_and_finding_colours`]: section 1
/// comes back untranslated (an `untranslated` error), section 2 loses its numbers (a `numbers`
/// warning), the others are translated by the fake server; target language `zh-Hans-CN`.
fn findings_campaign(fake: &support::fake_llm::FakeServer) -> TestCampaign {
    use booktr::agents::Agent;
    use support::fake_llm::Reply;
    fake.script(|r| {
        if r.agent != Agent::Translation {
            return Reply::Default;
        }
        let text = r.unit_text().unwrap_or("");
        if text.contains("Section 1\n") {
            Reply::Content(text.to_string())
        } else if text.contains("Section 2\n") {
            Reply::Content("## 第二节\n\n在这一节中，智能体（agent）读取了许多文件，然后决定任务的下一步，并为下一次会话写下简短的笔记。\n\n".into())
        } else if text.contains("Section 3\n") {
            // "agent" glossed two ways: a confirmed drift, whose campaign-level finding names
            // the units of each rendering.
            Reply::Content("## 第三节\n\n在第三节中，代理（agent）读取了许多文件，然后决定任务的下一步，并为下一次会话写下简短的笔记。\n\n".into())
        } else {
            Reply::Default
        }
    });
    let c = TestCampaign::new(
        "name = \"f\"\nsource_lang = \"en\"\ntarget_lang = \"zh-Hans-CN\"\nchapters = [\"a.md\", \"b.md\"]\nmax_unit_chars = 300\nrevision_rounds = 0\n[provider]\nkind = \"openai\"\nmodel = \"m\"\n[pricing]\ninput_per_million = 2.0\noutput_per_million = 8.0\ncurrency = \"EUR\"\n",
    );
    let chapter = |k: &str| -> String {
        (1..=4)
            .map(|i| format!("## Section {i}\n\nIn section {i} of part {k} the agent reads 42 files that the tool returned in 17 seconds and decides on the next step of the task, writing a short note for the next session.\n\n"))
            .collect()
    };
    c.write("a.md", &chapter("A"));
    c.write("b.md", &chapter("B"));
    c
}

/// Opens `page` in an iframe of a probe page (`--allow-file-access-from-files` makes the two
/// `file://` documents one origin) whose script reads the report as Chromium laid it out and
/// writes what it saw as JSON; the report itself stays unchanged, its CSP and all.
fn probe(bin: &Path, profile: &Path, page: &Path) -> serde_json::Value {
    let probe = page.with_file_name("probe.html");
    std::fs::write(
        &probe,
        format!(
            r##"<!DOCTYPE html><html><body><pre id="probe">not loaded</pre>
<iframe id="r" src="{}" width="1200" height="800"></iframe>
<script>
const f = document.getElementById('r');
f.onload = () => {{
  const d = f.contentDocument, w = f.contentWindow;
  const out = {{ links: [], unresolved: [], squares: [], legend: [] }};
  for (const a of d.querySelectorAll('a[href^="#"]')) {{
    const id = decodeURIComponent(a.getAttribute('href').slice(1));
    out.links.push(id);
    if (!d.getElementById(id)) out.unresolved.push(id);
  }}
  for (const a of d.querySelectorAll('#overview-table .grid a')) {{
    out.squares.push([a.getAttribute('href').slice(3), a.dataset.findings, w.getComputedStyle(a).backgroundColor]);
  }}
  for (const a of d.querySelectorAll('#legend .grid a')) {{
    out.legend.push([a.className, w.getComputedStyle(a).backgroundColor]);
  }}
  out.source_langs = [...d.querySelectorAll('pre.source')].map(p => p.lang);
  out.target_langs = [...d.querySelectorAll('pre.target')].map(p => p.lang);
  out.target_matches = d.querySelectorAll('pre.target:lang(zh-Hans-CN)').length;
  out.excerpt_langs = [...d.querySelectorAll('.findings .excerpt span[lang]')].map(s => s.lang);
  out.cost = (d.getElementById('cost') || {{}}).textContent;
  out.checks = [...d.querySelectorAll('#check-counts tbody tr')].map(tr => [...tr.children].map(td => td.textContent));
  document.getElementById('probe').textContent = JSON.stringify(out);
}};
</script></body></html>"##,
            page.file_name().unwrap().to_str().unwrap()
        ),
    )
    .unwrap();
    let out = headless(bin, profile)
        .arg("--allow-file-access-from-files")
        .arg("--dump-dom")
        .arg(format!("file://{}", probe.display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dom = String::from_utf8_lossy(&out.stdout);
    let start = dom.find("<pre id=\"probe\">").expect("probe element") + "<pre id=\"probe\">".len();
    let end = start + dom[start..].find("</pre>").unwrap();
    let json = dom[start..end]
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    serde_json::from_str(&json).unwrap_or_else(|e| panic!("probe output ({e}): {json}"))
}

/// The fill the report's CSS gives a square of each findings class (`rgb(…)` as Chromium
/// computes it).
fn fill_of(worst: &str) -> &'static str {
    match worst {
        "error" => "rgb(217, 48, 37)",
        "warning" => "rgb(249, 171, 0)",
        "none" => "rgb(129, 201, 149)",
        "missing" => "rgb(255, 255, 255)",
        other => panic!("unknown findings class {other}"),
    }
}

#[booktr_test_needs::needs(chromium)]
#[test]
fn report_html_has_lang_tags_resolving_anchors_and_finding_colours() {
    let Some(bin) = chromium() else { return };
    let fake = support::fake_llm::FakeServer::start();
    let c = findings_campaign(&fake);
    let run = |c: &TestCampaign| {
        c.cmd("run", &["--base-url", &fake.base_url, "--json"])
            .env("OPENAI_API_KEY", "sk-booktr-html-KEY-1")
            .output()
            .unwrap()
    };
    assert_code(&run(&c), 1);

    let report: serde_json::Value =
        serde_json::from_str(&c.read("f/validation/report.json")).unwrap();
    let page = c.path("f/validation/report.html");
    let profile = tempfile::tempdir().unwrap();
    let seen = probe(&bin, profile.path(), &page);

    // Every in-page link resolves, including the chapter-level finding's.
    assert!(
        seen["unresolved"].as_array().unwrap().is_empty(),
        "links without a target: {}",
        seen["unresolved"]
    );
    let links: Vec<&str> = seen["links"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert!(links.len() > 16, "{links:?}");
    // Findings that span units (campaign-level, naming no single unit) link every unit they
    // name: here the drift summaries, whose excerpt lists the units of each rendering.
    let spanning: Vec<&serde_json::Value> = report["chapter_findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["unit"] == "")
        .collect();
    assert!(!spanning.is_empty(), "{report}");
    let html = std::fs::read_to_string(&page).unwrap();
    for f in spanning {
        let excerpt = f["target_excerpt"].as_str().unwrap();
        let named: Vec<&str> = report["units"]
            .as_array()
            .unwrap()
            .iter()
            .map(|u| u["id"].as_str().unwrap())
            .filter(|id| excerpt.contains(id))
            .collect();
        assert!(!named.is_empty(), "{f}");
        for id in named {
            assert!(links.contains(&format!("u-{id}").as_str()), "{id}");
            assert!(
                html.contains(&format!(" <a href=\"#u-{id}\">{id}</a>")),
                "{id}"
            );
        }
    }

    // lang: the campaign's full tags on every source and target text.
    let units = report["units"].as_array().unwrap();
    let langs = |k: &str| -> Vec<String> {
        seen[k]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(langs("source_langs"), vec!["en".to_string(); units.len()]);
    assert_eq!(
        langs("target_langs"),
        vec!["zh-Hans-CN".to_string(); units.len()]
    );
    assert_eq!(seen["target_matches"], units.len(), "{seen}");
    assert!(
        langs("excerpt_langs")
            .iter()
            .all(|l| l == "en" || l == "zh-Hans-CN")
            && !langs("excerpt_langs").is_empty()
    );

    // Colours: each square's computed fill is that of the worst severity among the unit's
    // findings in report.json.
    let squares = seen["squares"].as_array().unwrap();
    assert_eq!(squares.len(), units.len());
    let mut classes = std::collections::BTreeSet::new();
    for sq in squares {
        let id = sq[0].as_str().unwrap();
        let u = units.iter().find(|u| u["id"] == id).unwrap();
        let sev: Vec<&str> = u["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["severity"].as_str().unwrap())
            .collect();
        let expected = if sev.contains(&"error") {
            "error"
        } else if sev.contains(&"warning") {
            "warning"
        } else {
            "none"
        };
        assert_eq!(sq[1], expected, "{id}: {sev:?}");
        assert_eq!(sq[2], fill_of(expected), "{id}: {sev:?}");
        classes.insert(expected);
    }
    assert_eq!(
        classes.into_iter().collect::<Vec<_>>(),
        ["error", "none", "warning"],
        "the campaign has units of each kind"
    );
    // The legend shows the same fills.
    for l in seen["legend"].as_array().unwrap() {
        let class = l[0].as_str().unwrap();
        let worst = class.split(' ').find_map(|c| c.strip_prefix("f-")).unwrap();
        assert_eq!(l[1], fill_of(worst), "legend {class}");
    }

    // Cost from [pricing] and the recorded usage; a count per check.
    let cost = report["summary"]["cost"]["total"].as_f64().unwrap();
    assert!(cost > 0.0);
    assert!(
        seen["cost"]
            .as_str()
            .unwrap()
            .starts_with(&format!("Cost: {cost:.4} EUR (")),
        "{}",
        seen["cost"]
    );
    let checks = seen["checks"].as_array().unwrap();
    let qa_counts = report["qa_counts"].as_object().unwrap();
    assert_eq!(checks.len(), qa_counts.len(), "{checks:?} vs {qa_counts:?}");
    for row in checks {
        let name = row[0].as_str().unwrap();
        assert_eq!(row[4], qa_counts[name].to_string(), "{name}");
    }
    let row = |name: &str| checks.iter().find(|r| r[0] == name).unwrap();
    assert_ne!(row("untranslated")[1], "0");
    assert_ne!(row("numbers")[2], "0");
}

#[test]
fn report_html_without_pricing_says_so() {
    let c = TestCampaign::with_chapters("p", &["a.md"], "");
    c.write("a.md", "# Plain\n\nAn Agent reads a context window.\n");
    assert_code(&c.cmd("run", &[]).output().unwrap(), 0);
    let html = c.read("p/validation/report.html");
    assert!(
        html.contains("<p id=\"cost\">Cost: no pricing set"),
        "{}",
        &html[..3000.min(html.len())]
    );
    let md = c.read("p/validation/report.md");
    assert!(md.contains("\nCost: no pricing set"), "{md}");
}

#[test]
fn report_md_and_html_show_the_cost_at_the_campaign_pricing() {
    let c = TestCampaign::with_chapters(
        "q",
        &["a.md"],
        "[pricing]\ninput_per_million = 3.0\noutput_per_million = 15.0\n",
    );
    c.write("a.md", "# Plain\n\nAn Agent reads a context window.\n");
    assert_code(&c.cmd("run", &[]).output().unwrap(), 0);
    let report: serde_json::Value =
        serde_json::from_str(&c.read("q/validation/report.json")).unwrap();
    let cost = &report["summary"]["cost"];
    let total = cost["total"].as_f64().unwrap();
    assert!(total > 0.0, "{cost}");
    let line = format!("Cost: {total:.4} USD (");
    let md = c.read("q/validation/report.md");
    assert!(md.contains(&format!("\n{line}")), "{line}\n{md}");
    let html = c.read("q/validation/report.html");
    assert!(html.contains(&format!("<p id=\"cost\">{line}")), "{line}");
    let translation = cost["by_agent"]["translation"].as_f64().unwrap();
    assert!(
        md.contains(&format!("translation {translation:.4}")),
        "{md}"
    );
}

/// With proofreading off, report.md said "0 batches reviewed, 0 issues reported" and every
/// Manager decision "the reviewer flagged no unit…", which reads as a reviewer that found
/// nothing; the reports now say that no model reviewed.
#[test]
fn the_report_said_the_reviewer_found_nothing_when_proofreading_was_off() {
    let chapters = support::sample_book_chapters();
    let refs: Vec<&str> = chapters.iter().map(String::as_str).collect();
    for (extra, off) in [("", true), ("proofread_share = 0.2\n", false)] {
        let c =
            TestCampaign::with_chapters("rep", &refs, &format!("max_unit_chars = 800\n{extra}"));
        let out = c.cmd("run", &["--json"]).output().unwrap();
        assert_code(&out, 0);
        let json: serde_json::Value =
            serde_json::from_str(&c.read("rep/validation/report.json")).unwrap();
        let md = c.read("rep/validation/report.md");
        let html = c.read("rep/validation/report.html");
        let decisions = json["decisions"].as_array().unwrap();
        assert!(!decisions.is_empty(), "{json}");
        let summaries: Vec<&str> = decisions
            .iter()
            .map(|d| d["summary"].as_str().unwrap())
            .collect();
        if off {
            assert_eq!(json["proofread_share"], 0.0);
            assert!(
                md.contains("## Proofreading (advisory)\n\nOff (proofread_share = 0, the default): no model reviewed"),
                "{md}"
            );
            assert!(!md.contains("batches reviewed"), "{md}");
            // No reviewer, so no "0 of 0 flagged by the reviewer" either (helper-found).
            assert!(!md.contains("flagged by the reviewer"), "{md}");
            assert!(!html.contains("flagged by the reviewer"));
            assert!(
                html.contains("Proofreading: Off ("),
                "no proofreading line in report.html"
            );
            assert!(
                summaries.iter().all(|s| s.contains("proofreading is off")),
                "{summaries:?}"
            );
        } else {
            assert_eq!(json["proofread_share"], 0.2);
            assert!(
                json["proofreading"].as_array().unwrap().len() >= 3,
                "{json}"
            );
            assert!(md.contains("batches reviewed"), "{md}");
            assert!(md.contains("flagged by the reviewer"), "{md}");
            assert!(!html.contains("Proofreading: Off ("));
            // report.html showed no proofreading figure at all when it was on (helper-found).
            assert!(
                html.contains("Proofreading (advisory): 3 batches reviewed, 0 issues reported."),
                "no proofreading figures in report.html"
            );
            assert!(
                summaries.iter().all(|s| !s.contains("proofreading is off")),
                "{summaries:?}"
            );
        }
    }
}
