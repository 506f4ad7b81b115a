//! A fake OpenAI-compatible `/v1/chat/completions` server over real HTTP and SSE (axum), for
//! tests and benchmarks. No test calls a real model.
//!
//! By default it answers like the pseudo provider would (it runs `booktr`'s own pseudo
//! provider on the request it receives) and reports usage computed with `o200k_base`, streamed
//! in small chunks with a final usage chunk and `[DONE]`. A script can override any answer:
//! content, JSON, HTTP errors with or without `Retry-After`, a connection reset mid-stream, a
//! stalled stream, reasoning-only answers, `finish_reason: length`, and per-request latency.
//! Every request is recorded (agent, messages, headers) for assertions.
//!
//! For benchmarks it can also (all off by default, so tests see the plain server):
//!
//! - simulate a provider prefix cache ([`FakeServer::prefix_cache`]): usage reports
//!   `prompt_tokens_details.cached_tokens` by OpenAI's prompt-caching rule;
//! - enforce a requests-per-minute limit over a sliding 60-second window
//!   ([`FakeServer::enforce_rpm`]), answering HTTP 429 with `Retry-After` beyond it and sending
//!   `x-ratelimit-*` headers;
//! - time every answered request ([`FakeServer::timings`]: arrival and last SSE byte) and gauge
//!   how many are in flight at once ([`FakeServer::max_in_flight`]), for wall-time analysis.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};

use booktr::agents::Agent;
use booktr::commands::rehearsal::Rehearsal;
use booktr::lang::Lang;
use booktr::llm::{Message, Request};

use super::recorded::{Exchange, Fixtures, preview, request_key, sse_payloads};

/// One request as received.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// 0-based arrival order.
    pub n: usize,
    pub agent: Agent,
    /// The messages, without a final assistant message (see `prefill`).
    pub messages: Vec<Message>,
    /// A final assistant message: the start of a reply to continue (a continuation request).
    pub prefill: Option<String>,
    pub body: Value,
    pub authorization: Option<String>,
    pub at: Instant,
}

impl Recorded {
    /// Messages the example exchange takes after the system message of a Translation request
    /// (2, or 0 without it: see `booktr::agents::translation::example_pair`).
    fn example_len(&self) -> usize {
        booktr::agents::translation::example_len_of(&self.messages)
    }

    /// Index of a Translation request's glossary message (after the example exchange).
    pub fn glossary_index(&self) -> usize {
        1 + self.example_len()
    }

    /// The glossary message of a Translation request (glossary entries, context, synopsis).
    pub fn glossary_text(&self) -> &str {
        self.messages
            .get(self.glossary_index())
            .map_or("", |m| m.content.as_str())
    }

    /// The previous translation a revision request shows the model.
    pub fn previous_translation(&self) -> Option<&str> {
        self.messages
            .get(3 + self.example_len())
            .map(|m| m.content.as_str())
    }

    /// The unit text of a Translation request (its third message after the example).
    pub fn unit_text(&self) -> Option<&str> {
        (self.agent == Agent::Translation)
            .then(|| {
                self.messages
                    .get(2 + self.example_len())
                    .map(|m| m.content.as_str())
            })
            .flatten()
    }

    pub fn all_text(&self) -> String {
        self.messages
            .iter()
            .map(|m| m.content.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    }

    pub fn is_revision(&self) -> bool {
        self.agent == Agent::Translation && self.messages.len() > 3 + self.example_len()
    }

    /// Whether this is a turn of the single-agent conversation (`run --mode single-agent`).
    pub fn is_single_agent(&self) -> bool {
        self.messages
            .first()
            .is_some_and(|m| m.content.contains(booktr::experiment::single_agent::MARKER))
    }

    /// Whether this is the judge's schema-repair request.
    pub fn is_judge_repair(&self) -> bool {
        self.agent == Agent::Judge
            && self
                .messages
                .first()
                .is_some_and(|m| m.content.contains(booktr::experiment::judge::REPAIR_MARKER))
    }
}

/// A judge answer that is malformed the way models get it wrong: the default (valid) verdict
/// for `messages` with one score written as text (`"4/5"`), an extra key and prose around the
/// JSON. Strict validation rejects it; the schema repair can fix it without judging again.
pub fn malformed_judge_answer(target: &Lang, messages: &[Message]) -> String {
    let good = default_content(target, Agent::Judge, messages);
    let mut v: Value = serde_json::from_str(&good).expect("the default verdict is JSON");
    let score = v["x"]["fluency"]["score"].as_u64().unwrap_or(3);
    v["x"]["fluency"]["score"] = json!(format!("{score}/5"));
    v["confidence"] = json!("high");
    format!("Here is my judgment:\n{v}\nI hope this helps.")
}

/// What to answer.
#[derive(Debug, Clone)]
pub enum Reply {
    /// The default (pseudo) answer.
    Default,
    /// Stream this content.
    Content(String),
    /// Stream this content with reasoning first and a finish reason.
    Full {
        reasoning: String,
        content: String,
        finish: String,
    },
    /// An HTTP error.
    Status {
        code: u16,
        body: String,
        retry_after: Option<String>,
    },
    /// Send some content, then reset the connection.
    ResetMidStream { partial: String },
    /// Send some content, then stall forever.
    Stall { partial: String },
    /// Stream `parts` as content chunks, one per chunk with `delay` before each, then
    /// `finish_reason: length`, usage and `[DONE]`, ignoring the request's `max_tokens` (a
    /// runaway the provider would end only at its own limit). Chunks handed to the connection
    /// are counted in [`FakeServer::streamed_chunks`]; a client that drops the stream stops
    /// the count.
    Stream { parts: Vec<String>, delay: Duration },
}

/// How the fake's model counts its tokens and honours `max_tokens` (see
/// [`FakeServer::model_tokens`]).
#[derive(Debug, Clone, Copy)]
pub struct ModelTokens {
    /// The model's tokens per `o200k_base` token of the text it writes (1.0: the same
    /// tokenizer; 3.0: a Llama-family tokenizer on Chinese).
    pub per_o200k: f64,
    /// Whether a final assistant message is continued (llama.cpp, Anthropic) or ignored, the
    /// reply starting over (OpenAI).
    pub continues: bool,
}

impl ModelTokens {
    /// The model's tokens for `text`: `ceil(o200k_base tokens × per_o200k)`.
    pub fn count(&self, text: &str) -> u64 {
        (booktr::tokens::count(text) as f64 * self.per_o200k).ceil() as u64
    }

