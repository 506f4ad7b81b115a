//! Inflected forms of a glossary rendering, for target languages that inflect nouns and
//! adjectives (case, number, gender): a Russian translation rightly writes камнехранителям
//! (dative plural) for the glossary rendering камнехранитель.
//!
//! The rule is a common-prefix (stem) rule, per word of the rendering:
//!
//! - a word of the translation is a **form** of a rendering word of `n` letters when it is
//!   that word with its last `k` letters removed and at most `ending` letters added, for some
//!   `k ≤ strip` that leaves at least `min(n, MIN_STEM)` letters ([`is_form`]); `strip`
//!   ([`Inflection::strip`]) is how many final letters a declension replaces, `ending`
//!   ([`Inflection::ending`]) the longest ending it adds;
//! - a rendering of several words matches the same number of consecutive words, each a form
//!   of its rendering word.
//!
//! Words are runs of alphanumeric characters; both sides are compared lower-cased. The values
//! per language ([`inflection`]) are this project's choice, set from the longest regular
//! noun and adjective endings of each language's declension tables: Russian -ями/-ого/-ыми
//! (3 letters, replacing at most 2: the soft sign, or an adjective's -ая); Polish -ami/-ach,
//! Czech -ech/-ími alike; German -en/-es/-ern (3, replacing at most 1: a final -e); Finnish
//! -issa/-lla/-sta plus possessive suffixes (-issaan: 6, replacing at most 2). Stem changes (Finnish consonant gradation
//! kenkä → kengän, German umlaut plurals Baum → Bäume) are not recognised: list such forms in
//! the glossary's `variants` column. The rule errs towards accepting: a different word with
//! the same long stem counts as a form.

/// How words of one target language inflect (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Inflection {
    /// Final letters of a rendering word an inflection may remove.
    pub strip: usize,
    /// Letters an inflection may add (after removing up to `strip`).
    pub ending: usize,
}

/// Shortest stem in letters (shorter words must appear whole, then take an ending).
pub const MIN_STEM: usize = 4;

/// The inflection rule of a target language (`primary` is its primary subtag, `ru` for
/// `ru-RU`), or `None` for languages compared exactly (Chinese, Japanese, English, French…).
/// Inflected: Russian, Ukrainian, Belarusian, Polish, Czech, Slovak, Slovene, Croatian,
/// Serbian, Bosnian, Bulgarian, Lithuanian, Latvian, German, Finnish, Estonian, Hungarian,
/// Turkish, Icelandic.
pub fn inflection(primary: &str) -> Option<Inflection> {
    let (strip, ending) = match primary {
        "ru" | "uk" | "be" | "pl" | "cs" | "sk" | "sl" | "hr" | "sr" | "bs" | "bg" | "lt"
        | "lv" => (2, 3),
        "de" | "is" => (1, 3),
        "fi" | "et" | "hu" | "tr" => (2, 6),
        _ => return None,
    };
    Some(Inflection { strip, ending })
}

/// Whether `word` (lower-cased) is a form of the rendering word `base` (lower-cased): `base`
/// minus its last `k ≤ inf.strip` letters (keeping at least `min(len, MIN_STEM)`), plus at
/// most `inf.ending` letters. Letters are chars.
pub fn is_form(base: &str, word: &str, inf: Inflection) -> bool {
    if base == word {
        return true;
    }
    let b: Vec<char> = base.chars().collect();
    let w: Vec<char> = word.chars().collect();
    let keep_min = b.len().min(MIN_STEM);
    (0..=inf.strip)
        .take_while(|&k| b.len() >= k && b.len() - k >= keep_min)
        .any(|k| {
            let stem = b.len() - k;
            w.len() >= stem && w[..stem] == b[..stem] && w.len() - stem <= inf.ending
        })
}

/// The words of `text` with their byte spans: runs of alphanumeric characters.
pub fn words(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        match (c.is_alphanumeric(), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                out.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((s, text.len()));
    }
    out
}

/// Byte spans in `text` (already lower-cased) of the inflected forms of `rendering` (also
/// lower-cased), non-overlapping, in order. A rendering without any word matches nothing.
pub fn find_forms(text: &str, rendering: &str, inf: Inflection) -> Vec<(usize, usize)> {
    let base: Vec<&str> = words(rendering)
        .into_iter()
        .map(|(s, e)| &rendering[s..e])
        .collect();
    if base.is_empty() {
        return Vec::new();
    }
    let tw = words(text);
    let mut out = Vec::new();
    let mut i = 0;
    while i + base.len() <= tw.len() {
        let all = base
            .iter()
            .zip(&tw[i..i + base.len()])
            .all(|(b, &(s, e))| is_form(b, &text[s..e], inf));
        if all {
            out.push((tw[i].0, tw[i + base.len() - 1].1));
            i += base.len();
        } else {
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn russian_case_forms_of_a_noun() {
        let ru = inflection("ru").unwrap();
        for w in [
            "камнехранитель",
            "камнехранителям",
            "камнехранителя",
            "камнехранителей",
            "камнехранителями",
        ] {
            assert!(is_form("камнехранитель", w, ru), "{w}");
        }
        assert!(is_form("задача", "задач", ru));
        assert!(is_form("агент", "агентами", ru));
        assert!(!is_form("агент", "агентствами", ru), "a longer word");
        assert!(!is_form("камнехранитель", "камень", ru));
        // Short words keep their whole stem.
        assert!(is_form("ии", "ии", ru));
        assert!(!is_form("кот", "ко", ru));
        // An adjective: -ая replaced by -ыми.
        assert!(is_form("языковая", "языковыми", ru));
    }

    #[test]
    fn multiword_renderings_match_word_by_word() {
        let ru = inflection("ru").unwrap();
        let t = "мы говорим о языковой модели и языковых моделях.";
        let spans = find_forms(t, "языковая модель", ru);
        let got: Vec<&str> = spans.iter().map(|&(s, e)| &t[s..e]).collect();
        assert_eq!(got, vec!["языковой модели", "языковых моделях"]);
    }

    #[test]
    fn uninflected_languages_have_no_rule() {
        assert_eq!(inflection("zh"), None);
        assert_eq!(inflection("en"), None);
        assert_eq!(
            inflection("de"),
            Some(Inflection {
                strip: 1,
                ending: 3
            })
        );
    }
}
