//! Language identification: which language a text is written in, and which of a translation's
//! two languages (source or target) a block, a sentence or a word of it belongs to. Owns the
//! choice of identifier (the `whatlang` crate), the mapping of booktr's [`Lang`] to it, and the
//! script class of a letter. The QA checks (`qa::unit::untranslated`) decide what text to judge; this
//! module only says what language it is in. A later `booktr init` can call [`detect`] on a whole
//! chapter to find a book's source language.
//!
//! ## Why whatlang (measured, not guessed)
//!
//! whatlang 0.18.0 and lingua 1.8.0 (lingua-rs) were compared on short technical text: the
//! paragraphs, sentences, headings, list items and table cells of the Rust book in English
//! (rust-lang/book) and in its human German, French, Spanish, Portuguese, Russian, Japanese and
//! Chinese translations (rust-lang-de/rustbook-de, sylvainbx/rust-book-fr,
//! RustLangES/rust-book-es, universo-rust/rust-book-ptbr, kgv/rust_book_ru,
//! rust-lang-ja/book-ja, KaiserY/trpl-zh-cn; chapters 1–9, HTML comments and code left out),
//! plus the en and zh editions of the reference corpus: 40,658 samples, 6.4 MB. Accuracy is
//! the share identified as the language the book is written in (a translated book keeps some
//! English, so 1.000 is out of reach); "pair" restricts the choice to English and the book's
//! language, as booktr does (it knows both languages of a translation).
//!
//! | | whatlang 0.18 | lingua 1.8 (19 languages) |
//! |---|---|---|
//! | release binary size added | **+0.35 MB** (1.28 MB against 0.93 MB) | +81.7 MB (82.6 MB; about 4.3 MB per language, the 75 languages of its default features would add ~320 MB) |
//! | speed, pair of languages | **0.31 ms/KB** | 3.6 ms/KB (12x) |
//! | speed, all languages | 1.47 ms/KB | 15.8 ms/KB (16.3 in low-accuracy mode) |
//! | pair, German paragraphs / sentences / headings / cells | 0.994 / 0.996 / 0.937 / 0.69 | 1.000 / 1.000 / 0.937 / 0.63 |
//! | pair, English vs German: paragraphs / sentences / headings | 0.976 / 0.986 / 0.916 | 0.998 / 0.998 / 0.997 |
//! | pair, French paragraphs / sentences / headings | 0.923 / 0.967 / 0.978 | 0.999 / 0.998 / 0.957 |
//! | pair, English vs French: paragraphs / sentences / headings | 0.972 / 0.976 / 0.898 | 0.999 / 0.999 / 0.975 |
//! | pair, Spanish / Portuguese paragraphs | 0.966 / 0.886 | 0.996 / 0.996 |
//! | all languages, English / German paragraphs | 0.956 / 0.887 | 0.978 / 1.000 |
//!
//! lingua is more accurate on short text, but at 3.6 ms/KB identifying every block and sentence
//! of the corpus book (about 1 MB of target prose) would alone take longer than the 2 s budget
//! of `validate`, and its models make the binary 90 times larger. whatlang's errors were almost
//! all on texts with little prose left once identifiers are removed ("Filename: src/main.rs",
//! "Listing 7-4: …", "In Windows CMD, use:"), and on mixed-script text (it picks the script with
//! the most letters, so "在 Windows CMD 中" is English to it). booktr judges only the words left
//! after code, identifiers, names, quotations and glossary terms are taken out, needs a
//! minimum of such words before it judges, and separates scripts itself ([`letter_script`]),
//! so those are the cases it never asks whatlang about. whatlang's confidence
//! ([`whatlang::Info::confidence`]) is the margin between the best and the second-best
//! language's trigram scores.
//!
//! The comparison program is not part of the repository (it links both crates); its figures
//! are the ones above.

use whatlang::{Detector, Script as WScript};

use super::Lang;

