//! Finding termbase source terms in a text.
//!
//! Aho-Corasick (leftmost-longest, ASCII case-insensitive) over every source term and its
//! simple English plural (`+s`, `+es`, `y→ies`), then a word-boundary check for terms that start
//! or end with an ASCII alphanumeric character, so "Agent" does not match inside "Agentic" or
//! "reagent". Terms in scripts without spaces (CJK) match anywhere.

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};

use super::Termbase;

/// An occurrence of an entry's source term.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Occurrence {
    /// Index of the entry in the termbase.
    pub entry: usize,
    /// Byte offsets of the match in the text.
    pub start: usize,
    pub end: usize,
}

/// A compiled matcher for one termbase.
pub struct Matcher {
    ac: Option<AhoCorasick>,
    /// The same patterns with standard semantics, for [`Matcher::find_among`]; built on first use.
    overlapping: std::sync::OnceLock<Option<AhoCorasick>>,
    patterns: Vec<String>,
    /// Pattern index → entry index.
    pattern_entry: Vec<usize>,
}

/// Leftmost-longest selection among overlapping matches `(start, end, pattern)`: the match that
/// starts first wins, then the longest, then the lowest pattern index; matches overlapping a
/// selected one are dropped. This is what an Aho-Corasick automaton built with
/// `MatchKind::LeftmostLongest` over the same patterns reports, so one overlapping search can
/// stand in for an automaton over any subset of the patterns (see [`Matcher::find_among`]).
pub fn leftmost_longest(mut matches: Vec<(usize, usize, usize)>) -> Vec<(usize, usize, usize)> {
    matches.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)).then(a.2.cmp(&b.2)));
    let mut out = Vec::with_capacity(matches.len());
    let mut end = 0;
    for m in matches {
        if m.0 >= end && m.1 > m.0 {
            end = m.1;
            out.push(m);
        }
    }
    out
}

/// Surface forms searched for a source term: the term and its simple plurals.
pub fn surface_forms(term: &str) -> Vec<String> {
    let t = term.trim();
    let mut forms = vec![t.to_string()];
    if t.chars().last().is_some_and(|c| c.is_ascii_alphabetic()) {
        let lower = t.to_ascii_lowercase();
        if lower.ends_with('y')
            && !lower.ends_with("ay")
            && !lower.ends_with("ey")
            && !lower.ends_with("oy")
        {
            forms.push(format!("{}ies", &t[..t.len() - 1]));
        } else if lower.ends_with('s')
            || lower.ends_with('x')
            || lower.ends_with("ch")
            || lower.ends_with("sh")
        {
            forms.push(format!("{t}es"));
        } else {
            forms.push(format!("{t}s"));
        }
    }
    forms
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Whether the match `s..e` of `bytes` sits on word boundaries (only checked on the sides where
/// the term itself starts or ends with a word character).
fn on_boundaries(bytes: &[u8], s: usize, e: usize) -> bool {
    let left_ok = s == 0 || !is_word_byte(bytes[s - 1]) || !is_word_byte(bytes[s]);
    let right_ok = e == bytes.len() || !is_word_byte(bytes[e]) || !is_word_byte(bytes[e - 1]);
    left_ok && right_ok
}

/// The matcher a [`Termbase`] keeps for itself ([`Termbase::matcher`]): the last one built,
/// with the key of the source terms it was built from, so an entry list changed after the
/// build is noticed. Building an automaton for hundreds of terms costs far more than a search,
/// and prompts and QA ask the same termbase again and again. Clones share the matcher; it is
/// no part of the termbase's value (always equal, never serialised, not shown by `Debug`).
#[derive(Default)]
pub(crate) struct MatcherSlot(std::sync::Mutex<Option<(u64, std::sync::Arc<Matcher>)>>);

impl MatcherSlot {
    /// The matcher for `tb` (whose slot this is): the kept one when it was built from the same
    /// source terms (a SipHash of them, std's `DefaultHasher`), else a new one, kept.
    pub(crate) fn get(&self, tb: &Termbase) -> std::sync::Arc<Matcher> {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        for e in &tb.entries {
            e.source.hash(&mut h);
        }
        let key = h.finish();
        // A lock poisoned by a panic elsewhere is taken over: every entry is written in one
        // assignment, so what the lock holds is whole.
        if let Some((k, m)) = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .as_ref()
            && *k == key
        {
            return m.clone();
        }
        let m = std::sync::Arc::new(Matcher::new(tb));
        *self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some((key, m.clone()));
        m
    }
}

impl Clone for MatcherSlot {
    fn clone(&self) -> MatcherSlot {
        MatcherSlot(std::sync::Mutex::new(
            self.0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .clone(),
        ))
    }
}

impl PartialEq for MatcherSlot {
    fn eq(&self, _: &MatcherSlot) -> bool {
        true
    }
}

impl Eq for MatcherSlot {}

impl std::fmt::Debug for MatcherSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MatcherSlot")
    }
}

