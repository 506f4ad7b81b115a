//! Translation memory in a campaign: a unit whose source text is in the memory (the campaign's
//! `memory` TMX files, or a TMX given to `booktr import`) gets the stored translation as its
//! first translation, recorded like a model answer (a result file and a `call_finished` journal
//! line) but with zero usage, no request, and `origin: memory` naming the file and `tuid`.
//! QA checks it like any translation; a unit with QA errors is revised as usual.
//!
//! A unit with no exact match but fuzzy ones, for the whole unit or for its sentences
//! ([`fuzzy`]), gets them as references in its Translation prompt, with their match
//! percentages; a fuzzy match is never copied as the
//! translation. The report counts fuzzy matches by band ([`fuzzy_bands`]).

use crate::campaign::core::Campaign;
use crate::campaign::core::manager::{Action, translate_key};
use crate::campaign::core::state::State;
use crate::campaign::core::store::{Output, ResultFile, ResultOrigin, Store};
use crate::interchange::memory::{FuzzyMatch, Hit, Memory};

/// The memory result for `action` when it is a first translation whose source the campaign's
/// memory (its `memory` files) holds.
pub fn hit(c: &Campaign, action: &Action) -> Option<ResultFile> {
    hit_in(c, action, &c.memory)
}

/// See [`hit`], with an explicit memory.
pub fn hit_in(c: &Campaign, action: &Action, memory: &Memory) -> Option<ResultFile> {
    let Action::Translate { unit, fp, round: 0 } = action else {
        return None;
    };
    let u = &c.units[*unit];
    let found = memory.lookup_joined(c.source_text(u))?;
    Some(result(c, u, fp, &found))
}

/// The result file recording memory hit `hit` as the round-0 translation of unit `u`
/// (fingerprint `fp`): the stored text with the unit's own surrounding whitespace and line
/// endings.
pub fn result(c: &Campaign, u: &crate::book::Unit, fp: &str, hit: &Hit) -> ResultFile {
    let output = Output::Translation {
        round: 0,
        text: crate::interchange::surround_like(c.source_text(u), &hit.target),
        cleanup: Default::default(),
        reasoning_chars: 0,
        joined_from: Vec::new(),
    };
    ResultFile::local(
        translate_key(fp, 0),
        &u.id,
        output,
        Some(ResultOrigin::Memory {
            file: hit.file.clone(),
            tuid: hit.id.clone(),
        }),
    )
}

/// Gives every prose unit that has no first translation yet (and no hand edit, and was not
/// split) the translation `memory` holds for its source, recorded as a memory result with zero
/// usage. Returns the unit ids filled.
///
/// Errors: I/O while writing results or the journal.
pub fn apply_memory(
    c: &Campaign,
    store: &mut Store,
    state: &mut State,
    memory: &Memory,
) -> anyhow::Result<Vec<String>> {
    let mut filled = Vec::new();
    for u in c.prose_units() {
        let Some(fp) = state.fp(&u.id).map(String::from) else {
            continue;
        };
        if state.translation_at(&u.id, 0).is_some()
            || state.human_edit(&u.id).is_some()
            || state.splits().contains_key(&fp)
        {
            continue;
        }
        let Some(hit) = memory.lookup_joined(c.source_text(u)) else {
            continue;
        };
        let result = result(c, u, &fp, &hit);
        // No Manager runs during an import: no context is measured (0, as always recorded).
        crate::campaign::core::commit::record_result(c, store, state, result, |_| 0)?;
        filled.push(u.id.clone());
    }
    Ok(filled)
}

/// Most fuzzy references one Translation prompt carries (the best ones), so that the prompt
/// stays bounded for a long unit.
pub const MAX_FUZZY_REFERENCES: usize = 5;

/// The fuzzy matches to give unit `u`'s Translation prompt as references, best first, at most
/// [`MAX_FUZZY_REFERENCES`]: the campaign memory's best fuzzy match of the whole source
/// ([`Memory::fuzzy`]), or else (a memory written at sentence level) the best fuzzy match of
/// each of its sentences ([`crate::interchange::segments::sentences`]). None when the memory
/// has an exact match for the unit (that one is used as the translation itself). HTML
/// comments are removed from the references, as from the unit text sent.
pub fn fuzzy(c: &Campaign, u: &crate::book::Unit) -> Vec<FuzzyMatch> {
    fuzzy_text(c, c.source_text(u))
}

/// [`fuzzy`] for any source text of the campaign (a part of a unit sent alone).
pub fn fuzzy_text(c: &Campaign, source: &str) -> Vec<FuzzyMatch> {
    if c.memory.is_empty() || c.memory.lookup_joined(source).is_some() {
        return Vec::new();
    }
    let mut found: Vec<FuzzyMatch> = match c.memory.fuzzy(source) {
        Some(f) => vec![f],
        None => {
            let pieces = crate::interchange::segments::sentences(source, &c.plan.source_lang.code);
            let mut v: Vec<FuzzyMatch> = Vec::new();
            for r in pieces.into_iter().flatten() {
                if let Some(f) = c.memory.fuzzy(&source[r])
                    && !v.iter().any(|x| x.id == f.id)
                {
                    v.push(f);
                }
            }
            v
        }
    };
    found.sort_by_key(|f| std::cmp::Reverse(f.percent));
    found.truncate(MAX_FUZZY_REFERENCES);
    for f in &mut found {
        f.source = crate::agents::mask::strip_comments(&f.source);
        f.target = crate::agents::mask::strip_comments(&f.target);
    }
    found
}

/// Fuzzy translation-memory matches counted by the bands CAT tools report, in percent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FuzzyBands {
    /// Matches of 75–84%.
    #[serde(rename = "75-84")]
    pub low: usize,
    /// Matches of 85–94%.
    #[serde(rename = "85-94")]
    pub mid: usize,
    /// Matches of 95–99%.
    #[serde(rename = "95-99")]
    pub high: usize,
}

impl FuzzyBands {
    /// Counts one match of `percent` in its band (below 75 or 100 counts nowhere).
    pub fn add(&mut self, percent: u8) {
        match percent {
            75..=84 => self.low += 1,
            85..=94 => self.mid += 1,
            95..=99 => self.high += 1,
            _ => {}
        }
    }

    /// All matches counted.
    pub fn total(&self) -> usize {
        self.low + self.mid + self.high
    }
}

/// The fuzzy matches given as references ([`fuzzy`]) to the Translation prompts of the
/// campaign's prose units whose first translation was a model's (not a memory hit, not a hand
/// edit), by band: each reference counts once.
pub fn fuzzy_bands(c: &Campaign, s: &State) -> FuzzyBands {
    let mut bands = FuzzyBands::default();
    if c.memory.is_empty() {
        return bands;
    }
    for u in c.prose_units() {
        // A carried edit (block memory's editor's or seeded blocks) still had its other
        // blocks translated by a model.
        if s.is_memory_hit(&u.id) || (s.human_edit(&u.id).is_some() && !s.is_carried(&u.id)) {
            continue;
        }
        for f in fuzzy(c, u) {
            bands.add(f.percent);
        }
    }
    bands
}
