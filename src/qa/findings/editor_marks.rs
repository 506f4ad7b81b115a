//! Editors confirm or dismiss findings: the pure half. A stable id for every
//! finding ([`finding_id`], [`assign_ids`]), the editor's mark it may carry ([`Mark`],
//! [`Review`]), what a mark does to a finding ([`apply`]) and each check's precision over the
//! marked findings ([`precision`], [`downgraded_checks`]).
//!
//! It owns no state: the journal records of the marks, the rule that a mark holds only for
//! the text it was made on, and the review CSV live in `campaign::mark_journal`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::qa::{Finding, Severity};

/// Hex digits of a finding id: 48 bits, so a book of 100,000 findings has a chance of about
/// 2·10⁻⁵ of any collision between two different findings (birthday bound n²/2^49).
pub const ID_HEX: usize = 12;

/// Default of the campaign key `mark_precision_threshold` (0.5): a check whose precision over
/// the marked findings (confirmed / marked) is below it is downgraded to warnings.
pub use crate::config::DEFAULT_MARK_PRECISION_THRESHOLD as DEFAULT_PRECISION_THRESHOLD;

/// Fewest marked findings of a check before its precision can downgrade it: fewer
/// marks say too little about a check.
pub const MIN_MARKS: usize = 10;

/// What an editor said about a finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mark {
    /// An error the translation really has (a true positive).
    Confirmed,
    /// A false positive: the finding no longer counts toward the status or the exit code and
    /// sends no revision.
    Dismissed,
}

impl Mark {
    /// The word editors write in `findings-review.csv` and see in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Mark::Confirmed => "confirmed",
            Mark::Dismissed => "dismissed",
        }
    }

    /// Parses a mark as an editor writes it (`confirm`, `confirmed`, `dismiss`, `dismissed`,
    /// case-insensitive); `Ok(None)` for an empty cell (no mark). Errors: [`NotAMark`], any
    /// other word (its message names the accepted ones).
    pub fn parse(s: &str) -> Result<Option<Mark>, NotAMark> {
        match s.trim().to_ascii_lowercase().as_str() {
            "" => Ok(None),
            "confirm" | "confirmed" => Ok(Some(Mark::Confirmed)),
            "dismiss" | "dismissed" => Ok(Some(Mark::Dismissed)),
            other => Err(NotAMark(other.to_string())),
        }
    }
}

/// A word in a review cell that is not a mark.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a mark; write `confirmed`, `dismissed` or leave the cell empty")]
pub struct NotAMark(pub String);

/// What the editor's review did to a finding (the `review` field of a finding in
/// `report.json`; absent when neither a mark nor a downgrade applies).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Review {
    /// The editor's mark, `None` for an unmarked finding of a downgraded check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mark: Option<Mark>,
    /// The editor's note (may be empty).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub note: String,
    /// The severity the check gave. The finding's own `severity` is what counts: `info` for
    /// a dismissed finding, `warning` for an error of a downgraded check.
    pub checked_severity: Severity,
    /// True when the check was downgraded to warnings for this campaign ([`downgraded_checks`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub downgraded: bool,
}

/// Collapses `s` into the form the id hashes: runs of whitespace become one space, runs of
/// ASCII digits become `#`. Digits are the volatile part of messages: counts of other units,
/// campaign norms and ratios (`length_ratio`), positions (`number 3 is …`) change when other
/// units change while the finding itself does not.
pub fn normalize(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut last = ' ';
    for ch in s.trim().chars() {
        let c = if ch.is_whitespace() {
            ' '
        } else if ch.is_ascii_digit() {
            '#'
        } else {
            ch
        };
        if (c == ' ' || c == '#') && c == last {
            continue;
        }
        out.push(c);
        last = c;
    }
    out
}

/// The stable id of finding `f` of the unit with fingerprint `fp` (for a chapter-level
/// finding, pass `chapter:<key>`), `occurrence` the 0-based count of earlier findings of the
/// same unit with the same evidence (so two identical findings still get two ids):
///
/// `hex(sha256(fp ␟ check ␟ normalize(source_excerpt) ␟ normalize(target_excerpt) ␟
/// normalize(message) [␟ occurrence when > 0]))[..12]`, `␟` being U+001F. See [`normalize`]
/// for what is removed. Identical input gives the identical id in every run; the severity is
/// not part of it (a downgrade keeps the id).
pub fn finding_id(fp: &str, f: &Finding, occurrence: usize) -> String {
    let mut s = String::new();
    for part in [
        fp,
        f.check.as_str(),
        &normalize(&f.source_excerpt),
        &normalize(&f.target_excerpt),
        &normalize(&f.message),
    ] {
        s.push_str(part);
        s.push('\u{1f}');
    }
    if occurrence > 0 {
        s.push_str(&occurrence.to_string());
    }
    let mut h = crate::util::sha256_hex(s.as_bytes());
    h.truncate(ID_HEX);
    h
}

