//! `booktr run`: run or resume a campaign, then write the report.

use std::sync::Arc;

use crate::campaign::Campaign;
use crate::campaign::core::summary::Status;
use crate::campaign::ops::runner;
use crate::cli::{CampaignArgs, RunArgs};
use crate::exit::{ExitCode, UsageError};

pub fn run(args: &RunArgs) -> anyhow::Result<ExitCode> {
    // A book folder or chapter with --to: the campaign file `init` writes beside it.
    let resolved = super::init::campaign_for_run(
        &args.campaign.campaign,
        &args.book,
        args.campaign.model.as_deref(),
    )?
    .map(|file| CampaignArgs {
        campaign: file,
        ..args.campaign.clone()
    });
    let campaign_args = resolved.as_ref().unwrap_or(&args.campaign);
    super::naming_campaign(&campaign_args.campaign, run_campaign(args, campaign_args))
}

/// `run` once the campaign file is known: the run, the outputs beside the chapters, the
/// report, and what to do next.
fn run_campaign(args: &RunArgs, campaign_args: &CampaignArgs) -> anyhow::Result<ExitCode> {
    let baseline = match args.mode {
        crate::cli::Mode::Orchestration => None,
        crate::cli::Mode::SingleAgent => {
            Some(crate::experiment::single_agent::Baseline::Conversation)
        }
        crate::cli::Mode::StatelessLoop => {
            Some(crate::experiment::single_agent::Baseline::StatelessLoop)
        }
    };
    if let Some(baseline) = baseline {
        let mode = baseline.mode();
        if args.batch {
            return Err(UsageError::new(format!(
                "--batch does not apply to --mode {mode}: the baselines send one request at a time, as their users would; drop --batch"
            ))
            .into());
        }
        if args.max_cost.is_some() {
            return Err(UsageError::new(format!(
                "--max-cost does not apply to --mode {mode} (the baseline has no budget cap); drop --max-cost"
            ))
            .into());
        }
        return super::experiment::run_single(args, campaign_args, baseline);
    }
    let mut plan = super::plan(campaign_args, args.concurrency)?;
    plan.bilingual |= args.bilingual;
    if let Some(cap) = args.max_cost {
        apply_max_cost(&mut plan, cap)?;
    }
    let campaign = Campaign::load(plan)?;
    for line in super::chapter_source_lines(&campaign.plan, 6) {
        eprintln!("{line}");
    }
    let provider = super::rehearsal::campaign_provider(&campaign.plan)
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
            progress_every: args.progress_every.map(std::time::Duration::from_secs_f64),
        },
    ))?;
    let site_notes = write_beside(&campaign, &result)?;
    let mut report = crate::report::build(
        &campaign,
        &result.manager,
        &result.state,
        result.summary.status,
        &result.skipped_chapters,
    );
    report.site_notes = site_notes;
    // What the lines below need from the state and the Manager, taken before both are dropped.
    let kept_line = edits_kept_line(&campaign, &result.state);
    let mut waiting = Vec::new();
    if let crate::campaign::core::manager::Stage::AwaitingApproval(gate) = &report.summary.stage
        && report.summary.status == Status::AwaitingApproval
    {
        crate::campaign::ops::desk::write_revisions_review(
            &campaign,
            &result.manager,
            &result.state,
        )?;
        waiting = crate::campaign::ops::desk::waiting_lines(
            &campaign,
            &result.manager,
            &result.state,
            *gate,
        );
    }
    let texts = crate::report::texts_of(&campaign, &result.state);
    // The state and the Manager's memos are not needed to write the report: dropped first,
    // they do not stack under the HTML page's texts, the peak of a long book's run.
    drop(result);
    let (report, written) = report.write(&campaign.plan.report_dir, texts)?;
    // The report's summary: its status and counts come from the very findings the report
    // lists. A finished campaign whose final texts still have error findings is
    // `needs_review` and exits 1, like `booktr validate` (docs/src/reliability.md, "Status and exit codes").
    let s = &report.summary;
    print_long_answers(&report.runaway);
    print_headline(&campaign, s, &written[2]);
    let next = NextStep {
        campaign: &campaign,
        campaign_args,
        report_html: &written[2],
        kept_line: kept_line.as_deref(),
        waiting: &waiting,
    };
    next.print(s);
    if args.json {
        println!("{}", serde_json::to_string(s)?);
    }
    Ok(match s.status {
        Status::Complete => ExitCode::Ok,
        Status::NeedsReview | Status::Incomplete => ExitCode::Failed,
        Status::Interrupted => ExitCode::Interrupted,
        Status::AwaitingApproval => ExitCode::AwaitingApproval,
        Status::BudgetReached => ExitCode::BudgetReached,
    })
}

