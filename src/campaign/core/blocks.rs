//! Block memory: the paragraph, not the request, is the grain of memory.
//!
//! A unit is the grain of a request; a **block** (a top-level Markdown block of
//! [`crate::book::segment::top_level_blocks`]: a paragraph, a list, a table, a heading, a
//! caption) is the grain of memory. Whenever booktr writes the outputs, and whenever an editor's
//! edit is recorded, every unit's final text is paired block by block with its source and the
//! pairs are recorded ([`Event::BlocksRecorded`](super::store::Event::BlocksRecorded), a file
//! under `results/blocks/`). A later version of the book looks its blocks up here before any
//! paid call ([`plan`]):
//! - a block an **editor** wrote (origin [`BlockOrigin::Human`]) or one **seeded** from an
//!   existing human translation ([`BlockOrigin::Seed`]) is found by the hash of its source
//!   block alone: human text applies to that source whatever the settings;
//! - a block a **model** wrote is found by its block key
//!   ([`super::Campaign::block_key`]: the block's source with the glossary entries that occur in
//!   it, the brief, model and prompt settings), so a changed glossary entry or model
//!   translates again exactly the blocks it touches;
//! - a block with nothing to translate (code, bare HTML, rules) is its source.
//!
//! A unit whose blocks are all found is assembled with no request; a unit with some found is
//! split into runs of found and missing blocks, and only the missing ones go to the model (the
//! found ones are written back byte for byte). An edited block whose source changed is a
//! **stale edit** ([`Stale`]): the editor's text stays in the output with a `stale_edit` error
//! until the editor decides, and goes to the model as that block's reference.
//!
//! Pure: no I/O here; the records are written by [`super::commit`].

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use serde::{Deserialize, Serialize};

/// Where a block's target text came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockOrigin {
    /// A model's translation (kept by QA).
    Model,
    /// An editor's text: a hand edit of an output chapter or an imported edit.
    Human,
    /// An existing human translation the campaign was seeded from (a PO catalog, a TMX, an
    /// XLIFF, a translated folder), never sent to a model.
    Seed,
}

/// One block of a unit: its source and target text (each without the whitespace around it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockPair {
    pub source: String,
    pub target: String,
    pub origin: BlockOrigin,
    /// For a model block, its block key ([`super::Campaign::block_key`]); empty otherwise.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub key: String,
}

/// The blocks of one unit's final text as recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnitBlocks {
    /// The unit id (a seeded record: `seed:<file>`).
    pub unit: String,
    /// The unit's fingerprint when recorded (empty for a seed).
    pub fp: String,
    /// sha256 of the final text the blocks were taken from (empty for a seed).
    #[serde(default)]
    pub text_sha256: String,
    pub blocks: Vec<BlockPair>,
}

/// A file of block records, `results/blocks/<seq>.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlocksFile {
    pub schema_version: u32,
    /// The file a seed came from (as named on the command line or in the campaign file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<String>,
    pub units: Vec<UnitBlocks>,
}

/// The block spans of `text`: byte ranges that partition it, one per top-level block, each
/// from the start of its block's first line to the start of the next block (the first from 0,
/// the last to the end). One span for a text with no block (blank).
pub fn spans(text: &str) -> Vec<Range<usize>> {
    let starts: Vec<usize> = crate::book::segment::top_level_blocks(text)
        .iter()
        .map(|b| b.range.start)
        .collect();
    if starts.is_empty() {
        return std::iter::once(0..text.len()).collect();
    }
    let mut out = Vec::with_capacity(starts.len());
    for (i, _) in starts.iter().enumerate() {
        let start = if i == 0 { 0 } else { starts[i] };
        let end = starts.get(i + 1).copied().unwrap_or(text.len());
        out.push(start..end.max(start));
    }
    out
}

/// The blocks of `text` without the whitespace around each ([`spans`], trimmed).
pub fn cores(text: &str) -> Vec<&str> {
    spans(text).into_iter().map(|r| text[r].trim()).collect()
}

/// The memory key of a source block: the first 16 hex digits of the sha256 of its text with
/// the whitespace around it removed and CRLF line ends read as LF.
pub fn source_hash(core: &str) -> String {
    let t = core.trim();
    if t.contains('\r') {
        super::call_key::short_hash(t.replace("\r\n", "\n"))
    } else {
        super::call_key::short_hash(t)
    }
}

