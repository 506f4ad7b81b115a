//! `style_number_format`: digit grouping and decimal separator of the target locale, for the
//! numbers of the target's prose that are neither code (never in the view) nor versions,
//! identifiers, dates, times or references. A number right after a word that names a version
//! (`Version 0.17`, [`VERSION_WORDS`]) is a version, and so is a number the source writes
//! after a name ([`source_versions`]: `*mkdocstrings* 0.19`, `Python 3.12`, `Figure 2.1`),
//! when the translation keeps it as written.
//!
//! A number is a run of digits with `.`, `,` or no-break-space (U+00A0, U+202F, U+2009)
//! separators between digit groups. Left out: a run touching a letter, `_`, `-`, `/`, `:`,
//! `#`, `§` or `@` (`GPT-4`, `v1.2`, `2024-01-01`, `12:30`, `图1-1`, `§2.4`), and a run with
//! two or more `.` whose groups are not all three digits (`1.2.3`, `10.0.0.1`). Only forms
//! that cannot be right in the locale are findings, so an ambiguous `1,234` (a thousand
//! separator in English, a decimal comma in German) or a section number `3.5` never is:
//!
//! | convention | locales | findings |
//! |---|---|---|
//! | `1,234.5` | en, zh, ja, ko | `1.234,5`; a no-break-space group `1 234`; a decimal comma `3,5` (one `,` followed by one or two digits) |
//! | `1.234,5` | de, es, it, nl, pt, id, tr, da | `1,234.5`; `1,234,567`; a decimal point in `0.5` or before `%` |
//! | `1 234,5` | fr, ru, uk, pl, cs, sk, sv, fi, nb | `1,234.5`, `1.234,5`; `1,234,567`, `1.234.567`; a decimal point in `0.5` or before `%` |
//!
//! The groupings are those of the Unicode CLDR number symbols of each locale.

use super::Hits;
use super::view::View;
use crate::lang::Lang;

/// A locale's number convention.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Convention {
    /// `1,234.5`.
    PointDecimal,
    /// `1.234,5`.
    CommaPointGroups,
    /// `1 234,5` (no-break-space groups).
    CommaSpaceGroups,
}

impl Convention {
    /// The convention of `lang`, if the check knows it.
    pub fn of(lang: &Lang) -> Option<Convention> {
        Some(match lang.primary().as_str() {
            "en" | "zh" | "ja" | "ko" => Convention::PointDecimal,
            "de" | "es" | "it" | "nl" | "pt" | "id" | "tr" | "da" => Convention::CommaPointGroups,
            "fr" | "ru" | "uk" | "pl" | "cs" | "sk" | "sv" | "fi" | "nb" | "no" => {
                Convention::CommaSpaceGroups
            }
            _ => return None,
        })
    }

    fn example(self) -> &'static str {
        match self {
            Convention::PointDecimal => "1,234.5",
            Convention::CommaPointGroups => "1.234,5",
            Convention::CommaSpaceGroups => "1 234,5 (with a narrow no-break space)",
        }
    }
}

fn is_space_sep(c: char) -> bool {
    matches!(c, '\u{00A0}' | '\u{202F}' | '\u{2009}')
}

/// Words that name a version in the locales the check knows (lower case): a number right after
/// one (`version 0.17`, `Version 1.5`, `версии 2.0`, `版本 0.4`) is a version, not a decimal
/// to write in the locale's format. From the CLDR-covered languages of [`Convention::of`]; the
/// regression test `a_version_number_is_not_a_number_to_format` guards the rule.
const VERSION_WORDS: &[&str] = &[
    "version",
    "versions",
    "versionen",
    "versión",
    "versiones",
    "versione",
    "versioni",
    "versie",
    "versies",
    "versão",
    "versões",
    "versao",
    "versi",
    "versiyon",
    "sürüm",
    "sürümü",
    "versio",
    "versiossa",
    "versjon",
    "wersja",
    "wersji",
    "verze",
    "verzi",
    "verzia",
    "verzie",
    "версия",
    "версии",
    "версию",
    "версией",
    "версія",
    "версії",
    "версію",
    "release",
    "edition",
    "版本",
    "バージョン",
    "버전",
    "rust",
];

/// Whether the word before the number starting at char `start` (spaces skipped) is one of
/// [`VERSION_WORDS`].
fn after_version_word(v: &View, start: usize) -> bool {
    let mut k = start;
    while k > 0 && matches!(v.chars[k - 1].c, ' ' | '\u{00A0}' | '\u{202F}') {
        k -= 1;
    }
    let end = k;
    while k > 0 && v.chars[k - 1].c.is_alphabetic() {
        k -= 1;
    }
    if k == end {
        return false;
    }
    let word: String = v.chars[k..end]
        .iter()
        .flat_map(|x| x.c.to_lowercase())
        .collect();
    VERSION_WORDS.contains(&word.as_str())
}