    /// The longest prefix of `text` (on a char boundary) of at most `max` model tokens (a
    /// binary search over char counts; BPE counts of prefixes are monotone enough for a fake).
    pub fn cut<'a>(&self, text: &'a str, max: u64) -> &'a str {
        if self.count(text) <= max {
            return text;
        }
        let mut ends: Vec<usize> = text.char_indices().map(|(i, _)| i).skip(1).collect();
        ends.push(text.len());
        let end = |n: usize| if n == 0 { 0 } else { ends[n - 1] };
        let (mut lo, mut hi) = (0usize, ends.len());
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            if self.count(&text[..end(mid)]) <= max {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        &text[..end(lo)]
    }
}

/// The timing of one answered request (see [`FakeServer::timings`]).
#[derive(Debug, Clone)]
pub struct Timing {
    /// The request's arrival number ([`Recorded::n`]).
    pub n: usize,
    pub agent: Agent,
    /// HTTP status answered (200 for a streamed answer).
    pub status: u16,
    /// When the request arrived (the handler started).
    pub start: Instant,
    /// When the last byte of the answer was handed to the connection (the end of the SSE
    /// stream; for an error status, when the response was returned).
    pub end: Instant,
    /// Usage reported in the final chunk (zero for an error status).
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub cached_tokens: u64,
}

impl Timing {
    pub fn duration(&self) -> Duration {
        self.end - self.start
    }
}

type Script = dyn Fn(&Recorded) -> Reply + Send + Sync;

/// Requests beyond this many earlier ones are forgotten by the prefix cache simulation.
pub const PREFIX_CACHE_REQUESTS: usize = 256;
/// OpenAI's prompt caching: prompts shorter than this get no cache hit ...
pub const PREFIX_CACHE_MIN_TOKENS: usize = 1024;
/// ... and hits are counted in increments of this many tokens.
pub const PREFIX_CACHE_INCREMENT: usize = 128;

/// The sliding-window requests-per-minute limit of [`FakeServer::enforce_rpm`].
struct RpmLimit {
    limit: usize,
    /// Send `x-ratelimit-*` headers on every response.
    headers: bool,
    /// Arrival instants of the accepted requests of the last 60 seconds, oldest first.
    window: VecDeque<Instant>,
}

const RPM_WINDOW: Duration = Duration::from_secs(60);

struct Shared {
    requests: Mutex<Vec<Recorded>>,
    script: Mutex<Arc<Script>>,
    /// Fixed delay before answering, plus per-completion-token delay.
    latency: Mutex<(Duration, Duration)>,
    completed: AtomicUsize,
    target: Lang,
    prefix_cache: AtomicBool,
    /// Token sequences of the last [`PREFIX_CACHE_REQUESTS`] requests, oldest first.
    cache: Mutex<VecDeque<Vec<u32>>>,
    rpm: Mutex<Option<RpmLimit>>,
    rejected_429: AtomicUsize,
    timings: Mutex<Vec<Timing>>,
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
    /// Content chunks of [`Reply::Stream`] answers handed to connections.
    streamed: Arc<AtomicUsize>,
    /// The model's tokenizer (see [`FakeServer::model_tokens`]).
    model_tokens: Mutex<Option<ModelTokens>>,
    /// Replay of recorded answers, or proxying to a real server (see [`FakeServer::replay`]).
    recording: Mutex<Option<Recording>>,
    /// Answers recorded in proxy mode, in the order they finished.
    exchanges: Mutex<Vec<Exchange>>,
    /// Replay misses: one line per request without a recorded answer.
    misses: Mutex<Vec<String>>,
}

/// How a server in record/replay mode answers (see [`FakeServer::replay`] and
/// [`FakeServer::proxy`]); the script is not consulted then.
#[derive(Clone)]
enum Recording {
    Replay(Arc<Fixtures>),
    Proxy {
        upstream: String,
        /// Answers reused for requests they hold (see [`FakeServer::proxy_reusing`]).
        reuse: Option<Arc<Fixtures>>,
    },
}

/// A running fake server. Dropping it stops it.
pub struct FakeServer {
    pub base_url: String,
    shared: Arc<Shared>,
    _shutdown: tokio::sync::oneshot::Sender<()>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        // The oneshot sender drops with self; the server thread then ends.
        let _ = self.thread.take();
    }
}

