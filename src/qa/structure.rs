//! Structural fidelity: fenced code blocks byte-identical and in order, and the same number
//! of images, links and headings.

use pulldown_cmark::{CodeBlockKind, Event, Tag, TagEnd};

use super::{Finding, Severity};
use crate::book::markdown;

/// The structural inventory of a Markdown text.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Inventory {
    /// (info string, body) of every fenced code block, in order.
    pub fences: Vec<(String, String)>,
    /// Targets of images, in order.
    pub images: Vec<String>,
    /// Targets of links, in order.
    pub links: Vec<String>,
    /// Heading levels, in order.
    pub headings: Vec<u8>,
}

/// Collects the [`Inventory`] of `text`.
pub fn inventory(text: &str) -> Inventory {
    let mut inv = Inventory::default();
    let mut in_fence: Option<(String, String)> = None;
    for ev in markdown::parser(text) {
        match ev {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info))) => {
                in_fence = Some((info.to_string(), String::new()))
            }
            Event::Text(t) if in_fence.is_some() => in_fence.as_mut().unwrap().1.push_str(&t),
            Event::End(TagEnd::CodeBlock) => {
                if let Some(f) = in_fence.take() {
                    inv.fences.push(f);
                }
            }
            Event::Start(Tag::Image { dest_url, .. }) => inv.images.push(dest_url.to_string()),
            Event::Start(Tag::Link { dest_url, .. }) => inv.links.push(dest_url.to_string()),
            Event::Start(Tag::Heading { level, .. }) => inv.headings.push(level as u8),
            _ => {}
        }
    }
    inv
}

/// Compares the inventories of source and target. CRLF is normalised before comparing code.
pub fn check(source: &str, target: &str) -> Vec<Finding> {
    let s = inventory(&source.replace("\r\n", "\n"));
    let t = inventory(&target.replace("\r\n", "\n"));
    let mut out = Vec::new();
    if s.fences.len() != t.fences.len() {
        out.push(Finding::new(
            "code_blocks",
            Severity::Error,
            format!("{} fenced code blocks in the source, {} in the translation; restore the missing code unchanged", s.fences.len(), t.fences.len()),
            s.fences.first().map_or("", |f| f.1.as_str()),
            t.fences.first().map_or("", |f| f.1.as_str()),
        ));
    } else {
        for (i, (a, b)) in s.fences.iter().zip(&t.fences).enumerate() {
            if a != b {
                out.push(Finding::new(
                    "code_blocks",
                    Severity::Error,
                    format!("fenced code block {} differs from the source; code must be copied byte for byte", i + 1),
                    &a.1,
                    &b.1,
                ));
            }
        }
    }
    for (name, a, b) in [
        ("images", s.images.len(), t.images.len()),
        ("links", s.links.len(), t.links.len()),
        ("headings", s.headings.len(), t.headings.len()),
    ] {
        if a != b {
            out.push(Finding::new(
                name,
                Severity::Error,
                format!("{a} {name} in the source, {b} in the translation"),
                "",
                "",
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_structure_passes() {
        let src = "# T\n\nSee [a](http://a) ![i](x.png)\n\n```rs\nfn x() {}\n```\n";
        let tgt = "# 标题\n\n见 [甲](http://a) ![图](x.png)\n\n```rs\nfn x() {}\n```\n";
        assert!(check(src, tgt).is_empty());
    }

    #[test]
    fn changed_code_and_missing_heading_fail() {
        let src = "# T\n\n## U\n\n```rs\nfn x() {}\n```\n";
        let tgt = "# 标题\n\n```rs\nfn y() {}\n```\n";
        let f = check(src, tgt);
        assert!(
            f.iter()
                .any(|f| f.check == "code_blocks" && f.severity == Severity::Error)
        );
        assert!(f.iter().any(|f| f.check == "headings"));
    }

    #[test]
    fn dropped_code_block_fails() {
        let f = check("Text\n\n```\ncode\n```\n", "文本\n");
        assert_eq!(f.len(), 1);
        assert!(
            f[0].message
                .contains("1 fenced code blocks in the source, 0")
        );
    }
}
