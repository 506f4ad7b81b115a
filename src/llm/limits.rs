//! Client-side rate limits and congestion signals, shared by every request of a provider.
//!
//! - `max_requests_per_minute` and `max_tokens_per_minute` (from the campaign file) are enforced
//!   with `governor` (GCRA), before each HTTP request. Token bursts are limited to a sixth of a
//!   minute's allowance, so requests spread over the minute instead of arriving at once.
//!   Requests are paced so that no sliding 60-second window holds more than the limit (see
//!   [`requests_quota`]).
//! - `x-ratelimit-remaining-requests` / `-tokens` and `x-ratelimit-reset-requests` / `-tokens`
//!   response headers (OpenAI, Groq, DeepSeek and others send them) pause new requests until the
//!   reset when the provider says its allowance is used up.
//! - Every 429 and every timeout is counted ([`Limits::congestion_events`]); the campaign runner
//!   reads the count to adapt its concurrency (multiplicative decrease).

use std::num::NonZeroU32;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};

/// Shared limits of one provider.
#[derive(Debug, Default)]
pub struct Limits {
    requests: Option<DefaultDirectRateLimiter>,
    tokens: Option<(DefaultDirectRateLimiter, NonZeroU32)>,
    /// No request before this instant (from `x-ratelimit-*` headers).
    pause_until: Mutex<Option<Instant>>,
    congestion: AtomicU64,
}

fn burst(per_minute: NonZeroU32) -> NonZeroU32 {
    NonZeroU32::new((per_minute.get() / 6).max(1)).expect("at least 1")
}

/// The GCRA quota for `per_minute` requests: a burst of `B = max(1, per_minute / 20)` and one
/// more request every `60 s / (per_minute − B)`.
///
/// Providers count requests per minute over a sliding window (the in-repo fake does so too).
/// A GCRA quota of `n` per minute with burst `B` lets `B + n` requests into some 60-second
/// windows (the burst, then `n` replenished cells), so `Quota::per_minute(n).allow_burst(n / 6)`
/// exceeded the provider's limit by a sixth in the first minute and caused 429s
/// (`validation/bench/rate_limited.json` measured 15 on the whole book at 600 per minute). With
/// `B + 60 s / period = per_minute`, no window holds more than the limit, and the steady rate
/// is `per_minute − B`, 95 % of the limit.
pub fn requests_quota(per_minute: NonZeroU32) -> Quota {
    let n = per_minute.get();
    let b = (n / 20).max(1);
    let period = Duration::from_secs(60) / (n - b).max(1);
    Quota::with_period(period)
        .expect("a positive period")
        .allow_burst(NonZeroU32::new(b).expect("at least 1"))
}

impl Limits {
    /// Limits for the given allowances (`None`: not limited on that axis).
    pub fn new(requests_per_minute: Option<u32>, tokens_per_minute: Option<u32>) -> Limits {
        let requests = requests_per_minute
            .and_then(NonZeroU32::new)
            .map(|n| RateLimiter::direct(requests_quota(n)));
        let tokens = tokens_per_minute.and_then(NonZeroU32::new).map(|n| {
            let b = burst(n);
            (RateLimiter::direct(Quota::per_minute(n).allow_burst(b)), b)
        });
        Limits {
            requests,
            tokens,
            ..Default::default()
        }
    }

    /// Waits until a request of about `tokens` tokens (prompt plus expected completion) may be
    /// sent. A request larger than one burst waits for a whole burst.
    pub async fn acquire(&self, tokens: u32) {
        // A lock poisoned by a panic elsewhere is taken over: every entry is written in one
        // assignment, so what the lock holds is whole.
        let pause = *self
            .pause_until
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(until) = pause {
            let now = Instant::now();
            if until > now {
                tokio::time::sleep(until - now).await;
            }
        }
        if let Some(r) = &self.requests {
            r.until_ready().await;
        }
        if let Some((t, cap)) = &self.tokens {
            let n = NonZeroU32::new(tokens.clamp(1, cap.get())).expect("at least 1");
            // `n` never exceeds the burst, so this cannot fail.
            let _ = t.until_n_ready(n).await;
        }
    }

