//! Terminology drift (check `term_drift`, campaign level): a term kept in the source language in
//! some units and translated in others, or translated two or more different ways. Returns the
//! term × unit table ([`DriftRow`]) for the report.
//!
//! **Tracked terms**: every termbase entry, plus the frequent source terms outside it:
//! [`crate::termbase::candidates::candidates`] over the translated units' sources (at most
//! [`MAX_CANDIDATES`]), keeping Latin-script terms found in at least 2 units. Terms are found in
//! clean prose with [`crate::termbase::Matcher`] (case-insensitive, word boundaries, simple
//! plurals; the longest term wins where terms overlap).
//!
//! **Classification** of each unit whose source contains a term, from its translation's clean
//! prose:
//! - `(kept)`: the term is written in the translation in the source script, outside a
//!   parenthetical gloss after a rendering (`智能体（Agent）`) and outside another entry's
//!   required rendering (`子 Agent`); when source and target share a script, a parenthetical
//!   the source has too (`language model (LLM)`) is no gloss;
//! - rendered `R`, from evidence in this order: (a) the termbase target, if present; (b) a gloss
//!   `R（Term）`, `R (Term)` or `R（Term）[待审]` (R cut as in [`crate::qa::view::term_text`]); (c) a
//!   rendering found by (b) in another unit, if present; (d) statistical association: the
//!   target-script candidate (see "Word boundaries"; words and word pairs for spaced scripts)
//!   with the highest Dice coefficient `2|A∩B| / (|A|+|B|)`, the association measure of
//!   Smadja, McKeown & Hatzivassiloglou ("Translating collocations for bilingual lexicons: a
//!   statistical approach", Computational Linguistics 22(1), 1996), restricted to candidates
//!   present in this unit (in its segments whose source has the term), and not the rendering
//!   of a neighbour (see "Neighbours").
//!
//! - `(unidentified)`: none of the above.
//!
//! What is **not** evidence of a kept term: the term inside a URL the translation copies
//! (`。https://…/physical-time-agent`), and a word the source itself writes in capitals
//! (`USER:`) for a term it otherwise writes in lower case (a literal label).
//!
//! Statistical renderings (d) are weaker evidence, so before they make a drift:
//! - one that contains another rendering of the term is that rendering cut wider (Chinese has
//!   no spaces to cut at: 来才道笔 is 来才 with the next word); the group takes the label of
//!   its most used member;
//! - one credited in fewer than [`MIN_STATISTICAL_UNITS`] units counts for no competing
//!   rendering;
//! - when every rendering of a term is statistical and a piece of one of them (2 characters
//!   or more) is written in every unit credited with one, the units share that piece and the
//!   n-grams only differ in the neighbours they took in: one rendering, no drift.
//!
//! These are the causes found for word-for-word consistent translations reported as drifting
//! (a dictionary-style translation of the corpus' first two chapters gave 18 drifting terms,
//! then none; a translation of them into real Chinese words with the glossary followed gave 5
//! before word boundaries and the neighbour test, now none; see `tests/it/drift_consistency.rs`,
//! and `benches/drift.rs` for precision and recall on planted drifts).
//!
//! A unit may fall in two cells (a gloss and a kept occurrence). A term **drifts** when it is
//! kept in some units and rendered in others, or rendered two or more ways; `(unidentified)`
//! alone does not make a drift (a pronoun or a paraphrase is no competing rendering). One
//! finding per drifting term (for an acronym such as `LLM`, being kept where elsewhere it is
//! glossed is the usual convention, so only competing renderings count): `warning`, or `info` for glossary terms, whose units breaking the
//! glossary are already `glossary` errors.
//!
//! ## Word boundaries
//! In Chinese and Japanese translations, (a) and (c) count a rendering only where it occurs on
//! word boundaries ([`crate::qa::view::words`]: ICU4X's dictionary segmenter, with the termbase's and the
//! glosses' renderings as known words), and the candidates of (d) are runs of one to three
//! whole words, or 2–4 characters with one edge on a word boundary (the rule that makes a
//! named rendering a word). A unit left without a rendering after (d) is credited with a
//! rendering (d) found elsewhere when it writes it with one edge on a word boundary.
//!
//! ## Neighbours
//! A candidate of (d) is refused when some source word outside the term is more strongly
//! associated with it than the term is (`system` with 系统, beside `Agent`): the test of
//! competitive linking (Melamed 2000), see `NgramIndex::neighbour_of`.
//!
//! ## Confirmed drift
//! A rendering is **confirmed** when it is named by (a)–(c), not by the association alone, and
//! is written on word boundaries in every unit credited with it. A drift is confirmed when the
//! term is kept in some units and written in a confirmed rendering in others (not for
//! acronyms), or written in two confirmed renderings. Only a confirmed drift is reconciled by
//! the campaign (`campaign::core::manager::review`), and only confirmed renderings are offered, so a
//! reconciled rendering always occurs, on word boundaries, as the term's translation in the
//! units that use it. An unconfirmed drift is a warning for the editor's review (its finding
//! names the unconfirmed renderings and lists the units of each); it sends no revision.
//!
//! ## The association, in detail
//! Presence is counted over **aligned segments**, as Smadja et al. count it over aligned
//! sentences: a unit whose source and translation have the same number of paragraphs
//! (blank-line separated, more than one) gives one segment per paragraph pair, any other unit
//! one segment. Whole units (up to 12,000 characters) are too coarse: a frequent term shares a
//! unit with most of the book's vocabulary. `A` is the set of segments whose source has the
//! term, leaving out the units that only keep it (there the rendering is absent by
//! construction, which makes them contrast); `B` the segments whose translation has the n-gram.
//! Segments where the term occurs only inside a longer tracked term (`assistant` in
//! `assistant message`) are left out of both and of the contrast: their translations carry
//! the term's rendering too, and counting them outside `A` hid it behind neighbouring words.
//! An n-gram is accepted when:
//! - Dice ≥ [`MIN_DICE`] and the term and n-gram co-occur in at least [`MIN_JOINT`] segments;
//! - it is at least [`MIN_LIFT`] times as frequent (per segment) inside `A` as outside it;
//! - at least [`MIN_CONTRAST`] segments lie outside `A` (otherwise no rendering is guessed);
//! - it reaches [`REL_DICE`] × the best Dice of any rendering of the term (the best choice of
//!   any unit, or a rendering found by (a)–(c)): a unit that lacks the term's main rendering
//!   must not be credited with whatever frequent word it shares with the term.
//!
//! Ties prefer the longer candidate.
//! The segment index (n-gram → segments) is built once, only when some unit needs (d).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::lang::{Script, script_of};
use crate::qa::Parsed;
use crate::qa::view::term_text;
use crate::qa::view::words::{self, Words};
use crate::qa::{Finding, QaContext};
use crate::termbase::{Entry, Matcher, Origin, Termbase, term_key};

