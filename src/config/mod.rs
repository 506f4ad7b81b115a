//! Campaign configuration in two stages: the raw campaign file ([`RawCampaign`], serde, unknown
//! keys rejected) is resolved once into an immutable [`Plan`].
//!
//! Precedence: built-in defaults < campaign file < environment < command-line flags, except
//! `base_url`, where the campaign file (its `base_url`, else its `preset`'s) wins over
//! `OPENAI_BASE_URL` (`ANTHROPIC_BASE_URL` for `kind = "anthropic"`): a campaign that names its
//! endpoint (DeepSeek, a local vLLM) must not be redirected by a variable set for other tools.
//! A `preset` ([`crate::llm::presets`]) fills in the keys the `[provider]` table leaves out.
//! Paths in the file are relative to the file. Nothing here reads chapters or talks to a
//! provider; secrets are never part of a plan (only the *name* of the key's variable is).

mod chapters;
mod raw;
mod settings;
mod style;
pub mod unreadable;

use std::path::{Path, PathBuf};

pub use chapters::{ChapterEntry, EntryKind, MARKDOWN_EXTENSIONS, is_glob};
pub use raw::{Pricing, RawCampaign, RawProvider, RawStyle};
pub use settings::{CodeComments, default_review_marker};
pub use style::{CjkLatinSpace, QuoteStyle, Style, StyleSeverity, default_quotes, is_cjk_target};

use crate::book::segment::DEFAULT_MAX_UNIT_CHARS;
use crate::exit::UsageError;
use crate::lang::Lang;
/// Provider kinds and settings are defined by the providers' layer; re-exported here, where
/// the campaign file is resolved into them.
pub use crate::llm::{ProviderKind, ProviderPlan};

/// Flags from the command line that override the campaign file.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub provider: Option<ProviderKind>,
    pub model: Option<String>,
    pub base_url: Option<String>,
    pub concurrency: Option<usize>,
}

/// A resolved campaign: every default applied, every path absolute, every value checked.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The campaign file as given on the command line (for messages).
    pub campaign_file: PathBuf,
    /// Absolute directory of the campaign file; relative paths resolve against it.
    pub campaign_dir: PathBuf,
    pub name: String,
    pub source_lang: Lang,
    pub target_lang: Lang,
    /// Chapter paths relative to the campaign file, in book order.
    pub chapters: Vec<String>,
    /// House-style glossary paths (CSV, TSV, TBX) relative to the campaign file.
    pub glossaries: Vec<String>,
    /// Translation memory (TMX) paths relative to the campaign file.
    pub memory: Vec<String>,
    /// Seeds (PO, TMX, XLIFF files or translated folders) relative to the campaign file.
    pub seed: Vec<String>,
    /// Whether bilingual chapters and the bilingual report view are written (`bilingual` or
    /// `run --bilingual`).
    pub bilingual: bool,
    /// Optional translation guide (Markdown) relative to the campaign file.
    pub guide: Option<String>,
    /// Unit size limit in characters.
    pub max_unit_chars: usize,
    /// Ceiling on concurrent model calls.
    pub concurrency: usize,
    /// Revision rounds after the first translation (default 1).
    pub revision_rounds: u32,
    /// Whether the Glossary agent is asked for term renderings (campaign key
    /// `agent_glossary`, default true); off, the termbase is the house style alone.
    pub agent_glossary: bool,
    /// Whether the Glossary agent writes the book brief (campaign key `brief`, default false:
    /// measured by `cargo bench --bench quality`, the brief cost tokens and added no chrF++
    /// that the bootstrap interval shows; see docs/src/benchmarks.md, findings 7 and 18).
    pub brief: bool,
    /// Whether Translation requests carry the example exchange (campaign key
    /// `translation_example`, default true; see [`RawCampaign::translation_example`]).
    pub translation_example: bool,
    /// Input budget per request in `o200k_base` tokens (default 32,000).
    pub max_context_tokens: usize,
    /// Whether the Translation prompt carries the whole termbase (see
    /// [`RawCampaign::prompt_layout`]).
    pub full_glossary_prompt: bool,
    /// Neighbour context for the translator, in characters (0: none).
    pub context_chars: usize,
    /// Approval gates that are on (campaign key `review`).
    pub gates: Gates,
    /// Review budget of the Proofreading agent as a share of translation prompt tokens.
    pub proofread_share: f64,
    /// Marker for renderings the translator coins (see [`default_review_marker`]).
    pub review_marker: String,
    pub out_dir: PathBuf,
    pub state_dir: PathBuf,
    pub report_dir: PathBuf,
    pub provider: ProviderPlan,
    /// Prices, when the campaign file gives them.
    pub pricing: Option<Pricing>,
    /// A human translation of the book (chapter files named as the sources), for
    /// `booktr experiment`'s chrF; `None` when the campaign names none.
    pub reference_dir: Option<PathBuf>,
    /// Whether comments in code blocks may be translated (campaign key `code_comments`,
    /// default `keep`).
    pub code_comments: CodeComments,
    /// Whether mechanical faults of a translation are repaired deterministically (campaign
    /// key `repair`: `mechanical`, the default, or `off`); see the `repair` module. Never part
    /// of a unit fingerprint.
    pub repair: bool,
    /// Each `chapters` entry of the campaign file (a file, a directory or a glob) and the
    /// chapter files it gave, so that `plan` and `run` can say which files they took.
    /// [`Plan::chapters`] is their concatenation.
    pub chapter_entries: Vec<ChapterEntry>,
    /// The book layout named by the campaign's `book` (mdBook, MkDocs, Docusaurus), or `None`
    /// for a plain `chapters` list. Its pages are [`Plan::chapters`], in the same order.
    pub site: Option<crate::book::site::Site>,
    /// The house-style lint for the target locale (campaign table `[style]`, see
    /// [`Style::resolve`]); every rule that applies to the target is on by default. Not part
    /// of unit fingerprints: QA is recomputed on load, so changing it re-checks every text
    /// without a model call.
    pub style: Style,
    /// Campaign key `mark_precision_threshold` (default
    /// [`DEFAULT_MARK_PRECISION_THRESHOLD`], 0.5): checks whose precision over the
    /// editor's marks is below it (with at least 10 (`qa::findings::editor_marks::MIN_MARKS`) marks) are
    /// downgraded to warnings for this campaign.
    pub mark_precision_threshold: f64,
    /// Campaign key `mqm_threshold` (default [`DEFAULT_MQM_THRESHOLD`], 10):
    /// MQM penalty points per 1,000 source words a chapter may have and pass.
    pub mqm_threshold: f64,
}

