//! Issue 17, "a budget cap and a cost ledger", against the fake OpenAI-compatible server: a
//! cap stops the run before a request would exceed it (exit code 4, a journaled
//! `budget_reached`), a resume with a higher cap sends only the requests not answered yet, the
//! cap needs `[pricing]`, the reports' ledger sums equal the recorded usage × prices, and
//! `plan`'s low/high range holds the actual cost of a rehearsal campaign; the ledger counts
//! Anthropic cache reads as savings too.

use crate::support;

use std::collections::BTreeMap;

use support::fake_llm::FakeServer;
use support::{TestCampaign, assert_code, json_summary};

const KEY: &str = "sk-booktr-BUDGET-KEY-7c1d";

/// Prices high enough that a few thousand tokens cost whole units of currency.
const PRICING: &str = "[pricing]\ninput_per_million = 1000.0\ncached_input_per_million = 250.0\noutput_per_million = 4000.0\ncurrency = \"EUR\"\n";

/// A chapter of `n` short sections.
fn chapter(tag: &str, n: usize) -> String {
    let mut s = format!("# Chapter {tag}\n\n");
    for i in 0..n {
        s.push_str(&format!(
            "## Section {tag}.{i}\n\nThe agent number {i} reads the context window of part {tag} and plans its next step. It calls a tool, observes the result and writes notes.\n\n"
        ));
    }
    s
}

/// A two-chapter campaign for the OpenAI provider, one call at a time (so the order of the
/// budget checks is the order of the calls).
fn campaign(name: &str, extra: &str) -> TestCampaign {
    campaign_at(name, 1, extra)
}

/// [`campaign`] with up to `concurrency` calls at once.
fn campaign_at(name: &str, concurrency: usize, extra: &str) -> TestCampaign {
    let c = TestCampaign::with_chapters(
        name,
        &["one.md", "two.md"],
        &format!(
            "max_unit_chars = 300\nconcurrency = {concurrency}\n[provider]\nkind = \"openai\"\nmodel = \"fake-model\"\n{extra}"
        ),
    );
    c.write("one.md", &chapter("1", 4));
    c.write("two.md", &chapter("2", 4));
    c
}

fn run(c: &TestCampaign, fake: &FakeServer, args: &[&str]) -> std::process::Output {
    let mut all = vec!["--base-url", fake.base_url.as_str(), "--json"];
    all.extend_from_slice(args);
    c.cmd("run", &all)
        .env("OPENAI_API_KEY", KEY)
        .output()
        .unwrap()
}

/// The messages of every request received, as one comparable string each, sorted. A
/// Manager decision is represented by its agent name only: its prompt carries the campaign's
/// call log and run history, which differ between one run and a stopped-and-resumed pair.
fn bodies(fake: &FakeServer) -> Vec<String> {
    let mut v: Vec<String> = fake
        .requests()
        .iter()
        .map(|r| {
            if r.agent == booktr::agents::Agent::Manager {
                "manager decision".to_string()
            } else {
                r.all_text()
            }
        })
        .collect();
    v.sort();
    v
}

fn cost_total(s: &serde_json::Value) -> f64 {
    s["cost"]["total"].as_f64().unwrap()
}

