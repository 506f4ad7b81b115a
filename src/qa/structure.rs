//! `structure` (error): the translation keeps the source's block tree, not only its counts.
//! Faults that keep the numbers of code blocks, links and headings but change the shape are
//! caught here:
//!
//! - **Blocks, in order**: each unit's blocks ([`Block`]: paragraphs, list items with their
//!   depth and their paragraphs, headings, code, tables, thematic breaks, HTML) are aligned,
//!   source against target, by dynamic programming over their kinds and prose lengths (the
//!   length-based alignment of Gale & Church 1993, "A program for aligning sentences in
//!   bilingual corpora", *Computational Linguistics* 19(1), with lengths normalised by each
//!   text's total so that no language pair needs calibrating). Two source paragraphs matched to
//!   one target paragraph are a merge ("paragraph 3 of the source has no counterpart: merged
//!   into paragraph 2?"), one to two a split; a block matched to a block of the same kind with
//!   other attributes (list depth, ordered or not, blockquote depth, callout kind, table
//!   alignment, an item emptied by a `1.` split off its text) is named with both values.
//! - **Leading and trailing blocks with no source counterpart** are reported as
//!   `injected_text`: a lead-in, an echoed instruction, a meta reply or a trailing note, in any
//!   language. A source paragraph that itself starts with "Note:" has its counterpart, so it
//!   raises no alarm.
//! - **Trailing source blocks with no counterpart** are reported as `truncation`: the last
//!   source block must have a counterpart.
//! - **Admonition and callout markers** stay byte-identical, in order: GFM `> [!NOTE]`,
//!   MkDocs/Material `!!! tip` and `??? note` (the quoted title may be translated), MyST and
//!   Docusaurus `:::` fences (`:::{note}`, `:::tip`, `:::`). Lines inside fenced code are
//!   ignored.
//! - **Front matter**: when the source has a YAML front matter block, the translation has one
//!   too, it is well formed (see [`yaml_keys`]: a top-level mapping with balanced quotes and
//!   brackets), has the same keys in the same order, and keeps every value byte-identical except
//!   those of [`TRANSLATED_KEYS`]. A translation that opens its body with `---` the source does
//!   not have is named as such.
//!
//! Thresholds: the alignment costs ([`COST_EDIT`], [`COST_MERGE`], [`COST_GAP`], [`COST_INNER`]) are chosen so that any edit is
//! dearer than the worst length mismatch of a 1–1 match between faithful paragraphs measured on
//! the labelled set (`tests/fixtures/qa-labelled/`); see `benches/qa_labelled.rs`.

use pulldown_cmark::{Alignment, BlockQuoteKind, Event, Tag, TagEnd};

use super::doc::Doc;
use super::{Finding, QaContext, Severity, quote};

pub const CHECK: &str = "structure";
/// Check name of a trailing source block without counterpart, and of sentence omissions
/// ([`super::sentences`]).
pub const TRUNCATION: &str = "truncation";

/// Cost of an attribute change in the alignment, in units of the length cost (absolute log
/// ratio of smoothed prose lengths).
pub const COST_EDIT: f64 = 1.2;
/// Cost of a merge or a split: dearer than a block added or dropped, so that a lead-in before a
/// paragraph is not read as that paragraph split in two.
pub const COST_MERGE: f64 = 1.6;
/// Cost of a source block without counterpart, or of a target block without one (plus its
/// length as a share of the source's prose).
pub const COST_GAP: f64 = 1.2;

/// Most cells of the alignment table (source blocks + 1 times target blocks + 1): about
/// 8 MB. Units are segmented well below this (a 12,000-character unit has at most a few hundred
/// blocks); a larger pair is compared block by block in order instead.
pub const MAX_CELLS: usize = 250_000;

/// Extra cost of a block added or dropped between two translated blocks rather than at the
/// start or the end.
pub const COST_INNER: f64 = 0.3;

/// Front matter keys whose values are translated; every other value is kept byte-identical.
pub const TRANSLATED_KEYS: &[&str] = &[
    "title",
    "subtitle",
    "description",
    "summary",
    "abstract",
    "excerpt",
    "sidebar_label",
    "caption",
    "keywords",
    "tags",
];

/// What kind of block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    Paragraph,
    ListItem,
    Heading,
    Code,
    Table,
    Rule,
    Html,
}

