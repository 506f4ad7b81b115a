//! Campaign benchmarks for issue #5 ("The whole book in one campaign"): whole runs of the
//! `booktr` binary over the shared corpus (`../shared/corpus/ai-agent-book/en`, 11 files,
//! 1.2 MB) against the in-repo fake OpenAI-compatible server (`tests/it/support/fake_llm.rs`, real
//! HTTP and SSE) or the offline pseudo provider. Six benchmarks:
//!
//! - `wall_time`: latency 1 s + completion tokens / 50 per second, run 25× faster by default
//!   (`BOOKTR_BENCH_LATENCY_SCALE`), concurrency 8; measured wall time against the
//!   critical-path bound (per stage, max(longest call, total call time / concurrency), summed
//!   over the stages, which are barriers, except that a round's proofreading overlaps its
//!   translation and counts as one stage with it) and the speed-up over sequential calls;
//! - `rate_limited`: `max_requests_per_minute` in the campaign and the same limit enforced by the
//!   fake over a sliding 60-second window: 429s caused and the share of the limit achieved;
//! - `token_economy`: prompt tokens per agent (pseudo provider, whole book and chapters 1–2,
//!   beside the Python original's figures) and the prompt layout (`relevant` or `full`) decided
//!   by the cost of a whole-book run against the fake's prefix-cache simulation;
//! - `local_overhead`: the binary's own CPU time and peak RSS (`wait4` rusage) on the whole
//!   book against a zero-latency fake, and the bytes written to the state directory per unit;
//! - `throughput`: segmentation, QA and tokenizer MB/s;
//! - `scale10` (`campaign/scale10.rs`): the corpus book at 1× and 10×: per-unit prompt overhead
//!   by agent, CPU time, peak RSS and Manager context (issue 15);
//! - `seed_original` (`campaign/seed.rs`): booktr beside the seed's Python original on chapters
//!   1–2 against one fake (issue 30): translation requests per unit and the wall-time ratio.
//!
//! Run `cargo bench --bench campaign` (all) or `cargo bench --bench campaign -- NAME…` (those
//! whose name contains one of the arguments). Each prints a Markdown table and whether each
//! target is met (it never asserts: figures are reported, not tested), and writes
//! `validation/bench/<name>.json` with a `machine` object. Without the corpus each benchmark
//! prints why and is skipped. Under `cargo test --benches` (`--test`) nothing runs.
//!
//! `BOOKTR_BENCH_WRAPPER="perf record --call-graph dwarf -o FILE --"` runs every `booktr` child
//! under that command (for profiling; the CPU and RSS figures are then the wrapper's).

#[allow(dead_code)]
#[path = "../tests/it/support/fake_llm.rs"]
mod fake_llm;
// The fake server's record/replay mode (`super::recorded` inside fake_llm.rs).
#[allow(dead_code)]
#[path = "../tests/it/support/recorded.rs"]
mod recorded;
// Issue 15: the 10x book (per-unit prompt overhead, CPU, RSS, Manager context).
#[path = "campaign/scale10.rs"]
mod scale10;
// Issue 15: the critical-path bound ratio and the real server's idle share.
#[path = "campaign/bound.rs"]
mod bound;
// Issue 30: booktr beside the seed's Python original, on the pseudo-Chinese case.
#[path = "campaign/seed.rs"]
mod seed;
// The word-for-word consistent translator (`bound`, `seed_original`).
#[path = "../tests/it/support/word_for_word.rs"]
mod word_for_word;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use booktr::agents::Agent;
use booktr::config::Pricing;
use fake_llm::{FakeServer, Recorded, Timing};
use serde_json::{Value, json};

const MANIFEST: &str = env!("CARGO_MANIFEST_DIR");
const BIN: &str = env!("CARGO_BIN_EXE_booktr");

/// The book's files in reading order.
const WHOLE: &[&str] = &[
    "introduction.md",
    "chapter01.md",
    "chapter02.md",
    "chapter03.md",
    "chapter04.md",
    "chapter05.md",
    "chapter06.md",
    "chapter07.md",
    "chapter08.md",
    "chapter09.md",
    "chapter10.md",
];
const TWO: &[&str] = &["chapter01.md", "chapter02.md"];

/// What every benchmark gets.
struct Ctx {
    corpus: Option<PathBuf>,
    machine: Value,
}

impl Ctx {
    /// The corpus chapters `names` as absolute paths, or `None` after printing why.
    fn chapters(&self, bench: &str, names: &[&str]) -> Option<Vec<PathBuf>> {
        match &self.corpus {
            Some(c) => Some(names.iter().map(|n| c.join(n)).collect()),
            None => {
                println!(
                    "{bench}: skipped: the corpus is not at {MANIFEST}/../shared/corpus/ai-agent-book/en"
                );
                None
            }
        }
    }
}

/// A target: `value` compared with `threshold`.
struct Target {
    what: String,
    value: f64,
    at_most: bool,
    threshold: f64,
}

impl Target {
    fn at_most(what: &str, value: f64, threshold: f64) -> Target {
        Target {
            what: what.into(),
            value,
            at_most: true,
            threshold,
        }
    }
    fn at_least(what: &str, value: f64, threshold: f64) -> Target {
        Target {
            what: what.into(),
            value,
            at_most: false,
            threshold,
        }
    }
    fn met(&self) -> bool {
        if self.at_most {
            self.value <= self.threshold
        } else {
            self.value >= self.threshold
        }
    }
    fn json(&self) -> Value {
        json!({"target": self.what, "value": self.value,
            "rule": format!("{} {}", if self.at_most { "<=" } else { ">=" }, self.threshold),
            "met": self.met()})
    }
}

/// What a benchmark reports.
struct Report {
    markdown: String,
    figures: Value,
    targets: Vec<Target>,
}

type Bench = fn(&Ctx) -> Option<Report>;

