//! The front door on a terminal and in pipes (issue 16): a closed stdout or stderr ends a
//! command quietly with its usual exit code, language tags are validated with a suggestion,
//! and progress on stderr is plain (no ANSI code) without a terminal.

use std::io::{BufRead, BufReader};
use std::process::{Command, Output, Stdio};

use crate::support;
use support::{TestCampaign, assert_code};

/// A small pseudo (offline) campaign over one chapter of three sections.
fn small_campaign() -> TestCampaign {
    let c = TestCampaign::with_chapters("p", &["one.md"], "max_unit_chars = 300\n");
    let mut text = String::from("# One\n\n");
    for i in 0..3 {
        text.push_str(&format!(
            "## Section {i}\n\nThe agent reads the prompt and calls a tool. It writes the answer in section {i}.\n\n"
        ));
    }
    c.write("one.md", &text);
    c
}

/// A pipe whose read end is already closed: every write to it fails with `EPIPE`.
fn closed_pipe() -> std::io::PipeWriter {
    let (r, w) = std::io::pipe().unwrap();
    drop(r);
    w
}

/// Runs `cmd` with stdout a closed pipe, stderr captured.
fn with_closed_stdout(mut cmd: Command) -> Output {
    cmd.stdout(closed_pipe()).stderr(Stdio::piped());
    cmd.output().unwrap()
}

/// Runs `cmd` with stderr a closed pipe, stdout captured.
fn with_closed_stderr(mut cmd: Command) -> Output {
    cmd.stderr(closed_pipe()).stdout(Stdio::piped());
    cmd.output().unwrap()
}

fn assert_quiet(out: &Output, what: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !err.contains("panicked") && !err.contains("Broken pipe") && !err.contains("os error 32"),
        "{what}: stderr shows the closed pipe:\n{err}"
    );
    assert_ne!(out.status.code(), Some(101), "{what}: exit 101 is a panic");
}

/// Regression (`booktr plan … | head -1` panicked with exit 101, "failed printing to stdout").
#[test]
fn plan_into_head_panicked_with_exit_101() {
    let c = small_campaign();
    let out = with_closed_stdout(c.cmd("plan", &[]));
    assert_quiet(&out, "plan");
    assert_code(&out, 0);
    // The same with --json (one long line).
    let out = with_closed_stdout(c.cmd("plan", &["--json"]));
    assert_quiet(&out, "plan --json");
    assert_code(&out, 0);
}

/// Regression (`booktr run … 2>&1 | head -1` panicked with exit 101): the run goes on to its
/// end and exits with its usual code; what the closed pipe could not take is dropped.
#[test]
fn run_2_and_1_into_head_panicked_with_exit_101() {
    // Both streams into one pipe whose reader takes one line and goes away, as `| head -1`.
    let c = small_campaign();
    let (r, w) = std::io::pipe().unwrap();
    let mut cmd = c.cmd("run", &["--json"]);
    cmd.stdout(w.try_clone().unwrap()).stderr(w);
    let mut child = cmd.spawn().unwrap();
    drop(cmd); // the parent's copies of the write end
    let mut first = String::new();
    BufReader::new(r).read_line(&mut first).unwrap();
    assert!(
        !first.is_empty(),
        "the first line arrives before the pipe closes"
    );
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "first line was {first:?}");
    assert!(
        c.read("p/out/one.md").starts_with("# "),
        "the run finished its work"
    );

    // Both streams closed from the start (every write fails): still the usual code.
    let c = small_campaign();
    let mut cmd = c.cmd("run", &["--json"]);
    let w = closed_pipe();
    cmd.stdout(w.try_clone().unwrap()).stderr(w);
    let status = cmd.status().unwrap();
    assert_eq!(status.code(), Some(0));
    assert!(c.path("p/out/one.md").is_file());

    // Only stdout closed: stderr tells nothing of it.
    let c = small_campaign();
    let out = with_closed_stdout(c.cmd("run", &["--json"]));
    assert_quiet(&out, "run, stdout closed");
    assert_code(&out, 0);

    // Only stderr closed: the summary still reaches stdout.
    let c = small_campaign();
    let out = with_closed_stderr(c.cmd("run", &["--json"]));
    assert_code(&out, 0);
    let summary = support::json_summary(&out);
    assert_eq!(summary["status"], "complete", "{summary}");
}

/// Regression (`booktr export --out - | head -1` failed with "error: Broken pipe", exit 1).
#[test]
fn export_to_stdout_into_head_failed_with_broken_pipe() {
    let c = small_campaign();
    assert_code(&c.cmd("run", &[]).output().unwrap(), 0);
    for format in ["xliff", "tmx", "tbx", "csv"] {
        let out = with_closed_stdout(c.cmd("export", &["--format", format, "--out", "-"]));
        assert_quiet(&out, format);
        assert_code(&out, 0);
        // And it is the full document when the reader reads it all.
        let full = c
            .cmd("export", &["--format", format, "--out", "-"])
            .output()
            .unwrap();
        assert_code(&full, 0);
        assert!(
            full.stdout.len() > 100,
            "{format}: {} bytes",
            full.stdout.len()
        );
    }
}
