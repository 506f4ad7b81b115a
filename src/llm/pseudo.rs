//! The offline `pseudo` provider, for rehearsals, demos and tests. It reads its prompt the way
//! a model would (the unit is the last user message, glossary lines come before it) and
//! answers deterministically:
//!
//! - **Translation**: prose words are replaced by pseudo-words written in the target script
//!   (for Chinese, syllables drawn only from 伪译演练样文, "pseudo translation rehearsal sample
//!   text", so no reader can mistake it for a translation; Latin targets get accented
//!   pseudo-localisation). Glossary terms get their glossary targets. Code, inline code, URLs,
//!   link and image targets, HTML, math, numbers and acronyms stay byte-identical, and so does
//!   all Markdown syntax, because only the byte ranges of prose text events are rewritten.
//! - **Glossary**: one entry per candidate (acronyms kept, other terms pseudo-translated);
//!   a terminology reconciliation takes the first listed rendering.
//! - **Proofreading** and **Manager**: valid JSON that reports nothing, saying REHEARSAL.
//! - **Judge** (`booktr experiment`): valid verdicts, see
//!   [`crate::experiment::judge::pseudo_answer`]; the single-agent conversation is translated
//!   like a unit (its last user message, with the house glossary of its system prompt).
//!
//! Usage is computed with `o200k_base`: prompt tokens as [`Request::prompt_tokens_estimate`],
//! completion tokens of the answer text.

use sha2::{Digest, Sha256};

use super::types::{Answer, Request, Usage};
use crate::agents::{Agent, glossary, translation};
use crate::book::markdown;
use crate::lang::{Lang, Script};
use crate::termbase::{Entry, Matcher, Origin, Termbase};

/// The pseudo provider for one target language.
#[derive(Debug, Clone)]
pub struct Pseudo {
    target: Lang,
}

/// Model name reported by the pseudo provider.
pub const PSEUDO_MODEL: &str = "pseudo";

impl Pseudo {
    pub fn new(target: Lang) -> Self {
        Pseudo { target }
    }

    /// Answers `req` (never fails).
    pub fn complete(&self, req: &Request) -> Answer {
        let content = match req.agent {
            // The single-agent baseline: the unit is the last user message, the house-style
            // glossary sits in the system prompt.
            Agent::Translation if crate::experiment::single_agent::is_conversation(req) => {
                let glossary = crate::experiment::single_agent::glossary_of(req);
                let source = req
                    .messages
                    .last()
                    .filter(|m| m.role == crate::llm::Role::User)
                    .map_or("", |m| m.content.as_str());
                pseudo_translate(source, &self.target, &glossary)
            }
            Agent::Judge => crate::experiment::judge::pseudo_answer(req),
            Agent::Translation => {
                let glossary = req
                    .messages
                    .get(1)
                    .map(|m| translation::parse_glossary_message(&m.content))
                    .unwrap_or_default();
                let source = translation::source_of(req).unwrap_or("");
                pseudo_translate(source, &self.target, &glossary)
            }
            Agent::Glossary if crate::agents::brief::is_brief(req) => pseudo_brief(req),
            Agent::Glossary if crate::agents::reconcile::is_reconciliation(req) => {
                let (term, renderings) = crate::agents::reconcile::term_of(req).unwrap_or_default();
                let choice = renderings
                    .iter()
                    .find(|r| *r != "(kept)")
                    .cloned()
                    .unwrap_or(term);
                serde_json::json!({"rendering": choice, "note": "REHEARSAL: pseudo reconciliation takes the first listed rendering"}).to_string()
            }
            Agent::Glossary => {
                let entries: Vec<serde_json::Value> = glossary::candidates_in(req)
                    .into_iter()
                    .map(|term| {
                        let target = if term.chars().any(|c| c.is_ascii_lowercase()) {
                            pseudo_translate(&term, &self.target, &[])
                        } else {
                            term.clone()
                        };
                        serde_json::json!({"source": term, "target": target, "note": "REHEARSAL: pseudo entry"})
                    })
                    .collect();
                serde_json::json!({ "entries": entries }).to_string()
            }
            Agent::Proofreading => {
                let units = req.messages.last().map_or(0, |m| {
                    m.content
                        .matches(crate::agents::proofreading::UNIT_OPEN)
                        .count()
                });
                serde_json::json!({
                    "issues": [],
                    "units_need_revision": [],
                    "summary": format!("REHEARSAL: the pseudo provider does not review translations ({units} units passed through).")
                })
                .to_string()
            }
            Agent::Manager => serde_json::json!({
                "revise": [],
                "summary": "REHEARSAL: the pseudo manager orders no advisory revisions."
            })
            .to_string(),
        };
        let usage = Usage {
            prompt_tokens: req.prompt_tokens_estimate() as u64,
            completion_tokens: crate::tokens::count(&content) as u64,
            cached_tokens: 0,
            reasoning_tokens: 0,
            cache_creation_tokens: 0,
        };
        Answer {
            content,
            reasoning: String::new(),
            tool_calls: Vec::new(),
            usage,
            finish_reason: Some("stop".into()),
            model: Some(PSEUDO_MODEL.into()),
            attempts: 1,
        }
    }
}

