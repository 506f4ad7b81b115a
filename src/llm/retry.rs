//! The retry policy for provider calls, built on `backon` (exponential backoff with jitter).
//!
//! Only errors that [`LlmError::is_retryable`] classifies as transient are retried; a server's
//! `Retry-After` replaces the computed delay (capped at [`MAX_RETRY_AFTER`]). Streams are never
//! reconnected mid-way: a broken stream fails the attempt and the whole request is retried
//! deliberately, which is the only safe way not to splice two different generations.

use std::time::Duration;

use backon::ExponentialBuilder;

use super::LlmError;

/// 429 answers in a row waited out before they start to count against `max_attempts`.
pub const MAX_RATE_LIMIT_WAITS: u32 = 8;

/// Longest wait honoured from a `Retry-After` header.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(300);

/// Backoff for `max_attempts` attempts in total: first retry after about 1 s, doubling, at most
/// 60 s between attempts, with full jitter.
pub fn backoff(max_attempts: u32) -> ExponentialBuilder {
    ExponentialBuilder::default()
        .with_min_delay(Duration::from_millis(
            std::env::var("BOOKTR_RETRY_BASE_MS")
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(1000),
        ))
        .with_max_delay(Duration::from_secs(60))
        .with_factor(2.0)
        .with_max_times(max_attempts.saturating_sub(1) as usize)
        .with_jitter()
}

/// The delay before the next attempt: the server's `Retry-After` when it sent one (capped),
/// else backon's computed delay.
pub fn adjust(err: &LlmError, computed: Option<Duration>) -> Option<Duration> {
    match (err.retry_after(), computed) {
        // `None` from backon means the budget is spent: keep it spent.
        (_, None) => None,
        (Some(ra), Some(_)) => Some(ra.min(MAX_RETRY_AFTER)),
        (None, d) => d,
    }
}

/// Parses a `Retry-After` value: delta-seconds, or an HTTP date (RFC 9110 §10.2.3).
pub fn parse_retry_after(value: &str) -> Option<Duration> {
    let v = value.trim();
    if let Ok(secs) = v.parse::<f64>() {
        return (secs >= 0.0 && secs.is_finite()).then(|| Duration::from_secs_f64(secs));
    }
    let when = httpdate::parse_http_date(v).ok()?;
    Some(
        when.duration_since(std::time::SystemTime::now())
            .unwrap_or(Duration::ZERO),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_forms() {
        assert_eq!(parse_retry_after("7"), Some(Duration::from_secs(7)));
        assert_eq!(parse_retry_after("0.5"), Some(Duration::from_millis(500)));
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT"),
            Some(Duration::ZERO)
        );
        assert!(parse_retry_after("soon").is_none());
    }

    #[test]
    fn server_wait_wins_but_budget_stays_spent() {
        let e = LlmError::Http {
            status: 429,
            url: "u".into(),
            body: String::new(),
            retry_after: Some(Duration::from_secs(3)),
        };
        assert_eq!(
            adjust(&e, Some(Duration::from_secs(1))),
            Some(Duration::from_secs(3))
        );
        assert_eq!(adjust(&e, None), None);
        let e = LlmError::Http {
            status: 429,
            url: "u".into(),
            body: String::new(),
            retry_after: Some(Duration::from_secs(9999)),
        };
        assert_eq!(adjust(&e, Some(Duration::ZERO)), Some(MAX_RETRY_AFTER));
    }
}