/// The block pairs of `source` and its translation `target`, when both have the same number
/// of blocks (the `structure` check's rule for a faithful translation); `None` otherwise.
pub fn pair<'a>(source: &'a str, target: &'a str) -> Option<Vec<(&'a str, &'a str)>> {
    let (s, t) = (cores(source), cores(target));
    (s.len() == t.len()).then(|| s.into_iter().zip(t).collect())
}

/// `source` with each block's text replaced by `targets` (one per block of [`spans`]), the
/// whitespace around each block kept as the source has it: the inverse of [`pair`] for the
/// target side. Panics when the counts differ (a caller bug).
pub fn assemble(source: &str, targets: &[&str]) -> String {
    let spans = spans(source);
    assert_eq!(spans.len(), targets.len(), "one target per source block");
    let mut out = String::with_capacity(source.len() * 2);
    for (r, t) in spans.into_iter().zip(targets) {
        let s = &source[r];
        let lead = &s[..s.len() - s.trim_start().len()];
        let trail = &s[s.trim_end().len()..];
        if s.trim().is_empty() {
            out.push_str(s);
            continue;
        }
        out.push_str(lead);
        out.push_str(t.trim());
        out.push_str(trail);
    }
    out
}

/// A block of a later version whose earlier source an editor had translated: the editor's
/// text stays until the editor decides ([`super::store::Event::StaleEditResolved`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stale {
    /// Index of the block in the unit ([`spans`] of its source).
    pub index: usize,
    /// The block's source when the editor translated it.
    pub old_source: String,
    /// The block's source now.
    pub new_source: String,
    /// The editor's text.
    pub editor: String,
}

/// What one block of a unit takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Planned {
    /// A current translation from memory.
    Found { text: String, origin: BlockOrigin },
    /// Nothing to translate: the source's bytes.
    Copy,
    /// Sent to the model; `reference` is the editor's text of the block's earlier source (a
    /// stale edit), given as a reference.
    Translate { reference: Option<Stale> },
}

/// The reuse plan of one unit ([`plan`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Plan {
    pub blocks: Vec<Planned>,
}

impl Plan {
    /// Blocks found in memory.
    pub fn found(&self) -> usize {
        self.blocks
            .iter()
            .filter(|b| matches!(b, Planned::Found { .. }))
            .count()
    }

    /// Blocks to send to the model.
    pub fn missing(&self) -> usize {
        self.blocks
            .iter()
            .filter(|b| matches!(b, Planned::Translate { .. }))
            .count()
    }

    /// Whether some block has a translation in memory: only then is the plan worth carrying
    /// out instead of translating the unit whole.
    pub fn reuses(&self) -> bool {
        self.found() > 0
    }

    /// Found blocks of `origin`.
    pub fn count(&self, origin: BlockOrigin) -> usize {
        self.blocks
            .iter()
            .filter(|b| matches!(b, Planned::Found { origin: o, .. } if *o == origin))
            .count()
    }

    /// The stale edits of the plan.
    pub fn stale(&self) -> Vec<Stale> {
        self.blocks
            .iter()
            .filter_map(|b| match b {
                Planned::Translate { reference } => reference.clone(),
                _ => None,
            })
            .collect()
    }

    /// Whether the unit's final text carries an editor's work (a found human block or a stale
    /// edit): it is then recorded as a carried edit, never revised by a model.
    pub fn carries_human(&self) -> bool {
        self.count(BlockOrigin::Human) > 0
            || self.count(BlockOrigin::Seed) > 0
            || !self.stale().is_empty()
    }

    /// Byte ranges of the unit's source cut into runs of blocks that are sent to the model
    /// and runs that are not (found or copied), in order, with whether each run is sent.
    pub fn runs(&self, source: &str) -> Vec<(Range<usize>, bool)> {
        let spans = spans(source);
        let mut out: Vec<(Range<usize>, bool)> = Vec::new();
        for (r, b) in spans.into_iter().zip(&self.blocks) {
            let sent = matches!(b, Planned::Translate { .. });
            match out.last_mut() {
                Some((last, s)) if *s == sent => last.end = r.end,
                _ => out.push((r, sent)),
            }
        }
        out
    }

