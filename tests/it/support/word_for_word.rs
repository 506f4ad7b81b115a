//! A deterministic dictionary-style fake translator into Chinese: every source word has one
//! fixed rendering (two Han characters picked by the sha256 of the lower-cased word, simple
//! plurals folded into the singular; a few function words have fixed short renderings or are
//! dropped, as a translator drops "the"). Acronyms, words with digits, code, URLs and all
//! Markdown syntax stay byte-identical (only prose text events are rewritten). So a book
//! translated with it renders every term exactly one way: the drift check must find nothing.
//!
//! [`translate_planted`] plants drift on purpose: chosen terms get a second rendering in every
//! other unit, so the drift check must find exactly those terms.
//!
//! Used by the integration tests (through the fake server's script) and by `benches/drift.rs`
//! (included by path).
#![allow(dead_code)]

use sha2::{Digest, Sha256};

/// Common Han characters the renderings are drawn from (no function characters such as 的 了
/// 是, which the terminology checks treat as word edges).
const POOL: &str = "安白班板办包保报备本比笔边变标表别病布步部才材采参草层查产长场车成城程持尺充虫出初处传船窗床创春词次从村存错答打大代带单当刀导道灯等低底地点电店调定东动读度端段对队多儿发法反方房放飞分风封服福父付复改感钢高歌格隔根工公功共狗构古骨故挂关观管光广规国果过海含汉好号合河黑很红后湖花画话环换黄回会火机基级极集计记技际加家价架坚间简见建江将交角脚教阶接节结解界金今近进京经精景净境镜九酒旧局句具据卷决军开看康考科可课空口库块快宽况矿困括拉来蓝浪老乐类冷离礼理力历立连联练量料林灵领流六龙路录旅绿论落妈马满毛门梦米面民名明命模母木目内能泥年鸟牛农女暖排盘判旁跑配朋皮片平评坡破普七期齐其奇骑起气器千前钱强桥巧青轻清情请秋区曲取去全泉群然热人认日容肉如入软三色森山商上少设社身深神生声省师诗十石时识实食史始世市式事试室视收手首书树数双水顺说思四松送速算随岁孙台太谈汤堂糖特提题体天田条铁听停通同头图土团推外完玩晚万王网望微围位文问五午物西吸息习洗喜系细下夏先现线相香想向象小校笑写谢心新信星行形性休须许选学雪血牙言研眼央阳样药要业叶页衣医移已易意音银印应英营影硬永用油友有右鱼语雨玉育元园原圆远院月云运杂在早造则增展站章张照针真争整正证支知直值指纸制治质中钟种重州周主助住注转装准子字自走足族组祖最作坐座";

/// Fixed renderings of function words (an empty rendering drops the word).
const FUNCTION_WORDS: &[(&str, &str)] = &[
    ("the", ""),
    ("a", ""),
    ("an", ""),
    ("of", "的"),
    ("is", "是"),
    ("are", "是"),
    ("and", "和"),
    ("or", "或"),
    ("to", "向"),
    ("in", "在"),
    ("it", "它"),
    ("we", "我们"),
    ("this", "这"),
    ("that", "那"),
];

/// The singular of a simple English plural (`calls` → `call`), else the word.
fn lemma(w: &str) -> String {
    let w = w.to_lowercase();
    let w = w.strip_suffix("'s").unwrap_or(&w).to_string();
    if let Some(stem) = w.strip_suffix("ies")
        && stem.len() >= 2
    {
        return format!("{stem}y");
    }
    if w.len() > 3 && w.ends_with('s') && !w.ends_with("ss") {
        return w[..w.len() - 1].to_string();
    }
    w
}

/// The one rendering of a word (lower-cased, plural folded), salted by `variant` (0 is the
/// dictionary rendering; any other value gives a competing one).
pub fn rendering(word: &str, variant: u8) -> String {
    let l = lemma(word);
    if variant == 0
        && let Some((_, r)) = FUNCTION_WORDS.iter().find(|(w, _)| *w == l)
    {
        return r.to_string();
    }
    let pool: Vec<char> = POOL
        .chars()
        .filter(|c| {
            !"的了是把被将就也都这那其该此和与或及让给我你他她它们但称叫即为之做于由从而"
                .contains(*c)
        })
        .collect();
    let mut h = Sha256::new();
    h.update(l.as_bytes());
    h.update([variant]);
    let d = h.finalize();
    let a = u16::from_be_bytes([d[0], d[1]]) as usize % pool.len();
    let b = u16::from_be_bytes([d[2], d[3]]) as usize % pool.len();
    [pool[a], pool[b]].into_iter().collect()
}