const BENCHES: &[(&str, Bench)] = &[
    ("wall_time", wall_time),
    ("rate_limited", rate_limited),
    ("token_economy", token_economy),
    ("local_overhead", local_overhead),
    ("throughput", throughput),
    ("scale10", scale10::scale10),
    ("bound", bound::bound),
    ("real_idle", bound::real_idle),
    ("seed_original", seed::seed_original),
];

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().is_some_and(|a| a == "--launch") {
        launch(&args[1..]);
    }
    if args.iter().any(|a| a == "--test") {
        println!(
            "campaign benchmarks: nothing runs under --test (run `cargo bench --bench campaign`)"
        );
        return;
    }
    let filters: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
    let corpus = Path::new(MANIFEST).join("../shared/corpus/ai-agent-book/en");
    let ctx = Ctx {
        corpus: corpus.is_dir().then(|| corpus.canonicalize().unwrap()),
        machine: machine(),
    };
    println!(
        "machine: {}",
        serde_json::to_string(&ctx.machine).unwrap_or_default()
    );
    let out_dir = Path::new(MANIFEST).join("validation/bench");
    for (name, bench) in BENCHES {
        if !filters.is_empty() && !filters.iter().any(|f| name.contains(f.as_str())) {
            continue;
        }
        println!("\n## {name}\n");
        let started = Instant::now();
        let Some(report) = bench(&ctx) else { continue };
        println!("{}", report.markdown);
        if let Some(l) = load_average() {
            println!(
                "load average (1, 5, 15 min): {l:?} on {} cores",
                ctx.machine["nproc"]
            );
        }
        for t in &report.targets {
            println!(
                "target {}: {} {} {}: {}",
                t.what,
                fmt_f(t.value),
                if t.at_most { "<=" } else { ">=" },
                fmt_f(t.threshold),
                if t.met() { "met" } else { "NOT met" }
            );
        }
        let doc = json!({
            "benchmark": name,
            "command": format!("cargo bench --bench campaign -- {name}"),
            "machine": ctx.machine,
            "figures": report.figures,
            "targets": report.targets.iter().map(Target::json).collect::<Vec<_>>(),
            "markdown": report.markdown,
            "bench_seconds": started.elapsed().as_secs_f64(),
            // The machine is shared: its load when the benchmark ended (1, 5 and 15 minutes),
            // to read the wall-time figures by.
            "load_average": load_average(),
        });
        std::fs::create_dir_all(&out_dir).unwrap();
        let path = out_dir.join(format!("{name}.json"));
        let mut text = serde_json::to_string_pretty(&doc).unwrap();
        text.push('\n');
        std::fs::write(&path, text).unwrap();
        println!("wrote {}", path.display());
    }
}

// ---------------------------------------------------------------------------------------------
// Running campaigns

/// A campaign to run with the `booktr` binary in a temporary folder.
struct Spec<'a> {
    name: &'a str,
    chapters: &'a [PathBuf],
    /// Top-level campaign keys (`key = value` lines).
    top: String,
    /// `[provider]` lines; empty for the pseudo provider.
    provider: String,
    /// Extra `booktr run` arguments.
    args: Vec<String>,
}

impl<'a> Spec<'a> {
    fn pseudo(name: &'a str, chapters: &'a [PathBuf], top: &str) -> Spec<'a> {
        Spec {
            name,
            chapters,
            top: top.into(),
            provider: String::new(),
            args: Vec::new(),
        }
    }

    /// Against the fake server at `base_url` (provider `openai`, a dummy key).
    fn fake(name: &'a str, chapters: &'a [PathBuf], top: &str, base_url: &str) -> Spec<'a> {
        Spec {
            name,
            chapters,
            top: top.into(),
            provider: "kind = \"openai\"\nmodel = \"fake-model\"\n".into(),
            args: vec!["--base-url".into(), base_url.into()],
        }
    }
}

/// A finished run.
struct Run {
    dir: tempfile::TempDir,
    name: String,
    summary: Value,
    /// From spawn to exit.
    wall: Duration,
    spawned: Instant,
    exited: Instant,
    /// User and system CPU seconds of the child.
    cpu_user: f64,
    cpu_sys: f64,
    /// Peak resident set size of the child, bytes.
    max_rss: u64,
    /// Bytes the child passed to write(2) and friends (`/proc/<pid>/io` `wchar`), if readable.
    wchar: Option<u64>,
}

impl Run {
    fn state_dir(&self) -> PathBuf {
        self.dir.path().join(&self.name).join("state")
    }
    fn usage(&self, agent: &str, field: &str) -> u64 {
        self.summary["usage"][agent][field].as_u64().unwrap_or(0)
    }
    fn units(&self, field: &str) -> u64 {
        self.summary["units"][field].as_u64().unwrap_or(0)
    }
}

fn run_campaign(spec: &Spec) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let list: Vec<String> = spec
        .chapters
        .iter()
        .map(|c| format!("{:?}", c.to_string_lossy()))
        .collect();
    let house = Path::new(MANIFEST).join("glossaries/house-style.en-zh.csv");
    let mut toml = format!(
        "name = \"{}\"\nsource_lang = \"en\"\ntarget_lang = \"zh\"\nchapters = [{}]\nglossaries = [{:?}]\n{}\n",
        spec.name,
        list.join(", "),
        house.to_string_lossy(),
        spec.top
    );
    if !spec.provider.is_empty() {
        toml.push_str("[provider]\n");
        toml.push_str(&spec.provider);
    }
    let file = dir.path().join("campaign.toml");
    std::fs::write(&file, toml).unwrap();
    let stdout = std::fs::File::create(dir.path().join("stdout.txt")).unwrap();
    let stderr = std::fs::File::create(dir.path().join("stderr.txt")).unwrap();
    // BOOKTR_BENCH_WRAPPER (e.g. `perf record --call-graph dwarf -o /tmp/booktr.perf --`)
    // runs the binary under a profiler; the child's figures are then the wrapper's.
    let wrapper = std::env::var("BOOKTR_BENCH_WRAPPER").unwrap_or_default();
    // The binary is started by a fresh copy of this benchmark in `--launch` mode, which reports
    // its child's rusage (see `launch`).
    let rusage_file = dir.path().join("rusage.json");
    let mut cmd = Command::new(std::env::current_exe().expect("the benchmark's own path"));
    cmd.arg("--launch")
        .arg(&rusage_file)
        .args(wrapper.split_whitespace())
        .arg(BIN)
        .arg("run")
        .arg(&file)
        .args(&spec.args)
        .arg("--json")
        .env_remove("OPENAI_BASE_URL")
        .env("OPENAI_API_KEY", "sk-booktr-bench-dummy")
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr);
    let spawned = Instant::now();
    let launched = cmd.status().expect("spawning the launcher");
    let exited = Instant::now();
    let ru: Value = std::fs::read_to_string(&rusage_file)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_else(|| panic!("the launcher ({launched}) wrote no rusage"));
    let code = ru["code"].as_i64().unwrap_or(-1);
    let out = std::fs::read_to_string(dir.path().join("stdout.txt")).unwrap_or_default();
    let err = std::fs::read_to_string(dir.path().join("stderr.txt")).unwrap_or_default();
    let summary: Value = out
        .lines()
        .last()
        .and_then(|l| serde_json::from_str(l).ok())
        .unwrap_or(Value::Null);
    if code != 0 || summary["status"] != "complete" {
        let tail: Vec<&str> = err.lines().rev().take(15).collect();
        println!(
            "warning: campaign {} exited {code} with status {}; stderr ends:\n{}",
            spec.name,
            summary["status"],
            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
        );
    }
    Run {
        name: spec.name.to_string(),
        summary,
        wall: exited - spawned,
        spawned,
        exited,
        cpu_user: ru["cpu_user_s"].as_f64().unwrap_or(f64::NAN),
        cpu_sys: ru["cpu_sys_s"].as_f64().unwrap_or(f64::NAN),
        max_rss: ru["max_rss_bytes"].as_u64().unwrap_or(0),
        wchar: ru["wchar_bytes"].as_u64(),
        dir,
    }
}

