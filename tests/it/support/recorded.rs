//! Recorded answers of a real model, replayed by the fake server ([`super::fake_llm`]).
//!
//! A fixture file (`tests/fixtures/real-llm/<campaign>.jsonl`) holds one [`Exchange`] per line:
//! the [`request_key`] of a request, and the answer the real server gave it, either an HTTP
//! error (status and body) or the SSE stream as its list of `data:` payloads in the order the
//! server sent them, the usage chunk and `[DONE]` included. The key hashes the request's
//! `messages` (role and content of each) and nothing else, so changes to `max_tokens`,
//! `temperature`, `response_format`, `model` or `stream_options` keep the fixtures matching;
//! a change of any prompt text is a miss, and the replaying server answers HTTP 500 naming the
//! missing key (see [`super::fake_llm::FakeServer::misses`]).
//!
//! Size: the fields every chunk of one answer shares with the same value (llama.cpp repeats
//! `id`, `model`, `object` and `system_fingerprint` in each chunk, about 200 bytes a token) are
//! written once per answer as its `envelope` and put back into every chunk on loading. Nothing
//! else is changed; the replayed chunks are re-serialised, so only the order of keys inside a
//! chunk may differ from the wire.
//!
//! This module owns the file format only; recording (proxy mode) and replay live in
//! [`super::fake_llm`].

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Map, Value, json};

/// The fixture key of a request body (`/v1/chat/completions` JSON): the SHA-256 (hex, first
/// 24 characters = 96 bits) of the JSON array `[[role, content], …]` of its `messages`. Other
/// request fields are deliberately left out (see the module doc).
pub fn request_key(body: &Value) -> String {
    let pairs: Vec<Value> = body["messages"]
        .as_array()
        .map(|ms| {
            ms.iter()
                .map(|m| json!([m["role"], m["content"]]))
                .collect()
        })
        .unwrap_or_default();
    let bytes = serde_json::to_vec(&pairs).expect("json");
    booktr::util::sha256_hex(bytes)[..24].to_string()
}

/// A short, one-line preview of a request for messages about misses: the agent and the start
/// of its last message (at most 80 chars).
pub fn preview(agent: &str, body: &Value) -> String {
    let last = body["messages"]
        .as_array()
        .and_then(|ms| ms.last())
        .and_then(|m| m["content"].as_str())
        .unwrap_or("");
    let short: String = last
        .chars()
        .take(80)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    format!("{agent}: {short}")
}

/// One request and the answer the real server gave it.
#[derive(Debug, Clone, PartialEq)]
pub struct Exchange {
    /// [`request_key`] of the request.
    pub key: String,
    /// Arrival order (0-based) in the recording run.
    pub n: usize,
    /// [`preview`] of the request (information only; not used to match).
    pub preview: String,
    /// HTTP status of the answer.
    pub status: u16,
    /// Body of a non-200 answer (empty for a stream).
    pub error_body: String,
    /// The `data:` payloads of the SSE stream, in order: JSON chunks as text, and `[DONE]`.
    pub events: Vec<String>,
}

impl Exchange {
    /// The `usage` object of the stream's usage chunk (the last chunk carrying one), if any.
    pub fn usage(&self) -> Option<Value> {
        self.events
            .iter()
            .rev()
            .filter_map(|e| serde_json::from_str::<Value>(e).ok())
            .find_map(|v| v.get("usage").filter(|u| u.is_object()).cloned())
    }

    /// The streamed content, concatenated (for tests and debugging).
    pub fn content(&self) -> String {
        self.events
            .iter()
            .filter_map(|e| serde_json::from_str::<Value>(e).ok())
            .filter_map(|v| {
                v["choices"][0]["delta"]["content"]
                    .as_str()
                    .map(String::from)
            })
            .collect()
    }