impl Kind {
    fn noun(self) -> &'static str {
        match self {
            Kind::Paragraph => "paragraph",
            Kind::ListItem => "list item",
            Kind::Heading => "heading",
            Kind::Code => "code block",
            Kind::Table => "table",
            Kind::Rule => "thematic break",
            Kind::Html => "HTML block",
        }
    }
}

/// One block of a text's outline, in document order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Block {
    /// `None` only while building.
    pub kind: Option<Kind>,
    /// Blockquote nesting (0 outside quotes).
    pub quote_depth: usize,
    /// List nesting of a list item (1 for a top-level item), 0 for other blocks.
    pub list_depth: usize,
    /// A list item of an ordered list.
    pub ordered: bool,
    /// Paragraphs of a list item (a tight item with text counts 1; an empty item 0).
    pub paras: usize,
    /// GFM callout kind of the innermost blockquote (`NOTE`, `TIP`, …), if any.
    pub callout: Option<&'static str>,
    /// A table's alignment row as `L`, `C`, `R`, `-` per column.
    pub align: String,
    /// Plain text of the block (its own text; not that of nested blocks), for excerpts and
    /// lengths.
    pub text: String,
}

impl Block {
    /// Non-whitespace characters of the block's own text.
    pub fn chars(&self) -> usize {
        self.text.chars().filter(|c| !c.is_whitespace()).count()
    }

    fn kind(&self) -> Kind {
        self.kind.unwrap_or(Kind::Paragraph)
    }
}

/// Builds the outline from the parse events (fed by [`Doc::parse`]).
#[derive(Debug, Default)]
pub(crate) struct OutlineBuilder {
    blocks: Vec<Block>,
    /// Indices of open blocks (innermost last).
    open: Vec<usize>,
    /// Open lists: ordered or not.
    lists: Vec<bool>,
    quotes: Vec<Option<&'static str>>,
    /// Paragraph starts swallowed by an open list item.
    in_item_para: Vec<bool>,
}

impl OutlineBuilder {
    fn push(&mut self, kind: Kind) {
        self.blocks.push(Block {
            kind: Some(kind),
            quote_depth: self.quotes.len(),
            callout: self.quotes.last().copied().flatten(),
            ..Block::default()
        });
        self.open.push(self.blocks.len() - 1);
    }

    fn top_is_item(&self) -> bool {
        self.open
            .last()
            .is_some_and(|&i| self.blocks[i].kind == Some(Kind::ListItem))
    }

    /// Feeds one event.
    pub(crate) fn event(&mut self, ev: &Event<'_>) {
        match ev {
            Event::Start(Tag::Paragraph) => {
                if self.top_is_item() {
                    let i = *self.open.last().expect("item");
                    self.blocks[i].paras += 1;
                    self.in_item_para.push(true);
                } else {
                    self.in_item_para.push(false);
                    self.push(Kind::Paragraph);
                }
            }
            Event::End(TagEnd::Paragraph) => {
                let own_block = self.in_item_para.pop() == Some(false);
                if own_block {
                    self.open.pop();
                }
            }
            Event::Start(Tag::List(start)) => self.lists.push(start.is_some()),
            Event::End(TagEnd::List(_)) => {
                self.lists.pop();
            }
            Event::Start(Tag::Item) => {
                self.push(Kind::ListItem);
                let b = self.blocks.last_mut().expect("pushed");
                b.list_depth = self.lists.len();
                b.ordered = self.lists.last().copied().unwrap_or(false);
            }
            Event::End(TagEnd::Item) => {
                if let Some(i) = self.open.pop() {
                    let b = &mut self.blocks[i];
                    if b.paras == 0 && b.chars() > 0 {
                        b.paras = 1;
                    }
                }
            }
            Event::Start(Tag::BlockQuote(kind)) => self.quotes.push(kind.map(callout_name)),
            Event::End(TagEnd::BlockQuote(_)) => {
                self.quotes.pop();
            }
            Event::Start(Tag::Heading { .. }) => self.push(Kind::Heading),
            Event::Start(Tag::CodeBlock(_)) => self.push(Kind::Code),
            Event::Start(Tag::HtmlBlock) => self.push(Kind::Html),
            Event::Start(Tag::Table(aligns)) => {
                self.push(Kind::Table);
                let b = self.blocks.last_mut().expect("pushed");
                b.align = aligns
                    .iter()
                    .map(|a| match a {
                        Alignment::None => '-',
                        Alignment::Left => 'L',
                        Alignment::Center => 'C',
                        Alignment::Right => 'R',
                    })
                    .collect();
            }
            Event::End(
                TagEnd::Heading(_) | TagEnd::CodeBlock | TagEnd::HtmlBlock | TagEnd::Table,
            ) => {
                self.open.pop();
            }
            Event::Rule => {
                self.push(Kind::Rule);
                self.open.pop();
            }
            Event::Text(t) | Event::Code(t) => {
                if let Some(&i) = self.open.last()
                    && !matches!(self.blocks[i].kind, Some(Kind::Code | Kind::Html))
                {
                    self.blocks[i].text.push_str(t);
                    self.blocks[i].text.push(' ');
                }
            }
            Event::SoftBreak | Event::HardBreak => {
                if let Some(&i) = self.open.last() {
                    self.blocks[i].text.push(' ');
                }
            }
            _ => {}
        }
    }