/// `--launch OUT PROGRAM ARGS…`: runs the program (stdio and environment inherited), waits for
/// it with `wait4`, and writes its exit code, user and system CPU seconds, peak RSS and
/// `/proc/<pid>/io` `wchar` to OUT as JSON.
///
/// Why a launcher: Linux keeps `ru_maxrss` across `execve`, and a child spawned by a large
/// process starts with that process's high-water mark (std spawns with `CLONE_VM`, so the
/// parent's memory map is the one replaced at `exec`). Spawned directly by the benchmark, which
/// holds the fake server and every recorded request, booktr's peak RSS read as the benchmark's
/// (127.7 MB for chapters 1–2 and for the whole book alike). A fresh copy of this binary,
/// started before it allocates anything, is a small parent; its child's `ru_maxrss` is booktr's
/// own.
fn launch(args: &[String]) -> ! {
    let (out, argv) = args.split_first().expect("--launch OUT PROGRAM ARGS…");
    let (program, rest) = argv.split_first().expect("--launch OUT PROGRAM ARGS…");
    let child = Command::new(program)
        .args(rest)
        .spawn()
        .unwrap_or_else(|e| panic!("spawning {program}: {e}"));
    let pid = child.id() as libc::pid_t;
    // Wait for the exit without reaping, so that /proc/<pid>/io can still be read; then reap
    // with wait4 for the child's rusage. `child` is never waited on by std.
    // SAFETY: plain libc calls on our own child's pid, with zeroed out-parameters.
    let (status, ru, wchar) = unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        libc::waitid(
            libc::P_PID,
            pid as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOWAIT,
        );
        let wchar = read_wchar(pid);
        let mut status = 0;
        let mut ru: libc::rusage = std::mem::zeroed();
        let r = libc::wait4(pid, &mut status, 0, &mut ru);
        assert_eq!(r, pid, "wait4: {}", std::io::Error::last_os_error());
        (status, ru, wchar)
    };
    drop(child);
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    let doc = json!({"code": code, "cpu_user_s": tv(ru.ru_utime), "cpu_sys_s": tv(ru.ru_stime),
        "max_rss_bytes": ru.ru_maxrss as u64 * 1024, "wchar_bytes": wchar});
    std::fs::write(out, doc.to_string()).expect("writing the rusage file");
    std::process::exit(0)
}

fn read_wchar(pid: libc::pid_t) -> Option<u64> {
    let io = std::fs::read_to_string(format!("/proc/{pid}/io")).ok()?;
    io.lines()
        .find_map(|l| l.strip_prefix("wchar:"))
        .and_then(|v| v.trim().parse().ok())
        .filter(|&v| v > 0)
}

/// Total size of the files under `p`, and their number.
fn dir_size(p: &Path) -> (u64, usize) {
    let mut total = (0, 0);
    if let Ok(rd) = std::fs::read_dir(p) {
        for e in rd.flatten() {
            let path = e.path();
            if path.is_dir() {
                let (b, n) = dir_size(&path);
                total.0 += b;
                total.1 += n;
            } else if let Ok(m) = e.metadata() {
                total.0 += m.len();
                total.1 += 1;
            }
        }
    }
    total
}

// ---------------------------------------------------------------------------------------------
// Stages

/// The campaign stage a request belongs to, from its agent and content: the book brief is the
/// Glossary-agent request of the lead editor "preparing the translation brief", a
/// reconciliation a Glossary-agent request whose system prompt says a term "was rendered in
/// different ways", a revision a Translation request that carries the previous translation
/// (more than three messages), and the decision the Manager's call.
fn stage_of(r: &Recorded) -> &'static str {
    match r.agent {
        Agent::Glossary
            if r.messages
                .first()
                .is_some_and(|m| m.content.contains("preparing the translation brief")) =>
        {
            "brief"
        }
        Agent::Glossary
            if r.messages
                .first()
                .is_some_and(|m| m.content.contains("was rendered in different ways")) =>
        {
            "reconciliation"
        }
        Agent::Glossary => "glossary",
        Agent::Translation if r.is_revision() => "revision",
        Agent::Translation => "translation",
        Agent::Proofreading => "proofreading",
        Agent::Manager => "decision",
        // Only `booktr experiment` judges; a campaign run never does.
        Agent::Judge => "judge",
    }
}

/// One run of consecutive calls of the same stage (stages are barriers in booktr, so calls
/// sorted by start time fall into such runs; a stage that repeats in a later round is a new
/// instance).
struct StageRun {
    stage: &'static str,
    calls: Vec<Timing>,
}

impl StageRun {
    fn total(&self) -> Duration {
        self.calls.iter().map(Timing::duration).sum()
    }
    fn longest(&self) -> Duration {
        self.calls
            .iter()
            .map(Timing::duration)
            .max()
            .unwrap_or_default()
    }
    fn first_start(&self) -> Instant {
        self.calls.iter().map(|t| t.start).min().unwrap()
    }
    fn last_end(&self) -> Instant {
        self.calls.iter().map(|t| t.end).max().unwrap()
    }
    /// max(longest call, total call time / concurrency).
    fn bound(&self, concurrency: usize) -> Duration {
        self.longest().max(self.total() / concurrency as u32)
    }
}

/// Whether a call of `stage` may overlap a run of `run` (issue 15: proofreading overlaps the
/// translation or revision of the same round).
fn overlapping(run: &str, stage: &str) -> bool {
    match run {
        "translation" => stage == "proofreading",
        "revision" => stage == "proofreading",
        "translation + proofreading" => matches!(stage, "translation" | "proofreading"),
        "revision + proofreading" => matches!(stage, "revision" | "proofreading"),
        _ => false,
    }
}

