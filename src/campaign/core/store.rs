//! The state directory of one campaign configuration, `<state_dir>/<config key>/`:
//!
//! ```text
//! config.json          the configuration this state belongs to (written once)
//! manifests/<fp>.json  each version of the book seen (campaign fingerprint), written once
//! journal.jsonl        append-only history: one JSON record per line
//! lock                 advisory lock held by the running process (contains its pid)
//! results/<agent>/…    one JSON file per finished call, written atomically
//! ```
//!
//! Every finished call is written as a result file (temp file, fsync, rename, directory fsync)
//! and *then* recorded by a journal line carrying the file's sha256. A crash between the two
//! leaves a result file without its line, which [`super::state`] adopts after checking its
//! hash. A crash during a journal append leaves a torn last line, which is ignored with a
//! warning. Nothing in here holds a secret or an absolute path.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::{Deserialize, Serialize};

use super::Campaign;
use super::fingerprint::{ConfigPrint, STATE_SCHEMA_VERSION};
use crate::agents::Agent;
use crate::agents::glossary::Candidate;
use crate::agents::json::ParseStats;
use crate::agents::manager::Decision;
use crate::agents::proofreading::ProofReport;
use crate::agents::translation::Cleanup;
use crate::exit::UsageError;
use crate::llm::Usage;
use crate::termbase::Entry;

/// One journal line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// 1-based position in the journal.
    pub seq: u64,
    /// Unix time in milliseconds.
    pub at_ms: u64,
    #[serde(flatten)]
    pub event: Event,
}

