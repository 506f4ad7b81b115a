//! What a campaign's state amounts to, in the words every command and report uses: the
//! [`Status`] vocabulary, the `--json` [`Summary`] with its [`UnitCounts`], and
//! [`summarize`], which builds it from a state. It owns no state and writes nothing; `run`,
//! `status`, `validate`, `import` and the reports read it, so it sits below the runner and
//! the commands.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::Campaign;
use super::manager::{Manager, Stage};
use super::state::{AgentUsage, State};
use crate::agents::Agent;
use crate::config::Pricing;

/// A campaign's status: the one vocabulary of `run` (its last line and `--json`), `status`,
/// `validate` (campaign and `--source/--target` alike, its `--json` `status`), `import` and
/// the reports. For one state every command says the same word; it comes from the Manager's
/// next stage ([`Status::of_stage`]) and the findings on the final texts
/// ([`Status::with_findings`]):
///
/// | word | meaning | `run` exits |
/// |---|---|---|
/// | `complete` | every stage done, no error finding on the final texts | 0 |
/// | `needs_review` | every stage done, error findings remain (an editor must fix them) | 1 |
/// | `incomplete` | work remains: calls failed, or the provider stopped the run (quota, key) | 1 |
/// | `awaiting_approval` | waiting at an approval gate (campaign key `review`) | 3 |
/// | `budget_reached` | stopped before a request would exceed the budget cap | 4 |
/// | `interrupted` | stopped by Ctrl-C or SIGTERM (only `run` sees it happen) | 130 |
///
/// The headline adds the counts that make the word: `needs_review: 12 errors in 3 units`,
/// `incomplete: 2 failed` ([`Status::headline`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Every unit translated, reviewed as configured, chapters written, and no error finding
    /// remains on the final texts.
    Complete,
    /// Some calls failed; a re-run retries them.
    Incomplete,
    /// Stopped by a signal; a re-run resumes.
    Interrupted,
    /// Waiting at an approval gate; `booktr approve` lets it go on.
    AwaitingApproval,
    /// Every stage finished (units translated, reviewed, chapters written) but error findings
    /// remain on the final texts: an editor must fix them (`Summary::findings` counts them).
    /// Exit code 1, like `booktr validate` with errors.
    NeedsReview,
    /// Stopped before a request that would have taken the spending over the budget cap
    /// (`[pricing] max_cost`, `run --max-cost`; see the budget gate, `ops/budget.rs`). Finished work is
    /// saved; a run with a higher cap resumes. Exit code 4.
    BudgetReached,
}

impl Status {
    /// The status of a run that stopped (not interrupted) at `stage`.
    pub fn of_stage(stage: &Stage) -> Status {
        match stage {
            Stage::Complete => Status::Complete,
            Stage::AwaitingApproval(_) => Status::AwaitingApproval,
            _ => Status::Incomplete,
        }
    }

    /// The status once the remaining findings are known: a finished campaign (`Complete`) with
    /// error findings `needs_review`; every other status stands as it is.
    pub fn with_findings(self, counts: &super::verdict::FindingCounts) -> Status {
        match self {
            Status::Complete if counts.errors > 0 => Status::NeedsReview,
            other => other,
        }
    }

    /// The snake_case name used in JSON, journal lines and the CLI (`needs_review`, …).
    pub fn as_str(&self) -> &'static str {
        match self {
            Status::Complete => "complete",
            Status::Incomplete => "incomplete",
            Status::Interrupted => "interrupted",
            Status::AwaitingApproval => "awaiting_approval",
            Status::NeedsReview => "needs_review",
            Status::BudgetReached => "budget_reached",
        }
    }

    /// The status as the CLI and the report headers say it, with the counts that make it:
    /// `complete`, `needs_review: 12 errors in 3 units`, `incomplete: 2 failed, 5 errors in 2
    /// units`, `interrupted: 362 units not translated yet, 5 errors in 2 units`…
    pub fn headline(&self, counts: &super::verdict::FindingCounts, units: &UnitCounts) -> String {
        let mut parts: Vec<String> = Vec::new();
        if units.failed > 0 {
            parts.push(format!("{} failed", units.failed));
        }
        if counts.errors > 0 {
            // A run that stopped early (interrupted, failed calls, budget, approval) names the
            // units it has yet to translate apart from the errors an editor must fix.
            parts.push(match self {
                Status::Complete | Status::NeedsReview => counts.describe(),
                _ => counts.describe_unfinished(units.untranslated(), units.failed),
            });
        }
        if parts.is_empty() {
            self.as_str().to_string()
        } else {
            format!("{}: {}", self.as_str(), parts.join(", "))
        }
    }
}

