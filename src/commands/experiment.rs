//! `booktr run --mode single-agent|stateless-loop` and `booktr experiment` (see
//! [`crate::experiment`]).

use std::sync::Arc;

use crate::campaign::Campaign;
use crate::campaign::ops::runner::RunOptions;
use crate::cli::{CampaignArgs, ExperimentArgs, RunArgs};
use crate::exit::{ExitCode, UsageError};
use crate::experiment::single_agent::{self, Status};
use crate::experiment::{self, Outcome};

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?)
}

/// `booktr run CAMPAIGN --mode single-agent|stateless-loop`: a baseline, resumable.
/// Exit 0 when every unit is translated; 1 when the context was exhausted or a call failed;
/// 130 when interrupted.
pub fn run_single(
    args: &RunArgs,
    campaign: &CampaignArgs,
    baseline: single_agent::Baseline,
) -> anyhow::Result<ExitCode> {
    let mode = baseline.mode();
    let plan = super::plan(campaign, args.concurrency)?;
    let campaign = Campaign::load(plan)?;
    let provider = super::rehearsal::campaign_provider(&campaign.plan)
        .map_err(|e| UsageError::new(e.to_string()))?;
    let result = runtime()?.block_on(single_agent::run(
        &campaign,
        Arc::new(provider),
        RunOptions {
            fresh: args.fresh,
            force: args.force,
            retranslate: args.retranslate,
            // One request at a time, as the baseline's user sends them: no batch.
            batch: false,
            progress_every: None,
        },
        baseline,
    ))?;
    let s = &result.summary;
    let tag = if s.rehearsal { "REHEARSAL " } else { "" };
    eprintln!(
        "{tag}{} ({mode}): {} — {}/{} units translated ({} from the checkpoint); main context peak {} tokens",
        s.campaign,
        // The status as the JSON summary and the docs name it (`complete`, `context_exhausted`).
        serde_json::to_value(s.status)?.as_str().unwrap_or_default(),
        s.units.translated,
        s.units.total,
        s.units.reused,
        s.main_context_peak_tokens
    );
    eprintln!(
        "  outputs: {}",
        campaign.plan.show(&result.campaign.plan.out_dir)
    );
    match s.status {
        Status::Interrupted => eprintln!(
            "Interrupted. Finished turns are saved; run `booktr run {} --mode {mode}` again to resume.",
            campaign.plan.campaign_file.display()
        ),
        Status::ContextExhausted => eprintln!(
            "The single agent's conversation outgrew max_context_tokens = {}: that is the baseline's limit, recorded for the comparison (raise max_context_tokens to let it go further).",
            campaign.plan.max_context_tokens
        ),
        Status::Incomplete => {
            for f in &s.failed {
                eprintln!("  failed: unit {} ({}): {}", f.index, f.unit, f.error);
            }
            if s.failed.is_empty()
                && let Some(e) = &s.last_error
            {
                eprintln!("  last error: {e}");
            }
            eprintln!(
                "{} unit(s) failed and were left untranslated; the run went on without them. Run the same command again to retry them.",
                s.failed.len()
            );
        }
        Status::Complete => {}
    }
    if args.json {
        println!("{}", serde_json::to_string(s)?);
    }
    Ok(match s.status {
        Status::Complete => ExitCode::Ok,
        Status::ContextExhausted | Status::Incomplete => ExitCode::Failed,
        Status::Interrupted => ExitCode::Interrupted,
    })
}

/// `booktr experiment CAMPAIGN [--judge-model M]`.
pub fn run(args: &ExperimentArgs) -> anyhow::Result<ExitCode> {
    let plan = super::plan(&args.campaign, args.concurrency)?;
    if let Some(dir) = &plan.reference_dir
        && !dir.is_dir()
    {
        return Err(UsageError::new(format!(
            "{}: reference_dir = {} is not a folder; point it to a human translation of the book (chapter files named as the sources), or remove the key to skip chrF",
            plan.campaign_file.display(),
            dir.display()
        ))
        .into());
    }
    let campaign = Campaign::load(plan)?;
    let provider = super::rehearsal::campaign_provider(&campaign.plan)
        .map_err(|e| UsageError::new(e.to_string()))?;
    let judge_model = args
        .judge_model
        .clone()
        .unwrap_or_else(|| campaign.plan.provider.model.clone());
    let judge_plan = crate::config::ProviderPlan {
        model: judge_model.clone(),
        ..campaign.plan.provider.clone()
    };
    let judge = super::rehearsal::provider(&judge_plan, &campaign.plan.target_lang)
        .map_err(|e| UsageError::new(e.to_string()))?;
    let result = runtime()?.block_on(experiment::run(
        &campaign,
        Arc::new(provider),
        Arc::new(judge),
        &judge_model,
    ))?;
    if result.outcome == Outcome::AwaitingApproval {
        eprintln!(
            "The orchestration arm waits for an editor's approval (campaign key `review`): see `booktr status {0}`, approve, then run `booktr experiment {0}` again.",
            campaign.plan.campaign_file.display()
        );
        return Ok(ExitCode::AwaitingApproval);
    }
    let (Some(ev), Some(path)) = (&result.evidence, &result.evidence_path) else {
        eprintln!(
            "Interrupted. Finished work is saved; run `booktr experiment {}` again to resume.",
            campaign.plan.campaign_file.display()
        );
        return Ok(ExitCode::Interrupted);
    };
    if ev.rehearsal {
        eprintln!(
            "REHEARSAL: the pseudo provider answered; these numbers measure the pipeline, not a model."
        );
    }
    eprintln!("{}", ev.table);
    for g in &ev.gates {
        eprintln!(
            "  [{}] {}: {}",
            if g.pass { "pass" } else { "FAIL" },
            g.name,
            g.reason
        );
    }
    eprintln!(
        "  evidence: {}   report: {}",
        campaign.plan.show(path),
        campaign
            .plan
            .show(&campaign.plan.report_dir.join("report.html"))
    );
    if args.json {
        println!(
            "{}",
            serde_json::json!({
                "outcome": result.outcome,
                "evidence": campaign.plan.rel(path),
                "all_gates_pass": ev.all_gates_pass,
                "gates": ev.gates,
            })
        );
    }
    Ok(match result.outcome {
        Outcome::Passed => ExitCode::Ok,
        Outcome::GatesFailed => ExitCode::Failed,
        Outcome::Interrupted => ExitCode::Interrupted,
        Outcome::AwaitingApproval => ExitCode::AwaitingApproval,
    })
}
