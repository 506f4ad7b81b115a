//! Provider presets: `[provider] preset = "deepseek"` fills in the provider kind, base URL, key
//! variable and quirks of a known service, so a campaign file only names the model. Keys given
//! explicitly in `[provider]` (`kind`, `base_url`, `api_key_env`, `json_mode`, `stream_usage`)
//! win over the preset; a `--base-url` flag wins over both.
//!
//! The table is data ([`PRESETS`]), one row per service, each citing the documentation its
//! values come from. Quirks that need no setting are handled for every provider anyway and
//! listed here for reference: reasoning text arrives as `reasoning_content` (DeepSeek, Qwen,
//! Doubao, vLLM, llama.cpp) or `reasoning` (OpenRouter, Ollama) and is kept apart from the
//! translation by [`super::stream::Accumulator`]; leading `<think>` blocks in the content are
//! split off by the agents.

use serde::{Deserialize, Serialize};

use super::ProviderKind;

/// How structured output (the Glossary, Proofreading, Manager and reconciliation agents' JSON)
/// is requested.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum JsonMode {
    /// `response_format: {type: json_schema}` (OpenAI structured outputs); falls back to
    /// `json_object` for the rest of the run when the server rejects it. For Anthropic: a tool
    /// whose `input_schema` is the schema, forced with `tool_choice`.
    #[default]
    Schema,
    /// `response_format: {type: json_object}` from the start (servers without `json_schema`).
    Object,
    /// No `response_format`: the agent's prompt asks for JSON and the answer is read leniently
    /// (servers that reject `response_format` altogether).
    Prompt,
}

impl std::str::FromStr for JsonMode {
    type Err = crate::util::UnknownValue;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "schema" => Ok(JsonMode::Schema),
            "object" => Ok(JsonMode::Object),
            "prompt" => Ok(JsonMode::Prompt),
            other => Err(crate::util::UnknownValue {
                what: "json_mode",
                value: other.to_string(),
                choices: "`schema`, `object` or `prompt`",
            }),
        }
    }
}

/// How a reply cut at `max_tokens` (`finish_reason = length`) can be continued: the request
/// is sent again with the part received as a final assistant message, which the model goes on
/// from (see [`super::continuation`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Continuation {
    /// A final assistant message is continued as it is (Anthropic's prefill, llama.cpp's
    /// server, Ollama, OpenRouter).
    Prefix,
    /// vLLM: the final assistant message plus `continue_final_message: true` and
    /// `add_generation_prompt: false`.
    Vllm,
    /// The server starts a new reply after a final assistant message (OpenAI's API): a cut
    /// translation is split at a block boundary instead, keeping what was received.
    #[default]
    None,
}

impl std::str::FromStr for Continuation {
    type Err = crate::util::UnknownValue;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "prefix" => Ok(Continuation::Prefix),
            "vllm" => Ok(Continuation::Vllm),
            "none" => Ok(Continuation::None),
            other => Err(crate::util::UnknownValue {
                what: "continuation",
                value: other.to_string(),
                choices: "`prefix`, `vllm` or `none`",
            }),
        }
    }
}

impl Continuation {
    /// The name used in the campaign file and the preset table of docs/src/providers.md.
    pub fn as_str(self) -> &'static str {
        match self {
            Continuation::Prefix => "prefix",
            Continuation::Vllm => "vllm",
            Continuation::None => "none",
        }
    }
}

/// Differences between OpenAI-compatible servers that change what is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Quirks {
    /// How JSON answers are requested.
    pub json_mode: JsonMode,
    /// Whether to send `stream_options: {include_usage: true}` (servers that report usage
    /// without it, or reject unknown fields, get none).
    pub stream_usage: bool,
    /// How a reply cut at `max_tokens` is continued.
    #[serde(default)]
    pub continuation: Continuation,
}

impl Default for Quirks {
    fn default() -> Self {
        Quirks {
            json_mode: JsonMode::Schema,
            stream_usage: true,
            continuation: Continuation::None,
        }
    }
}

/// One known service.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Preset {
    /// The name used in `preset = "…"`.
    pub name: &'static str,
    /// Which client speaks to it.
    pub kind: ProviderKind,
    /// Base URL (for `openai`: without `/chat/completions`; for `anthropic`: without
    /// `/v1/messages`).
    pub base_url: &'static str,
    /// Environment variable holding the key (servers on this machine need none).
    pub api_key_env: &'static str,
    /// What the server accepts.
    pub quirks: Quirks,
    /// Where reasoning text arrives, for the preset table (handled automatically).
    pub reasoning: &'static str,
    /// Whether the service offers a batch API booktr can use with `run --batch`.
    pub batch: bool,
    /// The documentation the values come from.
    pub docs: &'static str,
}

const fn q(json_mode: JsonMode, stream_usage: bool, continuation: Continuation) -> Quirks {
    Quirks {
        json_mode,
        stream_usage,
        continuation,
    }
}

