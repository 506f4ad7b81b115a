//! Text helpers shared by the terminology checks ([`crate::qa::unit::glossary`], [`crate::qa::book::drift`],
//! [`crate::qa::book::review_markers`]): parenthetical glosses `R（Term）` / `R (Term)`, review markers
//! (`R（Term）[待审]`, `R[待审]`), the rendering `R` written right before a gloss or a marker, and
//! target-script n-grams.
//!
//! All functions work on a [`crate::qa::Doc::clean_prose`] text, in which every Markdown text event
//! ends with a newline: `**智能体**（Agent）` becomes `智能体\n（Agent）\n` and `[待审]` may become
//! `[\n待审\n]\n`. So whitespace (newlines included) is skipped between the parts of a gloss and
//! inside a marker.
//!
//! ## Where a rendering starts
//! Chinese has no spaces, so the rendering before `（Term）` is a suffix of the run of
//! target-script letters before it. The run stops at any other character (punctuation, Latin,
//! a Markdown event boundary such as the end of bold text). A heuristic then cuts it:
//! 1. after the last function word that never belongs to a term (的 了 是 把 被 这 们 使用 通过
//!    称为 引入 基于 一个 …) that leaves at least 2 characters;
//! 2. then at most `cap` characters are kept from the end, where `cap` is `2·words + 2` for the
//!    source term (`2·letters + 2` for an acronym), clamped to 4..=10, and 6 without a term;
//! 3. then leading 为 之 做 于 由 从 而 are dropped (称**为**代理, 作**为**…) while more than 2
//!    characters remain.
//!
//! So `我们称之为智能体（Agent）` gives 智能体 and `大语言模型（LLM）` gives 大语言模型. Over a
//! campaign, [`Boundaries`] refine step 2 with the word starts the translations show
//! (`看到上下文窗口（context window）` gives 上下文窗口 when 上下文窗口 is written elsewhere after
//! other characters). For space-separated targets the rendering is the previous `words` words
//! of the target script.
//! The checks show the context next to every rendering, so a reviewer sees a wrong cut.

use std::collections::HashSet;

use aho_corasick::AhoCorasick;

use crate::lang::{Lang, Script};

/// Function words cut before a rendering (see the module docs, step 1), longest first.
const CUT_WORDS: &[&str] = &[
    "称为", "称作", "叫做", "引入", "基于", "包括", "包含", "例如", "比如", "需要", "可以", "支持",
    "提供", "借助", "还有", "具有", "拥有", "所有", "使用", "通过", "利用", "采用", "作为", "成为",
    "一个", "一种", "所谓", "进行", "对于", "关于", "以及", "的", "了", "是", "把", "被", "将",
    "就", "也", "都", "这", "那", "其", "该", "此", "即", "和", "与", "或", "及", "让", "给", "我",
    "你", "他", "她", "它", "们", "但", "称", "叫",
];

/// Characters dropped at the start of a rendering (step 2).
const LEAD_CHARS: &[char] = &['为', '之', '做', '于', '由', '从', '而'];

/// Characters that never start or end a Chinese term n-gram (see [`script_ngram_slices`]).
const NGRAM_EDGE_STOP: &[char] = &[
    '的', '了', '是', '把', '被', '将', '就', '也', '都', '这', '那', '其', '该', '此', '和', '与',
    '或', '及', '让', '给', '我', '你', '他', '她', '它', '们', '但',
];

pub(crate) fn is_open(c: char) -> bool {
    c == '(' || c == '（'
}

pub(crate) fn is_close(c: char) -> bool {
    c == ')' || c == '）'
}

/// Whether the target language writes without spaces between words (Chinese, Japanese).
pub(crate) fn unspaced(lang: &Lang) -> bool {
    matches!(lang.script, Script::Han | Script::Japanese)
}

/// Byte offset of the first non-whitespace char at or after `pos`.
pub(crate) fn skip_ws(text: &str, pos: usize) -> usize {
    text[pos..]
        .char_indices()
        .find(|(_, c)| !c.is_whitespace())
        .map_or(text.len(), |(i, _)| pos + i)
}

/// Byte offset just after the last non-whitespace char before `pos`.
pub(crate) fn skip_ws_back(text: &str, pos: usize) -> usize {
    text[..pos]
        .char_indices()
        .rev()
        .find(|(_, c)| !c.is_whitespace())
        .map_or(0, |(i, c)| i + c.len_utf8())
}

