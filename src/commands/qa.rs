//! `booktr qa dismiss|confirm|unmark`: journals an editor's marks of QA findings (see [`crate::campaign::ops::mark_journal`]). No model call; the next `run`, `validate` or `status`
//! counts them.

use crate::campaign::Campaign;
use crate::campaign::core::state::State;
use crate::campaign::core::store::{Existing, Store};
use crate::cli::{QaAction, QaArgs};
use crate::exit::{ExitCode, UsageError};
use crate::qa::findings::editor_marks::Mark;

pub fn run(args: &QaArgs) -> anyhow::Result<ExitCode> {
    let (a, mark) = match &args.action {
        QaAction::Dismiss(a) => (a, Some(Mark::Dismissed)),
        QaAction::Confirm(a) => (a, Some(Mark::Confirmed)),
        QaAction::Unmark(a) => (a, None),
    };
    let plan = crate::config::Plan::load(&a.campaign, &Default::default())?;
    let c = Campaign::load(plan)?;
    let shown = c.plan.show(&c.plan.campaign_file);
    if !c.state_path().exists() {
        return Err(UsageError::new(format!(
            "{shown} has no saved state for this configuration, so it has no findings to mark. Run `booktr run {shown}` first."
        ))
        .into());
    }
    let mut store = Store::open_for_run(&c, Existing::Refuse)?;
    let mut state = State::load(&c, &store.dir, "qa")?;
    crate::campaign::core::commit::journal_adopted(&mut store, &mut state)?;
    let n = crate::campaign::ops::mark_journal::mark(
        &c, &mut store, &mut state, &a.ids, mark, &a.note,
    )?;
    eprintln!(
        "{shown}: {n} finding(s) {}. `booktr validate {shown}` writes the report with them.",
        mark.map_or("unmarked", |m| m.as_str())
    );
    Ok(ExitCode::Ok)
}