/// The numbers `source` writes as versions or references rather than quantities: after a
/// version word ([`VERSION_WORDS`]), a capitalised word (`Python 3.12`, `Figure 2.1`) or a
/// word in emphasis or code (`*mkdocstrings* 0.19`, `` `ruff` 0.4 ``). A quantity rarely
/// follows a name in English technical prose ("costs 0.5", "about 0.5"); a sentence that
/// opens with a capitalised word before a quantity ("About 0.5") loses a warning, never
/// gains a false one.
pub fn source_versions(source: &str) -> std::collections::HashSet<String> {
    use std::sync::LazyLock;
    static RE: LazyLock<regex::Regex> = LazyLock::new(|| {
        regex::Regex::new(
            r"(?:(?i:\bversions?)|\b\p{Lu}[\w-]*|[*_`]\w[\w.-]*[*_`]{1,2})[ \u{a0}]+(\d+(?:\.\d+)+)\b",
        )
        .expect("a valid pattern")
    });
    RE.captures_iter(source).map(|c| c[1].to_string()).collect()
}

/// Runs the check over the view (see the module docs); `versions` are the numbers the source
/// writes as versions ([`source_versions`]).
pub fn check(
    v: &View,
    conv: Convention,
    versions: &std::collections::HashSet<String>,
    hits: &mut Hits,
) {
    let n = v.chars.len();
    let c = |i: usize| v.chars.get(i).map_or('\n', |x| x.c);
    let mut i = 0;
    while i < n {
        if !c(i).is_ascii_digit() || v.chars[i].at.is_none() {
            i += 1;
            continue;
        }
        let start = i;
        // Digit groups and the separators between them.
        let mut seps: Vec<char> = Vec::new();
        let mut groups: Vec<usize> = Vec::new();
        let mut j = i;
        loop {
            let g = j;
            // A number does not run across markup: `**1.234,5**1` is the number 1.234,5, then
            // a 1 (regression test `a_number_ran_across_emphasis_markup`).
            while j < n
                && c(j).is_ascii_digit()
                && (if j == start {
                    v.chars[j].at.is_some()
                } else {
                    v.follows(j)
                })
            {
                j += 1;
            }
            groups.push(j - g);
            let s = c(j);
            if (matches!(s, '.' | ',') || is_space_sep(s))
                && c(j + 1).is_ascii_digit()
                && v.follows(j)
                && v.follows(j + 1)
            {
                seps.push(s);
                j += 1;
            } else {
                break;
            }
        }
        let end = j; // exclusive
        i = end;
        let before = if start == 0 { '\n' } else { c(start - 1) };
        let after = c(end);
        let touching = |x: char| {
            x.is_ascii_alphabetic() || matches!(x, '_' | '-' | '/' | ':' | '#' | '§' | '@' | '.')
        };
        // A `.` after the number ends a sentence unless a letter or digit follows it.
        let sentence_dot = after == '.' && !c(end + 1).is_alphanumeric();
        if touching(before) || (touching(after) && !sentence_dot) {
            continue;
        }
        if seps.is_empty() || after_version_word(v, start) {
            continue;
        }
        let dots = seps.iter().filter(|&&s| s == '.').count();
        let commas = seps.iter().filter(|&&s| s == ',').count();
        let spaces = seps.iter().filter(|&&s| is_space_sep(s)).count();
        let grouped = groups[0] <= 3 && groups[1..].iter().all(|&g| g == 3);
        // Groups of three after the first, the last one possibly decimal.
        let grouped_but_last =
            groups[0] <= 3 && groups[1..groups.len() - 1].iter().all(|&g| g == 3);
        if dots >= 2 && !grouped {
            continue; // a version or an address
        }
        let last = *seps.last().expect("non-empty");
        let percent = {
            let mut k = end;
            while c(k) == ' ' || is_space_sep(c(k)) {
                k += 1;
            }
            c(k) == '%'
        };
        let point_decimal =
            dots == 1 && seps.len() == 1 && (percent || (groups[0] == 1 && c(start) == '0'));
        let bad = match conv {
            Convention::PointDecimal => {
                (dots >= 1 && last == ',' && grouped_but_last)
                    || (spaces >= 1 && grouped_but_last)
                    || (commas == 1 && seps.len() == 1 && groups[1] <= 2 && groups[0] <= 3)
            }
            Convention::CommaPointGroups => {
                (commas >= 1 && last == '.' && dots == 1 && grouped_but_last)
                    || (commas >= 2 && grouped)
                    || point_decimal
            }
            Convention::CommaSpaceGroups => {
                (commas >= 1 && dots >= 1 && grouped_but_last)
                    || ((commas >= 2 || dots >= 2) && grouped)
                    || point_decimal
            }
        };
        let raw: String = v.chars[start..end].iter().map(|x| x.c).collect();
        if bad && !versions.contains(&raw) {
            hits.push(
                v,
                start,
                end - 1,
                format!(
                    "number `{raw}` is not written in the target locale's format; write it as {}",
                    conv.example()
                ),
            );
        }
    }
}