impl UnitCounts {
    /// Prose units without a translation (never reached, or failed).
    pub fn untranslated(&self) -> usize {
        self.total
            .saturating_sub(self.copied)
            .saturating_sub(self.translated)
    }
}

/// Unit counts for summaries.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct UnitCounts {
    /// All units of the campaign.
    pub total: usize,
    /// Prose units with a translation.
    pub translated: usize,
    /// Units translated again in a revision round.
    pub revised: usize,
    /// Prose units with no translation after a failure.
    pub failed: usize,
    /// Verbatim and front-matter units copied unchanged.
    pub copied: usize,
    /// Translated units whose translation was reused from an earlier run (same fingerprint:
    /// same source text, glossary entries, prompt and model) rather than requested by this one.
    pub reused: usize,
    /// Translated units whose first translation came from a translation memory (TMX), with no
    /// model call.
    pub memory_hits: usize,
}

/// The `--json` summary of a run (and of `status`).
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub campaign: String,
    pub fingerprint: String,
    pub status: Status,
    /// True when the pseudo provider produced the outputs.
    pub rehearsal: bool,
    pub stage: Stage,
    pub units: UnitCounts,
    pub out_dir: String,
    pub state_dir: String,
    pub report_dir: String,
    pub manager_context_peak_tokens: usize,
    pub usage: BTreeMap<Agent, AgentUsage>,
    /// Cost of the usage at the campaign's `[pricing]`, when it has one.
    pub cost: Option<Cost>,
    pub last_error: Option<String>,
    /// The approval gate the campaign waits at, with the command that continues it.
    pub awaiting: Option<Awaiting>,
    /// The QA findings that remain on the final texts (the same ones the report lists): with
    /// any error, a finished campaign is `needs_review`, not `complete`.
    pub findings: super::verdict::FindingCounts,
    /// Replies the stream reader stopped as runaways (repeating, or over their bound), all
    /// runs; details in the report's `runaway`.
    #[serde(default)]
    pub runaway_replies: usize,
    /// Why the newest run stopped scheduling calls early (quota, billing or a rejected key),
    /// with the provider's message; `null` when it did not.
    #[serde(default)]
    pub stopped: Option<String>,
    /// The command that resumes the campaign (`booktr run <campaign file>`), when it stopped
    /// early (at the budget cap: with `--max-cost` and a cap that covers the rest).
    #[serde(default)]
    pub resume: Option<String>,
    /// Where the newest run stopped at its budget cap (status `budget_reached`); `null` when
    /// it did not.
    #[serde(default)]
    pub budget: Option<super::store::BudgetStop>,
}

/// Money spent, from usage and `[pricing]`.
#[derive(Debug, Clone, Serialize)]
pub struct Cost {
    pub currency: String,
    pub total: f64,
    pub by_agent: BTreeMap<Agent, f64>,
}

impl Cost {
    /// The cost of `usage` at `pricing`.
    pub fn of(usage: &BTreeMap<Agent, AgentUsage>, pricing: &Pricing) -> Cost {
        let by_agent: BTreeMap<Agent, f64> = usage
            .iter()
            .map(|(a, u)| {
                (
                    *a,
                    pricing.cost(u.prompt_tokens, u.cached_tokens, u.completion_tokens),
                )
            })
            .collect();
        Cost {
            currency: pricing.currency.clone(),
            total: by_agent.values().sum(),
            by_agent,
        }
    }
}

/// A gate the campaign waits at.
#[derive(Debug, Clone, Serialize)]
pub struct Awaiting {
    pub gate: super::manager::Gate,
    /// `booktr approve …` as the user would type it.
    pub command: String,
    /// Revisions gate: the proposed units (ids) with the reason for each, in book order, that
    /// still wait for a decision (an approval by chapter decides only its chapters' units).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub proposed: Vec<(String, String)>,
}

/// The run id the summary's stage is computed for: no run records failures under it, so every
/// failed call counts as still to do, as the next `run` (and `status`) sees it.
pub const NEXT_RUN: &str = "(next run)";

/// Builds the summary of a state, running the QA of its final texts
/// ([`super::verdict::final_qa`]) for the finding counts; `status` becomes `needs_review` when
/// it is `complete` and errors remain.
pub fn summarize(c: &Campaign, m: &Manager, s: &State, status: Status) -> Summary {
    let counts = super::verdict::final_qa(c, s).counts();
    summarize_with(c, m, s, status, counts)
}