    /// The outline.
    pub(crate) fn finish(self) -> Vec<Block> {
        self.blocks
    }
}

fn callout_name(k: BlockQuoteKind) -> &'static str {
    match k {
        BlockQuoteKind::Note => "NOTE",
        BlockQuoteKind::Tip => "TIP",
        BlockQuoteKind::Important => "IMPORTANT",
        BlockQuoteKind::Warning => "WARNING",
        BlockQuoteKind::Caution => "CAUTION",
    }
}

/// The YAML front matter at the start of `text` (after a BOM): the lines between an opening
/// `---` line and the next `---` or `...` line, or `None`.
pub fn front_matter(text: &str) -> Option<&str> {
    let text = crate::book::markdown::split_bom(text).1;
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))?;
    let mut at = 0;
    for line in rest.split_inclusive('\n') {
        let l = line.trim_end();
        if l == "---" || l == "..." {
            return Some(&rest[..at]);
        }
        at += line.len();
    }
    None
}

/// The top-level keys of a YAML front matter block with their raw values (value text on the
/// key's line plus indented continuation lines), or an error naming the first line that is not
/// well formed. A deliberately small subset of YAML, enough for front matter: a block mapping
/// of `key: value` lines, `#` comments, indented or `- ` continuation lines; quoted scalars must
/// close on their line and flow collections (`[…]`, `{…}`) must balance.
pub fn yaml_keys(fm: &str) -> Result<Vec<(String, String)>, String> {
    let mut out: Vec<(String, String)> = Vec::new();
    for (n, line) in fm.lines().enumerate() {
        let t = line.trim_end();
        if t.trim().is_empty() || t.trim_start().starts_with('#') {
            continue;
        }
        if line.starts_with([' ', '\t']) || t.starts_with("- ") || t == "-" {
            match out.last_mut() {
                Some((_, v)) => {
                    v.push('\n');
                    v.push_str(t);
                    continue;
                }
                None => return Err(format!("line {} is indented before any key", n + 1)),
            }
        }
        let Some((k, v)) = t.split_once(':') else {
            return Err(format!("line {} ({}) is not `key: value`", n + 1, quote(t)));
        };
        if k.is_empty() || k.contains(char::is_whitespace) && !k.starts_with(['"', '\'']) {
            return Err(format!("line {} has no valid key ({})", n + 1, quote(t)));
        }
        let v = v.trim();
        if !scalar_ok(v) {
            return Err(format!(
                "line {} has an unclosed quote or bracket ({})",
                n + 1,
                quote(t)
            ));
        }
        out.push((k.to_string(), v.to_string()));
    }
    Ok(out)
}

fn scalar_ok(v: &str) -> bool {
    if let Some(q @ ('"' | '\'')) = v.chars().next() {
        return v.len() >= 2 && v.ends_with(q);
    }
    let open = |a: char, b: char| v.matches(a).count() == v.matches(b).count();
    !(v.starts_with('[') || v.starts_with('{')) || (open('[', ']') && open('{', '}'))
}

/// An admonition or callout marker line (outside fenced code), as it must stay: GFM
/// `[!KIND]`, MkDocs `!!! kind` / `??? kind` / `???+ kind` (without the title), and `:::` fences
/// with their directive (`:::{note}`, `:::tip`).
pub fn markers(text: &str) -> Vec<String> {
    marker_spans(text).into_iter().map(|(m, _)| m).collect()
}

