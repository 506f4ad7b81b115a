//! booktr translates whole Markdown books with LLMs the way a small editorial team works.
//!
//! The data path, from campaign file to report:
//!
//! ```text
//! campaign.toml ─► config::Plan (resolved once: paths, provider, limits, house-style termbase)
//! chapters ─► book::segment ─► Units {id, chapter, byte range, kind, sha256}
//!   campaign::core::manager::Manager (state machine over campaign::State, rebuilt from the journal + result files)
//!     next_actions(&State) ─► agents::{glossary, translation, proofreading, manager}  (pure prompts/parsers)
//!       ─► llm::Provider (OpenAI-compatible SSE | pseudo) ─► Answer {content, reasoning, usage}
//!     record(result) ─► campaign::core::store (atomic result files + append-only journal)
//!   qa:: deterministic checks ─► report:: json | md
//! experiment:: orchestration vs single agent ─► judge, metrics, chrF ─► evidence.json
//! ```
//!
//! Modules are named after the domain: [`book`] (chapters and units), [`config`] (campaign
//! file → plan), [`termbase`] (glossary entries), [`llm`] (providers), [`agents`] (prompts and
//! answer parsing), [`campaign`] (state, Manager, runner), [`qa`] (checks), [`report`].

// The crate's own `print!`/`println!`/`eprint!`/`eprintln!`: defined before the modules, so they
// shadow std's in every module. std's versions panic when the stream is a closed pipe
// (`booktr plan … | head -1` ended with exit 101); these go through [`term::out`] and
// [`term::err`], which drop what a closed pipe cannot take (see the `term` module).
#[allow(unused_macros)]
macro_rules! print {
    ($($arg:tt)*) => { $crate::term::out(format_args!($($arg)*)) };
}
macro_rules! println {
    () => { $crate::term::out(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::term::out(format_args!("{}\n", format_args!($($arg)*))) };
}
#[allow(unused_macros)]
macro_rules! eprint {
    ($($arg:tt)*) => { $crate::term::err(format_args!($($arg)*)) };
}
macro_rules! eprintln {
    () => { $crate::term::err(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::term::err(format_args!("{}\n", format_args!($($arg)*))) };
}

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
pub mod term;
pub mod termbase;
pub mod tokens;
pub mod util;
