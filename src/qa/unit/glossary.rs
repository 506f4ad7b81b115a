//! Glossary adherence (check `glossary`, per unit): every termbase entry whose source term
//! occurs in the unit's source must be rendered as the entry's target in the translation.
//!
//! Source terms are found in the source's clean prose (code, inline code, math, HTML and URLs
//! left out) with [`crate::termbase::Matcher`]: ASCII case-insensitive, on word boundaries, with
//! simple plurals. For each entry found, the translation's clean prose must contain the
//! required rendering **at least once** (the counts are given in the message; a pronoun or an
//! omission may legitimately replace later occurrences). Renderings are compared with ASCII case
//! ignored, and with full Unicode case folding when the target language is written in Latin
//! script; for Chinese and Japanese targets a space between Han and Latin (`子 Agent`) is optional.
//!
//! One finding per entry and unit, naming every piece of evidence. It is an `error`, except
//! for an entry proposed by the Glossary agent (origin `agent`) that no editor has approved
//! at the glossary gate ([`QaContext::agent_entries_approved`]): a model's proposal is advice
//! until verified, so deviating from it is a `warning` and sends no paid revision.
//! - a **forbidden** rendering (`Entry::forbidden`) in the translation;
//! - the source term **kept** in the translation (`Agent` left in a Chinese text), except inside
//!   a parenthetical gloss right after the required rendering (`智能体（Agent）`,
//!   `智能体 (AI Agent)`) or inside another entry's required rendering (`子 Agent`);
//! - the required rendering **missing** with neither of the above ("glossary violation").
//!
//! Keep-as-is entries (target equal to source, ignoring case) instead require the source term
//! itself in the translation.
//!
//! An entry's `variants` (the glossary's `allowed`/`variants` column, admitted TBX terms) are
//! accepted wherever its target is required. For inflected target languages (Russian, Polish,
//! Czech, German, Finnish… see [`crate::termbase::inflect`]), any inflected form of the
//! target or a variant counts as the rendering (камнехранителям for камнехранитель), compared
//! with full Unicode case folding; a forbidden rendering is an error in any of its forms.
//!
//! [`adherence`] sums the same evaluation over the campaign for the report.

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use serde::Serialize;

use crate::lang::Script;
use crate::qa::view::term_text;
use crate::qa::{Doc, Finding, QaContext, Severity};
use crate::qa::{Parsed, UnitText};
use crate::termbase::inflect::{self, Inflection};
use crate::termbase::{Matcher, Origin, term_key};

/// Check name of the findings.
pub const CHECK: &str = "glossary";

/// Runs the glossary check on one unit (see the module docs). `source` and `target` are the raw
/// texts of `src` and `tgt`; the check compares their clean prose.
pub fn check(ctx: &QaContext, src: &Doc, tgt: &Doc, source: &str, target: &str) -> Vec<Finding> {
    let _ = (source, target);
    let g = Glossary::new(ctx);
    g.evaluate(&src.clean_prose(), &tgt.clean_prose())
        .into_iter()
        .filter_map(|r| r.finding)
        .collect()
}

/// Adherence to one termbase entry over a campaign.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Adherence {
    pub source: String,
    pub target: String,
    pub origin: Origin,
    /// Translated units whose source contains the term.
    pub units: usize,
    /// Occurrences of the term in those sources.
    pub occurrences: usize,
    /// Occurrences of the required rendering in their translations.
    pub target_occurrences: usize,
    /// Units that follow the entry.
    pub units_correct: usize,
    /// Units with a `glossary` error for the entry.
    pub units_violating: usize,
    /// Their ids, in campaign order.
    pub violating_units: Vec<String>,
}

/// Per-entry adherence over `pairs` (units without a translation are skipped), in termbase
/// order, including entries that occur nowhere.
pub fn adherence(ctx: &QaContext, pairs: &[UnitText]) -> Vec<Adherence> {
    let parsed = Parsed::all(pairs);
    adherence_parsed(ctx, &parsed)
}

/// [`adherence`] over units parsed once.
pub(crate) fn adherence_parsed(ctx: &QaContext, units: &[Parsed]) -> Vec<Adherence> {
    let g = Glossary::new(ctx);
    let mut out: Vec<Adherence> = ctx
        .termbase
        .entries
        .iter()
        .map(|e| Adherence {
            source: e.source.clone(),
            target: e.target.clone(),
            origin: e.origin,
            units: 0,
            occurrences: 0,
            target_occurrences: 0,
            units_correct: 0,
            units_violating: 0,
            violating_units: Vec::new(),
        })
        .collect();
    for u in units {
        let Some(tgt) = u.tgt_prose() else { continue };
        for r in g.evaluate(u.src_prose(), tgt) {
            let a = &mut out[r.entry];
            a.units += 1;
            a.occurrences += r.source_occurrences;
            a.target_occurrences += r.target_occurrences;
            if r.finding.is_some() {
                a.units_violating += 1;
                a.violating_units.push(u.unit.to_string());
            } else {
                a.units_correct += 1;
            }
        }
    }
    out
}

