//! Word boundaries of text in a script written without spaces (Chinese, Japanese), for the
//! terminology checks: a rendering counts only where it is a word or a run of whole words, not
//! where its characters happen to stand side by side across two words (`系统` in `操作系统`
//! is the word for "system", but in `该系统统计` the characters `统统` belong to two words).
//!
//! Owns the word segmenter and the rule that lets a rendering the termbase or the prompts name
//! override the segmenter's dictionary (see [`Words::new`]).
//!
//! The segmenter is ICU4X's dictionary word segmenter (`icu_segmenter`, the CJ dictionary ICU
//! uses for Chinese and Japanese, baked into the binary; Unicode UAX #29 word rules elsewhere).
//! It was chosen over jieba-rs 0.11 and lindera 6.2 on the corpus' human zh edition (docs/src/terminology-drift.md,
//! the segmenter table): of 15,064 occurrences of 73 technical words and terms, 98.4 % start
//! and end on its word boundaries (jieba-rs: 92.1 %), and 93.8 % of the 2–3 character words are
//! one word of its own (jieba-rs: 89.9 %); its data loads in about 10 ms (jieba-rs' dictionary:
//! about 300 ms, on every run of `validate`); it built in 25 CPU s against 80; both add about
//! 3.1 MB to a stripped binary. lindera's Japanese and Korean dictionaries are downloaded by its
//! build script, which fails where only package registries are reachable (this project's CI).
//! Korean is written with spaces and keeps the spaced-script path of the checks.

use std::sync::OnceLock;

use icu_segmenter::WordSegmenter;
use icu_segmenter::options::WordBreakInvariantOptions;

use crate::lang::Lang;

/// The process-wide segmenter: built once (its data is static; building it costs little, but
/// the checks ask for boundaries unit by unit).
fn segmenter() -> &'static icu_segmenter::WordSegmenterBorrowed<'static> {
    static SEGMENTER: OnceLock<icu_segmenter::WordSegmenterBorrowed<'static>> = OnceLock::new();
    SEGMENTER.get_or_init(|| WordSegmenter::new_dictionary(WordBreakInvariantOptions::default()))
}

/// Word boundaries of one text: a set of byte offsets, `0` and the text's length included.
///
/// Kept as one bit per byte offset (`bit-set`, already built for `fancy-regex`), not as a list of offsets: a text written without spaces has about one
/// boundary per two characters, so a list of `usize` offsets costs about 8 bytes per 3 bytes of
/// text, and the drift check keeps the boundaries of every translation of the book at once
/// (that list was the largest allocation of a campaign's QA, 47 MB on a 12 MB book). One bit
/// per byte keeps it at an eighth of the text's size, and a boundary test stays O(1).
#[derive(Debug, Clone, Default)]
pub struct Bounds {
    bits: bit_set::BitSet,
}

impl Bounds {
    /// An empty set for a text of `len` bytes.
    fn with_len(len: usize) -> Bounds {
        Bounds {
            bits: bit_set::BitSet::with_capacity(len + 1),
        }
    }

    /// Whether byte offset `at` is a boundary.
    pub fn contains(&self, at: usize) -> bool {
        self.bits.contains(at)
    }

    fn insert(&mut self, at: usize) {
        self.bits.insert(at);
    }

    /// The boundaries, ascending.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.bits.iter()
    }
}

/// The word boundaries of `text` as the segmenter finds them, `0` and `text.len()` included.
pub fn raw_boundaries(text: &str) -> Bounds {
    let mut b = Bounds::with_len(text.len());
    for at in segmenter().segment_str(text) {
        b.insert(at);
    }
    b.insert(0);
    b.insert(text.len());
    b
}

/// The word boundaries of one text, with the known renderings made words.
#[derive(Debug, Clone, Default)]
pub struct Words {
    bounds: Bounds,
}

impl Words {
    /// The boundaries of `text` (see [`raw_boundaries`]), where each occurrence of a `known`
    /// rendering (the termbase's and the prompts' renderings, and the glosses' renderings of
    /// the book) becomes one word when the segmenter agrees with at least one of its edges: its
    /// edges become boundaries and the boundaries inside it are dropped. `known` must be
    /// leftmost-longest (the longest rendering wins where two overlap).
    ///
    /// Why one edge: a dictionary lacks the book's coinages (智能体 is cut 智能|体系|统 in
    /// 智能体系统), so requiring both edges would miss them; requiring neither would find 模型
    /// inside 规模|型号. This is the role of jieba's user dictionary, which ICU's segmenter
    /// does not have.
    pub fn new(text: &str, known: Option<&aho_corasick::AhoCorasick>) -> Words {
        Words::from_raw(text, raw_boundaries(text), known)
    }

