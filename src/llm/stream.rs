//! OpenAI chat-completion stream chunks and their accumulation.
//!
//! A stream interleaves content, reasoning (`reasoning_content` from DeepSeek/Qwen/vLLM,
//! `reasoning` from OpenRouter/Ollama) and tool-call fragments. Each is accumulated on its own;
//! tool calls are keyed by their `index`. Usage comes from the final chunk (sent because the
//! request sets `stream_options.include_usage`). Types are lenient: missing fields default and
//! unknown ones are ignored, since every compatible server differs a little.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::types::{Answer, ToolCall, Usage};

/// One `data:` payload of the stream.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Chunk {
    pub model: Option<String>,
    pub choices: Vec<ChunkChoice>,
    pub usage: Option<WireUsage>,
    /// llama.cpp's per-request figures, sent in the last chunk whether or not usage was asked.
    pub timings: Option<WireTimings>,
    /// Some servers report failures inside the stream as `{"error": {...}}`.
    pub error: Option<serde_json::Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ChunkChoice {
    pub index: u32,
    pub delta: Delta,
    pub finish_reason: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Delta {
    pub content: Option<String>,
    pub reasoning_content: Option<String>,
    pub reasoning: Option<String>,
    pub tool_calls: Vec<ToolCallDelta>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ToolCallDelta {
    pub index: u32,
    pub id: Option<String>,
    pub function: Option<FunctionDelta>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct FunctionDelta {
    pub name: Option<String>,
    pub arguments: Option<String>,
}

/// Usage as sent on the wire, covering the OpenAI and DeepSeek spellings of cached tokens.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct WireUsage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub prompt_tokens_details: Option<PromptDetails>,
    pub completion_tokens_details: Option<CompletionDetails>,
    /// DeepSeek.
    pub prompt_cache_hit_tokens: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct PromptDetails {
    pub cached_tokens: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct CompletionDetails {
    pub reasoning_tokens: Option<u64>,
}

/// llama.cpp's `timings` object (tools/server of ggml-org/llama.cpp): `prompt_n` prompt tokens
/// evaluated, `cache_n` prompt tokens served from its cache, `predicted_n` tokens generated,
/// all in the model's own tokens. The shared real-llm server (xllamacpp) sends it in the final
/// chunk but sends `usage` only when `stream_options.include_usage` is set, so it is the
/// fallback when a stream ends without usage.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct WireTimings {
    pub prompt_n: u64,
    pub cache_n: u64,
    pub predicted_n: u64,
}

impl From<&WireTimings> for Usage {
    fn from(t: &WireTimings) -> Usage {
        Usage {
            prompt_tokens: t.prompt_n + t.cache_n,
            completion_tokens: t.predicted_n,
            cached_tokens: t.cache_n,
            ..Usage::default()
        }
    }
}

impl From<&WireUsage> for Usage {
    fn from(w: &WireUsage) -> Usage {
        Usage {
            prompt_tokens: w.prompt_tokens,
            completion_tokens: w.completion_tokens,
            cached_tokens: w
                .prompt_tokens_details
                .as_ref()
                .and_then(|d| d.cached_tokens)
                .or(w.prompt_cache_hit_tokens)
                .unwrap_or(0),
            reasoning_tokens: w
                .completion_tokens_details
                .as_ref()
                .and_then(|d| d.reasoning_tokens)
                .unwrap_or(0),
            cache_creation_tokens: 0,
        }
    }
}

/// Accumulates chunks of choice 0 into an [`Answer`].
#[derive(Debug, Default)]
pub struct Accumulator {
    content: String,
    reasoning: String,
    tools: BTreeMap<u32, ToolCall>,
    usage: Option<Usage>,
    /// Usage read off llama.cpp's `timings`, used only when no usage chunk came.
    timings_usage: Option<Usage>,
    finish_reason: Option<String>,
    model: Option<String>,
    /// Number of chunks seen.
    pub chunks: usize,
}

impl Accumulator {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one chunk. Errors: the chunk carries an in-stream error (its JSON, as text).
    pub fn push(&mut self, chunk: Chunk) -> Result<(), super::error::ProviderMessage> {
        self.chunks += 1;
        if let Some(err) = chunk.error {
            return Err(super::error::ProviderMessage(err.to_string()));
        }
        if self.model.is_none() {
            self.model = chunk.model;
        }
        if let Some(u) = &chunk.usage {
            self.usage = Some(u.into());
        }
        if let Some(t) = &chunk.timings {
            self.timings_usage = Some(t.into());
        }
        for choice in chunk.choices.into_iter().filter(|c| c.index == 0) {
            let d = choice.delta;
            if let Some(c) = d.content {
                self.content.push_str(&c);
            }
            if let Some(r) = d.reasoning_content.or(d.reasoning) {
                self.reasoning.push_str(&r);
            }
            for t in d.tool_calls {
                let entry = self.tools.entry(t.index).or_insert_with(|| ToolCall {
                    index: t.index,
                    ..Default::default()
                });
                if let Some(id) = t.id {
                    entry.id.push_str(&id);
                }
                if let Some(f) = t.function {
                    if let Some(n) = f.name {
                        entry.name.push_str(&n);
                    }
                    if let Some(a) = f.arguments {
                        entry.arguments.push_str(&a);
                    }
                }
            }
            if choice.finish_reason.is_some() {
                self.finish_reason = choice.finish_reason;
            }
        }
        Ok(())
    }

    /// Whether a usage chunk has arrived.
    pub fn has_usage(&self) -> bool {
        self.usage.is_some()
    }

    /// Whether a finish reason has arrived (the model finished generating).
    pub fn is_finished(&self) -> bool {
        self.finish_reason.is_some()
    }

    /// The answer so far. The content is kept as sent: `<think>` blocks in it are removed by
    /// the caller that reads it (the translation agent's post-processing, the agents' lenient
    /// JSON extraction), which knows whether the source mentions such tags.
    /// `usage` is the usage chunk's; without one, llama.cpp's `timings`; zero when the server
    /// sent neither (some local servers ignore `include_usage`).
    pub fn finish(self, attempts: u32) -> Answer {
        Answer {
            content: self.content,
            reasoning: self.reasoning,
            tool_calls: self.tools.into_values().collect(),
            usage: self.usage.or(self.timings_usage).unwrap_or_default(),
            finish_reason: self.finish_reason,
            model: self.model,
            attempts,
        }
    }
}

/// Splits reasoning that a model put *in front of* its content: leading `<think>…</think>`
/// blocks (also an unclosed one that runs to the end, and a leading block whose opening tag the
/// server swallowed, as some reasoning models served by vLLM do). Returns `(content, reasoning)`.
///
/// Only leading blocks are reasoning. A `<think>` tag later in the text is content: technical
/// books discuss such tags in inline code, and cutting there would truncate the translation.
pub fn split_think(text: &str) -> (String, String) {
    split_think_with(text, true)
}

/// [`split_think`], with the swallowed-opening-tag rule only when `allow_unopened` is true
/// (callers pass false when the source text itself mentions `</think>`).
pub fn split_think_with(text: &str, allow_unopened: bool) -> (String, String) {
    const OPEN: &str = "<think>";
    const CLOSE: &str = "</think>";
    let mut reasoning = String::new();
    let mut rest = text;
    // A leading block without its opening tag: text up to a `</think>` that no `<think>`
    // precedes, when that text contains no Markdown structure (a blank line would mean it is
    // content, not swallowed reasoning).
    if let Some(close) = rest.find(CLOSE).filter(|_| allow_unopened) {
        let head = &rest[..close];
        if !head.contains(OPEN) && !head.contains("\n\n") && !head.contains('`') {
            reasoning.push_str(head);
            rest = &rest[close + CLOSE.len()..];
        }
    }
    while let Some(after) = rest.trim_start().strip_prefix(OPEN) {
        match after.find(CLOSE) {
            Some(close) => {
                reasoning.push_str(&after[..close]);
                rest = &after[close + CLOSE.len()..];
            }
            None => {
                reasoning.push_str(after);
                rest = "";
            }
        }
    }
    let content = if reasoning.is_empty() {
        rest.to_string()
    } else {
        rest.trim_start().to_string()
    };
    (content, reasoning.trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(json: &str) -> Chunk {
        serde_json::from_str(json).unwrap()
    }

    /// Regression (a new user with `preset = "llamacpp"`): the progress line said 0 tokens and
    /// `status` counted 228 completion tokens for 16 calls. The shared llama.cpp server
    /// (xllamacpp) sends `usage` only when `stream_options.include_usage` is set, which the
    /// preset did not send; its final chunk (copied from that server, 0.5b model) carries
    /// `timings` instead, which now count when no usage chunk comes.
    #[test]
    fn llamacpp_preset_counted_no_tokens() {
        let mut acc = Accumulator::new();
        acc.push(chunk(r#"{"choices":[{"finish_reason":null,"index":0,"delta":{"content":"Hi"}}],"object":"chat.completion.chunk"}"#)).unwrap();
        acc.push(chunk(r#"{"choices":[{"finish_reason":"length","index":0,"delta":{}}],"created":1796417838,"id":"chatcmpl-vYCDRgo8HNxCoNwYYgTocpLiJ7Uc0H5n","model":"qwen2.5-coder-0.5b-instruct-q4_k_m.gguf","system_fingerprint":"b0-unknown","object":"chat.completion.chunk","timings":{"cache_n":5,"prompt_n":26,"prompt_ms":233.308,"prompt_per_token_ms":8.973384615384616,"prompt_per_second":111.44,"predicted_n":5,"predicted_ms":80.1,"predicted_per_token_ms":16.02,"predicted_per_second":62.4}}"#)).unwrap();
        assert!(
            !acc.has_usage(),
            "timings are no usage chunk: the reader still waits for one"
        );
        let a = acc.finish(1);
        assert_eq!(a.usage.prompt_tokens, 31);
        assert_eq!(a.usage.cached_tokens, 5);
        assert_eq!(a.usage.completion_tokens, 5);
        // A usage chunk, when one comes, wins over the timings.
        let mut acc = Accumulator::new();
        acc.push(chunk(
            r#"{"choices":[],"timings":{"cache_n":0,"prompt_n":26,"predicted_n":5}}"#,
        ))
        .unwrap();
        acc.push(chunk(
            r#"{"choices":[],"usage":{"completion_tokens":5,"prompt_tokens":31}}"#,
        ))
        .unwrap();
        let a = acc.finish(1);
        assert_eq!((a.usage.prompt_tokens, a.usage.cached_tokens), (31, 0));
    }

    #[test]
    fn accumulates_interleaved_parts() {
        let mut acc = Accumulator::new();
        for j in [
            r#"{"model":"m","choices":[{"index":0,"delta":{"reasoning_content":"let me "}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"你"}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"reasoning":"think","tool_calls":[{"index":1,"id":"b","function":{"name":"g","arguments":"{\"x\""}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"好","tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{}"}},{"index":1,"function":{"arguments":":1}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":3,"prompt_tokens_details":{"cached_tokens":8}}}"#,
        ] {
            acc.push(chunk(j)).unwrap();
        }
        assert!(acc.has_usage() && acc.is_finished());
        let a = acc.finish(1);
        assert_eq!(a.content, "你好");
        assert_eq!(a.reasoning, "let me think");
        assert_eq!(a.tool_calls.len(), 2);
        assert_eq!(a.tool_calls[1].arguments, "{\"x\":1}");
        assert_eq!(a.tool_calls[0].name, "f");
        assert_eq!(a.usage.prompt_tokens, 10);
        assert_eq!(a.usage.cached_tokens, 8);
        assert_eq!(a.finish_reason.as_deref(), Some("stop"));
        assert_eq!(a.model.as_deref(), Some("m"));
    }

    #[test]
    fn deepseek_cache_hits() {
        let u: WireUsage = serde_json::from_str(
            r#"{"prompt_tokens":5,"completion_tokens":1,"prompt_cache_hit_tokens":4}"#,
        )
        .unwrap();
        assert_eq!(Usage::from(&u).cached_tokens, 4);
    }

    #[test]
    fn in_stream_error() {
        let mut acc = Accumulator::new();
        assert!(
            acc.push(chunk(r#"{"error":{"message":"overloaded"}}"#))
                .is_err()
        );
    }

    #[test]
    fn think_blocks_are_split_off() {
        assert_eq!(
            split_think("<think>a</think>\n\nHello"),
            ("Hello".into(), "a".into())
        );
        assert_eq!(
            split_think("<think>a</think><think>b"),
            ("".into(), "ab".into())
        );
        // A tag inside the text is content (books discuss such tags).
        let body = "Qwen3 wraps reasoning in `<think>` and `</think>` tags.\n";
        assert_eq!(split_think(body), (body.into(), "".into()));
        assert_eq!(
            split_think("reason</think>Text"),
            ("Text".into(), "reason".into())
        );
        assert_eq!(split_think("plain"), ("plain".into(), "".into()));
    }
}
