//! The OpenAI-compatible client: `POST {base_url}/chat/completions` with `stream: true` and
//! `stream_options.include_usage` (unless the provider's [`Quirks`] say the server reports
//! usage without it), parsed as SSE by `eventsource-stream` over reqwest's byte stream.
//!
//! Per attempt: a connect timeout, an overall request timeout and an idle timeout between
//! chunks, and a [`Guard`] that stops a runaway reply (repeating itself, or outgrowing its
//! `max_tokens`) by dropping the stream ([`super::runaway`]); that loop is shared with the
//! Anthropic client (`attempt`). Across attempts: the shared retry driver
//! ([`call::with_retries`]). Structured output
//! follows [`Quirks::json_mode`]: `response_format: json_schema` first, falling back to
//! `json_object` for the rest of the run when the server rejects it (DeepSeek, Ollama and many
//! vLLM builds do); `json_object` from the start; or no `response_format` at all (the prompt
//! asks for JSON). The batch endpoints (`/files`, `/batches`) are in [`super::batch`].

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::{Value, json};

use super::ProviderPlan;
use super::attempt;
use super::call;
use super::error::LlmError;
use super::presets::{Continuation, JsonMode, Quirks};
use super::runaway::{Channel, Guard};
use super::stream::{Accumulator, Chunk};
use super::types::{Answer, CallOptions, Request};

pub use super::call::ApiKey;

/// Client for one endpoint and model.
#[derive(Debug)]
pub struct OpenAiClient {
    pub(crate) http: reqwest::Client,
    /// The base URL without a trailing slash, e.g. `https://api.openai.com/v1`.
    pub(crate) base_url: String,
    url: String,
    pub(crate) key: Option<ApiKey>,
    model: String,
    temperature: Option<f64>,
    max_tokens: Option<u32>,
    pub(crate) max_attempts: u32,
    pub(crate) request_timeout: Duration,
    idle_timeout: Duration,
    quirks: Quirks,
    /// Cleared after the server rejects `json_schema`; then `json_object` is used.
    json_schema_ok: AtomicBool,
    /// Cleared when a continuation came back as a new reply (see [`super::continuation`]).
    pub(crate) continuation_ok: AtomicBool,
    /// Rate limits and congestion signals shared by every request.
    pub limits: super::limits::Limits,
}

impl OpenAiClient {
    /// Builds a client from the plan, reading the key from `plan.api_key_env`.
    ///
    /// Errors: [`LlmError::MissingKey`] when the variable is unset or empty and the endpoint is
    /// not local.
    pub fn new(plan: &ProviderPlan) -> Result<Self, LlmError> {
        let key = call::read_key(plan)?;
        let http = call::http_client(plan)?;
        Ok(OpenAiClient {
            http,
            base_url: plan.base_url.clone(),
            url: format!("{}/chat/completions", plan.base_url),
            key,
            model: plan.model.clone(),
            temperature: plan.temperature,
            max_tokens: plan.max_tokens,
            max_attempts: plan.max_attempts,
            request_timeout: Duration::from_secs(plan.request_timeout_s),
            idle_timeout: Duration::from_secs(plan.stream_idle_timeout_s),
            quirks: plan.quirks,
            json_schema_ok: AtomicBool::new(plan.quirks.json_mode == JsonMode::Schema),
            continuation_ok: AtomicBool::new(plan.quirks.continuation != Continuation::None),
            limits: super::limits::Limits::new(
                plan.max_requests_per_minute,
                plan.max_tokens_per_minute,
            ),
        })
    }

    /// The JSON body for `req` (pure; exposed for tests).
    pub fn body(&self, req: &Request, use_json_schema: bool) -> Value {
        self.body_with(req, use_json_schema, CallOptions::default())
    }

    /// [`OpenAiClient::body`] with per-call overrides (a retry's lower temperature).
    pub fn body_with(&self, req: &Request, use_json_schema: bool, opts: CallOptions) -> Value {
        let mut body = self.plain_body(req, use_json_schema);
        if let Some(t) = opts.temperature {
            body["temperature"] = json!(t);
        }
        body["stream"] = json!(true);
        if self.quirks.stream_usage {
            body["stream_options"] = json!({"include_usage": true});
        }
        body
    }

    /// The body without streaming fields (what a batch line carries; pure). A request with a
    /// [`Request::prefill`] ends with that assistant message (and, for vLLM, the flags that
    /// make it continue the message: [`Continuation::Vllm`]); it carries no `response_format`,
    /// since a grammar-constrained server would start a new JSON value instead of finishing
    /// the one cut.
    pub fn plain_body(&self, req: &Request, use_json_schema: bool) -> Value {
        let mut messages = serde_json::to_value(&req.messages).unwrap_or_else(|_| json!([]));
        if let (Some(prefill), Some(list)) = (&req.prefill, messages.as_array_mut()) {
            list.push(json!({"role": "assistant", "content": prefill}));
        }
        let mut body = json!({
            "model": self.model,
            "messages": messages,
        });
        if req.prefill.is_some() && self.quirks.continuation == Continuation::Vllm {
            // <https://docs.vllm.ai/en/latest/serving/openai_compatible_server.html#chat-api>:
            // `continue_final_message` continues the last assistant message instead of
            // starting a new turn; it needs `add_generation_prompt: false`.
            body["continue_final_message"] = json!(true);
            body["add_generation_prompt"] = json!(false);
        }
        if let Some(t) = self.temperature {
            body["temperature"] = json!(t);
        }
        if let Some(m) = req.max_tokens.or(self.max_tokens) {
            body["max_tokens"] = json!(m);
        }
        if let Some(schema) = req.json_schema.as_ref().filter(|_| req.prefill.is_none()) {
            if use_json_schema {
                body["response_format"] = json!({"type": "json_schema", "json_schema": {"name": schema.name, "schema": schema.schema}});
            } else if self.quirks.json_mode != JsonMode::Prompt {
                body["response_format"] = json!({"type": "json_object"});
            }
            // JsonMode::Prompt: no response_format; the agent's prompt asks for JSON and
            // `agents::json::extract` reads it leniently.
        }
        body
    }

