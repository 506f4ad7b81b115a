//! What every HTTP provider client shares: the API key (redacted in `Debug`), the reqwest
//! client, transport-error mapping, `Retry-After` reading, and the retry driver
//! ([`with_retries`]) that applies [`super::retry`]'s policy and [`super::limits`]'s rate limits
//! around one client-specific attempt. The OpenAI-compatible and the Anthropic clients differ
//! only in how one attempt is sent and read.

use std::future::Future;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use backon::Retryable;

use super::ProviderPlan;
use super::error::LlmError;
use super::limits::Limits;
use super::retry;
use super::types::{Answer, Request};

/// An API key. Its `Debug` output is redacted so it never reaches a log or a panic message.
#[derive(Clone)]
pub struct ApiKey(pub(crate) String);

impl ApiKey {
    /// The key itself, for a request header.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

/// Whether `base_url` points at this machine (where servers such as Ollama need no key).
pub fn is_local(base_url: &str) -> bool {
    let rest = base_url.split("://").nth(1).unwrap_or("");
    let host = rest.split(['/', ':']).next().unwrap_or("");
    matches!(host, "localhost" | "127.0.0.1" | "[::1]" | "0.0.0.0") || rest.starts_with("[::1]")
}

/// Reads the key from the variable `plan.api_key_env` (trimmed; empty counts as unset).
///
/// Errors: [`LlmError::MissingKey`] when it is unset and the endpoint is not local.
pub fn read_key(plan: &ProviderPlan) -> Result<Option<ApiKey>, LlmError> {
    let key = std::env::var(&plan.api_key_env)
        .ok()
        .filter(|k| !k.trim().is_empty())
        .map(|k| ApiKey(k.trim().to_string()));
    if key.is_none() && !is_local(&plan.base_url) {
        return Err(LlmError::MissingKey {
            var: plan.api_key_env.clone(),
        });
    }
    Ok(key)
}

/// Installs rustls's `ring` crypto provider as the process default, once (a provider installed
/// earlier is kept). reqwest is built with `rustls-no-provider` and rustls with `ring`, so the
/// build needs no C build of aws-lc (docs/src/install.md); reqwest panics when it builds
/// a client before a provider is installed, so every client is built after this.
pub fn install_tls_provider() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// The reqwest client of a provider: connect timeout from the plan, a `booktr/<version>` user
/// agent.
pub fn http_client(plan: &ProviderPlan) -> Result<reqwest::Client, LlmError> {
    install_tls_provider();
    reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(plan.connect_timeout_s))
        .user_agent(concat!("booktr/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| LlmError::Connect {
            url: plan.base_url.clone(),
            message: e.to_string(),
        })
}

/// Maps a reqwest error to [`LlmError::Timeout`] or [`LlmError::Connect`] with its whole
/// source chain (reqwest's messages never contain headers, so the key cannot leak).
pub fn transport_error(e: reqwest::Error, url: &str, timeout: Duration) -> LlmError {
    if e.is_timeout() {
        LlmError::Timeout(timeout.as_secs())
    } else {
        let mut msg = e.to_string();
        let mut src = std::error::Error::source(&e);
        while let Some(s) = src {
            msg.push_str(": ");
            msg.push_str(&s.to_string());
            src = s.source();
        }
        LlmError::Connect {
            url: url.to_string(),
            message: msg,
        }
    }
}

/// The `Retry-After` header of a response, parsed (see [`retry::parse_retry_after`]).
pub fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    headers
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(retry::parse_retry_after)
}

/// Reads a non-2xx response into an error (see [`super::error::classify_status`]).
pub async fn status_error(resp: reqwest::Response, url: &str) -> LlmError {
    let status = resp.status().as_u16();
    let ra = retry_after(resp.headers());
    let body = resp.text().await.unwrap_or_default();
    super::error::classify_status(status, url, &body, ra)
}

/// Whether an error is a congestion signal for the runner's adaptive concurrency: a 429, a
/// 529 (Anthropic's "overloaded"), or a timeout.
pub fn is_congestion(e: &LlmError) -> bool {
    matches!(
        e,
        LlmError::Http {
            status: 429 | 529,
            ..
        } | LlmError::Timeout(_)
            | LlmError::StreamIdle(_)
    )
}