/// What happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    RunStarted {
        run: String,
        pid: u32,
        provider: String,
        model: String,
        /// The campaign fingerprint (version of the book) this run works on.
        #[serde(default)]
        fingerprint: String,
    },
    CallStarted {
        call: String,
        agent: Agent,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        unit: Option<String>,
    },
    CallFinished {
        call: String,
        agent: Agent,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        unit: Option<String>,
        /// Result file, relative to the state directory.
        file: String,
        /// sha256 of the result file's bytes.
        sha256: String,
        usage: Usage,
        /// HTTP requests made (including schema repairs).
        requests: u32,
        /// Manager context size in tokens right after this result was recorded.
        ctx_tokens: usize,
        /// True when the result file was found without its journal line and adopted.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        adopted: bool,
    },
    CallFailed {
        call: String,
        agent: Agent,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        unit: Option<String>,
        run: String,
        error: String,
        attempts: u32,
        /// Tokens paid for answers that were rejected (a truncated or empty translation).
        #[serde(default)]
        usage: Usage,
        /// The model answered and the answer was not usable as a translation (see
        /// [`crate::campaign::core::commit::JobFailure::unusable`]); absent (false) in older journals.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        unusable: bool,
    },
    GlossaryMerged {
        file: String,
        sha256: String,
        entries: usize,
        dropped_by_house: usize,
        /// sha256 over the candidate terms and house-style entries it was merged from.
        #[serde(default)]
        inputs: String,
        /// Agent entries that failed a deterministic check ([`crate::termbase::vet`]) and were
        /// left out of the termbase (dropped, or shown for review at the glossary gate).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        rejected: Vec<crate::termbase::vet::Rejection>,
    },
    /// A unit (or part) the model could not translate in one answer was cut in two at a block
    /// boundary; `parts` are byte ranges within the unit's text. Joining them is lossless.
    UnitSplit {
        /// The unit's id (for people).
        unit: String,
        /// What was split: the unit's fingerprint, or a part id (`<fp>.p1`) when a part was
        /// split again.
        key: String,
        parts: Vec<(usize, usize)>,
        reason: String,
        /// Tokens paid for the rejected answer(s).
        #[serde(default)]
        usage: Usage,
        #[serde(default)]
        requests: u32,
    },
    /// `run --force`: recorded human edits of these units no longer apply (they stay in the
    /// history above).
    HumanEditsDiscarded {
        /// Fingerprints of the units whose edits no longer apply.
        fps: Vec<String>,
    },
    /// An editor changed a unit's text in an output chapter (found by `run` or `validate`).
    HumanEdit {
        unit: String,
        /// The unit's fingerprint: the edit applies to that exact source text.
        fp: String,
        file: String,
        sha256: String,
        /// True when the edit came from an imported file (`booktr import` of an XLIFF) rather
        /// than from a hand edit of an output chapter. Absent (false) in older journals.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        imported: bool,
        /// True when booktr carried an editor's blocks into a new version of the unit (its
        /// source changed elsewhere, or an edited block's source changed: see
        /// [`super::blocks`]) rather than an editor writing this text. Absent (false) in
        /// older journals.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        carried: bool,
    },
    /// Block records ([`super::blocks`]): every unit's final text paired block by block with
    /// its source, or the blocks of an existing human translation the campaign was seeded
    /// from (`seed`: the file). `file` (relative to the state directory) holds a
    /// [`super::blocks::BlocksFile`].
    BlocksRecorded {
        file: String,
        sha256: String,
        /// Units recorded in the file.
        units: usize,
        /// The seed file, for seeded blocks.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        seed: Option<String>,
    },
    /// A unit whose source is new took the blocks its block memory holds ([`super::blocks`]):
    /// `found` blocks from memory (`human`, `seeded`, `model` of them by origin) and `sent`
    /// blocks to the model; `stale` lists the editor's blocks whose source changed.
    BlocksReused {
        unit: String,
        fp: String,
        human: usize,
        seeded: usize,
        model: usize,
        sent: usize,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        stale: Vec<super::blocks::Stale>,
    },
    /// An editor decided the stale edits of a unit ([`super::blocks::Stale`]): keep the
    /// editor's text (`keep = "editor"`) or take the model's translation of the new source
    /// (`"model"`).
    StaleEditResolved {
        unit: String,
        fp: String,
        keep: StaleChoice,
    },
    OutputsWritten {
        files: Vec<(String, String)>,
    },
    /// The book brief in force was written to the editor's desk (`<report_dir>/brief.md`,
    /// `file` relative to the campaign file) with this sha256.
    BriefWritten {
        file: String,
        sha256: String,
    },
    /// An editor's version of the brief replaced the agent's (found by `run`, or taken by
    /// `approve --stage glossary`); `file` is its copy in the state directory.
    BriefEdited {
        file: String,
        sha256: String,
    },
    /// The review files of the glossary gate were written to the editor's desk.
    GlossaryReviewWritten {
        /// The review CSV, relative to the campaign file.
        csv: String,
        /// sha256 of the CSV as written.
        csv_sha256: String,
        /// sha256 of the merged termbase file it shows.
        merged_sha256: String,
    },
    /// `booktr approve --stage glossary`: the editor approved the termbase in the review CSV.
    GlossaryApproved {
        /// sha256 of the merged termbase file the review was made from.
        merged_sha256: String,
        /// sha256 of the review CSV as approved (a later edit is refused).
        csv_sha256: String,
        /// The approved termbase (JSON, relative to the state directory) and its sha256.
        file: String,
        sha256: String,
        /// sha256 of the brief as approved (`brief.md` on the desk).
        brief_sha256: String,
        /// What the editor changed against the proposal, one line each.
        changes: Vec<String>,
    },
    /// `booktr approve --stage revisions`: which proposed units go back for revision.
    RevisionsApproved {
        round: u32,
        /// Call key of the decision approved.
        decision: String,
        approved: Vec<String>,
        rejected: Vec<String>,
        /// `--chapter`: the chapter keys this approval decided; the proposal's units in other
        /// chapters still wait at the gate. Empty (and absent in older journals) when it
        /// decided every unit still waiting. Several approvals of one decision add up.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        chapters: Vec<String>,
    },
    RunFinished {
        run: String,
        status: String,
    },
    RunInterrupted {
        run: String,
    },
    /// Single-agent mode (`run --mode single-agent`): the conversation no longer fits the input
    /// budget, so the run stopped before unit `index` (1-based, among the units to translate).
    /// A recorded outcome of the baseline, not an API error.
    ContextExhausted {
        run: String,
        /// The unit id that did not fit.
        unit: String,
        /// 1-based position of that unit among the units to translate.
        index: usize,
        /// Prompt tokens (`o200k_base`) the conversation would have needed; 0 when the provider
        /// refused the request as too long (see `reason`).
        tokens: usize,
        /// `max_context_tokens` at the time.
        budget: usize,
        reason: String,
    },
    /// A raw request or response of the experiment's judge, saved as a receipt file (relative
    /// to the state directory) with the sha256 of its bytes.
    Receipt {
        call: String,
        /// `judge` or `repair`, then `request` or `response`, e.g. `repair.response`.
        kind: String,
        file: String,
        sha256: String,
    },
    /// `run --batch`: requests submitted to the provider's batch API, recorded before the
    /// batch is polled so that a restart polls it instead of submitting again.
    BatchSubmitted {
        /// The provider's batch id.
        batch: String,
        /// The uploaded input file (OpenAI-compatible batch APIs).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        input_file: Option<String>,
        items: Vec<BatchItem>,
    },
    /// A submitted batch finished and its results were recorded (as `call_finished` records
    /// before this one). Items without a result are sent as normal calls by this run.
    BatchEnded {
        batch: String,
        run: String,
        /// The provider's final status (`completed`, `expired`, `ended`, …).
        status: String,
        /// Items recorded from the batch.
        succeeded: usize,
        /// Items that came back without a usable answer.
        failed: usize,
    },
    /// The stream reader stopped a reply that repeated itself or outgrew its `max_tokens`
    /// ([`crate::llm::runaway`]). Not kept as an answer, unless `kept`: what came before the
    /// repetition covered every block of the unit. Its `usage` (tokens billed until the
    /// stream was dropped) is already part of the call's usage in the `call_finished`,
    /// `call_failed` or `unit_split` record that follows, so it is counted there, not again.
    RunawayReply {
        call: String,
        agent: Agent,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        unit: Option<String>,
        /// Why it was stopped.
        reason: String,
        usage: Usage,
        /// The temperature the reply was sampled at (`None`: the provider's default).
        #[serde(default)]
        temperature: Option<f64>,
        /// The temperature of the one retry made, if one was (`None`: not retried, the unit
        /// was split or the call failed, or what came before the repetition was kept).
        #[serde(default)]
        retry_temperature: Option<f64>,
        /// What came before the repetition covered every block of the unit and is the
        /// call's answer (see the jobs' `whole_before_repetition`; absent: not kept).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        kept: bool,
    },
    /// The run stopped scheduling calls after a provider error no other call can get past
    /// (quota, billing, a rejected key: [`crate::llm::LlmError::is_fatal_for_campaign`]).
    /// Finished work is kept; the next `booktr run` resumes.
    RunStopped {
        run: String,
        /// The error, with the provider's message (never the key).
        error: String,
    },
    /// Smaller when stuck: a unit whose kept translation still had structural
    /// error findings after its revision rounds ([`crate::campaign::core::pieces::is_stuck_finding`]) is translated again as smaller
    /// pieces (`parts`, byte ranges within the unit's text, consecutive top-level blocks; see
    /// [`crate::campaign::core::pieces`]). The pieces are translated as parts `<fp>.pieces.p1`, …
    /// and joined into the unit's translation at `round`, a candidate of its own. Recorded
    /// once per unit fingerprint: a resume never splits it again.
    UnitPieces {
        /// The unit's id (for people).
        unit: String,
        /// The unit's fingerprint.
        fp: String,
        /// The round the joined pieces are recorded at (after the last revision round).
        round: u32,
        parts: Vec<(usize, usize)>,
        /// The findings that made the unit stuck (check: message), for people.
        reason: String,
    },
    /// An editor confirmed or dismissed a QA finding on the final texts (`booktr qa
    /// confirm|dismiss`, or an edited `findings-review.csv`; see [`super::marks`]). The newest
    /// record of an id is its mark; it holds while the unit's final text has `text_sha256`
    /// and the finding's id is still found.
    FindingMarked {
        /// The finding's id ([`crate::qa::findings::editor_marks::finding_id`]).
        id: String,
        /// `confirmed` or `dismissed`; absent when the editor removed the mark.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mark: Option<crate::qa::findings::editor_marks::Mark>,
        #[serde(default, skip_serializing_if = "String::is_empty")]
        note: String,
        unit: String,
        chapter: String,
        check: String,
        /// sha256 of the unit's final text when marked (empty for a chapter-level finding).
        text_sha256: String,
        /// `cli` or `csv`.
        via: String,
        /// sha256 of the review CSV the mark was read from (`via` `csv`).
        #[serde(default, skip_serializing_if = "String::is_empty")]
        csv_sha256: String,
    },
    /// What the campaign has learned of its model's reply lengths for `agent` (see
    /// [`crate::agents::bounds::Figure`]): journaled when it changes, so that every later
    /// request, in this run or a resumed one, is bounded by the same figure.
    OutputBound {
        agent: Agent,
        /// The campaign's target language (the figure holds for it only).
        target_lang: String,
        figure: crate::agents::bounds::Figure,
    },
    /// The budget cap: the run stopped sending requests because the next one would
    /// have taken the campaign's spending over `[pricing] max_cost` (or `run --max-cost`).
    /// The calls in flight finished and were recorded before this line; the next `booktr run`
    /// with a higher cap resumes (see the budget gate, `ops/budget.rs`).
    BudgetReached {
        run: String,
        stop: BudgetStop,
    },
}

