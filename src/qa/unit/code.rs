//! Code must survive translation byte for byte (prompt rule 3), so every difference is reported.
//!
//! - `code_blocks` (error): fenced code blocks keep their info string and body, byte for byte
//!   and in the same order; so do indented code blocks. With the same number of blocks, each
//!   block is compared with the block at the same position and every differing one is reported
//!   with its first differing line (a translated comment is the usual cause). With another
//!   number of blocks, the count is reported, then each source block without an identical
//!   block in the translation and each translation block that is not in the source. Under the
//!   campaign key `code_comments = "translate"` ([`QaContext::code_comments`]), bodies are
//!   compared with their comments removed per the fence's language
//!   ([`crate::qa::unit::code_comments::code_without_comments`]): only comments (and the blank lines around
//!   them) may differ, every other code token stays identical. There, a block whose code
//!   differs only in string literals (or JSX/HTML text between tags) that read as text for
//!   people is a warning: human translations localize the text a program shows; a changed
//!   literal that reads as a key, type name or path is an error. In either mode the line named
//!   is the first whose code differs once literals are set aside, so a translated literal never
//!   hides a renamed identifier further down.
//! - `inline_code`: inline code spans form the same multiset (their order may change with
//!   sentence order). A span entirely missing from the translation is an error: code was lost
//!   or altered (a translated `search("Tesla service")` shows up this way). A span the
//!   translation has fewer times than the source is a warning: translators legitimately fold a
//!   repeated identifier into a pronoun ("`tools` … it"); comparing the human Chinese and
//!   English editions of the reference corpus shows this often. A span only in the translation
//!   (or more often) is a warning: on its own it loses nothing (an added pair of backticks
//!   around a name), and a *changed* span is already reported as missing.
//!
//! Line endings are normalised by [`Doc::parse`], so CRLF never counts as a change. No
//! thresholds: code is either identical or not.

use crate::qa::unit::code_comments::{CodeComments, code_without_comments};
use crate::qa::view::doc::Doc;
use crate::qa::{Finding, QaContext, SeqDiff, Severity, quote};

/// Runs `code_blocks` and `inline_code` (see the module docs).
pub fn check(ctx: &QaContext, src: &Doc, tgt: &Doc, _source: &str, _target: &str) -> Vec<Finding> {
    let mut out = Vec::new();
    let comments = ctx.code_comments;
    let fence = |f: &crate::qa::view::doc::Fence| (f.info.clone(), f.body.clone());
    let s: Vec<(String, String)> = src.fences.iter().map(fence).collect();
    let t: Vec<(String, String)> = tgt.fences.iter().map(fence).collect();
    blocks(&mut out, "fenced", &s, &t, comments, ctx.human_edition);
    let plain = |b: &String| (String::new(), b.clone());
    let s: Vec<(String, String)> = src.indented.iter().map(plain).collect();
    let t: Vec<(String, String)> = tgt.indented.iter().map(plain).collect();
    blocks(&mut out, "indented", &s, &t, comments, ctx.human_edition);
    inline(ctx, &mut out, src, tgt);
    out
}

