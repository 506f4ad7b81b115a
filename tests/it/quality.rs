//! The quality benchmark (`cargo bench --bench quality`, [`booktr::experiment::quality`])
//! replayed from its recorded real-model answers (`tests/fixtures/quality/answers.jsonl`, the
//! 1.5B; `answers-0.5b.jsonl`, the 0.5B): every arm and the judge run again against the fake
//! server, and the figures must be the ones in `validation/bench/quality.json`
//! (`quality-0.5b.json`) (chrF++ and intervals, QA errors by check, house-style
//! adherence, tokens, model time, the judge's agreement); and booktr's chrF++ on the
//! benchmark's pairs (each arm's segments against the human zh edition) must agree with
//! sacreBLEU's `CHRF(word_order=2)` to 4 decimals. Skipped with a printed reason without the
//! corpus (and, for the second, without python3's sacrebleu).

use std::sync::OnceLock;

use booktr::experiment::quality::{Figures, QualityArm};
use serde_json::{Value, json};

use crate::support::corpus_dir;
use crate::support::quality::{self, Mode, Outcome};

/// The figures `model`'s recording wrote (`validation/bench/quality[-<model>].json`).
fn recorded(model: &str) -> Value {
    let path = quality::figures_file_for(model);
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run `BOOKTR_QUALITY_MODEL={model} cargo bench --bench quality`",
            path.display()
        )
    }))
    .unwrap()
}

/// One replay of `model`'s recording per test binary, shared by the tests.
fn replay(model: &str) -> Option<&'static Outcome> {
    static OUT: [OnceLock<Outcome>; 2] = [OnceLock::new(), OnceLock::new()];
    let i = quality::MODELS.iter().position(|m| *m == model)?;
    let corpus = corpus_dir()?;
    Some(OUT[i].get_or_init(|| {
        let rec = recorded(model);
        let arms: Vec<QualityArm> = rec["figures"]["arms"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| serde_json::from_value(a["arm"].clone()).unwrap())
            .collect();
        let judge = !rec["figures"]["judge"].is_null();
        quality::run_on(
            &corpus,
            Mode::Replay,
            &arms,
            judge,
            &quality::fixture_file_for(model),
        )
    }))
}

#[booktr_test_needs::needs(corpus)]
#[test]
fn quality_benchmark_replay_gives_the_recorded_figures() {
    replay_gives_the_recorded_figures("1.5b");
}

#[booktr_test_needs::needs(corpus)]
#[test]
fn quality_benchmark_replay_gives_the_recorded_figures_of_the_0_5b() {
    replay_gives_the_recorded_figures("0.5b");
}

/// `model`'s recording replayed gives the figures it wrote.
fn replay_gives_the_recorded_figures(model: &str) {
    let Some(out) = replay(model) else { return };
    assert!(
        out.misses.is_empty(),
        "{model}: {} request(s) without a recorded answer, e.g. {:?}",
        out.misses.len(),
        out.misses.first()
    );
    let rec = recorded(model);
    let want: Figures = serde_json::from_value(rec["figures"].clone()).unwrap();
    // Real figures, not an empty result: the orchestration translated units and scored above
    // zero, and every arm that translated units scored above zero.
    assert!(want.arms.len() >= 2 && want.segments >= 4, "{want:?}");
    let orch = want
        .arms
        .iter()
        .find(|a| a.arm == QualityArm::Orchestration)
        .expect("an orchestration arm");
    assert!(
        orch.units_translated > 0 && orch.completion_tokens > 0,
        "{orch:?}"
    );
    for a in &want.arms {
        assert!(a.units_translated == 0 || a.chrf_pp.value > 0.0, "{a:?}");
    }
    for (got, want) in out.figures.arms.iter().zip(&want.arms) {
        assert_eq!(got, want, "arm {}", want.arm.as_str());
    }
    assert_eq!(out.figures, want);
    let wall: std::collections::BTreeMap<String, f64> =
        serde_json::from_value(rec["recording_wall_s"].clone()).unwrap();
    assert_eq!(
        rec["table"].as_str(),
        Some(booktr::experiment::quality::table(&out.figures, Some(&wall)).as_str())
    );
    // The tables people read are the recording's: README shows the 1.5B's, the benchmarks
    // page both.
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let table = rec["table"].as_str().unwrap().trim_end();
    let mut shown = vec!["docs/src/benchmarks.md"];
    if model == quality::MODELS[0] {
        shown.push("README.md");
    }
    for doc in shown {
        let text = std::fs::read_to_string(root.join(doc)).unwrap();
        assert!(
            text.contains(table),
            "{doc} does not show {model}'s recorded table; paste `table` from {}",
            quality::figures_file_for(model).display()
        );
    }
}

#[booktr_test_needs::needs(corpus, sacrebleu)]
#[test]
fn chrf_pp_agrees_with_sacrebleu_on_the_benchmark_pairs() {
    let Some(out) = replay(quality::MODELS[0]) else {
        return;
    };
    let ok = std::process::Command::new("python3")
        .args(["-c", "import sacrebleu"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            !std::env::var("BOOKTR_REQUIRE_SACREBLEU").is_ok_and(|v| v == "1"),
            "BOOKTR_REQUIRE_SACREBLEU=1 but python3 cannot import sacrebleu"
        );
        eprintln!("skipped: python3 cannot import sacrebleu (pip install sacrebleu)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("pairs.json");
    let arms: Vec<(String, &Vec<String>)> = out
        .hypotheses
        .iter()
        .map(|(a, h)| (a.as_str().to_string(), h))
        .collect();
    std::fs::write(
        &input,
        json!({"refs": out.references, "arms": arms}).to_string(),
    )
    .unwrap();
    let script = r#"
import json, sys
from sacrebleu.metrics import CHRF
m = CHRF(word_order=2)
d = json.load(open(sys.argv[1], encoding="utf-8"))
out = {}
for name, hyps in d["arms"]:
    out[name] = {"corpus": m.corpus_score(hyps, [d["refs"]]).score,
                 "sentences": [m.sentence_score(h, [r]).score for h, r in zip(hyps, d["refs"])]}
print(json.dumps(out))
"#;
    let o = std::process::Command::new("python3")
        .args(["-c", script, input.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let sb: Value = serde_json::from_slice(&o.stdout).unwrap();
    let mut compared = 0;
    for (arm, hyps) in &out.hypotheses {
        let want = sb[arm.as_str()]["corpus"].as_f64().unwrap();
        let got = booktr::experiment::chrf::corpus_plus(
            hyps.iter()
                .map(String::as_str)
                .zip(out.references.iter().map(String::as_str)),
        );
        assert!(
            (got - want).abs() < 0.5e-4,
            "{}: sacreBLEU chrF++ {want}, booktr {got}",
            arm.as_str()
        );
        for (i, (h, r)) in hyps.iter().zip(&out.references).enumerate() {
            let want = sb[arm.as_str()]["sentences"][i].as_f64().unwrap();
            let got = booktr::experiment::chrf::sentence_plus(h, r);
            assert!(
                (got - want).abs() < 0.5e-4,
                "{} segment {i}: sacreBLEU chrF++ {want}, booktr {got}",
                arm.as_str()
            );
            compared += 1;
        }
    }
    assert!(compared >= 20, "only {compared} segments compared");
    eprintln!(
        "chrF++ agreed with sacreBLEU on {compared} segments and {} corpus scores",
        out.hypotheses.len()
    );
}
