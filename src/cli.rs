//! Command-line interface (clap derive). One subcommand, one function in the commands module.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::exit::EXIT_CODES_HELP;
use crate::llm::ProviderKind;

/// Translate whole Markdown books with LLMs.
///
/// A Manager with Glossary, Translation and Proofreading agents, checkpoints that resume
/// without paying twice, and reports editors can act on. Start with `booktr init BOOK --to
/// LANG`, or translate a book in one step with `booktr run BOOK --to LANG`.
#[derive(Debug, Parser)]
#[command(name = "booktr", version, about, after_help = EXIT_CODES_HELP)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// More log output on stderr (-v info, -vv debug).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
}

/// The subcommands. Each doc comment's first line is the command's one-line `about` (what
/// `booktr --help` lists); the rest is its `long_about` (`booktr help CMD`, `booktr CMD
/// --help`), which ends with the exit codes the command uses.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Write a campaign file for a book folder or file (layout and source language detected).
    ///
    /// Detects the layout of PATH (default: the current folder): an mdBook (`book.toml`,
    /// `SUMMARY.md`), an MkDocs site (`mkdocs.yml`), a Docusaurus project (`docs/` beside a
    /// `docusaurus.config.*`), a folder of Markdown files or Jupyter notebooks, or one file. It
    /// detects the source language from the chapters' prose (or takes --from), and writes a
    /// commented campaign file beside the book (`<book>-<lang>.toml`, or --file) that names only
    /// what differs from the defaults. Then it prints the next two commands: `booktr plan FILE`
    /// and `booktr run FILE`. An existing file is never overwritten. No model call.
    #[command(after_help = crate::exit::INIT_EXIT_CODES)]
    Init(InitArgs),
    /// Run or resume a translation campaign (a campaign file, or a book with --to).
    ///
    /// Runs the Manager with its Glossary, Translation and Proofreading agents until every unit
    /// is translated, reviewed and written, or resumes where the last run stopped without paying
    /// twice for finished work. PATH is a campaign file, or a book folder or file with --to
    /// LANG: then `booktr init` writes the campaign file first (or reuses the one it wrote
    /// before) and says where it went. The last line on stderr gives the status: complete,
    /// needs_review, incomplete, awaiting_approval, budget_reached or interrupted.
    #[command(after_help = crate::exit::RUN_EXIT_CODES)]
    Run(RunArgs),
    /// Offline dry run: units, the Manager's plan, calls, tokens and cost per agent.
    ///
    /// Shows the units per chapter, the agent graph, the Manager's plan, the estimated calls,
    /// tokens and cost per agent (with a low/high range), and what a resume would send. Needs no
    /// key and sends no request.
    #[command(after_help = crate::exit::PLAN_EXIT_CODES)]
    Plan(PlanArgs),
    /// Show a campaign's status and progress from its saved state (no model call).
    ///
    /// Prints the status word (complete, needs_review, incomplete, awaiting_approval,
    /// budget_reached, or "not started" for a campaign never run), the stage, units, tokens,
    /// findings and the last error, and, unless it is complete, a `next:` line with the
    /// command that continues it (for needs_review: the report to read). The exit code does
    /// not depend on the status: read it from the output (`--json`: `status`), or use
    /// `--check`, a CI gate whose exit code says whether the translation is current.
    #[command(after_help = crate::exit::STATUS_EXIT_CODES)]
    Status(StatusArgs),
    /// Record an editor's approval at a gate (campaign key `review`) so `run` goes on.
    ///
    /// `--stage glossary` takes the edited review CSV and brief from the report folder;
    /// `--stage revisions` chooses which proposed units are revised.
    #[command(after_help = crate::exit::APPROVE_EXIT_CODES)]
    Approve(ApproveArgs),
    /// Re-run every QA check on a campaign's outputs, or on files made elsewhere.
    ///
    /// With a campaign file: checks its current output files, recording hand edits first (a
    /// later `run` keeps them), and writes the report to the campaign's report folder. With
    /// `--source` and `--target`: checks translations made elsewhere (chapters paired by file
    /// name) and writes the report under `--report-dir` (default: `booktr-validate/<name>` in
    /// the current folder, or in the system's temporary folder when the current folder is
    /// inside the source or target; it prints the folder); never into the book. Their
    /// languages are detected from the prose unless --source-lang/--target-lang give them.
    /// The status words are the ones `run` and `status` use.
    #[command(after_help = crate::exit::VALIDATE_EXIT_CODES)]
    Validate(ValidateArgs),
    /// Export a campaign for CAT tools and termbases (XLIFF, PO, TMX, TBX, CSV).
    ///
    /// `xliff` (XLIFF 2.0: one <file> per chapter, one <unit> per translation unit, inline
    /// code as <ph>/<pc>, QA findings as <note>), `xliff12`, `po` (gettext, the messages
    /// mdbook-xgettext extracts), `tmx` (TMX 1.4b: every translated unit pair), `tbx` or
    /// `csv`/`tsv` (the termbase with each entry's origin; CSV cells are formula-safe). No
    /// model call.
    #[command(after_help = crate::exit::EXPORT_EXIT_CODES)]
    Export(ExportArgs),
    /// Import edited XLIFF or PO files (human edits) or a TMX memory into a campaign.
    ///
    /// An edited XLIFF 2 or 1.2 file or PO catalog: changed targets become human edits, are
    /// checked by QA and written to the output chapters; a later `run` keeps them. A TMX
    /// memory: units not yet translated whose source it holds get its translation, with no
    /// model call. Glossaries (CSV, TSV, TBX) go in the campaign's `glossaries` instead.
    #[command(after_help = crate::exit::IMPORT_EXIT_CODES)]
    Import(ImportArgs),
    /// Measure the orchestration against a single-agent baseline on the same book.
    ///
    /// Runs the orchestration (as `run`) and the single-agent baseline (as `run --mode
    /// single-agent`), judges every unit blind with a pairwise LLM judge, computes metrics and
    /// chrF against `reference_dir`, and writes
    /// `<report_dir>/<campaign>/<timestamp>/evidence.json` with acceptance gates
    /// (`<report_dir>/latest.json` points to it) and a comparison section in report.html.
    /// Resumable.
    #[command(after_help = crate::exit::EXPERIMENT_EXIT_CODES)]
    Experiment(ExperimentArgs),
    /// Explain one unit's history from the files on disk (no model call).
    ///
    /// Its source fingerprint, model and prompt version, the glossary entries its prompts
    /// carried (with origin) and the brief hash, every candidate text with its findings, which
    /// one is kept and why, and whether the text came from a model, a translation memory or an
    /// editor.
    #[command(after_help = crate::exit::EXPLAIN_EXIT_CODES)]
    Explain(ExplainArgs),
    /// Dismiss or confirm QA findings on the final texts (false positives, errors).
    ///
    /// Ids come from `findings-review.csv` or report.json. `dismiss` (a false positive: it no
    /// longer counts toward the status or exit code and sends no revision) or `confirm` (an
    /// error). Marks are journaled and hold while the unit's text and the finding's evidence
    /// are unchanged.
    #[command(after_help = crate::exit::QA_EXIT_CODES)]
    Qa(QaArgs),
}