/// One request of a submitted batch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BatchItem {
    /// The id the request carries in the batch (`req-<n>`).
    pub custom_id: String,
    /// The call key its answer is recorded under.
    pub call: String,
    /// sha256 of the request's messages and schema (see [`crate::llm::Request::fingerprint`]):
    /// an answer is recorded only for the same request.
    pub request_sha256: String,
}

/// What a finished call produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Output {
    Translation {
        round: u32,
        text: String,
        cleanup: Cleanup,
        /// Characters of reasoning the model produced (the text itself is not kept).
        reasoning_chars: usize,
        /// For a unit that was split: the call keys of its parts, joined in order.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        joined_from: Vec<String>,
    },
    GlossaryBatch {
        asked: Vec<Candidate>,
        entries: Vec<Entry>,
        stats: ParseStats,
    },
    Proofread {
        round: u32,
        units: Vec<String>,
        report: ProofReport,
        stats: ParseStats,
    },
    Decision {
        round: u32,
        forced: Vec<String>,
        candidates: Vec<String>,
        decision: Decision,
        stats: ParseStats,
    },
    /// Terminology reconciliation of one drifting term.
    Reconciliation {
        round: u32,
        term: String,
        /// The competing renderings offered, with unit counts.
        renderings: Vec<crate::agents::reconcile::Rendering>,
        /// The rendering chosen (`None` when the answer held no usable choice, or it was
        /// rejected).
        choice: Option<crate::agents::reconcile::Choice>,
        stats: ParseStats,
        /// The answer rejected by [`crate::agents::reconcile::verify`] (a rendering never
        /// observed, such as `ok`): it entered no termbase and sent no revision.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rejected: Option<crate::agents::reconcile::Rejected>,
    },
    /// The book brief (Markdown).
    Brief { text: String },
    /// A blinded pairwise judgment of one unit (`booktr experiment`), as opaque JSON whose
    /// fields follow `"kind": "judgment"` in the order written ([`super::judgment`]).
    Judgment(Box<super::judgment::JudgmentRecord>),
}