/// [`markers`] with the byte range of each marker in `text` (what mechanical repair restores).
pub fn marker_spans(text: &str) -> Vec<(String, std::ops::Range<usize>)> {
    let mut out = Vec::new();
    let mut fence: Option<(char, usize)> = None;
    let mut at = 0;
    for full in text.split_inclusive('\n') {
        let line_start = at;
        at += full.len();
        let line = full.strip_suffix('\n').unwrap_or(full);
        let line = line.strip_suffix('\r').unwrap_or(line);
        let t = line.trim_start();
        let t_at = line_start + (line.len() - t.len());
        let run = |c: char| t.chars().take_while(|x| *x == c).count();
        if let Some((c, n)) = fence {
            if run(c) >= n && t.trim_end().chars().all(|x| x == c) {
                fence = None;
            }
            continue;
        }
        for c in ['`', '~'] {
            if run(c) >= 3 {
                fence = Some((c, run(c)));
            }
        }
        if fence.is_some() {
            continue;
        }
        let q = t.trim_start_matches(['>', ' ']);
        let q_at = t_at + (t.len() - q.len());
        if q.len() < t.len() || t.starts_with("[!") {
            if let Some(rest) = q.strip_prefix("[!")
                && let Some(end) = rest.find(']')
            {
                out.push((format!("[!{}]", &rest[..end]), q_at..q_at + 2 + end + 1));
                continue;
            }
            if q.starts_with("\\[!") {
                let head = q.split(']').next().unwrap_or(q);
                let m = head.to_string() + "]";
                let len = (head.len() + 1).min(q.len());
                out.push((m, q_at..q_at + len));
            }
            continue;
        }
        for p in ["!!!", "???+", "???"] {
            if let Some(rest) = t.strip_prefix(p)
                && rest.starts_with(' ')
            {
                let kind = rest.split_whitespace().next().unwrap_or("");
                let kind_at = rest.find(kind).unwrap_or(1);
                let end = t_at + p.len() + kind_at + kind.len();
                out.push((format!("{p} {kind}"), t_at..end));
                break;
            }
        }
        if run(':') >= 3 {
            let head = t.split_whitespace().next().unwrap_or(t);
            out.push((head.to_string(), t_at..t_at + head.len()));
        }
    }
    out
}

/// One step of the alignment.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Step {
    /// 1–1, same kind and attributes.
    Match,
    /// 1–1, same kind, other attributes.
    Change,
    /// 2 source paragraphs – 1 target paragraph.
    Merge,
    /// 1 source paragraph – 2 target paragraphs.
    Split,
    /// Source block without counterpart.
    Drop,
    /// Target block without counterpart.
    Add,
}

/// Whether two blocks of one kind have the same attributes. Table alignments are compared only
/// between tables with as many columns (`tables` reports a lost or added column).
fn same_attrs(a: &Block, b: &Block) -> bool {
    let align = a.align.len() != b.align.len() || a.align == b.align;
    align
        && (a.quote_depth, a.list_depth, a.ordered, a.paras, a.callout)
            == (b.quote_depth, b.list_depth, b.ordered, b.paras, b.callout)
}

/// Length cost of matching a source length `s` with a target length `t` (both in
/// non-whitespace characters, the target's scaled by the text's length ratio): the absolute log
/// ratio, smoothed by [`SMOOTHING`] characters so that short blocks do not dominate.
fn len_cost(s: f64, t: f64) -> f64 {
    ((t + SMOOTHING) / (s + SMOOTHING)).ln().abs()
}

/// Characters added to both lengths of [`len_cost`].
pub const SMOOTHING: f64 = 20.0;

/// Aligns two outlines in two passes: first with the target lengths scaled by the ratio of the
/// totals, then by the ratio of the blocks the first pass matched one to one (a lost block no
/// longer inflates the ratio). Returns the steps with the source and target index each starts
/// at.
fn align(src: &[Block], tgt: &[Block]) -> Vec<(Step, usize, usize)> {
    if (src.len() + 1) * (tgt.len() + 1) > MAX_CELLS {
        // Too large to align in bounded memory: blocks are paired in order where their kinds
        // agree, and nothing is reported as added, dropped, merged or split.
        return src
            .iter()
            .zip(tgt)
            .enumerate()
            .filter(|(_, (a, b))| a.kind() == b.kind())
            .map(|(i, (a, b))| {
                let step = if same_attrs(a, b) {
                    Step::Match
                } else {
                    Step::Change
                };
                (step, i, i)
            })
            .collect();
    }
    let total = |bs: &[Block]| bs.iter().map(Block::chars).sum::<usize>().max(1) as f64;
    let first = align_with(src, tgt, total(tgt) / total(src));
    let (mut a, mut b) = (0usize, 0usize);
    for &(st, i, j) in &first {
        if st == Step::Match {
            a += src[i].chars();
            b += tgt[j].chars();
        }
    }
    if a == 0 || b == 0 {
        return first;
    }
    align_with(src, tgt, b as f64 / a as f64)
}

