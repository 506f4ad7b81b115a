//! Table tests of the Manager alone: an in-memory [`Campaign`] (no chapter, glossary or guide
//! file), a journal built record by record with answers made up here (no provider, no prompt
//! sniffing), and after each record the expected stage and actions of [`Manager::step`].
//! Every row is checked twice: on the live state the records were applied to, and on a state
//! loaded back from the state directory by a fresh Manager (resume), which must give the same
//! step.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::agents::json::ParseStats;
use crate::agents::manager::{Decision, RevisionOrder};
use crate::agents::proofreading::ProofReport;
use crate::campaign::core::Campaign;
use crate::campaign::core::commit;
use crate::campaign::core::manager::{Action, Gate, Manager, Stage, Step};
use crate::campaign::core::state::State;
use crate::campaign::core::store::{Event, Existing, Output, ResultFile, Store};
use crate::campaign::core::summary::{self, Status};
use crate::campaign::ops::jobs::{self, JobKind};
use crate::config::{Overrides, Plan, RawCampaign};

/// A directory under the system temp dir, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "booktr-manager-{tag}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const CH1: &str = "# Agents and tools\n\nAn agent reads the plan, keeps the context window small and makes a tool call when the language model asks for one.\n\nEvery tool call returns a result; the agent adds it to the context window before the next tool call.\n\nThe language model sees the context window only, never the whole tool call log.\n";
const CH2: &str = "# Memory\n\nThe memory store keeps the facts of a session outside the context window, so a tool call can read them later.\n\nA language model with a memory store answers long sessions without a larger context window.\n";

/// A made-up Chinese translation of `source`, block by block: headings keep their level, and
/// each paragraph becomes Chinese text of about a third of its length (what QA expects of a
/// translation into Chinese), ending as the source ends.
fn good_translation(source: &str) -> String {
    let mut out = Vec::new();
    for block in source.split("\n\n") {
        let t = block.trim();
        if t.is_empty() {
            continue;
        }
        if let Some(rest) = t.strip_prefix('#') {
            let level = 1 + rest.chars().take_while(|c| *c == '#').count();
            out.push(format!("{} 智能体与工具", "#".repeat(level)));
        } else {
            let n = (t.chars().count() / 3).max(4);
            let mut p: String = "智能体读取计划并调用工具，把结果写入上下文窗口"
                .chars()
                .cycle()
                .take(n)
                .collect();
            p.push('。');
            out.push(p);
        }
    }
    let mut text = out.join("\n\n");
    let trailing = &source[source.trim_end().len()..];
    text.push_str(trailing);
    text
}

/// An in-memory campaign over [`CH1`] and [`CH2`] with `extra` campaign keys; its state, desk
/// and output folders live under `dir`.
fn campaign(dir: &Path, extra: &str) -> Campaign {
    // Every unit is reviewed unless `extra` sets its own share.
    let share = if extra.contains("proofread_share") {
        ""
    } else {
        "proofread_share = 1.0\n"
    };
    // The stage tables walk the book brief too, which is off by default.
    let brief = if extra.contains("brief") {
        ""
    } else {
        "brief = true\n"
    };
    let toml_text = format!(
        "name = \"demo\"\nsource_lang = \"en\"\ntarget_lang = \"zh\"\nchapters = [\"book/ch1.md\", \"book/ch2.md\"]\n{share}{brief}max_unit_chars = 200\n{extra}"
    );
    let raw: RawCampaign = toml::from_str(&toml_text).unwrap();
    let plan = Plan::resolve(&dir.join("demo.toml"), raw, &Overrides::default()).unwrap();
    Campaign::in_memory(
        plan,
        vec![
            ("book/ch1.md".into(), CH1.into()),
            ("book/ch2.md".into(), CH2.into()),
        ],
    )
    .unwrap()
}

/// How the made-up answers go.
#[derive(Default, Clone)]
struct Answers {
    /// Units (ids) whose first translation leaves a sentence in English (a QA error; not an
    /// echo of the whole source, which is not revised but sent to pieces).
    untranslated: Vec<String>,
    /// Units the reviewer flags (and the decision then chooses).
    flagged: Vec<String>,
    /// Units whose first translation coins a rendering of "context window", flagged with the
    /// review marker: (unit id, rendering).
    coined: Vec<(String, String)>,
    /// Units whose every whole-unit translation (any round) merges its paragraphs into one
    /// (a structure error); their parts are translated faithfully.
    merged: Vec<String>,
    /// Terms the Glossary agent proposes: (source, target).
    terms: Vec<(String, String)>,
    /// Issues the reviewer reports: (unit, type, detail).
    issues: Vec<(String, String, String)>,
}

/// A journal being written, with the state it built.
struct Journal<'c> {
    c: &'c Campaign,
    store: Store,
    state: State,
    run: String,
    answers: Answers,
}

