//! The fake server's benchmark features, over real HTTP: the prefix-cache simulation follows
//! OpenAI's rule (≥ 1,024 tokens, steps of 128, longest prefix with an earlier request), the
//! requests-per-minute limit answers 429 with `Retry-After` and `x-ratelimit-*` headers, and
//! answered requests are timed with an in-flight gauge. Everything is off by default.

use crate::support;

use std::time::Duration;

use serde_json::{Value, json};
use support::fake_llm::{FakeServer, cached_prefix};

/// Posts a chat request with these (role, content) messages; returns status, headers and the
/// usage object of the stream (if any).
async fn post(
    base: &str,
    messages: &[(&str, &str)],
) -> (u16, reqwest::header::HeaderMap, Option<Value>) {
    let msgs: Vec<Value> = messages
        .iter()
        .map(|(r, c)| json!({"role": r, "content": c}))
        .collect();
    let resp = crate::support::http_client()
        .post(format!("{base}/chat/completions"))
        .json(&json!({"model": "m", "messages": msgs, "stream": true}))
        .send()
        .await
        .unwrap();
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let text = resp.text().await.unwrap();
    let usage = text
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter_map(|d| serde_json::from_str::<Value>(d).ok())
        .find_map(|v| v.get("usage").cloned());
    (status, headers, usage)
}

fn cached(usage: &Option<Value>) -> u64 {
    usage.as_ref().unwrap()["prompt_tokens_details"]["cached_tokens"]
        .as_u64()
        .unwrap()
}

#[test]
fn cached_prefix_follows_openais_rule() {
    let a: Vec<u32> = (0..3000).collect();
    let mut b = a.clone();
    b[1300] = 999_999;
    assert_eq!(cached_prefix(&b, [&a]), 1280, "1,300 common tokens → 1,280");
    let mut c = a.clone();
    c[1000] = 999_999;
    assert_eq!(cached_prefix(&c, [&a]), 0, "under 1,024 common tokens → 0");
    assert_eq!(
        cached_prefix(&a, [&b, &a]),
        2944,
        "the longest prefix counts"
    );
    assert_eq!(cached_prefix(&a, []), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prefix_cache_reports_cached_tokens_only_when_on() {
    let fake = FakeServer::start();
    let long = "The agent reads its context window and plans the next step. ".repeat(150);
    let system = ("system", "You are a proofreader.");
    let (_, _, u) = post(&fake.base_url, &[system, ("user", &long)]).await;
    assert_eq!(cached(&u), 0, "off by default");

    fake.prefix_cache(true);
    let (_, _, first) = post(&fake.base_url, &[system, ("user", &long)]).await;
    assert_eq!(cached(&first), 0, "nothing cached yet");
    let other = format!("{long}\nA different ending.");
    let (_, _, second) = post(&fake.base_url, &[system, ("user", &other)]).await;
    let prompt = second.as_ref().unwrap()["prompt_tokens"].as_u64().unwrap();
    let c = cached(&second);
    assert!(
        c >= 1024 && c.is_multiple_of(128) && c <= prompt,
        "{c} of {prompt}"
    );
    let (_, _, short) = post(&fake.base_url, &[system, ("user", "Short text.")]).await;
    assert_eq!(cached(&short), 0, "a short prompt is never cached");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_beyond_the_limit_get_429_with_retry_after() {
    let fake = FakeServer::start();
    fake.enforce_rpm(2);
    let m = [("system", "You are a proofreader."), ("user", "Hello.")];
    let (s1, h1, _) = post(&fake.base_url, &m).await;
    assert_eq!(s1, 200);
    assert_eq!(h1["x-ratelimit-limit-requests"], "2");
    assert_eq!(h1["x-ratelimit-remaining-requests"], "1");
    let (s2, h2, _) = post(&fake.base_url, &m).await;
    assert_eq!(s2, 200);
    assert_eq!(h2["x-ratelimit-remaining-requests"], "0");
    let reset = h2["x-ratelimit-reset-requests"].to_str().unwrap();
    let reset = booktr::llm::limits::parse_reset(reset).unwrap();
    assert!(reset > Duration::from_secs(55) && reset <= Duration::from_secs(60));
    let (s3, h3, _) = post(&fake.base_url, &m).await;
    assert_eq!(s3, 429);
    let ra: u64 = h3["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((55..=60).contains(&ra), "{ra}");
    assert_eq!(fake.rejected_429(), 1);
    assert_eq!(
        fake.requests().len(),
        2,
        "a refused request is not recorded"
    );

    fake.rate_limit_headers(false);
    let (s4, h4, _) = post(&fake.base_url, &m).await;
    assert_eq!(s4, 429);
    assert!(h4.get("x-ratelimit-remaining-requests").is_none());
    assert_eq!(fake.rejected_429(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answered_requests_are_timed_and_the_in_flight_gauge_peaks() {
    let fake = FakeServer::start();
    fake.latency(Duration::from_millis(150), Duration::ZERO);
    let m = [("system", "You are a proofreader."), ("user", "Hello.")];
    let url = fake.base_url.clone();
    // Spawned all at once (collected), then awaited.
    let calls: Vec<_> = (0..3)
        .map(|_| {
            let url = url.clone();
            tokio::spawn(async move { post(&url, &m).await })
        })
        .collect();
    for c in calls {
        assert_eq!(c.await.unwrap().0, 200);
    }
    assert_eq!(fake.max_in_flight(), 3);
    assert_eq!(fake.in_flight(), 0);
    let t = fake.timings();
    assert_eq!(t.len(), 3);
    for x in &t {
        assert_eq!(x.status, 200);
        assert!(x.duration() >= Duration::from_millis(150), "{x:?}");
        assert!(x.prompt_tokens > 0 && x.completion_tokens > 0);
    }
}
