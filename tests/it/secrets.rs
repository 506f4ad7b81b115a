//! The API key never leaks: one recognisable key goes through a normal run, provider faults
//! (500s, a truncated answer that splits a unit, a rejected key), a SIGKILL and resume,
//! `status`, `validate` and debug logging; then every file written and every line printed is
//! scanned for it.

use crate::support;

use std::time::Duration;

use booktr::agents::Agent;
use support::fake_llm::{FakeServer, Reply};
use support::{TestCampaign, assert_code};

const KEY: &str = "sk-booktr-SCAN-0f9e8d7c6b5a4931-SECRET";

#[test]
fn the_key_is_in_no_file_and_no_output_line() {
    let fake = FakeServer::start();
    let calls = std::sync::atomic::AtomicUsize::new(0);
    fake.script(move |r| {
        let n = calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        match (r.agent, n % 7) {
            (Agent::Translation, 1) => Reply::Status {
                code: 500,
                body: "upstream error".into(),
                retry_after: None,
            },
            (Agent::Translation, 3) => Reply::Full {
                reasoning: String::new(),
                content: "半".into(),
                finish: "length".into(),
            },
            _ => Reply::Default,
        }
    });
    let c = TestCampaign::with_chapters(
        "s",
        &["a.md"],
        "max_unit_chars = 300\n[provider]\nkind = \"openai\"\nmodel = \"m\"\n",
    );
    let text: String = (1..=12).map(|i| format!("## Part {i}\n\nThe agent number {i} calls a tool and reads the context window.\n\nA second paragraph for part {i}.\n\n")).collect();
    c.write("a.md", &text);
    let mut printed = Vec::new();
    let run = |args: &[&str]| {
        let mut a = vec!["--base-url", fake.base_url.as_str(), "-vv"];
        a.extend_from_slice(args);
        c.cmd("run", &a)
            .env("OPENAI_API_KEY", KEY)
            .env("BOOKTR_LOG", "debug")
            .output()
            .unwrap()
    };
    // A run that is killed mid-way, then resumed.
    fake.latency(Duration::from_millis(80), Duration::ZERO);
    let mut child = c
        .cmd("run", &["--base-url", &fake.base_url, "-vv"])
        .env("OPENAI_API_KEY", KEY)
        .env("BOOKTR_LOG", "debug")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    child.kill().unwrap();
    let out = child.wait_with_output().unwrap();
    printed.push(out.stdout);
    printed.push(out.stderr);
    fake.latency(Duration::ZERO, Duration::ZERO);
    let out = run(&["--json"]);
    printed.push(out.stdout);
    printed.push(out.stderr);
    for sub in ["status", "validate"] {
        let out = c.cmd(sub, &[]).env("OPENAI_API_KEY", KEY).output().unwrap();
        printed.push(out.stdout);
        printed.push(out.stderr);
    }
    // A rejected key.
    fake.script(|_| Reply::Status {
        code: 401,
        body: "{\"error\":{\"message\":\"Incorrect API key provided\"}}".into(),
        retry_after: None,
    });
    c.write("a.md", &text.replace("Part 12", "Part twelve"));
    let out = run(&[]);
    assert_eq!(out.status.code(), Some(1));
    printed.push(out.stdout);
    printed.push(out.stderr);

    assert!(
        fake.requests()
            .iter()
            .any(|r| r.authorization.as_deref() == Some(&format!("Bearer {KEY}"))),
        "the key was used"
    );
    let mut scanned = 0;
    for f in c.all_files() {
        let bytes = std::fs::read(&f).unwrap();
        assert!(
            !String::from_utf8_lossy(&bytes).contains(KEY),
            "{} contains the key",
            f.display()
        );
        assert!(
            !String::from_utf8_lossy(&bytes).contains("SECRET"),
            "{} contains part of the key",
            f.display()
        );
        scanned += 1;
    }
    let printed: String = printed
        .iter()
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .collect();
    assert!(printed.lines().count() > 20, "debug logging produced lines");
    assert!(
        !printed.contains("SECRET"),
        "an output line contains the key"
    );
    assert!(scanned > 15, "{scanned} files scanned");
    let names: Vec<String> = c
        .all_files()
        .iter()
        .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    for expected in [
        "journal.jsonl",
        "report.html",
        "report.json",
        "config.json",
        "a.md",
    ] {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected} was written and scanned"
        );
    }
}

#[test]
fn a_key_written_in_the_campaign_file_is_refused_without_echoing_it() {
    for key_line in [
        "api_key = \"sk-booktr-LEAKED-IN-FILE-0001\"",
        "key = \"sk-booktr-LEAKED-IN-FILE-0001\"",
    ] {
        let c = TestCampaign::with_chapters(
            "k",
            &["ch.md"],
            &format!("[provider]\nkind = \"openai\"\nmodel = \"m\"\n{key_line}\n"),
        );
        c.write("ch.md", "# Title\n\nSome text.\n");
        for sub in ["run", "plan"] {
            let out = c.cmd(sub, &[]).output().unwrap();
            assert_code(&out, 2);
            let all = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(
                !all.contains("LEAKED-IN-FILE"),
                "{sub} echoed the key: {all}"
            );
            assert!(
                all.contains("provider.api_key") && all.contains("api_key_env"),
                "{sub}: {all}"
            );
        }
    }
}
