//! Editors confirm or dismiss findings: the campaign half. An editor's mark is a
//! journal record ([`Event::FindingMarked`]), made by `booktr qa confirm|dismiss` ([`mark`])
//! or read back from the `findings-review.csv` of the report folder ([`csv_changes`]); the
//! newest record of an id is its mark ([`Marks`]).
//!
//! A mark holds while the finding's unit has the text it was made on (sha256 of the unit's
//! final text, recorded in the mark) and the finding's id is still found (its id hashes the
//! unit fingerprint, the check and the evidence, see [`crate::qa::findings::editor_marks::finding_id`]). When
//! either changed the mark is *cleared*: it no longer applies, and the reports list it as
//! cleared with the reason ([`Review::cleared`]). Nothing is deleted from the journal; the
//! same text with the same evidence would find the mark again, since the editor's judgment
//! was about exactly that.
//!
//! [`review`] applies the marks to the findings on the final texts (called by the verdict,
//! so status, exit code and reports agree); [`review_unit`] does the same for one unit's text
//! at a round (the Manager's forced revisions and feedback), so a dismissed finding sends no
//! revision.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::PathBuf;

use serde::Serialize;

use super::Campaign;
use super::state::State;
use super::store::{Event, Store};
use crate::exit::UsageError;
use crate::qa::findings::editor_marks::{self as qm, CheckPrecision, Mark};
use crate::qa::{Finding, Severity};

/// The review CSV in the report folder.
pub const REVIEW_CSV: &str = "findings-review.csv";

/// Columns of [`REVIEW_CSV`]. `mark` and `note` are the editor's; `recorded_mark` and
/// `recorded_note` are the mark as journaled when the file was written (a row whose `mark` or
/// `note` differ from them is an editor's change); the others describe the finding.
pub const REVIEW_COLUMNS: [&str; 12] = [
    "id",
    "mark",
    "note",
    "severity",
    "check",
    "chapter",
    "unit",
    "message",
    "source_excerpt",
    "target_excerpt",
    "recorded_mark",
    "recorded_note",
];

/// One journaled mark (an [`Event::FindingMarked`] record).
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

/// A mark to journal.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// The finding id.
    pub id: String,
    /// The new mark (`None`: remove the mark).
    pub mark: Option<Mark>,
    /// The editor's note.
    pub note: String,
}

/// The journal record of `change` for finding `f` on a text with sha256 `text_sha`.
fn event_of(change: &Change, f: &Finding, text_sha: &str, via: &str, csv_sha: &str) -> Event {
    Event::FindingMarked {
        id: change.id.clone(),
        mark: change.mark,
        note: change.note.clone(),
        unit: f.unit.clone(),
        chapter: f.chapter.clone(),
        check: f.check.clone(),
        text_sha256: text_sha.to_string(),
        via: via.to_string(),
        csv_sha256: csv_sha.to_string(),
    }
}

/// Every finding on the final texts by id, with the sha256 of its unit's final text (empty
/// for chapter-level findings), from [`super::verdict::final_qa`].
fn findings_by_id(c: &Campaign, s: &State) -> BTreeMap<String, (Finding, String)> {
    let fq = super::verdict::final_qa(c, s);
    let mut out = BTreeMap::new();
    for (u, list) in c.units.iter().zip(&fq.units) {
        let sha = crate::util::sha256_hex(super::edits::final_text(c, s, u));
        for f in list {
            out.insert(f.id.clone(), (f.clone(), sha.clone()));
        }
    }
    for f in &fq.chapter {
        out.insert(f.id.clone(), (f.clone(), String::new()));
    }
    out
}

/// The remedy for an unknown id, for messages.
fn unknown_id_message(c: &Campaign, ids: &[String]) -> String {
    format!(
        "{} names no finding on the final texts of {}: {}. Finding ids are the `id` column of {} and the `id` of each finding in report.json; run `booktr validate {}` to write them for the texts as they stand (an id changes when its unit's text or evidence changes)",
        if ids.len() == 1 {
            "this id"
        } else {
            "these ids"
        },
        c.plan.show(&c.plan.campaign_file),
        ids.join(", "),
        c.plan.show(&c.plan.report_dir.join(REVIEW_CSV)),
        c.plan.show(&c.plan.campaign_file),
    )
}

