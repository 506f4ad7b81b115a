//! The Translation agent: one fresh message list per unit, and the clean-up of its answer.
//!
//! Message layout (stable prefix first, variable text last, so provider prefix caches hit):
//!
//! 1. `system`: instructions and the translation guide, byte-identical for every unit of a
//!    campaign;
//! 2. `user` + `assistant` (the example exchange): a fixed two-block example translated into
//!    the target language ([`example_pair`]; campaign key `translation_example`, default on),
//!    byte-identical for every unit, so it is part of the cached prefix. Without it the 0.5B
//!    of the quality benchmark answered isolated units with their English source, or a piece
//!    with the glossary line (docs/src/benchmarks.md, findings 3, 6 and 11); the single pass,
//!    whose conversation holds its own earlier answers, did not. Sent again to the live model
//!    with the example, the same requests were all translated;
//! 3. `user` (the glossary message): the synopsis of the unit's chapter from the book brief
//!    (the same for every unit of a chapter, so it comes first), then the glossary entries
//!    whose source terms occur in this unit;
//! 4. `user`: the unit's source text, exactly, and nothing else (HTML comments masked as
//!    placeholders by [`super::mask`], restored in the answer by the caller).
//!
//! A revision appends `assistant` (the previous translation) and `user` (the findings to fix).
//! The brief's share is bounded whatever the book's length: the system message has
//! only its book-level part (audience, register, conventions) and the glossary message only the unit's own
//! chapter's synopsis, never every chapter's ([`super::brief_parts`]). The glossary entries are
//! those whose source term occurs in the unit (`prompt_layout = "relevant"`, the default), so
//! there are at most as many as term occurrences in the unit, each on one line with its note
//! cut to [`MAX_NOTE_CHARS`]: bounded by the unit's length, not the termbase's size. (The
//! `full` layout sends the whole termbase by choice; its cost is the campaign's decision.)
//!
//! The agent never sees another unit or its translation. The prompt never mentions parts, unit
//! numbers or positions, so there is no label for the model to echo into a heading.

use serde::{Deserialize, Serialize};

use crate::lang::Lang;
use crate::llm::{Message, Request, Role};
use crate::termbase::Entry;

use super::Agent;

/// What every Translation request of a campaign shares.
#[derive(Debug, Clone)]
pub struct Setup {
    pub source: Lang,
    pub target: Lang,
    /// The translation guide (from the campaign's `guide` file, or the built-in default).
    pub guide: String,
    /// Marker for renderings the translator coins (`[待审]` for Chinese by default).
    pub review_marker: String,
    /// The book-level part of the book brief (audience, register, conventions: see
    /// [`super::brief_parts::BriefParts::book`]), in the system message; empty before the brief
    /// exists. Whatever is here goes into every request, so callers pass the bounded part, not
    /// the brief with every chapter's synopsis.
    pub brief: String,
    /// Whether comments in code blocks are translated (campaign key `code_comments`).
    pub code_comments: crate::config::CodeComments,
    /// The synopsis of the unit's chapter from the brief (one line, at most
    /// [`super::brief_parts::SYNOPSIS_MAX_CHARS`] characters), put at the start of the glossary message;
    /// empty when there is none (before the brief exists, or for a request of no chapter).
    pub chapter_brief: String,
    /// The example exchange sent after the system message (`(source, translation)`, see
    /// [`example_pair`]), or `None` (campaign key `translation_example = false`, or no
    /// example for the pair).
    pub example: Option<(&'static str, &'static str)>,
}