/// Which agent a request comes from, judged by its system prompt as a real server could not,
/// but as a test needs to.
pub fn agent_of(messages: &[Message]) -> Agent {
    let sys = messages.first().map(|m| m.content.as_str()).unwrap_or("");
    if sys.contains(booktr::experiment::judge::JUDGE_MARKER) {
        Agent::Judge
    } else if sys.contains("terminologist") || sys.contains("preparing the translation brief") {
        Agent::Glossary
    } else if sys.contains("proofreader") {
        Agent::Proofreading
    } else if sys.contains("managing editor") {
        Agent::Manager
    } else {
        Agent::Translation
    }
}

impl FakeServer {
    /// Starts a server on 127.0.0.1 (random port) on its own thread; target language `zh`.
    pub fn start() -> FakeServer {
        Self::start_for("zh")
    }

    pub fn start_for(target: &str) -> FakeServer {
        Self::start_with(target, Router::new())
    }

    /// Starts a server with `extra` routes merged in (the Anthropic and batch fakes).
    pub fn start_with(target: &str, extra: Router) -> FakeServer {
        let shared = Arc::new(Shared {
            requests: Mutex::new(Vec::new()),
            script: Mutex::new(Arc::new(|_: &Recorded| Reply::Default)),
            latency: Mutex::new((Duration::ZERO, Duration::ZERO)),
            completed: AtomicUsize::new(0),
            target: Lang::parse(target),
            prefix_cache: AtomicBool::new(false),
            cache: Mutex::new(VecDeque::new()),
            rpm: Mutex::new(None),
            rejected_429: AtomicUsize::new(0),
            timings: Mutex::new(Vec::new()),
            in_flight: AtomicUsize::new(0),
            max_in_flight: AtomicUsize::new(0),
            streamed: Arc::new(AtomicUsize::new(0)),
            model_tokens: Mutex::new(None),
            recording: Mutex::new(None),
            exchanges: Mutex::new(Vec::new()),
            misses: Mutex::new(Vec::new()),
        });
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let s2 = shared.clone();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let app = Router::new()
                    .route("/v1/chat/completions", post(handle))
                    .with_state(s2)
                    .merge(extra);
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                addr_tx.send(listener.local_addr().unwrap()).unwrap();
                axum::serve(listener, app)
                    .with_graceful_shutdown(async {
                        let _ = rx.await;
                    })
                    .await
                    .unwrap();
            });
        });
        let addr = addr_rx.recv().unwrap();
        FakeServer {
            base_url: format!("http://{addr}/v1"),
            shared,
            _shutdown: tx,
            thread: Some(thread),
        }
    }

    /// Replaces the script.
    pub fn script(&self, f: impl Fn(&Recorded) -> Reply + Send + Sync + 'static) {
        *self.shared.script.lock().unwrap() = Arc::new(f);
    }

    /// Makes the fake's model count its completion tokens as `per_o200k` times `o200k_base`'s
    /// and honour `max_tokens` as a real server does: a reply longer than that is cut there and
    /// ends with `finish_reason: length`. With `continues`, a final assistant message is
    /// continued (the reply goes on from it: llama.cpp, Anthropic); without, it is ignored and
    /// the reply starts over (OpenAI). Off by default: replies are never cut.
    pub fn model_tokens(&self, per_o200k: f64, continues: bool) {
        *self.shared.model_tokens.lock().unwrap() = Some(ModelTokens {
            per_o200k,
            continues,
        });
    }

    /// Sets latency: `base` before the first byte, plus `per_token` per completion token.
    pub fn latency(&self, base: Duration, per_token: Duration) {
        *self.shared.latency.lock().unwrap() = (base, per_token);
    }

    /// All requests received so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.shared.requests.lock().unwrap().clone()
    }

    pub fn count(&self, agent: Agent) -> usize {
        self.shared
            .requests
            .lock()
            .unwrap()
            .iter()
            .filter(|r| r.agent == agent)
            .count()
    }

    /// Responses fully sent.
    pub fn completed(&self) -> usize {
        self.shared.completed.load(Ordering::SeqCst)
    }

    pub fn clear(&self) {
        self.shared.requests.lock().unwrap().clear();
    }

    /// Turns the prefix-cache simulation on or off (off by default: `cached_tokens` is 0).
    ///
    /// Each request's messages are tokenized with `o200k_base` in a fixed chat layout (per
    /// message `<|im_start|>{role}\n`, the content, `<|im_end|>\n`, the markers encoded as
    /// plain text), and compared with the token sequences of the last
    /// [`PREFIX_CACHE_REQUESTS`] requests. The longest common prefix counts as cached when it is
    /// at least [`PREFIX_CACHE_MIN_TOKENS`] long, rounded down to a multiple of
    /// [`PREFIX_CACHE_INCREMENT`], and never more than the reported prompt tokens. This is
    /// OpenAI's documented rule: "Caching is enabled automatically for prompts that are 1024
    /// tokens or longer", with "cache hits occurring in increments of 128 tokens" and
    /// "`cached_tokens`" reported under `usage.prompt_tokens_details` (OpenAI API docs, Prompt
    /// caching, <https://platform.openai.com/docs/guides/prompt-caching>; OpenAI Cookbook,
    /// "Prompt Caching 201"). A request's prefix is cached as soon as it arrives (no write
    /// delay), and entries leave only by count, standing in for OpenAI's 5–10 minute idle
    /// eviction.
    pub fn prefix_cache(&self, on: bool) {
        self.shared.prefix_cache.store(on, Ordering::SeqCst);
        if !on {
            self.shared.cache.lock().unwrap().clear();
        }
    }

    /// Enforces at most `n` requests per sliding 60-second window (counted at arrival, accepted
    /// requests only). A request beyond it is answered HTTP 429 with `Retry-After` (whole
    /// seconds until the oldest request in the window leaves it, at least 1), is not recorded
    /// in [`FakeServer::requests`] and is counted in [`FakeServer::rejected_429`]. Every
    /// response then carries `x-ratelimit-limit-requests`, `x-ratelimit-remaining-requests` and
    /// `x-ratelimit-reset-requests` (time until a slot frees, e.g. `1.250s`), unless turned off
    /// with [`FakeServer::rate_limit_headers`]. `n = 0` turns enforcement off.
    pub fn enforce_rpm(&self, n: usize) {
        let mut rpm = self.shared.rpm.lock().unwrap();
        let headers = rpm.as_ref().is_none_or(|r| r.headers);
        *rpm = (n > 0).then(|| RpmLimit {
            limit: n,
            headers,
            window: VecDeque::new(),
        });
    }

    /// Whether an enforced limit also sends `x-ratelimit-*` headers (default: yes). Call after
    /// [`FakeServer::enforce_rpm`].
    pub fn rate_limit_headers(&self, on: bool) {
        if let Some(r) = self.shared.rpm.lock().unwrap().as_mut() {
            r.headers = on;
        }
    }

    /// Requests refused with HTTP 429 by [`FakeServer::enforce_rpm`].
    pub fn rejected_429(&self) -> usize {
        self.shared.rejected_429.load(Ordering::SeqCst)
    }

    /// Timings of the answered requests, in the order their answers finished. A stream reset
    /// or stalled on purpose, or dropped by the client, is not an answer and has no timing.
    pub fn timings(&self) -> Vec<Timing> {
        self.shared.timings.lock().unwrap().clone()
    }

    /// Requests being handled right now (arrived, answer not finished).
    pub fn in_flight(&self) -> usize {
        self.shared.in_flight.load(Ordering::SeqCst)
    }

    /// Content chunks of [`Reply::Stream`] answers sent so far (all requests).
    pub fn streamed_chunks(&self) -> usize {
        self.shared.streamed.load(Ordering::SeqCst)
    }

    /// The most requests in flight at once so far (refused 429s included).
    pub fn max_in_flight(&self) -> usize {
        self.shared.max_in_flight.load(Ordering::SeqCst)
    }

    /// Replay mode: every request is answered from `fixtures` by its
    /// [`super::recorded::request_key`] (the SSE chunks as recorded, usage chunk included, or
    /// the recorded HTTP error). A request without a recorded answer gets HTTP 500 with a body
    /// naming its key, and is listed in [`FakeServer::misses`]. The script is not used.
    pub fn replay(&self, fixtures: Fixtures) {
        *self.shared.recording.lock().unwrap() = Some(Recording::Replay(Arc::new(fixtures)));
    }

    /// Proxy (record) mode: every request body is forwarded unchanged, with its
    /// `Authorization` header, to `upstream` (a base URL ending in `/v1`; `/chat/completions`
    /// is appended), and the answer is streamed back to the client as it arrives. Each finished
    /// answer (a whole stream, or an HTTP error) is kept as an [`Exchange`]
    /// ([`FakeServer::exchanges`]); a stream cut short is not kept. The script is not used.
    pub fn proxy(&self, upstream: &str) {
        *self.shared.recording.lock().unwrap() = Some(Recording::Proxy {
            upstream: upstream.trim_end_matches('/').to_string(),
            reuse: None,
        });
    }

    /// Proxy mode that answers a request `known` holds (same messages, by
    /// [`super::recorded::request_key`]), or one this run already sent upstream, from that
    /// answer instead of the upstream, keeping it as
    /// an [`Exchange`] all the same: re-recording after a change that alters only some
    /// requests asks the real model only those (the recorded answers came from the same
    /// model at temperature 0).
    pub fn proxy_reusing(&self, upstream: &str, known: Fixtures) {
        *self.shared.recording.lock().unwrap() = Some(Recording::Proxy {
            upstream: upstream.trim_end_matches('/').to_string(),
            reuse: Some(Arc::new(known)),
        });
    }

    /// The answers recorded in proxy mode so far, in the order they finished.
    pub fn exchanges(&self) -> Vec<Exchange> {
        self.shared.exchanges.lock().unwrap().clone()
    }

    /// Requests replay mode had no recorded answer for: `key (agent: start of the last
    /// message)`, one per request, in arrival order.
    pub fn misses(&self) -> Vec<String> {
        self.shared.misses.lock().unwrap().clone()
    }
}

