//! Fake batch APIs, mounted on the in-repo fake servers ([`FakeServer::start_with`],
//! [`FakeAnthropic::start_with`]) over real HTTP, for tests. No test calls a real model.
//!
//! - OpenAI-compatible: `POST /v1/files` (multipart, `purpose=batch`), `POST /v1/batches`,
//!   `GET /v1/batches/{id}`, `GET /v1/files/{id}/content` (output and error files, JSONL).
//! - Anthropic Message Batches: `POST /v1/messages/batches`, `GET /v1/messages/batches/{id}`,
//!   `GET /v1/messages/batches/{id}/results` (JSONL; the `results_url` the poll returns).
//!
//! Every item is answered like the streaming fakes answer (the pseudo provider on the item's
//! messages). While [`FakeBatch::hold`] is set, batches stay `in_progress`; items for which
//! the failure predicate holds come back failed (HTTP 500 in the error file, or `errored`).
//!
//! [`FakeServer::start_with`]: super::fake_llm::FakeServer::start_with
//! [`FakeAnthropic::start_with`]: super::fake_anthropic::FakeAnthropic::start_with

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::Json;
use axum::Router;
use axum::extract::{Multipart, Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

use booktr::lang::Lang;
use booktr::llm::Message;

use super::fake_anthropic::{flatten, message_json};
use super::fake_llm::{agent_of, default_content};

type FailIf = dyn Fn(&str, &[Message]) -> bool + Send + Sync;

/// One submitted batch.
#[derive(Debug, Clone)]
pub struct SubmittedBatch {
    pub id: String,
    /// `openai` or `anthropic`.
    pub api: &'static str,
    /// `(custom_id, messages)` of every item, in order.
    pub items: Vec<(String, Vec<Message>)>,
    /// The raw request bodies (OpenAI `body`, Anthropic `params`).
    pub bodies: Vec<Value>,
}

struct Shared {
    target: Lang,
    files: Mutex<HashMap<String, Vec<u8>>>,
    batches: Mutex<Vec<SubmittedBatch>>,
    next: AtomicUsize,
    polls: AtomicUsize,
    hold: AtomicBool,
    fail_if: Mutex<Arc<FailIf>>,
    /// `authorization` / `x-api-key` headers of every batch request.
    keys: Mutex<Vec<Option<String>>>,
    /// While set, file uploads (`POST /v1/files`) are answered with this status and body.
    refuse: Mutex<Option<(u16, String)>>,
    /// Uploads refused so.
    refused: AtomicUsize,
    /// Translation answers are cut in half with `finish_reason: length` (see
    /// [`FakeBatch::cut_translations`]).
    cut: AtomicBool,
}

/// Handle on the fake batch endpoints.
#[derive(Clone)]
pub struct FakeBatch {
    shared: Arc<Shared>,
}

impl FakeBatch {
    /// New fake batch endpoints answering in `target`.
    pub fn new(target: &str) -> FakeBatch {
        FakeBatch {
            shared: Arc::new(Shared {
                target: Lang::parse(target),
                files: Mutex::new(HashMap::new()),
                batches: Mutex::new(Vec::new()),
                next: AtomicUsize::new(0),
                polls: AtomicUsize::new(0),
                hold: AtomicBool::new(false),
                fail_if: Mutex::new(Arc::new(|_: &str, _: &[Message]| false)),
                keys: Mutex::new(Vec::new()),
                refuse: Mutex::new(None),
                refused: AtomicUsize::new(0),
                cut: AtomicBool::new(false),
            }),
        }
    }

    /// Cuts every Translation answer (OpenAI API) at half its characters, with
    /// `finish_reason: length`, as a model that reached `max_tokens` does.
    pub fn cut_translations(&self, on: bool) {
        self.shared.cut.store(on, Ordering::SeqCst);
    }

    /// The routes, to merge into a fake server.
    pub fn router(&self) -> Router {
        Router::new()
            .route("/v1/files", post(upload))
            .route("/v1/files/{id}/content", get(file_content))
            .route("/v1/batches", post(create_openai))
            .route("/v1/batches/{id}", get(poll_openai))
            .route("/v1/messages/batches", post(create_anthropic))
            .route("/v1/messages/batches/{id}", get(poll_anthropic))
            .route("/v1/messages/batches/{id}/results", get(results_anthropic))
            .with_state(self.shared.clone())
    }

    /// While `true`, every batch stays `in_progress`.
    pub fn hold(&self, on: bool) {
        self.shared.hold.store(on, Ordering::SeqCst);
    }

    /// Items (by `custom_id` and messages) for which `f` holds come back failed.
    pub fn fail_if(&self, f: impl Fn(&str, &[Message]) -> bool + Send + Sync + 'static) {
        *self.shared.fail_if.lock().unwrap() = Arc::new(f);
    }

    /// Every batch submitted so far.
    pub fn batches(&self) -> Vec<SubmittedBatch> {
        self.shared.batches.lock().unwrap().clone()
    }

    /// Polls received so far.
    pub fn polls(&self) -> usize {
        self.shared.polls.load(Ordering::SeqCst)
    }

    /// While `Some((status, body))`, uploads are refused with it (an account problem at
    /// submission, e.g. a 429 `insufficient_quota`); `None` accepts them again.
    pub fn refuse_uploads(&self, with: Option<(u16, &str)>) {
        *self.shared.refuse.lock().unwrap() = with.map(|(c, b)| (c, b.to_string()));
    }

    /// Uploads refused by [`FakeBatch::refuse_uploads`].
    pub fn refused(&self) -> usize {
        self.shared.refused.load(Ordering::SeqCst)
    }

    /// The key headers of every batch request (for the secrets tests).
    pub fn keys(&self) -> Vec<Option<String>> {
        self.shared.keys.lock().unwrap().clone()
    }
}

fn record_key(s: &Shared, h: &HeaderMap) {
    let k = h
        .get("authorization")
        .or_else(|| h.get("x-api-key"))
        .and_then(|v| v.to_str().ok())
        .map(String::from);
    s.keys.lock().unwrap().push(k);
}

fn bad(msg: impl Into<String>) -> Response {
    (StatusCode::BAD_REQUEST, msg.into()).into_response()
}

async fn upload(State(s): State<Arc<Shared>>, h: HeaderMap, mut form: Multipart) -> Response {
    record_key(&s, &h);
    let refuse = s.refuse.lock().unwrap().clone();
    if let Some((code, body)) = refuse {
        s.refused.fetch_add(1, Ordering::SeqCst);
        return (StatusCode::from_u16(code).unwrap(), body).into_response();
    }
    let (mut purpose, mut bytes) = (None, None);
    while let Ok(Some(field)) = form.next_field().await {
        match field.name() {
            Some("purpose") => purpose = field.text().await.ok(),
            Some("file") => bytes = field.bytes().await.ok().map(|b| b.to_vec()),
            _ => {}
        }
    }
    if purpose.as_deref() != Some("batch") {
        return bad("purpose must be batch");
    }
    let Some(bytes) = bytes else {
        return bad("no file part");
    };
    let id = format!("file-in-{}", s.next.fetch_add(1, Ordering::SeqCst));
    let n = bytes.len();
    s.files.lock().unwrap().insert(id.clone(), bytes);
    Json(json!({"id": id, "object": "file", "purpose": "batch", "bytes": n})).into_response()
}

async fn file_content(
    State(s): State<Arc<Shared>>,
    h: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    record_key(&s, &h);
    match s.files.lock().unwrap().get(&id) {
        Some(b) => b.clone().into_response(),
        None => (StatusCode::NOT_FOUND, "no such file").into_response(),
    }
}

fn usage_tokens(messages: &[Message], content: &str) -> (u64, u64) {
    (
        booktr::tokens::count_messages(messages.iter().map(|m| m.content.as_str())) as u64,
        booktr::tokens::count(content) as u64,
    )
}

async fn create_openai(
    State(s): State<Arc<Shared>>,
    h: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    record_key(&s, &h);
    if body["endpoint"] != "/v1/chat/completions" || body["completion_window"] != "24h" {
        return bad("endpoint must be /v1/chat/completions, completion_window 24h");
    }
    let Some(input) = body["input_file_id"].as_str() else {
        return bad("no input_file_id");
    };
    let Some(bytes) = s.files.lock().unwrap().get(input).cloned() else {
        return (StatusCode::NOT_FOUND, "no such input file").into_response();
    };
    let (mut items, mut bodies) = (Vec::new(), Vec::new());
    for line in String::from_utf8_lossy(&bytes).lines() {
        let v: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(e) => return bad(format!("bad jsonl line: {e}")),
        };
        if v["method"] != "POST"
            || v["url"] != "/v1/chat/completions"
            || v["body"]["stream"] == true
        {
            return bad("each line must POST a non-streamed /v1/chat/completions body");
        }
        let messages: Vec<Message> = match serde_json::from_value(v["body"]["messages"].clone()) {
            Ok(m) => m,
            Err(e) => return bad(format!("bad messages: {e}")),
        };
        items.push((v["custom_id"].as_str().unwrap_or("").to_string(), messages));
        bodies.push(v["body"].clone());
    }
    let id = format!("batch_{}", s.next.fetch_add(1, Ordering::SeqCst));
    let total = items.len();
    s.batches.lock().unwrap().push(SubmittedBatch {
        id: id.clone(),
        api: "openai",
        items,
        bodies,
    });
    Json(
        json!({"id": id, "object": "batch", "status": "validating", "input_file_id": input,
        "request_counts": {"total": total, "completed": 0, "failed": 0}}),
    )
    .into_response()
}