    /// [`Words::new`] from boundaries already found by [`raw_boundaries`] on `text`.
    pub fn from_raw(text: &str, raw: Bounds, known: Option<&aho_corasick::AhoCorasick>) -> Words {
        let bounds = raw;
        let Some(ac) = known else {
            return Words { bounds };
        };
        let mut forced: Vec<(usize, usize)> = Vec::new();
        for m in ac.find_iter(text) {
            let (s, e) = (m.start(), m.end());
            if bounds.contains(s) || bounds.contains(e) {
                forced.push((s, e));
            }
        }
        if forced.is_empty() {
            return Words { bounds };
        }
        // The text between two forced words keeps the segmenter's boundaries when both its
        // edges were boundaries already; otherwise (a dictionary word cut by a forced edge:
        // 体系 in 智能|体系|统) that stretch is segmented again on its own (系统).
        let mut out = Bounds::with_len(text.len());
        let mut gap_start = 0usize;
        let gap = |from: usize, to: usize, out: &mut Bounds| {
            if from >= to {
                return;
            }
            if bounds.contains(from) && bounds.contains(to) {
                for at in from..=to {
                    if bounds.contains(at) {
                        out.insert(at);
                    }
                }
            } else {
                for at in raw_boundaries(&text[from..to]).iter() {
                    out.insert(from + at);
                }
            }
        };
        for &(s, e) in &forced {
            gap(gap_start, s, &mut out);
            out.insert(s);
            out.insert(e);
            gap_start = e;
        }
        gap(gap_start, text.len(), &mut out);
        out.insert(0);
        out.insert(text.len());
        Words { bounds: out }
    }

    /// Whether `start..end` starts and ends on word boundaries.
    pub fn on_boundaries(&self, start: usize, end: usize) -> bool {
        self.bounds.contains(start) && self.bounds.contains(end)
    }

    /// Whether byte offset `at` is a word boundary.
    pub fn is_boundary(&self, at: usize) -> bool {
        self.bounds.contains(at)
    }

    /// The byte ranges of the words (between consecutive boundaries).
    pub fn words(&self) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
        let mut it = self.bounds.iter();
        let mut prev = it.next();
        std::iter::from_fn(move || {
            let a = prev?;
            let b = it.next()?;
            prev = Some(b);
            Some(a..b)
        })
    }

    /// Byte offsets where `needle` occurs in `text` on word boundaries.
    pub fn find<'a>(&'a self, text: &'a str, needle: &'a str) -> impl Iterator<Item = usize> + 'a {
        text.match_indices(needle)
            .map(|(s, _)| s)
            .filter(move |&s| self.on_boundaries(s, s + needle.len()))
    }

    /// Whether `needle` occurs in `text` on word boundaries.
    pub fn contains(&self, text: &str, needle: &str) -> bool {
        self.find(text, needle).next().is_some()
    }
}

/// An Aho-Corasick automaton (leftmost-longest) over the known renderings `known` (empty ones
/// skipped), for [`Words::new`]; `None` when there are none.
pub fn known_automaton<'a>(
    known: impl IntoIterator<Item = &'a str>,
) -> Option<aho_corasick::AhoCorasick> {
    let mut v: Vec<&str> = known.into_iter().filter(|k| !k.is_empty()).collect();
    v.sort_unstable();
    v.dedup();
    if v.is_empty() {
        return None;
    }
    aho_corasick::AhoCorasick::builder()
        .match_kind(aho_corasick::MatchKind::LeftmostLongest)
        .build(&v)
        .ok()
}

/// Most words in a statistical rendering candidate (上下文 + 窗口 is two).
pub const MAX_NGRAM_WORDS: usize = 3;

/// Longest candidate that agrees with the word boundaries at one edge only, in characters.
pub const MAX_ONE_EDGE_CHARS: usize = 4;

