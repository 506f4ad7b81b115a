//! Bilingual chapters: each source block followed by its translation, code once.
//!
//! A unit's source and translation are cut into top-level Markdown blocks. Code, HTML and
//! other verbatim blocks split both into stretches of prose; when both have the same number of
//! verbatim blocks, stretches are paired in order, and within a stretch blocks are paired one
//! to one when both sides have as many (a faithful translation keeps the block structure), else
//! the whole source stretch is followed by the whole translated one. Verbatim blocks appear
//! once, as the translation has them. When the verbatim blocks do not correspond, the unit's
//! source prose is followed by its whole translation, so code still appears once.
//!
//! A block runs from its start to the next block's start, so text between blocks (link
//! reference definitions) stays with the block before it.

use crate::book::segment::{BlockKind, top_level_blocks};

/// One row of a bilingual chapter.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Row {
    /// A source block (or stretch) and its translation.
    Pair { source: String, target: String },
    /// A block shown once (code, HTML, front matter, a unit copied unchanged).
    Once { text: String },
}

/// The blocks of `text`: (text up to the next block, trimmed at the end; verbatim?).
fn blocks(text: &str) -> Vec<(String, bool)> {
    let bs = top_level_blocks(text);
    let mut out = Vec::new();
    for (i, b) in bs.iter().enumerate() {
        let start = if i == 0 { 0 } else { b.range.start };
        let end = bs.get(i + 1).map_or(text.len(), |n| n.range.start);
        let t = text[start..end].trim_end().trim_start_matches('\u{feff}');
        let t = if i == 0 { t.trim_start() } else { t };
        if t.is_empty() {
            continue;
        }
        out.push((
            t.to_string(),
            matches!(b.kind, BlockKind::Verbatim | BlockKind::FrontMatter),
        ));
    }
    out
}

/// Prose stretches and the verbatim blocks between them.
fn stretches(blocks: &[(String, bool)]) -> (Vec<Vec<String>>, Vec<String>) {
    let mut prose = vec![Vec::new()];
    let mut verbatim = Vec::new();
    for (t, v) in blocks {
        if *v {
            verbatim.push(t.clone());
            prose.push(Vec::new());
        } else {
            prose
                .last_mut()
                .expect("one stretch at least")
                .push(t.clone());
        }
    }
    (prose, verbatim)
}

/// Code blocks nested in a prose block (in a list item or a block quote): for each, the byte
/// range of its whole lines in `block` and its code text.
fn nested_code(block: &str) -> Vec<(std::ops::Range<usize>, String)> {
    use pulldown_cmark::{Event, Tag, TagEnd};
    let (bom, _) = crate::book::markdown::split_bom(block);
    let mut out = Vec::new();
    let mut open: Option<(usize, String)> = None;
    for (event, r) in crate::book::markdown::parser(block).into_offset_iter() {
        let r = r.start + bom..r.end + bom;
        match event {
            Event::Start(Tag::CodeBlock(_)) => open = Some((r.start, String::new())),
            Event::Text(t) => {
                if let Some((_, body)) = open.as_mut() {
                    body.push_str(&t);
                }
            }
            Event::End(TagEnd::CodeBlock) => {
                if let Some((start, body)) = open.take() {
                    let line_start = block[..start].rfind('\n').map_or(0, |n| n + 1);
                    let end = r.end.max(start);
                    let line_end = if block[..end].ends_with('\n') {
                        end
                    } else {
                        block[end..].find('\n').map_or(block.len(), |n| end + n + 1)
                    };
                    out.push((line_start..line_end, body));
                }
            }
            _ => {}
        }
    }
    out
}

/// `source` without the nested code blocks that `target` has too (same code text): the
/// translation, right after it, shows them, so each appears once. A nested code block the
/// translation lost stays in the source.
pub fn source_without_shared_code(source: &str, target: &str) -> String {
    let mut target_code: Vec<String> = nested_code(target).into_iter().map(|(_, b)| b).collect();
    if target_code.is_empty() {
        return source.to_string();
    }
    let mut out = String::new();
    let mut pos = 0;
    for (range, body) in nested_code(source) {
        let Some(k) = target_code.iter().position(|b| *b == body) else {
            continue;
        };
        target_code.swap_remove(k);
        if range.start < pos {
            continue;
        }
        out.push_str(&source[pos..range.start]);
        pos = range.end;
    }
    out.push_str(&source[pos..]);
    out.trim_end().to_string()
}

/// A source block (or stretch) and its translation, nested code once.
fn pair(source: String, target: String) -> Row {
    Row::Pair {
        source: source_without_shared_code(&source, &target),
        target,
    }
}