/// If `marker` is written at `pos` (after optional whitespace, with whitespace allowed between
/// its characters), the byte offset just after it.
pub(crate) fn marker_at(text: &str, pos: usize, marker: &str) -> Option<usize> {
    let mut p = pos;
    for m in marker.chars().filter(|c| !c.is_whitespace()) {
        p = skip_ws(text, p);
        let c = text[p..].chars().next()?;
        if c != m {
            return None;
        }
        p += c.len_utf8();
    }
    (p > pos).then_some(p)
}

/// A character allowed inside a gloss next to a source term: letters of the source script,
/// digits, spaces and the punctuation of term names.
fn gloss_char(c: char, source: &Lang) -> bool {
    c.is_whitespace()
        || c.is_ascii_digit()
        || matches!(c, '-' | '.' | '\'' | '’' | '/' | '&' | '+' | '_')
        || (c.is_alphabetic() && source.is_script_letter(c))
}

/// A parenthetical around a span: `open` is the byte offset of `（`/`(`, `close_end` the offset
/// just after `）`/`)`, and `content` the trimmed text between them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Paren {
    pub open: usize,
    pub close_end: usize,
    pub content: String,
}

/// The parenthetical enclosing `start..end` of `text` when everything else inside it is made of
/// [`gloss_char`]s (at most 80 bytes on each side): `智能体（AI Agent）` encloses `Agent`.
pub(crate) fn enclosing_paren(
    text: &str,
    start: usize,
    end: usize,
    source: &Lang,
) -> Option<Paren> {
    let mut open = None;
    for (i, c) in text[..start].char_indices().rev() {
        if start - i > 80 {
            return None;
        }
        if is_open(c) {
            open = Some(i);
            break;
        }
        if !gloss_char(c, source) {
            return None;
        }
    }
    let open = open?;
    let mut close_end = None;
    for (i, c) in text[end..].char_indices() {
        if i > 80 {
            return None;
        }
        if is_close(c) {
            close_end = Some(end + i + c.len_utf8());
            break;
        }
        if !gloss_char(c, source) {
            return None;
        }
    }
    let close_end = close_end?;
    let open_len = text[open..].chars().next().map_or(1, char::len_utf8);
    let close_len = text[..close_end]
        .chars()
        .next_back()
        .map_or(1, char::len_utf8);
    let content = text[open + open_len..close_end - close_len]
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    Some(Paren {
        open,
        close_end,
        content,
    })
}

/// Whether the text before `pos` (skipping whitespace) ends with `rendering`, compared
/// case-insensitively when `fold_case`.
pub(crate) fn ends_with_rendering(
    text: &str,
    pos: usize,
    rendering: &str,
    fold_case: bool,
) -> bool {
    let r = rendering.trim();
    if r.is_empty() {
        return false;
    }
    let before = &text[..skip_ws_back(text, pos)];
    if fold_case {
        before.to_lowercase().ends_with(&r.to_lowercase())
    } else {
        before.ends_with(r)
    }
}

/// The maximum length in characters of a rendering of `term` in an unspaced script (see the
/// module docs, step 3).
fn rendering_cap(term: Option<&str>) -> usize {
    let Some(t) = term else { return 6 };
    let t = t.trim();
    let acronym = !t.contains(' ')
        && t.chars().filter(|c| c.is_ascii_uppercase()).count() >= 2
        && t.chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '-');
    let n = if acronym {
        t.chars().filter(|c| c.is_ascii_alphabetic()).count()
    } else {
        t.split(|c: char| c.is_whitespace() || c == '-')
            .filter(|w| !w.is_empty())
            .count()
    };
    (2 * n + 2).clamp(4, 10)
}

/// The rendering written right before byte `pos` (whitespace skipped), as described in the
/// module docs, without campaign statistics: its start offset and text. `None` when no
/// target-script word precedes `pos`.
#[cfg(test)]
pub(crate) fn rendering_before(
    text: &str,
    pos: usize,
    target: &Lang,
    term: Option<&str>,
) -> Option<(usize, String)> {
    let (s, run) = run_before(text, pos, target, term)?;
    let r = finish(&run, term, target, None);
    Some((s + run.len() - r.len(), r))
}