/// The example, one short paragraph and one list item with bold text and inline code, in the
/// languages booktr has it for: `(language, script variant, text)`. Written for booktr; every
/// version says the same thing, so any two of them are a source and its translation.
const EXAMPLES: &[(&str, &str, &str)] = &[
    (
        "en",
        "",
        "The next section compares the results in a table.\n\n- Each **row** is one run of the `eval` command.",
    ),
    (
        "zh",
        "",
        "下一节用表格比较结果。\n\n- 每一**行**是 `eval` 命令的一次运行。",
    ),
    (
        "zh",
        "hant",
        "下一節用表格比較結果。\n\n- 每一**列**是 `eval` 指令的一次執行。",
    ),
    (
        "ja",
        "",
        "次の節では、結果を表で比較します。\n\n- 各**行**は `eval` コマンドの 1 回の実行です。",
    ),
    (
        "ko",
        "",
        "다음 절에서는 결과를 표로 비교합니다.\n\n- 각 **행**은 `eval` 명령을 한 번 실행한 결과입니다.",
    ),
    (
        "de",
        "",
        "Der nächste Abschnitt vergleicht die Ergebnisse in einer Tabelle.\n\n- Jede **Zeile** ist ein Lauf des Befehls `eval`.",
    ),
    (
        "fr",
        "",
        "La section suivante compare les résultats dans un tableau.\n\n- Chaque **ligne** correspond à une exécution de la commande `eval`.",
    ),
    (
        "es",
        "",
        "La siguiente sección compara los resultados en una tabla.\n\n- Cada **fila** es una ejecución del comando `eval`.",
    ),
    (
        "pt",
        "",
        "A próxima seção compara os resultados em uma tabela.\n\n- Cada **linha** é uma execução do comando `eval`.",
    ),
    (
        "it",
        "",
        "La sezione successiva confronta i risultati in una tabella.\n\n- Ogni **riga** è un'esecuzione del comando `eval`.",
    ),
    (
        "ru",
        "",
        "В следующем разделе результаты сравниваются в таблице.\n\n- Каждая **строка** — это один запуск команды `eval`.",
    ),
];

/// Every version of the example (see [`EXAMPLES`]), for checks that look for prompt text
/// copied into a translation.
pub fn example_texts() -> impl Iterator<Item = &'static str> {
    EXAMPLES.iter().map(|(_, _, text)| *text)
}

/// The example exchange for translating `source` into `target`: the example in each language
/// (see [`EXAMPLES`]; Traditional Chinese for `zh-Hant`, `zh-TW`, `zh-HK`, `zh-MO`), or `None`
/// when booktr has no version in one of them, or both are the same language.
pub fn example_pair(source: &Lang, target: &Lang) -> Option<(&'static str, &'static str)> {
    let find = |l: &Lang| {
        let variant = if l.name == "Traditional Chinese" {
            "hant"
        } else {
            ""
        };
        EXAMPLES
            .iter()
            .find(|(code, v, _)| *code == l.primary() && *v == variant)
            .map(|(_, _, text)| *text)
    };
    let (s, t) = (find(source)?, find(target)?);
    (s != t).then_some((s, t))
}

/// Messages before the glossary message that the example takes (0 or 2), read from the
/// request itself: in a request without the example, the third message (index 2) is the unit's
/// source (`user`); with it, the example's translation (`assistant`).
fn example_len(req: &Request) -> usize {
    example_len_of(&req.messages)
}

/// [`example_len`] of a message list as a server receives it (for fakes and tests).
pub fn example_len_of(messages: &[Message]) -> usize {
    match messages.get(2) {
        Some(m) if m.role == Role::Assistant => 2,
        _ => 0,
    }
}

/// The glossary message of a Translation request, to add to (neighbour context, fuzzy
/// references, the placeholder instruction): never the example's messages, which stay the
/// same bytes for every unit.
pub fn glossary_message_mut(req: &mut Request) -> Option<&mut Message> {
    let at = 1 + example_len(req);
    req.messages.get_mut(at).filter(|m| m.role == Role::User)
}

/// The glossary message of a Translation request (after the example exchange, if any).
pub fn glossary_message_of(req: &Request) -> Option<&str> {
    req.messages
        .get(1 + example_len(req))
        .filter(|m| m.role == Role::User)
        .map(|m| m.content.as_str())
}

/// A revision of an earlier translation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Revision {
    pub previous: String,
    /// One line per finding to fix (deterministic QA first, then reviewer notes).
    pub feedback: Vec<String>,
}

