//! Command-line interface (clap derive). One subcommand, one function in the commands module.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::exit::EXIT_CODES_HELP;
use crate::llm::ProviderKind;

/// Translate whole Markdown books with LLMs: a Manager with Glossary, Translation and
/// Proofreading agents, checkpoints that resume without paying twice, and reports editors can
/// act on.
#[derive(Debug, Parser)]
#[command(name = "booktr", version, about, after_help = EXIT_CODES_HELP)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// More log output on stderr (-v info, -vv debug).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run (or resume) a translation campaign.
    #[command(after_help = EXIT_CODES_HELP)]
    Run(RunArgs),
    /// Offline dry run: units per chapter, agent graph, the Manager's plan, estimated tokens
    /// and cost per agent, and what a resume would send. No key, no request.
    #[command(after_help = EXIT_CODES_HELP)]
    Plan(PlanArgs),
    /// Show a campaign's progress from its saved state (no model call).
    #[command(after_help = EXIT_CODES_HELP)]
    Status(StatusArgs),
    /// Record an editor's approval at a gate (campaign key `review`), so the next `run` goes on:
    /// `--stage glossary` takes the edited review CSV and brief from the report folder;
    /// `--stage revisions` chooses which proposed units are revised.
    #[command(after_help = EXIT_CODES_HELP)]
    Approve(ApproveArgs),
    /// Re-run every QA check on a campaign's current output files (recording hand edits), or on
    /// translations made elsewhere (`--source` and `--target`). Exit 0: no error finding;
    /// 1: error findings; 2: usage error.
    #[command(after_help = EXIT_CODES_HELP)]
    Validate(ValidateArgs),
    /// Export a campaign for CAT tools and termbases: `xliff` (XLIFF 2.0: one <file> per
    /// chapter, one <unit> per translation unit, inline code as <ph>/<pc>, QA findings as
    /// <note>), `tmx` (TMX 1.4b: every translated unit pair), `tbx` or `csv`/`tsv` (the
    /// termbase with each entry's origin; CSV cells are formula-safe). No model call.
    #[command(after_help = EXIT_CODES_HELP)]
    Export(ExportArgs),
    /// Import into a campaign: an edited XLIFF 2 file (changed targets become human edits,
    /// are checked by QA and written to the output chapters; a later `run` keeps them) or a
    /// TMX memory (units not yet translated whose source it holds get its translation, with
    /// no model call). Glossaries (CSV, TSV, TBX) go in the campaign's `glossaries` instead.
    /// Exit 1 when an imported unit has an error finding.
    #[command(after_help = EXIT_CODES_HELP)]
    Import(ImportArgs),
    /// Measure the design against the naive approach on the same book: run the orchestration
    /// (as `run`) and the single-agent baseline (as `run --mode single-agent`), judge every unit
    /// blind with a pairwise LLM judge, compute metrics and chrF against `reference_dir`, and
    /// write `<report_dir>/<campaign>/<timestamp>/evidence.json` with acceptance gates
    /// (`<report_dir>/latest.json` points to it) and a comparison section in report.html.
    /// Resumable. Exit 0: every gate true; 1: some gate false; 3: the orchestration arm waits
    /// at an approval gate.
    #[command(after_help = EXIT_CODES_HELP)]
    Experiment(ExperimentArgs),
    /// Explain one unit from the files on disk (no model call): its source fingerprint, model
    /// and prompt version, the glossary entries its prompts carried (with origin) and the brief
    /// hash, every candidate text with its findings, which one is kept and why, and whether
    /// the text came from a model, a translation memory or an editor. Exit 0; 2: unknown unit
    /// (the message suggests close ids) or no saved state.
    #[command(after_help = EXIT_CODES_HELP)]
    Explain(ExplainArgs),
    /// Mark QA findings on the final texts (ids from `findings-review.csv` or report.json):
    /// `dismiss` (a false positive: it no longer counts toward the status or exit code and
    /// sends no revision) or `confirm` (an error). Marks are journaled and hold while the
    /// unit's text and the finding's evidence are unchanged. Exit 2 for an unknown id.
    #[command(after_help = EXIT_CODES_HELP)]
    Qa(QaArgs),
}

/// `booktr qa`.
#[derive(Debug, Args)]
pub struct QaArgs {
    #[command(subcommand)]
    pub action: QaAction,
}

/// What `booktr qa` does.
#[derive(Debug, Subcommand)]
pub enum QaAction {
    /// Dismiss findings as false positives.
    Dismiss(MarkArgs),
    /// Confirm findings as errors.
    Confirm(MarkArgs),
    /// Remove the marks of findings.
    Unmark(MarkArgs),
}