/// ISO 639-1 code → whatlang's language (ISO 639-3), for every language whatlang knows.
/// A hand table: whatlang names its languages by ISO 639-3 codes only, and booktr's tags use
/// the two-letter subtag where one exists (BCP 47 requires the shortest code).
const ISO_639_1: &[(&str, whatlang::Lang)] = {
    use whatlang::Lang::*;
    &[
        ("af", Afr),
        ("ak", Aka),
        ("am", Amh),
        ("ar", Ara),
        ("az", Aze),
        ("be", Bel),
        ("bg", Bul),
        ("bn", Ben),
        ("ca", Cat),
        ("cs", Ces),
        ("cy", Cym),
        ("da", Dan),
        ("de", Deu),
        ("el", Ell),
        ("en", Eng),
        ("eo", Epo),
        ("es", Spa),
        ("et", Est),
        ("fa", Pes),
        ("fi", Fin),
        ("fr", Fra),
        ("gu", Guj),
        ("he", Heb),
        ("hi", Hin),
        ("hr", Hrv),
        ("hu", Hun),
        ("hy", Hye),
        ("id", Ind),
        ("it", Ita),
        ("ja", Jpn),
        ("jv", Jav),
        ("ka", Kat),
        ("km", Khm),
        ("kn", Kan),
        ("ko", Kor),
        ("la", Lat),
        ("lt", Lit),
        ("lv", Lav),
        ("mk", Mkd),
        ("ml", Mal),
        ("mr", Mar),
        ("my", Mya),
        ("nb", Nob),
        ("ne", Nep),
        ("nl", Nld),
        ("no", Nob),
        ("or", Ori),
        ("pa", Pan),
        ("pl", Pol),
        ("pt", Por),
        ("ro", Ron),
        ("ru", Rus),
        ("si", Sin),
        ("sk", Slk),
        ("sl", Slv),
        ("sn", Sna),
        ("sr", Srp),
        ("sv", Swe),
        ("ta", Tam),
        ("te", Tel),
        ("th", Tha),
        ("tk", Tuk),
        ("tl", Tgl),
        ("tr", Tur),
        ("uk", Ukr),
        ("ur", Urd),
        ("uz", Uzb),
        ("vi", Vie),
        ("yi", Yid),
        ("zh", Cmn),
        ("zu", Zul),
    ]
};

/// whatlang's language for `lang` (by its primary subtag: `zh-TW` is Mandarin, `pt-BR`
/// Portuguese; three-letter subtags such as `cmn` are looked up as they are), `None` for a
/// language whatlang does not know.
pub fn identifier_lang(lang: &Lang) -> Option<whatlang::Lang> {
    let primary = lang.primary();
    if primary == "fil" {
        return Some(whatlang::Lang::Tgl);
    }
    ISO_639_1
        .iter()
        .find(|(c, _)| *c == primary)
        .map(|(_, l)| *l)
        .or_else(|| whatlang::Lang::from_code(primary.as_str()))
}

/// The BCP 47 tag booktr uses for whatlang's language: the two-letter code where there is one,
/// else whatlang's ISO 639-3 code (itself a valid language subtag).
fn tag_of(l: whatlang::Lang) -> &'static str {
    ISO_639_1
        .iter()
        .find(|(_, w)| *w == l)
        .map_or(l.code(), |(c, _)| c)
}

/// The language `text` (plain prose: pass a Markdown chapter through
/// `qa::Doc::parse(md).clean_prose()` first) is written in, among every language whatlang
/// knows, and whatlang's confidence in it (0.0–1.0, the relative margin of the best trigram
/// score over the second best; see the module docs). `None` for text with no letters. On
/// mixed-script text the script with the most letters decides (a Chinese chapter with many
/// English terms is still Chinese: it has far more Han characters than words of English).
/// Cost: about 1.5 ms per KB of text (module docs), linear in its length.
pub fn detect(text: &str) -> Option<(Lang, f64)> {
    let info = whatlang::detect(text)?;
    Some((Lang::parse(tag_of(info.lang())), info.confidence()))
}

/// The script class of a letter: whatlang's script, with Hiragana and Katakana folded into
/// Mandarin (a CJK class: Japanese mixes kana and kanji in one word), `None` for anything that
/// is not a letter (digits, punctuation, symbols, marks).
pub fn letter_script(c: char) -> Option<WScript> {
    if c.is_ascii() {
        return c.is_ascii_alphabetic().then_some(WScript::Latin);
    }
    if !c.is_alphabetic() {
        return None;
    }
    if crate::lang::is_cjk_letter(c) {
        return Some(WScript::Mandarin);
    }
    let mut buf = [0u8; 4];
    match whatlang::detect_script(c.encode_utf8(&mut buf))? {
        WScript::Hiragana | WScript::Katakana => Some(WScript::Mandarin),
        s => Some(s),
    }
}