/// The built-in guide, used when the campaign names none.
pub fn default_guide(target: &Lang) -> String {
    let mut g = String::from(
        "- Write natural, precise technical prose for professional readers; translate meaning, not word order.\n\
         - Keep product names, library names, commands, identifiers and acronyms such as API, LLM or JSON as they are.\n\
         - Keep every number, unit and version exactly.\n",
    );
    if target.primary() == "zh" {
        g.push_str(
            "- Use full-width Chinese punctuation (，。：；？！“”（）) in Chinese sentences; keep half-width punctuation inside code, URLs and English names.\n\
             - Put no space between Chinese characters and Chinese punctuation.\n",
        );
    }
    g
}

/// The system message: instructions plus guide. Identical for every unit of a campaign.
pub fn system_prompt(setup: &Setup) -> String {
    format!(
        "You are a professional technical translator. Translate the Markdown text in the user's last message from {src} into {tgt}.\n\
         \n\
         Rules:\n\
         1. Reply with the translated Markdown only. Do not add any preface, explanation, note, title, heading, label or code fence of your own.\n\
         2. Keep the Markdown structure exactly: the same headings (same levels), paragraphs, lists, tables (same rows and columns), block quotes, footnote labels and definitions, and blank lines.\n\
         3. Copy without any change: fenced and indented code blocks{code_comments}, inline code, URLs and link or image targets, HTML tags and comments, math between $ or $$, heading anchors such as {{#id}}, and footnote labels such as [^1].\n\
         4. Translate prose, headings, list items, table cells, link text and image alt text.\n\
         5. For every term listed in the glossary message, use {term_rule}.\n\
         6. If a technical term that is not in the glossary needs a rendering you coin, write its first occurrence in this text as `rendering（Source Term）{marker}` so an editor can review it, and use the same rendering everywhere else.\n\
         7. If the text is already in {tgt} or contains nothing to translate, return it unchanged.\n\
         \n\
         Translation guide:\n{guide}{brief}",
        src = setup.source.name,
        tgt = setup.target.name,
        guide = setup.guide.trim_end(),
        marker = setup.review_marker,
        code_comments = match setup.code_comments {
            crate::config::CodeComments::Keep => "",
            crate::config::CodeComments::Translate => {
                " (except the comments inside them, which you translate; every other character of the code stays identical)"
            }
        },
        term_rule = term_rule(&setup.target),
        brief = if setup.brief.trim().is_empty() {
            String::new()
        } else {
            format!("\n\nBook brief:\n{}", setup.brief.trim_end())
        },
    )
}

/// Rule 5 of the system prompt: the exact rendering, or, for a target language that inflects
/// ([`crate::termbase::inflect::inflection`]), the rendering in the grammatically right form
/// (QA accepts inflected forms there).
fn term_rule(target: &Lang) -> String {
    if crate::termbase::inflect::inflection(&target.primary()).is_some() {
        format!(
            "the given {tgt} rendering, in the grammatically right form for the sentence (inflect it for case, number and gender as {tgt} grammar requires; do not replace it with a synonym)",
            tgt = target.name
        )
    } else {
        format!("exactly the given {} rendering", target.name)
    }
}

/// Longest glossary note put in a prompt, in characters.
pub const MAX_NOTE_CHARS: usize = 200;

/// The glossary message for one unit: the relevant entries, one per line
/// (`- source → target` plus `  (note)` when there is a note).
pub fn glossary_message(entries: &[&Entry]) -> String {
    if entries.is_empty() {
        return "Glossary: no glossary term occurs in this text.".into();
    }
    let mut s = String::from("Glossary (use these renderings):\n");
    for e in entries {
        s.push_str(&format!("- {} → {}", e.source, e.target));
        if !e.note.trim().is_empty() {
            // Notes are capped: a glossary note must never crowd the unit out of the budget.
            s.push_str(&format!(
                "  ({})",
                crate::util::excerpt(e.note.trim(), MAX_NOTE_CHARS).replace('\n', " ")
            ));
        }
        s.push('\n');
    }
    s
}

