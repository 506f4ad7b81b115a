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
//! - **Front matter** ([`crate::qa::unit::front_matter`]): parsed as YAML; lost, added or renamed keys,
//!   values outside its `TRANSLATED_KEYS` changed, and YAML that no longer parses. A
//!   translation that opens its body with `---` the source does not have is named as such.
//!
//! Thresholds: the alignment costs ([`COST_EDIT`], [`COST_MERGE`], [`COST_GAP`], [`COST_INNER`]) are chosen so that any edit is
//! dearer than the worst length mismatch of a 1–1 match between faithful paragraphs measured on
//! the labelled set (`tests/fixtures/qa-labelled/`); see `benches/qa_labelled.rs`.

use crate::qa::view::doc::Doc;
use crate::qa::{Finding, QaContext, Severity, quote};

pub const CHECK: &str = "structure";
/// Check name of a trailing source block without counterpart, and of sentence omissions
/// ([`crate::qa::unit::sentences`]).
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

pub use crate::qa::unit::front_matter::{TRANSLATED_KEYS, block as front_matter};
pub use crate::qa::view::outline::{Block, Kind, anchors};

/// Share of the anchors of a source group `x` and a target group `y` (each the sorted union of
/// its blocks' anchors) found on one side only: 0 when they agree or neither has any, 1 when
/// none is shared.
fn anchor_mismatch(x: &[u64], y: &[u64]) -> f64 {
    if x.is_empty() && y.is_empty() {
        return 0.0;
    }
    let (mut i, mut j, mut shared) = (0, 0, 0usize);
    while i < x.len() && j < y.len() {
        match x[i].cmp(&y[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                shared += 1;
                i += 1;
                j += 1;
            }
        }
    }
    (x.len() + y.len() - 2 * shared) as f64 / (x.len() + y.len()) as f64
}

/// What the alignment needs of one outline, computed once for both of its passes: each block's
/// length and, for `k` in 2..=[`MAX_MERGE`], the union of the anchors of `k` blocks from each
/// block on (`unions[k - 2][i]`, empty past the end).
struct Prepared {
    chars: Vec<f64>,
    unions: Vec<Vec<Vec<u64>>>,
}

impl Prepared {
    fn new(bs: &[Block]) -> Prepared {
        let unions = (2..=MAX_MERGE)
            .map(|k| {
                (0..bs.len())
                    .map(|i| {
                        if i + k > bs.len() {
                            return Vec::new();
                        }
                        let mut v: Vec<u64> = bs[i..i + k]
                            .iter()
                            .flat_map(|b| b.anchors.iter().copied())
                            .collect();
                        v.sort_unstable();
                        v.dedup();
                        v
                    })
                    .collect()
            })
            .collect();
        Prepared {
            chars: bs.iter().map(|b| b.chars() as f64).collect(),
            unions,
        }
    }

