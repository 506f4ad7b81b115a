//! Providers: one [`Provider`] enum over the OpenAI-compatible and Anthropic streaming clients
//! and the offline pseudo provider, with the request/answer types they share.
//!
//! - [`types`]: wire-independent [`Request`], [`Answer`], [`Usage`].
//! - [`stream`]: OpenAI chat-completion chunks and their accumulation (pure, no I/O).
//! - [`openai`]: HTTP + SSE client with retries ([`retry`]) and timeouts.
//! - [`anthropic`]: the Anthropic Messages API client (SSE events, prompt caching, JSON by
//!   forced tool).
//! - [`call`]: what the HTTP clients share (key, transport errors, the retry driver).
//! - [`presets`]: known services (base URL, key variable, quirks).
//! - [`batch`]: the OpenAI-compatible and Anthropic batch APIs (`run --batch`).
//! - [`pseudo`]: deterministic offline "translator" for rehearsals and tests.
//! - [`error`]: [`LlmError`], classified for retry decisions (and account problems that stop
//!   a campaign).
//! - [`runaway`]: the stream guard that stops a reply repeating itself or outgrowing its
//!   `max_tokens`.
//!
//! Agents never see HTTP: they build a [`Request`] and parse an [`Answer`].

pub mod anthropic;
pub mod batch;
pub mod call;
pub mod error;
pub mod limits;
pub mod openai;
pub mod presets;
pub mod pseudo;
pub mod retry;
pub mod runaway;
pub mod stream;
pub mod types;

pub use error::LlmError;
pub use types::{Answer, CallOptions, JsonSchema, Message, Request, Role, Usage};

use crate::config::{ProviderKind, ProviderPlan};

/// A configured provider. An enum rather than a trait object: the set is closed and known, and
/// it keeps `async fn` dispatch simple.
pub enum Provider {
    Openai(Box<openai::OpenAiClient>),
    Anthropic(Box<anthropic::AnthropicClient>),
    Pseudo(pseudo::Pseudo),
}

impl Provider {
    /// Builds the provider of `plan`. For `openai` and `anthropic` the key is read from the
    /// environment variable named by `plan.api_key_env`; a missing key is an error unless the endpoint is on this
    /// machine (Ollama, vLLM and llama.cpp servers usually need none).
    pub fn from_plan(
        plan: &ProviderPlan,
        target_lang: &crate::lang::Lang,
    ) -> Result<Provider, LlmError> {
        Ok(match plan.kind {
            ProviderKind::Pseudo => Provider::Pseudo(pseudo::Pseudo::new(target_lang.clone())),
            ProviderKind::Openai => Provider::Openai(Box::new(openai::OpenAiClient::new(plan)?)),
            ProviderKind::Anthropic => {
                Provider::Anthropic(Box::new(anthropic::AnthropicClient::new(plan)?))
            }
        })
    }

    /// Sends `req` and returns the complete answer, retrying transient failures as configured.
    pub async fn complete(&self, req: &Request) -> Result<Answer, LlmError> {
        match self {
            Provider::Openai(c) => c.complete(req).await,
            Provider::Anthropic(c) => c.complete(req).await,
            Provider::Pseudo(p) => Ok(p.complete(req)),
        }
    }

    /// [`Provider::complete`] with per-call overrides (a deliberate retry's lower temperature).
    /// The pseudo provider ignores them.
    pub async fn complete_with(
        &self,
        req: &Request,
        opts: CallOptions,
    ) -> Result<Answer, LlmError> {
        match self {
            Provider::Openai(c) => c.complete_with(req, opts).await,
            Provider::Anthropic(c) => c.complete_with(req, opts).await,
            Provider::Pseudo(p) => Ok(p.complete(req)),
        }
    }

    /// The campaign's sampling temperature (`None`: the provider's default; also for the
    /// pseudo provider).
    pub fn temperature(&self) -> Option<f64> {
        match self {
            Provider::Openai(c) => c.temperature(),
            Provider::Anthropic(c) => c.temperature(),
            Provider::Pseudo(_) => None,
        }
    }

    /// Congestion signals (429s and timeouts) seen so far; the runner halves its concurrency
    /// when this grows.
    pub fn congestion_events(&self) -> u64 {
        match self {
            Provider::Openai(c) => c.limits.congestion_events(),
            Provider::Anthropic(c) => c.limits.congestion_events(),
            Provider::Pseudo(_) => 0,
        }
    }

    /// True for the pseudo provider: outputs are rehearsals, not translations.
    pub fn is_rehearsal(&self) -> bool {
        matches!(self, Provider::Pseudo(_))
    }
}
