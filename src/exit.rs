//! Exit codes and the error type that maps to "usage or configuration error".
//!
//! | code | meaning |
//! |------|---------|
//! | 0 | complete: every unit translated and no error finding (run), or no error finding (validate) |
//! | 1 | finished with failed units, or `needs_review` (error findings remain), or a runtime failure |
//! | 2 | usage or configuration error (bad flag, campaign file, glossary, chapter, refused state) |
//! | 3 | waiting at an approval gate (campaign key `review`): `booktr status` names the command |
//! | 4 | budget reached: the next request would have taken the cost over `[pricing] max_cost` or `run --max-cost` (nothing over it was sent; finished work is saved); run again with a higher cap to resume |
//! | 130 | interrupted (Ctrl-C / SIGTERM); run again to resume |
//!
//! A closed stdout or stderr (`| head -1`) changes none of these: the command finishes with
//! its usual code and what the pipe cannot take is dropped (see [`crate::term`]).

/// Process exit codes, documented in `booktr --help`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitCode {
    Ok = 0,
    Failed = 1,
    Usage = 2,
    AwaitingApproval = 3,
    /// Stopped at the budget cap (`[pricing] max_cost` or `run --max-cost`).
    BudgetReached = 4,
    Interrupted = 130,
}

/// The text shown at the end of `booktr --help`: every code any command uses. Each command's
/// own `--help` ends with the codes it uses (the `*_EXIT_CODES` texts below).
pub const EXIT_CODES_HELP: &str = "Exit codes (each command's --help lists its own):
  0    complete with no error finding (run) / no error findings (validate)
  1    finished with failed units or error findings (needs_review), or a runtime failure
  2    usage or configuration error (campaign file, glossary, chapter, refused state)
  3    waiting for an editor's approval (`booktr status` shows the command to continue)
  4    budget reached: stopped before a request would exceed max_cost / --max-cost;
       run again with a higher --max-cost to resume (finished work is not paid again)
  130  interrupted; run the same command again to resume
A closed stdout or stderr (`| head -1`) is not an error: the command ends with its usual code.";

/// The exit code lines every command shares: 2 for a usage error, 1 for a failure while
/// working. A macro so that the per-command texts stay `&'static str` (clap's `after_help`).
macro_rules! common_codes {
    () => {
        "  1    a failure while working (a file that cannot be written, an unreadable journal)
  2    usage or configuration error: a bad flag, an invalid campaign file, a chapter or
       glossary that cannot be read; the message names the file and the remedy"
    };
}

/// `booktr run --help`.
pub const RUN_EXIT_CODES: &str = "Exit codes:
  0    complete: every unit translated and no error finding on the final texts
  1    needs_review (every stage done, error findings remain: see the report), incomplete
       (some calls failed or the provider stopped the run: run again to retry only those),
       or a runtime failure
  2    usage or configuration error (campaign file, glossary, chapter, refused state, or
       a book folder given without --to)
  3    awaiting_approval: waiting at an approval gate (`booktr status` names the command)
  4    budget_reached: stopped before a request would exceed max_cost / --max-cost; run
       again with a higher --max-cost to resume (finished work is not paid again)
  130  interrupted (Ctrl-C / SIGTERM); run the same command again to resume";

/// `booktr init --help`.
pub const INIT_EXIT_CODES: &str = concat!(
    "Exit codes:
  0    the campaign file was written (its path and the next two commands are printed)
",
    common_codes!(),
    "
       Also: the campaign file already exists (it is never overwritten), or the path
       holds no chapter"
);

/// `booktr plan --help`.
pub const PLAN_EXIT_CODES: &str = concat!(
    "Exit codes:
  0    the plan was printed (no request was sent)
",
    common_codes!()
);

/// `booktr status --help`.
pub const STATUS_EXIT_CODES: &str = concat!(
    "Exit codes:
  0    the status was printed, whatever it is (complete, needs_review, incomplete,
       awaiting_approval, budget_reached, or not started: no saved state yet): read the
       first line, or `status` in --json; the `next:` line gives the command that continues
       With --check (a CI gate): 0 when every source block has a current translation, the
       outputs are written and no error finding remains; 1 otherwise
",
    common_codes!()
);

