//! Seeds: an existing human translation of the book, read block by block before any paid call
//! (campaign key `seed`). A seeded block is never sent to a model; it is QA-checked like any
//! text and marked as human in the report. What a seed file gives, per source block (a
//! top-level Markdown block, the grain of block memory):
//! - **PO** (an mdbook-i18n-helpers catalog, `po/<lang>.po`): the block's messages as
//!   `mdbook-xgettext` extracts them ([`super::xgettext::extract`]); when every one of them
//!   has a translated, non-fuzzy entry, the block is rebuilt with the `msgstr`s
//!   ([`super::po::rebuild`]). A `fuzzy` entry is a suggestion, not a translation: mdBook does
//!   not show it either, so it is not taken (and counted).
//! - **TMX** and **XLIFF**: a translation unit whose source is the block (whitespace
//!   normalised, [`super::memory::normalize`]).
//! - **A translated folder** (an earlier edition, a `docs/zh/` tree): each chapter at the same
//!   relative path, aligned block by block ([`super::align`]); blocks it cannot align are
//!   listed, not guessed.
//!
//! Pure over the texts given: the caller reads the files.

use std::collections::HashMap;

use super::memory::normalize;
use super::xgettext::Links;

/// One chapter of the book as the seeds see it.
#[derive(Debug, Clone, Copy)]
pub struct SeedChapter<'a> {
    /// Path relative to the book's root (`src/intro.md`), as a translated folder mirrors it.
    pub rel_path: &'a str,
    /// The whole chapter text.
    pub text: &'a str,
    /// The chapter's source blocks (trimmed) that have something to translate.
    pub blocks: &'a [&'a str],
    /// Whether this is an mdBook's `SUMMARY.md` (its messages are titles without links).
    pub summary: bool,
}

/// What one seed file gave.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct SeedReport {
    /// The file or folder as named in the campaign file.
    pub file: String,
    /// `po`, `tmx`, `xliff` or `folder`.
    pub kind: String,
    /// Distinct source blocks it gave a translation for.
    pub blocks: usize,
    /// PO: blocks left out because one of their messages is only fuzzy.
    pub fuzzy: usize,
    /// PO: blocks left out because one of their messages has no translation in the file.
    pub untranslated: usize,
    /// Folder: chapters with no counterpart in the folder.
    pub missing_chapters: Vec<String>,
    /// Folder: source blocks the alignment left unpaired, as `path: first words`.
    pub unaligned: Vec<String>,
}

/// The seeded translations of a book's blocks, by source block.
#[derive(Debug, Clone, Default)]
pub struct Seeds {
    /// Normalised source block → (target block, index into `reports`). The first seed file
    /// listed wins for a block.
    map: HashMap<String, (String, usize)>,
    /// One per seed file, in the campaign file's order.
    pub reports: Vec<SeedReport>,
}

impl Seeds {
    /// The seeded translation of source block `core` and the file it came from.
    pub fn lookup(&self, core: &str) -> Option<(&str, &str)> {
        self.map
            .get(&normalize(core))
            .map(|(t, i)| (t.as_str(), self.reports[*i].file.as_str()))
    }

