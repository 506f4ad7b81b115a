//! The syntax of Markdown extensions and site plugins (pymdownx, mkdocstrings, admonitions,
//! content tabs, Jinja tags, attribute lists, shortcodes): byte ranges a translation keeps
//! byte for byte. Translation masks them (`agents::mask`), QA's `site_syntax` check compares
//! them and neither the house-style lint nor the prose checks read them as prose.
//!
//! Pure: no I/O.

/// [`site_syntax_outside`] of `text`, outside its code ([`code_ranges`]).
pub fn site_syntax(text: &str) -> Vec<std::ops::Range<usize>> {
    site_syntax_outside(text, &code_ranges(text))
}

/// The syntax of Markdown extensions and site plugins outside code, which the site's build
/// reads and a translation must keep byte for byte (a typographic quote or a translated word
/// in it breaks the build or the page):
///
/// - pymdownx snippets: a `--8<-- "file"` line, and a block between two `--8<--` lines;
/// - mkdocstrings and mkdocs-click blocks: a `::: identifier` line (also as a heading,
///   `# ::: package`, which mkdocstrings renders at that level) and the more indented option
///   lines under it;
/// - abbreviation definitions (`*[HTML]: Hyper Text Markup Language`): the `*[HTML]:` key;
/// - Docusaurus admonitions and MyST colon fences (`:::tip`, `:::note[Title]`, `:::{note}`,
///   the closing `:::`): the marker, the title translated;
/// - admonitions, collapsible details and content tabs (`!!! note "Title"`, `??? tip`,
///   `???+ example "Title"`, `=== "Title"`): the marker and the quotes around the title, so
///   that only the title is translated;
/// - pymdownx blocks (`/// admonition | Title`, its indented options, and the closing `///`):
///   everything but the title;
/// - Jinja and Liquid tags and expressions (`{% … %}`, `{{ … }}`) on one line, mdBook's
///   `{{#include …}}` among them;
/// - attribute lists (`{: .class}`, `{#id}`, attr_list), keys (`++ctrl+alt+del++`,
///   pymdownx.keys, a key quoted when it is not a name: `++cmd+"&Uuml;"++`) and progress bars (`[=85% "85%"]`, pymdownx.progressbar);
/// - MyST: targets (`(my-label)=`), role names before their backquoted text (`{ref}`, `{doc}`),
///   the option lines under a colon-fence directive (`:class: tip`) and a directive argument
///   that is a path (`:::{figure} images/a.png`);
/// - emoji and icon shortcodes (`:material-bug:`, `:smile:`; pymdownx.emoji, GitHub): a
///   `:name:` of lower-case letters, digits, `_`, `+` and `-` with a letter in it, standing
///   alone (`crate::book::markdown::shortcodes`).
///
/// Hand-rolled line patterns: each syntax is one line shape, recognised at the start of a
/// line (tags anywhere), and no Markdown parser knows these extensions.
pub fn site_syntax_outside(
    text: &str,
    code: &[std::ops::Range<usize>],
) -> Vec<std::ops::Range<usize>> {
    use std::sync::LazyLock;
    static MARKER: LazyLock<regex::Regex> = LazyLock::new(|| {
        regex::Regex::new(
            // The title's quotes may be typographic in a translation (`=== “Titel”`): still
            // the marker, recognised so that QA reports it and repair restores `"`.
            r#"^(?:!!!|\?\?\?\+?|===[+!]?)(?:[ \t]+[\w-]+)*[ \t]*(?:["“„«»”]([^"“”„«»]*)["”“«»])?[ \t]*$"#,
        )
        .expect("a valid pattern")
    });
    static OBJECT: LazyLock<regex::Regex> = LazyLock::new(|| {
        regex::Regex::new(r"^(?:#{1,6}[ \t]+)?::: [A-Za-z_][\w.:-]*[ \t]*$")
            .expect("a valid pattern")
    });
    static TAG: LazyLock<regex::Regex> = LazyLock::new(|| {
        regex::Regex::new(
                r#"\{%.*?%\}|\{\{.*?\}\}|\{:?[ \t]*[#.][^{}\n]*\}|\{[A-Za-z][\w:.+-]*\}`|\+\+(?:[\w-]+|"[^"\n]*")(?:\+(?:[\w-]+|"[^"\n]*"))*\+\+|\[=[^\]\n]*\]"#,
            )
            .expect("a valid pattern")
    });
    static BLOCK: LazyLock<regex::Regex> = LazyLock::new(|| {
        regex::Regex::new(r"^/{3,}(?:[ \t]*[\w-]+(?:[ \t]*\|[ \t]*(.*?))?)?[ \t]*$")
            .expect("a valid pattern")
    });
    let in_code = |at: usize| code.iter().any(|r| r.contains(&at));
    let mut out = Vec::new();
    let lines: Vec<(usize, &str)> = text
        .split_inclusive('\n')
        .scan(0, |pos, l| {
            let at = *pos;
            *pos += l.len();
            Some((at, l.trim_end_matches(['\n', '\r'])))
        })
        .collect();
    let mut i = 0;
    while i < lines.len() {
        let (at, body) = lines[i];
        let lead = body.len() - body.trim_start().len();
        let t = body.trim_start();
        let start = at + lead;
        if t.is_empty() {
            i += 1;
            continue;
        }
        // Line-start syntax is read only where the line starts outside code; the inline
        // syntax further down is read span by span (a table row may start with inline code).
        let line_code = in_code(start);
        // An abbreviation definition (`*[HTML]: Hyper Text Markup Language`, Python-Markdown's
        // abbr): the `*[HTML]:` key names the word it marks, only the expansion is translated.
        if !line_code
            && let Some(rest) = t.strip_prefix("*[")
            && let Some(close) = rest.find("]:")
            && close > 0
        {
            out.push(start..start + 2 + close + 2);
            i += 1;
            continue;
        }
        if !line_code && (t == "--8<--" || t == ";--8<--") {
            // A block of snippet paths, up to the closing `--8<--` line.
            let close = (i + 1..lines.len()).find(|&k| lines[k].1.trim() == t);
            let last = close.unwrap_or(i);
            out.push(start..lines[last].0 + lines[last].1.len());
            i = last + 1;
            continue;
        }
        if !line_code && (t.starts_with("--8<--") || t.starts_with(";--8<--")) {
            out.push(start..at + body.len());
            i += 1;
            continue;
        }
        if !line_code && OBJECT.is_match(t) {
            let last = options_end(&lines, i, lead);
            out.push(start..lines[last].0 + lines[last].1.len());
            i = last + 1;
            continue;
        }
        if !line_code && let Some(parts) = directive(t) {
            for p in parts {
                out.push(start + p.start..start + p.end);
            }
            // A MyST directive's option lines (`:class: tip`) are read by the directive.
            let last = if t.trim_start_matches(':').starts_with('{') {
                myst_options_end(&lines, i)
            } else {
                i
            };
            if last > i {
                out.push(lines[i + 1].0..lines[last].0 + lines[last].1.len());
            }
            i = last + 1;
            continue;
        }
        // A MyST math label after the closing `$$` (`$$ (my-label)`), which `{eq}` links to.
        if !line_code
            && let Some(rest) = t.strip_prefix("$$")
            && rest.trim_start().starts_with('(')
            && rest.trim_end().ends_with(')')
        {
            out.push(start..at + body.len());
            i += 1;
            continue;
        }
        // A MyST target (`(my-label)=`), which `{ref}` roles link to.
        if !line_code
            && t.starts_with('(')
            && t.trim_end().ends_with(")=")
            && !t[1..t.trim_end().len() - 2].contains(char::is_whitespace)
        {
            out.push(start..at + body.len());
            i += 1;
            continue;
        }
        if let Some(c) = BLOCK.captures(t).filter(|_| !line_code) {
            let last = options_end(&lines, i, lead);
            let end = lines[last].0 + lines[last].1.len();
            // `/// html | div` names an element, not a title.
            let titled = !t.trim_start_matches('/').trim_start().starts_with("html");
            match c
                .get(1)
                .filter(|title| titled && !title.as_str().trim().is_empty())
            {
                Some(title) => {
                    out.push(start..start + title.start());
                    if start + title.end() < end {
                        out.push(start + title.end()..end);
                    }
                }
                None => out.push(start..end),
            }
            i = last + 1;
            continue;
        }
        if let Some(c) = MARKER.captures(t).filter(|_| !line_code) {
            match c.get(1).filter(|title| !title.as_str().trim().is_empty()) {
                Some(title) => {
                    out.push(start..start + title.start());
                    out.push(start + title.end()..at + body.len());
                }
                None => out.push(start..at + body.len()),
            }
            i += 1;
            continue;
        }
        for m in TAG.find_iter(body) {
            if !in_code(at + m.start()) {
                // A role's name ends before the backquote that opens its text.
                let end = m.end() - usize::from(m.as_str().ends_with('`'));
                out.push(at + m.start()..at + end);
            }
        }
        for m in crate::book::markdown::shortcodes(body) {
            let r = at + m.start..at + m.end;
            if !in_code(r.start) && !out.iter().any(|o| o.start < r.end && r.start < o.end) {
                out.push(r);
            }
        }
        i += 1;
    }
    out
}