mod alignment;
mod association;
mod confirmation;
mod renderings;
mod reporting;

#[cfg(test)]
use crate::qa::Severity;
#[cfg(test)]
use alignment::{Contrast, Gaps, NgramIndex};

/// Check name of the findings.
pub const CHECK: &str = "term_drift";
/// Cell of the units that keep the term in the source language.
pub const KEPT: &str = "(kept)";
/// Cell of the units whose rendering was not identified.
pub const UNIDENTIFIED: &str = "(unidentified)";
/// Candidate terms taken from the sources.
pub const MAX_CANDIDATES: usize = 200;
/// Minimum Dice coefficient for a statistical rendering.
pub const MIN_DICE: f64 = 0.3;
/// Minimum segments where the term and the n-gram co-occur.
pub const MIN_JOINT: usize = 2;
/// Minimum ratio of the n-gram's unit frequency inside `A` to outside it.
pub const MIN_LIFT: f64 = 2.0;
/// Minimum segments outside `A` for the association to mean anything.
pub const MIN_CONTRAST: usize = 3;
/// A unit's statistical rendering must reach this fraction of the term's best Dice.
pub const REL_DICE: f64 = 0.5;
/// Longest statistical rendering, in characters.
pub const MAX_RENDERING_CHARS: usize = 8;
/// Fewest units a rendering found only by the statistical association must be credited in to
/// count as a competing rendering (one unit's best n-gram is as likely a neighbouring word).
pub const MIN_STATISTICAL_UNITS: usize = 2;