    /// The line written to a fixture file (see the module doc for the envelope).
    fn to_line(&self) -> String {
        let parsed: Vec<Option<Map<String, Value>>> = self
            .events
            .iter()
            .map(|e| match serde_json::from_str::<Value>(e) {
                Ok(Value::Object(m)) => Some(m),
                _ => None,
            })
            .collect();
        let objects: Vec<&Map<String, Value>> = parsed.iter().flatten().collect();
        let mut envelope = Map::new();
        if let Some(first) = objects.first() {
            for (k, v) in first.iter() {
                if k == "choices" || k == "usage" {
                    continue;
                }
                if objects.iter().all(|o| o.get(k) == Some(v)) {
                    envelope.insert(k.clone(), v.clone());
                }
            }
        }
        // llama.cpp names the model by its file path; keep only the file name, so no path of
        // the recording machine (a home folder) is committed.
        if let Some(Value::String(m)) = envelope.get_mut("model") {
            *m = m.rsplit('/').next().unwrap_or_default().to_string();
        }
        let chunks: Vec<Value> = self
            .events
            .iter()
            .zip(&parsed)
            .map(|(raw, p)| match p {
                Some(m) => {
                    let mut m = m.clone();
                    m.retain(|k, _| !envelope.contains_key(k));
                    Value::Object(m)
                }
                None => Value::String(raw.clone()),
            })
            .collect();
        json!({"key": self.key, "n": self.n, "preview": self.preview, "status": self.status,
               "error_body": self.error_body, "envelope": envelope, "chunks": chunks})
        .to_string()
    }

    /// Parses a fixture line. Errors name the missing or malformed field.
    fn from_line(line: &str) -> Result<Exchange, String> {
        let v: Value = serde_json::from_str(line).map_err(|e| format!("not JSON: {e}"))?;
        let s = |k: &str| -> Result<String, String> {
            v[k].as_str()
                .map(String::from)
                .ok_or_else(|| format!("field `{k}` missing or not text"))
        };
        let envelope = v["envelope"].as_object().cloned().unwrap_or_default();
        let events = v["chunks"]
            .as_array()
            .ok_or("field `chunks` missing")?
            .iter()
            .map(|c| match c {
                Value::Object(m) => {
                    let mut m = m.clone();
                    for (k, val) in &envelope {
                        m.insert(k.clone(), val.clone());
                    }
                    Value::Object(m).to_string()
                }
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })
            .collect();
        Ok(Exchange {
            key: s("key")?,
            n: v["n"].as_u64().unwrap_or(0) as usize,
            preview: s("preview").unwrap_or_default(),
            status: v["status"].as_u64().ok_or("field `status` missing")? as u16,
            error_body: s("error_body").unwrap_or_default(),
            events,
        })
    }
}

/// Splits an SSE byte stream (as received) into its `data:` payloads, in order. Comment
/// lines and other fields are dropped; a multi-line `data` field is joined with `\n`.
pub fn sse_payloads(raw: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(raw).replace("\r\n", "\n");
    text.split("\n\n")
        .filter_map(|event| {
            let data: Vec<&str> = event
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(|d| d.strip_prefix(' ').unwrap_or(d))
                .collect();
            (!data.is_empty()).then(|| data.join("\n"))
        })
        .collect()
}

/// The exchanges of one fixture file, by key.
#[derive(Debug, Clone, Default)]
pub struct Fixtures {
    pub by_key: HashMap<String, Exchange>,
}

impl Fixtures {
    /// Loads `path`. Errors name the file and line, with the re-record remedy.
    pub fn load(path: &Path) -> Result<Fixtures, String> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            format!(
                "{}: {e}; record it with a real model (see tests/it/real_llm.rs)",
                path.display()
            )
        })?;
        let mut by_key = HashMap::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let ex = Exchange::from_line(line)
                .map_err(|e| format!("{} line {}: {e}", path.display(), i + 1))?;
            by_key.entry(ex.key.clone()).or_insert(ex);
        }
        Ok(Fixtures { by_key })
    }

    /// Writes `exchanges` to `path` (one line each, in arrival order, the first answer of a
    /// repeated key only), replacing the file.
    pub fn save(path: &Path, exchanges: &[Exchange]) -> std::io::Result<()> {
        let mut sorted: Vec<&Exchange> = exchanges.iter().collect();
        sorted.sort_by_key(|e| e.n);
        let mut seen = std::collections::HashSet::new();
        let mut out = String::new();
        for e in sorted {
            if seen.insert(e.key.clone()) {
                out.push_str(&e.to_line());
                out.push('\n');
            }
        }
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(path, out)
    }

    pub fn get(&self, key: &str) -> Option<&Exchange> {
        self.by_key.get(key)
    }

    pub fn len(&self) -> usize {
        self.by_key.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_key.is_empty()
    }
}
