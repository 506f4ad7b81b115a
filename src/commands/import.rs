//! `booktr import`: an edited XLIFF 2 or 1.2 file or gettext PO catalog (changed targets
//! become human edits) or a TMX
//! translation memory (fills units not translated yet), recorded in the campaign's journal;
//! then the output chapters and the report are written again. A real campaign refuses a file
//! exported from a rehearsal ([`crate::interchange::rehearsal`]).

use std::collections::BTreeSet;

use crate::campaign::Campaign;
use crate::campaign::core::manager::Manager;
use crate::campaign::core::state::State;
use crate::campaign::core::store::{Existing, Store};
use crate::campaign::core::summary::Status;
use crate::campaign::ops::runner::import_edits;
use crate::cli::ImportArgs;
use crate::exit::{ExitCode, UsageError};
use crate::interchange::memory::Memory;
use crate::interchange::{Format, po, tmx, xliff, xliff12};
use crate::qa::Severity;

pub fn run(args: &ImportArgs) -> anyhow::Result<ExitCode> {
    let plan = super::plan(&args.campaign, None)?;
    let campaign = Campaign::load(plan)?;
    let p = &campaign.plan;
    let display = args.file.display().to_string();
    let bytes = std::fs::read(&args.file)
        .map_err(|e| UsageError::new(format!("cannot read {display}: {e}")))?;
    let format = args
        .format
        .unwrap_or_else(|| Format::detect(&args.file, &bytes));
    let text =
        crate::interchange::utf8(&bytes, &display).map_err(|e| UsageError::new(e.to_string()))?;
    if !p.is_rehearsal() && crate::interchange::rehearsal::is_marked(format, &bytes) {
        return Err(UsageError::new(crate::interchange::rehearsal::refusal(
            &display,
            "`booktr import` input",
            &p.campaign_file.display().to_string(),
            "Nothing was imported.",
        ))
        .into());
    }
    // Parse before touching the state: a bad file changes nothing.
    let input = parse_input(args, &campaign, format, text, &display)?;
    let run_first = || {
        UsageError::new(format!(
            "{} has no glossary termbase yet for this configuration, so its units have no fingerprints to attach imported work to: run `booktr run {}` first (to use an existing translation before any paid call, list it in `seed = [...]` instead: a PO catalog, TMX, XLIFF or a translated folder, read block by block)",
            p.campaign_file.display(),
            p.campaign_file.display()
        ))
    };
    if !campaign.state_path().exists() {
        return Err(run_first().into());
    }
    let mut store = Store::open_for_run(&campaign, Existing::Refuse)?;
    let mut state = State::load(&campaign, &store.dir, "import")?;
    if state.termbase().is_none() {
        return Err(run_first().into());
    }
    // Like `run`: say what loading found, and journal the result files it adopted.
    for w in state.take_warnings() {
        eprintln!("warning: {w}");
    }
    crate::campaign::core::commit::journal_adopted(&mut store, &mut state)?;
    // Hand edits of the output files first, so that rewriting them loses nothing.
    let hand = import_edits(&campaign, &mut store, &mut state)?;
    if hand > 0 {
        eprintln!("recorded {hand} unit(s) edited by hand in the output chapters");
    }
    let (touched, summary) = match input {
        Input::Xliff(units) => apply_xliff(&campaign, &mut store, &mut state, &units, &display)?,
        Input::Po(messages, machine_final) => apply_po(
            &campaign,
            &mut store,
            &mut state,
            &messages,
            machine_final,
            &display,
        )?,
        Input::Tmx(m) => apply_tmx(&campaign, &mut store, &mut state, &m, &display)?,
    };
    if !touched.is_empty() || hand > 0 || !state.outputs_current() {
        let skipped =
            crate::campaign::ops::outputs::record_outputs(&campaign, &mut store, &mut state)?;
        if !skipped.is_empty() {
            eprintln!(
                "  chapters not written (units still untranslated): {}; `booktr run` translates them",
                skipped.join(", ")
            );
        }
    }
    report_imported(args, &campaign, &state, &touched, summary)
}

