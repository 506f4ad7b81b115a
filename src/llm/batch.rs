//! Provider batch APIs, for `run --batch`: many requests submitted at once, answered within a
//! day at about half the price.
//!
//! - **OpenAI-compatible** (<https://platform.openai.com/docs/guides/batch>,
//!   <https://platform.openai.com/docs/api-reference/batch>): the requests are uploaded as a
//!   JSONL file (`POST {base}/files`, multipart, `purpose=batch`; one line
//!   `{custom_id, method: "POST", url: "/v1/chat/completions", body}` per request, the body as
//!   streamed calls send it minus the streaming fields), a batch is created over it
//!   (`POST {base}/batches` with `endpoint: /v1/chat/completions`, `completion_window: 24h`),
//!   polled (`GET {base}/batches/{id}`) until `completed`, `failed`, `expired` or `cancelled`,
//!   and its `output_file_id` and `error_file_id` are downloaded
//!   (`GET {base}/files/{id}/content`).
//! - **Anthropic Message Batches**
//!   (<https://docs.anthropic.com/en/docs/build-with-claude/batch-processing>):
//!   `POST /v1/messages/batches` with `{requests: [{custom_id, params}]}`, polled until
//!   `processing_status` is `ended`, results read from its `results_url` (JSONL,
//!   `result.type` = `succeeded` | `errored` | `canceled` | `expired`).
//!
//! Every HTTP request here goes through the same retry policy as streamed calls
//! ([`super::call::send_json`]). Item failures are not errors of the batch: they come back as
//! [`ItemResult`]s with an error text, and the campaign sends those requests again as normal
//! calls.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::error::{LlmError, ProviderMessage};
use super::types::{Answer, Request, Usage};
use super::{Provider, anthropic, call, openai, stream};

/// `custom_id`s must match `^[a-zA-Z0-9_-]{1,64}$` (Anthropic; OpenAI accepts those too).
pub fn custom_id(n: usize) -> String {
    format!("req-{n}")
}

/// A submitted batch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Submitted {
    /// The provider's batch id.
    pub id: String,
    /// The uploaded input file (OpenAI-compatible batches), for the journal.
    pub input_file: Option<String>,
}

/// Where a batch stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Poll {
    /// Still running: provider status and how many requests are finished of how many.
    Running {
        /// The provider's status word (`validating`, `in_progress`, `finalizing`, …).
        status: String,
        /// Requests finished (answered or failed).
        done: u64,
        /// Requests in the batch.
        total: u64,
    },
    /// Finished (completed, failed, expired or cancelled): what to download.
    Ended {
        /// The provider's final status (`completed`, `failed`, `expired`, `cancelled`,
        /// `ended`).
        status: String,
        /// File ids (OpenAI) or result URLs (Anthropic) holding the item results.
        files: Vec<String>,
    },
}

/// The result of one request of a batch.
#[derive(Debug, Clone)]
pub struct ItemResult {
    /// The id the request carried in the batch.
    pub custom_id: String,
    /// The answer, or why there is none (an HTTP error of the item, expiry, cancellation).
    pub outcome: Result<Answer, ProviderMessage>,
}

fn decode(e: impl std::fmt::Display, raw: &str) -> LlmError {
    LlmError::Decode {
        message: e.to_string(),
        raw: crate::util::excerpt(raw, 2000),
    }
}

fn str_field(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(String::from)
}

impl Provider {
    /// Whether this provider has a batch API booktr can use.
    pub fn supports_batch(&self) -> bool {
        matches!(self, Provider::Openai(_) | Provider::Anthropic(_))
    }

    /// Submits `items` (`custom_id`, request) as one batch.
    ///
    /// Errors: any [`LlmError`] of the upload or creation after retries; a provider without a
    /// batch API gives [`LlmError::Empty`] with an explanation.
    pub async fn submit_batch(&self, items: &[(String, Request)]) -> Result<Submitted, LlmError> {
        match self {
            Provider::Openai(c) => openai_submit(c, items).await,
            Provider::Anthropic(c) => anthropic_submit(c, items).await,
            Provider::Local(_) => Err(no_batch()),
        }
    }

    /// Asks where batch `id` stands.
    pub async fn poll_batch(&self, id: &str) -> Result<Poll, LlmError> {
        match self {
            Provider::Openai(c) => openai_poll(c, id).await,
            Provider::Anthropic(c) => anthropic_poll(c, id).await,
            Provider::Local(_) => Err(no_batch()),
        }
    }

