//! Link-like structure must be copied unchanged (prompt rule 3); every check here is an error.
//!
//! - `links`: link destinations (inline, reference and autolinks) form the same multiset, in
//!   the same order. A missing or added target, or one changed (for example a URL "localised"
//!   to another language edition), is reported with the URL; the order is checked only when
//!   the multisets agree, and only the first divergence is reported. In a translation made
//!   elsewhere ([`QaContext::human_edition`]), a target changed into the localized edition of
//!   the same page ([`localized`]) and links reordered with their words are warnings.
//! - `images`: the same for image targets.
//! - `footnotes`: the same footnote labels referenced (as a multiset: a marker dropped from one
//!   of two places is a loss) and the same labels defined. A unit often references footnotes
//!   defined in another unit (definitions sit at the chapter end); pulldown-cmark then leaves
//!   `[^label]` as plain text, so references are read both from the parse and from the prose.
//!   A label referenced but no longer defined in the translation, while the source defined it,
//!   gets its own message.
//! - `reference_definitions`: the same `[label]: destination` map (labels compared
//!   case-insensitively, as CommonMark matches them).
//!
//! No thresholds: a destination is either identical or not.

use std::collections::BTreeMap;

use crate::lang::Lang;
use crate::qa::view::doc::Doc;
use crate::qa::{Finding, QaContext, SeqDiff, Severity, quote};

/// Runs `links`, `images`, `footnotes` and `reference_definitions` (see the module docs).
pub fn check(ctx: &QaContext, src: &Doc, tgt: &Doc, source: &str, target: &str) -> Vec<Finding> {
    let mut out = Vec::new();
    targets(
        ctx,
        &mut out,
        "links",
        "link target",
        "keep every link target exactly as in the source",
        &src.links,
        &tgt.links,
    );
    targets(
        ctx,
        &mut out,
        "images",
        "image target",
        "keep every image with its exact target",
        &src.images,
        &tgt.images,
    );
    reference_labels(&mut out, source, target);
    footnotes(&mut out, src, tgt);
    escaped_footnote_refs(&mut out, source, target);
    reference_definitions(&mut out, src, tgt);
    out
}

/// The labels of footnote references written with an escaped bracket (`\[^src\]`,
/// `\[^src]`) in `text`, outside code, in order. Markdown shows them as the literal text
/// `[^src]`, and a parsed document cannot tell them from a reference to a footnote defined in
/// another unit (both reach the prose as text), so they are read from the raw text.
fn escaped_refs(text: &str) -> Vec<String> {
    let code = crate::book::syntax::code_ranges(text);
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = text[from..].find("\\[^").map(|i| i + from) {
        from = i + 3;
        if code.iter().any(|r| r.contains(&i)) {
            continue;
        }
        let rest = &text[i + 3..];
        let Some(end) = rest.find(']') else { continue };
        let label = rest[..end].trim_end_matches('\\');
        if !label.is_empty() && !label.contains(char::is_whitespace) {
            out.push(label.to_string());
        }
    }
    out
}

/// `footnotes`: a reference the translation escapes (`\[^src\]`, shown as text) where the
/// source writes it as a reference.
fn escaped_footnote_refs(out: &mut Vec<Finding>, source: &str, target: &str) {
    let mut in_source = escaped_refs(source);
    for label in escaped_refs(target) {
        if let Some(k) = in_source.iter().position(|l| *l == label) {
            in_source.remove(k);
            continue;
        }
        out.push(Finding::new(
            "footnotes",
            Severity::Error,
            format!(
                "footnote reference `[^{label}]` is escaped in the translation (`\\[^{label}\\]`) and shows as text, not as a footnote marker; remove the backslashes"
            ),
            &format!("[^{label}]"),
            &format!("\\[^{label}\\]"),
        ));
    }
}