fn stage_runs(fake: &FakeServer) -> Vec<StageRun> {
    let reqs = fake.requests();
    let by_n: BTreeMap<usize, &Recorded> = reqs.iter().map(|r| (r.n, r)).collect();
    let mut timings: Vec<Timing> = fake
        .timings()
        .into_iter()
        .filter(|t| t.status == 200)
        .collect();
    timings.sort_by_key(|t| t.start);
    let mut runs: Vec<StageRun> = Vec::new();
    for t in timings {
        let stage = by_n.get(&t.n).map_or("unknown", |r| stage_of(r));
        match runs.last_mut() {
            Some(r) if r.stage == stage => r.calls.push(t),
            // Issue 15: a chapter's proofreading starts while other chapters still translate,
            // so the two overlap and are one stage instance here (max(longest, total / slots)
            // over both stays a lower bound; summing them as barriers would not be).
            Some(r) if overlapping(r.stage, stage) && t.start < r.last_end() => {
                r.stage = match r.stage {
                    "translation" | "translation + proofreading" => "translation + proofreading",
                    _ => "revision + proofreading",
                };
                r.calls.push(t)
            }
            _ => runs.push(StageRun {
                stage,
                calls: vec![t],
            }),
        }
    }
    runs
}

// ---------------------------------------------------------------------------------------------
// wall_time

const WALL_CONCURRENCY: usize = 8;
/// The reference latency model: 1 s before the first token plus 50 completion tokens per
/// second, the order of magnitude of hosted chat models (gpt-4o-mini class) under load.
const WALL_REF_BASE_S: f64 = 1.0;
const WALL_REF_TOKENS_PER_S: f64 = 50.0;
/// The reference model is run this many times faster by default (base 40 ms, 1,250 tokens per
/// second), so that the benchmark takes about a minute instead of twenty-five; override with
/// `BOOKTR_BENCH_LATENCY_SCALE` (1 = real time). Scaling the latency down makes booktr's own
/// CPU time (not scaled) weigh more in the wall time, so the ratio it reports is conservative.
const WALL_DEFAULT_SCALE: f64 = 25.0;

/// The latency model in use: (scale, base, seconds per completion token).
fn wall_latency() -> (f64, Duration, Duration) {
    let scale = std::env::var("BOOKTR_BENCH_LATENCY_SCALE")
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|s| *s > 0.0 && s.is_finite())
        .unwrap_or(WALL_DEFAULT_SCALE);
    (
        scale,
        Duration::from_secs_f64(WALL_REF_BASE_S / scale),
        Duration::from_secs_f64(1.0 / (WALL_REF_TOKENS_PER_S * scale)),
    )
}

fn wall_time(ctx: &Ctx) -> Option<Report> {
    let chapters = ctx.chapters("wall_time", WHOLE)?;
    let fake = FakeServer::start();
    let (scale, base, per_token) = wall_latency();
    let base_ms = base.as_secs_f64() * 1e3;
    let tokens_per_s = 1.0 / per_token.as_secs_f64();
    fake.latency(base, per_token);
    let run = run_campaign(&Spec::fake(
        "wall",
        &chapters,
        &format!("concurrency = {WALL_CONCURRENCY}\n"),
        &fake.base_url,
    ));
    let runs = stage_runs(&fake);
    let wall = run.wall.as_secs_f64();
    let bound: f64 = runs
        .iter()
        .map(|r| r.bound(WALL_CONCURRENCY).as_secs_f64())
        .sum();
    let sequential: f64 = runs.iter().map(|r| r.total().as_secs_f64()).sum();
    let calls: usize = runs.iter().map(|r| r.calls.len()).sum();
    let (first, last) = (
        runs.first().map(StageRun::first_start),
        runs.last().map(StageRun::last_end),
    );
    let mut md = format!(
        "Whole book ({} files) against the fake server: latency {base_ms:.0} ms + completion tokens / {tokens_per_s:.0} per second (the reference model {WALL_REF_BASE_S} s + tokens / {WALL_REF_TOKENS_PER_S} per second, {scale}× faster; `BOOKTR_BENCH_LATENCY_SCALE`), concurrency {WALL_CONCURRENCY}. Stages in the order they ran; `gap before` is time with no call in flight between the previous stage's last answer (or the process start) and this stage's first request.\n\n",
        chapters.len()
    );
    let mut rows = Vec::new();
    let mut prev_end = run.spawned;
    let mut per_stage = Vec::new();
    for r in &runs {
        let gap = r.first_start().saturating_duration_since(prev_end);
        prev_end = r.last_end();
        let span = r.last_end() - r.first_start();
        let bound = r.bound(WALL_CONCURRENCY);
        rows.push(vec![
            r.stage.to_string(),
            r.calls.len().to_string(),
            secs(r.total()),
            secs(r.longest()),
            secs(bound),
            secs(span),
            format!("{:.2}", span.as_secs_f64() / bound.as_secs_f64().max(1e-9)),
            secs(gap),
        ]);
        per_stage.push(json!({"stage": r.stage, "calls": r.calls.len(),
            "total_call_s": r.total().as_secs_f64(), "longest_call_s": r.longest().as_secs_f64(),
            "bound_s": bound.as_secs_f64(), "span_s": span.as_secs_f64(), "gap_before_s": gap.as_secs_f64(),
            "completion_tokens": r.calls.iter().map(|t| t.completion_tokens).sum::<u64>()}));
    }
    let tail = last.map_or(Duration::ZERO, |l| run.exited.saturating_duration_since(l));
    rows.push(vec![
        "(after the last call)".into(),
        String::new(),
        String::new(),
        String::new(),
        String::new(),
        String::new(),
        String::new(),
        secs(tail),
    ]);
    md.push_str(&table(
        &[
            "stage",
            "calls",
            "Σ call time",
            "longest call",
            "bound",
            "span",
            "span / bound",
            "gap before",
        ],
        &rows,
    ));
    let ratio = wall / bound;
    let speedup = sequential / wall;
    let local: f64 = wall
        - runs
            .iter()
            .map(|r| (r.last_end() - r.first_start()).as_secs_f64())
            .sum::<f64>();
    md.push('\n');
    md.push_str(&table(
        &["figure", "value", "target"],
        &[
            vec!["calls answered".into(), calls.to_string(), String::new()],
            vec![
                "max calls in flight (fake's gauge)".into(),
                fake.max_in_flight().to_string(),
                format!("≤ {WALL_CONCURRENCY}"),
            ],
            vec![
                "measured wall time (process)".into(),
                format!("{wall:.2} s"),
                String::new(),
            ],
            vec![
                "first request → last answer".into(),
                first.zip(last).map_or("-".into(), |(f, l)| secs(l - f)),
                String::new(),
            ],
            vec![
                "time with no call in flight (gaps)".into(),
                format!("{local:.2} s"),
                String::new(),
            ],
            vec![
                "critical-path bound".into(),
                format!("{bound:.2} s"),
                String::new(),
            ],
            vec![
                "measured / bound".into(),
                format!("{ratio:.3}"),
                "≤ 1.25".into(),
            ],
            vec![
                "Σ call durations (sequential)".into(),
                format!("{sequential:.2} s"),
                String::new(),
            ],
            vec![
                "speed-up over sequential".into(),
                format!("{speedup:.2}×"),
                "≥ 6×".into(),
            ],
            vec![
                "booktr CPU (user + sys)".into(),
                format!("{:.2} s", run.cpu_user + run.cpu_sys),
                String::new(),
            ],
        ],
    ));
    Some(Report {
        markdown: md,
        figures: json!({
            "workload": {"chapters": chapters.len(), "concurrency": WALL_CONCURRENCY,
                "latency_base_ms": base_ms, "tokens_per_second": tokens_per_s,
                "reference_base_s": WALL_REF_BASE_S, "reference_tokens_per_second": WALL_REF_TOKENS_PER_S,
                "latency_scale": scale},
            "status": run.summary["status"], "units": run.summary["units"],
            "calls": calls, "max_in_flight": fake.max_in_flight(),
            "wall_s": wall, "bound_s": bound, "ratio": ratio,
            "sequential_s": sequential, "speedup": speedup, "no_call_in_flight_s": local,
            "after_last_call_s": tail.as_secs_f64(),
            "cpu_s": run.cpu_user + run.cpu_sys,
            "stages": per_stage,
        }),
        targets: vec![
            Target::at_most("measured / critical-path bound", ratio, 1.25),
            Target::at_least("speed-up over sequential at concurrency 8", speedup, 6.0),
        ],
    })
}

