//! Term candidates: the deterministic pass that finds the words and phrases of a book that
//! look like domain terms, ranked by C-value. It sits beside the termbase (it reads one, to
//! leave out known terms) and knows no agent and no QA check: the Glossary agent builds its
//! batches from it, and the terminology drift check tracks the terms it finds.
//!
//! ## Candidate extraction
//! Term candidates are word n-grams (1 to 4 words) of the book's prose, from
//! [`crate::book::markdown::prose_ranges`], so code, inline code, URLs, math and HTML never
//! contribute. A candidate must not start or end with a stop word and must contain no sentence
//! punctuation. It qualifies as:
//! - an acronym (two or more capitals, e.g. `LLM`, `RAG`), seen at least twice; or
//! - a capitalised term (every word capitalised, and not only at sentence starts); or
//! - a multi-word phrase of non-stop words, seen at least three times; or
//! - a phrase of one to four words that the author set in bold or italics somewhere (authors
//!   emphasise a term where they define it).
//!
//! Possessives (`Agent's`) count as the base form and simple plurals are folded into the
//! singular when both occur (`tool calls` → `tool call`).
//!
//! Candidates are ranked by **C-value** (Frantzi, Ananiadou & Mima, "Automatic recognition of
//! multi-word terms: the C-value/NC-value method", Int. J. Digital Libraries 3(2), 2000):
//! `C(a) = log2(|a| + 1) · (f(a) − (1/|T_a|) · Σ_{b ∈ T_a} f(b))`, where `|a|` is the length in
//! words, `f` the frequency and `T_a` the longer candidates containing `a`. The `+ 1` is the
//! usual variant that gives single words a non-zero weight.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use super::Termbase;

/// A term candidate found in the book.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    /// Most frequent surface form.
    pub term: String,
    /// Occurrences in prose (case-insensitive).
    pub freq: usize,
    /// C-value score (see module docs).
    pub score: f64,
    /// Up to [`SNIPPET_CHARS`] characters of prose around the first occurrence.
    pub snippet: String,
}

/// Maximum snippet length in characters.
pub const SNIPPET_CHARS: usize = 160;

const STOP: &[&str] = &[
    "a",
    "an",
    "the",
    "and",
    "or",
    "but",
    "if",
    "then",
    "else",
    "of",
    "in",
    "on",
    "at",
    "to",
    "for",
    "from",
    "by",
    "with",
    "without",
    "as",
    "is",
    "are",
    "was",
    "were",
    "be",
    "been",
    "being",
    "it",
    "its",
    "this",
    "that",
    "these",
    "those",
    "we",
    "you",
    "they",
    "he",
    "she",
    "i",
    "our",
    "your",
    "their",
    "his",
    "her",
    "not",
    "no",
    "can",
    "could",
    "will",
    "would",
    "should",
    "may",
    "might",
    "must",
    "do",
    "does",
    "did",
    "has",
    "have",
    "had",
    "so",
    "such",
    "than",
    "too",
    "very",
    "just",
    "also",
    "only",
    "more",
    "most",
    "less",
    "each",
    "every",
    "all",
    "any",
    "some",
    "many",
    "much",
    "one",
    "two",
    "into",
    "onto",
    "over",
    "under",
    "about",
    "after",
    "before",
    "when",
    "where",
    "which",
    "who",
    "whom",
    "what",
    "why",
    "how",
    "there",
    "here",
    "while",
    "because",
    "through",
    "between",
    "within",
    "both",
    "either",
    "neither",
    "other",
    "another",
    "same",
    "own",
    "up",
    "down",
    "out",
    "off",
    "again",
    "once",
    "via",
    "per",
    "like",
    "however",
    "therefore",
    "thus",
    "first",
    "second",
    "third",
    "chapter",
    "figure",
    "table",
    "section",
    "see",
    "e.g",
    "i.e",
    "etc",
    "let",
    "lets",
    "yet",
    "even",
    "still",
    "now",
    "new",
    "use",
    "used",
    "using",
    // Callout labels ("**Note**:"), not terms.
    "note",
    "tip",
    "warning",
    "important",
    "caution",
    "example",
    "summary",
    "reading",
];

fn is_stop(w: &str) -> bool {
    // Called for every word n-gram of the book: no allocation, and a hash set, not a scan.
    static SET: std::sync::OnceLock<std::collections::HashSet<&'static str>> =
        std::sync::OnceLock::new();
    let set = SET.get_or_init(|| STOP.iter().copied().collect());
    let mut buf = [0u8; 16];
    if w.len() > buf.len() {
        return false;
    }
    let lower = &mut buf[..w.len()];
    lower.copy_from_slice(w.as_bytes());
    lower.make_ascii_lowercase();
    std::str::from_utf8(lower).is_ok_and(|l| set.contains(l))
}

