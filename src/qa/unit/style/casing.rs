//! `style_term_casing`: an English term the translation keeps is written with the source's
//! casing (`GitHub`, not `Github`; `JSON`, not `json`).
//!
//! A **term** is a word of the source's prose (a run of ASCII letters and digits with at least
//! two letters) whose casing is distinctive: a capital after its first letter (`GitHub`,
//! `JSON`, `macOS`, `iPhone`, `OpenAI`). A plain capitalised word (`Agent`, `The`) is not one,
//! since a sentence start capitalises any word. Every casing the source uses for the same
//! letters is accepted. A word of the target's prose whose letters, ignoring case, are those
//! of a term but whose casing is none of the source's is a finding.
//!
//! For a target written in Latin script, an all-lower-case word of at most four letters is
//! left alone: it may be a word of the target language (French `ai` beside the source's `AI`,
//! German `es` beside `ES`).

use std::collections::{HashMap, HashSet};

use super::Hits;
use super::view::View;
use crate::lang::{Lang, Script};

/// Words of the view: `(first index, last index)` of each run of ASCII letters and digits
/// (with offsets) that holds at least two letters.
fn words(v: &View) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let n = v.chars.len();
    let mut i = 0;
    while i < n {
        let w = |k: usize| v.chars[k].c.is_ascii_alphanumeric() && v.chars[k].at.is_some();
        if !w(i) {
            i += 1;
            continue;
        }
        let s = i;
        while i < n && w(i) {
            i += 1;
        }
        if v.chars[s..i]
            .iter()
            .filter(|c| c.c.is_ascii_alphabetic())
            .count()
            >= 2
        {
            out.push((s, i - 1));
        }
    }
    out
}

fn text(v: &View, (s, e): (usize, usize)) -> String {
    v.chars[s..=e].iter().map(|c| c.c).collect()
}

/// Whether `w` has a capital after its first letter.
fn distinctive(w: &str) -> bool {
    w.chars().skip(1).any(|c| c.is_ascii_uppercase())
}

/// Runs the check with `source` and `target` views (see the module docs).
pub fn check(source: &View, target: &View, target_lang: &Lang, hits: &mut Hits) {
    let mut casings: HashMap<String, HashSet<String>> = HashMap::new();
    let mut terms: HashMap<String, String> = HashMap::new();
    for r in words(source) {
        let w = text(source, r);
        let key = w.to_ascii_lowercase();
        if distinctive(&w) {
            terms.entry(key.clone()).or_insert_with(|| w.clone());
        }
        casings.entry(key).or_default().insert(w);
    }
    if terms.is_empty() {
        return;
    }
    let latin = target_lang.script == Script::Latin;
    for r in words(target) {
        let w = text(target, r);
        let key = w.to_ascii_lowercase();
        let Some(term) = terms.get(&key) else {
            continue;
        };
        if casings[&key].contains(&w) {
            continue;
        }
        if latin && w.len() <= 4 && !w.chars().any(|c| c.is_ascii_uppercase()) {
            continue;
        }
        hits.push(
            target,
            r.0,
            r.1,
            format!(
                "`{w}` is cased otherwise than the source's `{term}`; keep the source's casing"
            ),
        );
    }
}
