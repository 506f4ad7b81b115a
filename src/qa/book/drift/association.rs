//! Renderings for the units that pass 1 left without one: (c) a rendering known from another
//! unit's evidence, then (d) the statistical association over the aligned segments (module
//! docs, "The association, in detail", and "Neighbours").

use std::collections::{HashMap, HashSet};

use rustc_hash::FxHashMap;

use super::alignment::{Contrast, NgramIndex, nested_terms, term_words};
use super::renderings::Cell;
use super::{Book, MIN_CONTRAST, REL_DICE, Terms, Vocabulary};
use crate::qa::view::words::{self, Words};

/// Credits (c) and (d) renderings in `cells`, and returns, per term, the renderings found only
/// by the association (d). The segment index is built once, when a first unit needs (d).
pub(super) fn credit(
    book: &Book,
    terms: &Terms,
    vocabulary: &Vocabulary,
    known: &[Vec<String>],
    cells: &mut [HashMap<usize, Cell>],
) -> Vec<HashSet<String>> {
    let nested = nested_terms(&terms.tracked);
    let mut index: Option<NgramIndex> = None;
    let mut statistical: Vec<HashSet<String>> = vec![HashSet::new(); terms.tracked.len()];
    let other_renderings: HashSet<&str> = terms
        .renderings
        .iter()
        .flatten()
        .map(String::as_str)
        .collect();
    for t in 0..terms.tracked.len() {
        let still = credit_known(book, &vocabulary.unit_words, &known[t], &mut cells[t]);
        if still.is_empty() {
            continue;
        }
        let idx = index.get_or_insert_with(|| {
            NgramIndex::build(
                &book.tu,
                &book.work,
                &terms.matcher,
                &book.ctx.target_lang,
                book.fold,
                &nested,
                vocabulary.known_words.as_ref(),
            )
        });
        let Some(sets) = Sets::of(idx, t, &cells[t]) else {
            continue;
        };
        let search = Search {
            idx,
            a: sets.contrast(),
            na: sets.na,
            term_lower: terms.tracked[t].term.to_lowercase(),
            other_renderings: &other_renderings,
        };
        let (chosen, d_star) = search.choose(&known[t], &terms.tracked[t].term, &still);
        let mut credited: HashSet<usize> = HashSet::new();
        let mut found: Vec<String> = Vec::new();
        for (k, d, g) in chosen {
            if d >= REL_DICE * d_star {
                let r = idx.strings[g as usize].clone();
                if !known[t].contains(&r) {
                    statistical[t].insert(r.clone());
                }
                if !found.contains(&r) {
                    found.push(r.clone());
                }
                credited.insert(k);
                cells[t].get_mut(&k).expect("cell").rendered.push(r);
            }
        }
        if book.segmented && !found.is_empty() {
            let left: Vec<usize> = still
                .iter()
                .copied()
                .filter(|k| !credited.contains(k))
                .collect();
            credit_found(book, &vocabulary.known_list, &found, &left, &mut cells[t]);
        }
    }
    statistical
}

/// Evidence (c): credits each unit of one term still without evidence with the known
/// rendering it writes most (ties to the longer); returns the units left without one, sorted.
fn credit_known(
    book: &Book,
    unit_words: &[Words],
    known: &[String],
    cells: &mut HashMap<usize, Cell>,
) -> Vec<usize> {
    let mut pending: Vec<usize> = cells
        .iter()
        .filter(|(_, c)| !c.kept && c.rendered.is_empty())
        .map(|(&k, _)| k)
        .collect();
    pending.sort_unstable();
    let mut still = Vec::new();
    for k in pending {
        let present = known
            .iter()
            .map(|r| (r, book.occurs(unit_words, k, r)))
            .filter(|(_, n)| *n > 0)
            .max_by_key(|(r, n)| (*n, r.chars().count()))
            .map(|(r, _)| r);
        match present {
            Some(r) => cells.get_mut(&k).expect("cell").rendered.push(r.clone()),
            None => still.push(k),
        }
    }
    still
}

/// A unit left without a rendering may write one found in the other units where the
/// dictionary joined it with a neighbour (预算用完时代理就停止: 时代|理 hides 代理); with the
/// renderings `found` as known words (one edge agreeing, as for the named ones) it is credited
/// with the one it writes most.
fn credit_found(
    book: &Book,
    known_list: &[&str],
    found: &[String],
    left: &[usize],
    cells: &mut HashMap<usize, Cell>,
) {
    let ac = words::known_automaton(
        known_list
            .iter()
            .copied()
            .chain(found.iter().map(String::as_str)),
    );
    for &k in left {
        let work = book.work[k];
        let ws = Words::from_raw(work, book.raw_bounds[k].clone(), ac.as_ref());
        if let Some(r) = found
            .iter()
            .map(|r| (r, ws.find(work, r).count()))
            .filter(|(_, n)| *n > 0)
            .max_by_key(|(r, n)| (*n, r.chars().count()))
            .map(|(r, _)| r.clone())
        {
            cells.get_mut(&k).expect("cell").rendered.push(r);
        }
    }
}

/// The segment sets of one term's association.
struct Sets {
    /// A: the segments whose source has the term, in units that do not only keep it.
    a: Vec<bool>,
    /// The segments where the term occurs only inside a longer tracked term (`assistant` in
    /// `assistant message`), left out of the contrast: their translations hold the term's
    /// rendering too, so counting them outside A would hide it.
    excl: Vec<bool>,
    na: usize,
    n_excl: usize,
}