fn is_acronym(w: &str) -> bool {
    let caps = w.chars().filter(|c| c.is_ascii_uppercase()).count();
    caps >= 2
        && w.chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '-' || c == 's')
}

/// `s` in lower case, borrowed when it already is (the common case in prose).
fn lower_key(s: &str) -> std::borrow::Cow<'_, str> {
    let already = if s.is_ascii() {
        !s.bytes().any(|b| b.is_ascii_uppercase())
    } else {
        s.chars().all(|c| {
            let mut l = c.to_lowercase();
            l.next() == Some(c) && l.next().is_none()
        })
    };
    if already {
        std::borrow::Cow::Borrowed(s)
    } else {
        std::borrow::Cow::Owned(s.to_lowercase())
    }
}

fn is_capitalised(w: &str) -> bool {
    w.chars().next().is_some_and(|c| c.is_uppercase())
}

/// What is counted of one lower-cased n-gram. One exists per distinct 1- to 4-gram of the
/// book's prose (millions on a long book), so it is kept small: u32 counters (a chapter is
/// far below 4 GiB), the first surface form inline and other forms (rare: a case variant)
/// boxed only when they occur (a `Vec` of forms per n-gram made this pass the
/// largest transient of campaign QA at ten times the corpus).
struct Stat<'a> {
    freq: u32,
    /// Occurrences not at a sentence start with every word capitalised.
    mid_capitalised: u32,
    emphasised: u32,
    words: u8,
    /// The first surface form seen (a slice of a chapter) and its count.
    form: (&'a str, u32),
    /// Other surface forms and their counts (few per key: a list beats a map). Boxed on
    /// purpose: 8 bytes in every `Stat` instead of a `Vec`'s 24, for a list most keys never
    /// need.
    #[allow(clippy::box_collection)]
    other_forms: Option<Box<Vec<(&'a str, u32)>>>,
    /// Where the first occurrence is: (chapter, prose range start, end, offset in the range),
    /// in bytes; the snippet is cut only for the candidates returned.
    snippet: [u32; 4],
}

impl<'a> Stat<'a> {
    fn new(form: &'a str, words: usize, snippet: [u32; 4]) -> Self {
        Stat {
            freq: 0,
            mid_capitalised: 0,
            emphasised: 0,
            words: words as u8,
            form: (form, 0),
            other_forms: None,
            snippet,
        }
    }

    fn count_form(&mut self, surface: &'a str) {
        if self.form.0 == surface {
            self.form.1 += 1;
            return;
        }
        let others = self.other_forms.get_or_insert_with(Default::default);
        match others.iter_mut().find(|f| f.0 == surface) {
            Some(f) => f.1 += 1,
            None => others.push((surface, 1)),
        }
    }

    /// The most frequent surface form; of equally frequent ones the first in byte order.
    fn best_form(&self) -> &'a str {
        std::iter::once(&self.form)
            .chain(self.other_forms.iter().flat_map(|v| v.iter()))
            .max_by(|a, b| a.1.cmp(&b.1).then_with(|| b.0.cmp(a.0)))
            .map_or("", |f| f.0)
    }
}

/// Words of a prose slice with their byte offsets, split at sentence punctuation: returns
/// clauses, each a list of `(start, end)` word ranges; the bool says the clause starts a
/// sentence.
fn clauses(text: &str) -> Vec<(bool, Vec<(usize, usize)>)> {
    let mut out: Vec<(bool, Vec<(usize, usize)>)> = vec![(true, Vec::new())];
    let mut start: Option<usize> = None;
    let mut sentence_start = true;
    let flush_word = |out: &mut Vec<(bool, Vec<(usize, usize)>)>, s: usize, e: usize| {
        // Invariant: `out` starts with one clause and is only ever pushed to, never empty.
        out.last_mut().unwrap().1.push((s, e));
    };
    for (i, c) in text.char_indices() {
        let word_char =
            c.is_alphanumeric() || ((c == '-' || c == '\'' || c == '.') && start.is_some());
        if word_char {
            if start.is_none() {
                start = Some(i);
            }
            continue;
        }
        if let Some(s) = start.take() {
            let w = strip_possessive(text[s..i].trim_end_matches(['-', '\'', '.']));
            flush_word(&mut out, s, s + w.len());
            if text[s..i].ends_with('.') {
                sentence_start = true;
                out.push((true, Vec::new()));
            }
        }
        if matches!(
            c,
            '.' | '!'
                | '?'
                | ':'
                | ';'
                | ','
                | '('
                | ')'
                | '"'
                | '“'
                | '”'
                | '—'
                | '–'
                | '['
                | ']'
                | '*'
                | '_'
        ) {
            sentence_start = matches!(c, '.' | '!' | '?' | ':');
            out.push((sentence_start, Vec::new()));
        }
    }
    if let Some(s) = start {
        let w = strip_possessive(text[s..].trim_end_matches(['-', '\'', '.']));
        flush_word(&mut out, s, s + w.len());
    }
    let _ = sentence_start;
    out.retain(|(_, w)| !w.is_empty());
    out
}