/// `booktr approve --help`.
pub const APPROVE_EXIT_CODES: &str = concat!(
    "Exit codes:
  0    the approval was recorded; `booktr run` goes on
",
    common_codes!(),
    "
       Also: the campaign does not wait at that gate, or a unit named is not proposed"
);

/// `booktr validate --help`.
pub const VALIDATE_EXIT_CODES: &str = concat!(
    "Exit codes:
  0    no error finding (warnings may remain)
  1    error findings remain (the report lists them), or a failure while working
",
    "  2    usage or configuration error: a bad flag, an invalid campaign file, a chapter or
       glossary that cannot be read, a campaign with no saved state"
);

/// `booktr export --help`.
pub const EXPORT_EXIT_CODES: &str = concat!(
    "Exit codes:
  0    the file was written
",
    common_codes!(),
    "
       Also: the campaign has no saved state yet"
);

/// `booktr import --help`.
pub const IMPORT_EXIT_CODES: &str = concat!(
    "Exit codes:
  0    imported, and no imported unit has an error finding
  1    an imported unit has an error finding (it is kept: fix it and import again), or a
       failure while working
",
    "  2    usage or configuration error: an unreadable or malformed file, a rehearsal's file
       into a real campaign, a campaign with no saved state"
);

/// `booktr experiment --help`.
pub const EXPERIMENT_EXIT_CODES: &str = concat!(
    "Exit codes:
  0    every acceptance gate is true
  1    some gate is false, or a failure while working
",
    "  2    usage or configuration error (campaign file, missing reference_dir, ...)
  3    the orchestration arm waits at an approval gate (`booktr status` names the command)
  130  interrupted; run the same command again to resume"
);

/// `booktr explain --help`.
pub const EXPLAIN_EXIT_CODES: &str = concat!(
    "Exit codes:
  0    the unit was explained
",
    common_codes!(),
    "
       Also: an unknown unit (the message suggests close ids), or no saved state"
);

/// `booktr qa --help`.
pub const QA_EXIT_CODES: &str = concat!(
    "Exit codes:
  0    the marks were recorded
",
    common_codes!(),
    "
       Also: an id no finding has"
);

/// An error caused by what the user asked for (flags, campaign file, inputs, refused state),
/// as opposed to a failure while working. Maps to exit code 2. The message names the file,
/// key or unit concerned and the remedy.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct UsageError {
    pub message: String,
}

impl UsageError {
    pub fn new(message: impl Into<String>) -> Self {
        UsageError {
            message: message.into(),
        }
    }
}

/// The exit code for an error returned by a command: 2 when a [`UsageError`] is anywhere in
/// its chain, else 1.
pub fn code_for(err: &anyhow::Error) -> ExitCode {
    if err
        .chain()
        .any(|e| e.downcast_ref::<UsageError>().is_some())
    {
        ExitCode::Usage
    } else {
        ExitCode::Failed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The codes are a contract with scripts and CI pipelines: their numbers never change,
    /// and the general table of `booktr --help` lists each of them.
    #[test]
    fn exit_codes_are_stable_and_listed() {
        let codes = [
            (ExitCode::Ok, 0),
            (ExitCode::Failed, 1),
            (ExitCode::Usage, 2),
            (ExitCode::AwaitingApproval, 3),
            (ExitCode::BudgetReached, 4),
            (ExitCode::Interrupted, 130),
        ];
        for (code, n) in codes {
            assert_eq!(code as i32, n);
            let line = format!("\n  {n:<4} ");
            assert!(EXIT_CODES_HELP.contains(&line), "{n} is not listed");
        }
        let usage = UsageError::new("x");
        assert_eq!(code_for(&anyhow::Error::new(usage)), ExitCode::Usage);
        assert_eq!(code_for(&anyhow::anyhow!("io")), ExitCode::Failed);
    }
}
