//! The block-memory fold of a [`State`] ([`crate::campaign::core::blocks`]): every recorded
//! block, how each unit's first translation reused them, the stale edits still to decide and
//! the edits booktr carried. Changed only by the journal records it names, through
//! [`State::apply`].

use std::collections::{HashMap, HashSet};

use super::super::blocks::{BlockMemory, BlocksFile, Stale};
use super::{Campaign, Reused, State};

/// See the module doc.
#[derive(Debug, Default)]
pub(super) struct BlockFold {
    /// Every recorded block: what a new version of a unit reuses.
    pub(super) memory: BlockMemory,
    /// Unit fingerprint → how its first translation reused block memory (`blocks_reused`).
    pub(super) reused: HashMap<String, Reused>,
    /// Unit fingerprint → the stale edits not yet decided by the editor.
    pub(super) stale: HashMap<String, Vec<Stale>>,
    /// Unit fingerprints whose newest human edit booktr carried from an earlier version.
    pub(super) carried: HashSet<String>,
    /// Indices of the units still to translate whose block plan finds at least one block
    /// ([`State::is_reusable`]), so the Manager's step does not plan every pending unit again
    /// after each answer.
    pub(super) reusable: std::collections::BTreeSet<usize>,
}

impl BlockFold {
    /// A `blocks_recorded` record's file.
    pub(super) fn recorded(&mut self, file: BlocksFile, rel: &str) {
        self.memory.add(file, rel);
    }

    /// A `blocks_reused` record of unit fingerprint `fp`.
    pub(super) fn reused(&mut self, fp: &str, reused: Reused) {
        if !reused.stale.is_empty() {
            self.stale.insert(fp.to_string(), reused.stale.clone());
        }
        self.reused.insert(fp.to_string(), reused);
    }

    /// A `human_edit` record of `fp`: an editor's own text decides every stale edit of the
    /// unit; a carried one is marked as such.
    pub(super) fn human_edit(&mut self, fp: &str, carried: bool) {
        if carried {
            self.carried.insert(fp.to_string());
        } else {
            self.carried.remove(fp);
            self.stale.remove(fp);
        }
    }

    /// A `human_edits_discarded` record (`run --force`): the editor's blocks of those units
    /// are forgotten with their edits.
    pub(super) fn discarded(&mut self, fps: &[String]) {
        self.memory.discard_human(fps);
        for fp in fps {
            self.stale.remove(fp);
            self.carried.remove(fp);
        }
    }
}

impl State {
    /// Every recorded block ([`super::super::blocks::BlockMemory`]).
    pub fn block_memory(&self) -> &super::super::blocks::BlockMemory {
        &self.blocks.memory
    }

    /// The block plan of unit `i` (index into [`Campaign::units`]) against block memory:
    /// `None` before the unit has a fingerprint (the termbase is not merged yet).
    pub fn reuse_plan(&self, c: &Campaign, i: usize) -> Option<super::super::blocks::Plan> {
        let u = &c.units[i];
        let fp = self.fp(&u.id)?;
        let tb = &self.termbase.as_ref()?.1;
        let brief = self.brief.as_ref().map_or("", |b| b.sha256.as_str());
        let key_of = |core: &str| c.block_key(core, tb, brief);
        Some(self.blocks.memory.plan(
            &u.id,
            c.source_text(u),
            fp,
            &key_of,
            &super::super::pieces::needs_model,
            &c.seeds,
        ))
    }

    /// Whether unit `i`, still to translate, finds at least one of its blocks in block
    /// memory: its first translation then reuses them ([`crate::campaign::core::blocks`]).
    pub fn is_reusable(&self, i: usize) -> bool {
        self.blocks.reusable.contains(&i)
    }

    /// How unit `id`'s first translation reused block memory, when it did.
    pub fn reused(&self, id: &str) -> Option<&Reused> {
        self.blocks.reused.get(self.fp(id)?)
    }

    /// The stale edits of unit `id` the editor has not decided yet.
    pub fn stale_edits(&self, id: &str) -> &[super::super::blocks::Stale] {
        self.fp(id)
            .and_then(|fp| self.blocks.stale.get(fp))
            .map_or(&[], Vec::as_slice)
    }

    /// Whether unit `id`'s human edit is one booktr carried from an earlier version of the
    /// unit rather than one an editor wrote for this version.
    pub fn is_carried(&self, id: &str) -> bool {
        self.fp(id)
            .is_some_and(|fp| self.blocks.carried.contains(fp))
    }
}