/// `booktr init`.
#[derive(Debug, Args, Clone)]
pub struct InitArgs {
    /// The book: a folder (mdBook, MkDocs, Docusaurus, or Markdown files or notebooks) or one
    /// Markdown or notebook file.
    #[arg(default_value = ".")]
    pub path: PathBuf,
    #[command(flatten)]
    pub book: BookArgs,
    /// Where to write the campaign file (default: `<book>-<lang>.toml` beside the book).
    #[arg(long, value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// Model name for the provider preset (written as `[provider] model`).
    #[arg(long, requires = "preset")]
    pub model: Option<String>,
    /// Base URL of the preset's OpenAI-compatible server, e.g. http://localhost:8081/v1
    /// (written as `[provider] base_url`). Without it the preset's default is written as a
    /// commented line, to show which address will be called.
    #[arg(long, value_name = "URL", requires = "preset")]
    pub base_url: Option<String>,
}

/// What `init` (and `run` on a book) needs to know of a book besides its path.
#[derive(Debug, Args, Clone, Default)]
pub struct BookArgs {
    /// The language to translate into (BCP 47, e.g. `zh`, `de`, `pt-BR`).
    #[arg(long, value_name = "LANG")]
    pub to: Option<String>,
    /// The book's language (default: detected from its prose).
    #[arg(long, value_name = "LANG")]
    pub from: Option<String>,
    /// A known service (`openai`, `anthropic`, `deepseek`, `qwen`, `ollama`, `llamacpp`, ...):
    /// written as `[provider] preset`, with --model. Without it the campaign is an offline
    /// rehearsal with the pseudo provider.
    #[arg(long, value_name = "NAME", requires = "model")]
    pub preset: Option<String>,
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
    /// The baseline a user writes instead: one request per unit with the same system prompt
    /// (guide and house glossary), nothing carried between units; no Glossary agent, QA,
    /// repair, revision or Manager.
    StatelessLoop,
}