fn align_with(src: &[Block], tgt: &[Block], ratio: f64) -> Vec<(Step, usize, usize)> {
    let total = src.iter().map(Block::chars).sum::<usize>().max(1) as f64;
    let s: Vec<f64> = src.iter().map(|b| b.chars() as f64).collect();
    let t: Vec<f64> = tgt.iter().map(|b| b.chars() as f64 / ratio).collect();
    let (n, m) = (src.len(), tgt.len());
    let mut cost = vec![vec![f64::INFINITY; m + 1]; n + 1];
    let mut back = vec![vec![(Step::Match, 0usize, 0usize); m + 1]; n + 1];
    cost[0][0] = 0.0;
    let para = |b: &Block| b.kind() == Kind::Paragraph;
    for i in 0..=n {
        for j in 0..=m {
            let here = cost[i][j];
            if !here.is_finite() {
                continue;
            }
            let mut relax = |ni: usize, nj: usize, c: f64, step: Step| {
                if here + c < cost[ni][nj] {
                    cost[ni][nj] = here + c;
                    back[ni][nj] = (step, i, j);
                }
            };
            if i < n && j < m && src[i].kind() == tgt[j].kind() {
                let c = len_cost(s[i], t[j]);
                if same_attrs(&src[i], &tgt[j]) {
                    relax(i + 1, j + 1, c, Step::Match);
                } else {
                    relax(i + 1, j + 1, c + COST_EDIT, Step::Change);
                }
            }
            if i + 1 < n && j < m && para(&src[i]) && para(&src[i + 1]) && para(&tgt[j]) {
                let c = len_cost(s[i] + s[i + 1], t[j]);
                relax(i + 2, j + 1, c + COST_MERGE, Step::Merge);
            }
            if i < n && j + 1 < m && para(&src[i]) && para(&tgt[j]) && para(&tgt[j + 1]) {
                let c = len_cost(s[i], t[j] + t[j + 1]);
                relax(i + 1, j + 2, c + COST_MERGE, Step::Split);
            }
            // Models add text before or after a translation and stop early; a block lost or
            // added between two translated blocks is rarer.
            let inner = |at_end: bool| if at_end { 0.0 } else { COST_INNER };
            if i < n {
                relax(
                    i + 1,
                    j,
                    COST_GAP + s[i] / total + inner(j == m),
                    Step::Drop,
                );
            }
            if j < m {
                relax(
                    i,
                    j + 1,
                    COST_GAP + t[j] / total + inner(i == 0 || i == n),
                    Step::Add,
                );
            }
        }
    }
    let mut steps = Vec::new();
    let (mut i, mut j) = (n, m);
    while i > 0 || j > 0 {
        let (step, pi, pj) = back[i][j];
        steps.push((step, pi, pj));
        (i, j) = (pi, pj);
    }
    steps.reverse();
    steps
}

/// Ordinal of block `i` among the blocks of its kind (1-based), e.g. "paragraph 3".
pub(crate) fn name(bs: &[Block], i: usize) -> String {
    let k = bs[i].kind();
    let n = bs[..=i].iter().filter(|b| b.kind() == k).count();
    format!("{} {n}", k.noun())
}

fn describe(b: &Block) -> String {
    let mut parts = Vec::new();
    if b.kind() == Kind::ListItem {
        parts.push(format!(
            "{} item at depth {}",
            if b.ordered { "an ordered" } else { "a bullet" },
            b.list_depth
        ));
        parts.push(match b.paras {
            0 => "with no text".to_string(),
            1 => "with 1 paragraph".to_string(),
            n => format!("with {n} paragraphs"),
        });
    }
    if b.kind() == Kind::Table {
        parts.push(format!("alignment `{}`", b.align));
    }
    parts.push(match b.quote_depth {
        0 => "outside any blockquote".to_string(),
        d => format!("in a blockquote of depth {d}"),
    });
    if let Some(c) = b.callout {
        parts.push(format!("in a `[!{c}]` callout"));
    }
    parts.join(", ")
}

