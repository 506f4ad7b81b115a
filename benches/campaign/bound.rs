//! Issue 15, "close to the bound" and "a real server kept busy": two benchmarks of
//! `cargo bench --bench campaign`, included from `benches/campaign.rs`.
//!
//! - `bound`: corpus chapters 1–2, then the whole book, against the in-repo fake server at a
//!   fixed latency of 0.5 s per request and concurrency 8, answering with a word-for-word
//!   consistent translation (`tests/it/support/word_for_word.rs`, and a Glossary agent that
//!   proposes the same dictionary renderings), so no revision is needed. The measured wall
//!   time (spawn to exit of `booktr run`) is compared with the critical-path bound of the calls
//!   the run recorded in its journal (see [`schedule_bound`] for the formula); target ≤ 1.25×.
//! - `real_idle`: when `BOOKTR_REAL_LLM_URL` is set (a llama.cpp server from
//!   `../shared/real-llm/start.sh`; `BOOKTR_REAL_LLM_PARALLEL` gives its slots and the
//!   campaign's concurrency), a small campaign (one chapter of ten short units, no revision
//!   round, at least 12 requests) runs through the fake server in proxy mode, which times every
//!   request at the HTTP layer. booktr's added idle time is the time with no request in flight
//!   between the first request and the last answer (work is pending all that time: the run is
//!   not over); it is reported over the server's busy time (the union of the in-flight
//!   intervals); target ≤ 5 %. The run is interrupted (SIGINT) after `BOOKTR_REAL_IDLE_BUDGET_S`
//!   seconds (default 600): on a loaded 2-core machine a real model may answer at under one
//!   token per second, and the share is defined on any stretch of pending work (a request still
//!   out at the stop counts as busy until then).
//!
//! `BOOKTR_BENCH_BOUND_DEBUG=1` prints every request the fake answered in a `bound` run (agent,
//! arrival and end, seconds after `booktr run` was spawned) and copies the run's journal to
//! `$TMPDIR/bound-journal-<campaign>.jsonl`, where booktr's own timestamps show what it did in
//! the gaps.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use booktr::agents::Agent;
use serde_json::{Value, json};

use super::fake_llm::{FakeServer, Recorded, Reply, Timing};
use super::{Ctx, Report, TWO, Target, WHOLE, find_journal, table};

use super::word_for_word;

/// The fixed latency of every answer (issue 15: "0.5 s latency per request").
const LATENCY: Duration = Duration::from_millis(500);
/// Calls in flight at most (the campaign's `concurrency`).
const SLOTS: usize = 8;
/// Issue 15's target: wall time ≤ 1.25 × the critical-path bound.
const BOUND_RATIO: f64 = 1.25;
/// Issue 15's target: booktr's added idle time ≤ 5 % of the server's busy time.
const IDLE_SHARE: f64 = 0.05;

/// The fake's answers: a Glossary agent proposing the word-for-word rendering of every
/// candidate, first translations word for word, everything else the default (pseudo) answer.
/// The same script as `drift_consistency::consistent_run_sends_no_revision_and_reports_no_drift`.
fn consistent(r: &Recorded) -> Reply {
    if r.agent == Agent::Glossary
        && !r.all_text().contains("was rendered in different ways")
        && r.all_text()
            .contains(booktr::agents::glossary::CANDIDATES_HEADER)
    {
        let req = booktr::llm::Request {
            task: r.agent.into(),
            messages: r.messages.clone(),
            json_schema: None,
            max_tokens: None,
            ceiling_tokens: None,
            prefill: None,
        };
        let entries: Vec<Value> = booktr::agents::glossary::candidates_in(&req)
            .into_iter()
            .map(|t| json!({"source": t, "target": word_for_word::translate(&t).trim(), "note": "dictionary"}))
            .collect();
        return Reply::Content(json!({ "entries": entries }).to_string());
    }
    if r.agent == Agent::Translation && !r.is_revision() {
        return Reply::Content(word_for_word::translate(r.unit_text().unwrap_or("")));
    }
    Reply::Default
}

/// One model call the journal recorded as answered (`call_finished`).
#[derive(Debug, Clone)]
struct Call {
    kind: Kind,
    /// Review round of the call (0 for the glossary stage).
    round: u32,
    /// Chapter key: of the unit for a translation, of the batch for a proofreading call.
    chapter: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Glossary,
    Translate,
    Proofread,
    Reconcile,
    Decide,
    Other,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Glossary => "glossary + brief",
            Kind::Translate => "translation",
            Kind::Proofread => "proofreading",
            Kind::Reconcile => "reconciliation",
            Kind::Decide => "decision",
            Kind::Other => "other",
        }
    }
}

