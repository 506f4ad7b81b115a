//! The Anthropic Messages API client: `POST {base}/v1/messages` with `stream: true`, parsed as
//! SSE by `eventsource-stream` (<https://docs.anthropic.com/en/api/messages-streaming>).
//!
//! - **Requests**: the system messages become the top-level `system` parameter, one text block
//!   marked `cache_control: {type: ephemeral}`: the instructions every request of an agent
//!   shares are the stable prefix that Anthropic's prompt cache serves at a tenth of the input
//!   price (<https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching>; prefixes under
//!   the model's minimum, 1,024 tokens for most models, are simply not cached). Consecutive
//!   messages of one role are merged into one turn of several text blocks. `max_tokens` is
//!   required by the API: the request's, else the plan's, else [`DEFAULT_MAX_TOKENS`].
//! - **Structured output**: the API has no `response_format`. A request with a JSON schema
//!   gets one tool whose `input_schema` is the schema, forced with `tool_choice`, and the tool's
//!   input becomes the answer's content. If the endpoint rejects tools (HTTP 400 naming them),
//!   the rest of the run asks for JSON in the prompt only (as with [`JsonMode::Prompt`]).
//! - **Stream events**: `message_start` (model, input usage), `content_block_start` /
//!   `content_block_delta` / `content_block_stop` by block index (`text_delta`,
//!   `thinking_delta`: reasoning, never part of the content, `input_json_delta`: tool input
//!   fragments, `signature_delta`: ignored), `message_delta` (stop reason, cumulative usage),
//!   `message_stop`, `ping`, and `error` (an in-stream failure, retried). Unknown events are
//!   ignored, as the API's versioning policy asks.
//! - **Usage**: `prompt_tokens` = `input_tokens` + `cache_creation_input_tokens` +
//!   `cache_read_input_tokens` (Anthropic's `input_tokens` excludes cached ones), `cached_tokens`
//!   = reads, `cache_creation_tokens` = writes.
//! - **Retries and rate limits**: the same driver as the OpenAI-compatible client
//!   ([`super::call::with_retries`]): 429 waits with `Retry-After`, 529 (overloaded) and other
//!   5xx retried with backoff, 400/401/403/404 final; account problems (`billing_error`,
//!   `authentication_error`, `permission_error`, "credit balance is too low") stop the
//!   campaign ([`super::error::account_problem`]).
//! - **Runaway replies**: the stream is read under [`super::runaway::Guard`] (text, thinking and
//!   tool-input deltas); a reply that repeats itself or outgrows `max_tokens` is dropped and
//!   returned as [`LlmError::Runaway`].

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};

use super::ProviderPlan;
use super::attempt;
use super::call::{self, ApiKey};
use super::error::{LlmError, ProviderMessage};
use super::presets::JsonMode;
use super::runaway::{Channel, Guard};
use super::types::{Answer, CallOptions, Request, Role, ToolCall, Usage};

/// The `anthropic-version` header sent with every request.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// `max_tokens` when neither the request nor the campaign sets one: 8,192 tokens, the output
/// limit of the Claude 3.5 models (later models allow more; raise it with `max_tokens` or
/// `max_output_tokens`).
pub const DEFAULT_MAX_TOKENS: u32 = 8192;

/// Name of the tool that carries structured answers.
pub const JSON_TOOL: &str = "give_answer";

/// `{base}/v1/messages`, or `{base}/messages` when the base already ends in `/v1`.
pub fn messages_url(base_url: &str) -> String {
    let base = base_url.trim_end_matches('/');
    if base.ends_with("/v1") {
        format!("{base}/messages")
    } else {
        format!("{base}/v1/messages")
    }
}