/// One tracked term's renderings across units.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DriftRow {
    pub term: String,
    pub in_glossary: bool,
    /// Rendering (or [`KEPT`], [`UNIDENTIFIED`]) → unit ids, in campaign order.
    pub cells: BTreeMap<String, Vec<String>>,
    /// The glossary target, or the rendering of most units.
    pub suggested: Option<String>,
    /// Whether the term drifts (see the module docs).
    pub drifting: bool,
    /// Renderings identified only by the statistical association, with no gloss, marker or
    /// glossary entry behind them (weaker evidence: the repair loop does not reconcile on them
    /// alone).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub statistical: Vec<String>,
    /// Confirmed renderings: named by the termbase, a gloss or a rendering known from a gloss,
    /// and written on word boundaries in every unit credited with them (module docs,
    /// "Confirmed drift"). The only renderings reconciliation may offer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub confirmed: Vec<String>,
    /// Whether the drift is confirmed: the term is kept in some units and written in a
    /// confirmed rendering in others (not for acronyms), or written in two confirmed
    /// renderings. An unconfirmed drift is reported for the editor's review only: it is never
    /// reconciled and sends no revision.
    #[serde(default)]
    pub confirmed_drift: bool,
}

pub(super) struct Tracked {
    pub(super) term: String,
    /// Index in the termbase.
    pub(super) entry: Option<usize>,
}

/// Term candidates of `sources` (see [`crate::termbase::candidates::candidates`]), kept in the
/// context's [`crate::qa::QaCache`] for the last set of sources seen: a campaign checks the same
/// book after every round, and the candidate pass over a whole book costs more than the rest of
/// the check.
fn cached_candidates(
    ctx: &QaContext,
    sources: &[&str],
) -> std::sync::Arc<Vec<crate::termbase::candidates::Candidate>> {
    ctx.cache()
        .candidates(crate::qa::view::key_of(sources), || {
            crate::termbase::candidates::candidates(sources, &Termbase::default(), MAX_CANDIDATES)
        })
}

/// Computes, ahead of [`check`], the term candidates of the translated `units`' sources into
/// the context's cache, where `check` finds them when its units are the same (no unit left
/// out as untranslated, the usual case). The campaign checks call this before they parse
/// every unit: the candidate pass's transient maps then no longer stack on the parsed
/// documents, which made it the peak of a long book's run (43 MB at ten times the
/// corpus). When `check` gets fewer units, it computes its own candidates as before.
pub(super) fn warm_candidates(ctx: &QaContext, units: &[crate::qa::UnitText]) {
    let sources: Vec<&str> = units
        .iter()
        .filter(|u| u.target.is_some())
        .map(|u| u.source)
        .collect();
    if !sources.is_empty() {
        cached_candidates(ctx, &sources);
    }
}

/// Runs the check over the campaign's parsed units, in stages: the tracked terms, the renderings
/// named by the termbase and the glosses ([`renderings`]), the renderings known from other
/// units and found by the association ([`association`]), the rows with their drift and its
/// confirmation ([`confirmation`]), and one finding per drifting term ([`reporting`]).
pub(crate) fn check(ctx: &QaContext, units: &[&Parsed]) -> (Vec<Finding>, Vec<DriftRow>) {
    // Translated units, in campaign order.
    let tu: Vec<(&Parsed, &str)> = units
        .iter()
        .filter_map(|u| u.tgt_prose().map(|t| (*u, t)))
        .collect();
    if tu.is_empty() {
        return (Vec::new(), Vec::new());
    }
    let fold = ctx.target_lang.script == Script::Latin;
    let folded: Vec<String> = if fold {
        tu.iter().map(|(_, t)| t.to_lowercase()).collect()
    } else {
        Vec::new()
    };
    let work: Vec<&str> = if fold {
        folded.iter().map(String::as_str).collect()
    } else {
        tu.iter().map(|(_, t)| *t).collect()
    };
    let book = Book::new(ctx, tu, work, fold);
    let terms = Terms::new(&book);
    // Pass 1: evidence (a), (b) and kept.
    let mut cells = renderings::named(&book, &terms);
    let known = renderings::consolidate(&mut cells);
    let vocabulary = Vocabulary::new(&book, &terms, &known);
    // Pass 2: (c) known renderings, then (d) Dice, for units with no evidence yet.
    let statistical = association::credit(&book, &terms, &vocabulary, &known, &mut cells);
    let mut rows = confirmation::rows(&book, &terms, &cells, statistical, &vocabulary.unit_words);
    rows.sort_by(|a, b| {
        let units = |r: &DriftRow| r.cells.values().map(Vec::len).sum::<usize>();
        b.drifting
            .cmp(&a.drifting)
            .then_with(|| units(b).cmp(&units(a)))
            .then_with(|| a.term.cmp(&b.term))
    });
    let findings = rows
        .iter()
        .filter(|r| r.drifting)
        .map(reporting::finding)
        .collect();
    (findings, rows)
}