// ---------------------------------------------------------------------------------------------
// rate_limited

const RPM: usize = 600;
/// Smaller units than the default (12,000 chars) so the whole book makes enough requests
/// (about 650) to keep the limit busy for a little over one 60-second window.
const RPM_UNIT_CHARS: usize = 2400;

/// One configuration of the rate-limited run.
struct RpmVariant {
    label: &'static str,
    /// The fake sends `x-ratelimit-*` headers.
    headers: bool,
}

fn rate_limited(ctx: &Ctx) -> Option<Report> {
    let chapters = ctx.chapters("rate_limited", WHOLE)?;
    // The campaign's `max_requests_per_minute` equals the server's limit in both: the client's
    // own pacing must keep every sliding 60-second window within it, with or without the
    // provider's `x-ratelimit-*` headers to lean on.
    let variants = [
        RpmVariant {
            label: "429 + Retry-After + x-ratelimit-* headers",
            headers: true,
        },
        RpmVariant {
            label: "429 + Retry-After only (no x-ratelimit-* headers)",
            headers: false,
        },
    ];
    let mut rows = Vec::new();
    let mut figures = Vec::new();
    let mut targets = Vec::new();
    for v in &variants {
        let fake = FakeServer::start();
        fake.enforce_rpm(RPM);
        fake.rate_limit_headers(v.headers);
        let mut spec = Spec::fake(
            "limited",
            &chapters,
            &format!("concurrency = 8\nmax_unit_chars = {RPM_UNIT_CHARS}\n"),
            &fake.base_url,
        );
        let _ = writeln!(spec.provider, "max_requests_per_minute = {RPM}");
        let run = run_campaign(&spec);
        let reqs = fake.requests();
        let accepted = reqs.len();
        let rejected = fake.rejected_429();
        let mut at: Vec<Instant> = reqs.iter().map(|r| r.at).collect();
        at.sort();
        let minute = Duration::from_secs(60);
        let span = match (at.first(), at.last()) {
            (Some(f), Some(l)) => (*l - *f).as_secs_f64(),
            _ => 0.0,
        };
        let achieved = if span > 0.0 {
            (accepted as f64 - 1.0) / span * 60.0
        } else {
            0.0
        };
        // The most accepted requests in any 60-second window (the server enforces ≤ RPM).
        let mut peak = 0;
        let mut lo = 0;
        for hi in 0..at.len() {
            while at[hi] - at[lo] >= minute {
                lo += 1;
            }
            peak = peak.max(hi - lo + 1);
        }
        let first_min = at.iter().take_while(|&&t| t - at[0] < minute).count();
        // Rate after the first minute (the steady state, once the initial burst is spent).
        let after: Vec<&Instant> = at.iter().filter(|&&t| t - at[0] >= minute).collect();
        let steady = match (after.first(), after.last()) {
            (Some(f), Some(l)) if *l > *f => {
                (after.len() as f64 - 1.0) / (**l - **f).as_secs_f64() * 60.0
            }
            _ => f64::NAN,
        };
        let share = achieved / RPM as f64;
        rows.push(vec![
            v.label.to_string(),
            run.summary["status"].as_str().unwrap_or("?").to_string(),
            (accepted + rejected).to_string(),
            rejected.to_string(),
            format!("{span:.1} s"),
            first_min.to_string(),
            peak.to_string(),
            format!("{achieved:.0}"),
            format!("{steady:.0}"),
            format!("{:.1} %", share * 100.0),
        ]);
        figures.push(json!({"variant": v.label, "campaign_rpm": RPM, "server_rpm": RPM,
            "headers": v.headers, "status": run.summary["status"],
            "requests_sent": accepted + rejected, "accepted": accepted, "rejected_429": rejected,
            "first_to_last_request_s": span, "wall_s": run.wall.as_secs_f64(),
            "requests_in_first_minute": first_min, "peak_requests_in_60s_window": peak,
            "achieved_rpm": achieved, "steady_rpm_after_first_minute": if steady.is_finite() { json!(steady) } else { Value::Null },
            "share_of_limit": share,
            "calls_by_agent": Agent::ALL.iter().map(|a| (a.as_str(), run.usage(a.as_str(), "calls"))).collect::<BTreeMap<_, _>>(),
            "http_requests_by_agent": Agent::ALL.iter().map(|a| (a.as_str(), run.usage(a.as_str(), "requests"))).collect::<BTreeMap<_, _>>()}));
        targets.push(Target::at_most(
            &format!("429s caused, {}", v.label),
            rejected as f64,
            0.0,
        ));
        targets.push(Target::at_least(
            &format!("share of the limit achieved, {}", v.label),
            share,
            0.90,
        ));
    }
    let mut md = format!(
        "Whole book, `max_unit_chars = {RPM_UNIT_CHARS}` (to make enough requests), concurrency 8, zero latency; `max_requests_per_minute = {RPM}` in the campaign, and the fake enforces the same {RPM} requests per sliding 60-second window (429 with `Retry-After` beyond it). Achieved rate = (accepted requests − 1) / (last − first request arrival) × 60; steady rate: the same after the first 60 s. Targets apply to every row.\n\n"
    );
    md.push_str(&table(
        &[
            "configuration",
            "status",
            "requests sent",
            "429s",
            "first → last request",
            "requests in first 60 s",
            "peak in any 60 s",
            "achieved req/min",
            "steady req/min",
            "share of limit",
        ],
        &rows,
    ));
    Some(Report {
        markdown: md,
        figures: json!({"server_rpm": RPM, "max_unit_chars": RPM_UNIT_CHARS, "runs": figures}),
        targets,
    })
}

