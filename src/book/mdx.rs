//! MDX (Markdown with JSX, as Docusaurus and other React sites use): what in an `.mdx` chapter
//! is code rather than prose. ESM lines (`import …`, `export …`), JSX blocks (a top-level
//! block that opens with a component tag `<Name`, a closing tag `</Name>`, a fragment `<>` or an
//! expression `{`) and inline `{expressions}` and component tags are kept byte-identical and
//! never sent to the model: segmentation makes protected blocks units of their own that are
//! copied ([`super::segment::segment_mdx`]), and the Translation agent's mask replaces inline
//! spans by placeholders. Plain HTML (lowercase tags) is left to the usual Markdown rules.

use std::ops::Range;

/// Whether a chapter path is an MDX file (extension `.mdx`, case-insensitive).
pub fn is_mdx(path: &str) -> bool {
    path.rsplit_once('.')
        .is_some_and(|(_, ext)| ext.eq_ignore_ascii_case("mdx"))
}

/// Whether a top-level block's text (indentation allowed) is ESM or JSX, never prose.
pub fn is_protected_block(block: &str) -> bool {
    let t = block.trim_start();
    t.starts_with("import ")
        || t.starts_with("export ")
        || t.starts_with('{')
        || t.starts_with("<>")
        || t.starts_with("</>")
        || jsx_tag_at(t, 0).is_some()
}

/// Whether a block's plain text (line breaks read as spaces) is MDX ESM: it starts with the
/// lowercase keyword `import ` and names a module in quotes (`import Tabs from '@theme/Tabs'`,
/// `import './x.css'`), or starts with `export ` and holds a binding (`export const meta = {`).
/// No English sentence starts with a lowercase keyword followed by a quoted module name, so a
/// page that is not MDX loses nothing to this test; an MDX page's ESM is code, never prose.
pub fn reads_as_esm(text: &str) -> bool {
    let t = text.trim_start();
    if let Some(rest) = t.strip_prefix("import ") {
        return rest.contains(" from '")
            || rest.contains(" from \"")
            || rest.starts_with('\'')
            || rest.starts_with('"');
    }
    t.strip_prefix("export ").is_some_and(|rest| {
        ["const ", "let ", "function ", "default ", "{"]
            .iter()
            .any(|k| rest.starts_with(k))
    })
}

/// The end of a JSX component tag (`<Name …>`, `</Name>`, `<Name … />`, `<>`, `</>`) that
/// starts at byte `at` of `text`, or `None` when none starts there. Component names start with
/// an uppercase letter (lowercase names are HTML). Quoted attribute values and `{…}`
/// attribute expressions may hold `>`.
pub fn jsx_tag_at(text: &str, at: usize) -> Option<usize> {
    let rest = &text[at..];
    let body = rest.strip_prefix("</").or_else(|| rest.strip_prefix('<'))?;
    let head = rest.len() - body.len();
    if body.starts_with('>') {
        return Some(at + head + 1);
    }
    if !body.starts_with(|c: char| c.is_ascii_uppercase()) {
        return None;
    }
    let (mut quote, mut braces) = (None::<char>, 0usize);
    for (i, c) in body.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') if braces == 0 => quote = Some(c),
            (None, '{') => braces += 1,
            (None, '}') => braces = braces.saturating_sub(1),
            (None, '>') if braces == 0 => return Some(at + head + i + 1),
            (None, '\n') if braces == 0 && body[..i].trim().is_empty() => return None,
            _ => {}
        }
    }
    None
}

/// The end of a balanced `{…}` expression starting at byte `at` (which holds `{`), or `None`
/// when it is not closed. Braces inside quotes are not counted.
pub fn expression_at(text: &str, at: usize) -> Option<usize> {
    let (mut depth, mut quote) = (0usize, None::<char>);
    for (i, c) in text[at..].char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'' | '`') => quote = Some(c),
            (None, '{') => depth += 1,
            (None, '}') => {
                depth -= 1;
                if depth == 0 {
                    return Some(at + i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// Byte ranges of inline JSX in `text` outside `code` (ranges to leave alone, such as code
/// spans): `{expressions}` and component tags, in order, not overlapping.
pub fn inline_spans(text: &str, code: &[Range<usize>]) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < text.len() {
        let Some(rel) = text[i..].find(['{', '<']) else {
            break;
        };
        let at = i + rel;
        if let Some(r) = code.iter().find(|r| r.contains(&at)) {
            i = r.end.max(at + 1);
            continue;
        }
        let end = if text[at..].starts_with('{') {
            expression_at(text, at)
        } else {
            jsx_tag_at(text, at)
        };
        match end {
            Some(e) => {
                out.push(at..e);
                i = e;
            }
            None => i = at + 1,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_and_spans() {
        assert!(is_mdx("docs/a.MDX") && !is_mdx("a.md"));
        assert!(is_protected_block("import Tabs from '@theme/Tabs';\n"));
        assert!(is_protected_block(
            "  <TabItem value=\"a\" label=\"A > B\">\n"
        ));
        assert!(is_protected_block("{/* a comment */}\n"));
        assert!(!is_protected_block("<div>html</div>\n"));
        assert!(!is_protected_block("Important exports are listed here.\n"));
        let t = "Hello <Badge color=\"red\" /> and {props.name}, `{code}` <b>x</b>.";
        let code_span = t.find('`').unwrap()..t.rfind('`').unwrap() + 1;
        let code = std::slice::from_ref(&code_span);
        let spans: Vec<&str> = inline_spans(t, code).into_iter().map(|r| &t[r]).collect();
        assert_eq!(spans, ["<Badge color=\"red\" />", "{props.name}"]);
    }
}
