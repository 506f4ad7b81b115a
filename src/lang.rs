//! Languages: codes, display names for prompts, and the script a target is written in.
//!
//! One table serves prompts (the name given to the model), the pseudo provider (what script to
//! fake) and QA (what share of target-script letters to expect). Codes found in files
//! (`xml:lang`, CSV headers) are matched leniently: `zh`, `zh-CN`, `zh_Hans` and `ZH` all
//! resolve to Chinese. Codes a user writes (`source_lang`, `target_lang`, `--target-lang`) are
//! checked first by [`check_tag`]: a BCP 47 tag (RFC 5646) whose subtags are in the IANA
//! Language Subtag Registry, as the `language-tags` crate validates it. Everywhere a behaviour
//! depends on the language, the primary subtag (and the script it implies) decides; the full tag
//! (`zh-Hant`, `zh-TW`, `pt-BR`) is what outputs carry (XLIFF `trgLang`, reports).
//! [`detect`] identifies the language a text is written in.

pub mod detect;
pub mod dictionary;

use serde::{Deserialize, Serialize};

/// `tag` in the case BCP 47 recommends (RFC 5646 §2.1.1): the language subtag lower case, a
/// four-letter script subtag title case, a two-letter region subtag upper case, every other
/// subtag lower case; `_` becomes `-`. `ZH` → `zh`, `zh-cn` → `zh-CN`, `ZH_HANT` → `zh-Hant`.
/// Nothing else changes: the tag is checked by [`check_tag`].
pub fn canonical_case(tag: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    // After a singleton (`x-…`, `u-…`) every subtag is an extension's: lower case.
    let mut in_extension = false;
    for (i, sub) in tag.trim().split(['-', '_']).enumerate() {
        let lower = sub.to_ascii_lowercase();
        let s = if i == 0 || in_extension {
            lower
        } else if sub.len() == 1 {
            in_extension = true;
            lower
        } else if sub.len() == 2 && sub.chars().all(|c| c.is_ascii_alphabetic()) {
            sub.to_ascii_uppercase()
        } else if sub.len() == 4 && sub.chars().all(|c| c.is_ascii_alphabetic()) {
            let mut c = lower.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        } else {
            lower
        };
        out.push(s);
    }
    out.join("-")
}

/// The writing system QA looks for in a translation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Script {
    /// Han ideographs (CJK Unified Ideographs and extensions).
    Han,
    /// Japanese: Han plus hiragana and katakana.
    Japanese,
    /// Korean: Hangul syllables and jamo (plus occasional Han).
    Hangul,
    Cyrillic,
    Arabic,
    Greek,
    /// Latin script: a translation cannot be told from its source by script alone.
    Latin,
}

/// A resolved language.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lang {
    /// The code as written in the campaign file (`zh-CN`).
    pub code: String,
    /// English name used in prompts (`Simplified Chinese`).
    pub name: String,
    pub script: Script,
}

impl Lang {
    /// Resolves a BCP 47-like code. Unknown codes are accepted with the code as name and Latin
    /// script, so any language pair works; only script-aware QA is weaker for them.
    pub fn parse(code: &str) -> Lang {
        let norm = code.trim().to_ascii_lowercase().replace('_', "-");
        let primary = norm.split('-').next().unwrap_or("");
        let traditional = norm.contains("hant")
            || norm.ends_with("-tw")
            || norm.ends_with("-hk")
            || norm.ends_with("-mo");
        let (name, script) = match primary {
            "zh" if traditional => ("Traditional Chinese", Script::Han),
            "zh" => ("Simplified Chinese", Script::Han),
            "ja" => ("Japanese", Script::Japanese),
            "ko" => ("Korean", Script::Hangul),
            "ru" => ("Russian", Script::Cyrillic),
            "uk" => ("Ukrainian", Script::Cyrillic),
            "ar" => ("Arabic", Script::Arabic),
            "el" => ("Greek", Script::Greek),
            "en" => ("English", Script::Latin),
            "de" => ("German", Script::Latin),
            "fr" => ("French", Script::Latin),
            "es" => ("Spanish", Script::Latin),
            "pt" => ("Portuguese", Script::Latin),
            "it" => ("Italian", Script::Latin),
            "nl" => ("Dutch", Script::Latin),
            "pl" => ("Polish", Script::Latin),
            "tr" => ("Turkish", Script::Latin),
            "vi" => ("Vietnamese", Script::Latin),
            "id" => ("Indonesian", Script::Latin),
            _ => (code.trim(), Script::Latin),
        };
        // A region or script beyond the primary subtag is named in prompts too (`Portuguese
        // (pt-BR)`), so the variant reaches the model; Chinese names carry it already.
        let name = if primary != "zh" && norm.contains('-') && name != code.trim() {
            format!("{name} ({})", code.trim())
        } else {
            name.to_string()
        };
        Lang {
            code: code.trim().to_string(),
            name,
            script,
        }
    }