/// The outcome for one entry in one unit.
#[derive(Debug, Clone)]
pub(crate) struct EntryResult {
    /// Index in the termbase.
    pub entry: usize,
    pub source_occurrences: usize,
    /// Occurrences of the required rendering (for keep-as-is entries: of the term).
    pub target_occurrences: usize,
    pub finding: Option<Finding>,
}

/// A termbase compiled for repeated evaluation.
pub(crate) struct Glossary<'a> {
    ctx: &'a QaContext,
    s: std::sync::Arc<Searchers>,
}

/// The automata of one termbase and target language, built once and shared (see
/// [`Glossary::new`]).
pub(crate) struct Searchers {
    matcher: std::sync::Arc<Matcher>,
    /// Full Unicode case folding (Latin-script targets).
    fold: bool,
    /// The required renderings of every entry (none for keep-as-is or empty targets).
    required: Renderings,
    /// Per entry: searcher for its forbidden renderings.
    forbidden: Vec<Option<AhoCorasick>>,
    keep_as_is: Vec<bool>,
    /// The target language's inflection rule, when it inflects.
    inflection: Option<Inflection>,
    /// Per entry, lower-cased: the required renderings (target and variants; none for
    /// keep-as-is entries) and the forbidden ones, for inflected matching.
    required_forms: Vec<Vec<String>>,
    forbidden_forms: Vec<Vec<String>>,
    /// A rendering found inside a longer word counts only as one of its inflected forms: the
    /// target inflects and does not write closed compounds ([`inflect::compounds`]), so
    /// агентство (agency) is not агент (agent), nor инструментарий (toolkit) инструмент.
    whole_words: bool,
}

impl std::ops::Deref for Glossary<'_> {
    type Target = Searchers;
    fn deref(&self) -> &Searchers {
        &self.s
    }
}

/// The required renderings of all entries in one automaton, searched once per text with
/// overlapping matches and then split per entry: equivalent to one leftmost-longest automaton
/// per entry (see [`crate::termbase::leftmost_longest`]), but a single pass over the
/// text instead of one per entry found in the source.
struct Renderings {
    ac: Option<AhoCorasick>,
    /// Pattern index → entry index.
    pattern_entry: Vec<usize>,
}

impl Renderings {
    fn build(per_entry: &[Vec<String>]) -> Renderings {
        let mut patterns = Vec::new();
        let mut pattern_entry = Vec::new();
        for (i, forms) in per_entry.iter().enumerate() {
            for f in forms.iter().filter(|f| !f.trim().is_empty()) {
                patterns.push(f.as_str());
                pattern_entry.push(i);
            }
        }
        let ac = (!patterns.is_empty()).then(|| {
            AhoCorasickBuilder::new()
                .match_kind(MatchKind::Standard)
                .ascii_case_insensitive(true)
                .build(&patterns)
                .expect("rendering patterns build")
        });
        Renderings { ac, pattern_entry }
    }

    /// Per entry of the termbase (`n` entries): the byte spans of its required rendering in
    /// `text`, for the entries where `wanted(entry)` holds (others stay empty).
    fn spans(
        &self,
        text: &str,
        n: usize,
        wanted: impl Fn(usize) -> bool,
    ) -> Vec<Vec<(usize, usize)>> {
        let mut per: Vec<Vec<(usize, usize, usize)>> = vec![Vec::new(); n];
        if let Some(ac) = &self.ac {
            for m in ac.find_overlapping_iter(text) {
                let p = m.pattern().as_usize();
                let e = self.pattern_entry[p];
                if wanted(e) {
                    per[e].push((m.start(), m.end(), p));
                }
            }
        }
        per.into_iter()
            .map(|ms| {
                crate::termbase::leftmost_longest(ms)
                    .into_iter()
                    .map(|(s, e, _)| (s, e))
                    .collect()
            })
            .collect()
    }
}

fn searcher(patterns: &[String]) -> Option<AhoCorasick> {
    let patterns: Vec<&String> = patterns.iter().filter(|p| !p.trim().is_empty()).collect();
    (!patterns.is_empty()).then(|| {
        AhoCorasickBuilder::new()
            .match_kind(MatchKind::LeftmostLongest)
            .ascii_case_insensitive(true)
            .build(patterns)
            .expect("rendering patterns build")
    })
}

