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
//! How the marks apply to findings (held or cleared, checks downgraded by their measured
//! precision) is [`crate::campaign::core::mark_review`]'s; this module records them.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::campaign::core::Campaign;
use crate::campaign::core::state::State;
use crate::campaign::core::store::{Event, Store};
use crate::exit::UsageError;
use crate::qa::findings::editor_marks::Mark;
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

/// The mark records and how marks apply live lower, in the state and in
/// [`crate::campaign::core::mark_review`]; kept here at their former paths.
pub use crate::campaign::core::state::marks::{MarkRecord, Marks};

pub use crate::campaign::core::mark_review::{
    ClearedMark, Review, assign_chapter_ids, chapter_fp, downgraded, has_live_error, review,
    review_unit, unit_fp, unit_marks,
};

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
/// for chapter-level findings), from [`crate::campaign::core::verdict::final_qa`].
fn findings_by_id(c: &Campaign, s: &State) -> BTreeMap<String, (Finding, String)> {
    let fq = crate::campaign::core::verdict::final_qa(c, s);
    let mut out = BTreeMap::new();
    for (u, list) in c.units.iter().zip(&fq.units) {
        let sha = crate::util::sha256_hex(crate::campaign::core::edits::final_text(c, s, u));
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
        crate::campaign::core::commit::record_event(
            c,
            store,
            state,
            event_of(&change, f, sha, "cli", ""),
        )?;
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
        crate::campaign::core::commit::record_event(c, store, state, e)?;
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
    use crate::qa::findings::editor_marks as qm;
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
