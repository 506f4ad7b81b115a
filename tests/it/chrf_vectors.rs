//! booktr's chrF and chrF++ agree with sacreBLEU's (the reference implementation of Popović 2015
//! and 2017) to 4 decimals (|difference| < 0.00005) on stored vectors, computed by sacreBLEU
//! with `tests/fixtures/chrf_vectors.py`; these tests need no Python.

use booktr::experiment::chrf;

/// Agreement to 4 decimals: the scores round to the same 4-decimal figure up to float noise.
const TOLERANCE: f64 = 0.5e-4;

fn vectors() -> serde_json::Value {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/chrf_vectors.json"
    ))
    .unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn sentence_scores_match_sacrebleu() {
    let v = vectors();
    let cases = v["sentence"].as_array().unwrap();
    assert!(cases.len() >= 50, "{} vectors", cases.len());
    let mut nonzero = 0;
    for (i, c) in cases.iter().enumerate() {
        let (hyp, reference) = (c["hyp"].as_str().unwrap(), c["ref"].as_str().unwrap());
        let want = c["score"].as_f64().unwrap();
        let got = chrf::sentence(hyp, reference);
        assert!(
            (got - want).abs() < TOLERANCE,
            "vector {i}: sacreBLEU {want}, booktr {got}\nhyp: {hyp:?}\nref: {reference:?}"
        );
        let want_pp = c["score_pp"].as_f64().unwrap();
        let got_pp = chrf::sentence_plus(hyp, reference);
        assert!(
            (got_pp - want_pp).abs() < TOLERANCE,
            "vector {i}: sacreBLEU chrF++ {want_pp}, booktr {got_pp}\nhyp: {hyp:?}\nref: {reference:?}"
        );
        if want > 0.0 && want < 100.0 {
            nonzero += 1;
        }
    }
    assert!(
        nonzero >= 30,
        "only {nonzero} vectors strictly between 0 and 100"
    );
}

#[test]
fn corpus_scores_match_sacrebleu() {
    let v = vectors();
    let cases = v["corpus"].as_array().unwrap();
    assert!(cases.len() >= 5);
    for (i, c) in cases.iter().enumerate() {
        let hyps: Vec<&str> = c["hyps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h.as_str().unwrap())
            .collect();
        let refs: Vec<&str> = c["refs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h.as_str().unwrap())
            .collect();
        let want = c["score"].as_f64().unwrap();
        let got = chrf::corpus(hyps.iter().copied().zip(refs.iter().copied()));
        assert!(
            (got - want).abs() < TOLERANCE,
            "corpus vector {i}: sacreBLEU {want}, booktr {got}"
        );
        let want_pp = c["score_pp"].as_f64().unwrap();
        let got_pp = chrf::corpus_plus(hyps.iter().copied().zip(refs.iter().copied()));
        assert!(
            (got_pp - want_pp).abs() < TOLERANCE,
            "corpus vector {i}: sacreBLEU chrF++ {want_pp}, booktr {got_pp}"
        );
    }
}