/// The translated units of one check and what every stage reads of them.
struct Book<'a> {
    ctx: &'a QaContext,
    /// Translated units in campaign order, with their translation's clean prose.
    tu: Vec<(&'a Parsed<'a>, &'a str)>,
    /// The translations' clean prose, lower-cased when `fold`.
    work: Vec<&'a str>,
    /// Whether the target script is Latin, where terms are matched case-insensitively.
    fold: bool,
    /// Whether the target script is written without spaces, so that its words come from the
    /// segmenter (module docs, "Word boundaries").
    segmented: bool,
    /// Per translated unit: the segmenter's word boundaries (empty unless `segmented`).
    raw_bounds: Vec<words::Bounds>,
}

impl<'a> Book<'a> {
    fn new(
        ctx: &'a QaContext,
        tu: Vec<(&'a Parsed<'a>, &'a str)>,
        work: Vec<&'a str>,
        fold: bool,
    ) -> Book<'a> {
        let segmented = term_text::unspaced(&ctx.target_lang);
        let raw_bounds = if segmented {
            work.iter().map(|w| words::raw_boundaries(w)).collect()
        } else {
            Vec::new()
        };
        Book {
            ctx,
            tu,
            work,
            fold,
            segmented,
            raw_bounds,
        }
    }

    /// The words of every translation, with `known` renderings as known words (empty unless
    /// `segmented`: spaced scripts are cut at spaces).
    fn words_with(&self, known: Option<&aho_corasick::AhoCorasick>) -> Vec<Words> {
        self.raw_bounds
            .iter()
            .zip(&self.work)
            .map(|(raw, w)| Words::from_raw(w, raw.clone(), known))
            .collect()
    }

    /// How often rendering `r` occurs in unit `k`'s translation (on word boundaries `ws` where
    /// the script is segmented).
    fn occurs(&self, ws: &[Words], k: usize, r: &str) -> usize {
        if self.segmented {
            ws[k].find(self.work[k], r).count()
        } else {
            self.work[k].matches(r).count()
        }
    }
}

/// The tracked terms and where they occur.
struct Terms {
    tracked: Vec<Tracked>,
    /// How many of `tracked`, from the first, are termbase entries.
    n_entries: usize,
    /// Finds the tracked terms (entry numbers are indices in `tracked`).
    matcher: Matcher,
    /// Per translated unit: the tracked terms of its source, sorted.
    src_terms: Vec<Vec<usize>>,
    /// Per tracked term: the translated units whose source has it.
    units_with: Vec<usize>,
    /// Per translated unit: (term, start, end) of the tracked terms in its translation, sorted.
    tgt_occ: Vec<Vec<(usize, usize, usize)>>,
    /// Per tracked term: its termbase rendering, when it has one other than the term itself
    /// (lower-cased when the book folds).
    renderings: Vec<Option<String>>,
}