#[test]
fn budget_cap_stops_before_exceeding_and_a_higher_cap_pays_only_the_rest() {
    // The whole campaign without a cap: what it costs and what it sends.
    // Same name (it is in the Manager's prompt), separate folders.
    let whole = campaign("book", PRICING);
    let fake_whole = FakeServer::start();
    let out = run(&whole, &fake_whole, &[]);
    let full = json_summary(&out);
    assert!(
        out.status.code() == Some(0) || out.status.code() == Some(1),
        "{full}"
    );
    let full_cost = cost_total(&full);
    let full_requests = bodies(&fake_whole);
    assert!(full_requests.len() >= 8, "{}", full_requests.len());
    assert!(full_cost > 1.0, "{full_cost}");

    // Capped at 40 % of that: stops before exceeding, exit 4.
    let cap = (full_cost * 0.4 * 100.0).round() / 100.0;
    let c = campaign("book", PRICING);
    let fake = FakeServer::start();
    let out = run(&c, &fake, &["--max-cost", &cap.to_string()]);
    assert_code(&out, 4);
    let s = json_summary(&out);
    assert_eq!(s["status"], "budget_reached", "{s}");
    let spent = cost_total(&s);
    let b = &s["budget"];
    assert_eq!(b["cap"].as_f64().unwrap(), cap);
    assert!((b["spent"].as_f64().unwrap() - spent).abs() < 1e-9, "{b}");
    assert!(spent > 0.0 && spent < full_cost, "{spent} of {full_cost}");
    // The call held back would have gone over: spent + its estimate > cap.
    let next = b["next_estimate"].as_f64().unwrap();
    assert!(next > 0.0, "{b}");
    assert!(spent + next > cap, "{spent} + {next} <= {cap}");
    // Estimates are close to what answers cost, so the recorded spending stays within the cap
    // plus at most one call's estimation error.
    assert!(spent <= cap + next, "{spent} > {cap} + {next}");
    assert!(b["remaining_estimate"].as_f64().unwrap() > 0.0, "{b}");
    let first = bodies(&fake);
    assert!(!first.is_empty() && first.len() < full_requests.len());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("budget reached: spent") && stderr.contains("--max-cost"),
        "{stderr}"
    );
    let resume = s["resume"].as_str().unwrap();
    assert!(resume.contains("--max-cost"), "{resume}");
    let journal = c.read(&format!(
        "{}/journal.jsonl",
        s["state_dir"].as_str().unwrap()
    ));
    assert_eq!(
        journal
            .lines()
            .filter(|l| l.contains("\"event\":\"budget_reached\""))
            .count(),
        1,
        "{journal}"
    );
    // The reports say so.
    let md = c.read("book/validation/report.md");
    assert!(md.contains("**Budget reached:**"), "{md}");
    let html = c.read("book/validation/report.html");
    assert!(html.contains("id=\"budget-reached\""));
    // `status` tells the same from the saved state.
    let st = c.cmd("status", &["--json"]).output().unwrap();
    assert_eq!(json_summary(&st)["status"], "budget_reached");
    let st = c.cmd("status", &[]).output().unwrap();
    let text = String::from_utf8_lossy(&st.stdout);
    assert!(
        text.contains("budget_reached") && text.contains("budget reached: spent"),
        "{text}"
    );

    // The same cap again: nothing fits, nothing is sent, the same exit.
    fake.clear();
    let out = run(&c, &fake, &["--max-cost", &cap.to_string()]);
    assert_code(&out, 4);
    assert!(fake.requests().is_empty(), "{:?}", bodies(&fake));

    // A higher cap: only the rest is sent, and the campaign costs what it costs uncapped.
    let out = run(&c, &fake, &["--max-cost", &(full_cost * 10.0).to_string()]);
    let done = json_summary(&out);
    assert_eq!(done["status"], full["status"], "{done}");
    assert!(done["budget"].is_null(), "{done}");
    let mut both = first.clone();
    both.extend(bodies(&fake));
    both.sort();
    assert_eq!(
        both.len(),
        full_requests.len(),
        "capped + resumed requests vs uncapped"
    );
    let differ: Vec<String> = both
        .iter()
        .zip(&full_requests)
        .filter(|(a, b)| a != b)
        .map(|(a, _)| a.chars().take(300).collect())
        .collect();
    assert!(
        differ.is_empty(),
        "no request sent twice, none missing; {} differ, e.g. {:?}",
        differ.len(),
        differ.first()
    );
    assert!(
        (cost_total(&done) - full_cost).abs() < 1e-6,
        "{} vs {full_cost}",
        cost_total(&done)
    );
}