/// Flags shared by commands that resolve a campaign.
#[derive(Debug, Args, Clone)]
pub struct CampaignArgs {
    /// The campaign file (TOML; paths inside it are relative to it). `run` also takes a book
    /// folder or a Markdown file with --to (see `booktr init`).
    #[arg(value_name = "CAMPAIGN")]
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

fn parse_provider(s: &str) -> Result<ProviderKind, crate::util::UnknownValue> {
    s.parse()
}

impl CampaignArgs {
    /// `booktr <sub> <campaign>` with the provider flags this command was given, so that a
    /// hint to resume or look again names the same campaign state (the flags are part of its
    /// fingerprint). Arguments are quoted for POSIX shells by `shlex`; one it cannot quote (a
    /// NUL byte) is shown as it is.
    pub fn command(&self, sub: &str) -> String {
        let campaign = self.campaign.display().to_string();
        let mut words: Vec<&str> = vec!["booktr", sub, &campaign];
        if let Some(p) = self.provider {
            words.extend(["--provider", p.as_str()]);
        }
        if let Some(m) = &self.model {
            words.extend(["--model", m]);
        }
        if let Some(u) = &self.base_url {
            words.extend(["--base-url", u]);
        }
        shlex::try_join(words.iter().copied()).unwrap_or_else(|_| words.join(" "))
    }
}

#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub campaign: CampaignArgs,
    /// A book folder or file instead of a campaign file: `--to` names the language, and the
    /// campaign file `booktr init` would write is written (or reused) first.
    #[command(flatten)]
    pub book: BookArgs,
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

/// A `--progress-every` value that is not a number of seconds of at least 0.1.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a number of seconds of at least 0.1")]
pub struct NotSeconds(String);

fn parse_seconds(s: &str) -> Result<f64, NotSeconds> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.1 => Ok(v),
        _ => Err(NotSeconds(s.to_string())),
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
    /// The termbase (glossary-review.csv) and, with `brief = true`, the book brief (brief.md).
    Glossary,
    /// The units proposed for revision.
    Revisions,
}

#[derive(Debug, Args)]
pub struct ApproveArgs {
    #[command(flatten)]
    pub campaign: CampaignArgs,
    /// The gate to approve.
    #[arg(long, value_enum, required_unless_present = "stale")]
    pub stage: Option<ApproveStage>,
    /// Stale edits: decide the stale edits of these units (a paragraph you edited whose
    /// source changed since; `status` and the report list them), with `--keep`.
    #[arg(long, num_args = 1.., value_name = "UNIT", conflicts_with = "stage", requires = "keep")]
    pub stale: Vec<String>,
    /// Stale edits: `editor` keeps your text for the new source; `model` takes the model's
    /// translation of the new source.
    #[arg(long, value_enum, requires = "stale")]
    pub keep: Option<KeepChoice>,
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

/// Whose text a stale edit keeps (`approve --stale UNIT --keep …`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum KeepChoice {
    /// The editor's text stands for the new source.
    Editor,
    /// The model's translation of the new source replaces it.
    Model,
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
    /// `--format po` only: how machine translations are marked. `fuzzy` (the default): `#,
    /// fuzzy`, so mdbook-gettext hides them from the built book (it shows the source text)
    /// until an editor clears the flag. `final`: not fuzzy, so the built book shows them at
    /// once, unreviewed. Human edits are never fuzzy.
    #[arg(long, value_name = "fuzzy|final", value_parser = parse_machine_text)]
    pub machine_text: Option<crate::interchange::po::MachineText>,
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

fn parse_format(s: &str) -> Result<crate::interchange::Format, crate::util::UnknownValue> {
    s.parse()
}

fn parse_machine_text(
    s: &str,
) -> Result<crate::interchange::po::MachineText, crate::util::UnknownValue> {
    s.parse()
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    #[command(flatten)]
    pub campaign: CampaignArgs,
    /// Print the summary as JSON on stdout.
    #[arg(long)]
    pub json: bool,
    /// A gate for CI: exit 0 when every source block has a current translation, the outputs
    /// are written and no error finding remains, 1 otherwise (listing what is not current).
    /// No model call and no key.
    #[arg(long)]
    pub check: bool,
}

#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// The campaign file. Omit it to validate files made elsewhere with --source/--target.
    #[arg(required_unless_present_all = ["source", "target"])]
    pub campaign: Option<PathBuf>,
    /// Source chapter file, or a folder of `.md` chapters (paired with the target by file name).
    #[arg(long, requires = "target", conflicts_with = "campaign")]
    pub source: Option<PathBuf>,
    /// Translated chapter file, or a folder of them.
    #[arg(long, requires = "source")]
    pub target: Option<PathBuf>,
    /// A house-style glossary: CSV/TSV (`source,target,note[,forbidden]`) or TBX; repeatable.
    #[arg(long)]
    pub glossary: Vec<PathBuf>,
    /// With --source/--target: the language of the source chapters (BCP 47, e.g. `en`).
    /// Default: detected from their prose; when it cannot be told, the command says to pass it.
    #[arg(long, value_name = "LANG", requires = "source")]
    pub source_lang: Option<String>,
    /// With --source/--target: the language of the translations (BCP 47, e.g. `zh`, `pt-BR`).
    /// Default: detected from their prose; when it cannot be told, the command says to pass it.
    #[arg(long, value_name = "LANG", requires = "source")]
    pub target_lang: Option<String>,
    /// With --source/--target: unit size for pairing, in characters (smaller units localise
    /// findings better).
    #[arg(long, default_value_t = 4000)]
    pub max_unit_chars: usize,
    /// With --source/--target: where to write report.json/md/html (default:
    /// `booktr-validate/<source name>` in the current folder, or in the system's temporary
    /// folder when the current folder is inside the source or target; the command prints the
    /// folder). Never the book's own folders unless named here. A campaign writes to its
    /// `report_dir`.
    #[arg(long, value_name = "DIR", requires = "source")]
    pub report_dir: Option<PathBuf>,
    /// Print the summary as JSON on stdout.
    #[arg(long)]
    pub json: bool,
    /// With --source/--target: `translate` (default: comments in code blocks may differ, as
    /// translators of a published edition translate them) or `keep` (code blocks byte for
    /// byte), as the campaign key `code_comments`.
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

#[cfg(test)]
mod tests {

