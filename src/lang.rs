//! Languages: codes, display names for prompts, and the script a target is written in.
//!
//! One table serves prompts (the name given to the model), the pseudo provider (what script to
//! fake) and QA (what share of target-script letters to expect). Codes are matched leniently:
//! `zh`, `zh-CN`, `zh_Hans` and `ZH` all resolve to Chinese.

use serde::{Deserialize, Serialize};

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
        let traditional = norm.contains("hant") || norm.ends_with("-tw") || norm.ends_with("-hk");
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
        Lang {
            code: code.trim().to_string(),
            name: name.to_string(),
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
        } else if other.name == self.name {
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

#[cfg(test)]
mod tests {
    use super::*;

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