fn strip_possessive(w: &str) -> &str {
    w.strip_suffix("'s")
        .or_else(|| w.strip_suffix("’s"))
        .unwrap_or(w)
}

/// The singular of a simple English plural (`calls` → `call`, `policies` → `policy`,
/// `boxes` → `box`), or `None`.
fn singular(key: &str) -> Option<String> {
    if let Some(stem) = key.strip_suffix("ies") {
        return Some(format!("{stem}y"));
    }
    for suffix in ["sses", "xes", "ches", "shes"] {
        if key.ends_with(suffix) {
            return Some(key[..key.len() - 2].to_string());
        }
    }
    (key.ends_with('s') && !key.ends_with("ss") && key.len() > 3)
        .then(|| key[..key.len() - 1].to_string())
}

/// Short bold or italic spans (1–4 words, no sentence punctuation) in `text`, lower-cased.
fn emphasised_terms(text: &str) -> Vec<String> {
    use pulldown_cmark::{Event, Tag, TagEnd};
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut buf = String::new();
    let mut clean = true;
    for ev in crate::book::markdown::parser(text) {
        match ev {
            Event::Start(Tag::Strong | Tag::Emphasis) => {
                if depth == 0 {
                    buf.clear();
                    clean = true;
                }
                depth += 1;
            }
            Event::End(TagEnd::Strong | TagEnd::Emphasis) if depth > 0 => {
                depth -= 1;
                if depth == 0 && clean {
                    let t = buf.trim();
                    let words = t.split_whitespace().count();
                    if (1..=4).contains(&words)
                        && t.chars().count() <= 48
                        && !t.contains(['.', ',', ':', ';', '!', '?', '"', '('])
                    {
                        out.push(t.to_lowercase());
                    }
                }
            }
            Event::Text(t) if depth > 0 => buf.push_str(&t),
            _ if depth > 0 => clean = false,
            _ => {}
        }
    }
    out
}

/// Extracts and ranks term candidates from prose texts (one string per chapter), excluding
/// terms already in `known` (house style). Returns at most `max` candidates, best first;
/// ties are broken by term for determinism.
pub fn candidates(chapters: &[&str], known: &Termbase, max: usize) -> Vec<Candidate> {
    let mut stats = ngram_stats(chapters);
    for text in chapters {
        for term in emphasised_terms(text) {
            if let Some(st) = stats.get_mut(term.as_str()) {
                st.emphasised += 1;
            }
        }
    }
    fold_plurals(&mut stats);
    let qualified = qualify(&stats, known);
    let mut scored = c_values(&qualified);
    scored.sort_by(|(a, _), (b, _)| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.term.cmp(&b.term))
    });
    scored.truncate(max);
    scored
        .into_iter()
        .map(|(mut c, at)| {
            if let Some((ci, start, end, at)) = at {
                c.snippet = snippet_around(&chapters[ci][start..end], at);
            }
            c
        })
        .collect()
}

/// N-gram statistics, keyed by lower-case text. Every n-gram of the book is looked up here
/// (about a million on a 1.2 MB book), so keys borrow the text when it is already lower case,
/// and the map uses FxHash (rustc-hash) rather than SipHash: the keys come from the book, not
/// from an adversary.
type Stats<'a> = rustc_hash::FxHashMap<std::borrow::Cow<'a, str>, Stat<'a>>;

/// Where a candidate's snippet is: chapter, prose range start and end, byte in the range.
type Snippet = Option<(usize, usize, usize, usize)>;

/// Qualified candidates by key: best form, frequency, words, snippet.
type Qualified = BTreeMap<String, (String, usize, usize, Snippet)>;