/// Client for one endpoint and model.
#[derive(Debug)]
pub struct AnthropicClient {
    pub(crate) http: reqwest::Client,
    /// `{base}/v1/messages`.
    pub(crate) url: String,
    pub(crate) key: Option<ApiKey>,
    model: String,
    temperature: Option<f64>,
    max_tokens: Option<u32>,
    pub(crate) max_attempts: u32,
    pub(crate) request_timeout: Duration,
    idle_timeout: Duration,
    /// Cleared when the endpoint rejects tools; then JSON is asked for in the prompt only.
    tools_ok: AtomicBool,
    /// Cleared when a continuation came back as a new reply (see [`super::continuation`]).
    pub(crate) continuation_ok: AtomicBool,
    /// Rate limits and congestion signals shared by every request.
    pub limits: super::limits::Limits,
}

impl AnthropicClient {
    /// Builds a client from the plan, reading the key from `plan.api_key_env`.
    ///
    /// Errors: [`LlmError::MissingKey`] when the variable is unset or empty and the endpoint is
    /// not local.
    pub fn new(plan: &ProviderPlan) -> Result<Self, LlmError> {
        Ok(AnthropicClient {
            key: call::read_key(plan)?,
            http: call::http_client(plan)?,
            url: messages_url(&plan.base_url),
            model: plan.model.clone(),
            temperature: plan.temperature,
            max_tokens: plan.max_tokens,
            max_attempts: plan.max_attempts,
            request_timeout: Duration::from_secs(plan.request_timeout_s),
            idle_timeout: Duration::from_secs(plan.stream_idle_timeout_s),
            tools_ok: AtomicBool::new(plan.quirks.json_mode == JsonMode::Schema),
            continuation_ok: AtomicBool::new(
                plan.quirks.continuation != super::presets::Continuation::None,
            ),
            limits: super::limits::Limits::new(
                plan.max_requests_per_minute,
                plan.max_tokens_per_minute,
            ),
        })
    }

    /// Whether `req` is sent with the JSON tool now.
    /// A continuation ([`Request::prefill`]) never does: Anthropic does not let a forced tool
    /// call follow an assistant prefill, so the cut JSON is continued as text.
    pub(crate) fn uses_tool(&self, req: &Request) -> bool {
        req.prefill.is_none()
            && req
                .json_schema
                .as_ref()
                .is_some_and(|s| s.schema.get("type").and_then(Value::as_str) == Some("object"))
            && self.tools_ok.load(Ordering::Relaxed)
    }

    /// The request body without `stream` (what a Message Batches request's `params` carry;
    /// pure, exposed for tests).
    pub fn params(&self, req: &Request, use_tool: bool) -> Value {
        let system: Vec<&str> = req
            .messages
            .iter()
            .filter(|m| m.role == Role::System)
            .map(|m| m.content.as_str())
            .collect();
        let mut turns: Vec<(Role, Vec<Value>)> = Vec::new();
        for m in req.messages.iter().filter(|m| m.role != Role::System) {
            let block = json!({"type": "text", "text": m.content});
            match turns.last_mut() {
                Some((role, blocks)) if *role == m.role => blocks.push(block),
                _ => turns.push((m.role, vec![block])),
            }
        }
        if let Some(prefill) = &req.prefill {
            // The API refuses a final assistant turn that ends in white space
            // ("final assistant content cannot end with trailing whitespace"):
            // [`prefill_as_sent`] is what goes out, and what the continuation follows.
            let block = json!({"type": "text", "text": prefill_as_sent(prefill)});
            match turns.last_mut() {
                Some((Role::Assistant, blocks)) => blocks.push(block),
                _ => turns.push((Role::Assistant, vec![block])),
            }
        }
        let messages: Vec<Value> = turns
            .into_iter()
            .map(|(role, content)| {
                let role = if role == Role::Assistant {
                    "assistant"
                } else {
                    "user"
                };
                json!({"role": role, "content": content})
            })
            .collect();
        let mut body = json!({
            "model": self.model,
            "max_tokens": req.max_tokens.or(self.max_tokens).unwrap_or(DEFAULT_MAX_TOKENS),
            "messages": messages,
        });
        if !system.is_empty() {
            body["system"] = json!([{
                "type": "text",
                "text": system.join("\n\n"),
                "cache_control": {"type": "ephemeral"},
            }]);
        }
        if let Some(t) = self.temperature {
            body["temperature"] = json!(t);
        }
        if let (true, Some(schema)) = (use_tool, &req.json_schema) {
            body["tools"] = json!([{
                "name": JSON_TOOL,
                "description": format!("Give the answer (`{}`) as this tool's input.", schema.name),
                "input_schema": schema.schema,
            }]);
            body["tool_choice"] = json!({"type": "tool", "name": JSON_TOOL});
        }
        body
    }