/// The text a rendering is cut from, right before byte `pos` (whitespace skipped): for
/// unspaced scripts the run of target-script letters after step 1 of the module docs (the
/// rendering is one of its suffixes, see [`finish`]); for spaced scripts the previous words,
/// as many as the term has. Returns its start offset too. `None` when no target-script word
/// precedes `pos`, or only function characters (`和（L1）`).
pub(crate) fn run_before(
    text: &str,
    pos: usize,
    target: &Lang,
    term: Option<&str>,
) -> Option<(usize, String)> {
    let end = skip_ws_back(text, pos);
    if unspaced(target) {
        let mut start = end;
        for (i, c) in text[..end].char_indices().rev() {
            if c.is_alphabetic() && target.is_script_letter(c) {
                start = i;
            } else {
                break;
            }
        }
        if start == end || text[start..end].chars().all(|c| is_edge_stop(c, target)) {
            return None;
        }
        let run: Vec<char> = text[start..end].chars().collect();
        let mut from = 0usize; // index into run
        // Step 1: cut after the last function word leaving at least 2 chars.
        'outer: for i in (0..run.len()).rev() {
            for w in CUT_WORDS {
                let wl = w.chars().count();
                if i + wl <= run.len()
                    && run.len() - (i + wl) >= 2
                    && run[i..i + wl].iter().copied().eq(w.chars())
                {
                    from = i + wl;
                    break 'outer;
                }
            }
        }
        let s = start + run[..from].iter().map(|c| c.len_utf8()).sum::<usize>();
        Some((s, text[s..end].to_string()))
    } else {
        let words = term.map_or(1, |t| t.split_whitespace().count().max(1));
        let mut s = end;
        let mut taken = 0;
        let mut in_word = false;
        for (i, c) in text[..end].char_indices().rev() {
            let word_char = (c.is_alphabetic() && target.is_script_letter(c))
                || (in_word && (c == '-' || c == '\'' || c.is_ascii_digit()));
            if word_char {
                if !in_word {
                    if taken == words {
                        break;
                    }
                    in_word = true;
                }
                s = i;
            } else if c == ' ' && in_word {
                in_word = false;
                taken += 1;
            } else {
                break;
            }
        }
        (s < end).then(|| (s, text[s..end].to_string()))
    }
}

/// The rendering cut from a [`run_before`] (steps 2 and 3 of the module docs). With campaign
/// [`Boundaries`], step 2 first takes the longest suffix of at most `cap` characters that the
/// campaign's translations show to be a word.
pub(crate) fn finish(
    run: &str,
    term: Option<&str>,
    target: &Lang,
    boundaries: Option<&Boundaries>,
) -> String {
    if !unspaced(target) {
        return run.to_string();
    }
    let run: Vec<char> = run.chars().collect();
    let n = run.len();
    let cap = rendering_cap(term);
    let learned = boundaries.and_then(|b| {
        (2..=cap.min(n))
            .rev()
            .find(|&len| b.is_word(&run[n - len..].iter().collect::<String>()))
    });
    let mut from = match learned {
        Some(len) => n - len,
        None => n.saturating_sub(cap),
    };
    while n - from > 2 && LEAD_CHARS.contains(&run[from]) {
        from += 1;
    }
    run[from..].iter().collect()
}

/// Word starts learned from the campaign's translations, for cutting renderings out of runs of
/// Chinese or Japanese text: a suffix of a run is a word when, over all translations, it is
/// preceded by at least two different characters (any non-script character counting as one),
/// the left-branching criterion of unsupervised word segmentation (Harris 1955, "From phoneme
/// to morpheme"; Jin & Tanaka-Ishii 2006). `上下文窗口` follows 的, 在 and 。 in a campaign, so
/// it is a word; `到上下文窗口`, written once, is not.
pub(crate) struct Boundaries {
    words: HashSet<String>,
}

impl Boundaries {
    /// Learns the boundaries of the suffixes (2 to 10 characters) of `runs` over `texts`.
    pub(crate) fn new<'a>(
        runs: impl IntoIterator<Item = &'a str>,
        texts: &[&str],
        target: &Lang,
    ) -> Boundaries {
        let mut patterns: Vec<String> = Vec::new();
        for run in runs {
            let chars: Vec<char> = run.chars().collect();
            for len in 2..=chars.len().min(10) {
                patterns.push(chars[chars.len() - len..].iter().collect());
            }
        }
        patterns.sort();
        patterns.dedup();
        let mut words = HashSet::new();
        if patterns.is_empty() {
            return Boundaries { words };
        }
        let ac = AhoCorasick::new(&patterns).expect("suffix patterns build");
        let mut first: Vec<Option<char>> = vec![None; patterns.len()];
        let mut word = vec![false; patterns.len()];
        for text in texts {
            for m in ac.find_overlapping_iter(*text) {
                let p = m.pattern().as_usize();
                if word[p] {
                    continue;
                }
                let pred = text[..m.start()]
                    .chars()
                    .next_back()
                    .filter(|&c| c.is_alphabetic() && target.is_script_letter(c))
                    .unwrap_or('\0');
                match first[p] {
                    None => first[p] = Some(pred),
                    Some(f) if f != pred => word[p] = true,
                    Some(_) => {}
                }
            }
        }
        for (p, w) in patterns.into_iter().zip(word) {
            if w {
                words.insert(p);
            }
        }
        Boundaries { words }
    }

    fn is_word(&self, s: &str) -> bool {
        self.words.contains(s)
    }
}