    /// The text of the run `range` (of [`Plan::runs`], not sent) from memory: the found
    /// blocks' texts and the copied blocks' source, with the source's whitespace.
    pub fn run_text(&self, source: &str, range: Range<usize>) -> String {
        let spans = spans(source);
        let mut out = String::new();
        for (r, b) in spans.into_iter().zip(&self.blocks) {
            if r.start < range.start || r.end > range.end {
                continue;
            }
            let s = &source[r.clone()];
            match b {
                Planned::Found { text, .. } => out.push_str(&assemble(s, &[text.as_str()])),
                _ => out.push_str(s),
            }
        }
        out
    }

    /// `translated` (the unit's text with every block, as joined) with each stale block
    /// replaced by the editor's text: the text an editor's work is carried into.
    pub fn with_editor_text(&self, source: &str, translated: &str) -> String {
        let stale = self.stale();
        if stale.is_empty() {
            return translated.to_string();
        }
        let Some(pairs) = pair(source, translated) else {
            return translated.to_string();
        };
        let mut targets: Vec<&str> = pairs.iter().map(|p| p.1).collect();
        for s in &stale {
            if let Some(t) = targets.get_mut(s.index) {
                *t = s.editor.as_str();
            }
        }
        assemble(source, &targets)
    }
}

/// What the block memory keeps of a unit's newest record: what placing an editor's blocks
/// on a new version of the unit reads (each block's source hash and origin, and an editor's
/// block's texts), and the record's file for the whole record ([`LastRecord::read`]).
///
/// Not the whole record: the whole record of every unit holds the book's source and
/// translation twice over (on a 12 MB book, 25 MB of small strings, the largest part of a
/// loaded state), and only an edit made to an earlier version reads it whole.
#[derive(Debug, Clone)]
pub struct LastRecord {
    /// The unit's fingerprint when recorded.
    pub fp: String,
    /// The file of block records that holds the record (relative to the state directory).
    pub file: String,
    blocks: Vec<LastBlock>,
}

/// One block of a [`LastRecord`].
#[derive(Debug, Clone)]
struct LastBlock {
    /// [`source_hash`] of the block's source.
    source_hash: String,
    /// An editor's block: its source and the editor's text.
    editor: Option<(String, String)>,
}

impl LastRecord {
    fn of(u: &UnitBlocks, file: &str) -> LastRecord {
        LastRecord {
            fp: u.fp.clone(),
            file: file.to_string(),
            blocks: u
                .blocks
                .iter()
                .map(|b| LastBlock {
                    source_hash: source_hash(&b.source),
                    editor: (b.origin == BlockOrigin::Human)
                        .then(|| (b.source.clone(), b.target.clone())),
                })
                .collect(),
        }
    }

    /// The whole record of unit `id`, read from its file under the state directory `dir`.
    pub fn read(&self, dir: &std::path::Path, id: &str) -> anyhow::Result<UnitBlocks> {
        let path = dir.join(&self.file);
        let bytes = std::fs::read(&path)
            .map_err(|e| anyhow::anyhow!("reading block records {}: {e}", path.display()))?;
        let f: BlocksFile = serde_json::from_slice(&bytes)
            .map_err(|e| anyhow::anyhow!("block records {}: {e}", path.display()))?;
        f.units
            .into_iter()
            .rev()
            .find(|u| u.unit == id && u.fp == self.fp)
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "block records {} hold no record of unit {id}; the state directory was \
                     changed by hand: restore it, or run `booktr run --force`",
                    path.display()
                )
            })
    }
}

/// Every recorded block, indexed for lookup. Built from the journal's block records in order,
/// so a later record of the same source wins.
#[derive(Debug, Default, Clone)]
pub struct BlockMemory {
    /// Source hash → (editor's text, fingerprint of the unit it was recorded with).
    human: HashMap<String, (String, String)>,
    /// Source hash → (seeded text, file).
    seed: HashMap<String, (String, String)>,
    /// Block key → model text.
    model: HashMap<String, String>,
    /// Unit id → what is kept of its newest record ([`LastRecord`]).
    last: HashMap<String, LastRecord>,
    /// (unit fingerprint, text sha256) of every record, so an unchanged unit is not recorded
    /// again.
    recorded: HashSet<(String, String)>,
    /// Blocks recorded in all.
    count: usize,
}

