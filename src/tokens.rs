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

/// Builds the shared encoder on a thread of its own and returns at once, so that a command
/// that will count tokens (`run`, `plan`, `experiment`) loads its campaign on one core while
/// the encoder's 0.2–0.25 s of table building runs on the other: it was most of the time from
/// `booktr run` to its first request. A later [`count`] waits
/// for it if it is not done.
pub fn warm_up() {
    std::thread::spawn(|| {
        bpe();
    });
}

/// Number of `o200k_base` tokens in `text` (ordinary encoding: special tokens are counted as
/// plain text, which is what a chat API does with user-supplied text). Remembers nothing: a
/// caller that counts the same long texts again and again (the stable prefix of every request)
/// holds a [`Counter`].
pub fn count(text: &str) -> usize {
    bpe().encode_ordinary(text).len()
}

/// Shortest text (bytes) whose count a [`Counter`] remembers.
pub const MEMO_MIN_BYTES: usize = 512;
/// Most texts a [`Counter`] remembers at once (its memo is emptied when full).
pub const MEMO_ENTRIES: usize = 4096;

/// A token counter with a memo, owned by whoever counts (a campaign holds one for the budget
/// check of every request and for its plan estimate: a cache has an owner, not
/// a process-wide static, so two campaigns in one process never share entries). Counts are those of [`count`]; texts of at least [`MEMO_MIN_BYTES`]
/// bytes are remembered (up to [`MEMO_ENTRIES`], keyed by length and SipHash), since the same
/// system prompt, brief and glossary are counted for every request and byte-pair encoding costs
/// far more than hashing. Clones share one memo.
#[derive(Debug, Clone, Default)]
pub struct Counter {
    memo: std::sync::Arc<std::sync::Mutex<std::collections::HashMap<(usize, u64), usize>>>,
}

impl Counter {
    /// Number of `o200k_base` tokens in `text`, as [`count`].
    pub fn count(&self, text: &str) -> usize {
        if text.len() < MEMO_MIN_BYTES {
            return count(text);
        }
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        text.hash(&mut h);
        let key = (text.len(), h.finish());
        // A lock poisoned by a panic elsewhere is taken over: every entry is written in one
        // assignment, so what the lock holds is whole.
        if let Some(&n) = self
            .memo
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(&key)
        {
            return n;
        }
        let n = count(text);
        let mut m = self
            .memo
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if m.len() >= MEMO_ENTRIES {
            m.clear();
        }
        m.insert(key, n);
        n
    }

    /// [`count_messages`] with this counter's memo.
    pub fn count_messages<'a>(&self, contents: impl IntoIterator<Item = &'a str>) -> usize {
        messages_with(contents, |c| self.count(c))
    }

    /// How many texts the memo holds (for tests).
    pub fn remembered(&self) -> usize {
        self.memo
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .len()
    }
}

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
    messages_with(contents, count)
}

/// An upper bound of [`count_messages`] that costs no encoding: the bytes of every content,
/// plus the same overheads. Every `o200k_base` token stands for at least one byte of the
/// text it encodes (byte-level BPE: the ranks are byte strings of length ≥ 1), so a request
/// whose bound fits a budget fits it when counted.
pub fn bound_messages<'a>(contents: impl IntoIterator<Item = &'a str>) -> usize {
    messages_with(contents, str::len)
}

fn messages_with<'a>(
    contents: impl IntoIterator<Item = &'a str>,
    mut count: impl FnMut(&str) -> usize,
) -> usize {
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
    fn the_byte_bound_is_never_below_the_count() {
        let texts = [
            "",
            "a",
            "Hello, world! Agents call tools.",
            "智能体调用工具，并把结果写回上下文窗口。",
            "emoji 🤖🧠 and accents: café, naïve, Ærø",
            "```rust\nfn main() { println!(\"{}\", 1 + 2); }\n```\n",
            "    \n\n\t\t  spaces   and   tabs\n",
        ];
        for t in texts {
            let one = [t];
            assert!(count_messages(one) <= bound_messages(one), "{t:?}");
        }
        assert!(count_messages(texts) <= bound_messages(texts));
        assert_eq!(
            bound_messages(["abc"]),
            3 + PER_MESSAGE_OVERHEAD + REPLY_PRIMING
        );
    }

    #[test]
    fn counts_known_strings() {
        assert_eq!(count(""), 0);
        assert_eq!(count("hello world"), 2);
        // CJK text costs roughly one token per one or two characters.
        let zh = count("智能体是一个系统");
        assert!((3..=8).contains(&zh), "{zh}");
    }

    #[test]
    fn process_wide_token_memo_is_owned_by_a_counter() {
        // The memo was a process-wide static; a Counter owns it now, its clones share
        // it, another counter does not see it, and the counts are those of `count`.
        let long = "The agent keeps a small context. ".repeat(40);
        let a = Counter::default();
        let b = a.clone();
        let other = Counter::default();
        assert_eq!(a.count(&long), count(&long));
        assert_eq!(b.remembered(), 1);
        assert_eq!(other.remembered(), 0);
        assert_eq!(
            other.count_messages([long.as_str()]),
            count_messages([long.as_str()])
        );
        // Short texts are not remembered.
        a.count("hello world");
        assert_eq!(a.remembered(), 1);
    }

    #[test]
    fn message_overhead_is_added() {
        assert_eq!(count_messages(["hello world"]), 2 + 3 + 3);
        assert_eq!(count_messages(Vec::<&str>::new()), 3);
    }
}
