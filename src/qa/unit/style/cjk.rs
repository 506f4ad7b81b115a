//! The CJK rules (zh, ja): punctuation width ([`punctuation`]) and the spacing between CJK and
//! Latin text or digits ([`spacing`]). CJK quotation marks are checked with the other
//! locales' marks in [`super::latin::quotes`].
//!
//! The conventions are those of GB/T 15834-2011 (Chinese punctuation: full-width marks in
//! Chinese text) and of the common Chinese technical-writing guides (one space between Chinese
//! and Latin text or digits, none around full-width punctuation); the Japanese defaults follow
//! the Microsoft Japanese Style Guide (full-width punctuation, no space between full-width and
//! half-width text).

use super::view::View;
use super::{Hits, is_cjk_letter, is_cjk_punct, show};
use crate::config::CjkLatinSpace;

/// The full-width form of ASCII sentence punctuation.
fn full_width(c: char) -> Option<char> {
    Some(match c {
        ',' => '，',
        '.' => '。',
        ':' => '：',
        ';' => '；',
        '!' => '！',
        '?' => '？',
        _ => return None,
    })
}

fn is_cjk(c: char) -> bool {
    is_cjk_letter(c) || is_cjk_punct(c)
}

/// Full-width ASCII letters and digits (U+FF10–FF19, FF21–FF3A, FF41–FF5A).
fn is_full_width_alnum(c: char) -> bool {
    matches!(c, '\u{FF10}'..='\u{FF19}' | '\u{FF21}'..='\u{FF3A}' | '\u{FF41}'..='\u{FF5A}')
}

/// The number of ASCII digits right after view index `i` (up to 8).
fn digits_after(v: &View, i: usize) -> usize {
    (1..=8)
        .take_while(|k| v.c((i + k) as isize).is_ascii_digit())
        .count()
}

/// `style_cjk_punctuation`:
/// - half-width `, . : ; ! ?` right after a CJK character, or followed (after spaces) by one,
///   is a CJK sentence's punctuation and should be full-width (a run of dots is one finding
///   and should be `……`); a single `.` only right after CJK text, and never after a Latin
///   letter or digit or before one (`vs.`, `1.`, `.cursorrules`);
/// - full-width punctuation inside a Latin name, number or URL should be half-width: `．`
///   between Latin letters or digits (`Node．js`), `，` before a group of three digits
///   (`1，000`), `：` before two (`12：30`), `。` between digits (`3。5`), `。` between a Latin letter or digit and a lower-case letter (`config。yaml`),
///   `：//` in a URL;
/// - full-width Latin letters and digits (`ＡＰＩ`, `１２`) should be half-width.
///
/// Sentence punctuation between two Latin words (`LLM：Agent`, `Harness。Harness`) is
/// right in CJK text and never flagged.
pub fn punctuation(v: &View, hits: &mut Hits) {
    let n = v.chars.len();
    let mut i = 0;
    while i < n {
        let c = v.chars[i].c;
        if v.chars[i].at.is_none() {
            i += 1;
            continue;
        }
        let prev = v.c(i as isize - 1);
        let next = v.c(i as isize + 1);
        if let Some(fw) = full_width(c) {
            // A run of the same mark (`...`, `!!`) is one finding.
            let mut j = i;
            // Not across markup: `:**:` is two marks (regression test
            // `a_punctuation_run_ran_across_emphasis_markup`).
            while j + 1 < n && v.chars[j + 1].c == c && v.follows(j + 1) {
                j += 1;
            }
            let after = v.next_nonspace(j);
            let url_colon = c == ':' && v.c(j as isize + 1) == '/';
            // A single `.` is sentence punctuation only right after CJK text: after a digit it
            // numbers (`**1. 并行启动**`, `2026. 代码`), after a Latin letter it abbreviates
            // (`vs. 传统`), before a letter or digit it starts a name (`.cursorrules`).
            let single_dot = c == '.' && j == i;
            let name_dot = single_dot
                && (prev.is_ascii_alphanumeric() || v.c(j as isize + 1).is_ascii_alphanumeric());
            let cjk_sentence = is_cjk(prev) || (!single_dot && is_cjk_letter(after));
            if !url_colon && !name_dot && cjk_sentence {
                let want = if c == '.' && j > i {
                    "……".to_string()
                } else {
                    fw.to_string()
                };
                let got: String = std::iter::repeat_n(c, j - i + 1).collect();
                hits.push(
                    v,
                    i,
                    j,
                    format!("half-width `{got}` in a CJK sentence; write `{want}`"),
                );
            }
            i = j + 1;
            continue;
        }
        let ascii_alnum = |c: char| c.is_ascii_alphanumeric();
        let in_name = match c {
            '．' => ascii_alnum(prev) && ascii_alnum(next),
            // `1，000` (a group of three digits follows) and `12：30` (two digits follow), not
            // a sentence comma between numbers (`为 0，7.7 节`).
            '，' => prev.is_ascii_digit() && digits_after(v, i) == 3 && v.c(i as isize + 4) != '.',
            '：' => prev.is_ascii_digit() && digits_after(v, i) == 2,
            '。' => {
                (prev.is_ascii_digit() && next.is_ascii_digit())
                    || (ascii_alnum(prev) && next.is_ascii_lowercase())
            }
            _ => false,
        } || (c == '：' && next == '/' && v.c(i as isize + 2) == '/');
        if in_name {
            let half = match c {
                '．' | '。' => '.',
                '，' => ',',
                _ => ':',
            };
            hits.push(
                v,
                i,
                i,
                format!(
                    "full-width `{c}` inside a Latin name, number or URL; write half-width `{half}`"
                ),
            );
        } else if is_full_width_alnum(c) {
            let mut j = i;
            // A run ends where markup the view left out sits between two letters (`Ａ**Ａ**`),
            // so that its span covers the letters only.
            while j + 1 < n
                && is_full_width_alnum(v.chars[j + 1].c)
                && v.chars[j + 1].at.is_some()
                && v.chars[j + 1].at == v.chars[j].at.map(|a| a + 1)
            {
                j += 1;
            }
            let got: String = v.chars[i..=j].iter().map(|x| x.c).collect();
            let want: String = got
                .chars()
                .map(|c| char::from_u32(c as u32 - 0xFF10 + 0x30).unwrap_or(c))
                .collect();
            hits.push(
                v,
                i,
                j,
                format!("full-width letters or digits `{got}`; write half-width `{want}`"),
            );
            i = j + 1;
            continue;
        }
        i += 1;
    }
}

