//! The OpenAI-compatible client: `POST {base_url}/chat/completions` with `stream: true` and
//! `stream_options.include_usage` (unless the provider's [`Quirks`] say the server reports
//! usage without it), parsed as SSE by `eventsource-stream` over reqwest's byte stream.
//!
//! Per attempt: a connect timeout, an overall request timeout and an idle timeout between
//! chunks, and a [`Guard`] that stops a runaway reply (repeating itself, or outgrowing its
//! `max_tokens`) by dropping the stream ([`super::runaway`]). Across attempts: the shared retry driver ([`call::with_retries`]). Structured output
//! follows [`Quirks::json_mode`]: `response_format: json_schema` first, falling back to
//! `json_object` for the rest of the run when the server rejects it (DeepSeek, Ollama and many
//! vLLM builds do); `json_object` from the start; or no `response_format` at all (the prompt
//! asks for JSON). The batch endpoints (`/files`, `/batches`) are in [`super::batch`].

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

use eventsource_stream::Eventsource;
use futures_util::StreamExt;
use serde_json::{Value, json};

use super::ProviderPlan;
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
    /// limits shared by every provider). See the module docs for timeouts and fallbacks.
    /// `Answer::attempts` counts every HTTP request made.
    pub async fn complete(&self, req: &Request) -> Result<Answer, LlmError> {
        self.complete_with(req, CallOptions::default()).await
    }

    /// [`OpenAiClient::complete`] with per-call overrides.
    pub async fn complete_with(
        &self,
        req: &Request,
        opts: CallOptions,
    ) -> Result<Answer, LlmError> {
        let tokens = call::budget_tokens(req, self.max_tokens);
        let requests = AtomicU32::new(0);
        call::with_retries(
            req,
            self.max_attempts,
            &self.limits,
            tokens,
            &requests,
            || self.attempt_with_fallback(req, &requests, opts),
        )
        .await
    }

    /// The temperature of the campaign (`None`: the provider's default).
    pub fn temperature(&self) -> Option<f64> {
        self.temperature
    }

    async fn attempt_with_fallback(
        &self,
        req: &Request,
        requests: &AtomicU32,
        opts: CallOptions,
    ) -> Result<Answer, LlmError> {
        let use_schema = req.json_schema.is_some() && self.json_schema_ok.load(Ordering::Relaxed);
        requests.fetch_add(1, Ordering::SeqCst);
        match self.attempt(req, use_schema, opts).await {
            Err(LlmError::Http {
                status: 400,
                ref body,
                ..
            }) if use_schema
                && (body.contains("response_format") || body.contains("json_schema")) =>
            {
                tracing::info!("the endpoint rejects json_schema; using json_object from now on");
                self.json_schema_ok.store(false, Ordering::Relaxed);
                requests.fetch_add(1, Ordering::SeqCst);
                self.attempt(req, false, opts).await
            }
            other => other,
        }
    }

    /// One HTTP request, bounded by the overall request timeout.
    async fn attempt(
        &self,
        req: &Request,
        use_schema: bool,
        opts: CallOptions,
    ) -> Result<Answer, LlmError> {
        match tokio::time::timeout(
            self.request_timeout,
            self.attempt_inner(req, use_schema, opts),
        )
        .await
        {
            Ok(r) => r,
            Err(_) => Err(LlmError::Timeout(self.request_timeout.as_secs())),
        }
    }

    /// One request and its stream. The stream is read under a [`Guard`]: a reply that repeats
    /// itself or outgrows `max_tokens` is stopped by dropping the stream (which closes the
    /// connection) and returned as [`LlmError::Runaway`].
    async fn attempt_inner(
        &self,
        req: &Request,
        use_schema: bool,
        opts: CallOptions,
    ) -> Result<Answer, LlmError> {
        let mut rb = self
            .http
            .post(&self.url)
            .json(&self.body_with(req, use_schema, opts));
        if let Some(k) = &self.key {
            rb = rb.bearer_auth(k.expose());
        }
        let resp = rb
            .send()
            .await
            .map_err(|e| call::transport_error(e, &self.url, self.request_timeout))?;
        self.limits.observe(resp.headers());
        if !resp.status().is_success() {
            return Err(call::status_error(resp, &self.url).await);
        }
        let mut events = resp.bytes_stream().eventsource();
        let mut acc = Accumulator::new();
        let mut guard = Guard::for_request(req);
        let mut done = false;
        loop {
            let next = match tokio::time::timeout(self.idle_timeout, events.next()).await {
                Ok(n) => n,
                Err(_) => return Err(LlmError::StreamIdle(self.idle_timeout.as_secs())),
            };
            let Some(event) = next else { break };
            let event = event.map_err(|e| LlmError::StreamBroken(e.to_string()))?;
            let data = event.data.trim();
            if data.is_empty() {
                continue;
            }
            if data == "[DONE]" {
                done = true;
                break;
            }
            let chunk: Chunk = serde_json::from_str(data).map_err(|e| LlmError::Decode {
                message: e.to_string(),
                raw: crate::util::excerpt(data, 2000),
            })?;
            if let Some(r) = watch(&mut guard, &chunk) {
                drop(events);
                return Err(r.into_error(&req.task, req.prompt_tokens_estimate()));
            }
            acc.push(chunk)
                .map_err(|t| LlmError::in_stream(t, &self.url))?;
        }
        if !done && !acc.is_finished() {
            return Err(LlmError::StreamBroken(format!(
                "the stream ended after {} chunks without a finish reason or [DONE]",
                acc.chunks
            )));
        }
        let answer = acc.finish(1);
        let (visible, think) = super::stream::split_think(&answer.content);
        // A continuation may rightly add nothing: the reply was cut at its very end.
        if visible.trim().is_empty() && answer.tool_calls.is_empty() && req.prefill.is_none() {
            let why = if answer.reasoning.is_empty() && think.is_empty() {
                String::new()
            } else {
                " (only reasoning)".into()
            };
            return Err(LlmError::Empty(why));
        }
        Ok(answer)
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

/// Maps a non-2xx response to an error, recognising context-length errors by the wording
/// OpenAI, DeepSeek, vLLM and llama.cpp use, and account problems (quota, billing, key,
/// permission: [`super::error::account_problem`]) whatever their status.
pub fn classify_status(
    status: u16,
    url: &str,
    body: &str,
    retry_after: Option<Duration>,
) -> LlmError {
    let lower = body.to_ascii_lowercase();
    if status == 400
        && (lower.contains("context_length_exceeded")
            || lower.contains("maximum context length")
            || lower.contains("context window")
            || lower.contains("too many tokens")
            || lower.contains("exceeds the context")
            // Anthropic: "prompt is too long: 250000 tokens > 200000 maximum".
            || lower.contains("prompt is too long"))
    {
        return LlmError::ContextLength(crate::util::excerpt(body, 500));
    }
    if let Some(problem) = super::error::account_problem(status, body) {
        return LlmError::Account {
            problem,
            status,
            url: url.to_string(),
            message: super::error::provider_message(body),
        };
    }
    LlmError::Http {
        status,
        url: url.to_string(),
        body: crate::util::excerpt(body, 2000),
        retry_after,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_length_is_recognised() {
        let e = classify_status(
            400,
            "u",
            r#"{"error":{"code":"context_length_exceeded"}}"#,
            None,
        );
        assert!(matches!(e, LlmError::ContextLength(_)));
        assert!(!e.is_retryable());
        let e = classify_status(503, "u", "busy", None);
        assert!(e.is_retryable());
    }
}
