//! The one write protocol of a campaign: how a fact reaches the state directory and the
//! in-memory [`State`]. Every writer uses it: the runner and batch mode (model answers, memory
//! hits, joined parts), the experiment's arms and judge, imports (XLIFF edits, TMX memory) and
//! hand edits found in output chapters.
//!
//! A finished call ([`record_result`]) is committed in this order:
//!
//! 1. its **result file** is written atomically (temp file, `sync_all`, rename, directory fsync:
//!    [`Store::write_result`]);
//! 2. the `call_finished` record is **applied** to the state under the sequence number the
//!    journal line will carry, and the context size in tokens is measured on the state that
//!    now holds the result (the line records that measurement, `ctx_tokens`);
//! 3. the **journal line** is appended (flushed and `sync_data`ed) before control returns.
//!
//! Step 2 only changes memory, so on disk the order is: result file, then its line. A crash
//! before step 1 loses nothing recorded (the call is made again); a crash after step 1 and before
//! step 3 leaves a result file without its line, which [`State::load`] adopts after checking its
//! hash and [`journal_adopted`] journals (`adopted: true`) at the next writer's start; a crash
//! during step 3 leaves a torn last line, ignored with a warning, and the file is adopted the
//! same way. The measurement is why the line is appended after the apply: `ctx_tokens` is a
//! fact about the state *with* the result.
//!
//! A result that is a sample of the model's reply lengths ([`ResultFile::sample`]) may change
//! what the campaign has learned of them; when it does, an `output_bound` line follows the
//! `call_finished` line ([`crate::agents::bounds::changed`]), so the figure every later request
//! is bounded by is a recorded fact, the same for a resumed run.
//!
//! Every other event ([`record_event`]) is appended first, then applied, and a human edit
//! ([`record_edit`]) writes its text file first, then its line, then applies it.
//!
//! What it does not own: deciding what to record (the Manager, the runner, the importers) and
//! the file layout of the state directory ([`super::store`]).

use super::Campaign;
use super::state::State;
use super::store::{Event, Record, ResultFile, Store, now_ms};

/// Commits the finished call `result` (see the module docs for the order): writes its result
/// file, applies it to `state`, measures `ctx_tokens(state)` (tokens of the context that the
/// caller tracks, e.g. the Manager's context; return a constant when it is known beforehand)
/// and appends the `call_finished` line with it. The line's `requests` and `usage` are the
/// result's. Returns the record appended.
///
/// Errors: I/O while writing the result file or the journal (the state directory is left as a
/// crash would leave it: recoverable on the next load), a state opened read-only.
pub fn record_result(
    c: &Campaign,
    store: &mut Store,
    state: &mut State,
    result: ResultFile,
    ctx_tokens: impl FnOnce(&State) -> usize,
) -> anyhow::Result<Record> {
    let (file, sha256) = store.write_result(&result)?;
    let mut event = Event::CallFinished {
        call: result.call.clone(),
        agent: result.agent,
        unit: result.unit.clone(),
        file,
        sha256,
        usage: result.usage,
        requests: result.requests,
        ctx_tokens: 0,
        adopted: false,
    };
    let provisional = Record {
        seq: store.next_seq(),
        at_ms: now_ms(),
        event: event.clone(),
    };
    state.apply(c, &store.dir, &provisional, Some(result))?;
    let tokens = ctx_tokens(state);
    state.note_ctx_tokens(tokens);
    if let Event::CallFinished { ctx_tokens, .. } = &mut event {
        *ctx_tokens = tokens;
    }
    let agent = result_agent(&event);
    let rec = store.append(event)?;
    if let Some(agent) = agent
        && let Some(figure) = state.learned_figure(agent)
        && crate::agents::bounds::changed(state.figure(agent), &figure)
    {
        record_event(
            c,
            store,
            state,
            Event::OutputBound {
                agent,
                target_lang: c.plan.target_lang.code.clone(),
                figure,
            },
        )?;
    }
    Ok(rec)
}

/// The agent of a `call_finished` line that made a request.
fn result_agent(event: &Event) -> Option<crate::agents::Agent> {
    match event {
        Event::CallFinished {
            agent, requests, ..
        } if *requests > 0 => Some(*agent),
        _ => None,
    }
}

/// Commits an event that has no result file (a failure, a split, a gate, a run boundary…):
/// appends its journal line, then applies it to `state`. Returns the record.
///
/// Errors: I/O while appending; the record cannot be applied (a file it names cannot be read).
pub fn record_event(
    c: &Campaign,
    store: &mut Store,
    state: &mut State,
    event: Event,
) -> anyhow::Result<Record> {
    let rec = store.append(event)?;
    state.apply(c, &store.dir, &rec, None)?;
    Ok(rec)
}