#[test]
fn budget_cap_from_the_campaign_file_and_the_flag_wins() {
    let c = campaign("filecap", &format!("{PRICING}max_cost = 0.001\n"));
    let fake = FakeServer::start();
    let out = run(&c, &fake, &[]);
    assert_code(&out, 4);
    assert!(
        fake.requests().is_empty(),
        "the first call already exceeds 0.001"
    );
    assert_eq!(json_summary(&out)["budget"]["cap"].as_f64(), Some(0.001));
    let out = run(&c, &fake, &["--max-cost", "1000000"]);
    assert!(matches!(out.status.code(), Some(0) | Some(1)));
    assert!(!fake.requests().is_empty());
}

#[test]
fn max_cost_without_pricing_is_a_usage_error_naming_the_remedy() {
    let c = campaign("noprice", "");
    let fake = FakeServer::start();
    let out = run(&c, &fake, &["--max-cost", "5"]);
    assert_code(&out, 2);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--max-cost needs prices") && err.contains("[pricing]"),
        "{err}"
    );
    assert!(fake.requests().is_empty());
    let c = campaign("badcap", PRICING);
    let out = run(&c, &fake, &["--max-cost", "-1"]);
    assert_code(&out, 2);
    let c = campaign("badfile", &format!("{PRICING}max_cost = 0\n"));
    let out = run(&c, &fake, &[]);
    assert_code(&out, 2);
    assert!(String::from_utf8_lossy(&out.stderr).contains("max_cost"));
}

/// The price of `usage` at [`PRICING`], recomputed here: (uncached × input + cached × cached
/// input + completion × output) per million.
fn priced(prompt: u64, cached: u64, completion: u64) -> f64 {
    ((prompt - cached) as f64 * 1000.0 + cached as f64 * 250.0 + completion as f64 * 4000.0) / 1e6
}