/// The answered model calls of the journal at `journal`, in journal order. `chapters` are the
/// chapter keys (file stems): a unit id is `<chapter>-<nnn>`.
fn recorded_calls(journal: &Path, chapters: &[String]) -> Vec<Call> {
    let text = std::fs::read_to_string(journal).unwrap_or_default();
    let mut out = Vec::new();
    for line in text.lines() {
        let Ok(rec) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if rec["event"] != "call_finished" {
            continue;
        }
        let key = rec["call"].as_str().unwrap_or("");
        let parts: Vec<&str> = key.split('/').collect();
        let round_of = |s: &str| s.strip_prefix('r').and_then(|n| n.parse().ok());
        let (kind, round, chapter) = match parts.as_slice() {
            ["glossary", ..] | ["brief", ..] => (Kind::Glossary, 0, None),
            ["translate", .., r] => {
                let unit = rec["unit"].as_str().unwrap_or("");
                let chapter = unit
                    .rsplit_once('-')
                    .map(|(c, _)| c.to_string())
                    .filter(|c| chapters.contains(c));
                (Kind::Translate, round_of(r).unwrap_or(0), chapter)
            }
            ["proofread", r, ch, ..] => (
                Kind::Proofread,
                round_of(r).unwrap_or(0),
                Some(ch.to_string()),
            ),
            ["reconcile", r, ..] => (Kind::Reconcile, round_of(r).unwrap_or(0), None),
            ["decide", r, ..] => (Kind::Decide, round_of(r).unwrap_or(0), None),
            ["local", ..] => continue,
            _ => (Kind::Other, 0, None),
        };
        out.push(Call {
            kind,
            round,
            chapter,
        });
    }
    out
}

/// Whether call `b` must wait for call `a` (both recorded; `ia < ib` their journal order), by
/// the campaign's stage dependencies:
///
/// - glossary batches and the brief wait for nothing;
/// - a first translation waits for every glossary call (the merged termbase and the brief are
///   in its prompt);
/// - a revision of round r waits for the decision of round r − 1 (and what it waited for);
/// - a proofreading call of round r and chapter ch waits for every translation of round r of
///   chapter ch (of any chapter when the unit's chapter is unknown, a part of a split unit),
///   and for the decision of round r − 1;
/// - a reconciliation or decision of round r waits for every translation and proofreading call
///   of round r (campaign-level QA reads the whole book), a decision also for the round's
///   reconciliations;
/// - anything else (pieces of stuck units) waits for every call recorded before it.
fn depends(a: &Call, b: &Call, ia: usize, ib: usize) -> bool {
    use Kind::*;
    match b.kind {
        Glossary => false,
        Translate if b.round == 0 => a.kind == Glossary,
        // Every call of an earlier round, the decision included.
        Translate => a.kind == Glossary || a.round < b.round,
        Proofread => {
            a.kind == Glossary
                || (a.kind == Translate
                    && a.round == b.round
                    && (a.chapter.is_none() || a.chapter == b.chapter))
                || a.round < b.round
        }
        Reconcile => {
            a.kind == Glossary
                || (a.round == b.round && matches!(a.kind, Translate | Proofread))
                || a.round < b.round
        }
        Decide => {
            a.kind == Glossary
                || (a.round == b.round && matches!(a.kind, Translate | Proofread | Reconcile))
                || a.round < b.round
        }
        Other => ia < ib,
    }
}