    #[test]
    fn a_resume_hint_dropped_the_provider_flags() {
        let a = CampaignArgs {
            campaign: "my book.toml".into(),
            provider: Some(ProviderKind::Openai),
            model: Some("qwen2.5".into()),
            base_url: Some("http://localhost:8080/v1".into()),
        };
        assert_eq!(
            a.command("run"),
            "booktr run 'my book.toml' --provider openai --model qwen2.5 --base-url http://localhost:8080/v1"
        );
        let plain = CampaignArgs {
            campaign: "book.toml".into(),
            provider: None,
            model: None,
            base_url: None,
        };
        assert_eq!(plain.command("status"), "booktr status book.toml");
    }

    use super::*;
    use clap::CommandFactory;

    /// `booktr --help` lists one line per command (clap, cargo and git do so), the detail is
    /// under `booktr help CMD`, and every command's own help ends with the exit codes it uses
    /// (0 and 2 at least, each on a line of its own).
    #[test]
    fn every_command_has_a_one_line_about_and_its_exit_codes() {
        let mut cli = Cli::command();
        cli.build();
        let mut seen = 0;
        for sub in cli.get_subcommands().filter(|s| s.get_name() != "help") {
            let name = sub.get_name();
            let about = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
            assert!(!about.is_empty(), "{name} has no about");
            assert!(
                !about.contains('\n') && about.chars().count() <= 90,
                "{name}: the about is one short line: {about:?}"
            );
            let long = sub
                .get_long_about()
                .map(|a| a.to_string())
                .unwrap_or_default();
            assert!(long.len() > about.len(), "{name} has no long_about");
            let after = sub
                .get_after_help()
                .map(|a| a.to_string())
                .unwrap_or_default();
            assert!(after.starts_with("Exit codes:"), "{name}: {after:?}");
            for code in ["0", "2"] {
                assert!(
                    after.contains(&format!("\n  {code:<4} ")),
                    "{name} does not document exit code {code}: {after}"
                );
            }
            seen += 1;
        }
        assert_eq!(
            seen, 11,
            "init, run, plan, status, approve, validate, export, import, experiment, explain, qa"
        );
    }

    /// The exit code table of `status` was missing: it now says that the code does not depend
    /// on the campaign's status, and which errors give 2.
    #[test]
    fn status_exit_codes_were_not_documented() {
        let cli = Cli::command();
        let status = cli.find_subcommand("status").expect("status");
        let after = status.get_after_help().expect("exit codes").to_string();
        assert!(
            after.contains("  0    the status was printed, whatever it is"),
            "{after}"
        );
        assert!(after.contains("not started: no saved state yet"), "{after}");
    }
}
