//! The attempt loop every streaming provider shares: one call is attempts under the retry driver
//! ([`call::with_retries`]: backoff, 429 waits, rate limits); one attempt is one HTTP request
//! bounded by the overall request timeout, its SSE stream read under an idle timeout between
//! events and a runaway [`Guard`], and, when the endpoint rejects an optional feature (OpenAI's
//! `json_schema`, Anthropic's forced JSON tool), one more request without it, the feature
//! dropped for the rest of the run.
//!
//! A provider supplies only what differs ([`Endpoint`]): building the HTTP request, naming the
//! optional feature and recognising its rejection, and reading its stream's events
//! ([`StreamReader`]). Non-2xx answers are classified once for every provider
//! ([`call::status_error`], [`super::error::classify_status`]).

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use eventsource_stream::Eventsource;
use futures_util::StreamExt;

use super::call;
use super::error::LlmError;
use super::limits::Limits;
use super::runaway::{Guard, Runaway};
use super::types::{Answer, CallOptions, Request};

/// What the loop needs to know of a client: where it sends, and its limits.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Settings<'a> {
    /// The endpoint's URL (for error messages).
    pub url: &'a str,
    /// Attempts per call (the retry budget).
    pub max_attempts: u32,
    /// Bound on one HTTP request, connection to last event.
    pub request_timeout: Duration,
    /// Bound on the wait for the stream's next event.
    pub idle_timeout: Duration,
    /// Rate limits and congestion signals shared by every request of the client.
    pub limits: &'a Limits,
    /// The completion cap a request without its own `max_tokens` counts against a
    /// tokens-per-minute limit ([`call::budget_tokens`]).
    pub default_max_tokens: Option<u32>,
}

/// Why reading an event stopped the stream.
#[derive(Debug)]
pub(crate) enum Stop {
    /// The guard stopped a runaway reply.
    Runaway(Runaway),
    /// The event was an error or could not be read.
    Failed(LlmError),
}

impl From<LlmError> for Stop {
    fn from(e: LlmError) -> Stop {
        Stop::Failed(e)
    }
}

/// Reads one provider's SSE events into an [`Answer`].
pub(crate) trait StreamReader {
    /// Reads one `data:` payload (trimmed, not empty), feeding its text deltas to `guard`.
    /// Returns whether the stream said it is complete (the loop stops reading).
    ///
    /// Errors: [`Stop::Runaway`] when the guard stops the reply; [`Stop::Failed`] for a payload
    /// that does not decode ([`LlmError::Decode`]) or an in-stream error.
    fn read(&mut self, data: &str, guard: &mut Guard) -> Result<bool, Stop>;

    /// The answer of a stream that ended, with `attempts` 1.
    ///
    /// Errors: [`LlmError::StreamBroken`] when the stream ended before saying it was complete.
    fn finish(self) -> Result<Answer, LlmError>;
}

/// What one provider supplies to the shared attempt loop.
pub(crate) trait Endpoint: Sync {
    /// Its stream reader.
    type Reader: StreamReader + Send;

    /// Where it sends, and its limits.
    fn settings(&self) -> Settings<'_>;

    /// Whether `req` is sent with the optional feature now.
    fn uses_feature(&self, req: &Request) -> bool;

    /// Whether an HTTP 400 body names the optional feature (the endpoint rejects it).
    fn rejects_feature(&self, body: &str) -> bool;

    /// Stops using the optional feature for the rest of the run (and says so in the log).
    fn drop_feature(&self);

    /// The HTTP request of one attempt (headers and body).
    fn request(
        &self,
        req: &Request,
        use_feature: bool,
        opts: CallOptions,
    ) -> reqwest::RequestBuilder;

    /// A reader for the stream of one attempt.
    fn reader(&self, use_feature: bool) -> Self::Reader;
}

/// Sends `req` through `endpoint` with retries. `Answer::attempts` counts every HTTP request
/// made (a feature fallback inside an attempt counts twice).
///
/// Errors: the last attempt's [`LlmError`] (see [`call::with_retries`] for what is retried).
pub(crate) async fn complete<E: Endpoint>(
    endpoint: &E,
    req: &Request,
    opts: CallOptions,
) -> Result<Answer, LlmError> {
    let s = endpoint.settings();
    let tokens = call::budget_tokens(req, s.default_max_tokens);
    let requests = AtomicU32::new(0);
    call::with_retries(req, s.max_attempts, s.limits, tokens, &requests, || {
        attempt_with_fallback(endpoint, req, &requests, opts)
    })
    .await
}

