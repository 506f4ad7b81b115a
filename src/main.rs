//! booktr's entry point: parse the command line, set up logging on stderr, run the command,
//! and map its outcome to a documented exit code (see `booktr --help`).

use clap::Parser;

use booktr::cli::{Cli, Command};
use booktr::exit::{ExitCode, code_for};

fn main() {
    let cli = Cli::parse();
    let level = match cli.verbose {
        0 => "warn",
        1 => "info",
        _ => "debug",
    };
    // Colours only on a terminal without NO_COLOR (log lines sent to a file carry no ANSI
    // code); a write error (stderr a closed pipe) is dropped instead of reported on stderr.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(booktr::term::stderr_colour())
        .log_internal_errors(false)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("BOOKTR_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(format!("booktr={level}"))),
        )
        .with_target(false)
        .init();
    if matches!(
        &cli.command,
        Command::Run(_) | Command::Plan(_) | Command::Experiment(_)
    ) {
        booktr::tokens::warm_up();
    }
    // Every error about a campaign names its file (`run` names the file it resolved a book to).
    use booktr::commands::{self as cmd, naming_campaign as named};
    let result = match &cli.command {
        Command::Init(a) => cmd::init::run(a),
        Command::Run(a) => cmd::run::run(a),
        Command::Plan(a) => named(&a.campaign.campaign, cmd::plan::run(a)),
        Command::Status(a) => named(&a.campaign.campaign, cmd::status::run(a)),
        Command::Approve(a) => named(&a.campaign.campaign, cmd::approve::run(a)),
        Command::Validate(a) => match &a.campaign {
            Some(file) => named(file, cmd::validate::run(a)),
            None => cmd::validate::run(a),
        },
        Command::Experiment(a) => named(&a.campaign.campaign, cmd::experiment::run(a)),
        Command::Export(a) => named(&a.campaign.campaign, cmd::export::run(a)),
        Command::Import(a) => named(&a.campaign.campaign, cmd::import::run(a)),
        Command::Explain(a) => named(&a.campaign.campaign, cmd::explain::run(a)),
        Command::Qa(a) => {
            let file = match &a.action {
                booktr::cli::QaAction::Dismiss(m)
                | booktr::cli::QaAction::Confirm(m)
                | booktr::cli::QaAction::Unmark(m) => m.campaign.clone(),
            };
            named(&file, cmd::qa::run(a))
        }
    };
    let code = match result {
        Ok(code) => code,
        Err(e) => {
            // Not std's eprintln!, which panics when stderr is a closed pipe.
            booktr::term::err(format_args!("error: {e:#}\n"));
            code_for(&e)
        }
    };
    // Output the user asked for that could not be written (not a closed pipe: that is the
    // reader's choice) makes a successful command a failure.
    let code = match booktr::term::stdout_failed() {
        Some(e) if code == ExitCode::Ok => {
            booktr::term::err(format_args!("error: cannot write to stdout: {e}\n"));
            ExitCode::Failed
        }
        _ => code,
    };
    std::process::exit(code as i32);
}