/// Arguments of `booktr qa dismiss|confirm|unmark`.
#[derive(Debug, Args)]
pub struct MarkArgs {
    /// The campaign file (TOML).
    pub campaign: PathBuf,
    /// Finding ids (12 hex digits).
    #[arg(required = true, num_args = 1.., value_name = "ID")]
    pub ids: Vec<String>,
    /// The editor's note, kept with the mark.
    #[arg(long, value_name = "TEXT", default_value = "")]
    pub note: String,
}

/// Which pipeline `booktr run` uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Mode {
    /// The Manager with Glossary, Translation and Proofreading agents.
    #[default]
    Orchestration,
    /// The baseline: one agent in one growing conversation (no Glossary agent, proofreading or
    /// Manager); stops with "context exhausted at unit N" when it outgrows max_context_tokens.
    SingleAgent,
}

/// Flags shared by commands that resolve a campaign.
#[derive(Debug, Args, Clone)]
pub struct CampaignArgs {
    /// The campaign file (TOML). Paths inside it are relative to it.
    pub campaign: PathBuf,
    /// Provider: `openai` (any OpenAI-compatible endpoint), `anthropic` (the Anthropic Messages
    /// API) or `pseudo` (offline rehearsal).
    #[arg(long, value_parser = parse_provider)]
    pub provider: Option<ProviderKind>,
    /// Model name (overrides `[provider] model`).
    #[arg(long)]
    pub model: Option<String>,
    /// Base URL of an OpenAI-compatible API, e.g. http://localhost:11434/v1.
    #[arg(long)]
    pub base_url: Option<String>,
}

fn parse_provider(s: &str) -> Result<ProviderKind, String> {
    s.parse()
}

#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub campaign: CampaignArgs,
    /// Most model calls at once (overrides `concurrency`).
    #[arg(long)]
    pub concurrency: Option<usize>,
    /// Start over: move existing state aside and translate everything again.
    #[arg(long)]
    pub fresh: bool,
    /// After a change of provider or model: translate again in a new state beside the old one
    /// (kept for comparison) instead of refusing.
    #[arg(long, conflicts_with = "fresh")]
    pub retranslate: bool,
    /// Overwrite output chapters edited by hand with the model translations (by default hand
    /// edits are recorded and kept). Recorded edits stay in the journal's history.
    #[arg(long)]
    pub force: bool,
    /// Also write `<out_dir>/bilingual/<chapter>.md` (each source block followed by its
    /// translation, code once) and a bilingual view in report.html (as `bilingual = true`).
    #[arg(long)]
    pub bilingual: bool,
    /// Send the Translation requests of each stage as one batch to the provider's batch API
    /// (OpenAI-compatible `/batches`, Anthropic Message Batches): cheaper, answered within
    /// 24 h. The batch id is saved, so a re-run polls the same batch; requests the batch does
    /// not answer are sent as normal calls.
    #[arg(long)]
    pub batch: bool,
    /// Print a JSON summary as the last line of stdout.
    #[arg(long)]
    pub json: bool,
    /// `orchestration` (the Manager and its agents) or `single-agent` (the baseline: one agent in
    /// one growing conversation, with its own state under `<state_dir>/single-agent/` and its
    /// chapters under `<out_dir>/single-agent/`).
    #[arg(long, value_enum, default_value_t = Mode::Orchestration)]
    pub mode: Mode,
    /// When stderr is not a terminal (a log file, CI): print a plain progress line every
    /// SECONDS (default 30). On a terminal a live line is drawn instead.
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds)]
    pub progress_every: Option<f64>,
    /// Budget cap in the `[pricing]` currency (overrides `[pricing] max_cost`): stop cleanly,
    /// with exit code 4, before a request would take the campaign's cost (all runs) over it.
    /// Needs a `[pricing]` table. With --batch the cap applies to each batch as a whole.
    #[arg(long, value_name = "AMOUNT")]
    pub max_cost: Option<f64>,
}

fn parse_seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.1 => Ok(v),
        _ => Err(format!("`{s}` is not a number of seconds of at least 0.1")),
    }
}

#[derive(Debug, Args)]
pub struct ExperimentArgs {
    #[command(flatten)]
    pub campaign: CampaignArgs,
    /// Model of the blinded pairwise judge (default: the campaign's model); same provider and
    /// endpoint as the translations.
    #[arg(long)]
    pub judge_model: Option<String>,
    /// Most model calls at once (overrides `concurrency`).
    #[arg(long)]
    pub concurrency: Option<usize>,
    /// Print a JSON summary as the last line of stdout.
    #[arg(long)]
    pub json: bool,
}