/// The cost ledger of report.json, report.md and report.html: per chapter and agent, summing
/// exactly to the recorded usage × prices, with the savings from cached input (the fake
/// server's prefix cache, OpenAI's rule, serves the long system prompt again).
#[test]
fn ledger_sums_equal_the_recorded_usage_times_the_prices() {
    let c = campaign("book", PRICING);
    let body = std::fs::read_to_string(&c.file).unwrap();
    // Proofreading is off by default (finding 21); the ledger shows its line when it is on.
    std::fs::write(
        &c.file,
        format!("guide = \"guide.md\"\nproofread_share = 0.2\n{body}"),
    )
    .unwrap();
    let mut guide = String::from("# Guide\n\n");
    for i in 0..120 {
        guide.push_str(&format!(
            "- Rule {i}: keep the register formal and the terms consistent across chapter {i}.\n"
        ));
    }
    c.write("guide.md", &guide);
    let fake = FakeServer::start();
    fake.prefix_cache(true);
    let out = run(&c, &fake, &[]);
    let s = json_summary(&out);
    let report: serde_json::Value =
        serde_json::from_str(&c.read("book/validation/report.json")).unwrap();
    let l = &report["ledger"];
    assert_eq!(l["currency"], "EUR");
    let num = |v: &serde_json::Value, k: &str| v[k].as_u64().unwrap();
    let chapters = l["chapters"].as_array().unwrap();
    let names: Vec<&serde_json::Value> = chapters.iter().map(|c| &c["chapter"]).collect();
    assert_eq!(
        names,
        [
            &serde_json::json!("one"),
            &serde_json::json!("two"),
            &serde_json::Value::Null
        ],
        "book order, then the whole-book line"
    );
    for ch in &chapters[..2] {
        let by = ch["by_agent"].as_object().unwrap();
        assert!(
            by.contains_key("translation") && by.contains_key("proofreading"),
            "{ch}"
        );
        assert!(
            !by.contains_key("glossary") && !by.contains_key("manager"),
            "{ch}"
        );
    }
    let whole_book = chapters[2]["by_agent"].as_object().unwrap();
    // The Manager decided without a model call (nothing advisory to decide): no cost line.
    assert!(whole_book.contains_key("glossary") && !whole_book.contains_key("manager"));
    // Every line is priced from its own tokens.
    let mut sums: BTreeMap<String, [u64; 4]> = BTreeMap::new();
    let mut savings = 0.0;
    for ch in chapters {
        for (agent, x) in ch["by_agent"].as_object().unwrap() {
            let (p, k, q) = (
                num(x, "prompt_tokens"),
                num(x, "cached_tokens"),
                num(x, "completion_tokens"),
            );
            assert!(
                (x["cost"].as_f64().unwrap() - priced(p, k, q)).abs() < 1e-9,
                "{x}"
            );
            let saved = k as f64 * 750.0 / 1e6;
            assert!(
                (x["cache_savings"].as_f64().unwrap() - saved).abs() < 1e-9,
                "{x}"
            );
            savings += saved;
            let e = sums.entry(agent.clone()).or_default();
            e[0] += num(x, "calls");
            e[1] += p;
            e[2] += k;
            e[3] += q;
        }
    }
    // The chapters add up to the recorded usage of each agent, and to the summary's cost.
    let mut cached_total = 0;
    for (agent, [_, p, k, q]) in &sums {
        let u = &s["usage"][agent.as_str()];
        assert_eq!(
            [*p, *k, *q],
            [
                num(u, "prompt_tokens"),
                num(u, "cached_tokens"),
                num(u, "completion_tokens")
            ],
            "{agent}"
        );
        let cost = s["cost"]["by_agent"][agent.as_str()].as_f64().unwrap();
        assert!((l["by_agent"][agent.as_str()]["cost"].as_f64().unwrap() - cost).abs() < 1e-9);
        cached_total += k;
    }
    assert!(
        cached_total > 1024,
        "the prefix cache served the repeated system prompt"
    );
    assert!((l["total"]["cost"].as_f64().unwrap() - cost_total(&s)).abs() < 1e-9);
    let saved = l["total"]["cache_savings"].as_f64().unwrap();
    assert!(
        (saved - savings).abs() < 1e-9 && saved > 0.0,
        "{saved} vs {savings}"
    );
    assert_eq!(num(&l["total"], "cached_tokens"), cached_total);

    let md = c.read("book/validation/report.md");
    assert!(md.contains("## Cost ledger"), "{md}");
    let sentence = format!(
        "Cached input saved {saved:.4} EUR: {cached_total} cached prompt tokens × (1000 − 250) EUR per million."
    );
    assert!(md.contains(&sentence), "{sentence}\n{md}");
    let tr = &chapters[0]["by_agent"]["translation"];
    assert!(
        md.contains(&format!(
            "| one | translation | {} | {} | {} | {} | {:.4} |",
            num(tr, "calls"),
            num(tr, "prompt_tokens"),
            num(tr, "cached_tokens"),
            num(tr, "completion_tokens"),
            tr["cost"].as_f64().unwrap()
        )),
        "{md}"
    );
    let html = c.read("book/validation/report.html");
    assert!(html.contains("<table id=\"ledger-table\">"));
    // (minijinja prints the prices as floats)
    let in_html = sentence.replace("(1000 − 250)", "(1000.0 − 250.0)");
    assert!(html.contains(&in_html), "{in_html}");
    assert!(html.contains(&format!(
        "<td class=\"num\">{:.4}</td>",
        l["total"]["cost"].as_f64().unwrap()
    )));
}

/// Without `[pricing]` there is no ledger (and no section for it).
#[test]
fn no_ledger_without_pricing() {
    let c = campaign("book", "");
    let fake = FakeServer::start();
    let out = run(&c, &fake, &[]);
    assert!(matches!(out.status.code(), Some(0) | Some(1)));
    let report: serde_json::Value =
        serde_json::from_str(&c.read("book/validation/report.json")).unwrap();
    assert!(report["ledger"].is_null());
    assert!(
        !c.read("book/validation/report.md")
            .contains("## Cost ledger")
    );
    assert!(
        !c.read("book/validation/report.html")
            .contains("id=\"ledger\"")
    );
}