/// The script class a language is written in ([`letter_script`]'s classes): Chinese and
/// Japanese are Mandarin (CJK), Korean Hangul, and so on; `None` for a language whatlang does
/// not know.
pub fn lang_script(lang: &Lang) -> Option<WScript> {
    let l = identifier_lang(lang)?;
    if l == whatlang::Lang::Jpn || l == whatlang::Lang::Cmn {
        return Some(WScript::Mandarin);
    }
    WScript::all()
        .iter()
        .copied()
        .find(|s| s.langs().contains(&l))
}

/// Which of a translation's two languages a text is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Source,
    Target,
}

/// Identifies text as the source or the target language of one translation direction.
///
/// When the two languages are written in different scripts (English and Chinese, Russian,
/// Arabic, Hindi…), the letters decide ([`PairIdentifier::side`]). When they share a script
/// (English and German, French, Spanish…), whatlang restricted to the two languages decides.
#[derive(Debug)]
pub struct PairIdentifier {
    source: Option<whatlang::Lang>,
    target: Option<whatlang::Lang>,
    source_script: Option<WScript>,
    target_script: Option<WScript>,
    detector: Detector,
}

impl PairIdentifier {
    /// The identifier for translating `source` into `target`; `None` when both are the same
    /// language (by primary subtag) or when neither their scripts differ nor whatlang knows
    /// both (nothing could tell them apart).
    pub fn new(source: &Lang, target: &Lang) -> Option<PairIdentifier> {
        if source.primary() == target.primary() {
            return None;
        }
        let (s, t) = (identifier_lang(source), identifier_lang(target));
        // Languages whatlang does not know keep booktr's own script table.
        let script = |lang: &Lang| {
            lang_script(lang).or(match lang.script {
                crate::lang::Script::Han | crate::lang::Script::Japanese => Some(WScript::Mandarin),
                crate::lang::Script::Hangul => Some(WScript::Hangul),
                crate::lang::Script::Cyrillic => Some(WScript::Cyrillic),
                crate::lang::Script::Arabic => Some(WScript::Arabic),
                crate::lang::Script::Greek => Some(WScript::Greek),
                crate::lang::Script::Latin => None,
            })
        };
        let (ss, ts) = (script(source), script(target));
        let id = PairIdentifier {
            source: s,
            target: t,
            source_script: ss,
            target_script: ts,
            detector: Detector::with_allowlist(s.into_iter().chain(t).collect()),
        };
        (id.scripts_differ() || (s.is_some() && t.is_some())).then_some(id)
    }

    /// Whether source and target are written in different scripts.
    pub fn scripts_differ(&self) -> bool {
        match (self.source_script, self.target_script) {
            (Some(a), Some(b)) => a != b,
            _ => false,
        }
    }

    /// Whether `c` is a letter of the source's script (never true when the scripts are the
    /// same).
    pub fn is_source_letter(&self, c: char) -> bool {
        self.scripts_differ() && letter_script(c) == self.source_script
    }

    /// Whether `c` is a letter of the target's script (never true when the scripts are the
    /// same).
    pub fn is_target_letter(&self, c: char) -> bool {
        self.scripts_differ() && letter_script(c) == self.target_script
    }

