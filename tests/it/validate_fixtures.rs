//! `booktr validate` on translations made elsewhere, with fixtures written for booktr
//! (tests/fixtures/validate: two English chapters, their faithful Chinese translation and a
//! house-style glossary). The clean translation passes (exit 0). A broken copy reproduces the
//! failure classes seen in a real run of the Python original (an echoed untranslated unit,
//! labels injected into headings, a dropped code block, a changed link target, a term kept in
//! Latin in some units and translated in others, a glossary violation, a truncated unit); each
//! is flagged with the right check and severity, and validate exits 1.

use crate::support;

use std::path::{Path, PathBuf};

use support::json_summary;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/validate")
}

fn validate(target: &Path, report: &Path) -> (i32, serde_json::Value, serde_json::Value) {
    let f = fixtures();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_booktr"))
        .args(["validate", "--source"])
        .arg(f.join("en"))
        .arg("--target")
        .arg(target)
        .arg("--glossary")
        .arg(f.join("glossary.csv"))
        .args([
            "--source-lang",
            "en",
            "--target-lang",
            "zh",
            "--max-unit-chars",
            "500",
            "--json",
            "--report-dir",
        ])
        .arg(report)
        .output()
        .unwrap();
    let summary = json_summary(&out);
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report.join("report.json")).unwrap())
            .unwrap();
    (out.status.code().unwrap(), summary, report)
}

/// (check, severity, unit) of every finding.
fn findings(report: &serde_json::Value) -> Vec<(String, String, String)> {
    report["units"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|u| u["findings"].as_array().unwrap().iter())
        .chain(report["chapter_findings"].as_array().unwrap())
        .map(|f| {
            (
                f["check"].as_str().unwrap().to_string(),
                f["severity"].as_str().unwrap().to_string(),
                f["unit"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn has(fs: &[(String, String, String)], check: &str, severity: &str) -> bool {
    fs.iter().any(|(c, s, _)| c == check && s == severity)
}

#[test]
fn the_clean_translation_passes() {
    let tmp = tempfile::tempdir().unwrap();
    let (code, summary, report) = validate(&fixtures().join("zh"), tmp.path());
    assert_eq!(code, 0, "{summary}\n{:?}", findings(&report));
    assert_eq!(summary["errors"], 0);
    assert_eq!(summary["units"], 10);
    assert!(
        report["norms"]["length"]["median"].as_f64().is_some(),
        "the campaign length norm was computed"
    );
}

#[test]
fn every_failure_class_is_flagged_with_the_right_check_and_severity() {
    let tmp = tempfile::tempdir().unwrap();
    let zh = fixtures().join("zh");
    let en = fixtures().join("en");
    let mut agents = std::fs::read_to_string(zh.join("agents.md")).unwrap();
    let mut tools = std::fs::read_to_string(zh.join("tools.md")).unwrap();
    let en_agents = std::fs::read_to_string(en.join("agents.md")).unwrap();
    let section = |text: &str, heading: &str| -> String {
        let start = text.find(heading).unwrap();
        let end = text[start + 3..]
            .find("\n## ")
            .map_or(text.len(), |e| start + 3 + e + 1);
        text[start..end].to_string()
    };
    // 1. An echoed, untranslated unit: the "Planning" section is the English source.
    agents = agents.replace(
        &section(&agents, "## 规划"),
        &section(&en_agents, "## Planning"),
    );
    // 2. A part label injected into a heading.
    agents = agents.replace("## 循环", "## [第1部分/共5部分] 循环");
    // 3. A dropped code block.
    let code = agents[agents.find("```python").unwrap()..]
        .split_inclusive("```\n")
        .next()
        .unwrap()
        .to_string();
    agents = agents.replace(&format!("{code}\n"), "");
    // 4. A changed link target.
    let failure = section(&agents, "## 失败");
    agents = agents.replace(
        &failure,
        &failure.replacen("[^1]", "[^1] 详见[说明](https://example.org/wrong)", 1),
    );
    // 5. A term kept in Latin in some units and translated in others ("tool call").
    for h in ["## 发起工具调用", "## 错误"] {
        let s = section(&tools, h);
        tools = tools.replace(&s, &s.replace("工具调用", " tool call "));
    }
    // 6. A glossary violation: "Agent" rendered as the forbidden 代理.
    tools = tools.replace("智能体随后可以", "代理随后可以");
    // 7. A truncated unit: the "Side effects" section keeps only its first sentence.
    let side = section(&tools, "## 副作用");
    let cut = side.find('：').unwrap();
    tools = tools.replace(&side, &format!("{}。\n\n", &side[..cut]));

    let target = tmp.path().join("zh-broken");
    std::fs::create_dir_all(&target).unwrap();
    std::fs::write(target.join("agents.md"), &agents).unwrap();
    std::fs::write(target.join("tools.md"), &tools).unwrap();
    let (code, summary, report) = validate(&target, &tmp.path().join("report"));
    let fs = findings(&report);
    assert_eq!(code, 1, "{summary}");
    assert!(has(&fs, "untranslated", "error"), "{fs:?}");
    assert!(has(&fs, "injected_text", "error"), "{fs:?}");
    assert!(
        has(&fs, "headings", "error") || has(&fs, "injected_text", "error"),
        "{fs:?}"
    );
    assert!(has(&fs, "code_blocks", "error"), "{fs:?}");
    assert!(has(&fs, "links", "error"), "{fs:?}");
    assert!(has(&fs, "glossary", "error"), "{fs:?}");
    assert!(has(&fs, "length_ratio", "error"), "{fs:?}");
    assert!(
        has(&fs, "term_drift", "warning"),
        "{fs:?}\n{}",
        report["drift"]
    );
    let drift = report["drift"].as_array().unwrap();
    let row = drift
        .iter()
        .find(|r| {
            r["term"]
                .as_str()
                .unwrap()
                .eq_ignore_ascii_case("tool call")
        })
        .expect("a drift row for \"tool call\"");
    let kept: Vec<&str> = row["cells"]["(kept)"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(
        kept.contains(&"tools-001") && kept.contains(&"tools-002"),
        "{row}"
    );
    assert!(
        row["cells"]["工具调用"].as_array().unwrap().len() >= 3,
        "{row}"
    );
    // The report names each problem in all three formats.
    let html = std::fs::read_to_string(tmp.path().join("report/report.html")).unwrap();
    assert!(html.contains("drift-table") && html.contains("tool call"));
    let md = std::fs::read_to_string(tmp.path().join("report/report.md")).unwrap();
    assert!(md.contains("## Terminology drift") && md.contains("untranslated"));
}