/// `run --batch`: the cap applies to the batch as a whole. A batch whose estimate would take
/// the cost over the cap is not submitted; a higher cap submits it.
#[test]
fn budget_cap_in_batch_mode_holds_back_the_whole_batch() {
    use support::fake_batch::FakeBatch;
    let extra = format!("batch_poll_ms = 20\n{PRICING}");
    // Uncapped, to learn what the Glossary calls and the translations cost.
    let whole = campaign("b", &extra);
    let batch = FakeBatch::new("zh");
    let fake = FakeServer::start_with("zh", batch.router());
    let out = run(&whole, &fake, &["--batch"]);
    let full = json_summary(&out);
    assert_eq!(batch.batches().len(), 1, "{full}");
    let glossary = full["cost"]["by_agent"]["glossary"].as_f64().unwrap();
    let translation = full["cost"]["by_agent"]["translation"].as_f64().unwrap();
    assert!(glossary > 0.0 && translation > 0.0, "{full}");

    let c = campaign("b", &extra);
    let batch = FakeBatch::new("zh");
    let fake = FakeServer::start_with("zh", batch.router());
    let cap = glossary + 0.3 * translation;
    let out = run(&c, &fake, &["--batch", "--max-cost", &cap.to_string()]);
    assert_code(&out, 4);
    let s = json_summary(&out);
    assert_eq!(s["status"], "budget_reached");
    let held = s["budget"]["next_call"].as_str().unwrap();
    assert!(
        held.starts_with("batch of ") && held.ends_with(" translation requests"),
        "{held}"
    );
    assert!(batch.batches().is_empty(), "no batch submitted");
    assert_eq!(fake.count(booktr::agents::Agent::Translation), 0);
    assert!(fake.count(booktr::agents::Agent::Glossary) >= 1);

    let out = run(&c, &fake, &["--batch", "--max-cost", "1000000"]);
    let done = json_summary(&out);
    assert_eq!(done["status"], full["status"], "{done}");
    assert_eq!(batch.batches().len(), 1);
    assert!(
        (cost_total(&done) - cost_total(&full)).abs() < 1e-6,
        "{done}"
    );
}

/// With calls in flight, their estimates count: four at once never all pass a check made
/// against the recorded spending alone.
#[test]
fn budget_cap_counts_the_estimates_of_requests_in_flight() {
    let whole = campaign("book", PRICING);
    let fake = FakeServer::start();
    let full = json_summary(&run(&whole, &fake, &[]));
    let glossary = full["cost"]["by_agent"]["glossary"].as_f64().unwrap();
    let t = &full["usage"]["translation"];
    let per_call =
        full["cost"]["by_agent"]["translation"].as_f64().unwrap() / t["calls"].as_f64().unwrap();

    let c = campaign_at("book", 4, PRICING);
    let fake = FakeServer::start();
    fake.latency(
        std::time::Duration::from_millis(300),
        std::time::Duration::ZERO,
    );
    let cap = glossary + 2.5 * per_call;
    let out = run(&c, &fake, &["--max-cost", &cap.to_string()]);
    assert_code(&out, 4);
    let s = json_summary(&out);
    let b = &s["budget"];
    assert!(b["in_flight_estimate"].as_f64().unwrap() > 0.0, "{b}");
    let spent = cost_total(&s);
    let next = b["next_estimate"].as_f64().unwrap();
    assert!(
        spent < cap + next,
        "spent {spent} with cap {cap}: calls in flight were not counted ({b})"
    );
    let sent = fake.count(booktr::agents::Agent::Translation);
    assert!((1..4).contains(&sent), "{sent} translations sent");
}

