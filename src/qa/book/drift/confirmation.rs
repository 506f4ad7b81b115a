//! The rows of the term × unit table: each term's renderings grouped into labels (statistical
//! renderings cut wider folded into the rendering they contain, or into a piece every credited
//! unit writes), whether the term drifts, and whether that drift is confirmed (module docs,
//! "Confirmed drift").

use std::collections::{BTreeMap, HashMap, HashSet};

use super::renderings::{Cell, Cells};
use super::{Book, DriftRow, KEPT, MIN_STATISTICAL_UNITS, Terms, Tracked, UNIDENTIFIED};
use crate::qa::view::words::Words;
use crate::termbase::term_key;

/// One row per tracked term credited in some unit, in tracking order.
pub(super) fn rows(
    book: &Book,
    terms: &Terms,
    cells: &Cells,
    mut statistical: Vec<HashSet<String>>,
    unit_words: &[Words],
) -> Vec<DriftRow> {
    let unit_index: HashMap<&str, usize> = book
        .tu
        .iter()
        .enumerate()
        .map(|(k, (u, _))| (u.unit, k))
        .collect();
    let mut rows = Vec::new();
    for (t, tr) in terms.tracked.iter().enumerate() {
        if cells[t].is_empty() {
            continue;
        }
        let mut by_unit: Vec<(&usize, &Cell)> = cells[t].iter().collect();
        by_unit.sort_by_key(|(k, _)| **k);
        let table = Table {
            book,
            term: tr,
            by_unit,
        };
        let (row_cells, drifting) = table.label(&mut statistical[t]);
        let confirmed = confirmed(book, &row_cells, &statistical[t], unit_words, &unit_index);
        let acronym = is_acronym(&tr.term);
        let confirmed_drift = drifting
            && ((row_cells.contains_key(KEPT) && !confirmed.is_empty() && !acronym)
                || confirmed.len() >= 2);
        let entry = tr.entry.map(|i| &book.ctx.termbase.entries[i]);
        let suggested = match entry {
            Some(e) => Some(e.target.trim().to_string()),
            None => row_cells
                .iter()
                .filter(|(k, _)| *k != UNIDENTIFIED)
                .max_by(|a, b| a.1.len().cmp(&b.1.len()).then_with(|| b.0.cmp(a.0)))
                .map(|(k, _)| k.clone()),
        };
        let mut stat: Vec<String> = statistical[t]
            .iter()
            .filter(|r| row_cells.contains_key(*r))
            .cloned()
            .collect();
        stat.sort();
        rows.push(DriftRow {
            term: tr.term.clone(),
            in_glossary: entry.is_some(),
            statistical: stat,
            cells: row_cells,
            suggested,
            drifting,
            confirmed,
            confirmed_drift,
        });
    }
    rows
}

/// An acronym glossed on first use and kept afterwards (大语言模型（LLM）… LLM) follows the
/// usual convention: for acronyms only competing renderings are drift.
fn is_acronym(term: &str) -> bool {
    term.chars()
        .filter(|c| c.is_alphabetic())
        .all(|c| c.is_uppercase())
        && term.chars().count() <= 8
}

/// Confirmed renderings: named by the termbase, a gloss or a known rendering (not by the
/// association alone) and written, on word boundaries, in every unit credited with them. Only
/// a drift between confirmed forms (or the term kept) is confirmed.
fn confirmed(
    book: &Book,
    row_cells: &BTreeMap<String, Vec<String>>,
    statistical: &HashSet<String>,
    unit_words: &[Words],
    unit_index: &HashMap<&str, usize>,
) -> Vec<String> {
    row_cells
        .iter()
        .filter(|(label, ids)| {
            *label != KEPT
                && *label != UNIDENTIFIED
                && !statistical.contains(label.as_str())
                && ids.iter().all(|id| {
                    unit_index
                        .get(id.as_str())
                        .is_some_and(|&k| book.occurs(unit_words, k, label) > 0)
                })
        })
        .map(|(label, _)| label.clone())
        .collect()
}

/// One term's cells, in unit order, to be labelled.
struct Table<'t> {
    book: &'t Book<'t>,
    term: &'t Tracked,
    by_unit: Vec<(&'t usize, &'t Cell)>,
}

