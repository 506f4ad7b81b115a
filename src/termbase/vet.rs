//! Deterministic checks of the entries the Glossary agent proposes, before any of them is
//! enforced: a model's rendering is data to verify, never a rule (observed with a small model:
//! `Working memory → working记忆`, half untranslated, was enforced as an error against a
//! translation that correctly wrote 工作记忆).
//!
//! Each check is a pure function of the entry (and, for [`shared_rendering`], of the other
//! entries) that returns the reason it fails. [`vet`] runs them all over a merged termbase:
//! only agent entries (origin [`Origin::Agent`]) are checked; house-style, reconciled and
//! editor entries pass untouched. A failing entry leaves the termbase with an
//! [`Action`]: [`Action::Dropped`] when the entry is unusable as it stands (empty, or in the
//! wrong script), [`Action::Review`] when it may be right but needs an editor's decision (a
//! rendering shared by unrelated terms, a source word left inside, an ordinary word kept as
//! is). Review entries are shown at the glossary gate (review CSV, flagged) so an editor can
//! approve them; neither kind reaches a prompt or a QA check unapproved.
//!
//! This module owns no I/O and knows nothing of campaigns; the runner records the
//! rejections with the merged termbase.

use serde::{Deserialize, Serialize};

use super::{Entry, Origin, Termbase, term_key};
use crate::lang::{Lang, Script, script_of};

/// What happens to an entry that fails a check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Left out of the termbase and of the glossary review.
    Dropped,
    /// Left out of the termbase, listed (flagged) in the glossary review for the editor.
    Review,
}

/// One agent entry that failed a check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rejection {
    pub source: String,
    pub target: String,
    /// Why, in one sentence naming the evidence.
    pub reason: String,
    pub action: Action,
    /// The proposed entry's note (so a `review` entry can be shown whole at the gate).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub note: String,
}

impl Rejection {
    /// The entry as the Glossary agent proposed it (origin `agent`).
    pub fn entry(&self) -> Entry {
        Entry {
            source: self.source.clone(),
            target: self.target.clone(),
            note: self.note.clone(),
            origin: Origin::Agent,
            forbidden: Vec::new(),
            variants: Vec::new(),
        }
    }
}

/// Whether the target language is written in a script with no Latin letters of its own
/// (Chinese, Japanese, Korean, Cyrillic, Greek, Arabic): only then is the script of a
/// rendering evidence.
fn non_latin(target: &Lang) -> bool {
    target.script != Script::Latin
}

/// Whether `term` is a name, an acronym or a code identifier, which a translation may keep
/// as is: any word with an inner capital or a digit (`GPT-4`, `LangChain`), an acronym (two or
/// more capitals, `LLM`, `RAG`), a word with `_`, `.`, `/`, `::` or `()` (`tool_call`,
/// `agent.run`), or every word capitalised (`Model Context Protocol`). Ordinary lower-case
/// words (`memory`, `working memory`) are not.
pub fn is_name_like(term: &str) -> bool {
    let words: Vec<&str> = term.split_whitespace().collect();
    if words.is_empty() {
        return false;
    }
    let identifier = |w: &str| {
        w.contains(['_', '.', '/', '(', ')', ':', '#', '@'])
            || w.chars().any(|c| c.is_ascii_digit())
            || w.chars().skip(1).any(|c| c.is_uppercase())
    };
    words.iter().any(|w| identifier(w))
        || words
            .iter()
            .filter(|w| w.chars().any(char::is_alphabetic))
            .all(|w| w.chars().next().is_some_and(char::is_uppercase))
}

/// Whether the entry keeps the term as is (target equal to source, ignoring ASCII case).
pub fn keeps_as_is(e: &Entry) -> bool {
    term_key(&e.source) == term_key(&e.target)
}

/// Check 1, empty rendering: the target is empty or only whitespace and punctuation.
pub fn empty_rendering(e: &Entry) -> Option<String> {
    (!e.target.chars().any(char::is_alphanumeric))
        .then(|| format!("empty rendering `{}` for `{}`", e.target.trim(), e.source))
}