/// `plan`'s range on a rehearsal campaign (the sample book, pseudo provider): per agent and in
/// all, low ≤ the cost the run then records ≤ high; the text output shows the same range.
#[test]
fn plan_range_holds_the_actual_cost_of_a_rehearsal_campaign() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let chapters = support::sample_book_chapters();
    let refs: Vec<&str> = chapters.iter().map(String::as_str).collect();
    let glossary = root.join("glossaries/house-style.en-zh.csv");
    let c = TestCampaign::with_chapters(
        "r",
        &refs,
        &format!(
            // Proofreading is on (off by default, finding 21) so that every agent's range is
            // checked; `plan::plan_counted_proofreading_with_proofreading_off` covers it off.
            "max_unit_chars = 800\nproofread_share = 0.2\nglossaries = [{:?}]\n{PRICING}",
            glossary.to_string_lossy()
        ),
    );
    let out = c.cmd("plan", &["--json"]).output().unwrap();
    assert_code(&out, 0);
    let plan: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().last().unwrap()).unwrap();
    let e = &plan["estimate"];
    let (low, high) = (
        e["cost_low"].as_f64().unwrap(),
        e["cost_high"].as_f64().unwrap(),
    );
    let text = c.cmd("plan", &[]).output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains(&format!("Cost range: {low:.4} to {high:.4} EUR.")),
        "{text}"
    );

    let out = c.cmd("run", &["--json"]).output().unwrap();
    let s = json_summary(&out);
    assert_eq!(s["rehearsal"], true);
    let actual = cost_total(&s);
    println!("low {low:.4} ≤ actual {actual:.4} ≤ high {high:.4}");
    assert!(
        low > 0.0 && low <= actual && actual <= high,
        "{low} {actual} {high}"
    );
    for agent in ["glossary", "translation", "proofreading", "manager"] {
        let r = &e["range"][agent];
        let (lo, hi) = (
            r["low"]["cost"].as_f64().unwrap(),
            r["high"]["cost"].as_f64().unwrap(),
        );
        let a = s["cost"]["by_agent"][agent].as_f64().unwrap();
        println!("{agent}: {lo:.4} ≤ {a:.4} ≤ {hi:.4}");
        // Glossary calls do not depend on revisions: both ends are the point estimate, which
        // may fall either side of the answers' real length. Translation and Proofreading
        // spread with the rounds, and the run stays under their high end. The Manager is
        // asked only when revisions are decided on the reviewer's advice: none at the low
        // end, one per round at the high end (this run needed none).
        if agent == "manager" {
            assert!(
                lo == 0.0 && hi > 0.0 && a == 0.0,
                "{agent}: {r}, actual {a}"
            );
            continue;
        }
        assert!(lo > 0.0 && lo <= hi, "{agent}: {r}");
        if agent == "translation" || agent == "proofreading" {
            assert!(a <= hi, "{agent}: {a} over the high end {hi}");
            assert!(
                r["high"]["calls"].as_u64() > r["low"]["calls"].as_u64(),
                "{r}"
            );
        }
    }
}

