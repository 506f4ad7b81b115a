//! The campaign file as written (TOML), before defaults and checks.

use serde::Deserialize;

/// `campaigns/*.toml`. Unknown keys are an error, so a typo never silently falls back to a
/// default. Every path is relative to the campaign file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCampaign {
    /// Campaign name; default folders are `<name>/out`, `<name>/state`, `<name>/validation`.
    pub name: String,
    /// Source language code, e.g. `en`.
    pub source_lang: String,
    /// Target language code, e.g. `zh` or `zh-CN`.
    pub target_lang: String,
    /// Chapters in book order. Each entry is a file, a directory (the `.md`, `.markdown` and
    /// `.mdx` files directly inside it, in natural order: `ch2.md` before `ch10.md`) or a glob
    /// pattern such as `"book/**/*.md"` (matches in natural order). A file given twice is taken
    /// once, at its first place. Leave it out when `book` is given.
    #[serde(default)]
    pub chapters: Vec<String>,
    /// House-style glossary files: CSV/TSV (`source,target,note[,forbidden]`, a language-code
    /// header, or DeepL's header-less `source,target`) or TBX. Their entries always win.
    #[serde(default)]
    pub glossaries: Vec<String>,
    /// Translation memories (TMX): a unit whose source text (whitespace-normalised) is in one
    /// gets the stored translation without a model call.
    #[serde(default)]
    pub memory: Vec<String>,
    /// Existing human translations to seed from, block by block, before any paid call: an
    /// mdbook-i18n-helpers PO catalog, a TMX, an XLIFF, or a translated folder of the same
    /// book (see `interchange::seed`). Seeded blocks are never sent to a model.
    #[serde(default)]
    pub seed: Vec<String>,
    /// Also write `<out_dir>/bilingual/<chapter>.md` (each source block followed by its
    /// translation) and a bilingual view in report.html (default false).
    pub bilingual: Option<bool>,
    /// A Markdown translation guide (style, register, conventions) given to every translator.
    pub guide: Option<String>,
    /// Unit size limit in characters (default 12,000).
    pub max_unit_chars: Option<usize>,
    /// Concurrent model calls, at most (default 4).
    pub concurrency: Option<usize>,
    /// Revision rounds after the first translation (default 1).
    pub revision_rounds: Option<u32>,
    /// Whether the Glossary agent proposes renderings for the book's term candidates (default
    /// true). `false` sends no term batch: the termbase is the house-style glossaries alone.
    pub agent_glossary: Option<bool>,
    /// Whether the Glossary agent writes the book brief (audience, register, conventions,
    /// chapter synopses; default false). Off, no brief call is sent and translators get no
    /// brief. The default is off because the quality benchmark (`cargo bench --bench quality`,
    /// docs/src/benchmarks.md findings 7 and 18) measured the brief costing tokens for no
    /// chrF++ gain against the human edition that its interval shows; `true` turns it on.
    pub brief: Option<bool>,
    /// Whether Translation requests carry a fixed example exchange (a short paragraph and list
    /// item already translated into the target language) after the system message (default
    /// true; only for the languages booktr has the example in: `agents::translation::example_pair`). The
    /// quality benchmark's 0.5B answered isolated units with their source or the glossary
    /// message without it (docs/src/benchmarks.md, finding 11); `false` leaves it out.
    pub translation_example: Option<bool>,
    /// Marker translators put after a rendering they coin (default `[待审]` for Chinese targets,
    /// `[review]` for most others).
    pub review_marker: Option<String>,
    /// What the Translation prompt's glossary message carries: `relevant` (the entries whose
    /// terms occur in the unit; the default) or `full` (the whole termbase, identical for every
    /// unit so that provider prefix caches can serve it). `booktr`'s token-economy benchmark
    /// measures both.
    pub prompt_layout: Option<String>,
    /// Characters of preceding source text given to the translator as read-only context
    /// (default 1,500; 0 turns it off). Capped at a quarter of the unit's length.
    pub context_chars: Option<usize>,
    /// Approval gates: `["glossary"]`, `["revisions"]`, both or none (the default). A gate
    /// stops the run (exit code 3) until `booktr approve` records the editor's decision.
    pub review: Option<Vec<String>>,
    /// Review budget of the Proofreading agent, as a share of the translation prompt tokens,
    /// from 0 to 1 (default 0: no proofreading, see `config::DEFAULT_PROOFREAD_SHARE`; 0.2 is
    /// the earlier default; 1 reviews every unit).
    pub proofread_share: Option<f64>,
    /// Input budget per request in o200k_base tokens (default 32,000).
    pub max_context_tokens: Option<usize>,
    /// A folder with a human translation of the book (chapter files named as the sources), for
    /// `booktr experiment`'s reference metric (chrF). Optional.
    pub reference_dir: Option<String>,
    pub out_dir: Option<String>,
    pub state_dir: Option<String>,
    pub report_dir: Option<String>,
    pub provider: Option<RawProvider>,
    /// Prices for cost estimates and reports.
    pub pricing: Option<Pricing>,
    /// Comments in code blocks: `keep` (default: copied byte for byte) or `translate` (only
    /// comments may change; every code token stays identical). See [`super::CodeComments`].
    pub code_comments: Option<String>,
    /// Mechanical repair of translations: `mechanical` (default: faults the model should have
    /// copied are restored from the source before any revision, see the `repair` module) or
    /// `off`. Not part of unit fingerprints: toggling it reuses every recorded answer.
    pub repair: Option<String>,
    /// A whole book in a documentation tool's layout, instead of `chapters`: an mdBook's
    /// `SUMMARY.md`, an MkDocs `mkdocs.yml` or a Docusaurus folder (the project or its
    /// `docs/`). The chapters and their order come from its table of contents, and `out_dir`
    /// receives a translated site that builds (see [`crate::book::site`]).
    pub book: Option<String>,
    /// Heading ids of a `book`'s translated chapters: `source` (default: where the site's tool
    /// reads an explicit id, a translated heading keeps the source's, `## 构建 {#build}`; where it
    /// does not, links to headings are pointed at the translated ids when chapters are written)
    /// or `translated` (no source id kept; every link to a heading is pointed at its translated
    /// id). See [`crate::book::links::Retarget`].
    pub heading_ids: Option<String>,
    /// `[style]`: the house-style lint for the target locale (see [`RawStyle`]). Every rule
    /// that applies to the target is on when the table is left out.
    pub style: Option<RawStyle>,
    /// A check whose precision over the editor's marks (confirmed / marked) is
    /// below this, with at least 10 marks, is downgraded to warnings for the campaign
    /// (default 0.5; a number in [0, 1]).
    pub mark_precision_threshold: Option<f64>,
    /// The most MQM penalty points per 1,000 source words a chapter may have and
    /// pass the scorecard (default 10; a number ≥ 0).
    pub mqm_threshold: Option<f64>,
}