/// Parses the glossary lines of [`glossary_message`] back into `(source, target)` pairs (used
/// by the pseudo provider, which reads its prompt like a model would).
pub fn parse_glossary_message(text: &str) -> Vec<(String, String)> {
    let text = text.split(CONTEXT_HEADER).next().unwrap_or(text);
    text.lines()
        .filter_map(|l| l.strip_prefix("- "))
        .filter_map(|l| {
            let (s, rest) = l.split_once(" → ")?;
            let t = rest.split("  (").next().unwrap_or(rest);
            Some((s.trim().to_string(), t.trim().to_string()))
        })
        .collect()
}

/// The request for one unit (first translation when `revision` is `None`).
pub fn build_request(
    setup: &Setup,
    entries: &[&Entry],
    unit_text: &str,
    revision: Option<&Revision>,
) -> Request {
    build_request_with_context(setup, entries, unit_text, revision, None)
}

/// Words that open the chapter synopsis at the start of the glossary message.
pub const CHAPTER_BRIEF_HEADER: &str = "About the chapter this text is from (book brief):";

/// The chapter synopsis line of the glossary message (with a blank line after it), or empty when
/// `synopsis` is blank. The synopsis is put on one line, so no line of it can be read as a
/// glossary line (`- source → target`).
pub fn chapter_brief_message(synopsis: &str) -> String {
    let one: Vec<&str> = synopsis.split_whitespace().collect();
    if one.is_empty() {
        return String::new();
    }
    format!("{CHAPTER_BRIEF_HEADER} {}\n\n", one.join(" "))
}

/// Header of the read-only neighbour context at the end of the glossary message.
pub const CONTEXT_HEADER: &str =
    "For context only, the text just before it (do not translate it and do not repeat it):";

/// [`build_request`] with the preceding source text as read-only context: it goes at the end of
/// the glossary message (so the unit text stays the last message), between `<context>` tags.
pub fn build_request_with_context(
    setup: &Setup,
    entries: &[&Entry],
    unit_text: &str,
    revision: Option<&Revision>,
    context: Option<&str>,
) -> Request {
    let mut second = chapter_brief_message(&setup.chapter_brief);
    second.push_str(&glossary_message(entries));
    if let Some(ctx) = context.filter(|c| !c.trim().is_empty()) {
        second.push_str(&format!(
            "\n{CONTEXT_HEADER}\n<context>\n{}\n</context>\n",
            ctx.trim_end()
        ));
    }
    let mut messages = vec![Message::system(system_prompt(setup))];
    if let Some((source, translation)) = setup.example {
        messages.push(Message::user(source));
        messages.push(Message::assistant(translation));
    }
    messages.push(Message::user(second));
    messages.push(Message::user(unit_text));
    if let Some(r) = revision {
        messages.push(Message::assistant(r.previous.clone()));
        let mut fb = String::from(
            "A review found problems in your translation. Fix them and reply with the complete corrected translation of the whole text, in Markdown only:\n",
        );
        for f in &r.feedback {
            fb.push_str("- ");
            fb.push_str(f);
            fb.push('\n');
        }
        messages.push(Message::user(fb));
    }
    Request {
        task: Agent::Translation.into(),
        messages,
        json_schema: None,
        max_tokens: None,
        ceiling_tokens: None,
        prefill: None,
    }
}

/// Header of the fuzzy translation-memory references ([`add_fuzzy_references`]).
pub const FUZZY_HEADER: &str = "A translation memory holds similar but not identical source texts and their earlier translations (match percentage in each reference). Use them only as references for wording and terms: translate the text you are given, and where it differs from a reference, follow the text:";