/// The syntax of a colon directive line `t` (leading space removed), as byte ranges of `t`:
/// Docusaurus admonitions (`:::tip`, `:::caution Title`, `:::note[Title]`, `:::info{.x}`) and
/// MyST colon fences (`:::{note}`), whose type name and brackets are syntax and whose title is
/// translated, and the closing `:::` line. `None` for any other line (`::: package.module`,
/// mkdocstrings' block, has a space before its name and is read before this).
fn directive(t: &str) -> Option<Vec<std::ops::Range<usize>>> {
    let colons = t.len() - t.trim_start_matches(':').len();
    if colons < 3 {
        return None;
    }
    let rest = &t[colons..];
    if rest.trim().is_empty() {
        return Some(std::iter::once(0..t.len()).collect());
    }
    let name_len = if let Some(r) = rest.strip_prefix('{') {
        r.find('}')? + 2
    } else {
        rest.find(|c: char| !(c.is_alphanumeric() || c == '-' || c == '_'))
            .unwrap_or(rest.len())
    };
    if name_len == 0
        || !rest[..name_len]
            .trim_start_matches('{')
            .starts_with(char::is_alphabetic)
    {
        return None;
    }
    let mut end = colons + name_len;
    // Attributes after the name (`{.x #id}`) are syntax too.
    if t[end..].starts_with('{') {
        end += t[end..].find('}')? + 1;
    }
    let tail = &t[end..];
    if let Some(inner) = tail.strip_prefix('[')
        && let Some(close) = inner.rfind(']')
    {
        let close = end + 1 + close;
        return Some(vec![0..end + 1, close..t.len()]);
    }
    // A MyST directive's argument is text readers see only for the directives that take a
    // title, or whose first line is content ([`myst_title_argument`]); for the others it is a
    // path, a label, a language or an expression (`{figure} a.png`, `{figure-md} fig-label`,
    // `{only} html`), which the build reads.
    if let Some(name) = rest[..name_len]
        .strip_prefix('{')
        .and_then(|n| n.strip_suffix('}'))
        && !myst_title_argument(name)
    {
        return Some(std::iter::once(0..t.len()).collect());
    }
    Some(std::iter::once(0..end).collect())
}

