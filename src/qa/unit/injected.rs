//! `injected_text` (error): text in the translation that is not a translation of the source.
//! Everything below is flagged only when the source does not contain it too (a book about
//! prompting may well quote "Translation:" or a `<think>` tag), nor, for prefaces and closings,
//! an English or Chinese equivalent (a dialogue ending "I hope this helps" may be translated
//! "希望对你有帮助").
//!
//! - **Model prefaces and closings**: the first 3 and last 5 non-empty lines are compared,
//!   with Markdown emphasis removed and case ignored, with phrases models put around a
//!   translation: "Here is the translation", "Here's the translated", "Translation:", "Sure,
//!   here", "I hope this helps", "Let me know if", "Note: I", "以下是译文", "以下是翻译",
//!   "译文如下", "希望对你有帮助", "翻译说明", "译者注", …
//! - **Unit and part labels**, anywhere: "[Part 1/5]", "Part 2 of 5", "(1/3)", "[第1部分/共5部分]",
//!   "第1部分", "Unit 3", "Chunk 2", "Segment 4", "Section 2 of 5". A label with a total
//!   ("of 5", "/5", "共5部分") or a fraction in brackets is flagged wherever it stands; a bare
//!   one ("Part 1", "第1部分", "Unit 3") only when it looks like a label, i.e. in brackets or
//!   alone on its line (a heading or an emphasised line, optionally followed by a colon), so
//!   that running text such as "第一部分介绍了…" is left alone. Labels are compared by kind
//!   and number across languages: "第1部分" in the translation is fine when the source says
//!   "Part 1" or "Part One".
//! - **`<think>` blocks**: more `<think>`/`</think>`/`<thinking>` tags than the source has.
//! - **Echoed prompt text**: fragments of booktr's own Translation prompt (derived from
//!   [`crate::agents::translation`] at first use, so they follow its wording): "You are a
//!   professional technical translator", "Reply with the translated Markdown only", "Translation
//!   guide:", "Glossary (use these renderings)", "A review found problems in your translation",
//!   the default guide's lines, the lines of the example exchange in every language it has
//!   ([`crate::agents::translation::example_pair`]), and a "Rules:" line followed by numbered
//!   rules.
//! - **A review marker alone on its line** (`[待审]`), marking no rendering.
//! - **Meta replies**: a reply asking for the text instead of translating it ("Please provide
//!   the text to translate", "Veuillez fournir le texte", "请提供需要翻译的…"), anywhere.
//! - **Blocks with no source counterpart** before the first or after the last translated block
//!   ([`crate::qa::unit::structure::extra_ends`]), in any language: the structural form of a lead-in,
//!   echoed instruction, meta reply or trailing note, reported unless a phrase above already
//!   names the block. A source paragraph that starts with "Note:" has its counterpart, so its
//!   translation ("Remarque :") raises no alarm.
//!
//! The phrase lists cover en, zh, ja, ko, de, fr, es, it, pt and ru; a phrase is not flagged
//! when the source has any phrase of the same list.
//!
//! No numeric thresholds; the line windows (3 first, 5 last) cover a preface separated by a
//! blank line and a closing note after a `---` rule.

use std::collections::HashSet;
use std::sync::OnceLock;

use crate::agents::translation::{self, Revision, Setup};
use crate::lang::{Lang, Script};
use crate::qa::view::doc::Doc;
use crate::qa::{Finding, QaContext, Severity};
use crate::termbase::{Entry, Origin};

const CHECK: &str = "injected_text";

/// Phrases that start a model's preface (matched at the start of one of the first lines).
const PREFACE_STARTS: &[&str] = &[
    "here is the translation",
    "here's the translation",
    "here is the translated",
    "here's the translated",
    "here is my translation",
    "here's my translation",
    "below is the translation",
    "the following is the translation",
    "the translation is",
    "sure, here",
    "sure! here",
    "certainly, here",
    "certainly! here",
    "好的，以下是",
    "好的,以下是",
    "好的，这是",
    "这是翻译",
    "这是译文",
    // de, fr, es, it, pt, ru
    "hier ist die übersetzung",
    "hier ist meine übersetzung",
    "hier ist der übersetzte",
    "gerne, hier ist",
    "natürlich, hier ist",
    "voici la traduction",
    "voici ma traduction",
    "voici le texte traduit",
    "bien sûr, voici",
    "certainement, voici",
    "aquí está la traducción",
    "aquí tienes la traducción",
    "claro, aquí",
    "por supuesto, aquí",
    "ecco la traduzione",
    "ecco il testo tradotto",
    "certo, ecco",
    "aqui está a tradução",
    "segue a tradução",
    "claro, aqui está",
    "вот перевод",
    "ниже приведён перевод",
    "ниже приведен перевод",
    "конечно, вот",
];

/// Label lines a model puts before its translation ("Translation:", "译文："): flagged when
/// such a line, ending with a colon, is the whole line and the translation has more non-empty
/// lines than the source (a translated label line of the source, "**Translation:**" → "**译文：**",
/// keeps the line count).
const PREFACE_LABELS: &[&str] = &[
    "translation",
    "translated text",
    "translated version",
    "译文",
    "翻译",
    "中文翻译",
    "中文译文",
    "übersetzung",
    "traduction",
    "traducción",
    "traduzione",
    "tradução",
    "перевод",
    "翻訳",
    "訳文",
    "번역",
    "번역문",
];