/// Adds fuzzy translation-memory matches `(percent, stored source, its translation)` to a
/// Translation request, at the end of the glossary message: the variable part of the prompt,
/// after the stable system prompt, so the prefix does not change. The unit text stays the
/// last message; each reference is between `<reference match="N%">` tags and is never the
/// answer itself. No change when `refs` is empty.
pub fn add_fuzzy_references(request: &mut Request, refs: &[(u8, &str, &str)]) {
    let Some(m) = glossary_message_mut(request).filter(|_| !refs.is_empty()) else {
        return;
    };
    m.content.push('\n');
    m.content.push_str(FUZZY_HEADER);
    m.content.push('\n');
    for (percent, source, target) in refs {
        m.content.push_str(&format!(
            "<reference match=\"{percent}%\">\n<source>\n{}\n</source>\n<translation>\n{}\n</translation>\n</reference>\n",
            source.trim_end(),
            target.trim_end()
        ));
    }
}

/// The unit source text of a Translation request (the message after the glossary message), for
/// the pseudo provider and tests.
pub fn source_of(req: &Request) -> Option<&str> {
    req.messages
        .get(2 + example_len(req))
        .filter(|m| m.role == Role::User)
        .map(|m| m.content.as_str())
}

/// The previous translation and feedback of a revision request, if it is one.
pub fn revision_of(req: &Request) -> Option<(&str, &str)> {
    let at = 3 + example_len(req);
    match (req.messages.get(at), req.messages.get(at + 1)) {
        (Some(a), Some(u)) if a.role == Role::Assistant => {
            Some((a.content.as_str(), u.content.as_str()))
        }
        _ => None,
    }
}

/// Lines a model may put before the translation. Matched case-insensitively on the first
/// non-empty line, which is removed only if the source does not start the same way.
const PREAMBLES: &[&str] = &[
    "here is the translation",
    "here's the translation",
    "here is the translated",
    "here's the translated",
    "below is the translation",
    "the translation is",
    "translation:",
    "translated text:",
    "以下是译文",
    "以下是翻译",
    "以下为译文",
    "译文：",
    "译文:",
    "翻译如下",
    "这是翻译",
];

/// What post-processing removed, for the record.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cleanup {
    pub think_removed: bool,
    pub preamble_removed: Option<String>,
    pub fence_unwrapped: bool,
    /// Masked spans whose placeholder the answer lost (their original bytes), left out of the
    /// text for QA to flag and the repair to restore where it can place them (see
    /// `mask::Masked::recover`). Empty for most answers; absent from older result files.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub placeholders_lost: Vec<String>,
    /// Source text joined unchanged into a stuck unit's pieces because the model's answer
    /// for that piece could not be used (each piece's source bytes): QA reports each as an
    /// `untranslated` error. Empty for most answers; absent from older result files.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_in_source: Vec<String>,
}

