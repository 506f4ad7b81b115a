//! Quotation marks per locale ([`quotes`], also for CJK targets) and French spacing
//! ([`fr_spacing`]).
//!
//! The conventions: Chinese `“”` with `‘’` inside (GB/T 15834-2011), Japanese and Traditional
//! Chinese `「」` with `『』` inside; French `« »` with narrow no-break spaces inside and a
//! no-break space before `; : ! ?` (Lexique des règles typographiques en usage à
//! l'Imprimerie nationale: an *espace fine insécable*, U+202F, before `; ! ?`, a no-break space
//! before `:`; either is accepted before all four, since both keep the mark on the line of its
//! word); German `„…“` (DIN 5008) or, in book typography, `»…«`.

use super::view::{BREAK, OPAQUE, View};
use super::{Hits, is_cjk_letter, is_cjk_punct, show};
use crate::config::QuoteStyle;

const NBSP: char = '\u{00A0}';
const NNBSP: char = '\u{202F}';

fn is_cjk(c: char) -> bool {
    is_cjk_letter(c) || is_cjk_punct(c)
}

/// `style_quotes`: quotation marks of another convention than `q`, one finding per mark.
///
/// - `“”` and `「」` (CJK targets): a straight `"` next to CJK text (after spaces), and the
///   other CJK convention's marks (`「」『』` under `“”`; `“”` and, next to CJK text, `‘’`
///   under `「」`).
/// - `«»` (French): a straight `"` (not after a digit, where it is an inch mark), `„`, and
///   English `“ ”` outside guillemets (inside them, `“ ”` are the French nested quotes).
/// - `„“` (German): a straight `"`, `”`, `“` used as an opening mark (after a space or at the
///   start, before a non-space), and `« »`; `»«` (German books): `"`, `„`, `“`, `”`.
pub fn quotes(v: &View, q: QuoteStyle, hits: &mut Hits) {
    let mut depth = 0usize;
    for i in 0..v.chars.len() {
        let c = v.chars[i].c;
        if v.chars[i].at.is_none() {
            continue;
        }
        let prev = v.c(i as isize - 1);
        let next = v.c(i as isize + 1);
        let straight = c == '"' && !prev.is_ascii_digit();
        let want = q.as_str();
        let msg = match q {
            QuoteStyle::Curly | QuoteStyle::Corner => {
                let cjk_near = is_cjk(v.prev_nonspace(i)) || is_cjk(v.next_nonspace(i));
                let other = match (q, c) {
                    (QuoteStyle::Curly, '「' | '」' | '『' | '』') => true,
                    (QuoteStyle::Corner, '“' | '”') => true,
                    (QuoteStyle::Corner, '‘' | '’') => cjk_near,
                    _ => false,
                };
                if c == '"' && cjk_near {
                    Some(format!("straight quote `\"` in CJK text; write {want}"))
                } else if other {
                    Some(format!(
                        "quotation mark `{c}` of another convention; this book uses {want}"
                    ))
                } else {
                    None
                }
            }
            QuoteStyle::Guillemets => {
                match c {
                    '«' => depth += 1,
                    '»' => depth = depth.saturating_sub(1),
                    _ => {}
                }
                if straight || c == '„' || (depth == 0 && matches!(c, '“' | '”')) {
                    Some(format!(
                        "quotation mark `{c}`; French uses « » (with narrow no-break spaces inside), and “ ” only inside them"
                    ))
                } else {
                    None
                }
            }
            QuoteStyle::LowHigh => {
                let opener = c == '“'
                    && matches!(prev, BREAK | ' ' | '(' | '[' | NBSP | OPAQUE)
                    && !next.is_whitespace();
                if straight || matches!(c, '”' | '«' | '»') || opener {
                    Some(format!(
                        "quotation mark `{c}`; German uses „…“ (or set `style.quotes = \"»«\"`)"
                    ))
                } else {
                    None
                }
            }
            QuoteStyle::Chevrons => (straight || matches!(c, '„' | '“' | '”'))
                .then(|| format!("quotation mark `{c}`; this book uses »…«")),
        };
        if let Some(m) = msg {
            hits.push(v, i, i, m);
        }
    }
}

/// `style_fr_spacing`: before `; : ! ?` used as sentence punctuation (followed by a space, the
/// end of a line, a closing mark or other punctuation: `a:b`, `12:30`, `?q=1` are not), and
/// after `«` and before `»`, a no-break space (U+202F or U+00A0). An ordinary space there is a
/// finding on the space (it lets the line break before the mark); no space at all is a finding
/// on the mark. Marks at the start of a line, and the second mark of `?!`, are left alone.
pub fn fr_spacing(v: &View, hits: &mut Hits) {
    for i in 0..v.chars.len() {
        let c = v.chars[i].c;
        if v.chars[i].at.is_none() {
            continue;
        }
        let prev = v.c(i as isize - 1);
        let next = v.c(i as isize + 1);
        let nb = |c: char| c == NBSP || c == NNBSP;
        let wanted = if c == ':' { show(NBSP) } else { show(NNBSP) };
        match c {
            ';' | ':' | '!' | '?' => {
                let sentence = !(next.is_alphanumeric()
                    || matches!(next, '/' | '\\' | '=' | '&' | '#' | '_' | '-' | OPAQUE));
                if !sentence || matches!(prev, BREAK | ';' | ':' | '!' | '?') || nb(prev) {
                    continue;
                }
                if prev.is_whitespace() {
                    hits.push(
                        v,
                        i - 1,
                        i - 1,
                        format!(
                            "ordinary space before `{c}` (the line may break there); write {wanted}"
                        ),
                    );
                } else {
                    hits.push(
                        v,
                        i,
                        i,
                        format!("no space before `{c}`; French puts {wanted} before it"),
                    );
                }
            }
            '«' => {
                if nb(next) || next == BREAK {
                    continue;
                }
                if next.is_whitespace() {
                    hits.push(
                        v,
                        i + 1,
                        i + 1,
                        format!("ordinary space after `«`; write {}", show(NNBSP)),
                    );
                } else {
                    hits.push(
                        v,
                        i,
                        i,
                        format!("no space after `«`; put {} after it", show(NNBSP)),
                    );
                }
            }
            '»' => {
                if nb(prev) || prev == BREAK {
                    continue;
                }
                if prev.is_whitespace() {
                    hits.push(
                        v,
                        i - 1,
                        i - 1,
                        format!("ordinary space before `»`; write {}", show(NNBSP)),
                    );
                } else {
                    hits.push(
                        v,
                        i,
                        i,
                        format!("no space before `»`; put {} before it", show(NNBSP)),
                    );
                }
            }
            _ => {}
        }
    }
}