impl Table<'_> {
    /// The row's cells (label → unit ids) and whether the term drifts: first without the
    /// shared piece; if the term then drifts on statistical renderings alone, again with every
    /// rendering relabelled to the shared piece (added to `statistical`).
    fn label(&self, statistical: &mut HashSet<String>) -> (BTreeMap<String, Vec<String>>, bool) {
        // A statistical rendering that contains another rendering of the term is that
        // rendering cut wider (Chinese has no spaces to cut at): 来才道笔 is 来才 with the next
        // word, not a competing rendering.
        let all_rendered: HashSet<&str> = self
            .by_unit
            .iter()
            .flat_map(|(_, c)| c.rendered.iter().map(String::as_str))
            .collect();
        let shared = self.shared_piece(&all_rendered, statistical);
        let acronym = is_acronym(&self.term.term);
        // Units crediting each rendering.
        let mut uses: HashMap<&str, usize> = HashMap::new();
        for (_, c) in &self.by_unit {
            for r in &c.rendered {
                *uses.entry(r.as_str()).or_insert(0) += 1;
            }
        }
        let mut attempt = 0;
        loop {
            let relabel = if attempt == 0 {
                None
            } else {
                shared.as_deref()
            };
            if let Some(p) = relabel {
                statistical.insert(p.to_string());
            }
            let row_cells = self.cells(&all_rendered, &uses, statistical, relabel);
            let kept = row_cells.contains_key(KEPT);
            // A statistical rendering seen in fewer than MIN_STATISTICAL_UNITS units is too
            // weak to claim a competing rendering.
            let rendered = row_cells
                .iter()
                .filter(|(k, v)| {
                    *k != KEPT
                        && *k != UNIDENTIFIED
                        && (!statistical.contains(k.as_str()) || v.len() >= MIN_STATISTICAL_UNITS)
                })
                .count();
            let drifting = (kept && rendered >= 1 && !acronym) || rendered >= 2;
            if !drifting || kept || shared.is_none() || attempt == 1 {
                return (row_cells, drifting);
            }
            attempt += 1;
        }
    }

    /// When every rendering of the term is statistical and a piece of one of them (2
    /// characters or more) is written in every unit credited with one, the units share that
    /// rendering and the n-grams only cut it with different neighbours (`API level`: 小比普头,
    /// 形在普头 and 语硬 in units that all write 普头): one rendering, no drift. The longest such
    /// piece.
    fn shared_piece(
        &self,
        all_rendered: &HashSet<&str>,
        statistical: &HashSet<String>,
    ) -> Option<String> {
        let mut distinct: Vec<&str> = all_rendered.iter().copied().collect();
        distinct.sort_unstable();
        let all_statistical = distinct.iter().all(|r| statistical.contains(*r));
        if !all_statistical || distinct.len() < 2 {
            return None;
        }
        let credited: Vec<usize> = self
            .by_unit
            .iter()
            .filter(|(_, c)| !c.rendered.is_empty())
            .map(|(k, _)| **k)
            .collect();
        let mut pieces: Vec<String> = Vec::new();
        for r in &distinct {
            let chars: Vec<char> = r.chars().collect();
            for n in 2..=chars.len() {
                for w in chars.windows(n) {
                    pieces.push(w.iter().collect());
                }
            }
        }
        pieces.sort_by(|a, b| b.chars().count().cmp(&a.chars().count()).then(a.cmp(b)));
        pieces.dedup();
        let work = &self.book.work;
        pieces
            .into_iter()
            .find(|p| credited.iter().all(|&k| work[k].contains(p.as_str())))
    }

    /// The row's cells with each statistical rendering labelled by its group (or by `relabel`).
    fn cells(
        &self,
        all_rendered: &HashSet<&str>,
        uses: &HashMap<&str, usize>,
        stat: &HashSet<String>,
        relabel: Option<&str>,
    ) -> BTreeMap<String, Vec<String>> {
        let core = |r: &str| -> String {
            if !stat.contains(r) {
                return r.to_string();
            }
            if let Some(p) = relabel {
                return p.to_string();
            }
            let root = |r: &str| -> String {
                all_rendered
                    .iter()
                    .filter(|o| **o != r && r.contains(**o))
                    .min_by_key(|o| (o.chars().count(), **o))
                    .map_or_else(|| r.to_string(), |o| o.to_string())
            };
            // The group of renderings sharing this root is labelled by its most used member
            // (上下文窗口 over a 窗口 cut short in one unit).
            let mine = root(r);
            all_rendered
                .iter()
                .filter(|o| **o == mine || (stat.contains(**o) && root(o) == mine))
                .max_by_key(|o| (uses.get(**o).copied().unwrap_or(0), std::cmp::Reverse(**o)))
                .map_or(mine.clone(), |o| o.to_string())
        };
        let mut row_cells: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for &(&k, c) in &self.by_unit {
            let id = self.book.tu[k].0.unit.to_string();
            if c.kept {
                row_cells.entry(KEPT.into()).or_default().push(id.clone());
            }
            for r in &c.rendered {
                let r = core(r);
                let label = if term_key(&r) == term_key(&self.term.term) {
                    KEPT
                } else {
                    r.as_str()
                };
                let v = row_cells.entry(label.to_string()).or_default();
                if v.last() != Some(&id) {
                    v.push(id.clone());
                }
            }
            if !c.kept && c.rendered.is_empty() {
                row_cells.entry(UNIDENTIFIED.into()).or_default().push(id);
            }
        }
        row_cells
    }
}