/// A rehearsal brief: fixed sections, and one synopsis line per chapter of the outline (its
/// first heading).
fn pseudo_brief(req: &Request) -> String {
    let outline = req.messages.last().map_or("", |m| m.content.as_str());
    let mut synopses = Vec::new();
    let mut lines = outline.lines().peekable();
    while let Some(line) = lines.next() {
        if let Some(key) = line
            .strip_prefix("Chapter `")
            .and_then(|r| r.strip_suffix("`:"))
        {
            let title = lines
                .peek()
                .and_then(|l| l.strip_prefix('#'))
                .map(|l| l.trim_start_matches('#').trim().to_string())
                .unwrap_or_default();
            // As long as a real synopsis (about 40 tokens), so rehearsal costs are realistic.
            synopses.push(format!("- `{key}`: {title}. REHEARSAL synopsis: the pseudo provider does not read the book; a real brief sums up this chapter here in one or two sentences."));
        }
    }
    format!(
        "## Audience\nREHEARSAL brief from the offline pseudo provider: software engineers and technical readers who know the basics of programming and want working knowledge of the subject.\n\n\
         ## Register and tone\nNeutral, precise and instructional; address the reader directly; no marketing language; keep the author's examples and humour where they carry meaning.\n\n\
         ## Conventions\n- Keep the English term in parentheses on its first use in each chapter.\n- Use Arabic numerals and SI units; keep the source's number formats in code.\n- Use the target language's quotation marks in prose, straight quotes in code.\n- Keep code, commands, identifiers, file names and URLs unchanged.\n\n\
         ## Chapter synopses\n{}\n",
        synopses.join("\n")
    )
}

/// Pseudo-translates Markdown `text` into `target`'s script, keeping everything that is not
/// prose byte-identical and applying `glossary` (source, target) pairs.
pub fn pseudo_translate(text: &str, target: &Lang, glossary: &[(String, String)]) -> String {
    let tb = Termbase::from_entries(glossary.iter().map(|(s, t)| Entry {
        source: s.clone(),
        target: t.clone(),
        note: String::new(),
        origin: Origin::HouseStyle,
        forbidden: Vec::new(),
        variants: Vec::new(),
    }));
    let matcher = Matcher::cached(&tb);
    let ranges = markdown::prose_ranges(text);
    // A text with no Markdown structure at all (a bare term) is prose as a whole.
    let ranges = if ranges.is_empty() && !text.contains('\n') && !text.trim().is_empty() {
        std::iter::once(0..text.len()).collect()
    } else {
        ranges
    };
    let mut out = String::with_capacity(text.len() * 2);
    let mut last = 0;
    for r in ranges {
        out.push_str(&text[last..r.start]);
        out.push_str(&pseudo_prose(&text[r.clone()], target, &tb, &matcher));
        last = r.end;
    }
    out.push_str(&text[last..]);
    out
}