/// `links`, for the references whose definition is not in the unit (a chapter's definitions
/// often sit at its end, in another unit): each full or collapsed reference of the source
/// (`[text][label]`, `[label][]`, references by their form) keeps its label in the
/// translation, as a reference of any form. A label defined in the unit is covered by the
/// link targets. A shortcut `[label]` is left out: without its definition it may be bracketed
/// text.
fn reference_labels(out: &mut Vec<Finding>, source: &str, target: &str) {
    use crate::book::markdown::{RefForm, label_key, reference_links};
    let sources: Vec<_> = reference_links(source)
        .into_iter()
        .filter(|l| !l.defined && l.form != RefForm::Shortcut)
        .collect();
    if sources.is_empty() {
        return;
    }
    let mut kept: Vec<String> = reference_links(target)
        .iter()
        .map(|l| label_key(&target[l.label.clone()]))
        .collect();
    for l in sources {
        let label = &source[l.label.clone()];
        match kept.iter().position(|k| *k == label_key(label)) {
            Some(i) => {
                kept.swap_remove(i);
            }
            None => out.push(Finding::new(
                "links",
                Severity::Error,
                format!(
                    "reference link label [{label}] is missing from the translation; keep the link as `[…][{label}]`: its label names the definition and is not translated"
                ),
                &source[l.range.clone()],
                "",
            )),
        }
    }
}

fn targets(
    ctx: &QaContext,
    out: &mut Vec<Finding>,
    check: &str,
    noun: &str,
    fix: &str,
    s: &[String],
    t: &[String],
) {
    let mut s: Vec<&str> = s.iter().map(String::as_str).collect();
    let mut t: Vec<&str> = t.iter().map(String::as_str).collect();
    if ctx.human_edition {
        // A target changed into the localized edition of the same page is the translator's
        // choice: a warning, and the pair is compared no further.
        let d = SeqDiff::new(&s, &t);
        for a in d.missing {
            if let Some(b) = d
                .extra
                .iter()
                .find(|b| t.contains(b) && localized(a, b, &ctx.source_lang, &ctx.target_lang))
            {
                out.push(Finding::new(
                    check,
                    Severity::Warning,
                    format!(
                        "{noun} {} points to a localized edition in the translation, {}; check that the page exists",
                        quote(a),
                        quote(b)
                    ),
                    a,
                    b,
                ));
                let one = |v: &mut Vec<&str>, x: &str| {
                    if let Some(k) = v.iter().position(|y| *y == x) {
                        v.remove(k);
                    }
                };
                one(&mut s, a);
                one(&mut t, b);
            }
        }
        let d = SeqDiff::new(&s, &t);
        if d.reordered.is_some() {
            // Word order moves links with the words they sit on.
            out.extend(d.findings(check, Severity::Warning, noun, fix, &s, &t));
            return;
        }
    }
    out.extend(SeqDiff::new(&s, &t).findings(check, Severity::Error, noun, fix, &s, &t));
}

/// Whether URL `b` is `a` pointing to the edition of the same page in the target language:
/// equal once a language code of the source or the target language (`en`, `en-US`,
/// `zh-hans`, `pt_BR`) is set aside wherever it stands alone (a host label, a path segment, a
/// query value: MDN's `/en-US/docs/…` → `/ko/docs/…`, `/docs/…` → `/fr/docs/…`, `react.dev` →
/// `ko.react.dev`, `?hl=en` → `?hl=ar`) and a text fragment (`#:~:text=…`, which quotes the
/// page's own words and cannot survive its translation) is dropped; or the same path of at
/// least [`MIRROR_SEGMENTS`] segments on another host (a translated mirror: MDN's
/// `developer.mozilla.org/en-US/docs/Web/…` → `webdoky.org/uk/docs/Web/…`); or a Wikipedia
/// article in the source language's Wikipedia and one in the target language's (the title is
/// translated). A changed path segment or ordinary fragment is never localized.
pub fn localized(a: &str, b: &str, source: &Lang, target: &Lang) -> bool {
    if a == b {
        return false;
    }
    let codes = [source.primary(), target.primary()];
    let is_code = |tok: &str| {
        let tok = tok.to_ascii_lowercase().replace('_', "-");
        let primary = tok.split('-').next().unwrap_or("");
        codes.iter().any(|c| c == primary)
            && tok.len() <= 7
            && tok.split('-').all(|p| (2..=4).contains(&p.len()))
    };
    // (host without language labels and `www`, path with its query and fragment, without
    // language codes and text fragments).
    let norm = |u: &str| -> (String, String) {
        let u = u.split_once("#:~:").map_or(u, |(page, _)| page);
        let (scheme, rest) = u.split_once("://").unwrap_or(("", u));
        let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
        let host: Vec<&str> = host
            .split('.')
            .filter(|l| !is_code(l) && *l != "www")
            .collect();
        let mut out = String::new();
        let mut tok = String::new();
        for c in path.chars().chain(std::iter::once('/')) {
            if matches!(c, '/' | '?' | '&' | '=' | '#') {
                // A language code goes with the separator after it, so that a code inserted
                // where the source had none (`/docs` → `/fr/docs`) compares equal.
                if !is_code(&tok) {
                    out.push_str(&tok);
                    out.push(c);
                }
                tok.clear();
            } else {
                tok.push(c);
            }
        }
        (format!("{scheme}://{}", host.join(".")), out)
    };
    let ((host_a, path_a), (host_b, path_b)) = (norm(a), norm(b));
    if path_a == path_b
        && (host_a == host_b
            || path_a.split('/').filter(|s| !s.is_empty()).count() >= MIRROR_SEGMENTS)
    {
        return true;
    }
    let wiki = |u: &str, lang: &str| {
        u.split_once("://").is_some_and(|(_, r)| {
            r.starts_with(&format!("{lang}.wikipedia.org/wiki/"))
                || r.starts_with(&format!("{lang}.m.wikipedia.org/wiki/"))
        })
    };
    wiki(a, &source.primary()) && wiki(b, &target.primary())
}