    /// The streaming request body (pure; exposed for tests).
    pub fn body(&self, req: &Request, use_tool: bool) -> Value {
        self.body_with(req, use_tool, CallOptions::default())
    }

    /// [`AnthropicClient::body`] with per-call overrides (a retry's lower temperature).
    pub fn body_with(&self, req: &Request, use_tool: bool, opts: CallOptions) -> Value {
        let mut body = self.params(req, use_tool);
        body["stream"] = json!(true);
        if let Some(t) = opts.temperature {
            body["temperature"] = json!(t);
        }
        body
    }

    /// The temperature of the campaign (`None`: the provider's default).
    pub fn temperature(&self) -> Option<f64> {
        self.temperature
    }

    /// A request to `url` with the key and version headers.
    pub(crate) fn request(&self, method: reqwest::Method, url: &str) -> reqwest::RequestBuilder {
        let mut rb = self
            .http
            .request(method, url)
            .header("anthropic-version", ANTHROPIC_VERSION);
        if let Some(k) = &self.key {
            rb = rb.header("x-api-key", k.expose());
        }
        rb
    }

    /// Sends `req` with retries through the shared attempt loop (`attempt::complete`; see
    /// the module docs). `Answer::attempts` counts every HTTP request made.
    pub async fn complete(&self, req: &Request) -> Result<Answer, LlmError> {
        self.complete_with(req, CallOptions::default()).await
    }

    /// [`AnthropicClient::complete`] with per-call overrides.
    pub async fn complete_with(
        &self,
        req: &Request,
        opts: CallOptions,
    ) -> Result<Answer, LlmError> {
        attempt::complete(self, req, opts).await
    }
}

/// What differs for the Messages API: the version and key headers, message events, and the
/// forced JSON tool as the feature an endpoint may reject (then JSON is asked for in the
/// prompt).
impl attempt::Endpoint for AnthropicClient {
    type Reader = EventReader;

    fn settings(&self) -> attempt::Settings<'_> {
        attempt::Settings {
            url: &self.url,
            max_attempts: self.max_attempts,
            request_timeout: self.request_timeout,
            idle_timeout: self.idle_timeout,
            limits: &self.limits,
            default_max_tokens: self.max_tokens.or(Some(DEFAULT_MAX_TOKENS)),
        }
    }

    fn uses_feature(&self, req: &Request) -> bool {
        self.uses_tool(req)
    }

    fn rejects_feature(&self, body: &str) -> bool {
        body.contains("tool") || body.contains("input_schema")
    }

    fn drop_feature(&self) {
        tracing::info!("the endpoint rejects tools; asking for JSON in the prompt from now on");
        self.tools_ok.store(false, Ordering::Relaxed);
    }

    fn request(
        &self,
        req: &Request,
        use_feature: bool,
        opts: CallOptions,
    ) -> reqwest::RequestBuilder {
        self.request(reqwest::Method::POST, &self.url)
            .json(&self.body_with(req, use_feature, opts))
    }

    fn reader(&self, use_feature: bool) -> EventReader {
        EventReader {
            acc: MessageAccumulator::default(),
            json_tool: use_feature,
            url: self.url.clone(),
        }
    }
}

/// Reads Messages API events; the stream is complete at `message_stop`.
#[derive(Debug)]
pub(crate) struct EventReader {
    acc: MessageAccumulator,
    /// Whether the request carried the JSON tool (its input is then the content).
    json_tool: bool,
    /// The endpoint, for in-stream errors.
    url: String,
}

