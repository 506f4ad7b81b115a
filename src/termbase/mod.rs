//! The termbase: glossary entries with their origin, and matching of entries against a text.
//! Glossary files (CSV, TSV, TBX) are read by the interchange layer; term candidates for a new
//! termbase are found by [`candidates`].
//!
//! House-style entries (from the campaign's `glossaries`) always win over entries proposed by
//! the Glossary agent: [`Termbase::merge`] drops any agent entry whose source term a house-style
//! entry already covers.

pub mod candidates;
pub mod inflect;
mod matcher;
pub mod vet;

use serde::{Deserialize, Serialize};

pub use matcher::{Matcher, leftmost_longest};

/// Where an entry came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// From a house-style glossary file: mandatory, never overridden.
    HouseStyle,
    /// Proposed by the Glossary agent: to be reviewed by an editor.
    Agent,
    /// Chosen by terminology reconciliation after QA found competing renderings.
    Reconciled,
    /// Added or changed by the editor at the glossary approval gate (`booktr approve`).
    Editor,
}

/// One glossary entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// Source-language term as it appears in the book (matching ignores ASCII case).
    pub source: String,
    /// Required target-language rendering.
    pub target: String,
    /// Free-form note for translators (may be empty).
    #[serde(default)]
    pub note: String,
    pub origin: Origin,
    /// Renderings QA must flag as errors (e.g. 代理 for "Agent" when the house style says 智能体).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub forbidden: Vec<String>,
    /// Other accepted renderings besides `target` (the `allowed`/`variants` column of a CSV,
    /// admitted terms of a TBX): inflected forms such as камнехранителям, or accepted
    /// synonyms. QA accepts any of them where `target` is required; prompts still name
    /// `target`. Absent in older state files (serde default: none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub variants: Vec<String>,
}

/// An ordered, de-duplicated set of entries (one per source term, compared case-insensitively).
/// Serialised as `{"entries": [...]}`; equality and `Debug` look at the entries only.
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Termbase {
    pub entries: Vec<Entry>,
    /// The matcher over the entries' source terms, built on first use ([`Termbase::matcher`]).
    #[serde(skip)]
    matcher: matcher::MatcherSlot,
}

impl std::fmt::Debug for Termbase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Termbase")
            .field("entries", &self.entries)
            .finish()
    }
}

/// The key two entries are the same term under: trimmed, ASCII-lower-cased source.
pub fn term_key(source: &str) -> String {
    source.trim().to_ascii_lowercase()
}

impl Termbase {
    /// A termbase of exactly `entries`, in their order (no de-duplication: see
    /// [`Termbase::from_entries`] for that).
    pub fn new(entries: Vec<Entry>) -> Termbase {
        Termbase {
            entries,
            matcher: Default::default(),
        }
    }

    /// The [`Matcher`] over this termbase's source terms. It is built on first use and kept by
    /// the termbase (clones share it); when `entries` changed since, a new one is built and
    /// kept. The same termbase is matched against every unit's prompt and QA, and building the
    /// automaton costs far more than a search.
    pub fn matcher(&self) -> std::sync::Arc<Matcher> {
        self.matcher.get(self)
    }

    /// Builds a termbase from entries, keeping the first entry for each source term.
    pub fn from_entries(entries: impl IntoIterator<Item = Entry>) -> Termbase {
        let mut tb = Termbase::default();
        let mut seen = std::collections::HashSet::new();
        for e in entries {
            if seen.insert(term_key(&e.source)) {
                tb.entries.push(e);
            }
        }
        tb
    }

    /// House-style entries first, then agent (or reconciled) entries for terms the house style
    /// does not cover. A proposed entry whose term contains a house-style term ("agent loop"
    /// with the house entry "agent") must carry the house rendering in its target ("智能体循环"
    /// for "智能体"; compared ignoring ASCII case); otherwise it contradicts the house style
    /// and is dropped, so the translator only sees the house entry. Returns the merged
    /// termbase and the number of proposed entries dropped because house style already fixes
    /// them.
    pub fn merge(house: &Termbase, proposed: &[Entry]) -> (Termbase, usize) {
        let before = house.entries.len() + proposed.len();
        let m = house.matcher();
        let agrees = |e: &Entry| {
            let target = e.target.to_lowercase();
            m.entries_in(&e.source, house.entries.len())
                .iter()
                .zip(&house.entries)
                .filter(|(hit, _)| **hit)
                .all(|(_, h)| {
                    h.target.trim().is_empty() || target.contains(&h.target.trim().to_lowercase())
                })
        };
        let tb = Termbase::from_entries(
            house
                .entries
                .iter()
                .cloned()
                .chain(proposed.iter().filter(|e| agrees(e)).cloned()),
        );
        let dropped = before - tb.entries.len();
        (tb, dropped)
    }