/// A result file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultFile {
    pub schema_version: u32,
    pub call: String,
    pub agent: Agent,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    /// sha256 of the request's messages and schema.
    pub request_sha256: String,
    pub usage: Usage,
    pub attempts: u32,
    pub requests: u32,
    pub model: Option<String>,
    pub finish_reason: Option<String>,
    pub elapsed_ms: u64,
    pub output: Output,
    /// sha256 of the JSON of `output`; checked when a file is adopted.
    pub output_sha256: String,
    /// Where the output came from when no model produced it (a translation memory); absent
    /// for model calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<ResultOrigin>,
    /// The reply reached `max_tokens` and was continued: how many continuation requests it
    /// took and what they cost (part of `usage`). Absent for a reply that fit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub long: Option<crate::llm::continuation::LongStats>,
    /// The accepted reply as a sample for learning the model's bounds: its own completion
    /// tokens (not a runaway it replaced, nor a schema repair) against its basis in
    /// `o200k_base` tokens (a translation's source; a structured answer's own text). Absent
    /// for a reply that was cut, a local result, or an older result file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample: Option<crate::agents::bounds::Sample>,
    /// A cut reply whose part that ends on a block boundary was kept as the translation of
    /// the unit's first `kept_blocks` top-level blocks (the provider could not continue it);
    /// the rest of the unit became a part of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kept_blocks: Option<usize>,
}

/// The source of a result that no model call produced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ResultOrigin {
    /// An exact match in a translation memory (TMX): no request, zero usage.
    Memory {
        /// The memory file, as named in the campaign file or on the command line.
        file: String,
        /// The `tuid` of the matching translation unit.
        tuid: String,
    },
    /// Blocks from block memory ([`super::blocks`]): no request, zero usage.
    Blocks {
        /// Blocks from an editor's earlier text.
        human: usize,
        /// Blocks from a seed (an existing human translation).
        seeded: usize,
        /// Blocks from a model's earlier translation.
        model: usize,
    },
}

impl ResultFile {
    /// A first translation (round 0) that no model produced: `output` for `unit` under the
    /// call key `call`, with no request, usage or attempts. `origin` says where it came from
    /// (`None` for halves joined back into their unit).
    pub fn local(
        call: String,
        unit: &str,
        output: Output,
        origin: Option<ResultOrigin>,
    ) -> ResultFile {
        ResultFile {
            schema_version: super::fingerprint::STATE_SCHEMA_VERSION,
            call,
            agent: crate::agents::Agent::Translation,
            unit: Some(unit.to_string()),
            request_sha256: String::new(),
            usage: Default::default(),
            attempts: 0,
            requests: 0,
            model: None,
            finish_reason: None,
            elapsed_ms: 0,
            output_sha256: ResultFile::output_hash(&output),
            output,
            origin,
            long: None,
            sample: None,
            kept_blocks: None,
        }
    }

    pub fn output_hash(output: &Output) -> String {
        crate::util::sha256_hex(serde_json::to_vec(output).expect("output serialises"))
    }

    /// Whether `output_sha256` matches `output`.
    pub fn is_intact(&self) -> bool {
        self.output_sha256 == Self::output_hash(&self.output)
    }
}

/// An editor's choice on a stale edit ([`Event::StaleEditResolved`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StaleChoice {
    /// Keep the editor's text for the new source.
    Editor,
    /// Take the model's translation of the new source.
    Model,
}

/// The text of a human edit, stored in `results/human/<unit>.<seq>.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HumanEditFile {
    pub schema_version: u32,
    pub unit: String,
    pub text: String,
}

/// The result file path (relative to the state directory) for a call key such as
/// `translate/chapter01-003/r0` → `results/translate/chapter01-003.r0.json`.
pub fn result_rel_path(call: &str) -> String {
    let (kind, rest) = call.split_once('/').unwrap_or(("misc", call));
    let safe: String = rest
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_') {
                c
            } else {
                '.'
            }
        })
        .collect();
    format!("results/{kind}/{}.json", safe.trim_start_matches('.'))
}

/// A reply cut at `max_tokens`, saved before a continuation request is sent for it
/// (`partials/<call>.<n>.json`, `n` = continuations made before it). A resume that finds one
/// for the same request continues from it instead of asking again: what was paid for is never
/// asked for twice. Its usage enters the journal with the call's result (the reply's usage
/// includes it), so it is counted once. Reasoning text is not kept (as in result files).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PartialReply {
    pub schema_version: u32,
    pub call: String,
    /// sha256 of the request's messages and schema ([`crate::llm::Request::fingerprint`]): a
    /// partial is used only for the same request.
    pub request_sha256: String,
    pub answer: crate::llm::Answer,
    /// Continuations made so far and their cost (part of `answer.usage`).
    pub long: crate::llm::continuation::LongStats,
}

/// The path (relative to the state directory) of the partial reply of `call` after `n`
/// continuations.
pub fn partial_rel_path(call: &str, n: u32) -> String {
    let safe = result_rel_path(call)
        .trim_start_matches("results/")
        .trim_end_matches(".json")
        .replace('/', ".");
    format!("partials/{safe}.{n}.json")
}