/// Cleans a model answer into a translation of `source`:
///
/// - leading `<think>…</think>` blocks are removed (tags later in the text are content);
/// - a leading "Here is the translation…" line is removed (unless the source starts so too);
/// - one code fence wrapping the whole answer is unwrapped (unless the source is itself one
///   fenced block);
/// - the source's leading and trailing whitespace is restored exactly, so units rejoin
///   losslessly, and line endings follow the source (CRLF stays CRLF).
pub fn postprocess(source: &str, answer: &str) -> (String, Cleanup) {
    let mut cleanup = Cleanup::default();
    let (text, think) = crate::llm::stream::split_think_with(answer, !source.contains("</think>"));
    cleanup.think_removed = !think.is_empty();
    let mut body = text.replace("\r\n", "\n");
    let src_norm = source.replace("\r\n", "\n");
    let src_first = src_norm
        .trim_start()
        .lines()
        .next()
        .unwrap_or("")
        .to_lowercase();

    // Preamble line.
    let trimmed = body.trim_start();
    if let Some(first) = trimmed.lines().next() {
        let lower = first.trim().to_lowercase();
        let is_preamble = PREAMBLES.iter().any(|p| lower.starts_with(p))
            && first.trim().chars().count() < 120
            && !PREAMBLES.iter().any(|p| src_first.starts_with(p));
        if is_preamble {
            cleanup.preamble_removed = Some(first.trim().to_string());
            body = trimmed[first.len()..].to_string();
        }
    }

    // One wrapping fence.
    let t = body.trim();
    let src_t = src_norm.trim();
    let src_is_fence = src_t.starts_with("```") || src_t.starts_with("~~~");
    if !src_is_fence && (t.starts_with("```") || t.starts_with("~~~")) {
        let fence: String = t.chars().take_while(|&c| c == '`' || c == '~').collect();
        if let Some(nl) = t.find('\n') {
            let inner = &t[nl + 1..];
            if let Some(stripped) = inner.trim_end().strip_suffix(fence.as_str())
                && !stripped.contains(&format!("\n{fence}"))
            {
                body = stripped.to_string();
                cleanup.fence_unwrapped = true;
            }
        }
    }

    // Restore the source's surrounding whitespace, BOM and line endings.
    let bom = if src_norm.starts_with('\u{feff}') {
        "\u{feff}"
    } else {
        ""
    };
    let src_body = &src_norm[bom.len()..];
    let lead = &src_body[..src_body.len() - src_body.trim_start().len()];
    let trail = &src_body[src_body.trim_end().len()..];
    let body = body.trim().trim_start_matches('\u{feff}').trim();
    let mut out = format!("{bom}{lead}{body}{trail}");
    if source.contains("\r\n") {
        out = out.replace('\n', "\r\n");
    }
    (out, cleanup)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::termbase::Origin;

    /// With the example in front, the placeholder instruction of a masked unit and the fuzzy
    /// references were appended to the second message, the example's source (both wrote into "the
    /// second message"): the stable prefix changed with every masked unit, and the model read
    /// the instruction as part of the example.
    #[test]
    fn the_placeholder_instruction_and_fuzzy_references_went_into_the_example() {
        let mut s = setup();
        s.example = example_pair(&Lang::parse("en"), &Lang::parse("zh"));
        let masked = super::super::mask::mask("Intro <!-- a note --> text.\n");
        assert!(!masked.is_empty());
        let mut r = build_request(&s, &[], &masked.text, None);
        masked.instruct(&mut r);
        add_fuzzy_references(&mut r, &[(90, "Intro text.", "介绍文字。")]);
        let (ex_src, ex_tgt) = s.example.unwrap();
        assert_eq!(
            (
                r.messages[1].content.as_str(),
                r.messages[2].content.as_str()
            ),
            (ex_src, ex_tgt)
        );
        let g = glossary_message_of(&r).unwrap();
        assert!(g.contains("placeholders such as"), "{g}");
        assert!(g.contains("<reference match=\"90%\">"), "{g}");
        assert_eq!(source_of(&r), Some(masked.text.as_str()));
    }

    /// Quality benchmark findings 3, 6 and 11: without an example of the target language, the
    /// 0.5B answered an isolated unit with its English source and a piece with the glossary
    /// line; with the example exchange after the system message the same requests were
    /// translated. The example sits in the stable prefix, and the helpers that read a request
    /// back find the glossary, the source and a revision after it.
    #[test]
    fn a_weak_model_echoed_an_isolated_unit_without_an_example_exchange() {
        let (en, zh) = (Lang::parse("en"), Lang::parse("zh"));
        let mut s = setup();
        s.example = example_pair(&en, &zh);
        let (ex_src, ex_tgt) = s.example.unwrap();
        assert!(ex_src.starts_with("The next section compares") && ex_tgt.starts_with("下一节"));
        let entry = Entry {
            source: "tool".into(),
            target: "工具".into(),
            note: String::new(),
            origin: Origin::HouseStyle,
            forbidden: Vec::new(),
            variants: Vec::new(),
        };
        let rev = Revision {
            previous: "旧译文".into(),
            feedback: vec!["fix it".into()],
        };
        let r = build_request(&s, &[&entry], "Call the tool.\n", Some(&rev));
        let roles: Vec<Role> = r.messages.iter().map(|m| m.role).collect();
        assert_eq!(
            roles,
            [
                Role::System,
                Role::User,
                Role::Assistant,
                Role::User,
                Role::User,
                Role::Assistant,
                Role::User
            ]
        );
        assert_eq!(
            (
                r.messages[1].content.as_str(),
                r.messages[2].content.as_str()
            ),
            (ex_src, ex_tgt)
        );
        assert_eq!(
            glossary_message_of(&r),
            Some("Glossary (use these renderings):\n- tool → 工具\n")
        );
        assert_eq!(source_of(&r), Some("Call the tool.\n"));
        assert_eq!(
            revision_of(&r),
            Some((
                "旧译文",
                "A review found problems in your translation. Fix them and reply with the complete corrected translation of the whole text, in Markdown only:\n- fix it\n"
            ))
        );
        // The same prefix for every unit.
        let other = build_request(&s, &[], "Another unit.\n", None);
        assert_eq!(other.messages[..3], r.messages[..3]);
        // Traditional Chinese has its own version; a pair without a version has none.
        assert!(
            example_pair(&en, &Lang::parse("zh-TW"))
                .unwrap()
                .1
                .contains("下一節")
        );
        assert_eq!(example_pair(&zh, &en), Some((ex_tgt, ex_src)));
        assert_eq!(example_pair(&en, &en), None);
        assert_eq!(example_pair(&en, &Lang::parse("sw")), None);
    }

    fn setup() -> Setup {
        Setup {
            source: Lang::parse("en"),
            target: Lang::parse("zh"),
            guide: default_guide(&Lang::parse("zh")),
            review_marker: "[待审]".into(),
            brief: String::new(),
            code_comments: Default::default(),
            chapter_brief: String::new(),
            example: None,
        }
    }

    #[test]
    fn fuzzy_references_go_after_the_stable_prefix_before_the_unit_text() {
        let plain = build_request(&setup(), &[], "The agent prints the result.", None);
        let mut req = plain.clone();
        add_fuzzy_references(
            &mut req,
            &[(86, "The agent reads the result.", "智能体读取结果。")],
        );
        // The system prompt (stable prefix) and the unit text are unchanged.
        assert_eq!(req.messages[0].content, plain.messages[0].content);
        assert_eq!(req.messages[2].content, "The agent prints the result.");
        assert_eq!(req.messages.len(), 3);
        let second = &req.messages[1].content;
        assert!(second.starts_with(&plain.messages[1].content));
        assert!(second.ends_with("<reference match=\"86%\">\n<source>\nThe agent reads the result.\n</source>\n<translation>\n智能体读取结果。\n</translation>\n</reference>\n"), "{second}");
        assert!(second.contains(FUZZY_HEADER));
        let mut same = plain.clone();
        add_fuzzy_references(&mut same, &[]);
        assert_eq!(same.messages[1].content, plain.messages[1].content);
    }

    #[test]
    fn prompt_asks_for_the_grammatically_right_form_in_inflected_languages() {
        let zh = system_prompt(&setup());
        assert!(
            zh.contains("use exactly the given Simplified Chinese rendering."),
            "{zh}"
        );
        let ru = Setup {
            target: Lang::parse("ru"),
            ..setup()
        };
        let p = system_prompt(&ru);
        assert!(!p.contains("exactly the given"), "{p}");
        assert!(
            p.contains("in the grammatically right form for the sentence"),
            "{p}"
        );
        let t = Setup {
            code_comments: crate::config::CodeComments::Translate,
            ..setup()
        };
        assert!(system_prompt(&t).contains("except the comments inside them, which you translate"));
        assert!(!zh.contains("except the comments"));
    }

    #[test]
    fn prefix_is_stable_and_unit_is_last() {
        let e = Entry {
            source: "Agent".into(),
            target: "智能体".into(),
            note: "core".into(),
            origin: Origin::HouseStyle,
            forbidden: Vec::new(),
            variants: Vec::new(),
        };
        let a = build_request(&setup(), &[&e], "An Agent acts.\n", None);
        let b = build_request(&setup(), &[], "Other text.\n", None);
        assert_eq!(a.messages[0], b.messages[0]);
        assert_eq!(source_of(&a), Some("An Agent acts.\n"));
        assert_eq!(a.messages.last().unwrap().content, "An Agent acts.\n");
        assert_eq!(
            parse_glossary_message(&a.messages[1].content),
            vec![("Agent".to_string(), "智能体".to_string())]
        );
    }

    #[test]
    fn the_chapter_synopsis_opens_the_second_message_on_one_line() {
        let e = Entry {
            source: "Agent".into(),
            target: "智能体".into(),
            note: String::new(),
            origin: Origin::HouseStyle,
            forbidden: Vec::new(),
            variants: Vec::new(),
        };
        let with = Setup {
            chapter_brief: "- `ch2`: Loops →\n  how agents repeat.".into(),
            ..setup()
        };
        let r = build_request_with_context(&with, &[&e], "An Agent acts.\n", None, Some("Before."));
        let second = &r.messages[1].content;
        assert!(
            second.starts_with(&format!(
                "{CHAPTER_BRIEF_HEADER} - `ch2`: Loops → how agents repeat.\n\nGlossary (use these renderings):\n- Agent → 智能体\n"
            )),
            "{second}"
        );
        // The synopsis line is not read as a glossary line; the unit stays last; the stable
        // prefix does not depend on the chapter.
        assert_eq!(
            parse_glossary_message(second),
            vec![("Agent".to_string(), "智能体".to_string())]
        );
        assert_eq!(source_of(&r), Some("An Agent acts.\n"));
        let plain = build_request(&setup(), &[&e], "An Agent acts.\n", None);
        assert_eq!(r.messages[0], plain.messages[0]);
        assert!(!plain.messages[1].content.contains(CHAPTER_BRIEF_HEADER));
        assert_eq!(chapter_brief_message(" \n "), "");
    }

    #[test]
    fn prompt_has_no_part_labels() {
        let r = build_request(&setup(), &[], "x", None);
        let all: String = r.messages.iter().map(|m| m.content.clone()).collect();
        assert!(!all.to_lowercase().contains("part 1"));
        assert!(!all.contains("[Part"));
    }

    #[test]
    fn cleans_preamble_think_and_fence() {
        let src = "Hello world.\n\n";
        let (out, c) = postprocess(
            src,
            "<think>hmm</think>Here is the translation:\n```markdown\n你好，世界。\n```\n",
        );
        assert_eq!(out, "你好，世界。\n\n");
        assert!(c.think_removed && c.fence_unwrapped && c.preamble_removed.is_some());
    }

    #[test]
    fn think_tags_inside_the_text_are_kept() {
        let src = "Reasoning goes between `<think>` and `</think>`.\n\n## Next\n";
        let answer = "推理写在 `<think>` 和 `</think>` 之间。\n\n## 下一节";
        let (out, c) = postprocess(src, answer);
        assert_eq!(out, format!("{answer}\n"));
        assert!(!c.think_removed);
    }

    #[test]
    fn keeps_source_fence_and_crlf() {
        let src = "```\ncode\n```\r\n\r\n";
        let (out, c) = postprocess(src, "```\ncode\n```");
        assert_eq!(out, "```\r\ncode\r\n```\r\n\r\n");
        assert!(!c.fence_unwrapped);
    }

    #[test]
    fn inner_fences_are_not_unwrapped() {
        let src = "Text.\n\n```py\nx\n```\n\nMore.\n";
        let answer = "```\n文本。\n```\n\n```py\nx\n```\n\n更多。";
        let (out, c) = postprocess(src, answer);
        assert!(!c.fence_unwrapped);
        assert!(out.contains("```py\nx\n```"));
    }

    #[test]
    fn revision_carries_previous_and_feedback() {
        let r = Revision {
            previous: "旧译文".into(),
            feedback: vec!["untranslated".into()],
        };
        let req = build_request(&setup(), &[], "Source.\n", Some(&r));
        let (prev, fb) = revision_of(&req).unwrap();
        assert_eq!(prev, "旧译文");
        assert!(fb.contains("untranslated"));
        assert_eq!(source_of(&req), Some("Source.\n"));
    }
}
