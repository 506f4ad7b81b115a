//! A translation memory: unit sources mapped to stored translations, loaded from TMX files.
//!
//! A match is exact on the unit's source text after whitespace normalisation (every run of
//! whitespace, line breaks included, counts as one space; leading and trailing whitespace is
//! ignored), so a memory written from a campaign on the same book matches every unchanged unit
//! even if line endings or wrapping changed. A memory written at sentence level (booktr's TMX
//! since sentence segments, or a CAT tool's) also matches a unit exactly when each of its
//! blocks, or else each sentence of the block ([`super::segments::sentences`]), is in the
//! memory: the stored pieces joined in order are its translation ([`Memory::lookup_joined`]).
//! Only an exact match is reused as a translation: a reused translation must be the
//! translation of exactly this text.
//!
//! **Fuzzy matches** ([`Memory::fuzzy`]) are never reused: the best stored source that is
//! similar but not identical (at least [`FUZZY_MIN_PERCENT`]) goes into the unit's
//! Translation prompt as a reference. Similarity is the usual CAT-tool edit-distance score
//! over the whitespace-normalised texts ([`normalize`]): `100 × (1 − Levenshtein distance /
//! length of the longer text)`, counted in characters (Unicode scalar values), rounded down
//! ([`similarity`], computed by the `strsim` crate). The lookup is indexed so that a memory of
//! thousands of entries stays fast: only entries whose length can reach the threshold (a
//! length ratio of at least 0.75) and that share character trigrams with the text are
//! considered; each gets an upper bound of its score from the trigrams it shares (one edit
//! changes at most three trigrams; the q-gram lemma of Ukkonen, 1992) and the length
//! difference; candidates whose bound is under the threshold are dropped, and the distance is
//! computed in bound order, stopping when no remaining bound beats the best score found (at
//! most [`FUZZY_CANDIDATES`] distances per lookup).
//!
//! A memory remembers which of its files carry the rehearsal mark and which stored translations
//! look like pseudo text ([`super::rehearsal`]); the campaign refuses or warns about them.

use std::collections::HashMap;
use std::path::Path;

use super::{FileError, tmx};
use crate::lang::Lang;

/// A stored translation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    pub target: String,
    /// The memory file it came from (as the user named it).
    pub file: String,
    /// The `tuid` (or `line N`) of its translation unit.
    pub id: String,
}

/// Normalised source text → stored translation. The first entry of a source wins.
#[derive(Debug, Clone, Default)]
pub struct Memory {
    map: HashMap<String, Hit>,
    /// Files loaded that carry the rehearsal mark ([`super::rehearsal`]), as the user named
    /// them.
    rehearsal_files: Vec<String>,
    /// BCP 47 code of the memory's source language (empty: English rules), for cutting a unit
    /// into sentences in [`Memory::lookup_joined`].
    source_lang: String,
    /// The fuzzy index: normalised sources in insertion order with their length in chars, and
    /// character trigram → indexes into it.
    fuzzy_keys: Vec<(String, usize)>,
    trigrams: HashMap<[char; 3], Vec<u32>>,
}

/// The lowest similarity, in percent, of a fuzzy match: the usual lower bound of the fuzzy
/// bands CAT tools report (75–84, 85–94, 95–99).
pub const FUZZY_MIN_PERCENT: u8 = 75;

/// Most candidates [`Memory::fuzzy`] scores by edit distance in one lookup (best upper bound
/// first), which bounds a lookup's time on a large memory.
pub const FUZZY_CANDIDATES: usize = 12;

/// A stored source similar to a text, and its translation (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FuzzyMatch {
    /// The stored source, whitespace-normalised.
    pub source: String,
    pub target: String,
    /// Similarity in percent, [`FUZZY_MIN_PERCENT`]..=99.
    pub percent: u8,
    /// The memory file it came from (as the user named it).
    pub file: String,
    /// The `tuid` (or `line N`) of its translation unit.
    pub id: String,
}

/// The similarity of two texts in percent (see the module docs): 100 for equal normalised
/// texts, else `floor(100 × (1 − distance / longer length))`, at most 99.
pub fn similarity(a: &str, b: &str) -> u8 {
    let (a, b) = (normalize(a), normalize(b));
    if a == b {
        return 100;
    }
    let score = strsim::normalized_levenshtein(&a, &b);
    ((score * 100.0 + 1e-9).floor() as u8).min(99)
}

/// The distinct character trigrams of `text`.
fn trigrams(text: &str) -> std::collections::HashSet<[char; 3]> {
    let chars: Vec<char> = text.chars().collect();
    chars.windows(3).map(|w| [w[0], w[1], w[2]]).collect()
}