/// Commits a human edit of unit `unit` (fingerprint `fp`) with text `text`: writes the edit's
/// file, appends its `human_edit` line (`imported` when it came from a file such as an XLIFF,
/// not from a hand edit of an output chapter) and applies it (QA runs on the text as it is
/// applied). Returns the record.
///
/// Errors: I/O while writing the file or the journal.
pub fn record_edit(
    c: &Campaign,
    store: &mut Store,
    state: &mut State,
    unit: &str,
    fp: &str,
    text: &str,
    imported: bool,
) -> anyhow::Result<Record> {
    let rec = if imported {
        store.record_imported_edit(unit, fp, text)?
    } else {
        store.record_human_edit(unit, fp, text)?
    };
    state.apply(c, &store.dir, &rec, None)?;
    Ok(rec)
}

/// Journals the result files [`State::load`] adopted (found without their journal line, e.g.
/// after a kill between writing a result and appending its line), with `adopted: true` and
/// `ctx_tokens` 0, so they are never lost. The state already holds them.
///
/// Errors: I/O while appending.
pub fn journal_adopted(store: &mut Store, state: &mut State) -> anyhow::Result<()> {
    for (call, file, sha256) in state.take_adopted() {
        let r = &state.finished()[&call];
        store.append(Event::CallFinished {
            call: call.clone(),
            agent: r.agent,
            unit: r.unit.clone(),
            file,
            sha256,
            usage: r.usage,
            requests: r.requests,
            ctx_tokens: 0,
            adopted: true,
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::Agent;
    use crate::campaign::store::{Existing, Output, read_journal};
    use crate::config::{Overrides, Plan};

    /// A one-chapter rehearsal campaign in a temporary folder.
    fn campaign() -> (tempfile::TempDir, Campaign) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("campaign.toml"),
            "name = \"t\"\nsource_lang = \"en\"\ntarget_lang = \"zh\"\nchapters = [\"a.md\"]\n[provider]\nkind = \"pseudo\"\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("a.md"),
            "# Tools\n\nAn agent calls a tool.\n",
        )
        .unwrap();
        let plan = Plan::load(&dir.path().join("campaign.toml"), &Overrides::default()).unwrap();
        (dir, Campaign::load(plan).unwrap())
    }

    /// A finished call of no model (a brief), enough to exercise the protocol.
    fn result(call: &str) -> ResultFile {
        let output = Output::Brief {
            text: "Audience: engineers.\n".into(),
        };
        ResultFile {
            schema_version: crate::campaign::fingerprint::STATE_SCHEMA_VERSION,
            call: call.into(),
            agent: Agent::Manager,
            unit: None,
            request_sha256: "r".into(),
            usage: crate::llm::Usage {
                prompt_tokens: 120,
                completion_tokens: 30,
                ..Default::default()
            },
            attempts: 1,
            requests: 1,
            model: Some("m".into()),
            finish_reason: Some("stop".into()),
            elapsed_ms: 5,
            output_sha256: ResultFile::output_hash(&output),
            output,
            origin: None,
            long: None,
            sample: None,
            kept_blocks: None,
        }
    }

    fn finished_lines(dir: &std::path::Path) -> Vec<Record> {
        read_journal(dir)
            .unwrap()
            .0
            .into_iter()
            .filter(|r| matches!(r.event, Event::CallFinished { .. }))
            .collect()
    }

    #[test]
    fn a_committed_result_is_journaled_with_the_context_measured_on_the_state_that_holds_it() {
        let (_d, c) = campaign();
        let mut store = Store::open_for_run(&c, Existing::Refuse).unwrap();
        let mut state = State::load(&c, &store.dir, "run-1").unwrap();
        let seq = store.next_seq();
        let rec = record_result(&c, &mut store, &mut state, result("brief/x"), |s| {
            // The measurement sees the result already applied.
            assert!(s.finished().contains_key("brief/x"));
            4321
        })
        .unwrap();
        assert_eq!(rec.seq, seq);
        let Event::CallFinished {
            ctx_tokens,
            requests,
            adopted,
            ref file,
            ..
        } = rec.event
        else {
            panic!("{rec:?}")
        };
        assert_eq!((ctx_tokens, requests, adopted), (4321, 1, false));
        assert_eq!(file, "results/brief/x.json");
        assert_eq!(state.ctx_peak(), 4321);
        assert_eq!(finished_lines(&store.dir), vec![rec]);
        drop(store);
        // A reload sees exactly the same: no adoption, same peak and usage.
        let dir = c.state_path();
        let again = State::load(&c, &dir, "run-2").unwrap();
        assert!(again.warnings().is_empty(), "{:?}", again.warnings());
        assert_eq!(again.ctx_peak(), 4321);
        assert_eq!(again.usage()[&Agent::Manager].prompt_tokens, 120);
        assert_eq!(again.brief_text(), "Audience: engineers.\n");
    }

    /// The crash points of the protocol, each simulated on disk, then the next writer's start:
    /// after the result file (no line), during the line (torn), and a journal that refuses the
    /// line (the store is read-only). Every one leaves the result recoverable: adopted on load,
    /// journaled once by [`journal_adopted`], never lost and never asked for again.
    #[test]
    fn a_crash_between_result_file_and_journal_line_leaves_the_result_adopted() {
        for crash in ["after_file", "torn_line", "append_refused"] {
            let (_d, c) = campaign();
            let dir = {
                let store = Store::open_for_run(&c, Existing::Refuse).unwrap();
                let r = result("brief/x");
                match crash {
                    "after_file" => {
                        store.write_result(&r).unwrap();
                    }
                    "torn_line" => {
                        store.write_result(&r).unwrap();
                        let mut j = std::fs::OpenOptions::new()
                            .append(true)
                            .open(store.dir.join("journal.jsonl"))
                            .unwrap();
                        std::io::Write::write_all(
                            &mut j,
                            b"{\"seq\":1,\"at_ms\":5,\"event\":\"call_fin",
                        )
                        .unwrap();
                    }
                    _ => {
                        // The same protocol against a store whose journal cannot be appended:
                        // the result file is on disk, its line is not.
                        let mut ro = Store::open_dir(&store.dir).unwrap();
                        let mut state = State::load(&c, &ro.dir, "run-1").unwrap();
                        let err = record_result(&c, &mut ro, &mut state, r, |_| 7).unwrap_err();
                        assert!(err.to_string().contains("read-only"), "{err:#}");
                    }
                }
                assert!(store.dir.join("results/brief/x.json").exists(), "{crash}");
                assert!(finished_lines(&store.dir).is_empty(), "{crash}");
                store.dir.clone()
            };
            let mut store = Store::open_for_run(&c, Existing::Refuse).unwrap();
            let mut state = State::load(&c, &dir, "run-2").unwrap();
            assert!(state.finished().contains_key("brief/x"), "{crash}");
            assert!(
                state
                    .warnings()
                    .iter()
                    .any(|w| w.contains("adopted result")),
                "{crash}: {:?}",
                state.warnings()
            );
            journal_adopted(&mut store, &mut state).unwrap();
            journal_adopted(&mut store, &mut state).unwrap();
            let lines = finished_lines(&dir);
            assert_eq!(lines.len(), 1, "{crash}: journaled once");
            assert!(
                matches!(
                    lines[0].event,
                    Event::CallFinished {
                        adopted: true,
                        ctx_tokens: 0,
                        ..
                    }
                ),
                "{crash}: {:?}",
                lines[0]
            );
            drop(store);
            let again = State::load(&c, &dir, "run-3").unwrap();
            assert!(
                !again.warnings().iter().any(|w| w.contains("adopted")),
                "{crash}: {:?}",
                again.warnings()
            );
            assert!(again.finished().contains_key("brief/x"), "{crash}");
        }
    }

    #[test]
    fn an_event_is_journaled_before_it_is_applied() {
        let (_d, c) = campaign();
        let mut store = Store::open_for_run(&c, Existing::Refuse).unwrap();
        let mut state = State::load(&c, &store.dir, "run-1").unwrap();
        let rec = record_event(
            &c,
            &mut store,
            &mut state,
            Event::RunStopped {
                run: "run-1".into(),
                error: "quota".into(),
            },
        )
        .unwrap();
        assert_eq!(read_journal(&store.dir).unwrap().0, vec![rec]);
        assert_eq!(state.stopped().as_deref(), Some("quota"));
        // Refused by a read-only journal: nothing is applied.
        let mut ro = Store::open_dir(&store.dir).unwrap();
        let mut fresh = State::load(&c, &ro.dir, "run-2").unwrap();
        assert!(
            record_event(
                &c,
                &mut ro,
                &mut fresh,
                Event::RunStopped {
                    run: "run-2".into(),
                    error: "billing".into(),
                },
            )
            .is_err()
        );
        assert_eq!(fresh.stopped().as_deref(), Some("quota"));
    }
}