/// Default of the campaign key `mark_precision_threshold`: a check whose precision
/// over the editor's marks (confirmed / marked) is below it, with at least 10 marks, is
/// downgraded to warnings for the campaign. 0.5: a check wrong more often than right.
pub const DEFAULT_MARK_PRECISION_THRESHOLD: f64 = 0.5;

/// Default of the campaign key `mqm_threshold`: at most 10 MQM penalty points per
/// 1,000 source words, i.e. two major errors or ten minor ones per 1,000 words (a quality
/// score of 99 on the 100-point scale of the MQM scoring model, themqm.org, with a reference
/// word count of 1,000). A project choice for technical books, where a broken code block or a
/// lost paragraph (major) matters; set the key per campaign.
pub const DEFAULT_MQM_THRESHOLD: f64 = 10.0;

/// Approval gates (campaign key `review`). Each is off by default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Gates {
    /// Stop after the Glossary stage until the editor approves the termbase and the brief.
    pub glossary: bool,
    /// Stop before each revision round until the editor approves the units to revise.
    pub revisions: bool,
}

impl Gates {
    /// Parses the `review` list. Errors: [`UnknownGate`].
    pub fn parse(names: &[String]) -> Result<Gates, UnknownGate> {
        let mut g = Gates::default();
        for n in names {
            match n.trim() {
                "glossary" => g.glossary = true,
                "revisions" => g.revisions = true,
                other => return Err(UnknownGate(other.to_string())),
            }
        }
        Ok(g)
    }
}

/// A name in the campaign's `review` list that is not a gate; the message (appended after
/// the key's name) lists the gates.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("names the gate `{0}`; the gates are \"glossary\" and \"revisions\"")]
pub struct UnknownGate(pub String);

/// Default review budget of the Proofreading agent: 0, no proofreading. Measured by
/// `cargo bench --bench quality` on both real models (docs/src/benchmarks.md, finding 21): the
/// reviewer added nothing chrF++ or QA measure, restated QA's warnings or invented faults,
/// missed the omissions a reviewer is for, and cost tokens on every run. An editor turns it on
/// with `proofread_share` ([`PROOFREAD_SHARE_WHEN_ON`] is the budget the earlier default gave).
pub const DEFAULT_PROOFREAD_SHARE: f64 = 0.0;

/// The review budget that was the default until finding 21: a fifth of the translation prompt
/// tokens. With Glossary and Manager at a few percent, the agents other than Translation then
/// stay under 30 % of its prompt tokens (the token-economy target). The quality benchmark's
/// `with_proofreading` arm and the sample campaign use it.
pub const PROOFREAD_SHARE_WHEN_ON: f64 = 0.2;

/// Checks a budget cap (`[pricing] max_cost` or `run --max-cost`): a finite amount above
/// zero. Errors: [`BadMaxCost`].
pub fn check_max_cost(cap: f64) -> Result<(), BadMaxCost> {
    if cap.is_finite() && cap > 0.0 {
        Ok(())
    } else {
        Err(BadMaxCost(cap))
    }
}