// ---------------------------------------------------------------------------------------------
// token_economy

/// The Python original's figures for chapters 1–2 (prompt tokens).
const PY_GLOSSARY: u64 = 49_675;
const PY_PROOFREADING: u64 = 49_021;
const PY_MANAGER: u64 = 1_213;
const PY_TRANSLATION: u64 = 55_000;

/// gpt-4o-mini list prices per million tokens.
const INPUT_PRICE: f64 = 0.15;
const OUTPUT_PRICE: f64 = 0.60;

fn token_economy(ctx: &Ctx) -> Option<Report> {
    let whole = ctx.chapters("token_economy", WHOLE)?;
    let two = ctx.chapters("token_economy", TWO)?;
    let w = run_campaign(&Spec::pseudo("whole", &whole, "concurrency = 8\n"));
    let t = run_campaign(&Spec::pseudo("two", &two, "concurrency = 8\n"));
    let agents = ["translation", "glossary", "proofreading", "manager"];
    let others = |r: &Run| {
        r.usage("glossary", "prompt_tokens")
            + r.usage("proofreading", "prompt_tokens")
            + r.usage("manager", "prompt_tokens")
    };
    let ratio = |r: &Run| others(r) as f64 / r.usage("translation", "prompt_tokens") as f64;
    let py_others = PY_GLOSSARY + PY_PROOFREADING + PY_MANAGER;
    let py_ratio = py_others as f64 / PY_TRANSLATION as f64;

    let mut md = String::from(
        "Pseudo provider (usage computed with o200k_base), house-style glossary, default settings. Prompt / completion tokens and calls per agent; the Python original measured chapters 1–2 only (its translation figure is approximate).\n\n",
    );
    let mut rows = Vec::new();
    for a in agents {
        let py = match a {
            "translation" => format!("≈ {}", thousands(PY_TRANSLATION)),
            "glossary" => thousands(PY_GLOSSARY),
            "proofreading" => thousands(PY_PROOFREADING),
            _ => thousands(PY_MANAGER),
        };
        rows.push(vec![
            a.to_string(),
            format!(
                "{} / {} ({} calls)",
                thousands(w.usage(a, "prompt_tokens")),
                thousands(w.usage(a, "completion_tokens")),
                w.usage(a, "calls")
            ),
            format!(
                "{} / {} ({} calls)",
                thousands(t.usage(a, "prompt_tokens")),
                thousands(t.usage(a, "completion_tokens")),
                t.usage(a, "calls")
            ),
            py,
        ]);
    }
    rows.push(vec![
        "glossary + proofreading + manager prompt tokens".into(),
        thousands(others(&w)),
        thousands(others(&t)),
        thousands(py_others),
    ]);
    rows.push(vec![
        "… / translation prompt tokens (target ≤ 0.30)".into(),
        format!("{:.3}", ratio(&w)),
        format!("{:.3}", ratio(&t)),
        format!("{py_ratio:.2}"),
    ]);
    rows.push(vec![
        "Manager context peak (tokens)".into(),
        w.summary["manager_context_peak_tokens"].to_string(),
        t.summary["manager_context_peak_tokens"].to_string(),
        String::new(),
    ]);
    md.push_str(&table(
        &[
            "agent",
            "whole book: prompt / completion",
            "chapters 1–2: prompt / completion",
            "Python original, ch. 1–2: prompt",
        ],
        &rows,
    ));

    // The prompt layout, decided by cost against the prefix-cache simulation.
    let mut layouts = Vec::new();
    for layout in ["relevant", "full"] {
        let fake = FakeServer::start();
        fake.prefix_cache(true);
        let run = run_campaign(&Spec::fake(
            &format!("layout-{layout}"),
            &whole,
            &format!("concurrency = 8\nprompt_layout = \"{layout}\"\n"),
            &fake.base_url,
        ));
        layouts.push((layout, run));
    }
    let total = |r: &Run, f: &str| agents.iter().map(|a| r.usage(a, f)).sum::<u64>();
    let cost = |r: &Run, cached_share: Option<f64>| {
        let p = Pricing {
            input_per_million: INPUT_PRICE,
            cached_input_per_million: cached_share.map(|s| s * INPUT_PRICE),
            output_per_million: OUTPUT_PRICE,
            currency: "USD".into(),
            ..Default::default()
        };
        agents
            .iter()
            .map(|a| {
                p.cost(
                    r.usage(a, "prompt_tokens"),
                    if cached_share.is_some() {
                        r.usage(a, "cached_tokens")
                    } else {
                        0
                    },
                    r.usage(a, "completion_tokens"),
                )
            })
            .sum::<f64>()
    };
    md.push_str(&format!(
        "\nPrompt layout: the whole book against the fake server with its prefix-cache simulation (OpenAI's rule: cached = longest common token prefix with one of the last 256 requests, if ≥ 1,024, in steps of 128). Prices: gpt-4o-mini list, ${INPUT_PRICE}/M input, ${OUTPUT_PRICE}/M output; cached input at 50 % (OpenAI) or 10 % (DeepSeek, Anthropic reads) of the input price.\n\n"
    ));
    let mut lrows = Vec::new();
    let mut lfig = serde_json::Map::new();
    for (layout, r) in &layouts {
        let (p, c, o) = (
            total(r, "prompt_tokens"),
            total(r, "cached_tokens"),
            total(r, "completion_tokens"),
        );
        lrows.push(vec![
            format!("`{layout}`"),
            r.summary["status"].as_str().unwrap_or("?").to_string(),
            thousands(r.usage("translation", "prompt_tokens")),
            thousands(r.usage("translation", "cached_tokens")),
            thousands(p),
            thousands(c),
            format!("{:.1} %", 100.0 * c as f64 / p.max(1) as f64),
            thousands(o),
            format!("${:.4}", cost(r, None)),
            format!("${:.4}", cost(r, Some(0.5))),
            format!("${:.4}", cost(r, Some(0.1))),
        ]);
        lfig.insert(
            layout.to_string(),
            json!({"status": r.summary["status"], "usage": r.summary["usage"],
                "prompt_tokens": p, "cached_tokens": c, "completion_tokens": o,
                "cost_no_cache": cost(r, None), "cost_cached_50": cost(r, Some(0.5)),
                "cost_cached_10": cost(r, Some(0.1))}),
        );
    }
    md.push_str(&table(
        &[
            "layout",
            "status",
            "translation prompt",
            "translation cached",
            "all prompt",
            "all cached",
            "cached share",
            "completion",
            "cost, no cache",
            "cost, cached at 50 %",
            "cost, cached at 10 %",
        ],
        &lrows,
    ));
    let (rel, full) = (&layouts[0].1, &layouts[1].1);
    let mut decision = Vec::new();
    for (share, label) in [(0.5, "50 %"), (0.1, "10 %")] {
        let (a, b) = (cost(rel, Some(share)), cost(full, Some(share)));
        let (winner, loser, wc, lc) = if a <= b {
            ("relevant", "full", a, b)
        } else {
            ("full", "relevant", b, a)
        };
        let line = format!(
            "cached input at {label}: `{winner}` is cheaper: ${wc:.4} against ${lc:.4} for `{loser}` ({:.1} % less)",
            100.0 * (lc - wc) / lc
        );
        decision.push(
            json!({"cached_share": share, "cheaper": winner, "cost_cheaper": wc, "cost_other": lc}),
        );
        md.push_str(&format!("\n- {line}"));
    }
    md.push('\n');
    Some(Report {
        markdown: md,
        figures: json!({
            "pseudo_whole": {"usage": w.summary["usage"], "units": w.summary["units"],
                "manager_context_peak_tokens": w.summary["manager_context_peak_tokens"],
                "others_prompt_tokens": others(&w), "ratio": ratio(&w)},
            "pseudo_ch1_2": {"usage": t.summary["usage"], "units": t.summary["units"],
                "manager_context_peak_tokens": t.summary["manager_context_peak_tokens"],
                "others_prompt_tokens": others(&t), "ratio": ratio(&t)},
            "python_ch1_2": {"glossary": PY_GLOSSARY, "proofreading": PY_PROOFREADING,
                "manager": PY_MANAGER, "translation_approx": PY_TRANSLATION, "ratio": py_ratio},
            "prices": {"input_per_million": INPUT_PRICE, "output_per_million": OUTPUT_PRICE},
            "layouts": lfig,
            "layout_decision": decision,
        }),
        targets: vec![
            Target::at_most(
                "(glossary + proofreading + manager) / translation prompt tokens, whole book",
                ratio(&w),
                0.30,
            ),
            Target::at_most(
                "(glossary + proofreading + manager) / translation prompt tokens, chapters 1–2",
                ratio(&t),
                0.30,
            ),
        ],
    })
}