/// Runs the check (see the module docs).
pub fn check(_ctx: &QaContext, src: &Doc, tgt: &Doc, source: &str, target: &str) -> Vec<Finding> {
    let mut out = Vec::new();
    front_matter_findings(&mut out, source, target);
    marker_findings(&mut out, source, target);
    let (s, t) = (&src.blocks, &tgt.blocks);
    let steps = align(s, t);
    let last_src_matched = steps
        .iter()
        .rposition(|(st, _, _)| *st != Step::Drop && *st != Step::Add);
    let first_tgt_matched = steps
        .iter()
        .position(|(st, _, _)| *st != Step::Drop && *st != Step::Add);
    let excerpt = |b: &Block| b.text.trim().to_string();
    for (k, &(step, i, j)) in steps.iter().enumerate() {
        match step {
            Step::Match => {}
            Step::Change => out.push(Finding::new(
                CHECK,
                Severity::Error,
                format!(
                    "{} of the source is {} but its counterpart, {} of the translation, is {}; keep the source's structure",
                    name(s, i),
                    describe(&s[i]),
                    name(t, j),
                    describe(&t[j])
                ),
                &excerpt(&s[i]),
                &excerpt(&t[j]),
            )),
            Step::Merge => out.push(Finding::new(
                CHECK,
                Severity::Error,
                format!(
                    "{} of the source has no counterpart: merged into {} of the translation? Keep {} and {} as separate paragraphs",
                    name(s, i + 1),
                    name(t, j),
                    name(s, i),
                    name(s, i + 1)
                ),
                &format!("{}\n\n{}", excerpt(&s[i]), excerpt(&s[i + 1])),
                &excerpt(&t[j]),
            )),
            Step::Split => out.push(Finding::new(
                CHECK,
                Severity::Error,
                format!(
                    "{} of the source is split into {} and {} of the translation; keep it one paragraph",
                    name(s, i),
                    name(t, j),
                    name(t, j + 1)
                ),
                &excerpt(&s[i]),
                &format!("{}\n\n{}", excerpt(&t[j]), excerpt(&t[j + 1])),
            )),
            Step::Drop => {
                let trailing = last_src_matched.is_none_or(|l| k > l);
                if trailing {
                    out.push(Finding::new(
                        TRUNCATION,
                        Severity::Error,
                        format!(
                            "{} of the source (of {} blocks) has no counterpart at the end of the translation: truncated? Translate the unit to its end",
                            name(s, i),
                            s.len()
                        ),
                        &excerpt(&s[i]),
                        "",
                    ));
                } else {
                    out.push(Finding::new(
                        CHECK,
                        Severity::Error,
                        format!(
                            "{} of the source has no counterpart in the translation: dropped? Translate every block",
                            name(s, i)
                        ),
                        &excerpt(&s[i]),
                        "",
                    ));
                }
            }
            Step::Add => {
                let leading = first_tgt_matched.is_none_or(|f| k < f);
                let trailing = last_src_matched.is_none_or(|l| k > l);
                let b = &t[j];
                if leading && j == 0 && b.kind() == Kind::Rule && src.blocks.first().is_none_or(|f| f.kind() != Kind::Rule) {
                    out.push(Finding::new(
                        CHECK,
                        Severity::Error,
                        "the translation's body starts with a `---` the source does not have (a stray front matter opener?); remove it",
                        "",
                        "---",
                    ));
                } else if (leading || trailing) && b.kind() != Kind::Rule {
                    // Reported as `injected_text` by [`super::injected`] (see [`extra_ends`]).
                } else {
                    out.push(Finding::new(
                        CHECK,
                        Severity::Error,
                        format!(
                            "{} of the translation has no counterpart in the source; remove it or restore the source's block",
                            name(t, j)
                        ),
                        "",
                        &excerpt(b),
                    ));
                }
            }
        }
    }
    out
}

/// Source and target blocks the alignment pairs one to one (same kind), in order.
pub fn pairs(src: &Doc, tgt: &Doc) -> Vec<(usize, usize)> {
    align(&src.blocks, &tgt.blocks)
        .into_iter()
        .filter(|(st, _, _)| matches!(st, Step::Match | Step::Change))
        .map(|(_, i, j)| (i, j))
        .collect()
}

