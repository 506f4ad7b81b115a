//! The Manager's context view: a compact summary of the state (aggregates, a few pending or
//! failed ids, a short window of recent calls, a file index) that never holds a text body.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{Manager, Stage};
use crate::agents::Agent;
use crate::campaign::core::state::{AgentUsage, LogLine, State};

impl Manager<'_> {
    /// The Manager's context: see [`ManagerContext`].
    pub fn context(&self, s: &State) -> ManagerContext {
        let c = self.campaign;
        let p = &c.plan;
        // This runs for every recorded result, so nothing here walks the book.
        // The units still to translate come from the state's index of pending first
        // translations; before the termbase is merged no unit has a fingerprint, so every
        // prose unit is pending (a short stage: the glossary calls only).
        let to_translate = self.to_translate;
        let merged = c.units.first().is_some_and(|u| s.fp(&u.id).is_some());
        let (pending_count, pending_first): (usize, Vec<String>) = if merged {
            let p = s.first_pending();
            let first = p.iter().take(5).map(|&i| c.units[i].id.clone()).collect();
            (p.len(), first)
        } else {
            let first = c.prose_units().take(5).map(|u| u.id.clone()).collect();
            (to_translate, first)
        };
        // Whether chapter `ch` has a unit still to translate: a range query on the index.
        let chapter_pending = |ch: &crate::book::Chapter| -> bool {
            if merged {
                s.first_pending()
                    .range(c.chapter_range(&ch.key))
                    .any(|&i| c.units[i].chapter == ch.key)
            } else {
                c.units_of(&ch.key).any(|u| u.kind.needs_translation())
            }
        };
        let translated = to_translate - pending_count;
        let revised = s.revised_unit_count(c);
        let failed: Vec<&String> = s.open_failures().keys().collect();
        let stage = self.next_stage(s);
        // The same words as before proofreading could be off, when it is on, so that recorded
        // Manager requests stay byte for byte.
        let reviewed = p.proofreads();
        let (stages, proofread) = if reviewed {
            (
                "with glossary, proofreading and",
                "proofread: per chapter, batches within the token budget",
            )
        } else {
            (
                "with glossary, no proofreading (proofread_share = 0) and",
                "proofread: off (proofread_share = 0)",
            )
        };
        ManagerContext {
            task: format!(
                "Translate the book '{}' from {} to {}: {} chapters, {} units ({} to translate), {stages} up to {} revision round(s).",
                p.name,
                p.source_lang.name,
                p.target_lang.name,
                c.chapters.len(),
                c.units.len(),
                to_translate,
                p.revision_rounds
            ),
            guide: GuideRef {
                file: p.guide.clone(),
                sha256: crate::util::sha256_hex(&c.guide)[..12].to_string(),
                chars: c.guide.chars().count(),
            },
            plan: vec![
                format!(
                    "glossary: {} candidate batch(es), house style wins ({} house entries)",
                    self.glossary_batches.len(),
                    c.house.len()
                ),
                format!(
                    "translate: {} units, {} concurrent",
                    to_translate, p.concurrency
                ),
                proofread.into(),
                format!(
                    "decide and revise: up to {} round(s); QA errors are always revised",
                    p.revision_rounds
                ),
                format!("write: {} chapters to out_dir", c.chapters.len()),
            ],
            stage,
            progress: Progress {
                units: c.units.len(),
                to_translate,
                translated,
                revised,
                failed: failed.len(),
                pending: pending_first,
                pending_more: pending_count.saturating_sub(5),
                failed_calls: failed.iter().take(5).map(|s| s.to_string()).collect(),
            },
            usage: s.usage().clone(),
            call_log: s.recent().iter().cloned().collect(),
            file_index: FileIndex {
                campaign: p
                    .campaign_file
                    .file_name()
                    .map(|f| f.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                chapters: {
                    // Only chapters with work left are named (at most 3); the rest is a count.
                    let open: Vec<&crate::book::Chapter> = c
                        .chapters
                        .iter()
                        .filter(|ch| {
                            chapter_pending(ch)
                                || failed.iter().any(|f| f.contains(&format!("/{}-", ch.key)))
                        })
                        .collect();
                    let dir = c
                        .chapters
                        .first()
                        .map(|ch| {
                            std::path::Path::new(&ch.rel_path)
                                .parent()
                                .map(|d| d.to_string_lossy().into_owned())
                                .unwrap_or_default()
                        })
                        .unwrap_or_default();
                    ChapterIndex {
                        count: c.chapters.len(),
                        dir,
                        open: open
                            .iter()
                            .take(3)
                            .map(|ch| (ch.key.clone(), ch.file_name.clone()))
                            .collect(),
                        open_more: open.len().saturating_sub(3),
                    }
                },
                out_dir: p.rel(&p.out_dir),
                state: p.rel(&c.state_path()),
                glossary: s.termbase().as_ref().map(|t| t.0.clone()),
                results: "results/<agent>/<call>.json".into(),
            },
        }
    }
}

/// Reference to the guide: never its text.
#[derive(Debug, Clone, Serialize)]
pub struct GuideRef {
    pub file: Option<String>,
    /// First 12 hex digits of the guide's sha256.
    pub sha256: String,
    pub chars: usize,
}

/// Counts and a few ids; lists are capped at 5 entries.
#[derive(Debug, Clone, Serialize)]
pub struct Progress {
    pub units: usize,
    pub to_translate: usize,
    pub translated: usize,
    pub revised: usize,
    pub failed: usize,
    pub pending: Vec<String>,
    pub pending_more: usize,
    pub failed_calls: Vec<String>,
}

/// The chapters, flat: a count, the folder of the first chapter, and the chapters that still
/// have work (at most three, by key → file name).
#[derive(Debug, Clone, Serialize)]
pub struct ChapterIndex {
    pub count: usize,
    pub dir: String,
    pub open: BTreeMap<String, String>,
    pub open_more: usize,
}

/// Ids to relative paths (relative to the campaign file; results relative to the state).
#[derive(Debug, Clone, Serialize)]
pub struct FileIndex {
    pub campaign: String,
    pub chapters: ChapterIndex,
    pub out_dir: String,
    pub state: String,
    pub glossary: Option<String>,
    pub results: String,
}

/// The Manager's whole context: task, guide, plan, stage, progress, usage aggregates, a window
/// of recent calls, and a file index. No source or translated text ever enters it.
#[derive(Debug, Clone, Serialize)]
pub struct ManagerContext {
    pub task: String,
    pub guide: GuideRef,
    pub plan: Vec<String>,
    pub stage: Stage,
    pub progress: Progress,
    pub usage: BTreeMap<Agent, AgentUsage>,
    pub call_log: Vec<LogLine>,
    pub file_index: FileIndex,
}

impl ManagerContext {
    /// Compact JSON serialisation (what the Manager's LLM call receives).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("context serialises")
    }

    /// Size in `o200k_base` tokens of [`ManagerContext::to_json`].
    pub fn tokens(&self) -> usize {
        crate::tokens::count(&self.to_json())
    }
}
