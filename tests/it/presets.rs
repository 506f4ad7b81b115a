//! Provider presets (`[provider] preset = "…"`): what each fills in, what explicit keys and
//! flags override, the errors for unknown names, the quirks reaching the wire (against the
//! in-repo fake server), and the preset table of docs/src/providers.md, generated from the
//! preset data.

use crate::support;

use booktr::agents::Agent;
use booktr::config::{Overrides, Plan, ProviderKind};
use booktr::llm::presets::{self, JsonMode};
use booktr::llm::{JsonSchema, Message, Request};
use support::fake_llm::{FakeServer, Reply};
use support::{TestCampaign, assert_code};

fn plan_of(provider: &str, o: &Overrides) -> Result<Plan, String> {
    let c = TestCampaign::with_chapters("p", &["a.md"], &format!("[provider]\n{provider}"));
    c.write("a.md", "# A\n\nText.\n");
    Plan::load(&c.file, o).map_err(|e| e.to_string())
}

#[test]
fn each_preset_fills_in_kind_endpoint_key_variable_and_quirks() {
    let expected = [
        (
            "openai",
            ProviderKind::Openai,
            "https://api.openai.com/v1",
            "OPENAI_API_KEY",
            JsonMode::Schema,
            true,
        ),
        (
            "anthropic",
            ProviderKind::Anthropic,
            "https://api.anthropic.com",
            "ANTHROPIC_API_KEY",
            JsonMode::Schema,
            true,
        ),
        (
            "deepseek",
            ProviderKind::Openai,
            "https://api.deepseek.com",
            "DEEPSEEK_API_KEY",
            JsonMode::Object,
            true,
        ),
        (
            "doubao",
            ProviderKind::Openai,
            "https://ark.cn-beijing.volces.com/api/v3",
            "ARK_API_KEY",
            JsonMode::Object,
            true,
        ),
        (
            "qwen",
            ProviderKind::Openai,
            "https://dashscope.aliyuncs.com/compatible-mode/v1",
            "DASHSCOPE_API_KEY",
            JsonMode::Object,
            true,
        ),
        (
            "openrouter",
            ProviderKind::Openai,
            "https://openrouter.ai/api/v1",
            "OPENROUTER_API_KEY",
            JsonMode::Schema,
            true,
        ),
        (
            "ollama",
            ProviderKind::Openai,
            "http://localhost:11434/v1",
            "OLLAMA_API_KEY",
            JsonMode::Object,
            true,
        ),
        (
            "vllm",
            ProviderKind::Openai,
            "http://localhost:8000/v1",
            "VLLM_API_KEY",
            JsonMode::Schema,
            true,
        ),
        (
            "llamacpp",
            ProviderKind::Openai,
            "http://localhost:8080/v1",
            "LLAMA_API_KEY",
            JsonMode::Schema,
            // Asked: the shared llama.cpp server sends usage only with `stream_options`.
            true,
        ),
    ];
    assert_eq!(expected.len(), presets::PRESETS.len());
    for (name, kind, url, key, json_mode, stream_usage) in expected {
        let p = plan_of(
            &format!("preset = \"{name}\"\nmodel = \"m\"\n"),
            &Overrides::default(),
        )
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        let pp = &p.provider;
        assert_eq!(pp.kind, kind, "{name}");
        assert_eq!(pp.base_url, url, "{name}");
        assert_eq!(pp.api_key_env, key, "{name}");
        assert_eq!(pp.quirks.json_mode, json_mode, "{name}");
        assert_eq!(pp.quirks.stream_usage, stream_usage, "{name}");
    }
}

#[test]
fn explicit_keys_and_flags_win_over_the_preset() {
    let p = plan_of(
        "preset = \"deepseek\"\nmodel = \"deepseek-chat\"\nbase_url = \"https://proxy.example/v1/\"\napi_key_env = \"MY_KEY\"\njson_mode = \"prompt\"\nstream_usage = false\n",
        &Overrides::default(),
    )
    .unwrap();
    assert_eq!(p.provider.base_url, "https://proxy.example/v1");
    assert_eq!(p.provider.api_key_env, "MY_KEY");
    assert_eq!(p.provider.quirks.json_mode, JsonMode::Prompt);
    assert!(!p.provider.quirks.stream_usage);
    let o = Overrides {
        base_url: Some("http://127.0.0.1:9/v1".into()),
        ..Default::default()
    };
    let p = plan_of("preset = \"qwen\"\nmodel = \"qwen-plus\"\n", &o).unwrap();
    assert_eq!(p.provider.base_url, "http://127.0.0.1:9/v1");
    assert_eq!(p.provider.api_key_env, "DASHSCOPE_API_KEY");
}