/// Phrases of a preface found anywhere in one of the first lines (Chinese prefaces often
/// start with a politeness word first).
const PREFACE_CONTAINS: &[&str] = &[
    "以下是译文",
    "以下为译文",
    "以下是翻译",
    "以下为翻译",
    "以下是中文翻译",
    "以下是中文译文",
    "下面是翻译",
    "下面是译文",
    "译文如下",
    "翻译如下",
    "翻译后的内容",
    "翻译后的文本",
    // ja, ko
    "以下は翻訳",
    "以下が翻訳",
    "以下は日本語訳",
    "以下が日本語訳",
    "翻訳は以下",
    "翻訳文は以下",
    "다음은 번역",
    "번역은 다음과",
    "번역문은 다음",
];

/// Phrases of a closing note, found anywhere in one of the last lines.
const CLOSING_CONTAINS: &[&str] = &[
    "i hope this helps",
    "hope this helps",
    "hope that helps",
    "let me know if",
    "feel free to ask",
    "translator's note",
    "translation note",
    "希望对你有帮助",
    "希望对您有帮助",
    "希望这对你有帮助",
    "希望这对您有帮助",
    "翻译说明",
    "译者注",
    "译注：",
    "ich hoffe, das hilft",
    "hoffe, das hilft",
    "anmerkung des übersetzers",
    "lassen sie mich wissen",
    "j'espère que cela",
    "n'hésitez pas",
    "note du traducteur",
    "note de traduction",
    "espero que esto",
    "no dudes en",
    "nota del traductor",
    "nota de traducción",
    "spero che questo",
    "non esitare",
    "nota del traduttore",
    "espero que isso",
    "não hesite",
    "nota do tradutor",
    "надеюсь, это",
    "примечание переводчика",
    "не стесняйтесь",
    "お役に立てれば",
    "訳注：",
    "翻訳メモ",
    "도움이 되었으면",
    "도움이 되길",
    "역자 주",
];

/// Phrases that start a closing note line.
const CLOSING_STARTS: &[&str] = &[
    "note: i ",
    "note: i'",
    "note: the translation",
    "note: this translation",
    "(note:",
    "注：以上",
    "注：本译文",
    "注：我",
    "remarque : j",
    "remarque : la traduction",
    "remarque : cette traduction",
    "remarque: j",
    "hinweis: ich",
    "anmerkung: ich",
    "hinweis: die übersetzung",
    "nota: he ",
    "nota: la traducción",
    "nota: ho ",
    "nota: a tradução",
    "примечание: я ",
    "примечание: перевод",
    "注：翻訳",
    "참고: 번역",
];

/// Replies that ask for the text instead of translating it ("Please provide the text to
/// translate"), found anywhere in the translation, in en, zh, ja, ko, de, fr, es, it, pt and ru.
const META_REPLIES: &[&str] = &[
    "please provide the text",
    "please provide the markdown",
    "provide the text you would like",
    "provide the text you want",
    "there is no text to translate",
    "you haven't provided",
    "you have not provided",
    "请提供需要翻译的",
    "请提供要翻译的",
    "请提供您要翻译的",
    "请提供你要翻译的",
    "没有提供需要翻译",
    "翻訳するテキストを",
    "翻訳したいテキストを",
    "翻訳対象のテキストを",
    "번역할 텍스트를",
    "번역할 내용을",
    "bitte geben sie den text",
    "bitte gib den text",
    "bitte stellen sie den text",
    "bitte senden sie den text",
    "veuillez fournir le texte",
    "merci de fournir le texte",
    "pouvez-vous fournir le texte",
    "aucun texte à traduire",
    "proporciona el texto",
    "proporcione el texto",
    "no hay texto para traducir",
    "fornisci il testo",
    "fornire il testo",
    "forneça o texto",
    "предоставьте текст",
    "пришлите текст",
];

/// Phrases that say the same thing in English and Chinese: a phrase of the translation is not
/// injected when the source has any phrase of its group (a dialogue in the source that ends
/// with "I hope this helps" may be translated "希望对你有帮助").
const EQUIVALENTS: &[&[&str]] = &[
    &[
        "i hope this helps",
        "hope this helps",
        "hope that helps",
        "hope it helps",
        "希望对你有帮助",
        "希望对您有帮助",
        "希望这对你有帮助",
        "希望这对您有帮助",
    ],
    &[
        "translator's note",
        "translation note",
        "translator note",
        "翻译说明",
        "译者注",
        "译注：",
    ],
    &[
        "here is the translation",
        "here's the translation",
        "here is the translated",
        "here's the translated",
        "here is my translation",
        "here's my translation",
        "below is the translation",
        "the following is the translation",
        "the translation is",
        "this is the translation",
        "以下是译文",
        "以下为译文",
        "以下是翻译",
        "以下为翻译",
        "以下是中文翻译",
        "以下是中文译文",
        "下面是翻译",
        "下面是译文",
        "译文如下",
        "翻译如下",
        "翻译后的内容",
        "翻译后的文本",
        "这是翻译",
        "这是译文",
    ],
    &[
        "sure, here",
        "sure! here",
        "certainly, here",
        "certainly! here",
        "okay, here",
        "ok, here",
        "好的，以下是",
        "好的,以下是",
        "好的，这是",
    ],
    &["note: i ", "note: i'", "注：我"],
    META_REPLIES,
];

/// Whether the source (lower-cased) has `pattern` or an equivalent phrase.
fn in_source(src_lower: &str, pattern: &str) -> bool {
    src_lower.contains(pattern)
        || [
            PREFACE_STARTS,
            PREFACE_CONTAINS,
            CLOSING_CONTAINS,
            META_REPLIES,
        ]
        .iter()
        .filter(|list| list.contains(&pattern))
        .any(|list| list.iter().any(|e| src_lower.contains(e)))
        || EQUIVALENTS
            .iter()
            .filter(|g| g.contains(&pattern))
            .any(|g| g.iter().any(|e| src_lower.contains(e)))
}