/// Rewrites one prose slice: glossary occurrences → targets, protected spans kept, other words
/// → pseudo-words.
fn pseudo_prose(slice: &str, target: &Lang, tb: &Termbase, matcher: &Matcher) -> String {
    // Fixed segments: (start, end, replacement).
    let mut fixed: Vec<(usize, usize, String)> = matcher
        .find_all(slice)
        .into_iter()
        .map(|o| (o.start, o.end, tb.entries[o.entry].target.clone()))
        .collect();
    for p in markdown::protected_spans(slice) {
        if !fixed.iter().any(|(s, e, _)| p.start < *e && *s < p.end) {
            fixed.push((p.start, p.end, slice[p.clone()].to_string()));
        }
    }
    fixed.sort_by_key(|f| f.0);
    let cjk = matches!(target.script, Script::Han | Script::Japanese);
    let mut out = String::new();
    let mut pos = 0;
    let mut prev_mapped = false;
    for (s, e, rep) in
        fixed
            .into_iter()
            .chain(std::iter::once((slice.len(), slice.len(), String::new())))
    {
        if s < pos {
            continue;
        }
        let (text, ended) = map_words(&slice[pos..s], target, cjk, prev_mapped);
        out.push_str(&text);
        prev_mapped = ended;
        if cjk && prev_mapped && out.ends_with(' ') && !rep.is_empty() {
            out.pop();
        }
        out.push_str(&rep);
        if !rep.is_empty() {
            prev_mapped = rep
                .chars()
                .last()
                .is_some_and(|c| crate::lang::script_of(c) == Some(Script::Han));
        }
        pos = e;
    }
    out
}

/// Maps the words of `s`; returns the text and whether it ended with a mapped word.
fn map_words(s: &str, target: &Lang, cjk: bool, mut prev_mapped: bool) -> (String, bool) {
    let mut out = String::new();
    let mut word = String::new();
    let mut pending_space = String::new();
    let flush = |word: &mut String, out: &mut String, pending: &mut String, prev: &mut bool| {
        if word.is_empty() {
            return;
        }
        let keep = word.chars().any(|c| c.is_ascii_digit())
            || (word.chars().filter(|c| c.is_ascii_uppercase()).count() >= 2
                && !word.chars().any(|c| c.is_ascii_lowercase()))
            || !word.chars().any(|c| c.is_ascii_alphabetic());
        let mapped = if keep {
            word.clone()
        } else {
            pseudo_word(word, target)
        };
        // In CJK targets, words are not separated by spaces.
        if !(cjk && *prev && !keep) {
            out.push_str(pending);
        }
        pending.clear();
        out.push_str(&mapped);
        *prev = !keep;
        word.clear();
    };
    for c in s.chars() {
        if c.is_alphanumeric() || c == '\'' && !word.is_empty() {
            if !pending_space.is_empty() && word.is_empty() {
                // space before a word: decided at flush
            }
            word.push(c);
        } else {
            flush(&mut word, &mut out, &mut pending_space, &mut prev_mapped);
            if c == ' ' {
                pending_space.push(c);
            } else {
                out.push_str(&pending_space);
                pending_space.clear();
                out.push(c);
                prev_mapped = false;
            }
        }
    }
    flush(&mut word, &mut out, &mut pending_space, &mut prev_mapped);
    out.push_str(&pending_space);
    (out, prev_mapped)
}

/// The syllables pseudo-words are drawn from in a CJK script (Han: 伪译演练样文, "pseudo
/// translation rehearsal sample text"; Japanese: ギジホンヤク; Hangul: 가짜번역연습), `None`
/// for scripts whose pseudo-words map letter by letter. Shared with
/// [`crate::interchange::rehearsal::looks_pseudo`], which recognises them.
pub fn syllables(script: Script) -> Option<&'static [char]> {
    match script {
        Script::Han => Some(&['伪', '译', '演', '练', '样', '文']),
        Script::Japanese => Some(&['ギ', 'ジ', 'ホ', 'ン', 'ヤ', 'ク']),
        Script::Hangul => Some(&['가', '짜', '번', '역', '연', '습']),
        _ => None,
    }
}

/// Deterministic pseudo-word for `word` in `target`'s script (sha256 of the lower-cased word
/// picks the syllables, so a word always maps the same way).
pub fn pseudo_word(word: &str, target: &Lang) -> String {
    let digest = Sha256::digest(word.to_lowercase().as_bytes());
    let n = word.chars().count().div_ceil(3).clamp(1, 3);
    let pick = |table: &[char]| -> String {
        (0..n)
            .map(|i| table[digest[i] as usize % table.len()])
            .collect()
    };
    match target.script {
        s @ (Script::Han | Script::Japanese | Script::Hangul) => {
            pick(syllables(s).expect("the CJK scripts have syllables"))
        }
        Script::Cyrillic => word.chars().map(cyrillic).collect(),
        Script::Greek => word.chars().map(greek).collect(),
        Script::Arabic => pick(&['ز', 'ا', 'ئ', 'ف']),
        Script::Latin => word.chars().map(accent).collect(),
    }
}