    /// Which language `text` is in, with a confidence in 0.0–1.0; `None` when `text` has no
    /// letter of either language or the identifier cannot decide.
    ///
    /// - Different scripts: a text with letters of the source's script and none of the
    ///   target's is in the source language (confidence 1.0); one with any letter of the
    ///   target's script is (at least partly) translated, so it counts as the target (the
    ///   source words left in it are stray words, see `qa::unit::untranslated`).
    /// - Same script: whatlang restricted to the two languages, with its confidence.
    pub fn side(&self, text: &str) -> Option<(Side, f64)> {
        if self.scripts_differ() {
            let (mut src, mut tgt) = (0usize, 0usize);
            for c in text.chars() {
                let s = letter_script(c);
                if s.is_some() && s == self.target_script {
                    tgt += 1;
                } else if s.is_some() && s == self.source_script {
                    src += 1;
                }
            }
            return match (src, tgt) {
                (0, 0) => None,
                (_, 0) => Some((Side::Source, 1.0)),
                _ => Some((Side::Target, 1.0)),
            };
        }
        let info = self.detector.detect(text)?;
        let side = if Some(info.lang()) == self.source {
            Side::Source
        } else if Some(info.lang()) == self.target {
            Side::Target
        } else {
            return None;
        };
        Some((side, info.confidence()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chapters_are_identified_in_any_language() {
        let cases = [
            (
                "The context window limits how much the agent can remember in one call, so long tasks need memory.",
                "en",
            ),
            (
                "Das Kontextfenster begrenzt, wie viel sich der Agent in einem Aufruf merken kann, deshalb brauchen lange Aufgaben ein Gedächtnis.",
                "de",
            ),
            (
                "La fenêtre de contexte limite ce dont l'agent peut se souvenir en un seul appel ; les tâches longues ont donc besoin de mémoire.",
                "fr",
            ),
            (
                "Контекстное окно ограничивает, сколько агент может запомнить за один вызов, поэтому длинным задачам нужна память.",
                "ru",
            ),
            (
                "上下文窗口限制了 Agent 在一次调用中能记住多少内容，因此长任务需要记忆。",
                "zh",
            ),
            (
                "コンテキストウィンドウは、エージェントが一度の呼び出しで覚えられる量を制限します。",
                "ja",
            ),
        ];
        for (text, code) in cases {
            let (lang, confidence) = detect(text).unwrap();
            assert_eq!(lang.primary(), code, "{text}");
            assert!(confidence > 0.0, "{text}: {confidence}");
        }
        assert_eq!(detect("12 + 34 = 46 ()"), None);
    }

    #[test]
    fn every_language_booktr_names_maps_to_the_identifier() {
        for code in [
            "zh", "zh-TW", "ja", "ko", "ru", "uk", "ar", "el", "en", "de", "fr", "es", "pt-BR",
            "it", "nl", "pl", "tr", "vi", "id", "hi",
        ] {
            let l = identifier_lang(&Lang::parse(code)).unwrap_or_else(|| panic!("{code}"));
            assert_eq!(
                Lang::parse(tag_of(l)).primary(),
                Lang::parse(code).primary()
            );
        }
        assert_eq!(identifier_lang(&Lang::parse("tlh")), None);
        assert_eq!(lang_script(&Lang::parse("ja")), Some(WScript::Mandarin));
        assert_eq!(lang_script(&Lang::parse("hi")), Some(WScript::Devanagari));
        assert_eq!(lang_script(&Lang::parse("de")), Some(WScript::Latin));
    }

    #[test]
    fn pairs_tell_their_two_languages_apart() {
        let en_de = PairIdentifier::new(&Lang::parse("en"), &Lang::parse("de")).unwrap();
        assert!(!en_de.scripts_differ());
        let (side, c) = en_de
            .side("Long tasks therefore need memory, which the next chapter describes")
            .unwrap();
        assert_eq!(side, Side::Source);
        assert!(c > 0.5, "{c}");
        let (side, _) = en_de
            .side("Lange Aufgaben brauchen deshalb ein Gedächtnis, das das nächste Kapitel beschreibt")
            .unwrap();
        assert_eq!(side, Side::Target);
        let en_zh = PairIdentifier::new(&Lang::parse("en"), &Lang::parse("zh")).unwrap();
        assert!(en_zh.scripts_differ());
        assert!(en_zh.is_source_letter('a') && en_zh.is_target_letter('智'));
        assert!(en_zh.is_target_letter('の'));
        assert_eq!(en_zh.side("still in English"), Some((Side::Source, 1.0)));
        assert_eq!(en_zh.side("unlike聊天机器人"), Some((Side::Target, 1.0)));
        assert_eq!(en_zh.side("42 %"), None);
        let en_hi = PairIdentifier::new(&Lang::parse("en"), &Lang::parse("hi")).unwrap();
        assert!(en_hi.scripts_differ() && en_hi.is_target_letter('क'));
        let zh_en = PairIdentifier::new(&Lang::parse("zh"), &Lang::parse("en")).unwrap();
        assert_eq!(zh_en.side("上下文窗口"), Some((Side::Source, 1.0)));
        assert!(PairIdentifier::new(&Lang::parse("en"), &Lang::parse("en-GB")).is_none());
        // Two languages whatlang does not know, in the same script: nothing decides.
        assert!(PairIdentifier::new(&Lang::parse("tlh"), &Lang::parse("en")).is_none());
    }
}