/// A budget cap that is not a finite amount above zero; the message is meant to follow the
/// key's name (`max_cost is -1; use …`).
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
#[error("is {0}; use an amount above zero in the `[pricing]` currency (e.g. 5.0)")]
pub struct BadMaxCost(pub f64);

/// Default input budget per request, in tokens.
pub const DEFAULT_MAX_CONTEXT_TOKENS: usize = 32_000;

impl Plan {
    /// Whether the campaign runs the Proofreading agent: `proofread_share` above 0 (it is 0,
    /// off, by default: [`DEFAULT_PROOFREAD_SHARE`]).
    pub fn proofreads(&self) -> bool {
        self.proofread_share > 0.0
    }

    /// Reads and resolves `campaign_file` with `overrides` on top.
    ///
    /// Errors ([`UsageError`], exit code 2): unreadable file, TOML syntax or unknown keys (with
    /// line and column from the TOML parser), missing required keys, invalid values, duplicate
    /// chapter file names (they would overwrite each other in `out_dir`).
    pub fn load(campaign_file: &Path, overrides: &Overrides) -> Result<Plan, UsageError> {
        let text = std::fs::read_to_string(campaign_file)
            .map_err(|e| UsageError::new(unreadable::message(campaign_file, &e)))?;
        let raw: RawCampaign = toml::from_str(&text).map_err(|e| {
            let text = e.to_string();
            UsageError::new(format!(
                "campaign file {} is invalid: {}{}",
                campaign_file.display(),
                text.trim_end(),
                type_remedy(&text)
            ))
        })?;
        Self::resolve(campaign_file, raw, overrides)
    }

    /// Resolves an already parsed campaign file; see [`Plan::load`].
    pub fn resolve(
        campaign_file: &Path,
        raw: RawCampaign,
        overrides: &Overrides,
    ) -> Result<Plan, UsageError> {
        let file = campaign_file.display().to_string();
        let err = |key: &str, msg: String| UsageError::new(format!("{file}: `{key}` {msg}"));
        let parent = campaign_file
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let campaign_dir = crate::util::normalize(
            &std::env::current_dir()
                .map_err(|e| UsageError::new(format!("cannot read the current directory: {e}")))?
                .join(parent),
        );

        let name = raw.name.trim().to_string();
        if name.is_empty() || name.contains(['/', '\\']) || name.starts_with('.') {
            return Err(err(
                "name",
                "must be a non-empty name without slashes or a leading dot (it names the default output folders)".into(),
            ));
        }
        let (site, chapter_entries, chapter_files) =
            resolve_chapters(&raw, &campaign_dir, &file, &err)?;
        let limits = Limits::check(&raw, overrides, &err)?;
        let rawp = raw.provider.clone().unwrap_or_default();
        let provider = resolve_provider(&rawp, overrides, &err)?;
        let dir_or = |v: &Option<String>, default: &str| -> PathBuf {
            crate::util::normalize(
                &campaign_dir.join(v.clone().unwrap_or_else(|| format!("{name}/{default}"))),
            )
        };
        let reference_dir = raw
            .reference_dir
            .as_ref()
            .map(|r| crate::util::normalize(&campaign_dir.join(r)));
        let options = Options::check(&raw, &err)?;
        Ok(Plan {
            campaign_file: campaign_file.to_path_buf(),
            out_dir: dir_or(&raw.out_dir, "out"),
            state_dir: dir_or(&raw.state_dir, "state"),
            report_dir: dir_or(&raw.report_dir, "validation"),
            campaign_dir,
            name,
            source_lang: Lang::parse(&raw.source_lang),
            target_lang: Lang::parse(&raw.target_lang),
            chapters: chapter_files,
            glossaries: raw.glossaries,
            memory: raw.memory,
            seed: raw.seed,
            bilingual: raw.bilingual.unwrap_or(false),
            guide: raw.guide,
            max_unit_chars: limits.max_unit_chars,
            concurrency: limits.concurrency,
            revision_rounds: raw.revision_rounds.unwrap_or(1),
            agent_glossary: raw.agent_glossary.unwrap_or(true),
            brief: raw.brief.unwrap_or(false),
            translation_example: raw.translation_example.unwrap_or(true),
            max_context_tokens: limits.max_context_tokens,
            full_glossary_prompt: options.full_glossary_prompt,
            context_chars: raw.context_chars.unwrap_or(1500),
            gates: options.gates,
            pricing: raw.pricing.clone(),
            reference_dir,
            proofread_share: raw
                .proofread_share
                .unwrap_or(DEFAULT_PROOFREAD_SHARE)
                .max(0.0),
            review_marker: raw
                .review_marker
                .clone()
                .filter(|m| !m.trim().is_empty())
                .unwrap_or_else(|| {
                    default_review_marker(&Lang::parse(&raw.target_lang)).to_string()
                }),
            provider,
            code_comments: options.code_comments,
            repair: options.repair,
            chapter_entries,
            site,
            style: options.style,
            mark_precision_threshold: options.mark_precision_threshold,
            mqm_threshold: options.mqm_threshold,
        })
    }