impl BlockMemory {
    /// Adds one file of records, `rel` its path relative to the state directory.
    pub fn add(&mut self, file: BlocksFile, rel: &str) {
        for u in file.units {
            for b in &u.blocks {
                self.count += 1;
                match b.origin {
                    BlockOrigin::Human => {
                        self.human
                            .insert(source_hash(&b.source), (b.target.clone(), u.fp.clone()));
                    }
                    BlockOrigin::Seed => {
                        self.seed.insert(
                            source_hash(&b.source),
                            (b.target.clone(), file.seed.clone().unwrap_or_default()),
                        );
                    }
                    BlockOrigin::Model => {
                        if !b.key.is_empty() {
                            self.model.insert(b.key.clone(), b.target.clone());
                        }
                    }
                }
            }
            if !u.fp.is_empty() {
                self.recorded.insert((u.fp.clone(), u.text_sha256.clone()));
                self.last.insert(u.unit.clone(), LastRecord::of(&u, rel));
            }
        }
    }

    /// Forgets the editor's blocks recorded with the units of `fps` (`run --force`).
    pub fn discard_human(&mut self, fps: &[String]) {
        self.human.retain(|_, (_, fp)| !fps.contains(fp));
    }

    /// Whether unit fingerprint `fp` with final text hash `text_sha256` is recorded.
    pub fn is_recorded(&self, fp: &str, text_sha256: &str) -> bool {
        self.recorded
            .contains(&(fp.to_string(), text_sha256.to_string()))
    }

    /// Whether nothing is recorded.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Blocks recorded in all (every record, repeats included).
    pub fn len(&self) -> usize {
        self.count
    }

    /// The editor's text for source block `core`, if one was recorded.
    pub fn human(&self, core: &str) -> Option<&str> {
        self.human.get(&source_hash(core)).map(|h| h.0.as_str())
    }

    /// The seeded text for source block `core`, if any.
    pub fn seed(&self, core: &str) -> Option<&str> {
        self.seed.get(&source_hash(core)).map(|h| h.0.as_str())
    }

    /// The translation for source block `core` (block key `key`), best origin first: an
    /// editor's, a seed's, then a model's under the same key.
    pub fn lookup(&self, core: &str, key: &str) -> Option<(&str, BlockOrigin)> {
        let h = source_hash(core);
        if let Some((t, _)) = self.human.get(&h) {
            return Some((t, BlockOrigin::Human));
        }
        if let Some((t, _)) = self.seed.get(&h) {
            return Some((t, BlockOrigin::Seed));
        }
        self.model
            .get(key)
            .map(|t| (t.as_str(), BlockOrigin::Model))
    }

    /// What is kept of the newest record of unit `id`.
    pub fn last_of(&self, id: &str) -> Option<&LastRecord> {
        self.last.get(id)
    }

    /// The reuse plan of unit `id` with source `source` and fingerprint `fp`: for each block,
    /// its translation from memory, a copy, or a request ([`Planned`]). `key_of` gives a
    /// block's key ([`super::Campaign::block_key`]); `needs_model` whether a block has
    /// anything to translate.
    ///
    /// Stale edits: when the unit's newest record is of another fingerprint (its source
    /// changed), its blocks are aligned with the new ones by source (a longest common
    /// subsequence of source hashes); an editor's block with no counterpart is stale on the
    /// new block at the same place in the same gap, unless that block has a translation of
    /// its own in memory.
    pub fn plan(
        &self,
        id: &str,
        source: &str,
        fp: &str,
        key_of: &dyn Fn(&str) -> String,
        needs_model: &dyn Fn(&str) -> bool,
        seeds: &crate::interchange::seed::Seeds,
    ) -> Plan {
        let new = cores(source);
        let mut blocks: Vec<Planned> = new
            .iter()
            .map(|core| {
                if !needs_model(core) {
                    return Planned::Copy;
                }
                let found = match self.human(core) {
                    Some(t) => Some((t, BlockOrigin::Human)),
                    None => seeds
                        .lookup(core)
                        .map(|(t, _)| (t, BlockOrigin::Seed))
                        .or_else(|| self.lookup(core, &key_of(core))),
                };
                match found {
                    Some((text, origin)) => Planned::Found {
                        text: text.to_string(),
                        origin,
                    },
                    None => Planned::Translate { reference: None },
                }
            })
            .collect();
        if let Some(prev) = self.last.get(id).filter(|p| p.fp != fp) {
            for (old_i, new_i) in stale_places(prev, &new) {
                let Some((old_source, editor)) = &prev.blocks[old_i].editor else {
                    continue;
                };
                if let Some(Planned::Translate { reference }) = blocks.get_mut(new_i) {
                    *reference = Some(Stale {
                        index: new_i,
                        old_source: old_source.clone(),
                        new_source: new[new_i].to_string(),
                        editor: editor.clone(),
                    });
                }
            }
        }
        Plan { blocks }
    }
}