/// What `approve` approves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ApproveStage {
    /// The termbase (glossary-review.csv) and the book brief (brief.md).
    Glossary,
    /// The units proposed for revision.
    Revisions,
}

#[derive(Debug, Args)]
pub struct ApproveArgs {
    #[command(flatten)]
    pub campaign: CampaignArgs,
    /// The gate to approve.
    #[arg(long, value_enum)]
    pub stage: ApproveStage,
    /// Revisions: approve only these units (ids as listed by `status`).
    #[arg(long, num_args = 1.., value_name = "UNIT")]
    pub only: Vec<String>,
    /// Revisions: approve all proposed units except these (they keep their translation).
    #[arg(long, num_args = 1.., value_name = "UNIT")]
    pub reject: Vec<String>,
    /// Revisions: decide only the units of this chapter (its key, path or file name;
    /// repeatable); the other chapters' units keep waiting at the gate.
    #[arg(long, value_name = "NAME")]
    pub chapter: Vec<String>,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    #[command(flatten)]
    pub campaign: CampaignArgs,
    /// `xliff` (2.0), `xliff12` (XLIFF 1.2), `po` (gettext, one message per Markdown block),
    /// `tmx`, `tbx`, `csv` or `tsv`.
    #[arg(long, value_parser = parse_format)]
    pub format: crate::interchange::Format,
    /// Where to write (default `<name>/export/<name>.<ext>` beside the campaign file; `-` for
    /// stdout).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    #[command(flatten)]
    pub campaign: CampaignArgs,
    /// The file to import: `.xlf`/`.xliff` (XLIFF 2 or 1.2), `.po` (gettext) or `.tmx`; other
    /// names are recognised by content.
    pub file: PathBuf,
    /// Override the detected format (`xliff`, `xliff12`, `po` or `tmx`).
    #[arg(long, value_parser = parse_format)]
    pub format: Option<crate::interchange::Format>,
    /// Print a JSON summary as the last line of stdout.
    #[arg(long)]
    pub json: bool,
}

fn parse_format(s: &str) -> Result<crate::interchange::Format, String> {
    s.parse()
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    #[command(flatten)]
    pub campaign: CampaignArgs,
    /// Print the summary as JSON on stdout.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// The campaign file. Omit it to validate files made elsewhere with --source/--target.
    #[arg(required_unless_present_all = ["source", "target"])]
    pub campaign: Option<PathBuf>,
    /// Source chapter file, or a folder of `.md` chapters (paired with the target by file name).
    #[arg(long, requires_all = ["target", "source_lang", "target_lang"], conflicts_with = "campaign")]
    pub source: Option<PathBuf>,
    /// Translated chapter file, or a folder of them.
    #[arg(long, requires = "source")]
    pub target: Option<PathBuf>,
    /// A house-style glossary: CSV/TSV (`source,target,note[,forbidden]`) or TBX; repeatable.
    #[arg(long)]
    pub glossary: Vec<PathBuf>,
    #[arg(long)]
    pub source_lang: Option<String>,
    #[arg(long)]
    pub target_lang: Option<String>,
    /// With --source/--target: unit size for pairing, in characters (smaller units localise
    /// findings better).
    #[arg(long, default_value_t = 4000)]
    pub max_unit_chars: usize,
    /// Where to write report.json/md/html (default: `validation` beside the target).
    #[arg(long)]
    pub report_dir: Option<PathBuf>,
    /// Print the summary as JSON on stdout.
    #[arg(long)]
    pub json: bool,
    /// With --source/--target: `keep` (default: code blocks byte for byte) or `translate`
    /// (only comments in code blocks may differ), as the campaign key `code_comments`.
    #[arg(long, value_name = "keep|translate")]
    pub code_comments: Option<String>,
}

#[derive(Debug, Args)]
pub struct PlanArgs {
    #[command(flatten)]
    pub campaign: CampaignArgs,
    /// Print the plan as JSON on stdout.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ExplainArgs {
    #[command(flatten)]
    pub campaign: CampaignArgs,
    /// The unit id (`<chapter key>-<index>`, e.g. `chapter01-007`), as `status` and the
    /// report list them.
    pub unit: String,
    /// Print the explanation as JSON (schema `booktr::commands::explain::Explanation`,
    /// with `schema_version`) on stdout.
    #[arg(long)]
    pub json: bool,
}