/// Saves `p` atomically under `dir` (the state directory). Earlier partials of the call are
/// left as they are: each file is what was received at that point.
///
/// Errors: I/O while writing.
pub fn write_partial(dir: &Path, p: &PartialReply) -> anyhow::Result<()> {
    let mut keep = p.clone();
    keep.answer.reasoning.clear();
    let mut bytes = serde_json::to_vec_pretty(&keep)?;
    bytes.push(b'\n');
    crate::util::write_atomic(
        &dir.join(partial_rel_path(&p.call, p.long.continuations)),
        &bytes,
    )
}

/// The newest partial reply of `call` saved under `dir` for a request with fingerprint
/// `request_sha256` (see [`PartialReply`]); `None` when there is none (or none readable).
pub fn read_partial(dir: &Path, call: &str, request_sha256: &str) -> Option<PartialReply> {
    (0..=crate::llm::continuation::MAX_CONTINUATIONS)
        .rev()
        .filter_map(|n| std::fs::read(dir.join(partial_rel_path(call, n))).ok())
        .filter_map(|b| serde_json::from_slice::<PartialReply>(&b).ok())
        .find(|p| p.call == call && p.request_sha256 == request_sha256)
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// An open state directory.
pub struct Store {
    pub dir: PathBuf,
    journal: Option<File>,
    next_seq: u64,
    _lock: Option<File>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("dir", &self.dir).finish()
    }
}

/// Configuration directories under `state_dir` other than `current`, newest first.
fn other_states(state_dir: &Path, current: &str) -> Vec<PathBuf> {
    let mut v: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(state_dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.is_dir()
                && p.join("config.json").exists()
                && p.file_name().is_some_and(|n| n != current)
        })
        .map(|p| {
            (
                std::fs::metadata(p.join("config.json"))
                    .and_then(|m| m.modified())
                    .unwrap_or(std::time::UNIX_EPOCH),
                p,
            )
        })
        .collect();
    v.sort_by_key(|e| std::cmp::Reverse(e.0));
    v.into_iter().map(|(_, p)| p).collect()
}

/// How to treat the state of other configurations when opening a campaign's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Existing {
    /// Refuse when another configuration has state and this one has none.
    #[default]
    Refuse,
    /// `--fresh`: move every existing state (this configuration's too) to `superseded/`.
    MoveAside,
    /// `--retranslate`: start this configuration's state beside the others (for comparison).
    KeepBeside,
}

/// Whether the state at `dir` is a rehearsal's: its configuration names the offline `pseudo`
/// provider (an unreadable configuration is not taken for one).
fn is_rehearsal_state(dir: &Path) -> bool {
    std::fs::read(dir.join("config.json"))
        .ok()
        .and_then(|b| serde_json::from_slice::<ConfigPrint>(&b).ok())
        .is_some_and(|m| m.provider == "pseudo")
}

