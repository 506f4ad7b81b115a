//! Batch mode (`booktr run --batch`): the pending Translation requests of a Translate or Revise
//! stage go to the provider's batch API as one batch (see [`crate::llm::batch`]) instead of
//! one streamed call each.
//!
//! 1. **Submit**: every runnable Translation action of the stage that no batch ended by this
//!    run has tried is prepared ([`jobs::prepare`]) and submitted. The batch id and, per item,
//!    its `custom_id`, call key and request fingerprint are journaled as `batch_submitted`
//!    *before* the first poll, so a restart (after a crash, `kill -9` or Ctrl-C) polls the same
//!    batch instead of paying for a second one. (A crash in the moment between the provider's
//!    answer and the journal line is the one window left; the batch then stays unknown to
//!    booktr.)
//! 2. **Poll** every `batch_poll_ms` until the batch ends; Ctrl-C or SIGTERM stops polling and
//!    the run ends interrupted, the batch still open in the journal.
//! 3. **Record**: each answer goes through [`jobs::finish`], like a streamed one, and is
//!    recorded with the same result file and usage ([`crate::campaign::core::commit::record_result`]); a truncated
//!    answer splits its unit as usual. An answer is used only for the request it was asked
//!    for: its call must still be pending and its request fingerprint unchanged.
//! 4. **End**: `batch_ended` is journaled; the items without a usable answer (HTTP errors,
//!    expiry, cancellation) are then sent as normal streamed calls by the runner.
//!
//! A batch left open by an earlier run is polled and recorded at the next run of that stage
//! even without `--batch`: its answers are paid for.

use std::collections::HashMap;
use std::future::Future;
use std::ops::ControlFlow;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::jobs;
use super::progress::Progress;
use crate::campaign::core::Campaign;
use crate::campaign::core::manager::{Action, Manager};
use crate::campaign::core::state::State;
use crate::campaign::core::store::{BatchItem, Event, Store};
use crate::llm::Provider;
use crate::llm::batch::{ItemResult, Poll, custom_id};

/// What a batch step did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Nothing to batch: the runner proceeds with normal calls.
    Nothing,
    /// A batch was polled to its end and its results recorded.
    Recorded,
    /// Interrupted by a signal while polling.
    Interrupted,
    /// The endpoint has no batch API (HTTP 404, 405 or 501 to the submission, e.g. a local
    /// server or a service without `/batches`): the runner streams for the rest of the run.
    /// The message says so, for the terminal.
    Unsupported(String),
    /// The provider refused the account (quota, billing, a rejected key:
    /// [`crate::llm::LlmError::is_fatal_for_campaign`]) while submitting, polling or reading a
    /// batch, or for one of its items: the campaign stops (the error, with the provider's
    /// message). A batch already submitted stays open in the journal for the next run.
    Stopped(String),
}

/// Whether `action` is a Translation call (the only kind batched).
pub fn is_batchable(action: &Action) -> bool {
    matches!(
        action,
        Action::Translate { .. } | Action::TranslatePart { .. }
    )
}

/// Runs one batch step for `actions` (the runnable actions of the current Translate or Revise
/// step): polls the oldest open batch, or, when `submit` and there is none, submits a new one
/// over the untried Translation actions. See the module docs.
///
/// Errors: journal or result-file I/O; a batch request that fails after retries (the batch, if
/// submitted, stays open in the journal for the next run).
#[allow(clippy::too_many_arguments)]
pub async fn step<F: Future<Output = ()> + Unpin>(
    c: &Campaign,
    m: &Manager<'_>,
    provider: &Arc<Provider>,
    store: &mut Store,
    state: &mut State,
    actions: &[Action],
    progress: &mut Progress,
    shutdown: &mut F,
    submit: bool,
) -> anyhow::Result<Outcome> {
    if !provider.supports_batch() {
        return Ok(Outcome::Nothing);
    }
    let by_call: HashMap<String, &Action> = actions
        .iter()
        .filter(|a| is_batchable(a))
        .map(|a| (a.call_key(c), a))
        .collect();
    let mut b = BatchStep {
        c,
        m,
        provider,
        store,
        state,
        progress,
        by_call,
    };
    let (batch, items) = match b.state.open_batches().first() {
        Some((id, items)) => {
            b.progress.println(&format!(
                "polling batch {id} ({} requests) submitted earlier",
                items.len()
            ));
            (id.clone(), items.clone())
        }
        None if submit => match b.submit().await? {
            ControlFlow::Continue(submitted) => submitted,
            ControlFlow::Break(outcome) => return Ok(outcome),
        },
        None => return Ok(Outcome::Nothing),
    };
    let started = Instant::now();
    let (status, files) = match b.poll(&batch, started, shutdown).await? {
        ControlFlow::Continue(ended) => ended,
        ControlFlow::Break(outcome) => return Ok(outcome),
    };
    let results = match provider.batch_results(&files).await {
        Ok(r) => r,
        Err(e) if e.is_fatal_for_campaign() => {
            return Ok(Outcome::Stopped(format!(
                "downloading the results of batch {batch}: {e}"
            )));
        }
        Err(e) => {
            return Err(anyhow::anyhow!(
                "downloading the results of batch {batch}: {e}"
            ));
        }
    };
    b.record(&batch, &status, &items, results, started).await
}