impl attempt::StreamReader for EventReader {
    fn read(&mut self, data: &str, guard: &mut Guard) -> Result<bool, attempt::Stop> {
        let ev: StreamEvent =
            serde_json::from_str(data).map_err(|e| attempt::decode_error(e, data))?;
        let runaway = match &ev {
            StreamEvent::ContentBlockDelta { delta, .. } => match delta {
                Delta::TextDelta { text } => guard.observe(Channel::Content, text),
                Delta::ThinkingDelta { thinking } => guard.observe(Channel::Reasoning, thinking),
                Delta::InputJsonDelta { partial_json } => {
                    guard.observe(Channel::ToolArguments, partial_json)
                }
                Delta::Other => None,
            },
            _ => None,
        };
        if let Some(r) = runaway {
            return Err(attempt::Stop::Runaway(r));
        }
        self.acc
            .push(ev)
            .map_err(|t| LlmError::in_stream(t.0, &self.url))?;
        Ok(self.acc.stopped)
    }

    fn finish(self) -> Result<Answer, LlmError> {
        if !self.acc.stopped {
            return Err(LlmError::StreamBroken(format!(
                "the stream ended after {} events without message_stop",
                self.acc.events
            )));
        }
        Ok(self.acc.finish(1, self.json_tool))
    }
}

/// The prefill as this client sends it: without trailing white space, which the Messages API
/// refuses in a final assistant turn. A continuation follows these bytes.
pub fn prefill_as_sent(prefill: &str) -> &str {
    prefill.trim_end()
}

/// One `data:` payload of the stream (its `type` names the event).
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StreamEvent {
    /// The message begins: model and input usage.
    MessageStart {
        /// The message so far (no content yet).
        message: WireMessage,
    },
    /// A content block (text, thinking, tool use) begins.
    ContentBlockStart {
        /// The block's position in the message.
        index: u32,
        /// The block as it starts.
        content_block: Block,
    },
    /// A fragment of a block.
    ContentBlockDelta {
        /// The block's position in the message.
        index: u32,
        /// The fragment.
        delta: Delta,
    },
    /// A block is complete.
    ContentBlockStop {
        /// The block's position in the message.
        index: u32,
    },
    /// Top-level changes: the stop reason and cumulative usage.
    MessageDelta {
        /// The stop reason.
        #[serde(default)]
        delta: MessageDeltaBody,
        /// Cumulative usage.
        #[serde(default)]
        usage: Option<WireUsage>,
    },
    /// The end of the stream.
    MessageStop,
    /// Keep-alive.
    Ping,
    /// A failure in the stream (e.g. `overloaded_error`); the attempt is retried.
    Error {
        /// `{type, message}`.
        #[serde(default)]
        error: Value,
    },
    /// Events added to the API later.
    #[serde(other)]
    Unknown,
}

/// The message of `message_start` (and of a non-streamed answer, with its content).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct WireMessage {
    /// The model that answered.
    pub model: Option<String>,
    /// Content blocks (empty at `message_start`).
    pub content: Vec<Block>,
    /// Why generation stopped (null at `message_start`).
    pub stop_reason: Option<String>,
    /// Usage so far.
    pub usage: Option<WireUsage>,
}

/// A content block as it starts (streamed: empty text / input; non-streamed: complete).
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Block {
    /// Visible text (the translation).
    Text {
        /// The text (empty when streamed).
        #[serde(default)]
        text: String,
    },
    /// Extended-thinking text: reasoning, never part of the content.
    Thinking {
        /// The reasoning (empty when streamed).
        #[serde(default)]
        thinking: String,
    },
    /// A tool call; the [`JSON_TOOL`] call carries structured answers.
    ToolUse {
        /// The call id.
        #[serde(default)]
        id: String,
        /// The tool's name.
        #[serde(default)]
        name: String,
        /// The tool's input (`{}` when streamed; complete in a batch result).
        #[serde(default)]
        input: Value,
    },
    /// Block types booktr does not use (e.g. `redacted_thinking`).
    #[serde(other)]
    Other,
}

