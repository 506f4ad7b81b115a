//! The campaign's operations: running, importing, exporting and reviewing a campaign. Each
//! builds on [`super::core`] (the campaign, its state, the Manager and the commit protocol) and
//! records what it does through [`super::core::commit`].
//!
//! - [`runner`]: the loop that runs actions concurrently and records each result; [`batch`]
//!   its provider-batch mode; [`budget`] and [`estimate`] the cost gate and `plan`'s figures.
//! - [`jobs`]: turning an action into a request and an answer into a recorded result.
//! - [`outputs`]: reassembling translated chapters; [`site_out`] the rest of a translated
//!   mdBook, MkDocs or Docusaurus site (configuration, navigation titles, assets).
//! - [`desk`]: the editor's desk (approval gates, review files); [`mark_journal`] editors'
//!   marks on findings.
//! - [`memory`]: translation-memory hits; [`exports`] and [`imports`]: CAT interchange.
//! - [`progress`]: the terminal progress display (stderr only).

pub mod batch;
pub mod budget;
pub mod currency;
pub mod desk;
pub mod estimate;
pub mod exports;
pub mod imports;
pub mod jobs;
pub mod mark_journal;
pub mod memory;
pub mod outputs;
pub mod progress;
pub mod runner;
pub mod site_out;

#[cfg(test)]
mod brief_prompt_tests;
#[cfg(test)]
mod manager_tests;