/// One batch step's campaign, provider, journal and the batchable actions by call key.
struct BatchStep<'b, 'm> {
    c: &'b Campaign,
    m: &'b Manager<'m>,
    provider: &'b Arc<Provider>,
    store: &'b mut Store,
    state: &'b mut State,
    progress: &'b mut Progress,
    by_call: HashMap<String, &'b Action>,
}

impl BatchStep<'_, '_> {
    /// Prepares the untried Translation requests, submits them as one batch and journals it
    /// (`batch_submitted`) before the first poll. Breaks with the outcome when there is
    /// nothing to submit, the endpoint has no batch API, or the account is refused.
    async fn submit(&mut self) -> anyhow::Result<ControlFlow<Outcome, (String, Vec<BatchItem>)>> {
        let (c, m) = (self.c, self.m);
        let mut requests = Vec::new();
        let mut items = Vec::new();
        let mut calls: Vec<&String> = self
            .by_call
            .keys()
            .filter(|k| !self.state.batch_tried().contains(*k) && !self.state.is_done(k))
            .collect();
        calls.sort();
        for call in calls {
            // A request over the input budget is left to the normal path, which splits it.
            let Ok(job) = jobs::prepare(m, self.state, self.by_call[call]) else {
                continue;
            };
            let id = custom_id(items.len());
            items.push(BatchItem {
                custom_id: id.clone(),
                call: call.clone(),
                request_sha256: job.request.fingerprint(),
            });
            requests.push((id, job.request));
        }
        if items.is_empty() {
            return Ok(ControlFlow::Break(Outcome::Nothing));
        }
        self.progress.status(format!(
            "submitting a batch of {} translation requests",
            items.len()
        ));
        let submitted = match self.provider.submit_batch(&requests).await {
            Ok(s) => s,
            Err(crate::llm::LlmError::Http {
                status: status @ (404 | 405 | 501),
                url,
                ..
            }) => {
                return Ok(ControlFlow::Break(Outcome::Unsupported(format!(
                    "--batch: {url} answered HTTP {status}: this endpoint has no batch API; calls are streamed"
                ))));
            }
            Err(e) if e.is_fatal_for_campaign() => {
                return Ok(ControlFlow::Break(Outcome::Stopped(format!(
                    "submitting a batch: {e}"
                ))));
            }
            Err(e) => return Err(anyhow::anyhow!("submitting a batch: {e}")),
        };
        crate::campaign::core::commit::record_event(
            c,
            self.store,
            self.state,
            Event::BatchSubmitted {
                batch: submitted.id.clone(),
                input_file: submitted.input_file,
                items: items.clone(),
            },
        )?;
        self.progress.println(&format!(
            "submitted batch {} with {} translation requests; polling every {:.1} s (Ctrl-C stops; a re-run resumes polling)",
            submitted.id,
            items.len(),
            c.plan.provider.batch_poll_ms as f64 / 1000.0
        ));
        Ok(ControlFlow::Continue((submitted.id, items)))
    }