/// Check 2, not in the target script: for a target written in a non-Latin script (zh, ja, ko,
/// ru, el, ar), the rendering must contain at least one letter of that script, unless the
/// entry keeps the term as is. Returns `Some(reason)` for a rendering with no target-script
/// letter that is not the source term (`memoria` for a Chinese target).
pub fn not_in_target_script(e: &Entry, target: &Lang) -> Option<String> {
    if !non_latin(target) || keeps_as_is(e) {
        return None;
    }
    let has_script = e
        .target
        .chars()
        .any(|c| c.is_alphabetic() && target.is_script_letter(c));
    (!has_script).then(|| {
        format!(
            "rendering `{}` of `{}` has no {} letter and is not the term kept as is",
            e.target.trim(),
            e.source,
            target.name
        )
    })
}

/// Check 3, an ordinary word kept as is: an entry whose target is the source term itself is
/// only plausible for a name, an acronym or a code identifier ([`is_name_like`]); for an
/// ordinary term (`memory → memory`) in a non-Latin target it needs an editor's decision.
pub fn ordinary_word_kept(e: &Entry, target: &Lang) -> Option<String> {
    (non_latin(target) && keeps_as_is(e) && !is_name_like(&e.source)).then(|| {
        format!(
            "`{}` is an ordinary term, not a name, acronym or code identifier, yet the proposal keeps it untranslated",
            e.source
        )
    })
}

/// Check 4, a source word left inside the rendering: for a non-name term ([`is_name_like`]
/// false) and a non-Latin target, a run of Latin letters in the rendering that is one of the
/// term's own words written in lower case (`working` in `working记忆` for `Working memory`)
/// means the rendering is half untranslated. Capitalised words and acronyms inside a
/// rendering (`子 Agent`, `RAG 系统`) are names and pass; so do renderings with no target
/// script at all (check 2 covers them).
pub fn source_word_left(e: &Entry, target: &Lang) -> Option<String> {
    if !non_latin(target) || keeps_as_is(e) || is_name_like(&e.source) {
        return None;
    }
    if !e
        .target
        .chars()
        .any(|c| c.is_alphabetic() && target.is_script_letter(c))
    {
        return None;
    }
    let words: Vec<String> = e
        .source
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 2)
        .map(str::to_lowercase)
        .collect();
    let mut run = String::new();
    let mut left = None;
    for c in e.target.chars().chain(std::iter::once(' ')) {
        if script_of(c) == Some(Script::Latin) {
            run.push(c);
            continue;
        }
        if !run.is_empty() {
            let lower_case = run.chars().all(|c| !c.is_uppercase());
            if lower_case && words.contains(&run.to_lowercase()) && left.is_none() {
                left = Some(run.clone());
            }
            run.clear();
        }
    }
    left.map(|w| {
        format!(
            "rendering `{}` of `{}` leaves the source word `{w}` untranslated inside it",
            e.target.trim(),
            e.source
        )
    })
}

/// Whether two terms are related: one contains the other as whole words (`agent` and `agent
/// loop`), compared case-insensitively.
fn related(a: &str, b: &str) -> bool {
    let words = |s: &str| -> Vec<String> {
        s.split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect()
    };
    let contains = |long: &[String], short: &[String]| {
        !short.is_empty() && long.windows(short.len()).any(|w| w == short)
    };
    let (a, b) = (words(a), words(b));
    contains(&a, &b) || contains(&b, &a)
}