/// The token sequence the prefix-cache simulation compares (see [`FakeServer::prefix_cache`]).
pub fn prompt_token_sequence(messages: &[Message]) -> Vec<u32> {
    let bpe = tiktoken_rs::o200k_base_singleton();
    let mut seq = Vec::new();
    for m in messages {
        let role = serde_json::to_value(m.role).unwrap_or(Value::Null);
        seq.extend(bpe.encode_ordinary(&format!(
            "<|im_start|>{}\n",
            role.as_str().unwrap_or("user")
        )));
        seq.extend(bpe.encode_ordinary(&m.content));
        seq.extend(bpe.encode_ordinary("<|im_end|>\n"));
    }
    seq
}

/// Cached tokens for `seq` given the earlier sequences, by OpenAI's rule (at least
/// [`PREFIX_CACHE_MIN_TOKENS`], in steps of [`PREFIX_CACHE_INCREMENT`]).
pub fn cached_prefix<'a>(seq: &[u32], earlier: impl IntoIterator<Item = &'a Vec<u32>>) -> usize {
    let lcp = earlier
        .into_iter()
        .map(|e| e.iter().zip(seq).take_while(|(a, b)| a == b).count())
        .max()
        .unwrap_or(0);
    if lcp >= PREFIX_CACHE_MIN_TOKENS {
        lcp / PREFIX_CACHE_INCREMENT * PREFIX_CACHE_INCREMENT
    } else {
        0
    }
}

