//! One function per subcommand. Each takes its parsed arguments and returns the exit code, or
//! an error (mapped to an exit code by [`crate::exit::code_for`]).

pub mod approve;
pub mod experiment;
pub mod explain;
pub mod export;
pub mod import;
pub mod init;
pub mod plan;
pub mod qa;
pub mod rehearsal;
pub mod run;
pub mod status;
pub mod validate;

use std::path::Path;

use crate::cli::CampaignArgs;
use crate::config::{Overrides, Plan};
use crate::exit::ExitCode;

/// `result` of a command about the campaign in `file`, its error naming that file: an error
/// whose message does not already name it (by its file name) gets the path as typed in front
/// (`campaigns/x.toml: cannot read chapter …`), so that every error about a campaign says
/// which campaign. The error chain is kept, so the exit code is unchanged
/// ([`crate::exit::code_for`]).
pub fn naming_campaign(file: &Path, result: anyhow::Result<ExitCode>) -> anyhow::Result<ExitCode> {
    result.map_err(|e| {
        let name = file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        // A folder given as the campaign is named by the loader's own message (with the
        // campaign files beside it), `.` included, which has no file name.
        if file.is_dir() || !name.is_empty() && format!("{e:#}").contains(&name) {
            e
        } else {
            e.context(file.display().to_string())
        }
    })
}

/// Resolves the campaign file with the command-line overrides.
pub fn plan(
    args: &CampaignArgs,
    concurrency: Option<usize>,
) -> Result<Plan, crate::exit::UsageError> {
    Plan::load(
        &args.campaign,
        &Overrides {
            provider: args.provider,
            model: args.model.clone(),
            base_url: args.base_url.clone(),
            concurrency,
        },
    )
}

/// The lines saying which chapter files the campaign's directories and globs gave (one per
/// such entry, naming at most `max_names` files; see [`crate::config::ChapterEntry::describe`]),
/// followed by a blank line; empty when every entry is a plain file.
pub fn chapter_source_lines(plan: &Plan, max_names: usize) -> Vec<String> {
    let mut lines: Vec<String> = plan
        .chapter_entries
        .iter()
        .filter(|e| e.kind != crate::config::EntryKind::File)
        .map(|e| format!("chapters: {}", e.describe(max_names)))
        .collect();
    if let Some(site) = &plan.site {
        lines.extend(site.notes.iter().map(|n| format!("  note: {n}")));
    }
    if !lines.is_empty() {
        lines.push(String::new());
    }
    lines
}