    /// Sends `req` with retries ([`call::with_retries`]: the retry policy, 429 waits and rate
    /// limits shared by every provider) through the shared attempt loop (`attempt::complete`).
    /// See the module docs for timeouts and fallbacks. `Answer::attempts` counts every HTTP
    /// request made.
    pub async fn complete(&self, req: &Request) -> Result<Answer, LlmError> {
        self.complete_with(req, CallOptions::default()).await
    }

    /// [`OpenAiClient::complete`] with per-call overrides.
    pub async fn complete_with(
        &self,
        req: &Request,
        opts: CallOptions,
    ) -> Result<Answer, LlmError> {
        attempt::complete(self, req, opts).await
    }

    /// The temperature of the campaign (`None`: the provider's default).
    pub fn temperature(&self) -> Option<f64> {
        self.temperature
    }
}

/// What differs for an OpenAI-compatible endpoint: a bearer key, chat-completion chunks, and
/// `json_schema` as the feature an endpoint may reject (then `json_object` is used).
impl attempt::Endpoint for OpenAiClient {
    type Reader = ChunkReader;

    fn settings(&self) -> attempt::Settings<'_> {
        attempt::Settings {
            url: &self.url,
            max_attempts: self.max_attempts,
            request_timeout: self.request_timeout,
            idle_timeout: self.idle_timeout,
            limits: &self.limits,
            default_max_tokens: self.max_tokens,
        }
    }

    fn uses_feature(&self, req: &Request) -> bool {
        req.json_schema.is_some() && self.json_schema_ok.load(Ordering::Relaxed)
    }

    fn rejects_feature(&self, body: &str) -> bool {
        body.contains("response_format") || body.contains("json_schema")
    }

    fn drop_feature(&self) {
        tracing::info!("the endpoint rejects json_schema; using json_object from now on");
        self.json_schema_ok.store(false, Ordering::Relaxed);
    }

    fn request(
        &self,
        req: &Request,
        use_feature: bool,
        opts: CallOptions,
    ) -> reqwest::RequestBuilder {
        let rb = self
            .http
            .post(&self.url)
            .json(&self.body_with(req, use_feature, opts));
        match &self.key {
            Some(k) => rb.bearer_auth(k.expose()),
            None => rb,
        }
    }

    fn reader(&self, _use_feature: bool) -> ChunkReader {
        ChunkReader {
            acc: Accumulator::new(),
            done: false,
            url: self.url.clone(),
        }
    }
}

/// Reads chat-completion chunks; the stream is complete at `[DONE]` or a finish reason.
#[derive(Debug)]
pub(crate) struct ChunkReader {
    acc: Accumulator,
    /// Whether `[DONE]` arrived.
    done: bool,
    /// The endpoint, for in-stream errors.
    url: String,
}

impl attempt::StreamReader for ChunkReader {
    fn read(&mut self, data: &str, guard: &mut Guard) -> Result<bool, attempt::Stop> {
        if data == "[DONE]" {
            self.done = true;
            return Ok(true);
        }
        let chunk: Chunk =
            serde_json::from_str(data).map_err(|e| attempt::decode_error(e, data))?;
        if let Some(r) = watch(guard, &chunk) {
            return Err(attempt::Stop::Runaway(r));
        }
        self.acc
            .push(chunk)
            .map_err(|t| LlmError::in_stream(t.0, &self.url))?;
        Ok(false)
    }

    fn finish(self) -> Result<Answer, LlmError> {
        if !self.done && !self.acc.is_finished() {
            return Err(LlmError::StreamBroken(format!(
                "the stream ended after {} chunks without a finish reason or [DONE]",
                self.acc.chunks
            )));
        }
        Ok(self.acc.finish(1))
    }
}

/// Feeds the deltas of choice 0 of `chunk` to `guard`.
fn watch(guard: &mut Guard, chunk: &Chunk) -> Option<super::runaway::Runaway> {
    for c in chunk.choices.iter().filter(|c| c.index == 0) {
        let d = &c.delta;
        let parts = [
            (Channel::Content, d.content.as_deref()),
            (
                Channel::Reasoning,
                d.reasoning_content.as_deref().or(d.reasoning.as_deref()),
            ),
        ];
        for (ch, text) in parts {
            if let Some(r) = text.and_then(|t| guard.observe(ch, t)) {
                return Some(r);
            }
        }
        for t in &d.tool_calls {
            let args = t.function.as_ref().and_then(|f| f.arguments.as_deref());
            if let Some(r) = args.and_then(|a| guard.observe(Channel::ToolArguments, a)) {
                return Some(r);
            }
        }
    }
    None
}