/// The bound of a campaign's recorded calls: what an ideal runner with no overhead of its own
/// would need for them.
#[derive(Debug, Clone)]
struct Bound {
    /// The list schedule's makespan: the bound the run is measured against.
    schedule: Duration,
    /// max(longest dependency chain, ⌈calls / slots⌉) × latency: no schedule is shorter.
    lower: Duration,
    /// Calls in the longest dependency chain.
    depth: usize,
    calls: usize,
    /// Calls per kind.
    by_kind: Vec<(&'static str, usize)>,
}

/// The critical-path bound of `calls` at `slots` calls in flight, each taking `latency`:
/// the makespan of a list schedule over the stage dependency graph ([`depends`]): every
/// `latency`, the free slots take the ready calls (all predecessors answered) with the longest
/// chain of dependants after them first (Hu's critical-path priority, optimal for unit-time
/// in-forests; T. C. Hu, "Parallel sequencing and assembly line problems", Operations Research
/// 9(6), 1961), ties in journal order. With equal call times every call of a wave ends together,
/// so the schedule advances wave by wave. Also returned: the lower bound max(depth, ⌈n/slots⌉)
/// × latency that no schedule beats.
fn schedule_bound(calls: &[Call], slots: usize, latency: Duration) -> Bound {
    let n = calls.len();
    let preds: Vec<Vec<usize>> = (0..n)
        .map(|b| {
            (0..n)
                .filter(|&a| a != b && depends(&calls[a], &calls[b], a, b))
                .collect()
        })
        .collect();
    // Height: calls on the longest chain from a call to the end, itself included (the graph
    // is acyclic: every edge goes to a later stage or a later journal position).
    let mut depth_of = vec![1usize; n];
    // Longest chain ending at each call (for the depth), in a topological order.
    let mut done = vec![false; n];
    let mut topo = Vec::with_capacity(n);
    while topo.len() < n {
        let before = topo.len();
        for i in 0..n {
            if !done[i] && preds[i].iter().all(|&p| done[p]) {
                done[i] = true;
                topo.push(i);
            }
        }
        assert!(topo.len() > before, "the dependency graph has a cycle");
    }
    for &i in &topo {
        depth_of[i] = 1 + preds[i].iter().map(|&p| depth_of[p]).max().unwrap_or(0);
    }
    let mut height = vec![1usize; n];
    for &i in topo.iter().rev() {
        for &p in &preds[i] {
            height[p] = height[p].max(height[i] + 1);
        }
    }
    let depth = depth_of.iter().copied().max().unwrap_or(0);
    let mut finished = vec![false; n];
    let mut waves = 0usize;
    let mut left = n;
    while left > 0 {
        let mut ready: Vec<usize> = (0..n)
            .filter(|&i| !finished[i] && preds[i].iter().all(|&p| finished[p]))
            .collect();
        ready.sort_by_key(|&i| (std::cmp::Reverse(height[i]), i));
        ready.truncate(slots);
        for &i in &ready {
            finished[i] = true;
        }
        left -= ready.len();
        waves += 1;
    }
    let lower_waves = depth.max(n.div_ceil(slots.max(1)));
    let mut by_kind: Vec<(&'static str, usize)> = Vec::new();
    for c in calls {
        match by_kind.iter_mut().find(|(k, _)| *k == c.kind.name()) {
            Some(e) => e.1 += 1,
            None => by_kind.push((c.kind.name(), 1)),
        }
    }
    Bound {
        schedule: latency * waves as u32,
        lower: latency * lower_waves as u32,
        depth,
        calls: n,
        by_kind,
    }
}

/// Time with at least one request in flight (the union of the answered requests' intervals),
/// and the first arrival and last answer.
fn busy(timings: &[Timing]) -> (Duration, Option<(Instant, Instant)>) {
    let iv: Vec<(Instant, Instant)> = timings.iter().map(|t| (t.start, t.end)).collect();
    busy_intervals(&iv)
}

/// [`busy`] over (start, end) intervals.
fn busy_intervals(iv: &[(Instant, Instant)]) -> (Duration, Option<(Instant, Instant)>) {
    let mut iv = iv.to_vec();
    iv.sort();
    let mut total = Duration::ZERO;
    let mut cur: Option<(Instant, Instant)> = None;
    for (s, e) in &iv {
        match cur {
            Some((cs, ce)) if *s <= ce => cur = Some((cs, ce.max(*e))),
            Some((cs, ce)) => {
                total += ce - cs;
                cur = Some((*s, *e));
            }
            None => cur = Some((*s, *e)),
        }
    }
    if let Some((cs, ce)) = cur {
        total += ce - cs;
    }
    let span = iv
        .first()
        .map(|f| (f.0, iv.iter().map(|x| x.1).max().unwrap()));
    (total, span)
}

/// One measured campaign of the `bound` benchmark.
struct BoundRun {
    label: String,
    figures: Value,
    row: Vec<String>,
    ratio: f64,
}

fn bound_run(label: &str, chapters: &[PathBuf]) -> BoundRun {
    // The fake counts the usage of its answers with booktr's tokenizer: built here, its 0.25 s
    // of table building is not charged to booktr's first answers.
    booktr::tokens::count("warm up");
    let fake = FakeServer::start();
    fake.latency(LATENCY, Duration::ZERO);
    fake.script(consistent);
    let name = format!("bound{}", chapters.len());
    // No house-style glossary: the fake translator renders every word its one dictionary way
    // and would break the house renderings (real glossary errors, so needed revisions); the
    // Glossary agent proposes the dictionary renderings, so the termbase and the translation
    // agree, as in `drift_consistency::consistent_run_sends_no_revision_and_reports_no_drift`.
    let dir = tempfile::tempdir().unwrap();
    let list: Vec<String> = chapters
        .iter()
        .map(|c| format!("{:?}", c.to_string_lossy()))
        .collect();
    let toml = format!(
        "name = \"{name}\"\nsource_lang = \"en\"\ntarget_lang = \"zh\"\nchapters = [{}]\nconcurrency = {SLOTS}\n\n[provider]\nkind = \"openai\"\nmodel = \"fake-model\"\n",
        list.join(", ")
    );
    let file = dir.path().join("campaign.toml");
    std::fs::write(&file, toml).unwrap();
    let run = run_budgeted(&file, &fake.base_url, Duration::from_secs(3600));
    let keys: Vec<String> = chapters
        .iter()
        .filter_map(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .collect();
    let calls = find_journal(&dir.path().join(&name).join("state"))
        .map(|j| recorded_calls(&j, &keys))
        .unwrap_or_default();
    let b = schedule_bound(&calls, SLOTS, LATENCY);
    let wall = run.wall.as_secs_f64();
    let ratio = wall / b.schedule.as_secs_f64().max(1e-9);
    let timings: Vec<Timing> = fake
        .timings()
        .into_iter()
        .filter(|t| t.status == 200)
        .collect();
    let (busy_time, span) = busy(&timings);
    if std::env::var("BOOKTR_BENCH_BOUND_DEBUG").is_ok() {
        if let Some(j) = find_journal(&dir.path().join(&name).join("state")) {
            let _ = std::fs::copy(
                &j,
                std::env::temp_dir().join(format!("bound-journal-{name}.jsonl")),
            );
        }
        let mut t = timings.clone();
        t.sort_by_key(|x| x.start);
        for x in &t {
            eprintln!(
                "DBG {:?} start {:.3} end {:.3} dur {:.3}",
                x.agent,
                (x.start - run.started).as_secs_f64(),
                (x.end - run.started).as_secs_f64(),
                (x.end - x.start).as_secs_f64()
            );
        }
    }
    let first = span.map_or(0.0, |(f, _)| (f - run.started).as_secs_f64());
    let tail = span.map_or(0.0, |(_, l)| {
        run.ended.saturating_duration_since(l).as_secs_f64()
    });
    let idle_inside = span.map_or(0.0, |(f, l)| {
        (l - f).as_secs_f64() - busy_time.as_secs_f64()
    });
    let revisions = fake.requests().iter().filter(|r| r.is_revision()).count();
    // Why units were sent back (the round-0 history of each revised unit: its error checks,
    // or the reviewer's reason), so needless revisions can be traced to their check.
    let report: Value =
        std::fs::read_to_string(dir.path().join(&name).join("validation/report.json"))
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or(Value::Null);
    let mut sent_back: std::collections::BTreeMap<String, usize> = Default::default();
    for u in report["units"].as_array().into_iter().flatten() {
        for h in u["history"].as_array().into_iter().flatten() {
            if let Some(why) = h["sent_back_because"].as_str() {
                let errors: Vec<&str> = h["errors"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|e| e.as_str())
                    .map(|e| e.split(':').next().unwrap_or(e))
                    .collect();
                let key = if errors.is_empty() {
                    why.chars().take(60).collect()
                } else {
                    errors.join(", ")
                };
                *sent_back.entry(key).or_default() += 1;
            }
        }
    }
    let row = vec![
        label.to_string(),
        b.calls.to_string(),
        revisions.to_string(),
        format!("{:.2} s", b.lower.as_secs_f64()),
        format!("{:.2} s", b.schedule.as_secs_f64()),
        format!("{wall:.2} s"),
        format!("{ratio:.3}"),
        format!("{first:.2} s"),
        format!("{idle_inside:.2} s"),
        format!("{tail:.2} s"),
        run.summary["status"].as_str().unwrap_or("?").to_string(),
    ];
    let figures = json!({
        "chapters": chapters.len(), "status": run.summary["status"], "units": run.summary["units"],
        "calls": b.calls, "calls_by_kind": b.by_kind.iter().map(|(k, n)| json!({"kind": k, "calls": n})).collect::<Vec<_>>(),
        "revision_requests": revisions, "sent_back_because": sent_back, "dependency_depth": b.depth,
        "lower_bound_s": b.lower.as_secs_f64(), "bound_s": b.schedule.as_secs_f64(),
        "wall_s": wall, "ratio": ratio, "ratio_to_lower_bound": wall / b.lower.as_secs_f64().max(1e-9),
        "start_to_first_request_s": first, "no_call_in_flight_between_s": idle_inside,
        "last_answer_to_exit_s": tail, "max_in_flight": fake.max_in_flight(),
        "exit_code": run.code,
    });
    BoundRun {
        label: label.to_string(),
        figures,
        row,
        ratio,
    }
}

/// The `bound` benchmark (see the module docs).
pub fn bound(ctx: &Ctx) -> Option<Report> {
    let two = ctx.chapters("bound", TWO)?;
    let whole = ctx.chapters("bound", WHOLE)?;
    // `BOOKTR_BENCH_BOUND_TWO_ONLY=1` skips the whole book (a quicker look at chapters 1–2).
    let mut runs = vec![bound_run("chapters 1–2", &two)];
    if std::env::var("BOOKTR_BENCH_BOUND_TWO_ONLY").is_err() {
        runs.push(bound_run("whole book", &whole));
    }
    let mut md = format!(
        "Against the fake server at {} ms per request (no per-token delay), concurrency {SLOTS}, a word-for-word consistent translation (no revision needed). Bound: the recorded calls (journal `call_finished`) over the stage dependency graph, each taking the latency, list-scheduled on {SLOTS} slots, longest chain of dependants first; lower bound: max(longest chain, ⌈calls / {SLOTS}⌉) × latency. `start → first request`, `idle between` (no call in flight between the first request and the last answer) and `last answer → exit` are booktr's own time.\n\n",
        LATENCY.as_millis()
    );
    md.push_str(&table(
        &[
            "campaign",
            "calls",
            "revisions",
            "lower bound",
            "bound",
            "wall",
            "wall / bound",
            "start → first request",
            "idle between",
            "last answer → exit",
            "status",
        ],
        &runs.iter().map(|r| r.row.clone()).collect::<Vec<_>>(),
    ));
    for r in &runs {
        md.push_str(&format!(
            "\n{}: units sent back because {}\n",
            r.label, r.figures["sent_back_because"]
        ));
    }
    let figures: serde_json::Map<String, Value> = runs
        .iter()
        .map(|r| (r.label.clone(), r.figures.clone()))
        .collect();
    Some(Report {
        markdown: md,
        figures: json!({"latency_ms": LATENCY.as_millis() as u64, "concurrency": SLOTS, "runs": figures}),
        targets: runs
            .iter()
            .map(|r| {
                Target::at_most(
                    &format!("{}: wall / critical-path bound", r.label),
                    r.ratio,
                    BOUND_RATIO,
                )
            })
            .collect(),
    })
}

/// The one chapter of the `real_idle` campaign: a heading and ten short paragraphs, each a unit
/// of its own under `max_unit_chars = 200`, so the run sends at least [`REAL_MIN_REQUESTS`]
/// requests (glossary, brief, one translation per unit, proofreading) and the idle share is
/// measured over enough work to keep `BOOKTR_REAL_LLM_PARALLEL` slots busy (two requests, as
/// this chapter had before, measured mostly the gap between stages).
const REAL_CHAPTER: &str = "# Tools\n\nAn agent calls a tool when the model asks for one, and it waits for the answer before it writes the next step of the plan.\n\nThe tool returns a result, and the agent adds that result to the context window so the model can read it on the next turn.\n\nA tool has a name, a short description and a schema for its arguments.\n\nThe model reads the description to decide which tool fits the task at hand.\n\nWhen a tool fails, the agent reports the error to the model instead of hiding it.\n\nThe model may then call the same tool again with different arguments.\n\nSome tools only read data, while others change files or send messages.\n\nAn agent asks the user before it runs a tool that changes something.\n\nThe context window holds the plan, the tool results and the conversation so far.\n\nWhen the window is full, the agent summarises older turns to make room.\n";

/// Fewest requests the `real_idle` campaign should send (its target row).
const REAL_MIN_REQUESTS: f64 = 12.0;

/// The `real_idle` benchmark (see the module docs); skipped without `BOOKTR_REAL_LLM_URL`.
pub fn real_idle(_ctx: &Ctx) -> Option<Report> {
    let url = match std::env::var("BOOKTR_REAL_LLM_URL") {
        Ok(u) if !u.trim().is_empty() => u.trim().trim_end_matches('/').to_string(),
        _ => {
            println!(
                "real_idle: skipped: BOOKTR_REAL_LLM_URL is unset (start a server with `bash ../shared/real-llm/start.sh 0.5b 8091` and export the URL it prints)"
            );
            return None;
        }
    };
    let slots: usize = std::env::var("BOOKTR_REAL_LLM_PARALLEL")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(1);
    // The machine is shared: a chapter of a few short units, short answers, no revision round
    // (the stages glossary, brief, translation, proofreading still follow one another).
    let book = tempfile::tempdir().unwrap();
    let chapter = book.path().join("tools.md");
    std::fs::write(&chapter, REAL_CHAPTER).unwrap();
    let chapters = [chapter];
    let fake = FakeServer::start();
    fake.proxy(&url);
    let top = format!(
        "max_unit_chars = 200\nconcurrency = {slots}\nrevision_rounds = 0\nproofread_share = 1.0\n"
    );
    let provider = "kind = \"openai\"\nmodel = \"qwen2.5-instruct\"\ntemperature = 0.0\nmax_tokens = 160\nmax_output_tokens = 240\nmax_attempts = 2\nrequest_timeout_s = 1800\nstream_idle_timeout_s = 900\njson_mode = \"prompt\"\n";
    let budget = Duration::from_secs_f64(
        std::env::var("BOOKTR_REAL_IDLE_BUDGET_S")
            .ok()
            .and_then(|v| v.parse::<f64>().ok())
            .filter(|s| *s > 0.0)
            .unwrap_or(600.0),
    );
    let toml = format!(
        "name = \"real\"\nsource_lang = \"en\"\ntarget_lang = \"zh\"\nchapters = [{:?}]\n{top}\n[provider]\n{provider}",
        chapters[0].to_string_lossy()
    );
    let file = book.path().join("campaign.toml");
    std::fs::write(&file, toml).unwrap();
    let run = run_budgeted(&file, &fake.base_url, budget);
    // Answered requests, and requests still out when the run was stopped (busy until then).
    let answered: BTreeSet<usize> = fake.timings().iter().map(|t| t.n).collect();
    let mut intervals: Vec<(Instant, Instant)> =
        fake.timings().iter().map(|t| (t.start, t.end)).collect();
    intervals.extend(
        fake.requests()
            .iter()
            .filter(|r| !answered.contains(&r.n))
            .map(|r| (r.at, run.ended)),
    );
    let statuses: BTreeSet<u16> = fake.timings().iter().map(|t| t.status).collect();
    let (busy_time, span) = busy_intervals(&intervals);
    let Some((first, last)) = span else {
        println!("real_idle: no request reached the server");
        return None;
    };
    // Work is pending from the first request until the last answer (the run completed) or
    // until the budget stopped it.
    let pending = last - first;
    let idle = pending.saturating_sub(busy_time);
    let share = idle.as_secs_f64() / busy_time.as_secs_f64().max(1e-9);
    // Gaps between one answer and the next request, the largest first.
    let mut gaps: Vec<f64> = Vec::new();
    {
        let mut iv = intervals.clone();
        iv.sort();
        let mut end = iv[0].1;
        for (s, e) in iv.iter().skip(1) {
            if *s > end {
                gaps.push((*s - end).as_secs_f64());
            }
            end = end.max(*e);
        }
    }
    gaps.sort_by(|a, b| b.total_cmp(a));
    let md = table(
        &["figure", "value", "target"],
        &[
            vec![
                "server slots / concurrency".into(),
                slots.to_string(),
                String::new(),
            ],
            vec![
                "requests".into(),
                fake.requests().len().to_string(),
                String::new(),
            ],
            vec![
                "first request → last answer".into(),
                format!("{:.2} s", pending.as_secs_f64()),
                String::new(),
            ],
            vec![
                "server busy (≥ 1 request in flight)".into(),
                format!("{:.2} s", busy_time.as_secs_f64()),
                String::new(),
            ],
            vec![
                "no request in flight while work is pending".into(),
                format!("{:.3} s", idle.as_secs_f64()),
                String::new(),
            ],
            vec![
                "idle / busy".into(),
                format!("{:.2} %", share * 100.0),
                format!("≤ {:.0} %", IDLE_SHARE * 100.0),
            ],
            vec![
                "largest gaps".into(),
                gaps.iter()
                    .take(5)
                    .map(|g| format!("{:.0} ms", g * 1e3))
                    .collect::<Vec<_>>()
                    .join(", "),
                String::new(),
            ],
            vec![
                "process wall time".into(),
                format!("{:.2} s", run.wall.as_secs_f64()),
                String::new(),
            ],
            vec![
                "status".into(),
                if run.interrupted {
                    format!(
                        "stopped after the {:.0} s budget (BOOKTR_REAL_IDLE_BUDGET_S)",
                        budget.as_secs_f64()
                    )
                } else {
                    run.summary["status"].as_str().unwrap_or("?").to_string()
                },
                String::new(),
            ],
        ],
    );
    Some(Report {
        markdown: md,
        figures: json!({
            "server": url, "slots": slots, "requests": fake.requests().len(),
            "budget_s": budget.as_secs_f64(), "stopped_by_budget": run.interrupted,
            "http_statuses": statuses.into_iter().collect::<Vec<_>>(),
            "pending_s": pending.as_secs_f64(), "busy_s": busy_time.as_secs_f64(),
            "idle_s": idle.as_secs_f64(), "idle_share": share, "gaps_s": gaps,
            "wall_s": run.wall.as_secs_f64(), "status": run.summary["status"],
            "units": run.summary["units"], "usage": run.summary["usage"],
            "exit_code": run.code,
        }),
        targets: vec![
            Target::at_most(
                "booktr's idle time / the real server's busy time",
                share,
                IDLE_SHARE,
            ),
            Target::at_least(
                "requests sent to the real server (enough work to measure)",
                fake.requests().len() as f64,
                REAL_MIN_REQUESTS,
            ),
        ],
    })
}

/// A `booktr run` stopped by [`run_budgeted`].
struct BudgetedRun {
    summary: Value,
    /// When the process was spawned.
    started: Instant,
    wall: Duration,
    /// When the process exited.
    ended: Instant,
    /// Whether the budget ran out (the run was interrupted with SIGINT, as Ctrl-C does).
    interrupted: bool,
    code: Option<i32>,
}

/// Runs `booktr run FILE --base-url URL --json` and interrupts it (SIGINT, a resumable stop)
/// once `budget` has passed: on the shared 2-core machine a real model may answer at well under
/// one token per second, and the idle share is defined on any stretch of pending work.
fn run_budgeted(file: &Path, base_url: &str, budget: Duration) -> BudgetedRun {
    use std::process::{Command, Stdio};
    let dir = file.parent().unwrap();
    let stdout = std::fs::File::create(dir.join("stdout.txt")).unwrap();
    let stderr = std::fs::File::create(dir.join("stderr.txt")).unwrap();
    let started = Instant::now();
    let mut child = Command::new(super::BIN)
        .arg("run")
        .arg(file)
        .args(["--base-url", base_url, "--json"])
        .env_remove("OPENAI_BASE_URL")
        .env("OPENAI_API_KEY", "sk-local-no-key-needed")
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        .spawn()
        .expect("spawning booktr");
    let mut interrupted = false;
    let status = loop {
        if let Some(st) = child.try_wait().expect("waiting for booktr") {
            break st;
        }
        if !interrupted && started.elapsed() >= budget {
            // SAFETY: a plain signal to our own child's pid.
            unsafe {
                libc::kill(child.id() as libc::pid_t, libc::SIGINT);
            }
            interrupted = true;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let ended = Instant::now();
    let out = std::fs::read_to_string(dir.join("stdout.txt")).unwrap_or_default();
    let summary: Value = out
        .lines()
        .last()
        .and_then(|l| serde_json::from_str(l).ok())
        .unwrap_or(Value::Null);
    BudgetedRun {
        summary,
        started,
        wall: ended - started,
        ended,
        interrupted,
        code: status.code(),
    }
}