/// Counts every n-gram of 1 to 4 words of the chapters' prose clauses that neither starts nor
/// ends with a stop word or a non-word.
fn ngram_stats<'a>(chapters: &[&'a str]) -> Stats<'a> {
    let mut stats: Stats<'a> = rustc_hash::FxHashMap::default();
    for (ci, text) in chapters.iter().enumerate() {
        for r in crate::book::markdown::prose_ranges(text) {
            let (r_start, r_end) = (r.start, r.end);
            let slice = &text[r];
            for (sent_start, words) in clauses(slice) {
                for i in 0..words.len() {
                    for n in 1..=4usize.min(words.len() - i) {
                        let ws = &words[i..i + n];
                        let first = &slice[ws[0].0..ws[0].1];
                        let last = &slice[ws[n - 1].0..ws[n - 1].1];
                        if is_stop(first)
                            || is_stop(last)
                            || first.chars().all(|c| c.is_ascii_digit())
                        {
                            continue;
                        }
                        if last.chars().all(|c| !c.is_alphabetic())
                            || first.chars().all(|c| !c.is_alphabetic())
                        {
                            continue;
                        }
                        let surface = &slice[ws[0].0..ws[n - 1].1];
                        let all_caps = ws
                            .iter()
                            .all(|&(s, e)| is_capitalised(&slice[s..e]) || is_stop(&slice[s..e]));
                        let st = stats.entry(lower_key(surface)).or_insert_with(|| {
                            let at = [ci, r_start, r_end, ws[0].0].map(|x| x as u32);
                            Stat::new(surface, n, at)
                        });
                        st.freq += 1;
                        if all_caps && !(i == 0 && sent_start && n == 1) {
                            st.mid_capitalised += 1;
                        }
                        st.count_form(surface);
                    }
                }
            }
        }
    }
    stats
}

/// Folds plurals into singulars that occur too.
fn fold_plurals(stats: &mut Stats<'_>) {
    let plural_keys: Vec<(String, String)> = stats
        .keys()
        .filter_map(|k| {
            let (head, last) = k.rsplit_once(' ').map_or(("", k.as_ref()), |(h, l)| (h, l));
            let sing = singular(last)?;
            let sing = if head.is_empty() {
                sing
            } else {
                format!("{head} {sing}")
            };
            stats
                .contains_key(sing.as_str())
                .then(|| (k.to_string(), sing))
        })
        .collect();
    for (plural, sing) in plural_keys {
        if let Some(p) = stats.remove(plural.as_str()) {
            let st = stats.get_mut(sing.as_str()).expect("singular present");
            st.freq += p.freq;
            st.mid_capitalised += p.mid_capitalised;
            st.emphasised += p.emphasised;
        }
    }
}

/// The n-grams that qualify as candidates: acronyms and capitalised terms seen twice, phrases
/// of two words or more seen three times, emphasised terms; never a term of `known`.
fn qualify(stats: &Stats<'_>, known: &Termbase) -> Qualified {
    let mut qualified: BTreeMap<String, (String, usize, usize, Snippet)> = BTreeMap::new();
    for (key, st) in stats {
        let form = st.best_form().to_string();
        if form.chars().count() < 2 || known.get(&form).is_some() {
            continue;
        }
        let words: Vec<&str> = form.split_whitespace().collect();
        let acronym = words.len() == 1 && is_acronym(&form);
        let inner_stop = words.iter().any(|w| {
            matches!(
                w.to_ascii_lowercase().as_str(),
                "and" | "or" | "but" | "nor"
            )
        });
        let capitalised =
            st.mid_capitalised * 2 >= st.freq && st.mid_capitalised >= 2 && !inner_stop;
        let phrase = words.len() >= 2 && words.iter().all(|w| !is_stop(w)) && st.freq >= 3;
        let emphasised = st.emphasised >= 1 && !inner_stop && words.iter().all(|w| !is_stop(w));
        let ok = ((acronym || capitalised) && st.freq >= 2) || phrase || emphasised;
        if ok {
            let [ci, start, end, at] = st.snippet.map(|x| x as usize);
            let snippet = Some((ci, start, end, at));
            let (freq, words) = (st.freq as usize, st.words as usize);
            qualified.insert(key.to_string(), (form, freq, words, snippet));
        }
    }
    qualified
}