impl Matcher {
    /// The matcher for `tb`, kept by `tb` itself (see [`Termbase::matcher`]): built once per
    /// termbase and list of source terms, and shared by the termbase's clones.
    pub fn cached(tb: &Termbase) -> std::sync::Arc<Matcher> {
        tb.matcher()
    }

    /// A matcher over the source terms of `tb` (and their simple plurals), built now.
    pub fn new(tb: &Termbase) -> Matcher {
        let mut patterns = Vec::new();
        let mut pattern_entry = Vec::new();
        for (i, e) in tb.entries.iter().enumerate() {
            if e.source.trim().is_empty() {
                continue;
            }
            for f in surface_forms(&e.source) {
                patterns.push(f);
                pattern_entry.push(i);
            }
        }
        let ac = (!patterns.is_empty()).then(|| {
            AhoCorasickBuilder::new()
                .match_kind(MatchKind::LeftmostLongest)
                .ascii_case_insensitive(true)
                .build(&patterns)
                .expect("termbase patterns build")
        });
        Matcher {
            ac,
            overlapping: std::sync::OnceLock::new(),
            patterns,
            pattern_entry,
        }
    }

    /// Every entry whose term (or a plural) occurs in `text` on word boundaries, also inside a
    /// longer term's occurrence ("agent" in "agent loop"), as a mask over the entries.
    pub fn entries_in(&self, text: &str, n_entries: usize) -> Vec<bool> {
        let mut hit = vec![false; n_entries];
        let Some(ac) = self.overlapping() else {
            return hit;
        };
        let bytes = text.as_bytes();
        for m in ac.find_overlapping_iter(text) {
            if on_boundaries(bytes, m.start(), m.end()) {
                hit[self.pattern_entry[m.pattern().as_usize()]] = true;
            }
        }
        hit
    }

    /// The automaton with standard (overlapping) semantics, built on first use.
    fn overlapping(&self) -> Option<&AhoCorasick> {
        self.overlapping
            .get_or_init(|| {
                (!self.patterns.is_empty()).then(|| {
                    AhoCorasickBuilder::new()
                        .match_kind(MatchKind::Standard)
                        .ascii_case_insensitive(true)
                        .build(&self.patterns)
                        .expect("termbase patterns build")
                })
            })
            .as_ref()
    }

    /// What [`Matcher::find_all`] would report for a matcher built over only the entries for
    /// which `keep(entry index)` is true (indices stay those of the full termbase). One
    /// overlapping search over every pattern, then [`leftmost_longest`] among the kept ones:
    /// cheaper than building an automaton per subset, which the glossary check would otherwise
    /// do for every unit.
    pub fn find_among(&self, text: &str, keep: impl Fn(usize) -> bool) -> Vec<Occurrence> {
        let Some(ac) = self.overlapping() else {
            return Vec::new();
        };
        let all: Vec<(usize, usize, usize)> = ac
            .find_overlapping_iter(text)
            .filter(|m| keep(self.pattern_entry[m.pattern().as_usize()]))
            .map(|m| (m.start(), m.end(), m.pattern().as_usize()))
            .collect();
        let bytes = text.as_bytes();
        leftmost_longest(all)
            .into_iter()
            .filter(|&(s, e, _)| on_boundaries(bytes, s, e))
            .map(|(s, e, p)| Occurrence {
                entry: self.pattern_entry[p],
                start: s,
                end: e,
            })
            .collect()
    }

