//! `numbers`: every number of the source's prose appears in the translation's prose (a
//! warning), and none is changed into another (an error).
//!
//! Both sides are read from [`Doc::clean_prose`], so code, inline code, math, URLs, link
//! targets, HTML and footnote labels never count.
//!
//! **Source numbers** are integers, decimals and percentages (the `%` is not part of the
//! value), with thousand separators `1,000`, `1 000` (no-break or thin space) and, for
//! decimal-comma source languages, `1.000`. Digits that belong to an identifier or a word are
//! left out: `GPT-4o`, `H100`, `v2`, `Llama3`, `2xx`, `1st`, `3D`, `5ms`, `x86` (a run of
//! letters, digits, `-`, `_` or `.` that contains an ASCII letter), as are footnote labels
//! (`^1`). Years stay in. A single `K`/`M`/`B` suffix (`128K`, `7B`) and the words thousand,
//! million, billion, trillion (and 千/万/亿) scale a number; the scaled and the plain value are
//! both accepted.
//!
//! **The translation** is read leniently, because the aim is to catch dropped and changed
//! numbers, not to police notation: every digit run counts (also inside identifiers and
//! words: `20步`, `5ms`), and a number may be written `1,000`, `1.000`, `1 000` or `1000`;
//! `3,5` counts as 3.5 where the comma is clearly decimal (not followed by exactly three
//! digits), and an ambiguous `1,500` or `1.500` counts as both readings; `1万` = 10000,
//! `1.5亿` = 150000000, `12.8万` = 128000; the Chinese numerals 零〇一二三四五六七八九十 and
//! 两 count for 0–10 and their compounds up to 99 (`二十五` = 25); full-width digits are
//! digits. Trailing fractional zeros never matter (`2.0` = 2).
//!
//! **Multiset semantics**: a number that occurs twice in the source must occur at least twice
//! in the translation; one finding is reported per distinct missing number, with its counts.
//!
//! **A changed number is an error**: a source number missing while the translation has a
//! number of as many digits that the source has nowhere (`3` → `4`, `19.1` → `19.5`). The
//! decimal digits of every script are digits (`۳`, `३`, `๓` and `３` are 3: `DIGIT_ZEROS`).
//!
//! **Why a missing number is a warning, not an error**: a faithful translation can legitimately reformulate a
//! number ("2 or 3 times" → 两三次, "the 1990s" → 20 世纪 90 年代, "a 2x speedup" → 速度翻倍,
//! "twice the 10 steps" → 20 步), so a missing number is a prompt for a human or the reviewer
//! to look, not proof of an error that should force an automatic revision.

use std::collections::HashMap;

use crate::qa::view::doc::Doc;
use crate::qa::{Finding, QaContext, Severity};

const CHECK: &str = "numbers";

/// What comparing the numbers of a source text with its translation's finds.
struct Comparison {
    /// Source numbers changed into another number (source, translation).
    changed: Vec<(SourceNumber, SourceNumber)>,
    /// Source numbers the translation lacks, not changed into another.
    missing: Vec<SourceNumber>,
    /// Every number of the source, for the counts of the messages.
    wanted: Vec<SourceNumber>,
}