    /// Reads `x-ratelimit-*` headers: when the provider reports no request or token left, new
    /// requests wait for the matching reset.
    pub fn observe(&self, headers: &reqwest::header::HeaderMap) {
        let get = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
        let mut wait = Duration::ZERO;
        for (remaining, reset) in [
            (
                "x-ratelimit-remaining-requests",
                "x-ratelimit-reset-requests",
            ),
            ("x-ratelimit-remaining-tokens", "x-ratelimit-reset-tokens"),
        ] {
            if get(remaining).and_then(|v| v.trim().parse::<f64>().ok()) == Some(0.0)
                && let Some(d) = get(reset).and_then(parse_reset)
            {
                wait = wait.max(d);
            }
        }
        if !wait.is_zero() {
            let until = Instant::now() + wait.min(super::retry::MAX_RETRY_AFTER);
            let mut p = self
                .pause_until
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            *p = Some(p.map_or(until, |old| old.max(until)));
        }
    }

    /// Counts a congestion signal (a 429 or a timeout).
    pub fn congested(&self) {
        self.congestion.fetch_add(1, Ordering::Relaxed);
    }

    /// Congestion signals so far.
    pub fn congestion_events(&self) -> u64 {
        self.congestion.load(Ordering::Relaxed)
    }
}

/// Parses an `x-ratelimit-reset-*` value: OpenAI's durations (`1s`, `6m0s`, `120ms`, `1h2m3.5s`)
/// or plain seconds (`12`, `0.5`). Hand-rolled: the format is Go's duration syntax, which no
/// well-kept Rust crate parses exactly, and it is a dozen lines.
pub fn parse_reset(v: &str) -> Option<Duration> {
    let v = v.trim();
    if let Ok(secs) = v.parse::<f64>() {
        return (secs >= 0.0 && secs.is_finite()).then(|| Duration::from_secs_f64(secs));
    }
    let mut total = 0.0f64;
    let mut num = String::new();
    let mut chars = v.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() || c == '.' {
            num.push(c);
            continue;
        }
        let value: f64 = num.parse().ok()?;
        num.clear();
        let unit = match (c, chars.peek()) {
            ('m', Some('s')) => {
                chars.next();
                0.001
            }
            ('h', _) => 3600.0,
            ('m', _) => 60.0,
            ('s', _) => 1.0,
            _ => return None,
        };
        total += value * unit;
    }
    (num.is_empty() && total.is_finite()).then(|| Duration::from_secs_f64(total))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reset_durations() {
        assert_eq!(parse_reset("1s"), Some(Duration::from_secs(1)));
        assert_eq!(parse_reset("6m0s"), Some(Duration::from_secs(360)));
        assert_eq!(parse_reset("120ms"), Some(Duration::from_millis(120)));
        assert_eq!(
            parse_reset("1h2m3.5s"),
            Some(Duration::from_secs_f64(3723.5))
        );
        assert_eq!(parse_reset("0.5"), Some(Duration::from_millis(500)));
        assert_eq!(parse_reset("soon"), None);
    }

    #[tokio::test]
    async fn requests_per_minute_are_spread() {
        // 600 per minute: bursts of 30, then one every 60 s / 570 ≈ 105 ms: the first 30 pass
        // at once, the next waits about 0.1 s.
        let l = Limits::new(Some(600), None);
        let start = Instant::now();
        for _ in 0..30 {
            l.acquire(1).await;
        }
        assert!(start.elapsed() < Duration::from_millis(50));
        l.acquire(1).await;
        let waited = start.elapsed();
        assert!(waited >= Duration::from_millis(80), "{waited:?}");
    }

    #[test]
    fn no_sliding_minute_holds_more_than_the_limit() {
        // Burst plus the cells replenished in 60 s equals the limit, for small and large ones.
        for n in [1u32, 7, 20, 60, 600, 10_000] {
            let q = requests_quota(NonZeroU32::new(n).unwrap());
            let burst = q.burst_size().get();
            let per_window = Duration::from_secs(60).as_nanos() / q.replenish_interval().as_nanos();
            assert!(
                u128::from(burst) + per_window <= u128::from(n).max(2),
                "{n}: burst {burst} + {per_window}"
            );
            assert!(
                u128::from(burst) + per_window >= u128::from(n) * 9 / 10,
                "{n}: at least 90 % of the limit"
            );
        }
    }

    #[tokio::test]
    async fn exhausted_headers_pause_requests() {
        let l = Limits::default();
        let mut h = reqwest::header::HeaderMap::new();
        h.insert("x-ratelimit-remaining-requests", "0".parse().unwrap());
        h.insert("x-ratelimit-reset-requests", "200ms".parse().unwrap());
        l.observe(&h);
        let start = Instant::now();
        l.acquire(1).await;
        assert!(start.elapsed() >= Duration::from_millis(150));
    }
}
