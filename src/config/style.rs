//! The campaign's house style for the target locale (`[style]` table), resolved: which
//! deterministic locale-convention rules the `style_*` QA checks apply, and how severe their
//! findings are. Every rule is on by default where it applies to the target locale (see
//! [`Style::for_target`]); the `[style]` table switches rules off, picks a policy, or raises
//! the severity. How a rule reads a text is the QA layer's business (`qa::unit::style`); this module
//! only holds the settings, so that the prompts and the checks could both read them.

use serde::{Deserialize, Serialize};

use super::raw::RawStyle;
use crate::lang::{Lang, Script};

/// How severe `style_*` findings are (campaign key `style.severity`, default `warning`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StyleSeverity {
    /// Shown in reports, counted as warnings; never forces a revision (the default: house
    /// style is a locale convention, not a change of meaning).
    #[default]
    Warning,
    /// Counted as errors: a unit with a style finding is sent back for revision with the
    /// finding as feedback, and `validate` exits 1.
    Error,
    /// Shown in reports only; not counted.
    Info,
}

/// Spacing between CJK characters and Latin letters or digits (`style.cjk_latin_space`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CjkLatinSpace {
    /// No space: `使用Python编写`. The default for Japanese targets (Microsoft Japanese Style
    /// Guide).
    None,
    /// One ordinary space on each side: `使用 Python 编写`. The default: it is what the
    /// reference Chinese book (`ai-agent-book/zh`) uses, about 12,100 spaced boundaries
    /// against 213 unspaced ones, 200 of them figure and table labels such as `图1-1`, which
    /// the rule exempts (measured on its prose, code and URLs left out).
    One,
}

/// The quotation marks the target locale uses (`style.quotes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum QuoteStyle {
    /// `“…”` (and `‘…’` inside): Simplified Chinese (GB/T 15834-2011).
    #[serde(rename = "“”")]
    Curly,
    /// `「…」` (and `『…』` inside): Japanese, Traditional Chinese.
    #[serde(rename = "「」")]
    Corner,
    /// `« … »` with narrow no-break spaces inside: French.
    #[serde(rename = "«»")]
    Guillemets,
    /// `„…“`: German.
    #[serde(rename = "„“")]
    LowHigh,
    /// `»…«`: German book typography.
    #[serde(rename = "»«")]
    Chevrons,
}

impl QuoteStyle {
    /// The value as written in a campaign file.
    pub fn as_str(self) -> &'static str {
        match self {
            QuoteStyle::Curly => "“”",
            QuoteStyle::Corner => "「」",
            QuoteStyle::Guillemets => "«»",
            QuoteStyle::LowHigh => "„“",
            QuoteStyle::Chevrons => "»«",
        }
    }

    /// Parses a campaign value. Errors: [`UnknownQuotes`], whose message lists the accepted
    /// values.
    pub fn parse(s: &str) -> Result<QuoteStyle, UnknownQuotes> {
        Ok(match s.trim() {
            "“”" => QuoteStyle::Curly,
            "「」" => QuoteStyle::Corner,
            "«»" => QuoteStyle::Guillemets,
            "„“" => QuoteStyle::LowHigh,
            "»«" => QuoteStyle::Chevrons,
            other => return Err(UnknownQuotes(other.to_string())),
        })
    }
}

/// A `style.quotes` value that is none of the quote pairs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "is `{0}`; use \"auto\" (the target locale's marks), \"off\", \"“”\", \"「」\", \"«»\", \"„“\" or \"»«\""
)]
pub struct UnknownQuotes(pub String);

/// The resolved `[style]` table: each rule and whether it runs for this campaign's target.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Style {
    /// Master switch (`style.enabled`, default true): false turns every `style_*` check off.
    pub enabled: bool,
    /// Severity of every `style_*` finding (default [`StyleSeverity::Warning`]).
    pub severity: StyleSeverity,
    /// `style_cjk_punctuation`: full-width punctuation in CJK sentences, half-width inside
    /// Latin names, numbers and URLs. Default on for zh and ja targets.
    pub cjk_punctuation: bool,
    /// `style_cjk_latin_space`: the spacing policy between CJK and Latin text or digits, or
    /// `None` when the rule is off. Default [`CjkLatinSpace::One`] for zh targets (measured on
    /// the reference Chinese book, see [`CjkLatinSpace::One`]), [`CjkLatinSpace::None`] for ja
    /// (the Microsoft Japanese Style Guide: no space between full-width and half-width text).
    pub cjk_latin_space: Option<CjkLatinSpace>,
    /// `style_quotes`: the quotation marks wanted, or `None` when the rule is off. Default:
    /// `“”` for Simplified Chinese, `「」` for Japanese and Traditional Chinese, `«»` for
    /// French, `„“` for German; off for other locales.
    pub quotes: Option<QuoteStyle>,
    /// `style_fr_spacing`: a (narrow) no-break space before `; : ! ?` and inside `« »`.
    /// Default on for fr targets.
    pub fr_spacing: bool,
    /// `style_number_format`: digit grouping and decimal separator of the target locale, for
    /// the locales whose convention the check knows (see `qa::unit::style::numbers`). Default on.
    pub number_format: bool,
    /// `style_term_casing`: an English term kept in the translation keeps the source's casing
    /// (`GitHub`, `JSON`). Default on.
    pub term_casing: bool,
}

