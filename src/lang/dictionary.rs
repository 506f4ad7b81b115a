//! Whether a word is English vocabulary: listed by an English dictionary (the Wordnik word
//! list, through the `wordnik_list` crate: about 200,000 words with their inflected forms,
//! `rusty`, `aahed`, `prompts`). A lower-case word no dictionary lists (`scipy`, `printk`,
//! `initramfs`, `venv`) is an identifier, a program or a coinage, not English prose a
//! translator forgot; `qa::unit::untranslated` uses this to keep such words out of its stray
//! word findings, and measures the rule on real translations (`cargo bench --bench
//! qa_labelled`).

/// Whether `word` (one word: letters only, any case) is in the English word list, as written
/// or without a plural `s` (`namespaces` is listed through `namespace` only if that is). False
/// for a word with a letter outside a–z (`naïve`, `处理`) and for a single letter.
pub fn lists(word: &str) -> bool {
    let lower = word.to_ascii_lowercase();
    if !lower.bytes().all(|b| b.is_ascii_lowercase()) {
        return false;
    }
    wordnik_list::word_exists(&lower)
        || lower
            .strip_suffix('s')
            .is_some_and(wordnik_list::word_exists)
}

/// Whether any ASCII word of two letters or more in `text` (split at every non-letter:
/// `old string`, `python-constraint`, `Cohen's kappa`) is English vocabulary ([`lists`]).
pub fn lists_any_word(text: &str) -> bool {
    text.split(|c: char| !c.is_ascii_alphabetic())
        .filter(|w| w.len() >= 2)
        .any(lists)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn english_words_and_their_forms_are_listed_identifiers_are_not() {
        for w in [
            "unlike",
            "Beyond",
            "rehearse",
            "encapsulates",
            "pragmatic",
            "prompts",
            "token",
            "rollout",
            "fork",
            "git",
            "kill",
        ] {
            assert!(lists(w), "{w} should be listed");
        }
        for w in [
            "scipy",
            "printk",
            "initramfs",
            "seccomp",
            "venv",
            "goroutine",
            "matplotlib",
            "npm",
            "asdlem",
            "处理",
            "naïve",
            "x",
        ] {
            assert!(!lists(w), "{w} should not be listed");
        }
    }

    #[test]
    fn a_phrase_is_vocabulary_when_one_of_its_words_is() {
        assert!(lists_any_word("old string"));
        assert!(lists_any_word("Cohen's kappa"));
        assert!(lists_any_word("python-constraint"));
        assert!(lists_any_word("build-linux-kernel-qemu"));
        assert!(!lists_any_word("npm"));
        assert!(!lists_any_word("scipy-printk"));
    }
}