/// What goes beside the translated chapters: the images they use (on every run, so a changed
/// figure is picked up even when no text changed), a `book` campaign's site (configuration,
/// titles, assets), and the bilingual chapters when asked for. Returns the site's notes, the
/// layout's (read with the campaign) first, printed here and kept for the report.
fn write_beside(campaign: &Campaign, result: &runner::RunResult) -> anyhow::Result<Vec<String>> {
    crate::campaign::ops::outputs::copy_images(campaign)?;
    let site = crate::campaign::ops::site_out::write_site(campaign, &result.state)?;
    for n in &site.notes {
        eprintln!("  note: {n}");
    }
    if campaign.plan.bilingual {
        crate::campaign::ops::outputs::write_bilingual(campaign, &result.state)?;
    }
    let mut notes: Vec<String> = campaign
        .plan
        .site
        .iter()
        .flat_map(|s| s.notes.iter().cloned())
        .collect();
    notes.extend(site.notes);
    Ok(notes)
}

/// Runaway replies stopped, long answers continued or cut, and the tokens not kept.
fn print_long_answers(rr: &crate::report::RunawayReport) {
    if rr.replies > 0 {
        eprintln!(
            "  runaway replies stopped: {} ({} repeating themselves; {} completion tokens, not kept)",
            rr.replies, rr.repetitions, rr.completion_tokens
        );
    }
    if !rr.continued.is_empty() || !rr.kept_splits.is_empty() {
        eprintln!(
            "  long answers: {} continued ({} continuation requests, {} prompt + {} completion tokens), {} cut and kept up to a block boundary",
            rr.continued.len(),
            rr.continuations,
            rr.continuation_usage.prompt_tokens,
            rr.continuation_usage.completion_tokens,
            rr.kept_splits.len()
        );
    }
    if rr.not_kept.completion_tokens > 0 {
        eprintln!("  {}", rr.not_kept.line());
    }
}

/// The campaign's one-line result and where its outputs and report are.
fn print_headline(
    campaign: &Campaign,
    s: &crate::campaign::core::summary::Summary,
    report_html: &std::path::Path,
) {
    let tag = if s.rehearsal { "REHEARSAL " } else { "" };
    // A resume says what it did not pay for: translations reused from earlier runs.
    let reused = if s.units.reused > 0 {
        format!(
            " ({} reused from earlier runs, not requested again)",
            s.units.reused
        )
    } else {
        String::new()
    };
    eprintln!(
        "{tag}{}: {} — {}/{} units translated{reused}, {} revised, {} failed; manager context peak {} tokens",
        s.campaign,
        s.status.headline(&s.findings, &s.units),
        s.units.translated,
        s.units.total - s.units.copied,
        s.units.revised,
        s.units.failed,
        s.manager_context_peak_tokens
    );
    eprintln!(
        "  outputs: {}   report: {}",
        campaign.plan.show(&campaign.plan.out_dir),
        campaign.plan.show(report_html)
    );
}

/// What the editor does next, by status.
struct NextStep<'n> {
    campaign: &'n Campaign,
    campaign_args: &'n CampaignArgs,
    report_html: &'n std::path::Path,
    /// The line about hand edits kept, for a campaign that needs review.
    kept_line: Option<&'n str>,
    /// The lines of a campaign waiting at a gate.
    waiting: &'n [String],
}