/// Path segments two URLs on different hosts must share to be one page and its translated
/// mirror: four, so that a common short path (`/docs/intro`, `/learn/`) on another site is
/// never taken for the same page (MDN reference pages have five or more).
const MIRROR_SEGMENTS: usize = 4;

/// Footnote labels referenced in `doc`: parsed references plus `[^label]` left as text
/// (references to footnotes defined in another unit). Each label is returned as `[^label]`.
pub(crate) fn footnote_refs(doc: &Doc) -> Vec<String> {
    let mut out: Vec<String> = doc
        .footnote_refs
        .iter()
        .map(|l| format!("[^{l}]"))
        .collect();
    // Unresolved references reach the prose as the text events `[`, `^label`, `]`, which
    // Doc joins with newlines; newlines inside the brackets are skipped.
    let p = &doc.prose;
    let mut broken: Vec<&str> = doc
        .broken_footnote_defs
        .iter()
        .map(String::as_str)
        .collect();
    let mut from = 0;
    while let Some(i) = p[from..].find('[').map(|i| i + from) {
        from = i + 1;
        let rest = p[i + 1..].trim_start_matches('\n');
        let Some(rest) = rest.strip_prefix('^') else {
            continue;
        };
        let mut label = String::new();
        let mut end = None;
        for (j, c) in rest.char_indices().take(100) {
            match c {
                '\n' => {}
                ']' => {
                    end = Some(j + 1);
                    break;
                }
                c if c.is_whitespace() || c == '[' => break,
                c => label.push(c),
            }
        }
        // `[^label]：` at the start of a line, a definition the parser did not accept, is not a
        // reference; the same text inside a sentence (`…所指出的[^ch7-8]：当前…`) is one.
        let colon =
            end.is_some_and(|e| rest[e..].trim_start_matches('\n').starts_with([':', '：']));
        let broken_def = colon
            && broken
                .iter()
                .position(|b| *b == label)
                .map(|at| broken.remove(at))
                .is_some();
        if end.is_some() && !label.is_empty() && !broken_def {
            out.push(format!("[^{label}]"));
        }
    }
    out
}

fn footnotes(out: &mut Vec<Finding>, src: &Doc, tgt: &Doc) {
    const CHECK: &str = "footnotes";
    let sr = footnote_refs(src);
    let tr = footnote_refs(tgt);
    let s: Vec<&str> = sr.iter().map(String::as_str).collect();
    let t: Vec<&str> = tr.iter().map(String::as_str).collect();
    let mut d = SeqDiff::new(&s, &t);
    d.reordered = None; // sentence order may move a marker
    out.extend(d.findings(
        CHECK,
        Severity::Error,
        "footnote reference",
        "keep every footnote marker with its source label",
        &s,
        &t,
    ));

    let sd: Vec<String> = src
        .footnote_defs
        .iter()
        .map(|l| format!("[^{l}]"))
        .collect();
    let td: Vec<String> = tgt
        .footnote_defs
        .iter()
        .map(|l| format!("[^{l}]"))
        .collect();
    for label in sd.iter().filter(|l| !td.contains(l)) {
        let message = if tr.contains(label) {
            format!(
                "footnote {label} is referenced but its definition is missing from the translation; restore the definition `{label}: …`"
            )
        } else {
            format!(
                "footnote definition {label} is missing from the translation; translate the definition and keep its label"
            )
        };
        out.push(Finding::new(CHECK, Severity::Error, message, label, ""));
    }
    for label in td.iter().filter(|l| !sd.contains(l)) {
        out.push(Finding::new(
            CHECK,
            Severity::Error,
            format!(
                "footnote definition {label} does not occur in the source; keep the source's footnote labels and add no footnote"
            ),
            "",
            label,
        ));
    }
}