/// A parsed import file.
enum Input {
    Xliff(Vec<xliff::ReadUnit>),
    Tmx(Memory),
    /// The messages, and whether the file was exported with `--machine-text final`.
    Po(Vec<po::ReadMessage>, bool),
}

/// Parses `text` as `format`, warning about targets that look like a rehearsal's pseudo text.
/// Errors: a file that does not parse, or a glossary format (a usage error).
fn parse_input(
    args: &ImportArgs,
    campaign: &Campaign,
    format: Format,
    text: &str,
    display: &str,
) -> anyhow::Result<Input> {
    let p = &campaign.plan;
    Ok(match format {
        Format::Po => Input::Po(
            po::read(text, display).map_err(|e| UsageError::new(e.to_string()))?,
            po::is_machine_final(text),
        ),
        Format::Xliff | Format::Xliff12 => {
            let units = if format == Format::Xliff12 {
                xliff12::read(text, display)
            } else {
                xliff::read(text, display)
            }
            .map_err(|e| UsageError::new(e.to_string()))?;
            let suspect: Vec<&xliff::ReadUnit> = units
                .iter()
                .filter(|u| {
                    u.target
                        .as_deref()
                        .is_some_and(crate::interchange::rehearsal::looks_pseudo)
                })
                .collect();
            if !p.is_rehearsal()
                && let Some(first) = suspect.first()
            {
                eprintln!(
                    "warning: {display}: {} target(s) look like pseudo text from a rehearsal (e.g. unit {}), though the file carries no rehearsal mark; they would be recorded as human edits",
                    suspect.len(),
                    first.id
                );
            }
            Input::Xliff(units)
        }
        Format::Tmx => {
            let pairs = tmx::read(text, display, &p.source_lang, &p.target_lang)
                .map_err(|e| UsageError::new(e.to_string()))?;
            let mut m = Memory::default();
            // The memory's name as stored in results: relative to the campaign file.
            let abs = std::env::current_dir()?.join(&args.file);
            m.add(pairs, &p.rel(&crate::util::normalize(&abs)));
            let suspect = m.pseudo_looking();
            if !p.is_rehearsal()
                && let Some(first) = suspect.first()
            {
                eprintln!(
                    "warning: {display}: {} stored translation(s) look like pseudo text from a rehearsal (e.g. unit {}), though the file carries no rehearsal mark; check the file before relying on the units it fills",
                    suspect.len(),
                    first.id
                );
            }
            Input::Tmx(m)
        }
        other => {
            return Err(UsageError::new(format!(
                "{display} is a {} glossary: list it in `glossaries` in {} instead; `import` takes an edited XLIFF or PO file or a TMX memory",
                other.extension().to_uppercase(),
                p.campaign_file.display()
            ))
            .into());
        }
    })
}

/// What an import changed: the units touched, and the summary printed with `--json`.
type Applied = (Vec<String>, serde_json::Value);

/// Records an XLIFF file's changed targets as human edits.
fn apply_xliff(
    c: &Campaign,
    store: &mut Store,
    state: &mut State,
    units: &[xliff::ReadUnit],
    display: &str,
) -> anyhow::Result<Applied> {
    let r = crate::campaign::ops::imports::apply_xliff(c, store, state, units)?;
    eprintln!(
        "{display}: {} unit(s) edited (recorded as human edits; `booktr run` keeps them), {} unchanged, {} without target",
        r.edited.len(),
        r.unchanged,
        r.untranslated
    );
    if !r.stale.is_empty() {
        eprintln!(
            "  not taken: {} unit(s) whose source changed since the export (e.g. {}); export again and redo them",
            r.stale.len(),
            r.stale[0]
        );
    }
    if !r.unknown.is_empty() {
        eprintln!(
            "  not taken: {} unit id(s) this campaign does not have (e.g. {})",
            r.unknown.len(),
            r.unknown[0]
        );
    }
    Ok((r.edited.clone(), serde_json::to_value(&r)?))
}

