//! Jupyter notebooks as chapters, through the `booktr` binary: a rehearsal campaign over a
//! notebook writes a translated notebook with the same cells, ids and order, only the Markdown
//! cell sources changed and every other byte kept; Jupyter's own reader (`nbformat` from PyPI)
//! validates it; a hand edit of a Markdown cell in the output is recorded and kept.

use crate::support;

use booktr::book::notebook::Notebook;
use support::{TestCampaign, assert_code};

/// A notebook as Jupyter writes it (keys sorted, one-space indentation, final newline).
fn jupyter(nb: &serde_json::Value) -> String {
    let mut buf = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(b" ");
    let mut ser = serde_json::Serializer::with_formatter(&mut buf, fmt);
    serde::Serialize::serialize(nb, &mut ser).unwrap();
    String::from_utf8(buf).unwrap() + "\n"
}

fn lines(s: &str) -> serde_json::Value {
    serde_json::Value::Array(
        s.split_inclusive('\n')
            .map(|l| serde_json::Value::String(l.into()))
            .collect(),
    )
}

/// Markdown cells (list and string sources, an attachment), a code cell with a stream and an
/// image output, a raw cell.
fn sample() -> serde_json::Value {
    serde_json::json!({
        "cells": [
            {"cell_type": "markdown", "id": "intro", "metadata": {},
             "source": lines("# Agents and tools\n\nAn agent reads its context window and calls a tool when the task needs one.")},
            {"cell_type": "code", "execution_count": 3, "id": "code-1", "metadata": {"tags": ["keep"]},
             "outputs": [
                {"name": "stdout", "output_type": "stream", "text": ["# printed, not a heading\n", "done\n"]},
                {"data": {"image/png": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==", "text/plain": ["<Figure>"]},
                 "metadata": {}, "output_type": "display_data"}
             ],
             "source": lines("def step(x):\n    # the loop body\n    return x * 2\n\nprint('# printed, not a heading')")},
            {"cell_type": "markdown", "id": "loop", "metadata": {},
             "source": "## The loop\n\nThe loop stops when the task is done, and the agent reports `done`."},
            {"cell_type": "raw", "id": "raw-1", "metadata": {}, "source": ["Raw text is never translated.\n"]},
            {"attachments": {"fig.png": {"image/png": "iVBORw0KGgo="}}, "cell_type": "markdown", "id": "fig", "metadata": {},
             "source": lines("A figure of the agent loop follows.\n\n![loop](attachment:fig.png)")},
        ],
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python", "version": "3.11.7"}
        },
        "nbformat": 4,
        "nbformat_minor": 5
    })
}

fn run_notebook() -> (TestCampaign, String) {
    let c = TestCampaign::with_chapters("nb", &["agents.ipynb"], "max_unit_chars = 400\n");
    let input = jupyter(&sample());
    c.write("agents.ipynb", &input);
    assert_code(&c.cmd("run", &[]).output().unwrap(), 0);
    (c, input)
}

#[test]
fn a_notebook_translates_its_markdown_cells_and_keeps_the_rest() {
    let (c, input) = run_notebook();
    let output = c.read("nb/out/agents.ipynb");
    let (src, out): (serde_json::Value, serde_json::Value) = (
        serde_json::from_str(&input).unwrap(),
        serde_json::from_str(&output).expect("the output is JSON"),
    );
    let (sc, oc) = (
        src["cells"].as_array().unwrap(),
        out["cells"].as_array().unwrap(),
    );
    assert_eq!(oc.len(), 5, "same cell count");
    assert_eq!(out["metadata"], src["metadata"]);
    assert_eq!(out["nbformat"], 4);
    for (s, o) in sc.iter().zip(oc) {
        assert_eq!(o["id"], s["id"], "same ids in the same order");
        assert_eq!(o["cell_type"], s["cell_type"]);
        if s["cell_type"] == "markdown" {
            assert_ne!(o["source"], s["source"], "cell {} translated", s["id"]);
            assert_eq!(
                o["source"].is_array(),
                s["source"].is_array(),
                "the source keeps its shape"
            );
            assert_eq!(o["attachments"], s["attachments"]);
            assert_eq!(o["metadata"], s["metadata"]);
        } else {
            assert_eq!(o, s, "code and raw cells are kept whole, outputs included");
        }
    }
    // The structure inside the translated cells survives: headings, the inline code, the
    // attachment link.
    let cell = |i: usize| -> String {
        match &oc[i]["source"] {
            serde_json::Value::String(s) => s.clone(),
            v => v
                .as_array()
                .unwrap()
                .iter()
                .map(|l| l.as_str().unwrap())
                .collect(),
        }
    };
    assert!(cell(0).starts_with("# "), "{}", cell(0));
    assert!(
        cell(2).starts_with("## ") && cell(2).contains("`done`"),
        "{}",
        cell(2)
    );
    assert!(cell(4).contains("](attachment:fig.png)"), "{}", cell(4));
    // Byte-stable: putting the source texts back into the output gives the input.
    let nb = Notebook::parse(&output).unwrap();
    let sources: Vec<String> = Notebook::parse(&input)
        .unwrap()
        .cell_ranges()
        .iter()
        .map(|r| Notebook::parse(&input).unwrap().view()[r.clone()].to_string())
        .collect();
    assert_eq!(nb.render(&sources), input);
}