/// Compares code blocks given as `(info, body)` pairs; `kind` is `fenced` or `indented`.
fn blocks(
    out: &mut Vec<Finding>,
    kind: &str,
    src: &[(String, String)],
    tgt: &[(String, String)],
    comments: CodeComments,
    human_edition: bool,
) {
    const CHECK: &str = "code_blocks";
    let translate = comments == CodeComments::Translate;
    // The body as compared: whole, or without comments under `translate`.
    let code = |b: &(String, String)| -> String {
        if translate {
            code_without_comments(&b.0, &b.1)
        } else {
            b.1.clone()
        }
    };
    let name = |i: usize, b: &(String, String)| {
        if b.0.is_empty() {
            format!("{kind} code block {}", i + 1)
        } else {
            format!("{kind} code block {} ({})", i + 1, b.0)
        }
    };
    // Each source string literal of the unit's code and the set of its renderings (itself
    // where kept), over the blocks paired by position.
    let mut renderings: std::collections::HashMap<String, std::collections::HashSet<String>> =
        Default::default();
    if human_edition && src.len() == tgt.len() {
        for (a, b) in src.iter().zip(tgt) {
            let (ma, la) = without_literals(&a.0, &code(a));
            let (mb, lb) = without_literals(&b.0, &code(b));
            if ma == mb && la.len() == lb.len() {
                for (x, y) in la.into_iter().zip(lb) {
                    renderings.entry(x).or_default().insert(y);
                }
            }
        }
    }
    if src.len() == tgt.len() {
        for (i, (a, b)) in src.iter().zip(tgt).enumerate() {
            if a.0 != b.0 {
                out.push(Finding::new(
                    CHECK,
                    Severity::Error,
                    format!(
                        "{kind} code block {} has the info string {} instead of {}; restore the source's info string",
                        i + 1,
                        quote(&b.0),
                        quote(&a.0)
                    ),
                    &a.0,
                    &b.0,
                ));
            }
            if a.1 == b.1 {
                continue;
            }
            let (ca, cb) = (code(a), code(b));
            if ca == cb {
                continue;
            }
            let (ma, la) = without_literals(&a.0, &ca);
            let (mb, lb) = without_literals(&b.0, &cb);
            if ma == mb && la.len() == lb.len() && la != lb {
                // Only string literals differ: text shown to readers may be localized (human
                // translations do it throughout), a key, path or name the program reads may not.
                let changed: Vec<(&String, &String)> =
                    la.iter().zip(&lb).filter(|(x, y)| x != y).collect();
                // In a translation made elsewhere, a literal translated into another word and
                // rendered so wherever the unit's code has it is sample data localized with its
                // program (`'Cabbage'` → `'Kohl'` in the data and in the lookup alike): the
                // program compares it with itself only. A literal kept in one place and
                // translated in another, or altered rather than translated (`name` → `name2`),
                // is what breaks a lookup.
                let consistent = |x: &str, y: &str| {
                    human_edition
                        && translated_word(x, y)
                        && renderings.get(x).is_some_and(|r| r.len() == 1)
                };
                let key_like = |x: &str, y: &str| !reader_text(x) && !consistent(x, y);
                // Under `keep` code blocks stay byte for byte, strings included.
                let shown = translate && !changed.iter().any(|(x, y)| key_like(x, y));
                let (x, y) = changed
                    .iter()
                    .copied()
                    .find(|(x, y)| !translate || key_like(x, y))
                    .unwrap_or(changed[0]);
                out.push(Finding::new(
                    CHECK,
                    if shown { Severity::Warning } else { Severity::Error },
                    if shown {
                        format!(
                            "{} has {} string literal(s) translated ({} → {}), the code around them unchanged; keep them if the program shows them to readers, restore them if it reads them",
                            name(i, a),
                            changed.len(),
                            quote(x),
                            quote(y)
                        )
                    } else if !translate {
                        format!(
                            "{} has the string literal {} changed to {}; copy code blocks byte for byte, comments and strings included",
                            name(i, a),
                            quote(x),
                            quote(y)
                        )
                    } else {
                        format!(
                            "{} changes the string literal {} to {}, which the program reads as a key, path or name; restore it",
                            name(i, a),
                            quote(x),
                            quote(y)
                        )
                    },
                    x,
                    y,
                ));
                continue;
            }
            // The first line whose code differs once literals are set aside, so that a localized
            // literal does not hide a renamed identifier further down (the bodies themselves when
            // only what the literal reading leaves out differs, such as spaces between tags).
            let (da, db) = if ma == mb { (&ca, &cb) } else { (&ma, &mb) };
            if trailing_trimmed(da) == trailing_trimmed(db) {
                // Spaces at line ends change no program (an editor strips them on save).
                out.push(Finding::new(
                    CHECK,
                    Severity::Warning,
                    format!(
                        "{} differs from the source only in spaces at line ends; copy code blocks byte for byte",
                        name(i, a)
                    ),
                    "",
                    "",
                ));
                continue;
            }
            let (_, sa, sb) = first_difference(da, db);
            let lines = differing_lines(da, db);
            let word = if translate { "code line" } else { "line" };
            let at = match lines.as_slice() {
                [one] => format!("{word} {one}"),
                many => format!(
                    "{} {word}s ({})",
                    many.len(),
                    many.iter()
                        .take(MAX_LINES_NAMED)
                        .map(usize::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                        + if many.len() > MAX_LINES_NAMED {
                            ", …"
                        } else {
                            ""
                        }
                ),
            };
            let message = if translate {
                format!(
                    "{} differs from the source outside comments and string literals at {at} (comments and blank lines not counted); only comments may be translated, copy the code byte for byte",
                    name(i, a)
                )
            } else {
                format!(
                    "{} differs from the source outside string literals at {at}; copy code blocks byte for byte, comments included",
                    name(i, a)
                )
            };
            out.push(Finding::new(CHECK, Severity::Error, message, sa, sb));
        }
        return;
    }
    out.push(Finding::new(
        CHECK,
        Severity::Error,
        format!(
            "the source has {} {kind} code blocks but the translation {}; restore every code block unchanged and add none",
            src.len(),
            tgt.len()
        ),
        src.first().map_or("", |b| b.1.as_str()),
        tgt.first().map_or("", |b| b.1.as_str()),
    ));
    // Blocks of one side without an identical block on the other (multiset difference).
    let key = |b: &(String, String)| format!("{}\n{}", b.0, code(b));
    let sk: Vec<String> = src.iter().map(key).collect();
    let tk: Vec<String> = tgt.iter().map(key).collect();
    let sr: Vec<&str> = sk.iter().map(String::as_str).collect();
    let tr: Vec<&str> = tk.iter().map(String::as_str).collect();
    let d = SeqDiff::new(&sr, &tr);
    let mut used_s = vec![false; src.len()];
    for m in &d.missing {
        if let Some(i) = (0..src.len()).find(|&i| !used_s[i] && sr[i] == *m) {
            used_s[i] = true;
            out.push(Finding::new(
                CHECK,
                Severity::Error,
                format!(
                    "{} of the source has no identical block in the translation; restore it byte for byte",
                    name(i, &src[i])
                ),
                &src[i].1,
                "",
            ));
        }
    }
    let mut used_t = vec![false; tgt.len()];
    for e in &d.extra {
        if let Some(i) = (0..tgt.len()).find(|&i| !used_t[i] && tr[i] == *e) {
            used_t[i] = true;
            out.push(Finding::new(
                CHECK,
                Severity::Error,
                format!(
                    "{} of the translation is not in the source; remove it or restore the source's block",
                    name(i, &tgt[i])
                ),
                "",
                &tgt[i].1,
            ));
        }
    }
}

/// `code` with the contents of its string literals taken out (`"…"` becomes `""`), and those
/// contents in order. A literal runs from a quote (`"`, `` ` ``, and `'` outside Rust) to the
/// same quote on the same line, over backslash escapes. In Rust `'` also opens lifetimes, so
/// there only a char literal (`'x'`, `'\n'`) counts. Both sides of a comparison are read the
/// same way, so a misread quote hides nothing that differs outside it.
/// Hand-rolled: a lexer per fence language would be a dependency per language, and a literal's
/// extent is all this needs.
fn without_literals(lang: &str, code: &str) -> (String, Vec<String>) {
    let name = lang.split([',', ' ', '{']).next().unwrap_or("");
    let rust = matches!(name, "rust" | "rs");
    let markup = MARKUP_LANGUAGES.contains(&name);
    let mut out = String::with_capacity(code.len());
    let mut literals = Vec::new();
    let chars: Vec<char> = code.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if markup
            && c == '>'
            && let Some((text, end)) = markup_text(&chars, i + 1)
        {
            // The text between two tags, with its `{expression}`s kept as code.
            out.push('>');
            let mut depth = 0usize;
            let mut shown = String::new();
            for &t in &chars[i + 1..end] {
                match t {
                    '{' => {
                        depth += 1;
                        out.push(t);
                    }
                    '}' => {
                        depth = depth.saturating_sub(1);
                        out.push(t);
                    }
                    _ if depth > 0 => out.push(t),
                    _ => shown.push(t),
                }
            }
            if text {
                literals.push(shown);
            }
            i = end;
            continue;
        }
        let quote_char = c == '"' || c == '`' || (c == '\'' && !rust);
        let rust_char = rust
            && c == '\''
            && (chars.get(i + 2) == Some(&'\'')
                || (chars.get(i + 1) == Some(&'\\') && chars.get(i + 3) == Some(&'\'')));
        if quote_char || rust_char {
            let mut j = i + 1;
            let mut closed = false;
            while j < chars.len() && chars[j] != '\n' {
                if chars[j] == '\\' {
                    j += 2;
                    continue;
                }
                if chars[j] == c {
                    closed = true;
                    break;
                }
                j += 1;
            }
            if closed {
                literals.push(chars[i + 1..j].iter().collect());
                out.push(c);
                out.push(c);
                i = j + 1;
                continue;
            }
        }
        out.push(c);
        i += 1;
    }
    (out, literals)
}