/// A gloss or a review marker found in a target text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Found {
    /// The parenthetical term, if any (`Agent` in `智能体（Agent）[待审]`).
    pub term: Option<String>,
    pub rendering: String,
    /// The run the rendering was cut from ([`run_before`]), to cut again with [`Boundaries`].
    pub run: String,
    /// Byte range of the whole construct (rendering to marker).
    pub start: usize,
    pub end: usize,
    /// Whether the review marker follows.
    pub marked: bool,
}

/// Every `R（Term）`, `R（Term）<marker>` and `R<marker>` in `text`, in order. A parenthetical
/// counts as a gloss when its content is made of source-script words (at most 6 words, with at
/// least one letter) and a target-script rendering precedes it.
pub(crate) fn scan(text: &str, source: &Lang, target: &Lang, marker: &str) -> Vec<Found> {
    let mut out = Vec::new();
    let first_marker = marker.chars().find(|c| !c.is_whitespace());
    let mut covered_until = 0usize;
    for (i, c) in text.char_indices() {
        if i < covered_until {
            continue;
        }
        if is_open(c) {
            let Some(f) = gloss_at(text, i, source, target, marker) else {
                continue;
            };
            covered_until = f.end;
            out.push(f);
        } else if Some(c) == first_marker
            && let Some(end) = marker_at(text, i, marker)
            && let Some((s, run)) = run_before(text, i, target, None)
        {
            covered_until = end;
            out.push(Found {
                term: None,
                rendering: finish(&run, None, target, None),
                run,
                start: s,
                end,
                marked: true,
            });
        }
    }
    out
}

fn gloss_at(text: &str, open: usize, source: &Lang, target: &Lang, marker: &str) -> Option<Found> {
    let inner = open + text[open..].chars().next()?.len_utf8();
    let mut close = None;
    for (j, c) in text[inner..].char_indices() {
        if j > 100 {
            return None;
        }
        if is_close(c) {
            close = Some(inner + j);
            break;
        }
        if !gloss_char(c, source) {
            return None;
        }
    }
    let close = close?;
    let content = text[inner..close]
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let words = content.split(' ').filter(|w| !w.is_empty()).count();
    let letters = content.chars().filter(|c| c.is_alphabetic()).count();
    if words == 0
        || words > 6
        || letters == 0
        || !content.starts_with(|c: char| c.is_alphanumeric())
    {
        return None;
    }
    let (start, run) = run_before(text, open, target, Some(&content))?;
    let rendering = finish(&run, Some(&content), target, None);
    let close_end = close + text[close..].chars().next()?.len_utf8();
    let (end, marked) = match marker_at(text, close_end, marker) {
        Some(e) => (e, true),
        None => (close_end, false),
    };
    Some(Found {
        term: Some(content),
        rendering,
        run,
        start,
        end,
        marked,
    })
}

/// Whether `content` (lower-case) is written as a parenthetical of its own in `src_lower` (a
/// lower-cased source text), as in `large language models (llms)`: a target parenthetical that
/// copies it is the source's, not a translator's gloss.
pub(crate) fn parenthesized_in(src_lower: &str, content: &str, source: &Lang) -> bool {
    let needle = content.to_lowercase();
    !needle.is_empty()
        && src_lower.match_indices(needle.as_str()).any(|(i, m)| {
            enclosing_paren(src_lower, i, i + m.len(), source).is_some_and(|p| p.content == needle)
        })
}

/// The shortest rendering in `known` (at least 2 characters) that `rendering` ends with, or
/// `rendering` itself: `入智能体` becomes `智能体` when `智能体` was found elsewhere.
pub(crate) fn shortest_known_suffix(rendering: &str, known: &[&str]) -> String {
    known
        .iter()
        .filter(|k| k.chars().count() >= 2 && rendering.ends_with(**k))
        .min_by_key(|k| k.chars().count())
        .map_or(rendering, |k| k)
        .to_string()
}