// ---------------------------------------------------------------------------------------------
// local_overhead

fn local_overhead(ctx: &Ctx) -> Option<Report> {
    let whole = ctx.chapters("local_overhead", WHOLE)?;
    let two = ctx.chapters("local_overhead", TWO)?;
    let mut rows = Vec::new();
    let mut figs = serde_json::Map::new();
    let mut targets = Vec::new();
    for (label, chapters) in [("chapters 1–2", &two), ("whole book", &whole)] {
        let fake = FakeServer::start();
        let run = run_campaign(&Spec::fake(
            "overhead",
            chapters,
            "concurrency = 8\n",
            &fake.base_url,
        ));
        let calls: u64 = Agent::ALL
            .iter()
            .map(|a| run.usage(a.as_str(), "calls"))
            .sum();
        let translated = run.units("translated");
        let (state_bytes, state_files) = dir_size(&run.state_dir());
        let journal = find_journal(&run.state_dir())
            .and_then(|p| std::fs::metadata(p).ok())
            .map_or(0, |m| m.len());
        let cpu = run.cpu_user + run.cpu_sys;
        let source_bytes: u64 = chapters
            .iter()
            .filter_map(|c| std::fs::metadata(c).ok())
            .map(|m| m.len())
            .sum();
        rows.push(vec![
            label.to_string(),
            run.summary["status"].as_str().unwrap_or("?").to_string(),
            format!("{:.2} MB", source_bytes as f64 / 1e6),
            format!("{translated} / {calls}"),
            format!("{:.2} s", run.wall.as_secs_f64()),
            format!("{:.2} + {:.2} = {cpu:.2} s", run.cpu_user, run.cpu_sys),
            format!("{:.1} MB", run.max_rss as f64 / 1e6),
            format!("{} in {state_files} files", kb(state_bytes)),
            kb(state_bytes / translated.max(1)),
            kb(journal / calls.max(1)),
            run.wchar.map_or("-".into(), |w| kb(w / translated.max(1))),
        ]);
        figs.insert(
            label.to_string(),
            json!({"status": run.summary["status"], "source_bytes": source_bytes,
                "units": run.summary["units"], "calls": calls, "wall_s": run.wall.as_secs_f64(),
                "cpu_user_s": run.cpu_user, "cpu_sys_s": run.cpu_sys, "cpu_s": cpu,
                "max_rss_bytes": run.max_rss, "state_bytes": state_bytes, "state_files": state_files,
                "journal_bytes": journal, "state_bytes_per_translated_unit": state_bytes as f64 / translated.max(1) as f64,
                "journal_bytes_per_call": journal as f64 / calls.max(1) as f64,
                "wchar_bytes": run.wchar,
                "wchar_bytes_per_translated_unit": run.wchar.map(|w| w as f64 / translated.max(1) as f64)}),
        );
        if label == "whole book" {
            targets.push(Target::at_most(
                "CPU time (user + sys), whole book, s",
                cpu,
                3.0,
            ));
            targets.push(Target::at_most(
                "peak RSS, whole book, MB",
                run.max_rss as f64 / 1e6,
                150.0,
            ));
        }
    }
    let per_unit = |k: &str| {
        figs[k]["state_bytes_per_translated_unit"]
            .as_f64()
            .unwrap_or(0.0)
    };
    let growth = per_unit("whole book") / per_unit("chapters 1–2").max(1.0);
    targets.push(Target::at_most(
        "state bytes per unit, whole book / chapters 1–2",
        growth,
        1.25,
    ));
    let mut md = String::from(
        "The `booktr` binary against a zero-latency fake server (provider `openai`, concurrency 8). CPU and peak RSS are the child's own (`wait4` rusage, taken by a small launcher process so that the benchmark's own memory is not inherited through `execve`); the fake runs in the benchmark process and is not counted. State bytes are the size of the state directory after the run (results are written once and the journal is append-only, so this is what was written there); `wchar` is every byte the process wrote (state, outputs, reports, stdout/stderr).\n\n",
    );
    md.push_str(&table(
        &[
            "campaign",
            "status",
            "source",
            "units translated / calls",
            "wall",
            "CPU user + sys",
            "peak RSS",
            "state directory",
            "state per unit",
            "journal per call",
            "wchar per unit",
        ],
        &rows,
    ));
    md.push_str(&format!(
        "\nState bytes per translated unit, whole book / chapters 1–2: {growth:.2} (≈ 1 means O(1) checkpoint writes per unit).\n"
    ));
    Some(Report {
        markdown: md,
        figures: Value::Object(figs),
        targets,
    })
}