/// Whether a word stays as written (acronym, digits, no ASCII letter).
fn kept(w: &str) -> bool {
    w.chars().any(|c| c.is_ascii_digit())
        || (w.chars().filter(|c| c.is_ascii_uppercase()).count() >= 2
            && !w.chars().any(|c| c.is_ascii_lowercase()))
        || !w.chars().any(|c| c.is_ascii_alphabetic())
}

/// The acronym of an acronym plural (`LLMs` → `LLM`, `API's` → `API`).
fn acronym_plural(w: &str) -> Option<&str> {
    let stem = w
        .strip_suffix("'s")
        .or_else(|| w.strip_suffix('s'))
        .filter(|s| kept(s) && s.chars().any(|c| c.is_ascii_alphabetic()))?;
    Some(stem)
}

/// Translates Markdown `text` word for word (see the module docs).
pub fn translate(text: &str) -> String {
    translate_planted(text, &[], false)
}

/// Like [`translate`], but following a glossary as a translator follows the one its prompt
/// carries: every occurrence of a glossary source term (found as the campaign finds it, with
/// [`booktr::termbase::Matcher`]: case-insensitive, word boundaries, simple plurals, the longest
/// term first) is written as its glossary target, the other words word for word. A target is
/// not the words' dictionary renderings joined (`Agent` → 智能体, `context window` →
/// 上下文窗口), so a glossary term and the same words elsewhere read differently, as in a real
/// translation; every word and every term still has exactly one rendering.
pub fn translate_with_glossary(text: &str, glossary: &[(String, String)]) -> String {
    translate_inner(text, glossary, &[], false, None)
}

/// A dictionary of real Chinese words for [`translate_inner`]: every English word (lemma) of a
/// book gets one distinct word of a real Chinese text, by rank of frequency (the most frequent
/// English word gets the most frequent Chinese word), so the translation reads like Chinese to
/// a segmenter (its words are dictionary words, and their characters recur across words as in
/// real text: 系统, 统一, 一个) while every English word still has exactly one rendering. The
/// issue's "pseudo-Chinese" translation of the corpus is of this kind.
/// Words a [`Dictionary`] keeps for [`Dictionary::coined`].
const SPARE: usize = 300;

pub struct Dictionary {
    primary: std::collections::HashMap<String, String>,
    /// A second, competing word per lemma, for planted drift.
    alternate: std::collections::HashMap<String, String>,
    /// Words of the pool no lemma has, for coined glossary renderings ([`Dictionary::coined`]).
    spare: Vec<String>,
}

impl Dictionary {
    /// From the English `sources` and the Chinese `reference` text (segmented with ICU4X's
    /// dictionary segmenter, as booktr's drift check does): words of 2 or 3 Han characters,
    /// leaving out those that share a character run with a glossary target (`avoid`), so no
    /// dictionary word is also a glossary rendering.
    pub fn new(sources: &[&str], reference: &str, avoid: &[&str]) -> Dictionary {
        use std::collections::HashMap;
        let mut zh: HashMap<&str, usize> = HashMap::new();
        let bounds: Vec<usize> = booktr::qa::view::words::raw_boundaries(reference)
            .iter()
            .collect();
        for w in bounds.windows(2) {
            let word = &reference[w[0]..w[1]];
            let n = word.chars().count();
            if (2..=3).contains(&n)
                && word.chars().all(|c| ('\u{4e00}'..='\u{9fff}').contains(&c))
                && !avoid.iter().any(|a| a.contains(word) || word.contains(a))
                && !FUNCTION_WORDS
                    .iter()
                    .any(|(_, r)| r.chars().count() >= 2 && word.contains(r))
                // No numerals and no chapter, section, figure or table words: the English
                // source has no such number there, so the number checks would object.
                && !word.chars().any(|c| "〇零一二三四五六七八九十百千万亿两第章节图表".contains(c))
            {
                *zh.entry(word).or_insert(0) += 1;
            }
        }
        let mut pool: Vec<(&str, usize)> = zh.into_iter().collect();
        pool.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        let mut en: HashMap<String, usize> = HashMap::new();
        for src in sources {
            for (a, b) in words(src) {
                let w = &src[a..b];
                if kept(w) || acronym_plural(w).is_some() {
                    continue;
                }
                let l = lemma(w);
                if FUNCTION_WORDS.iter().any(|(f, _)| *f == l) {
                    continue;
                }
                *en.entry(l).or_insert(0) += 1;
            }
        }
        let mut lemmas: Vec<(String, usize)> = en.into_iter().collect();
        lemmas.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let mut primary = HashMap::new();
        let mut alternate = HashMap::new();
        let n = lemmas.len();
        for (i, (l, _)) in lemmas.into_iter().enumerate() {
            // Past the pool's end, the hashed pair of characters.
            let word = |j: usize| {
                pool.get(j)
                    .map_or_else(|| rendering(&l, 0), |p| p.0.to_string())
            };
            primary.insert(l.clone(), word(i));
            alternate.insert(l.clone(), word(n + SPARE + i));
        }
        let spare = pool
            .iter()
            .skip(n)
            .take(SPARE)
            .map(|p| p.0.to_string())
            .collect();
        Dictionary {
            primary,
            alternate,
            spare,
        }
    }