/// `[style]`: house-style rules for the target locale, checked deterministically by the
/// `style_*` QA checks. Each key is optional; a key left out keeps the target locale's default
/// (see [`super::Style::for_target`]). Unknown keys are an error.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawStyle {
    /// Master switch (default true): false turns every `style_*` check off.
    pub enabled: Option<bool>,
    /// `warning` (default: reported, never sends a revision), `error` (style findings force
    /// revisions and fail `validate`) or `info`.
    pub severity: Option<String>,
    /// zh, ja: full-width `，。：；！？` in CJK sentences, half-width inside Latin names,
    /// numbers and URLs (default true for zh and ja targets; true is refused for others).
    pub cjk_punctuation: Option<bool>,
    /// zh, ja: `one` (one space between CJK and Latin text or digits; the default for zh),
    /// `none` (no space; the default for ja) or `off`.
    pub cjk_latin_space: Option<String>,
    /// Quotation marks: `auto` (default: `“”` zh-Hans, `「」` ja and zh-Hant, `«»` fr, `„“`
    /// de, none for other locales), `off`, or one of `“”`, `「」`, `«»`, `„“`, `»«`.
    pub quotes: Option<String>,
    /// fr: a narrow no-break space (U+202F, or U+00A0) before `; : ! ?` and inside `« »`
    /// (default true for fr targets; true is refused for others).
    pub fr_spacing: Option<bool>,
    /// Digit grouping and decimal separator of the target locale (`1,234.5` en/zh/ja,
    /// `1.234,5` de, `1 234,5` fr), outside code, versions and identifiers (default true).
    pub number_format: Option<bool>,
    /// An English term kept in the translation keeps the source's casing (`GitHub`, `JSON`;
    /// default true).
    pub term_casing: Option<bool>,
}