impl Store {
    /// Opens (or creates) the state directory of `c`'s configuration and takes its lock.
    ///
    /// Source or glossary changes are not a reason to refuse: translations are stored by unit
    /// fingerprint, so unchanged units are reused. A state for a *different configuration*
    /// (provider, model, prompt version, languages, guide, review marker) is refused with a
    /// [`UsageError`] that lists what changed, unless `existing` says to move it aside
    /// (`--fresh`: never deleted, it holds paid work) or to keep it beside (`--retranslate`).
    /// A rehearsal's state (pseudo provider) is no reason to refuse a real provider's run: it
    /// is kept beside, as with `--retranslate`.
    ///
    /// Errors: refused state, lock held by another process (naming its pid), I/O.
    pub fn open_for_run(c: &Campaign, existing: Existing) -> anyhow::Result<Store> {
        let state_dir = &c.plan.state_dir;
        let dir = c.state_path();
        let key = c.config.key();
        let others = other_states(state_dir, &key);
        match existing {
            Existing::MoveAside => {
                let mut to_move = others;
                if dir.exists() {
                    to_move.push(dir.clone());
                }
                for old in to_move {
                    // A state another process is running is never moved from under it: its
                    // lock is taken first (and released once the state is aside).
                    let _held = Store::lock(&old)?;
                    let name = old
                        .file_name()
                        .unwrap_or_default()
                        .to_string_lossy()
                        .into_owned();
                    let superseded = state_dir.join("superseded");
                    let dest = superseded.join(format!("{name}-{}", now_ms()));
                    std::fs::create_dir_all(&superseded)?;
                    std::fs::rename(&old, &dest)
                        .with_context(|| format!("moving old state {} aside", old.display()))?;
                    tracing::info!("--fresh: moved old state to {}", c.plan.show(&dest));
                }
            }
            Existing::Refuse if !dir.exists() => {
                // A rehearsal's state (the offline pseudo provider) holds no paid work and no
                // translation: the first real run starts beside it instead of refusing.
                let (rehearsals, others): (Vec<PathBuf>, Vec<PathBuf>) =
                    others.into_iter().partition(|old| is_rehearsal_state(old));
                if !rehearsals.is_empty() && others.is_empty() && c.config.provider != "pseudo" {
                    tracing::info!(
                        "the rehearsal's state is kept beside ({}); this configuration starts its own",
                        c.plan.show(&rehearsals[0])
                    );
                }
                if let Some(old) = others.first().or(if c.config.provider == "pseudo" {
                    rehearsals.first()
                } else {
                    None
                }) {
                    let changes = std::fs::read(old.join("config.json"))
                        .ok()
                        .and_then(|b| serde_json::from_slice::<ConfigPrint>(&b).ok())
                        .map(|m| c.config.diff(&m))
                        .unwrap_or_else(|| {
                            vec!["the previous state's configuration is unreadable".into()]
                        });
                    return Err(UsageError::new(format!(
                        "campaign {file} has saved state for a different configuration ({old}):\n  - {changes}\nTranslations from another configuration are not mixed in.\nRun `booktr run {file} --fresh` to start over (the old state is kept under {sd}/superseded/), or `--retranslate` to translate again beside the old state.",
                        file = c.plan.campaign_file.display(),
                        old = c.plan.show(old),
                        changes = changes.join("\n  - "),
                        sd = c.plan.show(state_dir),
                    ))
                    .into());
                }
            }
            Existing::Refuse | Existing::KeepBeside => {}
        }
        std::fs::create_dir_all(dir.join("results"))
            .with_context(|| format!("creating state directory {}", dir.display()))?;
        let lock = Self::lock(&dir)?;
        let config_path = dir.join("config.json");
        if !config_path.exists() {
            crate::util::write_json_atomic(&config_path, &c.config)?;
        }
        // One manifest per version of the book seen, kept for evidence (never rewritten).
        let manifest_path = dir
            .join("manifests")
            .join(format!("{}.json", c.fingerprint));
        if !manifest_path.exists() {
            crate::util::write_json_atomic(&manifest_path, &c.manifest)?;
        }
        let mut store = Store::open_dir(&dir)?;
        store._lock = Some(lock);
        let mut journal = OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join("journal.jsonl"))
            .with_context(|| format!("opening journal in {}", dir.display()))?;
        // A torn last line (killed mid-append) stays in the file as history, but must not be
        // glued to the next record: end it with a newline first.
        if let Ok(bytes) = std::fs::read(dir.join("journal.jsonl"))
            && bytes.last().is_some_and(|&b| b != b'\n')
        {
            journal
                .write_all(b"\n")
                .context("terminating a torn journal line")?;
        }
        store.journal = Some(journal);
        Ok(store)
    }

    /// Opens an existing state directory read-only (for `status` and reports): no lock, no
    /// journal writes.
    pub fn open_dir(dir: &Path) -> anyhow::Result<Store> {
        let next_seq = read_journal(dir)?.0.last().map_or(1, |r| r.seq + 1);
        Ok(Store {
            dir: dir.to_path_buf(),
            journal: None,
            next_seq,
            _lock: None,
        })
    }

    fn lock(dir: &Path) -> anyhow::Result<File> {
        let path = dir.join("lock");
        let mut f = OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(&path)?;
        match f.try_lock() {
            Ok(()) => {
                f.set_len(0)?;
                writeln!(f, "{}", std::process::id())?;
                f.sync_all()?;
                Ok(f)
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                let holder = std::fs::read_to_string(&path).unwrap_or_default();
                Err(UsageError::new(format!(
                    "another booktr process (pid {}) is running this campaign (lock {}). Wait for it to finish or stop it, then run again.",
                    holder.trim(),
                    path.display()
                ))
                .into())
            }
            Err(std::fs::TryLockError::Error(e)) => {
                Err(e).with_context(|| format!("locking {}", path.display()))
            }
        }
    }

    /// Appends one event to the journal (one line, flushed and `sync_data`ed) and returns the
    /// record written.
    pub fn append(&mut self, event: Event) -> anyhow::Result<Record> {
        let rec = Record {
            seq: self.next_seq,
            at_ms: now_ms(),
            event,
        };
        let journal = self
            .journal
            .as_mut()
            .context("the state is open read-only")?;
        let mut line = serde_json::to_vec(&rec)?;
        line.push(b'\n');
        journal
            .write_all(&line)
            .context("appending to the journal")?;
        journal.sync_data().context("syncing the journal")?;
        self.next_seq += 1;
        Ok(rec)
    }

    /// The sequence number the next appended record will get.
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// Writes a result file atomically; returns its relative path and the sha256 of its bytes.
    pub fn write_result(&self, result: &ResultFile) -> anyhow::Result<(String, String)> {
        let rel = result_rel_path(&result.call);
        let mut bytes = serde_json::to_vec_pretty(result)?;
        bytes.push(b'\n');
        crate::util::write_atomic(&self.dir.join(&rel), &bytes)?;
        Ok((rel, crate::util::sha256_hex(&bytes)))
    }

    /// Records a human edit of `unit` (a hand edit of an output chapter): writes its text and
    /// appends the journal line.
    pub fn record_human_edit(
        &mut self,
        unit: &str,
        fp: &str,
        text: &str,
    ) -> anyhow::Result<Record> {
        self.record_edit(unit, fp, text, false)
    }

    /// Records an edit of `unit` imported from a file (`booktr import` of an XLIFF): like
    /// [`Store::record_human_edit`], with `imported: true` on the journal line.
    pub fn record_imported_edit(
        &mut self,
        unit: &str,
        fp: &str,
        text: &str,
    ) -> anyhow::Result<Record> {
        self.record_edit(unit, fp, text, true)
    }

    /// Records the text booktr carried an editor's blocks into for `unit` (see
    /// [`Event::HumanEdit`]'s `carried`).
    pub fn record_carried_edit(
        &mut self,
        unit: &str,
        fp: &str,
        text: &str,
    ) -> anyhow::Result<Record> {
        self.write_edit(unit, fp, text, false, true)
    }

    /// Writes a file of block records (`results/blocks/<seq>.json`) and journals it.
    pub fn record_blocks(&mut self, file: &super::blocks::BlocksFile) -> anyhow::Result<Record> {
        let rel = format!("results/blocks/{}.json", self.next_seq);
        let mut bytes = serde_json::to_vec(file)?;
        bytes.push(b'\n');
        let sha256 = self.write_file(&rel, &bytes)?;
        self.append(Event::BlocksRecorded {
            file: rel,
            sha256,
            units: file.units.len(),
            seed: file.seed.clone(),
        })
    }

    fn record_edit(
        &mut self,
        unit: &str,
        fp: &str,
        text: &str,
        imported: bool,
    ) -> anyhow::Result<Record> {
        self.write_edit(unit, fp, text, imported, false)
    }

    fn write_edit(
        &mut self,
        unit: &str,
        fp: &str,
        text: &str,
        imported: bool,
        carried: bool,
    ) -> anyhow::Result<Record> {
        let rel = format!("results/human/{}.{}.json", fp, self.next_seq);
        let file = HumanEditFile {
            schema_version: STATE_SCHEMA_VERSION,
            unit: unit.to_string(),
            text: text.to_string(),
        };
        let mut bytes = serde_json::to_vec_pretty(&file)?;
        bytes.push(b'\n');
        let sha256 = self.write_file(&rel, &bytes)?;
        self.append(Event::HumanEdit {
            unit: unit.to_string(),
            fp: fp.to_string(),
            file: rel,
            sha256,
            imported,
            carried,
        })
    }

    /// Writes any other file of the state directory atomically; returns its sha256.
    pub fn write_file(&self, rel: &str, bytes: &[u8]) -> anyhow::Result<String> {
        crate::util::write_atomic(&self.dir.join(rel), bytes)?;
        Ok(crate::util::sha256_hex(bytes))
    }

    /// Reads a result file and checks its bytes against `sha256` when given.
    pub fn read_result(&self, rel: &str, sha256: Option<&str>) -> anyhow::Result<ResultFile> {
        read_result(&self.dir, rel, sha256)
    }
}