    /// The primary subtag, lower-case (`zh` for `zh-Hans-CN`).
    pub fn primary(&self) -> String {
        self.code
            .to_ascii_lowercase()
            .replace('_', "-")
            .split('-')
            .next()
            .unwrap_or("")
            .to_string()
    }

    /// How well a language code found in a file (`xml:lang`, a CSV header) names this language,
    /// matched leniently: 3 for the same code (ignoring case and `_`/`-`), 2 for the same
    /// primary subtag and the same resolved language (`zh`, `zh-CN`, `zh-Hans` and `zh_Hans_CN`
    /// are all Simplified Chinese), 1 for the same primary subtag only (`zh-TW` for `zh`), 0
    /// for another language. Callers take the best-scoring section and ignore 0.
    pub fn match_score(&self, code: &str) -> u8 {
        let norm = |c: &str| c.trim().to_ascii_lowercase().replace('_', "-");
        let other = Lang::parse(code);
        if norm(code).is_empty() || other.primary() != self.primary() {
            0
        } else if norm(code) == norm(&self.code) {
            3
        } else if other.name == self.name || self.primary() != "zh" {
            // (only Chinese names tell variants apart: `Portuguese (pt-BR)` and `Portuguese`
            // are the same language here, as they were before names carried the tag)
            2
        } else {
            1
        }
    }

    /// Whether `c` is a letter of this language's script (for Latin: any alphabetic char that
    /// is ASCII or Latin-1/Extended).
    pub fn is_script_letter(&self, c: char) -> bool {
        script_of(c) == Some(self.script)
            || (self.script == Script::Japanese && script_of(c) == Some(Script::Han))
    }
}

/// Checks a language tag a user wrote (a campaign key or a flag): a well-formed BCP 47 tag
/// (RFC 5646) whose language, script and region subtags are in the IANA Language Subtag
/// Registry (the snapshot in the `language-tags` crate). Case does not matter (`EN`, `zh-tw`),
/// and the tag is kept as written.
///
/// Errors: the reason and, where one is likely, the tag meant: `cn` → `did you mean zh?` (a
/// country code for its language), `chinese` → `zh` (an English name), `zh_CN` → `zh-CN`
/// (`_` for `-`), `zh-CHS` → `zh-Hans`; an empty tag asks for one. The caller adds the file and
/// key.
pub fn check_tag(tag: &str) -> Result<(), TagError> {
    let t = tag.trim();
    if t.is_empty() {
        return Err(TagError::Empty);
    }
    let Some(why) = invalid_reason(t) else {
        return Ok(());
    };
    Err(TagError::Invalid {
        tag: t.to_string(),
        why,
        suggestion: suggestion(t),
    })
}

/// Why a language tag is refused ([`check_tag`]); the caller adds the file and key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TagError {
    /// No tag at all.
    #[error("is empty: set a BCP 47 language tag such as \"en\", \"zh\" or \"pt-BR\"")]
    Empty,
    /// Not a valid tag: the part that fails, and the tag likely meant.
    #[error("is `{tag}`, not a valid BCP 47 language tag ({why}){}", hint(.suggestion.as_deref()))]
    Invalid {
        tag: String,
        why: String,
        suggestion: Option<String>,
    },
}

/// The end of a [`TagError::Invalid`] message: the tag likely meant, or how to write one.
fn hint(suggestion: Option<&str>) -> String {
    match suggestion {
        Some(s) => format!(": did you mean `{s}`?"),
        None => ": use a BCP 47 tag such as \"en\", \"zh\", \"zh-Hant\" or \"pt-BR\" (language subtags are ISO 639 codes, not country codes or names)".into(),
    }
}

/// Why `t` does not parse or validate against the registry (the registry crate's message, or
/// the primary language not in the registry), or `None` when it is valid.
fn invalid_reason(t: &str) -> Option<String> {
    use language_tags::{LanguageTag, ValidationError};
    let parsed = match LanguageTag::parse(t) {
        Ok(p) => p,
        Err(e) => return Some(e.to_string()),
    };
    parsed.validate().err().map(|e| match e {
        ValidationError::PrimaryLanguageNotInRegistry => format!(
            "`{}` is not a language in the IANA registry",
            parsed.primary_language()
        ),
        other => other.to_string(),
    })
}