/// One attempt; when the endpoint rejects the optional feature (HTTP 400 naming it), the
/// feature is dropped and the request sent again without it.
async fn attempt_with_fallback<E: Endpoint>(
    endpoint: &E,
    req: &Request,
    requests: &AtomicU32,
    opts: CallOptions,
) -> Result<Answer, LlmError> {
    let use_feature = endpoint.uses_feature(req);
    requests.fetch_add(1, Ordering::SeqCst);
    match attempt(endpoint, req, use_feature, opts).await {
        Err(LlmError::Http {
            status: 400,
            ref body,
            ..
        }) if use_feature && endpoint.rejects_feature(body) => {
            endpoint.drop_feature();
            requests.fetch_add(1, Ordering::SeqCst);
            attempt(endpoint, req, false, opts).await
        }
        other => other,
    }
}

/// One HTTP request, bounded by the overall request timeout.
async fn attempt<E: Endpoint>(
    endpoint: &E,
    req: &Request,
    use_feature: bool,
    opts: CallOptions,
) -> Result<Answer, LlmError> {
    let timeout = endpoint.settings().request_timeout;
    match tokio::time::timeout(timeout, read_stream(endpoint, req, use_feature, opts)).await {
        Ok(r) => r,
        Err(_) => Err(LlmError::Timeout(timeout.as_secs())),
    }
}

/// One request and its stream. The stream is read under a [`Guard`]: a reply that repeats
/// itself or outgrows `max_tokens` is stopped by dropping the stream (which closes the
/// connection) and returned as [`LlmError::Runaway`]. An answer with nothing visible is
/// [`LlmError::Empty`], except for a continuation ([`Request::prefill`]), which may rightly add
/// nothing (the reply was cut at its very end).
async fn read_stream<E: Endpoint>(
    endpoint: &E,
    req: &Request,
    use_feature: bool,
    opts: CallOptions,
) -> Result<Answer, LlmError> {
    let s = endpoint.settings();
    let resp = endpoint
        .request(req, use_feature, opts)
        .send()
        .await
        .map_err(|e| call::transport_error(e, s.url, s.request_timeout))?;
    s.limits.observe(resp.headers());
    if !resp.status().is_success() {
        return Err(call::status_error(resp, s.url).await);
    }
    let mut events = resp.bytes_stream().eventsource();
    let mut reader = endpoint.reader(use_feature);
    let mut guard = Guard::for_request(req);
    loop {
        let next = match tokio::time::timeout(s.idle_timeout, events.next()).await {
            Ok(n) => n,
            Err(_) => return Err(LlmError::StreamIdle(s.idle_timeout.as_secs())),
        };
        let Some(event) = next else { break };
        let event = event.map_err(|e| LlmError::StreamBroken(e.to_string()))?;
        let data = event.data.trim();
        if data.is_empty() {
            continue;
        }
        match reader.read(data, &mut guard) {
            Ok(true) => break,
            Ok(false) => {}
            Err(Stop::Runaway(r)) => {
                drop(events);
                return Err(r.into_error(&req.task, req.prompt_tokens_estimate()));
            }
            Err(Stop::Failed(e)) => return Err(e),
        }
    }
    let answer = reader.finish()?;
    if req.prefill.is_some() {
        return Ok(answer);
    }
    check_not_empty(answer)
}

/// An answer with no visible content and no tool call is an error ([`LlmError::Empty`],
/// retried), saying whether only reasoning came back.
pub(crate) fn check_not_empty(answer: Answer) -> Result<Answer, LlmError> {
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

/// The `Decode` error of a `data:` payload that is not the expected JSON.
pub(crate) fn decode_error(e: serde_json::Error, data: &str) -> LlmError {
    LlmError::Decode {
        message: e.to_string(),
        raw: crate::util::excerpt(data, 2000),
    }
}
