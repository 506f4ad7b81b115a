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
    /// Pattern index → entry index.
    pattern_entry: Vec<usize>,
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

impl Matcher {
    /// The matcher for `tb`, built once per distinct list of source terms and shared: building
    /// an automaton for hundreds of terms costs far more than a search, and prompts, QA and the
    /// pseudo provider ask for the same termbase again and again.
    pub fn cached(tb: &Termbase) -> std::sync::Arc<Matcher> {
        use std::collections::HashMap;
        use std::hash::{Hash, Hasher};
        use std::sync::{Arc, Mutex, OnceLock};
        static CACHE: OnceLock<Mutex<HashMap<u64, Arc<Matcher>>>> = OnceLock::new();
        let mut h = std::collections::hash_map::DefaultHasher::new();
        for e in &tb.entries {
            e.source.hash(&mut h);
        }
        let key = h.finish();
        let cache = CACHE.get_or_init(Default::default);
        if let Some(m) = cache.lock().unwrap().get(&key) {
            return m.clone();
        }
        let m = Arc::new(Matcher::new(tb));
        let mut c = cache.lock().unwrap();
        if c.len() >= 32 {
            c.clear();
        }
        c.insert(key, m.clone());
        m
    }

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
        Matcher { ac, pattern_entry }
    }

    /// All non-overlapping occurrences in `text` that sit on word boundaries.
    pub fn find_all(&self, text: &str) -> Vec<Occurrence> {
        let Some(ac) = &self.ac else {
            return Vec::new();
        };
        let bytes = text.as_bytes();
        ac.find_iter(text)
            .filter(|m| {
                let (s, e) = (m.start(), m.end());
                let left_ok = s == 0 || !is_word_byte(bytes[s - 1]) || !is_word_byte(bytes[s]);
                let right_ok =
                    e == bytes.len() || !is_word_byte(bytes[e]) || !is_word_byte(bytes[e - 1]);
                left_ok && right_ok
            })
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
}
