//! Providers: one [`Provider`] enum over the OpenAI-compatible and Anthropic streaming clients
//! and local [`Responder`]s (the offline rehearsal is one, supplied by the commands layer), with
//! the request/answer types and provider settings they share. Nothing here knows which agent
//! asks: a [`Request`] carries only a [`Task`] tag.
//!
//! - [`types`]: wire-independent [`Request`], [`Answer`], [`Usage`], [`Task`].
//! - [`settings`]: [`ProviderKind`] and the resolved [`ProviderPlan`].
//! - [`stream`]: OpenAI chat-completion chunks and their accumulation (pure, no I/O).
//! - [`openai`]: HTTP + SSE client with retries ([`retry`]) and timeouts.
//! - [`anthropic`]: the Anthropic Messages API client (SSE events, prompt caching, JSON by
//!   forced tool).
//! - [`call`]: what the HTTP clients share (key, transport errors, the retry driver).
//! - `attempt`: the attempt loop both streaming clients run (timeouts, the stream under the
//!   runaway guard, the "endpoint rejects the feature, downgrade and retry" fallback); each
//!   client supplies its request, its stream reader and its optional feature.
//! - [`presets`]: known services (base URL, key variable, quirks).
//! - [`batch`]: the OpenAI-compatible and Anthropic batch APIs (`run --batch`).
//! - [`pseudo`]: deterministic pseudo-translation of Markdown text (no prompt reading), which
//!   the rehearsal responder uses.
//! - [`error`]: [`LlmError`], classified for retry decisions (and account problems that stop
//!   a campaign).
//! - [`runaway`]: the stream guard that stops a reply repeating itself (or passing a hard
//!   ceiling far above any translation).
//! - [`continuation`]: finishing a reply cut at `max_tokens` with continuation requests.
//!
//! Agents never see HTTP: they build a [`Request`] and parse an [`Answer`].

pub mod anthropic;
mod attempt;
pub mod batch;
pub mod call;
pub mod continuation;
pub mod error;
pub mod limits;
pub mod openai;
pub mod presets;
pub mod pseudo;
pub mod retry;
pub mod runaway;
pub mod settings;
pub mod stream;
pub mod types;

pub use error::LlmError;
pub use settings::{ProviderKind, ProviderPlan};
pub use types::{Answer, CallOptions, JsonSchema, Message, Request, Role, Task, Usage};

use std::sync::Arc;

/// A provider that answers on this machine without a network call: the seam through which a
/// higher layer plugs in a deterministic answerer (the offline rehearsal of
/// `provider = "pseudo"`, a test double). It reads the request's [`Task`] tag and messages as
/// its author defines; `llm` only forwards the call.
pub trait Responder: Send + Sync {
    /// Answers `req`. Per-call overrides ([`CallOptions`]) are not passed: a local responder
    /// has no sampling to adjust.
    ///
    /// # Errors
    /// Whatever the responder cannot answer, as an [`LlmError`] (classified like a provider's).
    fn answer(&self, req: &Request) -> Result<Answer, LlmError>;

    /// Whether its answers are rehearsals (placeholder text that says REHEARSAL), not
    /// translations.
    fn is_rehearsal(&self) -> bool;

    /// Whether it continues a request's [`Request::prefill`] (default: no; a local responder
    /// answers whole).
    fn continues(&self) -> bool {
        false
    }
}

/// A configured provider. An enum rather than a trait object for the network clients: the set
/// is closed and known, and it keeps `async fn` dispatch simple. Local answerers come in through
/// [`Responder`].
pub enum Provider {
    Openai(Box<openai::OpenAiClient>),
    Anthropic(Box<anthropic::AnthropicClient>),
    /// A local, synchronous answerer (e.g. the offline rehearsal for `provider = "pseudo"`).
    Local(Arc<dyn Responder>),
}

impl Provider {
    /// Builds the network client of `plan` (`openai` or `anthropic`). The key is read from the
    /// environment variable named by `plan.api_key_env`; a missing key is an error unless the
    /// endpoint is on this machine (Ollama, vLLM and llama.cpp servers usually need none).
    ///
    /// # Errors
    /// [`LlmError::MissingKey`] as above, [`LlmError::Connect`] when the HTTP client cannot be
    /// built, and [`LlmError::Connect`] for `kind = pseudo`, which has no network client: it is
    /// answered by a [`Responder`] that the caller wraps in [`Provider::Local`] (the commands
    /// layer does so).
    pub fn connect(plan: &ProviderPlan) -> Result<Provider, LlmError> {
        Ok(match plan.kind {
            ProviderKind::Pseudo => {
                return Err(LlmError::Connect {
                    url: plan.base_url.clone(),
                    message: "the pseudo provider has no network client; it is answered by a local responder (Provider::Local)".into(),
                });
            }
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
            Provider::Local(r) => r.answer(req),
        }
    }

    /// [`Provider::complete`] with per-call overrides (a deliberate retry's lower temperature).
    /// A local responder ignores them.
    pub async fn complete_with(
        &self,
        req: &Request,
        opts: CallOptions,
    ) -> Result<Answer, LlmError> {
        match self {
            Provider::Openai(c) => c.complete_with(req, opts).await,
            Provider::Anthropic(c) => c.complete_with(req, opts).await,
            Provider::Local(r) => r.answer(req),
        }
    }

    /// The campaign's sampling temperature (`None`: the provider's default; also for a local
    /// responder).
    pub fn temperature(&self) -> Option<f64> {
        match self {
            Provider::Openai(c) => c.temperature(),
            Provider::Anthropic(c) => c.temperature(),
            Provider::Local(_) => None,
        }
    }

    /// Congestion signals (429s and timeouts) seen so far; the runner halves its concurrency
    /// when this grows.
    pub fn congestion_events(&self) -> u64 {
        match self {
            Provider::Openai(c) => c.limits.congestion_events(),
            Provider::Anthropic(c) => c.limits.congestion_events(),
            Provider::Local(_) => 0,
        }
    }

    /// Whether a reply cut at `max_tokens` can be continued now (the provider's
    /// [`presets::Continuation`], until [`Provider::stop_continuing`]).
    pub fn continues(&self) -> bool {
        use std::sync::atomic::Ordering;
        match self {
            Provider::Openai(c) => c.continuation_ok.load(Ordering::Relaxed),
            Provider::Anthropic(c) => c.continuation_ok.load(Ordering::Relaxed),
            Provider::Local(r) => r.continues(),
        }
    }

    /// Turns continuation off for the rest of the run: the server answered a continuation with
    /// a new reply (it does not continue a final assistant message).
    pub fn stop_continuing(&self) {
        use std::sync::atomic::Ordering;
        match self {
            Provider::Openai(c) => c.continuation_ok.store(false, Ordering::Relaxed),
            Provider::Anthropic(c) => c.continuation_ok.store(false, Ordering::Relaxed),
            Provider::Local(_) => {}
        }
    }

    /// The bytes of `prefill` this provider sends as the final assistant message (Anthropic
    /// drops trailing white space, which its API refuses there); a continuation follows them.
    pub fn prefill_as_sent<'a>(&self, prefill: &'a str) -> &'a str {
        match self {
            Provider::Anthropic(_) => anthropic::prefill_as_sent(prefill),
            _ => prefill,
        }
    }

    /// True for a rehearsal responder (the pseudo provider): outputs are rehearsals, not
    /// translations.
    pub fn is_rehearsal(&self) -> bool {
        match self {
            Provider::Local(r) => r.is_rehearsal(),
            _ => false,
        }
    }
}