    /// Downloads and reads the results in `files` (from [`Poll::Ended`]).
    pub async fn batch_results(&self, files: &[String]) -> Result<Vec<ItemResult>, LlmError> {
        let mut out = Vec::new();
        for f in files {
            let bytes = match self {
                Provider::Openai(c) => {
                    let url = format!("{}/files/{f}/content", c.base_url);
                    call::send_bytes(c.max_attempts, &url, c.request_timeout, || {
                        openai_auth(c, c.http.get(&url))
                    })
                    .await?
                }
                Provider::Anthropic(c) => {
                    call::send_bytes(c.max_attempts, f, c.request_timeout, || {
                        c.request(reqwest::Method::GET, f)
                    })
                    .await?
                }
                Provider::Local(_) => return Err(no_batch()),
            };
            let text = String::from_utf8_lossy(&bytes);
            for line in text.lines().filter(|l| !l.trim().is_empty()) {
                let v: Value = serde_json::from_str(line).map_err(|e| decode(e, line))?;
                out.push(match self {
                    Provider::Anthropic(_) => anthropic_item(&v),
                    _ => openai_item(&v),
                });
            }
        }
        Ok(out)
    }
}

fn no_batch() -> LlmError {
    LlmError::Empty(": the pseudo provider has no batch API".into())
}

fn openai_auth(c: &openai::OpenAiClient, rb: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
    match &c.key {
        Some(k) => rb.bearer_auth(k.expose()),
        None => rb,
    }
}

