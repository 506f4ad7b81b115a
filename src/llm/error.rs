//! Provider errors, classified so the retry policy can decide without string matching.

use std::time::Duration;

/// Why a call failed. Messages never include the API key or request headers.
#[derive(Debug, Clone, thiserror::Error)]
pub enum LlmError {
    #[error(
        "the API key variable {var} is not set; export it (e.g. `export {var}=…`) or use `--provider pseudo` for an offline rehearsal"
    )]
    MissingKey { var: String },
    #[error("HTTP {status} from {url}: {body}")]
    Http {
        status: u16,
        url: String,
        /// Response body, shortened to 2,000 characters.
        body: String,
        /// From a `Retry-After` header (seconds or HTTP date), if any.
        retry_after: Option<Duration>,
    },
    #[error("the request does not fit the model's context window: {0}")]
    ContextLength(String),
    #[error("cannot connect to {url}: {message}")]
    Connect { url: String, message: String },
    #[error("request timed out after {0} s")]
    Timeout(u64),
    #[error("stream stalled: no data for {0} s")]
    StreamIdle(u64),
    #[error("stream broke before it finished: {0}")]
    StreamBroken(String),
    #[error("cannot decode the provider's answer: {message}; raw: {raw}")]
    Decode { message: String, raw: String },
    #[error("the provider returned an error in the stream: {0}")]
    InStream(String),
    #[error("the answer had no content{0}")]
    Empty(String),
}

impl LlmError {
    /// Whether trying again may succeed: connection problems, timeouts, broken or stalled
    /// streams, 408/409/429/5xx, errors reported inside a stream, and empty answers.
    /// 400 (including context length), 401, 403, 404 and 422 are final.
    pub fn is_retryable(&self) -> bool {
        match self {
            LlmError::Http { status, .. } => matches!(status, 408 | 409 | 429) || *status >= 500,
            LlmError::Connect { .. }
            | LlmError::Timeout(_)
            | LlmError::StreamIdle(_)
            | LlmError::StreamBroken(_)
            | LlmError::InStream(_)
            | LlmError::Decode { .. }
            | LlmError::Empty(_) => true,
            LlmError::MissingKey { .. } | LlmError::ContextLength(_) => false,
        }
    }

    /// The wait the provider asked for (`Retry-After`), if any.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            LlmError::Http { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// Whether the whole campaign should stop (no other call can succeed either): a missing or
    /// rejected key, a forbidden or unknown model/endpoint.
    pub fn is_fatal_for_campaign(&self) -> bool {
        match self {
            LlmError::MissingKey { .. } => true,
            LlmError::Http { status, .. } => matches!(status, 401 | 403 | 404),
            _ => false,
        }
    }
}