impl Terms {
    fn new(book: &Book) -> Terms {
        let (tracked, n_entries) = tracked_terms(book);
        let matcher = Matcher::new(&Termbase::new(
            tracked
                .iter()
                .map(|t| Entry {
                    source: t.term.clone(),
                    target: String::new(),
                    note: String::new(),
                    origin: Origin::Agent,
                    forbidden: Vec::new(),
                    variants: Vec::new(),
                })
                .collect(),
        ));
        let src_terms: Vec<Vec<usize>> = book
            .tu
            .iter()
            .map(|(u, _)| {
                let mut v: Vec<usize> = matcher
                    .find_all(u.src_prose())
                    .iter()
                    .map(|o| o.entry)
                    .collect();
                v.sort_unstable();
                v.dedup();
                v
            })
            .collect();
        let mut units_with = vec![0usize; tracked.len()];
        for v in &src_terms {
            for &t in v {
                units_with[t] += 1;
            }
        }
        let tgt_occ = book
            .work
            .iter()
            .map(|w| {
                let mut v = matcher
                    .find_all(w)
                    .iter()
                    .map(|o| (o.entry, o.start, o.end))
                    .collect::<Vec<_>>();
                v.sort_unstable();
                v
            })
            .collect();
        let renderings = tracked
            .iter()
            .map(|t| termbase_rendering(book, t))
            .collect();
        Terms {
            tracked,
            n_entries,
            matcher,
            src_terms,
            units_with,
            tgt_occ,
            renderings,
        }
    }

    /// Whether term `t` gets a row: a termbase entry whose source occurs, or a candidate found
    /// in at least 2 units.
    fn keep(&self, t: usize) -> bool {
        self.units_with[t] > 0 && (t < self.n_entries || self.units_with[t] >= 2)
    }

    /// The occurrences of term `t` in unit `k`'s translation.
    fn occurrences(&self, k: usize, t: usize) -> &[(usize, usize, usize)] {
        let v = &self.tgt_occ[k];
        &v[v.partition_point(|o| o.0 < t)..v.partition_point(|o| o.0 <= t)]
    }
}

/// Tracked terms: termbase entries, then frequent Latin-script source terms; and how many are
/// entries.
fn tracked_terms(book: &Book) -> (Vec<Tracked>, usize) {
    let ctx = book.ctx;
    let mut tracked: Vec<Tracked> = ctx
        .termbase
        .entries
        .iter()
        .enumerate()
        .filter(|(_, e)| !e.source.trim().is_empty())
        .map(|(i, e)| Tracked {
            term: e.source.trim().to_string(),
            entry: Some(i),
        })
        .collect();
    let n_entries = tracked.len();
    let sources: Vec<&str> = book.tu.iter().map(|(u, _)| u.source).collect();
    let mut seen: std::collections::HashSet<String> =
        tracked.iter().map(|t| term_key(&t.term)).collect();
    for c in cached_candidates(ctx, &sources).iter() {
        let latin = c
            .term
            .chars()
            .filter(|c| c.is_alphabetic())
            .all(|c| script_of(c) == Some(Script::Latin));
        if latin && seen.insert(term_key(&c.term)) {
            tracked.push(Tracked {
                term: c.term.clone(),
                entry: None,
            });
        }
    }
    (tracked, n_entries)
}

/// The termbase rendering of a tracked term (not a keep-as-is entry), folded as the book is.
fn termbase_rendering(book: &Book, t: &Tracked) -> Option<String> {
    let e = &book.ctx.termbase.entries[t.entry?];
    let r = e.target.trim();
    (!r.is_empty() && term_key(r) != term_key(&e.source)).then(|| {
        if book.fold {
            r.to_lowercase()
        } else {
            r.to_string()
        }
    })
}

/// Every named rendering (the termbase's, and those the glosses give) as known words of the
/// translations.
struct Vocabulary<'k> {
    /// The named renderings.
    known_list: Vec<&'k str>,
    /// `known_list` as an automaton for the segmenter (`None` unless segmented).
    known_words: Option<aho_corasick::AhoCorasick>,
    /// The words of each translation with `known_list` as known words (empty unless
    /// segmented).
    unit_words: Vec<Words>,
}

