//! The OpenAI-compatible client: `POST {base_url}/chat/completions` with `stream: true` and
//! `stream_options.include_usage`, parsed as SSE by `eventsource-stream` over reqwest's byte
//! stream.
//!
//! Per attempt: a connect timeout, an overall request timeout and an idle timeout between
//! chunks. Across attempts: the [`super::retry`] policy. Structured output asks for
//! `response_format: json_schema` first and falls back to `json_object` for the rest of the run
//! when the server rejects it (DeepSeek, Ollama and many vLLM builds do).

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

use backon::Retryable;
use eventsource_stream::Eventsource;
use futures_util::StreamExt;
use serde_json::{Value, json};

use super::error::LlmError;
use super::retry;
use super::stream::{Accumulator, Chunk};
use super::types::{Answer, Request};
use crate::config::ProviderPlan;

/// An API key. Its `Debug` output is redacted so it never reaches a log or a panic message.
#[derive(Clone)]
pub struct ApiKey(String);

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

/// Client for one endpoint and model.
#[derive(Debug)]
pub struct OpenAiClient {
    http: reqwest::Client,
    url: String,
    key: Option<ApiKey>,
    model: String,
    temperature: Option<f64>,
    max_tokens: Option<u32>,
    max_attempts: u32,
    request_timeout: Duration,
    idle_timeout: Duration,
    /// Cleared after the server rejects `json_schema`; then `json_object` is used.
    json_schema_ok: AtomicBool,
    /// Rate limits and congestion signals shared by every request.
    pub limits: super::limits::Limits,
}

/// Whether `base_url` points at this machine (where servers such as Ollama need no key).
fn is_local(base_url: &str) -> bool {
    let rest = base_url.split("://").nth(1).unwrap_or("");
    let host = rest.split(['/', ':']).next().unwrap_or("");
    matches!(host, "localhost" | "127.0.0.1" | "[::1]" | "0.0.0.0") || rest.starts_with("[::1]")
}