/// `[pricing]`: prices per million tokens, in `currency`. The same table serves `plan`
/// estimates and the cost in reports.
#[derive(Debug, Clone, Default, PartialEq, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Pricing {
    /// Price of one million prompt tokens not served from a cache.
    pub input_per_million: f64,
    /// Price of one million prompt tokens served from the provider's prefix cache (default:
    /// the input price).
    pub cached_input_per_million: Option<f64>,
    /// Price of one million completion tokens.
    pub output_per_million: f64,
    /// Currency code shown with amounts (default `USD`).
    #[serde(default = "default_currency")]
    pub currency: String,
    /// Budget cap for `booktr run`, in `currency` (unset: no cap). The run stops cleanly
    /// before a request would take the campaign's spending over it: the cost of the usage
    /// recorded so far (all runs), plus the estimates of the requests in flight, plus the
    /// estimate of the next request (the `plan` estimator, uncached) must stay within it.
    /// `run --max-cost` overrides it. See `crate::campaign::ops::budget`.
    #[serde(default)]
    pub max_cost: Option<f64>,
}

fn default_currency() -> String {
    "USD".into()
}

impl Pricing {
    /// Cost of the given token counts: uncached prompt tokens at the input price, cached ones
    /// at the cached price, completion tokens at the output price.
    pub fn cost(&self, prompt_tokens: u64, cached_tokens: u64, completion_tokens: u64) -> f64 {
        let cached = cached_tokens.min(prompt_tokens);
        ((prompt_tokens - cached) as f64 * self.input_per_million
            + cached as f64
                * self
                    .cached_input_per_million
                    .unwrap_or(self.input_per_million)
            + completion_tokens as f64 * self.output_per_million)
            / 1e6
    }
}

/// `[provider]` table.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawProvider {
    /// A known service (`openai`, `anthropic`, `deepseek`, `doubao`, `qwen`, `openrouter`,
    /// `ollama`, `vllm`, `llamacpp`; see [`crate::llm::presets`]): fills in `kind`, `base_url`,
    /// `api_key_env` and the server's quirks. Keys given here win over it.
    pub preset: Option<String>,
    /// `openai` (any OpenAI-compatible endpoint), `anthropic` (the Anthropic Messages API) or
    /// `pseudo` (offline rehearsal; the default without a preset).
    pub kind: Option<String>,
    pub model: Option<String>,
    /// e.g. `https://api.deepseek.com/v1`; `/chat/completions` is appended (for `anthropic`:
    /// `/v1/messages`, or `/messages` after a base URL that ends in `/v1`).
    pub base_url: Option<String>,
    /// Name of the environment variable holding the key (default: the preset's, else
    /// `ANTHROPIC_API_KEY` for `anthropic` and `OPENAI_API_KEY` otherwise). The key itself never
    /// goes in a campaign file.
    pub api_key_env: Option<String>,
    /// Never allowed: accepted by the parser only so that a key typed here is refused with
    /// advice instead of being echoed back in a "unknown field" error snippet.
    #[serde(
        default,
        alias = "key",
        alias = "api-key",
        alias = "token",
        alias = "secret"
    )]
    pub api_key: Option<toml::Value>,
    pub temperature: Option<f64>,
    pub max_tokens: Option<u32>,
    /// The model's output limit in tokens: no learned bound goes above it (unset: none).
    pub max_output_tokens: Option<u32>,
    pub max_attempts: Option<u32>,
    /// Client-side limit on requests per minute (unset: none).
    pub max_requests_per_minute: Option<u32>,
    /// Client-side limit on tokens (prompt plus expected completion) per minute (unset: none).
    pub max_tokens_per_minute: Option<u32>,
    pub request_timeout_s: Option<u64>,
    pub stream_idle_timeout_s: Option<u64>,
    pub connect_timeout_s: Option<u64>,
    /// How JSON answers are requested: `schema` (`json_schema`, falling back to
    /// `json_object`), `object` or `prompt` (no `response_format`). Default: the preset's, else
    /// `schema`.
    pub json_mode: Option<String>,
    /// Whether to send `stream_options.include_usage` (default: the preset's, else true).
    pub stream_usage: Option<bool>,
    /// How a reply cut at `max_tokens` is continued: `prefix` (a final assistant message the
    /// model goes on from), `vllm` (the same with vLLM's `continue_final_message`) or `none`
    /// (the unit is split at a block boundary, keeping what was received). Default: the
    /// preset's; else `prefix` for `kind = "anthropic"` and for a server on this machine,
    /// `none` otherwise.
    pub continuation: Option<String>,
    /// Wait between two polls of a batch (`run --batch`), in milliseconds (default 30,000).
    pub batch_poll_ms: Option<u64>,
}
