//! Math and HTML are markup, not prose: both are copied unchanged (prompt rule 3). Errors.
//!
//! - `math`: inline (`$…$`) and display (`$$…$$`) math byte-identical and in the same order,
//!   each kind compared as a sequence (a changed formula is reported as changed, a lost one as
//!   missing).
//! - `html`: the HTML tags (`<summary>`, `</details>`, `<br/>`, `<img src=…>`) and comments
//!   (`<!-- … -->`) identical and in the same order. Only tags and comments are compared,
//!   extracted from the Doc's inline HTML and HTML blocks, so the visible text of an HTML block
//!   (`<summary>Why?</summary>`) may be translated while its tags and comments may not.
//!   Attribute values are part of a tag and so are compared too, except the values of
//!   [`TRANSLATABLE_ATTRS`] (`alt`, `title`, `caption`, `label`…, any case, quoted or not):
//!   those are text shown to the reader and may be translated. Tags are compared with those
//!   values blanked ([`blank_translatable_attrs`]), so every other attribute, and the attribute
//!   names themselves, stay byte-identical. An inline phrasing tag the translation adds
//!   (`<span dir="ltr">`, `<em>`, `<sup>`) is a warning, not an error: it carries no content,
//!   and a `dir` attribute added, removed or changed is no difference at all.
//!
//! No thresholds: markup is either identical or not.

use crate::qa::view::doc::Doc;
use crate::qa::{Finding, QaContext, SeqDiff, Severity};

/// Runs `math` and `html` (see the module docs).
pub fn check(ctx: &QaContext, src: &Doc, tgt: &Doc, _source: &str, _target: &str) -> Vec<Finding> {
    let mut out = Vec::new();
    for (noun, s, t) in [
        ("inline math", &src.inline_math, &tgt.inline_math),
        ("display math", &src.display_math, &tgt.display_math),
    ] {
        let s: Vec<&str> = s.iter().map(String::as_str).collect();
        let t: Vec<&str> = t.iter().map(String::as_str).collect();
        out.extend(SeqDiff::new(&s, &t).findings(
            "math",
            Severity::Error,
            noun,
            "copy math unchanged, byte for byte",
            &s,
            &t,
        ));
    }
    let blank = |d: &Doc| -> Vec<String> {
        html_markup(d)
            .into_iter()
            .map(|m| without_dir(&blank_translatable_attrs(m)))
            .collect()
    };
    let (s, t) = (blank(src), blank(tgt));
    let s: Vec<&str> = s.iter().map(String::as_str).collect();
    let mut t: Vec<&str> = t.iter().map(String::as_str).collect();
    // Inline phrasing tags the translation adds (`<span dir="ltr">` around a left-to-right
    // name in Persian, `<em>`, `<sup>` for a translator's note) change no content: a warning,
    // and left out of the comparison, so the tags both sides have are still compared in order.
    let mut added: Vec<&str> = Vec::new();
    let mut k = t.len();
    while k > 0 {
        k -= 1;
        let tag = t[k];
        if is_inline_phrasing(tag)
            && t.iter().filter(|x| **x == tag).count() > s.iter().filter(|x| **x == tag).count()
        {
            added.push(t.remove(k));
        }
    }
    added.reverse();
    let mut seen: Vec<&str> = Vec::new();
    for tag in &added {
        if seen.contains(tag) || tag.starts_with("</") {
            continue;
        }
        seen.push(tag);
        out.push(Finding::new(
            "html",
            Severity::Warning,
            format!(
                "the translation adds the inline HTML tag {} ({} times); fine for emphasis or right-to-left text, remove it otherwise",
                crate::qa::quote(tag),
                added.iter().filter(|x| *x == tag).count()
            ),
            "",
            tag,
        ));
    }
    let d = SeqDiff::new(&s, &t);
    if ctx.human_edition && d.missing.is_empty() && balanced_elements(&d.extra) {
        // A translation made elsewhere that keeps every source tag and adds whole elements
        // (a translator's `<Note>…</Note>`, an anchor `<a name="note1">…</a>` for its note, a
        // `<p dir="rtl">…</p>` wrapper) adds words, not broken markup: a warning.
        let opens: Vec<&str> = d
            .extra
            .iter()
            .copied()
            .filter(|x| !x.starts_with("</"))
            .collect();
        out.push(Finding::new(
            "html",
            Severity::Warning,
            format!(
                "the translation adds {} element(s) the source does not have ({}); fine for a translator's note or layout, remove it otherwise",
                opens.len(),
                opens.iter().map(|x| crate::qa::quote(x)).collect::<Vec<_>>().join(", ")
            ),
            "",
            opens.first().copied().unwrap_or(""),
        ));
        return out;
    }
    out.extend(d.findings(
        "html",
        Severity::Error,
        "HTML tag or comment",
        "copy HTML tags and comments unchanged and translate only the text between them",
        &s,
        &t,
    ));
    out
}