/// Target blocks before the first or after the last block that has a source counterpart,
/// other than thematic breaks: `(target block, leading)`. These are text the model added
/// around the translation (lead-ins, echoed instructions, meta replies, trailing notes) in
/// whatever language; [`super::injected`] reports them.
pub fn extra_ends<'a>(src: &Doc, tgt: &'a Doc) -> Vec<(&'a Block, bool)> {
    let steps = align(&src.blocks, &tgt.blocks);
    let paired = |st: &Step| *st != Step::Drop && *st != Step::Add;
    let (Some(first), Some(last)) = (
        steps.iter().position(|(st, _, _)| paired(st)),
        steps.iter().rposition(|(st, _, _)| paired(st)),
    ) else {
        return Vec::new();
    };
    steps
        .iter()
        .enumerate()
        .filter(|(k, (st, _, _))| *st == Step::Add && (*k < first || *k > last))
        .map(|(k, &(_, _, j))| (&tgt.blocks[j], k < first))
        .filter(|(b, _)| b.kind() != Kind::Rule)
        .collect()
}

fn front_matter_findings(out: &mut Vec<Finding>, source: &str, target: &str) {
    let (Some(sf), tf) = (front_matter(source), front_matter(target)) else {
        if let Some(tf) = front_matter(target) {
            out.push(Finding::new(
                CHECK,
                Severity::Error,
                "the translation opens with a front matter block the source does not have; remove it",
                "",
                tf,
            ));
        }
        return;
    };
    let Some(tf) = tf else {
        out.push(Finding::new(
            CHECK,
            Severity::Error,
            "the source's front matter is missing from the translation (dropped, or its `---` lines damaged); keep the front matter block with its keys",
            sf,
            target.lines().take(4).collect::<Vec<_>>().join("\n").as_str(),
        ));
        return;
    };
    let Ok(sk) = yaml_keys(sf) else {
        return; // The source's own front matter is beyond this subset: nothing to compare.
    };
    let tk = match yaml_keys(tf) {
        Ok(k) => k,
        Err(e) => {
            out.push(Finding::new(
                CHECK,
                Severity::Error,
                format!("the translation's front matter is not valid YAML: {e}; keep the source's syntax and translate only the values"),
                sf,
                tf,
            ));
            return;
        }
    };
    let names = |k: &[(String, String)]| k.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>();
    if names(&sk) != names(&tk) {
        out.push(Finding::new(
            CHECK,
            Severity::Error,
            format!(
                "the front matter keys are {} in the source but {} in the translation; keep every key as written",
                quote(&names(&sk).join(", ")),
                quote(&names(&tk).join(", "))
            ),
            sf,
            tf,
        ));
        return;
    }
    for ((k, a), (_, b)) in sk.iter().zip(&tk) {
        if a != b && !TRANSLATED_KEYS.contains(&k.as_str()) {
            out.push(Finding::new(
                CHECK,
                Severity::Error,
                format!(
                    "front matter value of `{k}` changed from {} to {}; only the values of {} are translated",
                    quote(a),
                    quote(b),
                    TRANSLATED_KEYS.join(", ")
                ),
                a,
                b,
            ));
        }
    }
}