/// A request being handled: counts in the in-flight gauge until dropped, and records its
/// timing when [`Flight::answered`] is called.
struct Flight {
    shared: Arc<Shared>,
    n: usize,
    agent: Agent,
    start: Instant,
    usage: (u64, u64, u64),
}

impl Flight {
    fn enter(shared: &Arc<Shared>, start: Instant) -> Flight {
        let now = shared.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        shared.max_in_flight.fetch_max(now, Ordering::SeqCst);
        Flight {
            shared: shared.clone(),
            n: usize::MAX,
            agent: Agent::Translation,
            start,
            usage: (0, 0, 0),
        }
    }

    /// The answer is complete: record its timing and count it.
    fn answered(&self, status: u16) {
        let (prompt_tokens, completion_tokens, cached_tokens) = self.usage;
        self.shared.timings.lock().unwrap().push(Timing {
            n: self.n,
            agent: self.agent,
            status,
            start: self.start,
            end: Instant::now(),
            prompt_tokens,
            completion_tokens,
            cached_tokens,
        });
        self.shared.completed.fetch_add(1, Ordering::SeqCst);
    }
}

impl Drop for Flight {
    fn drop(&mut self) {
        self.shared.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Headers of the sliding-window limit, for a response at `now`.
fn rate_limit_headers(r: &RpmLimit, now: Instant) -> Vec<(&'static str, String)> {
    let reset = r.window.front().map_or(Duration::ZERO, |&t| {
        (t + RPM_WINDOW).saturating_duration_since(now)
    });
    vec![
        ("x-ratelimit-limit-requests", r.limit.to_string()),
        (
            "x-ratelimit-remaining-requests",
            r.limit.saturating_sub(r.window.len()).to_string(),
        ),
        (
            "x-ratelimit-reset-requests",
            format!("{:.3}s", reset.as_secs_f64()),
        ),
    ]
}

/// Applies the sliding-window limit to a request arriving at `now`: `Ok(headers)` when it is
/// accepted (and counted), `Err(response)` (a 429) when it is over the limit.
fn admit(shared: &Shared, now: Instant) -> Result<Vec<(&'static str, String)>, Box<Response>> {
    let mut guard = shared.rpm.lock().unwrap();
    let Some(r) = guard.as_mut() else {
        return Ok(Vec::new());
    };
    while r
        .window
        .front()
        .is_some_and(|&t| now.saturating_duration_since(t) >= RPM_WINDOW)
    {
        r.window.pop_front();
    }
    if r.window.len() >= r.limit {
        shared.rejected_429.fetch_add(1, Ordering::SeqCst);
        let wait = (r.window[0] + RPM_WINDOW).saturating_duration_since(now);
        let retry_after = wait.as_secs_f64().ceil().max(1.0) as u64;
        let body = json!({"error": {"message": format!("Rate limit reached for requests: limit {}, used {}. Please try again in {retry_after}s.", r.limit, r.window.len()),
            "type": "requests", "code": "rate_limit_exceeded"}});
        let mut resp = (StatusCode::TOO_MANY_REQUESTS, body.to_string()).into_response();
        let h = resp.headers_mut();
        h.insert("retry-after", retry_after.to_string().parse().unwrap());
        if r.headers {
            for (k, v) in rate_limit_headers(r, now) {
                h.insert(k, v.parse().unwrap());
            }
        }
        return Err(Box::new(resp));
    }
    r.window.push_back(now);
    Ok(if r.headers {
        rate_limit_headers(r, now)
    } else {
        Vec::new()
    })
}

/// The default answer content: booktr's pseudo provider (the rehearsal responder) run on the
/// received request.
pub fn default_content(target: &Lang, agent: Agent, messages: &[Message]) -> String {
    let req = Request {
        task: agent.into(),
        messages: messages.to_vec(),
        json_schema: None,
        max_tokens: None,
        ceiling_tokens: None,
        prefill: None,
    };
    Rehearsal::new(target.clone())
        .complete(&req)
        .expect("every agent's request is answered")
        .content
}

fn chunk(delta: Value, finish: Option<&str>) -> String {
    let v = json!({"id": "fake", "object": "chat.completion.chunk", "model": "fake-model",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
    format!("data: {v}\n\n")
}

enum Step {
    Data(String),
    /// Data counted in [`FakeServer::streamed_chunks`] when handed to the connection.
    Counted(String),
    Sleep(Duration),
    Reset,
    Hang,
}

async fn handle(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    let arrived = Instant::now();
    let flight = Flight::enter(&shared, arrived);
    let limit_headers = match admit(&shared, arrived) {
        Ok(h) => h,
        Err(resp) => return *resp,
    };
    let mut resp = answer(&shared, flight, arrived, headers, body).await;
    let h = resp.headers_mut();
    for (k, v) in limit_headers {
        h.insert(k, v.parse().unwrap());
    }
    resp
}

/// Answers an admitted request; `flight` ends with the answer (for a stream, when its last
/// byte is sent or the client goes away).
async fn answer(
    shared: &Arc<Shared>,
    mut flight: Flight,
    arrived: Instant,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let body: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => return (StatusCode::BAD_REQUEST, format!("bad json: {e}")).into_response(),
    };
    let mut messages: Vec<Message> =
        serde_json::from_value(body["messages"].clone()).unwrap_or_default();
    let prefill = match messages.last() {
        Some(m) if m.role == booktr::llm::Role::Assistant && messages.len() > 1 => {
            messages.pop().map(|m| m.content)
        }
        _ => None,
    };
    let agent = agent_of(&messages);
    let rec = {
        let mut reqs = shared.requests.lock().unwrap();
        let rec = Recorded {
            n: reqs.len(),
            agent,
            messages: messages.clone(),
            prefill: prefill.clone(),
            body: body.clone(),
            authorization: headers
                .get("authorization")
                .and_then(|v| v.to_str().ok())
                .map(String::from),
            at: arrived,
        };
        reqs.push(rec.clone());
        rec
    };
    flight.n = rec.n;
    flight.agent = agent;
    let recording = shared.recording.lock().unwrap().clone();
    match recording {
        Some(Recording::Replay(fixtures)) => return replay_answer(shared, flight, &rec, &fixtures),
        Some(Recording::Proxy { upstream, reuse }) => {
            if let Some(known) = reuse.as_deref()
                && let Some(ex) = known.get(&request_key(&rec.body))
            {
                let mut ex = ex.clone();
                ex.n = rec.n;
                shared.exchanges.lock().unwrap().push(ex);
                return replay_answer(shared, flight, &rec, known);
            }
            // A request this run already sent upstream (another arm of a benchmark sends the
            // same messages) gets the answer recorded then: a replay can give only one answer
            // per key, so the recording must not give two.
            let key = request_key(&rec.body);
            let earlier = shared
                .exchanges
                .lock()
                .unwrap()
                .iter()
                .find(|e| e.key == key)
                .cloned();
            if reuse.is_some()
                && let Some(ex) = earlier
            {
                let one = Fixtures {
                    by_key: std::iter::once((key, ex.clone())).collect(),
                };
                let mut ex = ex;
                ex.n = rec.n;
                shared.exchanges.lock().unwrap().push(ex);
                return replay_answer(shared, flight, &rec, &one);
            }
            return proxy_answer(shared, flight, &rec, &upstream).await;
        }
        None => {}
    }
    let script = shared.script.lock().unwrap().clone();
    let reply = script(&rec);
    let (base, per_token) = *shared.latency.lock().unwrap();
    let prompt_tokens =
        booktr::tokens::count_messages(messages.iter().map(|m| m.content.as_str())) as u64;
    let cached_tokens = if shared.prefix_cache.load(Ordering::SeqCst) {
        let seq = prompt_token_sequence(&messages);
        let mut cache = shared.cache.lock().unwrap();
        let cached = cached_prefix(&seq, cache.iter());
        cache.push_back(seq);
        while cache.len() > PREFIX_CACHE_REQUESTS {
            cache.pop_front();
        }
        (cached as u64).min(prompt_tokens)
    } else {
        0
    };
    let (reasoning, content, finish) = match reply {
        Reply::Status {
            code,
            body,
            retry_after,
        } => {
            tokio::time::sleep(base).await;
            let mut resp = (StatusCode::from_u16(code).unwrap(), body).into_response();
            if let Some(ra) = retry_after {
                resp.headers_mut()
                    .insert("retry-after", ra.parse().unwrap());
            }
            flight.answered(code);
            return resp;
        }
        Reply::ResetMidStream { partial } => {
            let steps = vec![
                Step::Data(chunk(
                    json!({"role": "assistant", "content": partial}),
                    None,
                )),
                Step::Sleep(Duration::from_millis(20)),
                Step::Reset,
            ];
            return sse(steps, flight, false);
        }
        Reply::Stall { partial } => {
            let steps = vec![
                Step::Data(chunk(
                    json!({"role": "assistant", "content": partial}),
                    None,
                )),
                Step::Hang,
            ];
            return sse(steps, flight, false);
        }
        Reply::Stream { parts, delay } => {
            let mut steps = vec![Step::Data(chunk(
                json!({"role": "assistant", "content": ""}),
                None,
            ))];
            let completion_tokens = parts.len() as u64;
            for p in parts {
                steps.push(Step::Sleep(delay));
                steps.push(Step::Counted(chunk(json!({"content": p}), None)));
            }
            steps.push(Step::Data(chunk(json!({}), Some("length"))));
            let usage = json!({"id": "fake", "object": "chat.completion.chunk", "choices": [],
                "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                          "total_tokens": prompt_tokens + completion_tokens}});
            steps.push(Step::Data(format!("data: {usage}\n\n")));
            steps.push(Step::Data("data: [DONE]\n\n".into()));
            flight.usage = (prompt_tokens, completion_tokens, 0);
            let counter = shared.streamed.clone();
            return sse_counted(steps, flight, Some(counter));
        }
        Reply::Default => (
            String::new(),
            default_content(&shared.target, agent, &messages),
            "stop".to_string(),
        ),
        Reply::Content(c) => (String::new(), c, "stop".to_string()),
        Reply::Full {
            reasoning,
            content,
            finish,
        } => (reasoning, content, finish),
    };
    let model = *shared.model_tokens.lock().unwrap();
    let (content, finish, completion_tokens) = match model {
        None => {
            let n =
                booktr::tokens::count(&content) as u64 + booktr::tokens::count(&reasoning) as u64;
            (content, finish, n)
        }
        Some(m) => {
            // A continuation goes on from the prefill when the whole reply starts with it;
            // a model that does not continue starts over.
            let content = match (&prefill, m.continues) {
                (Some(p), true) if content.starts_with(p.as_str()) => {
                    content[p.len()..].to_string()
                }
                _ => content,
            };
            let max = body["max_tokens"].as_u64().unwrap_or(u64::MAX);
            let kept = m.cut(&content, max.saturating_sub(m.count(&reasoning)));
            let finish = if kept.len() < content.len() {
                "length".to_string()
            } else {
                finish
            };
            let kept = kept.to_string();
            let n = m.count(&kept) + m.count(&reasoning);
            (kept, finish, n)
        }
    };
    flight.usage = (prompt_tokens, completion_tokens, cached_tokens);
    // A request without `"stream": true` (the OpenAI Python client's default, used by the
    // seed original in the campaign bench) gets one `chat.completion` JSON object after the
    // same latency.
    if body["stream"] != json!(true) {
        tokio::time::sleep(base + per_token * completion_tokens as u32).await;
        let mut message = json!({"role": "assistant", "content": content});
        if !reasoning.is_empty() {
            message["reasoning_content"] = json!(reasoning);
        }
        let answer = json!({"id": "fake", "object": "chat.completion", "created": 0,
            "model": body["model"].as_str().unwrap_or("fake"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens,
                      "prompt_tokens_details": {"cached_tokens": cached_tokens}}});
        flight.answered(200);
        return (
            [(axum::http::header::CONTENT_TYPE, "application/json")],
            answer.to_string(),
        )
            .into_response();
    }
    let mut steps = vec![Step::Sleep(base + per_token * completion_tokens as u32)];
    steps.push(Step::Data(chunk(
        json!({"role": "assistant", "content": ""}),
        None,
    )));
    for part in split_chunks(&reasoning, 40) {
        steps.push(Step::Data(chunk(json!({"reasoning_content": part}), None)));
    }
    for part in split_chunks(&content, 40) {
        steps.push(Step::Data(chunk(json!({"content": part}), None)));
    }
    steps.push(Step::Data(chunk(json!({}), Some(&finish))));
    let usage = json!({"id": "fake", "object": "chat.completion.chunk", "choices": [],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens, "prompt_tokens_details": {"cached_tokens": cached_tokens}}});
    steps.push(Step::Data(format!("data: {usage}\n\n")));
    steps.push(Step::Data("data: [DONE]\n\n".into()));
    sse(steps, flight, true)
}

fn split_chunks(s: &str, max_chars: usize) -> Vec<String> {
    let chars: Vec<char> = s.chars().collect();
    chars
        .chunks(max_chars)
        .map(|c| c.iter().collect())
        .collect()
}

/// An SSE response playing `steps`. `flight` leaves the in-flight gauge when the stream ends or
/// is dropped; with `record`, the answer's timing is recorded once the last step is sent.
fn sse(steps: Vec<Step>, flight: Flight, record: bool) -> Response {
    sse_inner(steps, flight, record, None)
}

/// [`sse`] for a recorded answer whose [`Step::Counted`] steps add to `counter`.
fn sse_counted(steps: Vec<Step>, flight: Flight, counter: Option<Arc<AtomicUsize>>) -> Response {
    sse_inner(steps, flight, true, counter)
}

fn sse_inner(
    steps: Vec<Step>,
    flight: Flight,
    record: bool,
    counter: Option<Arc<AtomicUsize>>,
) -> Response {
    let state = (VecDeque::from(steps), Some((flight, record)));
    let stream = futures_util::stream::unfold(state, move |(mut steps, done)| {
        let counter = counter.clone();
        async move {
            loop {
                match steps.pop_front() {
                    None => {
                        if let Some((f, true)) = &done {
                            f.answered(200);
                        }
                        return None;
                    }
                    Some(Step::Sleep(d)) => tokio::time::sleep(d).await,
                    Some(Step::Data(s)) => {
                        return Some((Ok::<Bytes, std::io::Error>(Bytes::from(s)), (steps, done)));
                    }
                    Some(Step::Counted(s)) => {
                        if let Some(c) = &counter {
                            c.fetch_add(1, Ordering::SeqCst);
                        }
                        return Some((Ok::<Bytes, std::io::Error>(Bytes::from(s)), (steps, done)));
                    }
                    Some(Step::Reset) => {
                        return Some((
                            Err(std::io::Error::new(
                                std::io::ErrorKind::ConnectionReset,
                                "reset by fake",
                            )),
                            (steps, None),
                        ));
                    }
                    Some(Step::Hang) => std::future::pending::<()>().await,
                }
            }
        }
    });
    Response::builder()
        .header("content-type", "text/event-stream")
        .header("cache-control", "no-cache")
        .body(Body::from_stream(stream))
        .unwrap()
}

/// Usage (prompt, completion, cached tokens) from a `usage` object.
fn usage_triple(u: &Value) -> (u64, u64, u64) {
    (
        u["prompt_tokens"].as_u64().unwrap_or(0),
        u["completion_tokens"].as_u64().unwrap_or(0),
        u["prompt_tokens_details"]["cached_tokens"]
            .as_u64()
            .unwrap_or(0),
    )
}

/// What a proxied stream has passed on so far, recorded as an [`Exchange`] when the stream
/// ends or is dropped (see [`proxy_answer`]).
struct Tap {
    buf: Vec<u8>,
    done: Option<(Flight, Arc<Shared>, String, String, usize)>,
}

impl Tap {
    /// Records the exchange once (later calls do nothing).
    fn record(&mut self) {
        let Some((mut flight, shared, key, preview, n)) = self.done.take() else {
            return;
        };
        // An abandoned stream may stop inside an event: keep whole events only.
        let whole = self
            .buf
            .windows(2)
            .rposition(|w| w == b"\n\n")
            .map_or(0, |i| i + 2);
        self.buf.truncate(whole);
        let ex = Exchange {
            key,
            n,
            preview,
            status: 200,
            error_body: String::new(),
            events: sse_payloads(&self.buf),
        };
        if let Some(u) = ex.usage() {
            flight.usage = usage_triple(&u);
        }
        shared.exchanges.lock().unwrap().push(ex);
        flight.answered(200);
    }
}

impl Drop for Tap {
    fn drop(&mut self) {
        self.record();
    }
}

/// Replay mode: the recorded answer of `rec`, or HTTP 500 naming the missing key.
fn replay_answer(
    shared: &Arc<Shared>,
    mut flight: Flight,
    rec: &Recorded,
    fixtures: &Fixtures,
) -> Response {
    let key = request_key(&rec.body);
    let Some(ex) = fixtures.get(&key) else {
        let line = format!(
            "{key} ({})",
            preview(&format!("{:?}", rec.agent), &rec.body)
        );
        shared.misses.lock().unwrap().push(line.clone());
        flight.answered(500);
        let body = json!({"error": {"message": format!(
            "fake server (replay): no recorded answer for request {line}; re-record the fixtures with a real model (BOOKTR_RECORD_REAL_LLM=1, see tests/it/real_llm.rs)"),
            "type": "fixture_miss", "code": "fixture_miss"}});
        return (StatusCode::INTERNAL_SERVER_ERROR, body.to_string()).into_response();
    };
    if ex.status != 200 {
        flight.answered(ex.status);
        return (
            StatusCode::from_u16(ex.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            ex.error_body.clone(),
        )
            .into_response();
    }
    if let Some(u) = ex.usage() {
        flight.usage = usage_triple(&u);
    }
    let steps = ex
        .events
        .iter()
        .map(|e| Step::Data(format!("data: {e}\n\n")))
        .collect();
    sse(steps, flight, true)
}

/// Proxy mode: forwards `rec` to `upstream`, streams the answer through as it arrives, and
/// keeps the finished answer as an [`Exchange`].
async fn proxy_answer(
    shared: &Arc<Shared>,
    flight: Flight,
    rec: &Recorded,
    upstream: &str,
) -> Response {
    let key = request_key(&rec.body);
    let pv = preview(&format!("{:?}", rec.agent), &rec.body);
    // (not `support::http_client`: benches include this file on its own)
    booktr::llm::call::install_tls_provider();
    let mut req = reqwest::Client::new()
        .post(format!("{upstream}/chat/completions"))
        .json(&rec.body);
    if let Some(a) = &rec.authorization {
        req = req.header("authorization", a);
    }
    let resp = match req.send().await {
        Ok(r) => r,
        Err(e) => {
            flight.answered(502);
            return (
                StatusCode::BAD_GATEWAY,
                format!("fake server (proxy): {upstream} unreachable: {e}"),
            )
                .into_response();
        }
    };
    let status = resp.status().as_u16();
    let n = rec.n;
    if status != 200 {
        let body = resp.text().await.unwrap_or_default();
        shared.exchanges.lock().unwrap().push(Exchange {
            key,
            n,
            preview: pv,
            status,
            error_body: body.clone(),
            events: Vec::new(),
        });
        flight.answered(status);
        return (
            StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_GATEWAY),
            body,
        )
            .into_response();
    }
    let upstream_stream = resp.bytes_stream();
    // The exchange is recorded when the upstream stream ends, or when booktr drops the
    // connection first (its runaway guard aborts a repeating reply): then what booktr read
    // so far is recorded, so a replay feeds it the same prefix and it aborts at the same point
    // (regression: `proxy_records_a_reply_the_client_abandoned`).
    let tap = Tap {
        buf: Vec::new(),
        done: Some((flight, shared.clone(), key, pv, n)),
    };
    let stream = futures_util::stream::unfold(
        (Box::pin(upstream_stream), tap),
        |(mut up, mut tap)| async move {
            use futures_util::StreamExt;
            tap.done.as_ref()?;
            match up.next().await {
                Some(Ok(bytes)) => {
                    tap.buf.extend_from_slice(&bytes);
                    Some((Ok::<Bytes, std::io::Error>(bytes), (up, tap)))
                }
                Some(Err(e)) => {
                    tap.done = None;
                    Some((
                        Err(std::io::Error::other(format!("upstream stream: {e}"))),
                        (up, tap),
                    ))
                }
                None => {
                    tap.record();
                    None
                }
            }
        },
    );
    Response::builder()
        .header("content-type", "text/event-stream")
        .header("cache-control", "no-cache")
        .body(Body::from_stream(stream))
        .unwrap()
}