/// Up to `max` characters of `text` around `start..end`, on one line: Markdown event
/// boundaries (newlines of the clean prose) are removed and other whitespace runs collapsed.
pub(crate) fn context(text: &str, start: usize, end: usize, max: usize) -> String {
    let len = text[start..end].chars().count();
    let left = max.saturating_sub(len) / 2;
    let right = max.saturating_sub(len + left);
    let s = if left == 0 {
        start
    } else {
        text[..start]
            .char_indices()
            .rev()
            .nth(left - 1)
            .map_or(0, |(i, _)| i)
    };
    let e = text[end..]
        .char_indices()
        .nth(right)
        .map_or(text.len(), |(i, _)| end + i);
    let mut flat = String::new();
    for c in text[s..e].chars() {
        if c == '\n' {
            continue;
        }
        if c.is_whitespace() {
            if !flat.ends_with(' ') {
                flat.push(' ');
            }
        } else {
            flat.push(c);
        }
    }
    flat.trim().chars().take(max).collect()
}

/// Whether `c` never starts or ends a term in `target` (Chinese function characters 的 了 是 …,
/// hiragana for Japanese).
pub(crate) fn is_edge_stop(c: char, target: &Lang) -> bool {
    NGRAM_EDGE_STOP.contains(&c)
        || (target.script == Script::Japanese && ('\u{3040}'..='\u{309F}').contains(&c))
}

