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
    /// Stopped at the budget cap (issue 17, `crate::campaign::budget`).
    BudgetReached = 4,
    Interrupted = 130,
}

/// The text shown at the end of `--help`.
pub const EXIT_CODES_HELP: &str = "Exit codes:
  0    complete with no error finding (run) / no error findings (validate)
  1    finished with failed units or error findings (needs_review), or a runtime failure
  2    usage or configuration error (campaign file, glossary, chapter, refused state)
  3    waiting for an editor's approval (`booktr status` shows the command to continue)
  4    budget reached: stopped before a request would exceed max_cost / --max-cost;
       run again with a higher --max-cost to resume (finished work is not paid again)
  130  interrupted; run the same command again to resume
A closed stdout or stderr (`| head -1`) is not an error: the command ends with its usual code.";

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
