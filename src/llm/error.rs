//! Provider errors, classified so the retry policy can decide without string matching.
//!
//! Two kinds are never retried and stop the whole campaign at their first occurrence
//! ([`LlmError::is_fatal_for_campaign`]): a missing key, and [`LlmError::Account`], a refusal of
//! the account itself (quota, billing, authentication, permission; see [`account_problem`] for
//! the status codes and wordings recognised). [`LlmError::Runaway`] is a reply the stream
//! reader stopped ([`super::runaway`]); it is not retried by the client, the campaign retries it
//! once deliberately.

use std::time::Duration;

/// An error the provider reported inside an answer rather than as an HTTP status: an
/// in-stream error event, a batch item's error, a body that is not an answer. The text is the
/// provider's (its error type and message where it gives them).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ProviderMessage(pub String);

impl PartialEq<&str> for ProviderMessage {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

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
    #[error("{CONNECT_PREFIX}{url}: {message}")]
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
    /// The provider refused the account: no other call can succeed until a person acts (adds
    /// credit, raises the quota, fixes the key or its permissions). `message` is the provider's
    /// own message (from `error.message` of a JSON body, else the body), shortened to 500
    /// characters, with anything shaped like a key (`sk-…`) redacted.
    #[error("{problem} (HTTP {status} from {url}): {message}")]
    Account {
        problem: AccountProblem,
        status: u16,
        url: String,
        message: String,
    },
    /// The stream reader stopped a reply that repeated itself or outgrew its `max_tokens`
    /// ([`super::runaway`]); the HTTP stream was dropped. `usage` is what it cost so far: the
    /// prompt (estimated with `o200k_base`) and the completion tokens received. `before` is
    /// the content received before a repetition began, its first copy included
    /// ([`super::runaway::Runaway::before`]); empty when the reply passed its ceiling or
    /// repeated itself in another channel.
    #[error("runaway reply: {reason}")]
    Runaway {
        reason: String,
        usage: super::types::Usage,
        before: String,
    },
}

/// How the message of [`LlmError::Connect`] begins.
const CONNECT_PREFIX: &str = "cannot connect to ";

/// The URL no server answered at, when a recorded failure (`call: error`, as the journal keeps
/// it) is a [`LlmError::Connect`]; `None` for any other error.
pub fn unreachable_url(recorded: &str) -> Option<&str> {
    let at = recorded.find(CONNECT_PREFIX)? + CONNECT_PREFIX.len();
    let rest = &recorded[at..];
    Some(&rest[..rest.find(": ").unwrap_or(rest.len())])
}

/// Why the provider refused the account (see [`account_problem`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AccountProblem {
    /// The quota is used up (OpenAI `insufficient_quota`, even when sent as HTTP 429).
    Quota,
    /// Payment or credit (HTTP 402, `billing_hard_limit_reached`, Anthropic `billing_error`,
    /// "credit balance is too low", DeepSeek "Insufficient Balance").
    Billing,
    /// The key is rejected (HTTP 401, `invalid_api_key`, Anthropic `authentication_error`).
    Authentication,
    /// The key may not use this model or endpoint (HTTP 403, Anthropic `permission_error`).
    Permission,
}

impl std::fmt::Display for AccountProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            AccountProblem::Quota => "the provider's quota for this key is used up",
            AccountProblem::Billing => "the provider refuses the account for billing reasons",
            AccountProblem::Authentication => "the provider rejects the API key",
            AccountProblem::Permission => "the API key may not use this model or endpoint",
        })
    }
}