/// The low end counts a prefix-cache hit for a Translation request whose system message
/// (here over 1,024 tokens, with a long guide) repeats the previous request's, in 128-token
/// steps, priced at `cached_input_per_million`; without a cached price it counts none.
#[test]
fn plan_low_end_counts_prefix_cache_hits_only_with_a_cached_price() {
    let mut guide = String::from("# Guide\n\n");
    for i in 0..120 {
        guide.push_str(&format!(
            "- Rule {i}: keep the register formal and the terms consistent across chapter {i}.\n"
        ));
    }
    let plan_of = |pricing: &str| {
        let c = campaign("g", pricing);
        // `guide` is a top-level key: it goes before the tables.
        let body = std::fs::read_to_string(&c.file).unwrap();
        std::fs::write(&c.file, format!("guide = \"guide.md\"\n{body}")).unwrap();
        c.write("guide.md", &guide);
        let out = c.cmd("plan", &["--json"]).output().unwrap();
        assert_code(&out, 0);
        let v: serde_json::Value =
            serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().last().unwrap())
                .unwrap();
        v["estimate"]["range"]["translation"].clone()
    };
    let cached = plan_of(PRICING);
    let low = &cached["low"];
    let hits = low["cached_tokens"].as_u64().unwrap();
    assert!(hits >= 1024 && hits % 128 == 0, "{low}");
    let (p, k) = (
        low["prompt_tokens"].as_u64().unwrap() as f64,
        low["completion_tokens"].as_u64().unwrap() as f64,
    );
    let expected = ((p - hits as f64) * 1000.0 + hits as f64 * 250.0 + k * 4000.0) / 1e6;
    assert!(
        (low["cost"].as_f64().unwrap() - expected).abs() < 1e-9,
        "{low}"
    );
    let uncached = plan_of(&PRICING.replace("cached_input_per_million = 250.0\n", ""));
    assert_eq!(uncached["low"]["cached_tokens"], 0, "{uncached}");
}

/// The ledger on the Anthropic provider: `cache_read_input_tokens` (the fake Anthropic server
/// imitates its prompt cache on the marked system prefix) become cached tokens, priced at the
/// cached price and counted as savings; the ledger still sums to the summary's cost.
#[test]
fn ledger_counts_anthropic_cache_reads_as_savings() {
    use support::fake_anthropic::FakeAnthropic;
    let fake = FakeAnthropic::start();
    let c = TestCampaign::with_chapters(
        "a",
        &["one.md", "two.md"],
        &format!(
            "max_unit_chars = 300\n[provider]\nkind = \"anthropic\"\nmodel = \"claude-fake\"\n{PRICING}"
        ),
    );
    c.write("one.md", &chapter("1", 4));
    c.write("two.md", &chapter("2", 4));
    let out = c
        .cmd("run", &["--base-url", &fake.base_url(), "--json"])
        .env_remove("ANTHROPIC_BASE_URL")
        .env("ANTHROPIC_API_KEY", KEY)
        .output()
        .unwrap();
    let s = json_summary(&out);
    let report: serde_json::Value =
        serde_json::from_str(&c.read("a/validation/report.json")).unwrap();
    let l = &report["ledger"];
    let cached: u64 = ["glossary", "translation", "proofreading", "manager"]
        .iter()
        .map(|a| s["usage"][a]["cached_tokens"].as_u64().unwrap())
        .sum();
    assert!(
        cached > 0,
        "the fake Anthropic server reported cache reads: {s}"
    );
    assert_eq!(l["total"]["cached_tokens"].as_u64(), Some(cached));
    let saved = l["total"]["cache_savings"].as_f64().unwrap();
    assert!(
        (saved - cached as f64 * 750.0 / 1e6).abs() < 1e-9,
        "{saved}"
    );
    assert!((l["total"]["cost"].as_f64().unwrap() - cost_total(&s)).abs() < 1e-9);
}