/// The C-value of each qualified candidate (its frequency, less the mean frequency of the
/// longer candidates it is nested in, weighted by log2(words + 1)); candidates scoring 0 or
/// less are dropped.
fn c_values(qualified: &Qualified) -> Vec<(Candidate, Snippet)> {
    let keys: Vec<&String> = qualified.keys().collect();
    let mut nested_in: HashMap<&str, Vec<usize>> = HashMap::new();
    for k in &keys {
        let (_, f, n, _) = &qualified[*k];
        if *n < 2 {
            continue;
        }
        let ws: Vec<&str> = k.split_whitespace().collect();
        for len in 1..ws.len() {
            for s in 0..=ws.len() - len {
                let sub = ws[s..s + len].join(" ");
                if let Some((sub_key, _)) = qualified.get_key_value(&sub) {
                    nested_in.entry(sub_key.as_str()).or_default().push(*f);
                }
            }
        }
    }
    qualified
        .iter()
        .map(|(k, (form, f, n, snip))| {
            let w = ((*n as f64) + 1.0).log2();
            let score = match nested_in.get(k.as_str()) {
                Some(longer) if !longer.is_empty() => {
                    w * (*f as f64 - longer.iter().sum::<usize>() as f64 / longer.len() as f64)
                }
                _ => w * *f as f64,
            };
            let c = Candidate {
                term: form.clone(),
                freq: *f,
                score,
                snippet: String::new(),
            };
            (c, *snip)
        })
        .filter(|c| c.0.score > 0.0)
        .collect()
}

fn snippet_around(slice: &str, at: usize) -> String {
    let start = slice[..at]
        .char_indices()
        .rev()
        .nth(SNIPPET_CHARS / 3)
        .map_or(0, |(i, _)| i);
    let s = &slice[start..];
    let s: String = s.chars().take(SNIPPET_CHARS).collect();
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::termbase::{Entry, Origin};

    const BOOK: &str = "# Agents\n\nAn AI Agent uses a Large Language Model. The Large Language Model (LLM) plans.\n\nEvery LLM call has a context window. The context window is finite. A context window fills up.\n\nThe Agent calls `Tool Use` in code.\n\n```\nCodeOnlyTerm CodeOnlyTerm CodeOnlyTerm\n```\n\nThe Agent and the Agent again. The Model Context Protocol and Model Context Protocol.\n";

    #[test]
    fn finds_acronyms_capitalised_and_phrases_but_not_code() {
        let c = candidates(&[BOOK], &Termbase::default(), 50);
        let terms: Vec<&str> = c.iter().map(|c| c.term.as_str()).collect();
        assert!(terms.contains(&"LLM"), "{terms:?}");
        assert!(terms.contains(&"Large Language Model"), "{terms:?}");
        assert!(terms.contains(&"context window"), "{terms:?}");
        assert!(terms.contains(&"Model Context Protocol"), "{terms:?}");
        assert!(
            !terms
                .iter()
                .any(|t| t.contains("CodeOnlyTerm") || t.contains("Tool Use")),
            "{terms:?}"
        );
        assert!(!terms.contains(&"The"), "{terms:?}");
    }

    #[test]
    fn plurals_possessives_and_emphasis() {
        let text = "An agent's *Working memory* holds tool calls. One tool call. Another tool call. More tool calls here.\n";
        let c = candidates(&[text], &Termbase::default(), 50);
        let terms: Vec<&str> = c.iter().map(|c| c.term.as_str()).collect();
        assert!(terms.contains(&"Working memory"), "{terms:?}");
        assert!(terms.contains(&"tool call"), "{terms:?}");
        assert!(!terms.contains(&"tool calls"), "{terms:?}");
        assert_eq!(c.iter().find(|c| c.term == "tool call").unwrap().freq, 4);
        assert_eq!(singular("policies").as_deref(), Some("policy"));
        assert_eq!(singular("boxes").as_deref(), Some("box"));
        assert_eq!(singular("class"), None);
    }

    #[test]
    fn nested_terms_score_below_their_container() {
        let c = candidates(&[BOOK], &Termbase::default(), 50);
        let score = |t: &str| c.iter().find(|x| x.term == t).map(|x| x.score);
        let long = score("Model Context Protocol").unwrap();
        if let Some(sub) = score("Context Protocol") {
            assert!(sub < long);
        }
    }

    #[test]
    fn known_terms_are_excluded() {
        let known = Termbase::from_entries([Entry {
            source: "llm".into(),
            target: "大模型".into(),
            note: String::new(),
            origin: Origin::HouseStyle,
            forbidden: Vec::new(),
            variants: Vec::new(),
        }]);
        let c = candidates(&[BOOK], &known, 50);
        assert!(c.iter().all(|c| c.term != "LLM"));
    }
}