/// Runs the check (see the module docs).
pub fn check(ctx: &QaContext, src: &Doc, tgt: &Doc, source: &str, target: &str) -> Vec<Finding> {
    let src_lower = source.to_lowercase();
    let tgt_lower = target.to_lowercase();
    let mut out = Vec::new();
    lone_markers(&mut out, &ctx.review_marker, source, target);
    // A translation made elsewhere has no model to preface, close or pad an answer: text at
    // its ends without a counterpart is a translator's note or an addition, a warning like
    // `addition` (what a model echoes, reasons or asks stays an error everywhere).
    let severity = if ctx.human_edition {
        Severity::Warning
    } else {
        Severity::Error
    };
    prefaces(&mut out, &src_lower, target, severity);
    think(&mut out, &src_lower, &tgt_lower, target);
    prompt_text(&mut out, &src_lower, &tgt_lower, target);
    labels(&mut out, source, target);
    meta_replies(&mut out, &src_lower, &tgt_lower, target);
    extra_blocks(&mut out, src, tgt, severity);
    out
}

/// A review marker alone on its line (`[待审]`), which marks no rendering: the reader would see
/// it in the page. Flagged when the source has no such line.
fn lone_markers(out: &mut Vec<Finding>, marker: &str, source: &str, target: &str) {
    let alone = |text: &str| text.lines().filter(|l| l.trim() == marker).count();
    if marker.trim().is_empty() || alone(target) <= alone(source) {
        return;
    }
    out.push(Finding::new(
        CHECK,
        Severity::Error,
        format!(
            "the review marker {marker} stands alone on a line, after no rendering; remove it (marks follow a coined rendering, and this one would show in the page)"
        ),
        "",
        marker,
    ));
}

fn meta_replies(out: &mut Vec<Finding>, src_lower: &str, tgt_lower: &str, target: &str) {
    if let Some(p) = META_REPLIES
        .iter()
        .find(|p| tgt_lower.contains(**p) && !in_source(src_lower, p))
    {
        out.push(Finding::new(
            CHECK,
            Severity::Error,
            format!(
                "the translation is a reply asking for the text (\"{}\"), not a translation; translate the source text",
                crate::util::excerpt(line_containing(target, tgt_lower, p), 60)
            ),
            "",
            line_containing(target, tgt_lower, p),
        ));
    }
}

/// Leading and trailing blocks with no source counterpart ([`crate::qa::unit::structure::extra_ends`]),
/// unless a finding above already names their text.
fn extra_blocks(out: &mut Vec<Finding>, src: &Doc, tgt: &Doc, severity: Severity) {
    let squash = |s: &str| {
        s.chars()
            .filter(|c| c.is_alphanumeric())
            .collect::<String>()
    };
    let named: Vec<String> = out
        .iter()
        .map(|f| squash(&f.target_excerpt).chars().take(24).collect())
        .filter(|s: &String| !s.is_empty())
        .collect();
    let ends = crate::qa::unit::structure::extra_ends(src, tgt);
    // One finding per side: a run of added blocks is one injected text.
    for side in [true, false] {
        let run: Vec<_> = ends
            .iter()
            .filter(|(_, l)| *l == side)
            .map(|(b, _)| *b)
            .collect();
        let Some(b) = run.first() else { continue };
        let is_named = |b: &&crate::qa::unit::structure::Block| {
            let text = squash(&b.text);
            named
                .iter()
                .any(|n| text.contains(n.as_str()) || n.contains(&text))
        };
        if run.iter().any(is_named) {
            continue;
        }
        let (why, fix) = match (severity, side) {
            (Severity::Error, true) => (
                "a lead-in or an echoed instruction?",
                "remove it and reply with the translation only",
            ),
            (Severity::Error, false) => (
                "a note or a question of the model?",
                "remove it and reply with the translation only",
            ),
            _ => (
                "a translator's note or an addition?",
                "keep it if the translator meant it, remove it otherwise",
            ),
        };
        out.push(Finding::new(
            CHECK,
            severity,
            format!(
                "{} of the translation ({} block{}) has no counterpart in the source (\"{}\"): {why}; {fix}",
                if side { "the start" } else { "the end" },
                run.len(),
                if run.len() == 1 { "" } else { "s" },
                crate::util::excerpt(b.text.trim(), 60),
            ),
            "",
            b.text.trim(),
        ));
    }
}