impl Sets {
    /// The sets of term `t`, or `None` when A is empty or fewer than [`MIN_CONTRAST`] segments
    /// lie outside it (no rendering is guessed).
    fn of(idx: &NgramIndex, t: usize, cells: &HashMap<usize, Cell>) -> Option<Sets> {
        let a: Vec<bool> = (0..idx.seg_unit.len())
            .map(|s| {
                idx.seg_terms[s].binary_search(&t).is_ok()
                    && cells
                        .get(&(idx.seg_unit[s] as usize))
                        .is_some_and(|c| !c.kept || !c.rendered.is_empty())
            })
            .collect();
        let excl: Vec<bool> = (0..idx.seg_unit.len())
            .map(|s| !a[s] && idx.seg_nested[s].binary_search(&t).is_ok())
            .collect();
        let na = a.iter().filter(|&&x| x).count();
        let n_excl = excl.iter().filter(|&&x| x).count();
        if na == 0 || a.len() - na - n_excl < MIN_CONTRAST {
            return None;
        }
        Some(Sets {
            a,
            excl,
            na,
            n_excl,
        })
    }

    fn contrast(&self) -> Contrast<'_> {
        Contrast {
            a: &self.a,
            excl: &self.excl,
            n_excl: self.n_excl,
        }
    }
}

/// The search for one term's statistical renderings.
struct Search<'s> {
    idx: &'s NgramIndex,
    a: Contrast<'s>,
    na: usize,
    term_lower: String,
    /// The termbase's renderings of every term, never a statistical rendering of another.
    other_renderings: &'s HashSet<&'s str>,
}

impl Search<'_> {
    /// Per n-gram of A's segments, the segments of A and the excluded segments holding it:
    /// one pass over those segments' n-grams, where walking every candidate n-gram's whole
    /// posting list (twice) was most of the check's time on a book. Exact for every n-gram a
    /// segment lists (those in at least `MIN_JOINT` segments).
    fn counts(&self) -> (FxHashMap<u32, u32>, FxHashMap<u32, u32>) {
        let mut in_a: FxHashMap<u32, u32> = FxHashMap::default();
        let mut in_excl: FxHashMap<u32, u32> = FxHashMap::default();
        for s in 0..self.idx.seg_unit.len() {
            let counts = if self.a.a[s] {
                &mut in_a
            } else if self.a.excl[s] {
                &mut in_excl
            } else {
                continue;
            };
            for g in self.idx.seg_ngrams[s].iter() {
                *counts.entry(g).or_insert(0) += 1;
            }
        }
        (in_a, in_excl)
    }

    /// Each unit of `still`'s best n-gram (unit, Dice, n-gram), and the best association of
    /// any rendering of the term (`known`, or a unit's choice) for the relative threshold.
    fn choose(
        &self,
        known: &[String],
        term: &str,
        still: &[usize],
    ) -> (Vec<(usize, f64, u32)>, f64) {
        let idx = self.idx;
        let (in_a, in_excl) = self.counts();
        let mut memo: HashMap<u32, Option<f64>> = HashMap::new();
        let mut d_star = known
            .iter()
            .filter_map(|r| idx.ids.get(r.as_str()))
            .map(|&g| idx.dice(g, self.a, self.na))
            .fold(0.0f64, f64::max);
        let mut chosen: Vec<(usize, f64, u32)> = Vec::new();
        // Whether an n-gram is a neighbour's rendering rather than the term's (see
        // [`NgramIndex::neighbour_of`]), asked only of an n-gram that would become a unit's
        // choice.
        let term_word_ids: Vec<u32> = term_words(term)
            .iter()
            .filter_map(|w| idx.src_ids.get(w).copied())
            .collect();
        let mut neighbour: HashMap<u32, bool> = HashMap::new();
        for &k in still {
            let mut best: Option<(f64, usize, u32)> = None;
            let segs = idx.unit_segs[k].clone().filter(|&s| self.a.a[s]);
            for g in segs.flat_map(|s| idx.seg_ngrams[s].iter()) {
                let score = *memo
                    .entry(g)
                    .or_insert_with(|| self.score(g, &in_a, &in_excl));
                let Some(d) = score else { continue };
                let len = idx.strings[g as usize].chars().count();
                if self.better(best, d, len, g)
                    && !*neighbour
                        .entry(g)
                        .or_insert_with(|| idx.neighbour_of(g, self.a.a, &term_word_ids))
                {
                    best = Some((d, len, g));
                }
            }
            if let Some((d, _, g)) = best {
                d_star = d_star.max(d);
                chosen.push((k, d, g));
            }
        }
        (chosen, d_star)
    }

    /// The association of n-gram `g` with the term, `None` when it is another term's
    /// rendering, the term itself, or fails a threshold.
    fn score(
        &self,
        g: u32,
        in_a: &FxHashMap<u32, u32>,
        in_excl: &FxHashMap<u32, u32>,
    ) -> Option<f64> {
        let idx = self.idx;
        let s = idx.strings[g as usize].as_str();
        if self.other_renderings.contains(s) || s == self.term_lower {
            return None;
        }
        let joint = in_a.get(&g).copied().unwrap_or(0) as usize;
        let nb = idx.postings[g as usize].len() - in_excl.get(&g).copied().unwrap_or(0) as usize;
        debug_assert_eq!((joint, nb), (idx.joint(g, self.a.a), idx.count(g, self.a)));
        idx.association_of(joint, nb, self.a, self.na)
    }

    /// Whether n-gram `g` (Dice `d`, `len` chars) beats the best so far: a higher Dice, then
    /// the longer, then the first in string order.
    fn better(&self, best: Option<(f64, usize, u32)>, d: f64, len: usize, g: u32) -> bool {
        let strings = &self.idx.strings;
        match best {
            None => true,
            Some((bd, bl, bg)) => {
                d > bd + 1e-12
                    || ((d - bd).abs() <= 1e-12
                        && (len > bl || (len == bl && strings[g as usize] < strings[bg as usize])))
            }
        }
    }
}