fn reference_definitions(out: &mut Vec<Finding>, src: &Doc, tgt: &Doc) {
    const CHECK: &str = "reference_definitions";
    let map = |d: &Doc| -> BTreeMap<String, (String, String)> {
        d.ref_defs
            .iter()
            .map(|(l, u)| (l.to_lowercase(), (l.clone(), u.clone())))
            .collect()
    };
    let (s, t) = (map(src), map(tgt));
    // A definition written as an inline link instead (or an inline link as a definition) keeps
    // the destination; the `links` check compares destinations.
    let linked = |d: &Doc, url: &str| d.links.iter().chain(&d.images).any(|l| l == url);
    for (key, (label, url)) in &s {
        match t.get(key) {
            None if linked(tgt, url) => {}
            None => out.push(Finding::new(
                CHECK,
                Severity::Error,
                format!(
                    "reference definition [{label}] is missing from the translation; keep the line `[{label}]: {url}` unchanged"
                ),
                &format!("[{label}]: {url}"),
                "",
            )),
            Some((tl, tu)) if tu != url => out.push(Finding::new(
                CHECK,
                Severity::Error,
                format!(
                    "reference definition [{label}] points to {tu} instead of {url}; restore the source's destination"
                ),
                &format!("[{label}]: {url}"),
                &format!("[{tl}]: {tu}"),
            )),
            Some(_) => {}
        }
    }
    for (key, (label, url)) in &t {
        if !s.contains_key(key) && !linked(src, url) {
            out.push(Finding::new(
                CHECK,
                Severity::Error,
                format!(
                    "reference definition [{label}] does not occur in the source; keep the source's labels (they are not translated)"
                ),
                "",
                &format!("[{label}]: {url}"),
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

    fn messages(f: &[Finding]) -> Vec<(&str, &str)> {
        f.iter()
            .map(|f| (f.check.as_str(), f.message.as_str()))
            .collect()
    }

    const SRC: &str = "See [the guide](https://a.io/guide) and [the spec][spec], then <https://b.io>.\n\n![Figure 1: loop](images/loop.svg)\n\nAs shown before[^1], and in Chapter 2[^ch2-note].\n\n[^1]: A footnote.\n\n[spec]: https://spec.example/v1\n";

    #[test]
    fn faithful_translation_passes() {
        // Link text, alt text and footnote text translated; `[^ch2-note]` is defined elsewhere.
        let tgt = "参见[指南](https://a.io/guide)和[规范][spec]，然后是 <https://b.io>。\n\n![图 1：循环](images/loop.svg)\n\n如前所述[^1]，以及第 2 章[^ch2-note]。\n\n[^1]: 一个脚注。\n\n[SPEC]: https://spec.example/v1\n";
        assert_eq!(run(SRC, tgt), vec![]);
    }

    #[test]
    fn changed_missing_and_reordered_targets() {
        let tgt = "参见[指南](https://a.io/zh/guide)和[规范][spec]，然后是 <https://b.io>。\n\n如前所述[^1]，以及第 2 章[^ch2-note]。\n\n[^1]: 一个脚注。\n\n[spec]: https://spec.example/v1\n";
        let f = run(SRC, tgt);
        assert_eq!(
            messages(&f),
            vec![
                (
                    "links",
                    "link target `https://a.io/guide` was changed to `https://a.io/zh/guide`; keep every link target exactly as in the source"
                ),
                (
                    "images",
                    "image target `images/loop.svg` is missing from the translation; keep every image with its exact target"
                ),
            ]
        );
        assert!(f.iter().all(|f| f.severity == Severity::Error));
        assert_eq!(f[0].source_excerpt, "https://a.io/guide");
        assert_eq!(f[0].target_excerpt, "https://a.io/zh/guide");

        let tgt = "然后是 <https://b.io>，参见[指南](https://a.io/guide)和[规范][spec]。\n\n![图 1：循环](images/loop.svg)\n\n如前所述[^1]，以及第 2 章[^ch2-note]。\n\n[^1]: 一个脚注。\n\n[spec]: https://spec.example/v1\n";
        assert_eq!(
            messages(&run(SRC, tgt)),
            vec![(
                "links",
                "link targets are in a different order: number 1 is `https://a.io/guide` in the source but `https://b.io` in the translation; keep the source order"
            )]
        );
    }

    #[test]
    fn a_footnote_reference_before_a_full_width_colon_was_read_as_a_broken_definition() {
        // `[^ch7-8]：` inside a sentence is a reference (its definition is in another unit);
        // only at the start of a line is it a definition the parser did not accept.
        let src = Doc::parse(
            "As Silver and Sutton point out in \"Welcome to the Era of Experience\"[^ch7-8], current RL learns from outcomes.\n",
        );
        let tgt = Doc::parse(
            "正如 Silver 与 Sutton 在《Welcome to the Era of Experience》中所指出的[^ch7-8]：当前 RL 方法只能从结果中学习。\n",
        );
        assert_eq!(footnote_refs(&tgt), vec!["[^ch7-8]"]);
        let mut out = Vec::new();
        footnotes(&mut out, &src, &tgt);
        assert_eq!(out, vec![]);
        // A definition written with a full-width colon is still no reference.
        let broken = Doc::parse("正文[^1]。\n\n[^1]：脚注。\n");
        assert_eq!(broken.broken_footnote_defs, vec!["1"]);
        assert_eq!(footnote_refs(&broken), vec!["[^1]"]);
    }

    #[test]
    fn a_link_to_the_localized_edition_of_the_same_page_is_a_warning_in_a_human_edition() {
        let (en, ko, de) = (Lang::parse("en"), Lang::parse("ko"), Lang::parse("de"));
        for (a, b, l) in [
            (
                "https://developer.mozilla.org/en-US/docs/Web/API/fetch",
                "https://developer.mozilla.org/ko/docs/Web/API/fetch",
                &ko,
            ),
            ("https://react.dev/learn", "https://ko.react.dev/learn", &ko),
            (
                "https://chromewebstore.google.com/detail/x?hl=en",
                "https://chromewebstore.google.com/detail/x?hl=ko",
                &ko,
            ),
            (
                "https://en.wikipedia.org/wiki/Pure_function",
                "https://de.wikipedia.org/wiki/Reine_Funktion",
                &de,
            ),
            (
                "https://developer.mozilla.org/docs/Web/JavaScript/Reference/Statements/switch",
                "https://developer.mozilla.org/de/docs/Web/JavaScript/Reference/Statements/switch",
                &de,
            ),
            (
                "https://developer.mozilla.org/en-US/docs/Web/API/fetch#:~:text=The%20fetch",
                "https://developer.mozilla.org/ko/docs/Web/API/fetch",
                &ko,
            ),
            (
                "https://developer.mozilla.org/en-US/docs/Web/JavaScript/Reference/Operators/Logical_AND",
                "https://webdoky.org/uk/docs/Web/JavaScript/Reference/Operators/Logical_AND",
                &Lang::parse("uk"),
            ),
        ] {
            assert!(localized(a, b, &en, l), "{a} → {b}");
        }
        for (a, b) in [
            (
                "https://developer.mozilla.org/en-US/docs/Web/API/fetch",
                "https://developer.mozilla.org/ko/docs/Web/API/Request",
            ),
            ("https://example.com/a", "https://example.com/b"),
            (
                "https://en.wikipedia.org/wiki/Pure_function",
                "https://example.com/wiki/Pure_function",
            ),
            (
                "https://developer.mozilla.org/en-US/docs/Web/API/fetch#body",
                "https://developer.mozilla.org/ko/docs/Web/API/fetch#body-x",
            ),
            (
                "https://example.com/docs/intro",
                "https://other.org/ko/docs/intro",
            ),
        ] {
            assert!(!localized(a, b, &en, &ko), "{a} → {b}");
        }
        let src = "See [fetch](https://developer.mozilla.org/en-US/docs/Web/API/fetch).\n";
        let tgt = "[fetch](https://developer.mozilla.org/ko/docs/Web/API/fetch)를 참조하세요.\n";
        let mut ctx = QaContext::new(&en, &ko, &crate::termbase::Termbase::default());
        let f = check(&ctx, &Doc::parse(src), &Doc::parse(tgt), src, tgt);
        assert_eq!((f.len(), f[0].severity), (1, Severity::Error), "{f:#?}");
        ctx.human_edition = true;
        let f = check(&ctx, &Doc::parse(src), &Doc::parse(tgt), src, tgt);
        assert_eq!((f.len(), f[0].severity), (1, Severity::Warning), "{f:#?}");
        assert!(
            f[0].message.contains("localized edition"),
            "{}",
            f[0].message
        );
    }

    #[test]
    fn a_reference_link_written_inline_keeps_its_destination() {
        let src = "See [the spec][spec].\n\n[spec]: https://spec.example/v1\n";
        let inline = "Siehe [die Spezifikation](https://spec.example/v1).\n";
        assert_eq!(run(src, inline), vec![]);
        let src = "See [the spec](https://spec.example/v1).\n";
        let by_ref = "Siehe [die Spezifikation][s].\n\n[s]: https://spec.example/v1\n";
        assert_eq!(run(src, by_ref), vec![]);
        // Dropped with its link: still an error.
        let src = "See [the spec][spec].\n\n[spec]: https://spec.example/v1\n";
        assert!(!run(src, "Siehe die Spezifikation.\n").is_empty());
    }

    #[test]
    fn an_escaped_footnote_reference_is_an_error() {
        let src = "An agent calls tools.[^src]\n\n[^src]: Yao et al., 2022.\n";
        let tgt = "Агент вызывает инструменты.\\[^src\\]\n\n[^src]: Yao et al., 2022.\n";
        let f = run(src, tgt);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(
            (f[0].check.as_str(), f[0].severity),
            ("footnotes", Severity::Error)
        );
        assert!(
            f[0].message
                .starts_with("footnote reference `[^src]` is escaped"),
            "{}",
            f[0].message
        );
        // One escaped bracket is enough to break it; an escape the source has too is kept.
        assert_eq!(run(src, &tgt.replace("\\]", "]")).len(), 1);
        let src = "Write \\[^1\\] to show the syntax.\n";
        assert_eq!(
            run(src, "Schreiben Sie \\[^1\\], um die Syntax zu zeigen.\n"),
            vec![]
        );
        // Inside code it is code.
        let src = "A marker.[^src]\n\n[^src]: Yao.\n";
        assert_eq!(
            escaped_refs("Use `\\[^src\\]` here.\n"),
            Vec::<String>::new()
        );
        let _ = src;
    }

    #[test]
    fn footnotes_and_reference_definitions() {
        let tgt = "参见[指南](https://a.io/guide)和[规范][spec]，然后是 <https://b.io>。\n\n![图 1：循环](images/loop.svg)\n\n如前所述[^1]，以及第 2 章。\n\n[^1]：一个脚注。\n\n[spec]: https://spec.example/v2\n";
        let f = run(SRC, tgt);
        assert_eq!(
            messages(&f),
            vec![
                (
                    "links",
                    "link target `https://spec.example/v1` was changed to `https://spec.example/v2`; keep every link target exactly as in the source"
                ),
                (
                    "footnotes",
                    "footnote reference `[^ch2-note]` is missing from the translation; keep every footnote marker with its source label"
                ),
                (
                    "footnotes",
                    "footnote [^1] is referenced but its definition is missing from the translation; restore the definition `[^1]: …`"
                ),
                (
                    "reference_definitions",
                    "reference definition [spec] points to https://spec.example/v2 instead of https://spec.example/v1; restore the source's destination"
                ),
            ]
        );
        let tgt = "参见[指南](https://a.io/guide)和[规范][spec]，然后是 <https://b.io>。\n\n![图 1：循环](images/loop.svg)\n\n如前所述[^1]，以及第 2 章[^ch2-note][^2]。\n\n[^1]: 一个脚注。\n\n[^2]: 译者注。\n\n[spec]: https://spec.example/v1\n[extra]: https://x.io\n";
        assert_eq!(
            messages(&run(SRC, tgt)),
            vec![
                (
                    "footnotes",
                    "footnote reference `[^2]` does not occur in the source; remove it or restore the source's footnote reference"
                ),
                (
                    "footnotes",
                    "footnote definition [^2] does not occur in the source; keep the source's footnote labels and add no footnote"
                ),
                (
                    "reference_definitions",
                    "reference definition [extra] does not occur in the source; keep the source's labels (they are not translated)"
                ),
            ]
        );
    }

    #[test]
    fn unresolved_references_are_read_from_the_prose() {
        let d = Doc::parse("Text[^a] and [^b-2] and [not a note] and `[^code]`.\n\n[^a]: x\n");
        assert_eq!(footnote_refs(&d), vec!["[^a]", "[^b-2]"]);
    }
}