/// The JSONL input file of an OpenAI-compatible batch (pure; exposed for tests).
pub fn openai_jsonl(c: &openai::OpenAiClient, items: &[(String, Request)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (id, req) in items {
        let line = json!({
            "custom_id": id,
            "method": "POST",
            "url": "/v1/chat/completions",
            "body": c.plain_body(req, req.json_schema.is_some()),
        });
        out.extend_from_slice(line.to_string().as_bytes());
        out.push(b'\n');
    }
    out
}

async fn openai_submit(
    c: &openai::OpenAiClient,
    items: &[(String, Request)],
) -> Result<Submitted, LlmError> {
    let jsonl = openai_jsonl(c, items);
    let url = format!("{}/files", c.base_url);
    let file = call::send_json(c.max_attempts, &url, c.request_timeout, || {
        let part = reqwest::multipart::Part::bytes(jsonl.clone())
            .file_name("booktr-batch.jsonl")
            .mime_str("application/jsonl")
            .expect("a valid MIME type");
        let form = reqwest::multipart::Form::new()
            .text("purpose", "batch")
            .part("file", part);
        openai_auth(c, c.http.post(&url)).multipart(form)
    })
    .await?;
    let file_id = str_field(&file, "id").ok_or_else(|| decode("no file id", &file.to_string()))?;
    let url = format!("{}/batches", c.base_url);
    let body = json!({
        "input_file_id": file_id,
        "endpoint": "/v1/chat/completions",
        "completion_window": "24h",
        "metadata": {"created_by": "booktr"},
    });
    let batch = call::send_json(c.max_attempts, &url, c.request_timeout, || {
        openai_auth(c, c.http.post(&url)).json(&body)
    })
    .await?;
    let id = str_field(&batch, "id").ok_or_else(|| decode("no batch id", &batch.to_string()))?;
    Ok(Submitted {
        id,
        input_file: Some(file_id),
    })
}

async fn openai_poll(c: &openai::OpenAiClient, id: &str) -> Result<Poll, LlmError> {
    let url = format!("{}/batches/{id}", c.base_url);
    let v = call::send_json(c.max_attempts, &url, c.request_timeout, || {
        openai_auth(c, c.http.get(&url))
    })
    .await?;
    let status = str_field(&v, "status").unwrap_or_default();
    Ok(
        if matches!(
            status.as_str(),
            "completed" | "failed" | "expired" | "cancelled"
        ) {
            Poll::Ended {
                files: ["output_file_id", "error_file_id"]
                    .iter()
                    .filter_map(|k| str_field(&v, k))
                    .collect(),
                status,
            }
        } else {
            let counts = &v["request_counts"];
            Poll::Running {
                status,
                done: counts["completed"].as_u64().unwrap_or(0)
                    + counts["failed"].as_u64().unwrap_or(0),
                total: counts["total"].as_u64().unwrap_or(0),
            }
        },
    )
}

/// Reads one line of an OpenAI output or error file.
pub fn openai_item(v: &Value) -> ItemResult {
    let custom_id = str_field(v, "custom_id").unwrap_or_default();
    let outcome = (|| {
        if let Some(e) = v.get("error").filter(|e| !e.is_null()) {
            return Err(ProviderMessage(
                e.get("message").and_then(Value::as_str).map_or_else(
                    || e.to_string(),
                    |m| format!("{}: {m}", e["code"].as_str().unwrap_or("error")),
                ),
            ));
        }
        let resp = &v["response"];
        let code = resp["status_code"].as_u64().unwrap_or(0);
        if code != 200 {
            return Err(ProviderMessage(format!(
                "HTTP {code}: {}",
                crate::util::excerpt(&resp["body"].to_string(), 500)
            )));
        }
        chat_completion_answer(&resp["body"])
    })();
    ItemResult { custom_id, outcome }
}

/// Reads a non-streamed chat completion (`choices[0].message`, `usage`).
pub fn chat_completion_answer(body: &Value) -> Result<Answer, ProviderMessage> {
    let choice = &body["choices"][0];
    let msg = &choice["message"];
    let usage: Usage = serde_json::from_value::<stream::WireUsage>(body["usage"].clone())
        .map(|w| (&w).into())
        .unwrap_or_default();
    let answer = Answer {
        content: msg["content"].as_str().unwrap_or("").to_string(),
        reasoning: msg["reasoning_content"]
            .as_str()
            .or(msg["reasoning"].as_str())
            .unwrap_or("")
            .to_string(),
        tool_calls: Vec::new(),
        usage,
        finish_reason: str_field(choice, "finish_reason"),
        model: str_field(body, "model"),
        attempts: 1,
    };
    super::attempt::check_not_empty(answer).map_err(|e| ProviderMessage(e.to_string()))
}

fn anthropic_batches_url(c: &anthropic::AnthropicClient) -> String {
    format!("{}/batches", c.url)
}

async fn anthropic_submit(
    c: &anthropic::AnthropicClient,
    items: &[(String, Request)],
) -> Result<Submitted, LlmError> {
    let requests: Vec<Value> = items
        .iter()
        .map(|(id, req)| json!({"custom_id": id, "params": c.params(req, c.uses_tool(req))}))
        .collect();
    let body = json!({ "requests": requests });
    let url = anthropic_batches_url(c);
    let v = call::send_json(c.max_attempts, &url, c.request_timeout, || {
        c.request(reqwest::Method::POST, &url).json(&body)
    })
    .await?;
    let id = str_field(&v, "id").ok_or_else(|| decode("no batch id", &v.to_string()))?;
    Ok(Submitted {
        id,
        input_file: None,
    })
}

async fn anthropic_poll(c: &anthropic::AnthropicClient, id: &str) -> Result<Poll, LlmError> {
    let url = format!("{}/{id}", anthropic_batches_url(c));
    let v = call::send_json(c.max_attempts, &url, c.request_timeout, || {
        c.request(reqwest::Method::GET, &url)
    })
    .await?;
    let status = str_field(&v, "processing_status").unwrap_or_default();
    let counts = &v["request_counts"];
    let n = |k: &str| counts[k].as_u64().unwrap_or(0);
    Ok(if status == "ended" {
        Poll::Ended {
            status,
            files: str_field(&v, "results_url").into_iter().collect(),
        }
    } else {
        let done = n("succeeded") + n("errored") + n("canceled") + n("expired");
        Poll::Running {
            status,
            done,
            total: done + n("processing"),
        }
    })
}

/// Reads one line of a Message Batches results file.
pub fn anthropic_item(v: &Value) -> ItemResult {
    let custom_id = str_field(v, "custom_id").unwrap_or_default();
    let result = &v["result"];
    let outcome = match result["type"].as_str().unwrap_or("") {
        "succeeded" => anthropic::answer_from_message(&result["message"], true).and_then(|a| {
            super::attempt::check_not_empty(a).map_err(|e| ProviderMessage(e.to_string()))
        }),
        "errored" => Err(ProviderMessage(format!(
            "errored: {}",
            crate::util::excerpt(&result["error"].to_string(), 500)
        ))),
        other => Err(ProviderMessage(format!("request {other}"))),
    };
    ItemResult { custom_id, outcome }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openai_lines() {
        let ok = json!({"id": "r1", "custom_id": "req-0", "error": null, "response": {
            "status_code": 200, "body": {"model": "m", "choices": [{"index": 0,
            "message": {"role": "assistant", "content": "你好", "reasoning_content": "hm"},
            "finish_reason": "stop"}], "usage": {"prompt_tokens": 9, "completion_tokens": 2}}}});
        let r = openai_item(&ok);
        assert_eq!(r.custom_id, "req-0");
        let a = r.outcome.unwrap();
        assert_eq!((a.content.as_str(), a.reasoning.as_str()), ("你好", "hm"));
        assert_eq!(a.usage.prompt_tokens, 9);
        assert_eq!(a.finish_reason.as_deref(), Some("stop"));
        let failed = json!({"custom_id": "req-1", "response": {"status_code": 500,
            "body": {"error": {"message": "boom"}}}, "error": null});
        assert!(openai_item(&failed).outcome.unwrap_err().0.contains("500"));
        let expired = json!({"custom_id": "req-2", "response": null,
            "error": {"code": "batch_expired", "message": "not done in time"}});
        assert_eq!(
            openai_item(&expired).outcome.unwrap_err(),
            "batch_expired: not done in time"
        );
    }

    #[test]
    fn anthropic_lines() {
        let ok = json!({"custom_id": "req-0", "result": {"type": "succeeded", "message": {
            "model": "c", "content": [{"type": "text", "text": "好"}], "stop_reason": "end_turn",
            "usage": {"input_tokens": 3, "output_tokens": 1, "cache_read_input_tokens": 10}}}});
        let a = anthropic_item(&ok).outcome.unwrap();
        assert_eq!(a.content, "好");
        assert_eq!(a.usage.prompt_tokens, 13);
        let exp = json!({"custom_id": "req-1", "result": {"type": "expired"}});
        assert_eq!(anthropic_item(&exp).outcome.unwrap_err(), "request expired");
    }
}
