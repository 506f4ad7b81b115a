//! Token counting with OpenAI's `o200k_base` encoding (tiktoken-rs).
//!
//! Owns the one tokenizer instance of the process. Every budget and every "tokens" figure that
//! booktr computes itself (Manager context size, request budgets, plan estimates) comes from
//! here. Usage figures returned by a provider are *not* recomputed: they are recorded as the
//! provider reported them.

use tiktoken_rs::CoreBPE;

/// The shared `o200k_base` encoder, built once on first use (about 0.2 s).
fn bpe() -> &'static CoreBPE {
    tiktoken_rs::o200k_base_singleton()
}

/// Number of `o200k_base` tokens in `text` (ordinary encoding: special tokens are counted as
/// plain text, which is what a chat API does with user-supplied text).
///
/// Counts of texts of at least [`MEMO_MIN_BYTES`] bytes are remembered (up to [`MEMO_ENTRIES`]
/// texts, keyed by length and SipHash): the same system prompt, brief and glossary are counted
/// for the budget check of every request and again by the pseudo provider, and byte-pair
/// encoding costs far more than hashing.
pub fn count(text: &str) -> usize {
    if text.len() < MEMO_MIN_BYTES {
        return bpe().encode_ordinary(text).len();
    }
    use std::collections::HashMap;
    use std::hash::{Hash, Hasher};
    use std::sync::{Mutex, OnceLock};
    static MEMO: OnceLock<Mutex<HashMap<(usize, u64), usize>>> = OnceLock::new();
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    let key = (text.len(), h.finish());
    let memo = MEMO.get_or_init(Default::default);
    if let Some(&n) = memo.lock().unwrap().get(&key) {
        return n;
    }
    let n = bpe().encode_ordinary(text).len();
    let mut m = memo.lock().unwrap();
    if m.len() >= MEMO_ENTRIES {
        m.clear();
    }
    m.insert(key, n);
    n
}

/// Shortest text (bytes) whose count [`count`] remembers.
pub const MEMO_MIN_BYTES: usize = 512;
/// Most texts [`count`] remembers at once (the memo is emptied when full).
pub const MEMO_ENTRIES: usize = 4096;

/// Per-message overhead in tokens added by the chat format (role markers and separators).
///
/// Source: OpenAI cookbook "How to count tokens with tiktoken" (3 tokens per message,
/// plus 3 tokens priming the reply), which holds for the gpt-4o family using `o200k_base`.
pub const PER_MESSAGE_OVERHEAD: usize = 3;

/// Tokens that prime the assistant reply, once per request (same source as above).
pub const REPLY_PRIMING: usize = 3;

/// Estimated prompt tokens of a chat request: the sum of the `o200k_base` counts of every
/// message's content plus [`PER_MESSAGE_OVERHEAD`] per message and [`REPLY_PRIMING`].
pub fn count_messages<'a>(contents: impl IntoIterator<Item = &'a str>) -> usize {
    contents
        .into_iter()
        .map(|c| count(c) + PER_MESSAGE_OVERHEAD)
        .sum::<usize>()
        + REPLY_PRIMING
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_known_strings() {
        assert_eq!(count(""), 0);
        assert_eq!(count("hello world"), 2);
        // CJK text costs roughly one token per one or two characters.
        let zh = count("智能体是一个系统");
        assert!((3..=8).contains(&zh), "{zh}");
    }

    #[test]
    fn message_overhead_is_added() {
        assert_eq!(count_messages(["hello world"]), 2 + 3 + 3);
        assert_eq!(count_messages(Vec::<&str>::new()), 3);
    }
}