/// Issue 17 on real corpus text: chapters 1–2 of the shared book as a priced rehearsal. The
/// plan's range holds the run's actual cost, the cost ledger's chapter lines add up to it, a
/// cap of half the actual cost stops the run with exit 4 before it is exceeded by more than
/// one request's estimate, and `booktr explain` gives a corpus unit's history (its source
/// sha256 and its kept candidate) from the files on disk.
#[booktr_test_needs::needs(corpus)]
#[test]
fn corpus_chapters_plan_range_ledger_cap_and_explain() {
    let Some(corpus) = support::corpus_dir() else {
        return;
    };
    let ch1 = corpus.join("en/chapter01.md");
    let ch2 = corpus.join("en/chapter02.md");
    let refs = [ch1.to_str().unwrap(), ch2.to_str().unwrap()];
    let full = TestCampaign::with_chapters("r", &refs, PRICING);
    let out = full.cmd("plan", &["--json"]).output().unwrap();
    assert_code(&out, 0);
    let plan: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().last().unwrap()).unwrap();
    let (low, high) = (
        plan["estimate"]["cost_low"].as_f64().unwrap(),
        plan["estimate"]["cost_high"].as_f64().unwrap(),
    );
    let out = full.cmd("run", &["--json"]).output().unwrap();
    assert_code(&out, 0);
    let s = json_summary(&out);
    let actual = cost_total(&s);
    println!("corpus ch1–2: low {low:.2} ≤ actual {actual:.2} ≤ high {high:.2}");
    assert!(
        low > 0.0 && low <= actual && actual <= high,
        "{low} {actual} {high}"
    );
    let report: serde_json::Value =
        serde_json::from_str(&full.read("r/validation/report.json")).unwrap();
    let ledger = &report["ledger"];
    assert!(ledger.is_object(), "{report}");
    let text = serde_json::to_string(ledger).unwrap();
    assert!(
        text.contains("chapter01") && text.contains("chapter02"),
        "{text}"
    );

    // A cap at half the actual cost stops the same campaign early.
    let capped = TestCampaign::with_chapters("r", &refs, PRICING);
    let cap = format!("{:.4}", actual / 2.0);
    let out = capped
        .cmd("run", &["--json", "--max-cost", &cap])
        .output()
        .unwrap();
    assert_code(&out, 4);
    let s = json_summary(&out);
    assert_eq!(s["status"], "budget_reached", "{s}");
    assert!(cost_total(&s) < actual, "{s}");

    // The history of the first unit of chapter 1, from the full run's files.
    let out = full
        .cmd("explain", &["chapter01-000", "--json"])
        .output()
        .unwrap();
    assert_code(&out, 0);
    let e: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&out.stdout).trim()).unwrap();
    assert_eq!(e["unit"], "chapter01-000", "{e}");
    assert_eq!(e["chapter"], "chapter01", "{e}");
    let sha = e["source_sha256"].as_str().unwrap();
    assert!(
        sha.len() == 64 && sha.chars().all(|c| c.is_ascii_hexdigit()),
        "{e}"
    );
    assert!(!e["candidates"].as_array().unwrap().is_empty(), "{e}");
    assert!(
        e["candidates"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["kept"] == true),
        "{e}"
    );
}

/// Regression (found trying the suggested command as a new user): the resume command a budget
/// stop prints suggested spent + the remaining estimate, and running exactly that stopped the
/// campaign at its cap again, since the estimate leaves out revisions and long answers. The
/// suggestion now carries a margin ([`booktr::campaign::ops::budget::RESUME_MARGIN`]), and running
/// it finishes the campaign.
#[test]
fn suggested_resume_cap_stopped_the_run_again() {
    let whole = campaign("book", PRICING);
    let fake_whole = FakeServer::start();
    let full_cost = cost_total(&json_summary(&run(&whole, &fake_whole, &[])));
    let c = campaign("book", PRICING);
    let fake = FakeServer::start();
    let cap = (full_cost * 0.3 * 100.0).round() / 100.0;
    let out = run(&c, &fake, &["--max-cost", &cap.to_string()]);
    assert_code(&out, 4);
    let resume = json_summary(&out)["resume"].as_str().unwrap().to_string();
    let suggested = resume
        .rsplit("--max-cost ")
        .next()
        .unwrap()
        .trim()
        .to_string();
    let suggested_cost: f64 = suggested.parse().unwrap();
    assert!(suggested_cost > cap, "{resume}");
    let out = run(&c, &fake, &["--max-cost", &suggested]);
    let s = json_summary(&out);
    assert_ne!(s["status"], "budget_reached", "{resume} stopped again: {s}");
    assert!(cost_total(&s) <= suggested_cost, "{s}");
}