/// [`summarize`] with the finding counts already known (the report computes them once).
pub fn summarize_with(
    c: &Campaign,
    m: &Manager,
    s: &State,
    status: Status,
    findings: super::verdict::FindingCounts,
) -> Summary {
    let status = status.with_findings(&findings);
    // Held back at the budget cap: what is left undone is waiting for a higher cap.
    let status = match status {
        Status::Incomplete if s.budget_stop().is_some() => Status::BudgetReached,
        other => other,
    };
    let prose: Vec<&crate::book::Unit> = c.prose_units().collect();
    let translated = prose
        .iter()
        .filter(|u| s.translation_at(&u.id, 0).is_some())
        .count();
    // Every translation call of the unit counts, its first translation, revisions, parts and
    // pieces alike: each failure is logged as `failed translate/…`, and the count agrees.
    let failed = prose
        .iter()
        .filter(|u| {
            s.fp(&u.id).is_some_and(|fp| {
                s.open_failures().keys().any(|k| {
                    super::CallKey::parse(k)
                        .translation()
                        .is_some_and(|(key, _)| key.starts_with(fp))
                })
            })
        })
        .count();
    let mut usage = s.usage().clone();
    for a in Agent::ALL {
        usage.entry(a).or_default();
    }
    let cost = c.plan.pricing.as_ref().map(|p| Cost::of(&usage, p));
    let stage = m.step(s, NEXT_RUN, &BTreeSet::new()).stage;
    let awaiting = match &stage {
        Stage::AwaitingApproval(gate) => Some(Awaiting {
            gate: *gate,
            command: gate.approve_command(c),
            proposed: match gate {
                super::manager::Gate::Revisions { round } => m.undecided_revisions(s, *round),
                super::manager::Gate::Glossary => Vec::new(),
            },
        }),
        _ => None,
    };
    Summary {
        awaiting,
        campaign: c.plan.name.clone(),
        fingerprint: c.fingerprint.clone(),
        status,
        rehearsal: c.plan.is_rehearsal(),
        stage,
        units: UnitCounts {
            total: c.units.len(),
            translated,
            revised: prose
                .iter()
                .filter(|u| s.rounds_of(&u.id).iter().any(|&r| r > 0))
                .count(),
            reused: prose
                .iter()
                .filter(|u| {
                    s.translation_at(&u.id, 0).is_some()
                        && s.fp(&u.id)
                            .is_some_and(|fp| !s.translated_this_run().contains(fp))
                })
                .count(),
            failed,
            copied: c.units.len() - prose.len(),
            memory_hits: prose.iter().filter(|u| s.is_memory_hit(&u.id)).count(),
        },
        out_dir: c.plan.rel(&c.plan.out_dir),
        state_dir: c.plan.rel(&c.state_path()),
        report_dir: c.plan.rel(&c.plan.report_dir),
        manager_context_peak_tokens: s.ctx_peak(),
        usage,
        cost,
        last_error: s.last_error(),
        findings,
        runaway_replies: s.runaways().len(),
        stopped: s.stopped().clone(),
        resume: match (s.stopped(), s.budget_stop()) {
            (Some(_), _) => Some(format!("booktr run {}", c.plan.campaign_file.display())),
            (None, Some(b)) if status == Status::BudgetReached => Some(b.resume_command(c)),
            _ => None,
        },
        budget: s
            .budget_stop()
            .filter(|_| status == Status::BudgetReached)
            .cloned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::campaign::core::verdict::FindingCounts;

    /// `errors` error findings in `error_units` units, no warning.
    fn counts(errors: usize, error_units: usize) -> FindingCounts {
        FindingCounts {
            errors,
            warnings: 0,
            error_units,
        }
    }

    #[test]
    fn a_stopped_run_names_the_units_it_has_yet_to_translate_apart_from_an_editors_errors() {
        // Interrupted at 24 of 386 prose units: 362 untranslated, each with its completeness
        // error, and 5 errors in 2 translated units.
        let interrupted = counts(367, 364);
        let units = UnitCounts {
            total: 390,
            translated: 24,
            copied: 4,
            ..Default::default()
        };
        assert_eq!(
            Status::Interrupted.headline(&interrupted, &units),
            "interrupted: 362 units not translated yet, 5 errors in 2 units"
        );
        // A failed unit is named once, as failed.
        let failed = UnitCounts {
            translated: 385,
            failed: 1,
            ..units
        };
        let one = counts(6, 3);
        assert_eq!(
            Status::Incomplete.headline(&one, &failed),
            "incomplete: 1 failed, 5 errors in 2 units"
        );
        // A finished campaign's errors are all the editor's.
        let done = UnitCounts {
            translated: 386,
            ..units
        };
        let five = counts(5, 2);
        assert_eq!(
            Status::NeedsReview.headline(&five, &done),
            "needs_review: 5 errors in 2 units"
        );
    }
}