/// `booktr qa confirm|dismiss`: journals `mark` (with `note`) for each finding of `ids` on the
/// final texts. Returns the records' count. Errors: an id names no finding (a [`UsageError`]
/// with the remedy, nothing journaled); I/O while appending.
pub fn mark(
    c: &Campaign,
    store: &mut Store,
    state: &mut State,
    ids: &[String],
    mark: Option<Mark>,
    note: &str,
) -> anyhow::Result<usize> {
    let found = findings_by_id(c, state);
    let unknown: Vec<String> = ids
        .iter()
        .filter(|i| !found.contains_key(i.trim()))
        .cloned()
        .collect();
    if !unknown.is_empty() {
        return Err(UsageError::new(unknown_id_message(c, &unknown)).into());
    }
    if mark == Some(Mark::Dismissed) {
        let facts: Vec<String> = ids
            .iter()
            .filter(|i| crate::qa::findings::editor_marks::undismissable(&found[i.trim()].0.check))
            .map(|i| format!("{} ({})", i.trim(), found[i.trim()].0.check))
            .collect();
        if !facts.is_empty() {
            return Err(UsageError::new(format!(
                "{} cannot be dismissed: a missing chapter, unit or ending is what the files lack, not a false positive. Run `booktr run {}` to translate what is missing, or translate it by hand and run `booktr validate`",
                facts.join(", "),
                c.plan.show(&c.plan.campaign_file)
            ))
            .into());
        }
    }
    let mut n = 0;
    for id in ids {
        let (f, sha) = &found[id.trim()];
        let change = Change {
            id: id.trim().to_string(),
            mark,
            note: note.to_string(),
        };
        super::commit::record_event(c, store, state, event_of(&change, f, sha, "cli", ""))?;
        n += 1;
    }
    Ok(n)
}

/// The review CSV's path.
pub fn csv_path(c: &Campaign) -> PathBuf {
    c.plan.report_dir.join(REVIEW_CSV)
}

/// One row of the review CSV as the editor left it.
#[derive(Debug, Clone, PartialEq)]
pub struct ReviewRow {
    /// 1-based line of the row (the header is line 1).
    pub line: usize,
    /// The finding id, and the mark and note as the editor left them.
    pub id: String,
    pub mark: Option<Mark>,
    pub note: String,
    /// The mark and note as journaled when the file was written.
    pub recorded_mark: Option<Mark>,
    pub recorded_note: String,
}

/// Why the review CSV could not be read ([`review_rows`]).
#[derive(Debug, Clone, PartialEq)]
pub enum RowsError {
    /// No `id`, `mark` and `note` columns.
    NotAReview,
    /// A row that is not CSV, or a `mark` that is no mark: `row N (finding ID): what`.
    Row(String),
}

/// Parses the review CSV bytes ([`review_csv`]'s layout; a UTF-8 BOM is skipped; columns are
/// found by header name, so an editor may reorder or add some). Rows without an id are
/// skipped. Cells are read back with [`super::desk::from_cell`]; the note is kept as written
/// (not trimmed), so writing then reading is lossless.
pub fn review_rows(bytes: &[u8]) -> Result<Vec<ReviewRow>, RowsError> {
    let body = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let mut rd = csv::ReaderBuilder::new().flexible(true).from_reader(body);
    let headers = rd.headers().map_err(|_| RowsError::NotAReview)?.clone();
    let col = |name: &str| headers.iter().position(|h| h.trim() == name);
    let (Some(ci), Some(cm), Some(cn)) = (col("id"), col("mark"), col("note")) else {
        return Err(RowsError::NotAReview);
    };
    let (crm, crn) = (col("recorded_mark"), col("recorded_note"));
    let mut out = Vec::new();
    for (i, rec) in rd.records().enumerate() {
        let line = i + 2;
        let rec = rec.map_err(|e| RowsError::Row(format!("row {line}: {e}")))?;
        let cell = |k: Option<usize>| {
            k.and_then(|k| rec.get(k))
                .map(super::desk::from_cell)
                .unwrap_or_default()
        };
        let id = cell(Some(ci)).trim().to_string();
        if id.is_empty() {
            continue;
        }
        let mark = Mark::parse(&cell(Some(cm)))
            .map_err(|m| RowsError::Row(format!("row {line} (finding {id}): {m}")))?;
        out.push(ReviewRow {
            line,
            id,
            mark,
            note: cell(Some(cn)),
            recorded_mark: Mark::parse(&cell(crm)).unwrap_or(None),
            recorded_note: cell(crn),
        });
    }
    Ok(out)
}

