//! How the editor's marks apply to findings: [`review`] applies them to the findings on the
//! final texts (called by the verdict, so status, exit code and reports agree);
//! [`review_unit`] does the same for one unit's text at a round (the Manager's forced
//! revisions and feedback), so a dismissed finding sends no revision. A mark holds while the
//! finding's unit has the text it was made on and the finding's id is still found; otherwise
//! it is cleared ([`Review::cleared`]). Recording marks is
//! the operations' (`ops/mark_journal.rs`).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::Serialize;

use super::Campaign;
use super::state::State;
use super::state::marks::{MarkRecord, Marks};
use crate::qa::Finding;
use crate::qa::findings::editor_marks::{self as qm, CheckPrecision, Mark};

/// Every mark record of unit `unit` (its id; `""` for chapter-level findings), in journal
/// order, for a unit's history (`booktr explain`): each with the finding id, the mark (`None`
/// when removed), the note, the check, `via` and the sha256 of the text it was made on. Whether
/// a mark still holds is [`review`]'s to say (its `cleared` list).
pub fn unit_marks<'a>(s: &'a State, unit: &str) -> Vec<&'a MarkRecord> {
    s.marks()
        .records()
        .iter()
        .filter(|r| r.unit == unit)
        .collect()
}

/// A mark that no longer applies.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClearedMark {
    /// The finding id the mark was made on, the mark, and the finding's unit and check.
    pub id: String,
    pub mark: Mark,
    pub unit: String,
    pub check: String,
    /// `the unit's text changed` or `the finding is no longer found (its evidence changed or
    /// it was fixed)`.
    pub reason: String,
}

/// The editor's review over the final texts (report.json `finding_marks`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Review {
    /// Campaign key `mark_precision_threshold`.
    pub threshold: f64,
    /// Marks a check needs before its precision can downgrade it ([`qm::MIN_MARKS`]).
    pub min_marks: usize,
    /// Findings on the final texts with a confirmed mark that holds.
    pub confirmed: usize,
    /// Findings on the final texts with a dismissed mark that holds.
    pub dismissed: usize,
    /// Precision per marked check ([`Marks::precision`]).
    pub precision: Vec<CheckPrecision>,
    /// Checks downgraded to warnings for this campaign.
    pub downgraded: Vec<String>,
    /// Marks that no longer apply, by id.
    pub cleared: Vec<ClearedMark>,
}

/// The fingerprint a unit's finding ids hash: the unit's fingerprint in the state, else
/// (before the Glossary stage) sha256 of its source text.
pub fn unit_fp(c: &Campaign, s: &State, u: &crate::book::Unit) -> String {
    s.fp(&u.id)
        .map(str::to_string)
        .unwrap_or_else(|| crate::util::sha256_hex(c.source_text(u)))
}

/// The fingerprint chapter-level findings of chapter `key` hash.
pub fn chapter_fp(key: &str) -> String {
    format!("chapter:{key}")
}

/// Fills in the ids of chapter-level findings (each by its chapter's [`chapter_fp`]).
pub fn assign_chapter_ids(chapter: &mut [Finding]) {
    let mut by: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, f) in chapter.iter().enumerate() {
        by.entry(f.chapter.clone()).or_default().push(i);
    }
    for (key, idx) in by {
        let mut group: Vec<Finding> = idx.iter().map(|&i| chapter[i].clone()).collect();
        qm::assign_ids(&chapter_fp(&key), &mut group);
        for (i, f) in idx.into_iter().zip(group) {
            chapter[i].id = f.id;
        }
    }
}

/// The mark that holds for `f` (id filled in) on a text with sha256 `text_sha`.
fn holding<'a>(m: &'a Marks, f: &Finding, text_sha: &str) -> Option<&'a MarkRecord> {
    m.get(&f.id)
        .filter(|r| r.mark.is_some() && r.text_sha256 == text_sha)
}

/// The campaign's downgraded checks (see [`Marks::precision`]).
pub fn downgraded(c: &Campaign, s: &State) -> BTreeSet<String> {
    qm::downgraded_checks(&s.marks().precision(c.plan.mark_precision_threshold))
        .into_iter()
        .collect()
}