/// See [`Store::read_result`].
pub fn read_result(dir: &Path, rel: &str, sha256: Option<&str>) -> anyhow::Result<ResultFile> {
    let bytes = std::fs::read(dir.join(rel)).with_context(|| format!("reading result {rel}"))?;
    if let Some(want) = sha256 {
        let got = crate::util::sha256_hex(&bytes);
        anyhow::ensure!(
            got == want,
            "result {rel} has sha256 {got}, the journal recorded {want}"
        );
    }
    let r: ResultFile =
        serde_json::from_slice(&bytes).with_context(|| format!("parsing result {rel}"))?;
    anyhow::ensure!(
        r.schema_version == STATE_SCHEMA_VERSION,
        "result {rel} has schema {}",
        r.schema_version
    );
    Ok(r)
}

/// Reads the journal of `dir`: the records, and warnings (a torn last line is skipped; a bad
/// line in the middle is skipped and reported too).
pub fn read_journal(dir: &Path) -> anyhow::Result<(Vec<Record>, Vec<String>)> {
    let path = dir.join("journal.jsonl");
    let text = match std::fs::read(&path) {
        Ok(b) => String::from_utf8_lossy(&b).into_owned(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((Vec::new(), Vec::new())),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let mut records = Vec::new();
    let mut warnings = Vec::new();
    let lines: Vec<&str> = text.split('\n').collect();
    let n = lines.len();
    for (i, line) in lines.into_iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Record>(line) {
            Ok(r) => records.push(r),
            Err(e) => {
                let last = i + 1 == n || (i + 2 == n && text.ends_with('\n'));
                warnings.push(if last {
                    format!("journal line {} is torn (the process was killed while writing it); ignored", i + 1)
                } else {
                    format!("journal line {} is unreadable ({e}); ignored", i + 1)
                });
            }
        }
    }
    Ok((records, warnings))
}

/// Why and where a run stopped at its budget cap: journaled as
/// [`Event::BudgetReached`], shown in the summary (`budget`) and the reports.
/// Amounts are in `currency`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BudgetStop {
    /// The cap in force for that run.
    pub cap: f64,
    /// Cost of the usage recorded when the run stopped (every run, in-flight calls included
    /// once they finished).
    pub spent: f64,
    /// The call not sent (its call key, or `batch of N translation requests`).
    pub next_call: String,
    /// Its estimate.
    pub next_estimate: f64,
    /// Estimates of the requests that were in flight when it was held back.
    pub in_flight_estimate: f64,
    /// What the plan's estimator says a resume still has to send (revisions not included).
    pub remaining_estimate: Option<f64>,
    pub currency: String,
}