impl<'a> Glossary<'a> {
    /// The glossary check for `ctx`. Its automata are built once per termbase and target
    /// language and kept in the context's [`crate::qa::QaCache`]: the check runs for every unit,
    /// and building hundreds of automata per unit would dominate the campaign's CPU time.
    pub(crate) fn new(ctx: &'a QaContext) -> Glossary<'a> {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        ctx.target_lang.code.hash(&mut h);
        for e in &ctx.termbase.entries {
            (&e.source, &e.target, &e.forbidden, &e.variants).hash(&mut h);
        }
        let s = ctx.cache().searchers(h.finish(), || Searchers::build(ctx));
        Glossary { ctx, s }
    }
}

impl Searchers {
    fn build(ctx: &QaContext) -> Searchers {
        let inflection = inflect::inflection(&ctx.target_lang.primary());
        let fold = ctx.target_lang.script == Script::Latin || inflection.is_some();
        let unspaced = term_text::unspaced(&ctx.target_lang);
        let variants = |r: &str| -> Vec<String> {
            let r = r.trim();
            let r = if fold {
                r.to_lowercase()
            } else {
                r.to_string()
            };
            let mut v = vec![r.clone()];
            if unspaced && r.contains(char::is_whitespace) {
                v.push(r.split_whitespace().collect());
            }
            v
        };
        let keep_as_is: Vec<bool> = ctx
            .termbase
            .entries
            .iter()
            .map(|e| term_key(&e.source) == term_key(&e.target))
            .collect();
        let required = Renderings::build(
            &ctx.termbase
                .entries
                .iter()
                .zip(&keep_as_is)
                .map(|(e, &k)| {
                    if k {
                        Vec::new()
                    } else {
                        std::iter::once(&e.target)
                            .chain(&e.variants)
                            .flat_map(|r| variants(r))
                            .collect()
                    }
                })
                .collect::<Vec<_>>(),
        );
        let lower = |r: &String| r.trim().to_lowercase();
        let required_forms = ctx
            .termbase
            .entries
            .iter()
            .zip(&keep_as_is)
            .map(|(e, &k)| {
                if k || inflection.is_none() {
                    Vec::new()
                } else {
                    std::iter::once(&e.target)
                        .chain(&e.variants)
                        .map(lower)
                        .collect()
                }
            })
            .collect();
        let forbidden_forms = ctx
            .termbase
            .entries
            .iter()
            .map(|e| {
                if inflection.is_none() {
                    Vec::new()
                } else {
                    e.forbidden.iter().map(lower).collect()
                }
            })
            .collect();
        let forbidden = ctx
            .termbase
            .entries
            .iter()
            .map(|e| {
                searcher(
                    &e.forbidden
                        .iter()
                        .flat_map(|f| variants(f))
                        .collect::<Vec<_>>(),
                )
            })
            .collect();
        Searchers {
            matcher: ctx.termbase.matcher(),
            fold,
            required,
            forbidden,
            keep_as_is,
            inflection,
            required_forms,
            forbidden_forms,
            whole_words: inflection.is_some() && !inflect::compounds(&ctx.target_lang.primary()),
        }
    }
}

impl Glossary<'_> {
    /// The severity of a deviation from entry `i`: `warning` for an agent entry no editor has
    /// approved yet ([`QaContext::agent_entries_approved`]), `error` otherwise.
    fn severity(&self, i: usize) -> Severity {
        if self.unapproved(i) {
            Severity::Warning
        } else {
            Severity::Error
        }
    }

    fn unapproved(&self, i: usize) -> bool {
        self.ctx.termbase.entries[i].origin == Origin::Agent && !self.ctx.agent_entries_approved
    }

