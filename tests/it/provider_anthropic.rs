//! The Anthropic Messages client against the in-repo fake (`tests/it/support/fake_anthropic.rs`)
//! over real HTTP and SSE: streamed events accumulated with reasoning and usage (input, output,
//! cache creation and cache reads), `cache_control` on the stable prefix (the system block)
//! only, the key and version headers, JSON answers by a forced tool, the same retry rules as
//! the OpenAI-compatible client (429 with Retry-After, 529, 5xx, reset, in-stream `error`,
//! stall), final errors not retried, and the key in no error or debug text. Then a whole
//! campaign through the binary with `kind = "anthropic"`.

use crate::support;

use std::time::{Duration, Instant};

use booktr::agents::Agent;
use booktr::config::{ProviderKind, ProviderPlan};
use booktr::llm::{JsonSchema, LlmError, Message, Provider, Request};
use support::fake_anthropic::{AReply, FakeAnthropic};
use support::fake_llm::Reply;
use support::{TestCampaign, assert_code, json_summary};

const KEY: &str = "sk-ant-booktr-TEST-7e1d0c9b-SECRET";

fn plan(base_url: &str, key_env: &str) -> ProviderPlan {
    ProviderPlan {
        kind: ProviderKind::Anthropic,
        model: "claude-fake".into(),
        base_url: base_url.into(),
        api_key_env: key_env.into(),
        temperature: Some(0.2),
        max_tokens: None,
        max_output_tokens: None,
        max_attempts: 4,
        max_requests_per_minute: None,
        max_tokens_per_minute: None,
        request_timeout_s: 20,
        stream_idle_timeout_s: 1,
        connect_timeout_s: 2,
        quirks: Default::default(),
        batch_poll_ms: 20,
    }
}

fn provider(fake: &FakeAnthropic) -> Provider {
    // SAFETY: tests in this file set these variables only, always to the same values.
    unsafe {
        std::env::set_var("BOOKTR_RETRY_BASE_MS", "10");
        std::env::set_var("BOOKTR_TEST_ANTHROPIC_KEY", KEY);
    }
    booktr::commands::rehearsal::provider(
        &plan(&fake.base_url(), "BOOKTR_TEST_ANTHROPIC_KEY"),
        &booktr::lang::Lang::parse("zh"),
    )
    .unwrap()
}

