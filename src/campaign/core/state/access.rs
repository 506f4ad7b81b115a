//! Read access to a [`State`]: one accessor per recorded fact, so that every change goes
//! through [`State::apply`] (and the load path that replays the journal into it). The few
//! changes that are not journal records are named methods with their reason: the write
//! protocol's bookkeeping ([`crate::campaign::core::commit`]), taking the load warnings to print them,
//! and a run's decision to write the outputs again.

use super::*;

impl State {
    /// Id of the current run (failures of earlier runs are retried).
    pub fn run(&self) -> &String {
        &self.run
    }

    /// The editor's marks of findings, newest per id.
    pub fn marks(&self) -> &super::marks::Marks {
        &self.marks
    }

    /// Finished calls by call key.
    pub fn finished(&self) -> &HashMap<String, ResultFile> {
        &self.finished
    }

    /// Result file (relative path) of each finished call.
    pub fn files(&self) -> &HashMap<String, String> {
        &self.files
    }

    /// Calls that failed at some point and have not finished since, with their last error.
    pub fn open_failures(&self) -> &BTreeMap<String, String> {
        &self.open_failures
    }

    /// The newest error of a call that is still failed, as `call: error`: the newest failure
    /// while its call has not finished since, else the newest-keyed open failure; `None` when
    /// every call that failed has finished since (a resume after a quota stop that redid the
    /// stopped calls has no error left to show, and the summary says `complete`).
    pub fn last_error(&self) -> Option<String> {
        let call = self
            .last_failed
            .as_ref()
            .filter(|c| self.open_failures.contains_key(*c))
            .or_else(|| self.open_failures.keys().next_back())?;
        Some(format!("{call}: {}", self.open_failures[call]))
    }

    /// The merged termbase once the Glossary stage is done, with its file (relative to the
    /// state directory).
    pub fn termbase(&self) -> &Option<(String, Termbase)> {
        &self.termbase
    }

    /// `glossary_dropped_by_house` of the state (read-only: it changes through [`State::apply`]).
    pub fn glossary_dropped_by_house(&self) -> usize {
        self.glossary_dropped_by_house
    }

    /// The inputs hash (candidate terms and house style) of the merged termbase.
    pub fn glossary_inputs(&self) -> &Option<String> {
        &self.glossary_inputs
    }

    /// Unit id → its fingerprint under the current glossary termbase (empty until the
    /// Glossary stage has merged a termbase). Everything below is keyed by fingerprint, so a
    /// unit whose source or glossary entries changed starts afresh and an unchanged one keeps
    /// its history, wherever it now sits in the book.
    pub fn fps(&self) -> &HashMap<String, String> {
        &self.fps
    }

    /// Fingerprint → index of the current unit with it.
    pub fn unit_of_fp(&self) -> &HashMap<String, usize> {
        &self.unit_of_fp
    }

    /// Unit fingerprint → the editor's text (newest edit). Wins over every model translation
    /// and is never revised.
    pub fn human_edits(&self) -> &HashMap<String, String> {
        &self.human_edits
    }

    /// Unit fingerprint or part id → byte ranges (within the unit's text) of the parts it was
    /// split into because the model could not translate it in one answer.
    pub fn splits(&self) -> &HashMap<String, Vec<std::ops::Range<usize>>> {
        &self.splits
    }

    /// Part id (`<fp>.p1`, …) → its translation.
    pub fn part_translations(&self) -> &HashMap<String, String> {
        &self.part_translations
    }

    /// The round of the joined pieces of the unit with fingerprint `fp`, when it was split
    /// into smaller pieces because it was stuck ([`super::Event::UnitPieces`]).
    pub fn pieces_round(&self, fp: &str) -> Option<u32> {
        self.pieces.get(fp).copied()
    }