fn find_journal(state: &Path) -> Option<PathBuf> {
    std::fs::read_dir(state)
        .ok()?
        .flatten()
        .map(|e| e.path().join("journal.jsonl"))
        .find(|p| p.is_file())
}

// ---------------------------------------------------------------------------------------------
// throughput

fn throughput(ctx: &Ctx) -> Option<Report> {
    let chapters = ctx.chapters("throughput", WHOLE)?;
    let texts: Vec<(String, String)> = chapters
        .iter()
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            let key = booktr::book::chapter::chapter_key(&name);
            (key, std::fs::read_to_string(p).unwrap())
        })
        .collect();
    let bytes: usize = texts.iter().map(|(_, t)| t.len()).sum();
    let max = booktr::book::segment::DEFAULT_MAX_UNIT_CHARS;
    let segment_all = || {
        texts
            .iter()
            .map(|(k, t)| booktr::book::segment(k, t, max).len())
            .sum::<usize>()
    };
    let units = segment_all();
    let seg = timed_loop(Duration::from_secs(2), || {
        std::hint::black_box(segment_all());
    });
    // Tokenizer: counting every chapter (after a warm-up that builds the encoder).
    booktr::tokens::count("warm up");
    let tok = timed_loop(Duration::from_secs(2), || {
        for (_, t) in &texts {
            std::hint::black_box(booktr::tokens::count(t));
        }
    });
    // QA: the whole corpus validated against itself, as benches/qa.rs does.
    let report_dir = tempfile::tempdir().unwrap();
    let args = booktr::cli::ValidateArgs {
        campaign: None,
        source: Some(ctx.corpus.clone().unwrap()),
        target: Some(ctx.corpus.clone().unwrap()),
        glossary: vec![],
        source_lang: Some("en".into()),
        target_lang: Some("zh".into()),
        max_unit_chars: max,
        report_dir: Some(report_dir.path().to_path_buf()),
        json: false,
        code_comments: None,
    };
    let started = Instant::now();
    let _ = booktr::commands::validate::run(&args);
    let qa = started.elapsed().as_secs_f64();
    let mb = bytes as f64 / 1e6;
    let rows = vec![
        vec![
            "segmentation (pulldown-cmark, cut points)".into(),
            format!("{:.2} ms per pass", seg * 1e3),
            format!("{:.1} MB/s", mb / seg),
            "≥ 20 MB/s".into(),
        ],
        vec![
            "QA: `validate` of the corpus against itself (every check, 3 reports)".into(),
            format!("{qa:.3} s"),
            format!("{:.1} MB/s", mb / qa),
            "< 5 s".into(),
        ],
        vec![
            "o200k_base token count".into(),
            format!("{:.1} ms per pass", tok * 1e3),
            format!("{:.1} MB/s", mb / tok),
            String::new(),
        ],
    ];
    let mut md = format!(
        "{} chapters, {bytes} bytes, {units} units at {max} chars; one core.\n\n",
        texts.len()
    );
    md.push_str(&table(&["work", "time", "throughput", "target"], &rows));
    Some(Report {
        markdown: md,
        figures: json!({"bytes": bytes, "units": units,
            "segmentation_s": seg, "segmentation_mb_s": mb / seg,
            "qa_validate_s": qa, "qa_mb_s": mb / qa,
            "tokenizer_s": tok, "tokenizer_mb_s": mb / tok}),
        targets: vec![
            Target::at_least("segmentation MB/s", mb / seg, 20.0),
            Target::at_most("QA validate of the whole corpus, s", qa, 5.0),
        ],
    })
}

/// Runs `f` repeatedly for at least `budget` (at least 3 times, after one warm-up) and returns
/// the mean seconds per run.
fn timed_loop(budget: Duration, mut f: impl FnMut()) -> f64 {
    f();
    let start = Instant::now();
    let mut n = 0u32;
    while n < 3 || start.elapsed() < budget {
        f();
        n += 1;
    }
    start.elapsed().as_secs_f64() / f64::from(n)
}

// ---------------------------------------------------------------------------------------------
// Machine description and formatting

fn machine() -> Value {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string());
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let mem_kb: Option<u64> = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok());
    let rustc = command_line(
        &std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into()),
        &["--version"],
    );
    let commit = command_line("git", &["-C", MANIFEST, "describe", "--always", "--dirty"]);
    let os = std::fs::read_to_string("/etc/os-release")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("PRETTY_NAME="))
                .map(|v| v.trim_matches('"').to_string())
        });
    json!({
        "nproc": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
        "cpu_model": cpu,
        "memory_total_bytes": mem_kb.map(|k| k * 1024),
        "os": os,
        "kernel": std::fs::read_to_string("/proc/sys/kernel/osrelease").ok().map(|s| s.trim().to_string()),
        "rustc": rustc,
        "profile": if cfg!(debug_assertions) { "debug" } else { "release" },
        "commit": commit,
        "date": now_utc(),
    })
}

/// `/proc/loadavg`'s 1-, 5- and 15-minute load averages.
fn load_average() -> Option<Vec<f64>> {
    let s = std::fs::read_to_string("/proc/loadavg").ok()?;
    s.split_whitespace()
        .take(3)
        .map(|v| v.parse().ok())
        .collect()
}

fn command_line(cmd: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(cmd).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The current UTC time as `YYYY-MM-DDTHH:MM:SSZ`.
fn now_utc() -> String {
    booktr::util::utc_timestamp(booktr::campaign::core::store::now_ms(), true)
}

fn table(headers: &[&str], rows: &[Vec<String>]) -> String {
    let mut s = format!("| {} |\n|", headers.join(" | "));
    for _ in headers {
        s.push_str("---|");
    }
    s.push('\n');
    for r in rows {
        let _ = writeln!(s, "| {} |", r.join(" | "));
    }
    s
}

fn secs(d: Duration) -> String {
    format!("{:.2} s", d.as_secs_f64())
}

fn kb(bytes: u64) -> String {
    if bytes >= 1_000_000 {
        format!("{:.2} MB", bytes as f64 / 1e6)
    } else {
        format!("{:.1} kB", bytes as f64 / 1e3)
    }
}

fn fmt_f(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e12 {
        format!("{v:.0}")
    } else {
        format!("{v:.3}")
    }
}

use booktr::experiment::evidence::thousands;
