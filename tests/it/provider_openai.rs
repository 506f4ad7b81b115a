//! The OpenAI-compatible client against the fake server over real HTTP and SSE: streaming
//! accumulation with usage, `json_schema` → `json_object` fallback, retries of transient
//! failures (500, 429 with Retry-After, reset mid-stream, stalled stream, empty answers) and
//! no retry of final ones (401, context length).

use crate::support;

use std::time::{Duration, Instant};

use booktr::agents::Agent;
use booktr::config::{ProviderKind, ProviderPlan};
use booktr::llm::{JsonSchema, LlmError, Message, Provider, Request};
use support::fake_llm::{FakeServer, Reply};

fn plan(base_url: &str) -> ProviderPlan {
    ProviderPlan {
        kind: ProviderKind::Openai,
        model: "fake-model".into(),
        base_url: base_url.into(),
        api_key_env: "BOOKTR_TEST_UNSET_KEY".into(),
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

fn provider(fake: &FakeServer) -> Provider {
    // SAFETY: tests in this file set only this variable, to the same value.
    unsafe { std::env::set_var("BOOKTR_RETRY_BASE_MS", "10") };
    booktr::commands::rehearsal::provider(&plan(&fake.base_url), &booktr::lang::Lang::parse("zh"))
        .unwrap()
}

fn request(agent: Agent, schema: bool) -> Request {
    Request {
        task: agent.into(),
        messages: vec![
            Message::system("You are a professional technical translator."),
            Message::user("Glossary: none"),
            Message::user("Hello world.\n"),
        ],
        json_schema: schema.then(|| JsonSchema {
            name: "x".into(),
            schema: serde_json::json!({"type": "object"}),
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
fn streams_content_reasoning_and_usage() {
    let fake = FakeServer::start();
    fake.script(|_| Reply::Full {
        reasoning: "thinking about it".into(),
        content: "你好，世界。".repeat(30),
        finish: "stop".into(),
    });
    let a = rt()
        .block_on(provider(&fake).complete(&request(Agent::Translation, false)))
        .unwrap();
    assert_eq!(a.content, "你好，世界。".repeat(30));
    assert_eq!(a.reasoning, "thinking about it");
    assert!(a.usage.prompt_tokens > 10);
    assert!(a.usage.completion_tokens > 30);
    assert_eq!(a.finish_reason.as_deref(), Some("stop"));
    assert_eq!(a.attempts, 1);
    let body = &fake.requests()[0].body;
    assert_eq!(body["model"], "fake-model");
    assert_eq!(body["temperature"], 0.2);
    assert!(
        fake.requests()[0].authorization.is_none(),
        "no key configured for a local endpoint"
    );
}

#[test]
fn json_schema_falls_back_to_json_object_once() {
    let fake = FakeServer::start();
    fake.script(|r| {
        if r.body["response_format"]["type"] == "json_schema" {
            Reply::Status {
                code: 400,
                body: "{\"error\":{\"message\":\"response_format json_schema is not supported\"}}"
                    .into(),
                retry_after: None,
            }
        } else {
            Reply::Content("{\"ok\": true}".into())
        }
    });
    let p = provider(&fake);
    let rt = rt();
    let a = rt
        .block_on(p.complete(&request(Agent::Glossary, true)))
        .unwrap();
    assert_eq!(a.content, "{\"ok\": true}");
    rt.block_on(p.complete(&request(Agent::Glossary, true)))
        .unwrap();
    let kinds: Vec<String> = fake
        .requests()
        .iter()
        .map(|r| {
            r.body["response_format"]["type"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(
        kinds,
        ["json_schema", "json_object", "json_object"],
        "the second call goes straight to json_object"
    );
}

#[test]
fn retries_transient_failures_then_succeeds() {
    for (name, first) in [
        (
            "500",
            Reply::Status {
                code: 500,
                body: "oops".into(),
                retry_after: None,
            },
        ),
        (
            "503",
            Reply::Status {
                code: 503,
                body: "busy".into(),
                retry_after: None,
            },
        ),
        (
            "429",
            Reply::Status {
                code: 429,
                body: "slow down".into(),
                retry_after: Some("1".into()),
            },
        ),
        (
            "reset",
            Reply::ResetMidStream {
                partial: "你好".into(),
            },
        ),
        (
            "stall",
            Reply::Stall {
                partial: "你".into(),
            },
        ),
        ("empty", Reply::Content("   ".into())),
        (
            "reasoning only",
            Reply::Full {
                reasoning: "hmm".into(),
                content: String::new(),
                finish: "stop".into(),
            },
        ),
    ] {
        let fake = FakeServer::start();
        let first = std::sync::Mutex::new(Some(first));
        fake.script(move |_| {
            first
                .lock()
                .unwrap()
                .take()
                .unwrap_or(Reply::Content("好的译文".into()))
        });
        let started = Instant::now();
        let a = rt()
            .block_on(provider(&fake).complete(&request(Agent::Translation, false)))
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
fn final_errors_are_not_retried() {
    for (code, body) in [
        (401, "invalid api key"),
        (404, "model not found"),
        (400, "{\"error\":{\"code\":\"context_length_exceeded\"}}"),
    ] {
        let fake = FakeServer::start();
        fake.script(move |_| Reply::Status {
            code,
            body: body.into(),
            retry_after: None,
        });
        let e = rt()
            .block_on(provider(&fake).complete(&request(Agent::Translation, false)))
            .unwrap_err();
        assert_eq!(fake.requests().len(), 1, "{code} must not be retried");
        if code == 400 {
            assert!(matches!(e, LlmError::ContextLength(_)), "{e}");
        } else {
            assert!(e.is_fatal_for_campaign(), "{e}");
        }
    }
}

#[test]
fn gives_up_after_max_attempts() {
    let fake = FakeServer::start();
    fake.script(|_| Reply::Status {
        code: 502,
        body: "bad gateway".into(),
        retry_after: None,
    });
    let e = rt()
        .block_on(provider(&fake).complete(&request(Agent::Translation, false)))
        .unwrap_err();
    assert_eq!(fake.requests().len(), 4);
    assert!(e.to_string().contains("502"), "{e}");
}

#[test]
fn connection_refused_is_retried_and_reported() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    drop(listener);
    unsafe { std::env::set_var("BOOKTR_RETRY_BASE_MS", "10") };
    let p = booktr::commands::rehearsal::provider(&plan(&url), &booktr::lang::Lang::parse("zh"))
        .unwrap();
    let e = rt()
        .block_on(p.complete(&request(Agent::Translation, false)))
        .unwrap_err();
    assert!(matches!(e, LlmError::Connect { .. }), "{e}");
}

#[test]
fn rate_limits_are_waited_out_without_using_the_retry_budget_up_to_a_cap() {
    // Six 429s then success: more than max_attempts (4), still succeeds.
    let fake = FakeServer::start();
    let n = std::sync::atomic::AtomicUsize::new(0);
    fake.script(move |_| {
        if n.fetch_add(1, std::sync::atomic::Ordering::SeqCst) < 6 {
            Reply::Status {
                code: 429,
                body: "rate limited".into(),
                retry_after: Some("0".into()),
            }
        } else {
            Reply::Content("好".into())
        }
    });
    let a = rt()
        .block_on(provider(&fake).complete(&request(Agent::Translation, false)))
        .unwrap();
    assert_eq!(a.attempts, 7);
    assert_eq!(fake.requests().len(), 7);

    // 429 forever: 8 free waits, then the 4 attempts of the budget.
    let fake = FakeServer::start();
    fake.script(|_| Reply::Status {
        code: 429,
        body: "rate limited".into(),
        retry_after: Some("0".into()),
    });
    let e = rt()
        .block_on(provider(&fake).complete(&request(Agent::Translation, false)))
        .unwrap_err();
    assert!(e.to_string().contains("429"));
    assert_eq!(
        fake.requests().len(),
        booktr::llm::retry::MAX_RATE_LIMIT_WAITS as usize + 4
    );
}

#[test]
fn the_overall_request_timeout_aborts_and_retries() {
    let fake = FakeServer::start();
    let first = std::sync::Mutex::new(true);
    fake.script(move |_| {
        if std::mem::take(&mut *first.lock().unwrap()) {
            Reply::Stall {
                partial: "你".into(),
            }
        } else {
            Reply::Content("好".into())
        }
    });
    let mut plan = plan(&fake.base_url);
    plan.request_timeout_s = 1;
    plan.stream_idle_timeout_s = 30;
    unsafe { std::env::set_var("BOOKTR_RETRY_BASE_MS", "10") };
    let p = booktr::commands::rehearsal::provider(&plan, &booktr::lang::Lang::parse("zh")).unwrap();
    let started = Instant::now();
    let a = rt()
        .block_on(p.complete(&request(Agent::Translation, false)))
        .unwrap();
    assert_eq!(a.content, "好");
    assert_eq!(a.attempts, 2);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the overall timeout, not the idle timeout, ended the first attempt"
    );
}

#[test]
fn debug_output_never_shows_the_key() {
    unsafe { std::env::set_var("BOOKTR_TEST_DEBUG_KEY", "sk-booktr-DEBUG-SECRET-99") };
    let mut plan = plan("https://api.example.com/v1");
    plan.api_key_env = "BOOKTR_TEST_DEBUG_KEY".into();
    let client = booktr::llm::openai::OpenAiClient::new(&plan).unwrap();
    let shown = format!(
        "{client:?} {plan:?} {:?}",
        request(Agent::Translation, true)
    );
    assert!(!shown.contains("SECRET"), "{shown}");
    assert!(shown.contains("redacted"));
}