/// Fills in [`Finding::id`] of every finding of one unit (fingerprint `fp`), in order: the
/// n-th finding with the same evidence gets occurrence n − 1 ([`finding_id`]). Findings that
/// already have an id keep it.
pub fn assign_ids(fp: &str, findings: &mut [Finding]) {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for f in findings.iter_mut() {
        let base = finding_id(fp, f, 0);
        let n = seen.entry(base.clone()).or_insert(0);
        if f.id.is_empty() {
            f.id = if *n == 0 { base } else { finding_id(fp, f, *n) };
        }
        *n += 1;
    }
}

/// Applies the editor's review to `f`: `mark` (with its note) when one holds for it, and the
/// downgrade when its check is in `downgraded`. A dismissed finding becomes `info` (it stays
/// in every report, counts nowhere); an unconfirmed error of a downgraded check becomes a
/// `warning`; a confirmed finding keeps its severity (the editor said it is an error).
pub fn apply(f: &mut Finding, mark: Option<(Mark, &str)>, downgraded: bool) {
    // A missing chapter, unit or ending is a fact of the files, not a check's opinion: it is
    // neither dismissed nor downgraded (see [`undismissable`]).
    let (mark, downgraded) = if undismissable(&f.check) {
        (mark.filter(|m| m.0 == Mark::Confirmed), false)
    } else {
        (mark, downgraded)
    };
    if mark.is_none() && !(downgraded && f.severity == Severity::Error) {
        return;
    }
    let checked = f.review.as_ref().map_or(f.severity, |r| r.checked_severity);
    let mut r = Review {
        mark: mark.map(|m| m.0),
        note: mark.map(|m| m.1.to_string()).unwrap_or_default(),
        checked_severity: checked,
        downgraded: false,
    };
    match r.mark {
        Some(Mark::Dismissed) => f.severity = Severity::Info,
        Some(Mark::Confirmed) => {}
        None => {
            f.severity = Severity::Warning;
            r.downgraded = true;
        }
    }
    if downgraded && r.mark.is_some() {
        r.downgraded = true;
    }
    f.review = Some(r);
}

/// Whether findings of `check` can be dismissed or downgraded: not those of `completeness`
/// (a chapter without an output file, a unit without a translation) and `truncation` (a
/// translation that stops before the source's end), which state what the files lack rather
/// than judge a text; dismissing one would let `validate` pass a book with missing text.
/// Found by trying `booktr qa dismiss` on a deleted chapter's finding as a new user would.
pub fn undismissable(check: &str) -> bool {
    matches!(check, "completeness" | "truncation")
}

/// Marked findings of one check.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckPrecision {
    /// Check name.
    pub check: String,
    /// Marked findings of the check an editor confirmed (true positives).
    pub confirmed: usize,
    /// Marked findings of the check an editor dismissed (false positives).
    pub dismissed: usize,
    /// `confirmed / (confirmed + dismissed)`, in [0, 1].
    pub precision: f64,
    /// Whether the check is downgraded to warnings for this campaign ([`downgraded_checks`]).
    pub downgraded: bool,
}

/// Precision per check over `marks` (one `(check, mark)` per marked finding), sorted by check
/// name; `downgraded` set by [`downgraded_checks`] with `threshold` and [`MIN_MARKS`].
pub fn precision<'a>(
    marks: impl IntoIterator<Item = (&'a str, Mark)>,
    threshold: f64,
) -> Vec<CheckPrecision> {
    let mut by: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for (check, m) in marks {
        let e = by.entry(check).or_default();
        match m {
            Mark::Confirmed => e.0 += 1,
            Mark::Dismissed => e.1 += 1,
        }
    }
    by.into_iter()
        .map(|(check, (c, d))| {
            let precision = c as f64 / (c + d) as f64;
            CheckPrecision {
                check: check.to_string(),
                confirmed: c,
                dismissed: d,
                precision,
                downgraded: c + d >= MIN_MARKS && precision < threshold,
            }
        })
        .collect()
}