/// A line lower-cased, without Markdown decoration and with whitespace collapsed.
fn normalise(line: &str) -> String {
    let cleaned: String = line
        .chars()
        .filter(|c| !matches!(c, '*' | '_' | '#' | '>' | '`'))
        .collect::<String>()
        .to_lowercase();
    let cleaned = cleaned.trim_start_matches(['-', '+', ' ', '\t']);
    cleaned.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn prefaces(out: &mut Vec<Finding>, src_lower: &str, target: &str, severity: Severity) {
    let lines: Vec<&str> = target.lines().filter(|l| !l.trim().is_empty()).collect();
    let extra_lines = lines.len() > src_lower.lines().filter(|l| !l.trim().is_empty()).count();
    let label_line = |l: &str| {
        l.strip_suffix([':', '：'])
            .map(str::trim_end)
            .and_then(|l| PREFACE_LABELS.iter().find(|p| **p == l))
    };
    // A source with a label line of its own ("**Translation:**") may keep it translated.
    let source_has_label = src_lower
        .lines()
        .any(|l| label_line(&normalise(l)).is_some());
    let first = lines.len().min(3);
    let last_from = lines.len().saturating_sub(5);
    let mut seen = HashSet::new();
    for (i, line) in lines.iter().enumerate() {
        if i >= first && i < last_from {
            continue;
        }
        let l = normalise(line);
        let mut hit = |pattern: &'static str, what: &str, fix: &str| {
            let fix = if severity == Severity::Error {
                fix
            } else {
                "keep it if it is the translator's note, remove it otherwise"
            };
            if !in_source(src_lower, pattern) && seen.insert(pattern) {
                out.push(Finding::new(
                    CHECK,
                    severity,
                    format!(
                        "the translation {what} the source does not have (\"{}\"); {fix}",
                        crate::util::excerpt(line.trim(), 60)
                    ),
                    "",
                    line.trim(),
                ));
            }
        };
        if i < first {
            let label = label_line(&l).filter(|_| extra_lines && !source_has_label);
            let p = PREFACE_STARTS
                .iter()
                .find(|p| l.starts_with(**p))
                .or_else(|| PREFACE_CONTAINS.iter().find(|p| l.contains(**p)))
                .or(label);
            if let Some(p) = p {
                hit(
                    p,
                    "starts with a preface",
                    "reply with the translation only",
                );
                continue;
            }
        }
        if i >= last_from {
            let p = CLOSING_CONTAINS
                .iter()
                .find(|p| l.contains(**p))
                .or_else(|| CLOSING_STARTS.iter().find(|p| l.starts_with(**p)));
            if let Some(p) = p {
                hit(
                    p,
                    "ends with a note",
                    "remove it and reply with the translation only",
                );
            }
        }
    }
}

fn think(out: &mut Vec<Finding>, src_lower: &str, tgt_lower: &str, target: &str) {
    for tag in ["<think>", "</think>", "<thinking>", "</thinking>"] {
        let (s, t) = (
            src_lower.matches(tag).count(),
            tgt_lower.matches(tag).count(),
        );
        if t > s {
            let at = tgt_lower.find(tag).unwrap_or(0);
            // Lower-casing may shift offsets in rare scripts; fall back to the whole text.
            let excerpt = target.get(at..).unwrap_or(target);
            out.push(Finding::new(
                CHECK,
                Severity::Error,
                format!(
                    "the translation contains a {tag} tag the source does not have; remove the model's reasoning block"
                ),
                "",
                excerpt,
            ));
            return;
        }
    }
}

/// Lower-cased fragments of booktr's Translation prompt (see the module docs).
fn prompt_fragments() -> &'static [String] {
    static FRAGMENTS: OnceLock<Vec<String>> = OnceLock::new();
    FRAGMENTS.get_or_init(|| {
        // Language names are replaced by a placeholder, and fragments end before it, so they
        // match whatever language pair a campaign uses.
        let placeholder = |code: &str| Lang {
            code: code.into(),
            name: "\u{1}".into(),
            script: Script::Latin,
        };
        let setup = Setup {
            source: placeholder("en"),
            target: placeholder("zh"),
            guide: translation::default_guide(&Lang::parse("zh")),
            review_marker: "\u{1}".into(),
            brief: String::new(),
            code_comments: Default::default(),
            // The chapter synopsis line's opening words are prompt text too.
            chapter_brief: "\u{1}".into(),
            // The example exchange's lines are added below, in every language.
            example: None,
        };
        let entry = Entry {
            source: "\u{1}".into(),
            target: "\u{1}".into(),
            note: String::new(),
            origin: Origin::HouseStyle,
            forbidden: Vec::new(),
            variants: Vec::new(),
        };
        let revision = Revision {
            previous: String::new(),
            feedback: Vec::new(),
        };
        let request = translation::build_request_with_context(
            &setup,
            &[&entry],
            "\u{1}",
            Some(&revision),
            Some("\u{1}"),
        );
        let mut text: String = request
            .messages
            .iter()
            .map(|m| m.content.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        text.push('\n');
        text.push_str(&translation::glossary_message(&[]));
        let mut out: Vec<String> = Vec::new();
        for line in text.lines() {
            let l = line.trim();
            let l = l.trim_start_matches(|c: char| c.is_ascii_digit());
            let l = l.trim_start_matches(['.', '-', ' ']);
            let l = l.split('\u{1}').next().unwrap_or("");
            let l = l.split(". ").next().unwrap_or("");
            let l = l.split(';').next().unwrap_or("").trim();
            let cut = l.char_indices().nth(60).map_or(l.len(), |(i, _)| i);
            let f = l[..cut].trim().trim_end_matches('.').to_lowercase();
            if f.chars().count() >= 12 && !out.contains(&f) {
                out.push(f);
            }
        }
        // The example exchange's lines, in every language booktr has it for: a model that
        // copies the example into its answer has injected it.
        for text in translation::example_texts() {
            for line in text.lines() {
                let l = line.trim().trim_start_matches("- ").trim().to_lowercase();
                if l.chars().count() >= 8 && !out.contains(&l) {
                    out.push(l);
                }
            }
        }
        for zh in [
            "翻译指南：",
            "翻译指南:",
            "术语表（使用这些译法）",
            "术语表（请使用",
        ] {
            out.push(zh.to_string());
        }
        out
    })
}