/// Whether `tags` (in order) are whole elements: each opening tag closed by a later closing
/// tag of the same name, nothing else (no comment, no self-closing or void tag, no closing
/// tag without its opening one).
fn balanced_elements(tags: &[&str]) -> bool {
    let name = |t: &str| -> String {
        t.trim_start_matches('<')
            .trim_start_matches('/')
            .chars()
            .take_while(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'))
            .collect::<String>()
            .to_ascii_lowercase()
    };
    let mut open: Vec<String> = Vec::new();
    for t in tags {
        if t.starts_with("<!--") || t.ends_with("/>") || name(t).is_empty() {
            return false;
        }
        if t.starts_with("</") {
            match open.iter().rposition(|n| *n == name(t)) {
                Some(k) => {
                    open.remove(k);
                }
                None => return false,
            }
        } else {
            open.push(name(t));
        }
    }
    !tags.is_empty() && open.is_empty()
}

/// HTML attributes whose values are reader-facing text and may be translated (`caption` and
/// `label` as MDX components use them: `<Illustration caption="…">`, `<TabItem label="…">`).
pub const TRANSLATABLE_ATTRS: [&str; 6] = [
    "alt",
    "title",
    "caption",
    "label",
    "aria-label",
    "placeholder",
];

/// HTML elements of phrasing content that carry no content of their own (HTML Living Standard,
/// "Phrasing content"): a translation may add them around its own words.
const INLINE_PHRASING: &[&str] = &[
    "span", "em", "strong", "b", "i", "u", "s", "sup", "sub", "abbr", "br", "bdi", "bdo", "small",
    "mark", "kbd", "code", "wbr",
];

/// `tag` as compared: without its `dir` attribute (the direction of the text is the
/// translation's to set: a right-to-left edition marks a component `dir="rtl"` and a name
/// `dir="ltr"`, which changes no content), and with its spaces between attributes as one.
fn without_dir(tag: &str) -> String {
    static DIR: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = DIR.get_or_init(|| {
        regex::Regex::new(r#"(?i)\s+dir\s*=\s*("[^"]*"|'[^']*'|[^\s>/]+)"#).expect("valid")
    });
    static SPACE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let space = SPACE.get_or_init(|| regex::Regex::new(r"\s+").expect("valid"));
    if tag.starts_with("<!--") {
        return tag.to_string();
    }
    // Spaces between attributes are layout too: one space stands for any run, and none
    // before the closing `>` or `/>`.
    let t = re.replace_all(tag, "");
    let t = space.replace_all(&t, " ");
    t.replace(" />", "/>").replace(" >", ">")
}

/// Whether `tag` (`<span dir="ltr">`, `</em>`, `<br/>`) opens or closes an element of
/// [`INLINE_PHRASING`].
fn is_inline_phrasing(tag: &str) -> bool {
    let name: String = tag
        .trim_start_matches('<')
        .trim_start_matches('/')
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric())
        .collect();
    !tag.starts_with("<!--") && INLINE_PHRASING.contains(&name.to_ascii_lowercase().as_str())
}

/// `tag` (one HTML tag such as `<img src="a.png" alt="A cat">`) with the values of its
/// [`TRANSLATABLE_ATTRS`] replaced by `…` (`<img src="a.png" alt="…">`); quotes are kept, an
/// unquoted value is replaced up to the next space or `>`. Comments and tags without such an
/// attribute are returned unchanged (borrowed).
pub fn blank_translatable_attrs(tag: &str) -> std::borrow::Cow<'_, str> {
    let values = translatable_values(tag);
    if values.is_empty() {
        return tag.into();
    }
    let mut out = String::new();
    let mut copied = 0;
    for (_, r) in values {
        out.push_str(&tag[copied..r.start]);
        out.push('…');
        copied = r.end;
    }
    out.push_str(&tag[copied..]);
    out.into()
}