/// The checks `precision` downgrades: at least [`MIN_MARKS`] marks and a precision below the
/// threshold it was computed with.
pub fn downgraded_checks(precision: &[CheckPrecision]) -> Vec<String> {
    precision
        .iter()
        .filter(|p| p.downgraded)
        .map(|p| p.check.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(check: &str, msg: &str, src: &str, tgt: &str) -> Finding {
        Finding::new(check, Severity::Error, msg, src, tgt)
    }

    #[test]
    fn ids_are_twelve_hex_and_identical_for_identical_input() {
        let a = f("code_blocks", "code block 1 changed", "```x```", "```y```");
        let id = finding_id("fp1", &a, 0);
        assert_eq!(id.len(), ID_HEX);
        assert!(id.chars().all(|c| c.is_ascii_hexdigit()));
        assert_eq!(id, finding_id("fp1", &a.clone(), 0));
        // Fixed value: the formula is part of the state (marks are keyed by it).
        assert_eq!(
            id,
            &crate::util::sha256_hex(
                "fp1\u{1f}code_blocks\u{1f}```x```\u{1f}```y```\u{1f}code block # changed\u{1f}"
            )[..12]
        );
    }

    #[test]
    fn ids_ignore_digits_whitespace_and_severity_but_not_evidence() {
        let a = f(
            "length_ratio",
            "ratio 0.31 under the norm 0.82",
            "a  b",
            "c",
        );
        let mut b = f("length_ratio", "ratio 0.29 under the norm 0.80", "a b", "c");
        b.severity = Severity::Warning;
        assert_eq!(finding_id("u", &a, 0), finding_id("u", &b, 0));
        let c = f("length_ratio", "ratio 0.31 under the norm 0.82", "a b", "d");
        assert_ne!(finding_id("u", &a, 0), finding_id("u", &c, 0));
        assert_ne!(finding_id("u", &a, 0), finding_id("v", &a, 0));
        let d = f("numbers", "ratio 0.31 under the norm 0.82", "a b", "c");
        assert_ne!(finding_id("u", &a, 0), finding_id("u", &d, 0));
    }

    #[test]
    fn identical_findings_of_one_unit_get_distinct_ids() {
        let mut v = vec![
            f("numbers", "number 3 missing", "x", "y"),
            f("numbers", "number 4 missing", "x", "y"),
            f("links", "other", "x", "y"),
        ];
        assign_ids("fp", &mut v);
        assert_ne!(v[0].id, v[1].id);
        assert_eq!(v[0].id, finding_id("fp", &v[0], 0));
        assert_eq!(v[1].id, finding_id("fp", &v[1], 1));
        assert_eq!(v[2].id, finding_id("fp", &v[2], 0));
    }

    #[test]
    fn dismissed_is_info_confirmed_keeps_severity_downgrade_makes_warning() {
        let mut a = f("links", "m", "s", "t");
        apply(&mut a, Some((Mark::Dismissed, "fine")), false);
        assert_eq!(a.severity, Severity::Info);
        let r = a.review.clone().unwrap();
        assert_eq!(
            (r.mark, r.note.as_str(), r.checked_severity),
            (Some(Mark::Dismissed), "fine", Severity::Error)
        );
        let mut b = f("links", "m", "s", "t");
        apply(&mut b, Some((Mark::Confirmed, "")), true);
        assert_eq!(b.severity, Severity::Error);
        assert!(b.review.unwrap().downgraded);
        let mut c = f("links", "m", "s", "t");
        apply(&mut c, None, true);
        assert_eq!(c.severity, Severity::Warning);
        assert_eq!(c.review.unwrap().checked_severity, Severity::Error);
        let mut d = f("links", "m", "s", "t");
        apply(&mut d, None, false);
        assert_eq!((d.severity, d.review), (Severity::Error, None));
    }

    #[test]
    fn precision_downgrades_only_with_enough_marks_under_the_threshold() {
        let mut marks = vec![("links", Mark::Dismissed); 7];
        marks.extend(vec![("links", Mark::Confirmed); 3]);
        marks.extend(vec![("numbers", Mark::Dismissed); 9]);
        let p = precision(marks.iter().copied(), 0.5);
        assert_eq!(p.len(), 2);
        assert_eq!(
            (p[0].check.as_str(), p[0].confirmed, p[0].dismissed),
            ("links", 3, 7)
        );
        assert!((p[0].precision - 0.3).abs() < 1e-9);
        assert!(p[0].downgraded);
        // Nine marks, precision 0: too few to judge the check.
        assert!(!p[1].downgraded);
        assert_eq!(downgraded_checks(&p), vec!["links".to_string()]);
        // 0.3 is not below a threshold of 0.25.
        assert!(downgraded_checks(&precision(marks.iter().copied(), 0.25)).is_empty());
    }

    #[test]
    fn marks_parse_as_editors_write_them() {
        assert_eq!(Mark::parse(" Dismiss "), Ok(Some(Mark::Dismissed)));
        assert_eq!(Mark::parse("confirmed"), Ok(Some(Mark::Confirmed)));
        assert_eq!(Mark::parse(""), Ok(None));
        assert!(
            Mark::parse("ok")
                .unwrap_err()
                .to_string()
                .contains("confirmed")
        );
    }
}
