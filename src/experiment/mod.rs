//! `booktr experiment`: the design measured against the naive approach on the same book.
//!
//! ```text
//! campaign ─► arm 1: orchestration (the normal `run`: Manager + Glossary, Translation,
//!             │      Proofreading agents; campaign::ops::runner)       <state_dir>/<key>/
//!             ├► arm 2: single agent, one growing conversation (single_agent)
//!             │                                                  <state_dir>/single-agent/<key>/
//!             ├► blinded pairwise judge per unit (judge)         <state_dir>/judge/<key>/
//!             ├► deterministic metrics per arm (metrics: QA, terminology, house style, context
//!             │  peaks, tokens per agent, wall time) and chrF against a human translation (chrf)
//!             └► evidence.json with acceptance gates (evidence)
//!                  <report_dir>/<campaign>/<timestamp>/evidence.json, <report_dir>/latest.json
//! ```
//!
//! Each arm and the judge checkpoint in their own state directory with the store of the main
//! mode (atomic result files, append-only journal), so the whole experiment resumes after an
//! interruption without paying twice.

pub mod chrf;
pub mod evidence;
pub mod judge;
pub mod metrics;
pub mod quality;
pub mod single_agent;

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::campaign::Campaign;
use crate::campaign::core::summary::Status;
use crate::campaign::ops::runner::{self, RunOptions};
use crate::llm::Provider;

/// The two arms of the experiment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Arm {
    /// The normal run: Manager, Glossary, Translation and Proofreading agents.
    Orchestration,
    /// One agent in one growing conversation.
    SingleAgent,
}

impl Arm {
    pub const BOTH: [Arm; 2] = [Arm::Orchestration, Arm::SingleAgent];

    pub fn other(self) -> Arm {
        match self {
            Arm::Orchestration => Arm::SingleAgent,
            Arm::SingleAgent => Arm::Orchestration,
        }
    }

    /// The name used in files and tables.
    pub fn as_str(self) -> &'static str {
        match self {
            Arm::Orchestration => "orchestration",
            Arm::SingleAgent => "single_agent",
        }
    }
}

/// How an experiment ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Evidence written; every gate true.
    Passed,
    /// Evidence written; some gate false.
    GatesFailed,
    /// Stopped by a signal before the evidence; run again to resume.
    Interrupted,
    /// The orchestration arm waits at an approval gate (campaign key `review`); `booktr
    /// approve`, then the same command, goes on.
    AwaitingApproval,
}

/// What [`run`] ends with.
pub struct ExperimentResult {
    pub outcome: Outcome,
    /// The evidence (absent when interrupted).
    pub evidence: Option<evidence::Evidence>,
    /// Where evidence.json was written.
    pub evidence_path: Option<std::path::PathBuf>,
}

/// Runs both arms, the judge and the metrics, and writes the evidence and the report with its
/// comparison section. `judge` answers the judge requests with model `judge_model`.
///
/// Errors: a state cannot be opened or written, a report cannot be written.
pub async fn run(
    c: &Campaign,
    provider: Arc<Provider>,
    judge_provider: Arc<Provider>,
    judge_model: &str,
) -> anyhow::Result<ExperimentResult> {
    let interrupted = ExperimentResult {
        outcome: Outcome::Interrupted,
        evidence: None,
        evidence_path: None,
    };
    eprintln!("experiment 1/4: orchestration arm (booktr run)");
    let orch = runner::run(c, provider.clone(), RunOptions::default()).await?;
    match orch.summary.status {
        Status::Interrupted => return Ok(interrupted),
        Status::AwaitingApproval => {
            return Ok(ExperimentResult {
                outcome: Outcome::AwaitingApproval,
                ..interrupted
            });
        }
        // A finished arm is compared whether or not error findings remain (`needs_review`):
        // the evidence records its status and the QA counts measure them.
        // An arm held back at the budget cap is compared on what it translated, as an
        // incomplete one (the evidence records its status).
        Status::Complete | Status::Incomplete | Status::NeedsReview | Status::BudgetReached => {}
    }
    eprintln!("experiment 2/4: single-agent arm (one conversation)");
    let single = single_agent::run(
        c,
        provider.clone(),
        RunOptions::default(),
        single_agent::Baseline::Conversation,
    )
    .await?;
    if single.summary.status == single_agent::Status::Interrupted {
        return Ok(interrupted);
    }
    eprintln!("experiment 3/4: stateless loop (one request per unit; measured, not judged)");
    let looped = single_agent::run(
        c,
        provider,
        RunOptions::default(),
        single_agent::Baseline::StatelessLoop,
    )
    .await?;
    if looped.summary.status == single_agent::Status::Interrupted {
        return Ok(interrupted);
    }
    // Units both arms translated, in book order (the orchestration text is what its output
    // holds: a hand edit if any, else the kept translation).
    let pairs: Vec<judge::Pair> = c
        .prose_units()
        .filter(|u| {
            orch.state.kept_translation(&u.id, u32::MAX).is_some()
                || orch.state.human_edit(&u.id).is_some()
        })
        .filter_map(|u| Some((u, single.translations.get(&u.id)?.clone())))
        .enumerate()
        .map(|(index, (u, s))| judge::Pair {
            unit: u.id.clone(),
            index,
            source: c.source_text(u).to_string(),
            orchestration: crate::campaign::core::edits::final_text(c, &orch.state, u),
            single_agent: s,
        })
        .collect();
    eprintln!(
        "experiment 4/4: blinded pairwise judge ({} units, model {judge_model})",
        pairs.len()
    );
    let judged = judge::run(
        c,
        judge_provider,
        judge_model,
        pairs.clone(),
        c.plan.concurrency,
    )
    .await?;
    if judged.interrupted {
        return Ok(interrupted);
    }
    let ev = evidence::build(c, &orch, &single, &looped, &judged, &pairs, judge_model)?;
    let path = evidence::write(c, &ev)?;
    // The report of the orchestration arm, with the comparison section.
    let mut report = crate::report::build(
        c,
        &orch.manager,
        &orch.state,
        orch.summary.status,
        &orch.skipped_chapters,
    );
    report.comparison = Some(ev.comparison(c, &path));
    report.write(&c.plan.report_dir, crate::report::texts_of(c, &orch.state))?;
    Ok(ExperimentResult {
        outcome: if ev.all_gates_pass {
            Outcome::Passed
        } else {
            Outcome::GatesFailed
        },
        evidence: Some(ev),
        evidence_path: Some(path),
    })
}