impl<'k> Vocabulary<'k> {
    fn new(book: &Book, terms: &'k Terms, known: &'k [Vec<String>]) -> Vocabulary<'k> {
        let known_list: Vec<&str> = terms
            .renderings
            .iter()
            .flatten()
            .chain(known.iter().flatten())
            .map(String::as_str)
            .collect();
        let known_words = if book.segmented {
            words::known_automaton(known_list.iter().copied())
        } else {
            None
        };
        let unit_words = if book.segmented {
            book.words_with(known_words.as_ref())
        } else {
            Vec::new()
        };
        Vocabulary {
            known_list,
            known_words,
            unit_words,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::Lang;
    use crate::qa::UnitText;
    use crate::qa::unit::glossary::entry;
    use crate::qa::{Doc, glossary};

    /// The canonical failure: 14 short units about "Agent"; the translation keeps "Agent" in 6,
    /// renders it 代理 in 7 and 智能体 (with a gloss) in 1.
    pub(crate) fn agent_units() -> Vec<(String, String, String)> {
        let kept = [
            (
                "An Agent reads files before it acts.",
                "Agent 会先读取文件再行动。",
            ),
            (
                "Each Agent keeps a short memory of the task.",
                "每个 Agent 都保留任务的简短记忆。",
            ),
            (
                "The Agent retries when a test fails.",
                "测试失败时，Agent 会重试。",
            ),
            (
                "A good Agent asks before deleting data.",
                "好的 Agent 会在删除数据前先询问。",
            ),
            (
                "The Agent writes a plan in plain text.",
                "Agent 用纯文本写下计划。",
            ),
            (
                "Logs show what the Agent did and why.",
                "日志显示了 Agent 做了什么以及原因。",
            ),
        ];
        let proxy = [
            ("The Agent calls a search tool.", "代理调用搜索工具。"),
            (
                "An Agent can run shell commands safely.",
                "代理可以安全地运行命令。",
            ),
            ("The Agent summarises long documents.", "代理会总结长文档。"),
            (
                "Our Agent books meetings for the team.",
                "我们的代理为团队预订会议。",
            ),
            (
                "The Agent checks prices every hour.",
                "代理每小时检查一次价格。",
            ),
            (
                "An Agent may hand work to a human.",
                "代理可能把工作交给人类。",
            ),
            (
                "The Agent stops when the budget runs out.",
                "预算用完时代理就停止。",
            ),
        ];
        let agent = [(
            "We call this system an Agent from now on.",
            "从现在起我们称这个系统为智能体（Agent）。",
        )];
        let other = [
            ("Tests run in a sandbox.", "测试在沙箱中运行。"),
            ("Prices change every day.", "价格每天都在变化。"),
            ("Budgets limit the cost.", "预算限制了成本。"),
        ];
        let mut out = Vec::new();
        let mut push = |s: &str, t: &str| {
            let id = format!("c-{:03}", out.len());
            out.push((id, s.to_string(), t.to_string()));
        };
        // Interleave so that order carries no signal.
        for i in 0..7 {
            if i < kept.len() {
                push(kept[i].0, kept[i].1);
            }
            push(proxy[i].0, proxy[i].1);
            if i == 3 {
                push(agent[0].0, agent[0].1);
            }
            if i < other.len() {
                push(other[i].0, other[i].1);
            }
        }
        out
    }

    /// `(id, source, target)` triples as translated units of chapter `c`.
    fn unit_texts(units: &[(String, String, String)]) -> Vec<UnitText<'_>> {
        units
            .iter()
            .map(|(id, s, t)| UnitText {
                unit: id,
                chapter: "c",
                source: s,
                target: Some(t),
            })
            .collect()
    }

    fn run(tb: &Termbase, units: &[(String, String, String)]) -> (Vec<Finding>, Vec<DriftRow>) {
        let ctx = QaContext::new(&Lang::parse("en"), &Lang::parse("zh"), tb);
        let texts = unit_texts(units);
        check(&ctx, &Parsed::all(&texts).iter().collect::<Vec<_>>())
    }

    fn counts(row: &DriftRow) -> Vec<(&str, usize)> {
        row.cells
            .iter()
            .map(|(k, v)| (k.as_str(), v.len()))
            .collect()
    }

