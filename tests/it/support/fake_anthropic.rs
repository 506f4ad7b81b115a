//! A fake Anthropic Messages API (`POST /v1/messages`, streamed as SSE events) mounted on the
//! in-repo fake server ([`FakeServer::start_with`]), for tests. No test calls a real model.
//!
//! By default it answers like the pseudo provider (on the messages it received, system prompt
//! included), as `message_start`, `ping`, content blocks with `text_delta` chunks (or
//! `input_json_delta` chunks of a `tool_use` block when the request forces a tool),
//! `message_delta` with the stop reason and output usage, and `message_stop`. Usage imitates
//! prompt caching: a system block marked `cache_control` is reported as a cache write the first
//! time its text is seen and as a cache read afterwards. A script can answer with reasoning
//! (`thinking` blocks), HTTP errors (429, 529, 5xx, with `Retry-After`), an `error` event in
//! the stream, a reset or a stall.

use std::collections::{HashSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};

use booktr::agents::Agent;
use booktr::lang::Lang;
use booktr::llm::Message;

use super::fake_llm::{FakeServer, Reply, agent_of, default_content};

/// One request as received.
#[derive(Debug, Clone)]
pub struct ARecorded {
    pub n: usize,
    pub agent: Agent,
    /// The system prompt and every text block, in order, as messages.
    pub messages: Vec<Message>,
    pub body: Value,
    pub api_key: Option<String>,
    pub version: Option<String>,
}

/// What to answer.
#[derive(Debug, Clone)]
pub enum AReply {
    /// Any of the OpenAI fake's replies, in Anthropic's wire format.
    Common(Reply),
    /// Some text, then an `error` event (e.g. `overloaded_error`), then the end of the stream.
    ErrorEvent { partial: String, kind: String },
}

impl From<Reply> for AReply {
    fn from(r: Reply) -> Self {
        AReply::Common(r)
    }
}

type Script = dyn Fn(&ARecorded) -> AReply + Send + Sync;

struct Shared {
    requests: Mutex<Vec<ARecorded>>,
    script: Mutex<Arc<Script>>,
    /// System prompts seen with `cache_control` (the fake's prompt cache).
    cached: Mutex<HashSet<String>>,
    target: Lang,
}

/// The fake Anthropic endpoint on a running [`FakeServer`] (whose OpenAI-compatible endpoint
/// stays available).
pub struct FakeAnthropic {
    pub server: FakeServer,
    shared: Arc<Shared>,
}

impl FakeAnthropic {
    /// Starts a server for target language `zh`.
    pub fn start() -> FakeAnthropic {
        Self::start_with("zh", Router::new())
    }

    /// Starts one with `extra` routes too (the batch fake).
    pub fn start_with(target: &str, extra: Router) -> FakeAnthropic {
        let shared = Arc::new(Shared {
            requests: Mutex::new(Vec::new()),
            script: Mutex::new(Arc::new(|_: &ARecorded| AReply::Common(Reply::Default))),
            cached: Mutex::new(HashSet::new()),
            target: Lang::parse(target),
        });
        let routes = Router::new()
            .route("/v1/messages", post(handle))
            .with_state(shared.clone())
            .merge(extra);
        FakeAnthropic {
            server: FakeServer::start_with(target, routes),
            shared,
        }
    }

    /// The base URL to configure (`…/v1`; the client appends `/messages`).
    pub fn base_url(&self) -> String {
        self.server.base_url.clone()
    }

    pub fn script(&self, f: impl Fn(&ARecorded) -> AReply + Send + Sync + 'static) {
        *self.shared.script.lock().unwrap() = Arc::new(f);
    }

    pub fn requests(&self) -> Vec<ARecorded> {
        self.shared.requests.lock().unwrap().clone()
    }

    pub fn count(&self, agent: Agent) -> usize {
        self.requests().iter().filter(|r| r.agent == agent).count()
    }
}