/// Compares the numbers of the prose `sp` with those of its translation `tp` (both with
/// full-width digits folded, see the module docs). `in_block`: `sp` is one paragraph, list
/// item, heading or table, where a number the translation has fewer times than the source
/// may be found changed too (see below); over a whole unit the same value is too often
/// another sentence's.
fn compare(ctx: &QaContext, sp: &str, tp: &str, in_block: bool) -> Comparison {
    // Minutes of a clock time (`9:00`) are part of the time, which a translation may write
    // another way (`9 Uhr`).
    let wanted: Vec<SourceNumber> = source_numbers(sp, decimal_comma(&ctx.source_lang.primary()))
        .into_iter()
        .filter(|n| n.raw != "00")
        .collect();
    let masked = mask_identifiers(sp, tp);
    let tp = masked.as_str();
    if wanted.is_empty() {
        return Comparison {
            changed: Vec::new(),
            missing: Vec::new(),
            wanted,
        };
    }
    let mut pool = target_values(tp);
    let mut take = |v: &str| match pool.get_mut(v) {
        Some(n) if *n > 0 => {
            *n -= 1;
            true
        }
        _ => false,
    };
    // Exact (primary) readings first, so that an alternative reading never takes a value that
    // another number needs exactly.
    let unmatched: Vec<&SourceNumber> = wanted.iter().filter(|n| !take(&n.values[0])).collect();
    let missing: Vec<&SourceNumber> = unmatched
        .into_iter()
        .filter(|n| !n.values[1..].iter().any(|v| take(v)))
        .collect();
    // A changed number: a source number the translation lacks while it has a number of as
    // many digits beyond the source's. A reformulation drops a number or changes its
    // shape ("the 1990s" → 20 世纪 90 年代, "2 or 3 times" → 两三次); a slip or an edit that
    // changes a value (3 → 4, 19.1 → 19.5) keeps it, and is an error.
    let target_numbers = source_numbers(tp, decimal_comma(&ctx.target_lang.primary()));
    // The translation's numbers beyond the source's: a value the source has nowhere, or more
    // often than the source has it (`0, 1, 2` → `1, 1, 2`: the second 1 stands where 0 was).
    let mut budget: HashMap<&str, usize> = HashMap::new();
    for n in &wanted {
        for v in &n.values {
            *budget.entry(v.as_str()).or_default() += 1;
        }
    }
    let mut extra: Vec<&SourceNumber> = target_numbers
        .iter()
        .filter(|t| {
            match t
                .values
                .iter()
                .find(|v| budget.get(v.as_str()).is_some_and(|b| *b > 0))
            {
                Some(v) => {
                    *budget.get_mut(v.as_str()).expect("found above") -= 1;
                    false
                }
                None => true,
            }
        })
        .collect();
    let digits = |raw: &str| -> Vec<char> { raw.chars().filter(char::is_ascii_digit).collect() };
    // Where the digits stand around the separators (`19.1` and `19.5` have one shape, `20`
    // and `7.5` two).
    let shape = |raw: &str| -> String {
        raw.chars()
            .map(|c| if c.is_ascii_digit() { '0' } else { c })
            .collect()
    };
    let all_target = target_values(tp);
    let mut changed = Vec::new();
    let mut left = Vec::new();
    for m in missing {
        // A number the translation lacks while it has a number of as many digits beyond the
        // source's: of those, the one with the most digits in the same places. In a block, a
        // number the translation has fewer times than the source (`y = 2x, x = 2` →
        // `y = 3x, x = 2`) is changed too, into a number of its very shape only.
        let absent = !m.values.iter().any(|v| all_target.contains_key(v));
        let want = digits(&m.raw);
        let best = extra
            .iter()
            .enumerate()
            .filter(|(_, x)| digits(&x.raw).len() == want.len())
            .filter(|(_, x)| absent || (in_block && shape(&x.raw) == shape(&m.raw)))
            .max_by_key(|(i, x)| {
                let same = digits(&x.raw)
                    .iter()
                    .zip(&want)
                    .filter(|(a, b)| a == b)
                    .count();
                (same, usize::MAX - i)
            })
            .map(|(i, _)| i);
        match best {
            Some(pos) => changed.push((m.clone(), extra.remove(pos).clone())),
            _ => left.push(m.clone()),
        }
    }
    Comparison {
        changed,
        missing: left,
        wanted: wanted.clone(),
    }
}

/// Runs the check (see the module docs): the unit's prose as a whole, then each paragraph,
/// list item, heading and table paired one to one with its counterpart
/// ([`crate::qa::unit::structure::pairs`]), so that a number changed into a value the unit
/// has elsewhere is still found in its own block.
pub fn check(ctx: &QaContext, src: &Doc, tgt: &Doc, _source: &str, _target: &str) -> Vec<Finding> {
    let sp = ascii_digits(src.clean_prose());
    let tp = ascii_digits(tgt.clean_prose());
    let unit = compare(ctx, &sp, &tp, false);
    let mut out = Vec::new();
    if unit.wanted.is_empty() {
        return out;
    }
    for (m, x) in &unit.changed {
        out.push(Finding::new(
            CHECK,
            Severity::Error,
            format!(
                "the number {} of the source is {} in the translation; write the source's number",
                m.raw, x.raw
            ),
            &line_at(&sp, m.at),
            &line_at(&tp, x.at),
        ));
    }
    let mut missing = unit.missing;
    for (i, j) in crate::qa::unit::structure::pairs(src, tgt) {
        let (a, b) = (&src.blocks[i], &tgt.blocks[j]);
        let bs = ascii_digits(a.prose.clone());
        if !bs.chars().any(|c| c.is_ascii_digit()) {
            continue;
        }
        let bt = ascii_digits(b.prose.clone());
        for (m, x) in compare(ctx, &bs, &bt, true).changed {
            if unit
                .changed
                .iter()
                .any(|(um, ux)| um.raw == m.raw && ux.raw == x.raw)
            {
                continue;
            }
            if let Some(k) = missing.iter().position(|n| n.values[0] == m.values[0]) {
                missing.remove(k);
            }
            out.push(Finding::new(
                CHECK,
                Severity::Error,
                format!(
                    "in {}, the number {} of the source is {} in the translation; write the source's number",
                    crate::qa::unit::structure::name(&src.blocks, i),
                    m.raw,
                    x.raw
                ),
                a.text.trim(),
                b.text.trim(),
            ));
        }
    }
    let mut done: Vec<&str> = Vec::new();
    for m in &missing {
        let key = m.values[0].as_str();
        if done.contains(&key) {
            continue;
        }
        done.push(key);
        let in_source = unit.wanted.iter().filter(|n| n.values[0] == key).count();
        let lost = missing.iter().filter(|n| n.values[0] == key).count();
        let message = if lost == in_source {
            format!(
                "the number {} does not appear in the translation; keep it (another notation such as 1 000, 1.000 or 1万 is fine)",
                m.raw
            )
        } else {
            format!(
                "the number {} occurs {in_source} times in the source but {} in the translation; check that none was dropped or changed",
                m.raw,
                in_source - lost
            )
        };
        out.push(Finding::new(
            CHECK,
            Severity::Warning,
            message,
            &line_at(&sp, m.at),
            "",
        ));
    }
    out
}