impl NextStep<'_> {
    fn print(&self, s: &crate::campaign::core::summary::Summary) {
        let (campaign, campaign_args) = (self.campaign, self.campaign_args);
        let errors = s.findings.errors;
        match s.status {
            Status::Interrupted => eprintln!(
                "Interrupted. Finished work is saved; run `{}` again to resume.",
                campaign_args.command("run")
            ),
            Status::Incomplete => {
                if let Some(stopped) = &s.stopped {
                    // Quota, billing or a rejected key: no call was sent after it.
                    eprintln!("  stopped: {stopped}");
                    eprintln!(
                        "Stopped early: fix the provider account or key, then resume with `{}` (finished work is kept and not sent again).",
                        campaign_args.command("run")
                    );
                } else {
                    if let Some(e) = &s.last_error {
                        eprintln!("  last error: {e}");
                    }
                    match s
                        .last_error
                        .as_deref()
                        .and_then(crate::llm::error::unreachable_url)
                    {
                        Some(url) => eprintln!(
                            "No server answered at {url}: start it, or fix the address (--base-url, or base_url under [provider] in {}), then run the same command again to retry only the failed calls.",
                            campaign.plan.campaign_file.display()
                        ),
                        None => eprintln!(
                            "Some calls failed. Run the same command again to retry only those."
                        ),
                    }
                }
            }
            Status::NeedsReview => {
                eprintln!(
                    "{errors} error finding(s) remain in {} unit(s): see {}, fix them and run `booktr validate {}`.",
                    s.findings.error_units,
                    campaign.plan.show(self.report_html),
                    campaign.plan.campaign_file.display()
                );
                if let Some(line) = self.kept_line {
                    eprintln!("  {line}");
                }
            }
            Status::Complete => {}
            Status::BudgetReached => {
                // The runner printed the full message when it stopped; this is the last word.
                if let Some(b) = &s.budget {
                    eprintln!(
                        "Stopped at the budget cap: {:.4} {cur} spent of {:.4} {cur}. Resume with a higher cap, e.g. `{}` (finished work is not paid again).",
                        b.spent,
                        b.cap,
                        b.resume_command(campaign),
                        cur = b.currency
                    );
                }
            }
            Status::AwaitingApproval => {
                for line in self.waiting {
                    eprintln!("{line}");
                }
            }
        }
    }
}

/// Puts `run --max-cost` over `[pricing] max_cost`. Errors (usage, exit 2): the campaign
/// has no `[pricing]` table (no prices to turn usage into cost), or `cap` is not an amount
/// above zero.
fn apply_max_cost(plan: &mut crate::config::Plan, cap: f64) -> Result<(), UsageError> {
    crate::config::check_max_cost(cap).map_err(|m| UsageError::new(format!("--max-cost {m}")))?;
    match plan.pricing.as_mut() {
        Some(p) => {
            p.max_cost = Some(cap);
            Ok(())
        }
        None => Err(UsageError::new(format!(
            "--max-cost needs prices: {} has no [pricing] table. Add one, e.g.\n[pricing]\ninput_per_million = 0.15\noutput_per_million = 0.60\ncurrency = \"USD\"\n(your provider's prices per million tokens), or drop --max-cost",
            plan.campaign_file.display()
        ))),
    }
}

/// The sentence saying that edits by hand or imported ones are kept, with their count; `None`
/// when the campaign has no such edit (then there is nothing to say).
pub(crate) fn edits_kept_line(
    c: &Campaign,
    s: &crate::campaign::core::state::State,
) -> Option<String> {
    let edited = c
        .units
        .iter()
        .filter(|u| s.human_edit(&u.id).is_some() && !s.is_carried(&u.id))
        .count();
    let stale: Vec<&str> = c
        .units
        .iter()
        .filter(|u| !s.stale_edits(&u.id).is_empty())
        .map(|u| u.id.as_str())
        .collect();
    let carried = c.units.iter().filter(|u| s.is_carried(&u.id)).count();
    if edited + carried == 0 {
        return None;
    }
    let mut line = String::new();
    if edited > 0 {
        line.push_str(&format!(
            "{edited} unit(s) hold hand edits or imported edits: those are never overwritten (`booktr run --force` puts the model translations back)."
        ));
    }
    if carried > 0 {
        line.push_str(&format!(
            "{}{carried} unit(s) keep paragraphs people wrote (an editor's, or seeded from an existing translation) while their other paragraphs were translated; no model revises those paragraphs.",
            if line.is_empty() { "" } else { " " }
        ));
    }
    if !stale.is_empty() {
        line.push_str(&format!(
            " Stale edits in {} unit(s) ({}): a paragraph an editor translated has a new source; the editor's text stays until you decide with `booktr approve {} --stale UNIT --keep editor|model` (the report shows the old and new source).",
            stale.len(),
            stale.iter().take(5).copied().collect::<Vec<_>>().join(", "),
            c.plan.show(&c.plan.campaign_file)
        ));
    }
    Some(line)
}
