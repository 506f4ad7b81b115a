//! The labelled set of translation pairs (`tests/fixtures/qa-labelled/pairs.jsonl`, written by
//! `make.py` beside it) and the per-check scoring shared by `tests/it/qa_labelled.rs` and
//! `benches/qa_labelled.rs`.

#![allow(dead_code)]

use std::collections::BTreeMap;

use booktr::lang::Lang;
use booktr::qa::{self, Finding, QaContext, Severity};
use booktr::termbase::{Entry, Origin, Termbase};

pub mod multilingual;
pub mod plant;
pub mod real;

/// The records of a JSON-lines file, one per non-blank line (none when the file is absent); a
/// bad line panics naming the file.
pub fn read_jsonl<T: serde::de::DeserializeOwned>(path: &std::path::Path) -> Vec<T> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{}: {e}: {l}", path.display())))
        .collect()
}

/// One labelled pair.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct Pair {
    pub id: String,
    /// Target language code.
    pub lang: String,
    pub source: String,
    pub target: String,
    /// The check that must report an error, or `None` for a faithful pair.
    pub expected_check: Option<String>,
    /// House-style glossary entries in force for this pair: `[source, target, forbidden…]`
    /// (none when absent).
    #[serde(default)]
    pub glossary: Vec<Vec<String>>,
    /// The campaign's `code_comments` for this pair (`keep` when absent).
    #[serde(default)]
    pub code_comments: Option<String>,
}

/// Every pair of the set.
pub fn pairs() -> Vec<Pair> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/qa-labelled/pairs.jsonl"
    );
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{path}: {e}: {l}")))
        .collect()
}

/// The error findings of every per-unit check on one pair (English source).
pub fn errors(p: &Pair) -> Vec<Finding> {
    let termbase = Termbase::from_entries(p.glossary.iter().map(|row| Entry {
        source: row[0].clone(),
        target: row[1].clone(),
        note: String::new(),
        origin: Origin::HouseStyle,
        forbidden: row[2..].to_vec(),
        variants: Vec::new(),
    }));
    let mut ctx = QaContext::new(&Lang::parse("en"), &Lang::parse(&p.lang), &termbase);
    if let Some(mode) = &p.code_comments {
        ctx.code_comments = mode.parse().unwrap_or_else(|e| panic!("{}: {e}", p.id));
    }
    qa::check_unit(&ctx, &p.id, "labelled", &p.source, &p.target)
        .into_iter()
        .filter(|f| f.severity == Severity::Error)
        .collect()
}

/// Per check: true positives (it fired on a pair labelled with it), false positives (it fired
/// on a faithful pair) and false negatives (it did not fire on a pair labelled with it).
/// Firing on a pair labelled with another check counts as neither: a fault may break two
/// rules at once (a lost alignment row also changes the block tree).
#[derive(Debug, Default, Clone, Copy, serde::Serialize)]
pub struct Score {
    pub tp: usize,
    pub fp: usize,
    pub fn_: usize,
    pub also: usize,
}

impl Score {
    pub fn precision(&self) -> f64 {
        if self.tp + self.fp == 0 {
            1.0
        } else {
            self.tp as f64 / (self.tp + self.fp) as f64
        }
    }
    pub fn recall(&self) -> f64 {
        if self.tp + self.fn_ == 0 {
            1.0
        } else {
            self.tp as f64 / (self.tp + self.fn_) as f64
        }
    }
}

/// Scores every check over the set; also returns the ids of misses and false alarms.
pub fn score(pairs: &[Pair]) -> (BTreeMap<String, Score>, Vec<String>) {
    let mut by: BTreeMap<String, Score> = BTreeMap::new();
    let mut wrong = Vec::new();
    for p in pairs {
        let errs = errors(p);
        let fired: std::collections::BTreeSet<&str> =
            errs.iter().map(|f| f.check.as_str()).collect();
        if let Some(e) = &p.expected_check {
            let s = by.entry(e.clone()).or_default();
            if fired.contains(e.as_str()) {
                s.tp += 1;
            } else {
                s.fn_ += 1;
                wrong.push(format!("{}: no {e} error; got {:?}", p.id, errs));
            }
        }
        for c in &fired {
            if p.expected_check.as_deref() == Some(*c) {
                continue;
            }
            let s = by.entry(c.to_string()).or_default();
            if p.expected_check.is_none() {
                s.fp += 1;
                wrong.push(format!("{}: false {c} error: {:?}", p.id, errs));
            } else {
                s.also += 1;
            }
        }
    }
    (by, wrong)
}