    /// `path` relative to the campaign directory, `/`-separated (what state and reports store).
    pub fn rel(&self, path: &Path) -> String {
        crate::util::relative_to(path, &self.campaign_dir)
    }

    /// `path` as shown to the user: relative to the current directory (never stored), or
    /// as it is when the current directory is the filesystem root (`tmp/book/state` read
    /// from `/` looks like a path under the campaign) or the path lies outside it.
    pub fn show(&self, path: &Path) -> String {
        let cwd = std::env::current_dir().unwrap_or_default();
        if path.is_absolute() && cwd.parent().is_none() {
            return path.display().to_string();
        }
        let rel = crate::util::relative_to(path, &cwd);
        // A path outside the working directory reads better as it is than as `../../…`.
        if path.is_absolute() && rel.starts_with("..") {
            path.display().to_string()
        } else {
            rel
        }
    }

    /// Whether the run is a rehearsal (pseudo provider): every output must say so.
    pub fn is_rehearsal(&self) -> bool {
        self.provider.kind == ProviderKind::Pseudo
    }
}

/// An error on key `key` of the campaign file.
type KeyError<'e> = &'e dyn Fn(&str, String) -> UsageError;

/// A campaign's book site (when `book` is given), chapter entries as written, and chapter
/// files.
type Chapters = (
    Option<crate::book::site::Site>,
    Vec<ChapterEntry>,
    Vec<String>,
);

/// The chapters of a campaign file: its book's site (when `book` is given), the chapter entries
/// as written (directories and globs become files here, so a directory never reaches the
/// reader) and the chapter files. Errors: `book` with `chapters`, neither, an unreadable
/// book, two chapter files with the same name.
fn resolve_chapters(
    raw: &RawCampaign,
    campaign_dir: &Path,
    file: &str,
    err: KeyError<'_>,
) -> Result<Chapters, UsageError> {
    if raw.book.is_some() && !raw.chapters.is_empty() {
        return Err(err(
            "chapters",
            "is given with `book`: the book's table of contents lists its chapters, so remove `chapters` (or `book`)".into(),
        ));
    }
    if raw.chapters.is_empty() && raw.book.is_none() {
        return Err(err(
            "chapters",
            "is empty: list the Markdown files to translate, relative to the campaign file (or name a SUMMARY.md, mkdocs.yml or Docusaurus folder as `book`)"
                .into(),
        ));
    }
    let translated_ids = match raw.heading_ids.as_deref().map(str::trim) {
        None | Some("source") => false,
        Some("translated") => true,
        Some(other) => {
            return Err(err(
                "heading_ids",
                format!(
                    "is `{other}`; use `source` (translated headings keep the source's ids where the site's tool reads them) or `translated` (links are pointed at the translated headings' ids)"
                ),
            ));
        }
    };
    if raw.heading_ids.is_some() && raw.book.is_none() {
        return Err(err(
            "heading_ids",
            "is given without `book`: heading ids follow a site's tool, so name the book's SUMMARY.md, mkdocs.yml or Docusaurus folder as `book` (or remove `heading_ids`)".into(),
        ));
    }
    let site = match &raw.book {
        Some(book) => Some(crate::book::site::Site {
            translated_ids,
            ..crate::book::site::read(campaign_dir, book, &raw.target_lang)
                .map_err(|m| err("book", m.to_string()))?
        }),
        None => None,
    };
    // Directories and globs become files here, so a directory never reaches the reader.
    let chapter_entries = match (&site, &raw.book) {
        (Some(site), Some(book)) => vec![ChapterEntry {
            entry: format!("{book} ({})", site.kind.name()),
            kind: EntryKind::Book,
            files: site.pages.iter().map(|p| p.source.clone()).collect(),
        }],
        _ => chapters::expand(campaign_dir, &raw.chapters, file)?,
    };
    let chapter_files: Vec<String> = chapter_entries
        .iter()
        .flat_map(|e| e.files.iter().cloned())
        .collect();
    let mut seen = std::collections::HashMap::new();
    // A site's chapters keep their folders in the output; their keys are checked there.
    for ch in chapter_files.iter().filter(|_| site.is_none()) {
        let key = crate::book::chapter::chapter_key(
            &Path::new(ch)
                .file_name()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default(),
        );
        if let Some(prev) = seen.insert(key.clone(), ch.clone()) {
            return Err(err(
                "chapters",
                format!(
                    "has two files with the same name ({prev} and {ch}): translated chapters are written to out_dir by file name, so rename one"
                ),
            ));
        }
    }
    Ok((site, chapter_entries, chapter_files))
}