/// Every preset, in the order the preset table (docs/src/providers.md) lists them.
pub const PRESETS: &[Preset] = &[
    // OpenAI: the reference API; structured outputs, usage on request, `/files` + `/batches`.
    // <https://platform.openai.com/docs/api-reference/chat/create>,
    // <https://platform.openai.com/docs/guides/batch>
    Preset {
        name: "openai",
        kind: ProviderKind::Openai,
        base_url: "https://api.openai.com/v1",
        api_key_env: "OPENAI_API_KEY",
        quirks: q(JsonMode::Schema, true, Continuation::None),
        reasoning: "not returned",
        batch: true,
        docs: "https://platform.openai.com/docs/api-reference/chat/create",
    },
    // Anthropic Messages API (native client, not OpenAI-compatible): JSON via a forced tool,
    // prompt caching with `cache_control`, Message Batches.
    // <https://docs.anthropic.com/en/api/messages>, <https://docs.anthropic.com/en/api/messages-streaming>
    Preset {
        name: "anthropic",
        kind: ProviderKind::Anthropic,
        base_url: "https://api.anthropic.com",
        api_key_env: "ANTHROPIC_API_KEY",
        quirks: q(JsonMode::Schema, true, Continuation::Prefix),
        reasoning: "`thinking` content blocks",
        batch: true,
        docs: "https://docs.anthropic.com/en/api/messages",
    },
    // DeepSeek: JSON output is `json_object` only; `deepseek-reasoner` streams
    // `reasoning_content`; cache hits are reported as `prompt_cache_hit_tokens`. No batch API.
    // <https://api-docs.deepseek.com/guides/json_mode>,
    // <https://api-docs.deepseek.com/guides/reasoning_model>
    Preset {
        name: "deepseek",
        kind: ProviderKind::Openai,
        base_url: "https://api.deepseek.com",
        api_key_env: "DEEPSEEK_API_KEY",
        quirks: q(JsonMode::Object, true, Continuation::None),
        reasoning: "`reasoning_content`",
        batch: false,
        docs: "https://api-docs.deepseek.com/",
    },
    // Doubao on Volcengine Ark: OpenAI-compatible under `/api/v3`, key `ARK_API_KEY` (Bearer);
    // thinking models stream `reasoning_content`; `json_schema` only on some models, so
    // `json_object`. <https://www.volcengine.com/docs/82379>
    Preset {
        name: "doubao",
        kind: ProviderKind::Openai,
        base_url: "https://ark.cn-beijing.volces.com/api/v3",
        api_key_env: "ARK_API_KEY",
        quirks: q(JsonMode::Object, true, Continuation::None),
        reasoning: "`reasoning_content`",
        batch: false,
        docs: "https://www.volcengine.com/docs/82379",
    },
    // Qwen on Alibaba Cloud Model Studio (DashScope), OpenAI-compatible mode (international
    // accounts: `https://dashscope-intl.aliyuncs.com/compatible-mode/v1`); JSON via
    // `json_object`; Qwen3/QwQ thinking streams `reasoning_content`; an OpenAI-compatible
    // `/files` + `/batches` API at half price (qwen-max, qwen-plus, qwen-turbo, …).
    // <https://help.aliyun.com/zh/model-studio/compatibility-of-openai-with-dashscope>,
    // <https://www.alibabacloud.com/help/en/model-studio/batch-interfaces-compatible-with-openai>
    Preset {
        name: "qwen",
        kind: ProviderKind::Openai,
        base_url: "https://dashscope.aliyuncs.com/compatible-mode/v1",
        api_key_env: "DASHSCOPE_API_KEY",
        quirks: q(JsonMode::Object, true, Continuation::None),
        reasoning: "`reasoning_content`",
        batch: true,
        docs: "https://help.aliyun.com/zh/model-studio/compatibility-of-openai-with-dashscope",
    },
    // OpenRouter: many upstream models; `json_schema` where the model supports structured
    // outputs (else the automatic fallback); reasoning in `reasoning`; a final assistant
    // message is continued ("assistant prefill",
    // <https://openrouter.ai/docs/api-reference/overview#assistant-prefill>).
    // <https://openrouter.ai/docs/api-reference/overview>,
    // <https://openrouter.ai/docs/use-cases/reasoning-tokens>
    Preset {
        name: "openrouter",
        kind: ProviderKind::Openai,
        base_url: "https://openrouter.ai/api/v1",
        api_key_env: "OPENROUTER_API_KEY",
        quirks: q(JsonMode::Schema, true, Continuation::Prefix),
        reasoning: "`reasoning`",
        batch: false,
        docs: "https://openrouter.ai/docs/api-reference/overview",
    },
    // Ollama's OpenAI compatibility on this machine (no key); `json_object`; thinking models
    // stream `reasoning`. <https://github.com/ollama/ollama/blob/main/docs/openai.md>
    Preset {
        name: "ollama",
        kind: ProviderKind::Openai,
        base_url: "http://localhost:11434/v1",
        api_key_env: "OLLAMA_API_KEY",
        quirks: q(JsonMode::Object, true, Continuation::Prefix),
        reasoning: "`reasoning`",
        batch: false,
        docs: "https://github.com/ollama/ollama/blob/main/docs/openai.md",
    },
    // vLLM's OpenAI-compatible server (key only when started with `--api-key`); structured
    // outputs via `json_schema`; `reasoning_content` with `--reasoning-parser`.
    // <https://docs.vllm.ai/en/latest/serving/openai_compatible_server.html>,
    // <https://docs.vllm.ai/en/latest/features/reasoning_outputs.html>
    Preset {
        name: "vllm",
        kind: ProviderKind::Openai,
        base_url: "http://localhost:8000/v1",
        api_key_env: "VLLM_API_KEY",
        quirks: q(JsonMode::Schema, true, Continuation::Vllm),
        reasoning: "`reasoning_content`",
        batch: false,
        docs: "https://docs.vllm.ai/en/latest/serving/openai_compatible_server.html",
    },
    // llama.cpp's `llama-server` (key only with `--api-key`): some builds send a usage chunk
    // at the end of every stream without being asked (ggml-org/llama.cpp#16048), but the
    // xllamacpp build of shared/real-llm sends usage only with `stream_options` (its last
    // chunk has `timings`, read as a fallback), so usage is asked; `json_schema` is turned
    // into a grammar; `reasoning_content` with
    // `--reasoning-format deepseek`; a final assistant message is continued (the server's
    // assistant prefill; checked on the 0.5b/1.5b servers of shared/real-llm: the stream
    // carries only the new text).
    // <https://github.com/ggml-org/llama.cpp/blob/master/tools/server/README.md>
    Preset {
        name: "llamacpp",
        kind: ProviderKind::Openai,
        base_url: "http://localhost:8080/v1",
        api_key_env: "LLAMA_API_KEY",
        quirks: q(JsonMode::Schema, true, Continuation::Prefix),
        reasoning: "`reasoning_content`",
        batch: false,
        docs: "https://github.com/ggml-org/llama.cpp/blob/master/tools/server/README.md",
    },
];