/// A `content_block_delta` payload.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Delta {
    /// More visible text.
    TextDelta {
        /// The fragment.
        text: String,
    },
    /// More reasoning.
    ThinkingDelta {
        /// The fragment.
        thinking: String,
    },
    /// A fragment of a tool call's input JSON.
    InputJsonDelta {
        /// The fragment (not valid JSON on its own).
        partial_json: String,
    },
    /// `signature_delta` and later kinds: ignored.
    #[serde(other)]
    Other,
}

/// The `delta` of a `message_delta` event.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct MessageDeltaBody {
    /// `end_turn`, `max_tokens`, `stop_sequence`, `tool_use`, …
    pub stop_reason: Option<String>,
}

/// Anthropic's usage object, in tokens. `message_delta` carries cumulative figures; fields it
/// leaves out keep their `message_start` values.
#[derive(Debug, Default, Clone, Copy, Deserialize)]
#[serde(default)]
pub struct WireUsage {
    /// Input tokens neither written to nor read from the cache.
    pub input_tokens: Option<u64>,
    /// Output tokens (thinking included).
    pub output_tokens: Option<u64>,
    /// Input tokens written to the prompt cache.
    pub cache_creation_input_tokens: Option<u64>,
    /// Input tokens read from the prompt cache.
    pub cache_read_input_tokens: Option<u64>,
}

impl WireUsage {
    fn merge(&mut self, o: &WireUsage) {
        self.input_tokens = o.input_tokens.or(self.input_tokens);
        self.output_tokens = o.output_tokens.or(self.output_tokens);
        self.cache_creation_input_tokens = o
            .cache_creation_input_tokens
            .or(self.cache_creation_input_tokens);
        self.cache_read_input_tokens = o.cache_read_input_tokens.or(self.cache_read_input_tokens);
    }
}

impl From<&WireUsage> for Usage {
    fn from(w: &WireUsage) -> Usage {
        let created = w.cache_creation_input_tokens.unwrap_or(0);
        let read = w.cache_read_input_tokens.unwrap_or(0);
        Usage {
            prompt_tokens: w.input_tokens.unwrap_or(0) + created + read,
            completion_tokens: w.output_tokens.unwrap_or(0),
            cached_tokens: read,
            reasoning_tokens: 0,
            cache_creation_tokens: created,
        }
    }
}

#[derive(Debug)]
enum BlockAcc {
    Text(String),
    Thinking(String),
    Tool(ToolCall, Value),
    Other,
}

/// Accumulates stream events (by block index) into an [`Answer`]. Pure; also reads
/// non-streamed messages ([`answer_from_message`]).
#[derive(Debug, Default)]
pub struct MessageAccumulator {
    blocks: BTreeMap<u32, BlockAcc>,
    usage: WireUsage,
    stop_reason: Option<String>,
    model: Option<String>,
    /// Whether `message_stop` arrived.
    pub stopped: bool,
    /// Events seen.
    pub events: usize,
}