    /// The message suffix of a finding against an unapproved agent entry.
    fn unapproved_note(&self, i: usize) -> &'static str {
        if self.unapproved(i) {
            " (a warning: the entry was proposed by the Glossary agent and no editor has approved it)"
        } else {
            ""
        }
    }

    /// Evaluates every entry whose term occurs in `src_prose` against `tgt_prose` (both clean
    /// prose), in termbase order.
    pub(crate) fn evaluate(&self, src_prose: &str, tgt_prose: &str) -> Vec<EntryResult> {
        let entries = &self.ctx.termbase.entries;
        let mut src_count = vec![0usize; entries.len()];
        let mut first_src = vec![0usize; entries.len()];
        for o in self.matcher.find_all(src_prose) {
            if src_count[o.entry] == 0 {
                first_src[o.entry] = o.start;
            }
            src_count[o.entry] += 1;
        }
        let relevant: Vec<usize> = (0..entries.len()).filter(|&i| src_count[i] > 0).collect();
        if relevant.is_empty() {
            return Vec::new();
        }
        let folded;
        let work: &str = if self.fold {
            folded = tgt_prose.to_lowercase();
            &folded
        } else {
            tgt_prose
        };
        let spans = self.required_spans(work, &src_count, &relevant);
        // Source terms written in the translation, for the relevant entries only.
        let mut kept: Vec<Vec<(usize, usize)>> = vec![Vec::new(); entries.len()];
        for o in self.matcher.find_among(work, |i| src_count[i] > 0) {
            kept[o.entry].push((o.start, o.end));
        }
        let unit = UnitTerms {
            src_prose,
            tgt_prose,
            work,
            src_count,
            first_src,
            relevant,
            spans,
            kept,
        };
        unit.relevant
            .iter()
            .map(|&i| {
                if self.keep_as_is[i] {
                    self.keep_as_is_result(&unit, i)
                } else {
                    self.rendering_result(&unit, i)
                }
            })
            .collect()
    }

    /// Per entry: the spans of its required rendering in `work`, for the relevant entries.
    /// Inflected forms of the required renderings count as the rendering. A word that is a
    /// form of a forbidden rendering stays forbidden, even when a required rendering is part
    /// of it (агентура contains агент).
    fn required_spans(
        &self,
        work: &str,
        src_count: &[usize],
        relevant: &[usize],
    ) -> Vec<Vec<(usize, usize)>> {
        let mut spans = self
            .required
            .spans(work, src_count.len(), |i| src_count[i] > 0);
        if self.whole_words {
            let boundary = |at: usize, before: bool| {
                let c = if before {
                    work[..at].chars().next_back()
                } else {
                    work[at..].chars().next()
                };
                !c.is_some_and(char::is_alphanumeric)
            };
            for &i in relevant {
                spans[i].retain(|&(a, b)| boundary(a, true) && boundary(b, false));
            }
        }
        if let Some(inf) = self.inflection {
            for &i in relevant {
                let forbidden: Vec<(usize, usize)> = self.forbidden_forms[i]
                    .iter()
                    .flat_map(|f| inflect::find_forms(work, f, inf))
                    .collect();
                let free = |a: usize, b: usize| !forbidden.iter().any(|&(s, t)| a < t && s < b);
                spans[i].retain(|&(a, b)| free(a, b));
                for form in &self.required_forms[i] {
                    for (a, b) in inflect::find_forms(work, form, inf) {
                        if free(a, b) && !spans[i].iter().any(|&(s, t)| a < t && s < b) {
                            spans[i].push((a, b));
                        }
                    }
                }
                spans[i].sort_unstable();
            }
        }
        spans
    }

    /// A keep-as-is entry: the term must appear in the translation.
    fn keep_as_is_result(&self, unit: &UnitTerms<'_>, i: usize) -> EntryResult {
        let e = &self.ctx.termbase.entries[i];
        let n = unit.kept[i].len();
        let finding = (n == 0).then(|| {
            Finding::new(
                CHECK,
                self.severity(i),
                format!(
                    "glossary violation: \"{}\" ({}× in the source) must be kept as \"{}\", but it does not appear in the translation; keep the term as is{}",
                    e.source, unit.src_count[i], e.target.trim(), self.unapproved_note(i)
                ),
                &unit.src_excerpt(i),
                unit.tgt_prose,
            )
        });
        EntryResult {
            entry: i,
            source_occurrences: unit.src_count[i],
            target_occurrences: n,
            finding,
        }
    }

    /// An entry with a rendering: forbidden renderings, the term left untranslated, or the
    /// rendering never used.
    fn rendering_result(&self, unit: &UnitTerms<'_>, i: usize) -> EntryResult {
        let e = &self.ctx.termbase.entries[i];
        let (work, spans) = (unit.work, &unit.spans);
        let required_n = spans[i].len();
        let in_other_rendering = |s: usize, t: usize| {
            unit.relevant
                .iter()
                .any(|&j| j != i && spans[j].iter().any(|&(a, b)| a <= s && t <= b))
        };
        // Kept source terms outside glosses and outside other entries' renderings.
        let kept_here: Vec<(usize, usize)> = unit.kept[i]
            .iter()
            .copied()
            .filter(|&(s, t)| !in_other_rendering(s, t))
            .filter(|&(s, t)| {
                !term_text::enclosing_paren(work, s, t, &self.ctx.source_lang).is_some_and(|p| {
                    term_text::ends_with_rendering(work, p.open, &e.target, self.fold)
                })
            })
            .collect();
        let forbidden_hits = self.forbidden_hits(work, i, &spans[i]);
        let missing = required_n == 0;
        let mut result = EntryResult {
            entry: i,
            source_occurrences: unit.src_count[i],
            target_occurrences: required_n,
            finding: None,
        };
        if forbidden_hits.is_empty() && kept_here.is_empty() && !missing {
            return result;
        }
        let target = e.target.trim();
        let mut parts = Vec::new();
        if !forbidden_hits.is_empty() {
            let list: Vec<String> = forbidden_hits
                .iter()
                .map(|(f, n, _)| format!("{f} ({n}×)"))
                .collect();
            parts.push(format!("uses the forbidden rendering {}", list.join(", ")));
        }
        if !kept_here.is_empty() {
            parts.push(format!(
                "leaves \"{}\" untranslated {}×",
                e.source.trim(),
                kept_here.len()
            ));
        }
        if missing {
            parts.push(format!("never uses {target}"));
        } else {
            parts.push(format!("uses {target} {required_n}×"));
        }
        let at = forbidden_hits
            .first()
            .map(|h| h.2)
            .or(kept_here.first().map(|k| k.0))
            .unwrap_or(0);
        let at = floor_char_boundary(unit.tgt_prose, at);
        let message = format!(
            "glossary violation: \"{}\" ({}× in the source) must be rendered {target}; the translation {}; use {target} (a gloss {target}（{}） is allowed){}",
            e.source.trim(),
            unit.src_count[i],
            parts.join(", "),
            e.source.trim(),
            self.unapproved_note(i),
        );
        result.finding = Some(Finding::new(
            CHECK,
            self.severity(i),
            message,
            &unit.src_excerpt(i),
            &term_text::context(unit.tgt_prose, at, at, 160),
        ));
        result
    }

    /// Forbidden renderings of entry `i` outside its required rendering (`required` spans):
    /// in an inflected language any form of one (a whole-word match, reported as written),
    /// else the exact text. (form, count, first byte), in order of first occurrence.
    fn forbidden_hits(
        &self,
        work: &str,
        i: usize,
        required: &[(usize, usize)],
    ) -> Vec<(String, usize, usize)> {
        let mut raw_hits: Vec<(usize, usize)> = Vec::new();
        if let Some(inf) = self.inflection {
            for form in &self.forbidden_forms[i] {
                for (a, b) in inflect::find_forms(work, form, inf) {
                    if !raw_hits.iter().any(|&(s, t)| a < t && s < b) {
                        raw_hits.push((a, b));
                    }
                }
            }
        }
        if let Some(ac) = &self.forbidden[i] {
            for m in ac.find_iter(work) {
                let (a, b) = (m.start(), m.end());
                if !raw_hits.iter().any(|&(s, t)| a < t && s < b) {
                    raw_hits.push((a, b));
                }
            }
        }
        raw_hits.sort_unstable();
        let mut forbidden_hits: Vec<(String, usize, usize)> = Vec::new();
        for (a, b) in raw_hits {
            if required.iter().any(|&(s, t)| a < t && s < b) {
                continue;
            }
            let form = work[a..b].to_string();
            match forbidden_hits.iter_mut().find(|h| h.0 == form) {
                Some(h) => h.1 += 1,
                None => forbidden_hits.push((form, 1, a)),
            }
        }
        forbidden_hits
    }
}