/// Byte ranges (within `tag`) of the values of the [`TRANSLATABLE_ATTRS`] of one HTML tag, in
/// order, with the attribute names lower-cased; quotes are not part of a range, an unquoted
/// value runs to the next space or `>`. Empty for comments and for text that is not a tag.
/// Used by [`blank_translatable_attrs`] and by mechanical repair (which keeps the target's
/// translated values when it restores a tag).
pub fn translatable_values(tag: &str) -> Vec<(String, std::ops::Range<usize>)> {
    let mut out = Vec::new();
    if tag.starts_with("<!--") || !tag.starts_with('<') {
        return out;
    }
    let b = tag.as_bytes();
    let mut i = 1;
    while i < b.len() && !b[i].is_ascii_whitespace() && b[i] != b'>' {
        i += 1;
    }
    while i < b.len() {
        if b[i].is_ascii_whitespace() || b[i] == b'/' {
            i += 1;
            continue;
        }
        if b[i] == b'>' {
            break;
        }
        let name_start = i;
        while i < b.len() && !b[i].is_ascii_whitespace() && !matches!(b[i], b'=' | b'>' | b'/') {
            i += 1;
        }
        let name = &tag[name_start..i];
        let mut j = i;
        while j < b.len() && b[j].is_ascii_whitespace() {
            j += 1;
        }
        if j >= b.len() || b[j] != b'=' {
            continue;
        }
        j += 1;
        while j < b.len() && b[j].is_ascii_whitespace() {
            j += 1;
        }
        let (start, end, next) = match b.get(j) {
            Some(&q @ (b'"' | b'\'')) => {
                let end = tag[j + 1..].find(q as char).map_or(b.len(), |e| j + 1 + e);
                (j + 1, end, (end + 1).min(b.len()))
            }
            _ => {
                let mut e = j;
                while e < b.len() && !b[e].is_ascii_whitespace() && b[e] != b'>' {
                    e += 1;
                }
                (j, e, e)
            }
        };
        if TRANSLATABLE_ATTRS
            .iter()
            .any(|a| a.eq_ignore_ascii_case(name))
        {
            out.push((name.to_ascii_lowercase(), start..end));
        }
        i = next;
    }
    out
}

/// The tags and comments of every HTML string of `doc`, in order (see [`markup_ranges`]).
fn html_markup(doc: &Doc) -> Vec<&str> {
    doc.html
        .iter()
        .flat_map(|h| markup_ranges(h).into_iter().map(move |r| &h[r]))
        .collect()
}