/// (old block index, new block index) of each editor's block of `prev` whose source has no
/// counterpart among `new` (the blocks of the unit now), placed on the new block in the same
/// gap between blocks both versions share (the same position in the gap, or its last block).
fn stale_places(prev: &LastRecord, new: &[&str]) -> Vec<(usize, usize)> {
    let a: Vec<String> = prev.blocks.iter().map(|b| b.source_hash.clone()).collect();
    let b: Vec<String> = new.iter().map(|c| source_hash(c)).collect();
    let common = lcs(&a, &b);
    let mut out = Vec::new();
    // Gaps between common anchors, including before the first and after the last.
    let mut anchors: Vec<(usize, usize)> = vec![];
    anchors.extend(common.iter().copied());
    anchors.push((a.len(), b.len()));
    let (mut pa, mut pb) = (0usize, 0usize);
    for (ea, eb) in anchors {
        let gap_new: Vec<usize> = (pb..eb).collect();
        for (k, old_i) in (pa..ea).enumerate() {
            if prev.blocks[old_i].editor.is_none() || gap_new.is_empty() {
                continue;
            }
            let new_i = gap_new[k.min(gap_new.len() - 1)];
            out.push((old_i, new_i));
        }
        pa = ea + 1;
        pb = eb + 1;
    }
    out
}