    /// B of the Dice coefficient is a set of segments (module docs). The index listed a
    /// segment once per occurrence of the n-gram, so a rendering written three times in one
    /// paragraph counted as three co-occurrences and Dice could exceed 1 (found while cutting
    /// the index's memory).
    #[test]
    fn repeated_ngrams_were_counted_as_segments() {
        let zh = Lang::parse("zh");
        let texts: Vec<(String, String, String)> = [
            ("u-0", "Agent one.\n", "代理代理代理。\n"),
            ("u-1", "Agent two.\n", "代理。\n"),
            ("u-2", "Other.\n", "其他。\n"),
        ]
        .iter()
        .map(|(i, s, t)| (i.to_string(), s.to_string(), t.to_string()))
        .collect();
        let units = unit_texts(&texts);
        let parsed: Vec<Parsed> = units.iter().map(Parsed::new).collect();
        let tu: Vec<(&Parsed, &str)> = parsed.iter().map(|p| (p, p.tgt_prose().unwrap())).collect();
        let work: Vec<&str> = tu.iter().map(|t| t.1).collect();
        let matcher = Matcher::new(&Termbase::default());
        let idx = NgramIndex::build(&tu, &work, &matcher, &zh, false, &[], None);
        let g = idx.ids["代理"];
        assert_eq!(
            idx.postings[g as usize].iter().collect::<Vec<_>>(),
            vec![0, 1]
        );
        assert_eq!(idx.seg_ngrams[0].iter().filter(|&x| x == g).count(), 1);
        let (a, excl) = ([true, true, false], [false; 3]);
        let c = Contrast {
            a: &a,
            excl: &excl,
            n_excl: 0,
        };
        // 2·|A∩B| / (|A| + |B|) = 2·2 / (2 + 2), not 2·4 / (2 + 4).
        assert_eq!(idx.joint(g, &a), 2);
        assert_eq!(idx.dice(g, c, 2), 1.0);
    }

    #[test]
    fn canonical_agent_drift_without_glossary() {
        let units = agent_units();
        assert_eq!(units.iter().filter(|u| u.1.contains("Agent")).count(), 14);
        let (f, rows) = run(&Termbase::default(), &units);
        let row = rows
            .iter()
            .find(|r| r.term == "Agent")
            .expect("Agent tracked");
        assert!(!row.in_glossary && row.drifting);
        assert_eq!(counts(row), vec![("(kept)", 6), ("代理", 7), ("智能体", 1)]);
        assert_eq!(row.suggested.as_deref(), Some("代理"));
        assert_eq!(row.cells["智能体"], vec!["c-011"]);
        let agent: Vec<&Finding> = f
            .iter()
            .filter(|f| f.message.starts_with("\"Agent\""))
            .collect();
        assert_eq!(agent.len(), 1);
        assert_eq!(
            (agent[0].check.as_str(), agent[0].severity),
            ("term_drift", Severity::Warning)
        );
        assert!(
            agent[0]
                .message
                .starts_with("\"Agent\" is kept in 6 units, rendered 代理 in 7, 智能体 in 1;"),
            "{}",
            agent[0].message
        );
    }