/// Runs `attempt` with the retry policy of [`super::retry`] and the rate limits of `limits`.
///
/// `attempt` makes one logical attempt and adds every HTTP request it sends to `requests` (a
/// fallback inside an attempt counts twice; the caller owns the counter so that the attempt
/// can borrow it). Rate limiting (HTTP 429) is handled
/// before the retry budget: up to [`retry::MAX_RATE_LIMIT_WAITS`] 429 answers in a row are
/// waited out (honouring `Retry-After`) without using up `max_attempts`; beyond that they count
/// like other transient errors. `Answer::attempts` is set to the number of HTTP requests made.
/// `tokens` is what the request counts against a tokens-per-minute limit.
pub async fn with_retries<F, Fut>(
    req: &Request,
    max_attempts: u32,
    limits: &Limits,
    tokens: u32,
    requests: &AtomicU32,
    attempt: F,
) -> Result<Answer, LlmError>
where
    F: Fn() -> Fut,
    Fut: Future<Output = Result<Answer, LlmError>>,
{
    let waited = AtomicU32::new(0);
    let run = || async {
        let mut answer = rate_limited(req, limits, tokens, &waited, &attempt).await?;
        answer.attempts = requests.load(Ordering::SeqCst);
        Ok::<Answer, LlmError>(answer)
    };
    run.retry(retry::backoff(max_attempts))
        .sleep(tokio::time::sleep)
        .when(LlmError::is_retryable)
        .adjust(retry::adjust)
        .notify(|e, wait| {
            tracing::warn!(task = %req.task, "provider call failed, retrying in {:.1} s: {e}", wait.as_secs_f64())
        })
        .await
}

/// One attempt, waiting out 429 answers while the call's shared wait budget (`waited`,
/// counted across all attempts of the call) lasts.
async fn rate_limited<F, Fut>(
    req: &Request,
    limits: &Limits,
    tokens: u32,
    waited: &AtomicU32,
    attempt: &F,
) -> Result<Answer, LlmError>
where
    F: Fn() -> Fut,
    Fut: Future<Output = Result<Answer, LlmError>>,
{
    use backon::BackoffBuilder;
    let mut waits = retry::backoff(u32::MAX).build();
    loop {
        limits.acquire(tokens).await;
        let result = attempt().await;
        if result.as_ref().is_err_and(is_congestion) {
            limits.congested();
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
                tracing::warn!(task = %req.task, "rate limited (429), waiting {:.1} s ({n}/{})", wait.as_secs_f64(), retry::MAX_RATE_LIMIT_WAITS);
                tokio::time::sleep(wait).await;
            }
            other => return other,
        }
    }
}

/// Tokens a request counts against a tokens-per-minute limit: its prompt and the completion
/// it may produce (its cap, or as much again as the prompt).
pub fn budget_tokens(req: &Request, default_max: Option<u32>) -> u32 {
    let prompt = req.prompt_tokens_estimate() as u32;
    prompt.saturating_add(req.max_tokens.or(default_max).unwrap_or(prompt))
}

/// Sends a plain request (no stream) with the retry policy, for the batch endpoints: `make`
/// builds the request anew for each attempt. Returns the parsed JSON body.
///
/// Errors: the last attempt's [`LlmError`]; [`LlmError::Decode`] when the body is not JSON.
pub async fn send_json(
    max_attempts: u32,
    url: &str,
    timeout: Duration,
    make: impl Fn() -> reqwest::RequestBuilder,
) -> Result<serde_json::Value, LlmError> {
    let bytes = send_bytes(max_attempts, url, timeout, make).await?;
    serde_json::from_slice(&bytes).map_err(|e| LlmError::Decode {
        message: e.to_string(),
        raw: crate::util::excerpt(&String::from_utf8_lossy(&bytes), 2000),
    })
}

/// Like [`send_json`] but returns the body's bytes.
pub async fn send_bytes(
    max_attempts: u32,
    url: &str,
    timeout: Duration,
    make: impl Fn() -> reqwest::RequestBuilder,
) -> Result<Vec<u8>, LlmError> {
    let once = || async {
        let fut = async {
            let resp = make()
                .send()
                .await
                .map_err(|e| transport_error(e, url, timeout))?;
            if !resp.status().is_success() {
                return Err(status_error(resp, url).await);
            }
            resp.bytes()
                .await
                .map(|b| b.to_vec())
                .map_err(|e| LlmError::StreamBroken(e.to_string()))
        };
        match tokio::time::timeout(timeout, fut).await {
            Ok(r) => r,
            Err(_) => Err(LlmError::Timeout(timeout.as_secs())),
        }
    };
    once.retry(retry::backoff(
        max_attempts.max(retry::MAX_RATE_LIMIT_WAITS),
    ))
    .sleep(tokio::time::sleep)
    .when(LlmError::is_retryable)
    .adjust(retry::adjust)
    .notify(|e, wait| {
        tracing::warn!(
            "batch request to {url} failed, retrying in {:.1} s: {e}",
            wait.as_secs_f64()
        )
    })
    .await
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
    fn overloaded_is_congestion() {
        let e = |status| LlmError::Http {
            status,
            url: "u".into(),
            body: String::new(),
            retry_after: None,
        };
        assert!(is_congestion(&e(529)) && is_congestion(&e(429)));
        assert!(!is_congestion(&e(500)));
        assert!(e(529).is_retryable());
    }
}