impl MessageAccumulator {
    /// Adds one event. Returns the error text of an `error` event.
    pub fn push(&mut self, ev: StreamEvent) -> Result<(), ProviderMessage> {
        self.events += 1;
        match ev {
            StreamEvent::MessageStart { message } => {
                self.model = message.model;
                if let Some(u) = &message.usage {
                    self.usage.merge(u);
                }
                for (i, b) in message.content.into_iter().enumerate() {
                    self.start_block(i as u32, b);
                }
                if message.stop_reason.is_some() {
                    self.stop_reason = message.stop_reason;
                }
            }
            StreamEvent::ContentBlockStart {
                index,
                content_block,
            } => self.start_block(index, content_block),
            StreamEvent::ContentBlockDelta { index, delta } => {
                let block = self.blocks.entry(index).or_insert_with(|| match &delta {
                    Delta::ThinkingDelta { .. } => BlockAcc::Thinking(String::new()),
                    Delta::InputJsonDelta { .. } => BlockAcc::Tool(
                        ToolCall {
                            index,
                            ..Default::default()
                        },
                        Value::Null,
                    ),
                    _ => BlockAcc::Text(String::new()),
                });
                match (block, delta) {
                    (BlockAcc::Text(s), Delta::TextDelta { text }) => s.push_str(&text),
                    (BlockAcc::Thinking(s), Delta::ThinkingDelta { thinking }) => {
                        s.push_str(&thinking)
                    }
                    (BlockAcc::Tool(t, _), Delta::InputJsonDelta { partial_json }) => {
                        t.arguments.push_str(&partial_json)
                    }
                    _ => {}
                }
            }
            StreamEvent::MessageDelta { delta, usage } => {
                if delta.stop_reason.is_some() {
                    self.stop_reason = delta.stop_reason;
                }
                if let Some(u) = &usage {
                    self.usage.merge(u);
                }
            }
            StreamEvent::MessageStop => self.stopped = true,
            StreamEvent::Error { error } => {
                let msg = error
                    .get("message")
                    .and_then(Value::as_str)
                    .map(String::from)
                    .unwrap_or_else(|| error.to_string());
                let kind = error.get("type").and_then(Value::as_str).unwrap_or("error");
                return Err(ProviderMessage(format!("{kind}: {msg}")));
            }
            StreamEvent::ContentBlockStop { .. } | StreamEvent::Ping | StreamEvent::Unknown => {}
        }
        Ok(())
    }

    fn start_block(&mut self, index: u32, b: Block) {
        let acc = match b {
            Block::Text { text } => BlockAcc::Text(text),
            Block::Thinking { thinking } => BlockAcc::Thinking(thinking),
            Block::ToolUse { id, name, input } => BlockAcc::Tool(
                ToolCall {
                    index,
                    id,
                    name,
                    arguments: String::new(),
                },
                input,
            ),
            Block::Other => BlockAcc::Other,
        };
        self.blocks.insert(index, acc);
    }

    /// The answer. Text blocks in index order are the content, thinking blocks the reasoning.
    /// With `json_tool`, the input of the [`JSON_TOOL`] call is the content. Stop reasons are
    /// mapped to OpenAI's finish reasons where the campaign acts on them (`end_turn` and
    /// `stop_sequence` → `stop`, `max_tokens` → `length`, `tool_use` → `tool_calls`); others
    /// are kept as sent.
    pub fn finish(self, attempts: u32, json_tool: bool) -> Answer {
        let mut content = String::new();
        let mut reasoning = String::new();
        let mut tool_calls = Vec::new();
        for (_, b) in self.blocks {
            match b {
                BlockAcc::Text(t) => content.push_str(&t),
                BlockAcc::Thinking(t) => reasoning.push_str(&t),
                BlockAcc::Tool(mut t, input) => {
                    // A non-streamed block (or a streamed one whose input came whole) carries
                    // its input in the start block.
                    if t.arguments.trim().is_empty()
                        && input.as_object().is_some_and(|o| !o.is_empty())
                    {
                        t.arguments = input.to_string();
                    }
                    tool_calls.push(t);
                }
                BlockAcc::Other => {}
            }
        }
        if json_tool && let Some(t) = tool_calls.iter().find(|t| t.name == JSON_TOOL) {
            content = t.arguments.clone();
        }
        let finish_reason = self.stop_reason.map(|r| {
            match r.as_str() {
                "end_turn" | "stop_sequence" => "stop",
                "max_tokens" => "length",
                "tool_use" => "tool_calls",
                other => other,
            }
            .to_string()
        });
        Answer {
            content,
            reasoning,
            tool_calls,
            usage: (&self.usage).into(),
            finish_reason,
            model: self.model,
            attempts,
        }
    }
}