/// The rows of one unit. `translate` is false for units copied unchanged (shown once);
/// `target` is `None` for a unit without translation (its source is shown alone).
pub fn pair_unit(source: &str, target: Option<&str>, translate: bool) -> Vec<Row> {
    let once = |t: &str| Row::Once {
        text: t.trim().trim_start_matches('\u{feff}').to_string(),
    };
    let Some(target) = target.filter(|_| translate) else {
        if source.trim().is_empty() {
            return Vec::new();
        }
        return vec![once(source)];
    };
    let (sp, sv) = stretches(&blocks(source));
    let (tp, tv) = stretches(&blocks(target));
    let mut rows = Vec::new();
    if sv.len() != tv.len() {
        let src: Vec<String> = sp.concat();
        rows.push(pair(src.join("\n\n"), target.trim().to_string()));
        return rows;
    }
    for k in 0..sp.len() {
        let (s, t) = (&sp[k], &tp[k]);
        if s.len() == t.len() {
            for (a, b) in s.iter().zip(t) {
                rows.push(pair(a.clone(), b.clone()));
            }
        } else if !(s.is_empty() && t.is_empty()) {
            rows.push(pair(s.join("\n\n"), t.join("\n\n")));
        }
        if let Some(v) = tv.get(k) {
            rows.push(Row::Once { text: v.clone() });
        }
    }
    rows
}

/// Whether a Markdown block starts a list (two lists written one after the other would merge
/// into one).
fn is_list(block: &str) -> bool {
    let t = block.trim_start();
    let bullet = t.starts_with("- ") || t.starts_with("* ") || t.starts_with("+ ");
    let digits = t.chars().take_while(char::is_ascii_digit).count();
    bullet || (digits > 0 && (t[digits..].starts_with(". ") || t[digits..].starts_with(") ")))
}

/// The Markdown of a bilingual chapter: rows separated by blank lines, a source block
/// immediately followed by its translation. A list and its translated list are separated by
/// an empty HTML comment so that Markdown renders them as two lists.
pub fn markdown(rows: &[Row]) -> String {
    let mut parts: Vec<String> = Vec::new();
    for r in rows {
        match r {
            Row::Pair { source, target } => {
                if source.is_empty() {
                    parts.push(target.clone());
                } else if is_list(source) && is_list(target) {
                    parts.push(format!("{source}\n\n<!-- -->\n\n{target}"));
                } else {
                    parts.push(format!("{source}\n\n{target}"));
                }
            }
            Row::Once { text } => parts.push(text.clone()),
        }
    }
    let mut s = parts.join("\n\n");
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_paired_and_code_kept_once() {
        let src = "# Tools\n\nA tool is a function.\n\n```py\nf()\n```\n\nTools cost tokens.\n\n- one\n- two\n";
        let tgt = "# 工具\n\n工具是函数。\n\n```py\nf()\n```\n\n工具消耗令牌。\n\n- 一\n- 二\n";
        let rows = pair_unit(src, Some(tgt), true);
        assert_eq!(
            rows[0],
            Row::Pair {
                source: "# Tools".into(),
                target: "# 工具".into()
            }
        );
        assert_eq!(
            rows[2],
            Row::Once {
                text: "```py\nf()\n```".into()
            }
        );
        let md = markdown(&rows);
        assert_eq!(md.matches("```py").count(), 1);
        assert!(md.contains("Tools cost tokens.\n\n工具消耗令牌。"));
        assert!(md.contains("- two\n\n<!-- -->\n\n- 一"));
    }

    #[test]
    fn unequal_structure_falls_back_without_duplicating_code() {
        let src = "A.\n\nB.\n\n```\nx\n```\n";
        let tgt = "甲乙。\n\n```\nx\n```\n";
        let rows = pair_unit(src, Some(tgt), true);
        assert_eq!(
            rows[0],
            Row::Pair {
                source: "A.\n\nB.".into(),
                target: "甲乙。".into()
            }
        );
        let tgt2 = "甲乙。\n";
        let md = markdown(&pair_unit(src, Some(tgt2), true));
        assert!(
            !md.contains("```"),
            "code only where the translation has it: {md}"
        );
        assert_eq!(
            pair_unit("```\nx\n```\n", Some("```\nx\n```\n"), false).len(),
            1
        );
        assert_eq!(
            pair_unit("Untranslated.\n", None, true),
            vec![Row::Once {
                text: "Untranslated.".into()
            }]
        );
    }

    #[test]
    fn code_nested_in_quotes_and_lists_appears_once() {
        let src =
            "> Appended:\n>\n> ```xml\n> <s>x</s>\n> ```\n\n- Step:\n\n  ```sh\n  ls\n  ```\n";
        let tgt = "> 追加：\n>\n> ```xml\n> <s>x</s>\n> ```\n\n- 步骤：\n\n  ```sh\n  ls\n  ```\n";
        let md = markdown(&pair_unit(src, Some(tgt), true));
        assert_eq!(md.matches("<s>x</s>").count(), 1, "{md}");
        assert_eq!(md.matches("  ls\n").count(), 1, "{md}");
        assert!(md.starts_with("> Appended:\n>\n\n> 追加："), "{md}");
        assert!(md.contains("- Step:\n\n<!-- -->\n\n- 步骤："), "{md}");
        // A nested code block the translation dropped stays with the source.
        let md = markdown(&pair_unit(src, Some("> 追加。\n\n- 步骤。\n"), true));
        assert_eq!(md.matches("<s>x</s>").count(), 1, "{md}");
    }
}