impl Default for Style {
    /// Everything off but the master switch: what a context built without a target uses.
    fn default() -> Style {
        Style {
            enabled: true,
            severity: StyleSeverity::Warning,
            cjk_punctuation: false,
            cjk_latin_space: None,
            quotes: None,
            fr_spacing: false,
            number_format: false,
            term_casing: false,
        }
    }
}

/// Whether `target` is written with CJK punctuation and spacing rules (Chinese or Japanese).
pub fn is_cjk_target(target: &Lang) -> bool {
    matches!(target.script, Script::Han | Script::Japanese)
}

/// The default quotation marks of `target`, if the house style knows them.
pub fn default_quotes(target: &Lang) -> Option<QuoteStyle> {
    let traditional = {
        let c = target.code.to_ascii_lowercase().replace('_', "-");
        c.contains("hant") || c.ends_with("-tw") || c.ends_with("-hk") || c.ends_with("-mo")
    };
    match target.primary().as_str() {
        "zh" if traditional => Some(QuoteStyle::Corner),
        "zh" => Some(QuoteStyle::Curly),
        "ja" => Some(QuoteStyle::Corner),
        "fr" => Some(QuoteStyle::Guillemets),
        "de" => Some(QuoteStyle::LowHigh),
        _ => None,
    }
}

impl Style {
    /// The house style on by default for `target`: the CJK rules for zh and ja (one space
    /// between CJK and Latin for zh, none for ja), the French
    /// spacing for fr, the locale's quotes (see [`default_quotes`]), number format and term
    /// casing everywhere; severity warning.
    pub fn for_target(target: &Lang) -> Style {
        let cjk = is_cjk_target(target);
        Style {
            enabled: true,
            severity: StyleSeverity::Warning,
            cjk_punctuation: cjk,
            cjk_latin_space: cjk.then_some(if target.primary() == "ja" {
                CjkLatinSpace::None
            } else {
                CjkLatinSpace::One
            }),
            quotes: default_quotes(target),
            fr_spacing: target.primary() == "fr",
            number_format: true,
            term_casing: true,
        }
    }

    /// Resolves the campaign's `[style]` table (or its absence) for `target`.
    ///
    /// Errors: `(key, message)` for the caller to prefix with the campaign file: a value that
    /// is not one of the key's accepted values (the message lists them), or a CJK rule turned
    /// on for a target that is not Chinese or Japanese (French spacing likewise for a target
    /// that is not French), which would otherwise be silently ignored.
    pub fn resolve(raw: Option<&RawStyle>, target: &Lang) -> Result<Style, (&'static str, String)> {
        let mut s = Style::for_target(target);
        let Some(raw) = raw else {
            return Ok(s);
        };
        let cjk = is_cjk_target(target);
        let lang = &target.code;
        if let Some(e) = raw.enabled {
            s.enabled = e;
        }
        if let Some(v) = &raw.severity {
            s.severity = match v.trim() {
                "warning" => StyleSeverity::Warning,
                "error" => StyleSeverity::Error,
                "info" => StyleSeverity::Info,
                other => {
                    return Err((
                        "style.severity",
                        format!(
                            "is `{other}`; use \"warning\" (the default: reported, never forces a revision), \"error\" (style findings force revisions and fail validate) or \"info\""
                        ),
                    ));
                }
            };
        }
        if let Some(on) = raw.cjk_punctuation {
            if on && !cjk {
                return Err((
                    "style.cjk_punctuation",
                    format!(
                        "is true but the target `{lang}` is not Chinese or Japanese; remove the key"
                    ),
                ));
            }
            s.cjk_punctuation = on;
        }
        if let Some(v) = &raw.cjk_latin_space {
            let policy = match v.trim() {
                "none" => Some(CjkLatinSpace::None),
                "one" => Some(CjkLatinSpace::One),
                "off" => None,
                other => {
                    return Err((
                        "style.cjk_latin_space",
                        format!(
                            "is `{other}`; use \"one\" (one space between CJK and Latin text or digits, the default), \"none\" (no space) or \"off\""
                        ),
                    ));
                }
            };
            if policy.is_some() && !cjk {
                return Err((
                    "style.cjk_latin_space",
                    format!(
                        "is set but the target `{lang}` is not Chinese or Japanese; remove the key"
                    ),
                ));
            }
            s.cjk_latin_space = policy;
        }
        if let Some(v) = &raw.quotes {
            s.quotes = match v.trim() {
                "auto" => default_quotes(target),
                "off" => None,
                other => {
                    Some(QuoteStyle::parse(other).map_err(|m| ("style.quotes", m.to_string()))?)
                }
            };
        }
        if let Some(on) = raw.fr_spacing {
            if on && target.primary() != "fr" {
                return Err((
                    "style.fr_spacing",
                    format!("is true but the target `{lang}` is not French; remove the key"),
                ));
            }
            s.fr_spacing = on;
        }
        if let Some(on) = raw.number_format {
            s.number_format = on;
        }
        if let Some(on) = raw.term_casing {
            s.term_casing = on;
        }
        Ok(s)
    }