/// The campaign file's sizes and limits, checked.
struct Limits {
    max_unit_chars: usize,
    concurrency: usize,
    max_context_tokens: usize,
}

impl Limits {
    /// Checks the sizes, concurrency, language tags, proofread share and cost cap, in that
    /// order; the first failure is the error.
    fn check(
        raw: &RawCampaign,
        overrides: &Overrides,
        err: KeyError<'_>,
    ) -> Result<Limits, UsageError> {
        let max_unit_chars = raw.max_unit_chars.unwrap_or(DEFAULT_MAX_UNIT_CHARS);
        if max_unit_chars < 200 {
            return Err(err(
                "max_unit_chars",
                format!("is {max_unit_chars}; use at least 200 characters"),
            ));
        }
        let concurrency = overrides.concurrency.or(raw.concurrency).unwrap_or(4);
        if concurrency == 0 || concurrency > 256 {
            return Err(err(
                "concurrency",
                format!("is {concurrency}; use 1 to 256"),
            ));
        }
        // BCP 47 tags from the registry, with the tag meant when one is likely (`cn` → `zh`).
        for (key, tag) in [
            ("source_lang", &raw.source_lang),
            ("target_lang", &raw.target_lang),
        ] {
            crate::lang::check_tag(tag).map_err(|why| err(key, why.to_string()))?;
        }
        // Same code only: zh-Hans → zh-Hant is a real localisation.
        if Lang::parse(&raw.source_lang)
            .code
            .eq_ignore_ascii_case(&Lang::parse(&raw.target_lang).code)
        {
            return Err(err(
                "target_lang",
                format!(
                    "is `{}`, the same language as source_lang `{}`: set the language to translate into (e.g. \"{}\")",
                    raw.target_lang,
                    raw.source_lang,
                    // An example that is not the source language (a new user's zh → zh campaign
                    // was told to write "zh").
                    if Lang::parse(&raw.source_lang)
                        .code
                        .eq_ignore_ascii_case("zh")
                    {
                        "en"
                    } else {
                        "zh"
                    }
                ),
            ));
        }
        if let Some(share) = raw.proofread_share
            && !(0.0..=1.0).contains(&share)
        {
            return Err(err(
                "proofread_share",
                format!("is {share}; use a share between 0 (no review) and 1 (review every unit)"),
            ));
        }
        if let Some(cap) = raw.pricing.as_ref().and_then(|p| p.max_cost)
            && let Err(msg) = check_max_cost(cap)
        {
            return Err(err("max_cost", msg.to_string()));
        }
        let max_context_tokens = raw.max_context_tokens.unwrap_or(DEFAULT_MAX_CONTEXT_TOKENS);
        if max_context_tokens < 2_000 {
            return Err(err(
                "max_context_tokens",
                format!("is {max_context_tokens}; use at least 2000 tokens"),
            ));
        }
        Ok(Limits {
            max_unit_chars,
            concurrency,
            max_context_tokens,
        })
    }
}

/// The campaign file's options that are words or shares, parsed and checked.
struct Options {
    full_glossary_prompt: bool,
    gates: Gates,
    code_comments: CodeComments,
    repair: bool,
    style: Style,
    mark_precision_threshold: f64,
    mqm_threshold: f64,
}

impl Options {
    /// Checks `prompt_layout`, `review`, `code_comments`, `repair`, `style`,
    /// `mark_precision_threshold` and `mqm_threshold`, in that order.
    fn check(raw: &RawCampaign, err: KeyError<'_>) -> Result<Options, UsageError> {
        Ok(Options {
            full_glossary_prompt: match raw.prompt_layout.as_deref() {
                None | Some("relevant") => false,
                Some("full") => true,
                Some(other) => {
                    return Err(err(
                        "prompt_layout",
                        format!("is `{other}`; use `relevant` or `full`"),
                    ));
                }
            },
            gates: Gates::parse(raw.review.as_deref().unwrap_or_default())
                .map_err(|m| err("review", m.to_string()))?,
            code_comments: match raw.code_comments.as_deref() {
                None => Default::default(),
                Some(v) => v.trim().parse().map_err(|m: crate::util::UnknownValue| {
                    err("code_comments", format!("is an {m}"))
                })?,
            },
            repair: match raw.repair.as_deref().map(str::trim) {
                None | Some("mechanical") => true,
                Some("off") => false,
                Some(other) => {
                    return Err(err(
                        "repair",
                        format!(
                            "is `{other}`; use `mechanical` (restore what the model should have copied from the source) or `off`"
                        ),
                    ));
                }
            },
            style: Style::resolve(raw.style.as_ref(), &Lang::parse(&raw.target_lang))
                .map_err(|(key, m)| err(key, m))?,
            mark_precision_threshold: match raw.mark_precision_threshold {
                None => DEFAULT_MARK_PRECISION_THRESHOLD,
                Some(v) if (0.0..=1.0).contains(&v) => v,
                Some(v) => {
                    return Err(err(
                        "mark_precision_threshold",
                        format!("is {v}; use a precision between 0 and 1 (default 0.5)"),
                    ));
                }
            },
            mqm_threshold: match raw.mqm_threshold {
                None => DEFAULT_MQM_THRESHOLD,
                Some(v) if v.is_finite() && v >= 0.0 => v,
                Some(v) => {
                    return Err(err(
                        "mqm_threshold",
                        format!(
                            "is {v}; use penalty points per 1,000 source words, 0 or more (default 10)"
                        ),
                    ));
                }
            },
        })
    }
}