fn prompt_text(out: &mut Vec<Finding>, src_lower: &str, tgt_lower: &str, target: &str) {
    for f in prompt_fragments() {
        if tgt_lower.contains(f.as_str()) && !src_lower.contains(f.as_str()) {
            out.push(Finding::new(
                CHECK,
                Severity::Error,
                format!(
                    "the translation contains text from booktr's instructions (\"{f}\"); remove it and translate only the source text"
                ),
                "",
                line_containing(target, tgt_lower, f),
            ));
        }
    }
    // "Rules:" followed by numbered rules.
    let rules_at = |text: &str| {
        let lines: Vec<String> = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(normalise)
            .collect();
        lines.windows(2).any(|w| {
            matches!(w[0].as_str(), "rules:" | "规则：" | "规则:") && w[1].starts_with("1.")
        })
    };
    if rules_at(target) && !rules_at(src_lower) {
        out.push(Finding::new(
            CHECK,
            Severity::Error,
            "the translation contains a \"Rules:\" list from booktr's instructions; remove it and translate only the source text",
            "",
            line_containing(target, tgt_lower, "rules:"),
        ));
    }
}

/// The line of `target` containing `needle` (searched in its lower-cased form).
fn line_containing<'a>(target: &'a str, lower: &str, needle: &str) -> &'a str {
    target
        .lines()
        .zip(lower.lines())
        .find(|(_, l)| l.contains(needle))
        .map_or("", |(t, _)| t.trim())
}

/// What a label counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    Part,
    Unit,
    Chunk,
    Segment,
    Section,
    /// `(1/3)`.
    Fraction,
}

/// A unit or part label found in a text.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Label {
    kind: Kind,
    n: u32,
    total: Option<u32>,
    /// Looks like a label (total, brackets or alone on its line) rather than running text.
    labelish: bool,
    /// The label as written.
    text: String,
}

impl Label {
    fn key(&self) -> (Kind, u32, Option<u32>) {
        (self.kind, self.n, self.total)
    }
}

fn labels(out: &mut Vec<Finding>, source: &str, target: &str) {
    let found = scan_labels(target);
    if !found.iter().any(|l| l.labelish) {
        return;
    }
    let mut in_source: HashSet<(Kind, u32, Option<u32>)> = HashSet::new();
    for l in scan_labels(source) {
        in_source.insert((l.kind, l.n, None));
        in_source.insert(l.key());
    }
    let mut reported = HashSet::new();
    for l in found.iter().filter(|l| l.labelish) {
        if in_source.contains(&l.key()) || !reported.insert(l.key()) {
            continue;
        }
        out.push(Finding::new(
            CHECK,
            Severity::Error,
            format!(
                "the translation contains the label \"{}\" that the source does not have; remove unit and part labels",
                l.text
            ),
            "",
            &l.text,
        ));
    }
}

/// A number written as digits, a Chinese numeral up to 99, an English word (one to twenty) or
/// a Roman numeral (I to XX), at the start of `s`; returns the value and its byte length.
fn number_at(s: &str) -> Option<(u32, usize)> {
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 {
        return s[..digits.min(6)].parse().ok().map(|v| (v, digits));
    }
    let cn: String = s
        .chars()
        .take_while(|c| "零〇一二三四五六七八九十两".contains(*c))
        .collect();
    if !cn.is_empty() {
        let v = cn_number(&cn)?;
        return Some((v, cn.len()));
    }
    let word: String = s
        .chars()
        .take_while(|c| c.is_ascii_alphabetic())
        .map(|c| c.to_ascii_lowercase())
        .collect();
    const WORDS: &[&str] = &[
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "sixteen",
        "seventeen",
        "eighteen",
        "nineteen",
        "twenty",
    ];
    const ROMAN: &[&str] = &[
        "i", "ii", "iii", "iv", "v", "vi", "vii", "viii", "ix", "x", "xi", "xii", "xiii", "xiv",
        "xv", "xvi", "xvii", "xviii", "xix", "xx",
    ];
    WORDS
        .iter()
        .position(|w| *w == word)
        .or_else(|| ROMAN.iter().position(|w| *w == word))
        .map(|i| (i as u32 + 1, word.len()))
}

fn cn_number(s: &str) -> Option<u32> {
    let d = |c: char| {
        "零一二三四五六七八九"
            .find(c)
            .map(|i| (i / 3) as u32)
            .or(match c {
                '〇' => Some(0),
                '两' => Some(2),
                _ => None,
            })
    };
    let cs: Vec<char> = s.chars().collect();
    match cs.iter().position(|&c| c == '十') {
        None if cs.len() == 1 => d(cs[0]),
        None => None,
        Some(p) if cs.len() <= 3 && p <= 1 => {
            let tens = if p == 0 { 1 } else { d(cs[0])? };
            let ones = match cs.get(p + 1) {
                None => 0,
                Some(c) => d(*c)?,
            };
            Some(tens * 10 + ones)
        }
        Some(_) => None,
    }
}

const OPEN: &[char] = &['[', '(', '【', '（'];
const CLOSE: &[char] = &[']', ')', '】', '）'];

/// Every part/unit label of `text`, line by line (see the module docs): English keywords,
/// Chinese 第N部分 labels, then fractions in brackets.
fn scan_labels(text: &str) -> Vec<Label> {
    let mut out = Vec::new();
    for line in text.lines() {
        if !line.contains(|c: char| c.is_ascii_digit() || c == '第' || c.is_ascii_alphabetic()) {
            continue;
        }
        let line = LabelLine::new(line);
        line.english(&mut out);
        line.chinese(&mut out);
        line.fractions(&mut out);
    }
    out
}

