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
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("BOOKTR_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(format!("booktr={level}"))),
        )
        .with_target(false)
        .init();
    let result = match &cli.command {
        Command::Run(a) => booktr::commands::run::run(a),
        Command::Plan(a) => booktr::commands::plan::run(a),
        Command::Status(a) => booktr::commands::status::run(a),
        Command::Approve(a) => booktr::commands::approve::run(a),
        Command::Validate(a) => booktr::commands::validate::run(a),
        Command::Experiment(a) => booktr::commands::experiment::run(a),
        Command::Export(a) => booktr::commands::export::run(a),
        Command::Import(a) => booktr::commands::import::run(a),
    };
    let code = match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            code_for(&e)
        }
    };
    std::process::exit(code as i32);
}

#[allow(dead_code)]
fn _exit_codes_are_stable() {
    let _ = ExitCode::Ok;
}