    /// Looks an entry up by source term (case-insensitive).
    pub fn get(&self, source: &str) -> Option<&Entry> {
        let key = term_key(source);
        self.entries.iter().find(|e| term_key(&e.source) == key)
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entries whose source term occurs in `text`, sorted by term (so the result, and
    /// every prompt and fingerprint built from it, does not depend on the termbase's order).
    /// A term inside a longer one counts: a unit about the "agent loop" still gets the entry
    /// for "agent", so a longer (possibly agent-proposed) entry never hides a house-style one
    /// from the translator.
    pub fn relevant_to(&self, text: &str) -> Vec<&Entry> {
        let hit = self.matcher().entries_in(text, self.entries.len());
        let mut out: Vec<&Entry> = self
            .entries
            .iter()
            .zip(hit)
            .filter_map(|(e, h)| h.then_some(e))
            .collect();
        out.sort_by_key(|e| term_key(&e.source));
        out
    }

    /// Count per origin, for reports.
    pub fn count_by_origin(&self) -> std::collections::BTreeMap<Origin, usize> {
        let mut m = std::collections::BTreeMap::new();
        for e in &self.entries {
            *m.entry(e.origin).or_insert(0) += 1;
        }
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(s: &str, t: &str, o: Origin) -> Entry {
        Entry {
            source: s.into(),
            target: t.into(),
            note: String::new(),
            origin: o,
            forbidden: Vec::new(),
            variants: Vec::new(),
        }
    }

    #[test]
    fn house_style_wins() {
        let house = Termbase::from_entries([e("Agent", "智能体", Origin::HouseStyle)]);
        let (tb, dropped) = Termbase::merge(
            &house,
            &[
                e("agent", "代理", Origin::Agent),
                e("Context", "上下文", Origin::Agent),
            ],
        );
        assert_eq!(dropped, 1);
        assert_eq!(tb.get("AGENT").unwrap().target, "智能体");
        assert_eq!(tb.get("context").unwrap().origin, Origin::Agent);
    }

    #[test]
    fn relevant_entries_only() {
        let tb = Termbase::from_entries([
            e("Agent", "智能体", Origin::HouseStyle),
            e("tool", "工具", Origin::Agent),
        ]);
        let r = tb.relevant_to("Agents are everywhere.");
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].source, "Agent");
    }

    #[test]
    fn a_longer_term_does_not_hide_a_shorter_one() {
        let tb = Termbase::from_entries([
            e("agent", "智能体", Origin::HouseStyle),
            e("agent calls", "智能体调用", Origin::Agent),
            e("call", "调用", Origin::Agent),
        ]);
        let r: Vec<&str> = tb
            .relevant_to("Count the agent calls.")
            .iter()
            .map(|e| e.source.as_str())
            .collect();
        assert_eq!(r, vec!["agent", "agent calls", "call"]);
        // Word boundaries still hold: nothing inside "reagent" or "recall".
        assert!(tb.relevant_to("A reagent; a recall.").is_empty());
    }

    #[test]
    fn merge_drops_proposals_that_contradict_a_house_term_inside_them() {
        let house = Termbase::from_entries([
            e("agent", "智能体", Origin::HouseStyle),
            e("API", "API", Origin::HouseStyle),
        ]);
        let proposed = [
            e("agent loop", "智能体循环", Origin::Agent),
            e("sub-agents", "子代理", Origin::Agent),
            e("API gateway", "api 网关", Origin::Agent),
            e("Agent", "代理", Origin::Agent),
            e("context window", "上下文窗口", Origin::Agent),
        ];
        let (tb, dropped) = Termbase::merge(&house, &proposed);
        let sources: Vec<&str> = tb.entries.iter().map(|e| e.source.as_str()).collect();
        assert_eq!(
            sources,
            vec![
                "agent",
                "API",
                "agent loop",
                "API gateway",
                "context window"
            ]
        );
        assert_eq!(
            dropped, 2,
            "sub-agents (代理 for 智能体) and the duplicate Agent"
        );
        assert_eq!(tb.get("agent").unwrap().target, "智能体");
    }

    /// Regression (the caches were process-wide statics): matchers were kept in a
    /// process-wide map keyed by a hash of the terms. Now each termbase keeps its own: built
    /// once, shared by clones, rebuilt when the entries change, and not part of the
    /// termbase's value (equality, JSON and `Debug` are as before).
    #[test]
    fn process_wide_matcher_cache_is_owned_by_the_termbase() {
        let tb = Termbase::from_entries([e("Agent", "智能体", Origin::HouseStyle)]);
        let m = tb.matcher();
        assert!(std::sync::Arc::ptr_eq(&m, &tb.matcher()));
        assert!(std::sync::Arc::ptr_eq(&m, &tb.clone().matcher()));
        let other = Termbase::from_entries([e("Agent", "智能体", Origin::HouseStyle)]);
        assert!(!std::sync::Arc::ptr_eq(&m, &other.matcher()));
        assert_eq!(tb, other);
        // Changed entries: a new matcher that finds the new term.
        let mut grown = tb.clone();
        grown.entries.push(e("tool", "工具", Origin::Agent));
        assert_eq!(
            grown
                .relevant_to("An agent calls a tool.")
                .iter()
                .map(|e| e.source.as_str())
                .collect::<Vec<_>>(),
            vec!["Agent", "tool"]
        );
        assert!(!std::sync::Arc::ptr_eq(&m, &grown.matcher()));
        assert_eq!(tb.relevant_to("An agent calls a tool.").len(), 1);
        assert_eq!(
            serde_json::to_string(&tb).unwrap(),
            r#"{"entries":[{"source":"Agent","target":"智能体","note":"","origin":"house_style"}]}"#
        );
        assert_eq!(
            serde_json::from_str::<Termbase>(&serde_json::to_string(&grown).unwrap()).unwrap(),
            grown
        );
        assert!(format!("{tb:?}").starts_with("Termbase { entries: [Entry { source: \"Agent\""));
        assert!(!format!("{tb:?}").contains("matcher"));
    }
}