/// `tp` with every word the source `sp` writes starting with an ASCII letter and holding a
/// digit (`EL1`, `GPT-4o`, `x86`; not `7-day` or `128K`, which are numbers) blanked out: the translation copies such a name, and its digits are not a
/// number of the text (the source's are left out the same way, see the module docs).
fn mask_identifiers(sp: &str, tp: &str) -> String {
    let is_part = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.');
    let names: std::collections::HashSet<&str> = sp
        .split(|c: char| !is_part(c))
        .map(|w| w.trim_matches(['.', '-']))
        .filter(|w| {
            w.starts_with(|c: char| c.is_ascii_alphabetic())
                && w.chars().any(|c| c.is_ascii_digit())
        })
        .collect();
    if names.is_empty() {
        return tp.to_string();
    }
    let mut out = String::with_capacity(tp.len());
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        let core = word.trim_matches(['.', '-']);
        if names.contains(core) {
            out.push_str(&word.replace(core, &" ".repeat(core.len())));
        } else {
            out.push_str(word);
        }
        word.clear();
    };
    for c in tp.chars() {
        if is_part(c) {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// Languages that write decimals with a comma (their thousands separator is `.` or a space).
fn decimal_comma(primary: &str) -> bool {
    matches!(
        primary,
        "de" | "fr"
            | "es"
            | "it"
            | "pt"
            | "nl"
            | "pl"
            | "ru"
            | "uk"
            | "tr"
            | "id"
            | "vi"
            | "cs"
            | "sk"
            | "sl"
            | "hr"
            | "da"
            | "sv"
            | "nb"
            | "no"
            | "fi"
            | "el"
            | "ro"
            | "hu"
            | "bg"
            | "sr"
    )
}

/// A number of the source prose.
#[derive(Debug, Clone, PartialEq, Eq)]
struct SourceNumber {
    /// Canonical values that satisfy it: the primary reading first, then alternatives (the
    /// unscaled value of `128K`).
    values: Vec<String>,
    /// As written, for messages.
    raw: String,
    /// Byte offset in the prose, for the excerpt.
    at: usize,
}

/// A numeric token: digit groups and their separators, as written.
#[derive(Debug)]
struct Token {
    start: usize,
    /// The digits and separators (`128,000`, `3.5`).
    raw: String,
    /// Part of an identifier or word (`GPT-4o`, `H100`, `5ms`).
    identifier: bool,
    /// After `^` (a footnote label or an exponent).
    caret: bool,
    /// Power of ten from a suffix or scale word (`K`, `million`, `万`).
    scale: Option<u32>,
}

fn is_space_sep(c: char) -> bool {
    matches!(c, '\u{00A0}' | '\u{202F}' | '\u{2009}')
}

/// Scans `text` for numeric tokens. `lenient` (the translation) takes every `,`/`.`
/// followed by digits and space-separated thousand groups into a token; otherwise (the source)
/// only the separators of its convention are taken, so that `1, 2` or `1,2` stay two numbers.
fn tokens(text: &str, lenient: bool, decimal_comma: bool) -> Vec<Token> {
    let cs: Vec<(usize, char)> = text.char_indices().collect();
    let n = cs.len();
    let ch = |i: usize| cs.get(i).map(|x| x.1);
    let digits_from = |mut k: usize| {
        let s = k;
        while k < n && cs[k].1.is_ascii_digit() {
            k += 1;
        }
        k - s
    };
    let (thousands, decimal) = if decimal_comma {
        ('.', ',')
    } else {
        (',', '.')
    };
    let mut out = Vec::new();
    let mut i = 0;
    while i < n {
        if !cs[i].1.is_ascii_digit() {
            i += 1;
            continue;
        }
        let start = i;
        // The word this digit run belongs to, looking back over identifier characters.
        let mut b = i;
        while b > 0
            && i - b < 64
            && (cs[b - 1].1.is_ascii_alphanumeric() || matches!(cs[b - 1].1, '_' | '-' | '.'))
        {
            b -= 1;
        }
        let mut identifier = i - b >= 64
            || cs[b..i]
                .iter()
                .any(|x| x.1.is_ascii_alphabetic() || x.1 == '_');
        let caret = i > 0 && cs[i - 1].1 == '^';
        let leading = digits_from(i);
        let mut j = i + leading;
        let mut only_space_groups = true;
        while let Some(sep) = ch(j) {
            let after = digits_from(j + 1);
            if after == 0 {
                break;
            }
            let take = if lenient {
                matches!(sep, ',' | '.')
                    || (is_space_sep(sep) && after == 3)
                    || (sep == ' ' && after == 3 && leading <= 3 && only_space_groups)
            } else {
                (sep == thousands && after == 3)
                    || sep == decimal
                    || (is_space_sep(sep) && after == 3)
            };
            if !take {
                break;
            }
            only_space_groups &= sep == ' ';
            j += 1 + after;
        }
        // What follows: a scale suffix, a word (identifier) or a scale word.
        let mut scale = None;
        let mut k = j;
        while k < n && (cs[k].1.is_ascii_alphanumeric() || cs[k].1 == '_') {
            k += 1;
        }
        if k > j {
            match (k - j, ch(j)) {
                (1, Some('k' | 'K')) => scale = Some(3),
                (1, Some('M')) => scale = Some(6),
                (1, Some('B')) => scale = Some(9),
                _ => identifier = true,
            }
        } else {
            scale = scale_after(&cs, j);
        }
        let end_byte = cs.get(j).map_or(text.len(), |x| x.0);
        out.push(Token {
            start: cs[start].0,
            raw: text[cs[start].0..end_byte].to_string(),
            identifier,
            caret,
            scale,
        });
        i = k.max(j);
    }
    out
}

/// A scale word or character right after a number (`million`, ` 万`, `亿`), as a power of ten.
fn scale_after(cs: &[(usize, char)], j: usize) -> Option<u32> {
    let mut k = j;
    if cs.get(k).is_some_and(|x| x.1 == ' ' || is_space_sep(x.1)) {
        k += 1;
    }
    let c = cs.get(k)?.1;
    let next = cs.get(k + 1).map(|x| x.1);
    match (c, next) {
        ('万', Some('亿')) => return Some(12),
        ('千', Some('万')) => return Some(7),
        ('百', Some('万')) => return Some(6),
        ('亿', _) => return Some(8),
        ('万', _) => return Some(4),
        ('千', _) => return Some(3),
        _ => {}
    }
    if !c.is_ascii_alphabetic() {
        return None;
    }
    let word: String = cs[k..]
        .iter()
        .take_while(|x| x.1.is_ascii_alphabetic())
        .take(9)
        .map(|x| x.1.to_ascii_lowercase())
        .collect();
    match word.as_str() {
        "thousand" => Some(3),
        "million" => Some(6),
        "billion" => Some(9),
        "trillion" => Some(12),
        _ => None,
    }
}

/// Canonical decimal string of `int`.`frac` × 10^`exp`: no leading zeros in the integer part,
/// no trailing zeros in the fraction (`007.50` → `7.5`, `2.0` → `2`).
fn canon(int: &str, frac: &str, exp: u32) -> String {
    let mut digits = String::with_capacity(int.len() + frac.len() + exp as usize);
    digits.push_str(int);
    digits.push_str(frac);
    let point = int.len() + exp as usize;
    while digits.len() < point {
        digits.push('0');
    }
    let (i, f) = digits.split_at(point);
    let i = i.trim_start_matches('0');
    let f = f.trim_end_matches('0');
    match (i.is_empty(), f.is_empty()) {
        (true, true) => "0".into(),
        (true, false) => format!("0.{f}"),
        (false, true) => i.to_string(),
        (false, false) => format!("{i}.{f}"),
    }
}

/// The value of `raw` read with `thousands` and `decimal` separators (space-like separators
/// are always thousands), or `None` when `raw` does not fit that convention.
fn reading(raw: &str, thousands: char, decimal: char, exp: u32) -> Option<String> {
    let (int, frac) = match raw.split_once(decimal) {
        Some((i, f)) if f.chars().all(|c| c.is_ascii_digit()) => (i, f),
        Some(_) => return None,
        None => (raw, ""),
    };
    let groups: Vec<&str> = int
        .split(|c: char| c == thousands || c == ' ' || is_space_sep(c))
        .collect();
    if groups.len() > 1
        && (groups[0].is_empty() || groups[0].len() > 3 || groups[1..].iter().any(|g| g.len() != 3))
    {
        return None;
    }
    if !groups.iter().all(|g| g.chars().all(|c| c.is_ascii_digit())) {
        return None;
    }
    Some(canon(&groups.concat(), frac, exp))
}

/// The source's numbers (see the module docs).
fn source_numbers(prose: &str, decimal_comma: bool) -> Vec<SourceNumber> {
    let (th, de) = if decimal_comma {
        ('.', ',')
    } else {
        (',', '.')
    };
    tokens(prose, false, decimal_comma)
        .into_iter()
        .filter(|t| !t.identifier && !t.caret)
        .map(|t| {
            let plain = reading(&t.raw, th, de, 0)
                .or_else(|| reading(&t.raw, de, th, 0))
                .unwrap_or_else(|| t.raw.clone());
            let mut values = Vec::new();
            if let Some(e) = t.scale {
                values.push(reading(&t.raw, th, de, e).unwrap_or_else(|| plain.clone()));
            }
            values.push(plain);
            values.dedup();
            SourceNumber {
                values,
                raw: t.raw,
                at: t.start,
            }
        })
        .collect()
}

/// Every value the translation's prose can be read as, with multiplicity (see the module docs).
fn target_values(prose: &str) -> HashMap<String, usize> {
    let mut pool: HashMap<String, usize> = HashMap::new();
    // One token adds each of its whole readings once, and its digit groups with their
    // multiplicity (`0,0,1` holds two zeros), but a value never twice for both reasons.
    let mut add = |whole: &mut Vec<String>, parts: &mut Vec<String>| {
        parts.sort();
        let mut counts: Vec<(String, usize)> = Vec::new();
        for p in parts.drain(..) {
            match counts.last_mut() {
                Some((v, n)) if *v == p => *n += 1,
                _ => counts.push((p, 1)),
            }
        }
        whole.sort();
        whole.dedup();
        for w in whole.drain(..) {
            if !counts.iter().any(|(v, _)| *v == w) {
                counts.push((w, 1));
            }
        }
        for (v, n) in counts {
            *pool.entry(v).or_default() += n;
        }
    };
    let (mut whole, mut parts) = (Vec::new(), Vec::new());
    for t in tokens(prose, true, false) {
        let exps: &[u32] = match t.scale {
            Some(e) => &[0, e][..],
            None => &[0][..],
        };
        for &e in exps {
            whole.extend(reading(&t.raw, ',', '.', e));
            whole.extend(reading(&t.raw, '.', ',', e));
        }
        whole.push(t.raw.clone());
        for g in t.raw.split(|c: char| !c.is_ascii_digit()) {
            if !g.is_empty() {
                parts.push(canon(g, "", 0));
            }
        }
        add(&mut whole, &mut parts);
    }
    // Chinese numerals: each character, and runs up to 99 (`二十五`), optionally scaled.
    let cs: Vec<char> = prose.chars().collect();
    let mut i = 0;
    while i < cs.len() {
        if cn_digit(cs[i]).is_none() {
            i += 1;
            continue;
        }
        let s = i;
        while i < cs.len() && cn_digit(cs[i]).is_some() {
            i += 1;
        }
        let run = &cs[s..i];
        for c in run {
            parts.push(cn_digit(*c).unwrap_or(0).to_string());
        }
        if let Some(v) = cn_value(run) {
            whole.push(v.to_string());
            let scale = match cs.get(i) {
                Some('百') => Some(2),
                Some('千') => Some(3),
                Some('万') => Some(4),
                Some('亿') => Some(8),
                _ => None,
            };
            if let Some(e) = scale {
                whole.push(canon(&v.to_string(), "", e));
            }
        }
        add(&mut whole, &mut parts);
    }
    pool
}

fn cn_digit(c: char) -> Option<u64> {
    Some(match c {
        '零' | '〇' => 0,
        '一' => 1,
        '二' | '两' => 2,
        '三' => 3,
        '四' => 4,
        '五' => 5,
        '六' => 6,
        '七' => 7,
        '八' => 8,
        '九' => 9,
        '十' => 10,
        _ => return None,
    })
}

/// The value of a run of Chinese numerals: one numeral, or a compound with 十 up to 99.
fn cn_value(run: &[char]) -> Option<u64> {
    let digit = |c: char| cn_digit(c).filter(|d| *d < 10);
    match run.iter().position(|&c| c == '十') {
        Some(p) if run.len() <= 3 => {
            let tens = match p {
                0 => 1,
                1 => digit(run[0])?,
                _ => return None,
            };
            let ones = match run.len() - p - 1 {
                0 => 0,
                1 => digit(run[p + 1])?,
                _ => return None,
            };
            Some(tens * 10 + ones)
        }
        Some(_) => None,
        None if run.len() == 1 => cn_digit(run[0]),
        None => None,
    }
}

/// `text` with the decimal digits of every script (`DIGIT_ZEROS`) as ASCII digits, and the Arabic
/// decimal and thousands separators as `.` and `,`.
fn ascii_digits(text: String) -> String {
    if !text
        .chars()
        .any(|c| !c.is_ascii() && (digit_value(c).is_some() || matches!(c, '\u{66B}' | '\u{66C}')))
    {
        return text;
    }
    text.chars()
        .map(|c| match c {
            // The Arabic decimal and thousands separators.
            '\u{66B}' => '.',
            '\u{66C}' => ',',
            c if !c.is_ascii() => digit_value(c).map_or(c, |d| char::from(b'0' + d)),
            c => c,
        })
        .collect()
}

/// The first code point (the zero) of each run of ten decimal digits of Unicode (general
/// category Nd, Unicode 15) in the Basic Multilingual Plane outside ASCII: Arabic-Indic,
/// Persian, N'Ko, Devanagari, Bengali, Gurmukhi, Gujarati, Oriya, Tamil, Telugu, Kannada,
/// Malayalam, Sinhala, Thai, Lao, Tibetan, Myanmar (two), Khmer, Mongolian, Limbu, New Tai Lue,
/// Tai Tham (two), Balinese, Sundanese, Lepcha, Ol Chiki, Vai, Saurashtra, Kayah Li, Javanese,
/// Myanmar Tai Laing, Cham, Meetei Mayek and the full-width digits. A table rather than a
/// crate: the Nd runs are fixed by the standard, and reading a digit's value is all that is
/// needed.
const DIGIT_ZEROS: &[u32] = &[
    0x0660, 0x06F0, 0x07C0, 0x0966, 0x09E6, 0x0A66, 0x0AE6, 0x0B66, 0x0BE6, 0x0C66, 0x0CE6, 0x0D66,
    0x0DE6, 0x0E50, 0x0ED0, 0x0F20, 0x1040, 0x1090, 0x17E0, 0x1810, 0x1946, 0x19D0, 0x1A80, 0x1A90,
    0x1B50, 0x1BB0, 0x1C40, 0x1C50, 0xA620, 0xA8D0, 0xA900, 0xA9D0, 0xA9F0, 0xAA50, 0xABF0, 0xFF10,
];

/// The value of a decimal digit of any script in [`DIGIT_ZEROS`] (not ASCII), or `None`.
fn digit_value(c: char) -> Option<u8> {
    let cp = c as u32;
    DIGIT_ZEROS
        .iter()
        .find(|&&z| (z..z + 10).contains(&cp))
        .map(|&z| (cp - z) as u8)
}

/// The line of `text` around byte offset `at`, from at most 80 characters before it (so that
/// the number is inside the 200-character excerpt).
fn line_at(text: &str, at: usize) -> String {
    let s = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let e = text[at..].find('\n').map_or(text.len(), |i| at + i);
    let from = text[s..at]
        .char_indices()
        .rev()
        .nth(79)
        .map_or(s, |(i, _)| s + i);
    if from > s {
        format!("…{}", &text[from..e])
    } else {
        text[s..e].to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::Lang;
    use crate::termbase::Termbase;

    fn run(s: &str, t: &str) -> Vec<Finding> {
        let ctx = QaContext::new(&Lang::parse("en"), &Lang::parse("zh"), &Termbase::default());
        check(&ctx, &Doc::parse(s), &Doc::parse(t), s, t)
    }

    fn values(s: &str) -> Vec<Vec<String>> {
        source_numbers(s, false)
            .into_iter()
            .map(|n| n.values)
            .collect()
    }

    #[test]
    fn digits_of_every_script_are_read() {
        assert_eq!(
            ascii_digits("३ और ٤ و ۵ และ ๖ ７".to_string()),
            "3 और 4 و 5 และ 6 7"
        );
        let ctx = QaContext::new(&Lang::parse("en"), &Lang::parse("hi"), &Termbase::default());
        let src = "It takes 3 steps.\n";
        let changed = "इसमें ४ चरण लगते हैं।\n";
        let f = check(&ctx, &Doc::parse(src), &Doc::parse(changed), src, changed);
        assert_eq!(f[0].severity, Severity::Error, "{f:#?}");
        let same = "इसमें ३ चरण लगते हैं।\n";
        assert_eq!(
            check(&ctx, &Doc::parse(src), &Doc::parse(same), src, same),
            vec![]
        );
    }

    #[test]
    fn a_number_beside_a_copied_name_is_found_changed() {
        let ctx = QaContext::new(
            &Lang::parse("en"),
            &Lang::parse("pt-BR"),
            &Termbase::default(),
        );
        let errors = |src: &str, tgt: &str| -> Vec<String> {
            check(&ctx, &Doc::parse(src), &Doc::parse(tgt), src, tgt)
                .into_iter()
                .filter(|f| f.severity == Severity::Error)
                .map(|f| f.message)
                .collect()
        };
        let src = "All examples run at exception level 1 (EL1).\n";
        assert_eq!(
            errors(
                src,
                "Todos os exemplos rodam no nível de exceção 2 (EL1).\n"
            ),
            ["the number 1 of the source is 2 in the translation; write the source's number"]
        );
        assert_eq!(
            errors(
                src,
                "Todos os exemplos rodam no nível de exceção 1 (EL1).\n"
            ),
            Vec::<String>::new()
        );
        // The minutes of a clock time are part of the time.
        let src = "From 9:00 to 16:30.\n";
        assert_eq!(errors(src, "Von 9 bis 16:30 Uhr.\n"), Vec::<String>::new());
    }

    #[test]
    fn a_number_changed_in_its_paragraph_is_an_error_where_the_unit_has_it_elsewhere() {
        let ctx = QaContext::new(&Lang::parse("en"), &Lang::parse("de"), &Termbase::default());
        let src = "The loop runs 3 times.\n\nIt stops after 4 steps or 3 errors.\n";
        let tgt = "Die Schleife läuft 4 Mal.\n\nSie stoppt nach 4 Schritten oder 3 Fehlern.\n";
        let f = check(&ctx, &Doc::parse(src), &Doc::parse(tgt), src, tgt);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(
            (f[0].severity, f[0].message.as_str()),
            (
                Severity::Error,
                "in paragraph 1, the number 3 of the source is 4 in the translation; write the source's number"
            )
        );
        // The same numbers in their own paragraphs pass.
        let ok = "Die Schleife läuft 3 Mal.\n\nSie stoppt nach 4 Schritten oder 3 Fehlern.\n";
        assert_eq!(
            check(&ctx, &Doc::parse(src), &Doc::parse(ok), src, ok),
            vec![]
        );
    }

    #[test]
    fn a_number_repeated_where_another_stood_is_changed() {
        let src = "Iterate: 0, 1, 2, and so on.\n";
        let f = run(src, "Iterieren: 1, 1, 2 und so weiter.\n");
        assert!(
            f.iter()
                .any(|f| f.severity == Severity::Error && f.message.contains("0")),
            "{f:#?}"
        );
        assert!(run(src, "Iterieren: 0, 1, 2 und so weiter.\n").is_empty());
    }

    #[test]
    fn source_numbers_skip_identifiers_and_labels() {
        let v = values(
            "GPT-4o and H100, v2, Llama3, 2xx, 1st and x86; Llama-3-70B. In 2024, 1,000 of 3.5% were 12\u{a0}000 or 1, 2 and 3-5 [^7]^8 of 128K.",
        );
        let got: Vec<&str> = v.iter().map(|x| x[0].as_str()).collect();
        assert_eq!(
            got,
            vec!["2024", "1000", "3.5", "12000", "1", "2", "3", "5", "128000"]
        );
        assert_eq!(
            v.last().unwrap(),
            &vec!["128000".to_string(), "128".to_string()]
        );
        assert_eq!(values("1.5 million")[0], vec!["1500000", "1.5"]);
        assert_eq!(values("version 2.0 and 007")[0], vec!["2"]);
        assert_eq!(values("version 2.0 and 007")[1], vec!["7"]);
    }

    #[test]
    fn target_notations_are_accepted() {
        let src = "A window of 128,000 tokens holds 300 pages; 3.5% of 1,000 runs took 1.5 million steps in 2024, and 1 call needs 2 or 10 tools out of 25, 20 and 20 again.\n";
        let tgt = "128 000 个 token 的窗口可容纳三百页；一千次运行中 3,5% 在 2024 年花了 150万步，一次调用需要两个或十个工具（共二十五个），20 和 20。\n";
        assert_eq!(run(src, tgt), vec![]);
        let tgt = tgt.replace("128 000", "12 800").replace("3,5%", "35%");
        let f = run(src, &tgt);
        let msgs: Vec<&str> = f.iter().map(|f| f.message.as_str()).collect();
        assert_eq!(
            msgs,
            vec![
                "the number 3.5 of the source is 35 in the translation; write the source's number",
                "the number 128,000 does not appear in the translation; keep it (another notation such as 1 000, 1.000 or 1万 is fine)",
            ]
        );
        assert_eq!(
            f.iter().map(|f| f.severity).collect::<Vec<_>>(),
            [Severity::Error, Severity::Warning]
        );
        assert_eq!(run("Costs 1.5 billion.\n", "耗资 15亿。\n"), vec![]);
        assert_eq!(run("About 128K tokens.\n", "约 12.8万 token。\n"), vec![]);
        assert_eq!(run("Steps: 20 steps.\n", "步数：２０步。\n"), vec![]);
    }

    /// A number changed into another of as many digits is an error, in any digits: Persian
    /// `۳` is 3.
    #[test]
    fn a_changed_number_is_an_error_in_any_script_of_digits() {
        let src = "Wait 3 seconds, then retry up to 12 times.\n";
        let fa = |s: &str, t: &str| {
            let ctx = QaContext::new(&Lang::parse("en"), &Lang::parse("fa"), &Termbase::default());
            check(&ctx, &Doc::parse(s), &Doc::parse(t), s, t)
        };
        assert_eq!(
            fa(src, "۳ ثانیه صبر کنید، سپس تا ۱۲ بار دوباره تلاش کنید.\n"),
            vec![]
        );
        let f = fa(src, "۴ ثانیه صبر کنید، سپس تا ۱۲ بار دوباره تلاش کنید.\n");
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(f[0].severity, Severity::Error);
        assert_eq!(
            f[0].message,
            "the number 3 of the source is 4 in the translation; write the source's number"
        );
    }

    #[test]
    fn changed_and_dropped_numbers_are_warned() {
        let src = "Stop after 20 steps; retry 20 times with 0.75 as threshold.\n";
        let f = run(src, "20 步后停止；以 7.5 为阈值重试。\n");
        let msgs: Vec<&str> = f.iter().map(|f| f.message.as_str()).collect();
        assert_eq!(
            msgs,
            vec![
                "the number 20 occurs 2 times in the source but 1 in the translation; check that none was dropped or changed",
                "the number 0.75 does not appear in the translation; keep it (another notation such as 1 000, 1.000 or 1万 is fine)",
            ]
        );
        assert_eq!(f[0].source_excerpt, src.trim_end());
    }

    #[test]
    fn digit_groups_keep_their_multiplicity() {
        let src = "Weights 0,0,1 and 0.\n";
        assert_eq!(run(src, "权重为 0,0,1 和 0。\n"), vec![]);
        let f = run(src, "权重为 0,1 和 0。\n");
        assert_eq!(f.len(), 1);
        assert_eq!(
            f[0].message,
            "the number 0 occurs 3 times in the source but 2 in the translation; check that none was dropped or changed"
        );
    }

    #[test]
    fn code_urls_and_footnote_labels_do_not_count() {
        let src = "Run `sleep 30` at https://x.io/v1/42 with $n=7$ and note[^3].\n\n[^3]: See.\n";
        let tgt = "在 https://x.io/v1/42 上运行 `sleep 30`，其中 $n=7$，见注[^3]。\n\n[^3]: 见。\n";
        assert_eq!(run(src, tgt), vec![]);
        assert!(source_numbers(&Doc::parse(src).clean_prose(), false).is_empty());
    }

    #[test]
    fn canonical_forms() {
        assert_eq!(canon("007", "50", 0), "7.5");
        assert_eq!(canon("1", "5", 8), "150000000");
        assert_eq!(canon("12", "8", 4), "128000");
        assert_eq!(canon("0", "0", 0), "0");
        assert_eq!(reading("1,500", '.', ',', 0).as_deref(), Some("1.5"));
        assert_eq!(reading("1,500", ',', '.', 0).as_deref(), Some("1500"));
        assert_eq!(reading("1,2,3", ',', '.', 0), None);
        assert_eq!(cn_value(&['二', '十', '五']), Some(25));
        assert_eq!(cn_value(&['十', '二']), Some(12));
        assert_eq!(cn_value(&['两']), Some(2));
    }
}