    /// Whether no block is seeded.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Seeded blocks in all.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    fn insert(&mut self, source: &str, target: &str, report: usize) -> bool {
        let key = normalize(source);
        if key.is_empty() || target.trim().is_empty() || self.map.contains_key(&key) {
            return false;
        }
        self.map.insert(key, (target.trim().to_string(), report));
        true
    }

    fn start(&mut self, file: &str, kind: &str) -> usize {
        self.reports.push(SeedReport {
            file: file.to_string(),
            kind: kind.to_string(),
            ..Default::default()
        });
        self.reports.len() - 1
    }

    /// Seeds the blocks of `chapters` from a PO catalog `messages` (see the module doc).
    pub fn add_po(
        &mut self,
        file: &str,
        chapters: &[SeedChapter],
        messages: &[super::po::ReadMessage],
    ) {
        let r = self.start(file, "po");
        let mut catalog: HashMap<&str, (&str, bool)> = HashMap::new();
        for m in messages {
            if m.msgid.is_empty() {
                continue;
            }
            let fuzzy = m.fuzzy || m.msgstr.trim().is_empty();
            // A translated entry wins over a fuzzy one of the same msgid (msgctxt aside).
            match catalog.get(m.msgid.as_str()) {
                Some((_, false)) => {}
                _ => {
                    catalog.insert(&m.msgid, (&m.msgstr, fuzzy));
                }
            }
        }
        for ch in chapters {
            let links = if ch.summary {
                Links::summary(ch.text)
            } else {
                Links::of(ch.text)
            };
            for block in ch.blocks {
                let msgs = super::xgettext::extract(block, &links);
                if msgs.is_empty() {
                    continue;
                }
                let mut strs = Vec::with_capacity(msgs.len());
                let mut fuzzy = false;
                let mut missing = false;
                for m in &msgs {
                    match catalog.get(m.msgid.as_str()) {
                        Some((s, false)) => strs.push(s.to_string()),
                        Some((_, true)) => fuzzy = true,
                        None => missing = true,
                    }
                }
                if missing {
                    self.reports[r].untranslated += 1;
                    continue;
                }
                if fuzzy {
                    self.reports[r].fuzzy += 1;
                    continue;
                }
                if let Ok(target) = super::po::rebuild(block, &strs, false, &links)
                    && self.insert(block, &target, r)
                {
                    self.reports[r].blocks += 1;
                }
            }
        }
    }

    /// Seeds the blocks of `chapters` from `(source, target)` pairs of a TMX or XLIFF file
    /// (`kind`): a pair whose source is a block, whitespace normalised.
    pub fn add_pairs(
        &mut self,
        file: &str,
        kind: &str,
        chapters: &[SeedChapter],
        pairs: &[(String, String)],
    ) {
        let r = self.start(file, kind);
        let by_source: HashMap<String, &str> = pairs
            .iter()
            .filter(|(_, t)| !t.trim().is_empty())
            .map(|(s, t)| (normalize(s), t.as_str()))
            .collect();
        for ch in chapters {
            for block in ch.blocks {
                if let Some(t) = by_source.get(&normalize(block))
                    && self.insert(block, t, r)
                {
                    self.reports[r].blocks += 1;
                }
            }
        }
    }

    /// Seeds the blocks of `chapters` from a translated folder: `translated(rel_path)` is the
    /// text of the chapter's counterpart, if the folder has one; its blocks are aligned with
    /// the chapter's ([`super::align::align_blocks`]) and each aligned pair is a seed.
    pub fn add_folder(
        &mut self,
        file: &str,
        chapters: &[SeedChapter],
        translated: &dyn Fn(&str) -> Option<String>,
    ) {
        let r = self.start(file, "folder");
        for ch in chapters {
            let Some(target) = translated(ch.rel_path) else {
                self.reports[r]
                    .missing_chapters
                    .push(ch.rel_path.to_string());
                continue;
            };
            let a = super::align::align_blocks(ch.text, &target);
            for p in &a.pairs {
                let (s, t) = (
                    ch.text[p.source.clone()].trim(),
                    target[p.target.clone()].trim(),
                );
                if self.insert(s, t, r) {
                    self.reports[r].blocks += 1;
                }
            }
            for u in &a.unaligned_source {
                let words: String = ch.text[u.clone()].trim().chars().take(40).collect();
                if !words.is_empty() && self.reports[r].unaligned.len() < 50 {
                    self.reports[r]
                        .unaligned
                        .push(format!("{}: {words}", ch.rel_path));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interchange::po::ReadMessage;

    fn msg(id: &str, s: &str, fuzzy: bool) -> ReadMessage {
        ReadMessage {
            msgctxt: None,
            msgid: id.into(),
            msgstr: s.into(),
            fuzzy,
        }
    }

    #[test]
    fn a_po_catalog_seeds_the_blocks_whose_messages_are_all_translated() {
        let text =
            "# Hello\n\nA *short* paragraph.\n\n- one\n- two\n\nNot translated.\n\nOnly fuzzy.\n";
        let blocks = [
            "# Hello",
            "A *short* paragraph.",
            "- one\n- two",
            "Not translated.",
            "Only fuzzy.",
        ];
        let ch = SeedChapter {
            rel_path: "src/a.md",
            text,
            blocks: &blocks,
            summary: false,
        };
        let mut s = Seeds::default();
        s.add_po(
            "po/zh.po",
            &[ch],
            &[
                msg("Hello", "你好", false),
                msg("A _short_ paragraph.", "一段_短_文字。", false),
                msg("one", "一", false),
                msg("two", "二", false),
                msg("Only fuzzy.", "仅模糊。", true),
            ],
        );
        assert_eq!(s.lookup("# Hello").unwrap(), ("# 你好", "po/zh.po"));
        assert_eq!(
            s.lookup("A *short* paragraph.").unwrap().0,
            "一段_短_文字。"
        );
        assert_eq!(s.lookup("- one\n- two").unwrap().0, "- 一\n- 二");
        assert!(s.lookup("Not translated.").is_none());
        assert!(s.lookup("Only fuzzy.").is_none());
        assert_eq!(s.reports[0].blocks, 3);
        assert_eq!(s.reports[0].fuzzy, 1);
        assert_eq!(s.reports[0].untranslated, 1);
    }

    #[test]
    fn a_tmx_pair_seeds_a_block_with_the_same_source() {
        let blocks = ["Some  paragraph\ntext."];
        let ch = SeedChapter {
            rel_path: "a.md",
            text: "Some  paragraph\ntext.\n",
            blocks: &blocks,
            summary: false,
        };
        let mut s = Seeds::default();
        s.add_pairs(
            "old.tmx",
            "tmx",
            &[ch],
            &[("Some paragraph text.".into(), "一些段落文字。".into())],
        );
        assert_eq!(
            s.lookup("Some  paragraph\ntext.").unwrap().0,
            "一些段落文字。"
        );
        assert_eq!(s.len(), 1);
    }
}