/// Whether a refused request (`status` < 500 and its `body`) is an account problem, by status
/// and by the wordings providers document:
///
/// - OpenAI: `insufficient_quota` ("You exceeded your current quota"), sent as HTTP 429 like a
///   rate limit but not one; `billing_hard_limit_reached`, `billing_not_active`,
///   `invalid_api_key` (<https://platform.openai.com/docs/guides/error-codes>);
/// - Anthropic: `authentication_error` (401), `permission_error` (403), `billing_error`, and
///   "Your credit balance is too low" (sent as HTTP 400)
///   (<https://docs.anthropic.com/en/api/errors>);
/// - DeepSeek: HTTP 402 "Insufficient Balance" (<https://api-docs.deepseek.com/quick_start/error_codes>);
///   DashScope: `Arrearage` (overdue payment);
/// - any provider: HTTP 401 (authentication), 402 (payment required), 403 (permission).
///
/// A rate limit (429 `rate_limit_exceeded`, or a per-minute "quota metric" as Google words
/// it) is not an account problem: waiting fixes it.
pub fn account_problem(status: u16, body: &str) -> Option<AccountProblem> {
    if status >= 500 {
        return None;
    }
    let b = body.to_ascii_lowercase();
    let has = |words: &[&str]| words.iter().any(|w| b.contains(w));
    if has(&["insufficient_quota", "exceeded your current quota"]) {
        return Some(AccountProblem::Quota);
    }
    if status == 402
        || has(&[
            "billing_hard_limit_reached",
            "billing_not_active",
            "billing_error",
            "credit balance is too low",
            "insufficient balance",
            "insufficient_balance",
            "arrearage",
        ])
    {
        return Some(AccountProblem::Billing);
    }
    if status == 401
        || has(&[
            "authentication_error",
            "invalid_api_key",
            "incorrect api key",
        ])
    {
        return Some(AccountProblem::Authentication);
    }
    if status == 403 || has(&["permission_error"]) {
        return Some(AccountProblem::Permission);
    }
    None
}

/// The provider's message in an error body: `error.message` (OpenAI, Anthropic, most
/// compatible servers), else `message`, else the body; shortened to 500 characters, with words
/// shaped like an API key (`sk-…`, `sk_…`) replaced by `sk-…(redacted)`.
pub fn provider_message(body: &str) -> String {
    let v: Option<serde_json::Value> = serde_json::from_str(body).ok();
    let msg = v
        .as_ref()
        .and_then(|v| {
            v.pointer("/error/message")
                .or_else(|| v.get("message"))
                .and_then(|m| m.as_str())
                .map(str::to_string)
        })
        .unwrap_or_else(|| body.trim().to_string());
    let redacted: Vec<String> = msg
        .split(' ')
        .map(|w| {
            if w.starts_with("sk-") || w.starts_with("sk_") {
                "sk-…(redacted)".to_string()
            } else {
                w.to_string()
            }
        })
        .collect();
    crate::util::excerpt(&redacted.join(" "), 500)
}

impl LlmError {
    /// Whether trying again may succeed: connection problems, timeouts, broken or stalled
    /// streams, 408/409/429/5xx, errors reported inside a stream, and empty answers.
    /// 400 (including context length), 401, 403, 404 and 422 are final, and so are account
    /// problems (whatever their status, e.g. a 429 `insufficient_quota`) and runaway replies.
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
            LlmError::MissingKey { .. }
            | LlmError::ContextLength(_)
            | LlmError::Account { .. }
            | LlmError::Runaway { .. } => false,
        }
    }

    /// An error reported inside a stream (`text` is its JSON or message): an account problem
    /// when it says so (e.g. Anthropic's `billing_error` event), else [`LlmError::InStream`].
    pub fn in_stream(text: String, url: &str) -> LlmError {
        // Status 400 stands for "no status": only the wordings can match.
        match account_problem(400, &text) {
            Some(problem) => LlmError::Account {
                problem,
                status: 200,
                url: url.to_string(),
                message: provider_message(&text),
            },
            None => LlmError::InStream(text),
        }
    }

    /// The wait the provider asked for (`Retry-After`), if any.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            LlmError::Http { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// Whether the whole campaign should stop (no other call can succeed either): a missing
    /// key, an account problem (quota, billing, rejected key, permission: [`LlmError::Account`]),
    /// an unknown model/endpoint (404).
    pub fn is_fatal_for_campaign(&self) -> bool {
        match self {
            LlmError::MissingKey { .. } | LlmError::Account { .. } => true,
            LlmError::Http { status, .. } => matches!(status, 401 | 403 | 404),
            _ => false,
        }
    }
}