/// Fence languages whose code holds markup (JSX, HTML templates): the text between two tags
/// is shown to readers, as a string literal's content may be.
const MARKUP_LANGUAGES: &[&str] = &[
    "js",
    "jsx",
    "javascript",
    "ts",
    "tsx",
    "typescript",
    "html",
    "htm",
    "xml",
    "vue",
    "svelte",
];

/// The text of a markup text node starting at `from` (just after a `>`): whether it has a
/// letter, and the index of the `<` that ends it. `None` when no `<` follows, or when the run
/// holds what markup text rarely has and code has (`;`, `=`, a call's `(`, a `)` the run did
/// not open), so that a comparison `a > b` is not taken for a tag's end.
fn markup_text(chars: &[char], from: usize) -> Option<(bool, usize)> {
    let is_name_char = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    let (mut depth, mut parens) = (0usize, 0usize);
    let mut letters = false;
    for (k, &c) in chars.iter().enumerate().skip(from) {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            '<' if depth == 0 => return Some((letters, k)),
            ';' | '=' if depth == 0 => return None,
            // A call (`f(`) or a parenthesis closed that the run never opened (`if (a > b)`)
            // is code; a parenthesis in words (`(located in {city})`) is text.
            '(' if depth == 0 && k > from && is_name_char(chars[k - 1]) => return None,
            '(' if depth == 0 => parens += 1,
            ')' if depth == 0 && parens == 0 => return None,
            ')' if depth == 0 => parens -= 1,
            _ if depth == 0 && c.is_alphabetic() => letters = true,
            _ => {}
        }
    }
    None
}

/// Whether a source string literal's content reads as text for people (a space, a letter
/// outside ASCII, or sentence punctuation at its end: `"zero!"`) rather than a key, type name,
/// path or identifier the program reads (`"string"` in a JSON schema, `"/api/users"`).
fn reader_text(s: &str) -> bool {
    s.contains(char::is_whitespace)
        || s.chars().any(|c| c.is_alphabetic() && !c.is_ascii())
        || s.ends_with(['.', '!', '?', ':', '…'])
}