/// Byte ranges of the tags and comments in one HTML string, in order: a comment runs to its
/// `-->`, a tag to its closing `>` (quoted attribute values skipped). What the `html` check
/// compares, and what mechanical repair restores.
pub fn markup_ranges(h: &str) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let b = h.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'<' {
            i += 1;
            continue;
        }
        if let Some(comment) = h[i..].strip_prefix("<!--") {
            let end = comment.find("-->").map_or(h.len(), |e| i + 4 + e + 3);
            out.push(i..end);
            i = end;
            continue;
        }
        let starts_tag = b
            .get(i + 1)
            .is_some_and(|c| c.is_ascii_alphabetic() || matches!(c, b'/' | b'!' | b'?'));
        if !starts_tag {
            i += 1;
            continue;
        }
        let mut j = i + 1;
        let mut quote: Option<u8> = None;
        while j < b.len() {
            match (quote, b[j]) {
                (None, b'"' | b'\'') => quote = Some(b[j]),
                (Some(q), c) if c == q => quote = None,
                (None, b'>') => break,
                _ => {}
            }
            j += 1;
        }
        let end = (j + 1).min(b.len());
        out.push(i..end);
        i = end;
    }
    out
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

    const SRC: &str = "The score is $s = \\frac{a}{b}$ and only $s > 0.75$ counts.<br/>\n\n$$E = mc^2$$\n\n<!-- Editors: keep this comment. -->\n\n<details>\n<summary>Why not keep everything?</summary>\n\nBecause it costs more.\n\n</details>\n";

    #[test]
    fn translated_text_between_tags_passes() {
        let tgt = "得分为 $s = \\frac{a}{b}$，只有 $s > 0.75$ 才算数。<br/>\n\n$$E = mc^2$$\n\n<!-- Editors: keep this comment. -->\n\n<details>\n<summary>为什么不全部保留？</summary>\n\n因为成本更高。\n\n</details>\n";
        assert_eq!(run(SRC, tgt), vec![]);
        let d = Doc::parse(SRC);
        assert_eq!(
            html_markup(&d),
            vec![
                "<br/>",
                "<!-- Editors: keep this comment. -->",
                "<details>",
                "<summary>",
                "</summary>",
                "</details>"
            ]
        );
    }

    #[test]
    fn changed_math_and_translated_comment_fail() {
        let tgt = "得分为 $s = a / b$，只有 $s > 0.75$ 才算数。<br/>\n\n$$E = mc^2$$\n\n<!-- 编辑：保留此注释。 -->\n\n<details>\n<summary>为什么？</summary>\n\n因为成本更高。\n\n</details>\n";
        let f = run(SRC, tgt);
        let got: Vec<(&str, Severity, &str)> = f
            .iter()
            .map(|f| (f.check.as_str(), f.severity, f.message.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                (
                    "math",
                    Severity::Error,
                    "inline math `s = \\frac{a}{b}` was changed to `s = a / b`; copy math unchanged, byte for byte"
                ),
                (
                    "html",
                    Severity::Error,
                    "HTML tag or comment `<!-- Editors: keep this comment. -->` was changed to `<!-- 编辑：保留此注释。 -->`; copy HTML tags and comments unchanged and translate only the text between them"
                ),
            ]
        );
        assert_eq!(f[1].source_excerpt, "<!-- Editors: keep this comment. -->");
    }

    #[test]
    fn translated_img_alt_is_not_an_error() {
        let s = "See <img src=\"cat.png\" alt=\"A cat\" title='Our cat' width=300> here.\n";
        let t = "见 <img src=\"cat.png\" alt=\"一只猫\" title='我们的猫' width=300> 这里。\n";
        assert_eq!(run(s, t), vec![]);
        assert_eq!(
            blank_translatable_attrs("<img src=\"cat.png\" ALT=\"A cat\" title=x>"),
            "<img src=\"cat.png\" ALT=\"…\" title=…>"
        );
        // Any other attribute still has to be identical.
        let t2 = "见 <img src=\"dog.png\" alt=\"一只猫\" title='我们的猫' width=300> 这里。\n";
        let f = run(s, t2);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].check, "html");
        assert!(f[0].message.contains("src=\"cat.png\""), "{}", f[0].message);
        // A removed alt attribute is a change too.
        let t3 = "见 <img src=\"cat.png\" title='我们的猫' width=300> 这里。\n";
        assert_eq!(run(s, t3).len(), 1);
    }

    #[test]
    fn a_direction_attribute_of_a_right_to_left_edition_is_no_difference() {
        let s = "<Recap>\n\nText.\n\n</Recap>\n";
        let t = "<Recap dir='rtl'>\n\nمتن.\n\n</Recap>\n";
        assert_eq!(run(s, t), vec![]);
        assert_eq!(
            without_dir("<div dir=\"rtl\" class=\"x\">"),
            "<div class=\"x\">"
        );
    }

    /// A Persian edition wraps left-to-right names in `<span dir="ltr">`, and MDX captions
    /// and tab labels are text for readers: neither is an error; a lost tag still is.
    #[test]
    fn an_added_inline_tag_is_a_warning_and_a_translated_caption_passes() {
        let s = "Use <Illustration caption=\"Trigger\" src=\"/a.png\" /> with React.\n";
        let t = "از <Illustration caption=\"تحفیز\" src=\"/a.png\" /> با <span dir=\"ltr\">React</span> استفاده کنید.\n";
        let f = run(s, t);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(
            (f[0].check.as_str(), f[0].severity),
            ("html", Severity::Warning)
        );
        assert!(f[0].message.contains("<span>"), "{}", f[0].message);
        let moved = t.replace("src=\"/a.png\"", "src=\"/b.png\"");
        assert!(
            run(s, &moved)
                .iter()
                .any(|f| f.check == "html" && f.severity == Severity::Error)
        );
    }

    #[test]
    fn a_whole_element_added_to_a_human_edition_is_a_warning_and_a_lost_tag_an_error() {
        let s = "<Note>\n\nKeep the key stable.\n\n</Note>\n\nThe list renders each item.\n";
        let t = "<Note>\n\nمفتاح ثابت.\n\n</Note>\n\nتعرض القائمة كل عنصر.\n\n<Note>\n\nملاحظة المترجم.\n\n</Note>\n";
        let mut ctx = QaContext::new(
            &crate::lang::Lang::parse("en"),
            &crate::lang::Lang::parse("ar"),
            &crate::termbase::Termbase::default(),
        );
        let f = check(&ctx, &Doc::parse(s), &Doc::parse(t), s, t);
        assert!(f.iter().any(|f| f.severity == Severity::Error), "{f:#?}");
        ctx.human_edition = true;
        let f = check(&ctx, &Doc::parse(s), &Doc::parse(t), s, t);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(f[0].severity, Severity::Warning);
        assert!(f[0].message.contains("adds 1 element"), "{}", f[0].message);
        // Half an element, or a source tag lost, stays an error.
        let open_only = t.trim_end().trim_end_matches("</Note>");
        let f = check(&ctx, &Doc::parse(s), &Doc::parse(open_only), s, open_only);
        assert!(f.iter().any(|f| f.severity == Severity::Error), "{f:#?}");
        assert!(!balanced_elements(&["<Note>", "<!-- x -->", "</Note>"]));
        assert!(balanced_elements(&["<a name=\"note1\">", "</a>"]));
    }

    #[test]
    fn dropped_display_math_and_tag_fail() {
        let tgt = "得分为 $s = \\frac{a}{b}$，只有 $s > 0.75$ 才算数。\n\n<!-- Editors: keep this comment. -->\n\n<details>\n<summary>为什么？</summary>\n\n因为成本更高。\n\n</details>\n";
        let f = run(SRC, tgt);
        let got: Vec<&str> = f.iter().map(|f| f.message.as_str()).collect();
        assert_eq!(
            got,
            vec![
                "display math `E = mc^2` is missing from the translation; copy math unchanged, byte for byte",
                "HTML tag or comment `<br/>` is missing from the translation; copy HTML tags and comments unchanged and translate only the text between them",
            ]
        );
    }
}
