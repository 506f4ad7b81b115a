//! `booktr status`: progress from the saved state alone (no model call, no lock).

use std::collections::BTreeSet;

use crate::campaign::Campaign;
use crate::campaign::core::manager::Gate;
use crate::campaign::core::manager::{Manager, Stage};
use crate::campaign::core::state::State;
use crate::campaign::core::summary::Summary;
use crate::campaign::core::summary::{Status, summarize};
use crate::cli::StatusArgs;
use crate::exit::ExitCode;

pub fn run(args: &StatusArgs) -> anyhow::Result<ExitCode> {
    let plan = super::plan(&args.campaign, None)?;
    let campaign = Campaign::load(plan)?;
    let dir = campaign.state_path();
    if !dir.exists() {
        if args.check {
            let why = format!(
                "{} has never run with this configuration; `booktr run` translates it",
                campaign.plan.show(&campaign.plan.campaign_file)
            );
            if args.json {
                println!(
                    "{}",
                    serde_json::json!({"current": false, "started": false, "why": why})
                );
            } else {
                println!("not current: {why}");
            }
            return Ok(ExitCode::Failed);
        }
        print_not_started(&campaign, args, &dir);
        return Ok(ExitCode::Ok);
    }
    let mut state = State::load(&campaign, &dir, "status")?;
    // Marks edited in findings-review.csv count here too; status holds no lock, so
    // `run` or `validate` journals them.
    let pending = crate::campaign::ops::mark_journal::csv_changes(&campaign, &state)?;
    if !pending.events.is_empty() {
        eprintln!(
            "{} mark(s) edited in {} are counted here; `booktr validate {}` records them in the journal",
            pending.events.len(),
            campaign
                .plan
                .show(&crate::campaign::ops::mark_journal::csv_path(&campaign)),
            campaign.plan.show(&campaign.plan.campaign_file)
        );
    }
    for event in pending.events {
        let rec = crate::campaign::core::store::Record {
            seq: u64::MAX,
            at_ms: 0,
            event,
        };
        state.apply(&campaign, &dir, &rec, None)?;
    }
    if args.check {
        return print_check(&campaign, &state, args.json);
    }
    let manager = Manager::new(&campaign, &state);
    let stage = manager.next_step(&state, &BTreeSet::new()).stage;
    let status = Status::of_stage(&stage);
    let s = summarize(&campaign, &manager, &state, status);
    if args.json {
        println!("{}", serde_json::to_string(&s)?);
    } else {
        print_text(&campaign, args, &manager, &state, &stage, &s);
    }
    Ok(ExitCode::Ok)
}

/// `status` of a campaign never run with this configuration (no state directory at `dir`).
fn print_not_started(campaign: &Campaign, args: &StatusArgs, dir: &std::path::Path) {
    // Never run (or not with this configuration): all its work remains, which is
    // `incomplete` in the status vocabulary; the exit code is 0 as for every status.
    let next = args.campaign.command("run");
    if args.json {
        println!(
            "{}",
            serde_json::json!({
                "campaign": campaign.plan.name,
                "status": Status::Incomplete,
                "started": false,
                "state": campaign.plan.rel(dir),
                "next": next,
            })
        );
    } else {
        println!(
            "{}{} — not started (no saved state for this configuration at {})",
            if campaign.plan.is_rehearsal() {
                "REHEARSAL "
            } else {
                ""
            },
            campaign.plan.name,
            campaign.plan.show(dir)
        );
        println!("  next: {next}");
    }
}