    /// Polls `batch` every `batch_poll_ms` until it ends: its status and result files. Breaks
    /// when `shutdown` fires or the account is refused.
    async fn poll<F: Future<Output = ()> + Unpin>(
        &mut self,
        batch: &str,
        started: Instant,
        shutdown: &mut F,
    ) -> anyhow::Result<ControlFlow<Outcome, (String, Vec<String>)>> {
        let interval = Duration::from_millis(self.c.plan.provider.batch_poll_ms);
        loop {
            let poll = match self.provider.poll_batch(batch).await {
                Ok(p) => p,
                Err(e) if e.is_fatal_for_campaign() => {
                    return Ok(ControlFlow::Break(Outcome::Stopped(format!(
                        "polling batch {batch}: {e}"
                    ))));
                }
                Err(e) => return Err(anyhow::anyhow!("polling batch {batch}: {e}")),
            };
            match poll {
                Poll::Ended { status, files } => return Ok(ControlFlow::Continue((status, files))),
                Poll::Running {
                    status,
                    done,
                    total,
                } => {
                    self.progress.status(format!(
                        "batch {batch}: {status}, {done}/{total} done, {} s",
                        started.elapsed().as_secs()
                    ));
                    tokio::select! {
                        _ = tokio::time::sleep(interval) => {}
                        _ = &mut *shutdown => return Ok(ControlFlow::Break(Outcome::Interrupted)),
                    }
                }
            }
        }
    }

    /// Records every usable answer through [`jobs::finish_noting`] and the commit protocol,
    /// then journals `batch_ended`.
    async fn record(
        &mut self,
        batch: &str,
        status: &str,
        items: &[BatchItem],
        results: Vec<ItemResult>,
        started: Instant,
    ) -> anyhow::Result<Outcome> {
        let (c, m, provider) = (self.c, self.m, self.provider);
        let mut stopped: Option<String> = None;
        let by_id: HashMap<&str, &BatchItem> =
            items.iter().map(|i| (i.custom_id.as_str(), i)).collect();
        let (mut succeeded, mut failed) = (0, 0);
        let mut answered = std::collections::HashSet::new();
        for ItemResult { custom_id, outcome } in results {
            let Some(item) = by_id.get(custom_id.as_str()) else {
                continue;
            };
            answered.insert(item.call.clone());
            let answer = match outcome {
                Ok(a) => a,
                Err(e) => {
                    tracing::info!(call = %item.call, "batch item failed: {e}");
                    // The item's error is text (its code and message): judged by the wordings.
                    if crate::llm::error::account_problem(400, &e.0).is_some() && stopped.is_none()
                    {
                        stopped = Some(format!("batch {batch}, {}: {e}", item.call));
                    }
                    failed += 1;
                    continue;
                }
            };
            if self.state.is_done(&item.call) {
                continue;
            }
            let Some(action) = self.by_call.get(&item.call).copied() else {
                continue;
            };
            let Ok(job) = jobs::prepare(m, self.state, action) else {
                continue;
            };
            if job.request.fingerprint() != item.request_sha256 {
                continue;
            }
            let unit_done = matches!(action, Action::Translate { round: 0, .. });
            let mut notes = Vec::new();
            let finished = jobs::finish_noting(provider, job, answer, started, &mut notes).await;
            let progress = &mut *self.progress;
            crate::campaign::core::commit::record_runaways(
                c,
                self.store,
                self.state,
                &notes,
                &|l: &str| progress.println(l),
            )?;
            match finished {
                Ok(result) => {
                    crate::campaign::core::commit::record_result(
                        c,
                        self.store,
                        self.state,
                        result,
                        |s| m.context(s).tokens(),
                    )?;
                    self.progress.finish(&item.call, unit_done);
                    succeeded += 1;
                }
                Err(f) => {
                    if f.fatal && stopped.is_none() {
                        stopped = Some(f.error.clone());
                    }
                    let run = self.state.run().clone();
                    let progress = &mut *self.progress;
                    crate::campaign::core::commit::record_failure(
                        c,
                        self.store,
                        self.state,
                        action,
                        &item.call,
                        &run,
                        &f,
                        &|l: &str| progress.println(l),
                    )?;
                    failed += 1;
                }
            }
        }
        failed += items.len().saturating_sub(answered.len());
        crate::campaign::core::commit::record_event(
            c,
            self.store,
            self.state,
            Event::BatchEnded {
                batch: batch.to_string(),
                run: self.state.run().clone(),
                status: status.to_string(),
                succeeded,
                failed,
            },
        )?;
        self.progress.println(&format!(
            "batch {batch} {status}: {succeeded} recorded, {failed} without an answer (sent as normal calls)"
        ));
        if let Some(error) = stopped {
            return Ok(Outcome::Stopped(error));
        }
        Ok(Outcome::Recorded)
    }
}