/// One unit's source and translation as [`Glossary::evaluate`] reads them.
struct UnitTerms<'u> {
    src_prose: &'u str,
    tgt_prose: &'u str,
    /// `tgt_prose`, lower-cased when the glossary folds case.
    work: &'u str,
    /// Per entry: its occurrences in the source, and the byte of the first.
    src_count: Vec<usize>,
    first_src: Vec<usize>,
    /// The entries whose term occurs in the source, in termbase order.
    relevant: Vec<usize>,
    /// Per entry: its required rendering's spans in `work`.
    spans: Vec<Vec<(usize, usize)>>,
    /// Per entry: its source term's spans in `work`.
    kept: Vec<Vec<(usize, usize)>>,
}

impl UnitTerms<'_> {
    /// The source around entry `i`'s first occurrence.
    fn src_excerpt(&self, i: usize) -> String {
        term_text::context(self.src_prose, self.first_src[i], self.first_src[i], 160)
    }
}

/// `at` moved back to a char boundary of `text` (offsets found in a lower-cased copy can differ).
fn floor_char_boundary(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// The entries of a termbase, for tests.
#[cfg(test)]
pub(crate) fn entry(source: &str, target: &str, forbidden: &[&str]) -> crate::termbase::Entry {
    crate::termbase::Entry {
        source: source.into(),
        target: target.into(),
        note: String::new(),
        origin: Origin::HouseStyle,
        forbidden: forbidden.iter().map(|s| s.to_string()).collect(),
        variants: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::Lang;
    use crate::termbase::{Entry, Termbase};

    fn ctx(entries: Vec<Entry>) -> QaContext {
        QaContext::new(
            &Lang::parse("en"),
            &Lang::parse("zh"),
            &Termbase::from_entries(entries),
        )
    }

    fn run(ctx: &QaContext, src: &str, tgt: &str) -> Vec<Finding> {
        check(ctx, &Doc::parse(src), &Doc::parse(tgt), src, tgt)
    }

    #[test]
    fn required_rendering_passes_with_plurals_and_glosses() {
        let c = ctx(vec![entry("Agent", "智能体", &["代理"])]);
        assert!(
            run(
                &c,
                "Agents call tools. An agent plans.",
                "智能体调用工具。智能体会规划。"
            )
            .is_empty()
        );
        // A gloss right after the rendering is allowed, full-width or ASCII.
        assert!(run(&c, "An Agent plans.", "智能体（Agent）会规划。").is_empty());
        assert!(run(&c, "An Agent plans.", "**智能体** (AI Agent) 会规划。").is_empty());
        // Terms in code do not count.
        assert!(run(&c, "Call `agent.run()`.", "调用 `agent.run()`。").is_empty());
        // "reagent" is not "agent".
        assert!(run(&c, "A reagent.", "一种试剂。").is_empty());
    }

    #[test]
    fn forbidden_rendering_is_an_error() {
        let c = ctx(vec![entry("Agent", "智能体", &["代理"])]);
        let f = run(&c, "The agent and the agents.", "代理和代理们。");
        assert_eq!(f.len(), 1);
        assert_eq!(
            (f[0].check.as_str(), f[0].severity),
            ("glossary", Severity::Error)
        );
        assert!(
            f[0].message
                .contains("\"Agent\" (2× in the source) must be rendered 智能体")
                && f[0].message.contains("forbidden rendering 代理 (2×)")
                && f[0].message.contains("never uses 智能体"),
            "{}",
            f[0].message
        );
        assert!(f[0].target_excerpt.contains("代理"));
    }

    #[test]
    fn kept_source_term_is_an_error_unless_glossed() {
        let c = ctx(vec![entry("Agent", "智能体", &[])]);
        let f = run(
            &c,
            "An Agent plans. The agent acts.",
            "智能体会规划。Agent 会行动。",
        );
        assert_eq!(f.len(), 1);
        assert!(
            f[0].message.contains("leaves \"Agent\" untranslated 1×")
                && f[0].message.contains("uses 智能体 1×"),
            "{}",
            f[0].message
        );
        // A gloss after another word is not an allowed gloss.
        let f = run(&c, "An Agent plans.", "代理（Agent）会规划。");
        assert_eq!(f.len(), 1);
        assert!(
            f[0].message.contains("untranslated 1×") && f[0].message.contains("never uses 智能体")
        );
    }

    #[test]
    fn missing_rendering_is_a_violation() {
        let c = ctx(vec![entry("context window", "上下文窗口", &[])]);
        let f = run(&c, "The context windows fill up.", "窗口会被填满。");
        assert_eq!(f.len(), 1);
        assert!(
            f[0].message
                .starts_with("glossary violation: \"context window\" (1× in the source)")
        );
        assert!(f[0].message.contains("never uses 上下文窗口"));
    }

    #[test]
    fn other_entries_rendering_is_not_a_kept_term() {
        let c = ctx(vec![
            entry("Agent", "智能体", &[]),
            entry("sub-agent", "子 Agent", &[]),
        ]);
        // "sub-agent" is matched as the longer term; its rendering contains "Agent".
        assert!(run(&c, "A sub-agent helps the agent.", "子Agent 帮助智能体。").is_empty());
    }

    #[test]
    fn keep_as_is_entries_require_the_term() {
        let c = ctx(vec![entry("token", "token", &[])]);
        assert!(run(&c, "Count tokens.", "统计 token 数。").is_empty());
        let f = run(&c, "Count tokens.", "统计词元数。");
        assert_eq!(f.len(), 1);
        assert!(f[0].message.contains("must be kept as \"token\""));
    }

    #[test]
    fn latin_targets_compare_case_insensitively() {
        let c = QaContext::new(
            &Lang::parse("en"),
            &Lang::parse("de"),
            &Termbase::from_entries([entry("tool", "Werkzeug", &["Tool"])]),
        );
        assert!(run(&c, "Use a tool.", "Nutze ein werkzeug.").is_empty());
        let f = run(&c, "Use a tool.", "Nutze ein Tool.");
        assert_eq!(f.len(), 1);
        assert!(
            f[0].message.contains("forbidden rendering tool (1×)"),
            "{}",
            f[0].message
        );
    }

    fn ru(entries: Vec<Entry>) -> QaContext {
        QaContext::new(
            &Lang::parse("en"),
            &Lang::parse("ru"),
            &Termbase::from_entries(entries),
        )
    }

    #[test]
    fn inflected_russian_glossary_term_is_not_an_error() {
        let c = ru(vec![entry("stonekeeper", "камнехранитель", &[])]);
        assert_eq!(
            run(
                &c,
                "Give it to the stonekeepers.",
                "Отдайте это камнехранителям."
            ),
            vec![]
        );
        // Sentence-initial capital, instrumental plural.
        assert_eq!(
            run(
                &c,
                "Stonekeepers guard it.",
                "Камнехранителями он охраняется."
            ),
            vec![]
        );
        // A multi-word rendering, both words inflected.
        let c2 = ru(vec![entry("language model", "языковая модель", &[])]);
        assert_eq!(
            run(&c2, "Ask the language model.", "Спросите языковую модель."),
            vec![]
        );
        // A different word is still a violation.
        let f = run(
            &c,
            "Give it to the stonekeepers.",
            "Отдайте это хранителям.",
        );
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(
            f[0].message.contains("never uses камнехранитель"),
            "{}",
            f[0].message
        );
        // Chinese is still compared exactly: no inflection rule.
        assert_eq!(inflect::inflection("zh"), None);
    }

    #[test]
    fn a_rendering_inside_a_longer_word_of_a_language_without_compounds_is_not_the_term() {
        let c = ru(vec![
            entry("agent", "агент", &[]),
            entry("tool", "инструмент", &[]),
        ]);
        let src = "The agent calls a tool.";
        let f = run(&c, src, "Агентство вызывает инструментарий.");
        assert_eq!(f.len(), 2, "{f:?}");
        assert!(f.iter().all(|f| f.message.contains("never uses")), "{f:?}");
        // Inflected forms still count.
        assert_eq!(run(&c, src, "Агент вызывает инструмент."), vec![]);
        assert_eq!(run(&c, src, "Агентом вызван инструмента вызов."), vec![]);
        // German writes closed compounds: Arbeitsspeicher holds Speicher.
        let de = QaContext::new(
            &Lang::parse("en"),
            &Lang::parse("de"),
            &Termbase::from_entries([entry("memory", "Speicher", &[])]),
        );
        assert_eq!(run(&de, "The memory.", "Der Arbeitsspeicher."), vec![]);
    }

    #[test]
    fn a_glossary_term_written_with_a_different_stem_passed_as_an_inflected_form() {
        // задание (assignment) shares its first letters with задача (task); an inflected form
        // of задача (задачи, задачей, задач) is the rendering, задание is another word.
        let c = ru(vec![entry("task", "задача", &[])]);
        let f = run(
            &c,
            "Each task has an owner.",
            "У каждого задания есть владелец.",
        );
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(
            f[0].message.contains("never uses задача"),
            "{}",
            f[0].message
        );
        for ok in [
            "У каждой задачи есть владелец.",
            "Каждой задачей кто-то владеет.",
            "Владельцы задач известны.",
        ] {
            assert_eq!(run(&c, "Each task has an owner.", ok), vec![], "{ok}");
        }
        // Polish: wiedźma (witch) is not a form of wiedza (knowledge); wiedzy (genitive) is.
        let pl = QaContext::new(
            &Lang::parse("en"),
            &Lang::parse("pl"),
            &Termbase::from_entries([entry("knowledge", "wiedza", &[])]),
        );
        assert_eq!(run(&pl, "No knowledge.", "Brak wiedzy."), vec![]);
        assert_eq!(run(&pl, "No knowledge.", "Brak wiedźmy.").len(), 1);
        // German: Speichers (genitive) is a form of Speicher. (A German rendering is also
        // found inside compounds, Arbeitsspeicher, by the exact matcher, so near-misses that
        // contain it whole are not the stem rule's to judge.)
        let de = QaContext::new(
            &Lang::parse("en"),
            &Lang::parse("de"),
            &Termbase::from_entries([entry("memory", "Speicher", &[])]),
        );
        assert_eq!(
            run(&de, "The memory's size.", "Die Größe des Speichers."),
            vec![]
        );
        assert_eq!(
            run(&de, "The memory's size.", "Die Größe des Spechts.").len(),
            1
        );
    }

    #[test]
    fn forbidden_rendering_is_an_error_in_any_form() {
        let c = ru(vec![entry("agent", "агент", &["посредник"])]);
        let f = run(&c, "Ask the agents.", "Спросите посредников.");
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(
            f[0].message
                .contains("forbidden rendering посредников (1×)")
                && f[0].message.contains("never uses агент"),
            "{}",
            f[0].message
        );
        // Even next to a correct rendering.
        let f = run(&c, "Ask the agents.", "Спросите агентов, а не посредникам.");
        assert_eq!(f.len(), 1);
        assert!(
            f[0].message
                .contains("forbidden rendering посредникам (1×)")
        );
        // A forbidden rendering that is itself a form of the required one stays forbidden.
        let c = ru(vec![entry("agency", "агент", &["агентура"])]);
        let f = run(&c, "The agency.", "Агентуры.");
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(
            f[0].message.contains("forbidden rendering агентуры"),
            "{}",
            f[0].message
        );
    }

    #[test]
    fn variants_are_accepted_renderings() {
        let mut e = entry("tree", "Baum", &[]);
        e.variants = vec!["Bäume".into()];
        let c = QaContext::new(
            &Lang::parse("en"),
            &Lang::parse("de"),
            &Termbase::from_entries([e]),
        );
        // Umlaut plural: not a stem form, accepted through the variant (and its inflection).
        assert_eq!(run(&c, "Trees grow.", "Bäume wachsen."), vec![]);
        assert_eq!(run(&c, "On trees.", "Auf Bäumen."), vec![]);
        // German inflection: Baum → Baumes.
        assert_eq!(
            run(&c, "The tree's root.", "Die Wurzel des Baumes."),
            vec![]
        );
        assert_eq!(run(&c, "A tree.", "Ein Strauch.").len(), 1);
    }

    #[test]
    fn agent_entry_deviation_is_a_warning_until_approved() {
        let mut agent = entry("Working memory", "工作记忆", &[]);
        agent.origin = Origin::Agent;
        let mut c = ctx(vec![agent, entry("Agent", "智能体", &[])]);
        let src = "An Agent keeps a working memory.";
        let tgt = "代理保留短期记忆。";
        let f = run(&c, src, tgt);
        let sev = |f: &[Finding], term: &str| {
            f.iter()
                .find(|f| f.message.contains(term))
                .map(|f| f.severity)
        };
        assert_eq!(f.len(), 2, "{f:?}");
        assert_eq!(sev(&f, "\"Working memory\""), Some(Severity::Warning));
        assert_eq!(
            sev(&f, "\"Agent\""),
            Some(Severity::Error),
            "house style stays an error"
        );
        assert!(
            f.iter()
                .any(|f| f.message.contains("no editor has approved it")),
            "{f:?}"
        );
        // Once the editor approved the termbase, the agent entry is enforced.
        c.agent_entries_approved = true;
        let f = run(&c, src, tgt);
        assert_eq!(sev(&f, "\"Working memory\""), Some(Severity::Error));
        // Reconciled and editor entries are errors from the start.
        for origin in [Origin::Reconciled, Origin::Editor] {
            let mut e = entry("Working memory", "工作记忆", &[]);
            e.origin = origin;
            let f = run(&ctx(vec![e]), src, tgt);
            assert_eq!(f[0].severity, Severity::Error, "{origin:?}");
        }
    }

    #[test]
    fn adherence_counts_units() {
        let c = ctx(vec![
            entry("Agent", "智能体", &[]),
            entry("tool", "工具", &[]),
        ]);
        let units = [
            UnitText {
                unit: "c-000",
                chapter: "c",
                source: "An agent. Agents.",
                target: Some("智能体。智能体。"),
            },
            UnitText {
                unit: "c-001",
                chapter: "c",
                source: "An agent.",
                target: Some("代理。"),
            },
            UnitText {
                unit: "c-002",
                chapter: "c",
                source: "An agent.",
                target: None,
            },
        ];
        let a = adherence(&c, &units);
        assert_eq!(a.len(), 2);
        assert_eq!(
            (
                a[0].units,
                a[0].occurrences,
                a[0].target_occurrences,
                a[0].units_correct,
                a[0].units_violating
            ),
            (2, 3, 2, 1, 1)
        );
        assert_eq!(a[0].violating_units, vec!["c-001"]);
        assert_eq!((a[1].units, a[1].units_correct), (0, 0));
    }
}