/// Reads a complete (non-streamed) message, as Message Batches return them.
///
/// Errors: a description when `v` is not a message.
pub fn answer_from_message(v: &Value, json_tool: bool) -> Result<Answer, ProviderMessage> {
    let message: WireMessage = serde_json::from_value(v.clone())
        .map_err(|e| ProviderMessage(format!("not a message: {e}")))?;
    let mut acc = MessageAccumulator::default();
    acc.push(StreamEvent::MessageStart { message })?;
    Ok(acc.finish(1, json_tool))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::{JsonSchema, Message, Task};

    fn ev(j: &str) -> StreamEvent {
        serde_json::from_str(j).unwrap()
    }

    #[test]
    fn accumulates_a_stream_by_block_index() {
        let mut acc = MessageAccumulator::default();
        for j in [
            r#"{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"model":"claude-x","stop_reason":null,"usage":{"input_tokens":12,"cache_creation_input_tokens":0,"cache_read_input_tokens":1500,"output_tokens":1}}}"#,
            r#"{"type":"ping"}"#,
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me "}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"think."}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"abc"}}"#,
            r#"{"type":"content_block_stop","index":0}"#,
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}"#,
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"你好"}}"#,
            r#"{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"t1","name":"give_answer","input":{}}}"#,
            r#"{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"a\":"}}"#,
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"，世界"}}"#,
            r#"{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"1}"}}"#,
            r#"{"type":"some_future_event","x":1}"#,
            r#"{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":42}}"#,
            r#"{"type":"message_stop"}"#,
        ] {
            acc.push(ev(j)).unwrap();
        }
        assert!(acc.stopped);
        let a = acc.finish(1, false);
        assert_eq!(a.content, "你好，世界");
        assert_eq!(a.reasoning, "Let me think.");
        assert_eq!(a.tool_calls.len(), 1);
        assert_eq!(a.tool_calls[0].arguments, "{\"a\":1}");
        assert_eq!(a.usage.prompt_tokens, 1512);
        assert_eq!(a.usage.cached_tokens, 1500);
        assert_eq!(a.usage.completion_tokens, 42);
        assert_eq!(a.finish_reason.as_deref(), Some("stop"));
        assert_eq!(a.model.as_deref(), Some("claude-x"));
    }

    /// Splits `s` at the given char positions (sorted, deduplicated, in range).
    fn split_at_chars(s: &str, cuts: &[usize]) -> Vec<String> {
        let chars: Vec<char> = s.chars().collect();
        let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (chars.len() + 1)).collect();
        cuts.sort_unstable();
        cuts.dedup();
        let mut out = Vec::new();
        let mut from = 0;
        for c in cuts.into_iter().chain([chars.len()]) {
            out.push(chars[from..c].iter().collect());
            from = c;
        }
        out
    }

    proptest::proptest! {
        /// Accumulation is lossless: any text and reasoning, cut into deltas anywhere (as
        /// serialized on the wire and parsed back), come out exactly, whatever the order in
        /// which the two blocks' deltas interleave.
        #[test]
        fn accumulation_is_lossless(
            text in "\\PC{0,80}",
            thinking in "\\PC{0,40}",
            cuts in proptest::collection::vec(0usize..100, 0..8),
            interleave in proptest::bool::ANY,
        ) {
            let mut acc = MessageAccumulator::default();
            acc.push(ev(r#"{"type":"message_start","message":{"model":"m","content":[],"usage":{"input_tokens":3}}}"#)).unwrap();
            acc.push(ev(r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}"#)).unwrap();
            acc.push(ev(r#"{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}"#)).unwrap();
            let t: Vec<String> = split_at_chars(&text, &cuts);
            let r: Vec<String> = split_at_chars(&thinking, &cuts);
            let delta = |i: u32, kind: &str, field: &str, part: &str| {
                ev(&json!({"type": "content_block_delta", "index": i,
                    "delta": {"type": kind, field: part}}).to_string())
            };
            if interleave {
                for i in 0..t.len().max(r.len()) {
                    if let Some(p) = t.get(i) { acc.push(delta(1, "text_delta", "text", p)).unwrap(); }
                    if let Some(p) = r.get(i) { acc.push(delta(0, "thinking_delta", "thinking", p)).unwrap(); }
                }
            } else {
                for p in &r { acc.push(delta(0, "thinking_delta", "thinking", p)).unwrap(); }
                for p in &t { acc.push(delta(1, "text_delta", "text", p)).unwrap(); }
            }
            acc.push(ev(r#"{"type":"message_stop"}"#)).unwrap();
            let a = acc.finish(1, false);
            proptest::prop_assert_eq!(a.content, text);
            proptest::prop_assert_eq!(a.reasoning, thinking);
        }
    }

    #[test]
    fn error_event_is_an_error() {
        let mut acc = MessageAccumulator::default();
        let e = acc
            .push(ev(
                r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
            ))
            .unwrap_err();
        assert_eq!(e, "overloaded_error: Overloaded");
    }

    #[test]
    fn non_streamed_message_with_tool_input() {
        let v = json!({"id":"m","type":"message","role":"assistant","model":"c",
            "content":[{"type":"tool_use","id":"t","name":"give_answer","input":{"entries":[]}}],
            "stop_reason":"max_tokens",
            "usage":{"input_tokens":5,"output_tokens":7,"cache_creation_input_tokens":100}});
        let a = answer_from_message(&v, true).unwrap();
        assert_eq!(a.content, "{\"entries\":[]}");
        assert_eq!(a.finish_reason.as_deref(), Some("length"));
        assert_eq!(a.usage.prompt_tokens, 105);
        assert_eq!(a.usage.cache_creation_tokens, 100);
    }

    #[test]
    fn urls() {
        assert_eq!(
            messages_url("https://api.anthropic.com"),
            "https://api.anthropic.com/v1/messages"
        );
        assert_eq!(
            messages_url("http://127.0.0.1:9/v1/"),
            "http://127.0.0.1:9/v1/messages"
        );
    }

    fn plan() -> ProviderPlan {
        ProviderPlan {
            kind: crate::llm::ProviderKind::Anthropic,
            model: "claude-test".into(),
            base_url: "http://127.0.0.1:9".into(),
            api_key_env: "BOOKTR_UNSET_ANTHROPIC_KEY".into(),
            temperature: Some(0.3),
            max_tokens: None,
            max_output_tokens: None,
            max_attempts: 1,
            max_requests_per_minute: None,
            max_tokens_per_minute: None,
            request_timeout_s: 5,
            stream_idle_timeout_s: 5,
            connect_timeout_s: 5,
            quirks: Default::default(),
            batch_poll_ms: 10,
        }
    }

    #[test]
    fn body_has_cached_system_merged_turns_and_forced_tool() {
        let c = AnthropicClient::new(&plan()).unwrap();
        let req = Request {
            task: Task::new("glossary"),
            messages: vec![
                Message::system("You are a terminologist."),
                Message::user("Glossary: none"),
                Message::user("Terms: agent"),
            ],
            json_schema: Some(JsonSchema {
                name: "glossary".into(),
                schema: json!({"type": "object", "properties": {}}),
            }),
            max_tokens: None,
            ceiling_tokens: None,
            prefill: None,
        };
        assert!(c.uses_tool(&req));
        let b = c.body(&req, true);
        assert_eq!(b["stream"], true);
        assert_eq!(b["max_tokens"], DEFAULT_MAX_TOKENS);
        assert_eq!(b["temperature"], 0.3);
        assert_eq!(b["system"][0]["text"], "You are a terminologist.");
        assert_eq!(b["system"][0]["cache_control"]["type"], "ephemeral");
        let msgs = b["messages"].as_array().unwrap();
        assert_eq!(msgs.len(), 1, "consecutive user messages form one turn");
        assert_eq!(msgs[0]["content"].as_array().unwrap().len(), 2);
        assert_eq!(b["tool_choice"]["name"], JSON_TOOL);
        assert_eq!(b["tools"][0]["input_schema"]["type"], "object");
        let p = c.params(&req, false);
        assert!(p.get("stream").is_none() && p.get("tools").is_none());
    }
}
