//! Link-like structure must be copied unchanged (prompt rule 3); every check here is an error.
//!
//! - `links`: link destinations (inline, reference and autolinks) form the same multiset, in
//!   the same order. A missing or added target, or one changed (for example a URL "localised"
//!   to another language edition), is reported with the URL; the order is checked only when
//!   the multisets agree, and only the first divergence is reported.
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

use crate::qa::view::doc::Doc;
use crate::qa::{Finding, QaContext, SeqDiff, Severity};

/// Runs `links`, `images`, `footnotes` and `reference_definitions` (see the module docs).
pub fn check(_ctx: &QaContext, src: &Doc, tgt: &Doc, source: &str, target: &str) -> Vec<Finding> {
    let mut out = Vec::new();
    targets(
        &mut out,
        "links",
        "link target",
        "keep every link target exactly as in the source",
        &src.links,
        &tgt.links,
    );
    targets(
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

fn targets(out: &mut Vec<Finding>, check: &str, noun: &str, fix: &str, s: &[String], t: &[String]) {
    let s: Vec<&str> = s.iter().map(String::as_str).collect();
    let t: Vec<&str> = t.iter().map(String::as_str).collect();
    out.extend(SeqDiff::new(&s, &t).findings(check, Severity::Error, noun, fix, &s, &t));
}

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
    for (key, (label, url)) in &s {
        match t.get(key) {
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
        if !s.contains_key(key) {
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