#[test]
fn unknown_presets_and_json_modes_are_usage_errors_naming_file_key_and_choices() {
    let e = plan_of(
        "preset = \"deepsek\"\nmodel = \"m\"\n",
        &Overrides::default(),
    )
    .unwrap_err();
    assert!(e.contains("campaign.toml"), "{e}");
    assert!(e.contains("provider.preset"), "{e}");
    assert!(e.contains("deepseek") && e.contains("llamacpp"), "{e}");
    let e = plan_of(
        "kind = \"openai\"\nmodel = \"m\"\njson_mode = \"xml\"\n",
        &Overrides::default(),
    )
    .unwrap_err();
    assert!(
        e.contains("provider.json_mode") && e.contains("`object`"),
        "{e}"
    );
    // Through the binary: exit code 2.
    let c = TestCampaign::with_chapters(
        "p",
        &["a.md"],
        "[provider]\npreset = \"nope\"\nmodel = \"m\"\n",
    );
    c.write("a.md", "# A\n\nText.\n");
    let out = c.cmd("run", &[]).output().unwrap();
    assert_code(&out, 2);
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown preset `nope`"));
}

fn glossary_request() -> Request {
    Request {
        task: Agent::Glossary.into(),
        messages: vec![
            Message::system("You are a terminologist."),
            Message::user("Terms: agent"),
        ],
        json_schema: Some(JsonSchema {
            name: "glossary".into(),
            schema: serde_json::json!({"type": "object"}),
        }),
        max_tokens: None,
        ceiling_tokens: None,
        prefill: None,
    }
}

/// The quirks reach the wire: `json_object` from the first request (DeepSeek), no
/// `response_format` at all (`json_mode = "prompt"`). llama.cpp is asked for usage too: the
/// shared real-llm server sends none otherwise (`llm::stream` test
/// `llamacpp_preset_counted_no_tokens`).
#[test]
fn preset_quirks_change_what_is_sent() {
    let fake = FakeServer::start();
    fake.script(|_| Reply::Content("{\"entries\": []}".into()));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let zh = booktr::lang::Lang::parse("zh");
    for (provider_toml, check) in [
        (
            "preset = \"deepseek\"\n",
            (|b: &serde_json::Value| {
                assert_eq!(b["response_format"]["type"], "json_object");
                assert_eq!(b["stream_options"]["include_usage"], true);
            }) as fn(&serde_json::Value),
        ),
        ("preset = \"llamacpp\"\n", |b| {
            assert_eq!(b["response_format"]["type"], "json_schema");
            assert_eq!(b["stream_options"]["include_usage"], true, "{b}");
        }),
        ("preset = \"vllm\"\njson_mode = \"prompt\"\n", |b| {
            assert!(b.get("response_format").is_none(), "{b}");
        }),
    ] {
        fake.clear();
        let o = Overrides {
            base_url: Some(fake.base_url.clone()),
            ..Default::default()
        };
        let plan = plan_of(&format!("{provider_toml}model = \"m\"\n"), &o).unwrap();
        let p = booktr::commands::rehearsal::provider(&plan.provider, &zh).unwrap();
        let a = rt.block_on(p.complete(&glossary_request())).unwrap();
        assert_eq!(a.content, "{\"entries\": []}");
        let reqs = fake.requests();
        assert_eq!(reqs.len(), 1, "{provider_toml}: no fallback request needed");
        check(&reqs[0].body);
    }
}

#[test]
fn the_docs_preset_table_is_generated_from_the_preset_data() {
    let page = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/docs/src/providers.md"
    ))
    .unwrap();
    let table = presets::markdown_table();
    assert!(
        page.contains(&table),
        "docs/src/providers.md's preset table is out of date; replace it with:\n{table}"
    );
    assert!(
        page.contains("presets::markdown_table()"),
        "the comment that marks the table as generated is gone from docs/src/providers.md"
    );
    // The README names every preset (the short list under "Providers") and links to the table.
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    assert!(readme.contains("docs/src/providers.md#kinds-and-presets"));
    for p in presets::PRESETS {
        assert!(table.contains(&format!("`{}`", p.name)));
        assert!(
            readme.contains(&format!("`{}`", p.name)),
            "README.md does not name the preset `{}`",
            p.name
        );
    }
}