fn accent(c: char) -> char {
    match c {
        'a' => 'á',
        'e' => 'é',
        'i' => 'í',
        'o' => 'ö',
        'u' => 'ü',
        'c' => 'ç',
        'n' => 'ñ',
        'y' => 'ý',
        'A' => 'Å',
        'E' => 'É',
        'I' => 'Î',
        'O' => 'Ö',
        'U' => 'Û',
        'C' => 'Ç',
        'N' => 'Ñ',
        o => o,
    }
}

fn cyrillic(c: char) -> char {
    const L: &str = "abvgdezijklmnoprstufhcyABVGDEZIJKLMNOPRSTUFHCY";
    const C: &str = "абвгдезийклмнопрстуфхцыАБВГДЕЗИЙКЛМНОПРСТУФХЦЫ";
    L.chars()
        .position(|x| x == c)
        .and_then(|i| C.chars().nth(i))
        .unwrap_or(c)
}

fn greek(c: char) -> char {
    const L: &str = "abgdezhiklmnxoprstufcw";
    const G: &str = "αβγδεζηικλμνξοπρστυφχω";
    let lower = c.to_ascii_lowercase();
    L.chars()
        .position(|x| x == lower)
        .and_then(|i| G.chars().nth(i))
        .unwrap_or(c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::Message;

    fn zh() -> Lang {
        Lang::parse("zh")
    }

    #[test]
    fn keeps_structure_and_code() {
        let src = "# Using Tools {#tools}\n\nAn Agent calls `run_tool()` at [the docs](https://x.io/a?b=1) 3 times, see https://e.org/x.\n\n```python\nprint('hello world')\n```\n\n| Name | Value |\n|------|-------|\n| alpha | 42 |\n\n![Figure 1: flow](images/f1.svg)\n\nMath $a+b$ and<br/>HTML.[^1]\n\n[^1]: A footnote.\n";
        let out = pseudo_translate(src, &zh(), &[("Agent".into(), "智能体".into())]);
        for keep in [
            "`run_tool()`",
            "(https://x.io/a?b=1)",
            "https://e.org/x",
            "```python\nprint('hello world')\n```",
            "{#tools}",
            "(images/f1.svg)",
            "$a+b$",
            "<br/>",
            "[^1]",
            "| 42 |",
            "|------|-------|",
            "# ",
        ] {
            assert!(out.contains(keep), "lost {keep:?} in:\n{out}");
        }
        assert!(out.contains("智能体"));
        assert!(!out.contains("Agent"));
        assert!(!out.contains("Using"));
        assert!(out.contains('3'));
        assert_eq!(
            out,
            pseudo_translate(src, &zh(), &[("Agent".into(), "智能体".into())]),
            "deterministic"
        );
    }

    #[test]
    fn chinese_pseudo_is_visibly_a_rehearsal() {
        let out = pseudo_translate("Hello brave new world.\n", &zh(), &[]);
        let han: Vec<char> = out
            .chars()
            .filter(|c| crate::lang::script_of(*c) == Some(Script::Han))
            .collect();
        assert!(!han.is_empty());
        assert!(han.iter().all(|c| "伪译演练样文".contains(*c)), "{out}");
        assert!(!out.contains("Hello"));
    }

    #[test]
    fn latin_targets_get_accents() {
        let out = pseudo_translate("Simple text.\n", &Lang::parse("de"), &[]);
        assert_eq!(out, "Símplé téxt.\n");
    }

    #[test]
    fn answers_each_agent_with_usage() {
        let p = Pseudo::new(zh());
        let req = translation::build_request(
            &translation::Setup {
                source: Lang::parse("en"),
                target: zh(),
                guide: String::new(),
                review_marker: "[待审]".into(),
                brief: String::new(),
                code_comments: Default::default(),
            },
            &[],
            "Some text.\n",
            None,
        );
        let a = p.complete(&req);
        assert!(a.usage.prompt_tokens > 10 && a.usage.completion_tokens > 0);
        assert!(!a.content.contains("Some"));
        let mreq = Request {
            agent: Agent::Manager,
            messages: vec![Message::user("x")],
            json_schema: None,
            max_tokens: None,
        };
        let v: serde_json::Value = serde_json::from_str(&p.complete(&mreq).content).unwrap();
        assert!(v["summary"].as_str().unwrap().contains("REHEARSAL"));
    }
}