/// The tag the user most likely meant by an invalid `t`, if it is valid itself. Hand-kept
/// table (no crate maps country codes or English names to language subtags without pulling in
/// all of ISO 639 with its names): the mistakes seen in campaign files.
fn suggestion(t: &str) -> Option<String> {
    let norm = t.to_ascii_lowercase().replace('_', "-");
    let mut parts = norm.split('-');
    let first = parts.next().unwrap_or("");
    let rest: Vec<&str> = parts.collect();
    let legacy = match norm.as_str() {
        "zh-chs" => Some("zh-Hans"),
        "zh-cht" => Some("zh-Hant"),
        _ => None,
    };
    let primary = match first {
        // Country codes written for the language spoken there.
        "cn" => "zh",
        "jp" => "ja",
        "kp" => "ko",
        "ua" => "uk",
        "gr" => "el",
        "dk" => "da",
        "cz" => "cs",
        "us" | "gb" => "en",
        "vn" => "vi",
        "il" => "he",
        "ir" => "fa",
        "rs" => "sr",
        "hk" if rest.is_empty() => "zh",
        // English names.
        "chinese" | "mandarin" | "simplified" => "zh",
        "cantonese" => "yue",
        "japanese" => "ja",
        "korean" => "ko",
        "english" => "en",
        "german" => "de",
        "french" => "fr",
        "spanish" => "es",
        "portuguese" => "pt",
        "italian" => "it",
        "russian" => "ru",
        "ukrainian" => "uk",
        "arabic" => "ar",
        "greek" => "el",
        "dutch" => "nl",
        "polish" => "pl",
        "turkish" => "tr",
        "vietnamese" => "vi",
        "indonesian" => "id",
        "hindi" => "hi",
        "thai" => "th",
        "hebrew" => "he",
        "swedish" => "sv",
        "czech" => "cs",
        "danish" => "da",
        "finnish" => "fi",
        "norwegian" => "nb",
        "klingon" => "tlh",
        other => other,
    };
    let mut candidate = primary.to_string();
    for r in &rest {
        candidate.push('-');
        candidate.push_str(r);
    }
    // `hk` alone names Chinese as written in Hong Kong (`tw` is Twi, a language of its own).
    if first == "hk" && rest.is_empty() {
        candidate = "zh-HK".into();
    }
    let candidate = legacy.map(str::to_string).unwrap_or(candidate);
    let pretty = language_tags::LanguageTag::parse(&candidate).ok()?;
    (pretty.validate().is_ok() && !pretty.as_str().eq_ignore_ascii_case(t))
        .then(|| pretty.as_str().to_string())
}

/// The script of an alphabetic character, if it is one booktr knows.
pub fn script_of(c: char) -> Option<Script> {
    let u = c as u32;
    Some(match u {
        0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0x20000..=0x2FA1F => Script::Han,
        0x3040..=0x30FF | 0x31F0..=0x31FF => Script::Japanese,
        0xAC00..=0xD7AF | 0x1100..=0x11FF | 0x3130..=0x318F => Script::Hangul,
        0x0400..=0x052F => Script::Cyrillic,
        0x0600..=0x06FF | 0x0750..=0x077F => Script::Arabic,
        0x0370..=0x03FF => Script::Greek,
        _ if c.is_ascii_alphabetic() => Script::Latin,
        0x00C0..=0x024F if c.is_alphabetic() => Script::Latin,
        _ => return None,
    })
}