/// The index pairs of a longest common subsequence of `a` and `b`, in order. Quadratic in
/// the blocks of one unit (tens), so hand-rolled rather than a diff crate.
fn lcs(a: &[String], b: &[String]) -> Vec<(usize, usize)> {
    let (n, m) = (a.len(), b.len());
    let mut t = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            t[i][j] = if a[i] == b[j] {
                t[i + 1][j + 1] + 1
            } else {
                t[i + 1][j].max(t[i][j + 1])
            };
        }
    }
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < n && j < m {
        if a[i] == b[j] {
            out.push((i, j));
            i += 1;
            j += 1;
        } else if t[i + 1][j] >= t[i][j + 1] {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(unit: &str, fp: &str, pairs: &[(&str, &str, BlockOrigin)]) -> BlocksFile {
        BlocksFile {
            schema_version: 1,
            seed: None,
            units: vec![UnitBlocks {
                unit: unit.into(),
                fp: fp.into(),
                text_sha256: String::new(),
                blocks: pairs
                    .iter()
                    .map(|(s, t, o)| BlockPair {
                        source: s.to_string(),
                        target: t.to_string(),
                        origin: *o,
                        key: if *o == BlockOrigin::Model {
                            format!("k:{s}")
                        } else {
                            String::new()
                        },
                    })
                    .collect(),
            }],
        }
    }

    fn key(core: &str) -> String {
        format!("k:{core}")
    }

    fn prose(_: &str) -> bool {
        true
    }

    proptest::proptest! {
        /// Lossless: the spans cover the text exactly, in order, and assembling the text's
        /// own blocks gives it back byte for byte (so a unit whose blocks all come from memory
        /// unchanged is its recorded text).
        #[test]
        fn spans_cover_the_text_and_assembling_its_own_blocks_is_the_identity(
            parts in proptest::collection::vec(
                proptest::prop_oneof![
                    "[A-Za-z ,.]{1,40}",
                    "# [A-Za-z ]{1,20}",
                    "- [a-z]{1,10}\n- [a-z]{1,10}",
                    "```\ncode [a-z]{1,8}\n```",
                    "> [a-z ]{1,20}",
                    "\\| a \\| b \\|\n\\|---\\|---\\|\n\\| 1 \\| 2 \\|",
                ],
                1..8,
            ),
            seps in proptest::collection::vec("\n\n|\n\n\n|\r\n\r\n|\n \n", 8),
            lead in "\n{0,2}",
        ) {
            let mut text = lead.clone();
            for (i, p) in parts.iter().enumerate() {
                text.push_str(p);
                text.push_str(&seps[i]);
            }
            let s = spans(&text);
            proptest::prop_assert_eq!(s.first().unwrap().start, 0);
            proptest::prop_assert_eq!(s.last().unwrap().end, text.len());
            for w in s.windows(2) {
                proptest::prop_assert_eq!(w[0].end, w[1].start);
            }
            let own = cores(&text);
            proptest::prop_assert_eq!(assemble(&text, &own), text.clone());
        }
    }

    #[test]
    fn spans_partition_the_text_and_assemble_inverts_pair() {
        let src = "# Title\n\nOne para.\n\n- a\n- b\n\nLast.\n";
        let tgt = "# 标题\n\n一段。\n\n- 甲\n- 乙\n\n最后。\n";
        let s = spans(src);
        assert_eq!(s.first().unwrap().start, 0);
        assert_eq!(s.last().unwrap().end, src.len());
        assert_eq!(s.len(), 4);
        let p = pair(src, tgt).unwrap();
        assert_eq!(p[1], ("One para.", "一段。"));
        let targets: Vec<&str> = p.iter().map(|x| x.1).collect();
        assert_eq!(assemble(src, &targets), tgt);
    }

    #[test]
    fn an_edited_paragraph_is_the_only_block_sent() {
        let mut m = BlockMemory::default();
        m.add(
            record(
                "u1",
                "fp1",
                &[
                    ("P one.", "一。", BlockOrigin::Human),
                    ("P two.", "二。", BlockOrigin::Model),
                    ("P three.", "三。", BlockOrigin::Model),
                ],
            ),
            "results/blocks/1.json",
        );
        let src = "P one.\n\nP two.\n\nP three changed.\n";
        let plan = m.plan("u1", src, "fp2", &key, &prose, &Default::default());
        assert_eq!(plan.found(), 2);
        assert_eq!(plan.missing(), 1);
        assert_eq!(plan.count(BlockOrigin::Human), 1);
        assert!(plan.stale().is_empty());
        let runs = plan.runs(src);
        assert_eq!(runs.len(), 2);
        assert_eq!(&src[runs[1].0.clone()], "P three changed.\n");
        assert!(runs[1].1);
        assert_eq!(plan.run_text(src, runs[0].0.clone()), "一。\n\n二。\n\n");
    }

    #[test]
    fn an_edited_block_whose_source_changed_is_stale() {
        let mut m = BlockMemory::default();
        m.add(
            record(
                "u1",
                "fp1",
                &[
                    ("P one.", "编辑的一。", BlockOrigin::Human),
                    ("P two.", "二。", BlockOrigin::Model),
                ],
            ),
            "results/blocks/1.json",
        );
        let src = "P one, revised.\n\nP two.\n";
        let plan = m.plan("u1", src, "fp2", &key, &prose, &Default::default());
        let stale = plan.stale();
        assert_eq!(stale.len(), 1);
        assert_eq!(stale[0].index, 0);
        assert_eq!(stale[0].old_source, "P one.");
        assert_eq!(stale[0].new_source, "P one, revised.");
        assert_eq!(stale[0].editor, "编辑的一。");
        assert!(plan.carries_human());
        let joined = "模型的新一。\n\n二。\n";
        assert_eq!(plan.with_editor_text(src, joined), "编辑的一。\n\n二。\n");
    }

    #[test]
    fn a_model_block_under_another_key_is_not_reused() {
        let mut m = BlockMemory::default();
        m.add(
            record("u1", "fp1", &[("P two.", "二。", BlockOrigin::Model)]),
            "results/blocks/1.json",
        );
        let plan = m.plan(
            "u9",
            "P two.\n",
            "fpx",
            &|c: &str| format!("other:{c}"),
            &prose,
            &Default::default(),
        );
        assert_eq!(plan.found(), 0);
    }
}