impl<'c> Journal<'c> {
    /// Opens the state directory and records the start of run `run`.
    fn start(c: &'c Campaign, run: &str, answers: Answers) -> Journal<'c> {
        let store = Store::open_for_run(c, Existing::Refuse).unwrap();
        let state = State::load(c, &store.dir, run).unwrap();
        let mut j = Journal {
            c,
            store,
            state,
            run: run.to_string(),
            answers,
        };
        j.record_run_started();
        j
    }

    fn record_run_started(&mut self) {
        let rec = self
            .store
            .append(Event::RunStarted {
                run: self.run.clone(),
                pid: 1,
                provider: "pseudo".into(),
                model: "pseudo".into(),
                fingerprint: self.c.fingerprint.clone(),
            })
            .unwrap();
        self.state
            .apply(self.c, &self.store.dir, &rec, None)
            .unwrap();
    }

    /// A new run `run` of the same campaign: the state is loaded back from the journal.
    fn new_run(&mut self, run: &str) {
        self.run = run.to_string();
        self.state = State::load(self.c, &self.store.dir, run).unwrap();
        self.record_run_started();
    }

    /// The step now, checked to be the same for a state loaded back from disk by a fresh
    /// Manager (a resumed run with the same id).
    fn step(&self, m: &Manager) -> Step {
        let live = m.step(&self.state, &self.run, &BTreeSet::new());
        let loaded = State::load(self.c, &self.store.dir, &self.run).unwrap();
        let fresh = Manager::new(self.c, &loaded);
        let resumed = fresh.step(&loaded, &self.run, &BTreeSet::new());
        assert_eq!(live.stage, resumed.stage, "resumed stage differs");
        assert_eq!(live.actions, resumed.actions, "resumed actions differ");
        for (m, s) in [(m, &self.state), (&fresh, &loaded)] {
            assert_eq!(
                m.next_stage(s),
                live.stage,
                "next_stage is next_step's stage"
            );
            // The runner's bounded listing is a prefix of the whole one, with nothing in
            // flight and with the first action in flight.
            let mut flights = vec![BTreeSet::new()];
            if let Some(a) = live.actions.first() {
                flights.push(BTreeSet::from([a.call_key(self.c)]));
            }
            for flying in &flights {
                let all = m.step(s, &self.run, flying);
                for limit in [1, 2, 5] {
                    let some = m.next_actions(s, flying, limit);
                    assert_eq!(some.stage, all.stage, "next_actions({limit}) stage");
                    assert_eq!(
                        some.actions[..],
                        all.actions[..all.actions.len().min(limit)],
                        "next_actions({limit}) is a prefix of next_step's actions"
                    );
                }
            }
            let p = m.context(s).progress;
            assert_eq!(
                (p.translated, p.revised, p.pending.clone(), p.pending_more),
                walked_progress(self.c, s),
                "the Manager context's counts are the book walked unit by unit"
            );
        }
        live
    }

    /// Performs `a`: a local action as the runner does it, a model call with a made-up
    /// answer recorded as the runner records it.
    fn perform(&mut self, m: &Manager, a: &Action) {
        let c = self.c;
        let (store, state) = (&mut self.store, &mut self.state);
        match a {
            Action::MergeGlossary => commit::merge_glossary(c, m, store, state).unwrap(),
            Action::WriteDesk => crate::campaign::ops::desk::write(c, store, state).unwrap(),
            Action::DecideForced { round, key } => {
                commit::decide_forced(c, m, store, state, *round, key).unwrap()
            }
            Action::JoinParts { unit } => {
                commit::join_parts(c, m, store, state, *unit).unwrap();
                crate::campaign::core::reuse::carry_edits(c, store, state, *unit).unwrap();
            }
            Action::ReuseBlocks { unit, fp } => {
                crate::campaign::core::reuse::reuse_blocks(c, m, store, state, *unit, fp).unwrap();
            }
            Action::SplitStuck {
                unit,
                fp,
                round,
                parts,
                reason,
            } => {
                let rec = store
                    .append(Event::UnitPieces {
                        unit: c.units[*unit].id.clone(),
                        fp: fp.clone(),
                        round: *round,
                        parts: parts.iter().map(|r| (r.start, r.end)).collect(),
                        reason: reason.clone(),
                    })
                    .unwrap();
                state.apply(c, &store.dir, &rec, None).unwrap();
            }
            Action::JoinPieces { unit, fp, round } => {
                commit::join_pieces(c, m, store, state, *unit, fp, *round).unwrap()
            }
            Action::WriteOutputs => {
                let written = crate::campaign::ops::outputs::write_all(c, state).unwrap();
                let rec = store
                    .append(Event::OutputsWritten {
                        files: written.files,
                    })
                    .unwrap();
                state.apply(c, &store.dir, &rec, None).unwrap();
            }
            _ => {
                let job = jobs::prepare(m, state, a).unwrap();
                let output = self.answers.output(c, a, &job.kind);
                let result = ResultFile {
                    schema_version: crate::campaign::core::fingerprint::STATE_SCHEMA_VERSION,
                    call: job.call.clone(),
                    agent: job.agent,
                    unit: job.unit.clone(),
                    request_sha256: "0".repeat(64),
                    usage: crate::llm::Usage {
                        prompt_tokens: 100,
                        completion_tokens: 20,
                        ..Default::default()
                    },
                    attempts: 1,
                    requests: 1,
                    model: Some("table".into()),
                    finish_reason: Some("stop".into()),
                    elapsed_ms: 1,
                    output_sha256: ResultFile::output_hash(&output),
                    output,
                    origin: None,
                    long: None,
                    sample: None,
                    kept_blocks: None,
                };
                commit::record_finished(c, m, store, state, result).unwrap();
            }
        }
    }

    /// Performs every action of `step`.
    fn perform_all(&mut self, m: &Manager, step: &Step) {
        for a in &step.actions {
            self.perform(m, a);
        }
    }

    /// Records that model call `a` failed in the current run.
    fn fail(&mut self, a: &Action) {
        let rec = self
            .store
            .append(Event::CallFailed {
                call: a.call_key(self.c),
                agent: a.agent().unwrap(),
                unit: None,
                run: self.run.clone(),
                error: "HTTP 500 from the table".into(),
                attempts: 3,
                usage: Default::default(),
                unusable: false,
            })
            .unwrap();
        self.state
            .apply(self.c, &self.store.dir, &rec, None)
            .unwrap();
    }
}

impl Answers {
    fn output(&self, c: &Campaign, a: &Action, kind: &JobKind) -> Output {
        let stats = ParseStats::default();
        match kind {
            JobKind::Glossary { asked } => Output::GlossaryBatch {
                asked: asked.clone(),
                entries: self
                    .terms
                    .iter()
                    .map(|(source, target)| crate::termbase::Entry {
                        source: source.clone(),
                        target: target.clone(),
                        note: String::new(),
                        origin: crate::termbase::Origin::Agent,
                        forbidden: Vec::new(),
                        variants: Vec::new(),
                    })
                    .collect(),
                stats,
            },
            JobKind::Brief => Output::Brief {
                text: "Audience: engineers. Register: plain.\n".into(),
            },
            JobKind::Translation { round, .. } => {
                let (unit, range) = match a {
                    Action::Translate { unit, .. } => (*unit, None),
                    Action::TranslatePart { unit, range, .. } => (*unit, Some(range.clone())),
                    _ => unreachable!(),
                };
                let u = &c.units[unit];
                let source = c.source_text(u);
                let text = match range {
                    Some(r) => good_translation(&source[r]),
                    None if *round == 0 && self.untranslated.contains(&u.id) => format!(
                        "{} The model forgot to translate this closing sentence.",
                        good_translation(source).trim_end()
                    ),
                    None if self.merged.contains(&u.id) => {
                        good_translation(source).replace("\n\n", "")
                    }
                    None => {
                        let mut t = good_translation(source);
                        if *round == 0
                            && let Some((_, r)) = self.coined.iter().find(|(id, _)| *id == u.id)
                        {
                            let at = t.rfind('。').unwrap();
                            t.insert_str(at, &format!("，{r}（context window）[待审]"));
                        }
                        t
                    }
                };
                Output::Translation {
                    round: *round,
                    text,
                    cleanup: Default::default(),
                    reasoning_chars: 0,
                    joined_from: Vec::new(),
                }
            }
            JobKind::Proofread { round, units } => Output::Proofread {
                round: *round,
                units: units.clone(),
                report: ProofReport {
                    issues: self
                        .issues
                        .iter()
                        .filter(|(u, _, _)| units.contains(u))
                        .map(|(unit, kind, detail)| crate::agents::proofreading::Issue {
                            unit: unit.clone(),
                            kind: kind.clone(),
                            detail: detail.clone(),
                        })
                        .collect(),
                    units_need_revision: units
                        .iter()
                        .filter(|u| self.flagged.contains(u))
                        .cloned()
                        .collect(),
                    summary: "read".into(),
                },
                stats,
            },
            JobKind::Decide {
                round,
                forced,
                candidates,
            } => Output::Decision {
                round: *round,
                forced: forced.clone(),
                candidates: candidates.clone(),
                decision: Decision {
                    revise: candidates
                        .iter()
                        .map(|u| RevisionOrder {
                            unit: u.clone(),
                            reason: "flagged by the reviewer".into(),
                        })
                        .collect(),
                    summary: "decided".into(),
                },
                stats,
            },
            JobKind::Reconcile {
                round,
                term,
                renderings,
            } => Output::Reconciliation {
                round: *round,
                term: term.clone(),
                renderings: renderings.clone(),
                choice: None,
                stats,
                rejected: None,
            },
        }
    }
}

/// The shape of an action, for table rows: its kind and, for translations, the unit id and
/// round.
fn shape(c: &Campaign, a: &Action) -> String {
    match a {
        Action::GlossaryBatch { .. } => "glossary".into(),
        Action::MergeGlossary => "merge".into(),
        Action::Brief { .. } => "brief".into(),
        Action::WriteDesk => "desk".into(),
        Action::Translate { unit, round, .. } => {
            format!("translate {} r{round}", c.units[*unit].id)
        }
        Action::TranslatePart { part, .. } => format!("part {}", &part[part.len() - 3..]),
        Action::JoinParts { unit } => format!("join {}", c.units[*unit].id),
        Action::ReuseBlocks { unit, .. } => format!("reuse {}", c.units[*unit].id),
        Action::Proofread { round, chapter, .. } => format!("proofread r{round} {chapter}"),
        Action::Reconcile { round, .. } => format!("reconcile r{round}"),
        Action::Decide { round, .. } => format!("decide r{round}"),
        Action::DecideForced { round, .. } => format!("decide forced r{round}"),
        Action::WriteOutputs => "outputs".into(),
        Action::SplitStuck {
            unit, round, parts, ..
        } => format!("pieces {} r{round} in {}", c.units[*unit].id, parts.len()),
        Action::JoinPieces { unit, round, .. } => {
            format!("join pieces {} r{round}", c.units[*unit].id)
        }
    }
}

fn shapes(c: &Campaign, step: &Step) -> Vec<String> {
    step.actions.iter().map(|a| shape(c, a)).collect()
}

/// One table row: the stage expected now and the actions (by [`shape`]).
type Row<'a> = (Stage, &'a [&'a str]);

/// Plays the campaign to its end, performing every step's actions, and checks each step
/// against `table` (and its replay from the loaded state). Returns the journal.
/// The Manager context's progress counts as the definition gives them, by walking every prose
/// unit (what `Manager::context` did before it read the state's indexes):
/// (translated, revised, the first 5 pending ids, how many more are pending).
fn walked_progress(c: &Campaign, s: &State) -> (usize, usize, Vec<String>, usize) {
    let mut translated = 0;
    let mut revised = 0;
    let mut pending = Vec::new();
    for u in c.prose_units() {
        if s.translation_at(&u.id, 0).is_some() {
            translated += 1;
        } else {
            pending.push(u.id.clone());
        }
        if s.fp(&u.id)
            .and_then(|fp| s.translations().get(fp))
            .is_some_and(|rounds| rounds.keys().any(|&r| r > 0))
        {
            revised += 1;
        }
    }
    let more = pending.len().saturating_sub(5);
    pending.truncate(5);
    (translated, revised, pending, more)
}

fn play<'c>(j: &mut Journal<'c>, m: &Manager, table: &[Row]) {
    for (i, (stage, actions)) in table.iter().enumerate() {
        let step = j.step(m);
        assert_eq!(&step.stage, stage, "row {i}: stage");
        assert_eq!(shapes(j.c, &step), *actions, "row {i}: actions");
        j.perform_all(m, &step);
    }
}

const ALL_FIRST: &[&str] = &[
    "translate ch1-000 r0",
    "translate ch1-001 r0",
    "translate ch2-000 r0",
    "translate ch2-001 r0",
];

/// The steps up to the first translations, with the brief (the tables' campaign asks for it).
const TO_FIRST_TRANSLATIONS: &[Row<'static>] = &[
    (Stage::Glossary, &["glossary", "brief"]),
    (Stage::Glossary, &["merge"]),
    (Stage::Glossary, &["desk"]),
    (Stage::Translate, ALL_FIRST),
];

/// Quality benchmark finding 10: with no reviewer flag beyond the units QA errors already
/// send back, the Manager was asked anyway, and the 0.5B answered with the schema's
/// placeholders (0.13x the single pass's tokens for nothing). The decision is now recorded
/// locally: the Manager's, with no request and no usage, and the round goes on.
#[test]
fn the_manager_was_asked_to_decide_with_nothing_to_decide() {
    let dir = TempDir::new("forced-decision");
    let c = campaign(&dir.0, "");
    let mut j = Journal::start(&c, "run-1", Answers::default());
    let m = Manager::new(&c, &j.state);
    play(
        &mut j,
        &m,
        &[
            (Stage::Glossary, &["glossary", "brief"]),
            (Stage::Glossary, &["merge"]),
            (Stage::Glossary, &["desk"]),
            (Stage::Translate, ALL_FIRST),
            (
                Stage::Proofread(0),
                &["proofread r0 ch1", "proofread r0 ch2"],
            ),
        ],
    );
    assert_eq!(
        m.decision_candidates(&j.state, 0, &m.forced(&j.state, 0)),
        Vec::<String>::new()
    );
    play(&mut j, &m, &[(Stage::Decide(0), &["decide forced r0"])]);
    let key = m.decide_key(&j.state, 0);
    let r = &j.state.finished()[&key];
    assert_eq!((r.agent, r.requests), (crate::agents::Agent::Manager, 0));
    assert_eq!(r.usage, crate::llm::Usage::default());
    let Output::Decision {
        forced,
        candidates,
        decision,
        ..
    } = &r.output
    else {
        panic!("not a decision: {:?}", r.output)
    };
    assert!(forced.is_empty() && candidates.is_empty() && decision.revise.is_empty());
    assert!(
        decision
            .summary
            .starts_with("Nothing to decide: the reviewer flagged no unit"),
        "{}",
        decision.summary
    );
    assert!(
        !j.state.usage().contains_key(&crate::agents::Agent::Manager),
        "no Manager call is counted"
    );
    play(
        &mut j,
        &m,
        &[(Stage::Write, &["outputs"]), (Stage::Complete, &[])],
    );
}

#[test]
fn journal_to_stage_table_without_gates_runs_to_complete() {
    let dir = TempDir::new("plain");
    let c = campaign(&dir.0, "");
    let mut j = Journal::start(&c, "run-1", Answers::default());
    let m = Manager::new(&c, &j.state);
    assert_eq!(
        c.prose_units().map(|u| u.id.as_str()).collect::<Vec<_>>(),
        ["ch1-000", "ch1-001", "ch2-000", "ch2-001"]
    );
    let terms: Vec<&str> = c.candidates().iter().map(|c| c.term.as_str()).collect();
    assert_eq!(terms, ["context window", "tool call", "language model"]);
    assert_eq!(m.glossary_batches.len(), 1);
    play(
        &mut j,
        &m,
        &[
            (Stage::Glossary, &["glossary", "brief"]),
            (Stage::Glossary, &["merge"]),
            (Stage::Glossary, &["desk"]),
            (Stage::Translate, ALL_FIRST),
            (
                Stage::Proofread(0),
                &["proofread r0 ch1", "proofread r0 ch2"],
            ),
            (Stage::Decide(0), &["decide forced r0"]),
            (Stage::Write, &["outputs"]),
            (Stage::Complete, &[]),
        ],
    );
    assert_eq!(
        Status::of_stage(&j.step(&m).stage).as_str(),
        "complete",
        "a finished campaign without errors"
    );
    // A new run over the finished journal has nothing to do.
    j.new_run("run-2");
    let m2 = Manager::new(&c, &j.state);
    assert_eq!(j.step(&m2).stage, Stage::Complete);
    assert!(j.step(&m2).actions.is_empty());
}

#[test]
fn journal_to_stage_table_without_agent_glossary_and_brief_sends_neither() {
    let dir = TempDir::new("no-glossary-no-brief");
    let c = campaign(&dir.0, "agent_glossary = false\nbrief = false\n");
    assert!(!c.plan.agent_glossary && !c.plan.brief);
    let mut j = Journal::start(&c, "run-1", Answers::default());
    let m = Manager::new(&c, &j.state);
    // The book still has its term candidates; none is sent to the Glossary agent.
    assert_eq!(c.candidates().len(), 3);
    assert!(m.glossary_batches.is_empty());
    play(
        &mut j,
        &m,
        &[
            // Only the local merge of the house style; no brief, so nothing for the desk.
            (Stage::Glossary, &["merge"]),
            (Stage::Translate, ALL_FIRST),
            (
                Stage::Proofread(0),
                &["proofread r0 ch1", "proofread r0 ch2"],
            ),
            (Stage::Decide(0), &["decide forced r0"]),
            (Stage::Write, &["outputs"]),
            (Stage::Complete, &[]),
        ],
    );
    assert!(j.state.brief().is_none());
}

#[test]
fn journal_to_stage_table_glossary_gate_waits_for_approval() {
    let dir = TempDir::new("gate-glossary");
    let c = campaign(&dir.0, "review = [\"glossary\"]\n");
    let mut j = Journal::start(&c, "run-1", Answers::default());
    let m = Manager::new(&c, &j.state);
    play(
        &mut j,
        &m,
        &[
            (Stage::Glossary, &["glossary", "brief"]),
            (Stage::Glossary, &["merge"]),
            (Stage::Glossary, &["desk"]),
            (Stage::AwaitingApproval(Gate::Glossary), &[]),
        ],
    );
    assert_eq!(
        Status::of_stage(&j.step(&m).stage).as_str(),
        "awaiting_approval"
    );
    // Still waiting in a new run: the gate is a recorded fact, not a session one.
    j.new_run("run-2");
    let m = Manager::new(&c, &j.state);
    assert_eq!(j.step(&m).stage, Stage::AwaitingApproval(Gate::Glossary));
    crate::campaign::ops::desk::approve_glossary(&c, &mut j.store, &mut j.state).unwrap();
    play(
        &mut j,
        &m,
        &[
            (Stage::Translate, ALL_FIRST),
            (
                Stage::Proofread(0),
                &["proofread r0 ch1", "proofread r0 ch2"],
            ),
            (Stage::Decide(0), &["decide forced r0"]),
            (Stage::Write, &["outputs"]),
            (Stage::Complete, &[]),
        ],
    );
}

#[test]
fn journal_to_stage_table_qa_errors_and_flags_go_to_a_revision_round() {
    let dir = TempDir::new("revise");
    let c = campaign(&dir.0, "revision_rounds = 2\n");
    let answers = Answers {
        untranslated: vec!["ch1-001".into()],
        flagged: vec!["ch2-001".into()],
        ..Default::default()
    };
    let mut j = Journal::start(&c, "run-1", answers);
    let m = Manager::new(&c, &j.state);
    play(
        &mut j,
        &m,
        &[
            (Stage::Glossary, &["glossary", "brief"]),
            (Stage::Glossary, &["merge"]),
            (Stage::Glossary, &["desk"]),
            (Stage::Translate, ALL_FIRST),
            (
                Stage::Proofread(0),
                &["proofread r0 ch1", "proofread r0 ch2"],
            ),
        ],
    );
    // The untranslated unit has a deterministic QA error: forced, whatever the decision says.
    assert_eq!(m.forced(&j.state, 0), ["ch1-001"]);
    play(
        &mut j,
        &m,
        &[
            (Stage::Decide(0), &["decide r0"]),
            (
                Stage::Revise(1),
                &["translate ch1-001 r1", "translate ch2-001 r1"],
            ),
            // Round 1 (< revision_rounds) reviews the revised units only.
            (
                Stage::Proofread(1),
                &["proofread r1 ch1", "proofread r1 ch2"],
            ),
            (Stage::Decide(1), &["decide r1"]),
            (Stage::Revise(2), &["translate ch2-001 r2"]),
            (Stage::Write, &["outputs"]),
            (Stage::Complete, &[]),
        ],
    );
    assert_eq!(
        m.revision_set(&j.state, 0)
            .into_iter()
            .map(|(u, _)| u)
            .collect::<Vec<_>>(),
        ["ch1-001", "ch2-001"]
    );
    assert!(m.forced(&j.state, 1).is_empty(), "the revision fixed it");
}

/// Regression (a new user's PO import): after a run whose round 0 forced a revision, an
/// imported edit of that unit took it out of the forced set, which changed the decision's key:
/// `status` said `incomplete` at "decide revisions (round 0)" and the next run made one more
/// Manager call, though every unit was reused. The decision stands; only the outputs are
/// written again.
#[test]
fn a_po_import_reopened_the_decision_of_round_0() {
    let dir = TempDir::new("import-after-run");
    let c = campaign(&dir.0, "");
    let answers = Answers {
        untranslated: vec!["ch1-001".into()],
        ..Default::default()
    };
    let mut j = Journal::start(&c, "run-1", answers);
    let m = Manager::new(&c, &j.state);
    play(
        &mut j,
        &m,
        &[
            (Stage::Glossary, &["glossary", "brief"]),
            (Stage::Glossary, &["merge"]),
            (Stage::Glossary, &["desk"]),
            (Stage::Translate, ALL_FIRST),
            (
                Stage::Proofread(0),
                &["proofread r0 ch1", "proofread r0 ch2"],
            ),
            (Stage::Decide(0), &["decide forced r0"]),
            (Stage::Revise(1), &["translate ch1-001 r1"]),
            (Stage::Write, &["outputs"]),
            (Stage::Complete, &[]),
        ],
    );
    let decided = m.decide_key(&j.state, 0);
    // The import: an editor's text for the unit the round forced (and another one).
    for (unit, text) in [
        ("ch1-001", "智能体编辑过的译文。\n"),
        ("ch2-000", "# 记忆\n"),
    ] {
        let fp = j.state.fp(unit).unwrap().to_string();
        crate::campaign::core::commit::record_edit(
            &c,
            &mut j.store,
            &mut j.state,
            unit,
            &fp,
            text,
            true,
        )
        .unwrap();
    }
    // A new process (import, status, run) builds its Manager from the state on disk.
    let m = Manager::new(&c, &j.state);
    assert!(
        !m.forced(&j.state, 0).contains(&"ch1-001".to_string()),
        "an edited unit is never forced"
    );
    assert_eq!(
        m.decide_key(&j.state, 0),
        decided,
        "the recorded decision stands"
    );
    play(
        &mut j,
        &m,
        &[(Stage::Write, &["outputs"]), (Stage::Complete, &[])],
    );
    let status = Status::of_stage(&m.next_step(&j.state, &BTreeSet::new()).stage);
    assert_eq!(status, Status::Complete);
}

#[test]
fn journal_to_stage_table_revisions_gate_waits_then_revises_what_was_approved() {
    let dir = TempDir::new("gate-revisions");
    let c = campaign(&dir.0, "review = [\"revisions\"]\n");
    let answers = Answers {
        flagged: vec!["ch1-001".into(), "ch2-001".into()],
        ..Default::default()
    };
    let mut j = Journal::start(&c, "run-1", answers);
    let m = Manager::new(&c, &j.state);
    play(
        &mut j,
        &m,
        &[
            (Stage::Glossary, &["glossary", "brief"]),
            (Stage::Glossary, &["merge"]),
            (Stage::Glossary, &["desk"]),
            (Stage::Translate, ALL_FIRST),
            (
                Stage::Proofread(0),
                &["proofread r0 ch1", "proofread r0 ch2"],
            ),
            (Stage::Decide(0), &["decide r0"]),
            (Stage::AwaitingApproval(Gate::Revisions { round: 0 }), &[]),
        ],
    );
    crate::campaign::ops::desk::approve_revisions(
        &c,
        &m,
        &mut j.store,
        &mut j.state,
        &[],
        &["ch1-001".to_string()],
    )
    .unwrap();
    play(
        &mut j,
        &m,
        &[
            (Stage::Revise(1), &["translate ch2-001 r1"]),
            (Stage::Write, &["outputs"]),
            (Stage::Complete, &[]),
        ],
    );
}

#[test]
fn journal_to_stage_table_failed_calls_block_this_run_and_are_retried_by_the_next() {
    let dir = TempDir::new("failures");
    let c = campaign(&dir.0, "");
    let mut j = Journal::start(&c, "run-1", Answers::default());
    let m = Manager::new(&c, &j.state);
    // A glossary batch failing in this run blocks everything after it.
    let step = j.step(&m);
    assert_eq!(shapes(&c, &step), ["glossary", "brief"]);
    j.fail(&step.actions[0]);
    j.perform(&m, &step.actions[1]);
    let blocked = j.step(&m);
    assert_eq!(blocked.stage, Stage::Blocked);
    assert!(blocked.actions.is_empty());
    // The same journal seen from a later run: the failure is retried.
    assert_eq!(
        shapes(&c, &m.step(&j.state, "run-2", &BTreeSet::new())),
        ["glossary"]
    );
    assert_eq!(
        m.step(&j.state, "run-2", &BTreeSet::new()).stage,
        Stage::Glossary
    );
    j.new_run("run-2");
    let m = Manager::new(&c, &j.state);
    play(
        &mut j,
        &m,
        &[
            (Stage::Glossary, &["glossary"]),
            (Stage::Glossary, &["merge"]),
            (Stage::Glossary, &["desk"]),
        ],
    );
    // A first translation failing in this run: the others run, then the stage is blocked.
    let step = j.step(&m);
    assert_eq!(shapes(&c, &step), ALL_FIRST);
    j.fail(&step.actions[2]);
    for a in step.actions.iter().filter(|a| *a != &step.actions[2]) {
        j.perform(&m, a);
    }
    // Chapter 1 is all translated: its review does not wait for chapter 2.
    play(&mut j, &m, &[(Stage::Translate, &["proofread r0 ch1"])]);
    assert_eq!(j.step(&m).stage, Stage::Blocked);
    assert_eq!(
        Status::of_stage(&j.step(&m).stage).as_str(),
        "incomplete",
        "a blocked run is incomplete"
    );
    j.new_run("run-3");
    let m = Manager::new(&c, &j.state);
    play(&mut j, &m, &[(Stage::Translate, &["translate ch2-000 r0"])]);
    // A failed review does not block: the unit keeps its translation, the decision goes on.
    let step = j.step(&m);
    assert_eq!(shapes(&c, &step), ["proofread r0 ch2"]);
    j.fail(&step.actions[0]);
    play(
        &mut j,
        &m,
        &[
            (Stage::Decide(0), &["decide forced r0"]),
            (Stage::Write, &["outputs"]),
            (Stage::Complete, &[]),
        ],
    );
    // The next run reviews the failed batch again; the decision stands (its key covers the
    // batches and the forced units, which did not change), so the outputs are written again.
    j.new_run("run-4");
    let m = Manager::new(&c, &j.state);
    play(
        &mut j,
        &m,
        &[
            (Stage::Proofread(0), &["proofread r0 ch2"]),
            (Stage::Write, &["outputs"]),
            (Stage::Complete, &[]),
        ],
    );
}

#[test]
fn journal_to_stage_table_split_unit_translates_its_parts_then_joins_them() {
    let dir = TempDir::new("split");
    let c = campaign(&dir.0, "");
    let mut j = Journal::start(&c, "run-1", Answers::default());
    let m = Manager::new(&c, &j.state);
    play(
        &mut j,
        &m,
        &[
            (Stage::Glossary, &["glossary", "brief"]),
            (Stage::Glossary, &["merge"]),
            (Stage::Glossary, &["desk"]),
        ],
    );
    // Record the split of ch1-001 at its block boundary, as the runner does after a
    // truncated answer.
    let u = c.unit("ch1-001").unwrap();
    let fp = j.state.fp(&u.id).unwrap().to_string();
    let text = c.source_text(u);
    let cut = text.find("\n\n").unwrap() + 2;
    let rec = j
        .store
        .append(Event::UnitSplit {
            unit: u.id.clone(),
            key: fp.clone(),
            parts: vec![(0, cut), (cut, text.len())],
            reason: "truncated".into(),
            usage: Default::default(),
            requests: 1,
        })
        .unwrap();
    j.state.apply(&c, &j.store.dir, &rec, None).unwrap();
    let step = j.step(&m);
    assert_eq!(step.stage, Stage::Translate);
    assert_eq!(
        shapes(&c, &step),
        [
            "translate ch1-000 r0",
            "part .p1",
            "part .p2",
            "translate ch2-000 r0",
            "translate ch2-001 r0"
        ]
    );
    j.perform_all(&m, &step);
    play(
        &mut j,
        &m,
        &[
            // Chapter 2 is all translated: proofread beside the join of chapter 1's parts.
            (Stage::Translate, &["join ch1-001", "proofread r0 ch2"]),
            (Stage::Proofread(0), &["proofread r0 ch1"]),
            (Stage::Decide(0), &["decide forced r0"]),
            (Stage::Write, &["outputs"]),
            (Stage::Complete, &[]),
        ],
    );
    assert_eq!(
        j.state.translation_at("ch1-001", 0),
        Some(good_translation(text).as_str()),
        "the joined parts are the unit's first translation"
    );
}

#[test]
fn journal_to_stage_table_errors_left_after_the_last_round_end_needs_review() {
    let dir = TempDir::new("needs-review");
    let c = campaign(&dir.0, "revision_rounds = 0\n");
    let answers = Answers {
        untranslated: vec!["ch2-000".into()],
        ..Default::default()
    };
    let mut j = Journal::start(&c, "run-1", answers);
    let m = Manager::new(&c, &j.state);
    play(
        &mut j,
        &m,
        &[
            (Stage::Glossary, &["glossary", "brief"]),
            (Stage::Glossary, &["merge"]),
            (Stage::Glossary, &["desk"]),
            (Stage::Translate, ALL_FIRST),
            // No revision round: round 0 is still reviewed (advisory), nothing is decided.
            (
                Stage::Proofread(0),
                &["proofread r0 ch1", "proofread r0 ch2"],
            ),
            (Stage::Write, &["outputs"]),
            (Stage::Complete, &[]),
        ],
    );
    let summary = summary::summarize(&c, &m, &j.state, Status::of_stage(&Stage::Complete));
    assert_eq!(
        summary.status.as_str(),
        "needs_review",
        "the untranslated unit's QA error is left for an editor"
    );
}

#[test]
fn in_memory_campaign_is_the_campaign_load_reads_from_the_same_files() {
    let dir = TempDir::new("load");
    std::fs::create_dir_all(dir.0.join("book")).unwrap();
    std::fs::write(dir.0.join("book/ch1.md"), CH1).unwrap();
    std::fs::write(dir.0.join("book/ch2.md"), CH2).unwrap();
    let mem = campaign(&dir.0, "");
    let loaded = Campaign::load(mem.plan.clone()).unwrap();
    assert_eq!(mem.fingerprint, loaded.fingerprint);
    assert_eq!(mem.config.key(), loaded.config.key());
    assert_eq!(mem.units, loaded.units);
    assert_eq!(mem.guide, loaded.guide);
    assert_eq!(mem.units.len(), 4);
}

#[test]
fn journal_to_stage_table_conflicting_coined_renderings_are_reconciled_before_the_decision() {
    let dir = TempDir::new("reconcile");
    let c = campaign(&dir.0, "");
    let answers = Answers {
        coined: vec![
            ("ch1-000".into(), "上下文窗口".into()),
            ("ch2-000".into(), "语境窗".into()),
        ],
        ..Default::default()
    };
    let mut j = Journal::start(&c, "run-1", answers);
    let m = Manager::new(&c, &j.state);
    play(
        &mut j,
        &m,
        &[
            (Stage::Glossary, &["glossary", "brief"]),
            (Stage::Glossary, &["merge"]),
            (Stage::Glossary, &["desk"]),
            (Stage::Translate, ALL_FIRST),
            (
                Stage::Proofread(0),
                &["proofread r0 ch1", "proofread r0 ch2"],
            ),
        ],
    );
    let conflicts = m.conflicts(&j.state, 0);
    assert_eq!(conflicts.len(), 1, "{conflicts:?}");
    assert_eq!(conflicts[0].term, "context window");
    play(
        &mut j,
        &m,
        &[
            (Stage::Reconcile(0), &["reconcile r0"]),
            // The answer chose nothing: the term stays unreconciled, the call is not repeated.
            (Stage::Decide(0), &["decide forced r0"]),
            (Stage::Write, &["outputs"]),
            (Stage::Complete, &[]),
        ],
    );
}

#[test]
fn journal_to_stage_table_unit_stuck_with_a_structure_error_is_translated_again_in_pieces() {
    let dir = TempDir::new("pieces");
    let c = campaign(&dir.0, "revision_rounds = 1\n");
    let answers = Answers {
        merged: vec!["ch1-001".into()],
        ..Default::default()
    };
    let mut j = Journal::start(&c, "run-1", answers);
    let m = Manager::new(&c, &j.state);
    play(
        &mut j,
        &m,
        &[
            (Stage::Glossary, &["glossary", "brief"]),
            (Stage::Glossary, &["merge"]),
            (Stage::Glossary, &["desk"]),
            (Stage::Translate, ALL_FIRST),
            (
                Stage::Proofread(0),
                &["proofread r0 ch1", "proofread r0 ch2"],
            ),
        ],
    );
    // The merged paragraphs are a structure error: the unit is revised, and the revision
    // merges them again.
    assert_eq!(m.forced(&j.state, 0), ["ch1-001"]);
    assert!(
        j.state
            .findings_at("ch1-001", 0)
            .iter()
            .any(|f| f.check == "structure" && f.message.contains("merged")),
        "{:?}",
        j.state.findings_at("ch1-001", 0)
    );
    play(
        &mut j,
        &m,
        &[
            (Stage::Decide(0), &["decide forced r0"]),
            (Stage::Revise(1), &["translate ch1-001 r1"]),
            // After the last round the kept candidate still has the structure error: the
            // unit is cut into its two paragraphs, each translated alone, then joined at
            // round 2 (after the last revision round).
            (Stage::Pieces, &["pieces ch1-001 r2 in 2"]),
            (Stage::Pieces, &["part .p1", "part .p2"]),
            (Stage::Pieces, &["join pieces ch1-001 r2"]),
            (Stage::Write, &["outputs"]),
            (Stage::Complete, &[]),
        ],
    );
    let u = c.unit("ch1-001").unwrap();
    let fp = j.state.fp(&u.id).unwrap().to_string();
    assert_eq!(j.state.pieces_round(&fp), Some(2));
    assert_eq!(
        j.state.translation_at("ch1-001", 2),
        Some(good_translation(c.source_text(u)).as_str()),
        "the joined pieces are the faithful translation"
    );
    assert_eq!(j.state.kept_round("ch1-001", u32::MAX - 1), Some(2));
    assert!(!crate::qa::has_error(j.state.final_findings("ch1-001")));
    let candidates = j.state.candidates("ch1-001");
    let origins: Vec<_> = candidates
        .iter()
        .map(|k| (k.round, k.origin, k.kept))
        .collect();
    use crate::campaign::core::state::CandidateOrigin as O;
    assert_eq!(
        origins,
        [
            (Some(0), O::Translation, false),
            (Some(1), O::Revision, false),
            (Some(2), O::Pieces, true),
        ]
    );
    // Only once per unit, and a new run has nothing to do.
    j.new_run("run-2");
    let m2 = Manager::new(&c, &j.state);
    assert_eq!(j.step(&m2).stage, Stage::Complete);
    assert!(m2.pieces_actions(&j.state, "run-2").is_empty());
}

#[test]
fn journal_to_stage_table_unit_whose_revision_the_editor_rejected_is_not_split_into_pieces() {
    let dir = TempDir::new("pieces-rejected");
    let c = campaign(&dir.0, "review = [\"revisions\"]\n");
    let answers = Answers {
        merged: vec!["ch1-001".into()],
        flagged: vec!["ch2-001".into()],
        ..Default::default()
    };
    let mut j = Journal::start(&c, "run-1", answers);
    let m = Manager::new(&c, &j.state);
    play(
        &mut j,
        &m,
        &[
            (Stage::Glossary, &["glossary", "brief"]),
            (Stage::Glossary, &["merge"]),
            (Stage::Glossary, &["desk"]),
            (Stage::Translate, ALL_FIRST),
            (
                Stage::Proofread(0),
                &["proofread r0 ch1", "proofread r0 ch2"],
            ),
            (Stage::Decide(0), &["decide r0"]),
            (Stage::AwaitingApproval(Gate::Revisions { round: 0 }), &[]),
        ],
    );
    crate::campaign::ops::desk::approve_revisions(
        &c,
        &m,
        &mut j.store,
        &mut j.state,
        &[],
        &["ch1-001".to_string()],
    )
    .unwrap();
    // ch1-001 keeps its structure error, but the editor declined a new translation of it.
    assert!(crate::qa::has_error(j.state.final_findings("ch1-001")));
    play(
        &mut j,
        &m,
        &[
            (Stage::Revise(1), &["translate ch2-001 r1"]),
            (Stage::Write, &["outputs"]),
            (Stage::Complete, &[]),
        ],
    );
    assert!(m.pieces_actions(&j.state, "run-1").is_empty());
}

#[test]
fn journal_to_stage_table_a_failed_piece_does_not_block_and_is_retried_by_the_next_run() {
    let dir = TempDir::new("pieces-failed");
    let c = campaign(&dir.0, "revision_rounds = 1\n");
    let answers = Answers {
        merged: vec!["ch1-001".into()],
        ..Default::default()
    };
    let mut j = Journal::start(&c, "run-1", answers);
    let m = Manager::new(&c, &j.state);
    play(
        &mut j,
        &m,
        &[
            (Stage::Glossary, &["glossary", "brief"]),
            (Stage::Glossary, &["merge"]),
            (Stage::Glossary, &["desk"]),
            (Stage::Translate, ALL_FIRST),
            (
                Stage::Proofread(0),
                &["proofread r0 ch1", "proofread r0 ch2"],
            ),
            (Stage::Decide(0), &["decide forced r0"]),
            (Stage::Revise(1), &["translate ch1-001 r1"]),
            (Stage::Pieces, &["pieces ch1-001 r2 in 2"]),
        ],
    );
    let step = j.step(&m);
    assert_eq!(shapes(&c, &step), ["part .p1", "part .p2"]);
    j.fail(&step.actions[0]);
    j.perform(&m, &step.actions[1]);
    // The unit keeps its earlier candidates for now; the campaign goes on to its outputs.
    play(
        &mut j,
        &m,
        &[(Stage::Write, &["outputs"]), (Stage::Complete, &[])],
    );
    assert_eq!(j.state.kept_round("ch1-001", u32::MAX - 1), Some(1));
    // The next run translates the failed piece only, joins, and keeps the joined pieces.
    j.new_run("run-2");
    let m = Manager::new(&c, &j.state);
    play(
        &mut j,
        &m,
        &[
            (Stage::Pieces, &["part .p1"]),
            (Stage::Pieces, &["join pieces ch1-001 r2"]),
            (Stage::Write, &["outputs"]),
            (Stage::Complete, &[]),
        ],
    );
    assert_eq!(j.state.kept_round("ch1-001", u32::MAX - 1), Some(2));
}

/// The actions of the step for run `j.run` with `in_flight` call keys in flight, by shape.
fn shapes_in_flight(j: &Journal, m: &Manager, in_flight: &[&Action]) -> Vec<String> {
    let keys: BTreeSet<String> = in_flight.iter().map(|a| a.call_key(j.c)).collect();
    let step = m.step(&j.state, &j.run, &keys);
    shapes(j.c, &step)
}

/// Stages do not wait for the whole book: chapter 1's proofreading is scheduled
/// as soon as chapter 1's units are translated, while chapter 2's translations are still
/// pending (listed, or in flight), and a state loaded back from the journal mid-way (resume)
/// gives the same step.
#[test]
fn journal_to_stage_table_chapter_one_is_proofread_while_chapter_two_translates() {
    let dir = TempDir::new("pipeline");
    let c = campaign(&dir.0, "");
    let mut j = Journal::start(&c, "run-1", Answers::default());
    let m = Manager::new(&c, &j.state);
    play(
        &mut j,
        &m,
        &[
            (Stage::Glossary, &["glossary", "brief"]),
            (Stage::Glossary, &["merge"]),
            (Stage::Glossary, &["desk"]),
        ],
    );
    let step = j.step(&m);
    assert_eq!(shapes(&c, &step), ALL_FIRST);
    // Chapter 1 answered, chapter 2 not yet: nothing of chapter 1 waits for chapter 2.
    j.perform(&m, &step.actions[0]);
    assert_eq!(
        shapes(&c, &j.step(&m)),
        [
            "translate ch1-001 r0",
            "translate ch2-000 r0",
            "translate ch2-001 r0"
        ],
        "chapter 1 is not ready while one of its units is untranslated"
    );
    j.perform(&m, &step.actions[1]);
    let now = j.step(&m);
    assert_eq!(now.stage, Stage::Translate);
    assert_eq!(
        shapes(&c, &now),
        [
            "translate ch2-000 r0",
            "translate ch2-001 r0",
            "proofread r0 ch1"
        ]
    );
    // With chapter 2's translations in flight, chapter 1's review is what runs now.
    assert_eq!(
        shapes_in_flight(&j, &m, &[&step.actions[2], &step.actions[3]]),
        ["proofread r0 ch1"]
    );
    // The review of chapter 1 is recorded before chapter 2 is translated.
    let review = now.actions[2].clone();
    j.perform(&m, &review);
    assert_eq!(
        shapes(&c, &j.step(&m)),
        ["translate ch2-000 r0", "translate ch2-001 r0"]
    );
    j.perform(&m, &step.actions[2]);
    j.perform(&m, &step.actions[3]);
    play(
        &mut j,
        &m,
        &[
            (Stage::Proofread(0), &["proofread r0 ch2"]),
            (Stage::Decide(0), &["decide forced r0"]),
            (Stage::Write, &["outputs"]),
            (Stage::Complete, &[]),
        ],
    );
    // The early batch is the one of the round's plan: the decision covers it, and a new run
    // over the finished journal reviews nothing again.
    assert!(
        m.proofread_batches(&j.state, 0)
            .iter()
            .any(|b| b.key.to_string() == review.call_key(&c))
    );
    j.new_run("run-2");
    let m2 = Manager::new(&c, &j.state);
    assert_eq!(j.step(&m2).stage, Stage::Complete);
}

/// Stages do not wait for the whole book, in a revision round too: a chapter whose revisions are settled is proofread (round 1)
/// while another chapter's revision is still out.
#[test]
fn journal_to_stage_table_revised_chapter_is_proofread_while_another_is_revised() {
    let dir = TempDir::new("pipeline-revise");
    let c = campaign(&dir.0, "revision_rounds = 2\n");
    let answers = Answers {
        flagged: vec!["ch1-001".into(), "ch2-001".into()],
        ..Default::default()
    };
    let mut j = Journal::start(&c, "run-1", answers);
    let m = Manager::new(&c, &j.state);
    play(
        &mut j,
        &m,
        &[
            (Stage::Glossary, &["glossary", "brief"]),
            (Stage::Glossary, &["merge"]),
            (Stage::Glossary, &["desk"]),
            (Stage::Translate, ALL_FIRST),
            (
                Stage::Proofread(0),
                &["proofread r0 ch1", "proofread r0 ch2"],
            ),
            (Stage::Decide(0), &["decide r0"]),
        ],
    );
    let step = j.step(&m);
    assert_eq!(step.stage, Stage::Revise(1));
    assert_eq!(
        shapes(&c, &step),
        ["translate ch1-001 r1", "translate ch2-001 r1"]
    );
    j.perform(&m, &step.actions[0]);
    let now = j.step(&m);
    assert_eq!(now.stage, Stage::Revise(1));
    assert_eq!(
        shapes(&c, &now),
        ["translate ch2-001 r1", "proofread r1 ch1"]
    );
    assert_eq!(
        shapes_in_flight(&j, &m, &[&step.actions[1]]),
        ["proofread r1 ch1"]
    );
    j.perform_all(&m, &now);
    play(
        &mut j,
        &m,
        &[
            (Stage::Proofread(1), &["proofread r1 ch2"]),
            (Stage::Decide(1), &["decide r1"]),
        ],
    );
}

/// The review selection is one budget per chapter, no longer one for the whole round (so a
/// chapter's review need not wait for the others). A state whose round-0 reviews an older
/// run recorded under the whole-round selection keeps them: resuming it reviews nothing again
/// (nothing is paid twice) and the decision covers the recorded batches.
#[test]
fn old_state_keeps_whole_round_review_batches() {
    let dir = TempDir::new("legacy-review");
    let c = campaign(&dir.0, "proofread_share = 0.3\n");
    let mut j = Journal::start(&c, "run-1", Answers::default());
    let m = Manager::new(&c, &j.state);
    play(
        &mut j,
        &m,
        &[
            (Stage::Glossary, &["glossary", "brief"]),
            (Stage::Glossary, &["merge"]),
            (Stage::Glossary, &["desk"]),
            (Stage::Translate, ALL_FIRST),
        ],
    );
    let all: Vec<&crate::book::Unit> = c.prose_units().collect();
    let whole = m.select_among(
        &j.state,
        0,
        &all,
        crate::campaign::core::manager::ReviewRule::WholeRound,
    );
    let per_chapter: BTreeSet<String> = m.select_for_review(&j.state, 0).into_iter().collect();
    assert_ne!(
        whole, per_chapter,
        "the table needs the two selections to differ"
    );
    // What the older run recorded: the whole-round plan, chapter by chapter.
    let mut legacy = Vec::new();
    for ch in ["ch1", "ch2"] {
        legacy.extend(m.chapter_batches(&j.state, 0, ch, &whole));
    }
    for b in &legacy {
        let a = Action::Proofread {
            round: 0,
            chapter: b.chapter.clone(),
            units: b.units.clone(),
            key: b.key.clone(),
        };
        j.perform(&m, &a);
    }
    j.new_run("run-2");
    let m2 = Manager::new(&c, &j.state);
    let keys = |bs: Vec<crate::campaign::core::manager::ProofBatchPlan>| -> Vec<String> {
        bs.into_iter().map(|b| b.key.to_string()).collect()
    };
    assert_eq!(keys(m2.proofread_batches(&j.state, 0)), keys(legacy));
    play(
        &mut j,
        &m2,
        &[
            (Stage::Decide(0), &["decide forced r0"]),
            (Stage::Write, &["outputs"]),
            (Stage::Complete, &[]),
        ],
    );
}

/// Quality benchmark finding 13: the reviewer was given the units with QA errors too; on
/// both real models measured its remarks on them restated the QA findings or invented
/// faults, and QA sends such a unit back whatever the reviewer says. The reviewer now reads
/// only units QA passes.
#[test]
fn the_reviewer_was_paid_to_read_a_unit_qa_sends_back_anyway() {
    let dir = TempDir::new("review-clean");
    let c = campaign(&dir.0, "revision_rounds = 1\n");
    let answers = Answers {
        untranslated: vec!["ch1-001".into()],
        ..Default::default()
    };
    let mut j = Journal::start(&c, "run-1", answers);
    let m = Manager::new(&c, &j.state);
    play(&mut j, &m, TO_FIRST_TRANSLATIONS);
    assert_eq!(m.forced(&j.state, 0), ["ch1-001"]);
    let all: Vec<String> = c.prose_units().map(|u| u.id.clone()).collect();
    assert!(all.len() >= 4, "{all:?}");
    let reviewed = m.select_for_review(&j.state, 0);
    let expected: Vec<String> = all.iter().filter(|u| *u != "ch1-001").cloned().collect();
    assert_eq!(
        reviewed, expected,
        "every unit QA passes (share 1.0), no other"
    );
    let batched: Vec<String> = m
        .proofread_batches(&j.state, 0)
        .into_iter()
        .flat_map(|b| b.units)
        .collect();
    assert_eq!(batched, expected);
    // A state whose round-0 reviews an older run recorded with the unit in its batch keeps
    // them: resuming it reviews nothing again.
    let with_errors = m.select_among(
        &j.state,
        0,
        &c.prose_units().collect::<Vec<_>>(),
        crate::campaign::core::manager::ReviewRule::PerChapterWithErrors,
    );
    assert!(with_errors.contains("ch1-001"));
    let mut legacy = Vec::new();
    for ch in ["ch1", "ch2"] {
        legacy.extend(m.chapter_batches(&j.state, 0, ch, &with_errors));
    }
    for b in &legacy {
        j.perform(
            &m,
            &Action::Proofread {
                round: 0,
                chapter: b.chapter.clone(),
                units: b.units.clone(),
                key: b.key.clone(),
            },
        );
    }
    j.new_run("run-2");
    let m2 = Manager::new(&c, &j.state);
    let keys = |bs: Vec<crate::campaign::core::manager::ProofBatchPlan>| -> Vec<String> {
        bs.into_iter().map(|b| b.key.to_string()).collect()
    };
    assert_eq!(keys(m2.proofread_batches(&j.state, 0)), keys(legacy));
}

/// Quality benchmark finding 13: the 0.5B reviewer claimed "'Complete Payment' … leaves it
/// untranslated" where the translation had 完成支付, and the false claim went into the
/// revision request as an instruction. A reviewer issue on a termbase term the glossary check
/// finds rendered as required is refuted: not fed back, not offered to the Manager, and the
/// report says so. Other issues stand.
#[test]
fn a_false_glossary_claim_of_the_reviewer_went_into_the_revision_request() {
    let dir = TempDir::new("refuted");
    let c = campaign(&dir.0, "revision_rounds = 1\n");
    let answers = Answers {
        terms: vec![("tool call".into(), "调用工具".into())],
        issues: vec![
            (
                "ch1-001".into(),
                "terminology".into(),
                "The glossary term 'tool call' must be rendered 调用工具; the translation leaves it untranslated".into(),
            ),
            (
                "ch1-001".into(),
                "accuracy".into(),
                "The second clause about the language model is missing".into(),
            ),
            (
                "ch2-000".into(),
                "other".into(),
                "Glossary violation: 'Tool Call' is not rendered as the glossary says".into(),
            ),
        ],
        ..Default::default()
    };
    let mut j = Journal::start(&c, "run-1", answers);
    let m = Manager::new(&c, &j.state);
    play(&mut j, &m, TO_FIRST_TRANSLATIONS);
    play(
        &mut j,
        &m,
        &[(
            Stage::Proofread(0),
            &["proofread r0 ch1", "proofread r0 ch2"],
        )],
    );
    assert!(
        j.state
            .effective_termbase()
            .entries
            .iter()
            .any(|e| e.source == "tool call"),
        "the table needs the term in the termbase"
    );
    let refuted: Vec<(String, String)> = m
        .refuted_issues(&j.state, 0)
        .into_iter()
        .map(|r| (r.unit, r.term))
        .collect();
    assert_eq!(
        refuted,
        [
            ("ch1-001".to_string(), "tool call".to_string()),
            ("ch2-000".to_string(), "tool call".to_string())
        ]
    );
    let standing: Vec<&str> = m
        .standing_issues(&j.state, 0)
        .into_iter()
        .map(|i| i.kind.as_str())
        .collect();
    assert_eq!(standing, ["accuracy"]);
    // ch1-001 stands on its accuracy issue; ch2-000 had only the refuted claim.
    assert_eq!(m.decision_candidates(&j.state, 0, &[]), ["ch1-001"]);
    let feedback = crate::campaign::ops::jobs::feedback_for(&m, &j.state, "ch1-001", 0);
    assert_eq!(
        feedback,
        ["accuracy: The second clause about the language model is missing"]
    );
}

#[test]
fn journal_to_stage_table_a_dismissed_error_sends_no_revision() {
    use crate::qa::findings::editor_marks::Mark;
    let dir = TempDir::new("dismissed");
    let c = campaign(&dir.0, "revision_rounds = 2\n");
    let answers = Answers {
        untranslated: vec!["ch1-001".into()],
        flagged: vec!["ch2-001".into()],
        ..Default::default()
    };
    let mut j = Journal::start(&c, "run-1", answers);
    let m = Manager::new(&c, &j.state);
    play(
        &mut j,
        &m,
        &[
            (Stage::Glossary, &["glossary", "brief"]),
            (Stage::Glossary, &["merge"]),
            (Stage::Glossary, &["desk"]),
            (Stage::Translate, ALL_FIRST),
            (
                Stage::Proofread(0),
                &["proofread r0 ch1", "proofread r0 ch2"],
            ),
        ],
    );
    assert_eq!(m.forced(&j.state, 0), ["ch1-001"]);
    let before = crate::campaign::ops::jobs::feedback_for(&m, &j.state, "ch1-001", 0);
    assert!(
        before.iter().any(|l| l.starts_with("untranslated")),
        "{before:?}"
    );
    // The editor dismisses every error finding of the unit as a false positive.
    let fq = crate::campaign::core::verdict::final_qa(&c, &j.state);
    let i = c.units.iter().position(|u| u.id == "ch1-001").unwrap();
    let ids: Vec<String> = fq.units[i]
        .iter()
        .filter(|f| f.severity == crate::qa::Severity::Error)
        .map(|f| f.id.clone())
        .collect();
    assert!(!ids.is_empty());
    let n = crate::campaign::ops::mark_journal::mark(
        &c,
        &mut j.store,
        &mut j.state,
        &ids,
        Some(Mark::Dismissed),
        "a name",
    )
    .unwrap();
    assert_eq!(n, ids.len());
    assert!(
        m.forced(&j.state, 0).is_empty(),
        "a dismissed error forces nothing"
    );
    let after = crate::campaign::ops::jobs::feedback_for(&m, &j.state, "ch1-001", 0);
    assert!(
        !after.iter().any(|l| l.starts_with("untranslated")),
        "{after:?}"
    );
    let fq = crate::campaign::core::verdict::final_qa(&c, &j.state);
    assert!(
        !crate::qa::has_error(&fq.units[i]),
        "dismissed findings are info: {:?}",
        fq.units[i]
    );
    assert_eq!(fq.review.dismissed, ids.len());
    // The mark is journaled: a reloaded state sees it.
    let again = State::load(&c, &j.store.dir, "run-2").unwrap();
    assert_eq!(again.marks().current().len(), ids.len());
    assert_eq!(again.marks().current()[0].note, "a name");
    let history = crate::campaign::ops::mark_journal::unit_marks(&again, "ch1-001");
    assert_eq!(history.len(), ids.len());
    assert!(
        history
            .iter()
            .all(|r| r.mark == Some(Mark::Dismissed) && r.via == "cli")
    );
    assert!(crate::campaign::ops::mark_journal::unit_marks(&again, "ch2-001").is_empty());
}

#[test]
fn journal_to_stage_table_a_dismissed_structure_error_sends_no_pieces() {
    use crate::qa::findings::editor_marks::Mark;
    let dir = TempDir::new("pieces-dismissed");
    let c = campaign(&dir.0, "revision_rounds = 1\n");
    let answers = Answers {
        merged: vec!["ch1-001".into()],
        ..Default::default()
    };
    let mut j = Journal::start(&c, "run-1", answers);
    let m = Manager::new(&c, &j.state);
    play(
        &mut j,
        &m,
        &[
            (Stage::Glossary, &["glossary", "brief"]),
            (Stage::Glossary, &["merge"]),
            (Stage::Glossary, &["desk"]),
            (Stage::Translate, ALL_FIRST),
            (
                Stage::Proofread(0),
                &["proofread r0 ch1", "proofread r0 ch2"],
            ),
            (Stage::Decide(0), &["decide forced r0"]),
            (Stage::Revise(1), &["translate ch1-001 r1"]),
        ],
    );
    // The editor judges the merged paragraphs acceptable: every error of the kept text is
    // dismissed, so the unit is not translated again in pieces.
    let fq = crate::campaign::core::verdict::final_qa(&c, &j.state);
    let i = c.units.iter().position(|u| u.id == "ch1-001").unwrap();
    let ids: Vec<String> = fq.units[i]
        .iter()
        .filter(|f| f.severity == crate::qa::Severity::Error)
        .map(|f| f.id.clone())
        .collect();
    assert!(!ids.is_empty());
    crate::campaign::ops::mark_journal::mark(
        &c,
        &mut j.store,
        &mut j.state,
        &ids,
        Some(Mark::Dismissed),
        "",
    )
    .unwrap();
    assert!(m.pieces_actions(&j.state, "run-1").is_empty());
    play(
        &mut j,
        &m,
        &[(Stage::Write, &["outputs"]), (Stage::Complete, &[])],
    );
}

/// A drift row as the issue's campaign had it: "Agent" kept in 3 units and credited with 系统
/// (the word for "system") by the statistical association alone in 27. The Manager reconciled
/// it (a kept term made any drift "solid"), the reconciler picked the most used rendering, and
/// `Agent → 系统` entered the termbase and was written into the book by revisions. An
/// unconfirmed drift is now left to the editor; a confirmed one is reconciled over its
/// confirmed renderings only.
#[test]
fn a_kept_term_and_a_statistical_rendering_were_reconciled() {
    use crate::qa::DriftRow;
    let ids = |p: &str, n: usize| (0..n).map(|i| format!("{p}-{i:03}")).collect::<Vec<_>>();
    let statistical = DriftRow {
        term: "Agent".into(),
        in_glossary: false,
        cells: [
            ("(kept)".to_string(), ids("k", 3)),
            ("系统".to_string(), ids("s", 27)),
        ]
        .into_iter()
        .collect(),
        suggested: Some("系统".into()),
        drifting: true,
        statistical: vec!["系统".into()],
        confirmed: Vec::new(),
        confirmed_drift: false,
    };
    let done = std::collections::BTreeSet::new();
    assert!(
        crate::campaign::core::manager::drift_conflicts(std::slice::from_ref(&statistical), &done)
            .is_empty()
    );
    // Confirmed: 智能体 glossed in 4 units; the statistical 系统 is not offered.
    let mut confirmed = statistical.clone();
    confirmed.cells.insert("智能体".into(), ids("g", 4));
    confirmed.confirmed = vec!["智能体".into()];
    confirmed.confirmed_drift = true;
    let c = crate::campaign::core::manager::drift_conflicts(&[confirmed], &done);
    assert_eq!(c.len(), 1);
    let offered: Vec<(&str, usize)> = c[0]
        .renderings
        .iter()
        .map(|r| (r.rendering.as_str(), r.units))
        .collect();
    assert_eq!(offered, vec![("(kept)", 3), ("智能体", 4)]);
    assert_eq!(c[0].examples, vec!["k-000", "g-000"]);
}
