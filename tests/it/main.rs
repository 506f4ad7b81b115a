//! The one integration-test binary of booktr (issue 13): every former `tests/*.rs` file is a
//! module here, so the fake OpenAI-compatible server and the other helpers of [`support`] are
//! compiled and linked once instead of once per file. Run one file's tests with
//! `cargo test --test it <module>::` (for example `cargo test --test it campaign_e2e::`).
//!
//! Tests that need something optional (the shared corpus, Chromium, translate-toolkit, a real
//! model) carry `#[needs(...)]` from `tests/needs`: without the resource at build time they are
//! reported as `ignored, <reason>` and counted in the summary's `N ignored`; the
//! `BOOKTR_REQUIRE_*=1` switches make them run and fail with a clear message instead.

mod labelled;
mod support;

mod approval_gates;
mod batch_mode;
mod book_formats;
mod budget;
mod campaign_e2e;
mod chrf_vectors;
mod code_comments;
mod corpus_segment;
mod crash_safety;
mod docs_links;
mod drift_consistency;
mod experiment;
mod explain;
mod fake_server;
mod faults;
mod finding_marks;
mod gettext;
mod hostile_input;
mod import_adopted;
mod incremental;
mod interchange;
mod kept_candidate;
mod layers;
mod living_book;
mod long_answers;
mod masking;
mod mdx_props;
mod mechanical_repair;
mod model_outputs_verified;
mod needs;
mod neighbour_context;
mod new_user;
mod notebooks;
mod pieces_when_stuck;
mod pipeline;
mod plan;
mod presets;
mod provider_anthropic;
mod provider_openai;
mod qa_campaign_corpus;
mod qa_faults;
mod qa_labelled;
mod qa_multilingual;
mod quality;
mod real_llm;
mod real_sites;
mod record_corpus;
mod repair_corpus;
mod repair_loop;
mod repair_props;
mod report_html;
mod runaway;
mod scale;
mod secrets;
mod segment_props;
mod sentence_split;
mod single_agent;
mod structure_revision;
mod style_corpus;
mod style_revisions;
mod terminal;
mod validate_edits;
mod validate_fixtures;
mod xref;