    /// Whether any rule runs.
    pub fn any(&self) -> bool {
        self.enabled
            && (self.cjk_punctuation
                || self.cjk_latin_space.is_some()
                || self.quotes.is_some()
                || self.fr_spacing
                || self.number_format
                || self.term_casing)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(toml_text: &str) -> RawStyle {
        toml::from_str(toml_text).unwrap()
    }

    #[test]
    fn defaults_per_target_locale() {
        let zh = Style::for_target(&Lang::parse("zh-CN"));
        assert!(zh.cjk_punctuation && zh.number_format && zh.term_casing && !zh.fr_spacing);
        assert_eq!(zh.cjk_latin_space, Some(CjkLatinSpace::One));
        assert_eq!(zh.quotes, Some(QuoteStyle::Curly));
        assert_eq!(zh.severity, StyleSeverity::Warning);
        assert_eq!(
            Style::for_target(&Lang::parse("zh-TW")).quotes,
            Some(QuoteStyle::Corner)
        );
        let ja = Style::for_target(&Lang::parse("ja"));
        assert_eq!(ja.quotes, Some(QuoteStyle::Corner));
        assert_eq!(ja.cjk_latin_space, Some(CjkLatinSpace::None));
        let fr = Style::for_target(&Lang::parse("fr"));
        assert!(fr.fr_spacing && !fr.cjk_punctuation && fr.cjk_latin_space.is_none());
        assert_eq!(fr.quotes, Some(QuoteStyle::Guillemets));
        let de = Style::for_target(&Lang::parse("de-AT"));
        assert_eq!(de.quotes, Some(QuoteStyle::LowHigh));
        assert!(!de.fr_spacing);
        let en = Style::for_target(&Lang::parse("en"));
        assert_eq!(en.quotes, None);
        assert!(en.any());
    }

    #[test]
    fn each_rule_is_switchable() {
        let zh = Lang::parse("zh");
        let s = Style::resolve(
            Some(&raw(
                "cjk_punctuation = false\ncjk_latin_space = \"none\"\nquotes = \"「」\"\nnumber_format = false\nterm_casing = false\nseverity = \"error\"\n",
            )),
            &zh,
        )
        .unwrap();
        assert!(!s.cjk_punctuation && !s.number_format && !s.term_casing);
        assert_eq!(s.cjk_latin_space, Some(CjkLatinSpace::None));
        assert_eq!(s.quotes, Some(QuoteStyle::Corner));
        assert_eq!(s.severity, StyleSeverity::Error);
        let off = Style::resolve(Some(&raw("enabled = false\n")), &zh).unwrap();
        assert!(!off.any());
        let q = Style::resolve(
            Some(&raw("quotes = \"off\"\ncjk_latin_space = \"off\"\n")),
            &zh,
        )
        .unwrap();
        assert_eq!((q.quotes, q.cjk_latin_space), (None, None));
    }

    #[test]
    fn bad_values_name_the_key_and_the_choices() {
        let zh = Lang::parse("zh");
        let (key, msg) =
            Style::resolve(Some(&raw("cjk_latin_space = \"two\"\n")), &zh).unwrap_err();
        assert_eq!(key, "style.cjk_latin_space");
        assert!(msg.contains("`two`") && msg.contains("\"none\""), "{msg}");
        let (key, msg) = Style::resolve(Some(&raw("quotes = \"''\"\n")), &zh).unwrap_err();
        assert_eq!(key, "style.quotes");
        assert!(msg.contains("«»"), "{msg}");
        let (key, _) = Style::resolve(Some(&raw("severity = \"fatal\"\n")), &zh).unwrap_err();
        assert_eq!(key, "style.severity");
        let (key, msg) =
            Style::resolve(Some(&raw("cjk_punctuation = true\n")), &Lang::parse("fr")).unwrap_err();
        assert_eq!(key, "style.cjk_punctuation");
        assert!(msg.contains("`fr`"), "{msg}");
        let (key, _) =
            Style::resolve(Some(&raw("fr_spacing = true\n")), &Lang::parse("de")).unwrap_err();
        assert_eq!(key, "style.fr_spacing");
    }

    #[test]
    fn unknown_style_keys_are_refused() {
        let e = toml::from_str::<RawStyle>("cjk_latin_spaces = \"one\"\n").unwrap_err();
        assert!(e.to_string().contains("cjk_latin_spaces"), "{e}");
    }
}