/// Applies the marks and downgrades to every finding on the final texts: `units` (one list
/// per unit of `c.units`, the unit's final texts in `finals`) and `chapter` (chapter-level
/// findings). Ids are assigned first. Returns the review for the reports.
pub fn review(
    c: &Campaign,
    s: &State,
    units: &mut [Vec<Finding>],
    chapter: &mut [Finding],
    finals: &[&str],
) -> Review {
    let marks = s.marks();
    let precision = marks.precision(c.plan.mark_precision_threshold);
    let down: BTreeSet<String> = qm::downgraded_checks(&precision).into_iter().collect();
    let mut seen: HashMap<&str, bool> = HashMap::new();
    let mut r = Review {
        threshold: c.plan.mark_precision_threshold,
        min_marks: qm::MIN_MARKS,
        ..Review::default()
    };
    let count = |f: &Finding, r: &mut Review| match f.review.as_ref().and_then(|x| x.mark) {
        Some(Mark::Confirmed) => r.confirmed += 1,
        Some(Mark::Dismissed) => r.dismissed += 1,
        None => {}
    };
    for ((u, list), text) in c.units.iter().zip(units.iter_mut()).zip(finals) {
        qm::assign_ids(&unit_fp(c, s, u), list);
        let sha = crate::util::sha256_hex(text);
        for f in list.iter_mut() {
            let m = holding(marks, f, &sha);
            if let Some(rec) = marks.get(&f.id) {
                seen.insert(rec.id.as_str(), m.is_some());
            }
            qm::apply(
                f,
                m.map(|m| (m.mark.expect("holding"), m.note.as_str())),
                down.contains(&f.check),
            );
            count(f, &mut r);
        }
    }
    assign_chapter_ids(chapter);
    for f in chapter.iter_mut() {
        let m = holding(marks, f, "");
        if let Some(rec) = marks.get(&f.id) {
            seen.insert(rec.id.as_str(), m.is_some());
        }
        qm::apply(
            f,
            m.map(|m| (m.mark.expect("holding"), m.note.as_str())),
            down.contains(&f.check),
        );
        count(f, &mut r);
    }
    for rec in marks.current() {
        let reason = match seen.get(rec.id.as_str()) {
            Some(true) => continue,
            Some(false) => "the unit's text changed since it was marked",
            None => "the finding is no longer found (its evidence changed, or it was fixed)",
        };
        r.cleared.push(ClearedMark {
            id: rec.id.clone(),
            mark: rec.mark.expect("current"),
            unit: rec.unit.clone(),
            check: rec.check.clone(),
            reason: reason.into(),
        });
    }
    r.downgraded = down.into_iter().collect();
    r.precision = precision;
    r
}

/// `findings` of unit `unit` (id) whose text is `text`, as they count after the editor's
/// review (ids assigned, marks that hold for `text` and the downgrades applied; see
/// [`review`]). The Manager uses it for the text of a round.
pub fn review_unit(
    c: &Campaign,
    s: &State,
    unit: &str,
    text: &str,
    findings: &[Finding],
) -> Vec<Finding> {
    let mut v = findings.to_vec();
    if s.marks().records().is_empty() {
        return v;
    }
    let Some(u) = c.units.iter().find(|u| u.id == unit) else {
        return v;
    };
    qm::assign_ids(&unit_fp(c, s, u), &mut v);
    let down = downgraded(c, s);
    let sha = crate::util::sha256_hex(text);
    for f in &mut v {
        let m = holding(s.marks(), f, &sha).map(|m| (m.mark.expect("holding"), m.note.clone()));
        qm::apply(
            f,
            m.as_ref().map(|(k, n)| (*k, n.as_str())),
            down.contains(&f.check),
        );
    }
    v
}

/// Whether any of `findings` (of unit `unit` with text `text`) is still an error after the
/// editor's review ([`review_unit`]).
pub fn has_live_error(
    c: &Campaign,
    s: &State,
    unit: &str,
    text: &str,
    findings: &[Finding],
) -> bool {
    if !crate::qa::has_error(findings) {
        return false;
    }
    crate::qa::has_error(&review_unit(c, s, unit, text, findings))
}
