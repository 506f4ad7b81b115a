//! `booktr run`: run or resume a campaign, then write the report.

use std::sync::Arc;

use crate::campaign::Campaign;
use crate::campaign::runner::{self, Status};
use crate::cli::RunArgs;
use crate::exit::{ExitCode, UsageError};
use crate::llm::Provider;

pub fn run(args: &RunArgs) -> anyhow::Result<ExitCode> {
    if args.mode == crate::cli::Mode::SingleAgent {
        if args.batch {
            return Err(UsageError::new(
                "--batch does not apply to --mode single-agent: each turn of the conversation needs the previous answer; drop --batch",
            )
            .into());
        }
        return super::experiment::run_single(args);
    }
    let mut plan = super::plan(&args.campaign, args.concurrency)?;
    plan.bilingual |= args.bilingual;
    let campaign = Campaign::load(plan)?;
    let provider = Provider::from_plan(&campaign.plan.provider, &campaign.plan.target_lang)
        .map_err(|e| UsageError::new(e.to_string()))?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let result = rt.block_on(runner::run(
        &campaign,
        Arc::new(provider),
        runner::RunOptions {
            fresh: args.fresh,
            force: args.force,
            retranslate: args.retranslate,
            batch: args.batch,
        },
    ))?;
    // Images the chapters use go beside the translated chapters (on every run, so a changed
    // figure is picked up even when no text changed).
    crate::campaign::outputs::copy_images(&campaign)?;
    if campaign.plan.bilingual {
        crate::interchange::bilingual::write_all(&campaign, &result.state)?;
    }
    let report = crate::report::build(
        &campaign,
        &result.manager,
        &result.state,
        result.summary.status,
        &result.skipped_chapters,
    );
    let written = report.write(
        &campaign.plan.report_dir,
        &crate::report::texts_of(&campaign, &result.state),
    )?;
    let s = &result.summary;
    if report.runaway.replies > 0 {
        eprintln!(
            "  runaway replies stopped: {} ({} completion tokens, not kept)",
            report.runaway.replies, report.runaway.completion_tokens
        );
    }
    // The README's exit codes: a finished campaign whose report still has error findings
    // (e.g. after hand edits, which are kept) exits 1, like `booktr validate`.
    let errors = report.error_count();
    let tag = if s.rehearsal { "REHEARSAL " } else { "" };
    eprintln!(
        "{tag}{}: {:?} — {}/{} units translated, {} revised, {} failed; manager context peak {} tokens",
        s.campaign,
        s.status,
        s.units.translated,
        s.units.total - s.units.copied,
        s.units.revised,
        s.units.failed,
        s.manager_context_peak_tokens
    );
    eprintln!(
        "  outputs: {}   report: {}",
        campaign.plan.show(&campaign.plan.out_dir),
        campaign.plan.show(&written[2])
    );
    match s.status {
        Status::Interrupted => eprintln!(
            "Interrupted. Finished work is saved; run `booktr run {}` again to resume.",
            campaign.plan.campaign_file.display()
        ),
        Status::Incomplete => {
            if let Some(stopped) = &s.stopped {
                // Quota, billing or a rejected key: no call was sent after it.
                eprintln!("  stopped: {stopped}");
                eprintln!(
                    "Stopped early: fix the provider account or key, then resume with `booktr run {}` (finished work is kept and not sent again).",
                    campaign.plan.campaign_file.display()
                );
            } else {
                if let Some(e) = &s.last_error {
                    eprintln!("  last error: {e}");
                }
                eprintln!("Some calls failed. Run the same command again to retry only those.");
            }
        }
        Status::Complete if errors > 0 => eprintln!(
            "{errors} error finding(s) remain (hand edits or imported edits are never overwritten): see {}, fix them and run `booktr validate {}`.",
            campaign.plan.show(&written[2]),
            campaign.plan.campaign_file.display()
        ),
        Status::Complete => {}
        Status::AwaitingApproval => {
            if let crate::campaign::manager::Stage::AwaitingApproval(gate) = &s.stage {
                crate::campaign::desk::write_revisions_review(
                    &campaign,
                    &result.manager,
                    &result.state,
                )?;
                for line in crate::campaign::desk::waiting_lines(
                    &campaign,
                    &result.manager,
                    &result.state,
                    *gate,
                ) {
                    eprintln!("{line}");
                }
            }
        }
    }
    if args.json {
        println!("{}", serde_json::to_string(s)?);
    }
    Ok(match s.status {
        Status::Complete if errors > 0 => ExitCode::Failed,
        Status::Complete => ExitCode::Ok,
        Status::Incomplete => ExitCode::Failed,
        Status::Interrupted => ExitCode::Interrupted,
        Status::AwaitingApproval => ExitCode::AwaitingApproval,
    })
}