/// The request's texts as messages: the system prompt, then each text block of each turn.
pub fn flatten(body: &Value) -> Vec<Message> {
    let mut out = Vec::new();
    match &body["system"] {
        Value::String(s) => out.push(Message::system(s.clone())),
        Value::Array(blocks) => {
            let text: Vec<&str> = blocks.iter().filter_map(|b| b["text"].as_str()).collect();
            out.push(Message::system(text.join("\n\n")));
        }
        _ => {}
    }
    for m in body["messages"].as_array().into_iter().flatten() {
        let mk = |t: &str| {
            if m["role"] == "assistant" {
                Message::assistant(t)
            } else {
                Message::user(t)
            }
        };
        match &m["content"] {
            Value::String(s) => out.push(mk(s)),
            Value::Array(blocks) => {
                for b in blocks {
                    if let Some(t) = b["text"].as_str() {
                        out.push(mk(t));
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// Usage as Anthropic reports it for `body`, imitating the prompt cache with `cached`.
pub fn usage_of(body: &Value, messages: &[Message], cached: &Mutex<HashSet<String>>) -> Value {
    let total = booktr::tokens::count_messages(messages.iter().map(|m| m.content.as_str())) as u64;
    let system = &body["system"][0];
    let (mut created, mut read) = (0, 0);
    if system["cache_control"]["type"] == "ephemeral" {
        let text = system["text"].as_str().unwrap_or("").to_string();
        let n = booktr::tokens::count(&text) as u64;
        if cached.lock().unwrap().insert(text) {
            created = n;
        } else {
            read = n;
        }
    }
    json!({"input_tokens": total - created - read, "cache_creation_input_tokens": created,
           "cache_read_input_tokens": read, "output_tokens": 1})
}

/// A complete (non-streamed) message for a batch result: the default or scripted content.
pub fn message_json(model: &str, content: &str, tool: bool, usage: Value) -> Value {
    let block = if tool {
        let input: Value = serde_json::from_str(content).unwrap_or(json!({}));
        json!({"type": "tool_use", "id": "toolu_fake", "name": "give_answer", "input": input})
    } else {
        json!({"type": "text", "text": content})
    };
    json!({"id": "msg_fake", "type": "message", "role": "assistant", "model": model,
           "content": [block], "stop_reason": if tool { "tool_use" } else { "end_turn" },
           "usage": usage})
}

enum Step {
    Event(&'static str, Value),
    Sleep(Duration),
    Reset,
    Hang,
}

fn split_chunks(s: &str, max_chars: usize) -> Vec<String> {
    let chars: Vec<char> = s.chars().collect();
    chars
        .chunks(max_chars)
        .map(|c| c.iter().collect())
        .collect()
}

async fn handle(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    let body: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => return (StatusCode::BAD_REQUEST, format!("bad json: {e}")).into_response(),
    };
    let messages = flatten(&body);
    let agent = agent_of(&messages);
    let header = |n: &str| {
        headers
            .get(n)
            .and_then(|v| v.to_str().ok())
            .map(String::from)
    };
    let rec = {
        let mut reqs = shared.requests.lock().unwrap();
        let rec = ARecorded {
            n: reqs.len(),
            agent,
            messages: messages.clone(),
            body: body.clone(),
            api_key: header("x-api-key"),
            version: header("anthropic-version"),
        };
        reqs.push(rec.clone());
        rec
    };
    let script = shared.script.lock().unwrap().clone();
    let reply = script(&rec);
    let tool = body.get("tool_choice").is_some();
    let mut usage = usage_of(&body, &messages, &shared.cached);
    let start = |usage: &Value| {
        Step::Event(
            "message_start",
            json!({"type": "message_start", "message": {"id": "msg_fake", "type": "message",
                "role": "assistant", "content": [], "model": "fake-claude", "stop_reason": null,
                "usage": usage}}),
        )
    };
    let text_start = |i: u32| {
        Step::Event(
            "content_block_start",
            json!({"type": "content_block_start", "index": i,
                   "content_block": {"type": "text", "text": ""}}),
        )
    };
    let text_delta = |i: u32, t: &str| {
        Step::Event(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": i,
                   "delta": {"type": "text_delta", "text": t}}),
        )
    };
    let (reasoning, content, finish) = match reply {
        AReply::Common(Reply::Status {
            code,
            body,
            retry_after,
        }) => {
            let mut resp = (StatusCode::from_u16(code).unwrap(), body).into_response();
            if let Some(ra) = retry_after {
                resp.headers_mut()
                    .insert("retry-after", ra.parse().unwrap());
            }
            return resp;
        }
        AReply::Common(Reply::ResetMidStream { partial }) => {
            return sse(vec![
                start(&usage),
                text_start(0),
                text_delta(0, &partial),
                Step::Sleep(Duration::from_millis(20)),
                Step::Reset,
            ]);
        }
        AReply::Common(Reply::Stall { partial }) => {
            return sse(vec![
                start(&usage),
                text_start(0),
                text_delta(0, &partial),
                Step::Hang,
            ]);
        }
        AReply::Common(Reply::Stream { parts, delay }) => {
            // Text deltas until the provider's limit (`max_tokens` ignored), then the stop.
            let mut steps = vec![start(&usage), text_start(0)];
            for p in &parts {
                steps.push(Step::Sleep(delay));
                steps.push(text_delta(0, p));
            }
            steps.push(Step::Event(
                "message_delta",
                json!({"type": "message_delta", "delta": {"stop_reason": "max_tokens"},
                       "usage": {"output_tokens": parts.len()}}),
            ));
            steps.push(Step::Event("message_stop", json!({"type": "message_stop"})));
            return sse(steps);
        }
        AReply::ErrorEvent { partial, kind } => {
            return sse(vec![
                start(&usage),
                text_start(0),
                text_delta(0, &partial),
                Step::Event(
                    "error",
                    json!({"type": "error", "error": {"type": kind, "message": "fake in-stream error"}}),
                ),
            ]);
        }
        AReply::Common(Reply::Default) => (
            String::new(),
            default_content(&shared.target, agent, &messages),
            "stop".to_string(),
        ),
        AReply::Common(Reply::Content(c)) => (String::new(), c, "stop".to_string()),
        AReply::Common(Reply::Full {
            reasoning,
            content,
            finish,
        }) => (reasoning, content, finish),
    };
    let stop = match finish.as_str() {
        "length" => "max_tokens",
        _ if tool => "tool_use",
        _ => "end_turn",
    };
    let output = booktr::tokens::count(&content) as u64 + booktr::tokens::count(&reasoning) as u64;
    let mut steps = vec![start(&usage), Step::Event("ping", json!({"type": "ping"}))];
    let mut i = 0;
    if !reasoning.is_empty() {
        steps.push(Step::Event(
            "content_block_start",
            json!({"type": "content_block_start", "index": 0,
                   "content_block": {"type": "thinking", "thinking": ""}}),
        ));
        for part in split_chunks(&reasoning, 30) {
            steps.push(Step::Event(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": 0,
                       "delta": {"type": "thinking_delta", "thinking": part}}),
            ));
        }
        steps.push(Step::Event(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0,
                   "delta": {"type": "signature_delta", "signature": "fakesig"}}),
        ));
        steps.push(Step::Event(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 0}),
        ));
        i = 1;
    }
    if tool {
        steps.push(Step::Event(
            "content_block_start",
            json!({"type": "content_block_start", "index": i, "content_block":
                   {"type": "tool_use", "id": "toolu_fake", "name": "give_answer", "input": {}}}),
        ));
        for part in split_chunks(&content, 25) {
            steps.push(Step::Event(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": i,
                       "delta": {"type": "input_json_delta", "partial_json": part}}),
            ));
        }
    } else {
        steps.push(text_start(i));
        for part in split_chunks(&content, 40) {
            steps.push(text_delta(i, &part));
        }
    }
    steps.push(Step::Event(
        "content_block_stop",
        json!({"type": "content_block_stop", "index": i}),
    ));
    usage["output_tokens"] = json!(output);
    steps.push(Step::Event(
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
               "usage": {"output_tokens": output}}),
    ));
    steps.push(Step::Event("message_stop", json!({"type": "message_stop"})));
    sse(steps)
}

fn sse(steps: Vec<Step>) -> Response {
    let stream = futures_util::stream::unfold(VecDeque::from(steps), |mut steps| async move {
        loop {
            match steps.pop_front()? {
                Step::Sleep(d) => tokio::time::sleep(d).await,
                Step::Event(name, data) => {
                    let s = format!("event: {name}\ndata: {data}\n\n");
                    return Some((Ok::<Bytes, std::io::Error>(Bytes::from(s)), steps));
                }
                Step::Reset => {
                    return Some((
                        Err(std::io::Error::new(
                            std::io::ErrorKind::ConnectionReset,
                            "reset by fake",
                        )),
                        VecDeque::new(),
                    ));
                }
                Step::Hang => std::future::pending::<()>().await,
            }
        }
    });
    Response::builder()
        .header("content-type", "text/event-stream")
        .header("cache-control", "no-cache")
        .body(Body::from_stream(stream))
        .unwrap()
}
