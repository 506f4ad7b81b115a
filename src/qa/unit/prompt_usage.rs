//! A prompt the server cut short: when a provider reports `usage.prompt_tokens` far below
//! booktr's own count of the request ([`crate::llm::Request::prompt_tokens_estimate`],
//! `o200k_base`), the server dropped part of the prompt before the model saw it (a local
//! server whose context window, such as Ollama's `num_ctx`, is smaller than the request
//! keeps only its end) and the answer translates, at best, part of the unit.
//!
//! Threshold: reported below [`MIN_SHARE`] of the estimate, for requests of at least
//! [`MIN_ESTIMATE`] tokens. Tokenizers differ between model families, but by far less than a
//! half on the same text (Llama 3, Qwen 2.5 and `o200k_base` agree within about 30% on English
//! and Chinese prose), so a report below half the estimate is not a tokenizer difference. A
//! report of 0 means the provider gave no usage and is not judged.

/// Smallest share of the estimate a report may have.
pub const MIN_SHARE: f64 = 0.5;
/// Smallest estimate (tokens) judged: short prompts vary more between tokenizers.
pub const MIN_ESTIMATE: usize = 256;

/// An explanation when `reported` prompt tokens (from the provider's usage) are far below the
/// local `estimate` (tokens), or `None`.
pub fn truncated(estimate: usize, reported: u64) -> Option<String> {
    if reported == 0 || estimate < MIN_ESTIMATE || reported as f64 >= MIN_SHARE * estimate as f64 {
        return None;
    }
    Some(format!(
        "the server reported {reported} prompt tokens for a request booktr counts at {estimate} (under {:.0}%): it truncated the prompt, so the answer was not accepted; the request is larger than the server's context: set max_context_tokens to the server's context size (booktr then splits units to fit), lower max_unit_chars, or raise the server's context size (for Ollama, `num_ctx`)",
        MIN_SHARE * 100.0
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompt_truncated_by_the_server_is_flagged() {
        assert_eq!(truncated(3000, 2048), None, "68% is a tokenizer difference");
        let msg = truncated(6000, 2048).unwrap();
        assert!(
            msg.contains("2048 prompt tokens") && msg.contains("6000"),
            "{msg}"
        );
        assert!(
            msg.contains("max_context_tokens") && !msg.contains("max_tokens"),
            "the remedy is more context or a smaller unit, never a larger reply: {msg}"
        );
        assert_eq!(truncated(6000, 0), None, "no usage reported");
        assert_eq!(truncated(200, 10), None, "too short to judge");
    }
}