/// One line scanned for labels.
struct LabelLine<'l> {
    line: &'l str,
    lower: String,
    /// Byte range of the line without decoration, to tell a line that is only a label.
    core_start: usize,
    core_end: usize,
}

impl<'l> LabelLine<'l> {
    fn new(line: &'l str) -> LabelLine<'l> {
        let core = line.trim_matches(|c: char| {
            c.is_whitespace() || matches!(c, '#' | '*' | '_' | '>' | '-' | '+' | '=')
        });
        let core_start = core.as_ptr() as usize - line.as_ptr() as usize;
        LabelLine {
            line,
            lower: line.to_ascii_lowercase(),
            core_start,
            core_end: core_start + core.len(),
        }
    }

    /// Whether the label at `start..end` stands as a label: with a total, in brackets, or
    /// alone on its line (or before a colon or dash).
    fn labelish(&self, start: usize, end: usize, total: bool) -> bool {
        let line = self.line;
        let before = line[..start].trim_end();
        let after = line[end..].trim_start();
        let bracketed = before.ends_with(OPEN) && after.starts_with(CLOSE);
        let alone = start <= self.core_start
            && (end >= self.core_end
                || line[end..self.core_end]
                    .trim_start()
                    .starts_with([':', '：', '-', '—', '–', '.']));
        total || bracketed || alone
    }

    /// English keywords: `Part 2`, `unit 3 of 5`, `Section #4/7`.
    fn english(&self, out: &mut Vec<Label>) {
        let (line, lower) = (self.line, &self.lower);
        for (word, kind) in [
            ("part", Kind::Part),
            ("unit", Kind::Unit),
            ("chunk", Kind::Chunk),
            ("segment", Kind::Segment),
            ("section", Kind::Section),
        ] {
            let mut from = 0;
            while let Some(p) = lower[from..].find(word).map(|p| p + from) {
                from = p + word.len();
                if p > 0 && lower.as_bytes()[p - 1].is_ascii_alphanumeric() {
                    continue;
                }
                let rest = &lower[from..];
                let skip = rest.len() - rest.trim_start_matches([' ', '#']).len();
                if skip == 0 && !rest.starts_with(|c: char| c.is_ascii_digit()) {
                    continue;
                }
                let Some((n, len)) = number_at(&rest[skip..]) else {
                    continue;
                };
                let mut end = from + skip + len;
                if lower[end..].starts_with(|c: char| c.is_ascii_alphanumeric()) {
                    continue;
                }
                let mut total = None;
                let tail = &lower[end..];
                let t = tail.trim_start();
                let sep = if t.starts_with('/') {
                    Some(1)
                } else if t.starts_with("of ") {
                    Some(2)
                } else {
                    None
                };
                if let Some(sep) = sep {
                    let after = &t[sep..];
                    let ws = after.len() - after.trim_start().len();
                    if let Some((m, mlen)) = number_at(&after[ws..]) {
                        total = Some(m);
                        end += tail.len() - t.len() + sep + ws + mlen;
                    }
                }
                out.push(Label {
                    kind,
                    n,
                    total,
                    labelish: self.labelish(p, end, total.is_some()),
                    text: line[p..end].to_string(),
                });
            }
        }
    }

    /// Chinese: 第N部分, 第N单元, optionally with a total (/共M部分, （共M部分）).
    fn chinese(&self, out: &mut Vec<Label>) {
        let line = self.line;
        let mut from = 0;
        while let Some(p) = line[from..].find('第').map(|p| p + from) {
            from = p + '第'.len_utf8();
            let rest = &line[from..];
            let ws = rest.len() - rest.trim_start().len();
            let Some((n, len)) = number_at(&rest[ws..]) else {
                continue;
            };
            let after = &rest[ws + len..];
            let after_t = after.trim_start();
            let kind = if after_t.starts_with("部分") {
                Kind::Part
            } else if after_t.starts_with("单元") {
                Kind::Unit
            } else {
                continue;
            };
            let mut end = from + ws + len + (after.len() - after_t.len()) + "部分".len();
            let tail = &line[end..];
            let t = tail.trim_start_matches([' ', '/', '／', '(', '（', ',', '，']);
            let mut total = None;
            if let Some(t2) = t.strip_prefix('共') {
                let ws2 = t2.len() - t2.trim_start().len();
                if let Some((m, mlen)) = number_at(&t2[ws2..]) {
                    let t3 = t2[ws2 + mlen..].trim_start();
                    let t3 = t3.strip_prefix('个').unwrap_or(t3);
                    if t3.starts_with("部分") || t3.starts_with("单元") {
                        total = Some(m);
                        end = line.len() - t3.len() + "部分".len();
                    }
                }
            }
            out.push(Label {
                kind,
                n,
                total,
                labelish: self.labelish(p, end, total.is_some()),
                text: line[p..end].to_string(),
            });
        }
    }

    /// Fractions in brackets: (1/3), [2/5], 【1/3】.
    fn fractions(&self, out: &mut Vec<Label>) {
        let line = self.line;
        for (p, c) in line.char_indices() {
            if !OPEN.contains(&c) {
                continue;
            }
            let inner = &line[p + c.len_utf8()..];
            let Some(close) = inner.find(CLOSE) else {
                continue;
            };
            let body: String = inner[..close]
                .chars()
                .filter(|c| !c.is_whitespace())
                .collect();
            let Some((a, b)) = body.split_once('/') else {
                continue;
            };
            if let (Ok(n), Ok(m)) = (a.parse::<u32>(), b.parse::<u32>())
                && n >= 1
                && n <= m
                && (2..1000).contains(&m)
            {
                let end = p + c.len_utf8() + close;
                let end = end + inner[close..].chars().next().map_or(0, char::len_utf8);
                out.push(Label {
                    kind: Kind::Fraction,
                    n,
                    total: Some(m),
                    labelish: true,
                    text: line[p..end].to_string(),
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every version of the example is a faithful translation of every other by booktr's own
    /// QA (no error finding but `injected_text`, which reports the example's lines copied into
    /// a translation), so the example teaches nothing QA would then reject.
    #[test]
    fn every_example_version_passes_qa_against_every_other() {
        use crate::agents::translation;
        use crate::lang::Lang;
        use crate::qa::{self, QaContext, Severity};
        use crate::termbase::Termbase;
        let langs = [
            "en", "zh", "zh-Hant", "ja", "ko", "de", "fr", "es", "pt", "it", "ru",
        ];
        for a in langs {
            for b in langs {
                let (la, lb) = (Lang::parse(a), Lang::parse(b));
                let Some((src, tgt)) = translation::example_pair(&la, &lb) else {
                    assert!(
                        a == b || (a.starts_with("zh") && b.starts_with("zh")),
                        "{a} -> {b}"
                    );
                    continue;
                };
                let ctx = QaContext::new(&la, &lb, &Termbase::default());
                let errors: Vec<_> = qa::check_unit(&ctx, "u", "", src, tgt)
                    .into_iter()
                    .filter(|f| f.severity == Severity::Error && f.check != "injected_text")
                    .collect();
                assert!(errors.is_empty(), "{a} -> {b}: {errors:#?}");
            }
        }
    }

    use crate::termbase::Termbase;

    fn run(s: &str, t: &str) -> Vec<Finding> {
        let ctx = QaContext::new(&Lang::parse("en"), &Lang::parse("zh"), &Termbase::default());
        check(&ctx, &Doc::parse(s), &Doc::parse(t), s, t)
    }

    fn messages(f: &[Finding]) -> Vec<&str> {
        f.iter().map(|f| f.message.as_str()).collect()
    }

    #[test]
    fn a_translators_note_at_the_end_of_a_human_edition_is_a_warning_and_a_models_an_error() {
        let src = "Memory is how an Agent keeps facts across sessions.\n";
        let tgt = "记忆是 Agent 跨会话保存事实的方式。\n\n**译注**：这里的“会话”指一次对话。\n";
        let mut ctx = QaContext::new(&Lang::parse("en"), &Lang::parse("zh"), &Termbase::default());
        let f = check(&ctx, &Doc::parse(src), &Doc::parse(tgt), src, tgt);
        assert!(
            !f.is_empty() && f.iter().all(|f| f.severity == Severity::Error),
            "{f:#?}"
        );
        ctx.human_edition = true;
        let f = check(&ctx, &Doc::parse(src), &Doc::parse(tgt), src, tgt);
        assert!(
            !f.is_empty() && f.iter().all(|f| f.severity == Severity::Warning),
            "{f:#?}"
        );
        assert!(f.iter().all(|f| f.message.contains("translator")), "{f:#?}");
        // What only a model writes stays an error.
        let think = "<think>translate it</think>记忆是 Agent 跨会话保存事实的方式。\n";
        let f = check(&ctx, &Doc::parse(src), &Doc::parse(think), src, think);
        assert!(f.iter().any(|f| f.severity == Severity::Error), "{f:#?}");
    }

    #[test]
    fn a_review_marker_alone_on_a_line_is_injected_text() {
        let f = run(
            "(interactive:comments)=\n# Commenting and annotating\n",
            "[待审]\n# 注释和注解\n",
        );
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(
            f[0].message.contains("[待审] stands alone"),
            "{}",
            f[0].message
        );
        // After a rendering it marks something: no finding.
        assert!(run("An agent loop.\n", "智能体（Agent）[待审]循环。\n").is_empty());
    }

    const SRC: &str = "Memory is how an Agent keeps facts across sessions.\n\nThe next step is to let it write its own memories.\n";
    const TGT: &str = "记忆是 Agent 跨会话保存事实的方式。\n\n下一步是让它自己写记忆。\n";

    #[test]
    fn phrases_in_ten_languages_inside_a_translated_block() {
        // Each preface shares its paragraph with the translation (a soft line break), so only
        // the phrase lists can tell: one finding each, and none when the source has the phrase.
        for (preface, translation) in [
            ("Voici la traduction :", "La mémoire garde les faits."),
            (
                "Hier ist die Übersetzung:",
                "Das Gedächtnis bewahrt Fakten.",
            ),
            ("Aquí está la traducción:", "La memoria guarda hechos."),
            ("Ecco la traduzione:", "La memoria conserva i fatti."),
            ("Aqui está a tradução:", "A memória guarda fatos."),
            ("Вот перевод:", "Память хранит факты."),
            ("以下は翻訳です：", "記憶は事実を保持します。"),
            ("다음은 번역입니다:", "메모리는 사실을 보관합니다."),
            ("以下是译文：", "记忆保存事实。"),
        ] {
            let f = run(
                "Memory keeps facts.\n",
                &format!("{preface}\n{translation}\n"),
            );
            assert_eq!(f.len(), 1, "{preface}: {f:#?}");
            assert!(f[0].message.contains("starts with a preface"), "{f:#?}");
        }
        for meta in [
            "Please provide the text you want translated.",
            "Veuillez fournir le texte à traduire.",
            "Bitte geben Sie den Text an.",
            "Proporcione el texto, por favor.",
            "Пожалуйста, предоставьте текст.",
            "翻訳するテキストを提供してください。",
            "번역할 텍스트를 보내 주세요.",
            "请提供需要翻译的文本。",
        ] {
            let f = run("Memory keeps facts.\n", &format!("{meta}\n"));
            assert!(
                f.iter().any(|f| f.message.contains("asking for the text")),
                "{meta}: {f:#?}"
            );
        }
        // A book about prompts may quote the request in its source.
        let src = "A bad reply says \"Please provide the text to translate.\"\n";
        assert_eq!(run(src, "糟糕的回复会说“请提供要翻译的文本。”\n"), vec![]);
    }

    #[test]
    fn clean_translation_passes() {
        assert_eq!(run(SRC, TGT), vec![]);
        // Running text about parts, and labels the source has, are not injections.
        let src = "## Part 1: Foundations\n\nPart One covers the loop; see Unit 3 (1/3).\n";
        let tgt = "## 第1部分：基础\n\n第一部分介绍循环；见 Unit 3 (1/3)。\n";
        assert_eq!(run(src, tgt), vec![]);
        let src = "Here is the translation: a prompt asks \"Translation:\" first.\n";
        let tgt = "Here is the translation：提示词先问“Translation:”。\n";
        assert_eq!(run(src, tgt), vec![]);
    }

    #[test]
    fn prefaces_and_closings() {
        let tgt = format!(
            "Here is the translation:\n\n{TGT}\n---\n\n**Note:** I kept \"Agent\" in English. I hope this helps!\n"
        );
        let f = run(SRC, &tgt);
        assert_eq!(
            messages(&f),
            vec![
                "the translation starts with a preface the source does not have (\"Here is the translation:\"); reply with the translation only",
                "the translation ends with a note the source does not have (\"**Note:** I kept \"Agent\" in English. I hope this helps!\"); remove it and reply with the translation only",
            ]
        );
        assert!(
            f.iter()
                .all(|f| f.check == CHECK && f.severity == Severity::Error)
        );
        assert_eq!(f[0].target_excerpt, "Here is the translation:");
        let f = run(
            SRC,
            &format!("好的，以下是译文：\n\n{TGT}\n希望对你有帮助！\n"),
        );
        assert_eq!(f.len(), 2);
        assert!(f[0].message.contains("(\"好的，以下是译文：\")"));
        assert!(f[1].message.contains("(\"希望对你有帮助！\")"));
    }

    #[test]
    fn labels_anywhere() {
        for (label, shown) in [
            ("[Part 1/5]\n\n", "Part 1/5"),
            ("Part 2 of 5\n\n", "Part 2 of 5"),
            ("(1/3) ", "(1/3)"),
            ("[第1部分/共5部分]\n\n", "第1部分/共5部分"),
            ("## 第1部分\n\n", "第1部分"),
            ("**Unit 3**\n\n", "Unit 3"),
            ("Chunk 2:\n\n", "Chunk 2"),
        ] {
            let f = run(SRC, &format!("{label}{TGT}"));
            assert_eq!(
                messages(&f),
                vec![format!(
                    "the translation contains the label \"{shown}\" that the source does not have; remove unit and part labels"
                )],
                "{label}"
            );
        }
        // In the middle of the text, too.
        let f = run(SRC, &TGT.replace("\n\n", "\n\n[Part 2/5]\n\n"));
        assert_eq!(f.len(), 1);
    }

    #[test]
    fn think_blocks_and_prompt_echoes() {
        let f = run(
            SRC,
            &format!("<think>The user wants Chinese.</think>\n{TGT}"),
        );
        assert_eq!(
            messages(&f),
            vec![
                "the translation contains a <think> tag the source does not have; remove the model's reasoning block"
            ]
        );
        let src_with_tag = "Models reason inside `<think>` tags before answering the user.\n";
        assert_eq!(
            run(
                src_with_tag,
                "模型在回答用户之前先在 `<think>` 标签里推理。\n"
            ),
            vec![]
        );

        let f = run(
            SRC,
            &format!("{TGT}\nTranslation guide:\n- Keep every number, unit and version exactly.\n"),
        );
        assert_eq!(
            messages(&f),
            vec![
                "the translation contains text from booktr's instructions (\"translation guide:\"); remove it and translate only the source text",
                "the translation contains text from booktr's instructions (\"keep every number, unit and version exactly\"); remove it and translate only the source text",
            ]
        );
        let f = run(SRC, &format!("Rules:\n1. 只回复译文。\n\n{TGT}"));
        assert_eq!(
            messages(&f),
            vec![
                "the translation contains a \"Rules:\" list from booktr's instructions; remove it and translate only the source text"
            ]
        );
        assert!(
            prompt_fragments()
                .iter()
                .any(|f| f == "reply with the translated markdown only")
        );
        assert!(
            prompt_fragments()
                .iter()
                .any(|f| f == "glossary (use these renderings):")
        );
    }

    #[test]
    fn label_scanner() {
        let l = scan_labels("Part Two of Five covers part 3; see [Section 4].");
        let got: Vec<(Kind, u32, Option<u32>, bool)> = l
            .iter()
            .map(|l| (l.kind, l.n, l.total, l.labelish))
            .collect();
        assert_eq!(
            got,
            vec![
                (Kind::Part, 2, Some(5), true),
                (Kind::Part, 3, None, false),
                (Kind::Section, 4, None, true)
            ]
        );
        assert!(scan_labels("counterpart 2 and departure 3 and chunk_2").is_empty());
    }
}