    fn total(&self) -> f64 {
        self.chars.iter().sum::<f64>().max(1.0)
    }
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
        // A GFM alert names its kind with a word: `[!NOTE]`, a translated `[!注意]`. A linked
        // image at the start of a line, `[![Build status](b.svg)](…)`, is not one.
        let alert_kind = |rest: &str| {
            rest.find(']').filter(|&end| {
                end > 0
                    && rest[..end]
                        .chars()
                        .all(|c| c.is_alphabetic() || c == '-' || c == '_')
            })
        };
        if q.len() < t.len() || t.starts_with("[!") {
            if let Some(rest) = q.strip_prefix("[!")
                && let Some(end) = alert_kind(rest)
            {
                out.push((format!("[!{}]", &rest[..end]), q_at..q_at + 2 + end + 1));
                continue;
            }
            if q.strip_prefix("\\[!").and_then(alert_kind).is_some() {
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
    /// `n` (2 to [`MAX_MERGE`]) source paragraphs – 1 target paragraph.
    Merge(usize),
    /// 1 source paragraph – `n` (2 to [`MAX_MERGE`]) target paragraphs.
    Split(usize),
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
        && (
            a.quote_depth,
            a.list_depth,
            a.ordered,
            a.paras,
            a.callout,
            a.in_item,
        ) == (
            b.quote_depth,
            b.list_depth,
            b.ordered,
            b.paras,
            b.callout,
            b.in_item,
        )
}

/// Whether two blocks can be paired one to one at all: same kind, and in the same footnote
/// definition (two different reference entries are never one block translated).
fn pairable(a: &Block, b: &Block) -> bool {
    a.kind() == b.kind() && a.footnote == b.footnote
}

/// Weight of the anchor mismatch ([`anchors`]) in the cost of pairing blocks, in units of the
/// length cost: a pairing that loses every name and number costs as much as lengths one in
/// e (2.7) apart, still less than a block dropped and another added ([`COST_GAP`] twice).
/// Chosen on the reference corpus, where the zh edition runs three paragraphs into one of a
/// length that fits a wrong neighbour better: only the names and numbers tell which.
pub const COST_ANCHORS: f64 = 1.0;

/// Most paragraphs one merge or split joins: a translator who runs three paragraphs into one
/// (the reference corpus's zh edition does) is named as such, not as two paragraphs dropped.
pub const MAX_MERGE: usize = 3;

/// Cost of a merge or split of `n` paragraphs into one: [`COST_MERGE`] for two, and half as much
/// again for each further one, so that a three-way merge is dearer than a two-way one but
/// cheaper than a two-way merge beside a dropped paragraph (the dearer reading of the same
/// text).
fn merge_cost(n: usize) -> f64 {
    COST_MERGE * (1.0 + 0.5 * (n - 2) as f64)
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
    // Several checks ask for the alignment of the same unit in turn (structure, truncation,
    // injected text, sentences, numbers, inline code): the last one is kept per thread and
    // given back when both outlines are equal to the ones it was made for.
    type Last = Option<(Vec<Block>, Vec<Block>, Vec<(Step, usize, usize)>)>;
    thread_local! {
        static LAST: std::cell::RefCell<Last> = const { std::cell::RefCell::new(None) };
    }
    let hit = LAST.with(|l| {
        l.borrow()
            .as_ref()
            .filter(|(a, b, _)| a.as_slice() == src && b.as_slice() == tgt)
            .map(|(_, _, steps)| steps.clone())
    });
    if let Some(steps) = hit {
        return steps;
    }
    let steps = align_uncached(src, tgt);
    LAST.with(|l| *l.borrow_mut() = Some((src.to_vec(), tgt.to_vec(), steps.clone())));
    steps
}

fn align_uncached(src: &[Block], tgt: &[Block]) -> Vec<(Step, usize, usize)> {
    if (src.len() + 1) * (tgt.len() + 1) > MAX_CELLS {
        // Too large to align in bounded memory: blocks are paired in order where their kinds
        // agree, and nothing is reported as added, dropped, merged or split.
        return src
            .iter()
            .zip(tgt)
            .enumerate()
            .filter(|(_, (a, b))| pairable(a, b))
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
    let (ps, pt) = (Prepared::new(src), Prepared::new(tgt));
    let first = align_with(src, tgt, &ps, &pt, pt.total() / ps.total());
    let (mut a, mut b) = (0.0f64, 0.0f64);
    for &(st, i, j) in &first {
        if st == Step::Match {
            a += ps.chars[i];
            b += pt.chars[j];
        }
    }
    if a == 0.0 || b == 0.0 {
        return first;
    }
    align_with(src, tgt, &ps, &pt, b / a)
}

fn align_with(
    src: &[Block],
    tgt: &[Block],
    ps: &Prepared,
    pt: &Prepared,
    ratio: f64,
) -> Vec<(Step, usize, usize)> {
    let total = ps.total();
    let s = &ps.chars;
    let t: Vec<f64> = pt.chars.iter().map(|c| c / ratio).collect();
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
            if i < n && j < m && pairable(&src[i], &tgt[j]) {
                let c = len_cost(s[i], t[j])
                    + COST_ANCHORS * anchor_mismatch(&src[i].anchors, &tgt[j].anchors);
                if same_attrs(&src[i], &tgt[j]) {
                    relax(i + 1, j + 1, c, Step::Match);
                } else {
                    relax(i + 1, j + 1, c + COST_EDIT, Step::Change);
                }
            }
            for k in 2..=MAX_MERGE {
                let joins = |bs: &[Block], at: usize| {
                    at + k <= bs.len()
                        && bs[at..at + k]
                            .iter()
                            .all(|b| para(b) && b.footnote == bs[at].footnote)
                };
                if j < m && joins(src, i) && para(&tgt[j]) && src[i].footnote == tgt[j].footnote {
                    let c = len_cost(s[i..i + k].iter().sum(), t[j])
                        + COST_ANCHORS * anchor_mismatch(&ps.unions[k - 2][i], &tgt[j].anchors);
                    relax(i + k, j + 1, c + merge_cost(k), Step::Merge(k));
                }
                if i < n && joins(tgt, j) && para(&src[i]) && src[i].footnote == tgt[j].footnote {
                    let c = len_cost(s[i], t[j..j + k].iter().sum())
                        + COST_ANCHORS * anchor_mismatch(&src[i].anchors, &pt.unions[k - 2][j]);
                    relax(i + 1, j + k, c + merge_cost(k), Step::Split(k));
                }
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

/// Runs the check (see the module docs): the front matter, the markers, then one finding per
/// step of the block alignment that is not a match.
pub fn check(ctx: &QaContext, src: &Doc, tgt: &Doc, source: &str, target: &str) -> Vec<Finding> {
    let mut out = Vec::new();
    out.extend(crate::qa::unit::front_matter::findings(source, target));
    marker_findings(&mut out, source, target);
    let (s, t) = (&src.blocks, &tgt.blocks);
    let steps = align(s, t);
    let matched = |st: &Step| *st != Step::Drop && *st != Step::Add;
    let aligned = Aligned {
        s,
        t,
        target,
        last_src_matched: steps.iter().rposition(|(st, _, _)| matched(st)),
        first_tgt_matched: steps.iter().position(|(st, _, _)| matched(st)),
        human_edition: ctx.human_edition,
    };
    for (k, &(step, i, j)) in steps.iter().enumerate() {
        let finding = match step {
            Step::Match => None,
            Step::Change => Some(aligned.changed(i, j)),
            Step::Merge(n) => Some(aligned.merged(i, j, n)),
            Step::Split(n) => Some(aligned.split(i, j, n)),
            Step::Drop => Some(aligned.dropped(k, i)),
            Step::Add => aligned.added(k, j),
        };
        out.extend(finding);
    }
    out
}

/// The blocks of a source and its translation, aligned.
struct Aligned<'d> {
    s: &'d [Block],
    t: &'d [Block],
    /// The translation (spans are in its chars).
    target: &'d str,
    /// The last and first alignment steps that pair blocks (not a drop or an add).
    last_src_matched: Option<usize>,
    first_tgt_matched: Option<usize>,
    /// The translation was made elsewhere ([`QaContext::human_edition`]).
    human_edition: bool,
}

fn excerpt(b: &Block) -> String {
    b.text.trim().to_string()
}

/// The names of blocks `from..from + n` of `bs`: `paragraph 2, paragraph 3 and list item 4`.
fn names(bs: &[Block], from: usize, n: usize) -> String {
    let v: Vec<String> = (from..from + n).map(|x| name(bs, x)).collect();
    match v.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => v.join(""),
    }
}

/// The texts of blocks `from..from + n` of `bs`, blank-line separated.
fn texts(bs: &[Block], from: usize, n: usize) -> String {
    bs[from..from + n]
        .iter()
        .map(excerpt)
        .collect::<Vec<_>>()
        .join("\n\n")
}

impl Aligned<'_> {
    /// `f` with the span of translated block `b`.
    fn at(&self, f: Finding, b: &Block) -> Finding {
        let (a, e) = block_span(self.target, b);
        f.with_span(a, e)
    }

    /// Source block `i` and translated block `j` are paired but differ in kind or place.
    fn changed(&self, i: usize, j: usize) -> Finding {
        let (s, t) = (self.s, self.t);
        let message = if s[i].kind() != Kind::ListItem && s[i].in_item != t[j].in_item {
            moved_across_list(s, i, t, j)
        } else {
            format!(
                "{} of the source is {} but its counterpart, {} of the translation, is {}; keep the source's structure",
                name(s, i),
                describe(&s[i]),
                name(t, j),
                describe(&t[j])
            )
        };
        self.at(
            Finding::new(
                CHECK,
                Severity::Error,
                message,
                &excerpt(&s[i]),
                &excerpt(&t[j]),
            ),
            &t[j],
        )
    }

    /// Source blocks `i..i + n` are merged into translated block `j`.
    fn merged(&self, i: usize, j: usize, n: usize) -> Finding {
        let (s, t) = (self.s, self.t);
        self.at(
            Finding::new(
                CHECK,
                Severity::Error,
                if n == 2 {
                    format!(
                        "{} of the source has no counterpart: merged into {} of the translation? Keep {} and {} as separate paragraphs",
                        name(s, i + 1),
                        name(t, j),
                        name(s, i),
                        name(s, i + 1)
                    )
                } else {
                    format!(
                        "{} of the source have no counterpart: merged with {} into {} of the translation? Keep {} as separate paragraphs",
                        names(s, i + 1, n - 1),
                        name(s, i),
                        name(t, j),
                        names(s, i, n)
                    )
                },
                &texts(s, i, n),
                &excerpt(&t[j]),
            ),
            &t[j],
        )
    }

    /// Source block `i` is split into translated blocks `j..j + n`.
    fn split(&self, i: usize, j: usize, n: usize) -> Finding {
        let (s, t) = (self.s, self.t);
        // A translator who splits a long paragraph in two keeps every sentence and renders
        // plain paragraphs: in a translation made elsewhere that is style, a warning. A split
        // list item or heading adds a bullet or a title, and a model's split is not asked for.
        let paragraphs = s[i].kind() == Kind::Paragraph
            && t[j..j + n].iter().all(|b| b.kind() == Kind::Paragraph);
        let severity = if self.human_edition && paragraphs {
            Severity::Warning
        } else {
            Severity::Error
        };
        self.at(
            Finding::new(
                CHECK,
                severity,
                format!(
                    "{} of the source is split into {} of the translation; keep it one paragraph",
                    name(s, i),
                    names(t, j, n)
                ),
                &excerpt(&s[i]),
                &texts(t, j, n),
            ),
            &t[j],
        )
    }

    /// Source block `i` (step `k`) has no counterpart: truncated when no later step pairs
    /// blocks, else dropped.
    fn dropped(&self, k: usize, i: usize) -> Finding {
        let s = self.s;
        let trailing = self.last_src_matched.is_none_or(|l| k > l);
        if trailing {
            Finding::new(
                TRUNCATION,
                Severity::Error,
                format!(
                    "{} of the source (of {} blocks) has no counterpart at the end of the translation: truncated? Translate the unit to its end",
                    name(s, i),
                    s.len()
                ),
                &excerpt(&s[i]),
                "",
            )
        } else {
            Finding::new(
                CHECK,
                Severity::Error,
                format!(
                    "{} of the source has no counterpart in the translation: dropped? Translate every block",
                    name(s, i)
                ),
                &excerpt(&s[i]),
                "",
            )
        }
    }

    /// Translated block `j` (step `k`) has no counterpart: a stray front matter opener, text
    /// added at an end (reported by `injected_text`), or an added block.
    fn added(&self, k: usize, j: usize) -> Option<Finding> {
        let t = self.t;
        let leading = self.first_tgt_matched.is_none_or(|f| k < f);
        let trailing = self.last_src_matched.is_none_or(|l| k > l);
        let b = &t[j];
        if leading
            && j == 0
            && b.kind() == Kind::Rule
            && self.s.first().is_none_or(|f| f.kind() != Kind::Rule)
        {
            Some(Finding::new(
                CHECK,
                Severity::Error,
                "the translation's body starts with a `---` the source does not have (a stray front matter opener?); remove it",
                "",
                "---",
            ))
        } else if (leading || trailing) && b.kind() != Kind::Rule {
            // Reported as `injected_text` by [`crate::qa::unit::injected`] (see [`extra_ends`]).
            None
        } else {
            // An HTML block a translation made elsewhere adds (a translator's `<Note>`, a
            // right-to-left wrapper) adds words, not a broken structure: `html` weighs its tags.
            let severity = if self.human_edition && b.kind() == Kind::Html {
                Severity::Warning
            } else {
                Severity::Error
            };
            Some(self.at(
                Finding::new(
                    CHECK,
                    severity,
                    format!(
                        "{} of the translation has no counterpart in the source; remove it or restore the source's block",
                        name(t, j)
                    ),
                    "",
                    &excerpt(b),
                ),
                b,
            ))
        }
    }
}

/// The message for a block that moved into or out of a list item: a fence that lost the
/// indentation of its list item ends the list there, and an ordered list goes on as a second
/// list (numbered from where it stopped).
fn moved_across_list(s: &[Block], i: usize, t: &[Block], j: usize) -> String {
    let (a, b) = (&s[i], &t[j]);
    let place = |x: &Block| match x.in_item {
        0 => "outside any list".to_string(),
        1 => "inside a list item".to_string(),
        d => format!("inside a list item nested {d} deep"),
    };
    let cut = match t.get(j + 1) {
        Some(next) if b.in_item < a.in_item && next.kind() == Kind::ListItem => {
            match (next.ordered, next.list_start) {
                (true, Some(n)) => {
                    format!(", which cuts the ordered list in two (its second part starts at {n})")
                }
                _ => ", which cuts the list in two".to_string(),
            }
        }
        _ => String::new(),
    };
    let fix = if b.in_item < a.in_item {
        "indent it under its list item as in the source"
    } else {
        "take it out of the list item as in the source"
    };
    format!(
        "{} of the source is {} but its counterpart, {} of the translation, is {}{cut}; {fix}",
        name(s, i),
        place(a),
        name(t, j),
        place(b)
    )
}

/// `(start, end)` in chars of `text` of a block of the outline of `text` ([`Block::range`] is in
/// bytes of the text with CRLF read as LF).
pub(crate) fn block_span(text: &str, b: &Block) -> (usize, usize) {
    // Walk the text as Doc::parse saw it (a CR before LF dropped), counting the chars of the
    // text itself.
    let (mut norm, mut chars) = (0usize, 0usize);
    let (mut start, mut end) = (None, None);
    for (i, c) in text.char_indices() {
        if start.is_none() && norm >= b.range.start {
            start = Some(chars);
        }
        if norm >= b.range.end {
            end = Some(chars);
            break;
        }
        if c == '\r' && text[i + 1..].starts_with('\n') {
            chars += 1;
            continue;
        }
        norm += c.len_utf8();
        chars += 1;
    }
    let start = start.unwrap_or(chars);
    (start, end.unwrap_or(chars).max(start))
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
/// whatever language; [`crate::qa::unit::injected`] reports them.
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

    #[test]
    fn a_paragraph_a_human_translator_split_is_a_warning_and_an_added_html_block_too() {
        let src = "Intro line.\n\nThe agent reads the file. Then it writes a summary of what it found.\n\nEnd.\n";
        let tgt = "Einleitung.\n\nDer Agent liest die Datei.\n\nDann schreibt er eine Zusammenfassung.\n\nEnde.\n";
        let mut ctx = QaContext::new(&Lang::parse("en"), &Lang::parse("de"), &Termbase::default());
        let severities = |ctx: &QaContext, t: &str| -> Vec<Severity> {
            check(ctx, &Doc::parse(src), &Doc::parse(t), src, t)
                .iter()
                .map(|f| f.severity)
                .collect()
        };
        assert_eq!(severities(&ctx, tgt), vec![Severity::Error]);
        ctx.human_edition = true;
        assert_eq!(severities(&ctx, tgt), vec![Severity::Warning]);
        let note = "Einleitung.\n\nDer Agent liest die Datei. Dann schreibt er eine Zusammenfassung.\n\n<div>\nAnmerkung des Übersetzers.\n</div>\n\nEnde.\n";
        assert_eq!(severities(&ctx, note), vec![Severity::Warning]);
        ctx.human_edition = false;
        assert_eq!(severities(&ctx, note), vec![Severity::Error]);
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
    fn a_fence_moved_out_of_its_list_item_cut_the_ordered_list_in_two() {
        let src = "Steps:\n\n1. Install the package:\n\n   ```bash\n   pip install booktr\n   ```\n\n2. Run it on a chapter.\n3. Read the report.\n";
        let tgt = "Schritte:\n\n1. Installieren Sie das Paket:\n\n```bash\npip install booktr\n```\n\n2. Führen Sie es auf einem Kapitel aus.\n3. Lesen Sie den Bericht.\n";
        let f = run(src, tgt);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(f[0].severity, Severity::Error);
        assert_eq!(
            f[0].message,
            "code block 1 of the source is inside a list item but its counterpart, code block 1 of the translation, is outside any list, which cuts the ordered list in two (its second part starts at 2); indent it under its list item as in the source"
        );
        let (a, e) = f[0].span.expect("a span");
        let at: String = tgt.chars().skip(a).take(e - a).collect();
        assert_eq!(at, "```bash\npip install booktr\n```");
        // Indented as in the source: nothing to report.
        let good = "Schritte:\n\n1. Installieren Sie das Paket:\n\n   ```bash\n   pip install booktr\n   ```\n\n2. Führen Sie es auf einem Kapitel aus.\n3. Lesen Sie den Bericht.\n";
        assert_eq!(run(src, good), vec![]);
        // CRLF text: the span still counts the chars of the text as given.
        let crlf = tgt.replace('\n', "\r\n");
        let f = run(src, &crlf);
        let (a, e) = f[0].span.expect("a span");
        let at: String = crlf.chars().skip(a).take(e - a).collect();
        assert_eq!(at, "```bash\r\npip install booktr\r\n```");
    }

    #[test]
    fn after_a_merge_of_three_paragraphs_the_wrong_paragraph_was_named_as_dropped() {
        let src = "# Title\n\nQwen adopts a Thinker-Talker design for speech.\n\nTo keep capability high at a low cost, the model uses a mixture of experts with many small experts.\n\nA distinction worth keeping straight: experts raise throughput, while the first packet latency comes from the talker.\n\nThe last paragraph closes the section.\n";
        let tgt = "# Titel\n\nQwen nutzt ein Thinker-Talker-Design für Sprache; um die Fähigkeit bei geringen Kosten hoch zu halten, nutzt das Modell viele kleine Experten, und die Latenz des ersten Pakets kommt vom Talker.\n\nDer letzte Absatz schließt den Abschnitt.\n";
        let f = run(src, tgt);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(
            f[0].message,
            "paragraph 2 and paragraph 3 of the source have no counterpart: merged with paragraph 1 into paragraph 1 of the translation? Keep paragraph 1, paragraph 2 and paragraph 3 as separate paragraphs"
        );
    }

    #[test]
    fn a_linked_badge_was_reported_as_an_admonition_marker() {
        let src = "[![Build status](https://ci.example/badge.svg)](https://ci.example/run)\n\nThe tool translates books.\n";
        let tgt = "[![Statut de la compilation](https://ci.example/badge.svg)](https://ci.example/run)\n\nL'outil traduit des livres.\n";
        assert_eq!(markers(src), Vec::<String>::new());
        assert_eq!(run(src, tgt), vec![]);
        // In a blockquote too, while a GFM alert is still a marker.
        let src = "> [![CI](b.svg)](r)\n\n> [!NOTE]\n> Read this.\n";
        assert_eq!(markers(src), vec!["[!NOTE]"]);
        let f = run(
            src,
            "> [![Intégration](b.svg)](r)\n\n> [!REMARQUE]\n> Lisez ceci.\n",
        );
        assert_eq!(
            f[0].message,
            "admonition marker 1 is `[!NOTE]` in the source but `[!REMARQUE]` in the translation; callout and admonition markers stay byte-identical"
        );
        assert!(f.iter().all(|f| !f.message.contains("CI")), "{f:#?}");
    }

    #[test]
    fn markers_and_front_matter() {
        assert_eq!(
            markers(
                "> [!NOTE]\n> x\n\n!!! tip \"Title\"\n    y\n\n:::{note}\nz\n:::\n```\n!!! no\n```\n"
            ),
            vec!["[!NOTE]", "!!! tip", ":::{note}", ":::"]
        );
        let f = run(
            "---\ntitle: A\nslug: a\n---\n\nText.\n",
            "---\ntitle: B\nslug: b\n---\n\nTexte.\n",
        );
        assert_eq!(f.len(), 1, "{f:#?}");
        assert!(f[0].message.contains("`slug`"));
    }
}