fn marker_findings(out: &mut Vec<Finding>, source: &str, target: &str) {
    let (a, b) = (markers(source), markers(target));
    if a == b {
        return;
    }
    let at = a.iter().zip(&b).position(|(x, y)| x != y);
    let msg = match at {
        Some(i) => format!(
            "admonition marker {} is {} in the source but {} in the translation; callout and admonition markers stay byte-identical",
            i + 1,
            quote(&a[i]),
            quote(&b[i])
        ),
        None => format!(
            "the source has {} admonition markers ({}) but the translation {} ({}); keep every marker byte-identical",
            a.len(),
            quote(&a.join(" ")),
            b.len(),
            quote(&b.join(" "))
        ),
    };
    out.push(Finding::new(
        CHECK,
        Severity::Error,
        msg,
        &a.join("\n"),
        &b.join("\n"),
    ));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::Lang;
    use crate::termbase::Termbase;

    fn run(src: &str, tgt: &str) -> Vec<Finding> {
        let ctx = QaContext::new(&Lang::parse("en"), &Lang::parse("de"), &Termbase::default());
        check(&ctx, &Doc::parse(src), &Doc::parse(tgt), src, tgt)
    }

    const SRC: &str = "# Title\n\nFirst paragraph about agents and tools.\n\nSecond paragraph, a little longer than the first one.\n\nThird paragraph closes the section.\n";
    const TGT: &str = "# Titel\n\nErster Absatz über Agenten und Werkzeuge.\n\nZweiter Absatz, etwas länger als der erste Absatz.\n\nDritter Absatz schließt den Abschnitt.\n";

    #[test]
    fn faithful_translation_has_no_finding() {
        assert_eq!(run(SRC, TGT), vec![]);
    }

    #[test]
    fn merged_paragraphs_are_named() {
        let merged = TGT.replace("Werkzeuge.\n\nZweiter", "Werkzeuge. Zweiter");
        let f = run(SRC, &merged);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(f[0].check, "structure");
        assert!(
            f[0].message.starts_with(
                "paragraph 2 of the source has no counterpart: merged into paragraph 1"
            ),
            "{}",
            f[0].message
        );
    }

    #[test]
    fn dropped_last_paragraph_is_truncation() {
        let cut = TGT.replace("\nDritter Absatz schließt den Abschnitt.\n", "");
        let f = run(SRC, &cut);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(f[0].check, TRUNCATION);
        assert!(f[0].message.contains("paragraph 3"), "{}", f[0].message);
    }

    #[test]
    fn lead_in_and_trailing_note_are_extra_ends() {
        let t = format!(
            "Voilà ce que j'ai traduit pour vous.\n\n{TGT}\nRemarque : j'ai gardé les termes.\n"
        );
        assert_eq!(run(SRC, &t), vec![]);
        let (s, t) = (Doc::parse(SRC), Doc::parse(&t));
        let ends: Vec<(&str, bool)> = extra_ends(&s, &t)
            .into_iter()
            .map(|(b, l)| (b.text.trim(), l))
            .collect();
        assert_eq!(
            ends,
            vec![
                ("Voilà ce que j'ai traduit pour vous.", true),
                ("Remarque : j'ai gardé les termes.", false)
            ]
        );
    }

    #[test]
    fn flattened_list_and_quote() {
        let s = "- one item here\n  - nested item here\n\n> quoted text here\n";
        let t = "- ein Eintrag hier\n- verschachtelter Eintrag\n\n\\> zitierter Text hier\n";
        let f = run(s, t);
        assert_eq!(f.len(), 2, "{f:#?}");
        assert!(f[0].message.contains("depth 2") && f[0].message.contains("depth 1"));
        assert!(f[1].message.contains("blockquote of depth 1"));
    }

    #[test]
    fn huge_units_are_paired_in_order() {
        let src: String = (0..600)
            .map(|i| format!("Paragraph {i} of many.\n\n"))
            .collect();
        let tgt: String = (0..600)
            .map(|i| format!("Absatz {i} von vielen.\n\n"))
            .collect();
        assert!(Doc::parse(&src).blocks.len() * Doc::parse(&tgt).blocks.len() > MAX_CELLS);
        assert_eq!(run(&src, &tgt), vec![]);
        let quoted = tgt.replacen("Absatz 7 ", "> Absatz 7 ", 1);
        let f = run(&src, &quoted);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert!(
            f[0].message.starts_with("paragraph 8 of the source"),
            "{}",
            f[0].message
        );
    }

    #[test]
    fn markers_and_front_matter() {
        assert_eq!(
            markers(
                "> [!NOTE]\n> x\n\n!!! tip \"Title\"\n    y\n\n:::{note}\nz\n:::\n```\n!!! no\n```\n"
            ),
            vec!["[!NOTE]", "!!! tip", ":::{note}", ":::"]
        );
        assert_eq!(
            yaml_keys("title: \"A\"\nslug: a\ntags:\n  - x\n").unwrap(),
            vec![
                ("title".to_string(), "\"A\"".to_string()),
                ("slug".to_string(), "a".to_string()),
                ("tags".to_string(), "\n  - x".to_string())
            ]
        );
        assert!(yaml_keys("title: \"A\n").is_err());
        let f = run(
            "---\ntitle: A\nslug: a\n---\n\nText.\n",
            "---\ntitle: B\nslug: b\n---\n\nTexte.\n",
        );
        assert_eq!(f.len(), 1, "{f:#?}");
        assert!(f[0].message.contains("`slug`"));
    }
}