    /// For a unit split into pieces when stuck: `(round, number of pieces, the error findings
    /// that sent it there)` as journaled ([`super::Event::UnitPieces`]).
    pub fn pieces_of(&self, fp: &str) -> Option<(u32, usize, &str)> {
        let round = *self.pieces.get(fp)?;
        let (n, why) = self.pieces_why.get(fp)?;
        Some((round, *n, why.as_str()))
    }

    /// Indices (into [`Campaign::units`], in book order) of the units that need translation,
    /// have a fingerprint and whose first translation (`translate/<fp>/r0`) has not finished:
    /// every other unit is one the first-translation stage has nothing to do for. Empty before
    /// the glossary termbase is merged (no unit has a fingerprint yet).
    pub fn first_pending(&self) -> &std::collections::BTreeSet<usize> {
        &self.first_pending
    }

    /// How many current units (indices into [`Campaign::units`]) that need translation have a
    /// translation of round 1 or later: the units among those of each revised fingerprint
    /// (`c` gives the unit kinds). Walks the revised fingerprints, not the book.
    pub fn revised_unit_count(&self, c: &crate::campaign::core::Campaign) -> usize {
        self.revised_fps
            .iter()
            .filter_map(|fp| self.fp_units.get(fp))
            .flatten()
            .filter(|&&i| c.units[i].kind.needs_translation())
            .count()
    }

    /// Unit fingerprint → round → call key of its translations.
    pub fn translations(&self) -> &HashMap<String, BTreeMap<u32, String>> {
        &self.translations
    }

    /// QA findings of each (unit fingerprint, round) translation.
    pub fn qa(&self) -> &HashMap<(String, u32), Vec<Finding>> {
        &self.qa
    }

    /// Sequence number of this run's `run_started` record (0 before it).
    pub fn run_started_seq(&self) -> u64 {
        self.run_started_seq
    }

    /// Unit fingerprints whose first translation was recorded by this run.
    pub fn translated_this_run(&self) -> &HashSet<String> {
        &self.translated_this_run
    }

    /// Entries chosen by terminology reconciliation (origin `reconciled`), newest per term.
    /// They join the glossary termbase in revision prompts and QA, never in unit fingerprints,
    /// and never override house style.
    pub fn reconciled(&self) -> &Vec<crate::termbase::Entry> {
        &self.reconciled
    }

    /// The QA context (languages, termbase, review marker) once the termbase is known.
    pub fn qa_ctx(&self) -> &Option<qa::QaContext> {
        &self.qa_ctx
    }

    /// The book brief in force: the Brief agent's, or the editor's version.
    pub fn brief(&self) -> &Option<BriefText> {
        &self.brief
    }

    /// sha256 of the brief last put on the editor's desk (written there, or found edited).
    pub fn brief_on_desk(&self) -> &Option<String> {
        &self.brief_on_desk
    }

    /// sha256 of the newest merged termbase file (what the Glossary stage proposed).
    pub fn merged_sha256(&self) -> &Option<String> {
        &self.merged_sha256
    }

    /// The merged termbase sha256 the glossary review files on the desk show, and the review
    /// CSV (path relative to the campaign file, sha256 as written).
    pub fn glossary_review_of(&self) -> &Option<String> {
        &self.glossary_review_of
    }

    /// `glossary_review_csv` of the state (read-only: it changes through [`State::apply`]).
    pub fn glossary_review_csv(&self) -> &Option<(String, String)> {
        &self.glossary_review_csv
    }

    /// The newest glossary approval.
    pub fn glossary_approval(&self) -> &Option<GlossaryApproval> {
        &self.glossary_approval
    }

    /// Decision call key → the editor's approval of its revision proposal.
    pub fn revision_approvals(&self) -> &HashMap<String, RevisionApproval> {
        &self.revision_approvals
    }

    /// True when outputs were written after the last recorded result.
    pub fn outputs_current(&self) -> bool {
        self.outputs_current
    }

    /// (relative path, sha256) of the chapters written last.
    pub fn outputs(&self) -> &Vec<(String, String)> {
        &self.outputs
    }

