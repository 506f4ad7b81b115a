//! Provider kinds and resolved provider settings: which implementation answers requests
//! ([`ProviderKind`]) and everything a client needs to reach it ([`ProviderPlan`]). Defined here,
//! in the providers' layer, so clients and presets need nothing above it; the campaign
//! configuration resolves the campaign file's `[provider]` table into a [`ProviderPlan`] and
//! re-exports both types. Holds no secret: only the *name* of the key's variable.

/// Which provider implementation answers requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProviderKind {
    /// Any OpenAI-compatible `/chat/completions` endpoint, streamed over SSE.
    Openai,
    /// The Anthropic Messages API (`/v1/messages`), streamed over SSE.
    Anthropic,
    /// The built-in offline rehearsal provider. Every output says REHEARSAL.
    Pseudo,
}

impl std::str::FromStr for ProviderKind {
    type Err = crate::util::UnknownValue;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "openai" => Ok(ProviderKind::Openai),
            "anthropic" => Ok(ProviderKind::Anthropic),
            "pseudo" => Ok(ProviderKind::Pseudo),
            other => Err(crate::util::UnknownValue {
                what: "provider kind",
                value: other.to_string(),
                choices: "`openai` (any OpenAI-compatible endpoint), `anthropic` (the Anthropic Messages API) or `pseudo` (offline rehearsal)",
            }),
        }
    }
}

impl ProviderKind {
    /// The name used in files and flags.
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::Openai => "openai",
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::Pseudo => "pseudo",
        }
    }
}

/// Resolved provider settings. Holds the *name* of the API key variable, never the key.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ProviderPlan {
    pub kind: ProviderKind,
    /// Model name sent in requests (`pseudo` for the pseudo provider).
    pub model: String,
    /// Base URL without the trailing `/chat/completions`, e.g. `https://api.openai.com/v1`.
    pub base_url: String,
    /// Environment variable holding the API key (default: the preset's, else `ANTHROPIC_API_KEY`
    /// for `anthropic`, `OPENAI_API_KEY` otherwise).
    pub api_key_env: String,
    /// Sampling temperature; `None` leaves the provider default.
    pub temperature: Option<f64>,
    /// Completion token cap per request; `None` leaves the provider default.
    pub max_tokens: Option<u32>,
    /// The model's output limit in tokens (the campaign file's `max_output_tokens`): no
    /// learned bound goes above it.
    pub max_output_tokens: Option<u32>,
    /// Attempts per call including the first (default 5).
    pub max_attempts: u32,
    /// Requests per minute the client allows itself (`None`: unlimited).
    pub max_requests_per_minute: Option<u32>,
    /// Tokens per minute the client allows itself (`None`: unlimited).
    pub max_tokens_per_minute: Option<u32>,
    /// Overall timeout of one request in seconds (default 600).
    pub request_timeout_s: u64,
    /// Longest silence between two stream chunks in seconds before the attempt is aborted
    /// (default 120).
    pub stream_idle_timeout_s: u64,
    /// TCP connect timeout in seconds (default 15).
    pub connect_timeout_s: u64,
    /// What the server accepts (from the preset, overridden by `json_mode`/`stream_usage`).
    pub quirks: super::presets::Quirks,
    /// Wait between two polls of a batch in `run --batch`, in milliseconds (default 30,000).
    pub batch_poll_ms: u64,
}