/// Whether `c` is a CJK letter: a Han ideograph, kana, or an ideographic mark (`々〆〇`).
/// The house-style checks (`qa::unit::style`) and the rehearsal's pseudo-translation
/// (`llm::pseudo`) read CJK text with it.
pub fn is_cjk_letter(c: char) -> bool {
    matches!(script_of(c), Some(Script::Han | Script::Japanese))
        || matches!(c, '\u{3005}'..='\u{3007}')
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--to ZH` was written as `language = "ZH"` into the translated book's book.toml: the
    /// tags `init` and `run` take are written in BCP 47's case.
    #[test]
    fn to_zh_upper_case_was_written_as_language_zh_upper_case() {
        for (given, want) in [
            ("ZH", "zh"),
            ("zh-cn", "zh-CN"),
            ("zh_hant_tw", "zh-Hant-TW"),
            ("PT-br", "pt-BR"),
            ("es-419", "es-419"),
            ("de", "de"),
            ("en-x-Private", "en-x-private"),
        ] {
            assert_eq!(canonical_case(given), want, "{given}");
        }
    }

    #[test]
    fn lenient_codes() {
        for code in ["zh", "zh-CN", "zh_Hans", "ZH"] {
            assert_eq!(Lang::parse(code).name, "Simplified Chinese", "{code}");
        }
        assert_eq!(Lang::parse("zh-Hant").name, "Traditional Chinese");
        assert_eq!(Lang::parse("xx").name, "xx");
        assert_eq!(Lang::parse("zh-Hans-CN").primary(), "zh");
    }

    #[test]
    fn valid_tags_pass_as_written() {
        for tag in [
            "en",
            "EN",
            "zh",
            "zh-CN",
            "zh-cn",
            "zh-Hans",
            "zh-Hant",
            "zh-TW",
            "zh-Hant-HK",
            "pt-BR",
            "sr-Latn",
            "yue",
            "tlh",
            "de-CH-1996",
        ] {
            assert_eq!(check_tag(tag), Ok(()), "{tag}");
        }
    }

    #[test]
    fn unknown_tags_are_refused_with_the_tag_meant() {
        for (tag, meant) in [
            ("cn", "zh"),
            ("jp", "ja"),
            ("chinese", "zh"),
            ("Chinese", "zh"),
            ("klingon", "tlh"),
            ("zh_CN", "zh-CN"),
            ("zh_Hant_TW", "zh-Hant-TW"),
            ("pt_BR", "pt-BR"),
            ("zh-CHS", "zh-Hans"),
            ("cn-TW", "zh-TW"),
            ("hk", "zh-HK"),
        ] {
            let err = check_tag(tag).unwrap_err().to_string();
            assert!(
                err.ends_with(&format!("did you mean `{meant}`?")),
                "{tag}: {err}"
            );
            assert!(err.contains(&format!("`{tag}`")), "{tag}: {err}");
        }
        let err = check_tag("cn").unwrap_err().to_string();
        assert!(
            err.contains("`cn` is not a language in the IANA registry"),
            "{err}"
        );
    }

    #[test]
    fn empty_and_hopeless_tags_say_what_a_tag_is() {
        assert!(
            check_tag("")
                .unwrap_err()
                .to_string()
                .starts_with("is empty")
        );
        assert!(
            check_tag("  ")
                .unwrap_err()
                .to_string()
                .starts_with("is empty")
        );
        let err = check_tag("xyzzyq").unwrap_err().to_string();
        assert!(
            err.contains("not a valid BCP 47") && err.contains("such as"),
            "{err}"
        );
        assert!(check_tag("en--US").is_err());
    }

    #[test]
    fn variants_are_kept_and_the_primary_subtag_decides() {
        let tw = Lang::parse("zh-TW");
        assert_eq!((tw.code.as_str(), tw.primary().as_str()), ("zh-TW", "zh"));
        assert_eq!(tw.name, "Traditional Chinese");
        assert_eq!(tw.script, Script::Han);
        assert_eq!(Lang::parse("zh-Hans").name, "Simplified Chinese");
        assert_eq!(Lang::parse("zh-MO").name, "Traditional Chinese");
        let br = Lang::parse("pt-BR");
        assert_eq!((br.code.as_str(), br.primary().as_str()), ("pt-BR", "pt"));
        assert_eq!(br.name, "Portuguese (pt-BR)");
        assert_eq!(Lang::parse("pt").name, "Portuguese");
        assert_eq!(Lang::parse("ja-JP").script, Script::Japanese);
    }

    #[test]
    fn lenient_match_scores() {
        let zh = Lang::parse("zh-CN");
        assert_eq!(zh.match_score("zh-cn"), 3);
        assert_eq!(zh.match_score("zh"), 2);
        assert_eq!(zh.match_score("zh_Hans"), 2);
        assert_eq!(zh.match_score("zh-TW"), 1);
        assert_eq!(zh.match_score("ja"), 0);
        assert_eq!(zh.match_score(""), 0);
        assert_eq!(Lang::parse("en").match_score("en-US"), 2);
    }

    #[test]
    fn scripts() {
        let zh = Lang::parse("zh");
        assert!(zh.is_script_letter('智'));
        assert!(!zh.is_script_letter('a'));
        assert!(Lang::parse("ja").is_script_letter('の'));
        assert!(Lang::parse("ja").is_script_letter('日'));
        assert_eq!(script_of('é'), Some(Script::Latin));
        assert_eq!(script_of('1'), None);
    }
}