/// The admonition directives of MyST (Docutils' and sphinx-design's): their argument is a
/// title or the first line of their content, and their body is Markdown.
const MYST_ADMONITIONS: &[&str] = &[
    "admonition",
    "attention",
    "caution",
    "danger",
    "error",
    "hint",
    "important",
    "note",
    "seealso",
    "tip",
    "warning",
    "dropdown",
    "card",
    "grid-item-card",
    "tab-item",
    "tab",
    "topic",
    "sidebar",
    "margin",
    "epigraph",
    "exercise",
];

/// Whether MyST directive `name`'s argument is text readers see, translated: the admonitions
/// ([`MYST_ADMONITIONS`]), the table directives' titles and sphinx-proof's `prf:` titles. Every
/// other directive's argument (a path, a label, a language, an expression) is kept byte for
/// byte.
pub fn myst_title_argument(name: &str) -> bool {
    MYST_ADMONITIONS.contains(&name)
        || ["table", "list-table", "csv-table"].contains(&name)
        || name.starts_with("prf:")
}

/// Whether MyST directive `name`'s body is Markdown readers see, translated: the admonitions
/// ([`MYST_ADMONITIONS`]), containers of them (`tab-set`, `grid`, `grid-item`, `toggle`,
/// `only`, `div`), a figure's caption, a list table's list and sphinx-proof's `prf:`
/// directives. Left out: directives whose body is code, data or shown as source
/// (`code-cell`, `math`, `eval-rst`, `example`…).
pub fn myst_markdown_body(name: &str) -> bool {
    MYST_ADMONITIONS.contains(&name)
        || [
            "tab-set",
            "grid",
            "grid-item",
            "toggle",
            "only",
            "div",
            "figure",
            "list-table",
            "solution",
        ]
        .contains(&name)
        || name.starts_with("prf:")
}

/// The last of the MyST option lines (`:name: value`, `:width: 80%`) right under a directive
/// line `i` of `lines`; `i` itself when there are none.
fn myst_options_end(lines: &[(usize, &str)], i: usize) -> usize {
    let mut last = i;
    while let Some(&(_, next)) = lines.get(last + 1) {
        let t = next.trim();
        let Some(rest) = t.strip_prefix(':') else {
            break;
        };
        let key = rest.split(':').next().unwrap_or("");
        if key.is_empty()
            || rest.len() == key.len()
            || !key
                .chars()
                .all(|c| c.is_alphanumeric() || c == '-' || c == '_')
        {
            break;
        }
        last += 1;
    }
    last
}