fn find(s: &Shared, id: &str) -> Option<SubmittedBatch> {
    s.batches
        .lock()
        .unwrap()
        .iter()
        .find(|b| b.id == id)
        .cloned()
}

async fn poll_openai(
    State(s): State<Arc<Shared>>,
    h: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    record_key(&s, &h);
    s.polls.fetch_add(1, Ordering::SeqCst);
    let Some(b) = find(&s, &id) else {
        return (StatusCode::NOT_FOUND, "no such batch").into_response();
    };
    let total = b.items.len();
    if s.hold.load(Ordering::SeqCst) {
        return Json(json!({"id": id, "status": "in_progress",
            "request_counts": {"total": total, "completed": 0, "failed": 0}}))
        .into_response();
    }
    let fail_if = s.fail_if.lock().unwrap().clone();
    let (mut out, mut err) = (String::new(), String::new());
    let (mut ok_n, mut failed_n) = (0, 0);
    for (custom_id, messages) in &b.items {
        if fail_if(custom_id, messages) {
            failed_n += 1;
            err.push_str(&format!(
                "{}\n",
                json!({"id": format!("r-{custom_id}"), "custom_id": custom_id, "error": null,
                    "response": {"status_code": 500, "request_id": "x",
                        "body": {"error": {"message": "fake item failure", "type": "server_error"}}}})
            ));
            continue;
        }
        ok_n += 1;
        let agent = agent_of(messages);
        let mut content = default_content(&s.target, agent, messages);
        let mut finish = "stop";
        if agent == booktr::agents::Agent::Translation && s.cut.load(Ordering::SeqCst) {
            let half = content.char_indices().nth(content.chars().count() / 2);
            content.truncate(half.map_or(0, |(i, _)| i));
            finish = "length";
        }
        let (p, c) = usage_tokens(messages, &content);
        out.push_str(&format!(
            "{}\n",
            json!({"id": format!("r-{custom_id}"), "custom_id": custom_id, "error": null,
                "response": {"status_code": 200, "request_id": "x", "body": {
                    "id": "chatcmpl-fake", "object": "chat.completion", "model": "fake-model",
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                        "finish_reason": finish}],
                    "usage": {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}}}})
        ));
    }
    let mut v = json!({"id": id, "object": "batch", "status": "completed",
        "request_counts": {"total": total, "completed": ok_n, "failed": failed_n}});
    let mut files = s.files.lock().unwrap();
    if ok_n > 0 {
        files.insert(format!("{id}-out"), out.into_bytes());
        v["output_file_id"] = json!(format!("{id}-out"));
    }
    if failed_n > 0 {
        files.insert(format!("{id}-err"), err.into_bytes());
        v["error_file_id"] = json!(format!("{id}-err"));
    }
    Json(v).into_response()
}

