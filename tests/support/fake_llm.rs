//! A fake OpenAI-compatible `/v1/chat/completions` server over real HTTP and SSE (axum), for
//! tests and benchmarks. No test calls a real model.
//!
//! By default it answers like the pseudo provider would (it runs `booktr`'s own pseudo
//! provider on the request it receives) and reports usage computed with `o200k_base`, streamed
//! in small chunks with a final usage chunk and `[DONE]`. A script can override any answer:
//! content, JSON, HTTP errors with or without `Retry-After`, a connection reset mid-stream, a
//! stalled stream, reasoning-only answers, `finish_reason: length`, and per-request latency.
//! Every request is recorded (agent, messages, headers) for assertions.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
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
use booktr::lang::Lang;
use booktr::llm::pseudo::Pseudo;
use booktr::llm::{Message, Request};

/// One request as received.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// 0-based arrival order.
    pub n: usize,
    pub agent: Agent,
    pub messages: Vec<Message>,
    pub body: Value,
    pub authorization: Option<String>,
    pub at: Instant,
}

impl Recorded {
    /// The unit text of a Translation request (its third message).
    pub fn unit_text(&self) -> Option<&str> {
        (self.agent == Agent::Translation)
            .then(|| self.messages.get(2).map(|m| m.content.as_str()))
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
        self.agent == Agent::Translation && self.messages.len() > 3
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
}

type Script = dyn Fn(&Recorded) -> Reply + Send + Sync;

struct Shared {
    requests: Mutex<Vec<Recorded>>,
    script: Mutex<Arc<Script>>,
    /// Fixed delay before answering, plus per-completion-token delay.
    latency: Mutex<(Duration, Duration)>,
    completed: AtomicUsize,
    target: Lang,
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
}

/// The default answer content: booktr's pseudo provider run on the received request.
pub fn default_content(target: &Lang, agent: Agent, messages: &[Message]) -> String {
    let req = Request {
        agent,
        messages: messages.to_vec(),
        json_schema: None,
        max_tokens: None,
    };
    Pseudo::new(target.clone()).complete(&req).content
}

fn chunk(delta: Value, finish: Option<&str>) -> String {
    let v = json!({"id": "fake", "object": "chat.completion.chunk", "model": "fake-model",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
    format!("data: {v}\n\n")
}

enum Step {
    Data(String),
    Sleep(Duration),
    Reset,
    Hang,
}

async fn handle(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    let body: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => return (StatusCode::BAD_REQUEST, format!("bad json: {e}")).into_response(),
    };
    let messages: Vec<Message> =
        serde_json::from_value(body["messages"].clone()).unwrap_or_default();
    let agent = agent_of(&messages);
    let rec = {
        let mut reqs = shared.requests.lock().unwrap();
        let rec = Recorded {
            n: reqs.len(),
            agent,
            messages: messages.clone(),
            body: body.clone(),
            authorization: headers
                .get("authorization")
                .and_then(|v| v.to_str().ok())
                .map(String::from),
            at: Instant::now(),
        };
        reqs.push(rec.clone());
        rec
    };
    let script = shared.script.lock().unwrap().clone();
    let reply = script(&rec);
    let (base, per_token) = *shared.latency.lock().unwrap();
    let prompt_tokens =
        booktr::tokens::count_messages(messages.iter().map(|m| m.content.as_str())) as u64;
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
            shared.completed.fetch_add(1, Ordering::SeqCst);
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
            return sse(steps, None);
        }
        Reply::Stall { partial } => {
            let steps = vec![
                Step::Data(chunk(
                    json!({"role": "assistant", "content": partial}),
                    None,
                )),
                Step::Hang,
            ];
            return sse(steps, None);
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
    let completion_tokens =
        booktr::tokens::count(&content) as u64 + booktr::tokens::count(&reasoning) as u64;
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
                  "total_tokens": prompt_tokens + completion_tokens, "prompt_tokens_details": {"cached_tokens": 0}}});
    steps.push(Step::Data(format!("data: {usage}\n\n")));
    steps.push(Step::Data("data: [DONE]\n\n".into()));
    sse(steps, Some(shared.clone()))
}

fn split_chunks(s: &str, max_chars: usize) -> Vec<String> {
    let chars: Vec<char> = s.chars().collect();
    chars
        .chunks(max_chars)
        .map(|c| c.iter().collect())
        .collect()
}

fn sse(steps: Vec<Step>, done: Option<Arc<Shared>>) -> Response {
    let state = (VecDeque::from(steps), done);
    let stream = futures_util::stream::unfold(state, |(mut steps, done)| async move {
        loop {
            match steps.pop_front() {
                None => {
                    if let Some(d) = &done {
                        d.completed.fetch_add(1, Ordering::SeqCst);
                    }
                    return None;
                }
                Some(Step::Sleep(d)) => tokio::time::sleep(d).await,
                Some(Step::Data(s)) => {
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
    });
    Response::builder()
        .header("content-type", "text/event-stream")
        .header("cache-control", "no-cache")
        .body(Body::from_stream(stream))
        .unwrap()
}