/// Whether string literal `b` is `a` translated into another word rather than altered: both
/// are words (letters, spaces, hyphens, apostrophes), and `b` has a letter outside ASCII where
/// `a` has none, or shares neither its first nor its last three characters (`Cabbage` →
/// `Kohl`, `Play` → `Lecture`; not `name` → `name2` or `Hamburg` → `Hamburgo`, which read as
/// the same name changed).
fn translated_word(a: &str, b: &str) -> bool {
    // Words only: a path, URL, file name or format string (`config.json`, `/api/`, `%s`) is
    // read by the program whatever its language.
    let words = |x: &str| {
        x.chars().any(char::is_alphabetic)
            && x.chars()
                .all(|c| c.is_alphabetic() || matches!(c, ' ' | '-' | '\'' | '’'))
    };
    if !words(a) || !words(b) {
        return false;
    }
    if a.is_ascii() && b.chars().any(|c| c.is_alphabetic() && !c.is_ascii()) {
        return true;
    }
    let (a, b) = (a.to_lowercase(), b.to_lowercase());
    let (ca, cb): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let head = ca.iter().zip(&cb).take_while(|(x, y)| x == y).count();
    let tail = ca
        .iter()
        .rev()
        .zip(cb.iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    head < 3.min(ca.len()) && tail < 3.min(ca.len())
}

/// Normalized Levenshtein similarity (1 − edits / longer length) at which a span of a block
/// reads as another span altered: half the characters kept. A one-letter change of a
/// four-letter name scores 0.75; `fetchBio('Bob')` against `'Bob'` scores 0.33.
const MIN_ALTERED_SIMILARITY: f64 = 0.5;

/// Most line numbers a `code_blocks` message names (the count is always given).
const MAX_LINES_NAMED: usize = 8;

/// `code` with the spaces and tabs at the end of each line removed.
fn trailing_trimmed(code: &str) -> String {
    code.lines()
        .map(|l| l.trim_end_matches([' ', '\t']))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The 1-based numbers of the lines of `a` that `b` does not have in the same order: the
/// lines outside a longest common subsequence of the two texts' lines (each line compared
/// whole). A line `b` adds is named by the number of the line of `a` it stands before.
/// Hand-written: a line LCS over a code block's few hundred lines at most is a dozen lines of
/// dynamic programming, and no diff crate is among the dependencies.
fn differing_lines(a: &str, b: &str) -> Vec<usize> {
    let (la, lb): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    let (n, m) = (la.len(), lb.len());
    if n * m > 1_000_000 {
        return vec![first_difference(a, b).0];
    }
    let mut t = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            t[i][j] = if la[i] == lb[j] {
                t[i + 1][j + 1] + 1
            } else {
                t[i + 1][j].max(t[i][j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut out: Vec<usize> = Vec::new();
    let push = |k: usize, out: &mut Vec<usize>| {
        if out.last() != Some(&k) {
            out.push(k);
        }
    };
    while i < n || j < m {
        if i < n && j < m && la[i] == lb[j] {
            i += 1;
            j += 1;
        } else if j < m && (i == n || t[i][j + 1] >= t[i + 1][j]) {
            push((i + 1).min(n.max(1)), &mut out);
            j += 1;
        } else {
            push(i + 1, &mut out);
            i += 1;
        }
    }
    out
}

/// The 1-based number of the first line where `a` and `b` differ, and both texts from that
/// line on.
fn first_difference<'a>(a: &'a str, b: &'a str) -> (usize, &'a str, &'a str) {
    let mut common = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    while !a.is_char_boundary(common) {
        common -= 1;
    }
    // Back up to the start of the line (a line start is a char boundary on both sides).
    let start = a[..common].rfind('\n').map_or(0, |i| i + 1);
    let line = a[..start].matches('\n').count() + 1;
    (line, &a[start..], &b[start..])
}

/// `inline_code`: the same multiset of inline code spans.
fn inline(ctx: &QaContext, out: &mut Vec<Finding>, src: &Doc, tgt: &Doc) {
    const CHECK: &str = "inline_code";
    // Spans compared without the spaces at their ends: CommonMark strips one space from each
    // end only when both ends have one, so `` `JsCast ` `` keeps a space a reader cannot tell
    // from the source's `` `JsCast` ``.
    let s: Vec<&str> = src.inline_code.iter().map(|x| x.trim()).collect();
    let t: Vec<&str> = tgt.inline_code.iter().map(|x| x.trim()).collect();
    let d = SeqDiff::new(&s, &t);
    let count = |items: &[&str], x: &str| items.iter().filter(|i| **i == x).count();
    // In a translation made elsewhere, a span the translator changed along with the example
    // code (the span is in the source's code blocks, its rendering in the translation's: a
    // localized name or string), or wrote in another form of the same name (`Results` for
    // `Result`, `map` for `map()`), is a warning.
    let in_code = |doc: &Doc, x: &str| doc.fences.iter().any(|f| f.body.contains(x));
    let same_name = |a: &str, b: &str| {
        let base = |x: &str| x.trim_end_matches("()").trim_end_matches('s').to_string();
        base(a) == base(b) && !base(a).is_empty()
    };
    // …or whose string literals only are translated (`setBio('This is Bob’s bio')` with its
    // words in the target language, as the example's data).
    let literals_translated = |m: &str, e: &str| {
        let ((cm, lm), (ce, le)) = (without_literals("js", m), without_literals("js", e));
        cm == ce
            && lm.len() == le.len()
            && lm != le
            && lm
                .iter()
                .zip(&le)
                .all(|(x, y)| x == y || translated_word(x, y))
    };
    let localized = |m: &str| {
        ctx.human_edition
            && d.extra.iter().any(|e| {
                count(&s, e) == 0
                    && ((in_code(src, m) && in_code(tgt, e) && !in_code(tgt, m))
                        || same_name(m, e)
                        || literals_translated(m, e))
            })
    };
    let mut seen: Vec<&str> = Vec::new();
    for m in &d.missing {
        if seen.contains(m) {
            continue;
        }
        seen.push(m);
        let (a, b) = (count(&s, m), count(&t, m));
        let (severity, message) = if b == 0 && localized(m) {
            (
                Severity::Warning,
                format!(
                    "inline code {} is written differently in the translation, as its example code or another form of the name; keep it as in the source unless the localized example needs it",
                    quote(m)
                ),
            )
        } else if b == 0 {
            (
                Severity::Error,
                format!(
                    "inline code {} is missing from the translation; copy inline code unchanged",
                    quote(m)
                ),
            )
        } else {
            (
                Severity::Warning,
                format!(
                    "inline code {} occurs {a} times in the source but {b} in the translation; copy every inline code span unchanged",
                    quote(m)
                ),
            )
        };
        out.push(Finding::new(CHECK, severity, message, m, ""));
    }
    let mut seen: Vec<&str> = Vec::new();
    for e in &d.extra {
        if seen.contains(e) {
            continue;
        }
        seen.push(e);
        let (a, b) = (count(&s, e), count(&t, e));
        let message = if a == 0 {
            format!(
                "inline code {} does not occur in the source; remove the backticks or restore the source's span",
                quote(e)
            )
        } else {
            format!(
                "inline code {} occurs {b} times in the translation but {a} in the source; keep the source's inline code",
                quote(e)
            )
        };
        out.push(Finding::new(CHECK, Severity::Warning, message, "", e));
    }
    // Per paragraph, list item, heading and table paired one to one: a span altered inside its
    // block (one of the block's spans missing there while the block has one its source lacks)
    // is an error even where the unit has the missing span elsewhere.
    for (i, j) in crate::qa::unit::structure::pairs(src, tgt) {
        let (a, b) = (&src.blocks[i], &tgt.blocks[j]);
        if a.code.is_empty() {
            continue;
        }
        let sa: Vec<&str> = a.code.iter().map(|x| x.trim()).collect();
        let tb: Vec<&str> = b.code.iter().map(|x| x.trim()).collect();
        let d = SeqDiff::new(&sa, &tb);
        // The block's span in the missing one's place: one that reads as it altered (`tasks`
        // for `task`, `Promise.al`), or one the source's unit never has (`значение` for
        // `value`, `useMemo` for `useCallback`). A span the source has elsewhere (a name of a
        // sentence merged into this one) or that holds the missing one (`fetchBio('Bob')`
        // for `'Bob'`) is the block's own wording; a span gone from the whole unit is
        // reported above.
        let altered = |m: &str| {
            d.extra.iter().find(|e| {
                strsim::normalized_levenshtein(m, e) >= MIN_ALTERED_SIMILARITY
                    || (count(&s, e) == 0 && !e.contains(m))
            })
        };
        for (m, foreign) in d
            .missing
            .iter()
            .filter(|m| count(&t, m) > 0)
            .filter_map(|m| Some((m, altered(m)?)))
        {
            out.push(Finding::new(
                CHECK,
                Severity::Error,
                format!(
                    "in {}, inline code {} is missing and the translation has {} instead; copy inline code unchanged",
                    crate::qa::unit::structure::name(&src.blocks, i),
                    quote(m),
                    quote(foreign)
                ),
                a.text.trim(),
                b.text.trim(),
            ));
        }
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

    const SRC: &str = "Call `run()` and `stop()`.\n\n```python\n# start the loop\nrun()\n```\n\n    $ agent --help\n";

    #[test]
    fn an_inline_code_span_altered_in_its_paragraph_is_an_error_where_the_unit_has_it_elsewhere() {
        let src = "Call `run()` first.\n\nThen call `stop()` and `run()` again.\n";
        let tgt = "Zuerst `rux()` aufrufen.\n\nDann `stop()` und wieder `run()` aufrufen.\n";
        let f: Vec<Finding> = run(src, tgt)
            .into_iter()
            .filter(|f| f.severity == Severity::Error)
            .collect();
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(
            f[0].message,
            "in paragraph 1, inline code `run()` is missing and the translation has `rux()` instead; copy inline code unchanged"
        );
        // Moved to another paragraph with nothing in its place: not an error.
        let moved = "Zuerst aufrufen.\n\nDann `stop()` und `run()` und wieder `run()` aufrufen.\n";
        assert!(
            run(src, moved)
                .iter()
                .all(|f| f.severity != Severity::Error),
            "{:#?}",
            run(src, moved)
        );
        // A span of the source's unit in its place, or one holding it, is the sentence's own
        // wording; a translated name in its place is an error.
        let src = "Call `run()` first.\n\nThen call `stop()` and `run()` again.\n";
        for (tgt, errors) in [
            (
                "Zuerst `stop()` aufrufen.\n\nDann `stop()` und wieder `run()` aufrufen.\n",
                0,
            ),
            (
                "Zuerst `run() --now` aufrufen.\n\nDann `stop()` und wieder `run()` aufrufen.\n",
                0,
            ),
            (
                "Zuerst `laufen()` aufrufen.\n\nDann `stop()` und wieder `run()` aufrufen.\n",
                1,
            ),
        ] {
            let f = run(src, tgt);
            let n = f.iter().filter(|f| f.severity == Severity::Error).count();
            assert_eq!(n, errors, "{tgt}: {f:#?}");
        }
    }

    #[test]
    fn every_differing_code_line_is_named_and_trailing_spaces_are_a_warning() {
        let src = "```rust\nlet a = 1;\nlet b = 2;\nlet c = 3;\nlet d = 4;\n```\n";
        let tgt = "```rust\nlet a = 1;\nlet b = 5;\nlet c = 3;\nlet e = 4;\n```\n";
        let f = run(src, tgt);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert!(
            f[0].message.contains("at 2 lines (2, 4)"),
            "{}",
            f[0].message
        );
        let spaces = "```rust\nlet a = 1;  \nlet b = 2;\nlet c = 3;\t\nlet d = 4;\n```\n";
        let f = run(src, spaces);
        assert_eq!((f.len(), f[0].severity), (1, Severity::Warning), "{f:#?}");
        assert_eq!(differing_lines("a\nb\nc", "a\nc"), vec![2]);
        assert_eq!(differing_lines("a\nc", "a\nb\nc"), vec![2]);
    }

    #[test]
    fn inline_code_localized_with_its_example_code_is_a_warning_in_a_human_edition() {
        let src = "Call `greet(\"Alice\")` to see it.\n\n```js\ngreet(\"Alice\");\n```\n";
        let tgt = "Rufe `greet(\"Alina\")` auf.\n\n```js\ngreet(\"Alina\");\n```\n";
        let mut ctx = QaContext::new(&Lang::parse("en"), &Lang::parse("de"), &Termbase::default());
        ctx.code_comments = CodeComments::Translate;
        let errors = |ctx: &QaContext| {
            check(ctx, &Doc::parse(src), &Doc::parse(tgt), src, tgt)
                .into_iter()
                .filter(|f| f.check == "inline_code" && f.severity == Severity::Error)
                .count()
        };
        assert_eq!(errors(&ctx), 1);
        ctx.human_edition = true;
        assert_eq!(errors(&ctx), 0);
    }

    #[test]
    fn identical_code_passes() {
        let tgt = "调用 `stop()` 之前先调用 `run()`。\n\n```python\n# start the loop\nrun()\n```\n\n    $ agent --help\n";
        assert_eq!(run(SRC, tgt), vec![]);
        // CRLF line endings are not a change.
        assert_eq!(run(SRC, &tgt.replace('\n', "\r\n")), vec![]);
    }

    #[test]
    fn translated_comment_is_reported_with_its_line() {
        let tgt = "调用 `run()` 和 `stop()`。\n\n```python\n# 启动循环\nrun()\n```\n\n    $ agent --help\n";
        let f = run(SRC, tgt);
        assert_eq!(f.len(), 1);
        assert_eq!(
            (f[0].check.as_str(), f[0].severity),
            ("code_blocks", Severity::Error)
        );
        assert_eq!(
            f[0].message,
            "fenced code block 1 (python) differs from the source outside string literals at line 1; copy code blocks byte for byte, comments included"
        );
        assert_eq!(f[0].source_excerpt, "# start the loop\nrun()\n");
        assert_eq!(f[0].target_excerpt, "# 启动循环\nrun()\n");
    }

    #[test]
    fn translated_code_comments_pass_under_translate() {
        let mut ctx = QaContext::new(&Lang::parse("en"), &Lang::parse("zh"), &Termbase::default());
        ctx.code_comments = CodeComments::Translate;
        let run = |s: &str, t: &str| check(&ctx, &Doc::parse(s), &Doc::parse(t), s, t);
        let tgt = "调用 `run()` 和 `stop()`。\n\n```python\n# 启动循环\n# （第二行注释）\nrun()\n```\n\n    $ agent --help\n";
        assert_eq!(run(SRC, tgt), vec![]);
        // A changed code token is still an error, named as such.
        let tgt = "调用 `run()` 和 `stop()`。\n\n```python\n# 启动循环\nrun(1)\n```\n\n    $ agent --help\n";
        let f = run(SRC, tgt);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(
            f[0].message,
            "fenced code block 1 (python) differs from the source outside comments and string literals at code line 1 (comments and blank lines not counted); only comments may be translated, copy the code byte for byte"
        );
        assert_eq!(
            (f[0].source_excerpt.as_str(), f[0].target_excerpt.as_str()),
            ("run()\n", "run(1)\n")
        );
        // Under the default `keep`, the translated comment is an error.
        let tgt = "调用 `run()` 和 `stop()`。\n\n```python\n# 启动循环\nrun()\n```\n\n    $ agent --help\n";
        assert_eq!(super::tests::run(SRC, tgt).len(), 1);
    }

    /// Human translations localize the text a program shows (`println!("нуль!")`): under
    /// `code_comments = "translate"` (what `validate --source --target` assumes) that is a
    /// warning; a literal the program reads (a key, a path) changed is an error, and so is a
    /// renamed identifier on a line after a localized literal.
    #[test]
    fn a_localized_string_literal_is_a_warning_and_does_not_hide_a_renamed_identifier() {
        let mut ctx = QaContext::new(&Lang::parse("en"), &Lang::parse("ru"), &Termbase::default());
        ctx.code_comments = CodeComments::Translate;
        let run = |s: &str, t: &str| check(&ctx, &Doc::parse(s), &Doc::parse(t), s, t);
        let src = "Print it.\n\n```rust\nfn main() {\n    println!(\"zero!\");\n    let n = 'x';\n    count(n);\n}\n```\n";
        let tgt = src
            .replace("Print it.", "Выведите.")
            .replace("zero!", "нуль!");
        let f = run(src, &tgt);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(f[0].severity, Severity::Warning);
        assert_eq!(
            f[0].message,
            "fenced code block 1 (rust) has 1 string literal(s) translated (`zero!` → `нуль!`), the code around them unchanged; keep them if the program shows them to readers, restore them if it reads them"
        );
        let renamed = tgt.replace("count(n)", "counter(n)");
        let f = run(src, &renamed);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(f[0].severity, Severity::Error);
        assert!(
            f[0].message
                .contains("outside comments and string literals at code line 4"),
            "{}",
            f[0].message
        );
        assert_eq!(f[0].target_excerpt, "    counter(n);\n}\n");
        let src = "Read it.\n\n```rust\nlet path = \"config.json\";\n```\n";
        let key = src
            .replace("Read it.", "Прочтите.")
            .replace("config", "конфиг");
        let f = run(src, &key);
        assert_eq!(f[0].severity, Severity::Error);
        assert!(
            f[0].message.contains("which the program reads"),
            "{}",
            f[0].message
        );
    }

    #[test]
    fn sample_data_translated_wherever_the_code_has_it_is_a_warning_in_a_human_edition() {
        let mut ctx = QaContext::new(&Lang::parse("en"), &Lang::parse("de"), &Termbase::default());
        ctx.code_comments = CodeComments::Translate;
        ctx.human_edition = true;
        let run = |s: &str, t: &str| check(&ctx, &Doc::parse(s), &Doc::parse(t), s, t);
        let src = "Filter the list.\n\n```js\nconst products = [{ title: 'Cabbage', id: 1 }];\n```\n\nThen find it.\n\n```js\nproducts.find(p => p.title === 'Cabbage');\n```\n";
        let tgt = src
            .replace("Filter the list.", "Filtere die Liste.")
            .replace("Then find it.", "Dann finde es.")
            .replace("Cabbage", "Kohl");
        let f = run(src, &tgt);
        assert_eq!(f.len(), 2, "{f:#?}");
        assert!(f.iter().all(|f| f.severity == Severity::Warning), "{f:#?}");
        // Translated in the data but kept in the lookup: the lookup finds nothing.
        let half = tgt.replacen("=== 'Kohl'", "=== 'Cabbage'", 1);
        let f = run(src, &half);
        assert_eq!(f[0].severity, Severity::Error, "{f:#?}");
        assert!(
            f[0].message.contains("`Cabbage` to `Kohl`"),
            "{}",
            f[0].message
        );
        // Altered rather than translated: a renamed key.
        let renamed = src.replace("Cabbage", "Cabbage2");
        let f = run(src, &renamed);
        assert!(f.iter().all(|f| f.severity == Severity::Error), "{f:#?}");
        // A path stays the program's, translated or not.
        assert!(!translated_word("config.json", "конфиг.json"));
        // Not in a campaign: the model copies code.
        ctx.human_edition = false;
        let run = |s: &str, t: &str| check(&ctx, &Doc::parse(s), &Doc::parse(t), s, t);
        assert_eq!(run(src, &tgt)[0].severity, Severity::Error);
    }

    #[test]
    fn an_inline_span_with_its_string_translated_is_a_warning_in_a_human_edition() {
        let mut ctx = QaContext::new(&Lang::parse("en"), &Lang::parse("ru"), &Termbase::default());
        ctx.human_edition = true;
        let run = |s: &str, t: &str| check(&ctx, &Doc::parse(s), &Doc::parse(t), s, t);
        let src = "It calls `setBio('This is Bob’s bio')` after the fetch.\n";
        let tgt = "Он вызывает `setBio('Это биография Боба')` после запроса.\n";
        let f = run(src, tgt);
        assert!(f.iter().all(|f| f.severity == Severity::Warning), "{f:#?}");
        let altered = "Он вызывает `setBio('This is Bob’s bix')` после запроса.\n";
        let f = run(src, altered);
        assert!(f.iter().any(|f| f.severity == Severity::Error), "{f:#?}");
        let call = "Он вызывает `setBia('Это биография Боба')` после запроса.\n";
        let f = run(src, call);
        assert!(f.iter().any(|f| f.severity == Severity::Error), "{f:#?}");
    }

    #[test]
    fn a_space_at_the_end_of_an_inline_code_span_is_the_same_span() {
        let src = "Cast it with `JsCast` into `Option<EventTarget>`.\n";
        let tgt = "用 `JsCast ` 转换为 `Option<EventTarget>`。\n";
        assert_eq!(run(src, tgt), vec![]);
        let altered = "用 `JsCasts ` 转换为 `Option<EventTarget>`。\n";
        assert_eq!(run(src, altered)[0].severity, Severity::Error);
    }

    #[test]
    fn words_in_parentheses_between_jsx_tags_are_text_and_a_call_is_code() {
        let mut ctx = QaContext::new(&Lang::parse("en"), &Lang::parse("es"), &Termbase::default());
        ctx.code_comments = CodeComments::Translate;
        let run = |s: &str, t: &str| check(&ctx, &Doc::parse(s), &Doc::parse(t), s, t);
        let src = "See.\n\n```js\n<p>{name}<br />\n  (located in {city})\n</p>\n```\n";
        let tgt = src
            .replace("See.", "Mira.")
            .replace("located in", "situada en");
        let f = run(src, &tgt);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(f[0].severity, Severity::Warning, "{f:#?}");
        let src = "See.\n\n```js\nif (a > b) { go(a); }\nif (a > c) { go(c); }\n```\n";
        let tgt = src.replace("See.", "Mira.").replace("go(c)", "ir(c)");
        let f = run(src, &tgt);
        assert_eq!(f[0].severity, Severity::Error, "{f:#?}");
    }

    /// The text between two JSX tags is shown to readers too; an `{expression}` inside it
    /// stays code.
    #[test]
    fn translated_jsx_text_is_a_warning_and_its_expressions_stay_code() {
        let mut ctx = QaContext::new(&Lang::parse("en"), &Lang::parse("es"), &Termbase::default());
        ctx.code_comments = CodeComments::Translate;
        let run = |s: &str, t: &str| check(&ctx, &Doc::parse(s), &Doc::parse(t), s, t);
        let src = "Render it.\n\n```js\nfunction Room({ roomId }) {\n  return <h1>Welcome to the {roomId} room!</h1>;\n}\n```\n";
        let tgt = src.replace("Render it.", "Renderízalo.").replace(
            "Welcome to the {roomId} room!",
            "¡Bienvenido a la sala {roomId}!",
        );
        let f = run(src, &tgt);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(f[0].severity, Severity::Warning);
        let renamed = tgt.replace("sala {roomId}", "sala {room}");
        let f = run(src, &renamed);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(f[0].severity, Severity::Error);
    }

    #[test]
    fn changed_info_string_and_dropped_blocks() {
        let tgt = "调用 `run()` 和 `stop()`。\n\n```py\n# start the loop\nrun()\n```\n\n    $ agent --help\n";
        let f = run(SRC, tgt);
        assert_eq!(f.len(), 1);
        assert!(
            f[0].message
                .starts_with("fenced code block 1 has the info string `py` instead of `python`")
        );

        let tgt = "调用 `run()` 和 `stop()`。\n";
        let f = run(SRC, tgt);
        let msgs: Vec<&str> = f.iter().map(|f| f.message.as_str()).collect();
        assert_eq!(
            msgs,
            vec![
                "the source has 1 fenced code blocks but the translation 0; restore every code block unchanged and add none",
                "fenced code block 1 (python) of the source has no identical block in the translation; restore it byte for byte",
                "the source has 1 indented code blocks but the translation 0; restore every code block unchanged and add none",
                "indented code block 1 of the source has no identical block in the translation; restore it byte for byte",
            ]
        );
        assert!(
            f.iter()
                .all(|f| f.check == "code_blocks" && f.severity == Severity::Error)
        );
    }

    #[test]
    fn inline_code_missing_is_an_error_and_extra_a_warning() {
        let tgt = "调用 `运行()` 和 `stop()`，`stop()`。\n\n```python\n# start the loop\nrun()\n```\n\n    $ agent --help\n";
        let f = run(SRC, tgt);
        assert_eq!(f.len(), 3, "{f:#?}");
        let src2 = "Call `run()`, then `run()` again.\n";
        let f2 = run(src2, "调用 `run()`，然后再调用一次。\n");
        assert_eq!(f2.len(), 1);
        assert_eq!(f2[0].severity, Severity::Warning);
        assert_eq!(
            f2[0].message,
            "inline code `run()` occurs 2 times in the source but 1 in the translation; copy every inline code span unchanged"
        );
        assert_eq!(f[0].check, "inline_code");
        assert_eq!(f[0].severity, Severity::Error);
        assert_eq!(
            f[0].message,
            "inline code `run()` is missing from the translation; copy inline code unchanged"
        );
        assert_eq!(f[1].severity, Severity::Warning);
        assert_eq!(
            f[1].message,
            "inline code `运行()` does not occur in the source; remove the backticks or restore the source's span"
        );
        assert_eq!(
            f[2].message,
            "inline code `stop()` occurs 2 times in the translation but 1 in the source; keep the source's inline code"
        );
    }
}