/// A preset name that is not in [`PRESETS`]; its message lists the known names.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown preset `{name}`; use one of: {}", known_names())]
pub struct UnknownPreset {
    /// The name asked for.
    pub name: String,
}

/// The names of [`PRESETS`], comma-separated.
fn known_names() -> String {
    PRESETS
        .iter()
        .map(|p| p.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The preset named `name`.
///
/// Errors: [`UnknownPreset`].
pub fn find(name: &str) -> Result<&'static Preset, UnknownPreset> {
    PRESETS
        .iter()
        .find(|p| p.name == name)
        .ok_or_else(|| UnknownPreset { name: name.into() })
}

/// The preset table (Markdown) of docs/src/providers.md, generated from [`PRESETS`] so the two
/// cannot drift apart (a test compares it with that page).
pub fn markdown_table() -> String {
    let mut s = String::from(
        "| preset | kind | base_url | key variable | JSON answers | usage in stream | reasoning | cut replies | batch | docs |\n|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for p in PRESETS {
        let json = match p.quirks.json_mode {
            JsonMode::Schema if p.kind == ProviderKind::Anthropic => "forced tool",
            JsonMode::Schema => "`json_schema` (falls back)",
            JsonMode::Object => "`json_object`",
            JsonMode::Prompt => "prompt only",
        };
        let usage = if p.kind == ProviderKind::Anthropic {
            "always (`message_delta`)"
        } else if p.quirks.stream_usage {
            "asked (`stream_options`)"
        } else {
            "sent unasked"
        };
        let key = if super::call::is_local(p.base_url) {
            format!("`{}` (only if set up)", p.api_key_env)
        } else {
            format!("`{}`", p.api_key_env)
        };
        let cut = match p.quirks.continuation {
            Continuation::Prefix => "continued (`prefix`)",
            Continuation::Vllm => "continued (`vllm`)",
            Continuation::None => "split, part kept (`none`)",
        };
        s.push_str(&format!(
            "| `{}` | `{}` | `{}` | {key} | {json} | {usage} | {} | {cut} | {} | [docs]({}) |\n",
            p.name,
            p.kind.as_str(),
            p.base_url,
            p.reasoning,
            if p.batch { "yes" } else { "no" },
            p.docs
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_found() {
        for p in PRESETS {
            assert_eq!(find(p.name).unwrap(), p);
            assert!(p.base_url.starts_with("http"), "{}", p.name);
            assert!(!p.docs.is_empty());
        }
        let mut names: Vec<_> = PRESETS.iter().map(|p| p.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), PRESETS.len());
        assert!(find("nope").unwrap_err().to_string().contains("deepseek"));
    }
}