/// Records a PO catalog's changed and approved messages as human edits.
fn apply_po(
    c: &Campaign,
    store: &mut Store,
    state: &mut State,
    messages: &[po::ReadMessage],
    machine_final: bool,
    display: &str,
) -> anyhow::Result<Applied> {
    let r = crate::campaign::ops::imports::apply_po(c, store, state, messages, machine_final)?;
    eprintln!(
        "{display}: {} unit(s) edited and {} approved (recorded as human edits; `booktr run` keeps them), {} unchanged, {} without translation",
        r.edited.len(),
        r.approved.len(),
        r.unchanged,
        r.untranslated
    );
    if r.machine_final {
        eprintln!(
            "  exported with --machine-text final: its machine translations were never fuzzy, so only changed messages are taken (an unchanged one is not an approval)"
        );
    }
    if r.fuzzy > 0 {
        eprintln!(
            "  not taken: {} changed message(s) still marked fuzzy (drafts, or an older export's machine text); clear `fuzzy` on the ones you approve and import again",
            r.fuzzy
        );
    }
    for refused in &r.refused {
        eprintln!("  not taken: {refused}; fix the msgstr and import again");
    }
    if !r.missing.is_empty() {
        eprintln!(
            "  not taken: {} unit(s) whose messages the file does not have (e.g. {}): the file was made from another version of the book or its translations, or a message was merged or split; export again and redo them",
            r.missing.len(),
            r.missing[0]
        );
    }
    let touched: Vec<String> = r.edited.iter().chain(&r.approved).cloned().collect();
    Ok((touched, serde_json::to_value(&r)?))
}

/// Fills the units not yet translated from a TMX memory.
fn apply_tmx(
    c: &Campaign,
    store: &mut Store,
    state: &mut State,
    m: &Memory,
    display: &str,
) -> anyhow::Result<Applied> {
    let filled = crate::campaign::ops::memory::apply_memory(c, store, state, m)?;
    eprintln!(
        "{display}: {} distinct source(s); {} unit(s) not yet translated took their translation from it (no model call)",
        m.len(),
        filled.len()
    );
    Ok((
        filled.clone(),
        serde_json::json!({"memory_hits": filled.len(), "memory_sources": m.len()}),
    ))
}

/// Validates again (the report covers every unit, the summary the imported ones) and prints
/// the errors on the `touched` units; `summary` is printed with `--json`.
fn report_imported(
    args: &ImportArgs,
    campaign: &Campaign,
    state: &State,
    touched: &[String],
    summary: serde_json::Value,
) -> anyhow::Result<ExitCode> {
    let p = &campaign.plan;
    let manager = Manager::new(campaign, state);
    let stage = manager.next_step(state, &BTreeSet::new()).stage;
    let status = Status::of_stage(&stage);
    let report = crate::report::build(campaign, &manager, state, status, &[]);
    let (report, _) = report.write(&p.report_dir, crate::report::texts_of(campaign, state))?;
    let touched_set: BTreeSet<&str> = touched.iter().map(String::as_str).collect();
    let errors: Vec<String> = report
        .units
        .iter()
        .filter(|u| touched_set.contains(u.id.as_str()))
        .flat_map(|u| {
            u.findings
                .iter()
                .filter(|f| f.severity == Severity::Error)
                .map(move |f| format!("{}: {}", u.id, f.line()))
        })
        .collect();
    for e in errors.iter().take(10) {
        eprintln!("  error: {e}");
    }
    eprintln!(
        "  QA: {} error finding(s) on the imported units. Report: {}",
        errors.len(),
        p.show(&p.report_dir.join("report.html"))
    );
    if args.json {
        let mut v = summary;
        v["errors"] = errors.len().into();
        v["stage"] = serde_json::to_value(&stage)?;
        // The campaign status the report shows (`needs_review` while errors remain anywhere).
        v["status"] = serde_json::to_value(report.summary.status)?;
        println!("{}", serde_json::to_string(&v)?);
    }
    Ok(if errors.is_empty() {
        ExitCode::Ok
    } else {
        ExitCode::Failed
    })
}