impl OpenAiClient {
    /// Builds a client from the plan, reading the key from `plan.api_key_env`.
    ///
    /// Errors: [`LlmError::MissingKey`] when the variable is unset or empty and the endpoint is
    /// not local.
    pub fn new(plan: &ProviderPlan) -> Result<Self, LlmError> {
        let key = std::env::var(&plan.api_key_env)
            .ok()
            .filter(|k| !k.trim().is_empty())
            .map(|k| ApiKey(k.trim().to_string()));
        if key.is_none() && !is_local(&plan.base_url) {
            return Err(LlmError::MissingKey {
                var: plan.api_key_env.clone(),
            });
        }
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(plan.connect_timeout_s))
            .user_agent(concat!("booktr/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| LlmError::Connect {
                url: plan.base_url.clone(),
                message: e.to_string(),
            })?;
        Ok(OpenAiClient {
            http,
            url: format!("{}/chat/completions", plan.base_url),
            key,
            model: plan.model.clone(),
            temperature: plan.temperature,
            max_tokens: plan.max_tokens,
            max_attempts: plan.max_attempts,
            request_timeout: Duration::from_secs(plan.request_timeout_s),
            idle_timeout: Duration::from_secs(plan.stream_idle_timeout_s),
            json_schema_ok: AtomicBool::new(true),
            limits: super::limits::Limits::new(
                plan.max_requests_per_minute,
                plan.max_tokens_per_minute,
            ),
        })
    }

    /// The JSON body for `req` (pure; exposed for tests).
    pub fn body(&self, req: &Request, use_json_schema: bool) -> Value {
        let mut body = json!({
            "model": self.model,
            "messages": req.messages,
            "stream": true,
            "stream_options": {"include_usage": true},
        });
        if let Some(t) = self.temperature {
            body["temperature"] = json!(t);
        }
        if let Some(m) = req.max_tokens.or(self.max_tokens) {
            body["max_tokens"] = json!(m);
        }
        if let Some(schema) = &req.json_schema {
            body["response_format"] = if use_json_schema {
                json!({"type": "json_schema", "json_schema": {"name": schema.name, "schema": schema.schema}})
            } else {
                json!({"type": "json_object"})
            };
        }
        body
    }

    /// Sends `req` with retries. See the module docs for timeouts and fallbacks.
    ///
    /// Rate limiting (HTTP 429) is handled before the retry budget: up to
    /// [`retry::MAX_RATE_LIMIT_WAITS`] 429 answers in a row are waited out (honouring
    /// `Retry-After`) without using up `max_attempts`; beyond that they count like other
    /// transient errors. `Answer::attempts` counts every HTTP request made.
    pub async fn complete(&self, req: &Request) -> Result<Answer, LlmError> {
        let requests = AtomicU32::new(0);
        let rate_limit_waits = AtomicU32::new(0);
        // Tokens this request counts against a tokens-per-minute limit: its prompt and the
        // completion it may produce (its cap, or as much again as the prompt).
        let prompt = req.prompt_tokens_estimate() as u32;
        let tokens = prompt.saturating_add(req.max_tokens.or(self.max_tokens).unwrap_or(prompt));
        let run = || async {
            let mut answer = self
                .attempt_rate_limited(req, &requests, &rate_limit_waits, tokens)
                .await?;
            answer.attempts = requests.load(Ordering::SeqCst);
            Ok::<Answer, LlmError>(answer)
        };
        run.retry(retry::backoff(self.max_attempts))
            .sleep(tokio::time::sleep)
            .when(LlmError::is_retryable)
            .adjust(retry::adjust)
            .notify(|e, wait| {
                tracing::warn!(agent = ?req.agent, "provider call failed, retrying in {:.1} s: {e}", wait.as_secs_f64())
            })
            .await
    }

    /// One attempt, waiting out 429 answers while the call's shared wait budget (`waited`,
    /// counted across all attempts of the call) lasts.
    async fn attempt_rate_limited(
        &self,
        req: &Request,
        requests: &AtomicU32,
        waited: &AtomicU32,
        tokens: u32,
    ) -> Result<Answer, LlmError> {
        use backon::BackoffBuilder;
        let mut waits = retry::backoff(u32::MAX).build();
        loop {
            self.limits.acquire(tokens).await;
            let result = self.attempt_with_fallback(req, requests).await;
            if matches!(
                result,
                Err(LlmError::Http { status: 429, .. }
                    | LlmError::Timeout(_)
                    | LlmError::StreamIdle(_))
            ) {
                self.limits.congested();
            }
            match result {
                Err(e @ LlmError::Http { status: 429, .. })
                    if waited.load(Ordering::SeqCst) < retry::MAX_RATE_LIMIT_WAITS =>
                {
                    let n = waited.fetch_add(1, Ordering::SeqCst) + 1;
                    let wait = e
                        .retry_after()
                        .or_else(|| waits.next())
                        .unwrap_or(retry::MAX_RETRY_AFTER)
                        .min(retry::MAX_RETRY_AFTER);
                    tracing::warn!(agent = ?req.agent, "rate limited (429), waiting {:.1} s ({n}/{})", wait.as_secs_f64(), retry::MAX_RATE_LIMIT_WAITS);
                    tokio::time::sleep(wait).await;
                }
                other => return other,
            }
        }
    }

    async fn attempt_with_fallback(
        &self,
        req: &Request,
        requests: &AtomicU32,
    ) -> Result<Answer, LlmError> {
        let use_schema = req.json_schema.is_some() && self.json_schema_ok.load(Ordering::Relaxed);
        requests.fetch_add(1, Ordering::SeqCst);
        match self.attempt(req, use_schema).await {
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
                self.attempt(req, false).await
            }
            other => other,
        }
    }

    /// One HTTP request, bounded by the overall request timeout.
    async fn attempt(&self, req: &Request, use_schema: bool) -> Result<Answer, LlmError> {
        match tokio::time::timeout(self.request_timeout, self.attempt_inner(req, use_schema)).await
        {
            Ok(r) => r,
            Err(_) => Err(LlmError::Timeout(self.request_timeout.as_secs())),
        }
    }

    async fn attempt_inner(&self, req: &Request, use_schema: bool) -> Result<Answer, LlmError> {
        let mut rb = self.http.post(&self.url).json(&self.body(req, use_schema));
        if let Some(k) = &self.key {
            rb = rb.bearer_auth(&k.0);
        }
        let resp = rb.send().await.map_err(|e| self.transport_error(e))?;
        self.limits.observe(resp.headers());
        let status = resp.status();
        if !status.is_success() {
            let retry_after = resp
                .headers()
                .get(reqwest::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(retry::parse_retry_after);
            let body = resp.text().await.unwrap_or_default();
            return Err(classify_status(
                status.as_u16(),
                &self.url,
                &body,
                retry_after,
            ));
        }
        let mut events = resp.bytes_stream().eventsource();
        let mut acc = Accumulator::new();
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
            acc.push(chunk).map_err(LlmError::InStream)?;
        }
        if !done && !acc.is_finished() {
            return Err(LlmError::StreamBroken(format!(
                "the stream ended after {} chunks without a finish reason or [DONE]",
                acc.chunks
            )));
        }
        let answer = acc.finish(1);
        let (visible, think) = super::stream::split_think(&answer.content);
        if visible.trim().is_empty() && answer.tool_calls.is_empty() {
            let why = if answer.reasoning.is_empty() && think.is_empty() {
                String::new()
            } else {
                " (only reasoning)".into()
            };
            return Err(LlmError::Empty(why));
        }
        Ok(answer)
    }

    fn transport_error(&self, e: reqwest::Error) -> LlmError {
        if e.is_timeout() {
            LlmError::Timeout(self.request_timeout.as_secs())
        } else {
            // reqwest's message never contains headers, so the key cannot leak through it.
            let mut msg = e.to_string();
            let mut src = std::error::Error::source(&e);
            while let Some(s) = src {
                msg.push_str(": ");
                msg.push_str(&s.to_string());
                src = s.source();
            }
            LlmError::Connect {
                url: self.url.clone(),
                message: msg,
            }
        }
    }
}

/// Maps a non-2xx response to an error, recognising context-length errors by the wording
/// OpenAI, DeepSeek, vLLM and llama.cpp use.
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
            || lower.contains("exceeds the context"))
    {
        return LlmError::ContextLength(crate::util::excerpt(body, 500));
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
    fn local_hosts() {
        assert!(is_local("http://127.0.0.1:11434/v1"));
        assert!(is_local("http://localhost/v1"));
        assert!(!is_local("https://api.openai.com/v1"));
    }

    #[test]
    fn key_debug_is_redacted() {
        let k = ApiKey("sk-secret".into());
        assert!(!format!("{k:?}").contains("secret"));
    }

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