/// The key a source text is matched under: whitespace runs collapsed to one space, trimmed.
pub fn normalize(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

impl Memory {
    /// Loads TMX files `(path, display name)` for `source` → `target`.
    ///
    /// Errors: unreadable, non-UTF-8 or malformed file, naming the file and line.
    pub fn load(
        files: &[(&Path, &str)],
        source: &Lang,
        target: &Lang,
    ) -> Result<Memory, FileError> {
        let mut m = Memory {
            source_lang: source.code.clone(),
            ..Memory::default()
        };
        for (path, display) in files {
            let bytes = std::fs::read(path).map_err(|e| {
                FileError::new(
                    display,
                    None,
                    format!("cannot read translation memory: {e}"),
                )
            })?;
            let text = super::utf8(&bytes, display)?;
            m.add(tmx::read(text, display, source, target)?, display);
            if super::rehearsal::is_marked(super::Format::Tmx, &bytes) {
                m.rehearsal_files.push(display.to_string());
            }
        }
        Ok(m)
    }

    /// Every stored (whitespace-normalised source, translation) pair, in no order: what the
    /// memory seeds block by block ([`super::seed`]).
    pub fn pairs(&self) -> Vec<(String, String)> {
        self.map
            .iter()
            .map(|(k, h)| (k.clone(), h.target.clone()))
            .collect()
    }

    /// Adds pairs read from `file`; sources already present keep their first translation.
    pub fn add(&mut self, pairs: Vec<tmx::ReadPair>, file: &str) {
        for p in pairs {
            let key = normalize(&p.source);
            if key.is_empty() || p.target.trim().is_empty() {
                continue;
            }
            if self.map.contains_key(&key) {
                continue;
            }
            let n = self.fuzzy_keys.len() as u32;
            for t in trigrams(&key) {
                self.trigrams.entry(t).or_default().push(n);
            }
            self.fuzzy_keys.push((key.clone(), key.chars().count()));
            self.map.insert(
                key,
                Hit {
                    target: p.target,
                    file: file.to_string(),
                    id: p.id,
                },
            );
        }
    }

    /// The stored translation of `source`, if any.
    pub fn lookup(&self, source: &str) -> Option<&Hit> {
        if self.map.is_empty() {
            return None;
        }
        self.map.get(&normalize(source))
    }

    /// The best fuzzy match of `source` (see the module docs): the most similar stored source
    /// that is not identical after normalisation and reaches [`FUZZY_MIN_PERCENT`]; the first
    /// stored of equally similar ones. `None` when there is none.
    pub fn fuzzy(&self, source: &str) -> Option<FuzzyMatch> {
        let key = normalize(source);
        let n = key.chars().count();
        if self.fuzzy_keys.is_empty() || n == 0 {
            return None;
        }
        // A score of at least 75% needs the shorter text to be at least 0.75 of the longer.
        let fits = |m: usize| 4 * n.min(m) >= 3 * n.max(m);
        // Shared trigrams per entry, counted in a dense array (faster than a map on a memory
        // of thousands of entries); `touched` lists the entries counted.
        let query_trigrams = trigrams(&key);
        let mut counts = vec![0u32; self.fuzzy_keys.len()];
        let mut touched: Vec<u32> = Vec::new();
        for t in &query_trigrams {
            for &i in self.trigrams.get(t).map_or(&[][..], |v| v.as_slice()) {
                let c = &mut counts[i as usize];
                if *c == 0 {
                    if !fits(self.fuzzy_keys[i as usize].1) {
                        continue;
                    }
                    touched.push(i);
                }
                *c += 1;
            }
        }
        // Texts under three characters have no trigram: compare them with every entry that fits.
        if n < 3 {
            touched.extend(
                (0..self.fuzzy_keys.len() as u32).filter(|&i| fits(self.fuzzy_keys[i as usize].1)),
            );
        }
        let shared = touched
            .into_iter()
            .map(|i| (i, counts[i as usize] as usize));
        // An upper bound of each candidate's score: one edit changes at most three trigram
        // occurrences, so `d >= (trigrams of the text - shared) / 3`, and `d >= |n - m|`.
        let q = query_trigrams.len();
        let bound = |shared: usize, m: usize| -> u8 {
            let d = (q.saturating_sub(shared)).div_ceil(3).max(n.abs_diff(m));
            let longer = n.max(m) as f64;
            (((1.0 - d as f64 / longer) * 100.0 + 1e-9).floor().max(0.0) as u8).min(99)
        };
        let mut ranked: Vec<(u8, usize, u32)> = shared
            .map(|(i, sh)| (bound(sh, self.fuzzy_keys[i as usize].1), sh, i))
            .filter(|&(b, _, _)| b >= FUZZY_MIN_PERCENT)
            .collect();
        ranked.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)).then(a.2.cmp(&b.2)));
        let mut best: Option<(u8, u32)> = None;
        for &(upper, _, i) in ranked.iter().take(FUZZY_CANDIDATES) {
            // No later candidate can beat the best found (bounds only decrease).
            if best.is_some_and(|(bp, _)| upper < bp) {
                break;
            }
            let stored = &self.fuzzy_keys[i as usize].0;
            if *stored == key {
                continue;
            }
            let p = similarity(stored, &key);
            if p >= FUZZY_MIN_PERCENT && best.is_none_or(|(bp, bi)| p > bp || (p == bp && i < bi)) {
                best = Some((p, i));
            }
        }
        let (percent, i) = best?;
        let source = self.fuzzy_keys[i as usize].0.clone();
        let hit = &self.map[&source];
        Some(FuzzyMatch {
            target: hit.target.clone(),
            percent,
            file: hit.file.clone(),
            id: hit.id.clone(),
            source,
        })
    }

    /// The stored translation of `source` ([`Memory::lookup`]), or else, when `source` has
    /// several blocks or sentences, the joined translations of its pieces when every piece is
    /// stored: each block whole, else each sentence of the block, cut by
    /// [`super::segments::sentences`] in the memory's source language. A joined hit names the
    /// first piece's file and the `tuid`s of all pieces, comma-separated.
    pub fn lookup_joined(&self, source: &str) -> Option<Hit> {
        if let Some(h) = self.lookup(source) {
            return Some(h.clone());
        }
        if self.map.is_empty() {
            return None;
        }
        let blocks = super::segments::sentences(source, &self.source_lang);
        if blocks.len() == 1 && blocks[0].len() == 1 {
            return None;
        }
        let mut found: Vec<&Hit> = Vec::new();
        for block in &blocks {
            let whole = block[0].start..block[block.len() - 1].end;
            if source[whole.clone()].trim().is_empty() {
                continue;
            }
            if let Some(h) = self.lookup(&source[whole]) {
                found.push(h);
                continue;
            }
            for r in block {
                if source[r.clone()].trim().is_empty() {
                    continue;
                }
                found.push(self.lookup(&source[r.clone()])?);
            }
        }
        let first = found.first()?;
        Some(Hit {
            target: found.iter().map(|h| h.target.as_str()).collect(),
            file: first.file.clone(),
            id: found
                .iter()
                .map(|h| h.id.as_str())
                .collect::<Vec<_>>()
                .join(","),
        })
    }

    /// The files loaded by [`Memory::load`] that carry the rehearsal mark (exports of a pseudo
    /// campaign), in load order.
    pub fn rehearsal_files(&self) -> &[String] {
        &self.rehearsal_files
    }

    /// The stored translations that look like the pseudo generator's text
    /// ([`super::rehearsal::looks_pseudo`]) although their file carries no rehearsal mark,
    /// sorted by file and id.
    pub fn pseudo_looking(&self) -> Vec<&Hit> {
        let mut v: Vec<&Hit> = self
            .map
            .values()
            .filter(|h| !self.rehearsal_files.contains(&h.file))
            .filter(|h| super::rehearsal::looks_pseudo(&h.target))
            .collect();
        v.sort_by(|a, b| (&a.file, &a.id).cmp(&(&b.file, &b.id)));
        v
    }

    /// Number of distinct sources.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(id: &str, s: &str, t: &str) -> tmx::ReadPair {
        tmx::ReadPair {
            id: id.into(),
            source: s.into(),
            target: t.into(),
        }
    }

    #[test]
    fn exact_match_after_whitespace_normalisation() {
        let mut m = Memory::default();
        m.add(
            vec![
                pair(
                    "a",
                    "An Agent\r\n  calls a tool.\n\n",
                    "智能体调用工具。\n\n",
                ),
                pair("b", "An Agent calls a tool.", "第二个不覆盖第一个"),
                pair("c", "   ", "空"),
                pair("d", "Empty target.", " "),
            ],
            "m.tmx",
        );
        assert_eq!(m.len(), 1);
        let hit = m.lookup("An Agent calls\na tool.").unwrap();
        assert_eq!((hit.id.as_str(), hit.file.as_str()), ("a", "m.tmx"));
        assert!(
            m.lookup("An Agent calls a tool").is_none(),
            "no fuzzy match"
        );
        assert!(m.lookup("Empty target.").is_none());
    }

    #[test]
    fn similarity_is_one_minus_edit_distance_over_the_longer_length() {
        assert_eq!(
            similarity("An agent\n calls a tool.", "An agent calls a tool."),
            100
        );
        // 1 edit over 20 chars: 95%.
        assert_eq!(
            similarity("abcdefghijklmnopqrst", "abcdefghijklmnopqrsX"),
            95
        );
        // 3 edits over 12 chars: 75%; 4: 66%.
        assert_eq!(similarity("abcdefghijkl", "abcdefghiXYZ"), 75);
        assert_eq!(similarity("abcdefghijkl", "abcdefghWXYZ"), 66);
        // Characters, not bytes.
        assert_eq!(similarity("智能体调用工具", "智能体调用方法"), 71);
    }

    #[test]
    fn fuzzy_match_is_similar_never_identical_and_above_the_threshold() {
        let mut m = Memory::default();
        m.add(
            vec![
                pair(
                    "a",
                    "The agent calls a tool and reads the result.",
                    "智能体调用工具并读取结果。",
                ),
                pair(
                    "b",
                    "The agent calls a tool and reads the results!",
                    "另一个",
                ),
                pair("c", "Completely different text about models.", "模型"),
            ],
            "m.tmx",
        );
        // Identical (after normalisation): an exact hit, not a fuzzy match; the nearest other
        // entry is the fuzzy one.
        let f = m
            .fuzzy("The agent  calls a tool and reads the result.")
            .unwrap();
        assert_eq!((f.id.as_str(), f.percent), ("b", 95));
        let f = m
            .fuzzy("The agent calls a tool and prints the result.")
            .unwrap();
        // `reads` → `prints`: 4 edits over 45 characters, 91%.
        assert_eq!(f.id, "a");
        assert_eq!(f.percent, 91);
        assert_eq!(f.target, "智能体调用工具并读取结果。");
        assert!(
            m.fuzzy("A model writes a poem about the sea today.")
                .is_none()
        );
        assert!(Memory::default().fuzzy("anything").is_none());
    }

    /// Real text: every unit of the corpus's first English chapter in a memory, each one
    /// lightly edited is found again as a fuzzy match of itself (one word changed), and an
    /// unrelated unit is not.
    #[test]
    fn fuzzy_lookup_finds_edited_corpus_units() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../shared/corpus/ai-agent-book/en/chapter01.md");
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            // The corpus is optional (not in the repository); the synthetic tests above cover
            // the logic.
            Err(_) => return eprintln!("skipped: no corpus at {}", path.display()),
        };
        let blocks: Vec<&str> = crate::book::segment::top_level_blocks(&text)
            .into_iter()
            .map(|b| &text[b.range])
            .filter(|t| t.split_whitespace().count() >= 12 && !t.starts_with("```"))
            .collect();
        assert!(blocks.len() >= 20, "{}", blocks.len());
        let mut m = Memory::default();
        m.add(
            blocks
                .iter()
                .enumerate()
                .map(|(i, b)| pair(&format!("u{i}"), b, "译文"))
                .collect(),
            "m.tmx",
        );
        let mut found = 0;
        for (i, b) in blocks.iter().enumerate() {
            // Change the third word.
            let mut words: Vec<&str> = b.split_whitespace().collect();
            words[2] = "CHANGED";
            let edited = words.join(" ");
            if let Some(f) = m.fuzzy(&edited) {
                assert!(f.percent >= FUZZY_MIN_PERCENT && f.percent < 100);
                if f.id == format!("u{i}") {
                    found += 1;
                }
            }
        }
        // Every block of 12+ words survives a one-word change above 75%, and is its own match
        // unless the chapter repeats a near-identical block.
        assert!(
            found * 10 >= blocks.len() * 9,
            "{found} of {}",
            blocks.len()
        );
        assert!(m.fuzzy("Quantum chromodynamics describes the strong interaction between quarks and gluons in detail.").is_none());
    }

    #[test]
    fn a_sentence_level_memory_matches_a_whole_unit_exactly() {
        let mut m = Memory::default();
        m.add(
            vec![
                pair("u#s1", "An agent calls a tool. ", "智能体调用工具。"),
                pair("u#s2", "It reads the result.\n\n", "它读取结果。\n\n"),
                pair("u#s3", "One. Two.\n", "一二。\n"),
            ],
            "m.tmx",
        );
        let hit = m
            .lookup_joined("An agent calls a tool. It reads the result.\n\nOne. Two.\n")
            .unwrap();
        assert_eq!(hit.target, "智能体调用工具。它读取结果。\n\n一二。\n");
        assert_eq!(hit.id, "u#s1,u#s2,u#s3");
        // A sentence the memory lacks: no hit (a partial match is not an exact one).
        assert!(
            m.lookup_joined("An agent calls a tool. It reads the file.\n")
                .is_none()
        );
        assert_eq!(
            m.lookup_joined("One. Two.").map(|h| h.target),
            Some("一二。\n".to_string())
        );
    }
}