/// `status`'s text for a campaign with state: summary `s` of `state` at `stage`.
fn print_text(
    campaign: &Campaign,
    args: &StatusArgs,
    manager: &Manager,
    state: &State,
    stage: &Stage,
    s: &Summary,
) {
    let dir = campaign.state_path();
    let t = state.total_usage();
    // `needs_review: 12 errors in 3 units`: never "complete" while errors remain.
    println!(
        "{}{} — {} ({})",
        if s.rehearsal { "REHEARSAL " } else { "" },
        s.campaign,
        s.status.headline(&s.findings, &s.units),
        if *stage == Stage::Complete {
            "every stage done".to_string()
        } else {
            format!("stage: {}", s.stage)
        }
    );
    println!(
        "  units: {}/{} translated, {} revised, {} failed, {} copied",
        s.units.translated,
        s.units.total - s.units.copied,
        s.units.revised,
        s.units.failed,
        s.units.copied
    );
    println!(
        "  tokens: {} prompt ({} cached), {} completion in {} calls",
        t.prompt_tokens, t.cached_tokens, t.completion_tokens, t.calls
    );
    println!(
        "  findings on the final texts: {} error(s) in {} unit(s), {} warning(s)",
        s.findings.errors, s.findings.error_units, s.findings.warnings
    );
    if !state.marks().records().is_empty() {
        let r = crate::campaign::core::verdict::final_qa(campaign, state).review;
        println!(
            "  editor marks: {} confirmed, {} dismissed, {} cleared{}",
            r.confirmed,
            r.dismissed,
            r.cleared.len(),
            if r.downgraded.is_empty() {
                String::new()
            } else {
                format!("; downgraded to warnings: {}", r.downgraded.join(", "))
            }
        );
    }
    if let Some(line) = super::run::edits_kept_line(campaign, state) {
        println!("  {line}");
    }
    println!(
        "  manager context peak: {} tokens",
        s.manager_context_peak_tokens
    );
    println!(
        "  last error: {}",
        s.last_error.as_deref().unwrap_or("none")
    );
    if let (Some(stopped), Some(resume)) = (&s.stopped, &s.resume) {
        println!("  stopped early: {stopped}; fix it, then resume with `{resume}`");
    }
    if let Some(b) = &s.budget {
        println!("  {}", b.message(campaign));
    }
    if s.runaway_replies > 0 {
        println!(
            "  runaway replies stopped: {} (not kept)",
            s.runaway_replies
        );
    }
    println!("  state: {}", campaign.plan.show(&dir));
    for (batch, items) in state.open_batches() {
        println!(
            "  open batch: {batch} ({} translation requests, submitted with --batch); `booktr run {}` polls it and records its answers",
            items.len(),
            campaign.plan.campaign_file.display()
        );
    }
    if let Stage::AwaitingApproval(gate) = &stage {
        for line in crate::campaign::ops::desk::waiting_lines(campaign, manager, state, *gate) {
            println!("  {line}");
        }
    }
    let gate = match &stage {
        Stage::AwaitingApproval(gate) => Some(*gate),
        _ => None,
    };
    if let Some(next) = next_command(campaign, args, s, gate) {
        println!("  next: {next}");
    }
}

/// What `status` prints after `next:` for summary `s` (`gate`: the gate it waits at): the
/// command that continues the campaign, or for `needs_review` the report to read; `None` for
/// a complete campaign.
fn next_command(
    campaign: &Campaign,
    args: &StatusArgs,
    s: &Summary,
    gate: Option<Gate>,
) -> Option<String> {
    match s.status {
        Status::Complete => None,
        Status::AwaitingApproval => gate.map(|g| g.approve_command(campaign)),
        Status::NeedsReview => Some(format!(
            "read {}, fix the chapters it names, then `booktr validate {}`",
            campaign
                .plan
                .show(&campaign.plan.report_dir.join("report.html")),
            campaign.plan.show(&campaign.plan.campaign_file)
        )),
        Status::BudgetReached | Status::Incomplete | Status::Interrupted => Some(
            s.resume
                .clone()
                .unwrap_or_else(|| args.campaign.command("run")),
        ),
    }
}

/// `status --check`: prints what is not current (or JSON with `--json`) and returns 0 when
/// everything is, 1 otherwise ([`crate::campaign::ops::currency`]).
fn print_check(campaign: &Campaign, state: &State, json: bool) -> anyhow::Result<ExitCode> {
    let cur = crate::campaign::ops::currency::check(campaign, state);
    if json {
        println!("{}", serde_json::to_string(&cur)?);
    } else {
        println!(
            "{}: {}/{} source blocks have a current translation; {} error finding(s); outputs {}",
            if cur.is_current() {
                "current"
            } else {
                "not current"
            },
            cur.current_blocks,
            cur.blocks,
            cur.errors,
            if cur.outputs_written {
                "written"
            } else {
                "not written since the last change"
            }
        );
        for u in &cur.units {
            println!("  {} ({}): {}", u.unit, u.chapter, u.why);
        }
        let shown = campaign.plan.show(&campaign.plan.campaign_file);
        if cur.current_blocks < cur.blocks || !cur.outputs_written {
            println!(
                "  next: `booktr run {shown}` (translates only the blocks that are not current)"
            );
        } else if !cur.is_current() {
            let stale = cur.stale_edits > 0;
            println!(
                "  next: {}fix the error findings the report lists, then `booktr validate {shown}`",
                if stale {
                    "decide the stale edits, "
                } else {
                    ""
                }
            );
        }
    }
    Ok(if cur.is_current() {
        ExitCode::Ok
    } else {
        ExitCode::Failed
    })
}