/// Check 5, the same rendering for unrelated terms: the rendering of entry `i` of `entries` is
/// also the rendering (compared trimmed, ignoring case) of another entry whose term is
/// unrelated (neither contains the other as whole words). Keep-as-is entries never collide.
/// Returns the reason naming the other term.
pub fn shared_rendering(entries: &[Entry], i: usize) -> Option<String> {
    let e = &entries[i];
    if keeps_as_is(e) {
        return None;
    }
    let r = e.target.trim().to_lowercase();
    if r.is_empty() {
        return None;
    }
    entries
        .iter()
        .enumerate()
        .find(|(j, o)| {
            *j != i
                && !keeps_as_is(o)
                && o.target.trim().to_lowercase() == r
                && !related(&o.source, &e.source)
        })
        .map(|(_, o)| {
            format!(
                "rendering `{}` is also given for the unrelated term `{}`",
                e.target.trim(),
                o.source
            )
        })
}

/// Runs every check over the agent entries of `tb` (house-style, reconciled and editor
/// entries are never checked, and a clash with one of them counts against the agent entry).
/// Returns the termbase without the failing entries (order kept) and the rejections, in
/// termbase order. The first failing check decides: empty and wrong-script entries are
/// [`Action::Dropped`], the others [`Action::Review`].
pub fn vet(tb: &Termbase, target: &Lang) -> (Termbase, Vec<Rejection>) {
    let mut kept = Vec::new();
    let mut rejected = Vec::new();
    for (i, e) in tb.entries.iter().enumerate() {
        if e.origin != Origin::Agent {
            kept.push(e.clone());
            continue;
        }
        let verdict = empty_rendering(e)
            .map(|r| (r, Action::Dropped))
            .or_else(|| not_in_target_script(e, target).map(|r| (r, Action::Dropped)))
            .or_else(|| source_word_left(e, target).map(|r| (r, Action::Review)))
            .or_else(|| ordinary_word_kept(e, target).map(|r| (r, Action::Review)))
            .or_else(|| shared_rendering(&tb.entries, i).map(|r| (r, Action::Review)));
        match verdict {
            None => kept.push(e.clone()),
            Some((reason, action)) => rejected.push(Rejection {
                source: e.source.clone(),
                target: e.target.clone(),
                reason,
                action,
                note: e.note.clone(),
            }),
        }
    }
    (Termbase::new(kept), rejected)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent(s: &str, t: &str) -> Entry {
        Entry {
            source: s.into(),
            target: t.into(),
            note: String::new(),
            origin: Origin::Agent,
            forbidden: Vec::new(),
            variants: Vec::new(),
        }
    }

    fn zh() -> Lang {
        Lang::parse("zh")
    }

    #[test]
    fn half_untranslated_glossary_entry_is_not_enforced() {
        let e = agent("Working memory", "working记忆");
        let why = source_word_left(&e, &zh()).expect("flagged");
        assert_eq!(
            why,
            "rendering `working记忆` of `Working memory` leaves the source word `working` untranslated inside it"
        );
        let tb = Termbase::from_entries([e, agent("context window", "上下文窗口")]);
        let (kept, rejected) = vet(&tb, &zh());
        assert_eq!(kept.entries.len(), 1);
        assert_eq!(kept.entries[0].source, "context window");
        assert_eq!(rejected.len(), 1);
        assert_eq!(
            (rejected[0].source.as_str(), rejected[0].action),
            ("Working memory", Action::Review)
        );
        // The correct rendering passes every check.
        let ok = Termbase::from_entries([agent("Working memory", "工作记忆")]);
        assert!(vet(&ok, &zh()).1.is_empty());
    }

    #[test]
    fn names_inside_renderings_pass() {
        assert_eq!(
            source_word_left(&agent("sub-agent", "子 Agent"), &zh()),
            None
        );
        assert_eq!(
            source_word_left(&agent("RAG system", "RAG 系统"), &zh()),
            None
        );
        // A lower-case word of the term left inside is flagged; another Latin word is not.
        assert!(source_word_left(&agent("token count", "token 数"), &zh()).is_some());
        assert_eq!(
            source_word_left(&agent("prompt cache", "缓存 api"), &zh()),
            None
        );
        // Names are not checked: `LangChain Agent` may keep any part.
        assert_eq!(
            source_word_left(&agent("LangChain agents", "LangChain agent 框架"), &zh()),
            None
        );
    }

    #[test]
    fn empty_rendering_is_dropped() {
        assert!(empty_rendering(&agent("tool", "")).is_some());
        assert!(empty_rendering(&agent("tool", " … ")).is_some());
        assert_eq!(empty_rendering(&agent("tool", "工具")), None);
        let (kept, rej) = vet(&Termbase::from_entries([agent("tool", "  ")]), &zh());
        assert!(kept.is_empty());
        assert_eq!(rej[0].action, Action::Dropped);
        assert!(
            rej[0].reason.starts_with("empty rendering"),
            "{}",
            rej[0].reason
        );
    }

    #[test]
    fn rendering_outside_the_target_script_is_dropped() {
        let why = not_in_target_script(&agent("memory", "memoria"), &zh()).unwrap();
        assert_eq!(
            why,
            "rendering `memoria` of `memory` has no Simplified Chinese letter and is not the term kept as is"
        );
        // Keep-as-is entries are not judged by script here.
        assert_eq!(not_in_target_script(&agent("LLM", "LLM"), &zh()), None);
        // Japanese accepts kana or kanji; Korean needs Hangul.
        assert_eq!(
            not_in_target_script(&agent("agent", "エージェント"), &Lang::parse("ja")),
            None
        );
        assert!(not_in_target_script(&agent("agent", "智能体"), &Lang::parse("ko")).is_some());
        // Latin targets share the source script: nothing to check.
        assert_eq!(
            not_in_target_script(&agent("tool", "tool"), &Lang::parse("de")),
            None
        );
        let (_, rej) = vet(&Termbase::from_entries([agent("memory", "memoria")]), &zh());
        assert_eq!(rej[0].action, Action::Dropped);
    }

    #[test]
    fn keeping_an_ordinary_word_needs_review_but_names_may_stay() {
        assert!(ordinary_word_kept(&agent("memory", "memory"), &zh()).is_some());
        for name in [
            "LLM",
            "LangChain",
            "GPT-4",
            "tool_call",
            "Model Context Protocol",
        ] {
            assert_eq!(
                ordinary_word_kept(&agent(name, name), &zh()),
                None,
                "{name}"
            );
            assert!(is_name_like(name), "{name}");
        }
        assert!(!is_name_like("working memory"));
        let (kept, rej) = vet(
            &Termbase::from_entries([agent("memory", "memory"), agent("LLM", "LLM")]),
            &zh(),
        );
        assert_eq!(kept.entries.len(), 1);
        assert_eq!(
            (rej[0].source.as_str(), rej[0].action),
            ("memory", Action::Review)
        );
    }

    #[test]
    fn the_same_rendering_for_unrelated_terms_needs_review() {
        let entries = vec![
            agent("Agent", "智能体"),
            agent("agent loop", "智能体"),
            agent("assistant", "智能体"),
        ];
        // Related terms may share a rendering; an unrelated one may not.
        assert_eq!(shared_rendering(&entries[..2], 1), None);
        assert_eq!(
            shared_rendering(&entries, 2).as_deref(),
            Some("rendering `智能体` is also given for the unrelated term `Agent`")
        );
        // A house-style entry clashing with an agent entry: only the agent entry is rejected.
        let mut house = agent("Agent", "智能体");
        house.origin = Origin::HouseStyle;
        let tb = Termbase::from_entries([house, agent("assistant", "智能体")]);
        let (kept, rej) = vet(&tb, &zh());
        assert_eq!(kept.entries.len(), 1);
        assert_eq!(kept.entries[0].origin, Origin::HouseStyle);
        assert_eq!(
            (rej[0].source.as_str(), rej[0].action),
            ("assistant", Action::Review)
        );
    }

    #[test]
    fn only_agent_entries_are_vetted() {
        let mut e = agent("Working memory", "working记忆");
        e.origin = Origin::Editor;
        let (kept, rej) = vet(&Termbase::from_entries([e]), &zh());
        assert_eq!(kept.entries.len(), 1);
        assert!(rej.is_empty());
    }
}