/// The n-grams of `text` that may be a rendering, for the drift check's association, as byte
/// ranges into `text` in text order, with repeats. Within runs of `target`-script letters:
/// - runs of 1 to [`MAX_NGRAM_WORDS`] whole words, of 2 to `max_chars` characters;
/// - 2 to [`MAX_ONE_EDGE_CHARS`] characters with one edge on a word boundary, the rule by which a
///   named rendering is a word in [`Words::new`]: a rendering the dictionary joined with a
///   neighbour (时代|理 hides 代理) stays visible to the association, which the competing
///   units' evidence then decides.
///
/// None starts or ends with a function character (的, 了, 是 …: [`crate::qa::view::term_text::is_edge_stop`])
/// or holds a word of one function character.
pub fn rendering_ngrams(
    text: &str,
    words: &Words,
    target: &Lang,
    max_chars: usize,
) -> Vec<std::ops::Range<usize>> {
    let letter = |c: char| c.is_alphabetic() && target.is_script_letter(c);
    let stop = |c: char| crate::qa::view::term_text::is_edge_stop(c, target);
    let mut out = Vec::new();
    // The chars of the current run of script letters, with their byte offsets.
    let mut run: Vec<(usize, char)> = Vec::new();
    let mut flush = |run: &mut Vec<(usize, char)>| {
        for a in 0..run.len() {
            if stop(run[a].1) {
                continue;
            }
            let start = run[a].0;
            let start_ok = words.is_boundary(start);
            // Words crossed so far (boundaries strictly inside), and whether a one-character
            // function word lies inside.
            let mut inner = 0usize;
            let mut stop_word = false;
            let limit = run.len().min(a + max_chars);
            for (b, &(cut, ch)) in run.iter().enumerate().take(limit).skip(a + 1) {
                let end = cut + ch.len_utf8();
                if words.is_boundary(cut) {
                    inner += 1;
                    // A one-character word of a function character (… 的 …) ends the run.
                    if stop(ch) && words.is_boundary(end) {
                        stop_word = true;
                    }
                }
                if stop_word || inner >= MAX_NGRAM_WORDS {
                    break;
                }
                let n = b - a + 1;
                if stop(ch) {
                    continue;
                }
                let end_ok = words.is_boundary(end);
                if (start_ok && end_ok) || ((start_ok || end_ok) && n <= MAX_ONE_EDGE_CHARS) {
                    out.push(start..end);
                }
            }
        }
        run.clear();
    };
    for (at, c) in text.char_indices() {
        if letter(c) {
            run.push((at, c));
        } else {
            flush(&mut run);
        }
    }
    flush(&mut run);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words_of(text: &str, known: &[&str]) -> Vec<String> {
        let ac = known_automaton(known.iter().copied());
        let w = Words::new(text, ac.as_ref());
        w.words().map(|r| text[r].to_string()).collect()
    }

    #[test]
    fn chinese_is_cut_into_dictionary_words() {
        assert_eq!(
            words_of("模型的能力是通用的", &[]),
            vec!["模型", "的", "能力", "是", "通用", "的"]
        );
    }

    #[test]
    fn a_known_rendering_becomes_a_word_when_one_edge_agrees() {
        // The dictionary knows neither 智能体 nor the pseudo-word; the known rendering is kept
        // whole where the segmenter agrees with its start.
        let plain = words_of("智能体系统", &[]);
        assert!(!plain.contains(&"智能体".to_string()), "{plain:?}");
        assert_eq!(words_of("智能体系统", &["智能体"]), vec!["智能体", "系统"]);
        // 模型 across 规模|型号 agrees with neither edge: not a word there.
        let w = words_of("规模型号", &["模型"]);
        assert!(!w.contains(&"模型".to_string()), "{w:?}");
    }

    #[test]
    fn renderings_are_found_on_word_boundaries_only() {
        let text = "操作系统统计";
        let w = Words::new(text, None);
        assert!(w.contains(text, "操作系统"));
        assert!(!w.contains(text, "统统"), "{:?}", words_of(text, &[]));
    }

    #[test]
    fn ngrams_are_runs_of_whole_words() {
        let zh = Lang::parse("zh");
        let text = "上下文窗口的大小";
        let w = Words::new(text, None);
        let grams: Vec<&str> = rendering_ngrams(text, &w, &zh, 8)
            .into_iter()
            .map(|r| &text[r])
            .collect();
        assert!(
            grams.contains(&"上下文窗口") || grams.contains(&"上下文"),
            "{grams:?}"
        );
        assert!(grams.iter().all(|g| !g.contains('的')), "{grams:?}");
        assert!(!grams.contains(&"文窗"), "{grams:?}");
    }
}
