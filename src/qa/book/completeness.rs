//! Completeness (check `completeness`, campaign level): nothing is missing from the book.
//!
//! - Every unit has a translation: one `error` per unit without one (a missing target, or an
//!   empty target for a source with non-whitespace text), naming the unit.
//! - Every chapter's written output equals its units' translations joined in campaign order,
//!   byte for byte (the segmenter guarantees that the units joined are the chapter, so any
//!   difference is a lost, duplicated or stale piece): one `error` per chapter naming the first
//!   differing byte offset and its line and column. A chapter with no output file is an
//!   `error`; the comparison is skipped for chapters with untranslated units, which are already
//!   reported.

use crate::qa::{ChapterText, UnitText};
use crate::qa::{Finding, Severity};

/// Check name of the findings.
pub const CHECK: &str = "completeness";

/// Runs the check.
pub fn check(units: &[UnitText], chapters: &[ChapterText]) -> Vec<Finding> {
    let mut out = Vec::new();
    let missing = |u: &UnitText| match u.target {
        None => true,
        Some(t) => t.trim().is_empty() && !u.source.trim().is_empty(),
    };
    for u in units.iter().filter(|u| missing(u)) {
        let mut f = Finding::new(
            CHECK,
            Severity::Error,
            format!(
                "unit {} has no translation; translate it (run the campaign again) before publishing",
                u.unit
            ),
            u.source,
            "",
        );
        f.unit = u.unit.to_string();
        f.chapter = u.chapter.to_string();
        out.push(f);
    }
    for c in chapters {
        let mine: Vec<&UnitText> = units.iter().filter(|u| u.chapter == c.chapter).collect();
        let Some(output) = c.output else {
            let mut f = Finding::new(
                CHECK,
                Severity::Error,
                format!(
                    "chapter {} has no output file; run the campaign to write it",
                    c.chapter
                ),
                "",
                "",
            );
            f.chapter = c.chapter.to_string();
            out.push(f);
            continue;
        };
        if mine.iter().any(|u| missing(u)) {
            continue;
        }
        let expected: String = mine.iter().filter_map(|u| u.target).collect();
        if let Some(at) = first_difference(expected.as_bytes(), output.as_bytes()) {
            let (line, col) = line_col(output.as_bytes(), at);
            let unit = unit_at(&mine, at).unwrap_or("");
            let mut f = Finding::new(
                CHECK,
                Severity::Error,
                format!(
                    "chapter {}'s output ({} bytes) differs from its units' translations joined ({} bytes) from byte {at} (line {line}, column {col}{}); write the chapter again from its units",
                    c.chapter,
                    output.len(),
                    expected.len(),
                    if unit.is_empty() {
                        String::new()
                    } else {
                        format!(", in unit {unit}")
                    }
                ),
                &excerpt_from(&expected, at),
                &excerpt_from(output, at),
            );
            f.chapter = c.chapter.to_string();
            f.unit = unit.to_string();
            out.push(f);
        }
    }
    out
}

/// The first byte offset where `a` and `b` differ (the shorter length when one is a prefix of
/// the other), or `None` when equal.
pub fn first_difference(a: &[u8], b: &[u8]) -> Option<usize> {
    if a == b {
        return None;
    }
    Some(
        a.iter()
            .zip(b)
            .position(|(x, y)| x != y)
            .unwrap_or(a.len().min(b.len())),
    )
}

/// 1-based line and column (in bytes) of byte offset `at`.
pub fn line_col(text: &[u8], at: usize) -> (usize, usize) {
    let at = at.min(text.len());
    let before = &text[..at];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let col = at
        - before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |p| p + 1)
        + 1;
    (line, col)
}

/// The unit whose expected text contains byte `at` (the last unit when `at` is at the end).
fn unit_at<'a>(units: &[&UnitText<'a>], at: usize) -> Option<&'a str> {
    let mut pos = 0;
    for u in units {
        let len = u.target.map_or(0, str::len);
        if at < pos + len {
            return Some(u.unit);
        }
        pos += len;
    }
    units.last().map(|u| u.unit)
}

/// Up to 200 characters from byte `at` (moved back to a char boundary).
fn excerpt_from(text: &str, at: usize) -> String {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    text[at..].chars().take(200).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u<'a>(unit: &'a str, chapter: &'a str, target: Option<&'a str>) -> UnitText<'a> {
        UnitText {
            unit,
            chapter,
            source: "Text.\n\n",
            target,
        }
    }

    #[test]
    fn complete_campaign_passes() {
        let units = [
            u("a-000", "a", Some("甲。\n\n")),
            u("a-001", "a", Some("乙。\n")),
        ];
        let chapters = [ChapterText {
            chapter: "a",
            output: Some("甲。\n\n乙。\n"),
        }];
        assert!(check(&units, &chapters).is_empty());
    }

    #[test]
    fn missing_units_are_errors() {
        let units = [
            u("a-000", "a", Some("甲。\n\n")),
            u("a-001", "a", None),
            u("a-002", "a", Some(" \n")),
        ];
        let chapters = [ChapterText {
            chapter: "a",
            output: Some("甲。\n\n"),
        }];
        let f = check(&units, &chapters);
        let got: Vec<(&str, &str, Severity)> = f
            .iter()
            .map(|f| (f.check.as_str(), f.unit.as_str(), f.severity))
            .collect();
        assert_eq!(
            got,
            vec![
                ("completeness", "a-001", Severity::Error),
                ("completeness", "a-002", Severity::Error)
            ]
        );
        assert!(f[0].message.contains("unit a-001 has no translation"));
    }

    #[test]
    fn differing_output_names_offset_and_line() {
        let units = [
            u("a-000", "a", Some("甲。\n\n")),
            u("a-001", "a", Some("乙丙。\n")),
        ];
        let chapters = [
            ChapterText {
                chapter: "a",
                output: Some("甲。\n\n乙。\n"),
            },
            ChapterText {
                chapter: "b",
                output: None,
            },
        ];
        let f = check(&units, &chapters);
        assert_eq!(f.len(), 2);
        assert_eq!((f[0].chapter.as_str(), f[0].unit.as_str()), ("a", "a-001"));
        // "甲。\n\n" is 8 bytes, "乙" 3 more: the first difference is at byte 11, line 3 column 4.
        assert!(
            f[0].message
                .contains("from byte 11 (line 3, column 4, in unit a-001)"),
            "{}",
            f[0].message
        );
        assert_eq!(f[1].chapter, "b");
        assert!(f[1].message.contains("chapter b has no output file"));
    }

    #[test]
    fn truncated_output_is_reported_at_its_end() {
        let units = [u("a-000", "a", Some("甲。\n"))];
        let chapters = [ChapterText {
            chapter: "a",
            output: Some("甲"),
        }];
        let f = check(&units, &chapters);
        assert!(
            f[0].message.contains("from byte 3 (line 1, column 4"),
            "{}",
            f[0].message
        );
        assert_eq!(first_difference(b"ab", b"ab"), None);
        assert_eq!(line_col(b"a\nbc", 3), (2, 2));
    }
}