async fn create_anthropic(
    State(s): State<Arc<Shared>>,
    h: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    record_key(&s, &h);
    if h.get("anthropic-version").is_none() {
        return bad("anthropic-version header required");
    }
    let (mut items, mut bodies) = (Vec::new(), Vec::new());
    for r in body["requests"].as_array().into_iter().flatten() {
        let params = &r["params"];
        if params["stream"] == true || params["max_tokens"].as_u64().is_none() {
            return bad("params must not stream and must set max_tokens");
        }
        items.push((
            r["custom_id"].as_str().unwrap_or("").to_string(),
            flatten(params),
        ));
        bodies.push(params.clone());
    }
    if items.is_empty() {
        return bad("requests: empty");
    }
    let id = format!("msgbatch_{}", s.next.fetch_add(1, Ordering::SeqCst));
    let n = items.len();
    s.batches.lock().unwrap().push(SubmittedBatch {
        id: id.clone(),
        api: "anthropic",
        items,
        bodies,
    });
    Json(
        json!({"id": id, "type": "message_batch", "processing_status": "in_progress",
        "request_counts": {"processing": n, "succeeded": 0, "errored": 0, "canceled": 0,
            "expired": 0}}),
    )
    .into_response()
}

async fn poll_anthropic(
    State(s): State<Arc<Shared>>,
    h: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    record_key(&s, &h);
    s.polls.fetch_add(1, Ordering::SeqCst);
    let Some(b) = find(&s, &id) else {
        return (StatusCode::NOT_FOUND, "no such batch").into_response();
    };
    let n = b.items.len();
    if s.hold.load(Ordering::SeqCst) {
        return Json(
            json!({"id": id, "type": "message_batch", "processing_status": "in_progress",
            "request_counts": {"processing": n, "succeeded": 0, "errored": 0, "canceled": 0,
                "expired": 0}}),
        )
        .into_response();
    }
    let host = h
        .get("host")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("127.0.0.1");
    Json(
        json!({"id": id, "type": "message_batch", "processing_status": "ended",
        "request_counts": {"processing": 0, "succeeded": n, "errored": 0, "canceled": 0,
            "expired": 0},
        "results_url": format!("http://{host}/v1/messages/batches/{id}/results")}),
    )
    .into_response()
}

async fn results_anthropic(
    State(s): State<Arc<Shared>>,
    h: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    record_key(&s, &h);
    let Some(b) = find(&s, &id) else {
        return (StatusCode::NOT_FOUND, "no such batch").into_response();
    };
    let fail_if = s.fail_if.lock().unwrap().clone();
    let mut out = String::new();
    for ((custom_id, messages), params) in b.items.iter().zip(&b.bodies) {
        let line = if fail_if(custom_id, messages) {
            json!({"custom_id": custom_id, "result": {"type": "errored", "error": {
                "type": "error", "error": {"type": "api_error", "message": "fake item failure"}}}})
        } else {
            let agent = agent_of(messages);
            let content = default_content(&s.target, agent, messages);
            let (p, c) = usage_tokens(messages, &content);
            let tool = params.get("tool_choice").is_some();
            json!({"custom_id": custom_id, "result": {"type": "succeeded", "message":
                message_json("fake-claude", &content, tool,
                    json!({"input_tokens": p, "output_tokens": c,
                        "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}))}})
        };
        out.push_str(&format!("{line}\n"));
    }
    out.into_response()
}
