//! booktr translates whole Markdown books with LLMs the way a small editorial team works.
//!
//! The data path, from campaign file to report:
//!
//! ```text
//! campaign.toml ─► config::Plan (resolved once: paths, provider, limits, house-style termbase)
//! chapters ─► book::segment ─► Units {id, chapter, byte range, kind, sha256}
//!   campaign::Manager (state machine over campaign::State, rebuilt from the journal + result files)
//!     next_actions(&State) ─► agents::{glossary, translation, proofreading, manager}  (pure prompts/parsers)
//!       ─► llm::Provider (OpenAI-compatible SSE | pseudo) ─► Answer {content, reasoning, usage}
//!     record(result) ─► campaign::store (atomic result files + append-only journal)
//!   qa:: deterministic checks ─► report:: json | md
//! experiment:: orchestration vs single agent ─► judge, metrics, chrF ─► evidence.json
//! ```
//!
//! Modules are named after the domain: [`book`] (chapters and units), [`config`] (campaign
//! file → plan), [`termbase`] (glossary entries), [`llm`] (providers), [`agents`] (prompts and
//! answer parsing), [`campaign`] (state, Manager, runner), [`qa`] (checks), [`report`].

pub mod agents;
pub mod book;
pub mod campaign;
pub mod cli;
pub mod commands;
pub mod config;
pub mod exit;
pub mod experiment;
pub mod interchange;
pub mod lang;
pub mod llm;
pub mod qa;
pub mod repair;
pub mod report;
pub mod termbase;
pub mod tokens;
pub mod util;