/// Resolves `[provider]` with its preset and the command-line overrides (see the module docs
/// for precedence; a preset counts as part of the campaign file).
fn resolve_provider(
    rawp: &RawProvider,
    overrides: &Overrides,
    err: &dyn Fn(&str, String) -> UsageError,
) -> Result<ProviderPlan, UsageError> {
    if rawp.api_key.is_some() {
        return Err(err(
            "provider.api_key",
            "holds a secret: campaign files are shared and kept with the book, so keys never go in them. Delete that line and export the key in the environment variable named by `api_key_env` (default OPENAI_API_KEY, or ANTHROPIC_API_KEY for kind = \"anthropic\")".into(),
        ));
    }
    let preset = match rawp.preset.as_deref() {
        None => None,
        Some(name) => Some(
            crate::llm::presets::find(name).map_err(|m| err("provider.preset", m.to_string()))?,
        ),
    };
    let kind = match overrides.provider {
        Some(k) => k,
        None => match rawp.kind.as_deref() {
            Some(k) => k.parse().map_err(|m: crate::util::UnknownValue| {
                err("provider.kind", format!("is an {m}"))
            })?,
            None => preset.map_or(ProviderKind::Pseudo, |p| p.kind),
        },
    };
    let model = overrides
        .model
        .clone()
        .or_else(|| rawp.model.clone())
        .or_else(|| (kind == ProviderKind::Pseudo).then(|| "pseudo".to_string()))
        .ok_or_else(|| {
            err(
                "provider.model",
                "is missing: name the model to use (e.g. `model = \"gpt-4o-mini\"`) or pass --model".into(),
            )
        })?;
    let (env_var, default_url, default_key) = match kind {
        ProviderKind::Anthropic => (
            "ANTHROPIC_BASE_URL",
            "https://api.anthropic.com",
            "ANTHROPIC_API_KEY",
        ),
        _ => (
            "OPENAI_BASE_URL",
            "https://api.openai.com/v1",
            "OPENAI_API_KEY",
        ),
    };
    // A preset only fills in the endpoint of its own kind (`preset = "deepseek"` with
    // `kind = "anthropic"` keeps Anthropic's defaults).
    let preset = preset.filter(|p| p.kind == kind);
    let base_url = overrides
        .base_url
        .clone()
        .or_else(|| rawp.base_url.clone())
        .or_else(|| preset.map(|p| p.base_url.to_string()))
        .or_else(|| std::env::var(env_var).ok().filter(|s| !s.is_empty()))
        .unwrap_or_else(|| default_url.into());
    let base_url = base_url
        .trim_end_matches('/')
        .trim_end_matches("/chat/completions")
        .trim_end_matches("/messages")
        .to_string();
    if kind != ProviderKind::Pseudo
        && !(base_url.starts_with("http://") || base_url.starts_with("https://"))
    {
        return Err(err(
            "provider.base_url",
            format!("`{base_url}` is not an http(s) URL"),
        ));
    }
    let api_key_env = rawp
        .api_key_env
        .clone()
        .or_else(|| preset.map(|p| p.api_key_env.to_string()))
        .unwrap_or_else(|| default_key.into());
    let mut quirks = preset.map(|p| p.quirks).unwrap_or_default();
    if let Some(m) = &rawp.json_mode {
        quirks.json_mode = m.parse().map_err(|e: crate::util::UnknownValue| {
            err("provider.json_mode", format!("is an {e}"))
        })?;
    }
    if let Some(u) = rawp.stream_usage {
        quirks.stream_usage = u;
    }
    if preset.is_none() {
        // Anthropic continues a final assistant turn; so do the servers people run on their
        // own machine (llama.cpp, Ollama); a hosted OpenAI-compatible API may not.
        quirks.continuation =
            if kind == ProviderKind::Anthropic || crate::llm::call::is_local(&base_url) {
                crate::llm::presets::Continuation::Prefix
            } else {
                crate::llm::presets::Continuation::None
            };
    }
    if let Some(m) = &rawp.continuation {
        quirks.continuation = m.parse().map_err(|e: crate::util::UnknownValue| {
            err("provider.continuation", format!("is an {e}"))
        })?;
    }
    Ok(ProviderPlan {
        kind,
        model,
        base_url,
        api_key_env,
        temperature: rawp.temperature,
        max_tokens: rawp.max_tokens,
        max_output_tokens: rawp.max_output_tokens,
        max_attempts: rawp.max_attempts.unwrap_or(5).max(1),
        max_requests_per_minute: rawp.max_requests_per_minute,
        max_tokens_per_minute: rawp.max_tokens_per_minute,
        request_timeout_s: rawp.request_timeout_s.unwrap_or(600).max(1),
        stream_idle_timeout_s: rawp.stream_idle_timeout_s.unwrap_or(120).max(1),
        connect_timeout_s: rawp.connect_timeout_s.unwrap_or(15).max(1),
        quirks,
        batch_poll_ms: rawp.batch_poll_ms.unwrap_or(30_000).max(1),
    })
}