/// Figure, table, equation and example labels: `图1-1`, `表8-1中` keep their number attached
/// (the reference book writes them so, 200 times), so the spacing rule skips the boundaries
/// around a label's number.
const LABELS: &[char] = &['图', '表', '式', '例', '圖'];

/// `style_cjk_latin_space`: at every boundary between a CJK letter (Han, kana) and a Latin
/// letter or digit, with only ASCII spaces between them,
/// - under [`CjkLatinSpace::One`], a missing space (the span is the char after the gap) and
///   two or more spaces (the span is the spaces) are findings;
/// - under [`CjkLatinSpace::None`], any space there is a finding (the span is the spaces).
///
/// Boundaries with punctuation, symbols, inline code or markup between are left alone, as is
/// the number of a figure or table label (see [`LABELS`]) under `One`.
pub fn spacing(v: &View, policy: CjkLatinSpace, hits: &mut Hits) {
    let n = v.chars.len();
    let latin = |c: char| c.is_ascii_alphanumeric();
    // View indices of the chars that belong to a label's number (`图1-1` → `1-1`).
    let mut label_number = vec![false; n];
    for i in 0..n {
        if LABELS.contains(&v.chars[i].c) {
            let mut j = i + 1;
            while j < n && (v.chars[j].c.is_ascii_digit() || matches!(v.chars[j].c, '-' | '.')) {
                label_number[j] = true;
                j += 1;
            }
        }
    }
    let mut i = 0;
    while i < n {
        let a = v.chars[i].c;
        if !(is_cjk_letter(a) || latin(a)) || v.chars[i].at.is_none() {
            i += 1;
            continue;
        }
        let mut j = i + 1;
        while j < n && v.chars[j].c == ' ' {
            j += 1;
        }
        if j >= n {
            break;
        }
        let b = v.chars[j].c;
        let boundary = (is_cjk_letter(a) && latin(b)) || (latin(a) && is_cjk_letter(b));
        if !boundary || v.chars[j].at.is_none() {
            i = j;
            continue;
        }
        let spaces = j - i - 1;
        let label = label_number[i] || label_number[j];
        match policy {
            CjkLatinSpace::One if spaces == 0 && !label => hits.push(
                v,
                j,
                j,
                format!("no space between `{a}` and `{b}`; put one space between CJK and Latin text or digits"),
            ),
            CjkLatinSpace::One if spaces >= 2 => hits.push(
                v,
                i + 1,
                j - 1,
                format!("{spaces} spaces between `{a}` and `{b}`; put exactly one"),
            ),
            CjkLatinSpace::None if spaces >= 1 => hits.push(
                v,
                i + 1,
                j - 1,
                format!(
                    "{} between `{a}` and `{b}`; write CJK and Latin text or digits without a space",
                    if spaces == 1 { show(' ') } else { format!("{spaces} spaces") }
                ),
            ),
            _ => {}
        }
        i = j;
    }
}