    /// The `i`-th word no lemma has: a glossary rendering that is not the words' renderings
    /// joined (as a terminologist coins 注意力机制 for "attention mechanism").
    pub fn coined(&self, i: usize) -> Option<&str> {
        self.spare.get(i).map(String::as_str)
    }

    /// The word for `word` (any case, plural folded), `variant` 0 its rendering, else the
    /// competing one; function words as [`rendering`].
    pub fn rendering(&self, word: &str, variant: u8) -> String {
        let l = lemma(word);
        let map = if variant == 0 {
            &self.primary
        } else {
            &self.alternate
        };
        map.get(&l)
            .cloned()
            .unwrap_or_else(|| rendering(word, variant))
    }
}

/// Like [`translate`], but the words of every phrase in `planted` (lower case, e.g.
/// `"context window"`) get their competing rendering (variant 1) when `alternate` is true: a
/// caller alternating `alternate` across units plants two renderings of each such term.
pub fn translate_planted(text: &str, planted: &[&str], alternate: bool) -> String {
    translate_inner(text, &[], planted, alternate, None)
}

/// [`translate_with_glossary`] and [`translate_planted`] in one, with the words of `dict`
/// instead of the hashed pairs of characters when given.
pub fn translate_inner(
    text: &str,
    glossary: &[(String, String)],
    planted: &[&str],
    alternate: bool,
    dict: Option<&Dictionary>,
) -> String {
    let tb = booktr::termbase::Termbase::from_entries(glossary.iter().map(|(s, t)| {
        booktr::termbase::Entry {
            source: s.clone(),
            target: t.clone(),
            note: String::new(),
            origin: booktr::termbase::Origin::HouseStyle,
            forbidden: Vec::new(),
            variants: Vec::new(),
        }
    }));
    let matcher = booktr::termbase::Matcher::new(&tb);
    // Prose words (not glossary terms) word for word, glossary terms by the glossary.
    let render = |s: &str| -> String {
        let mut out = String::new();
        let mut pos = 0;
        for o in matcher.find_all(s) {
            if o.start < pos {
                continue;
            }
            out.push_str(&prose(&s[pos..o.start], planted, alternate, dict));
            out.push_str(tb.entries[o.entry].target.trim());
            pos = o.end;
        }
        out.push_str(&prose(&s[pos..], planted, alternate, dict));
        if glossary.is_empty() && dict.is_none() {
            return out;
        }
        // No space between two Han words (a glossary target next to a rendered word).
        let chars: Vec<char> = out.chars().collect();
        let han = |c: Option<&char>| c.is_some_and(|c| ('\u{4e00}'..='\u{9fff}').contains(c));
        chars
            .iter()
            .enumerate()
            .filter(|&(i, c)| {
                !(*c == ' ' && i > 0 && han(chars.get(i - 1)) && han(chars.get(i + 1)))
            })
            .map(|(_, c)| *c)
            .collect()
    };
    let ranges = booktr::book::markdown::prose_ranges(text);
    let mut out = String::with_capacity(text.len() * 2);
    let mut last = 0;
    for r in ranges {
        out.push_str(&text[last..r.start]);
        let slice = &text[r.clone()];
        let protected = booktr::book::markdown::protected_spans(slice);
        let mut pos = 0;
        for p in protected {
            out.push_str(&render(&slice[pos..p.start]));
            out.push_str(&slice[p.clone()]);
            pos = p.end;
        }
        out.push_str(&render(&slice[pos..]));
        last = r.end;
    }
    out.push_str(&text[last..]);
    out
}

