//! Pairing a source chapter with a translation made elsewhere, unit by unit, for
//! `booktr validate --source … --target …`.
//!
//! The source is segmented as usual. The target is cut where the source's units are cut, by
//! position among top-level Markdown blocks, when both have the same number of top-level
//! blocks (a faithful translation keeps the block structure). Otherwise the two are cut at
//! their level-1 and level-2 headings when they have the same number of them, and otherwise
//! compared as one unit; [`Pairing::method`] says which happened, so the report can say how
//! fine-grained the checks were.

use std::ops::Range;

use super::segment::{Unit, segment, top_level_blocks};

/// How source and target were paired.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// Unit by unit, by top-level block position.
    Blocks,
    /// Section by section, at level-1/2 headings.
    Sections,
    /// The whole chapter as one pair.
    Chapter,
}

/// Source units and the target range paired with each.
#[derive(Debug, Clone)]
pub struct Pairing {
    pub method: Method,
    /// (source unit, target byte range).
    pub pairs: Vec<(Unit, Range<usize>)>,
}

/// Pairs `source` and `target` of chapter `key` (see the module docs).
pub fn pair(key: &str, source: &str, target: &str, max_unit_chars: usize) -> Pairing {
    let sb = top_level_blocks(source);
    let tb = top_level_blocks(target);
    if !sb.is_empty() && sb.len() == tb.len() {
        let units = segment(key, source, max_unit_chars);
        // Map each unit start (a source block start, or 0) to the same block of the target.
        let mut pairs = Vec::new();
        for (i, u) in units.iter().enumerate() {
            let block_of = |pos: usize| {
                sb.iter()
                    .position(|b| b.range.start >= pos)
                    .unwrap_or(sb.len())
            };
            let start = if i == 0 {
                0
            } else {
                tb.get(block_of(u.range.start))
                    .map_or(target.len(), |b| b.range.start)
            };
            let end = match units.get(i + 1) {
                Some(n) => tb
                    .get(block_of(n.range.start))
                    .map_or(target.len(), |b| b.range.start),
                None => target.len(),
            };
            pairs.push((u.clone(), start..end.max(start)));
        }
        return Pairing {
            method: Method::Blocks,
            pairs,
        };
    }
    let heads = |text: &str| -> Vec<usize> {
        top_level_blocks(text)
            .into_iter()
            .filter(|b| {
                let t = &text[b.range.clone()];
                t.starts_with("# ")
                    || t.starts_with("## ")
                    || t.starts_with("#\t")
                    || t.starts_with("##\t")
            })
            .map(|b| b.range.start)
            .collect()
    };
    let (sh, th) = (heads(source), heads(target));
    let whole = |key: &str| {
        let mut u = segment(key, source, usize::MAX).into_iter().next();
        if let Some(u) = u.as_mut() {
            u.range = 0..source.len();
        }
        u
    };
    if !sh.is_empty() && sh.len() == th.len() {
        let cut = |starts: &[usize], len: usize| -> Vec<Range<usize>> {
            let mut v: Vec<usize> = starts.to_vec();
            if v.first() != Some(&0) {
                v.insert(0, 0);
            }
            v.iter()
                .enumerate()
                .map(|(i, &s)| s..v.get(i + 1).copied().unwrap_or(len))
                .collect()
        };
        let (sr, tr) = (cut(&sh, source.len()), cut(&th, target.len()));
        if sr.len() == tr.len() {
            let pairs = sr
                .into_iter()
                .zip(tr)
                .enumerate()
                .map(|(i, (s, t))| {
                    let text = &source[s.clone()];
                    let unit = Unit {
                        id: super::segment::unit_id(key, i),
                        chapter: key.to_string(),
                        index: i,
                        range: s,
                        kind: super::UnitKind::Prose,
                        sha256: crate::util::sha256_hex(text),
                        chars: text.chars().count(),
                    };
                    (unit, t)
                })
                .collect();
            return Pairing {
                method: Method::Sections,
                pairs,
            };
        }
    }
    Pairing {
        method: Method::Chapter,
        pairs: whole(key)
            .map(|u| vec![(u, 0..target.len())])
            .unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_block_structure_pairs_unit_by_unit() {
        let src = "# One\n\nPara one.\n\n## Two\n\nPara two.\n\n```\ncode\n```\n";
        let tgt = "# 一\n\n第一段。\n\n## 二\n\n第二段。\n\n```\ncode\n```\n";
        let p = pair("c", src, tgt, 200);
        assert_eq!(p.method, Method::Blocks);
        let joined: String = p.pairs.iter().map(|(_, r)| &tgt[r.clone()]).collect();
        assert_eq!(joined, tgt);
        let p = pair("c", src, tgt, 10);
        assert!(p.pairs.len() > 1);
        let parts: Vec<&str> = p.pairs.iter().map(|(_, r)| &tgt[r.clone()]).collect();
        assert_eq!(
            parts,
            [
                "# 一\n\n",
                "第一段。\n\n",
                "## 二\n\n",
                "第二段。\n\n",
                "```\ncode\n```\n"
            ]
        );
    }

    #[test]
    fn falls_back_to_sections_then_chapter() {
        let src = "# One\n\nPara one.\n\nPara one b.\n\n## Two\n\nPara two.\n";
        let tgt = "# 一\n\n第一段合并。\n\n## 二\n\n第二段。\n";
        let p = pair("c", src, tgt, 200);
        assert_eq!(p.method, Method::Sections);
        assert_eq!(p.pairs.len(), 2);
        let p = pair("c", src, "没有标题的译文。\n", 200);
        assert_eq!(p.method, Method::Chapter);
        assert_eq!(p.pairs.len(), 1);
    }
}