/// The last of the option lines under line `i` of `lines` (indented `lead`): the lines
/// indented deeper, up to a blank or shallower line; `i` itself when there are none.
fn options_end(lines: &[(usize, &str)], i: usize, lead: usize) -> usize {
    let mut last = i;
    while let Some(&(_, next)) = lines.get(last + 1) {
        let nl = next.len() - next.trim_start().len();
        if next.trim().is_empty() || nl <= lead {
            break;
        }
        last += 1;
    }
    last
}

/// Byte ranges of fenced code blocks (whole lines) and inline code spans (single backticks
/// within a line) of `text`.
pub fn code_ranges(text: &str) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut pos = 0;
    let mut fence: Option<(char, usize, usize)> = None; // (char, run, start)
    for line in text.split_inclusive('\n') {
        let start = pos;
        pos += line.len();
        let t = line.trim_start();
        let lead = t.chars().next().unwrap_or(' ');
        let run = t.chars().take_while(|&c| c == lead).count();
        match fence {
            Some((c, n, s)) => {
                if lead == c && run >= n && t[run * c.len_utf8()..].trim().is_empty() {
                    out.push(s..pos);
                    fence = None;
                }
            }
            None if (lead == '`' || lead == '~') && run >= 3 => fence = Some((lead, run, start)),
            None => {
                // Inline code spans of this line.
                let mut open: Option<usize> = None;
                for (j, ch) in line.char_indices() {
                    if ch == '`' {
                        match open {
                            None => open = Some(start + j),
                            Some(o) => {
                                out.push(o..start + j + 1);
                                open = None;
                            }
                        }
                    }
                }
            }
        }
    }
    if let Some((_, _, s)) = fence {
        out.push(s..text.len());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn myst_targets_roles_options_and_path_arguments_are_syntax() {
        let text = "(my-label)=\n# Title\n\nSee {ref}`the intro <intro>` and {doc}`x`.\n\n$$\nx = 1\n$$ (eq-x)\n\n:::{only} html\nText.\n:::\n\n:::{figure} images/a.png\n:name: fig-a\n:width: 80%\n\nA caption.\n:::\n\n:::{admonition} A title\n:class: tip\nBody text.\n:::\n";
        let got: Vec<&str> = site_syntax(text).into_iter().map(|r| &text[r]).collect();
        assert_eq!(
            got,
            [
                "(my-label)=",
                "{ref}",
                "{doc}",
                "$$ (eq-x)",
                ":::{only} html",
                ":::",
                ":::{figure} images/a.png",
                ":name: fig-a\n:width: 80%",
                ":::",
                ":::{admonition}",
                ":class: tip",
                ":::"
            ]
        );
    }

    #[test]
    fn docusaurus_and_myst_admonitions_keep_their_markers_and_translate_their_titles() {
        let text = ":::caution\n\nBody.\n\n:::\n\n:::note[Read this]\nBody.\n:::\n\n:::tip Be careful\n:::\n\n::::{note}\nMyST.\n::::\n";
        let mut spans = site_syntax(text);
        spans.sort_by_key(|r| r.start);
        assert_eq!(
            spans.iter().map(|r| &text[r.clone()]).collect::<Vec<_>>(),
            [
                ":::caution",
                ":::",
                ":::note[",
                "]",
                ":::",
                ":::tip",
                ":::",
                "::::{note}",
                "::::"
            ]
        );
    }

    #[test]
    fn an_abbreviations_key_is_syntax_and_its_expansion_prose() {
        let text = "*[Toc]: Table of Contents\n*[GFM]: GitHub Flavored Markdown\n";
        let spans = site_syntax(text);
        assert_eq!(
            spans.iter().map(|r| &text[r.clone()]).collect::<Vec<_>>(),
            ["*[Toc]:", "*[GFM]:"]
        );
    }

    #[test]
    fn an_mkdocstrings_block_written_as_a_heading_is_syntax() {
        let text =
            "# ::: mkdocstrings\n    options:\n        show_submodules: true\n\n# A real title\n";
        let spans = site_syntax(text);
        assert_eq!(
            spans.iter().map(|r| &text[r.clone()]).collect::<Vec<_>>(),
            ["# ::: mkdocstrings\n    options:\n        show_submodules: true"]
        );
    }
}
