//! The editor's marks on findings as the state holds them: every journaled
//! `finding_marked` record, the newest per finding id, and the review CSVs already read back.
//! Recording marks and reading the review CSV is the operations' (`ops/mark_journal.rs`).

use std::collections::{HashMap, HashSet};

use serde::Serialize;

use crate::qa::findings::editor_marks::{self as qm, CheckPrecision, Mark};

/// One journaled mark (a `finding_marked` event of the journal).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MarkRecord {
    /// Journal sequence number (`u64::MAX` for a mark read by `status` and not yet journaled).
    pub seq: u64,
    /// The finding's id.
    pub id: String,
    /// `None`: the editor removed the mark.
    pub mark: Option<Mark>,
    /// The editor's note (may be empty).
    pub note: String,
    /// The finding's unit id (empty for a chapter-level finding), chapter key and check.
    pub unit: String,
    pub chapter: String,
    pub check: String,
    /// sha256 of the unit's final text when marked (empty for a chapter-level finding).
    pub text_sha256: String,
    /// `cli` or `csv`.
    pub via: String,
}

/// Every journaled mark, newest per id.
#[derive(Debug, Clone, Default)]
pub struct Marks {
    records: Vec<MarkRecord>,
    newest: HashMap<String, usize>,
    /// sha256 of every review CSV whose changes were journaled (read again only when changed).
    applied_csv: HashSet<String>,
}

impl Marks {
    /// Adds a record (journal order); `csv_sha256` names the review CSV it came from.
    pub fn push(&mut self, r: MarkRecord, csv_sha256: &str) {
        if !csv_sha256.is_empty() {
            self.applied_csv.insert(csv_sha256.to_string());
        }
        self.newest.insert(r.id.clone(), self.records.len());
        self.records.push(r);
    }

    /// The newest record of finding `id`.
    pub fn get(&self, id: &str) -> Option<&MarkRecord> {
        self.newest.get(id).map(|&i| &self.records[i])
    }

    /// The newest record of every id that still carries a mark, by id.
    pub fn current(&self) -> Vec<&MarkRecord> {
        let mut v: Vec<&MarkRecord> = self
            .newest
            .values()
            .map(|&i| &self.records[i])
            .filter(|r| r.mark.is_some())
            .collect();
        v.sort_by(|a, b| a.id.cmp(&b.id));
        v
    }

    /// Every record, in journal order.
    pub fn records(&self) -> &[MarkRecord] {
        &self.records
    }

    /// Whether the review CSV with this sha256 was already read back.
    pub fn csv_applied(&self, sha256: &str) -> bool {
        self.applied_csv.contains(sha256)
    }

    /// Precision per check over the newest mark of every marked id ([`qm::precision`]). Marks
    /// cleared by a later change of the text count too: the editor's judgment of a finding of
    /// that check stays evidence of how precise the check is in this campaign, and the
    /// Manager, the verdict and the reports then agree without re-running QA.
    pub fn precision(&self, threshold: f64) -> Vec<CheckPrecision> {
        let cur = self.current();
        qm::precision(
            cur.iter()
                .map(|r| (r.check.as_str(), r.mark.expect("current"))),
            threshold,
        )
    }
}