/// What reading the review CSV found.
#[derive(Debug, Default)]
pub struct CsvChanges {
    /// The events to journal (an editor's changes against the marks as recorded).
    pub events: Vec<Event>,
    /// Rows changed by the editor whose id names no finding on the final texts (skipped).
    pub unknown: Vec<String>,
}

/// The editor's changes in the review CSV ([`REVIEW_CSV`]): rows whose `mark` or `note`
/// differ from `recorded_mark`/`recorded_note` and from the mark as journaled now. Nothing
/// when the file is missing or was already read back as it stands. Errors (a
/// [`UsageError`]): a cell of `mark` that is no mark, naming the file, row and remedy; a file
/// that is not a review CSV.
pub fn csv_changes(c: &Campaign, s: &State) -> anyhow::Result<CsvChanges> {
    let path = csv_path(c);
    let Ok(bytes) = std::fs::read(&path) else {
        return Ok(CsvChanges::default());
    };
    let sha = crate::util::sha256_hex(&bytes);
    if s.marks().csv_applied(&sha) {
        return Ok(CsvChanges::default());
    }
    let shown = c.plan.show(&path);
    let parsed = review_rows(&bytes).map_err(|e| match e {
        RowsError::NotAReview => UsageError::new(format!(
            "{shown} is not a findings review: it needs the columns id, mark and note. Delete it; the next `booktr validate {}` writes it again",
            c.plan.show(&c.plan.campaign_file)
        )),
        RowsError::Row(m) => UsageError::new(format!("{shown}, {m}, then run again")),
    })?;
    let mut rows: Vec<(usize, Change)> = Vec::new();
    for r in parsed {
        if r.mark == r.recorded_mark && r.note == r.recorded_note {
            continue;
        }
        let now = s.marks().get(&r.id);
        if now.is_some_and(|x| x.mark == r.mark && x.note == r.note)
            || (now.is_none() && r.mark.is_none())
        {
            continue;
        }
        rows.push((
            r.line,
            Change {
                id: r.id,
                mark: r.mark,
                note: r.note,
            },
        ));
    }
    let mut out = CsvChanges::default();
    if rows.is_empty() {
        return Ok(out);
    }
    let found = findings_by_id(c, s);
    for (_, ch) in rows {
        match found.get(&ch.id) {
            Some((f, text_sha)) => out.events.push(event_of(&ch, f, text_sha, "csv", &sha)),
            None => out.unknown.push(ch.id),
        }
    }
    Ok(out)
}

/// Reads the review CSV back and journals the editor's changes (`run` and `validate`);
/// returns one line per change or skipped row for stderr.
pub fn journal_csv(
    c: &Campaign,
    store: &mut Store,
    state: &mut State,
) -> anyhow::Result<Vec<String>> {
    let ch = csv_changes(c, state)?;
    let mut lines = Vec::new();
    for e in ch.events {
        if let Event::FindingMarked { id, mark, .. } = &e {
            lines.push(format!(
                "{}: finding {id} {}",
                REVIEW_CSV,
                mark.map_or("unmarked", |m| m.as_str())
            ));
        }
        super::commit::record_event(c, store, state, e)?;
    }
    for id in ch.unknown {
        lines.push(format!(
            "{REVIEW_CSV}: finding {id} is no longer on the final texts; its row was skipped"
        ));
    }
    Ok(lines)
}