/// Factor on the remaining estimate in [`BudgetStop::suggested_cap`]: 2×, about the spread
/// between `plan`'s low and high ends (every revision round used) on the sample book and
/// corpus chapters 1–2 (`tests/it/budget.rs`).
pub const RESUME_MARGIN: f64 = 2.0;

impl BudgetStop {
    /// A cap that covers the rest with a margin: spent + [`RESUME_MARGIN`] × the remaining
    /// estimate (at least the next request's), rounded up to the cent. The plan's estimate
    /// leaves out revisions and runs short on long answers, so a cap of spent + remaining
    /// alone stopped the resumed run again (found trying the suggested command as a new user).
    pub fn suggested_cap(&self) -> f64 {
        let rest = self
            .remaining_estimate
            .unwrap_or(0.0)
            .max(self.next_estimate);
        ((self.spent + RESUME_MARGIN * rest) * 100.0).ceil() / 100.0
    }

    /// The command that resumes with the suggested cap.
    pub fn resume_command(&self, c: &Campaign) -> String {
        format!(
            "booktr run {} --max-cost {:.2}",
            c.plan.campaign_file.display(),
            self.suggested_cap()
        )
    }

    /// The message for stderr and the reports: spent, cap, the call held back, what remains,
    /// and how to resume.
    pub fn message(&self, c: &Campaign) -> String {
        let cur = &self.currency;
        let remaining = match self.remaining_estimate {
            Some(r) => format!(
                "; about {r:.4} {cur} of calls remain by the plan's estimate (revisions not included)"
            ),
            None => String::new(),
        };
        format!(
            "budget reached: spent {:.4} {cur} of max_cost {:.4} {cur}; the next call ({}, estimated {:.4} {cur}, with {:.4} {cur} estimated for the calls then in flight, since finished and recorded) would have exceeded it, so it was not sent{remaining}. Finished work is saved and not paid again: resume with a higher cap, e.g. `{}`",
            self.spent,
            self.cap,
            self.next_call,
            self.next_estimate,
            self.in_flight_estimate,
            self.resume_command(c)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revisions_approved_of_an_older_journal_loads_without_chapters() {
        let old = r#"{"event":"revisions_approved","round":0,"decision":"decide/r0/ab","approved":["a-001"],"rejected":[]}"#;
        let e: Event = serde_json::from_str(old).unwrap();
        assert_eq!(
            e,
            Event::RevisionsApproved {
                round: 0,
                decision: "decide/r0/ab".into(),
                approved: vec!["a-001".into()],
                rejected: Vec::new(),
                chapters: Vec::new(),
            }
        );
        // And an approval of all units is written as before (no `chapters` key).
        assert_eq!(serde_json::to_string(&e).unwrap(), old);
    }

    #[test]
    fn result_paths_are_safe() {
        assert_eq!(
            result_rel_path("translate/ch01-003/r0"),
            "results/translate/ch01-003.r0.json"
        );
        assert_eq!(
            result_rel_path("proofread/r0/ch01/b00"),
            "results/proofread/r0.ch01.b00.json"
        );
        assert!(!result_rel_path("translate/../../etc/r0").contains(".."));
    }

    #[test]
    fn results_with_floats_stay_intact_after_a_round_trip() {
        // serde_json's default float parsing is not exact; results carry C-value scores, and a
        // result that does not check out is requested again (paid twice). float_roundtrip is on.
        let asked: Vec<Candidate> = (1..200)
            .map(|i| Candidate {
                term: format!("t{i}"),
                freq: i,
                score: (i as f64).ln() * 97.123_456_789 / 3.0,
                snippet: String::new(),
            })
            .collect();
        let output = Output::GlossaryBatch {
            asked,
            entries: vec![],
            stats: ParseStats::default(),
        };
        let r = ResultFile {
            schema_version: STATE_SCHEMA_VERSION,
            call: "glossary/x".into(),
            agent: Agent::Glossary,
            unit: None,
            request_sha256: String::new(),
            usage: Usage::default(),
            attempts: 1,
            requests: 1,
            model: None,
            finish_reason: None,
            elapsed_ms: 0,
            output_sha256: ResultFile::output_hash(&output),
            output,
            origin: None,
            long: None,
            sample: None,
            kept_blocks: None,
        };
        let back: ResultFile =
            serde_json::from_slice(&serde_json::to_vec_pretty(&r).unwrap()).unwrap();
        assert!(back.is_intact());
    }

    #[test]
    fn torn_last_line_is_ignored_with_warning() {
        let dir = tempfile::tempdir().unwrap();
        let rec = Record {
            seq: 1,
            at_ms: 5,
            event: Event::RunInterrupted { run: "r".into() },
        };
        let mut text = serde_json::to_string(&rec).unwrap();
        text.push('\n');
        text.push_str("{\"seq\":2,\"at_ms\":6,\"event\":\"run_fin");
        std::fs::write(dir.path().join("journal.jsonl"), text).unwrap();
        let (recs, warns) = read_journal(dir.path()).unwrap();
        assert_eq!(recs, vec![rec]);
        assert_eq!(warns.len(), 1);
        assert!(warns[0].contains("torn"));
    }
}