/// Maps a non-2xx response to an error, recognising context-length errors by the wording
/// OpenAI, DeepSeek, vLLM and llama.cpp use, and account problems (quota, billing, key,
/// permission: [`account_problem`]) whatever their status.
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
    if let Some(problem) = account_problem(status, body) {
        return LlmError::Account {
            problem,
            status,
            url: url.to_string(),
            message: provider_message(body),
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

    #[test]
    fn a_connect_failure_names_its_url() {
        let e = LlmError::Connect {
            url: "http://127.0.0.1:9/v1/chat/completions".into(),
            message: "tcp connect error: Connection refused".into(),
        };
        let recorded = format!("glossary/14929ef10c571754: {e}");
        assert_eq!(
            unreachable_url(&recorded),
            Some("http://127.0.0.1:9/v1/chat/completions")
        );
        assert_eq!(
            unreachable_url("translate/ab/r0: request timed out after 30 s"),
            None
        );
    }

    use super::*;

    fn classify(status: u16, body: &str) -> LlmError {
        classify_status(
            status,
            "https://api.example/v1/chat/completions",
            body,
            None,
        )
    }

    #[test]
    fn insufficient_quota_on_429_is_an_account_problem_not_a_rate_limit() {
        let e = classify(
            429,
            r#"{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","code":"insufficient_quota"}}"#,
        );
        assert!(
            matches!(
                e,
                LlmError::Account {
                    problem: AccountProblem::Quota,
                    status: 429,
                    ..
                }
            ),
            "{e:?}"
        );
        assert!(!e.is_retryable() && e.is_fatal_for_campaign());
        assert!(e.to_string().contains("You exceeded your current quota"));
        // A real rate limit stays a retried 429.
        let e = classify(
            429,
            r#"{"error":{"message":"Rate limit reached for requests","type":"requests","code":"rate_limit_exceeded"}}"#,
        );
        assert!(matches!(e, LlmError::Http { status: 429, .. }));
        assert!(e.is_retryable() && !e.is_fatal_for_campaign());
        // Google words per-minute limits as quota metrics: still a rate limit.
        let e = classify(
            429,
            "Quota exceeded for quota metric 'Generate requests' per minute",
        );
        assert!(e.is_retryable());
    }

    #[test]
    fn billing_and_key_errors_stop_the_campaign() {
        let cases = [
            (402, "Insufficient Balance", AccountProblem::Billing),
            (
                400,
                r#"{"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."}}"#,
                AccountProblem::Billing,
            ),
            (
                400,
                r#"{"error":{"code":"billing_hard_limit_reached","message":"Billing hard limit has been reached"}}"#,
                AccountProblem::Billing,
            ),
            (
                401,
                r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#,
                AccountProblem::Authentication,
            ),
            (
                403,
                r#"{"type":"error","error":{"type":"permission_error","message":"Your API key does not have permission to use the specified resource."}}"#,
                AccountProblem::Permission,
            ),
        ];
        for (status, body, want) in cases {
            match classify(status, body) {
                LlmError::Account { problem, .. } => assert_eq!(problem, want, "{body}"),
                other => panic!("{status} {body}: {other:?}"),
            }
        }
        // Server errors are never account problems, whatever they say.
        assert!(classify(503, "billing service unavailable").is_retryable());
        assert!(classify(404, "no such model").is_fatal_for_campaign());
    }

    #[test]
    fn provider_message_is_extracted_and_keys_are_redacted() {
        let m = provider_message(
            r#"{"error":{"message":"Incorrect API key provided: sk-proj-abc123XYZ. You can find your API key at https://platform.openai.com/account/api-keys."}}"#,
        );
        assert!(m.starts_with("Incorrect API key provided:"), "{m}");
        assert!(!m.contains("abc123XYZ"), "{m}");
        assert_eq!(provider_message("plain text"), "plain text");
    }

    #[test]
    fn a_billing_error_inside_a_stream_is_an_account_problem() {
        let e = LlmError::in_stream(
            r#"{"type":"billing_error","message":"credit balance is too low"}"#.into(),
            "u",
        );
        assert!(e.is_fatal_for_campaign());
        let e = LlmError::in_stream(r#"{"type":"overloaded_error"}"#.into(), "u");
        assert!(matches!(e, LlmError::InStream(_)) && e.is_retryable());
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