/// Words of a prose slice: (start, end) byte ranges of alphanumeric runs (with inner `'`).
fn words(s: &str) -> Vec<(usize, usize)> {
    let mut v = Vec::new();
    let mut start: Option<usize> = None;
    for (i, c) in s.char_indices() {
        let wc = c.is_alphanumeric() || (c == '\'' && start.is_some());
        match (wc, start) {
            (true, None) => start = Some(i),
            (false, Some(st)) => {
                v.push((st, i));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(st) = start {
        v.push((st, s.len()));
    }
    v
}

fn prose(s: &str, planted: &[&str], alternate: bool, dict: Option<&Dictionary>) -> String {
    let ws = words(s);
    // Words inside a planted phrase get variant 1.
    let mut variant = vec![0u8; ws.len()];
    if alternate {
        let lemmas: Vec<String> = ws.iter().map(|&(a, b)| lemma(&s[a..b])).collect();
        for p in planted {
            let pw: Vec<String> = p.split_whitespace().map(lemma).collect();
            if pw.is_empty() || pw.len() > lemmas.len() {
                continue;
            }
            for i in 0..=lemmas.len() - pw.len() {
                if lemmas[i..i + pw.len()] == pw[..] {
                    for v in &mut variant[i..i + pw.len()] {
                        *v = 1;
                    }
                }
            }
        }
    }
    let mut out = String::new();
    let mut pos = 0;
    let mut prev_han = false;
    // A word dropped with no space before it (`**The LLM`): the space after it goes too.
    let mut skip_space = false;
    for (k, &(a, b)) in ws.iter().enumerate() {
        let gap = &s[pos..a];
        let w = &s[a..b];
        let keep = kept(w);
        let mut gap_out = gap.replace(". ", "。").replace(", ", "，");
        if std::mem::take(&mut skip_space) && gap_out.starts_with(' ') {
            gap_out.remove(0);
        }
        // No space between two Han words.
        if !(prev_han && !keep && gap.chars().all(|c| c == ' ')) {
            out.push_str(&gap_out);
        }
        if keep {
            out.push_str(w);
            prev_han = false;
        } else if let Some(acronym) = acronym_plural(w) {
            // `LLMs` is written `LLM` (Chinese has no plural).
            out.push_str(acronym);
            prev_han = false;
        } else {
            let r = match dict {
                Some(d) => d.rendering(w, variant[k]),
                None => rendering(w, variant[k]),
            };
            if r.is_empty() {
                // A dropped word: drop one space next to it too.
                if out.ends_with(' ') {
                    out.pop();
                } else {
                    skip_space = true;
                }
                prev_han = out.chars().last().is_some_and(|c| !c.is_ascii());
            } else {
                out.push_str(&r);
                prev_han = true;
            }
        }
        pos = b;
    }
    let tail = &s[pos..];
    out.push_str(
        &tail
            .replace(". ", "。")
            .replace(", ", "，")
            .replace('.', "。"),
    );
    out
}

/// The terms of [`synthetic_units`]: multi-word phrases (candidates by frequency) and
/// capitalised names.
pub const SYNTHETIC_TERMS: &[&str] = &[
    "context window",
    "tool call",
    "system prompt",
    "memory store",
    "vector index",
    "reward model",
    "prompt cache",
    "task queue",
    "Planner",
    "Verifier",
];

const FILLER: &[&str] = &[
    "reads", "writes", "checks", "keeps", "sends", "returns", "builds", "stores", "moves",
    "counts", "every", "small", "large", "first", "later", "quickly", "slowly", "often", "result",
    "answer", "file", "step", "plan", "note", "value", "record", "limit", "budget", "error",
    "request", "reply", "page", "table", "list", "batch", "round", "cost", "time", "user", "team",
    "editor", "book", "chapter", "line", "word", "block", "field", "event", "safely", "again",
    "together", "before", "after", "during", "without", "inside", "outside", "simple", "long",
    "short", "clear", "useful", "stable", "fresh", "old", "new", "main",
];

/// A deterministic synthetic book of `n` units (`(id, chapter, source)`), seeded by `seed`:
/// each unit is two to four paragraphs of filler sentences, with the [`SYNTHETIC_TERMS`]
/// sprinkled in (about one sentence in two has a term), so every term occurs in many units.
pub fn synthetic_units(n: usize, seed: u64) -> Vec<(String, String, String)> {
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut next = move |m: usize| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((state >> 33) as usize) % m
    };
    (0..n)
        .map(|u| {
            let mut text = String::new();
            for p in 0..2 + next(3) {
                if p > 0 {
                    text.push_str("\n\n");
                }
                for s in 0..2 + next(2) {
                    if s > 0 {
                        text.push(' ');
                    }
                    let mut words: Vec<String> = (0..5 + next(6))
                        .map(|_| FILLER[next(FILLER.len())].to_string())
                        .collect();
                    if next(2) == 0 {
                        let at = next(words.len());
                        words.insert(at, SYNTHETIC_TERMS[next(SYNTHETIC_TERMS.len())].to_string());
                    }
                    let mut sentence = words.join(" ");
                    if let Some(c) = sentence.get(..1) {
                        sentence = format!("{}{}", c.to_uppercase(), &sentence[1..]);
                    }
                    text.push_str(&sentence);
                    text.push('.');
                }
            }
            text.push('\n');
            (format!("syn-{u:03}"), "syn".to_string(), text)
        })
        .collect()
}