    /// `usage` of the state (read-only: it changes through [`State::apply`]).
    pub fn usage(&self) -> &BTreeMap<Agent, AgentUsage> {
        &self.usage
    }

    /// `recent` of the state (read-only: it changes through [`State::apply`]).
    pub fn recent(&self) -> &VecDeque<LogLine> {
        &self.recent
    }

    /// Largest Manager context measured, in tokens.
    pub fn ctx_peak(&self) -> usize {
        self.ctx_peak
    }

    /// `runs` of the state (read-only: it changes through [`State::apply`]).
    pub fn runs(&self) -> u32 {
        self.runs
    }

    /// Warnings from loading (torn journal line, adopted or damaged result files).
    pub fn warnings(&self) -> &Vec<String> {
        &self.warnings
    }

    /// Batches submitted and not yet ended, by batch id, in submission order (`run --batch`).
    pub fn open_batches(&self) -> &Vec<(String, Vec<store::BatchItem>)> {
        &self.open_batches
    }

    /// Calls that were in a batch ended by this run: they are not batched again now, but sent
    /// as normal calls if still pending.
    pub fn batch_tried(&self) -> &HashSet<String> {
        &self.batch_tried
    }

    /// Unit fingerprints whose newest human edit was imported from a file (XLIFF) rather than
    /// made by hand in an output chapter (see [`CandidateOrigin::Imported`]).
    pub fn imported_edits(&self) -> &HashSet<String> {
        &self.imported_edits
    }

    /// The journaled figure of `agent`'s reply lengths, which its requests are bounded by
    /// (see [`crate::agents::bounds::Figure`]); `None` until one is learned.
    pub fn figure(&self, agent: Agent) -> Option<&crate::agents::bounds::Figure> {
        self.figures.get(&agent)
    }

    /// The figure the samples recorded so far give for `agent` (journaled by
    /// [`super::super::commit::record_result`] when it differs from [`State::figure`]).
    pub fn learned_figure(&self, agent: Agent) -> Option<crate::agents::bounds::Figure> {
        crate::agents::bounds::learn(self.samples.get(&agent).map_or(&[][..], |v| &v[..]))
    }

    /// Answers paid for and not kept (failed calls, rejected replies of split units), in
    /// journal order. Runaway replies are listed apart ([`State::runaways`]); their tokens are
    /// part of the usage of the call they ended.
    pub fn not_kept(&self) -> &[NotKept] {
        &self.not_kept
    }

    /// Every journaled figure, by agent.
    pub fn figures(&self) -> &BTreeMap<Agent, crate::agents::bounds::Figure> {
        &self.figures
    }

    /// Runaway replies stopped by the stream reader, in journal order (all runs).
    pub fn runaways(&self) -> &Vec<RunawayRecord> {
        &self.runaways
    }

    /// Why the newest run stopped early (an account problem: quota, billing, key), if it did.
    pub fn stopped(&self) -> &Option<String> {
        &self.stopped
    }

    /// Agent entries the newest glossary merge left out because they failed a deterministic
    /// check (see [`crate::termbase::vet`]), in termbase order.
    pub fn glossary_rejections(&self) -> &Vec<crate::termbase::vet::Rejection> {
        &self.glossary_rejections
    }

    /// Call key → id of the run whose `call_failed` record is the call's newest failure, and
    /// whether that failure was an unusable answer, for the calls of [`State::open_failures`].
    pub fn failure_runs(&self) -> &HashMap<String, (String, bool)> {
        &self.failure_runs
    }

    /// Takes the warnings from loading (to print them once); afterwards there are none.
    pub fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }

    /// Marks the outputs as not current, so that the Manager writes them again: a session's
    /// decision, not a recorded fact (`run --force`, or an output chapter deleted since it was
    /// written). The next load derives `outputs_current` from the journal again.
    pub(crate) fn require_outputs_rewrite(&mut self) {
        self.outputs_current = false;
    }
}