/// The distinct n-grams of target-script text in `text` that could be a rendering: for
/// unspaced scripts, 2–4 character n-grams inside runs of target-script letters that neither
/// start nor end with a function character (的 了 是 …, or hiragana for Japanese), borrowed
/// from `text` (each is a run of consecutive chars of it: the drift check's index reads every
/// n-gram of the book and keeps only the distinct ones, and a copy of each was most of its
/// time); for other scripts, single words of at least 3 letters and word bigrams,
/// lower-cased. Sorted.
pub(crate) fn script_ngram_slices<'t>(
    text: &'t str,
    target: &Lang,
) -> Vec<std::borrow::Cow<'t, str>> {
    use std::borrow::Cow;
    let mut out: Vec<Cow<'t, str>> = Vec::new();
    if unspaced(target) {
        let edge_stop = |c: char| is_edge_stop(c, target);
        // The run's chars with their byte offsets in `text` (they are consecutive there).
        let mut run: Vec<(usize, char)> = Vec::new();
        let flush = |run: &mut Vec<(usize, char)>, out: &mut Vec<Cow<'t, str>>| {
            for n in 2..=4usize {
                if run.len() < n {
                    break;
                }
                for w in run.windows(n) {
                    let (first, last) = (w[0], w[n - 1]);
                    if !edge_stop(first.1) && !edge_stop(last.1) {
                        out.push(Cow::Borrowed(&text[first.0..last.0 + last.1.len_utf8()]));
                    }
                }
            }
            run.clear();
        };
        for (at, c) in text.char_indices() {
            if c.is_alphabetic() && target.is_script_letter(c) {
                run.push((at, c));
            } else {
                flush(&mut run, &mut out);
            }
        }
        flush(&mut run, &mut out);
    } else {
        let words: Vec<String> = text
            .split(|c: char| !(c.is_alphabetic() && target.is_script_letter(c)))
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect();
        for (i, w) in words.iter().enumerate() {
            if w.chars().count() >= 3 {
                out.push(Cow::Owned(w.clone()));
            }
            if let Some(next) = words.get(i + 1) {
                out.push(Cow::Owned(format!("{w} {next}")));
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zh() -> Lang {
        Lang::parse("zh")
    }
    fn en() -> Lang {
        Lang::parse("en")
    }

    #[test]
    fn renderings_before_glosses() {
        let t = "我们称之为智能体（Agent）";
        let p = t.find('（').unwrap();
        assert_eq!(
            rendering_before(t, p, &zh(), Some("Agent")).unwrap().1,
            "智能体"
        );
        let t = "这就是代理 (Agent)";
        let p = t.find('(').unwrap();
        assert_eq!(
            rendering_before(t, p, &zh(), Some("Agent")).unwrap().1,
            "代理"
        );
        let t = "即大语言模型（LLM）";
        assert_eq!(
            rendering_before(t, t.find('（').unwrap(), &zh(), Some("LLM"))
                .unwrap()
                .1,
            "大语言模型"
        );
        // A Markdown event boundary (bold) stops the run.
        let t = "核心是\n上下文\n（Context）";
        assert_eq!(
            rendering_before(t, t.find('（').unwrap(), &zh(), Some("Context"))
                .unwrap()
                .1,
            "上下文"
        );
        assert!(rendering_before("Agent (LLM)", 6, &zh(), Some("LLM")).is_none());
        let t = "ein neues Werkzeug (tool)";
        assert_eq!(
            rendering_before(t, t.find('(').unwrap(), &Lang::parse("de"), Some("tool"))
                .unwrap()
                .1,
            "Werkzeug"
        );
    }

    #[test]
    fn boundaries_learned_from_the_campaign() {
        let texts = [
            "模型只能看到上下文窗口（context window）中的内容。",
            "更大的上下文窗口并不免费。",
            "保存在上下文窗口中。",
        ];
        let t = texts[0];
        let p = t.find('（').unwrap();
        let (_, run) = run_before(t, p, &zh(), Some("context window")).unwrap();
        assert_eq!(
            finish(&run, Some("context window"), &zh(), None),
            "到上下文窗口"
        );
        let b = Boundaries::new([run.as_str()], &texts, &zh());
        assert_eq!(
            finish(&run, Some("context window"), &zh(), Some(&b)),
            "上下文窗口"
        );
    }

    #[test]
    fn scans_glosses_and_markers() {
        let t = "引入智能体（Agent）[待审]，以及工具调用 (tool call) [\n待审\n]，还有护栏[待审]。模型（如 GPT-4）和代理（Agent）。";
        let f = scan(t, &en(), &zh(), "[待审]");
        let got: Vec<(Option<&str>, &str, bool)> = f
            .iter()
            .map(|f| (f.term.as_deref(), f.rendering.as_str(), f.marked))
            .collect();
        assert_eq!(
            got,
            vec![
                (Some("Agent"), "智能体", true),
                (Some("tool call"), "工具调用", true),
                (None, "护栏", true),
                (Some("Agent"), "代理", false),
            ]
        );
    }

    #[test]
    fn enclosing_parens() {
        let t = "智能体（AI Agent）很重要";
        let s = t.find("Agent").unwrap();
        let p = enclosing_paren(t, s, s + 5, &en()).unwrap();
        assert_eq!(p.content, "AI Agent");
        assert!(ends_with_rendering(t, p.open, "智能体", false));
        let t = "（见 Agent 一节）";
        let s = t.find("Agent").unwrap();
        assert!(enclosing_paren(t, s, s + 5, &en()).is_none());
    }

    #[test]
    fn ngrams_skip_function_edges() {
        let g = script_ngram_slices("代理的工具", &zh());
        assert_eq!(g, ["代理", "代理的工", "工具", "理的工", "理的工具"]);
        let g = script_ngram_slices("Das Werkzeug ist gut", &Lang::parse("de"));
        assert_eq!(
            g,
            [
                "das",
                "das werkzeug",
                "gut",
                "ist",
                "ist gut",
                "werkzeug",
                "werkzeug ist"
            ]
        );
    }

    #[test]
    fn ngrams_of_an_unspaced_script_are_slices_of_the_text() {
        let text = "用 Python 调用上下文窗口，再（见图）调用工具的结果。";
        let g = script_ngram_slices(text, &zh());
        assert!(!g.is_empty());
        for n in &g {
            assert!(matches!(n, std::borrow::Cow::Borrowed(_)), "{n} was copied");
            assert!(text.contains(n.as_ref()), "{n}");
            assert!((2..=4).contains(&n.chars().count()), "{n}");
        }
        // Sorted and distinct (调用 occurs twice).
        assert!(g.windows(2).all(|w| w[0] < w[1]), "{g:?}");
        assert_eq!(g.iter().filter(|n| *n == "调用").count(), 1);
    }

    #[test]
    fn markers_allow_split_brackets() {
        assert_eq!(marker_at("x [\n待审\n]\n", 1, "[待审]"), Some(12));
        assert_eq!(marker_at("x [待定]", 1, "[待审]"), None);
    }

    #[test]
    fn context_is_bounded() {
        let t = "a".repeat(100) + "智能体" + &"b".repeat(100);
        let c = context(&t, 100, 109, 20);
        assert_eq!(c.chars().count(), 20);
        assert!(c.contains("智能体"));
    }
}
