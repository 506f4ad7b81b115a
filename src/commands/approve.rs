//! `booktr approve`: records an editor's decision at an approval gate in the journal. The run
//! that stopped at the gate has exited; the next `booktr run` reads the approval from the state.

use crate::campaign::Campaign;
use crate::campaign::core::manager::Manager;
use crate::campaign::core::state::State;
use crate::campaign::core::store::{Existing, Store};
use crate::campaign::ops::desk;
use crate::cli::{ApproveArgs, ApproveStage};
use crate::exit::{ExitCode, UsageError};

pub fn run(args: &ApproveArgs) -> anyhow::Result<ExitCode> {
    let plan = super::plan(&args.campaign, None)?;
    let c = Campaign::load(plan)?;
    let shown = c.plan.show(&c.plan.campaign_file);
    if !c.state_path().exists() {
        return Err(UsageError::new(format!(
            "nothing to approve: {shown} has no saved state for this configuration. Run `booktr run {shown}` first; it stops at the gate."
        ))
        .into());
    }
    if args.stage == Some(ApproveStage::Glossary)
        && !(args.only.is_empty() && args.reject.is_empty() && args.chapter.is_empty())
    {
        return Err(UsageError::new(
            "--only, --reject and --chapter choose units for `--stage revisions`; for the glossary, edit the review CSV",
        )
        .into());
    }
    let mut store = Store::open_for_run(&c, Existing::Refuse)?;
    let mut state = State::load(&c, &store.dir, "approve")?;
    // Result files found without their journal line are journaled by every writer.
    crate::campaign::core::commit::journal_adopted(&mut store, &mut state)?;
    let m = Manager::new(&c, &state);
    let Some(stage) = args.stage else {
        return decide_stale(&c, &mut store, &mut state, args);
    };
    match stage {
        ApproveStage::Glossary => {
            let r = desk::approve_glossary(&c, &mut store, &mut state)?;
            if !r.recorded {
                eprintln!(
                    "{shown}: the glossary was already approved as it stands; nothing recorded."
                );
            } else {
                eprintln!(
                    "{shown}: glossary approved: {} entries, {} change(s) against the proposal{}.",
                    r.entries,
                    r.changes.len(),
                    if r.brief_edited {
                        ", edited brief taken"
                    } else {
                        ""
                    }
                );
                for ch in r.changes.iter().take(20) {
                    eprintln!("  {ch}");
                }
                if r.changes.len() > 20 {
                    eprintln!("  …and {} more (in the journal)", r.changes.len() - 20);
                }
            }
        }
        ApproveStage::Revisions => {
            let r = desk::approve_revisions_in(
                &c,
                &m,
                &mut store,
                &mut state,
                &args.only,
                &args.reject,
                &args.chapter,
            )?;
            eprintln!(
                "{shown}: revisions after round {} approved{}: {} unit(s) to revise{}{}",
                r.round,
                if r.chapters.is_empty() {
                    String::new()
                } else {
                    format!(" for chapter(s) {}", r.chapters.join(", "))
                },
                r.approved.len(),
                if r.rejected.is_empty() {
                    String::new()
                } else {
                    format!(
                        ", {} rejected (they keep their translation): ",
                        r.rejected.len()
                    )
                },
                r.rejected.join(", ")
            );
            // What still waits (from the state as recorded now).
            let m = Manager::new(&c, &state);
            let left = m.undecided_revisions(&state, r.round);
            if !left.is_empty() {
                eprintln!(
                    "{shown}: {} unit(s) in other chapters still wait at the revisions gate; approve them with `{} [--chapter NAME…]`.",
                    left.len(),
                    crate::campaign::core::manager::Gate::Revisions { round: r.round }
                        .approve_command(&c)
                );
            }
        }
    }
    eprintln!("Continue with `booktr run {shown}`.");
    Ok(ExitCode::Ok)
}

/// `approve --stale UNIT… --keep editor|model`: records the editor's decision on each unit's
/// stale edits ([`crate::campaign::core::reuse::resolve_stale`]); the next `run` writes the
/// outputs with no model call.
fn decide_stale(
    c: &Campaign,
    store: &mut Store,
    state: &mut State,
    args: &ApproveArgs,
) -> anyhow::Result<ExitCode> {
    use crate::campaign::core::store::StaleChoice;
    let keep = match args.keep {
        Some(crate::cli::KeepChoice::Model) => StaleChoice::Model,
        _ => StaleChoice::Editor,
    };
    let shown = c.plan.show(&c.plan.campaign_file);
    for id in &args.stale {
        let n = crate::campaign::core::reuse::resolve_stale(c, store, state, id, keep)?;
        eprintln!(
            "{id}: {n} stale edit(s) decided: {}",
            match keep {
                StaleChoice::Editor => "your text stands for the new source",
                StaleChoice::Model => "the model's translation of the new source is taken",
            }
        );
    }
    // The decision is written to the output chapters at once: an output still holding the
    // editor's old text would read as a new hand edit to the next `run` and undo it.
    crate::campaign::ops::outputs::record_outputs(c, store, state)?;
    eprintln!(
        "wrote the output chapters; `booktr validate {shown}` or `booktr run {shown}` updates the report (no model call)"
    );
    Ok(ExitCode::Ok)
}
