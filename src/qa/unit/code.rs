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
//!   them) may differ, every other code token stays identical.
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
    blocks(&mut out, "fenced", &s, &t, comments);
    let plain = |b: &String| (String::new(), b.clone());
    let s: Vec<(String, String)> = src.indented.iter().map(plain).collect();
    let t: Vec<(String, String)> = tgt.indented.iter().map(plain).collect();
    blocks(&mut out, "indented", &s, &t, comments);
    inline(&mut out, src, tgt);
    out
}

/// Compares code blocks given as `(info, body)` pairs; `kind` is `fenced` or `indented`.
fn blocks(
    out: &mut Vec<Finding>,
    kind: &str,
    src: &[(String, String)],
    tgt: &[(String, String)],
    comments: CodeComments,
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
            if a.1 != b.1 && translate {
                let (ca, cb) = (code(a), code(b));
                if ca != cb {
                    let (line, sa, sb) = first_difference(&ca, &cb);
                    out.push(Finding::new(
                        CHECK,
                        Severity::Error,
                        format!(
                            "{} differs from the source outside comments at code line {line} (comments and blank lines not counted); only comments may be translated, copy the code byte for byte",
                            name(i, a)
                        ),
                        sa,
                        sb,
                    ));
                }
            } else if a.1 != b.1 {
                let (line, sa, sb) = first_difference(&a.1, &b.1);
                out.push(Finding::new(
                    CHECK,
                    Severity::Error,
                    format!(
                        "{} differs from the source at line {line}; copy code blocks byte for byte, comments and strings included",
                        name(i, a)
                    ),
                    sa,
                    sb,
                ));
            }
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
fn inline(out: &mut Vec<Finding>, src: &Doc, tgt: &Doc) {
    const CHECK: &str = "inline_code";
    let s: Vec<&str> = src.inline_code.iter().map(String::as_str).collect();
    let t: Vec<&str> = tgt.inline_code.iter().map(String::as_str).collect();
    let d = SeqDiff::new(&s, &t);
    let count = |items: &[&str], x: &str| items.iter().filter(|i| **i == x).count();
    let mut seen: Vec<&str> = Vec::new();
    for m in &d.missing {
        if seen.contains(m) {
            continue;
        }
        seen.push(m);
        let (a, b) = (count(&s, m), count(&t, m));
        let (severity, message) = if b == 0 {
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
            "fenced code block 1 (python) differs from the source at line 1; copy code blocks byte for byte, comments and strings included"
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
            "fenced code block 1 (python) differs from the source outside comments at code line 1 (comments and blank lines not counted); only comments may be translated, copy the code byte for byte"
        );
        assert_eq!(
            (f[0].source_excerpt.as_str(), f[0].target_excerpt.as_str()),
            ("run()\n", "run(1)\n")
        );
        // Under the default `keep`, the translated comment is an error.
        let tgt = "调用 `run()` 和 `stop()`。\n\n```python\n# 启动循环\nrun()\n```\n\n    $ agent --help\n";
        assert_eq!(super::tests::run(SRC, tgt).len(), 1);
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
