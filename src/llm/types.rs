//! Provider-independent request and answer types.

use serde::{Deserialize, Serialize};

/// Chat roles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
}

/// One chat message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: String,
}

impl Message {
    pub fn system(c: impl Into<String>) -> Self {
        Message {
            role: Role::System,
            content: c.into(),
        }
    }
    pub fn user(c: impl Into<String>) -> Self {
        Message {
            role: Role::User,
            content: c.into(),
        }
    }
    pub fn assistant(c: impl Into<String>) -> Self {
        Message {
            role: Role::Assistant,
            content: c.into(),
        }
    }
}

/// A JSON schema the answer must follow (sent as `response_format: json_schema` where the
/// provider accepts it, else as `json_object` with the schema described in the prompt).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JsonSchema {
    /// Schema name (`^[a-zA-Z0-9_-]+$`, as OpenAI requires).
    pub name: String,
    pub schema: serde_json::Value,
}

/// What a request is for: a stable lower-case name (`translation`, `glossary`, …) chosen by the
/// layer that builds requests, which also maps it back to its own role type (the agents do so
/// for their roles). `llm` reads it only to label log lines; it is never sent to a provider.
///
/// Two tags are equal when their names are; `Display` and `Debug` print the name.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Task(&'static str);

impl Task {
    /// A tag named `name` (lower-case ASCII by convention, e.g. `translation`).
    pub const fn new(name: &'static str) -> Task {
        Task(name)
    }

    /// The tag's name, as given to [`Task::new`].
    pub const fn name(self) -> &'static str {
        self.0
    }
}

impl std::fmt::Display for Task {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

impl std::fmt::Debug for Task {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

impl Serialize for Task {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.0)
    }
}

/// A request to a chat model, built by an agent. Serialisable for inspection; never read back
/// (the task tag is a `&'static str`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Request {
    /// What the request is for (for local responders, logs and usage accounting; never sent).
    pub task: Task,
    pub messages: Vec<Message>,
    /// Structured output wanted, if any.
    pub json_schema: Option<JsonSchema>,
    /// Completion cap in the **model's own tokens** (the server's `max_tokens`), if any. A
    /// reply that reaches it ends with `finish_reason = length` and is continued or split
    /// (see [`crate::llm::continuation`]), never discarded for its length.
    pub max_tokens: Option<u32>,
    /// The runaway guard's hard ceiling for the reply's visible text (content and tool-call
    /// arguments, prefill included), in `o200k_base` tokens counted on this machine; `None`:
    /// [`crate::llm::runaway::DEFAULT_CEILING_TOKENS`]. Never compared with `max_tokens`,
    /// which counts in another tokenizer (see [`crate::llm::runaway`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ceiling_tokens: Option<u32>,
    /// The start of the assistant's reply that this request asks the model to continue (a
    /// reply cut at `max_tokens`): sent as a final assistant message (see
    /// [`crate::llm::continuation`]). The answer's content is then only the continuation.
    /// Not part of [`Request::fingerprint`]: a continuation asks the same question.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefill: Option<String>,
}

impl Request {
    /// The follow-up of this request after an answer that could not be used: the same
    /// request (schema, bounds), its messages then `answer` as the assistant's turn and `say`
    /// as the user's (what was wrong and what to send instead), with no prefill.
    pub fn follow_up(&self, answer: &str, say: String) -> Request {
        let mut next = self.clone();
        next.prefill = None;
        next.messages.push(Message::assistant(answer));
        next.messages.push(Message::user(say));
        next
    }

    /// A request of `task` with `messages`, no schema, no bound, no prefill.
    pub fn new(task: Task, messages: Vec<Message>) -> Request {
        Request {
            task,
            messages,
            json_schema: None,
            max_tokens: None,
            ceiling_tokens: None,
            prefill: None,
        }
    }

    /// Estimated prompt size in `o200k_base` tokens (see [`crate::tokens::count_messages`]).
    pub fn prompt_tokens_estimate(&self) -> usize {
        crate::tokens::count_messages(self.messages.iter().map(|m| m.content.as_str()))
    }

    /// [`Request::prompt_tokens_estimate`] counted with `counter`'s memo (the campaign's, for
    /// the budget check of every request).
    pub fn prompt_tokens_with(&self, counter: &crate::tokens::Counter) -> usize {
        counter.count_messages(self.messages.iter().map(|m| m.content.as_str()))
    }

    /// sha256 of the messages and schema: identifies what was asked, for result files.
    pub fn fingerprint(&self) -> String {
        crate::util::sha256_hex(
            serde_json::to_vec(&(&self.messages, &self.json_schema)).unwrap_or_default(),
        )
    }
}

/// Token usage of one call as reported by the provider (the pseudo provider computes it with
/// `o200k_base`). All figures are tokens. `prompt_tokens` is every input token, cached or not
/// (for Anthropic: `input_tokens + cache_creation_input_tokens + cache_read_input_tokens`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Prompt tokens served from the provider's prefix cache, when reported.
    #[serde(default)]
    pub cached_tokens: u64,
    /// Completion tokens spent on reasoning, when reported.
    #[serde(default)]
    pub reasoning_tokens: u64,
    /// Prompt tokens written to the provider's prefix cache (Anthropic's
    /// `cache_creation_input_tokens`, billed above the input price), when reported.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_creation_tokens: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Usage {
    pub fn add(&mut self, o: &Usage) {
        self.prompt_tokens += o.prompt_tokens;
        self.completion_tokens += o.completion_tokens;
        self.cached_tokens += o.cached_tokens;
        self.reasoning_tokens += o.reasoning_tokens;
        self.cache_creation_tokens += o.cache_creation_tokens;
    }
}

/// A tool call accumulated from stream fragments (by `index`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    pub index: u32,
    pub id: String,
    pub name: String,
    /// Concatenated JSON argument fragments.
    pub arguments: String,
}

/// A complete answer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Answer {
    /// The visible content as sent (it may start with a `<think>` block; agents strip it).
    pub content: String,
    /// Reasoning text from `reasoning_content`/`reasoning` deltas. Never used as a translation.
    pub reasoning: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    pub usage: Usage,
    /// `stop`, `length`, … as reported.
    pub finish_reason: Option<String>,
    /// Model name reported by the provider.
    pub model: Option<String>,
    /// Attempts it took, including the successful one.
    pub attempts: u32,
}

/// Per-call overrides of the campaign's provider settings, for deliberate retries (see
/// [`crate::llm::Provider::complete_with`]). The default overrides nothing.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CallOptions {
    /// Sampling temperature for this call instead of the campaign's (a runaway reply is
    /// retried once at a lower one).
    pub temperature: Option<f64>,
}