/// A Translation-like request whose system prompt is long enough to be worth caching.
fn request(schema: bool) -> Request {
    Request {
        task: Agent::Translation.into(),
        messages: vec![
            Message::system(format!(
                "You are a professional technical translator. {}",
                "Keep code, links and Markdown structure exactly. ".repeat(40)
            )),
            Message::user("Glossary: none"),
            Message::user("Hello world.\n"),
        ],
        json_schema: schema.then(|| JsonSchema {
            name: "answer".into(),
            schema: serde_json::json!({"type": "object",
                "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}),
        }),
        max_tokens: None,
        ceiling_tokens: None,
        prefill: None,
    }
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn streams_text_reasoning_and_usage_with_cache_creation_then_reads() {
    let fake = FakeAnthropic::start();
    fake.script(|_| {
        Reply::Full {
            reasoning: "Let me consider the register first.".into(),
            content: "你好，世界。".repeat(30),
            finish: "stop".into(),
        }
        .into()
    });
    let p = provider(&fake);
    let rt = rt();
    let a = rt.block_on(p.complete(&request(false))).unwrap();
    assert_eq!(a.content, "你好，世界。".repeat(30));
    assert_eq!(a.reasoning, "Let me consider the register first.");
    assert_eq!(a.finish_reason.as_deref(), Some("stop"));
    assert_eq!(a.model.as_deref(), Some("fake-claude"));
    assert_eq!(a.attempts, 1);
    let system_tokens = booktr::tokens::count(&request(false).messages[0].content) as u64;
    let all_tokens =
        booktr::tokens::count_messages(request(false).messages.iter().map(|m| m.content.as_str()))
            as u64;
    // First call: the system block is written to the cache.
    assert_eq!(a.usage.cache_creation_tokens, system_tokens);
    assert_eq!(a.usage.cached_tokens, 0);
    assert_eq!(
        a.usage.prompt_tokens, all_tokens,
        "input + cache writes + reads"
    );
    let expected_out = booktr::tokens::count(&"你好，世界。".repeat(30)) as u64
        + booktr::tokens::count("Let me consider the register first.") as u64;
    assert_eq!(a.usage.completion_tokens, expected_out);
    // Second call with the same prefix: read from the cache.
    let b = rt.block_on(p.complete(&request(false))).unwrap();
    assert_eq!(b.usage.cached_tokens, system_tokens);
    assert_eq!(b.usage.cache_creation_tokens, 0);
    assert_eq!(b.usage.prompt_tokens, all_tokens);
}

#[test]
fn cache_control_marks_only_the_stable_prefix_and_headers_are_sent() {
    let fake = FakeAnthropic::start();
    let p = provider(&fake);
    rt().block_on(p.complete(&request(false))).unwrap();
    let r = &fake.requests()[0];
    assert_eq!(r.api_key.as_deref(), Some(KEY), "x-api-key header");
    assert_eq!(r.version.as_deref(), Some("2023-06-01"));
    let body = &r.body;
    assert_eq!(body["model"], "claude-fake");
    assert_eq!(body["stream"], true);
    assert_eq!(body["temperature"], 0.2);
    assert_eq!(
        body["max_tokens"], 8192,
        "max_tokens is required by the API"
    );
    // The system prompt (instructions, guide, brief: byte-identical for every unit) is the
    // one block marked for caching.
    let system = body["system"].as_array().unwrap();
    assert_eq!(system.len(), 1);
    assert_eq!(system[0]["cache_control"]["type"], "ephemeral");
    assert!(
        system[0]["text"]
            .as_str()
            .unwrap()
            .starts_with("You are a professional technical translator.")
    );
    // The variable part (glossary, unit) is one user turn and carries no cache_control.
    let msgs = body["messages"].as_array().unwrap();
    assert_eq!(msgs.len(), 1);
    assert_eq!(msgs[0]["role"], "user");
    let blocks = msgs[0]["content"].as_array().unwrap();
    assert_eq!(blocks.len(), 2);
    assert_eq!(blocks[1]["text"], "Hello world.\n");
    assert!(
        !body["messages"].to_string().contains("cache_control"),
        "the unit text is never marked for caching"
    );
    assert!(body.get("tools").is_none());
}

#[test]
fn json_answers_come_through_a_forced_tool() {
    let fake = FakeAnthropic::start();
    fake.script(|_| AReply::Common(Reply::Content("{\"ok\": true}".into())));
    let p = provider(&fake);
    let a = rt().block_on(p.complete(&request(true))).unwrap();
    let v: serde_json::Value = serde_json::from_str(&a.content).unwrap();
    assert_eq!(v, serde_json::json!({"ok": true}));
    assert_eq!(a.tool_calls.len(), 1);
    let body = &fake.requests()[0].body;
    assert_eq!(body["tool_choice"]["type"], "tool");
    assert_eq!(body["tool_choice"]["name"], "give_answer");
    assert_eq!(body["tools"][0]["input_schema"]["required"][0], "ok");
}

#[test]
fn retries_transient_failures_like_the_openai_client() {
    let cases: Vec<(&str, AReply)> = vec![
        (
            "500",
            Reply::Status {
                code: 500,
                body: "{\"type\":\"error\",\"error\":{\"type\":\"api_error\"}}".into(),
                retry_after: None,
            }
            .into(),
        ),
        (
            "529 overloaded",
            Reply::Status {
                code: 529,
                body: "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\"}}".into(),
                retry_after: None,
            }
            .into(),
        ),
        (
            "429",
            Reply::Status {
                code: 429,
                body: "{\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\"}}".into(),
                retry_after: Some("1".into()),
            }
            .into(),
        ),
        (
            "reset",
            Reply::ResetMidStream {
                partial: "你好".into(),
            }
            .into(),
        ),
        (
            "stall",
            Reply::Stall {
                partial: "你".into(),
            }
            .into(),
        ),
        (
            "error event",
            AReply::ErrorEvent {
                partial: "你".into(),
                kind: "overloaded_error".into(),
            },
        ),
        ("empty", Reply::Content("  ".into()).into()),
    ];
    for (name, first) in cases {
        let fake = FakeAnthropic::start();
        let first = std::sync::Mutex::new(Some(first));
        fake.script(move |_| {
            first
                .lock()
                .unwrap()
                .take()
                .unwrap_or(Reply::Content("好的译文".into()).into())
        });
        let started = Instant::now();
        let a = rt()
            .block_on(provider(&fake).complete(&request(false)))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            a.content, "好的译文",
            "{name}: partial content is discarded"
        );
        assert_eq!(a.attempts, 2, "{name}");
        assert_eq!(fake.requests().len(), 2, "{name}");
        if name == "429" {
            assert!(
                started.elapsed() >= Duration::from_millis(950),
                "Retry-After honoured"
            );
        }
    }
}

#[test]
fn rate_limits_are_waited_out_up_to_the_cap_then_the_budget() {
    let fake = FakeAnthropic::start();
    fake.script(|_| {
        Reply::Status {
            code: 429,
            body: "rate limited".into(),
            retry_after: Some("0".into()),
        }
        .into()
    });
    let e = rt()
        .block_on(provider(&fake).complete(&request(false)))
        .unwrap_err();
    assert!(e.to_string().contains("429"), "{e}");
    assert_eq!(
        fake.requests().len(),
        booktr::llm::retry::MAX_RATE_LIMIT_WAITS as usize + 4
    );
}

#[test]
fn final_errors_are_not_retried_and_never_show_the_key() {
    for (code, body) in [
        (
            401,
            "{\"type\":\"error\",\"error\":{\"type\":\"authentication_error\",\"message\":\"invalid x-api-key\"}}",
        ),
        (
            404,
            "{\"type\":\"error\",\"error\":{\"type\":\"not_found_error\"}}",
        ),
        (
            400,
            "{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"prompt is too long: 250000 tokens > 200000 maximum\"}}",
        ),
    ] {
        let fake = FakeAnthropic::start();
        fake.script(move |_| {
            Reply::Status {
                code,
                body: body.into(),
                retry_after: None,
            }
            .into()
        });
        let p = provider(&fake);
        let e = rt().block_on(p.complete(&request(false))).unwrap_err();
        assert_eq!(fake.requests().len(), 1, "{code} must not be retried");
        if code == 400 {
            assert!(matches!(e, LlmError::ContextLength(_)), "{e}");
        } else {
            assert!(e.is_fatal_for_campaign(), "{e}");
        }
        let shown = format!("{e} {e:?}");
        assert!(!shown.contains("SECRET"), "{shown}");
        let Provider::Anthropic(c) = &p else {
            panic!("an Anthropic provider")
        };
        assert!(!format!("{c:?}").contains("SECRET"));
    }
}

#[test]
fn a_missing_key_names_the_variable_and_nothing_else() {
    let e = booktr::commands::rehearsal::provider(
        &plan(
            "https://api.anthropic.com",
            "BOOKTR_TEST_UNSET_ANTHROPIC_KEY",
        ),
        &booktr::lang::Lang::parse("zh"),
    )
    .err()
    .expect("a remote endpoint needs a key");
    assert!(matches!(e, LlmError::MissingKey { .. }));
    assert!(
        e.to_string().contains("BOOKTR_TEST_UNSET_ANTHROPIC_KEY"),
        "{e}"
    );
}

/// A whole campaign through the binary with `kind = "anthropic"`: every agent's calls go to
/// `/v1/messages`, the key comes only from `ANTHROPIC_API_KEY` and appears in no file and no
/// output line, and the report counts cache reads.
#[test]
fn a_campaign_runs_on_the_anthropic_provider_and_the_key_leaks_nowhere() {
    let fake = FakeAnthropic::start();
    let c = TestCampaign::with_chapters(
        "a",
        &["ch.md"],
        "max_unit_chars = 200\n[provider]\nkind = \"anthropic\"\nmodel = \"claude-fake\"\n",
    );
    let text: String = (1..=4)
        .map(|i| format!("## Part {i}\n\nThe agent number {i} calls a tool and reads the context window.\n\n```python\nprint({i})\n```\n\n"))
        .collect();
    c.write("ch.md", &text);
    let out = c
        .cmd("run", &["--base-url", &fake.base_url(), "--json", "-vv"])
        .env_remove("ANTHROPIC_BASE_URL")
        .env("ANTHROPIC_API_KEY", KEY)
        .env("BOOKTR_LOG", "debug")
        .output()
        .unwrap();
    assert_code(&out, 0);
    let s = json_summary(&out);
    assert_eq!(s["status"], "complete", "{s}");
    assert!(
        fake.count(Agent::Translation) >= 2,
        "{}",
        fake.count(Agent::Translation)
    );
    assert!(fake.count(Agent::Glossary) >= 1);
    assert!(
        fake.requests()
            .iter()
            .all(|r| r.api_key.as_deref() == Some(KEY))
    );
    let translated = c.read("a/out/ch.md");
    assert!(translated.contains("```python\nprint(3)\n```"));
    assert_ne!(translated, text);
    // Every Translation request after the first shares the system prefix: cache reads.
    let journal: String = c
        .all_files()
        .iter()
        .filter(|p| p.ends_with("journal.jsonl"))
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    assert!(
        journal.contains("\"cache_creation_tokens\""),
        "the journal records cache writes"
    );
    let translation_cache_reads: u64 = journal
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|e| e["event"] == "call_finished" && e["agent"] == "translation")
        .map(|e| e["usage"]["cached_tokens"].as_u64().unwrap_or(0))
        .sum();
    assert!(
        translation_cache_reads > 0,
        "later Translation calls read the cached prefix"
    );
    let mut printed = out.stdout.clone();
    printed.extend_from_slice(&out.stderr);
    assert!(!String::from_utf8_lossy(&printed).contains("SECRET"));
    for f in c.all_files() {
        let bytes = std::fs::read(&f).unwrap();
        assert!(
            !String::from_utf8_lossy(&bytes).contains("SECRET"),
            "the key leaked into {}",
            f.display()
        );
    }
}