/// The review CSV bytes (UTF-8 with BOM) for `findings` (as reported: ids filled in, marks
/// applied). Cells are formula-safe ([`super::desk::to_cell`]).
pub fn review_csv<'a>(findings: impl IntoIterator<Item = &'a Finding>) -> anyhow::Result<Vec<u8>> {
    let mut w = csv::Writer::from_writer(b"\xEF\xBB\xBF".to_vec());
    w.write_record(REVIEW_COLUMNS)?;
    for f in findings {
        if f.id.is_empty() {
            continue;
        }
        let (mark, note) = f
            .review
            .as_ref()
            .map(|r| (r.mark.map_or("", |m| m.as_str()), r.note.as_str()))
            .unwrap_or(("", ""));
        let severity = match f.review.as_ref().map_or(f.severity, |r| r.checked_severity) {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        };
        w.write_record([
            f.id.clone(),
            mark.to_string(),
            super::desk::to_cell(note),
            severity.to_string(),
            f.check.clone(),
            f.chapter.clone(),
            f.unit.clone(),
            super::desk::to_cell(&f.message),
            super::desk::to_cell(&f.source_excerpt),
            super::desk::to_cell(&f.target_excerpt),
            mark.to_string(),
            super::desk::to_cell(note),
        ])?;
    }
    Ok(w.into_inner()?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn finding(msg: &str, mark: Option<Mark>, note: &str) -> Finding {
        let mut f = Finding::new("links", Severity::Error, msg, "src", "tgt");
        f.id = "0123456789ab".into();
        if let Some(m) = mark {
            qm::apply(&mut f, Some((m, note)), false);
        }
        f
    }

    proptest! {
        /// The review CSV is lossless for what the editor edits: writing the marks and notes
        /// as journaled and reading the file back finds no change (so an untouched file
        /// journals nothing), whatever the note holds (formula characters, quotes, commas,
        /// line breaks, spaces at either end).
        #[test]
        fn review_csv_round_trips_marks_and_notes(
            note in "[ =+@'\",;\\-\\t\\n\\r\u{4e00}a-z]{0,24}",
            msg in "[ =+@'\",a-z\\n]{0,24}",
            which in 0u8..3,
        ) {
            let mark = match which {
                0 => None,
                1 => Some(Mark::Confirmed),
                _ => Some(Mark::Dismissed),
            };
            let f = finding(&msg, mark, &note);
            let rows = review_rows(&review_csv([&f]).unwrap()).unwrap();
            prop_assert_eq!(rows.len(), 1);
            let r = &rows[0];
            prop_assert_eq!(r.id.as_str(), "0123456789ab");
            prop_assert_eq!(r.mark, mark);
            prop_assert_eq!(r.recorded_mark, mark);
            prop_assert_eq!(&r.note, &r.recorded_note);
            if mark.is_some() {
                prop_assert_eq!(&r.note, &note);
            }
        }
    }

    #[test]
    fn a_bad_mark_names_its_row_and_finding() {
        let csv = "id,mark,note\n0123456789ab,maybe,\n";
        assert_eq!(
            review_rows(csv.as_bytes()),
            Err(RowsError::Row(
                "row 2 (finding 0123456789ab): `maybe` is not a mark; write `confirmed`, `dismissed` or leave the cell empty".into()
            ))
        );
        assert_eq!(review_rows(b"a,b\n1,2\n"), Err(RowsError::NotAReview));
        let rows = review_rows("\u{feff}note,id,mark\nok,abc, Dismiss \n,,\n".as_bytes()).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(
            (
                rows[0].id.as_str(),
                rows[0].mark,
                rows[0].note.as_str(),
                rows[0].line
            ),
            ("abc", Some(Mark::Dismissed), "ok", 2)
        );
    }
}