    /// All non-overlapping occurrences in `text` that sit on word boundaries.
    pub fn find_all(&self, text: &str) -> Vec<Occurrence> {
        let Some(ac) = &self.ac else {
            return Vec::new();
        };
        let bytes = text.as_bytes();
        ac.find_iter(text)
            .filter(|m| on_boundaries(bytes, m.start(), m.end()))
            .map(|m| Occurrence {
                entry: self.pattern_entry[m.pattern().as_usize()],
                start: m.start(),
                end: m.end(),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::termbase::{Entry, Origin};

    fn tb(terms: &[&str]) -> Termbase {
        Termbase::from_entries(terms.iter().map(|s| Entry {
            source: s.to_string(),
            target: "x".into(),
            note: String::new(),
            origin: Origin::HouseStyle,
            forbidden: Vec::new(),
            variants: Vec::new(),
        }))
    }

    #[test]
    fn word_boundaries_and_plurals() {
        let m = Matcher::new(&tb(&["Agent", "policy", "context window"]));
        let text = "agents and an Agent; reagent, Agentic; policies; the Context Window.";
        let found: Vec<&str> = m
            .find_all(text)
            .iter()
            .map(|o| &text[o.start..o.end])
            .collect();
        assert_eq!(found, vec!["agents", "Agent", "policies", "Context Window"]);
    }

    #[test]
    fn cjk_terms_match_anywhere() {
        let m = Matcher::new(&tb(&["智能体"]));
        assert_eq!(m.find_all("这是智能体系统").len(), 1);
    }

    #[test]
    fn plural_forms() {
        assert_eq!(surface_forms("box"), vec!["box", "boxes"]);
        assert_eq!(surface_forms("key"), vec!["key", "keys"]);
        assert_eq!(surface_forms("LLM"), vec!["LLM", "LLMs"]);
        assert_eq!(surface_forms("智能体"), vec!["智能体"]);
    }

    #[test]
    fn find_among_picks_longest_of_the_subset() {
        let m = Matcher::new(&tb(&["agent", "agent loop", "loop"]));
        let text = "The agent loop runs; an agent waits in a loop.";
        let all: Vec<&str> = m
            .find_all(text)
            .iter()
            .map(|o| &text[o.start..o.end])
            .collect();
        assert_eq!(all, vec!["agent loop", "agent", "loop"]);
        // Without "agent loop", the shorter terms inside it are found.
        let sub = m.find_among(text, |e| e != 1);
        let got: Vec<(usize, &str)> = sub
            .iter()
            .map(|o| (o.entry, &text[o.start..o.end]))
            .collect();
        assert_eq!(
            got,
            vec![(0, "agent"), (2, "loop"), (0, "agent"), (2, "loop")]
        );
    }

    proptest::proptest! {
        /// `find_among` over a subset equals a matcher built over that subset only, with the
        /// subset's indices mapped back to the full termbase.
        #[test]
        fn find_among_equals_a_subset_matcher(
            terms in proptest::collection::vec("[ab]{1,3}( [ab]{1,2})?", 1..8),
            mask in proptest::collection::vec(proptest::bool::ANY, 8),
            text in "[abAB ,s]{0,60}",
        ) {
            let full = tb(&terms.iter().map(String::as_str).collect::<Vec<_>>());
            let m = Matcher::new(&full);
            let keep = |i: usize| mask[i % mask.len()];
            let kept: Vec<usize> = (0..full.entries.len()).filter(|&i| keep(i)).collect();
            let sub = Termbase::new(kept.iter().map(|&i| full.entries[i].clone()).collect());
            let want: Vec<Occurrence> = Matcher::new(&sub)
                .find_all(&text)
                .into_iter()
                .map(|o| Occurrence { entry: kept[o.entry], ..o })
                .collect();
            proptest::prop_assert_eq!(m.find_among(&text, keep), want);
        }
    }
}