#[test]
fn a_hand_edited_notebook_cell_is_recorded_and_kept() {
    let (c, _) = run_notebook();
    let output = c.read("nb/out/agents.ipynb");
    let mut v: serde_json::Value = serde_json::from_str(&output).unwrap();
    v["cells"][2]["source"] =
        "## 循环\n\n编辑改过的一段：任务完成时循环停止，智能体报告 `done`。".into();
    // Jupyter saves the whole file again, in its own formatting.
    c.write("nb/out/agents.ipynb", &jupyter(&v));
    let out = c.cmd("run", &[]).output().unwrap();
    assert_code(&out, 0);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("kept 1 unit(s) edited by hand"), "{err}");
    let after: serde_json::Value = serde_json::from_str(&c.read("nb/out/agents.ipynb")).unwrap();
    assert_eq!(
        after["cells"][2]["source"],
        "## 循环\n\n编辑改过的一段：任务完成时循环停止，智能体报告 `done`。"
    );
    assert_eq!(after["cells"][1], v["cells"][1]);
}

#[test]
fn a_notebook_that_is_not_nbformat_4_is_a_usage_error() {
    let c = TestCampaign::with_chapters("nb", &["old.ipynb"], "");
    c.write("old.ipynb", r#"{"nbformat": 3, "worksheets": []}"#);
    let out = c.cmd("run", &[]).output().unwrap();
    assert_code(&out, 2);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("old.ipynb") && err.contains("nbconvert"),
        "{err}"
    );
}

#[booktr_test_needs::needs(nbformat)]
#[test]
fn translated_notebook_is_valid_for_nbformat() {
    let have = std::process::Command::new("python3")
        .args(["-c", "import nbformat"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !have {
        if std::env::var("BOOKTR_REQUIRE_NBFORMAT").is_ok_and(|v| v == "1") {
            panic!("nbformat is required (pip install nbformat)");
        }
        eprintln!("skipped: python3 with nbformat is not installed (pip install nbformat)");
        return;
    }
    let (c, _) = run_notebook();
    let script = r#"
import sys, nbformat
for p in ["agents.ipynb", "nb/out/agents.ipynb"]:
    nb = nbformat.read(p, as_version=4)
    nbformat.validate(nb)
src = nbformat.read("agents.ipynb", as_version=4)
out = nbformat.read("nb/out/agents.ipynb", as_version=4)
assert [c.id for c in out.cells] == [c.id for c in src.cells]
assert [c.cell_type for c in out.cells] == [c.cell_type for c in src.cells]
changed = [c.id for s, c in zip(src.cells, out.cells) if s.source != c.source]
assert changed == ["intro", "loop", "fig"], changed
print("nbformat", nbformat.__version__, "validated", len(out.cells), "cells")
"#;
    c.write("check.py", script);
    let out = std::process::Command::new("python3")
        .arg("check.py")
        .current_dir(c.dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "nbformat rejected the translated notebook:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!("{}", String::from_utf8_lossy(&out.stdout).trim());
}