    #[test]
    fn canonical_agent_drift_with_glossary() {
        let units = agent_units();
        let tb = Termbase::from_entries([entry("Agent", "智能体", &[])]);
        let (f, rows) = run(&tb, &units);
        let row = &rows[0];
        assert_eq!(row.term, "Agent");
        assert!(row.in_glossary && row.drifting);
        assert_eq!(counts(row), vec![("(kept)", 6), ("代理", 7), ("智能体", 1)]);
        assert_eq!(row.suggested.as_deref(), Some("智能体"));
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].severity, Severity::Info);
        assert!(f[0].message.contains("already a `glossary` error"));
        // The per-unit glossary check gives an error in the 13 units that break the entry.
        let ctx = QaContext::new(&Lang::parse("en"), &Lang::parse("zh"), &tb);
        let failing: Vec<&str> = units
            .iter()
            .filter(|(_, s, t)| {
                let e = glossary::check(&ctx, &Doc::parse(s), &Doc::parse(t), s, t);
                assert!(
                    e.iter()
                        .all(|f| f.check == "glossary" && f.severity == Severity::Error)
                );
                !e.is_empty()
            })
            .map(|u| u.0.as_str())
            .collect();
        assert_eq!(failing.len(), 13);
        assert!(!failing.contains(&"c-011"));
    }

    #[test]
    fn consistent_rendering_does_not_drift() {
        let units: Vec<(String, String, String)> = agent_units()
            .into_iter()
            .map(|(id, s, t)| {
                let t = t
                    .replace("代理", "智能体")
                    .replace("Agent", "智能体")
                    .replace("智能体（智能体）", "智能体（Agent）");
                (id, s, t)
            })
            .collect();
        let (f, rows) = run(&Termbase::default(), &units);
        assert!(f.is_empty(), "{f:?}");
        let row = rows.iter().find(|r| r.term == "Agent").unwrap();
        assert_eq!(counts(row), vec![("智能体", 14)]);
        assert!(!row.drifting);
    }

    #[test]
    fn sub_agent_rendering_is_not_kept_agent() {
        let tb = Termbase::from_entries([
            entry("Agent", "智能体", &[]),
            entry("sub-agent", "子 Agent", &[]),
        ]);
        let units = vec![
            (
                "c-000".to_string(),
                "The agent starts a sub-agent.".to_string(),
                "智能体启动一个子 Agent。".to_string(),
            ),
            (
                "c-001".to_string(),
                "The agent waits.".to_string(),
                "智能体等待。".to_string(),
            ),
        ];
        let (f, rows) = run(&tb, &units);
        assert!(f.is_empty(), "{f:?}");
        assert_eq!(
            counts(&rows.iter().find(|r| r.term == "Agent").unwrap().clone()),
            vec![("智能体", 2)]
        );
    }

    /// The translator drops "Agent" where it works on the system (重启系统) and keeps it
    /// elsewhere; `system` is written 系统 with or without "Agent". The association credited "Agent" with
    /// 系统, the word of its neighbour, so the term looked kept in some units and rendered 系统
    /// in others, a drift the Manager reconciled to `Agent → 系统` and wrote into the book.
    #[test]
    fn agent_was_reconciled_to_the_word_for_system() {
        let dropped = [
            ("The Agent restarts the system.", "重启系统。"),
            ("Our Agent tests the system daily.", "我们每天测试系统。"),
            ("The Agent watches the system logs.", "监看系统日志。"),
            ("Each Agent updates the system.", "每次都更新系统。"),
            ("An Agent may stop the system.", "可能停止系统。"),
            ("The Agent checks the system clock.", "检查系统时钟。"),
        ];
        let kept = [
            ("An Agent asks before acting.", "Agent 行动前先询问。"),
            ("The Agent retries a failed test.", "Agent 重试失败的测试。"),
            ("A good Agent logs its steps.", "好的 Agent 会记录步骤。"),
            ("The Agent books a meeting.", "Agent 预订会议。"),
        ];
        let system = [
            ("The system restarts daily.", "系统每天重启。"),
            ("A system needs power.", "系统需要电力。"),
            ("The system sends mail.", "系统发送邮件。"),
        ];
        let units: Vec<(String, String, String)> = dropped
            .iter()
            .chain(&kept)
            .chain(&system)
            .enumerate()
            .map(|(i, (s, t))| (format!("u-{i:03}"), s.to_string(), t.to_string()))
            .collect();
        let (f, rows) = run(&Termbase::default(), &units);
        let agent = rows
            .iter()
            .find(|r| r.term == "Agent")
            .expect("Agent tracked");
        assert!(!agent.cells.contains_key("系统"), "{agent:?}");
        assert!(!agent.drifting, "{agent:?}");
        assert!(
            f.iter().all(|f| !f.message.starts_with("\"Agent\"")),
            "{f:?}"
        );
        // The units that drop the term are unidentified, not rendered.
        assert_eq!(agent.cells[UNIDENTIFIED].len(), 6, "{agent:?}");
        assert_eq!(agent.cells[KEPT].len(), 4, "{agent:?}");
    }

    proptest::proptest! {
        /// The gap code is lossless: any ascending list reads back as it was, with its length.
        #[test]
        fn gaps_read_back_what_was_stored(mut v in proptest::collection::vec(proptest::prelude::any::<u32>(), 0..300)) {
            v.sort_unstable();
            v.dedup();
            let g = Gaps::of(&v);
            proptest::prop_assert_eq!(g.len(), v.len());
            proptest::prop_assert_eq!(g.iter().collect::<Vec<_>>(), v);
        }
    }
}