/// What to write instead, for a TOML value of the wrong type: serde's message names the Rust
/// type it expected (`invalid type: string "four", expected usize`), which tells a campaign
/// author nothing. Empty when `message` is not such an error. Hand-rolled: the toml crate
/// reports the expected type only inside this text.
fn type_remedy(message: &str) -> &'static str {
    let Some(expected) = message
        .lines()
        .find(|l| l.contains("invalid type:") || l.contains("invalid value:"))
        .and_then(|l| l.split("expected ").nth(1))
    else {
        return "";
    };
    let e = expected.trim();
    if ["usize", "u8", "u16", "u32", "u64"].contains(&e) {
        "\nWrite a whole number of 0 or more without quotes, e.g. `concurrency = 4`."
    } else if e == "f64" || e == "f32" || e.contains("float") {
        "\nWrite a number without quotes, e.g. `proofread_share = 0.2`."
    } else if e.contains("boolean") {
        "\nWrite `true` or `false` without quotes."
    } else if e.contains("string") {
        "\nWrite the value in double quotes, e.g. `target_lang = \"zh\"`."
    } else if e.contains("sequence") {
        "\nWrite a list in square brackets, e.g. `chapters = [\"ch1.md\", \"ch2.md\"]`."
    } else {
        ""
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(toml_text: &str, o: &Overrides) -> Result<Plan, UsageError> {
        let raw: RawCampaign =
            toml::from_str(toml_text).map_err(|e| UsageError::new(e.to_string()))?;
        Plan::resolve(Path::new("campaigns/x.toml"), raw, o)
    }

    const MIN: &str = r#"
name = "demo"
source_lang = "en"
target_lang = "zh"
chapters = ["book/a.md", "book/b.md"]
"#;

    #[test]
    fn defaults_apply() {
        let p = plan(MIN, &Overrides::default()).unwrap();
        assert_eq!(p.concurrency, 4);
        assert_eq!(p.revision_rounds, 1);
        assert_eq!(p.max_unit_chars, 12_000);
        assert_eq!(p.provider.kind, ProviderKind::Pseudo);
        assert_eq!(p.provider.model, "pseudo");
        assert!(p.out_dir.ends_with("campaigns/demo/out"), "{:?}", p.out_dir);
        assert!(p.state_dir.ends_with("campaigns/demo/state"));
        assert!(p.report_dir.ends_with("campaigns/demo/validation"));
        assert!(p.is_rehearsal());
        // The quality benchmark measured the brief costing tokens for no chrF++ it could show
        // (findings 7 and 18 of docs/src/benchmarks.md), so it is asked for, not assumed.
        assert!(!p.brief, "the book brief is off by default");
        assert!(p.agent_glossary);
    }

    /// A new user's `concurrency = "four"` was told "expected usize" and nothing more.
    #[test]
    fn a_wrong_type_named_the_rust_type_and_no_remedy() {
        let dir = tempfile::tempdir().unwrap();
        let load = |extra: &str| {
            let f = dir.path().join("t.toml");
            std::fs::write(&f, format!("{MIN}{extra}")).unwrap();
            Plan::load(&f, &Overrides::default())
                .unwrap_err()
                .to_string()
        };
        let e = load("concurrency = \"four\"\n");
        assert!(e.contains("expected usize"), "{e}");
        assert!(
            e.contains("Write a whole number of 0 or more without quotes"),
            "{e}"
        );
        let e = load("revision_rounds = -1\n");
        assert!(e.contains("Write a whole number of 0 or more"), "{e}");
        let e = load("translation_example = \"yes\"\n");
        assert!(e.contains("Write `true` or `false`"), "{e}");
        let e = load("proofread_share = \"half\"\n");
        assert!(e.contains("Write a number without quotes"), "{e}");
        // A syntax error has no type remedy.
        let e = load("concurrency = = 2\n");
        assert!(!e.contains("\nWrite"), "{e}");
    }

    /// A misspelled provider kind read "`provider.kind` unknown provider kind `psuedo`; use
    /// …", the key and the sentence run together (helper-found).
    #[test]
    fn an_unknown_value_ran_into_its_key_name() {
        let err = |extra: &str| {
            plan(&format!("{MIN}{extra}"), &Overrides::default())
                .unwrap_err()
                .to_string()
        };
        let e = err("[provider]\nkind = \"psuedo\"\n");
        assert!(
            e.contains("`provider.kind` is an unknown provider kind `psuedo`; use"),
            "{e}"
        );
        let e = err("code_comments = \"drop\"\n");
        assert!(e.contains("`code_comments` is an unknown "), "{e}");
    }

    #[test]
    fn heading_ids_takes_source_or_translated_and_needs_a_book() {
        let err = |extra: &str| {
            plan(&format!("{MIN}{extra}"), &Overrides::default())
                .unwrap_err()
                .to_string()
        };
        let e = err("heading_ids = \"english\"\n");
        assert!(
            e.contains("`heading_ids` is `english`; use `source`") && e.contains("`translated`"),
            "{e}"
        );
        let e = err("heading_ids = \"translated\"\n");
        assert!(e.contains("is given without `book`"), "{e}");
    }

    /// A new user's campaign from zh into zh was told to set the target to "zh".
    #[test]
    fn the_same_language_error_suggested_the_source_language() {
        let same = |l: &str| {
            let text = MIN
                .replace("source_lang = \"en\"", &format!("source_lang = \"{l}\""))
                .replace("target_lang = \"zh\"", &format!("target_lang = \"{l}\""));
            plan(&text, &Overrides::default()).unwrap_err().to_string()
        };
        let zh = same("zh");
        assert!(zh.contains("the same language as source_lang `zh`"), "{zh}");
        assert!(
            zh.contains("(e.g. \"en\")") && !zh.contains("(e.g. \"zh\")"),
            "{zh}"
        );
        let en = same("en");
        assert!(en.contains("(e.g. \"zh\")"), "{en}");
    }

    #[test]
    fn flags_override_file() {
        let text = format!(
            "{MIN}concurrency = 2\n[provider]\nkind = \"openai\"\nmodel = \"m1\"\nbase_url = \"http://h/v1/\"\n"
        );
        let o = Overrides {
            model: Some("m2".into()),
            concurrency: Some(7),
            ..Default::default()
        };
        let p = plan(&text, &o).unwrap();
        assert_eq!(p.provider.model, "m2");
        assert_eq!(p.concurrency, 7);
        assert_eq!(p.provider.base_url, "http://h/v1");
        assert_eq!(p.provider.api_key_env, "OPENAI_API_KEY");
    }

    #[test]
    fn unknown_key_is_refused() {
        let e = plan(&format!("{MIN}max_unit_char = 5\n"), &Overrides::default()).unwrap_err();
        assert!(e.to_string().contains("max_unit_char"), "{e}");
    }

    #[test]
    fn style_table_resolves_and_bad_keys_name_the_file_and_key() {
        let p = plan(MIN, &Overrides::default()).unwrap();
        assert_eq!(p.style, Style::for_target(&Lang::parse("zh")));
        let p = plan(
            &format!("{MIN}[style]\ncjk_latin_space = \"none\"\nterm_casing = false\n"),
            &Overrides::default(),
        )
        .unwrap();
        assert_eq!(p.style.cjk_latin_space, Some(CjkLatinSpace::None));
        assert!(!p.style.term_casing && p.style.cjk_punctuation);

        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("c.toml");
        std::fs::write(&file, format!("{MIN}[style]\ncjk_spacing = \"one\"\n")).unwrap();
        let e = Plan::load(&file, &Overrides::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("c.toml") && e.contains("cjk_spacing"), "{e}");
        std::fs::write(&file, format!("{MIN}[style]\nquotes = \"<>\"\n")).unwrap();
        let e = Plan::load(&file, &Overrides::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("c.toml") && e.contains("`style.quotes`"), "{e}");
    }

    #[test]
    fn openai_needs_model() {
        let e = plan(
            &format!("{MIN}[provider]\nkind = \"openai\"\n"),
            &Overrides::default(),
        )
        .unwrap_err();
        assert!(e.to_string().contains("provider.model"), "{e}");
    }

    #[test]
    fn duplicate_chapter_names_are_refused() {
        let text = MIN.replace("book/b.md", "other/a.md");
        let e = plan(&text, &Overrides::default()).unwrap_err();
        assert!(e.to_string().contains("same name"), "{e}");
    }
}
